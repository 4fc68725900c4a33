"""A long run with a fault every few virtual minutes, measured every virtual hour.

Shared by tests/test_soak.py and benchmarks/soak.py (pytest puts this directory on sys.path;
the file is not collected as tests). The faults are tests/faults.py's vocabulary; the number
of live consumers stays between `low` and `high` (a crash or leave at `low` is skipped, an add
at `high` too, and an add restarts a dead consumer under its name before it makes a new one),
so that what the cluster does stays the same from hour to hour and only the time it has run
grows.
"""

from __future__ import annotations

import gc
import random
import tracemalloc
from collections.abc import Callable, Mapping
from typing import Any

from faults import ACTIONS, apply_fault

from coordinator_kit.cluster import Cluster
from coordinator_kit.footprint import footprint

HOUR_MS = 3_600_000


def soak_cluster(consumers: int = 6, seed: int = 0, *, trace_level: str = "INFO",
                 group_config: Mapping[str, Any] | None = None,
                 cleaner_config: Mapping[str, Any] | None = None,
                 processing_ms: int = 100) -> Cluster:
    cluster = Cluster(seed=seed, trace_level=trace_level, group_config=group_config,
                      cleaner_config=cleaner_config)
    for i in range(consumers):
        cluster.add_consumer(f"c{i}", processing_ms=processing_ms)
    return cluster


def apply_soak_fault(cluster: Cluster, rng: random.Random, low: int, high: int) -> str:
    """Draw one fault from the vocabulary and apply it within the population bounds; returns
    what was done."""
    action = rng.choice(ACTIONS)
    live = [c.name for c in cluster.consumers.values() if c.running and not c.crashed]
    if action in ("crash", "leave") and len(live) <= low:
        return f"{action} skipped"
    if action == "add":
        if len(live) >= high:
            return "add skipped"
        dead = [c.name for c in cluster.consumers.values()
                if (c.crashed or c.closed) and c.starts_at is None]
        if dead:
            cluster.restart_consumer(dead[0], down_ms=1000)
            return f"restart {dead[0]}"
    who, ms = rng.randrange(high), rng.choice((5_000, 20_000, 60_000))
    apply_fault(cluster, action, who, ms, len(cluster.consumers))
    return action


def run_soak(cluster: Cluster, hours: int, *, seed: int = 0, fault_every_ms: int = 600_000,
             low: int = 4, high: int = 10, measure_memory: bool = True,
             drain_trace: bool = False,
             on_hour: Callable[[int, dict[str, int], int | None], None] | None = None
             ) -> list[tuple[int, dict[str, int], int | None]]:
    """Run `hours` virtual hours with a fault every `fault_every_ms`; after each hour, a
    garbage collection and (hour, footprint, tracemalloc's current bytes or None).

    `drain_trace`: after each hour's footprint, the trace's events are dropped, as a log
    appender would have written them out, so the memory figure is what the cluster keeps
    (the trace is the run's record: it grows with what happens, by design)."""
    rng = random.Random(seed)
    rows: list[tuple[int, dict[str, int], int | None]] = []
    started = measure_memory and not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        for hour in range(1, hours + 1):
            end = hour * HOUR_MS
            while cluster.scheduler.now + fault_every_ms <= end:
                cluster.run_for(fault_every_ms)
                apply_soak_fault(cluster, rng, low, high)
            if cluster.scheduler.now < end:
                cluster.run_for(end - cluster.scheduler.now)
            counts = footprint(cluster)
            if drain_trace:
                del cluster.trace.events[:]  # only the cluster's core runs: nothing reads it
            gc.collect()
            memory = tracemalloc.get_traced_memory()[0] if measure_memory else None
            row = (hour, counts, memory)
            rows.append(row)
            if on_hour is not None:
                on_hour(*row)
    finally:
        if started:
            tracemalloc.stop()
    return rows
