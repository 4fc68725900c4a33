"""ConsumerGroupHeartbeat on the coordinator shard (KIP-848), ported from Kafka's
`GroupMetadataManagerTest`: each test names the Kafka test whose behaviour it checks. Kafka's
tests use a mock assignor; these use the real server assignors (`range`, `uniform`) with
expectations worked out for them."""

from __future__ import annotations

import pytest

from consumer_group_context import ConsumerGroupContext
from coordinator_kit.errors import Errors, KafkaError
from coordinator_kit.group import records as rec
from coordinator_kit.group.api import (ConsumerGroupHeartbeatAssignment,
                                       ConsumerGroupHeartbeatRequest,
                                       ConsumerGroupHeartbeatResponse, TopicPartitions)
from coordinator_kit.group.modern.consumer_group import CONSUMER_GROUP_STATES, ConsumerGroupState
from coordinator_kit.group.modern.member import MemberState
from coordinator_kit.group.modern.topics import topic_id

FOO, BAR = topic_id("foo"), topic_id("bar")
CGS = ConsumerGroupState


def ctx(**config) -> ConsumerGroupContext:
    return ConsumerGroupContext({"foo": 6, "bar": 3}, **config)


def join(c, member_id, topics=("foo", "bar"), assignor="range", instance=None,
         rebalance_ms=5000, group="g"):
    return c.heartbeat(ConsumerGroupHeartbeatRequest(
        group, member_id, 0, instance_id=instance, rebalance_timeout_ms=rebalance_ms,
        subscribed_topic_names=tuple(topics), server_assignor=assignor, topic_partitions=()))


def hb(c, member_id, epoch, owned=None, instance=None, group="g"):
    return c.heartbeat(ConsumerGroupHeartbeatRequest(
        group, member_id, epoch, instance_id=instance,
        topic_partitions=None if owned is None else tuple(
            TopicPartitions(t, tuple(p)) for t, p in sorted(owned.items()))))


def error_of(fn, *args, **kwargs) -> KafkaError:
    with pytest.raises(KafkaError) as err:
        fn(*args, **kwargs)
    return err.value


def assigned(result) -> dict[str, tuple[int, ...]] | None:
    a = result.response.assignment
    return None if a is None else {tp.topic_id: tp.partitions for tp in a.topic_partitions}


def test_member_joins_empty_consumer_group() -> None:
    # GroupMetadataManagerTest.testMemberJoinsEmptyConsumerGroup: epochs, records (in order)
    # and the response of the first member's first heartbeat.
    c = ctx()
    result = join(c, "member-1")
    assert result.response == ConsumerGroupHeartbeatResponse(
        member_id="member-1", member_epoch=1, heartbeat_interval_ms=5000,
        assignment=ConsumerGroupHeartbeatAssignment((
            TopicPartitions(BAR, (0, 1, 2)), TopicPartitions(FOO, (0, 1, 2, 3, 4, 5)))))
    everything = {FOO: range(6), BAR: range(3)}
    assert result.records == [
        rec.new_consumer_group_member_subscription_record(
            "g", "member-1", None, None, "client", "/127.0.0.1", ["bar", "foo"], "", 5000,
            "range"),
        rec.new_consumer_group_subscription_metadata_record(
            "g", {"foo": (FOO, 6), "bar": (BAR, 3)}),
        rec.new_consumer_group_epoch_record("g", 1),
        rec.new_consumer_group_target_assignment_record("g", "member-1", everything),
        rec.new_consumer_group_target_assignment_epoch_record("g", 1),
        rec.new_consumer_group_current_assignment_record("g", "member-1", 1, 0, 0, everything,
                                                         {}),
    ]
    assert [r.record_type for r in result.records] == [5, 4, 3, 7, 6, 8]
    group = c.group()
    assert (group.group_epoch, group.assignment_epoch, group.state) == (1, 1, CGS.STABLE)
    m = group.members.get("member-1")
    assert (m.member_epoch, m.previous_member_epoch, m.state) == (1, 0, MemberState.STABLE)
    assert c.timer.deadline("session-timeout-g-member-1") == 45_000
    # Kafka's log line for the join, word for word
    assert any(line.endswith("[GroupId g] Member member-1 joins the consumer group using the "
                             "consumer protocol. (org.apache.kafka.coordinator.group."
                             "GroupMetadataManager)") for line in c.lines())


