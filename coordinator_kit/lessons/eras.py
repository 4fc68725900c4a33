"""Notebook 07, how Kafka learned to coordinate: the three designs on one clock, the views its
cells show, and the checks of its exercises.

The designs (`coordinator_kit.eras`; docs/eras-zookeeper.md, docs/eras-central.md):

* Kafka 0.8.2's ZooKeeper consumer (`ZookeeperConsumerConnector`): no coordinator, every
  consumer watches ZooKeeper and rebalances itself;
* the centralised coordinator drafted for 0.9 (Apache wiki, "Central Consumer Coordination"),
  which never shipped: one broker pings every consumer and pushes stop / start-fetcher;
* today's group coordinator (`GroupCoordinator`, classic protocol): one per
  `__consumer_offsets` partition, consumers pull with heartbeats, generations fence.

`run` measures one `eras.api.Scenario` under each (`eras.compare.measure`) and keeps the
designs, so a cell can show the comparison table, the ownership lanes and the evidence only one
design has (ZooKeeper reads, claim collisions, zombie commits accepted or refused, log lines).
Everything runs on virtual time from the scenario's seed: the same cell prints the same output.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ..eras.api import FAULT_KINDS, Design, Fault, Scenario
from ..eras.compare import DESIGNS, Comparison, Measures, build, measure
from ..eras.scenarios import SCENARIOS
from ..feedback import Feedback, not_answered, wrong_counts
from .heartbeats import LogView, Picture, Table, unanswered

__all__ = [
    "FAULT_KINDS", "DESIGN_DIAGRAMS", "LIKE_FOR_LIKE", "EraRun", "story", "state_diagrams",
    "run", "like_for_like", "settings_table", "my_scenario", "comparison_table", "lanes",
    "zombie_table", "herd_table", "groups_table", "log_excerpt", "give_up_run",
    "EXERCISE_2_CHOICES", "EXERCISE_4_SCENARIO",
    "check_two_owners", "check_why_generations", "check_join_rounds", "check_give_up",
]

GROUP = "group-1"

# viz.diagrams.DIAGRAMS keys, oldest design first, with the title each picture gets
DESIGN_DIAGRAMS: dict[str, str] = {
    "zookeeper_consumer": "0.8.2: a ZooKeeper consumer's phases (it rebalances itself)",
    "central_group": "0.9 draft: a group's phase on the one central coordinator",
    "central_consumer": "0.9 draft: a consumer's state (it only answers the coordinator)",
    "classic_group": "0.9 and later: a group on its group coordinator",
}

LIKE_FOR_LIKE: dict[str, dict[str, Any]] = {
    "zookeeper": {"zookeeper.session.timeout.ms": 6000},
    "central": {"session.timeout.ms": 6000},
    "classic": {"session.timeout.ms": 6000, "heartbeat.interval.ms": 2000},
}
"""Settings that give every design the same 6 s failure detection (the ZooKeeper consumer's
default session; three missed 2 s pings; a 6 s session with 2 s heartbeats today)."""

_STORY = (
    {"design": "ZooKeeper consumer", "years": "0.7 - 0.8.2 (2011-2015)",
     "who coordinates": "nobody: every consumer, through ZooKeeper watches",
     "failure detection": "ZooKeeper session (6 s)",
     "who assigns": "every consumer computes its own share",
     "offsets": "ZooKeeper writes",
     "replaced because": "herd effect (N² reads), split brain, claim collisions, bounded "
                         "retries, ZooKeeper write load of offsets, no fencing"},
    {"design": "central coordinator (0.9 draft)", "years": "2012 draft, never shipped",
     "who coordinates": "ONE elected broker for every group",
     "failure detection": "coordinator pings, 3 missed (6 s)",
     "who assigns": "the coordinator (stop-fetcher, start-fetcher)",
     "offsets": "ping replies, flushed to ZooKeeper",
     "replaced because": "one box for all groups, push against Kafka's pull protocol, bounded "
                         "retries leave groups stuck, no generation to fence stale consumers"},
    {"design": "group coordinator (classic)", "years": "0.9 (2015) to today",
     "who coordinates": "one coordinator per __consumer_offsets partition",
     "failure detection": "heartbeats the consumer sends (45 s session)",
     "who assigns": "the group leader, a consumer (JoinGroup, SyncGroup)",
     "offsets": "__consumer_offsets, checked against generation and member id",
     "replaced because": "still here; KIP-848 (4.0) makes rebalances incremental"},
)


def story() -> Table:
    """The three designs in one table: who coordinates, and why each was replaced."""
    return Table(_STORY, title="three designs for one job")


def state_diagrams() -> list[Any]:
    """The state machines of the designs, drawn from the tables their code enforces."""
    from ..viz.diagrams import DIAGRAMS, state_diagram

    return [state_diagram(DIAGRAMS[key], title=title) for key, title in DESIGN_DIAGRAMS.items()]


# ---------------------------------------------------------------------------------------------
# Running a scenario under every design
# ---------------------------------------------------------------------------------------------


@dataclass
class EraRun:
    """One scenario measured under each design, with the designs kept for their evidence.
    `at_fault` holds, per design, figures read when the first fault was applied, so that the
    evidence can be counted from the fault on, as the comparison is."""

    scenario: Scenario
    comparison: Comparison
    designs: dict[str, Design]
    at_fault: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __getitem__(self, design: str) -> Measures:
        return self.comparison[design]


def _figures(design: Design) -> dict[str, Any]:
    """What a design-specific view counts from the first fault on."""
    if design.name == "zookeeper":
        ensemble = design.ensemble  # type: ignore[attr-defined]
        return {"reads_under": dict(ensemble.reads_under), "reads": ensemble.reads(),
                "collisions": design.collisions,  # type: ignore[attr-defined]
                "zombie_commits": len(design.zombie_commits)}  # type: ignore[attr-defined]
    return {"events": len(design.trace.events)}


def _measured(name: str, scenario: Scenario) -> tuple[Design, Measures, dict[str, Any]]:
    design = build(name, scenario)
    seen: dict[str, Any] = {}
    apply = design.apply

    def apply_and_note(fault: Fault) -> None:
        if not seen:
            seen.update(_figures(design))
        apply(fault)
    design.apply = apply_and_note  # type: ignore[method-assign]
    m = measure(design, scenario)
    return design, m, seen or _figures(design)


def _run(scenario: Scenario) -> EraRun:
    designs, measures, at_fault = {}, [], {}
    for name in DESIGNS:
        designs[name], m, at_fault[name] = _measured(name, scenario)
        measures.append(m)
    return EraRun(scenario, Comparison(scenario, measures), designs, at_fault)


@lru_cache(maxsize=None)
def _named(name: str, alike: bool) -> EraRun:
    return _run(like_for_like(name) if alike else SCENARIOS[name])


def run(scenario: str | Scenario, *, like_for_like: bool = False) -> EraRun:
    """`scenario` (a name of `eras.scenarios.SCENARIOS` or a `Scenario`) under every design.
    With `like_for_like`, a named scenario runs with `LIKE_FOR_LIKE` settings."""
    if isinstance(scenario, str):
        if scenario not in SCENARIOS:
            raise ValueError(f"no scenario {scenario!r}; the scenarios are "
                             f"{', '.join(SCENARIOS)}")
        return _named(scenario, like_for_like)
    if not isinstance(scenario, Scenario):
        raise TypeError(f"run takes a scenario name or an eras.api.Scenario, got "
                        f"{type(scenario).__name__}")
    if like_for_like:
        scenario = dataclasses.replace(scenario, settings=LIKE_FOR_LIKE)
    return _run(scenario)


def like_for_like(name: str) -> Scenario:
    """The named scenario with every design detecting failure in 6 s (`LIKE_FOR_LIKE`)."""
    if name not in SCENARIOS:
        raise ValueError(f"no scenario {name!r}; the scenarios are {', '.join(SCENARIOS)}")
    sc = SCENARIOS[name]
    return dataclasses.replace(sc, name=f"{name}, like for like", settings=LIKE_FOR_LIKE)


def settings_table(settings: Mapping[str, Mapping[str, Any]] = LIKE_FOR_LIKE) -> Table:
    """Per-design settings (as `Scenario.settings` holds them), one row per key."""
    rows = [{"design": _SHORT.get(d, d), "setting": k, "value": v}
            for d, keys in settings.items() for k, v in keys.items()]
    return Table(rows, title="settings per design")


def _fault(f: Any) -> Fault:
    if isinstance(f, Fault):
        return f
    if isinstance(f, Mapping):
        return Fault(**f)
    if isinstance(f, (tuple, list)) and 2 <= len(f) <= 4:
        return Fault(*f)
    raise ValueError(f"a fault is (at_ms, kind, target, duration_ms), e.g. "
                     f"(30_000, 'pause', 'consumer-2', 10_000); got {f!r}")


def my_scenario(faults: Iterable[Any], *, consumers: int = 3, partitions: int = 6,
                run_ms: int | None = None,
                settings: Mapping[str, Mapping[str, Any]] | None = None,
                name: str = "my scenario") -> Scenario:
    """A scenario of your own: `consumers` consumers (consumer-1...) of topic `t` with
    `partitions` partitions, and `faults` as tuples (at_ms, kind, target, duration_ms) or
    `Fault`s. `run_ms` defaults to 60 s after the last fault ends."""
    if not isinstance(consumers, int) or not 1 <= consumers <= 30:
        raise ValueError(f"consumers is a whole number from 1 to 30, got {consumers!r}")
    if not isinstance(partitions, int) or not 1 <= partitions <= 60:
        raise ValueError(f"partitions is a whole number from 1 to 60, got {partitions!r}")
    fs = tuple(sorted((_fault(f) for f in faults), key=lambda f: f.at_ms))
    if len(fs) > 10:
        raise ValueError(f"at most 10 faults, got {len(fs)}")
    names = tuple(f"consumer-{i}" for i in range(1, consumers + 1))
    for f in fs:
        if f.kind not in ("join", "coordinator") and f.target not in names:
            raise ValueError(f"fault {f.kind} at {f.at_ms} ms names {f.target!r}; the "
                             f"consumers are consumer-1 ... consumer-{consumers}")
    if run_ms is None:
        run_ms = max((f.at_ms + (f.duration_ms or 0) for f in fs), default=0) + 60_000
    return Scenario(name, {GROUP: names}, {"t": partitions}, fs, run_ms=run_ms,
                    settings=dict(settings or {}))


# ---------------------------------------------------------------------------------------------
# Views
# ---------------------------------------------------------------------------------------------

_SHORT = {"zookeeper": "ZooKeeper (0.8.2)", "central": "central (0.9 draft)",
          "classic": "group coordinator (0.9+)"}


def comparison_table(er: EraRun) -> Table:
    """The comparison (`eras.compare`): one row per design, measured from the first fault."""
    rows = []
    for m in er.comparison.measures:
        rows.append({"design": _SHORT[m.design],
                     "settled after (ms)": "never" if m.settle_ms is None else m.settle_ms,
                     "nobody consumes (partition-ms)": m.unowned_ms,
                     "nobody: most partitions at once": m.max_unowned,
                     "two consumers (partition-ms)": m.double_ms,
                     "two: most partitions at once": m.max_double,
                     "messages": m.messages, "rounds": m.rounds,
                     "records processed twice": m.duplicates})
    sc = er.scenario
    return Table(rows, title=f"{sc.name}: {sc.description}" if sc.description else sc.name)


def lanes(er: EraRun, group: str = GROUP, *, start_ms: int | None = None,
          end_ms: int | None = None, title: str | None = None,
          partitions: int | None = None) -> Picture:
    """Who consumes each partition, one panel per design (`viz.ownership.ownership_lanes`).
    `partitions` keeps the first few partitions of each topic, so that a large group's lanes
    stay readable."""
    from ..viz.ownership import ownership_lanes
    from ..viz.plots import figure_svg

    comparison = er.comparison
    if partitions is not None:
        if not isinstance(partitions, int) or partitions < 1:
            raise ValueError(f"partitions is a whole number >= 1, got {partitions!r}")
        comparison = Comparison(er.scenario, [dataclasses.replace(
            m, changes=[c for c in m.changes if c[2][1] < partitions])
            for m in comparison.measures])
        title = title or (f"Who consumes partitions 0 to {partitions - 1} of each topic of "
                          f"{group}: {er.scenario.name}")
    fig = ownership_lanes(comparison, group, start_ms=start_ms, end_ms=end_ms, title=title)
    name = title or f"who consumes each partition of {group}: {er.scenario.name}"
    return Picture(figure_svg(fig), name)


def _target(er: EraRun) -> str | None:
    return next((f.target for f in er.scenario.faults if f.target), None)


def _commit_failures(design: Design, since: int) -> int:
    return sum(1 for e in design.trace.events[since:] if e.kind == "offset_commit_failed")


def zombie_table(er: EraRun) -> Table:
    """After a consumer was declared dead while alive (a long pause, a cut): the records
    processed twice, by whom, and what became of the zombie's offset commits."""
    who = _target(er)
    rows = []
    for name, d in er.designs.items():
        m = er[name]
        if name == "zookeeper":
            zc = len(d.zombie_commits) - er.at_fault[name]["zombie_commits"]  # type: ignore
            commits = f"{zc} accepted (a plain ZooKeeper write)"
        elif name == "classic":
            n = _commit_failures(d, er.at_fault[name]["events"])
            commits = f"{n} refused (UNKNOWN_MEMBER_ID)"
        else:
            commits = f"none reach it (it failed {who} and closed the socket)"
        by = d.ledger.by_consumer
        rows.append({"design": _SHORT[name],
                     "two consumers (partition-ms)": m.double_ms,
                     "records processed twice": m.duplicates,
                     f"of them by {who}": by.get(who, 0) if who else None,
                     "by the others": m.duplicates - (by.get(who, 0) if who else 0),
                     f"offset commits of {who} after it was replaced": commits})
    return Table(rows, title=f"{er.scenario.name}: the zombie and its work")


