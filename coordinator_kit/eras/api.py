"""What every coordination design offers, so one scenario can run under each and be compared.

A design (`Design`) is built from a topic map, a seed and its own settings, runs on its own
`clock.Scheduler` and `trace.Trace`, and answers the same questions at any virtual instant:
which consumers are fetching each partition of a group (`fetching`), whether the group has
settled (`settled`), how many messages went to the coordinator or to ZooKeeper, how many
rebalance rounds ran, and which records were processed more than once (`ProcessedLedger`).
`eras.compare` steps a design event by event and samples these answers; it needs nothing else.

Records are produced as the kit's `Cluster` produces them: every partition of every topic grows
by `produce_rate_per_s` records per virtual second (`end_offset`), so "processed twice" means
the same thing in every design.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..clock import Scheduler
from ..trace import Trace

__all__ = ["build_design", "Fault", "FAULT_KINDS", "Scenario", "Design", "ProcessedLedger", "end_offset",
           "Partition", "Commit", "CheckedDesign"]

Partition = tuple[str, int]
"""(topic, partition): designs from before `TopicPartition` existed use plain pairs."""

FAULT_KINDS: dict[str, str] = {
    "crash": "the consumer process dies (kill -9): its sockets close, its ZooKeeper session "
             "expires after the session timeout, it never comes back",
    "pause": "the consumer process freezes for duration_ms (a long GC pause, SIGSTOP): no thread "
             "runs; buffered records are processed when it wakes",
    "join": "a new consumer starts and joins the scenario's first group",
    "leave": "the consumer shuts down cleanly (it says goodbye where its design lets it)",
    "cut": "the consumer can no longer reach the coordinator (or ZooKeeper), but still reaches "
           "the brokers that hold its partitions, for duration_ms",
    "coordinator": "the coordinator fails: the central coordinator's broker dies, today's "
                   "group coordinator's broker dies (leadership moves), ZooKeeper is "
                   "unreachable for duration_ms in the ZooKeeper design",
    "slow": "the consumer's processing (and so its stop / revoke) takes duration_ms per batch "
            "from now on",
    "partitions": "the topic named by target grows to count partitions (an admin alters it): "
                  "the ZooKeeper consumers' data watch fires, the central coordinator's watch "
                  "fires, today's group leader notices at its next metadata refresh",
}


@dataclass(frozen=True)
class Fault:
    """One fault at a virtual instant. `target` names a consumer (none for `coordinator`, the
    topic for `partitions`); `duration_ms` is needed by pause, cut, slow and (for ZooKeeper)
    coordinator; `count` by partitions (the topic's new partition count)."""

    at_ms: int
    kind: str
    target: str | None = None
    duration_ms: int | None = None
    count: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"fault kind {self.kind!r} is not one of {', '.join(FAULT_KINDS)}")
        if not isinstance(self.at_ms, int) or isinstance(self.at_ms, bool) or self.at_ms < 0:
            raise ValueError(f"at_ms is a whole number of milliseconds >= 0, got {self.at_ms!r}")
        if self.kind != "coordinator" and not self.target:
            what = "topic" if self.kind == "partitions" else "consumer"
            raise ValueError(f"a {self.kind} fault names its {what} (target=...)")
        if self.kind in ("pause", "cut", "slow") and not (
                isinstance(self.duration_ms, int) and self.duration_ms > 0):
            raise ValueError(f"a {self.kind} fault needs duration_ms > 0, got "
                             f"{self.duration_ms!r}")
        if self.kind == "partitions" and not (
                isinstance(self.count, int) and not isinstance(self.count, bool)
                and self.count > 0):
            raise ValueError(f"a partitions fault names its topic (target=...) and the new "
                             f"partition count (count > 0), got count={self.count!r}")


@dataclass(frozen=True)
class Scenario:
    """One description every design runs: the groups and their consumers (all started at 0),
    the topics, a fault schedule, how long to run, and per-design settings (by design name,
    each design's own keys, e.g. {"zookeeper": {"zookeeper.session.timeout.ms": 6000}})."""

    name: str
    consumers: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: {"group-1": ("consumer-1", "consumer-2", "consumer-3")})
    topics: Mapping[str, int] = field(default_factory=lambda: {"t": 6})
    faults: tuple[Fault, ...] = ()
    run_ms: int = 60_000
    seed: int = 0
    produce_rate_per_s: int = 100
    settings: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    description: str = ""


def end_offset(now_ms: int, produce_rate_per_s: int) -> int:
    """The log end offset of every data partition at `now_ms` (as `Cluster.end_offset`)."""
    return now_ms * produce_rate_per_s // 1000


