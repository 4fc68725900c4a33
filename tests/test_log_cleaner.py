"""Segments and compaction of the `__consumer_offsets` logs, as Kafka's log cleaner does them.

Kafka (trunk at the commit docs/kafka-classes.md names): `UnifiedLog.maybeRoll` /
`LogSegment.shouldRoll` roll a new active segment at the base offset of the batch that would
take the active one past `segment.bytes`; each broker's `LogCleaner` thread grabs the filthiest
log whose cleanable bytes / (clean + cleanable) exceed `log.cleaner.min.cleanable.ratio`
(`LogCleanerManager.grabFilthiestCompactedLog`), never cleaning the active segment nor past the
last stable offset (`cleanableOffsets`); `Cleaner.doClean` maps each key of the dirty section to
its last offset (`buildOffsetMap`) and recopies the log up to there keeping only those records
(`shouldRetainRecord`), stamping a batch whose tombstone it keeps with a delete horizon, after
which a later cleaning drops the tombstone (`MemoryRecords.filterTo`, KIP-534). Offsets never
change; a load replays what is left and builds the same state.
"""

from __future__ import annotations

import gc
import weakref

import pytest

from coordinator_kit.clock import Scheduler
from coordinator_kit.cluster import OFFSETS_SEGMENT_BYTES, Cluster
from coordinator_kit.group.config import GroupCoordinatorConfig
from coordinator_kit.group.records import GroupCoordinatorRecordSerde
from coordinator_kit.group.shard import group_shard_supplier
from coordinator_kit.logs.parse import ParseCounts, parse_lines
from coordinator_kit.runtime.cleaner import CleanerConfig, LogCleaner, _retained, log_to_clean
from coordinator_kit.runtime.partition import (RECORD_BATCH_OVERHEAD, LogBatch, LogSegment,
                                               ReplicatedPartition, record_size_in_bytes)
from coordinator_kit.runtime.snapshottable import SnapshottableCoordinator
from coordinator_kit.timeline import SnapshotRegistry, TimelineHashMap
from coordinator_kit.topic import TopicPartition
from coordinator_kit.trace import Trace

TP = TopicPartition.offsets(0)
BATCH = RECORD_BATCH_OVERHEAD + record_size_in_bytes(0, b"k0", b"v")  # 71: a 2-byte key, 1-byte
FOUR = 4 * BATCH + 20  # segment.bytes holding four batches of 70 to 71 bytes, not five


def _partition(replicas: tuple[int, ...] = (0,), segment_bytes: int = FOUR,
               **cleaner: object) -> tuple[Scheduler, Trace, ReplicatedPartition,
                                           dict[int, LogCleaner]]:
    scheduler = Scheduler(threadsafe=False)
    trace = Trace(scheduler, level="DEBUG")
    p = ReplicatedPartition(TP, scheduler, trace, replicas, segment_bytes=segment_bytes)
    cleaners = {b: LogCleaner(b, scheduler, trace, CleanerConfig(**cleaner))  # type: ignore
                for b in replicas}
    for c in cleaners.values():
        c.add_log(p)
    return scheduler, trace, p, cleaners


def _put(p: ReplicatedPartition, key: str, value: str | None) -> int:
    """One batch of one record; returns its offset."""
    end = p.append(p.leader_id, [(key.encode(), None if value is None else value.encode())])
    return end - 1


def _records(p: ReplicatedPartition, broker: int | None = None
             ) -> list[tuple[int, str, str | None]]:
    b = p.leader_id if broker is None else broker
    return [(o, k.decode(), None if v is None else v.decode())
            for batch in p.read(b) for o, k, v in batch.offset_records()]


def _bases(p: ReplicatedPartition, broker: int | None = None) -> list[int]:
    b = p.leader_id if broker is None else broker
    return [s.base_offset for s in p.replicas[b].batches.segments]


# -- segments ---------------------------------------------------------------------------------


def test_an_append_that_would_pass_segment_bytes_rolls_a_segment_at_its_base_offset():
    """LogSegment.shouldRoll: size > segment.bytes - the batch's size; LocalLog.roll logs it."""
    scheduler, trace, p, _ = _partition()
    for i in range(9):
        _put(p, f"k{i}", "v")
    assert _bases(p) == [0, 4, 8]
    assert [s.size_in_bytes for s in p.leader.batches.segments] == [4 * BATCH, 4 * BATCH, BATCH]
    assert [e.line() for e in trace.of_kind("segment_rolled")] == [
        "[2025-03-03 09:00:00,000] INFO [LocalLog partition=__consumer_offsets-0, "
        "dir=/tmp/kafka-logs] Rolled new log segment at offset 4 in 0 ms. "
        "(kafka.log.LocalLog)",
        "[2025-03-03 09:00:00,000] INFO [LocalLog partition=__consumer_offsets-0, "
        "dir=/tmp/kafka-logs] Rolled new log segment at offset 8 in 0 ms. "
        "(kafka.log.LocalLog)"]