def herd_table(er: EraRun, group: str = GROUP) -> Table:
    """From the first fault on: messages and rounds in each design, and the ZooKeeper
    consumer's herd (reads of every member's registration, claim collisions)."""
    members = len(er.scenario.consumers.get(group, ())) + sum(
        1 for f in er.scenario.faults if f.kind == "join")
    ids = f"/consumers/{group}/ids"
    rows = []
    for name, d in er.designs.items():
        m = er[name]
        row: dict[str, Any] = {"design": _SHORT[name], "members": members,
                               "coordination messages": m.messages,
                               "per member": round(m.messages / members, 1),
                               "rebalance rounds": m.rounds,
                               "ZooKeeper reads of registrations": None,
                               "claim collisions": None}
        if name == "zookeeper":
            before = er.at_fault[name]
            row["ZooKeeper reads of registrations"] = (
                d.ensemble.reads_under.get(ids, 0)  # type: ignore[attr-defined]
                - before["reads_under"].get(ids, 0))
            row["claim collisions"] = d.collisions - before["collisions"]  # type: ignore
        rows.append(row)
    return Table(rows, title=f"{er.scenario.name}: what one change costs")


def groups_table(er: EraRun) -> Table:
    """Per design: how many of the scenario's groups stopped consuming after the first fault,
    and for how long the longest stop of one of their partitions lasted."""
    start = min((f.at_ms for f in er.scenario.faults), default=0)
    rows = []
    for m in er.comparison.measures:
        stopped: set[str] = set()
        longest = 0
        empty_since: dict[tuple[str, Any], int] = {}
        for ts, g, tp, who in m.changes:
            if not who:
                empty_since.setdefault((g, tp), ts)
            elif (g, tp) in empty_since:
                t0 = empty_since.pop((g, tp))
                if ts > start and ts > t0:
                    stopped.add(g)
                    longest = max(longest, ts - max(t0, start))
        for (g, _tp), t0 in empty_since.items():
            if er.scenario.run_ms > max(t0, start) and t0 >= start:
                stopped.add(g)
                longest = max(longest, er.scenario.run_ms - t0)
        rows.append({"design": _SHORT[m.design], "groups": len(er.scenario.consumers),
                     "groups that stopped": len(stopped),
                     "longest stop of a partition (ms)": longest,
                     "rebalance rounds": m.rounds})
    return Table(rows, title=f"{er.scenario.name}: which groups stop")


