"""Transactional offset commits (Kafka's `OffsetMetadataManager.commitTransactionalOffset`,
`replay` with a producer id, `replayEndTransactionMarker`; `CoordinatorRuntime
.scheduleTransactionalWriteOperation` and `scheduleTransactionCompletion`;
`GroupCoordinatorService.commitTransactionalOffsets` and `completeTransaction`)."""

from __future__ import annotations

import pytest

from coordinator_kit.cluster import Cluster
from coordinator_kit.errors import Errors
from coordinator_kit.group import records as rec
from coordinator_kit.group.api import (DeleteGroupsRequest, JoinGroupRequest, LeaveGroupRequest,
                                       MemberIdentity, OffsetCommitRequest, OffsetDeleteRequest,
                                       OffsetFetchRequest, PartitionData, RequestContext,
                                       SyncGroupRequest, TxnOffsetCommitRequest)
from coordinator_kit.group.classic import Protocol
from coordinator_kit.group.protocol import ConsumerProtocolSubscription
from coordinator_kit.runtime.markers import (TransactionResult, end_transaction_marker,
                                             read_end_transaction_marker)
from coordinator_kit.topic import TopicPartition

CTX = RequestContext("producer")
SUB = ConsumerProtocolSubscription(("orders",)).encode()
PID, EPOCH = 4000, 3


class Rig:
    """A cluster whose groups all live in __consumer_offsets-0, requests sent to its leader."""

    def __init__(self, brokers: int = 3, **config) -> None:
        self.cluster = Cluster(brokers=brokers, offsets_partitions=1, group_config=config or None)
        self.cluster.run_for(10)
        self.tp = TopicPartition.offsets(0)

    @property
    def svc(self):
        return self.cluster.brokers[self.cluster.coordinator_for("g")].service

    def run(self, ms: int = 50) -> None:
        self.cluster.run_for(ms)

    def txn_commit(self, offsets, group="g", pid=PID, epoch=EPOCH, gen=-1, member="",
                   instance=None):
        f = self.svc.commit_transactional_offsets(CTX, TxnOffsetCommitRequest(
            "txn-1", group, pid, epoch, {tp: PartitionData(o) for tp, o in offsets.items()},
            gen, member, instance))
        self.run()
        return f.result()

    def commit(self, offsets, group="g", gen=-1, member=""):
        f = self.svc.commit_offsets(CTX, OffsetCommitRequest(
            group, gen, member, {tp: PartitionData(o) for tp, o in offsets.items()}))
        self.run()
        return f.result()

    def end(self, result, pid=PID, epoch=EPOCH, coordinator_epoch=0):
        f = self.svc.complete_transaction(self.tp, pid, epoch, coordinator_epoch, result)
        self.run()
        return f.result()

    def fetch(self, partitions=(("t", 0), ("t", 1)), group="g", require_stable=False):
        f = self.svc.fetch_offsets(CTX, OffsetFetchRequest(group, partitions, require_stable))
        self.run()
        return {tp: (p.offset, p.error) for tp, p in f.result().offsets.items()}

    def shard(self):
        return self.cluster.shard_for("g")

    def batches(self, start: int = 0):
        p = self.cluster.partitions[self.tp]
        return p.read(p.leader_id, start)

    def stable_group(self):
        join = JoinGroupRequest("g", 45000, 300000, "", "consumer", (Protocol("range", SUB),))
        first = self.svc.join_group(RequestContext("c"), join)
        self.run(5)
        member = first.result().member_id
        second = self.svc.join_group(RequestContext("c"), JoinGroupRequest(
            "g", 45000, 300000, member, "consumer", (Protocol("range", SUB),)))
        self.cluster.run_until(second.done, limit_ms=10_000)
        gen = second.result().generation_id
        self.svc.sync_group(RequestContext("c"), SyncGroupRequest(
            "g", gen, member, None, "consumer", "range", {member: b""}))
        self.run()
        return member, gen


NOTHING = (-1, Errors.NONE)


