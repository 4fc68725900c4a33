"""A 1,000-member group loses one member: the consumer group protocol (KIP-848) next to classic.

Run from the repository root::

    .venv/bin/python benchmarks/consumer_groups.py                 # 1,000 members, one leaves
    .venv/bin/python benchmarks/consumer_groups.py --quick         # 200 members
    .venv/bin/python benchmarks/consumer_groups.py --fault crash   # one dies (waits 45 s; slow)
    .venv/bin/python benchmarks/consumer_groups.py --members 500 --protocols eager consumer

Each protocol (`coordinator_kit.protocols.PROTOCOLS`: classic eager with range, classic
cooperative with cooperative-sticky, KIP-848 with the uniform server assignor) gets its own
cluster: 3 brokers, one topic with `--partitions-per-member` partitions per member (2), every
member's application polling every 1 s (as `benchmarks/simulation.py`), trace at INFO. Once the
group has settled, one member in the middle of the group leaves cleanly (or crashes, with
`--fault crash`) half a second after a whole virtual second, and the run is sampled after every
virtual millisecond in which something happened (as `eras.compare.measure` samples: who could
consume each partition, whether the group has settled), until it has settled again.

Printed per protocol: the virtual time from the fault to a settled assignment, the partitions
that stopped being consumed (how many, the most at one time, partition-seconds without a
consumer), rebalance rounds, requests sent to the coordinator, the group's generation or epoch;
and wall times: setting the group up, the simulation from the fault to the settled assignment
(the scheduler's work only), and the sampling (the benchmark's own reading of the cluster). The
last column and the ratio rows divide each figure by the first protocol's, measured in the same
run (classic eager unless `--protocols` says otherwise).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from coordinator_kit.eras.api import Fault  # noqa: E402
from coordinator_kit.protocols import PROTOCOLS  # noqa: E402

GROUP = "group-1"
TOPIC = "events"
POLL_MS = 1_000
LIMIT_MS = 300_000   # give up when a group has not settled this long after the fault


def _settle(design: Any, limit_ms: int) -> None:
    """Run whole virtual seconds until the group has settled (startup)."""
    deadline = design.scheduler.now + limit_ms
    while not design.settled(GROUP):
        if design.scheduler.now >= deadline:
            raise RuntimeError(f"{design.title}: the group did not settle within "
                               f"{limit_ms} ms of virtual time")
        design.cluster.run_for(1_000)


def run(protocol: str, members: int, per_member: int, fault_kind: str) -> dict[str, Any]:
    cls = PROTOCOLS[protocol]
    wall0 = time.perf_counter()
    design = cls({TOPIC: members * per_member}, trace_level="INFO")
    cluster, sched = design.cluster, design.scheduler
    for i in range(members):
        name = f"c{i}"
        design.add_consumer(name, GROUP, (TOPIC,))
        cluster.consumer(name).set_processing_ms(POLL_MS)
    _settle(design, LIMIT_MS)
    setup_wall = time.perf_counter() - wall0
    setup_virtual = sched.now

    at = (sched.now // 1_000 + 1) * 1_000 + 500
    cluster.run_for(at - sched.now)
    victim = f"c{members // 2}"
    rounds0 = design.rebalance_rounds(GROUP)
    sent0 = len(design.requests.sent)
    epoch0 = design.epoch(GROUP)
    design.apply(Fault(at, fault_kind, victim))

    sim_wall = sample_wall = 0.0
    held = design.fetching(GROUP)
    stopped: set[tuple[str, int]] = set()
    lost_ms = max_stopped = n_stopped = 0
    last = sched.now
    settled_at = None
    while True:
        t0 = time.perf_counter()
        nxt = sched.peek()
        if nxt is None or nxt - at > LIMIT_MS:
            sim_wall += time.perf_counter() - t0
            break
        cluster.run_for(nxt - sched.now)          # every callback of that millisecond
        t1 = time.perf_counter()
        sim_wall += t1 - t0
        lost_ms += n_stopped * (nxt - last)       # the last sample held until now
        last = nxt
        held = design.fetching(GROUP)
        nobody = [tp for tp, who in held.items() if not who]
        n_stopped = len(nobody)
        stopped.update(nobody)
        max_stopped = max(max_stopped, n_stopped)
        done = design.settled(GROUP)
        sample_wall += time.perf_counter() - t1
        if done:
            settled_at = nxt
            break
    requests = design.requests.sent[sent0:]
    return {"protocol": protocol, "title": cls.title, "members": members,
            "partitions": members * per_member,
            "setup_wall_s": setup_wall, "setup_virtual_ms": setup_virtual,
            "settle_ms": None if settled_at is None else settled_at - at,
            "stopped": len(stopped), "max_stopped": max_stopped,
            "lost_partition_s": lost_ms / 1000,
            "rounds": design.rebalance_rounds(GROUP) - rounds0,
            "requests": len(requests),
            "epoch": f"{epoch0} -> {design.epoch(GROUP)}",
            "sim_wall_s": sim_wall, "sample_wall_s": sample_wall}


SHORT = {"eager": "classic eager", "cooperative": "classic coop.", "consumer": "KIP-848"}

ROWS = [  # (label, key, format)
    ("virtual time to a settled assignment (s)", "settle_ms", lambda v: f"{v / 1000:.3f}"),
    ("partitions that stopped being consumed", "stopped", "{:,}".format),
    ("  most at one time", "max_stopped", "{:,}".format),
    ("  partition-seconds without a consumer", "lost_partition_s", "{:,.1f}".format),
    ("rebalance rounds", "rounds", "{:,}".format),
    ("requests to the coordinator", "requests", "{:,}".format),
    ("generation / group epoch", "epoch", str),
    ("wall: group setup (s)", "setup_wall_s", "{:.2f}".format),
    ("wall: simulation, fault to settled (s)", "sim_wall_s", "{:.3f}".format),
    ("wall: sampling (s)", "sample_wall_s", "{:.2f}".format),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=None)
    parser.add_argument("--partitions-per-member", type=int, default=2)
    parser.add_argument("--fault", choices=("leave", "crash"), default="leave")
    parser.add_argument("--protocols", nargs="+", choices=tuple(PROTOCOLS),
                        default=list(PROTOCOLS))
    parser.add_argument("--quick", action="store_true", help="200 members")
    args = parser.parse_args(argv)
    members = args.members or (200 if args.quick else 1_000)
    if members < 2 or args.partitions_per_member < 1:
        parser.error("--members must be >= 2 and --partitions-per-member >= 1")
    print(f"{members:,} members, {members * args.partitions_per_member:,} partitions, one "
          f"member {'leaves' if args.fault == 'leave' else 'crashes'}; "
          f"Python {platform.python_version()}, {os.cpu_count()} CPUs")
    results = []
    for name in args.protocols:
        r = run(name, members, args.partitions_per_member, args.fault)
        print(f"  {r['title']}: set up in {r['setup_wall_s']:.1f} s wall "
              f"({r['setup_virtual_ms'] / 1000:.0f} virtual s), settled "
              f"{r['settle_ms']} ms after the fault", flush=True)
        results.append(r)
    base = results[0]
    width = max(len(label) for label, _, _ in ROWS)
    cols = [SHORT[r["protocol"]] for r in results]
    cw = [max(len(c), 12) for c in cols]
    print()
    print(" " * width + "  " + "  ".join(c.rjust(w) for c, w in zip(cols, cw)))
    for label, key, fmt in ROWS:
        cells = ["never" if r[key] is None else fmt(r[key]) for r in results]
        print(label.ljust(width) + "  " + "  ".join(c.rjust(w) for c, w in zip(cells, cw)))
    print()
    print(f"ratios against {SHORT[base['protocol']]} (same run):")
    for label, key, _ in ROWS:
        if key in ("epoch",):
            continue
        cells = []
        for r in results:
            a, b = r[key], base[key]
            cells.append("-" if a is None or b in (None, 0) else f"{a / b:.3g}x")
        print(label.ljust(width) + "  " + "  ".join(c.rjust(w) for c, w in zip(cells, cw)))
    for r in results:
        if r["settle_ms"] and r["sim_wall_s"]:
            print(f"  {r['title']}: {r['settle_ms'] / 1000 / r['sim_wall_s']:,.0f}x virtual/wall "
                  f"from the fault to the settled assignment")
    return 0 if all(r["settle_ms"] is not None for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
