"""How fast a recorded run goes back: a jump to any instant of a one-hour, 100-consumer run,
next to replaying the run from its start, in the same process.

Run from the repository root::

    .venv/bin/python benchmarks/rewind.py            # 100 consumers x 1 h, 12 jumps
    .venv/bin/python benchmarks/rewind.py --quick    # 20 consumers x 10 min
    .venv/bin/python benchmarks/rewind.py --jumps 30 --seed 7

The workload is `benchmarks/simulation.py`'s: N consumers in one group (3 brokers, 3
`__consumer_offsets` partitions, a 100-partition topic, Kafka's default timeouts, a poll every
second), Stable, then one virtual hour with the trace at INFO. It runs under a
`coordinator_kit.recording.Recording`, which checkpoints the cluster every so many moves.

Reported, all measured in this run:

1. **Recording overhead**: the recorded hour against the same hour run straight (`Cluster.run_for`
   on a second copy of the same start), and what the checkpoints cost in memory.
2. **Jumps**: `seek(t)` from the end of the run back to seeded random instants `t` (each jump
   restores the nearest checkpoint and replays at most one interval), and stepping back one move
   from each of those instants.
3. **Full replay**: going to the same instants without intermediate checkpoints, i.e. replaying
   from the start (what a recorder with only seed + actions would do): the median of three
   instants and the whole hour. The ratio full replay / jump is printed per instant.

Target: a jump back to an arbitrary instant of the one-hour, 100-consumer run takes
well under a second: every jump below 0.5 s.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from simulation import _stable_cluster  # noqa: E402  (the same workload)

from coordinator_kit.recording import Recording  # noqa: E402

TARGET_S = 0.5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 consumers x 10 virtual min")
    parser.add_argument("--jumps", type=int, default=12)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    consumers, virtual_ms = (20, 600_000) if args.quick else (100, 3_600_000)

    straight = _stable_cluster(consumers, 1_000)
    start_ms = straight.scheduler.now
    wall0 = time.perf_counter()
    straight.run_for(virtual_ms)
    straight_s = time.perf_counter() - wall0

    cluster = _stable_cluster(consumers, 1_000)
    wall0 = time.perf_counter()
    rec = Recording(cluster)
    rec.run_for(virtual_ms)
    recorded_s = time.perf_counter() - wall0
    end = rec.position
    cps = rec.branch.checkpoints
    size = sum(len(c.state) for c in cps)
    same = [e.message for e in rec.cluster.trace.events] == \
        [e.message for e in straight.trace.events]
    print(f"workload: {consumers} consumers x {virtual_ms // 1000:,} virtual s after Stable "
          f"({start_ms:,} ms); {end.move:,} moves")
    print(f"recording: {recorded_s:.2f} s recorded vs {straight_s:.2f} s straight "
          f"(x{recorded_s / straight_s:.2f}); {len(cps)} checkpoints, {size / 2**20:.1f} MiB "
          f"({size / len(cps) / 2**20:.2f} MiB each, one per ~{end.move // len(cps):,} moves); "
          f"same trace as the straight run: {same}")

    rng = random.Random(args.seed)
    targets = sorted(rng.randrange(start_ms, start_ms + virtual_ms) for _ in range(args.jumps))
    jumps, backs = [], []
    for t in reversed(targets):  # from the end backwards, as a learner scrubs
        wall0 = time.perf_counter()
        rec.seek(t)
        jumps.append(time.perf_counter() - wall0)
        wall0 = time.perf_counter()
        rec.step_back()
        backs.append(time.perf_counter() - wall0)
    rec.seek(end.time)

    # Full replay: from the start, no checkpoint on the way (the start's checkpoint only).
    def full_replay(t: int) -> float:
        wall0 = time.perf_counter()
        rec._restore(cps[0])
        rec._replay(lambda: rec._cursor.to_time(t, rec.branch.frontier))
        return time.perf_counter() - wall0

    sample = [targets[len(targets) // 4], targets[len(targets) // 2], targets[-1]]
    fulls = {t: full_replay(t) for t in sample}
    whole = full_replay(end.time)
    print(f"jumps back to {len(targets)} random instants: median {statistics.median(jumps):.3f} "
          f"s, max {max(jumps):.3f} s; one step back from there: median "
          f"{statistics.median(backs):.3f} s, max {max(backs):.3f} s")
    for t in sample:
        jump = jumps[len(targets) - 1 - targets.index(t)]
        print(f"  to {t / 1000:,.1f} s: jump {jump:.3f} s vs full replay {fulls[t]:.2f} s "
              f"(x{fulls[t] / jump:,.0f})")
    print(f"full replay of the whole run: {whole:.2f} s; median jump is "
          f"x{whole / statistics.median(jumps):,.0f} faster")
    verdict = "MET" if max(jumps) < TARGET_S else "MISS"
    print(f"target: every jump < {TARGET_S} s ({'100 consumers x 1 h' if not args.quick else 'quick'}"
          f"): max {max(jumps):.3f} s -> {verdict}")


if __name__ == "__main__":
    main()