def test_end_transaction_marker_bytes_are_kafkas_control_record():
    """EndTransactionMarker: key = version 0 + type (ABORT 0, COMMIT 1), value = version 0 +
    coordinator epoch."""
    assert end_transaction_marker("COMMIT", 5) == (b"\x00\x00\x00\x01",
                                                   b"\x00\x00\x00\x00\x00\x05")
    assert end_transaction_marker(TransactionResult.ABORT, 0) == (b"\x00\x00\x00\x00",
                                                                  b"\x00\x00\x00\x00\x00\x00")
    assert read_end_transaction_marker(*end_transaction_marker("ABORT", 7)) == (
        TransactionResult.ABORT, 7)
    with pytest.raises(ValueError, match="COMMIT or ABORT, got 'DONE'"):
        end_transaction_marker("DONE", 0)


@pytest.mark.parametrize("linger_ms", [10, 0])
def test_txn_offsets_stay_invisible_until_the_commit_marker(linger_ms):
    """OffsetMetadataManagerTest.testTransactionalReplay and testReplayTransactionEndMarker
    WithCommit, GroupCoordinatorServiceTest.testCommitTransactionalOffsets and
    testCompleteTransaction: the records go in a batch carrying the producer id and epoch;
    replayed as pending, a fetch does not see them; the COMMIT marker (a control batch of its
    own) moves them into the committed offsets. At either linger (at 0 a plain write goes
    straight to the log in a batch of its own)."""
    rig = Rig(**{"group.coordinator.append.linger.ms": linger_ms})
    assert rig.commit({("t", 0): 5}).all_ok()
    end = rig.cluster.partitions[rig.tp].log_end_offset
    response = rig.txn_commit({("t", 0): 9, ("t", 1): 3})
    assert response.all_ok() and response.errors == {("t", 0): Errors.NONE,
                                                     ("t", 1): Errors.NONE}
    [batch] = rig.batches(end)
    assert (batch.producer_id, batch.producer_epoch, batch.control, len(batch.records)) == (
        PID, EPOCH, None, 2)
    serde = rec.GroupCoordinatorRecordSerde()
    first = serde.deserialize(*batch.records[0])
    assert first.key == {"group": "g", "topic": "t", "partition": 0}
    assert first.value["offset"] == 9 and first.value_version == 3  # no expire timestamp
    assert rig.fetch() == {("t", 0): (5, Errors.NONE), ("t", 1): NOTHING}
    assert rig.shard().offsets.pending_offsets("g") == {PID: {("t", 0): 9, ("t", 1): 3}}

    assert rig.end("COMMIT", coordinator_epoch=2) is Errors.NONE
    [marker] = rig.batches(batch.next_offset)
    assert (marker.producer_id, marker.producer_epoch, marker.control) == (PID, EPOCH, "COMMIT")
    assert read_end_transaction_marker(*marker.records[0]) == (TransactionResult.COMMIT, 2)
    assert rig.fetch() == {("t", 0): (9, Errors.NONE), ("t", 1): (3, Errors.NONE)}
    assert rig.shard().offsets.pending_offsets("g") == {}
    assert "g" not in rig.shard().offsets.open_transactions_by_group


def test_abort_marker_drops_the_pending_offsets():
    """GroupCoordinatorShardTest.testReplayEndTransactionMarker(ABORT)."""
    rig = Rig()
    rig.commit({("t", 0): 5})
    rig.txn_commit({("t", 0): 9, ("t", 1): 3})
    assert rig.end(TransactionResult.ABORT) is Errors.NONE
    assert rig.batches()[-1].control == "ABORT"
    assert rig.fetch() == {("t", 0): (5, Errors.NONE), ("t", 1): NOTHING}
    assert rig.fetch(require_stable=True) == {("t", 0): (5, Errors.NONE), ("t", 1): NOTHING}
    assert rig.shard().offsets.pending_offsets("g") == {}
    # a marker for a producer with nothing pending changes nothing
    assert rig.end("COMMIT", pid=PID + 1) is Errors.NONE
    assert rig.fetch() == {("t", 0): (5, Errors.NONE), ("t", 1): NOTHING}


