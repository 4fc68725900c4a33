"""The online migration between classic and consumer groups, and classic-protocol members inside
a consumer group (KIP-848), ported from Kafka's `GroupMetadataManagerTest`: each test names the
Kafka test whose behaviour it checks. Kafka's tests use a mock assignor; these use the real
server `range` assignor with expectations worked out for it."""

from __future__ import annotations

from typing import Any

import pytest

from consumer_group_context import ConsumerGroupContext
from coordinator_kit.errors import Errors, KafkaError
from coordinator_kit.group import records as rec
from coordinator_kit.group.api import (ConsumerGroupHeartbeatRequest, HeartbeatRequest,
                                       JoinGroupRequest, LeaveGroupRequest, MemberIdentity,
                                       OffsetCommitRequest, PartitionData, RequestContext,
                                       SyncGroupRequest)
from coordinator_kit.group.classic import ClassicGroupState, Protocol
from coordinator_kit.group.modern.consumer_group import ConsumerGroupState
from coordinator_kit.group.modern.member import (ClassicMemberMetadata, ClassicProtocol,
                                                 MemberState)
from coordinator_kit.group.modern.topics import topic_id
from coordinator_kit.group.protocol import (ConsumerProtocolAssignment,
                                            ConsumerProtocolSubscription, deserialize_version)
from coordinator_kit.runtime.future import CoordinatorFuture
from coordinator_kit.topic import TopicPartition

FOO, BAR = topic_id("foo"), topic_id("bar")
CGS = ConsumerGroupState


def ctx(policy: str = "bidirectional", topics: dict[str, int] | None = None,
        **config: Any) -> ConsumerGroupContext:
    return ConsumerGroupContext(topics or {"foo": 2, "bar": 2},
                                **{"group.consumer.migration.policy": policy, **config})


def subscription(topics=("foo", "bar"), owned=(), version=3) -> bytes:
    return ConsumerProtocolSubscription(tuple(topics), None, tuple(
        TopicPartition(t, p) for t, p in owned)).encode(version)


def assignment_bytes(parts, version=3) -> bytes:
    return ConsumerProtocolAssignment(tuple(TopicPartition(t, p) for t, p in parts)).encode(
        version)


def classic_group(c: ConsumerGroupContext, members: dict[str, list[tuple[str, int]]],
                  generation: int = 1, protocol_type: str = "consumer", group: str = "g",
                  session_ms: int = 5000) -> None:
    """A Stable classic group, replayed from its GroupMetadata record as a loaded one is."""
    rows = [{"memberId": m, "groupInstanceId": None, "clientId": "client-id",
             "clientHost": "client-host", "rebalanceTimeout": 10000,
             "sessionTimeout": session_ms, "subscription": subscription(owned=parts),
             "assignment": assignment_bytes(parts)} for m, parts in members.items()]
    c.replay([rec.new_group_metadata_record(group, protocol_type, generation, "range",
                                            next(iter(members)), 0, rows)])


def written(c, result):
    """Keep what a write appends (replayed or not), as the partition's log would."""
    if hasattr(c, "log"):
        c.log.extend(result.records)
    return result


def cg_join(c, member_id, topics=("foo", "bar"), group="g", rebalance_ms=5000):
    return written(c, c.heartbeat(ConsumerGroupHeartbeatRequest(
        group, member_id, 0, rebalance_timeout_ms=rebalance_ms,
        subscribed_topic_names=tuple(topics), server_assignor="range", topic_partitions=())))


def cg_leave(c, member_id, group="g"):
    return written(c, c.heartbeat(ConsumerGroupHeartbeatRequest(group, member_id, -1)))


def classic_join(c, member_id="", protocols=None, owned=(), instance=None, group="g",
                 session_ms=5000, rebalance_ms=10000, protocol_type="consumer",
                 api_version=9, commit=True):
    """A JoinGroup through the shard: records replayed (unless told not to), the append future
    completed (the write committed); returns (result, response future)."""
    protocols = protocols or (Protocol("range", subscription(owned=owned)),)
    request = JoinGroupRequest(group, session_ms, rebalance_ms, member_id, protocol_type,
                               tuple(protocols), group_instance_id=instance)
    response: CoordinatorFuture[Any] = CoordinatorFuture("join")
    result = c.shard.classic_group_join(RequestContext("client", api_version=api_version),
                                        request, response)
    if result.replay_records:
        c.replay(result.records)
    written(c, result)
    if commit and result.append_future is not None:
        result.append_future.complete(None)
    return result, response


def classic_sync(c, member_id, generation, protocol_name="range", group="g",
                 protocol_type="consumer"):
    response: CoordinatorFuture[Any] = CoordinatorFuture("sync")
    result = c.shard.classic_group_sync(
        RequestContext("client"),
        SyncGroupRequest(group, generation, member_id, protocol_type=protocol_type,
                         protocol_name=protocol_name), response)
    if result.append_future is not None:
        result.append_future.complete(None)
    return response.result()


def classic_heartbeat(c, member_id, generation, group="g"):
    return c.shard.classic_group_heartbeat(RequestContext("client"),
                                           HeartbeatRequest(group, generation, member_id))


def error_of(fn, *args, **kwargs) -> KafkaError:
    with pytest.raises(KafkaError) as err:
        fn(*args, **kwargs)
    return err.value


def mixed_group(c) -> str:
    """A consumer group with consumer member "c1" and a classic member; the classic member's
    id."""
    cg_join(c, "c1")
    _, first = classic_join(c)
    member_id = first.result().member_id
    _, response = classic_join(c, member_id)
    assert response.result().error is Errors.NONE
    return member_id


# -- the migration policy ------------------------------------------------------------------------