@pytest.mark.parametrize("request_, error, message", [
    (ConsumerGroupHeartbeatRequest(" "), Errors.INVALID_REQUEST, "GroupId can't be empty."),
    (ConsumerGroupHeartbeatRequest("g", "m", 0), Errors.INVALID_REQUEST,
     "RebalanceTimeoutMs must be provided in first request."),
    (ConsumerGroupHeartbeatRequest("g", "m", 0, rebalance_timeout_ms=5000),
     Errors.INVALID_REQUEST, "TopicPartitions must be empty when (re-)joining."),
    (ConsumerGroupHeartbeatRequest("g", "m", 0, rebalance_timeout_ms=5000, topic_partitions=()),
     Errors.INVALID_REQUEST, "SubscribedTopicNames must be set in first request."),
    (ConsumerGroupHeartbeatRequest("g", "", 1), Errors.INVALID_REQUEST,
     "MemberId can't be empty."),
    (ConsumerGroupHeartbeatRequest("g", "m", 1, instance_id=""), Errors.INVALID_REQUEST,
     "InstanceId can't be empty."),
    (ConsumerGroupHeartbeatRequest("g", "m", 1, rack_id=""), Errors.INVALID_REQUEST,
     "RackId can't be empty."),
    (ConsumerGroupHeartbeatRequest("g", "m", 1, server_assignor="bar"),
     Errors.UNSUPPORTED_ASSIGNOR,
     "ServerAssignor bar is not supported. Supported assignors: uniform, range."),
    (ConsumerGroupHeartbeatRequest("g", "m", -2), Errors.INVALID_REQUEST,
     "InstanceId can't be null."),
    (ConsumerGroupHeartbeatRequest("g", "m", -3), Errors.INVALID_REQUEST,
     "MemberEpoch is invalid."),
    (ConsumerGroupHeartbeatRequest("g", "m", 0, rebalance_timeout_ms=5000, topic_partitions=(),
                                   subscribed_topic_names=("foo",),
                                   subscribed_topic_regex="foo.*"),
     Errors.INVALID_REQUEST, "SubscribedTopicRegex is not supported yet."),
])
def test_consumer_heartbeat_request_validation(request_, error, message) -> None:
    # GroupMetadataManagerTest.testConsumerHeartbeatRequestValidation (and the regex case of
    # this snapshot, where SubscribedTopicRegex is refused)
    err = error_of(ctx().heartbeat, request_)
    assert (err.error, err.detail) == (error, message)


def test_member_id_generation() -> None:
    # GroupMetadataManagerTest.testMemberIdGeneration: an empty member id gets a generated one
    c = ctx()
    result = join(c, "")
    assert len(result.response.member_id) == 22  # a Uuid in Kafka's printed form
    assert c.group().has_member(result.response.member_id)


def test_unknown_group_and_member() -> None:
    # GroupMetadataManagerTest.testUnknownGroupId / testUnknownMemberIdJoinsConsumerGroup
    c = ctx()
    assert error_of(hb, c, "m", 100).error is Errors.GROUP_ID_NOT_FOUND
    join(c, "member-1")
    assert error_of(hb, c, "unknown", 1).error is Errors.UNKNOWN_MEMBER_ID