def test_require_stable_fetch_of_a_partition_with_pending_offsets_is_unstable():
    """OffsetMetadataManagerTest.testFetchOffsetsWithPendingTransactionalOffsets and
    testFetchAllOffsetsWithPendingTransactionalOffsets: with require_stable, a partition with a
    pending transactional offset answers UNSTABLE_OFFSET_COMMIT (offset -1), the others their
    committed offset; without it, the committed offsets as they are."""
    rig = Rig()
    rig.commit({("t", 0): 5, ("t", 2): 8})
    rig.txn_commit({("t", 0): 9, ("t", 1): 3})
    partitions = (("t", 0), ("t", 1), ("t", 2))
    assert rig.fetch(partitions, require_stable=True) == {
        ("t", 0): (-1, Errors.UNSTABLE_OFFSET_COMMIT),
        ("t", 1): (-1, Errors.UNSTABLE_OFFSET_COMMIT), ("t", 2): (8, Errors.NONE)}
    assert rig.fetch(partitions) == {("t", 0): (5, Errors.NONE), ("t", 1): NOTHING,
                                     ("t", 2): (8, Errors.NONE)}
    # every committed offset (partitions None): the pending partition without a committed
    # offset is not listed
    assert rig.fetch(None, require_stable=True) == {
        ("t", 0): (-1, Errors.UNSTABLE_OFFSET_COMMIT), ("t", 2): (8, Errors.NONE)}
    rig.end("COMMIT")
    assert rig.fetch(partitions, require_stable=True) == {
        ("t", 0): (9, Errors.NONE), ("t", 1): (3, Errors.NONE), ("t", 2): (8, Errors.NONE)}


def test_pending_offsets_survive_a_coordinator_move_and_commit_there():
    """CoordinatorLoaderImpl replays a transactional batch with its producer id (pending again)
    and a control batch as the marker: the next coordinator keeps the offsets pending, then
    commits them when the marker arrives; an offset committed before the move stays."""
    rig = Rig()
    rig.txn_commit({("t", 0): 9})
    rig.txn_commit({("t", 1): 4}, pid=PID + 1)
    rig.end("ABORT", pid=PID + 1)
    rig.cluster.move_coordinator("g", to_broker=1)
    rig.run()
    assert rig.cluster.coordinator_for("g") == 1
    assert rig.shard().offsets.pending_offsets("g") == {PID: {("t", 0): 9}}
    assert rig.fetch(require_stable=True) == {("t", 0): (-1, Errors.UNSTABLE_OFFSET_COMMIT),
                                              ("t", 1): NOTHING}
    assert rig.end("COMMIT") is Errors.NONE
    assert rig.fetch() == {("t", 0): (9, Errors.NONE), ("t", 1): NOTHING}
    rig.cluster.move_coordinator("g", to_broker=2)
    rig.run()
    assert rig.fetch() == {("t", 0): (9, Errors.NONE), ("t", 1): NOTHING}


def test_commit_marker_keeps_a_later_plain_commit():
    """OffsetMetadataManagerTest.testReplayTransactionEndMarkerKeepsTheMostRecentCommittedOffset:
    a plain commit written after the transactional one wins over it when the transaction
    commits (the record offsets decide)."""
    rig = Rig()
    rig.txn_commit({("t", 0): 100})
    rig.commit({("t", 0): 101})
    rig.end("COMMIT")
    assert rig.fetch((("t", 0),)) == {("t", 0): (101, Errors.NONE)}


def test_txn_commit_validation():
    """OffsetMetadataManagerTest.testGenericGroupTransactionalOffsetCommit and its WithUnknown
    GroupId / WithUnknownMemberId / WithIllegalGenerationId cases, `ClassicGroup
    .validateOffsetCommit` with isTransactional, GroupCoordinatorServiceTest
    .testCommitTransactionalOffsetsWithInvalidGroupId / WhenNotStarted."""
    rig = Rig()
    # an unknown group: ILLEGAL_GENERATION unless generation -1 (a simple group is created)
    assert rig.txn_commit({("t", 0): 1}, group="h", gen=10, member="m").errors == {
        ("t", 0): Errors.ILLEGAL_GENERATION}
    assert rig.cluster.shard_for("h").groups.group("h") is None
    assert rig.txn_commit({("t", 0): 1}, group="h").all_ok()
    assert rig.cluster.shard_for("h").groups.group("h").protocol_type is None
    member, gen = rig.stable_group()
    assert rig.txn_commit({("t", 0): 1}, gen=gen, member=member).all_ok()
    assert rig.txn_commit({("t", 0): 1}, gen=gen + 5, member=member).error \
        is Errors.ILLEGAL_GENERATION
    assert rig.txn_commit({("t", 0): 1}, gen=gen, member="stranger").error \
        is Errors.UNKNOWN_MEMBER_ID
    assert rig.txn_commit({("t", 0): 1}, gen=gen, member=member, instance="i-1").error \
        is Errors.UNKNOWN_MEMBER_ID
    # the old producer path: no member id, generation -1, accepted whatever the group's state
    assert rig.txn_commit({("t", 0): 2}).all_ok()
    big = rig.svc.commit_transactional_offsets(CTX, TxnOffsetCommitRequest(
        "txn-1", "g", PID, EPOCH, {("t", 0): PartitionData(3, metadata="x" * 5000),
                                   ("t", 1): PartitionData(4)}))
    rig.run()
    assert big.result().errors == {("t", 0): Errors.OFFSET_METADATA_TOO_LARGE,
                                   ("t", 1): Errors.NONE}
    assert rig.txn_commit({("t", 0): 1}, group="").errors == {("t", 0): Errors.INVALID_GROUP_ID}
    rig.svc.active = False
    assert rig.txn_commit({("t", 0): 1}).error is Errors.COORDINATOR_NOT_AVAILABLE
    assert rig.end("COMMIT") is Errors.NOT_LEADER_OR_FOLLOWER


