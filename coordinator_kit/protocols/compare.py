"""One fault, three rebalance protocols: what each stopped, for how long, and at what cost.

`compare_protocols(scenario)` runs the scenario (`eras.api.Scenario`: consumers, topics, one
or more faults) under classic eager, classic cooperative and KIP-848 (`designs`), each on its
own virtual clock, sampled by `eras.compare.measure` after every virtual millisecond in which
something happened. Per protocol (`ProtocolMeasures`):

- settle_ms: from the last fault to a settled assignment (every live member agrees on one
  assignment covering every partition once, no rebalance running or pending);
- lost_partition_s: partition-seconds nobody consumed, from the first fault on;
- stopped: partitions that had no consumer at some moment after the fault; moved: partitions
  whose consumer at the end is not their consumer at the fault;
- requests: requests the consumers sent to the coordinator from the first fault until the
  assignment settled (each is one round trip), per API; a crash's count includes the
  heartbeats sent while the coordinator waits for the session to expire;
- rounds: rebalances begun (classic: PreparingRebalance; KIP-848: new target assignments);
- epoch: the group's generation (classic) or group epoch (KIP-848) at the fault and at the end;
- timeline: per member, the partitions it could consume, as (from, to, partitions) spans.

What Kafka's protocols do, and so what the table shows: eager rebalancing revokes every
partition of every member before rejoining (`ConsumerCoordinator.onJoinPrepare`), so all stop;
cooperative-sticky (KIP-429) revokes only what moves, then needs a second rebalance to hand it
over; KIP-848's members reconcile one by one on their own heartbeats
(`ConsumerMembershipManager`), only moved partitions stop and nobody waits for the group.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..eras.api import Fault, Partition, Scenario, build_design
from ..eras.compare import Comparison, Measures, measure
from .designs import ConsumerProtocolDesign, CooperativeDesign, EagerDesign, _Measured

__all__ = ["PROTOCOLS", "PROTOCOL_SCENARIOS", "ProtocolMeasures", "ProtocolComparison",
           "compare_protocols", "protocol_scenario", "member_timeline"]

# protocol name -> design class, in the order tables show them (oldest first)
PROTOCOLS: dict[str, type[_Measured]] = {
    "eager": EagerDesign,
    "cooperative": CooperativeDesign,
    "consumer": ConsumerProtocolDesign,
}

_THREE = {"group-1": ("consumer-1", "consumer-2", "consumer-3")}
_T = {"t": 6}
# faults at 31.5 s: after startup has settled in every protocol, between heartbeats
_AT = 31_500

PROTOCOL_SCENARIOS: dict[str, Scenario] = {s.name: s for s in (
    Scenario("join", _THREE, _T, (Fault(_AT, "join", "consumer-4"),), run_ms=60_000,
             description="a fourth consumer joins a group of three at 31.5 s"),
    Scenario("crash", _THREE, _T, (Fault(_AT, "crash", "consumer-2"),), run_ms=100_000,
             description="consumer-2 dies at 31.5 s (kill -9); the coordinator notices when "
                         "its session (45 s) expires"),
    Scenario("leave", _THREE, _T, (Fault(_AT, "leave", "consumer-2"),), run_ms=60_000,
             description="consumer-2 shuts down cleanly at 31.5 s and says goodbye"),
    Scenario("coordinator", _THREE, _T, (Fault(_AT, "coordinator"),), run_ms=60_000,
             description="the group's coordinator moves to another broker at 31.5 s"),
    Scenario("long-pause", _THREE, _T, (Fault(_AT, "pause", "consumer-2", 50_000),),
             run_ms=150_000, description="consumer-2 freezes for 50 s (a long GC pause) at "
                                         "31.5 s, longer than its 45 s session"),
)}


def protocol_scenario(name: str) -> Scenario:
    """The scenario called `name` (see PROTOCOL_SCENARIOS)."""
    try:
        return PROTOCOL_SCENARIOS[name]
    except KeyError:
        raise ValueError(f"no scenario {name!r}; the scenarios are "
                         f"{', '.join(PROTOCOL_SCENARIOS)}") from None


def member_timeline(m: Measures, group: str, end_ms: int
                    ) -> dict[str, list[tuple[int, int, tuple[Partition, ...]]]]:
    """Per member (by name): (from, to, partitions it could consume) spans, read from the
    ownership changes `eras.compare.measure` sampled; a member holding nothing has no span."""
    held: dict[str, set[Partition]] = {}
    since: dict[str, int] = {}
    spans: dict[str, list[tuple[int, int, tuple[Partition, ...]]]] = {}
    owner: dict[Partition, frozenset[str]] = {}
    for at, g, tp, who in m.changes:
        if g != group:
            continue
        before = owner.get(tp, frozenset())
        owner[tp] = who
        for name in sorted(before ^ who):
            mine = held.setdefault(name, set())
            if mine and since.get(name, at) < at:
                spans.setdefault(name, []).append((since[name], at, tuple(sorted(mine))))
            since[name] = at
            (mine.add if name in who else mine.discard)(tp)
    for name, mine in held.items():
        if mine and since[name] < end_ms:
            spans.setdefault(name, []).append((since[name], end_ms, tuple(sorted(mine))))
    return {name: _merge(s) for name, s in sorted(spans.items())}


def _merge(spans: list[tuple[int, int, tuple[Partition, ...]]]
           ) -> list[tuple[int, int, tuple[Partition, ...]]]:
    """Join touching spans that hold the same partitions (several changes in one instant)."""
    out: list[tuple[int, int, tuple[Partition, ...]]] = []
    for a, b, parts in sorted(spans):
        if out and out[-1][1] == a and out[-1][2] == parts:
            out[-1] = (out[-1][0], b, parts)
        else:
            out.append((a, b, parts))
    return out


@dataclass
class ProtocolMeasures:
    """What one protocol did in one scenario (see the module docstring for each figure)."""

    protocol: str
    title: str
    measures: Measures
    settle_ms: int | None
    lost_partition_s: float
    stopped: tuple[Partition, ...]
    moved: tuple[Partition, ...]
    requests: dict[str, int]
    rounds: int
    epoch_before: int | None
    epoch_after: int | None
    timeline: dict[str, list[tuple[int, int, tuple[Partition, ...]]]] = field(repr=False)
    # the design as the run left it (its cluster, trace and log lines)
    design: _Measured | None = field(default=None, repr=False, compare=False)

    def log_lines(self, level: str = "INFO") -> list[str]:
        """The run's log lines (the cluster's, Kafka's wording)."""
        return [] if self.design is None else self.design.log_lines(level)

    @property
    def round_trips(self) -> int:
        return sum(self.requests.values())

    def row(self) -> dict[str, Any]:
        return {"protocol": self.title, "settle_ms": self.settle_ms,
                "lost_partition_s": self.lost_partition_s,
                "max_stopped": self.measures.max_unowned,
                "stopped": len(self.stopped), "moved": len(self.moved),
                "round_trips": self.round_trips, "rounds": self.rounds,
                "epoch": f"{self.epoch_before} -> {self.epoch_after}"}


