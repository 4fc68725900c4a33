"""The group coordinator's admin APIs: ListGroups, OffsetDelete and DeleteGroups (Kafka's
`GroupCoordinatorService.listGroups`/`deleteOffsets`/`deleteGroups`, the shard and manager
methods behind them, and `CoordinatorRuntime.scheduleReadAllOperation`)."""

from __future__ import annotations

import itertools

from coordinator_kit.cluster import Cluster
from coordinator_kit.errors import Errors
from coordinator_kit.group import records as rec
from coordinator_kit.group.api import (DeleteGroupsRequest, JoinGroupRequest, LeaveGroupRequest,
                                       ListedGroup, ListGroupsRequest, MemberIdentity,
                                       OffsetCommitRequest, OffsetDeleteRequest,
                                       OffsetFetchRequest, PartitionData, RequestContext,
                                       SyncGroupRequest)
from coordinator_kit.group.classic import ClassicGroupState, Protocol
from coordinator_kit.group.protocol import ConsumerProtocolSubscription
from coordinator_kit.group.service import partition_for
from coordinator_kit.runtime.runtime import CoordinatorState

CTX = RequestContext("admin")
SUB = ConsumerProtocolSubscription(("orders",)).encode()


def groups_in(partition: int, partitions: int, n: int = 1) -> list[str]:
    """The first `n` group ids `g<i>` that hash to `partition`."""
    return list(itertools.islice((g for g in (f"g{i}" for i in itertools.count())
                                  if partition_for(g, partitions) == partition), n))


def commit(cluster: Cluster, group: str, offsets: dict, gen: int = -1, member: str = "",
           broker: int | None = None):
    svc = cluster.brokers[cluster.coordinator_for(group) if broker is None else broker].service
    return svc.commit_offsets(CTX, OffsetCommitRequest(
        group, gen, member, {tp: PartitionData(o) for tp, o in offsets.items()}))


def stable_group(cluster: Cluster, group: str, protocol_type: str = "consumer",
                 metadata: bytes = SUB) -> tuple[str, int]:
    """One member, Stable: (member id, generation)."""
    svc = cluster.brokers[cluster.coordinator_for(group)].service
    join = JoinGroupRequest(group, 45000, 300000, "", protocol_type,
                            (Protocol("range", metadata),))
    first = svc.join_group(RequestContext("c"), join)
    cluster.run_for(5)
    member = first.result().member_id
    second = svc.join_group(RequestContext("c"), JoinGroupRequest(
        group, 45000, 300000, member, protocol_type, (Protocol("range", metadata),)))
    cluster.run_until(second.done, limit_ms=10_000)
    gen = second.result().generation_id
    sync = svc.sync_group(RequestContext("c"), SyncGroupRequest(
        group, gen, member, None, protocol_type, "range", {member: b""}))
    cluster.run_for(50)
    assert sync.result().error is Errors.NONE
    return member, gen


def listed(cluster: Cluster, broker: int, request: ListGroupsRequest = ListGroupsRequest()):
    f = cluster.brokers[broker].service.list_groups(CTX, request)
    cluster.run_for(5)
    return f.result()


# -- ListGroups ------------------------------------------------------------------------------------

def test_list_groups_reads_every_partition_the_broker_leads_at_its_committed_offset():
    """CoordinatorRuntimeTest.testScheduleReadAllOp, GroupCoordinatorServiceTest.testListGroups:
    one read per coordinator partition of the runtime, combined; each read is at the
    partition's last committed offset, so a group whose record is not committed yet is not
    listed."""
    cluster = Cluster(brokers=2, offsets_partitions=4)
    cluster.run_for(10)
    # broker 0 leads partitions 0 and 2, broker 1 leads 1 and 3
    assert [cluster.partitions[tp].leader_id for tp in sorted(cluster.partitions)] == [0, 1, 0, 1]
    g0, g1, g2 = groups_in(0, 4)[0], groups_in(1, 4)[0], groups_in(2, 4)[0]
    for g in (g0, g1, g2):
        commit(cluster, g, {("t", 0): 1})
    cluster.run_for(50)
    assert listed(cluster, 0).groups == (ListedGroup(g0, "", "Empty", "classic"),
                                         ListedGroup(g2, "", "Empty", "classic"))
    assert [g.group_id for g in listed(cluster, 1).groups] == [g1]
    # a new group on partition 2 whose record cannot commit (the follower stalls)
    late = groups_in(2, 4, 2)[1]
    cluster.stall_replica(2, broker=1)
    pending = commit(cluster, late, {("t", 0): 1})
    cluster.run_for(50)
    assert not pending.done() and cluster.shard_for(late).groups.group(late) is not None
    assert [g.group_id for g in listed(cluster, 0).groups] == [g0, g2]
    cluster.stall_replica(2, broker=1, stalled=False)
    cluster.run_until(pending.done, limit_ms=10_000)
    assert [g.group_id for g in listed(cluster, 0).groups] == [g0, g2, late]