class ProcessedLedger:
    """Which offsets of which partition each consumer processed, to count duplicates.

    A design calls `processed(consumer, partition, start, end)` whenever a consumer hands
    records [start, end) to the application. Two groups reading the same partition is not a
    duplicate: `groups` maps each consumer to its group (`eras.compare` fills it from the
    scenario; a consumer not in it counts in group ""). Ranges are kept merged per group and
    partition, so the ledger stays small however long the run."""

    def __init__(self) -> None:
        self.groups: dict[str, str] = {}
        self._done: dict[tuple[str, Partition], list[list[int]]] = {}   # merged [start, end)
        self.duplicates = 0                                  # records processed again
        self.by_consumer: dict[str, int] = {}                # duplicates each one processed
        self.records = 0
        # called as on_processed(consumer, partition, start, end) on every hand-over (checkers)
        self.on_processed: Callable[[str, Partition, int, int], None] | None = None

    def processed_to(self, partition: Partition, group: str = "") -> int:
        """How far the group has processed `partition`: the end of its highest range (0)."""
        ranges = self._done.get((group, partition))
        return ranges[-1][1] if ranges else 0

    def processed(self, consumer: str, partition: Partition, start: int, end: int) -> int:
        """Record [start, end) as processed by `consumer`; returns how many were repeats."""
        if end <= start:
            return 0
        if self.on_processed is not None:
            self.on_processed(consumer, partition, start, end)
        self.records += end - start
        key = (self.groups.get(consumer, ""), partition)
        ranges = self._done.setdefault(key, [])
        overlap = 0
        for lo, hi in ranges:
            a, b = max(lo, start), min(hi, end)
            if a < b:
                overlap += b - a
        merged: list[list[int]] = []
        lo, hi = start, end
        for r in ranges:
            if r[1] < lo or r[0] > hi:
                merged.append(r)
            else:
                lo, hi = min(lo, r[0]), max(hi, r[1])
        merged.append([lo, hi])
        merged.sort()
        self._done[key] = merged
        if overlap:
            self.duplicates += overlap
            self.by_consumer[consumer] = self.by_consumer.get(consumer, 0) + overlap
        return overlap


    def skipped(self) -> int:
        """Records nobody processed between the first and the last offset processed of each
        group's partition: what a new owner jumped over (0.8.2's consumer with no committed
        offset starts at auto.offset.reset=largest), the opposite of a duplicate."""
        return sum(b[0] - a[1] for ranges in self._done.values()
                   for a, b in zip(ranges, ranges[1:]))


def build_design(cls: Any, scenario: Scenario, topics: tuple[str, ...] | None = None) -> Any:
    """`cls` (a design class taking topics, seed, produce_rate_per_s and settings) built for
    `scenario` with its own settings (`scenario.settings[cls.name]`), every consumer of every
    group started at time 0 on `topics` (default: the scenario's, in its order). The designs'
    `build` functions are this."""
    design = cls(scenario.topics, seed=scenario.seed,
                 produce_rate_per_s=scenario.produce_rate_per_s,
                 settings=scenario.settings.get(cls.name, {}))
    subscribed = tuple(scenario.topics) if topics is None else topics
    for group, names in scenario.consumers.items():
        for name in names:
            design.add_consumer(name, group, subscribed)
    return design


@runtime_checkable
class Design(Protocol):
    """A coordination design built for one scenario (see `eras.compare.build`)."""

    name: str          # "zookeeper", "central", "classic"
    title: str         # for tables: "ZooKeeper consumer (0.8.2)"
    scheduler: Scheduler
    trace: Trace
    ledger: ProcessedLedger

    def add_consumer(self, name: str, group_id: str, topics: tuple[str, ...]) -> None:
        """Start a consumer now (at virtual time `scheduler.now`)."""

    def apply(self, fault: Fault) -> None:
        """Apply one fault now; every kind of `FAULT_KINDS` must be accepted."""

    def fetching(self, group_id: str) -> dict[Partition, frozenset[str]]:
        """For each partition of the group's topics: the consumers that would hand records
        of it to the application right now (fetching, or holding fetched records). Every
        partition appears, with an empty set when nobody consumes it."""

    def settled(self, group_id: str) -> bool:
        """The group's coordination is at rest: every live member agrees on one assignment
        that covers every partition once, and no rebalance is running or pending."""

    def coordination_messages(self) -> int:
        """Requests and replies exchanged with the coordinator (or ZooKeeper) so far."""

    def rebalance_rounds(self, group_id: str) -> int:
        """Rebalance rounds begun for the group so far (a ZooKeeper rebalance attempt of one
        consumer counts once per consumer attempt; a central attempt once; a classic
        generation's PreparingRebalance once)."""

    def log_lines(self, level: str = "INFO") -> list[str]:
        """The log lines the run wrote, in that era's style."""


@dataclass(frozen=True)
class Commit:
    """An offset commit as the design's authority for offsets judged it when it arrived.

    `accepted`: the offset was taken (written to ZooKeeper, kept by the central coordinator,
    answered NONE by the group coordinator); `owner`: by that authority's own record of
    ownership at that instant, the writer owned the partition (the owner znode held one of its
    threads; the central coordinator had started it on the partition; the member's assignment
    in the group's current generation held it); `previous`: the committed offset just before
    (None: there was none); `reason`: why a refused one was refused (Kafka's error name)."""

    at_ms: int
    group: str
    consumer: str
    partition: Partition
    offset: int
    previous: int | None
    accepted: bool = True
    owner: bool = True
    reason: str = ""


@runtime_checkable
class CheckedDesign(Protocol):
    """What `eras.checks` reads besides `Design` (every design of the kit offers it; a design
    without it is checked for I1, I3 and I4 only)."""

    def committed(self, group_id: str) -> dict[Partition, int]:
        """The offset a new owner of each partition would start from now (partitions without
        one are left out)."""

    def commits(self, group_id: str) -> list[Commit]:
        """Every commit that reached the design's authority for offsets so far, in order."""

    def convergence_bound_ms(self) -> int:
        """How long after the end of the last fault the design promises to have settled, from
        its own timers (failure detection, then two full rebalances with every retry)."""