@dataclass
class ProtocolComparison:
    """One scenario under each protocol, oldest protocol first."""

    scenario: Scenario
    protocols: list[ProtocolMeasures]
    group: str = "group-1"

    def rows(self) -> list[dict[str, Any]]:
        return [p.row() for p in self.protocols]

    def request_rows(self) -> list[dict[str, Any]]:
        """Round trips per API, one row per protocol (0 where a protocol sent none)."""
        apis = sorted({api for p in self.protocols for api in p.requests})
        return [{"protocol": p.title, **{api: p.requests.get(api, 0) for api in apis}}
                for p in self.protocols]

    def table(self) -> str:
        """The rows as fixed-width text (deterministic: the same scenario, the same text)."""
        rows = self.rows()
        cols = list(rows[0])
        cells = [[str(c) for c in cols]] + [[_cell(r[c]) for c in cols] for r in rows]
        widths = [max(len(row[i]) for row in cells) for i in range(len(cols))]
        lines = ["  ".join(v.ljust(w) if i == 0 else v.rjust(w)
                           for i, (v, w) in enumerate(zip(row, widths))) for row in cells]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)

    def to_pandas(self) -> Any:
        import pandas as pd  # only the views need pandas
        return pd.DataFrame(self.rows()).set_index("protocol")

    def as_eras_comparison(self) -> Comparison:
        """The same runs as an `eras.compare.Comparison` (for `viz.ownership.ownership_lanes`)."""
        return Comparison(self.scenario, [p.measures for p in self.protocols])

    def timelines(self) -> str:
        """Per protocol, per member: what it could consume, span by span (seconds), as text."""
        out: list[str] = []
        start = min(f.at_ms for f in self.scenario.faults) if self.scenario.faults else 0
        for p in self.protocols:
            out.append(p.title)
            for name, spans in p.timeline.items():
                shown = [(a, b, parts) for a, b, parts in spans if b > start]
                if not shown:
                    continue
                text = ", ".join(f"{max(a, start) / 1000:g}-{b / 1000:g}s "
                                 f"{_parts(parts)}" for a, b, parts in shown)
                out.append(f"  {name}: {text}")
        return "\n".join(out)

    def __getitem__(self, protocol: str) -> ProtocolMeasures:
        for p in self.protocols:
            if p.protocol == protocol:
                return p
        raise KeyError(f"no protocol {protocol!r} in this comparison; it has "
                       f"{', '.join(p.protocol for p in self.protocols)}")