def test_member_epoch_validation() -> None:
    # GroupMetadataManagerTest.testConsumerGroupMemberEpochValidation: a greater epoch is fenced;
    # a smaller one only when it is not the previous epoch with owned partitions it still has.
    c = ctx()
    join(c, "m1")  # epoch 1, previous 0, owns everything
    err = error_of(hb, c, "m1", 2)
    assert err.error is Errors.FENCED_MEMBER_EPOCH
    assert "greater member epoch (2)" in err.detail
    join(c, "m2")  # group epoch 2; m1 will be moved to revoke
    r = hb(c, "m1", 1, {FOO: range(6), BAR: range(3)})
    assert r.response.member_epoch == 1  # UNREVOKED_PARTITIONS keeps epoch 1
    r = hb(c, "m1", 1, {FOO: range(3), BAR: range(2)})
    assert r.response.member_epoch == 2
    # the answer with epoch 2 was lost: the previous epoch and a subset of its partitions pass
    assert hb(c, "m1", 1, {FOO: range(3)}).response.member_epoch == 2
    # but not with a partition it no longer has, nor without its owned list
    assert error_of(hb, c, "m1", 1, {FOO: (5,)}).error is Errors.FENCED_MEMBER_EPOCH
    assert error_of(hb, c, "m1", 1).error is Errors.FENCED_MEMBER_EPOCH
    assert error_of(hb, c, "m1", 0, {}).error is Errors.INVALID_REQUEST  # 0 needs a full one


def test_reconciliation_process() -> None:
    # GroupMetadataManagerTest.testReconciliationProcess (two members instead of three): the
    # first member must revoke before the second gets the partitions; partition epochs keep a
    # partition with one owner at a time.
    c = ctx()
    join(c, "m1")
    second = join(c, "m2")
    group = c.group()
    assert (group.group_epoch, group.assignment_epoch) == (2, 2)
    assert (second.response.member_epoch, assigned(second)) == (2, {})
    assert group.members.get("m2").state is MemberState.UNRELEASED_PARTITIONS
    assert group.state is CGS.RECONCILING
    # m1 (epoch 1) learns it must give up foo 3-5 and bar 2: epoch stays 1, rebalance timer armed
    r = hb(c, "m1", 1, {FOO: range(6), BAR: range(3)})
    m1 = group.members.get("m1")
    assert (m1.state, m1.member_epoch) == (MemberState.UNREVOKED_PARTITIONS, 1)
    assert assigned(r) == {BAR: (0, 1), FOO: (0, 1, 2)}
    assert dict(m1.partitions_pending_revocation) == {FOO: frozenset({3, 4, 5}),
                                                      BAR: frozenset({2})}
    assert c.timer.deadline("rebalance-timeout-g-m1") == 5000
    assert group.current_partition_epoch(FOO, 4) == 1  # still m1's while it revokes
    # m2 asks again: nothing released yet (its previous epoch catches up: 0 -> 2, one record)
    r = hb(c, "m2", 2, {})
    assert (r.response.member_epoch, assigned(r)) == (2, None)
    assert r.records == [rec.new_consumer_group_current_assignment_record(
        "g", "m2", 2, 2, MemberState.UNRELEASED_PARTITIONS.value, {}, {})]
    assert hb(c, "m2", 2, {}).records == []
    # m1 confirms the revocation: epoch 2, STABLE, rebalance timer cancelled
    r = hb(c, "m1", 1, {FOO: range(3), BAR: range(2)})
    assert (r.response.member_epoch, group.members.get("m1").state) == (2, MemberState.STABLE)
    assert not c.timer.is_scheduled("rebalance-timeout-g-m1")
    assert group.current_partition_epoch(FOO, 4) == -1
    # m2 now gets the freed partitions
    r = hb(c, "m2", 2, {})
    assert assigned(r) == {BAR: (2,), FOO: (3, 4, 5)}
    assert group.members.get("m2").state is MemberState.STABLE
    assert group.state is CGS.STABLE
    assert group.current_partition_epoch(FOO, 4) == 2


def test_uniform_is_the_default_assignor_and_sticky() -> None:
    # UniformHomogeneousAssignmentBuilder through the heartbeat: no ServerAssignor -> uniform;
    # a joining member takes partitions from the current target, the others keep theirs.
    c = ctx()
    join(c, "m1", assignor=None)
    join(c, "m2", assignor=None)
    target = {m: dict(a) for m, a in c.group().target_assignment.items()}
    assert sum(len(p) for a in target.values() for p in a.values()) == 9
    sizes = sorted(sum(len(p) for p in a.values()) for a in target.values())
    assert sizes == [4, 5]
    assert any("Computed a new target assignment for epoch 2 with 'uniform' assignor" in x
               for x in c.lines("DEBUG"))
    join(c, "m3", assignor=None)
    after = {m: dict(a) for m, a in c.group().target_assignment.items()}
    assert sorted(sum(len(p) for p in a.values()) for a in after.values()) == [3, 3, 3]
    for m in ("m1", "m2"):  # stickiness: what stays with a member was already its own
        for topic, parts in after[m].items():
            assert parts <= target[m].get(topic, frozenset())


