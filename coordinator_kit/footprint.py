"""What a running cluster holds, structure by structure: the figures to watch in a long run.

A live cluster runs for hours. Whatever it keeps must be bounded by what it is doing (its
members, groups, committed offsets, requests in flight), not grow with how long it has run: a
coordinator's `__consumer_offsets` log is compacted by the log cleaner (`runtime.cleaner`), its
snapshots are deleted up to the committed offset (`SnapshottableCoordinator.
update_last_committed_offset`, Kafka's `SnapshotRegistry.deleteSnapshotsUpTo`). `footprint`
counts each structure that could grow, so a soak run (`benchmarks/soak.py`, `tests/test_soak.py`)
can show which ones level off. The trace is the run's record and grows with what happens in it
(at INFO, a few lines per rebalance and one per coordinator every 10 minutes); it is counted
too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .timeline._hashtable import HashTier

if TYPE_CHECKING:
    from .cluster import Cluster

__all__ = ["footprint", "FOOTPRINT_KEYS"]

FOOTPRINT_KEYS = (
    "log_appended", "log_batches", "log_records", "log_bytes", "log_segments", "log_bytes_max",
    "snapshots", "snapshot_deltas", "stashed_elements", "groups", "members", "offsets",
    "deferred_events", "coordinator_timers", "queued_events", "scheduler_heap", "lane_timers",
    "consumers", "listener_calls", "trace_events",
)


def footprint(cluster: Cluster) -> dict[str, int]:
    """Counts of what the cluster holds now, by `FOOTPRINT_KEYS` (in that order).

    log_appended: the records ever appended to the `__consumer_offsets` partitions (their log
    end offsets); log_*: every replica of every partition together (batches, records, bytes as
    Kafka would count them, segments) and the most bytes of any one replica;
    snapshots, snapshot_deltas, stashed_elements: the coordinators' snapshot registries, the
    structures changed since each snapshot and the old elements their timeline maps keep for
    them; groups, members, offsets: the coordinators' latest state; deferred_events: writes
    waiting for the high watermark; coordinator_timers: timers of loaded coordinators;
    queued_events: events in the brokers' processors; scheduler_heap, lane_timers: the virtual
    clock's pending entries; consumers, listener_calls: the clients and their rebalance
    listener history; trace_events: the trace.
    """
    out = dict.fromkeys(FOOTPRINT_KEYS, 0)
    for _, partition in sorted(cluster.partitions.items()):
        out["log_appended"] += partition.log_end_offset
        for _, replica in sorted(partition.replicas.items()):
            log = replica.batches
            size = log.size_in_bytes()
            out["log_batches"] += len(log)
            out["log_records"] += sum(len(e[1]) for e in log._entries())
            out["log_bytes"] += size
            out["log_bytes_max"] = max(out["log_bytes_max"], size)
            out["log_segments"] += len(log.segments)
    for broker in cluster.brokers.values():
        runtime = broker.runtime
        accumulator = getattr(runtime.processor, "accumulator", None)
        if accumulator is not None:
            out["queued_events"] += accumulator.size()
        for ctx in runtime._contexts.values():
            out["deferred_events"] += len(ctx.deferred)
            out["coordinator_timers"] += len(ctx.timer.tasks)
            coordinator = ctx.coordinator
            if coordinator is None:
                continue
            for snapshot in coordinator.snapshot_registry._snapshots:
                out["snapshots"] += 1
                for _, delta in snapshot.deltas():
                    out["snapshot_deltas"] += 1
                    if isinstance(delta, HashTier):
                        out["stashed_elements"] += len(delta.items())
            shard: Any = coordinator.shard
            groups = getattr(shard, "groups", None)
            offsets = getattr(shard, "offsets", None)
            if groups is not None and offsets is not None:
                for group in groups.groups.values():
                    out["groups"] += 1
                    out["members"] += len(group.members)
                out["offsets"] += sum(len(o) for o in offsets.offsets.values())
    scheduler = cluster.scheduler
    out["scheduler_heap"] = len(scheduler._heap)
    out["lane_timers"] = sum(len(lane) for lane in scheduler._lanes)
    out["consumers"] = len(cluster.consumers)
    out["listener_calls"] = sum(len(c.listener_calls) for c in cluster.consumers.values())
    out["trace_events"] = len(cluster.trace)
    return out
