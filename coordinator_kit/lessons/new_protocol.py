"""Notebook 09, the new protocol: one fault under classic eager, classic cooperative and the
consumer group protocol (KIP-848), the views its cells show, and the checks of its exercises.

The runs are `coordinator_kit.protocols.compare_protocols` (each protocol on its own virtual
clock, measured alike); this module only shapes them for the notebook: tables, the ownership
lanes, per-member timelines, log excerpts in Kafka's wording, and the exercises' checks.
Everything is deterministic: the same cell prints the same output on every run.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from ..eras.api import Fault, Scenario
from ..feedback import Feedback, not_answered, wrong_counts
from ..protocols import PROTOCOL_SCENARIOS, PROTOCOLS, ProtocolComparison, compare_protocols
from .heartbeats import LogView, Picture, Table, unanswered

__all__ = ["SHORT", "SCENARIOS", "story", "run", "comparison_table", "requests_table", "member_table",
           "lanes", "log_excerpt", "my_scenario", "EXERCISE_2_CHOICES",
           "check_stopped_on_leave", "check_why_later"]

GROUP = "group-1"

SCENARIOS = PROTOCOL_SCENARIOS
"""The named scenarios (`protocols.compare.PROTOCOL_SCENARIOS`)."""

SHORT: dict[str, str] = {"eager": "classic eager", "cooperative": "classic cooperative",
                         "consumer": "KIP-848"}
"""Protocol name -> the short name the notebook's tables use."""

_STORY = (
    {"protocol": "classic eager", "configured by": "partition.assignment.strategy=range",
     "who assigns": "the group leader, a consumer (JoinGroup, SyncGroup)",
     "when a rebalance starts": "every member revokes every partition, then rejoins",
     "group-wide barrier": "yes: JoinGroup waits for every member",
     "rounds for one move": "1"},
    {"protocol": "classic cooperative", "configured by":
        "partition.assignment.strategy=cooperative-sticky (KIP-429)",
     "who assigns": "the group leader, a consumer (JoinGroup, SyncGroup)",
     "when a rebalance starts": "members keep what stays theirs; only moved partitions are "
                                "revoked",
     "group-wide barrier": "yes, in each of the two rounds",
     "rounds for one move": "2 (revoke, then assign)"},
    {"protocol": "KIP-848", "configured by": "group.protocol=consumer (Kafka 4.0)",
     "who assigns": "the group coordinator (server assignor uniform or range)",
     "when a rebalance starts": "each member reconciles on its own heartbeat: revokes what it "
                                "loses, then gets what it gains",
     "group-wide barrier": "no",
     "rounds for one move": "1 new target assignment (one group epoch)"},
)


def story() -> Table:
    """The three protocols in one table."""
    return Table(_STORY, title="Three ways to rebalance one group")


@lru_cache(maxsize=16)
def _run_named(name: str) -> ProtocolComparison:
    return compare_protocols(name)


def run(scenario: str | Scenario) -> ProtocolComparison:
    """A scenario (by name: join, crash, leave, coordinator, long-pause; or a `Scenario`)
    under the three protocols. Named ones are run once and kept."""
    if isinstance(scenario, str):
        if scenario not in PROTOCOL_SCENARIOS:
            raise ValueError(f"no scenario {scenario!r}; the scenarios are "
                             f"{', '.join(PROTOCOL_SCENARIOS)}")
        return _run_named(scenario)
    if not isinstance(scenario, Scenario):
        raise TypeError(f"run takes a scenario name or an eras.api.Scenario, got {scenario!r}")
    return compare_protocols(scenario)


def _title(c: ProtocolComparison) -> str:
    sc = c.scenario
    return f"{sc.name}: {sc.description}" if sc.description else sc.name


def comparison_table(c: ProtocolComparison) -> Table:
    """One row per protocol, measured from the fault (`protocols.compare`)."""
    rows = [{"protocol": SHORT[p.protocol],
             "settled after (ms)": "never" if p.settle_ms is None else p.settle_ms,
             "partitions stopped": len(p.stopped),
             "most stopped at once": p.measures.max_unowned,
             "partitions moved": len(p.moved),
             "nobody consumes (partition-s)": round(p.lost_partition_s, 1),
             "two consumers (partition-s)": round(p.measures.double_ms / 1000, 1),
             "round trips": p.round_trips, "rounds": p.rounds,
             "generation / epoch": f"{p.epoch_before} -> {p.epoch_after}"}
            for p in c.protocols]
    return Table(rows, title=_title(c))