def test_a_batch_larger_than_a_segment_goes_into_the_empty_active_segment():
    scheduler, trace, p, _ = _partition(segment_bytes=BATCH - 1)
    _put(p, "a", "1")
    _put(p, "b", "1")
    assert _bases(p) == [0, 1]  # no empty segment is rolled before the first batch


def test_followers_roll_at_the_same_offsets_as_the_leader():
    scheduler, trace, p, _ = _partition(replicas=(0, 1, 2))
    for i in range(10):
        _put(p, f"k{i}", "v")
    scheduler.run_for(100)
    assert _bases(p, 0) == _bases(p, 1) == _bases(p, 2) == [0, 4, 8]
    assert [e.source for e in trace.of_kind("segment_rolled")] == [
        "broker-0", "broker-0", "broker-1", "broker-1", "broker-2", "broker-2"]


def test_truncation_drops_the_segments_after_the_offset_and_moves_the_checkpoint_back():
    """UnifiedLog.truncateTo; LogCleanerManager.maybeTruncateCheckpoint."""
    scheduler, trace, p, _ = _partition()
    for i in range(11):
        _put(p, f"k{i}", "v")
    replica = p.leader
    replica.batches.first_dirty_offset = 8
    replica.truncate_to(6)
    log = replica.batches
    assert [(s.base_offset, s.size_in_bytes) for s in log.segments] == [(0, 4 * BATCH),
                                                                        (4, 2 * BATCH)]
    assert log.active_segment is log.segments[-1]
    assert (replica.log_end_offset, log.first_dirty_offset, len(log)) == (6, 6, 6)


# -- cleaning ---------------------------------------------------------------------------------


def test_the_cleaner_keeps_the_latest_record_of_each_key_at_its_own_offset():
    """Cleaner.buildOffsetMap + shouldRetainRecord: a record stays only if no later record of
    its key is in the dirty section; kept records keep their offsets; the active segment and the
    log end offset are untouched."""
    scheduler, trace, p, cleaners = _partition()
    scheduler.run_for(1000)
    for key, value in ["a1", "b1", "a2", "c1", "a3", "b2", "d1", "c2", "a4", "b3"]:
        _put(p, key, value)
    before = _records(p)
    assert _bases(p) == [0, 4, 8]
    scheduler.run_for(13_999)  # 14,999 ms: the cleaner thread sleeps 15 s at a time
    assert cleaners[0].cleanings == 0 and _records(p) == before
    scheduler.run_for(1)
    assert cleaners[0].cleanings == 1
    after = _records(p)
    assert after == [(4, "a", "3"), (5, "b", "2"), (6, "d", "1"), (7, "c", "2"), (8, "a", "4"),
                     (9, "b", "3")]
    assert set(after) <= set(before)  # offsets never change
    assert (p.log_end_offset, p.high_watermark, p.leader.batches.first_dirty_offset) == (10, 10, 8)
    # the active segment (from 8) is not cleaned: a4 and b3 are in it, as appended
    assert p.leader.batches.segments[-1] == LogSegment(8, 2 * (BATCH - 1), 1000)
    # cleaned batches keep their base offset and their records' offsets
    assert [b.record_offset(0) for b in p.read(0)] == [4, 5, 6, 7, 8, 9]
    lines = [e.message for e in trace.events if e.template_id and e.template_id[:3] == "LC-"]
    assert lines[:4] == ["Cleaner 0: Beginning cleaning of log __consumer_offsets-0",
                         "Cleaner 0: Building offset map for __consumer_offsets-0...",
                         "Cleaner 0: Building offset map for log __consumer_offsets-0 for 2 "
                         "segments in offset range [0, 8).",
                         "Cleaner 0: Offset map for log __consumer_offsets-0 complete."]
    stats = trace.of_kind("log_cleaned")[0].fields
    assert (stats["messages_read"], stats["messages_written"]) == (8, 4)


