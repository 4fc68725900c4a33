"""Run one `Scenario` under each coordination design and measure the same things in each.

Each design runs on its own virtual clock. The runner applies the scenario's faults at their
instants and, after the last callback of every virtual millisecond in which something happened,
samples who consumes each partition (`Design.fetching`) and whether each group has settled; a
sample holds until the next one, so the durations below are exact in virtual time. Transient
states inside one millisecond do not count.

Measured from the first fault on (the designs start at different speeds; startup is not what is
compared; a scenario without faults is measured from 0):

- settle_ms: from the last fault until every group has settled for good (settled then, and
  still settled at the end of the run); None when it never does;
- unowned_ms / max_unowned: partition-milliseconds nobody consumes, and the most partitions
  without a consumer at one time;
- double_ms / max_double: partition-milliseconds with two or more would-be consumers, and the
  most such partitions at one time;
- messages: requests and replies exchanged with the coordinator or ZooKeeper;
- rounds: rebalance rounds begun;
- duplicates: records handed to the application more than once (whole run).

The same samples feed the checker hooks I1-I4 (`eras.checks`), over the whole run:
`Measures.checks` holds their report, `Comparison.check_rows()` tabulates them.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .api import Design, Partition, Scenario
from .checks import CheckReport, Checker

__all__ = ["DESIGNS", "Measures", "Comparison", "build", "measure", "compare"]

# design name -> module with `build(scenario)`; in the order tables show them (oldest first)
DESIGNS: dict[str, str] = {
    "zookeeper": "coordinator_kit.eras.zookeeper",
    "central": "coordinator_kit.eras.central",
    "classic": "coordinator_kit.eras.classic",
}


def build(name: str, scenario: Scenario) -> Design:
    """The design called `name`, built for `scenario` (its consumers started at 0)."""
    if name not in DESIGNS:
        raise ValueError(f"unknown design {name!r}; the designs are {', '.join(DESIGNS)}")
    unknown = sorted(set(scenario.settings) - set(DESIGNS))
    if unknown:
        raise ValueError(f"settings for unknown design(s) {unknown}; settings are keyed by "
                         f"design name: {', '.join(DESIGNS)}")
    design = importlib.import_module(DESIGNS[name]).build(scenario)
    if not isinstance(design, Design):  # pragma: no cover - a design module's own mistake
        raise TypeError(f"{DESIGNS[name]}.build returned {type(design).__name__}, not a Design")
    return design


@dataclass
class Measures:
    """What one design did in one scenario (see the module docstring for each figure)."""

    design: str
    title: str
    settle_ms: int | None
    unowned_ms: int
    max_unowned: int
    double_ms: int
    max_double: int
    messages: int
    rounds: int
    duplicates: int
    # (time, group, partition, consumers) each time a partition's consumers changed
    changes: list[tuple[int, str, Partition, frozenset[str]]] = field(default_factory=list)
    # the checker hooks I1-I4 over the whole run (None when measured without them)
    checks: CheckReport | None = None

    def row(self) -> dict[str, Any]:
        return {"design": self.title, "settle_ms": self.settle_ms, "unowned_ms": self.unowned_ms,
                "max_unowned": self.max_unowned, "double_ms": self.double_ms,
                "max_double": self.max_double, "messages": self.messages, "rounds": self.rounds,
                "duplicates": self.duplicates}


def measure(design: Design, scenario: Scenario, *, checks: bool = True) -> Measures:
    """Run `design` (as built, at time 0) through `scenario` and measure it (and, with
    `checks`, run the checker hooks of `eras.checks` over it)."""
    sched = design.scheduler
    groups = list(scenario.consumers)
    design.ledger.groups.update({name: g for g, names in scenario.consumers.items()
                                 for name in names})
    design.ledger.groups.update({f.target: groups[0] for f in scenario.faults
                                 if f.kind == "join" and f.target})
    checker = Checker(design, scenario) if checks else None
    faults = sorted(scenario.faults, key=lambda f: f.at_ms)
    start = faults[0].at_ms if faults else 0
    last_fault = faults[-1].at_ms if faults else 0
    end = scenario.run_ms
    state: dict[tuple[str, Partition], frozenset[str]] = {}
    changes: list[tuple[int, str, Partition, frozenset[str]]] = []
    unowned_ms = double_ms = max_unowned = max_double = 0
    settled_since: int | None = None
    messages_at_start = rounds_at_start = 0
    counted_from = 0  # the time the current sample holds from
    n_unowned = n_double = 0

    def sample(now: int) -> None:
        nonlocal n_unowned, n_double, max_unowned, max_double, settled_since
        n_unowned = n_double = 0
        seen: dict[str, dict[Partition, frozenset[str]]] = {}
        for g in groups:
            seen[g] = fetching = design.fetching(g)
            for tp, who in fetching.items():
                if state.get((g, tp)) != who:
                    state[(g, tp)] = who
                    changes.append((now, g, tp, who))
                n_unowned += not who
                n_double += len(who) > 1
        if now >= start:
            max_unowned = max(max_unowned, n_unowned)
            max_double = max(max_double, n_double)
        settled = {g: design.settled(g) for g in groups}
        if checker is not None:
            checker.sample(now, seen, settled)
        if all(settled.values()):
            if settled_since is None:
                settled_since = now
        else:
            settled_since = None

    def hold_until(now: int) -> None:
        """The last sample held from `counted_from` to `now`: add its durations."""
        nonlocal unowned_ms, double_ms, counted_from
        lo = max(counted_from, start)
        if now > lo:
            unowned_ms += n_unowned * (now - lo)
            double_ms += n_double * (now - lo)
        counted_from = now

    sample(sched.now)
    pending = list(faults)
    started = False
    while True:
        nxt = sched.peek()
        fault_at = pending[0].at_ms if pending else None
        if fault_at is not None and (nxt is None or fault_at <= nxt) and fault_at <= end:
            if fault_at == start and not started:
                started = True
                messages_at_start = design.coordination_messages()
                rounds_at_start = sum(design.rebalance_rounds(g) for g in groups)
            sched.run_until(fault_at)
            hold_until(fault_at)
            while pending and pending[0].at_ms == fault_at:
                design.apply(pending.pop(0))
            sched.run_until(fault_at)          # what the faults set off at once
            sample(fault_at)
            continue
        if nxt is None or nxt > end:
            break
        sched.run_until(nxt)                   # every callback of that millisecond
        hold_until(nxt)
        sample(nxt)
    sched.run_until(end)
    hold_until(end)
    settle = None
    if settled_since is not None:
        settle = max(settled_since, last_fault) - last_fault if faults else settled_since
    return Measures(design.name, design.title, settle, unowned_ms, max_unowned, double_ms,
                    max_double, design.coordination_messages() - messages_at_start,
                    sum(design.rebalance_rounds(g) for g in groups) - rounds_at_start,
                    design.ledger.duplicates, changes,
                    None if checker is None else checker.finish(end))


@dataclass
class Comparison:
    """One scenario's measures under each design, oldest design first."""

    scenario: Scenario
    measures: list[Measures]

    def rows(self) -> list[dict[str, Any]]:
        return [m.row() for m in self.measures]

    def check_rows(self) -> list[dict[str, Any]]:
        """The checker hooks' counts, one row per design (`CheckReport.row`)."""
        return [m.checks.row() for m in self.measures if m.checks is not None]

    def to_pandas(self) -> Any:
        import pandas as pd  # only the views need pandas
        return pd.DataFrame(self.rows()).set_index("design")

    def __getitem__(self, design: str) -> Measures:
        for m in self.measures:
            if m.design == design:
                return m
        raise KeyError(f"no design {design!r} in this comparison; it has "
                       f"{', '.join(m.design for m in self.measures)}")


def compare(scenario: Scenario, designs: Sequence[str] | Iterable[str] = tuple(DESIGNS)
            ) -> Comparison:
    """Run `scenario` under each of `designs` and measure each."""
    return Comparison(scenario, [measure(build(name, scenario), scenario) for name in designs])