def log_excerpt(er: EraRun, design: str, *contains: str, since_ms: int = 0,
                limit: int = 8, level: str = "INFO", any_of: Sequence[str] = ()) -> LogView:
    """Up to `limit` log lines of `design` from `since_ms` on that contain every one of
    `contains` (and one of `any_of`, when given), in that era's wording (the central design's
    is invented: it never shipped)."""
    if design not in er.designs:
        raise ValueError(f"no design {design!r}; the designs are {', '.join(er.designs)}")
    stamp = _stamp(since_ms)
    lines = [ln for ln in er.designs[design].log_lines(level)
             if ln[1:24] >= stamp and all(c in ln for c in contains)
             and (not any_of or any(a in ln for a in any_of))]
    return LogView(lines[:limit])


def _stamp(ms: int) -> str:
    """The `[yyyy-mm-dd hh:mm:ss,mmm` a log line of virtual time `ms` starts with."""
    s, milli = divmod(ms, 1000)
    return f"2025-03-03 {9 + s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d},{milli:03d}"


# ---------------------------------------------------------------------------------------------
# Exercises
# ---------------------------------------------------------------------------------------------


def _faults_answer(ex: str, answer: Any) -> tuple[tuple[Fault, ...] | None, Feedback | None]:
    if not isinstance(answer, (list, tuple)) or not answer:
        return None, Feedback(ex, "wrong", "Give a list of faults, each a tuple (at_ms, kind, "
                                           "target, duration_ms), e.g. [(30_000, 'crash', "
                                           "'consumer-2')].")
    try:
        faults = tuple(_fault(f) for f in answer)
    except (TypeError, ValueError) as e:
        return None, Feedback(ex, "wrong", f"{e}")
    if len(faults) > 5:
        return None, Feedback(ex, "wrong", f"Five faults at most, got {len(faults)}.")
    for f in faults:
        if f.at_ms > 100_000 or (f.duration_ms or 0) > 120_000:
            return None, Feedback(ex, "wrong", f"Keep faults within the first 100 s and 120 s "
                                               f"long at most: {f}.")
        if f.kind not in ("join", "coordinator") and f.target not in (
                "consumer-1", "consumer-2", "consumer-3"):
            return None, Feedback(ex, "wrong", f"The group's consumers are consumer-1, -2 "
                                               f"and -3; {f.kind} names {f.target!r}.")
    return faults, None