def test_list_groups_skips_a_partition_that_is_not_the_brokers_and_fails_while_one_loads():
    """GroupCoordinatorServiceTest.testListGroupsFailedWithNotCoordinatorException and
    testListGroupsWithFailure: a partition whose read fails NOT_COORDINATOR (here a context
    whose load failed) adds nothing; one still loading fails the whole answer with
    COORDINATOR_LOAD_IN_PROGRESS."""
    cluster = Cluster(brokers=2, offsets_partitions=2)
    cluster.run_for(10)
    g0, g1 = groups_in(0, 2)[0], groups_in(1, 2)[0]
    commit(cluster, g0, {("t", 0): 1})
    commit(cluster, g1, {("t", 0): 1})
    cluster.run_for(50)
    cluster.fail_next_load(1, broker=0)
    cluster.move_coordinator(1, to_broker=0)
    cluster.run_for(50)
    assert cluster.brokers[0].runtime.context_state(cluster.partition_of(g1)) \
        is CoordinatorState.FAILED
    response = listed(cluster, 0)
    assert response.error is Errors.NONE and [g.group_id for g in response.groups] == [g0]
    # partition 1 back to broker 1, then to broker 0 again, slowly this time
    cluster.move_coordinator(1, to_broker=1)
    cluster.run_for(50)
    cluster.brokers[0].runtime.loader.slow_next_load(cluster.partition_of(g1), 1000)
    cluster.move_coordinator(1, to_broker=0)
    cluster.run_for(5)
    loading = listed(cluster, 0)
    assert loading.error is Errors.COORDINATOR_LOAD_IN_PROGRESS and loading.groups == ()
    cluster.run_for(2000)
    assert [g.group_id for g in listed(cluster, 0).groups] == [g0, g1]


def test_list_groups_filters_by_state_case_insensitively_and_by_type():
    """GroupMetadataManagerTest.testListGroups: states compared lower-cased and trimmed
    (ListGroups v4 StatesFilter), types by name (v5 TypesFilter; an unknown type matches no
    group)."""
    cluster = Cluster(brokers=1, offsets_partitions=1)
    cluster.run_for(10)
    stable_group(cluster, "busy")
    commit(cluster, "simple", {("t", 0): 1})
    cluster.run_for(50)
    everything = listed(cluster, 0).groups
    assert everything == (ListedGroup("busy", "consumer", "Stable", "classic"),
                          ListedGroup("simple", "", "Empty", "classic"))

    def ids(states=(), types=()):
        return [g.group_id for g in listed(cluster, 0, ListGroupsRequest(states, types)).groups]
    assert ids(("stable",)) == ["busy"]
    assert ids((" EMPTY ",)) == ["simple"]
    assert ids(("Empty", "Stable")) == ["busy", "simple"]
    assert ids(("PreparingRebalance",)) == []
    assert ids(types=("Classic",)) == ["busy", "simple"]
    assert ids(types=("consumer",)) == [] and ids(types=("no-such-type",)) == []
    assert ids(("stable",), ("classic",)) == ["busy"]


def test_list_groups_on_an_inactive_service_is_coordinator_not_available():
    """GroupCoordinatorServiceTest.testListGroupsWhenNotStarted."""
    cluster = Cluster(brokers=1, offsets_partitions=1)
    cluster.run_for(10)
    cluster.brokers[0].service.active = False
    response = listed(cluster, 0)
    assert response.error is Errors.COORDINATOR_NOT_AVAILABLE and response.groups == ()


# -- OffsetDelete ----------------------------------------------------------------------------------

def delete_offsets(cluster: Cluster, group: str, partitions, broker: int | None = None):
    svc = cluster.brokers[cluster.coordinator_for(group) if broker is None else broker].service
    f = svc.delete_offsets(CTX, OffsetDeleteRequest(group, tuple(partitions)))
    cluster.run_for(50)
    return f.result()


def fetch(cluster: Cluster, group: str, partitions, require_stable: bool = False):
    svc = cluster.brokers[cluster.coordinator_for(group)].service
    f = svc.fetch_offsets(CTX, OffsetFetchRequest(group, tuple(partitions), require_stable))
    cluster.run_for(50)
    return {tp: (p.offset, p.error) for tp, p in f.result().offsets.items()}


