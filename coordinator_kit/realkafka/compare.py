"""Differential comparison: the same client scenarios on real Kafka and on the kit.

`normalise(trace)` keeps what a client can see, in a form two runs can share: member ids by
shape, assignments as partition counts per client id (which member gets partitions 0-2 follows
from the order of random member ids, so only the counts are comparable), group state and
members from DescribeGroups, the generations each client joined, how often its listener heard
an assignment, committed offsets and where a restarted consumer resumed, and each step's
duration in seconds, compared with a tolerance (`TIME_TOLERANCE_S`) rather than exactly.
`differences()` lists every fact that differs; `main_compare()` runs everything and prints
the table (`python -m coordinator_kit kafka compare`).
"""

from __future__ import annotations

import concurrent.futures
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .scenarios import (SCENARIOS, Target, Trace, kafka_target, kit_target, run_scenario,
                        unsupported)

__all__ = ["normalise", "differences", "Row", "run_all", "table", "main_compare",
           "TIME_TOLERANCE_S"]

# Wall-clock durations of two runs differ by scheduling, JVM warm-up and the clients' own
# backoffs; within this many seconds they count as the same. A session expiry (6 s) against a
# rebalance (well under a second) stays well apart.
TIME_TOLERANCE_S = 2.5


@dataclass(frozen=True)
class Row:
    scenario: str
    client: str
    what: str
    kafka: Any
    kit: Any
    same: bool


def normalise(trace: Trace) -> dict[str, Any]:
    out: dict[str, Any] = {"error": trace.error or "-"}
    for i, s in enumerate(trace.steps):
        key = f"{i + 1}. {s.label}"
        out[f"{key}: reached"] = s.ok
        out[f"{key}: seconds"] = s.seconds
        out[f"{key}: owned per client"] = {c: len(p) for c, p in s.assignments.items()}
        g = s.group
        out[f"{key}: DescribeGroups"] = (f"{g['state']} {g['protocol_type'] or '-'}/"
                                         f"{g['protocol'] or '-'} "
                                         + (" ".join(f"{c}:{n}" for c, n in g["members"])
                                            or "no members"))
    for what, value in trace.facts.items():
        out[what] = value
    # KIP-848 members have member epochs where classic members have generations
    joined = "member epochs" if trace.scenario.startswith("kip848-") else "generations joined"
    out[joined] = {c: g for c, g in sorted(trace.generations.items())}
    out["member id shape"] = sorted({s for v in trace.member_ids.values() for s in v})
    out["assigned callbacks"] = dict(sorted(trace.assigned_events.items()))
    if trace.committed or trace.scenario == "commit-resume":
        out["committed offsets"] = " ".join(f"{k.rsplit('-', 1)[1]}:{v}"
                                            for k, v in sorted(trace.committed.items()))
        out["restart resumes at committed"] = (
            bool(trace.resumed_at) and trace.resumed_at == trace.committed)
    return out


def _same(what: str, a: Any, b: Any) -> bool:
    if what.endswith(": seconds") and isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) <= TIME_TOLERANCE_S
    return bool(a == b)


def differences(kafka: Trace, kit: Trace) -> list[Row]:
    """Every normalised fact of the two traces, marked same or not."""
    a, b = normalise(kafka), normalise(kit)
    rows = []
    for what in list(a) + [k for k in b if k not in a]:
        va, vb = a.get(what, "(absent)"), b.get(what, "(absent)")
        rows.append(Row(kafka.scenario, kafka.client, what, va, vb, _same(what, va, vb)))
    return rows


def run_all(target: Target, scenarios: Iterable[str], clients: Iterable[str],
            workdir: str, parallel: int = 3) -> dict[tuple[str, str], Trace]:
    """Every scenario x client on one target, `parallel` at a time (each has its own topic and
    group, so they do not meet); pairs a client cannot run (`scenarios.unsupported`) are left
    out."""
    jobs = [(s, c) for s in scenarios for c in clients if unsupported(s, c) is None]
    with concurrent.futures.ThreadPoolExecutor(parallel) as pool:
        futures = {job: pool.submit(run_scenario, target, job[0], job[1], workdir)
                   for job in jobs}
        return {job: f.result() for job, f in futures.items()}


def _fmt(v: Any) -> str:
    if isinstance(v, dict):
        return " ".join(f"{k}:{_fmt(x)}" for k, x in v.items()) or "-"
    if isinstance(v, list):
        return ",".join(_fmt(x) for x in v) or "-"
    if isinstance(v, float):
        return f"{v:.1f}"
    return str(v)


def table(rows: list[Row], only_differences: bool = False) -> str:
    """A Markdown table: scenario, client, what, Kafka, the kit, same?"""
    lines = ["| scenario | client | what | Kafka 4.0.2 | kit | same |", "|---|---|---|---|---|---|"]
    for r in rows:
        if only_differences and r.same:
            continue
        lines.append(f"| {r.scenario} | {r.client} | {r.what} | {_fmt(r.kafka)} | "
                     f"{_fmt(r.kit)} | {'yes' if r.same else '**no**'} |")
    return "\n".join(lines)


def main_compare(clients: list[str] | None = None, scenarios: list[str] | None = None,
                 wire: bool = False, parallel: int = 3) -> int:
    clients = clients or ["kafka-python", "confluent-kafka"]
    scenarios = scenarios or list(SCENARIOS)
    unknown = [s for s in scenarios if s not in SCENARIOS]
    if unknown:
        print(f"kafka compare: unknown scenario(s) {unknown}; known: {', '.join(SCENARIOS)}",
              file=sys.stderr)
        return 2
    workdir = tempfile.mkdtemp(prefix="kafka-compare-")
    print(f"client logs in {workdir}", file=sys.stderr)
    results: dict[str, dict[tuple[str, str], Trace]] = {}
    wires: dict[str, Any] = {}
    for name, make in (("kafka", kafka_target), ("kit", kit_target)):
        with make() as target:
            results[name] = run_all(target, scenarios, clients, workdir, parallel)
            if wire:
                from .wire import run_rebalance_timeout, run_wire
                wires[name] = {**run_wire(target.bootstrap),
                               **run_rebalance_timeout(target.bootstrap)}
    rows = [r for job in results["kafka"]
            for r in differences(results["kafka"][job], results["kit"][job])]
    print(table(rows))
    skipped = [(s, c, unsupported(s, c)) for s in scenarios for c in clients
               if unsupported(s, c)]
    for s, c, why in skipped:
        print(f"not run: {s} with {c}: {why}")
    n = sum(not r.same for r in rows)
    print(f"\n{len(rows)} facts compared, {n} differ (durations within "
          f"{TIME_TOLERANCE_S} s count as the same)")
    if wire:
        from .wire import compare_wire, wire_table
        wrows = compare_wire(wires["kafka"], wires["kit"])
        print()
        print(wire_table(wrows))
        n += sum(not r[-1] for r in wrows)
    return 0 if n == 0 else 1