def test_leaving_member_bumps_group_epoch() -> None:
    # GroupMetadataManagerTest.testLeavingMemberBumpsGroupEpoch: tombstones in Kafka's order,
    # then the group epoch; the target is recomputed only at the next heartbeat.
    c = ctx()
    join(c, "m1")
    join(c, "m2", topics=("foo",))
    r = c.heartbeat(ConsumerGroupHeartbeatRequest("g", "m2", -1))
    assert r.response == ConsumerGroupHeartbeatResponse(member_id="m2", member_epoch=-1)
    assert r.records == [
        rec.new_consumer_group_current_assignment_tombstone("g", "m2"),
        rec.new_consumer_group_target_assignment_tombstone("g", "m2"),
        rec.new_consumer_group_member_subscription_tombstone("g", "m2"),
        rec.new_consumer_group_epoch_record("g", 3),
    ]
    assert c.group().state is CGS.ASSIGNING
    assert not c.timer.is_scheduled("session-timeout-g-m2")
    # the last member leaves: the subscription metadata empties, the group is Empty
    r = c.heartbeat(ConsumerGroupHeartbeatRequest("g", "m1", -1))
    assert r.records[3] == rec.new_consumer_group_subscription_metadata_record("g", {})
    assert c.group().state is CGS.EMPTY


def test_session_timeout_expiration() -> None:
    # GroupMetadataManagerTest.testSessionTimeoutLifecycle / testSessionTimeoutExpiration
    c = ctx()
    join(c, "m1")
    c.sleep(40_000)
    hb(c, "m1", 1)  # a heartbeat pushes the deadline back
    assert c.timer.deadline("session-timeout-g-m1") == 85_000
    assert c.sleep(44_999) == []
    [(key, result)] = c.sleep(1)
    assert key == "session-timeout-g-m1"
    assert [r.record_type for r in result.records] == [8, 7, 5, 4, 3]
    assert c.group().state is CGS.EMPTY
    # Kafka 4.0.2's reason has no full stop of its own: one at the end, not "expired.."
    assert any("[GroupId g] Member m1 fenced from the group because the member session "
               "expired. (" in x for x in c.lines())


def test_rebalance_timeout_expiration() -> None:
    # GroupMetadataManagerTest.testRebalanceTimeoutExpiration: a member that does not revoke
    # within its rebalance timeout is fenced; its partitions go to the other member.
    c = ctx()
    join(c, "m1", rebalance_ms=12_000)
    join(c, "m2")
    hb(c, "m1", 1, {FOO: range(6), BAR: range(3)})  # UNREVOKED_PARTITIONS at epoch 1
    hb(c, "m2", 2, {})
    fired = c.sleep(12_000)
    assert [k for k, _ in fired] == ["rebalance-timeout-g-m1"]
    assert not c.group().has_member("m1")
    assert any("failed to transition from epoch 1 within 12000ms" in x for x in c.lines())
    r = hb(c, "m2", 2, {})
    assert assigned(r) == {BAR: (0, 1, 2), FOO: tuple(range(6))}
    assert r.response.member_epoch == 3  # joins 1, 2; the fence bumps to 3


def test_rebalance_timeout_ignored_after_the_member_moved_on() -> None:
    # GroupMetadataManagerTest.testRebalanceTimeoutLifecycle: a member that revoked in time
    # has its timer cancelled
    c = ctx()
    join(c, "m1")
    join(c, "m2")
    hb(c, "m1", 1, {FOO: range(6), BAR: range(3)})
    hb(c, "m1", 1, {FOO: range(3), BAR: range(2)})
    assert c.sleep(5000) == []