def test_a_recopied_batch_keeps_its_base_offset_and_says_where_it_ended():
    """A batch with several records loses the superseded ones: same base offset, the kept
    records at their offsets, its last offset its last kept record's (MemoryRecordsBuilder)."""
    scheduler, trace, p, cleaners = _partition()
    p.append(0, [(b"a", b"1"), (b"b", b"1"), (b"c", b"1")])  # offsets 0-2
    p.append(0, [(b"b", b"2"), (b"x", b"1")])  # 3-4
    p.append(0, [(b"c", b"2")] * 1 + [(b"y", b"1")] * 1)  # 5-6: rolls (size) at 5?
    while p.leader.batches.active_segment.base_offset == 0:
        _put(p, "z", "z")
    end = p.leader.batches.active_segment.base_offset
    scheduler.run_for(15_000)
    first = p.read(0)[0]
    assert (first.base_offset, first.records, first.offset_deltas) == (0, ((b"a", b"1"),), (0,))
    assert (first.next_offset, first.last_offset) == (1, 0)
    assert first.size_in_bytes == LogBatch.measure([(b"a", b"1")]) < end * BATCH
    assert [o for b in p.read(0) for o, _, _ in b.offset_records()] == sorted(
        o for b in p.read(0) for o, _, _ in b.offset_records())


def test_a_log_below_the_min_cleanable_ratio_waits_for_more_dirty_bytes():
    """LogToClean.cleanableRatio = cleanable / (clean + cleanable), cleaned only when above
    log.cleaner.min.cleanable.ratio (0.5)."""
    scheduler, trace, p, cleaners = _partition()
    for i in range(8):  # two segments of distinct keys
        _put(p, f"k{i}", "v")
    _put(p, "f", "0")  # rolls at 8
    scheduler.run_for(15_000)
    assert cleaners[0].cleanings == 1 and p.leader.batches.first_dirty_offset == 8
    for i in range(4):
        _put(p, "f", str(i + 1))  # one more segment: 4 of 12 batches are dirty
    ltc = log_to_clean(p, p.leader)
    assert (ltc.first_dirty_offset, ltc.first_uncleanable_offset) == (8, 12)
    sizes = {s.base_offset: s.size_in_bytes for s in p.leader.batches.segments}
    assert (ltc.clean_bytes, ltc.cleanable_bytes) == (sizes[0] + sizes[4], sizes[8])
    assert ltc.cleanable_ratio == pytest.approx(sizes[8] / (sizes[0] + sizes[4] + sizes[8]))
    assert ltc.cleanable_ratio < 0.5
    scheduler.run_for(15_000)
    assert cleaners[0].cleanings == 1 and cleaners[0].grab_filthiest_log() is None
    for i in range(8):
        _put(p, "f", str(i + 5))  # two more: 12 / 20 are dirty
    scheduler.run_for(15_000)
    assert cleaners[0].cleanings == 2
    # the distinct keys of the clean section stay; of the f records, the last one cleaned and
    # the one in the active segment
    assert _records(p) == [(i, f"k{i}", "v") for i in range(8)] + [(19, "f", "11"),
                                                                   (20, "f", "12")]


def test_the_cleaner_never_cleans_past_the_high_watermark():
    """cleanableOffsets: not past the last stable offset, so not past the high watermark: a
    rolled segment waits while its records are uncommitted, and the thread looks again every
    log.cleaner.backoff.ms."""
    scheduler, trace, p, cleaners = _partition(replicas=(0, 1, 2))
    p.stall_replica(1)
    p.stall_replica(2)
    scheduler.run_for(1000)
    for i in range(10):
        _put(p, "k", str(i))
    assert (p.high_watermark, _bases(p)) == (0, [0, 4, 8])
    scheduler.run_for(14_000)  # 15 s
    assert cleaners[0].cleanings == 0 and p.leader.batches.first_dirty_offset == 0
    assert any(h.name == "kafka-log-cleaner-thread-0 broker-0" and h.when == 30_000
               for h in scheduler.pending())
    p.resume_replica(1)
    p.resume_replica(2)
    scheduler.run_for(100)
    assert p.high_watermark == 10
    scheduler.run_for(14_899)  # 29,999 ms
    assert cleaners[0].cleanings == 0
    scheduler.run_for(1)
    assert cleaners[0].cleanings == 1
    assert _records(p) == [(7, "k", "7"), (8, "k", "8"), (9, "k", "9")]
    # a follower cleans on its own high watermark, which it learns from the leader's answers
    # to its fetches: still 0 (nothing was appended since the leader's moved)
    assert (p.replicas[1].high_watermark, cleaners[1].cleanings) == (0, 0)
    _put(p, "k", "10")
    scheduler.run_for(15_000)  # 45 s
    assert p.replicas[1].high_watermark == 10
    assert cleaners[1].cleanings == cleaners[2].cleanings == 1
    assert _records(p, 1) == _records(p, 2) == _records(p, 0)
    assert not any("log-cleaner" in h.name for h in scheduler.pending())  # nothing left to do


