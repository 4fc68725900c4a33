"""When the leader drops a follower from the ISR, as Kafka decides it.

Kafka (trunk 4.0 and 3.x alike): `ReplicaManager` runs `isr-expiration` every
replica.lag.time.max.ms / 2 (15 s); `Partition.getOutOfSyncReplicas` drops an in-sync follower
unless `ReplicaState.isCaughtUp`: its log end offset equals the leader's, or now -
lastCaughtUpTimeMs <= replica.lag.time.max.ms (30 s). Only a fetch moves lastCaughtUpTimeMs
(`Replica.updateFetchStateOrThrow`): to the fetch's time if it asks from the leader's log end,
else to the previous fetch's time if it asks from where the leader's log ended then. A follower
at the log end fetches again every replica.fetch.wait.max.ms (500 ms) plus a round trip; a
stalled one stops, so its last fetch before the stall is what counts.
"""

from __future__ import annotations

import re

import pytest

from coordinator_kit.clock import Scheduler
from coordinator_kit.runtime.partition import ReplicatedPartition
from coordinator_kit.scenarios import new_cluster
from coordinator_kit.topic import TopicPartition
from coordinator_kit.trace import Trace

LAG_MS = 30_000  # replica.lag.time.max.ms
CHECK_MS = LAG_MS // 2  # the isr-expiration period
REFETCH_MS = 500 + 2 * 1  # replica.fetch.wait.max.ms + a fetch round trip at 1 ms latency
RECORD = [(b"\x00\x01k", b"v")]


def partition() -> tuple[ReplicatedPartition, Scheduler, Trace]:
    scheduler = Scheduler()
    trace = Trace(scheduler, level="INFO")
    p = ReplicatedPartition(TopicPartition.offsets(0), scheduler, trace, (0, 1, 2))
    return p, scheduler, trace


def shrinks(trace: Trace) -> list[tuple[int, str, int]]:
    """(time of the line in virtual ms, brokers dropped, their lastCaughtUpTimeMs in virtual ms)."""
    start = int(trace.start.timestamp() * 1000)
    out = []
    for event in trace.of_kind("isr_shrink"):
        line = event.line(trace.start)
        if line is not None:
            dropped = re.findall(r"brokerId: (\d+)", line)
            caught_up = [int(ms) - start for ms in re.findall(r"lastCaughtUpTimeMs: (\d+)", line)]
            assert len(set(caught_up)) == 1, line
            out.append((event.ts, ",".join(dropped), caught_up[0]))
    return out


def kafka_shrink_time(last_caught_up_ms: int, behind_since_ms: int) -> int:
    """The first isr-expiration run at which the follower is behind the log end and more than
    replica.lag.time.max.ms has passed since it last caught up."""
    t = CHECK_MS
    while t < behind_since_ms or t - last_caught_up_ms <= LAG_MS:
        t += CHECK_MS
    return t


def test_a_stalled_follower_is_dropped_30_s_after_its_last_fetch_not_after_the_next_write():
    """ReplicaState.isCaughtUp and Replica.updateFetchStateOrThrow: the earlier kit kept
    refreshing a stalled follower whose fetch still waited at the log end, so a write at 120 s
    dropped it at 165 s; Kafka has no fetch after the stall and drops it at 135 s."""
    p, scheduler, trace = partition()
    scheduler.run_for(1_000)
    p.stall_replica(2)
    scheduler.run_for(119_000)  # an idle partition: at the log end, broker 2 stays in sync
    assert p.isr == [0, 1, 2]
    p.append(0, RECORD)  # at 120 s, after that moment's check
    scheduler.run_for(60_000)
    # broker 2's fetch came at 1 ms and was re-sent every 502 ms: its last one came at 503 ms
    last_fetch = 1 + (1_000 - 1) // REFETCH_MS * REFETCH_MS
    assert last_fetch == 503
    assert shrinks(trace) == [(135_000, "2", last_fetch)]
    assert kafka_shrink_time(last_fetch, 120_001) == 135_000
    assert p.isr == [0, 1] and p.high_watermark == 1


@pytest.mark.parametrize("stall_ms, write_ms", [(10, 1_010), (1_000, 10_000), (29_900, 30_500),
                                                (50_000, 60_000), (44_800, 44_900)])