@lru_cache(maxsize=None)
def _two_owner_trial(faults: tuple[Fault, ...]) -> tuple[int, int, int, int]:
    sc = my_scenario(faults, name="exercise 1")
    er = _run(sc)
    return (er["central"].max_double, er["central"].double_ms, er["classic"].double_ms,
            _commit_failures(er.designs["classic"], 0))


def check_two_owners(answer: Any) -> Feedback:
    """Exercise 1: a fault schedule (list of (at_ms, kind, target, duration_ms)) for
    consumer-1..3 of a 6-partition topic under which the central draft lets two consumers
    hold one partition at once. The check runs it."""
    ex = "Exercise 1"
    if unanswered(answer):
        return not_answered(ex, "a list of faults such as [(30_000, 'pause', 'consumer-2', "
                                "4_000)]")
    faults, error = _faults_answer(ex, answer)
    if error is not None:
        return error
    most, double_ms, classic_ms, refused = _two_owner_trial(faults)
    if most > 0:
        return Feedback(ex, "correct",
                        f"Under the 0.9 draft up to {most} partition(s) had two consumers, "
                        f"{double_ms:,} partition-ms in all: the coordinator gave the partitions "
                        f"of a consumer it had failed to others, and nothing stopped the old one "
                        f"from processing what it held. Today's protocol, same faults: "
                        f"{classic_ms:,} partition-ms, and {refused} offset commit(s) refused.")
    kinds = {f.kind for f in faults}
    if kinds <= {"join", "leave", "crash", "slow"}:
        hint = ("a crash or a clean leave closes the socket: the consumer is gone for good. "
                "You need a consumer the coordinator fails while it is still alive")
    else:
        hint = ("the coordinator fails a consumer after 3 unanswered pings, 2 s apart (about "
                "6 s); make a consumer miss them while it still holds fetched records: "
                "freeze it for longer than that")
    return Feedback(ex, "wrong", f"No partition had two consumers under the 0.9 draft: {hint}.")


