"""The four checker hooks, run over one scenario under any design and reported as data.

`eras.compare.measure` feeds a `Checker` every sample it takes (who consumes each partition,
whether each group has settled) and every hand-over of records to the application
(`ProcessedLedger.on_processed`); the checker also reads what the design offers as an
`eras.api.CheckedDesign` (its committed offsets and the commits its authority for offsets
judged). Unlike the measures, which start at the first fault, the checks cover the whole run:
an invariant holds always or it does not.

* **I1 exclusive consumption**: at most one consumer hands a partition's records to the
  application. Every window in which two or more consumers would (`Design.fetching`) is an
  `Overlap`, with who and when; it is a violation when two or more of them really handed
  records of that partition to the application during the window. No design guarantees it:
  the ZooKeeper consumer and the central draft have no fencing at all, and today's consumer,
  once expelled while frozen (a GC pause longer than `session.timeout.ms`), still processes
  what it holds until its next heartbeat answers UNKNOWN_MEMBER_ID
  (`ConsumerCoordinator.poll`, `AbstractCoordinator.HeartbeatResponseHandler`).
* **I2 committed offsets are kept**: no commit is accepted from a consumer that does not own
  the partition (`not owner`), an accepted commit never moves the offset back (`backwards`),
  and a committed offset is never lost (`lost`: it went back without a commit, as when the
  central coordinator dies before flushing). Today's coordinator keeps it: a commit from a
  member whose generation is gone is refused (`ClassicGroup.validateOffsetCommit`:
  ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID) and offsets are replicated log records; refused
  commits are counted in `refused`. The ZooKeeper consumer writes offsets with a plain
  `updatePersistentPath`: a zombie's write is accepted.
* **I3 bounded convergence**: after the end of the last fault, every group settles within the
  bound its design promises (`CheckedDesign.convergence_bound_ms`) and stays settled. A
  ZooKeeper consumer that exhausted `rebalance.max.retries`, or a central group left in
  REBALANCE_FAILED, never settles: a liveness failure.
* **I4 coverage when settled**: whenever a group has settled, every one of its partitions has
  exactly one consumer.

docs/eras-compare.md explains each figure and what every design does in the scenarios.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .api import CheckedDesign, Design, Partition, Scenario

__all__ = ["Overlap", "OffsetViolation", "Convergence", "CoverageGap", "CheckReport",
           "Checker", "fault_end_ms", "check"]

NOT_OWNER = "not owner"
BACKWARDS = "backwards"
LOST = "lost"


@dataclass(frozen=True)
class Overlap:
    """I1: from `start_ms` to `end_ms` (None: still at the end of the run) two or more
    consumers would hand records of `partition` to the application (`holders`); `handed`
    are those that did, in that window (records processed at its two ends count)."""

    group: str
    partition: Partition
    start_ms: int
    end_ms: int | None
    holders: tuple[str, ...]
    handed: tuple[str, ...]

    @property
    def violation(self) -> bool:
        """Two consumers really handed the partition's records to the application."""
        return len(self.handed) > 1


@dataclass(frozen=True)
class OffsetViolation:
    """I2: a commit accepted from a non-owner, a commit that moved the offset back, or a
    committed offset lost (it went back from `previous` to `offset` without any commit)."""

    at_ms: int
    group: str
    partition: Partition
    kind: str                     # NOT_OWNER, BACKWARDS or LOST
    consumer: str | None
    offset: int | None
    previous: int | None


@dataclass(frozen=True)
class Convergence:
    """I3: the last fault ended at `fault_end_ms`; every group was settled for good from
    `settled_at_ms` (None: not at the end of the run); `bound_ms` is what the design
    promises. `ok` is None when the run ended unsettled before the bound passed."""

    fault_end_ms: int
    bound_ms: int | None
    settled_at_ms: int | None
    run_ms: int

    @property
    def ms(self) -> int | None:
        """From the end of the last fault to settled for good (0 if it never unsettled)."""
        if self.settled_at_ms is None:
            return None
        return max(0, self.settled_at_ms - self.fault_end_ms)

    @property
    def ok(self) -> bool | None:
        ms = self.ms
        if ms is not None:
            return self.bound_ms is None or ms <= self.bound_ms
        if self.bound_ms is None or self.run_ms < self.fault_end_ms + self.bound_ms:
            return None
        return False


@dataclass(frozen=True)
class CoverageGap:
    """I4: at `at_ms` the group had settled, yet `partition` had `holders` (none, or two)."""

    at_ms: int
    group: str
    partition: Partition
    holders: tuple[str, ...]


@dataclass
class CheckReport:
    """The four checks of one design over one run."""

    design: str
    title: str
    overlaps: list[Overlap] = field(default_factory=list)
    offsets: list[OffsetViolation] = field(default_factory=list)
    convergence: Convergence | None = None
    coverage: list[CoverageGap] = field(default_factory=list)
    commits: int = 0              # commits that reached the design's authority for offsets
    refused: int = 0              # of them, refused (fenced, or no coordinator to take them)
    offsets_checked: bool = True  # False: the design does not offer `CheckedDesign`

    @property
    def violations(self) -> list[Overlap]:
        """The I1 windows in which two consumers really handed records over."""
        return [o for o in self.overlaps if o.violation]

    def of_kind(self, kind: str) -> list[OffsetViolation]:
        return [v for v in self.offsets if v.kind == kind]

    def row(self) -> dict[str, Any]:
        """One line of a table: how many of each."""
        conv = self.convergence
        return {"design": self.title, "I1 windows": len(self.overlaps),
                "I1 violations": len(self.violations),
                "I2 not owner": len(self.of_kind(NOT_OWNER)),
                "I2 backwards": len(self.of_kind(BACKWARDS)),
                "I2 lost": len(self.of_kind(LOST)), "commits refused": self.refused,
                "I3 settle_ms": None if conv is None else conv.ms,
                "I3 bound_ms": None if conv is None else conv.bound_ms,
                "I3 ok": None if conv is None else conv.ok,
                "I4 gaps": len(self.coverage)}