def requests_table(c: ProtocolComparison) -> Table:
    """Requests each protocol's consumers sent to the coordinator from the fault until the
    group settled: one row per API, one column per protocol, and the total."""
    apis = sorted({api for p in c.protocols for api in p.requests})
    rows = [{"request": api, **{SHORT[p.protocol]: p.requests.get(api, 0)
                                for p in c.protocols}} for api in apis]
    rows.append({"request": "total", **{SHORT[p.protocol]: p.round_trips
                                        for p in c.protocols}})
    return Table(rows, title=f"Requests to the coordinator until settled: {c.scenario.name}")


def member_table(c: ProtocolComparison, *, from_ms: int | None = None) -> Table:
    """Per protocol and member: the partitions it could consume, span by span, from the
    fault (or `from_ms`) on."""
    start = from_ms if from_ms is not None else min(
        (f.at_ms for f in c.scenario.faults), default=0)
    rows = []
    for p in c.protocols:
        for name, spans in p.timeline.items():
            shown = [(max(a, start), b, parts) for a, b, parts in spans if b > start]
            if not shown:
                continue
            rows.append({"protocol": SHORT[p.protocol], "member": name,
                         "could consume (virtual s: partitions)": "; ".join(
                             f"{a / 1000:g}-{b / 1000:g}: "
                             f"{', '.join(f'{t}-{n}' for t, n in parts)}"
                             for a, b, parts in shown)})
    return Table(rows, title=f"Who could consume what, from {start / 1000:g} s: "
                             f"{c.scenario.name}")


def lanes(c: ProtocolComparison, *, start_ms: int | None = None,
          end_ms: int | None = None) -> Picture:
    """Who consumes each partition, one panel per protocol, zoomed on the rebalance
    (`protocols.picture.protocol_lanes`)."""
    from ..protocols.picture import protocol_lanes
    from ..viz.plots import figure_svg

    fig = protocol_lanes(c, start_ms=start_ms, end_ms=end_ms)
    return Picture(figure_svg(fig), f"who consumes each partition of {GROUP}: "
                                    f"{c.scenario.name}")


def _stamp(ms: int) -> str:
    """The `[yyyy-mm-dd hh:mm:ss,mmm` a log line of virtual time `ms` starts with."""
    s, milli = divmod(ms, 1000)
    return f"2025-03-03 {9 + s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d},{milli:03d}"