def test_heartbeat_to_non_empty_classic_group_when_the_upgrade_is_disabled() -> None:
    # GroupMetadataManagerTest.testConsumerGroupHeartbeatWithNonEmptyClassicGroup (the test
    # context's policy is disabled): GROUP_ID_NOT_FOUND, the classic group untouched
    for policy in ("disabled", "downgrade"):
        c = ctx(policy)
        classic_group(c, {"m1": [("foo", 0)]})
        err = error_of(cg_join, c, "m2")
        assert (err.error, err.detail) == (Errors.GROUP_ID_NOT_FOUND,
                                           "Group g is not a consumer group")
        assert c.shard.groups.groups.get("g").state is ClassicGroupState.STABLE
        assert "Cannot upgrade classic group g to consumer group because the online upgrade " \
               "is disabled." in "\n".join(c.lines())


def test_classic_group_of_another_protocol_type_is_not_upgraded() -> None:
    # GroupMetadataManager.validateOnlineUpgrade: usesConsumerGroupProtocol
    c = ctx()
    classic_group(c, {"m1": [("foo", 0)]}, protocol_type="connect")
    assert error_of(cg_join, c, "m2").error is Errors.GROUP_ID_NOT_FOUND
    assert "because the group does not use the consumer embedded protocol." in \
        "\n".join(c.lines())


def test_classic_group_bigger_than_consumer_max_size_is_not_upgraded() -> None:
    # GroupMetadataManager.validateOnlineUpgrade: group.consumer.max.size
    c = ctx(**{"group.consumer.max.size": 1})
    classic_group(c, {"m1": [("foo", 0)], "m2": [("foo", 1)]})
    assert error_of(cg_join, c, "m3").error is Errors.GROUP_ID_NOT_FOUND
    assert "because the group size exceeds the consumer group maximum size." in \
        "\n".join(c.lines())


# -- the online upgrade --------------------------------------------------------------------------

def test_heartbeat_with_stable_classic_group_converts_it() -> None:
    # GroupMetadataManagerTest.testConsumerGroupHeartbeatWithStableClassicGroup: the classic
    # group's tombstone, the consumer group's records (member 1 Stable at the classic generation,
    # its classic metadata kept, its last assignment as its target), then member 2's join
    c = ctx("upgrade")
    everything = [("foo", 0), ("foo", 1), ("bar", 0), ("bar", 1)]
    classic_group(c, {"member-1": everything}, generation=3)
    result = cg_join(c, "member-2")
    m1_meta = (5000, [("range", subscription(owned=everything))])
    owned = {FOO: {0, 1}, BAR: {0, 1}}
    assert result.records[:6] == [
        rec.new_group_metadata_tombstone("g"),
        rec.new_consumer_group_member_subscription_record(
            "g", "member-1", None, None, "client-id", "client-host", ["bar", "foo"], "", 10000,
            None, m1_meta),
        rec.new_consumer_group_epoch_record("g", 3),
        rec.new_consumer_group_target_assignment_record("g", "member-1", owned),
        rec.new_consumer_group_target_assignment_epoch_record("g", 3),
        rec.new_consumer_group_current_assignment_record("g", "member-1", 3, 3, 0, owned, {}),
    ]
    rest = result.records[6:]
    assert rest[0] == rec.new_consumer_group_member_subscription_record(
        "g", "member-2", None, None, "client", "/127.0.0.1", ["bar", "foo"], "", 5000, "range")
    # the subscription metadata was not written by the conversion: computed now, epoch bumped
    assert rest[1] == rec.new_consumer_group_subscription_metadata_record(
        "g", {"foo": (FOO, 2), "bar": (BAR, 2)})
    assert rest[2] == rec.new_consumer_group_epoch_record("g", 4)
    assert rest[-2] == rec.new_consumer_group_target_assignment_epoch_record("g", 4)
    # range: member-1 keeps partition 0 of each topic, member-2 waits for partition 1 of each
    assert sorted(r.key["MemberId"] for r in rest[3:-2]) == ["member-1", "member-2"]
    assert rest[-1] == rec.new_consumer_group_current_assignment_record(
        "g", "member-2", 4, 0, 2, {}, {})
    assert result.response.member_epoch == 4
    group = c.group()
    assert "g" not in c.shard.groups.groups
    m1 = group.members.get("member-1")
    assert m1.classic_member_metadata == ClassicMemberMetadata(
        5000, (ClassicProtocol("range", subscription(owned=everything)),))
    assert (m1.member_epoch, m1.state, m1.use_classic_protocol) == (3, MemberState.STABLE, True)
    assert group.members.get("member-2").state is MemberState.UNRELEASED_PARTITIONS
    assert group.num_classic_protocol_members == 1
    assert group.state is CGS.RECONCILING
    # the classic member's session timeout is its own; the new member's the consumer group's
    assert c.timer.deadline("session-timeout-g-member-1") == 5000
    assert c.timer.deadline("session-timeout-g-member-2") == 45000