def test_offset_delete_refuses_a_topic_the_stable_group_subscribes_to():
    """OffsetMetadataManagerTest.testGenericGroupOffsetDeleteWithErrors and
    `ClassicGroup.isSubscribedToTopic`: a consumer-protocol group may be Stable; a topic in its
    members' subscriptions gets GROUP_SUBSCRIBED_TO_TOPIC and keeps its offset, another topic's
    offset goes (a tombstone), and a partition without an offset is NONE without one."""
    cluster = Cluster(brokers=1, offsets_partitions=1)
    cluster.run_for(10)
    member, gen = stable_group(cluster, "g")
    committed = commit(cluster, "g", {("orders", 0): 5, ("other", 0): 7}, gen, member)
    cluster.run_for(50)
    assert committed.result().all_ok()
    end = cluster.partitions[cluster.partition_of("g")].log_end_offset
    response = delete_offsets(cluster, "g", [("orders", 0), ("other", 0), ("other", 9)])
    assert response.error is Errors.NONE
    assert response.errors == {("orders", 0): Errors.GROUP_SUBSCRIBED_TO_TOPIC,
                               ("other", 0): Errors.NONE, ("other", 9): Errors.NONE}
    assert cluster.committed_offsets("g") == {("orders", 0): 5}
    tail = cluster.partitions[cluster.partition_of("g")].read(0, end)
    assert [len(b.records) for b in tail] == [1]
    key, value = tail[0].records[0]
    assert value is None and rec.GroupCoordinatorRecordSerde().deserialize(key, value) \
        == rec.new_offset_commit_tombstone("g", "other", 0)


def test_offset_delete_group_errors():
    """ClassicGroup.validateOffsetDelete and GroupCoordinatorServiceTest
    .testDeleteOffsetsInvalidGroupId / testDeleteOffsetsWhenNotStarted: an unknown group is
    GROUP_ID_NOT_FOUND; a group with members that does not speak the consumer protocol is
    NON_EMPTY_GROUP; an empty group id INVALID_GROUP_ID; an inactive service
    COORDINATOR_NOT_AVAILABLE."""
    cluster = Cluster(brokers=1, offsets_partitions=1)
    cluster.run_for(10)
    assert delete_offsets(cluster, "nobody", [("t", 0)]).error is Errors.GROUP_ID_NOT_FOUND
    member, gen = stable_group(cluster, "connect-cluster", "connect", b"whatever")
    commit(cluster, "connect-cluster", {("t", 0): 3}, gen, member)
    cluster.run_for(50)
    response = delete_offsets(cluster, "connect-cluster", [("t", 0)])
    assert response.error is Errors.NON_EMPTY_GROUP and response.errors == {}
    assert cluster.committed_offsets("connect-cluster") == {("t", 0): 3}
    assert delete_offsets(cluster, "", [("t", 0)]).error is Errors.INVALID_GROUP_ID
    cluster.brokers[0].service.active = False
    assert delete_offsets(cluster, "g", [("t", 0)]).error is Errors.COORDINATOR_NOT_AVAILABLE


def test_offset_delete_tombstones_survive_a_coordinator_move():
    """OffsetMetadataManagerTest.testGenericGroupOffsetDelete: an Empty group's offset is
    deleted with a tombstone, which the next coordinator replays: it answers -1 too."""
    cluster = Cluster(brokers=3, offsets_partitions=1)
    cluster.run_for(10)
    member, gen = stable_group(cluster, "g")
    commit(cluster, "g", {("orders", 0): 5, ("orders", 1): 6}, gen, member)
    cluster.run_for(50)
    svc = cluster.brokers[0].service
    svc.leave_group(RequestContext("c"), LeaveGroupRequest("g", (MemberIdentity(member),)))
    cluster.run_for(50)
    assert cluster.shard_for("g").groups.group("g").state is ClassicGroupState.EMPTY
    response = delete_offsets(cluster, "g", [("orders", 0)])
    assert response.errors == {("orders", 0): Errors.NONE}
    assert cluster.move_coordinator("g") == 1 and cluster.coordinator_for("g") == 1
    cluster.run_for(50)
    assert fetch(cluster, "g", [("orders", 0), ("orders", 1)]) == {
        ("orders", 0): (-1, Errors.NONE), ("orders", 1): (6, Errors.NONE)}
    assert cluster.committed_offsets("g") == {("orders", 1): 6}


# -- DeleteGroups ----------------------------------------------------------------------------------

def delete_groups(cluster: Cluster, broker: int, *group_ids):
    f = cluster.brokers[broker].service.delete_groups(CTX, DeleteGroupsRequest(group_ids))
    cluster.run_for(50)
    return f.result()