EXERCISE_2_CHOICES: dict[str, str] = {
    "a": "The group coordinator stops the zombie's fetches from the brokers.",
    "b": "Generations shorten the session timeout, so the zombie is noticed sooner.",
    "c": "Every offset commit carries the generation and member id: the zombie's commit is "
         "refused (UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION), its stale offsets never overwrite "
         "the new owner's, and the error tells it that its partitions are lost.",
    "d": "The zombie's buffered records are thrown away before the application sees them.",
}


def check_why_generations(answer: Any) -> Feedback:
    """Exercise 2: which of EXERCISE_2_CHOICES says what generations do today."""
    ex = "Exercise 2"
    if unanswered(answer):
        return not_answered(ex, 'one letter, "a", "b", "c" or "d"')
    letter = str(answer).strip().lower().strip("()")
    if letter not in EXERCISE_2_CHOICES:
        return Feedback(ex, "wrong", f"Answer with one of the letters a, b, c, d; got "
                                     f"{answer!r}.")
    if letter == "c":
        return Feedback(ex, "correct", "Generations fence the zombie's writes to the group "
                                       "(commits, heartbeats, SyncGroup), not its reads: it "
                                       "still processes what it held (duplicates), but its "
                                       "offsets cannot move the group backwards.")
    why = {"a": "brokers serve fetches to anyone who asks; the generation is checked by the "
                "group coordinator, on group requests and offset commits only",
           "b": "the session timeout is a setting of its own (45 s by default), the generation "
                "is only a counter of completed rebalances",
           "d": "the zombie processes its buffered records when it wakes (look at the "
                "'records processed twice' column of today's protocol)"}[letter]
    return Feedback(ex, "wrong", f"Not that: {why}.")