def test_a_tombstone_survives_cleanings_until_its_delete_horizon():
    """The first cleaning that keeps a tombstone stamps its batch's delete horizon (now +
    log.cleaner.delete.retention.ms); a cleaning at or after it drops the tombstone."""
    scheduler, trace, p, cleaners = _partition(delete_retention_ms=60_000)
    scheduler.run_for(1000)
    for key, value in [("a", "1"), ("f", "1"), ("f", "2"), ("f", "3"), ("a", None), ("f", "4"),
                       ("f", "5"), ("f", "6"), ("f", "7")]:
        _put(p, key, value)
    scheduler.run_for(14_000)  # cleaning at 15 s
    assert _records(p) == [(4, "a", None), (7, "f", "6"), (8, "f", "7")]
    tombstone = p.read(0)[0]
    assert tombstone.delete_horizon_ms == 75_000
    # its records' timestamps are now deltas from the horizon (1,000 - 75,000 ms)
    assert tombstone.size_in_bytes == LogBatch.measure([(b"a", None)], timestamp_delta=-74_000) \
        > LogBatch.measure([(b"a", None)])

    def another_segment() -> None:
        for i in range(8):
            _put(p, "f", str(i))

    scheduler.run_for(5_000)
    another_segment()
    scheduler.run_for(10_000)  # cleaning at 30 s: before the horizon
    assert cleaners[0].cleanings == 2 and _records(p)[0] == (4, "a", None)
    scheduler.run_for(50_000)
    another_segment()
    scheduler.run_for(10_000)  # cleaning at 90 s: past it
    assert cleaners[0].cleanings == 3
    assert all(key != "a" for _, key, _ in _records(p))


def test_an_emptied_batch_goes_except_the_last_of_the_cleaned_section():
    """BatchRetention: DELETE_EMPTY, except RETAIN_EMPTY for the batch that ends the cleaning
    round, which keeps its last offset."""
    entry = (10, ((b"a", b"1"), (b"a", b"2")), 0, 0, -1, -1, None, 90)
    offset_map = {b"a": 30}
    assert _retained(entry, offset_map, 0, 0, end=20) is None
    empty = LogBatch(*_retained(entry, offset_map, 0, 0, end=12))
    assert (empty.base_offset, empty.records, empty.next_offset) == (10, (), 12)
    assert empty.size_in_bytes == RECORD_BATCH_OVERHEAD
    assert _retained(_retained(entry, offset_map, 0, 0, end=12), {}, 0, 0, end=40) is None


def test_a_stalled_follower_copies_the_leaders_cleaned_log():
    """Each replica is cleaned by its own broker; a follower fetching from the cleaned part of
    the leader's log gets the cleaned batches, at their offsets."""
    scheduler, trace, p, cleaners = _partition(replicas=(0, 1))
    p.stall_replica(1)
    for i in range(14):
        _put(p, "k" if i % 2 else "j", str(i))
    scheduler.run_for(45_000)  # out of the ISR at 45 s; the HWM moves, the leader cleans
    assert p.isr == [0] and cleaners[0].cleanings == 1 and cleaners[1].cleanings == 0
    p.resume_replica(1)
    scheduler.run_for(1_000)
    assert p.isr == [0, 1]
    assert _records(p, 1) == _records(p, 0)
    assert p.replicas[1].log_end_offset == p.log_end_offset == 14


# -- the group coordinator on a compacted log ---------------------------------------------------


def _replayed(cluster: Cluster, tp: TopicPartition, broker: int) -> tuple[object, ...]:
    """A fresh group coordinator shard fed the replica's log, as a load feeds it: its groups
    and offsets."""
    runtime = cluster.brokers[broker].runtime
    registry = SnapshotRegistry()
    timer = next(iter(cluster.brokers[cluster.partitions[tp].leader_id].runtime
                      ._contexts.values())).timer
    shard = (group_shard_supplier(cluster.config, 0, broker)().with_log_context(runtime.log)
             .with_snapshot_registry(registry).with_time(cluster.scheduler).with_timer(timer)
             .with_topic_partition(tp).build())
    coordinator = SnapshottableCoordinator(runtime.log, registry, shard, tp)
    serde = GroupCoordinatorRecordSerde()
    for batch in cluster.partitions[tp].read(broker):
        for offset, key, value in batch.offset_records():
            coordinator.replay(offset, -1, -1, serde.deserialize(key, value))
    groups = {g: (x.state.value, x.generation_id, x.leader_id, x.protocol_name,
                  sorted((m.member_id, m.assignment) for m in x.members.values()))
              for g, x in shard.groups.groups.items()}
    return groups, {g: dict(o.items()) for g, o in shard.offsets.offsets.items()}