def test_delete_groups_deletes_an_empty_group_and_refuses_a_non_empty_one():
    """GroupCoordinatorShardTest.testDeleteGroups, GroupMetadataManagerTest.testClassicGroupDelete
    and ClassicGroup.validateDeleteGroup: an Empty group's offsets and its GroupMetadata get
    tombstones (offsets first), and it is gone after a coordinator move too; a group with
    members is NON_EMPTY_GROUP, an unknown one GROUP_ID_NOT_FOUND, a missing id
    INVALID_GROUP_ID."""
    cluster = Cluster(brokers=3, offsets_partitions=1)
    cluster.run_for(10)
    member, gen = stable_group(cluster, "busy")
    commit(cluster, "busy", {("orders", 0): 1}, gen, member)
    commit(cluster, "idle", {("t", 0): 4, ("t", 1): 5})
    cluster.run_for(50)
    end = cluster.partitions[cluster.partition_of("idle")].log_end_offset
    response = delete_groups(cluster, 0, "idle", "busy", "nobody", None)
    assert response.errors() == {None: Errors.INVALID_GROUP_ID, "idle": Errors.NONE,
                                 "busy": Errors.NON_EMPTY_GROUP,
                                 "nobody": Errors.GROUP_ID_NOT_FOUND}
    assert [r.group_id for r in response.results] == [None, "idle", "busy", "nobody"]
    serde = rec.GroupCoordinatorRecordSerde()
    written = [serde.deserialize(k, v) for b in
               cluster.partitions[cluster.partition_of("idle")].read(0, end)
               for k, v in b.records]
    assert written == [rec.new_offset_commit_tombstone("idle", "t", 0),
                       rec.new_offset_commit_tombstone("idle", "t", 1),
                       rec.new_group_metadata_tombstone("idle")]
    assert any("The following groups were deleted: idle. A total of 2 offsets were removed."
               in line for line in cluster.log_lines())
    assert [g.group_id for g in listed(cluster, 0).groups] == ["busy"]
    cluster.move_coordinator("idle", to_broker=2)
    cluster.run_for(50)
    shard = cluster.shard_for("idle")
    assert shard.groups.group("idle") is None and cluster.committed_offsets("idle") == {}
    assert cluster.committed_offsets("busy") == {("orders", 0): 1}
    assert [g.group_id for g in listed(cluster, 2).groups] == ["busy"]


def test_delete_groups_spread_over_partitions_answer_per_group():
    """GroupCoordinatorServiceTest.testDeleteGroups and testDeleteGroupsWithException: one
    write per partition; missing ids first, then partition by partition; a partition the
    broker does not lead answers NOT_COORDINATOR for its groups only."""
    cluster = Cluster(brokers=2, offsets_partitions=4)
    cluster.run_for(10)
    a, b = groups_in(2, 4, 2)
    c = groups_in(0, 4)[0]
    d = groups_in(1, 4)[0]  # led by broker 1
    for g in (a, b, c, d):
        commit(cluster, g, {("t", 0): 1})
    cluster.run_for(50)
    response = delete_groups(cluster, 0, b, d, None, c, a)
    assert [(r.group_id, r.error) for r in response.results] == [
        (None, Errors.INVALID_GROUP_ID), (c, Errors.NONE), (d, Errors.NOT_COORDINATOR),
        (b, Errors.NONE), (a, Errors.NONE)]
    assert cluster.committed_offsets(d) == {("t", 0): 1}
    cluster.brokers[0].service.active = False
    assert delete_groups(cluster, 0, c).errors() == {c: Errors.COORDINATOR_NOT_AVAILABLE}


def test_list_groups_shows_consumer_groups_beside_classic_ones():
    """GroupMetadataManagerTest.testListGroups lists both group types: a KIP-848 consumer group
    has type and protocol type "consumer" and its own state; the type filter picks either."""
    from coordinator_kit.group.api import (ConsumerGroupHeartbeatRequest, ListGroupsRequest,
                                           RequestContext)

    cluster = Cluster(group_config={"group.initial.rebalance.delay.ms": 0})
    cluster.add_consumer("classic-1", group_id="classic-group")
    cluster.run_for(3_000)
    tp = cluster.partition_of("new-group")
    service = cluster.brokers[cluster.partitions[tp].leader_id].service
    joined = service.consumer_group_heartbeat(
        RequestContext("c1"), ConsumerGroupHeartbeatRequest(
            group_id="new-group", member_id="m1", member_epoch=0, rebalance_timeout_ms=5000,
            subscribed_topic_names=("orders",), topic_partitions=()))
    cluster.run_for(100)
    assert joined.result().error.name == "NONE"

    def listed(**filters):
        out = []
        for b in cluster.brokers.values():
            f = b.service.list_groups(RequestContext("admin"), ListGroupsRequest(**filters))
            cluster.run_for(10)
            out += [(g.group_id, g.group_type, g.group_state) for g in f.result().groups]
        return sorted(out)
    everything = listed()
    assert ("classic-group", "classic", "Stable") in everything
    assert [g for g in everything if g[0] == "new-group"][0][1] == "consumer"
    assert [g[0] for g in listed(types_filter=("consumer",))] == ["new-group"]
    assert [g[0] for g in listed(types_filter=("classic",))] == ["classic-group"]