@lru_cache(maxsize=None)
def _join_rounds() -> tuple[tuple[str, int], ...]:
    er = run("join-large")
    return tuple((m.design, m.rounds) for m in er.comparison.measures)


def check_join_rounds(answer: Any) -> Feedback:
    """Exercise 3: {"zookeeper": n, "central": n, "classic": n}, the rebalance rounds each
    design runs when a 21st consumer joins a group of 20 (scenario "join-large")."""
    ex = "Exercise 3"
    if unanswered(answer):
        return not_answered(ex, 'a dict such as {"zookeeper": 1, "central": 1, "classic": 1}')
    shape = wrong_counts(ex, answer, DESIGNS, "rounds")
    if shape is not None:
        return shape
    want = dict(_join_rounds())
    if dict(answer) == want:
        return Feedback(ex, "correct",
                        f"ZooKeeper: {want['zookeeper']} rounds, one per consumer: the watch "
                        f"fires in every member and each rebalances itself. The central "
                        f"coordinator and today's group coordinator: {want['central']} and "
                        f"{want['classic']}, one round for the whole group.")
    hints = []
    if answer["zookeeper"] != want["zookeeper"]:
        hints.append("in 0.8.2 a rebalance is something each consumer does for itself, and "
                     "the change fires every member's watch (the newcomer's included)")
    if answer["central"] != want["central"] or answer["classic"] != want["classic"]:
        hints.append("a coordinator runs one round for the whole group (rounds that fail and "
                     "retry would count again; here none fail)")
    return Feedback(ex, "wrong", f"{dict(answer)} is not it: " + "; ".join(hints) + ".")