def test_txn_commit_from_a_fenced_static_member_is_fenced_instance_id():
    """ClassicGroup.validateMember through validateOffsetCommit(isTransactional=true)."""
    rig = Rig()
    join = JoinGroupRequest("g", 45000, 300000, "", "consumer", (Protocol("range", SUB),), "i-1")
    f = rig.svc.join_group(RequestContext("c"), join)
    rig.cluster.run_until(f.done, limit_ms=10_000)
    member, gen = f.result().member_id, f.result().generation_id
    rig.svc.sync_group(RequestContext("c"), SyncGroupRequest(
        "g", gen, member, "i-1", "consumer", "range", {member: b""}))
    rig.run()
    assert rig.txn_commit({("t", 0): 1}, gen=gen, member=member, instance="i-1").all_ok()
    assert rig.txn_commit({("t", 0): 1}, gen=gen, member="old-incarnation",
                          instance="i-1").error is Errors.FENCED_INSTANCE_ID


def test_offset_expiry_skips_partitions_and_groups_with_pending_offsets():
    """OffsetMetadataManagerTest.testCleanupExpiredOffsetsWithPendingTransactionalOffsets and
    `cleanupExpiredOffsets`: an expired offset with a pending transactional offset for its
    partition is kept, others expire; the group is not deleted while a transaction is open;
    once the marker is in, the clean-up deletes what expired and then the group."""
    rig = Rig(**{"offsets.retention.minutes": 1,
                 "offsets.retention.check.interval.ms": 10_000})
    rig.commit({("t", 0): 5, ("t", 1): 6})
    rig.txn_commit({("t", 0): 9})
    rig.run(75_000)
    assert rig.cluster.committed_offsets("g") == {("t", 0): 5}  # t-1 expired, t-0 kept
    assert rig.shard().groups.group("g") is not None
    rig.end("ABORT")
    rig.run(75_000)  # t-0's commit is old: it expires at the next clean-up, then the group
    assert rig.cluster.committed_offsets("g") == {}
    assert rig.shard().groups.group("g") is None


def test_offset_delete_and_delete_groups_tombstone_pending_offsets():
    """OffsetMetadataManagerTest.testGenericGroupOffsetDeleteWithPendingTransactionalOffsets,
    testReplayWithTombstoneAndPendingTransactionalOffsets and
    testDeleteGroupAllOffsetsWithPendingTransactionalOffsets: a partition with only a pending
    offset gets a tombstone too, whose replay drops the pending offset (a later COMMIT marker
    brings nothing back); DeleteGroups writes one tombstone per partition, committed or
    pending."""
    rig = Rig()
    rig.commit({("t", 0): 5})
    rig.txn_commit({("t", 1): 7})
    end = rig.cluster.partitions[rig.tp].log_end_offset
    f = rig.svc.delete_offsets(CTX, OffsetDeleteRequest("g", (("t", 1),)))
    rig.run()
    assert f.result().errors == {("t", 1): Errors.NONE}
    [batch] = rig.batches(end)
    assert len(batch.records) == 1 and batch.records[0][1] is None
    assert rig.shard().offsets.pending_offsets("g") == {}
    rig.end("COMMIT")
    assert rig.fetch() == {("t", 0): (5, Errors.NONE), ("t", 1): NOTHING}

    rig.txn_commit({("t", 0): 8, ("t", 2): 9}, pid=PID + 1)
    end = rig.cluster.partitions[rig.tp].log_end_offset
    d = rig.svc.delete_groups(CTX, DeleteGroupsRequest(("g",)))
    rig.run()
    assert d.result().errors() == {"g": Errors.NONE}
    serde = rec.GroupCoordinatorRecordSerde()
    assert [serde.deserialize(k, v) for b in rig.batches(end) for k, v in b.records] == [
        rec.new_offset_commit_tombstone("g", "t", 0), rec.new_offset_commit_tombstone("g", "t", 2),
        rec.new_group_metadata_tombstone("g")]
    assert rig.shard().offsets.pending_offsets("g") == {}