def _cell(value: Any) -> str:
    if value is None:
        return "never"
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)


def _parts(parts: tuple[Partition, ...]) -> str:
    return "{" + ",".join(f"{t}-{p}" for t, p in parts) + "}"


def _measure_one(name: str, scenario: Scenario, group: str) -> ProtocolMeasures:
    cls = PROTOCOLS[name]
    design = build_design(cls, scenario)
    m = measure(design, scenario, checks=False)
    faults = sorted(f.at_ms for f in scenario.faults)
    first = faults[0] if faults else 0
    last = faults[-1] if faults else 0
    settled_at = scenario.run_ms if m.settle_ms is None else last + m.settle_ms
    at_fault: dict[Partition, frozenset[str]] = {}
    now: dict[Partition, frozenset[str]] = {}
    stopped: set[Partition] = set()
    for at, g, tp, who in m.changes:
        if g != group:
            continue
        if at <= first:
            at_fault[tp] = who
        if at >= first and not who:
            stopped.add(tp)
        now[tp] = who
    moved = {tp for tp, who in now.items() if at_fault.get(tp) != who}
    before = design.epoch_at_fault.get(group, design.epoch(group))
    return ProtocolMeasures(
        name, cls.title, m, m.settle_ms, m.unowned_ms / 1000, tuple(sorted(stopped)),
        tuple(sorted(moved)), design.requests.between(first, settled_at),
        m.rounds, before, design.epoch(group), member_timeline(m, group, scenario.run_ms),
        design)


def compare_protocols(scenario: Scenario | str,
                      protocols: Sequence[str] | Iterable[str] = tuple(PROTOCOLS), *,
                      group: str = "group-1") -> ProtocolComparison:
    """Run `scenario` (or the PROTOCOL_SCENARIOS one by that name) under each of `protocols`
    and measure each."""
    if isinstance(scenario, str):
        scenario = protocol_scenario(scenario)
    if not isinstance(scenario, Scenario):
        raise TypeError(f"scenario is an eras.api.Scenario or the name of one of "
                        f"{', '.join(PROTOCOL_SCENARIOS)}, got {scenario!r}")
    names = list(protocols)
    unknown = [n for n in names if n not in PROTOCOLS]
    if unknown or not names:
        raise ValueError(f"unknown protocol(s) {unknown or names}; the protocols are "
                         f"{', '.join(PROTOCOLS)}")
    if group not in scenario.consumers:
        raise ValueError(f"scenario {scenario.name!r} has no group {group!r}; its groups are "
                         f"{', '.join(scenario.consumers)}")
    return ProtocolComparison(scenario, [_measure_one(n, scenario, group) for n in names],
                              group)