def test_the_shrink_comes_at_the_first_check_past_30_s_after_the_last_fetch(stall_ms, write_ms):
    """Partition.getOutOfSyncReplicas every 15 s (ReplicaManager's isr-expiration)."""
    p, scheduler, trace = partition()
    scheduler.run_for(stall_ms)
    p.stall_replica(1)
    scheduler.run_for(write_ms - stall_ms)
    p.append(0, RECORD)
    scheduler.run_for(60_000)
    last_fetch = 1 + (stall_ms - 1) // REFETCH_MS * REFETCH_MS
    assert shrinks(trace) == [(kafka_shrink_time(last_fetch, write_ms + 1), "1", last_fetch)]


def test_a_follower_at_the_log_end_is_never_out_of_sync():
    """ReplicaState.isCaughtUp: leaderEndOffset == logEndOffset, however old lastCaughtUpTimeMs."""
    p, scheduler, trace = partition()
    p.append(0, RECORD)
    scheduler.run_for(10)
    p.stall_replica(1)
    p.stall_replica(2)
    scheduler.run_for(10 * LAG_MS)
    assert p.isr == [0, 1, 2] and shrinks(trace) == []


def test_a_follower_that_never_reaches_the_moving_log_end_stays_in_sync():
    """Replica.updateFetchStateOrThrow, second case: under a write every 100 ms no fetch of a
    follower that fetches 150 ms late asks from the leader's log end, but each asks from where
    the log ended at its previous fetch, so lastCaughtUpTimeMs keeps moving."""
    p, scheduler, trace = partition()
    p.lag_replica(2, 150)
    at_log_end = []
    for _ in range(900):  # 90 s
        p.append(0, RECORD)
        scheduler.run_for(100)
        at_log_end.append(p.replicas[2].known_leo == p.log_end_offset)
    assert not any(at_log_end[10:])
    assert p.isr == [0, 1, 2] and shrinks(trace) == []
    assert scheduler.now - p.replicas[2].last_caught_up_ms < 1_000


def test_a_slow_follower_is_dropped_when_it_falls_behind_for_30_s():
    """A follower that fetches 40 s late has not caught up for 30 s at the check after its
    fetch delay began; its last fetch at the log end came when the delay was set."""
    p, scheduler, trace = partition()
    scheduler.run_for(2_000)
    p.lag_replica(2, 40_000)  # the waiting fetch is answered by the write below
    scheduler.run_for(8_000)
    p.append(0, RECORD)  # at 10 s
    scheduler.run_for(60_000)
    last_fetch = 1 + (2_000 - 1) // REFETCH_MS * REFETCH_MS  # re-sends at the old delay
    assert last_fetch == 1_507
    assert shrinks(trace)[0] == (kafka_shrink_time(last_fetch, 10_001), "2", last_fetch)


def test_a_stalled_follower_of_a_committing_group_leaves_the_isr_30_to_45_s_after_the_stall():
    """The kit's stalled-replica fault in a cluster, where auto-commits (every 5 s) write to the
    group's partition. Stalled just before the check at 30 s, the follower is dropped at 60 s:
    the check at 30 s sees it at the log end, and must not count that as a fetch."""
    cluster = new_cluster(trace_level="INFO")
    cluster.add_consumer("consumer-1")
    cluster.run_for(29_750)
    tp = cluster.partition_of("group-1")
    p = cluster.partitions[tp]
    follower = next(b for b in p.isr if b != p.leader_id)
    cluster.stall_replica(tp.partition, follower)
    cluster.run_for(60_000)
    start = int(cluster.trace.start.timestamp() * 1000)
    lines = [ln for ln in cluster.log_lines("INFO") if "Shrinking ISR" in ln]
    assert len(lines) == 1 and f"(brokerId: {follower}, endOffset: " in lines[0]
    last_caught_up = int(re.search(r"lastCaughtUpTimeMs: (\d+)", lines[0]).group(1)) - start
    assert 29_750 - REFETCH_MS < last_caught_up <= 29_750
    assert lines[0].startswith("[2025-03-03 09:01:00,000] ")  # 60 s after the start
    assert follower not in p.isr


def test_replica_fetch_wait_max_ms_must_be_positive():
    scheduler = Scheduler()
    with pytest.raises(ValueError, match="replica.fetch.wait.max.ms must be > 0, got 0"):
        ReplicatedPartition(TopicPartition.offsets(0), scheduler, Trace(scheduler), (0, 1, 2),
                            replica_fetch_wait_max_ms=0)
