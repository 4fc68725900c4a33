"""How fast the simulated cluster runs: virtual time per wall second, and a big group's rebalance.

Run from the repository root::

    .venv/bin/python benchmarks/simulation.py           # 100 consumers x 1 virtual hour; 1,000-member group
    .venv/bin/python benchmarks/simulation.py --quick   # 20 consumers x 10 virtual minutes; 200 members

1. **Heartbeating.** N consumers in one group (3 brokers, 3 `__consumer_offsets` partitions,
   one 100-partition topic, Kafka's default timeouts: heartbeat every 3 s, auto-commit every
   5 s) run for one virtual hour after the group is Stable. Each application polls every
   `--poll-ms` (1 s by default: a poll loop that waits for records; the kit runs every poll).
   Reported: virtual seconds simulated per wall second, events run, heartbeats answered.
   Target: at least 1,000x.
2. **Big group.** M consumers start at the same virtual instant; measured is the wall time until
   the group is Stable with every member STABLE, and the virtual time it took (the 3 s initial
   delay, extended while members keep arriving, plus the join and sync round trips).

The trace runs at INFO (per-heartbeat events are DEBUG), as a learner's long-running cluster
would. Wall time is `time.perf_counter`; the kit's core never reads it.
"""

from __future__ import annotations

import argparse
import time

from coordinator_kit.client.member import MemberState
from coordinator_kit.cluster import Cluster


def heartbeating(consumers: int, virtual_s: int, poll_ms: int) -> dict[str, float]:
    cluster = Cluster(topics={"events": 100}, trace_level="INFO")
    for i in range(consumers):
        cluster.add_consumer(f"c{i}", topics=("events",), processing_ms=poll_ms)
    cluster.run_until(lambda: cluster.group()["state"] == "Stable" and all(
        c.state is MemberState.STABLE for c in cluster.consumers.values()), limit_ms=600_000)
    events = 0
    start = time.perf_counter()
    events += cluster.run_for(virtual_s * 1000)
    wall = time.perf_counter() - start
    heartbeats = sum(1 for _ in cluster.trace.of_kind("member_session_expired"))
    return {"consumers": consumers, "virtual_s": virtual_s, "wall_s": wall,
            "speedup": virtual_s / wall, "events": events, "expired": heartbeats,
            "generation": cluster.group()["generation"]}


def big_group(members: int, poll_ms: int) -> dict[str, float]:
    cluster = Cluster(topics={"events": max(members, 100)}, trace_level="INFO")
    start = time.perf_counter()
    for i in range(members):
        cluster.add_consumer(f"c{i}", topics=("events",), processing_ms=poll_ms)
    cluster.run_until(lambda: cluster.group()["state"] == "Stable" and all(
        c.state is MemberState.STABLE for c in cluster.consumers.values()),
        limit_ms=3_600_000)
    wall = time.perf_counter() - start
    return {"members": members, "wall_s": wall, "virtual_ms": cluster.scheduler.now,
            "generation": cluster.group()["generation"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--poll-ms", type=int, default=1000)
    args = parser.parse_args()
    consumers, virtual_s, members = (20, 600, 200) if args.quick else (100, 3600, 1000)

    hb = heartbeating(consumers, virtual_s, args.poll_ms)
    print(f"heartbeating: {hb['consumers']} consumers for {hb['virtual_s']} virtual s in "
          f"{hb['wall_s']:.2f} wall s -> {hb['speedup']:,.0f}x virtual/wall "
          f"({hb['events']:,} events; {hb['expired']} session expiries; generation "
          f"{hb['generation']}); target >= 1,000x: {'MET' if hb['speedup'] >= 1000 else 'MISS'}")
    bg = big_group(members, args.poll_ms)
    print(f"big group: {bg['members']} members Stable after {bg['wall_s']:.2f} wall s "
          f"({bg['virtual_ms'] / 1000:.1f} virtual s, generation {bg['generation']})")


if __name__ == "__main__":
    main()