def test_heartbeat_to_classic_group_from_existing_static_member() -> None:
    # GroupMetadataManagerTest.testConsumerGroupHeartbeatToClassicGroupFromExistingStaticMember:
    # the conversion, then the classic static member replaced by the consumer-protocol one (no
    # need for it to have left first), which keeps its assignment and drops the classic metadata
    c = ctx(topics={"foo": 1})
    parts = [("foo", 0)]
    c.replay([rec.new_group_metadata_record("g", "consumer", 0, "range", "m1", 0, [{
        "memberId": "m1", "groupInstanceId": "i1", "clientId": "client",
        "clientHost": "/127.0.0.1", "rebalanceTimeout": 10000, "sessionTimeout": 5000,
        "subscription": subscription(("foo",), owned=parts),
        "assignment": assignment_bytes(parts)}])])
    result = c.heartbeat(ConsumerGroupHeartbeatRequest(
        "g", "new", 0, instance_id="i1", rebalance_timeout_ms=5000,
        subscribed_topic_names=("foo",), server_assignor="range", topic_partitions=()))
    foo0 = {FOO: {0}}
    meta = (5000, [("range", subscription(("foo",), owned=parts))])
    assert result.records == [
        rec.new_group_metadata_tombstone("g"),
        rec.new_consumer_group_member_subscription_record(
            "g", "m1", "i1", None, "client", "/127.0.0.1", ["foo"], "", 10000, None, meta),
        rec.new_consumer_group_epoch_record("g", 0),
        rec.new_consumer_group_target_assignment_record("g", "m1", foo0),
        rec.new_consumer_group_target_assignment_epoch_record("g", 0),
        rec.new_consumer_group_current_assignment_record("g", "m1", 0, 0, 0, foo0, {}),
        rec.new_consumer_group_current_assignment_tombstone("g", "m1"),
        rec.new_consumer_group_target_assignment_tombstone("g", "m1"),
        rec.new_consumer_group_member_subscription_tombstone("g", "m1"),
        rec.new_consumer_group_member_subscription_record(
            "g", "new", "i1", None, "client", "/127.0.0.1", ["foo"], "", 10000, None, meta),
        rec.new_consumer_group_target_assignment_record("g", "new", foo0),
        rec.new_consumer_group_current_assignment_record("g", "new", 0, 0, 0, foo0, {}),
        rec.new_consumer_group_member_subscription_record(
            "g", "new", "i1", None, "client", "/127.0.0.1", ["foo"], "", 5000, "range"),
        rec.new_consumer_group_subscription_metadata_record("g", {"foo": (FOO, 1)}),
        rec.new_consumer_group_epoch_record("g", 1),
        rec.new_consumer_group_target_assignment_record("g", "new", foo0),
        rec.new_consumer_group_target_assignment_epoch_record("g", 1),
        rec.new_consumer_group_current_assignment_record("g", "new", 1, 0, 0, foo0, {}),
    ]
    member = c.group().members.get("new")
    assert member.classic_member_metadata is None and not c.group().has_member("m1")
    assert c.timer.deadline("session-timeout-g-new") == 45000


def test_a_failed_upgrade_write_leaves_the_classic_group() -> None:
    # GroupMetadataManagerTest.testConsumerGroupHeartbeatWithStableClassicGroup (its rollback):
    # the records are replayed into the timeline; reverting restores the classic group
    c = ctx()
    classic_group(c, {"m1": [("foo", 0)]})
    c.registry.get_or_create_snapshot(c.offset)
    before = c.offset
    cg_join(c, "m2")
    assert c.group() is not None and "g" not in c.shard.groups.groups
    c.registry.revert_to_snapshot(before)
    assert c.group() is None and c.shard.groups.groups.get("g").state is ClassicGroupState.STABLE


def test_heartbeat_with_preparing_rebalance_classic_group() -> None:
    # GroupMetadataManagerTest.testConsumerGroupHeartbeatWithPreparingRebalanceClassicGroup:
    # classic members waiting in a join are answered REBALANCE_IN_PROGRESS and rejoin the
    # consumer group
    c = ctx()
    classic_group(c, {"m1": [("foo", 0), ("bar", 0)], "m2": [("foo", 1), ("bar", 1)]})
    _, waiting = classic_join(c, "m1", owned=[("foo", 0), ("bar", 0)])
    assert c.shard.groups.groups.get("g").state is ClassicGroupState.PREPARING_REBALANCE
    assert not waiting.done()
    cg_join(c, "m3")
    assert waiting.result().error is Errors.REBALANCE_IN_PROGRESS
    assert waiting.result().member_id == "m1"
    # m1 rejoins through the consumer group; it must revoke bar-0 (range gives m3 partition
    # 1 of nothing: 3 members, 2 partitions per topic -> m1 foo-0 bar-0, m2 foo-1 bar-1, m3 none)
    _, rejoined = classic_join(c, "m1", owned=[("foo", 0), ("bar", 0)])
    answer = rejoined.result()
    assert (answer.error, answer.protocol_type, answer.protocol_name, answer.member_id) == \
        (Errors.NONE, "consumer", "range", "m1")
    assert answer.generation_id == c.group().group_epoch == 2


def test_heartbeat_with_completing_rebalance_classic_group() -> None:
    # GroupMetadataManagerTest.testConsumerGroupHeartbeatWithCompletingRebalanceClassicGroup:
    # a classic member waiting in SyncGroup for its leader's assignment is answered
    # REBALANCE_IN_PROGRESS; the members keep their last generation's assignment
    c = ctx()
    m1_parts, m2_parts = [("foo", 0), ("bar", 0)], [("foo", 1), ("bar", 1)]
    classic_group(c, {"m1": m1_parts, "m2": m2_parts})
    _, first = classic_join(c, "m1", owned=m1_parts)
    _, second = classic_join(c, "m2", owned=m2_parts)
    group = c.shard.groups.groups.get("g")
    assert group.state is ClassicGroupState.COMPLETING_REBALANCE and group.generation_id == 2
    assert first.result().leader == "m1"
    waiting: CoordinatorFuture[Any] = CoordinatorFuture("sync")
    c.shard.classic_group_sync(RequestContext("client"), SyncGroupRequest(
        "g", 2, "m2", protocol_type="consumer", protocol_name="range"), waiting)
    assert not waiting.done()
    cg_join(c, "m3")
    assert waiting.result().error is Errors.REBALANCE_IN_PROGRESS
    converted = c.group()
    assert dict(converted.members.get("m2").assigned_partitions) == {FOO: frozenset({1}),
                                                                     BAR: frozenset({1})}
    assert converted.members.get("m1").member_epoch == 2
    assert c.timer.deadline("session-timeout-g-m1") == 5000
    assert c.timer.deadline("session-timeout-g-m3") == 45000