def test_new_member_is_rejected_when_maximum_members_is_reached() -> None:
    # GroupMetadataManagerTest.testNewMemberIsRejectedWithMaximumMembersIsReached
    c = ctx(**{"group.consumer.max.size": 1})
    join(c, "m1")
    err = error_of(join, c, "m2")
    assert (err.error, err.detail) == (
        Errors.GROUP_MAX_SIZE_REACHED,
        "The consumer group has reached its maximum capacity of 1 members.")
    assert hb(c, "m1", 1).response.member_epoch == 1  # a member already in is fine


def test_static_member_gets_back_assignment_upon_rejoin() -> None:
    # GroupMetadataManagerTest.testStaticMemberGetsBackAssignmentUponRejoin and
    # testNoGroupEpochBumpWhenStaticMemberTemporarilyLeaves
    c = ctx()
    join(c, "m1", instance="i1")
    join(c, "m2", instance="i2")
    hb(c, "m1", 1, {FOO: range(6), BAR: range(3)}, instance="i1")
    hb(c, "m1", 1, {FOO: range(3), BAR: range(2)}, instance="i1")
    hb(c, "m2", 2, {}, instance="i2")
    group = c.group()
    assert group.state is CGS.STABLE
    r = c.heartbeat(ConsumerGroupHeartbeatRequest("g", "m2", -2, instance_id="i2"))
    assert r.response.member_epoch == -2
    assert [x.record_type for x in r.records] == [8]  # no epoch bump
    assert group.group_epoch == 2
    # the same instance comes back under a new member id: it inherits the old target
    r = join(c, "m2-new", instance="i2")
    assert [x.record_type for x in r.records] == [8, 7, 5, 5, 7, 8, 8]
    assert r.response.member_epoch == 2
    assert assigned(r) == {BAR: (2,), FOO: (3, 4, 5)}
    assert group.static_member_id("i2") == "m2-new" and not group.has_member("m2")
    assert any("re-joins the consumer group using the consumer protocol. Created a new member "
               "m2-new to replace the existing member m2." in x for x in c.lines())


def test_static_member_errors() -> None:
    # GroupMetadataManagerTest.testShouldThrownUnreleasedInstanceIdExceptionWhenNewMemberJoins
    # WithInUseInstanceId, testShouldThrownUnknownMemberIdExceptionWhenUnknownStaticMemberJoins,
    # testShouldThrowFencedInstanceIdExceptionWhenStaticMemberWithDifferentMemberIdJoins,
    # testShouldThrowUnknownMemberIdExceptionWhenUnknownStaticMemberLeaves
    c = ctx()
    join(c, "m1", instance="i1")
    assert error_of(join, c, "m9", instance="i1").error is Errors.UNRELEASED_INSTANCE_ID
    assert error_of(hb, c, "m1", 1, instance="i9").error is Errors.UNKNOWN_MEMBER_ID
    assert error_of(hb, c, "m9", 1, instance="i1").error is Errors.FENCED_INSTANCE_ID
    assert error_of(c.heartbeat, ConsumerGroupHeartbeatRequest(
        "g", "m1", -1, instance_id="i9")).error is Errors.UNKNOWN_MEMBER_ID


def test_full_response_and_assignment_only_on_change() -> None:
    # GroupMetadataManagerTest.testConsumerGroupHeartbeatFullResponse: the assignment is in the
    # response only for a full request or when the member's partitions changed
    c = ctx()
    join(c, "m1")
    assert assigned(hb(c, "m1", 1)) is None
    full = c.heartbeat(ConsumerGroupHeartbeatRequest(
        "g", "m1", 1, rebalance_timeout_ms=5000, subscribed_topic_names=("foo", "bar"),
        topic_partitions=(TopicPartitions(FOO, tuple(range(6))),
                          TopicPartitions(BAR, (0, 1, 2)))))
    assert assigned(full) == {BAR: (0, 1, 2), FOO: tuple(range(6))}


