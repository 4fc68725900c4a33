"""Memory stays flat over a long run: six virtual hours with a fault every ten minutes.

What grew before: every auto-commit appended to the group's `__consumer_offsets` partition, and
nothing ever removed a record, so each replica's log (and the kit's memory) grew with the run's
length. Kafka bounds it with the log cleaner (`LogCleaner`: the latest record per key, only
rolled segments, below the high watermark; see tests/test_log_cleaner.py), and bounds a
coordinator's snapshots by deleting them up to the committed offset
(`SnapshottableCoordinator.updateLastCommittedOffset` -> `SnapshotRegistry.deleteSnapshotsUpTo`).
Here a 4-to-10-consumer cluster (Kafka's default consumer configs: auto-commit every 5 s) takes a
fault from tests/faults.py every 10 virtual minutes for 6 virtual hours, and its footprint and
traced memory at hours 2, 4 and 6 must stay within a small bound while the records appended keep
growing. `offsets.topic.segment.bytes` is 16 KiB so that segments roll every few minutes (at the
Cluster's 1 MiB this load fills its first segment after about three hours; the bound is then a
segment's worth, as `benchmarks/soak.py` shows). The trace, the run's record, is drained each
hour (as a log appender writes it out) and counted apart.
"""

from __future__ import annotations

import pytest
from soak import run_soak, soak_cluster

from coordinator_kit.client.consumer import LISTENER_HISTORY

SEGMENT = 16 * 1024
HOURS = (2, 4, 6)


@pytest.fixture(scope="module")
def soak():
    cluster = soak_cluster(4, seed=1, processing_ms=1000,
                           group_config={"offsets.topic.segment.bytes": SEGMENT})
    rows = run_soak(cluster, 6, seed=1, drain_trace=True)
    return cluster, {hour: (fp, memory) for hour, fp, memory in rows}


def test_the_records_appended_keep_growing(soak):
    _, rows = soak
    appended = [rows[h][0]["log_appended"] for h in HOURS]
    assert appended[0] > 8_000 and appended[2] > 2.5 * appended[0]


def test_each_replicas_log_stays_within_two_segments(soak):
    """The active segment, at most one rolled segment waiting for the cleaner's next look
    (15 s), and the cleaned latest records: bounded by segment.bytes, not by the hours run."""
    cluster, rows = soak
    for hour, (fp, _) in rows.items():
        assert fp["log_bytes_max"] <= 2 * SEGMENT + 4096, hour
    assert sum(b.log_cleaner.cleanings for b in cluster.brokers.values()) > 30


def test_traced_memory_levels_off(soak):
    """tracemalloc after a garbage collection: what the cluster keeps at hours 2, 4 and 6 is
    within 128 KiB, while over 12,000 records are appended between hours 2 and 6 (kept, they
    would take about 200 bytes each: the same run with log.cleaner.enable=false grows by
    0.7 to 0.85 MiB an hour)."""
    _, rows = soak
    memory = [rows[h][1] for h in HOURS]
    assert max(memory) - min(memory) <= 128 * 1024, memory
    assert rows[6][0]["log_appended"] - rows[2][0]["log_appended"] > 12_000


def test_the_other_structures_stay_bounded(soak):
    """Snapshots only for uncommitted offsets, no parked writes or queued events piling up,
    the scheduler's heap and lanes, coordinator timers, listener history."""
    cluster, rows = soak
    for hour, (fp, _) in rows.items():
        assert fp["snapshots"] <= 6 and fp["snapshot_deltas"] <= 6, hour
        assert fp["stashed_elements"] <= 20 and fp["deferred_events"] <= 10, hour
        assert fp["queued_events"] <= 10 and fp["scheduler_heap"] <= 120, hour
        assert fp["lane_timers"] <= 30 and fp["coordinator_timers"] <= 20, hour
        assert fp["groups"] == 1 and fp["offsets"] == 6 and fp["consumers"] <= 10, hour
        assert fp["listener_calls"] <= LISTENER_HISTORY * fp["consumers"], hour
    trace = [rows[h][0]["trace_events"] for h in HOURS]
    assert max(trace) < 3 * min(trace)  # the events of one hour: about as many each hour