def test_malformed_classic_subscription_refuses_the_upgrade() -> None:
    # GroupMetadataManager.convertToConsumerGroup: a SchemaException while reading the embedded
    # consumer protocol is GROUP_ID_NOT_FOUND with Kafka's message, and a WARN line
    c = ctx()
    c.replay([rec.new_group_metadata_record("g", "consumer", 1, "range", "m1", 0, [{
        "memberId": "m1", "groupInstanceId": None, "clientId": "c", "clientHost": "h",
        "rebalanceTimeout": 10000, "sessionTimeout": 5000, "subscription": b"\x00",
        "assignment": b""}])])
    err = error_of(cg_join, c, "m2")
    assert (err.error, err.detail) == (
        Errors.GROUP_ID_NOT_FOUND, "Cannot upgrade the classic group g to consumer group "
                                   "because the embedded consumer protocol is malformed.")
    assert "WARN" in "\n".join(line for line in c.lines() if "malformed:" in line)


def test_a_coordinator_move_rebuilds_the_converted_group() -> None:
    # GroupCoordinatorShard.replay: the records of a conversion, replayed on a new shard, build
    # the same consumer group (members, classic metadata, epochs, assignments)
    c = ctx()
    written: list[Any] = []
    record = rec.new_group_metadata_record("g", "consumer", 2, "range", "m1", 0, [{
        "memberId": "m1", "groupInstanceId": None, "clientId": "client-id",
        "clientHost": "client-host", "rebalanceTimeout": 10000, "sessionTimeout": 5000,
        "subscription": subscription(owned=[("foo", 0)]),
        "assignment": assignment_bytes([("foo", 0)])}])
    c.replay([record])
    written.append(record)
    written.extend(cg_join(c, "m2").records)
    member_id = mixed_group_join(c, written)
    # every record goes through its bytes, as the log holds them
    serde = rec.GroupCoordinatorRecordSerde()
    moved = ctx()
    moved.replay([serde.deserialize(*serde.serialize(r)) for r in written])
    a, b = c.group(), moved.group()
    assert dict(a.members.items()) == dict(b.members.items())
    assert (a.group_epoch, a.assignment_epoch, a.state) == \
        (b.group_epoch, b.assignment_epoch, b.state)
    assert dict(a.target_assignment.items()) == dict(b.target_assignment.items())
    assert b.num_classic_protocol_members == 2
    assert b.members.get(member_id).classic_member_metadata.session_timeout_ms == 6000
    assert "g" not in moved.shard.groups.groups


def mixed_group_join(c, written) -> str:
    """A classic member joins the consumer group (two JoinGroups); its records kept."""
    result, first = classic_join(c)
    member_id = first.result().member_id
    written.extend(result.records)
    result, _ = classic_join(c, member_id, session_ms=6000)
    written.extend(result.records)
    return member_id


# -- classic members: JoinGroup ------------------------------------------------------------------

def test_joining_consumer_group_with_new_dynamic_member() -> None:
    # GroupMetadataManagerTest.testJoiningConsumerGroupWithNewDynamicMember
    c = ctx()
    cg_join(c, "c1")
    result, first = classic_join(c)
    assert first.result().error is Errors.MEMBER_ID_REQUIRED and result.records == []
    member_id = first.result().member_id
    assert "Dynamic member with unknown member id joins the consumer group. Created a new " \
           f"member id {member_id} and requesting the member to rejoin with this id." in \
        "\n".join(c.lines())
    result, response = classic_join(c, member_id, commit=False)
    assert not response.done()  # answered once the records commit (appendFuture)
    meta = (5000, [("range", subscription())])
    assert result.records[0] == rec.new_consumer_group_member_subscription_record(
        "g", member_id, None, None, "client", "/127.0.0.1", ["bar", "foo"], "", 10000, None,
        meta)
    assert result.records[1] == rec.new_consumer_group_epoch_record("g", 2)
    assert [r.record_type for r in result.records[2:]] == [7, 7, 6, 8]
    result.append_future.complete(None)
    answer = response.result()
    assert (answer.error, answer.generation_id, answer.protocol_type, answer.protocol_name,
            answer.member_id, answer.leader, answer.members) == \
        (Errors.NONE, 2, "consumer", "range", member_id, "", ())
    assert c.timer.deadline(f"session-timeout-g-{member_id}") == 5000
    assert c.timer.deadline(f"sync-g-{member_id}") == 10000
    assert f"Member {member_id} joins the consumer group using the classic protocol." in \
        "\n".join(c.lines())


def test_joining_consumer_group_throws_if_protocol_is_not_supported() -> None:
    # GroupMetadataManagerTest.testJoiningConsumerGroupThrowsExceptionIfProtocolIsNotSupported
    c = ctx()
    mixed_group(c)
    err = error_of(classic_join, c, "new", protocols=(Protocol("roundrobin", subscription()),))
    assert (err.error, err.detail) == (Errors.INCONSISTENT_GROUP_PROTOCOL,
                                       "Member new's protocols are not supported.")
    assert error_of(classic_join, c, "new", protocol_type="connect").error is \
        Errors.INCONSISTENT_GROUP_PROTOCOL


def test_joining_consumer_group_throws_if_group_over_max_size() -> None:
    # GroupMetadataManagerTest.testJoiningConsumerGroupThrowsExceptionIfGroupOverMaxSize
    c = ctx(**{"group.consumer.max.size": 1})
    cg_join(c, "c1")
    err = error_of(classic_join, c)
    assert (err.error, err.detail) == (
        Errors.GROUP_MAX_SIZE_REACHED,
        "The consumer group has reached its maximum capacity of 1 members.")


