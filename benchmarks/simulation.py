"""How fast the simulated cluster runs: virtual time per wall second, and a big group's rebalance.

Run from the repository root::

    .venv/bin/python benchmarks/simulation.py             # 100 consumers x 1 h; 1,000 members
    .venv/bin/python benchmarks/simulation.py --quick     # 20 consumers x 10 min; 200 members
    .venv/bin/python benchmarks/simulation.py --repeat 3  # min-max over 3 runs (busy machine)
    .venv/bin/python benchmarks/simulation.py --gc freeze # gc.freeze() after setup

1. **Heartbeating.** N consumers in one group (3 brokers, 3 `__consumer_offsets` partitions,
   one 100-partition topic, Kafka's default timeouts: heartbeat every 3 s, session 45 s,
   auto-commit every 5 s) run for one virtual hour after the group is Stable. Each application
   polls every `--poll-ms` (1 s by default: a poll loop that waits for records; the kit runs every
   poll). Reported: virtual seconds simulated per wall second (target: at least 1,000x) and per
   CPU second of this process (steadier when other programs share the machine), scheduler
   events run, heartbeats and commits answered, session expiries (0 expected).
2. **Big group.** M consumers start at the same virtual instant; measured is the wall time until
   the group is Stable with every member STABLE, and the virtual time it took (the 3 s initial
   delay, extended while members keep arriving, plus the join and sync round trips).
3. **Machine-independent figures** (`--calls`, on by default): a cProfile run of 60 virtual
   seconds of workload 1 counts Python function calls per virtual second, and the events behind
   them; then CPU microseconds per event, against the floor: no-op callbacks on a bare
   `Scheduler` at the same event rate, timed in the same run (how far the simulation is from the
   cost of the scheduling alone).

The trace runs at INFO (per-heartbeat events are DEBUG), as a learner's long-running cluster
would. Wall time is `time.perf_counter`, CPU time `time.process_time`; the kit's core reads
neither.

Where it stands (the session after 6fb0dfe; 2-core machine, idle, no other job): 100
consumers x 1 h at 1,174-1,316x virtual s per wall s (`--repeat 3`), and in five separate
processes x 2 runs 1,056-1,254x: every run meets the target (1,000x per wall s). The session's
first run, from the previous session's last commit (6fb0dfe), gave 958-1,072x; run back to back
with it from a copy of that tree (5 pairs, 900 virtual s, CPU time): 1,049x -> 1,265x (1.20x).
~8,080 -> 7,572 Python calls per virtual s, 4.0 -> 3.4 CPU us per event (the floor is 1.1), 242
events per virtual s before and after. Under valgrind (instructions per virtual s, 120 s after
Stable): 10.94M -> 9.54M (-13%). Young-generation collections per 300 virtual s 281 -> 136,
older ones 25 -> 12; the heap holds ~310 entries instead of ~570 (half of them were cancelled
handles). A 1,000-member group reaches Stable in 0.27-0.45 s (6 virtual s). Every change kept
the DEBUG and INFO traces byte-identical on 54 saved runs (every named scenario x 2 seeds, 30
random fault schedules, kafka-python runs, benchmark-like runs), the runtime's 27 saved trace
files, and `Scheduler.pending()` (names and times) at 3,300 points of every scenario, stepping
and pausing:

* The heartbeat thread's wake-up while a heartbeat is in flight (at the session or poll
  deadline, cancelled by the answer ~2 ms later) waits as a number in the cluster's
  `HeartbeatWakeups` lane (a `TimerLane`, same order as `call_at`), not as a `TimerHandle` left
  cancelled in the heap for ~40 s. This alone: 242 -> 170 young collections per 300 virtual s.
* A group-service write answers a failure through the write's own future (`on_error` on
  `schedule_write_operation`, Kafka's `.exceptionally(...)`): no second future, done closure and
  callback list per request (-6.4% instructions).
* An exchange is its own callback (arrival, answer ready, delivery) and holds its answer; a
  future keeps a single callback without a list; an OffsetCommit's client call and answer, and
  the service's handler call and failure answer, are one slotted object each; the group API
  dataclasses are slotted. A commit burst (every member commits in the same millisecond) leaves
  ~21 objects per commit for the collector, was ~27; a heartbeat burst ~3 per heartbeat, was 6.
* The heartbeat handler's three results are made once; a known dynamic member is validated
  inline; the network's timeout lanes test liveness with an attrgetter. (The review afterwards
  folded two written-out paths back into their functions, the session push-back and a
  one-partition commit, and the consumer's two copies of cancelling its heartbeat wake-up:
  +1.6% instructions, 9.54M -> 9.69M, and ~3% in CPU time back to back, 1,274x -> 1,240x; after
  it, on the idle machine, `--repeat 3` 1,097-1,135x and two more processes 1,203-1,343x.)

Measured and left out: a poll loop reusing its `TimerHandle` (-0.6% instructions, but whoever
holds the old handle from `pending()` would see it pending again: the panel's step test does),
a cache of the heartbeat handler call per request (0%), freeing a completed write's future at
once (more young collections: the collector counts allocations minus frees, and frees while the
count is 0 are lost), purging cancelled handles sooner (no change). What is left: 100 polls per
virtual s, each a `TimerHandle` and a heap entry; commit bursts of ~2,100 live objects (about
two young collections each); the heap's tuple comparisons (~10% of instructions under valgrind,
not of wall time: an int-keyed heap measured the same).

The session before (8a917bc -> 6fb0dfe): session timeouts pushed back in place
(`Scheduler.call_later_deferrable` / `defer`), the heartbeat request and its callables made
once per generation, slot-filled handles on the lock-free scheduler: 808-886x -> 991-1,096x per
CPU s at load 1.5-2.7, 12.70M -> 10.93M instructions per virtual s.

The one before that: `Scheduler(threadsafe=False)` for a Cluster (no RLock on the hot
paths), `Cluster.run_for` running each processor's queued events back to back (295 -> 242
events per virtual s), and the consumer's heartbeat, commit and poll paths written out
(565-633x -> 747-874x per CPU s). An auto-commit round trip cost ~36 CPU us then, a heartbeat
round trip ~10 us, an idle poll ~2.5 us (skipping every idle poll would gain at most 5-10%).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import time
from typing import Any

from coordinator_kit.client.member import MemberState
from coordinator_kit.clock import Scheduler
from coordinator_kit.cluster import Cluster

TARGET = 1000  # virtual seconds per wall second, 100 consumers


def _stable_cluster(consumers: int, poll_ms: int, partitions: int = 100) -> Cluster:
    """A cluster whose `consumers` members have all reached STABLE in a Stable group."""
    cluster = Cluster(topics={"events": partitions}, trace_level="INFO")
    stable = [0]

    def count(_consumer: Any, old: MemberState, new: MemberState) -> None:
        stable[0] += (new is MemberState.STABLE) - (old is MemberState.STABLE)

    for i in range(consumers):
        cluster.add_consumer(f"c{i}", topics=("events",), processing_ms=poll_ms)
        cluster.consumer(f"c{i}").on_state_change(count)
    cluster.run_until(lambda: stable[0] == consumers and cluster.group()["state"] == "Stable",
                      limit_ms=3_600_000)
    return cluster


def heartbeating(consumers: int, virtual_s: int, poll_ms: int, gc_mode: str) -> dict[str, Any]:
    cluster = _stable_cluster(consumers, poll_ms)
    before = len(cluster.trace)
    if gc_mode == "freeze":
        gc.collect()
        gc.freeze()
    try:
        wall0, cpu0 = time.perf_counter(), time.process_time()
        events = cluster.run_for(virtual_s * 1000)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    finally:
        if gc_mode == "freeze":
            gc.unfreeze()
    expired = sum(1 for e in cluster.trace.events[before:] if e.kind == "member_session_expired")
    return {"wall_s": wall, "cpu_s": cpu, "events": events, "expired": expired,
            "generation": cluster.group()["generation"]}


def big_group(members: int, poll_ms: int) -> dict[str, Any]:
    wall0, cpu0 = time.perf_counter(), time.process_time()
    cluster = _stable_cluster(members, poll_ms, partitions=max(members, 100))
    return {"wall_s": time.perf_counter() - wall0, "cpu_s": time.process_time() - cpu0,
            "virtual_ms": cluster.scheduler.now, "generation": cluster.group()["generation"]}


def calls_per_virtual_second(consumers: int, poll_ms: int, virtual_s: int = 60
                             ) -> dict[str, float]:
    """Python function calls and scheduler events per virtual second (cProfile), and the
    floor: as many no-op events on a bare scheduler, timed in the same run."""
    cluster = _stable_cluster(consumers, poll_ms)
    profile = cProfile.Profile()
    profile.enable()
    events = cluster.run_for(virtual_s * 1000)
    profile.disable()
    calls = pstats.Stats(profile).total_calls  # type: ignore[attr-defined]
    # the workload unprofiled, then the floor: one no-op callback chain per consumer, with the
    # same number of events spread evenly over the same virtual time (CPU time for both); the
    # garbage left by the profile and by workload 1's cluster is collected first, or a full
    # collection of it may land in the timed minute
    gc.collect()
    cpu0 = time.process_time()
    events2 = cluster.run_for(virtual_s * 1000)
    cpu = time.process_time() - cpu0
    sched = Scheduler()
    period = max(1, consumers * virtual_s * 1000 // max(events, 1))

    def tick() -> None:
        sched.call_later(period, tick)

    for _ in range(consumers):
        sched.call_soon(tick)
    cpu0 = time.process_time()
    floor_events = sched.run_for(virtual_s * 1000)
    floor_cpu = time.process_time() - cpu0
    return {"calls": calls / virtual_s, "events": events / virtual_s,
            "calls_per_event": calls / max(events, 1),
            "us_per_event": cpu / max(events2, 1) * 1e6,
            "floor_us_per_event": floor_cpu / max(floor_events, 1) * 1e6}


def _range(values: list[float], fmt: str = "{:,.0f}") -> str:
    lo, hi = min(values), max(values)
    return fmt.format(lo) if len(values) == 1 else f"{fmt.format(lo)}-{fmt.format(hi)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 consumers x 10 virtual "
                        "minutes; 200 members")
    parser.add_argument("--poll-ms", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=1, help="runs of each workload; the "
                        "figures show min-max")
    parser.add_argument("--gc", choices=("default", "freeze"), default="default",
                        help="freeze: gc.freeze() after setup, so the collector skips the "
                        "cluster built before the measured hour")
    parser.add_argument("--no-calls", action="store_true",
                        help="skip the cProfile call count and the floor")
    args = parser.parse_args()
    consumers, virtual_s, members = (20, 600, 200) if args.quick else (100, 3600, 1000)

    runs = [heartbeating(consumers, virtual_s, args.poll_ms, args.gc)
            for _ in range(args.repeat)]
    wall = [virtual_s / r["wall_s"] for r in runs]
    cpu = [virtual_s / r["cpu_s"] for r in runs]
    r = runs[0]
    print(f"heartbeating: {consumers} consumers x {virtual_s:,} virtual s (poll every "
          f"{args.poll_ms} ms, gc {args.gc}, {args.repeat} run(s)): "
          f"{_range([x['wall_s'] for x in runs], '{:.2f}')} wall s -> "
          f"{_range(wall)}x virtual/wall ({_range(cpu)}x virtual/CPU); "
          f"{r['events']:,} events ({r['events'] / virtual_s:,.0f} per virtual s), "
          f"{r['expired']} session expiries, generation {r['generation']}")
    label = "100 consumers x 1 h" if not args.quick else f"{consumers} consumers (quick)"
    best = max(wall)
    print(f"  target ({label}) >= {TARGET:,}x virtual/wall: best {best:,.0f}x = "
          f"{best / TARGET:.2f} of target -> {'MET' if best >= TARGET else 'MISS'}")

    if not args.no_calls:
        c = calls_per_virtual_second(consumers, args.poll_ms)
        print(f"  machine-independent: {c['calls']:,.0f} Python calls and {c['events']:,.0f} "
              f"events per virtual s ({c['calls_per_event']:.1f} calls per event); "
              f"{c['us_per_event']:.1f} CPU us per event vs {c['floor_us_per_event']:.2f} for a "
              f"no-op event on a bare Scheduler (floor, same run): "
              f"{c['us_per_event'] / c['floor_us_per_event']:.0f}x the floor")

    bg = [big_group(members, args.poll_ms) for _ in range(args.repeat)]
    print(f"big group: {members:,} members Stable after "
          f"{_range([b['wall_s'] for b in bg], '{:.2f}')} wall s "
          f"({_range([b['cpu_s'] for b in bg], '{:.2f}')} CPU s; "
          f"{bg[0]['virtual_ms'] / 1000:.1f} virtual s, generation {bg[0]['generation']})")


if __name__ == "__main__":
    main()