def fault_end_ms(scenario: Scenario) -> int:
    """When the last fault ends: a pause, a cut or an outage at its end, the rest at once
    (a `slow` consumer stays slow: it ends when it starts)."""
    end = 0
    for f in scenario.faults:
        lasting = f.kind in ("pause", "cut", "coordinator") and f.duration_ms
        end = max(end, f.at_ms + (f.duration_ms if lasting else 0))  # type: ignore[operator]
    return end


class Checker:
    """Watches one run of one design (`eras.compare.measure` drives it)."""

    def __init__(self, design: Design, scenario: Scenario) -> None:
        self.design = design
        self.scenario = scenario
        self.groups = list(scenario.consumers)
        self.report = CheckReport(design.name, design.title)
        self.offsets_checked = isinstance(design, CheckedDesign)
        self.report.offsets_checked = self.offsets_checked
        self._open: dict[tuple[str, Partition], tuple[int, set[str], set[str]]] = {}
        self._last_hand: dict[tuple[str, Partition], dict[str, int]] = {}
        self._gapped: set[tuple[str, Partition]] = set()
        self._committed: dict[tuple[str, Partition], int] = {}
        self._seen_commits: dict[str, int] = {g: 0 for g in self.groups}
        self._settled_since: int | None = None
        ledger = design.ledger
        chained = ledger.on_processed

        def on_processed(consumer: str, tp: Partition, start: int, end: int) -> None:
            self._handed(consumer, tp)
            if chained is not None:
                chained(consumer, tp, start, end)
        ledger.on_processed = on_processed

    # -- fed by the run ------------------------------------------------------------------------

    def _handed(self, consumer: str, tp: Partition) -> None:
        key = (self.design.ledger.groups.get(consumer, ""), tp)
        now = self.design.scheduler.now
        self._last_hand.setdefault(key, {})[consumer] = now
        window = self._open.get(key)
        if window is not None:
            window[2].add(consumer)

    def sample(self, now: int, fetching: dict[str, dict[Partition, frozenset[str]]],
               settled: dict[str, bool]) -> None:
        """The state after the last callback of `now`, for every group."""
        for g, holders in fetching.items():
            is_settled = settled[g]
            for tp, who in holders.items():
                self._i1(now, g, tp, who)
                if is_settled and len(who) != 1:
                    if (g, tp) not in self._gapped:
                        self._gapped.add((g, tp))
                        self.report.coverage.append(CoverageGap(now, g, tp, tuple(sorted(who))))
                else:
                    self._gapped.discard((g, tp))
        if all(settled.values()):
            if self._settled_since is None:
                self._settled_since = now
        else:
            self._settled_since = None
        if self.offsets_checked:
            self._i2(now)

    def _i1(self, now: int, g: str, tp: Partition, who: frozenset[str]) -> None:
        key = (g, tp)
        window = self._open.get(key)
        if len(who) > 1:
            if window is None:
                handed = {c for c, t in self._last_hand.get(key, {}).items() if t == now}
                self._open[key] = (now, set(who), handed)
            else:
                window[1].update(who)
        elif window is not None:
            del self._open[key]
            self._close(key, window, now)

    def _close(self, key: tuple[str, Partition], window: tuple[int, set[str], set[str]],
               end: int | None) -> None:
        start, holders, handed = window
        self.report.overlaps.append(Overlap(key[0], key[1], start, end, tuple(sorted(holders)),
                                            tuple(sorted(handed))))

    def _i2(self, now: int) -> None:
        design: Any = self.design
        for g in self.groups:
            commits = design.commits(g)
            set_now: set[tuple[Partition, int]] = set()
            for c in commits[self._seen_commits[g]:]:
                self.report.commits += 1
                if not c.accepted:
                    self.report.refused += 1
                    continue
                set_now.add((c.partition, c.offset))
                if not c.owner:
                    self.report.offsets.append(OffsetViolation(
                        c.at_ms, g, c.partition, NOT_OWNER, c.consumer, c.offset, c.previous))
                if c.previous is not None and c.offset < c.previous:
                    self.report.offsets.append(OffsetViolation(
                        c.at_ms, g, c.partition, BACKWARDS, c.consumer, c.offset, c.previous))
            self._seen_commits[g] = len(commits)
            for tp, offset in design.committed(g).items():
                before = self._committed.get((g, tp))
                if before is not None and offset < before and (tp, offset) not in set_now:
                    self.report.offsets.append(OffsetViolation(now, g, tp, LOST, None, offset,
                                                               before))
                self._committed[(g, tp)] = offset

    def finish(self, end_ms: int) -> CheckReport:
        """Close what is still open at the end of the run; I3 from the settled samples."""
        for key, window in sorted(self._open.items()):
            self._close(key, window, None)
        self._open.clear()
        self.report.overlaps.sort(key=lambda o: (o.start_ms, o.group, o.partition))
        bound = self.design.convergence_bound_ms() \
            if isinstance(self.design, CheckedDesign) else None
        self.report.convergence = Convergence(fault_end_ms(self.scenario), bound,
                                              self._settled_since, end_ms)
        return self.report


def check(scenario: Scenario, designs: Any = None) -> dict[str, CheckReport]:
    """Run `scenario` under each design (all of them by default) and check it."""
    from .compare import DESIGNS, compare     # compare drives the checker

    result = compare(scenario, tuple(DESIGNS) if designs is None else designs)
    return {m.design: m.checks for m in result.measures}  # type: ignore[misc]