def test_reconciliation_in_joining_consumer_group() -> None:
    # GroupMetadataManagerTest.testReconciliationInJoiningConsumerGroupWithEagerProtocol: a
    # classic member owning partitions it must give up gets UNREVOKED_PARTITIONS; its next join
    # without them completes the revocation
    c = ctx()
    classic_group(c, {"m1": [("foo", 0), ("foo", 1), ("bar", 0), ("bar", 1)]})
    cg_join(c, "c1")
    m1 = c.group().members.get("m1")
    assert m1.state is MemberState.STABLE and m1.member_epoch == 1
    # Heartbeat: the group epoch moved on: rejoin
    assert classic_heartbeat(c, "m1", 1).response.error is Errors.REBALANCE_IN_PROGRESS
    assert c.timer.deadline("join-g-m1") == 10000
    everything = [("foo", 0), ("foo", 1), ("bar", 0), ("bar", 1)]
    _, response = classic_join(c, "m1", owned=everything)
    assert response.result().generation_id == 1  # still revoking: the old epoch
    m1 = c.group().members.get("m1")
    assert m1.state is MemberState.UNREVOKED_PARTITIONS
    assert classic_heartbeat(c, "m1", 1).response.error is Errors.REBALANCE_IN_PROGRESS
    # the eager client revokes everything before it rejoins
    _, response = classic_join(c, "m1", owned=[])
    assert response.result().generation_id == 2
    m1 = c.group().members.get("m1")
    assert (m1.state, dict(m1.assigned_partitions)) == \
        (MemberState.STABLE, {BAR: frozenset({1}), FOO: frozenset({1})})  # c1 sorts first
    assert classic_heartbeat(c, "m1", 2).response.error is Errors.NONE


# -- classic members: SyncGroup ------------------------------------------------------------------

@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_classic_sync_to_consumer_group_with_all_consumer_protocol_versions(version) -> None:
    # GroupMetadataManagerTest.testClassicGroupSyncToConsumerGroupWithAllConsumerProtocolVersions:
    # the assignment is the member's assigned partitions, at its subscription's version
    c = ctx()
    cg_join(c, "c1")
    _, first = classic_join(c, protocols=(Protocol("range", subscription(version=version)),))
    member_id = first.result().member_id
    _, joined = classic_join(c, member_id,
                             protocols=(Protocol("range", subscription(version=version)),))
    generation = joined.result().generation_id
    answer = classic_sync(c, member_id, generation)
    assert (answer.error, answer.protocol_type, answer.protocol_name) == \
        (Errors.NONE, "consumer", "range")
    assert deserialize_version(answer.assignment) == version
    member = c.group().members.get(member_id)
    got = ConsumerProtocolAssignment.decode(answer.assignment).assigned_partitions
    names = {FOO: "foo", BAR: "bar"}
    assert sorted(got) == sorted(TopicPartition(names[t], p)
                                 for t, ps in member.assigned_partitions.items() for p in ps)
    assert not c.timer.is_scheduled(f"sync-g-{member_id}")
    assert c.timer.deadline(f"session-timeout-g-{member_id}") == 5000


def test_classic_sync_to_consumer_group_errors() -> None:
    # GroupMetadataManagerTest.testClassicGroupSyncToConsumerGroupWithUnknownMemberId,
    # ...WithInconsistentGroupProtocol, ...WithIllegalGeneration, ...RebalanceInProgress
    c = ctx()
    member_id = mixed_group(c)
    generation = c.group().members.get(member_id).member_epoch
    assert error_of(classic_sync, c, "unknown", generation).error is Errors.UNKNOWN_MEMBER_ID
    assert error_of(classic_sync, c, "c1", 2).detail == \
        "Member c1 does not use the classic protocol."
    err = error_of(classic_sync, c, member_id, generation + 5)
    assert (err.error, err.detail) == (
        Errors.ILLEGAL_GENERATION, f"The request generation id {generation + 5} is not equal "
                                   f"to the member epoch {generation} of member {member_id}.")
    err = error_of(classic_sync, c, member_id, generation, protocol_type="connect")
    assert err.error is Errors.INCONSISTENT_GROUP_PROTOCOL
    err = error_of(classic_sync, c, member_id, generation, protocol_name="roundrobin")
    assert err.detail == (f"The protocol name roundrobin from member {member_id} request is not "
                          f"equal to the protocol name range returned in the join response.")
    empty = ctx()
    cg_join(empty, "c1")
    cg_leave(empty, "c1")
    sync: CoordinatorFuture[Any] = CoordinatorFuture("sync")
    empty.shard.classic_group_sync(RequestContext("client"), SyncGroupRequest("g", 1, "x"), sync)
    assert sync.result().error is Errors.UNKNOWN_MEMBER_ID  # classicGroupSync: group.isEmpty()
    cg_join(c, "c2")  # the group epoch moves on
    err = error_of(classic_sync, c, member_id, generation)
    assert (err.error, err.detail) == (
        Errors.REBALANCE_IN_PROGRESS, f"A new rebalance is triggered in group g and member "
                                      f"{member_id} should rejoin to catch up.")
    assert c.timer.is_scheduled(f"join-g-{member_id}")


# -- classic members: Heartbeat ------------------------------------------------------------------

def test_classic_heartbeat_to_consumer_group_maintains_session() -> None:
    # GroupMetadataManagerTest.testClassicGroupHeartbeatToConsumerGroupMaintainsSession
    c = ctx()
    member_id = mixed_group(c)
    generation = c.group().members.get(member_id).member_epoch
    c.sleep(4000)
    assert classic_heartbeat(c, member_id, generation).response.error is Errors.NONE
    assert c.timer.deadline(f"session-timeout-g-{member_id}") == 4000 + 5000
    c.sleep(4000)
    assert c.group().has_member(member_id)