def test_updating_subscription_triggers_new_target_assignment() -> None:
    # GroupMetadataManagerTest.testUpdatingSubscriptionTriggersNewTargetAssignment
    c = ctx()
    join(c, "m1", topics=("foo",))
    r = c.heartbeat(ConsumerGroupHeartbeatRequest("g", "m1", 1,
                                                  subscribed_topic_names=("foo", "bar")))
    assert [x.record_type for x in r.records] == [5, 4, 3, 7, 6, 8]
    assert (r.response.member_epoch, assigned(r)) == (2, {BAR: (0, 1, 2),
                                                          FOO: tuple(range(6))})


def test_empty_classic_group_is_replaced_and_non_empty_refused() -> None:
    # GroupMetadataManager.getOrMaybeCreateConsumerGroup: an empty classic group (here a simple
    # one, made by an offset commit) is tombstoned and replaced; offsets stay
    from coordinator_kit.group.api import OffsetCommitRequest, PartitionData
    c = ctx()
    c.commit(OffsetCommitRequest("g", -1, "", {("foo", 0): PartitionData(42)}))
    assert "g" in c.shard.groups.groups
    r = join(c, "m1")
    assert r.records[0] == rec.new_group_metadata_tombstone("g")
    assert "g" not in c.shard.groups.groups and c.group() is not None
    assert c.shard.offsets.committed("g") == {("foo", 0): 42}


def test_group_state_table() -> None:
    # ConsumerGroup.maybeUpdateGroupState's moves, as a table
    assert CONSUMER_GROUP_STATES.can_transition(CGS.STABLE, CGS.ASSIGNING)
    assert not CONSUMER_GROUP_STATES.can_transition(CGS.STABLE, CGS.DEAD)
    assert [s.value for s in CGS] == ["Empty", "Assigning", "Reconciling", "Stable", "Dead"]


def test_classic_requests_for_a_consumer_group() -> None:
    # GroupMetadataManager.classicGroupJoin / classicGroupHeartbeat / classicGroupLeave for a
    # consumer group's id. A JoinGroup without a member id to a non-empty one is asked for one
    # (MEMBER_ID_REQUIRED, classicGroupJoinToConsumerGroup; tests/test_consumer_group_migration.py
    # covers the rest); a Heartbeat or LeaveGroup for a member of the consumer protocol answers
    # UNKNOWN_MEMBER_ID (throwIfMemberDoesNotUseClassicProtocol). An empty consumer group is
    # deleted and the classic group created in its place (maybeDeleteEmptyConsumerGroup).
    from coordinator_kit.group.api import (HeartbeatRequest, JoinGroupRequest,
                                           LeaveGroupRequest, MemberIdentity, RequestContext)
    from coordinator_kit.group.classic import Protocol
    from coordinator_kit.runtime.future import CoordinatorFuture
    c = ctx()
    join(c, "m1", instance="i1")
    join_request = JoinGroupRequest("g", 45000, 300000, "", "consumer",
                                    (Protocol("range", b""),))
    response = CoordinatorFuture("join")
    assert c.shard.classic_group_join(RequestContext("c"), join_request, response).records == []
    assert response.result().error is Errors.MEMBER_ID_REQUIRED
    assert "g" not in c.shard.groups.groups
    assert error_of(c.shard.classic_group_heartbeat, RequestContext("c"),
                    HeartbeatRequest("g", 1, "m1")).error is Errors.UNKNOWN_MEMBER_ID
    leave = c.shard.classic_group_leave(RequestContext("c"), LeaveGroupRequest(
        "g", (MemberIdentity("m1"), MemberIdentity("other", "i1"))))
    assert [m.error for m in leave.response.members] == [Errors.UNKNOWN_MEMBER_ID,
                                                         Errors.FENCED_INSTANCE_ID]
    assert c.group().has_member("m1")
    # the consumer group empties; a classic JoinGroup replaces it
    c.heartbeat(ConsumerGroupHeartbeatRequest("g", "m1", -1, instance_id="i1"))
    response = CoordinatorFuture("join")
    result = c.shard.classic_group_join(RequestContext("c", api_version=3), join_request,
                                        response)
    assert [r.record_type for r in result.records[:3]] == [6, 4, 3]
    assert all(r.value is None for r in result.records[:3])
    assert result.replay_records is False
    assert c.group() is None and "g" in c.shard.groups.groups
