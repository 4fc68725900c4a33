"""The kit's partition assignors next to kafka-python's, on the same inputs in the same run.

Run it from the repository root::

    .venv/bin/python benchmarks/assignors.py            # 10/100/1,000 members x 100/1,000/10,000
    .venv/bin/python benchmarks/assignors.py --quick    # 10/100 members x 100/1,000, seconds
    .venv/bin/python benchmarks/assignors.py --budget 30 --only sticky

What is measured
----------------
For each assignor (range, roundrobin, sticky, cooperative-sticky), each group size (members)
and partition count (spread evenly over 10 topics, every member subscribed to every topic):

* **assign**: a fresh assignment (nobody owns anything), timed for the kit and for kafka-python
  3.0.12 (``coordinator_kit.assignors.reference`` feeds it the same input); ratio = kafka-python
  time / kit time. ``spread`` is max - min partitions per member of that assignment.
* **leave**: the member in the middle of the sorted list leaves and the others rejoin owning
  what the kit's fresh assignment gave them (generation 1). Both implementations get this same
  input. ``moved`` counts partitions a remaining member owned and no longer has (the leaver's
  own partitions are not counted); ``spread`` is measured on the new assignment. For
  cooperative-sticky nothing needs withholding here (the leaver's partitions are free), which
  is checked.

Times are wall clock (``time.perf_counter``), the best of three runs for anything under 1 s
and a single run otherwise. kafka-python is skipped for a size where the time it would take,
extrapolated from the smaller sizes already measured (x15 per ten times more partitions, x10
per ten times more members), exceeds ``--budget`` seconds (60 by default). The target case,
sticky with 1,000 members and 10,000 partitions, is always measured (once); kafka-python takes
about 20-35 s there.

Target (printed at the end): the kit's sticky assignor at 1,000 members x 10,000 partitions is at
least 20x faster than kafka-python's, for the fresh assignment and for the rebalance, with a
spread of at most 1 both times. Every kit result is also checked (each partition assigned once,
only to subscribers; range and roundrobin equal to kafka-python's); a failed check exits with
status 1, a missed target with status 0 unless ``--strict`` is given.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

try:
    import coordinator_kit  # noqa: F401
except ImportError:  # run from a checkout without installing the kit
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coordinator_kit.assignors import ASSIGNORS, StickyAssignor, Subscription
from coordinator_kit.assignors.reference import kafka_python_assign
from coordinator_kit.topic import TopicPartition

warnings.filterwarnings("ignore", category=DeprecationWarning)  # kafka-python's schema loader

TOPICS = 10
TARGET_SPEEDUP = 20.0
TARGET_CASE = ("sticky", 1_000, 10_000)
Result = dict[str, tuple[TopicPartition, ...]]


@dataclass
class Side:
    """One implementation's numbers for one operation."""

    seconds: float | None = None
    spread: int | None = None
    moved: int | None = None


@dataclass
class Row:
    assignor: str
    members: int
    partitions: int
    assign_kit: Side
    assign_kp: Side
    leave_kit: Side
    leave_kp: Side
    note: str = ""


def timed(run: Callable[[], Result]) -> tuple[Result, float]:
    gc.collect()
    start = time.perf_counter()
    result = run()
    seconds = time.perf_counter() - start
    if seconds < 1.0:
        for _ in range(2):
            start = time.perf_counter()
            run()
            seconds = min(seconds, time.perf_counter() - start)
    return result, seconds


def spread(result: Result) -> int:
    sizes = [len(p) for p in result.values()]
    return max(sizes) - min(sizes)


def moved(before: Result, after: Result) -> int:
    return sum(len(set(before[m]) - set(after[m])) for m in after)