def test_classic_heartbeat_to_consumer_group_errors() -> None:
    # GroupMetadataManagerTest.testClassicGroupHeartbeatToConsumerWithUnknownMember,
    # ...WithFencedInstanceId, ...WithIllegalGenerationId, ...WithMemberNotUsingClassicProtocol
    c = ctx()
    member_id = mixed_group(c)
    assert error_of(classic_heartbeat, c, "unknown", 2).error is Errors.UNKNOWN_MEMBER_ID
    assert error_of(classic_heartbeat, c, member_id, 9).error is Errors.ILLEGAL_GENERATION
    err = error_of(classic_heartbeat, c, "c1", 2)
    assert (err.error, err.detail) == (Errors.UNKNOWN_MEMBER_ID,
                                       "Member c1 does not use the classic protocol.")


def test_classic_member_fenced_when_session_times_out() -> None:
    # GroupMetadataManagerTest.testConsumerGroupMemberUsingClassicProtocolFencedWhenSessionTimeout
    c = ctx()
    member_id = mixed_group(c)
    epoch = c.group().group_epoch
    fired = c.sleep(5000)
    assert [k for k, _ in fired] == [f"session-timeout-g-{member_id}"]
    assert not c.group().has_member(member_id) and c.group().group_epoch == epoch + 1
    # Kafka 4.0.2's reason has no full stop of its own (4.0's source had one: "expired..")
    assert f"Member {member_id} fenced from the group because the member session expired. (" \
        in "\n".join(c.lines())


def test_classic_member_fenced_when_join_times_out() -> None:
    # GroupMetadataManagerTest.testConsumerGroupMemberUsingClassicProtocolFencedWhenJoinTimeout
    c = ctx()
    member_id = mixed_group(c)
    generation = c.group().members.get(member_id).member_epoch
    classic_sync(c, member_id, generation)
    cg_join(c, "c2")
    assert classic_heartbeat(c, member_id, generation).response.error is \
        Errors.REBALANCE_IN_PROGRESS
    for _ in range(2):  # heartbeats keep the session, not the join deadline
        c.sleep(4000)
        classic_heartbeat(c, member_id, generation)
    fired = c.sleep(2000)
    assert f"join-g-{member_id}" in [k for k, _ in fired]
    assert not c.group().has_member(member_id)
    assert "because the classic member failed to join within the rebalance timeout. (" in \
        "\n".join(c.lines())


# -- classic members: LeaveGroup -----------------------------------------------------------------

def test_classic_members_batch_leave_group() -> None:
    # GroupMetadataManagerTest.testConsumerGroupMemberUsingClassicProtocolBatchLeaveGroup and
    # ...WithoutValidLeaveGroupMember: classic members leave (their records, a bumped epoch);
    # a consumer-protocol member in the batch answers UNKNOWN_MEMBER_ID
    c = ctx()
    member_id = mixed_group(c)
    epoch = c.group().group_epoch
    result = c.shard.classic_group_leave(RequestContext("client"), LeaveGroupRequest("g", (
        MemberIdentity(member_id, reason="bye"), MemberIdentity("c1"),
        MemberIdentity("nobody"))))
    assert [(m.member_id, m.error) for m in result.response.members] == [
        (member_id, Errors.NONE), ("c1", Errors.UNKNOWN_MEMBER_ID),
        ("nobody", Errors.UNKNOWN_MEMBER_ID)]
    assert result.records == [
        rec.new_consumer_group_current_assignment_tombstone("g", member_id),
        rec.new_consumer_group_target_assignment_tombstone("g", member_id),
        rec.new_consumer_group_member_subscription_tombstone("g", member_id),
        rec.new_consumer_group_epoch_record("g", epoch + 1)]
    c.replay(result.records)
    assert not c.group().has_member(member_id)
    assert not c.timer.is_scheduled(f"session-timeout-g-{member_id}")
    assert f"[Group g] Dynamic Member {member_id} has left group through explicit `LeaveGroup` " \
           f"request; client reason: bye" in "\n".join(c.lines())
    nothing = c.shard.classic_group_leave(RequestContext("client"), LeaveGroupRequest(
        "g", (MemberIdentity("c1"),)))
    assert nothing.records == []


# -- the online downgrade ------------------------------------------------------------------------

def test_last_consumer_protocol_member_leaving_consumer_group() -> None:
    # GroupMetadataManagerTest.testLastConsumerProtocolMemberLeavingConsumerGroup: the consumer
    # group's tombstones, the classic group's record (Stable at the group epoch, each member's
    # target assignment), then a rebalance ("Downgrade group g from consumer to classic.")
    c = ctx()
    member_id = mixed_group(c)
    group = c.group()
    epoch = group.group_epoch
    target = dict(group.target_assignment.get(member_id))
    result = cg_leave(c, "c1")
    assert result.replay_records is False
    tombstones = group.tombstone_records()
    assert result.records[:len(tombstones)] == tombstones
    classic_record = result.records[-1]
    assert classic_record.record_type == rec.GROUP_METADATA_RECORD_TYPE
    value = classic_record.value
    assert (value["protocolType"], value["generation"], value["protocol"]) == \
        ("consumer", epoch, "range")
    [row] = value["members"]
    assert row["memberId"] == member_id and row["sessionTimeout"] == 5000
    names = {FOO: "foo", BAR: "bar"}
    assert sorted(ConsumerProtocolAssignment.decode(row["assignment"]).assigned_partitions) == \
        sorted(TopicPartition(names[t], p) for t, ps in target.items() for p in ps)
    assert c.group() is None
    classic = c.shard.groups.groups.get("g")
    assert classic.state is ClassicGroupState.PREPARING_REBALANCE
    assert classic.generation_id == epoch
    assert "Preparing to rebalance group g in state PreparingRebalance with old generation " \
           f"{epoch} (reason: Downgrade group g from consumer to classic.)." in \
        "\n".join(c.lines())
    # the classic member goes on as a classic group member: it rejoins
    assert classic_heartbeat(c, member_id, epoch).response.error is \
        Errors.REBALANCE_IN_PROGRESS