def log_excerpt(c: ProtocolComparison, protocol: str, *contains: str, since_ms: int = 0,
                limit: int = 8, any_of: Iterable[str] = ()) -> LogView:
    """Up to `limit` INFO lines of `protocol`'s run from `since_ms` on that contain every one
    of `contains` (and one of `any_of`, when given)."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"no protocol {protocol!r}; the protocols are {', '.join(PROTOCOLS)}")
    any_of = tuple(any_of)
    stamp = _stamp(since_ms)
    lines = [ln for ln in c[protocol].log_lines("INFO")
             if ln[1:24] >= stamp and all(x in ln for x in contains)
             and (not any_of or any(a in ln for a in any_of))]
    return LogView(lines[:limit])


def _fault(f: Any) -> Fault:
    if isinstance(f, Fault):
        return f
    if isinstance(f, (tuple, list)) and 2 <= len(f) <= 4:
        return Fault(*f)
    raise TypeError(f"a fault is a Fault or a tuple (at_ms, kind, target, duration_ms), "
                    f"got {f!r}")


def my_scenario(faults: Iterable[Any], *, consumers: int = 3, partitions: int = 6,
                run_ms: int | None = None, name: str = "my scenario") -> Scenario:
    """A scenario of your own: `consumers` consumers (consumer-1...) of topic `t` with
    `partitions` partitions, and `faults` as tuples (at_ms, kind, target, duration_ms) or
    `Fault`s (kinds: join, crash, leave, pause, slow, cut, coordinator). `run_ms` defaults to
    60 s after the last fault ends."""
    if isinstance(consumers, bool) or not isinstance(consumers, int) or \
            not 1 <= consumers <= 30:
        raise ValueError(f"consumers is a whole number from 1 to 30, got {consumers!r}")
    if isinstance(partitions, bool) or not isinstance(partitions, int) or \
            not 1 <= partitions <= 60:
        raise ValueError(f"partitions is a whole number from 1 to 60, got {partitions!r}")
    fs = tuple(sorted((_fault(f) for f in faults), key=lambda f: f.at_ms))
    if not fs or len(fs) > 10:
        raise ValueError(f"give 1 to 10 faults, got {len(fs)}")
    if fs[0].at_ms < 10_000:
        raise ValueError(f"the first fault is at {fs[0].at_ms} ms; put it at 10000 ms or later, "
                         f"once every protocol's group has settled")
    if any(f.kind == "partitions" for f in fs):
        raise ValueError("partitions faults are not compared here (notebook 07 has them)")
    names = tuple(f"consumer-{i}" for i in range(1, consumers + 1))
    for f in fs:
        if f.kind not in ("join", "coordinator") and f.target not in names:
            raise ValueError(f"fault {f.kind} at {f.at_ms} ms names {f.target!r}; the "
                             f"consumers are consumer-1 ... consumer-{consumers}")
    if run_ms is None:
        run_ms = max(f.at_ms + (f.duration_ms or 0) for f in fs) + 60_000
    return Scenario(name, {GROUP: names}, {"t": partitions}, fs, run_ms=run_ms)


# ---------------------------------------------------------------------------------------------
# Exercises
# ---------------------------------------------------------------------------------------------


def check_stopped_on_leave(answer: Any) -> Feedback:
    """Exercise 1: {"eager": n, "cooperative": n, "consumer": n}, the partitions that stop
    being consumed (at some moment) when consumer-2 leaves cleanly (scenario "leave")."""
    ex = "Exercise 1"
    if unanswered(answer):
        return not_answered(ex, 'a dict such as {"eager": 1, "cooperative": 1, "consumer": 1}')
    shape = wrong_counts(ex, answer, PROTOCOLS, "partitions")
    if shape is not None:
        return shape
    c = run("leave")
    want = {p.protocol: len(p.stopped) for p in c.protocols}
    if dict(answer) == want:
        return Feedback(ex, "correct",
                        f"Eager: all {want['eager']}, every member revokes everything before "
                        f"rejoining. Cooperative and KIP-848: {want['cooperative']} and "
                        f"{want['consumer']}, only consumer-2's partitions, which had to find "
                        f"a new home; the others never stopped.")
    hints = []
    if answer["eager"] != want["eager"]:
        hints.append("eager rebalancing revokes every partition of every member "
                     "(ConsumerCoordinator.onJoinPrepare)")
    if answer["cooperative"] != want["cooperative"] or answer["consumer"] != want["consumer"]:
        hints.append("in the other two a member stops only what it gives up; count the "
                     "partitions the leaving member held (6 partitions, 3 members)")
    return Feedback(ex, "wrong", f"{dict(answer)} is not it: " + "; ".join(hints) + ".")


EXERCISE_2_CHOICES: dict[str, str] = {
    "a": "the coordinator waits for the leaving member's session to expire (45 s)",
    "b": "the others learn of the new target assignment only at their next heartbeat, "
         "every group.consumer.heartbeat.interval.ms (5 s)",
    "c": "KIP-848 needs two rounds, like cooperative-sticky",
    "d": "the leaving member must commit before the coordinator accepts its leave",
}


def check_why_later(answer: Any) -> Feedback:
    """Exercise 2: why KIP-848 settles later than the classic protocols in "leave" (a letter
    of EXERCISE_2_CHOICES)."""
    ex = "Exercise 2"
    if unanswered(answer):
        return not_answered(ex, 'one letter: "a", "b", "c" or "d"')
    if not isinstance(answer, str) or answer.strip().lower() not in EXERCISE_2_CHOICES:
        return Feedback(ex, "wrong", f"Answer with one letter of {list(EXERCISE_2_CHOICES)}, "
                                     f"got {answer!r}.")
    letter = answer.strip().lower()
    if letter == "b":
        return Feedback(ex, "correct",
                        "The leave heartbeat reaches the coordinator at once and it computes the "
                        "new target at once, but the coordinator never calls a member: each "
                        "hears of it in the answer to its own next heartbeat, up to 5 s later. "
                        "The classic members heard of the rebalance at their next heartbeat "
                        "too, every 3 s.")
    why = {"a": "a clean leave is a heartbeat with member epoch -1: the coordinator removes the "
                "member at once (look at when the epoch changed)",
           "c": "look at the rounds column: one new target assignment",
           "d": "the leave is not refused or delayed; look at when the group epoch moved"}
    return Feedback(ex, "wrong", f"Not {letter}: {why[letter]}.")