EXERCISE_4_SCENARIO = Scenario(
    "exercise 4", {GROUP: ("consumer-1", "consumer-2", "consumer-3")}, {"t": 6},
    (Fault(30_000, "pause", "consumer-3", 5_000), Fault(30_000, "join", "consumer-4")),
    run_ms=90_000,
    description="consumer-3 freezes for 5 s at 30 s, just as consumer-4 joins")
"""Exercise 4: consumer-4's share includes a partition the frozen consumer-3 still owns."""

_RETRY_KEYS = ("rebalance.max.retries", "rebalance.backoff.ms")


@lru_cache(maxsize=None)
def _give_up_trial(retries: int, backoff: int) -> EraRun:
    sc = dataclasses.replace(EXERCISE_4_SCENARIO, settings={"zookeeper": {
        "rebalance.max.retries": retries, "rebalance.backoff.ms": backoff}})
    design, m, seen = _measured("zookeeper", sc)
    return EraRun(sc, Comparison(sc, [m]), {"zookeeper": design}, {"zookeeper": seen})


def give_up_run(retries: int = 4, backoff_ms: int = 2000) -> EraRun:
    """`EXERCISE_4_SCENARIO` under the ZooKeeper consumer with these retry settings."""
    return _give_up_trial(retries, backoff_ms)


def _orphans(er: EraRun) -> list[str]:
    d = er.designs["zookeeper"]
    return [f"{t}-{p}" for (t, p), who in d.fetching(GROUP).items() if not who]


def check_give_up(answer: Any) -> Feedback:
    """Exercise 4: {"rebalance.max.retries": r, "rebalance.backoff.ms": b} under which a
    ZooKeeper consumer of EXERCISE_4_SCENARIO gives up and leaves a partition unconsumed."""
    ex = "Exercise 4"
    if unanswered(answer):
        return not_answered(ex, '{"rebalance.max.retries": 4, "rebalance.backoff.ms": 2000} '
                                'with numbers of your choice')
    if not isinstance(answer, Mapping) or set(answer) != set(_RETRY_KEYS):
        return Feedback(ex, "wrong", f"Give a dict with exactly the keys {list(_RETRY_KEYS)}.")
    r, b = answer["rebalance.max.retries"], answer["rebalance.backoff.ms"]
    if not (isinstance(r, int) and not isinstance(r, bool) and 1 <= r <= 20):
        return Feedback(ex, "wrong", f"rebalance.max.retries is a whole number from 1 to 20, "
                                     f"got {r!r}.")
    if not (isinstance(b, int) and not isinstance(b, bool) and 100 <= b <= 20_000):
        return Feedback(ex, "wrong", f"rebalance.backoff.ms is a whole number from 100 to "
                                     f"20000, got {b!r}.")
    er = _give_up_trial(r, b)
    d = er.designs["zookeeper"]
    failed = [n for n, s in d.states().items() if s == "REBALANCE_FAILED"]  # type: ignore
    orphans = _orphans(er)
    if failed and orphans:
        return Feedback(ex, "correct",
                        f"With {r} tries {b} ms apart, {', '.join(failed)} gave up "
                        f"(can't rebalance after {r} retries) before consumer-3 woke at 35 s "
                        f"and released its znode; {', '.join(orphans)} has had no consumer "
                        f"since, and nothing will fix it until the next membership change.")
    tried = (r - 1) * b
    return Feedback(ex, "wrong",
                    f"With {r} tries {b} ms apart, consumer-4 kept trying for about {tried:,} ms "
                    f"after its first collision, long enough for consumer-3 to wake (5 s) and "
                    f"release its owner znode, so the group settled. Make the tries end sooner.")