def test_a_coordinator_move_after_a_downgrade_loads_the_classic_group() -> None:
    # GroupCoordinatorShard.replay of everything a mixed group and its downgrade appended: the
    # consumer group's records, its tombstones, then the GroupMetadata record: a Stable classic
    # group with the classic member and its assignment
    c = ctx()
    c.log = []
    member_id = mixed_group(c)
    cg_leave(c, "c1")
    classic = c.shard.groups.groups.get("g")
    moved = ctx()
    serde = rec.GroupCoordinatorRecordSerde()
    moved.replay([serde.deserialize(*serde.serialize(r)) for r in c.log])
    assert moved.group() is None
    loaded = moved.shard.groups.groups.get("g")
    assert loaded.state is ClassicGroupState.STABLE
    assert (loaded.generation_id, loaded.protocol_type, loaded.protocol_name) == \
        (classic.generation_id, "consumer", "range")
    assert list(loaded.members) == [member_id]
    assert loaded.members[member_id].assignment == classic.members[member_id].assignment


def test_last_consumer_protocol_member_session_timeout() -> None:
    # GroupMetadataManagerTest.testLastConsumerProtocolMemberSessionTimeoutInConsumerGroup
    c = ctx()
    member_id = mixed_group(c)
    generation = c.group().members.get(member_id).member_epoch
    classic_sync(c, member_id, generation)
    for _ in range(11):  # the classic member heartbeats; the consumer member is silent
        c.sleep(4000)
        assert classic_heartbeat(c, member_id, generation).response.error is Errors.NONE
    assert c.group() is not None
    fired = c.sleep(1000)
    assert [k for k, _ in fired] == ["session-timeout-g-c1"]
    assert c.group() is None
    assert c.shard.groups.groups.get("g").state is ClassicGroupState.PREPARING_REBALANCE


@pytest.mark.parametrize("policy,config,line", [
    ("upgrade", {}, "Cannot downgrade consumer group g to classic group because the online "
                    "downgrade is disabled."),
    ("bidirectional", {"group.max.size": 1},
     "Cannot downgrade consumer group g to classic group because its group size is greater "
     "than classic group max size."),
])
def test_no_downgrade_when_policy_or_size_forbid_it(policy, config, line) -> None:
    # GroupMetadataManagerTest.testNoConversionWhenSizeExceedsClassicMaxGroupSize and the
    # policy check of validateOnlineDowngradeWithFencedMember
    c = ctx(policy, **config)
    first = mixed_group(c)
    result, response = classic_join(c)
    second = response.result().member_id
    classic_join(c, second)
    assert c.group().num_classic_protocol_members == 2
    cg_leave(c, "c1")
    assert c.group() is not None and not c.group().has_member("c1")
    assert {first, second} == set(c.group().members.keys())
    assert line in "\n".join(c.lines())


def test_last_static_consumer_protocol_member_replaced_by_classic_protocol_member() -> None:
    # GroupMetadataManagerTest.testLastStaticConsumerProtocolMemberReplacedByClassicProtocolMember:
    # the replacement's records (old id tombstoned, new id with the old target), the consumer
    # group's tombstones under the new id, then the classic group (Stable, no rebalance), the
    # new member holding the old one's assignment
    c = ctx("downgrade")
    c.heartbeat(ConsumerGroupHeartbeatRequest(
        "g", "old-2", 0, instance_id="i2", rebalance_timeout_ms=5000,
        subscribed_topic_names=("foo", "bar"), server_assignor="range", topic_partitions=()))
    _, first = classic_join(c)
    member_1 = first.result().member_id
    classic_join(c, member_1)
    group = c.group()
    epoch = group.group_epoch
    old_target = dict(group.target_assignment.get("old-2"))
    result, response = classic_join(c, "", instance="i2")
    assert result.replay_records is False
    answer = response.result()
    new_2 = answer.member_id
    assert answer.error is Errors.NONE and new_2 != "old-2"
    keys = [(r.record_type, r.key.get("MemberId"), r.value is None) for r in result.records]
    assert keys[:3] == [(8, "old-2", True), (7, "old-2", True), (5, "old-2", True)]
    assert keys[3:6] == [(5, new_2, False), (7, new_2, False), (8, new_2, False)]
    assert (5, "old-2", True) not in keys[6:] and (5, new_2, True) in keys[6:]
    assert keys[-3:] == [(4, None, True), (3, None, True), (2, None, False)]
    assert c.group() is None
    classic = c.shard.groups.groups.get("g")
    assert classic.state is ClassicGroupState.STABLE and classic.generation_id == epoch
    assert set(classic.members) == {member_1, new_2}
    names = {FOO: "foo", BAR: "bar"}
    got = ConsumerProtocolAssignment.decode(classic.members[new_2].assignment)
    assert sorted(got.assigned_partitions) == sorted(
        TopicPartition(names[t], p) for t, ps in old_target.items() for p in ps)
    assert not c.timer.is_scheduled(f"sync-g-{new_2}")
    assert "Preparing to rebalance group g" not in "\n".join(c.lines())


