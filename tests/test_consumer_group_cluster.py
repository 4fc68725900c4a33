"""KIP-848 consumer groups through the broker's service on a simulated cluster: answers and error
codes as a client sees them (`GroupCoordinatorService.consumerGroupHeartbeat`), offsets with
member epochs (`ConsumerGroup.validateOffsetCommit` / `validateOffsetFetch`), and a coordinator
move that rebuilds the group from its records (`GroupMetadataManager.replay`, `onLoaded`)."""

from __future__ import annotations

from coordinator_kit.cluster import Cluster
from coordinator_kit.errors import Errors
from coordinator_kit.group.api import (ConsumerGroupHeartbeatRequest, OffsetCommitRequest,
                                       OffsetFetchRequest, PartitionData, RequestContext,
                                       TopicPartitions)
from coordinator_kit.group.modern.member import MemberState
from coordinator_kit.group.modern.topics import topic_id

FOO, BAR = topic_id("foo"), topic_id("bar")


class Rig:
    def __init__(self, brokers: int = 3) -> None:
        self.cluster = Cluster(brokers=brokers, topics={"foo": 6, "bar": 3}, trace_level="DEBUG",
                               group_config={"offsets.topic.num.partitions": 1})
        self.cluster.run_for(10)

    @property
    def svc(self):
        return self.cluster.brokers[self.cluster.coordinator_for("g")].service

    def send(self, request, client="c"):
        f = self.svc.consumer_group_heartbeat(RequestContext(client), request)
        self.cluster.run_until(f.done, limit_ms=5000)
        return f.result()

    def join(self, member_id, **kw):
        return self.send(ConsumerGroupHeartbeatRequest(
            "g", member_id, 0, rebalance_timeout_ms=kw.pop("rebalance_ms", 30000),
            subscribed_topic_names=("foo", "bar"), server_assignor="range", topic_partitions=(),
            **kw))

    def hb(self, member_id, epoch, owned=None):
        return self.send(ConsumerGroupHeartbeatRequest(
            "g", member_id, epoch, topic_partitions=None if owned is None else tuple(
                TopicPartitions(t, tuple(p)) for t, p in sorted(owned.items()))))

    def commit(self, member_id, epoch, offset=5, version=9):
        f = self.svc.commit_offsets(RequestContext("c"), OffsetCommitRequest(
            "g", epoch, member_id, {("foo", 0): PartitionData(offset)}, version=version))
        self.cluster.run_until(f.done, limit_ms=5000)
        return f.result()

    def fetch(self, member_id, epoch):
        f = self.svc.fetch_offsets(RequestContext("c"), OffsetFetchRequest(
            "g", (("foo", 0),), member_id=member_id, member_epoch=epoch))
        self.cluster.run_until(f.done, limit_ms=5000)
        return f.result()

    def group(self):
        return self.cluster.shard_for("g").consumer_groups.groups.get("g")


def test_heartbeat_through_the_service_and_its_errors() -> None:
    # GroupCoordinatorService.consumerGroupHeartbeat: the answer after the records commit;
    # a failure becomes the response's error code and message
    rig = Rig()
    r = rig.join("m1")
    assert (r.error, r.member_epoch, r.heartbeat_interval_ms) == (Errors.NONE, 1, 5000)
    r = rig.hb("m1", 7)
    assert r.error is Errors.FENCED_MEMBER_EPOCH
    assert r.error_message.startswith("The consumer group member has a greater member epoch (7)")
    assert rig.hb("nobody", 1).error is Errors.UNKNOWN_MEMBER_ID
    assert rig.send(ConsumerGroupHeartbeatRequest("", "m", 1)).error is Errors.INVALID_GROUP_ID


def test_offset_commit_and_fetch_with_member_epochs() -> None:
    # ConsumerGroup.validateOffsetCommit / validateOffsetFetch
    rig = Rig()
    rig.join("m1")
    assert rig.commit("m1", 1).all_ok()
    stale = rig.commit("m1", 0)
    assert stale.error is Errors.STALE_MEMBER_EPOCH
    assert rig.commit("ghost", 1).error is Errors.UNKNOWN_MEMBER_ID
    assert rig.commit("m1", 1, version=8).error is Errors.UNSUPPORTED_VERSION
    assert rig.commit("", -1).error is Errors.UNKNOWN_MEMBER_ID  # the group is not empty
    ok = rig.fetch("m1", 1)
    assert ok.offsets[("foo", 0)].offset == 5 and ok.offsets[("foo", 0)].error is Errors.NONE
    assert rig.fetch("m1", 2).offsets[("foo", 0)].error is Errors.STALE_MEMBER_EPOCH
    assert rig.fetch(None, -1).offsets[("foo", 0)].offset == 5  # admin fetch
    # no simple classic group appears beside the consumer group
    assert "g" not in rig.cluster.shard_for("g").groups.groups


def test_coordinator_move_rebuilds_the_consumer_group() -> None:
    # GroupMetadataManager.replay (types 3-8) and onLoaded: the new coordinator rebuilds epochs,
    # members, targets and partition epochs from the log, and re-arms the session timers
    rig = Rig()
    rig.join("m1")
    rig.join("m2")
    rig.hb("m1", 1, {FOO: range(6), BAR: range(3)})  # m1 revoking at epoch 1
    before = rig.group().describe()
    old = rig.cluster.coordinator_for("g")
    rig.cluster.move_coordinator("g")
    rig.cluster.run_for(100)
    assert rig.cluster.coordinator_for("g") != old
    group = rig.group()
    assert group.describe() == before
    assert group.members.get("m1").state is MemberState.UNREVOKED_PARTITIONS
    assert group.current_partition_epoch(FOO, 4) == 1
    assert any("Loaded consumer group g with 2 members." in x
               for x in rig.cluster.log_lines("INFO"))
    # the members carry on with the new coordinator where they were
    r = rig.hb("m1", 1, {FOO: range(3), BAR: range(2)})
    assert (r.error, r.member_epoch) == (Errors.NONE, 2)
    r = rig.hb("m2", 2, {})
    assert r.assignment is not None and {tp.topic_id for tp in r.assignment.topic_partitions} \
        == {FOO, BAR}
    assert rig.group().state.value == "Stable"


def test_session_expiry_on_the_cluster_clock() -> None:
    # group.consumer.session.timeout.ms (45 s) as a coordinator timer: a silent member is fenced
    rig = Rig(brokers=1)
    rig.join("m1")
    rig.cluster.run_for(44_000)
    assert rig.group().has_member("m1")
    rig.cluster.run_for(2_000)
    assert not rig.group().has_member("m1")
    assert rig.group().state.value == "Empty"


def test_describe_reads_the_committed_consumer_group() -> None:
    # a read at the committed offset (GroupCoordinatorService.consumerGroupDescribe's way):
    # the broker's describe sees the consumer group once its records are committed
    rig = Rig()
    rig.join("m1")
    f = rig.svc.describe_group("g")
    rig.cluster.run_until(f.done, limit_ms=1000)
    described = f.result()
    assert (described["state"], described["group_epoch"]) == ("Stable", 1)
    assert [m["member_id"] for m in described["members"]] == ["m1"]