def test_transactional_write_flushes_the_open_batch_first_and_lingers_not():
    """CoordinatorRuntimeTest.testScheduleTransactionalWriteOperationWithBatching: at a linger
    of 10 ms a plain write's batch is still open when the transactional write comes; it goes
    to the log first, then the transactional records in a batch of their own, at once."""
    rig = Rig()
    svc = rig.svc
    end = rig.cluster.partitions[rig.tp].log_end_offset
    plain = svc.commit_offsets(CTX, OffsetCommitRequest("g", -1, "", {("t", 0): PartitionData(1)}))
    txn = svc.commit_transactional_offsets(CTX, TxnOffsetCommitRequest(
        "txn-1", "g", PID, EPOCH, {("t", 1): PartitionData(2)}))
    rig.run(3)  # less than the linger
    batches = rig.batches(end)
    assert [(b.producer_id, len(b.records)) for b in batches] == [(-1, 1), (PID, 1)]
    assert batches[0].append_time_ms == batches[1].append_time_ms
    rig.run()
    assert plain.result().all_ok() and txn.result().all_ok()


def test_a_failed_marker_append_reverts_the_marker():
    """CoordinatorRuntimeTest.testScheduleTransactionCompletionWhenWriteFails: the marker is
    replayed before the append; a failed append reverts the shard to where it was (the
    offsets stay pending) and fails the completion with the append's error (KafkaApis passes it
    on: only the coordinator-not-ready errors become NOT_LEADER_OR_FOLLOWER); the next attempt
    commits."""
    rig = Rig()
    rig.txn_commit({("t", 0): 9})
    rig.cluster.fail_next_append(0)
    assert rig.end("COMMIT") is Errors.KAFKA_STORAGE_ERROR
    assert rig.shard().offsets.pending_offsets("g") == {PID: {("t", 0): 9}}
    assert rig.batches()[-1].control is None
    assert rig.end("COMMIT") is Errors.NONE
    assert rig.fetch() == {("t", 0): (9, Errors.NONE), ("t", 1): NOTHING}


def test_complete_transaction_refuses_another_topic_and_a_non_leader_is_not_ready():
    """GroupCoordinatorServiceTest.testCompleteTransactionWithUnexpectedPartition; a broker
    that does not lead the partition fails the marker NOT_COORDINATOR, which KafkaApis answers
    NOT_LEADER_OR_FOLLOWER (the transaction coordinator retries it)."""
    rig = Rig()
    with pytest.raises(ValueError, match="Completing a transaction for orders-0"):
        rig.svc.complete_transaction(TopicPartition("orders", 0), PID, EPOCH, 0, "COMMIT")
    other = rig.cluster.brokers[1].service
    f = other.complete_transaction(rig.tp, PID, EPOCH, 0, "COMMIT")
    rig.run()
    assert f.result() is Errors.NOT_LEADER_OR_FOLLOWER
    with pytest.raises(ValueError, match="producer id >= 0"):
        rig.cluster.brokers[0].runtime.schedule_transactional_write_operation(
            "w", rig.tp, "txn-1", -1, 0, lambda shard: None)


def test_leaving_members_do_not_touch_pending_offsets():
    """The group's membership and its transactions are separate: the last member leaving makes
    the group Empty, its pending offsets stay pending and commit later."""
    rig = Rig()
    member, gen = rig.stable_group()
    assert rig.txn_commit({("orders", 0): 3}, gen=gen, member=member).all_ok()
    rig.svc.leave_group(RequestContext("c"), LeaveGroupRequest("g", (MemberIdentity(member),)))
    rig.run()
    assert rig.shard().offsets.pending_offsets("g") == {PID: {("orders", 0): 3}}
    rig.end("COMMIT")
    assert rig.fetch((("orders", 0),)) == {("orders", 0): (3, Errors.NONE)}