def test_last_member_leaving_skips_the_downgrade_as_empty() -> None:
    # validateOnlineDowngradeWithFencedMember: the last member leaving logs at DEBUG, no
    # conversion
    c = ctx()
    cg_join(c, "c1")
    cg_leave(c, "c1")
    assert c.group().state is CGS.EMPTY
    assert "Skip downgrading the consumer group g to classic group because it's empty." in \
        "\n".join(c.lines("DEBUG"))


# -- offsets and the clean-up --------------------------------------------------------------------

def test_classic_member_commits_with_its_generation() -> None:
    # ConsumerGroup.validateOffsetCommit: a classic member commits with any version, and a
    # wrong generation is ILLEGAL_GENERATION (STALE_MEMBER_EPOCH is for consumer members)
    c = ctx()
    member_id = mixed_group(c)
    generation = c.group().members.get(member_id).member_epoch
    ok = c.commit(OffsetCommitRequest("g", generation, member_id,
                                      {("foo", 0): PartitionData(5)}, version=8))
    assert ok.response.errors[("foo", 0)] is Errors.NONE
    err = error_of(c.commit, OffsetCommitRequest("g", generation + 1, member_id,
                                                 {("foo", 0): PartitionData(6)}, version=8))
    assert (err.error, err.detail) == (
        Errors.ILLEGAL_GENERATION, f"The received generation id {generation + 1} does not match "
                                   f"the expected member epoch {generation}.")


def test_cleanup_expires_offsets_and_deletes_an_empty_consumer_group() -> None:
    # GroupMetadataManagerTest.testConsumerGroupMaybeDelete, OffsetMetadataManager
    # .cleanupExpiredOffsets with ConsumerGroup.offsetExpirationCondition (commit time) and
    # isSubscribedToTopic
    c = ctx(**{"offsets.retention.minutes": 1})
    cg_join(c, "c1", topics=("foo",))
    epoch = c.group().members.get("c1").member_epoch
    c.commit(OffsetCommitRequest("g", epoch, "c1", {("foo", 0): PartitionData(1),
                                                   ("bar", 0): PartitionData(2)}, version=9))
    c.time.now += 60_000
    result = c.shard.cleanup_group_metadata()
    # bar expired; foo is subscribed; the group is not empty
    assert result.records == [rec.new_offset_commit_tombstone("g", "bar", 0)]
    c.replay(result.records)
    cg_leave(c, "c1")
    result = c.shard.cleanup_group_metadata()
    group = c.group()
    assert result.records == [rec.new_offset_commit_tombstone("g", "foo", 0)] + \
        group.tombstone_records()
    c.replay(result.records)
    assert c.group() is None and "g" not in c.shard.offsets.offsets


def test_cleanup_keeps_an_empty_consumer_group_with_live_offsets() -> None:
    # OffsetMetadataManager.cleanupExpiredOffsets: not every offset expired: the group stays
    c = ctx()
    cg_join(c, "c1", topics=("foo",))
    epoch = c.group().members.get("c1").member_epoch
    c.commit(OffsetCommitRequest("g", epoch, "c1", {("foo", 0): PartitionData(1)}, version=9))
    cg_leave(c, "c1")
    assert c.shard.cleanup_group_metadata().records == []
    assert c.group() is not None


def test_delete_groups_of_a_consumer_group() -> None:
    # GroupMetadataManagerTest.testConsumerGroupDelete (GroupCoordinatorShard.deleteGroups with
    # ConsumerGroup.validateDeleteGroup): NON_EMPTY_GROUP while it has members; once Empty, its
    # offsets' and its own tombstones
    c = ctx()
    cg_join(c, "c1")
    epoch = c.group().members.get("c1").member_epoch
    c.commit(OffsetCommitRequest("g", epoch, "c1", {("foo", 0): PartitionData(1)}, version=9))
    busy = c.shard.delete_groups(RequestContext("admin"), ["g"])
    assert [r.error for r in busy.response] == [Errors.NON_EMPTY_GROUP] and busy.records == []
    cg_leave(c, "c1")
    group = c.group()
    done = c.shard.delete_groups(RequestContext("admin"), ["g"])
    assert [r.error for r in done.response] == [Errors.NONE]
    assert done.records == [rec.new_offset_commit_tombstone("g", "foo", 0)] + \
        group.tombstone_records()
    c.replay(done.records)
    assert c.group() is None and c.shard.offsets.committed("g") == {}


# -- the record ----------------------------------------------------------------------------------

def test_classic_member_metadata_bytes() -> None:
    # ConsumerGroupMemberMetadataValue.ClassicMemberMetadata: tagged field 0, a nullable struct
    # (size, presence byte 1, SessionTimeoutMs, SupportedProtocols, its own empty tag section);
    # absent for a consumer-protocol member, so those records keep their bytes
    r = rec.new_consumer_group_member_subscription_record(
        "g", "m", None, None, "c", "h", ["t"], None, 5000, None, (45000, [("range", b"ab")]))
    value = rec.CONSUMER_GROUP_MEMBER_METADATA_VALUE
    raw = value.encode(r.value, 0)
    plain = value.encode(rec.new_consumer_group_member_subscription_record(
        "g", "m", None, None, "c", "h", ["t"], None, 5000, None).value, 0)
    assert plain.endswith(b"\x00") and raw[:len(plain) - 1] == plain[:-1]
    tail = raw[len(plain) - 1:]
    assert tail == (b"\x01" + b"\x00" + bytes([17]) + b"\x01" + (45000).to_bytes(4, "big")
                    + b"\x02" + b"\x06range" + b"\x03ab" + b"\x00" + b"\x00")
    assert value.decode(raw, 0)["ClassicMemberMetadata"] == {
        "SessionTimeoutMs": 45000, "SupportedProtocols": [{"Name": "range", "Metadata": b"ab"}]}
