"""What the invariant monitor costs per event, at 100, 1,000 and 3,000 members.

Run from the repository root::

    .venv/bin/python benchmarks/monitor.py             # 100, 1,000 and 3,000 members
    .venv/bin/python benchmarks/monitor.py --sizes 100 300 --repeat 3

For each group size, the same two workloads run twice in the same process, once on a plain
`Cluster` and once with an `InvariantMonitor` attached (as `scenarios.new_cluster` does):

1. **join**: M consumers start at the same virtual instant; timed until the group is Stable
   with every member STABLE (each member's JoinGroup, SyncGroup, assignment and state changes
   are events the monitor looks at);
2. **steady**: then 30 virtual seconds of heartbeats and auto-commits (every member commits
   every 5 s: OffsetCommit records the monitor reads as they commit).

Printed per size and workload: CPU seconds without and with the monitor, the scheduler events
run, the monitor's looks (trace events it checks on, plus responses), microseconds per
scheduler event without and with, their ratio, and the monitor's own cost per look
((with - without) / looks). What the monitor does per look depends on what changed (the consumer whose event it
is, the records committed since the last look), not on the group's size, so its cost per look
should stay flat from 100 to 3,000 members. The peer, up to `--rescan-up-to` members: the same
monitor rescanning every member and every committed offset at each look
(`InvariantMonitor(thorough=True)`), which grows with the group as the monitor's looks did
before they were incremental (a 1,000-member join took 12 s with it then, 3,000 members 285 s).

Times are CPU seconds of this process (`time.process_time`: steadier than wall time when
other programs share the machine); the kit's core never reads a clock. Each size runs the plain
cluster, the monitored one and the rescanning one in turn, `--repeat` times (the best of each
is printed).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path
from typing import Any

# measure the kit of this checkout, whatever else the interpreter's path holds
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coordinator_kit.client.member import MemberState  # noqa: E402
from coordinator_kit.cluster import Cluster  # noqa: E402
from coordinator_kit.invariants import InvariantMonitor  # noqa: E402


def _run(members: int, monitored: bool, steady_ms: int, rescan: bool = False
         ) -> dict[str, Any]:
    gc.collect()
    cluster = Cluster(topics={"events": max(members, 100)}, trace_level="INFO")
    monitor = InvariantMonitor(cluster, thorough=rescan) if monitored else None
    stable = [0]

    def count(_consumer: Any, old: MemberState, new: MemberState) -> None:
        stable[0] += (new is MemberState.STABLE) - (old is MemberState.STABLE)

    for i in range(members):
        cluster.add_consumer(f"c{i}", topics=("events",), processing_ms=1000)
        cluster.consumer(f"c{i}").on_state_change(count)
    t0 = time.process_time()
    join_events = cluster.run_until(
        lambda: stable[0] == members and cluster.group()["state"] == "Stable",
        limit_ms=600_000)
    join_s = time.process_time() - t0
    looks0 = 0 if monitor is None else monitor.checks + monitor.responses_checked
    t0 = time.process_time()
    steady_events = cluster.run_for(steady_ms)
    steady_s = time.process_time() - t0
    looks1 = 0 if monitor is None else monitor.checks + monitor.responses_checked
    if monitor is not None:
        monitor.assert_ok()
    return {"join": (join_s, join_events, looks0), "steady": (steady_s, steady_events,
                                                              looks1 - looks0)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 3000])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--steady-ms", type=int, default=30_000)
    parser.add_argument("--rescan-up-to", type=int, default=1000, metavar="M",
                        help="also time a monitor that rescans everything at each look "
                        "(InvariantMonitor(thorough=True), what every look cost before) for "
                        "groups of at most M members (0: never)")
    args = parser.parse_args()
    print(f"{'members':>8} {'workload':>8} {'plain s':>8} {'monitored s':>11} {'events':>9} "
          # CPU seconds and microseconds (time.process_time)
          f"{'looks':>8} {'us/event plain':>14} {'us/event monitored':>18} "
          f"{'ratio':>6} {'monitor us/look':>15} {'rescanning us/look':>18}")
    for members in args.sizes:
        runs: dict[str, dict[str, Any]] = {"plain": {}, "watched": {}, "rescan": {}}
        kinds = [("plain", False, False), ("watched", True, False)]
        if members <= args.rescan_up_to:
            kinds.append(("rescan", True, True))
        for _ in range(args.repeat):
            for kind, monitored, rescan in kinds:
                run = _run(members, monitored, args.steady_ms, rescan)
                for name, (seconds, events, looks) in run.items():
                    best = runs[kind].get(name)
                    if best is None or seconds < best[0]:
                        runs[kind][name] = (seconds, events, looks)
        for name in ("join", "steady"):
            p_s, p_events, _ = runs["plain"][name]
            w_s, w_events, looks = runs["watched"][name]
            assert p_events == w_events, "the monitor changed what ran"
            rescan_cost = "-"
            if name in runs["rescan"]:
                r_s, r_events, r_looks = runs["rescan"][name]
                assert r_events == p_events, "the monitor changed what ran"
                rescan_cost = f"{(r_s - p_s) / max(r_looks, 1) * 1e6:,.1f}"
            print(f"{members:>8,} {name:>8} {p_s:>8.2f} {w_s:>11.2f} {w_events:>9,} "
                  f"{looks:>8,} {p_s / p_events * 1e6:>14.1f} {w_s / w_events * 1e6:>18.1f} "
                  f"{w_s / p_s:>6.2f} {(w_s - p_s) / max(looks, 1) * 1e6:>15.1f} "
                  f"{rescan_cost:>18}")


if __name__ == "__main__":
    main()