def check(name: str, counts: Mapping[str, int], subs: Mapping[str, Subscription],
          result: Result, problems: list[str], label: str) -> None:
    seen: set[TopicPartition] = set()
    for member, partitions in result.items():
        for tp in partitions:
            if tp in seen:
                problems.append(f"{label}: {tp} assigned twice")
            seen.add(tp)
            if tp.topic not in subs[member].topics:
                problems.append(f"{label}: {tp} given to {member}, not subscribed")
    if name != "cooperative-sticky" and len(seen) != sum(counts.values()):
        problems.append(f"{label}: {sum(counts.values()) - len(seen)} partitions unassigned")


class Estimator:
    """Guess kafka-python's time for a size from the sizes already measured."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, int, int], float] = {}

    def record(self, name: str, members: int, partitions: int, seconds: float) -> None:
        self.seen[(name, members, partitions)] = seconds

    def estimate(self, name: str, members: int, partitions: int) -> float:
        guesses = [self.seen.get((name, members, partitions // 10), 0.0) * 15,
                   self.seen.get((name, members // 10, partitions), 0.0) * 10]
        return max(guesses)


def run_size(name: str, members: int, partitions: int, estimator: Estimator, budget: float,
             problems: list[str]) -> Row:
    counts = {f"topic-{i}": partitions // TOPICS for i in range(TOPICS)}
    topics = tuple(counts)
    ids = [f"consumer-{i:04d}" for i in range(members)]
    label = f"{name} {members}x{partitions}"
    assignor = ASSIGNORS[name]

    def kit(subs: Mapping[str, Subscription]) -> Callable[[], Result]:
        return lambda: {m: a.partitions for m, a in assignor.assign(counts, subs).items()}

    def ref(subs: Mapping[str, Subscription]) -> Callable[[], Result]:
        return lambda: kafka_python_assign(name, counts, subs)

    fresh = {m: Subscription(topics) for m in ids}
    leaver = ids[members // 2]
    row = Row(name, members, partitions, Side(), Side(), Side(), Side())

    first, row.assign_kit.seconds = timed(kit(fresh))
    row.assign_kit.spread = spread(first)
    check(name, counts, fresh, first, problems, f"{label} assign")
    rejoin = {m: Subscription(topics, owned_partitions=first[m], generation_id=1)
              for m in ids if m != leaver}
    after, row.leave_kit.seconds = timed(kit(rejoin))
    row.leave_kit.spread, row.leave_kit.moved = spread(after), moved(first, after)
    check(name, counts, rejoin, after, problems, f"{label} leave")
    if name == "cooperative-sticky" and StickyAssignor().plan(counts, rejoin).withheld():
        problems.append(f"{label}: a partition was withheld after a plain leave")

    guess = estimator.estimate(name, members, partitions)
    if guess > budget and (name, members, partitions) != TARGET_CASE:
        row.note = f"kafka-python skipped (about {guess:.0f} s each)"
        return row
    theirs, row.assign_kp.seconds = timed(ref(fresh))
    estimator.record(name, members, partitions, row.assign_kp.seconds)
    row.assign_kp.spread = spread(theirs)
    theirs_after, row.leave_kp.seconds = timed(ref(rejoin))
    row.leave_kp.spread, row.leave_kp.moved = spread(theirs_after), moved(first, theirs_after)
    if name in ("range", "roundrobin") and (theirs != first or theirs_after != after):
        problems.append(f"{label}: differs from kafka-python")
    return row


# -- output -------------------------------------------------------------------------------------

def ms(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds * 1000:.1f}" if seconds < 10 else f"{seconds * 1000:.0f}"


def ratio(kit: Side, kp: Side) -> str:
    if kit.seconds is None or kp.seconds is None:
        return "-"
    return f"{kp.seconds / kit.seconds:.0f}x" if kp.seconds >= kit.seconds * 10 \
        else f"{kp.seconds / kit.seconds:.1f}x"


def pair(a: int | None, b: int | None) -> str:
    return f"{'-' if a is None else a}/{'-' if b is None else b}"


HEADER = (f"{'assignor':<19}{'members':>8}{'parts':>7} | {'assign: kit ms':>14}{'kp ms':>10}"
          f"{'ratio':>7}{'spread':>8} | {'leave: kit ms':>13}{'kp ms':>10}{'ratio':>7}"
          f"{'spread':>8}{'moved':>10}")


def line(row: Row) -> str:
    text = (f"{row.assignor:<19}{row.members:>8}{row.partitions:>7} | "
            f"{ms(row.assign_kit.seconds):>14}{ms(row.assign_kp.seconds):>10}"
            f"{ratio(row.assign_kit, row.assign_kp):>7}"
            f"{pair(row.assign_kit.spread, row.assign_kp.spread):>8} | "
            f"{ms(row.leave_kit.seconds):>13}{ms(row.leave_kp.seconds):>10}"
            f"{ratio(row.leave_kit, row.leave_kp):>7}"
            f"{pair(row.leave_kit.spread, row.leave_kp.spread):>8}"
            f"{pair(row.leave_kit.moved, row.leave_kp.moved):>10}")
    return text + (f"  {row.note}" if row.note else "")


def target_check(rows: list[Row]) -> tuple[bool, list[str]]:
    name, members, partitions = TARGET_CASE
    found = [r for r in rows if (r.assignor, r.members, r.partitions) == TARGET_CASE]
    if not found:
        return True, [f"target: {name} {members}x{partitions} not run (use the full run)"]
    row = found[0]
    fresh = row.assign_kp.seconds / row.assign_kit.seconds
    leave = row.leave_kp.seconds / row.leave_kit.seconds
    spreads = (row.assign_kit.spread, row.leave_kit.spread)
    ok = fresh >= TARGET_SPEEDUP and leave >= TARGET_SPEEDUP and max(spreads) <= 1
    return ok, [
        f"target: kit {name} at {members:,} members x {partitions:,} partitions at least "
        f"{TARGET_SPEEDUP:.0f}x faster than kafka-python, spread <= 1",
        f"  assign: kit {row.assign_kit.seconds:.3f} s, kafka-python "
        f"{row.assign_kp.seconds:.1f} s -> {fresh:.0f}x; spread {spreads[0]}",
        f"  leave:  kit {row.leave_kit.seconds:.3f} s, kafka-python "
        f"{row.leave_kp.seconds:.1f} s -> {leave:.0f}x; spread {spreads[1]}",
        f"  {'MET' if ok else 'MISSED'}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="10/100 members x 100/1,000")
    parser.add_argument("--budget", type=float, default=60.0,
                        help="skip kafka-python where it would take longer (seconds)")
    parser.add_argument("--only", choices=sorted(ASSIGNORS), action="append",
                        help="run only this assignor (repeatable)")
    parser.add_argument("--strict", action="store_true", help="exit 1 if the target is missed")
    args = parser.parse_args(argv)

    members_list = (10, 100) if args.quick else (10, 100, 1_000)
    partitions_list = (100, 1_000) if args.quick else (100, 1_000, 10_000)
    names = args.only or ["range", "roundrobin", "sticky", "cooperative-sticky"]
    print(f"{TOPICS} topics, every member subscribed to all; kp = kafka-python 3.0.12; "
          "spread and moved are kit/kp")
    print(HEADER)
    print("-" * len(HEADER))
    rows: list[Row] = []
    problems: list[str] = []
    estimator = Estimator()
    for name in names:  # warm up: imports and kafka-python's schema loading are not timed
        kafka_python_assign(name, {"t": 1}, {"m": Subscription(("t",))})
        ASSIGNORS[name].assign({"t": 1}, {"m": Subscription(("t",))})
    for name in names:
        for members in members_list:
            for partitions in partitions_list:
                row = run_size(name, members, partitions, estimator, args.budget, problems)
                rows.append(row)
                print(line(row), flush=True)
    print()
    ok, lines = target_check(rows)
    print("\n".join(lines))
    if problems:
        print("\nCHECKS FAILED:\n  " + "\n  ".join(problems))
        return 1
    print("checks: every kit result places each partition once, only with subscribers; "
          "range and roundrobin equal kafka-python's")
    return 1 if args.strict and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