def _busy_cluster(cleaner: bool) -> Cluster:
    cluster = Cluster(seed=3, trace_level="INFO",
                      group_config={"offsets.topic.segment.bytes": 4096},
                      cleaner_config={"log.cleaner.enable": cleaner})
    for i in range(4):
        cluster.add_consumer(f"c{i}")
    cluster.run_for(600_000)
    cluster.crash("c0")
    cluster.add_consumer("c4", group_id="group-2")
    cluster.run_for(600_000)
    return cluster


def test_a_compacted_log_replays_into_the_same_groups_and_offsets():
    """The same run with and without the cleaner: the cleaned log holds a subset of the full
    one's records at the same offsets, the latest of each key among them, and replaying either
    builds the same groups and offsets; the runs differ only by the cleaner's lines."""
    compacted, full = _busy_cluster(True), _busy_cluster(False)
    assert sum(b.log_cleaner.cleanings for b in compacted.brokers.values()) > 3
    cleaner_lines = {"log_cleaned"} | {e.kind for e in compacted.trace.events
                                       if (e.template_id or "").startswith("LC-")}
    assert [e.message for e in compacted.trace.events if e.kind not in cleaner_lines] == \
        [e.message for e in full.trace.events]
    for tp in compacted.partitions:
        for b in compacted.partitions[tp].replicas:
            kept, every = _records_raw(compacted, tp, b), _records_raw(full, tp, b)
            assert set(kept) <= set(every)
            latest = {key: (offset, value) for offset, key, value in every}
            for key, (offset, value) in latest.items():
                if value is not None:
                    assert (offset, key, value) in kept
            assert _replayed(compacted, tp, b) == _replayed(full, tp, b)
    tp = compacted.partition_of("group-1")
    assert len(_records_raw(compacted, tp, 0)) < len(_records_raw(full, tp, 0)) / 5


def _records_raw(cluster: Cluster, tp: TopicPartition, broker: int
                 ) -> list[tuple[int, bytes, bytes | None]]:
    return [r for batch in cluster.partitions[tp].read(broker) for r in batch.offset_records()]


def test_a_coordinator_loaded_from_a_compacted_log_has_the_group_and_offsets_it_had():
    """A coordinator move after compaction: the new coordinator replays what the cleaner left
    (fewer records than were appended) and serves the same group and committed offsets."""
    cluster = _busy_cluster(True)
    tp = cluster.partition_of("group-1")
    group, offsets = cluster.group(), cluster.committed_offsets()
    appended = cluster.partitions[tp].log_end_offset
    cluster.move_coordinator("group-1")
    cluster.run_for(20)
    loaded = [e for e in cluster.trace.of_kind("load_completed") if e.fields["tp"] == tp][-1]
    assert 0 < loaded.fields["records"] < appended / 5
    assert group["state"] == "Stable" and len(group["members"]) == 3
    assert cluster.group() == group
    assert cluster.committed_offsets() == offsets


# -- what only deleted snapshots needed is let go ----------------------------------------------


class _Value:
    """A map value that can be watched for being freed."""


def test_deleting_snapshots_up_to_an_offset_frees_what_only_they_kept():
    """SnapshotRegistry.deleteSnapshotsUpTo (SnapshottableCoordinator.updateLastCommittedOffset):
    reads at the snapshots kept do not change; values only older snapshots stashed are freed."""
    registry = SnapshotRegistry()
    m: TimelineHashMap[str, _Value] = TimelineHashMap(registry)
    old = [_Value() for _ in range(4)]
    watched = [weakref.ref(v) for v in old]
    for epoch, value in enumerate(old):
        registry.get_or_create_snapshot(epoch)
        m.put("k", value)
    registry.get_or_create_snapshot(4)
    m.put("k", _Value())
    reads = {e: m.get("k", epoch=e) for e in (3, 4)}
    registry.delete_snapshots_up_to(3)
    del old, value
    gc.collect()
    assert registry.epochs_list() == [3, 4]
    assert {e: m.get("k", epoch=e) for e in (3, 4)} == reads
    assert [w() is None for w in watched] == [True, True, False, False]


