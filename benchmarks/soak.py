"""Memory over a long run: a cluster with a fault every 10 virtual minutes, measured every
virtual hour, to show what grows with the time a run has run.

Run from the repository root::

    .venv/bin/python benchmarks/soak.py                      # 6 consumers x 6 virtual hours
    .venv/bin/python benchmarks/soak.py --hours 12 --consumers 10
    .venv/bin/python benchmarks/soak.py --no-cleaner         # log.cleaner.enable=false
    .venv/bin/python benchmarks/soak.py --segment-bytes 65536 --no-memory

The workload (tests/soak.py): 3 brokers, 3 `__consumer_offsets` partitions, one 6-partition
topic, Kafka's default consumer configs (auto-commit every 5 s, heartbeat every 3 s, session
45 s), the trace at INFO; every 10 virtual minutes one fault from tests/faults.py's vocabulary
(crash, pause, slow poll, dropped heartbeats, cut off, heal, coordinator move, add, leave), with
4 to 10 consumers live. After each virtual hour it prints the process's traced memory
(`tracemalloc`, after a garbage collection; tracing makes the run about twice as slow) and
`coordinator_kit.footprint.footprint(cluster)`: the `__consumer_offsets` logs (batches,
records, bytes, segments), the coordinators' snapshots and what they stash, groups, members,
offsets, parked writes, timers, queued events, the scheduler's heap and lanes, consumers,
their rebalance-listener history, and the trace.

Nothing here asserts; tests/test_soak.py does, on a shorter run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(_ROOT), str(_ROOT / "tests")]  # this checkout's package and tests/soak.py

from soak import run_soak, soak_cluster  # noqa: E402

from coordinator_kit.footprint import FOOTPRINT_KEYS  # noqa: E402

SHORT = {"log_appended": "appended", "log_batches": "batches", "log_records": "records",
         "log_bytes": "log B", "log_segments": "segs", "log_bytes_max": "B/replica", "snapshots": "snaps",
         "snapshot_deltas": "deltas", "stashed_elements": "stash", "groups": "groups",
         "members": "members", "offsets": "offsets", "deferred_events": "parked",
         "coordinator_timers": "timers", "queued_events": "queued",
         "scheduler_heap": "heap", "lane_timers": "lanes", "consumers": "consumers",
         "listener_calls": "listener", "trace_events": "trace"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=int, default=6)
    parser.add_argument("--consumers", type=int, default=6)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--fault-every-min", type=int, default=10)
    parser.add_argument("--segment-bytes", type=int, default=None,
                        help="offsets.topic.segment.bytes (default: the Cluster's)")
    parser.add_argument("--no-cleaner", action="store_true", help="log.cleaner.enable=false")
    parser.add_argument("--trace-level", default="INFO")
    parser.add_argument("--no-memory", action="store_true", help="skip tracemalloc (faster)")
    args = parser.parse_args()

    group = {} if args.segment_bytes is None else \
        {"offsets.topic.segment.bytes": args.segment_bytes}
    cleaner = {"log.cleaner.enable": not args.no_cleaner}
    cluster = soak_cluster(args.consumers, args.seed, trace_level=args.trace_level,
                           group_config=group, cleaner_config=cleaner)
    print(f"soak: {args.consumers} consumers, a fault every {args.fault_every_min} virtual min, "
          f"{args.hours} virtual h, trace at {args.trace_level}, offsets.topic.segment.bytes="
          f"{cluster.config.offsets_topic_segment_bytes:,}, log.cleaner.enable="
          f"{not args.no_cleaner}")
    print(f"{'hour':>4} {'wall s':>6} {'MiB':>6} " +
          " ".join(f"{SHORT[k]:>{max(len(SHORT[k]), 6)}}" for k in FOOTPRINT_KEYS))
    wall0 = time.perf_counter()

    def show(hour: int, fp: dict[str, int], memory: int | None) -> None:
        mib = "-" if memory is None else f"{memory / 2**20:.2f}"
        print(f"{hour:>4} {time.perf_counter() - wall0:>6.0f} {mib:>6} " +
              " ".join(f"{fp[k]:>{max(len(SHORT[k]), 6)},}" for k in FOOTPRINT_KEYS), flush=True)

    run_soak(cluster, args.hours, seed=args.seed, fault_every_ms=args.fault_every_min * 60_000,
             measure_memory=not args.no_memory, on_hour=show)
    cleaners = [b.log_cleaner for b in cluster.brokers.values() if b.log_cleaner is not None]
    print(f"log cleanings: {sum(c.cleanings for c in cleaners)}; segments rolled: "
          f"{sum(1 for e in cluster.trace.events if e.template_id == 'LL-ROLL')}")


if __name__ == "__main__":
    main()
