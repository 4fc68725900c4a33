"""What the cluster view costs per redraw: a snapshot, its SVG, next to simulation steps.

Run from the repository root::

    .venv/bin/python benchmarks/cluster_view.py            # 3 brokers x 4 consumers, and 100
    .venv/bin/python benchmarks/cluster_view.py --repeat 5 # best of 5 (busy machine)

A control panel redraws the view after every step, so a redraw must cost little next to the
step itself. Measured, at a moment with requests in flight (a rebalance after a GC pause): the
time of `cluster_snapshot(cluster)` and of `cluster_svg(snapshot, previous)`, and as the peer,
measured in the same run on the same cluster, the mean time of one `scheduler.step()` over the
next 10 virtual seconds. Printed: microseconds per call and how many simulation steps one costs.
Target (for a 3 x 4 cluster): a snapshot well under 5 ms.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coordinator_kit.scenarios import second_joins  # noqa: E402
from coordinator_kit.viz.cluster_view import cluster_svg  # noqa: E402
from coordinator_kit.viz.snapshot import cluster_snapshot  # noqa: E402


def _moment(consumers: int):  # type: ignore[no-untyped-def]
    c = second_joins()
    for i in range(3, consumers + 1):
        c.add_consumer(f"consumer-{i}")
    c.run_for(20_000)
    c.pause("consumer-1", 60_000)
    c.run_for(55_000)  # consumer-1 expelled at 45 s: a rebalance
    c.run_until(lambda: len(cluster_snapshot(c).requests) >= 2)  # with requests in flight
    return c


def _per_call(fn, n: int) -> float:  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n


def measure(consumers: int, repeat: int) -> None:
    cluster = _moment(consumers)
    previous = cluster_snapshot(cluster)
    cluster.scheduler.step()
    snap = cluster_snapshot(cluster)
    n = 200 if consumers <= 10 else 20
    snap_s = min(_per_call(lambda: cluster_snapshot(cluster), n) for _ in range(repeat))
    svg_s = min(_per_call(lambda: cluster_svg(snap, previous), n) for _ in range(repeat))
    steps_s = []
    for _ in range(repeat):
        c = _moment(consumers)  # the same state again (same scenario, same seed)
        steps, end = 0, c.scheduler.now + 10_000
        t = time.perf_counter()
        while c.scheduler.now < end and c.scheduler.step():
            steps += 1
        steps_s.append((time.perf_counter() - t) / max(1, steps))
    step_s = min(steps_s)
    print(f"{len(cluster.brokers)} brokers x {consumers} consumers, t={snap.now_ms:,} ms, "
          f"{len(snap.requests)} requests in flight:")
    print(f"  cluster_snapshot {snap_s * 1e6:8.0f} us = {snap_s / step_s:5.1f} simulation steps"
          f"{'  (target < 5 ms: MET)' if consumers <= 4 and snap_s < 0.005 else ''}")
    print(f"  cluster_svg      {svg_s * 1e6:8.0f} us = {svg_s / step_s:5.1f} simulation steps "
          f"({len(cluster_svg(snap, previous)):,} bytes)")
    print(f"  peer: one scheduler.step() {step_s * 1e6:6.1f} us (mean over 10 virtual s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    args = parser.parse_args()
    for consumers in (4, 100):
        measure(consumers, args.repeat)


if __name__ == "__main__":
    main()