def test_a_long_run_keeps_a_handful_of_snapshots():
    """CoordinatorRuntime keeps snapshots only for uncommitted offsets."""
    cluster = Cluster(trace_level="INFO")
    for i in range(3):
        cluster.add_consumer(f"c{i}")
    cluster.run_for(1_800_000)
    for broker in cluster.brokers.values():
        for ctx in broker.runtime._contexts.values():
            assert ctx.coordinator is not None
            assert len(ctx.coordinator.snapshot_registry.epochs_list()) <= 2


# -- configuration ----------------------------------------------------------------------------


def test_the_cleaner_config_takes_kafkas_keys_and_defaults():
    assert CleanerConfig() == CleanerConfig.from_properties({
        "log.cleaner.enable": True, "log.cleaner.backoff.ms": 15_000,
        "log.cleaner.min.cleanable.ratio": 0.5, "log.cleaner.delete.retention.ms": 86_400_000})
    with pytest.raises(ValueError, match=r"Invalid value 2 for configuration "
                                         r"log.cleaner.min.cleanable.ratio: Value must be no "
                                         r"less than 0 and no more than 1"):
        CleanerConfig(min_cleanable_ratio=2)
    with pytest.raises(ValueError, match=r"Invalid value -1 for configuration "
                                         r"log.cleaner.backoff.ms"):
        CleanerConfig.from_properties({"log.cleaner.backoff.ms": -1})
    with pytest.raises(ValueError, match="unknown log cleaner config 'log.cleaner.threads'"):
        Cluster(cleaner_config={"log.cleaner.threads": 2})
    with pytest.raises(TypeError, match="cleaner_config is a CleanerConfig or a mapping"):
        Cluster(cleaner_config=0.5)  # type: ignore[arg-type]


def test_a_cluster_rolls_its_offsets_segments_at_a_mebibyte_unless_told():
    assert GroupCoordinatorConfig().offsets_topic_segment_bytes == 100 * 1024 * 1024  # Kafka's
    assert Cluster().config.offsets_topic_segment_bytes == OFFSETS_SEGMENT_BYTES == 1024 * 1024
    cluster = Cluster(group_config={"offsets.topic.segment.bytes": 104857600})
    assert {p.segment_bytes for p in cluster.partitions.values()} == {104857600}
    assert all(b.log_cleaner is not None and len(b.log_cleaner.partitions) == 3
               for b in cluster.brokers.values())


def test_disabling_the_cleaner_leaves_the_log_whole():
    """log.cleaner.enable=false: segments roll, nothing is cleaned."""
    scheduler, trace, p, cleaners = _partition(enable=False)
    for i in range(12):
        _put(p, "k", str(i))
    scheduler.run_for(60_000)
    assert len(_records(p)) == 12 and cleaners[0].cleanings == 0
    assert not scheduler.pending() or all("log-cleaner" not in h.name
                                          for h in scheduler.pending())


def test_a_run_that_never_fills_a_segment_never_sees_the_cleaner():
    """A run that never fills a segment never schedules the cleaner: no pending entry, no
    line (what keeps the lessons' traces and panels as they were)."""
    cluster = Cluster()
    cluster.add_consumer("c1")
    cluster.run_for(120_000)
    assert not any("log-cleaner" in h.name for h in cluster.scheduler.pending())
    assert not [e for e in cluster.trace.events if e.kind in ("segment_rolled", "log_cleaned")]


def test_the_roll_and_cleaner_lines_parse_back_as_their_events():
    """The catalogue drives the parser too: Kafka's LocalLog and LogCleaner lines the kit writes
    are read back as events of the right partition."""
    scheduler, trace, p, cleaners = _partition(replicas=(0, 1))
    for i in range(10):
        _put(p, "k", str(i))
    scheduler.run_for(30_000)
    logged = [e for e in trace.events if e.message is not None and e.level == "INFO"]
    assert {e.kind for e in logged} >= {"segment_rolled", "log_cleaning_started",
                                        "offset_map_building", "log_cleaning"}
    counts = ParseCounts()
    rows = [row for _, row in parse_lines([e.line() for e in logged], "server.log", counts)]
    assert counts.recognised == len(logged) and counts.quarantined == 0
    assert [(r["event"], r["partition"]) for r in rows] == [(e.kind, 0) for e in logged]
