"""Notebook 06, classroom exercises: four seeded exercises, the tools the notebook hands out for
each, and their checks.

The exercises:

1. choose ``session.timeout.ms`` (and ``heartbeat.interval.ms``) so that a 10 s GC pause causes
   no rebalance, on brokers that cap ``group.max.session.timeout.ms`` at 12 s (the broker's
   bounds in ``GroupCoordinatorService.joinGroup``, the session timer of
   ``expireClassicGroupMemberHeartbeat``, the client's ``Heartbeat``);
2. find in the broker logs of ``datasets/many-groups`` which member's join or departure started
   a given generation of a group (the reasons ``prepareRebalance`` logs);
3. predict what range, roundrobin and cooperative-sticky assign in a small group (Kafka's
   ``RangeAssignor``, ``RoundRobinAssignor``, ``CooperativeStickyAssignor``);
4. explain a coordinator write parked behind a stalled follower (the write's response waits
   for the high watermark; ``offsets.commit.timeout.ms`` ends the wait).

Every check runs the kit: it rebuilds the seeded situation and compares the answer with what the
kit does there, so where several answers work (exercise 1) any of them is accepted, and a wrong
answer gets a hint that names what happened in the run. An unanswered exercise (``...`` or None)
is reported, never raised, so the student copy runs top to bottom.

Solutions live in one place only, the teacher copy ``teachers/06_classroom_exercises.ipynb``;
the student notebook is generated from it (`coordinator_kit.teaching.student`,
``python -m coordinator_kit notebooks --write``), and a class's notebooks are graded against it
with these checks (``python -m coordinator_kit grade``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..assignors import Subscription, get_assignor
from ..client.config import ConsumerConfig
from ..clock import SchedulerLimitExceeded
from ..cluster import Cluster
from ..errors import Errors, KafkaError
from ..logs.layout import DEFAULT_START
from ..runtime.future import CoordinatorFuture
from ..runtime.sandbox import RuntimeSandbox
from ..scenarios import new_cluster
from ..topic import TopicPartition
from .heartbeats import GROUP, Feedback, LogView, Table, clock, short_id, unanswered

if TYPE_CHECKING:
    import pandas

__all__ = [
    # exercise 1
    "BROKER_LIMITS", "PAUSE_MS", "limited_cluster", "PauseTrial", "pause_trials", "gc_trial",
    "check_session_timeout",
    # exercise 2
    "EXERCISE_2_DATASET", "EXERCISE_2_GROUP", "EXERCISE_2_GENERATION", "CAUSES",
    "dataset_dir", "read_logs", "check_generation_cause",
    # exercise 3
    "EXERCISE_3_TOPICS", "EXERCISE_3_MEMBERS", "EXERCISE_3_OWNED", "EXERCISE_3_PARTS",
    "assignment_question", "check_assignment",
    # exercise 4
    "STUCK_PARTITION", "STALLED_BROKER", "SLOW_BROKER", "WHY_CHOICES", "OUTCOME_CHOICES",
    "StuckWrite", "stuck_write", "choices", "check_stuck_write",
    # all four
    "EXERCISES", "scoreboard",
]


def _not_answered(exercise: str, what: str) -> Feedback:
    return Feedback(exercise, "unanswered",
                    f"Replace the `...` in the answer cell with {what}, run it, then run this "
                    f"cell again.")


def _sentences(parts: Sequence[str]) -> str:
    """Parts of a multi-part answer's feedback, each made a sentence."""
    out = []
    for part in parts:
        part = part[:1].upper() + part[1:]
        out.append(part if part.endswith((".", "?", "!")) else part + ".")
    return " ".join(out)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# ---------------------------------------------------------------------------------------------
# Exercise 1: a session timeout that survives a 10 s GC pause, under the broker's limits
# ---------------------------------------------------------------------------------------------

# The platform team's brokers: Kafka's minimum, a much lower maximum than Kafka's 30 minutes.
BROKER_LIMITS: Mapping[str, int] = {"group.min.session.timeout.ms": 6_000,
                                    "group.max.session.timeout.ms": 12_000}
PAUSE_MS = 10_000
_DEFAULT_HEARTBEAT_MS = ConsumerConfig(group_id=GROUP).heartbeat_interval_ms
_SESSION_KEY, _HEARTBEAT_KEY = "session.timeout.ms", "heartbeat.interval.ms"


def limited_cluster(session_timeout_ms: int = 10_000, heartbeat_interval_ms: int = 3_000, *,
                    seed: int = 0) -> Cluster:
    """Brokers with `BROKER_LIMITS`; consumer-1 starts at 0 s and consumer-2 at 10 s, both with
    the given timeouts; returned at 20 s, when the group is Stable in generation 2 (unless the
    coordinator refused the session timeout)."""
    cluster = new_cluster(seed, group_config=dict(BROKER_LIMITS))
    for i in (1, 2):
        cluster.add_consumer(f"consumer-{i}", session_timeout_ms=session_timeout_ms,
                             heartbeat_interval_ms=heartbeat_interval_ms)
        cluster.run_for(10_000)
    return cluster


@dataclass(frozen=True)
class PauseTrial:
    """One 10 s pause of consumer-1 and what the coordinator did about it."""

    moment: str
    session_ms: int
    pause_start: int
    pause_end: int
    generation_before: int | None
    generation_after: int | None
    last_rearm: int | None      # the coordinator's last re-arm of the session before the pause
    next_rearm: int | None      # ... and its first one after the pause started
    expelled_at: int | None     # "has failed, removing it from the group"
    rebalance_reasons: tuple[str, ...]
    refused: Errors | None      # the JoinGroup error that stopped consumer-1, if any

    @property
    def survived(self) -> bool:
        return self.refused is None and self.expelled_at is None and not self.rebalance_reasons

    @property
    def silence_ms(self) -> int | None:
        """How long the coordinator heard nothing that re-arms the member's session."""
        if self.last_rearm is None or self.next_rearm is None:
            return None
        return self.next_rearm - self.last_rearm


def _session_key(member_id: str) -> str:
    return f"heartbeat-{GROUP}-{member_id}"


def _pause_trial(session_ms: int, heartbeat_ms: int, worst: bool, seed: int) -> PauseTrial:
    cluster = limited_cluster(session_ms, heartbeat_ms, seed=seed)
    c1 = cluster.consumer("consumer-1")
    if c1.fatal is not None:
        now = cluster.scheduler.now
        return PauseTrial("-", session_ms, now, now, None, None, None, None, None, (), c1.fatal)
    moment = "at 20 s"
    if worst:
        # Just before consumer-1 would next send something that re-arms its session (a
        # Heartbeat, or an auto-commit's OffsetCommit): the longest silence a pause can make.
        due = c1.last_heartbeat_sent + heartbeat_ms
        if c1.config.enable_auto_commit:
            due = min(due, c1.next_auto_commit)
        start = max(cluster.scheduler.now, due - 1)
        cluster.run_for(start - cluster.scheduler.now)
        moment = "just before a heartbeat"
    start = cluster.scheduler.now
    before = cluster.group()["generation"]
    key = _session_key(c1.member_id)
    member = c1.member_id
    last_rearm = None
    for e in cluster.trace.events:
        if e.kind == "timer_registered" and e.fields.get("key") == key:
            last_rearm = e.ts
    since = len(cluster.trace)
    cluster.pause("consumer-1", PAUSE_MS)
    cluster.run_for(PAUSE_MS + 15_000)
    next_rearm = expelled = None
    reasons = []
    for e in cluster.trace.events[since:]:
        if e.kind == "timer_registered" and e.fields.get("key") == key and next_rearm is None:
            next_rearm = e.ts
        elif e.kind == "member_session_expired" and e.fields.get("member") == member \
                and expelled is None:
            expelled = e.ts
        elif e.kind == "rebalance_started" and e.fields.get("group") == GROUP:
            reasons.append(str(e.fields.get("reason")))
    return PauseTrial(moment, session_ms, start, start + PAUSE_MS, before,
                      cluster.group()["generation"], last_rearm, next_rearm, expelled,
                      tuple(reasons), None)


@lru_cache(maxsize=256)
def pause_trials(session_timeout_ms: int, heartbeat_interval_ms: int = _DEFAULT_HEARTBEAT_MS,
                 *, seed: int = 0) -> tuple[PauseTrial, PauseTrial]:
    """consumer-1 of `limited_cluster` pauses for 10 s twice (in two fresh runs): at 20 s, and
    1 ms before it would next send a Heartbeat or an auto-commit, the worst moment."""
    ConsumerConfig(group_id=GROUP, session_timeout_ms=session_timeout_ms,
                   heartbeat_interval_ms=heartbeat_interval_ms)  # refuses a bad pair by name
    return (_pause_trial(session_timeout_ms, heartbeat_interval_ms, False, seed),
            _pause_trial(session_timeout_ms, heartbeat_interval_ms, True, seed))


def gc_trial(session_timeout_ms: int, heartbeat_interval_ms: int = _DEFAULT_HEARTBEAT_MS
             ) -> Table:
    """Try a configuration: the two 10 s pauses of `pause_trials`, side by side."""
    rows = []
    for t in pause_trials(session_timeout_ms, heartbeat_interval_ms):
        if t.refused is not None:
            rows.append({"pause": "no pause: consumer-1 never joined",
                         "what happened": f"JoinGroup answered {t.refused.name}"})
            continue
        runs_out = None if t.last_rearm is None else t.last_rearm + t.session_ms
        if t.expelled_at is not None:
            happened = f"expelled at {clock(t.expelled_at)}"
        elif t.rebalance_reasons:
            happened = f"rebalance: {t.rebalance_reasons[0]}"
        else:
            happened = "no rebalance"
        rows.append({"pause": t.moment, "pause starts": clock(t.pause_start),
                     "pause ends": clock(t.pause_end),
                     "session last re-armed": None if t.last_rearm is None
                     else clock(t.last_rearm),
                     "session runs out": None if runs_out is None else clock(runs_out),
                     "what happened": happened,
                     "generation": f"{t.generation_before} -> {t.generation_after}"})
    return Table(rows, ["pause", "pause starts", "pause ends", "session last re-armed",
                        "session runs out", "what happened", "generation"],
                 title=f"a 10 s pause of consumer-1 with session.timeout.ms={session_timeout_ms}"
                       f", heartbeat.interval.ms={heartbeat_interval_ms}")


def _session_answer(ex: str, answer: Any) -> tuple[tuple[int, int] | None, Feedback | None]:
    if _is_int(answer):
        return (answer, _DEFAULT_HEARTBEAT_MS), None
    if not isinstance(answer, Mapping):
        return None, Feedback(ex, "wrong", f'Give a dict such as {{"{_SESSION_KEY}": 10000, '
                                           f'"{_HEARTBEAT_KEY}": 3000}}, got '
                                           f"{type(answer).__name__}.")
    unknown = sorted(set(answer) - {_SESSION_KEY, _HEARTBEAT_KEY})
    if unknown or _SESSION_KEY not in answer:
        return None, Feedback(ex, "wrong", f"The dict takes the keys {_SESSION_KEY!r} and "
                                           f"{_HEARTBEAT_KEY!r} (unknown: {unknown or 'none'}, "
                                           f"{_SESSION_KEY!r} "
                                           f"{'given' if _SESSION_KEY in answer else 'missing'}).")
    session = answer[_SESSION_KEY]
    heartbeat = answer.get(_HEARTBEAT_KEY, _DEFAULT_HEARTBEAT_MS)
    for key, value in ((_SESSION_KEY, session), (_HEARTBEAT_KEY, heartbeat)):
        if not _is_int(value):
            return None, Feedback(ex, "wrong", f"{key} must be a whole number of milliseconds, "
                                               f"got {value!r}.")
    return (session, heartbeat), None


def _rebalances(t: PauseTrial) -> str:
    n = len(t.rebalance_reasons)
    if n == 2:
        return " (one rebalance to remove it, one more when it came back as a new member)"
    return f" ({n} rebalance{'s' if n != 1 else ''})"


def check_session_timeout(answer: Any) -> Feedback:
    """Exercise 1: {"session.timeout.ms": s, "heartbeat.interval.ms": h} (or just s, with the
    default heartbeat) with which a 10 s GC pause of consumer-1 causes no rebalance, on brokers
    with `BROKER_LIMITS`. The check runs both pauses of `pause_trials`."""
    ex = "Exercise 1"
    if unanswered(answer):
        return _not_answered(ex, f'a dict such as {{"{_SESSION_KEY}": 10000, '
                                 f'"{_HEARTBEAT_KEY}": 3000}}')
    parsed, error = _session_answer(ex, answer)
    if error is not None:
        return error
    assert parsed is not None
    session, heartbeat = parsed
    try:
        trials = pause_trials(session, heartbeat)
    except ValueError as e:
        return Feedback(ex, "wrong", f"The consumer refuses this configuration: {e}.")
    low, high = (BROKER_LIMITS["group.min.session.timeout.ms"],
                 BROKER_LIMITS["group.max.session.timeout.ms"])
    refused = trials[0].refused
    if refused is not None:
        return Feedback(ex, "wrong", f"The coordinator answered consumer-1's JoinGroup with "
                                     f"{refused.name} and the consumer gave up: these brokers "
                                     f"accept session.timeout.ms from "
                                     f"group.min.session.timeout.ms={low} to "
                                     f"group.max.session.timeout.ms={high}, and you chose "
                                     f"{session}.")
    for t in trials:
        if t.survived:
            continue
        if t.expelled_at is not None:
            why = (f"the coordinator last re-armed its session at {clock(t.last_rearm or 0)}, "
                   f"so it ran out {session} ms later, before the pause ended at "
                   f"{clock(t.pause_end)}")
            if session <= PAUSE_MS:
                advice = ("Nothing reaches the coordinator during the pause, so the session "
                          "must last longer than the pause itself.")
            else:
                advice = ("The silence the coordinator sees is the pause plus the time since "
                          "consumer-1's last heartbeat, up to heartbeat.interval.ms"
                          + (" (here the default, 3000 ms)." if heartbeat == _DEFAULT_HEARTBEAT_MS
                             else "."))
            return Feedback(ex, "wrong", f"With session.timeout.ms={session} and "
                                         f"heartbeat.interval.ms={heartbeat}, the pause "
                                         f"{t.moment} gets consumer-1 expelled at "
                                         f"t={t.expelled_at}ms ({clock(t.expelled_at)}): {why}. "
                                         f"Generation went {t.generation_before}→"
                                         f"{t.generation_after}{_rebalances(t)}. {advice}")
        return Feedback(ex, "wrong", f"The pause {t.moment} caused a rebalance ("
                                     f"{t.rebalance_reasons[0]}); generation went "
                                     f"{t.generation_before}→{t.generation_after}.")
    silence = max(t.silence_ms or 0 for t in trials)
    return Feedback(ex, "correct", f"Neither pause causes a rebalance (generation stays "
                                   f"{trials[0].generation_before}). The longest the coordinator "
                                   f"went without re-arming consumer-1's session was {silence} ms,"
                                   f" below session.timeout.ms={session}, which the brokers "
                                   f"accept ({low} to {high}).")


# ---------------------------------------------------------------------------------------------
# Exercise 2: which member started a generation, from the broker logs
# ---------------------------------------------------------------------------------------------

EXERCISE_2_DATASET = "many-groups"
EXERCISE_2_GROUP = "billing"
EXERCISE_2_GENERATION = 6
CAUSES = ("joined", "left", "failed")

_LINE = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] (TRACE|DEBUG|INFO|WARN|ERROR|"
                   r"FATAL) (.*) \(([\w.$]+)\)$")
_LOG_COLUMNS = ["file", "line", "timestamp", "ms", "level", "message", "logger", "raw"]


def dataset_dir(name: str = EXERCISE_2_DATASET) -> Path | None:
    """The committed folder `datasets/<name>` of this checkout, or None when the kit is
    installed without it."""
    folder = Path(__file__).resolve().parents[2] / "datasets" / name
    return folder if folder.is_dir() else None


@lru_cache(maxsize=4)
def _dataset_cluster(name: str) -> Cluster:
    from ..datasets.catalog import dataset

    return dataset(name).run()


def _log_files(name: str) -> dict[str, str]:
    folder = dataset_dir(name)
    if folder is not None:
        return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.log"))}
    from ..datasets.catalog import dataset
    from ..datasets.writer import render_dataset

    files = render_dataset(dataset(name), _dataset_cluster(name))
    return {n: b.decode("utf-8") for n, b in sorted(files.items()) if n.endswith(".log")}


def _virtual_ms(timestamp: str) -> int:
    t = datetime.strptime(timestamp, "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=timezone.utc)
    return (t - DEFAULT_START) // timedelta(milliseconds=1)


def read_logs(name: str = EXERCISE_2_DATASET, *, brokers: bool = True,
              clients: bool = False) -> pandas.DataFrame:
    """The log files of a dataset as one pandas table, one row per line, in time order.

    Columns: `file`, `line` (its number in the file), `timestamp` (as printed), `ms` (virtual
    ms), `level`, `message`, `logger` and `raw` (the whole line). Reads the committed
    `datasets/<name>/` files; without them, renders the same bytes from the kit.
    """
    import pandas as pd

    if not (brokers or clients):
        raise ValueError("read_logs needs brokers=True, clients=True or both")
    rows = []
    for file, text in _log_files(name).items():
        if not ((brokers and file.startswith("server-")) or
                (clients and file.startswith("client-"))):
            continue
        for number, raw in enumerate(text.splitlines(), start=1):
            m = _LINE.match(raw)
            if m is None:
                raise ValueError(f"{file}:{number} is not in Kafka's log4j layout: {raw[:80]!r}")
            timestamp, level, message, logger = m.groups()
            rows.append((file, number, timestamp, _virtual_ms(timestamp), level, message,
                         logger, raw))
    rows.sort(key=lambda r: (r[3], r[0], r[1]))
    return pd.DataFrame(rows, columns=_LOG_COLUMNS)


# How the coordinator words the reason of a rebalance (GroupMetadataManager), by cause.
_REASONS = (
    (re.compile(r"^Adding new member (\S+) with group instance id"), "joined"),
    (re.compile(r"^explicit `LeaveGroup` request for \((.+)\) members\.$"), "left"),
    (re.compile(r"^removing member (\S+) on heartbeat expiration\.$"), "failed"),
    (re.compile(r"^(?:Leader|Updating metadata for (?:static )?member) (\S+) "), "rejoined"),
)


@dataclass(frozen=True)
class _Start:
    generation: int          # the generation the rebalance ended in
    at: int
    broker: str
    members: tuple[str, ...]
    cause: str
    reason: str


def _rebalance_starts(cluster: Cluster, group: str) -> list[_Start]:
    """Each "Preparing to rebalance" of `group`: who, why, and the generation it led to."""
    out = []
    for e in cluster.trace.events:
        if e.kind != "rebalance_started" or e.fields.get("group") != group:
            continue
        reason = str(e.fields.get("reason"))
        members: tuple[str, ...] = ()
        cause = "other"
        for pattern, name in _REASONS:
            m = pattern.match(reason)
            if m:
                members = tuple(x.strip() for x in m.group(1).split(","))
                cause = name
                break
        out.append(_Start(int(e.fields["generation"]) + 1, e.ts, e.source, members, cause,
                          reason))
    return out


_MEMBER_ID = re.compile(r"\b([\w.-]+-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
                        r"\b")


@lru_cache(maxsize=4)
def _group_facts(name: str, group: str) -> tuple[tuple[_Start, ...], tuple[str, ...]]:
    """(rebalance starts, every member id the group's broker log lines name) for a dataset."""
    cluster = _dataset_cluster(name)
    ids: dict[str, None] = {}
    for e in cluster.trace.events:
        if e.fields.get("group") == group and e.source.startswith("broker-"):
            line = e.line(cluster.trace.start) or ""
            for m in _MEMBER_ID.finditer(line):
                ids[m.group(1)] = None
    return tuple(_rebalance_starts(cluster, group)), tuple(ids)


_CAUSE_WORDS = {
    "joined": ("joined", "join", "joins", "joining", "added", "new member", "adding"),
    "left": ("left", "leave", "leaves", "leaving", "leavegroup", "departed", "departure",
             "departs"),
    "failed": ("failed", "fail", "expired", "session expired", "heartbeat expiration",
               "removed on heartbeat expiration", "timed out", "crashed"),
}


def _cause(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    text = value.strip().lower()
    for cause, words in _CAUSE_WORDS.items():
        if text in words:
            return cause
    return None


def _resolve_member(given: str, known: Sequence[str]) -> str | None:
    text = given.strip()
    if text in known:
        return text
    matches = [m for m in known if short_id(m) == text]
    return matches[0] if len(matches) == 1 else None


def check_generation_cause(answer: Any) -> Feedback:
    """Exercise 2: {"member id": ..., "cause": "joined" | "left" | "failed"}: whose join or
    departure started the rebalance that produced generation `EXERCISE_2_GENERATION` of group
    `EXERCISE_2_GROUP` in the `EXERCISE_2_DATASET` logs. The check reruns the dataset's
    scenario in the kit and reads its trace."""
    ex = "Exercise 2"
    group, generation = EXERCISE_2_GROUP, EXERCISE_2_GENERATION
    if unanswered(answer):
        return _not_answered(ex, 'a dict such as {"member id": "<client id>-<uuid>", '
                                 '"cause": "joined"}')
    if isinstance(answer, (tuple, list)) and len(answer) == 2:
        answer = {"member id": answer[0], "cause": answer[1]}
    if not isinstance(answer, Mapping) or set(answer) != {"member id", "cause"}:
        return Feedback(ex, "wrong", 'Give a dict with exactly the keys "member id" and "cause", '
                                     'e.g. {"member id": "<client id>-<uuid>", "cause": '
                                     '"joined"}.')
    given, cause_given = answer["member id"], answer["cause"]
    if unanswered(given) or unanswered(cause_given):
        return _not_answered(ex, "both the member id and the cause")
    if not isinstance(given, str):
        return Feedback(ex, "wrong", f"A member id is a string, got {given!r}.")
    cause = _cause(cause_given)
    if cause is None:
        return Feedback(ex, "wrong", f"The cause must be one of {', '.join(CAUSES)}; got "
                                     f"{cause_given!r}.")
    starts, known = _group_facts(EXERCISE_2_DATASET, group)
    target = next(s for s in starts if s.generation == generation)
    member = _resolve_member(given, known)
    if member is None:
        held = [m for m in known if m.startswith(given.strip() + "-")]
        if held:
            return Feedback(ex, "wrong", f"{given.strip()!r} is a client id. Over this log it "
                                         f"was {len(held)} different members of group {group} "
                                         f"(a new member id each time it came back); give the "
                                         f"member id the coordinator names.")
        return Feedback(ex, "wrong", f"No member of group {group} has the id {given!r} in these "
                                     f"logs. Member ids look like <client id>-<uuid>; copy one "
                                     f"from a log line.")
    if member in target.members and cause == target.cause:
        return Feedback(ex, "correct", f"{short_id(member)} {cause}: at {clock(target.at)} "
                                       f"{target.broker} logged \"Preparing to rebalance group "
                                       f"{group} ... with old generation {generation - 1} "
                                       f"(reason: {target.reason})\", and the join phase it "
                                       f"started ended in generation {generation}.")
    if member in target.members:
        return Feedback(ex, "wrong", f"Right member, wrong cause. Read the reason in "
                                     f"parentheses again: \"Adding new member\" is a join, "
                                     f"\"explicit `LeaveGroup` request\" a departure, "
                                     f"\"on heartbeat expiration\" a failure.")
    others = [s.generation for s in starts if member in s.members]
    if others:
        gens = " and ".join(str(g) for g in others)
        return Feedback(ex, "wrong", f"{short_id(member)} started the rebalance that ended in "
                                     f"generation {gens} (the coordinator's line names the "
                                     f"old generation, one less). Which line leads to "
                                     f"generation {generation}?")
    return Feedback(ex, "wrong", f"{short_id(member)} was a member of {group}, but the "
                                 f"coordinator never named it as the reason for a rebalance. "
                                 f"Look for the line in which it says why it prepares to "
                                 f"rebalance the group.")


# ---------------------------------------------------------------------------------------------
# Exercise 3: predict an assignment
# ---------------------------------------------------------------------------------------------

EXERCISE_3_TOPICS: Mapping[str, int] = {"orders": 4, "payments": 2}
EXERCISE_3_MEMBERS = ("consumer-1", "consumer-2", "consumer-3")
# Before consumer-3 joins (generation 1), for the cooperative-sticky part.
EXERCISE_3_OWNED: Mapping[str, tuple[TopicPartition, ...]] = {
    "consumer-1": tuple(TopicPartition("orders", p) for p in range(4)),
    "consumer-2": tuple(TopicPartition("payments", p) for p in range(2)),
}
EXERCISE_3_PARTS = ("range", "roundrobin", "cooperative-sticky, round 1")


def assignment_question() -> Table:
    """The members, what they subscribe to, and what they owned before consumer-3 joined."""
    rows = [{"member": m, "subscribes to": [f"{t} ({n} partitions)"
                                             for t, n in EXERCISE_3_TOPICS.items()],
             "owned before consumer-3 joined (generation 1)":
                 [str(tp) for tp in EXERCISE_3_OWNED.get(m, ())]}
            for m in EXERCISE_3_MEMBERS]
    return Table(rows, title="exercise 3: the group")


@lru_cache(maxsize=1)
def _expected_assignments() -> dict[str, dict[str, frozenset[TopicPartition]]]:
    topics = dict(EXERCISE_3_TOPICS)
    fresh = {m: Subscription(tuple(topics)) for m in EXERCISE_3_MEMBERS}
    owned = {m: Subscription(tuple(topics), EXERCISE_3_OWNED.get(m, ()),
                             1 if m in EXERCISE_3_OWNED else -1) for m in EXERCISE_3_MEMBERS}
    out = {}
    for part, assignor, subs in (("range", "range", fresh), ("roundrobin", "roundrobin", fresh),
                                 ("cooperative-sticky, round 1", "cooperative-sticky", owned)):
        result = get_assignor(assignor).assign(topics, subs)
        out[part] = {m: frozenset(result[m].partitions) for m in EXERCISE_3_MEMBERS}
    return out


def _partition(value: Any) -> TopicPartition:
    if isinstance(value, TopicPartition):
        return value
    if isinstance(value, str) and "-" in value:
        topic, _, number = value.strip().rpartition("-")
        if number.isdecimal() and topic:
            return TopicPartition(topic, int(number))
    if isinstance(value, (tuple, list)) and len(value) == 2 and isinstance(value[0], str) \
            and _is_int(value[1]):
        return TopicPartition(value[0], value[1])
    raise ValueError(f"{value!r} is not a partition; write it as \"orders-0\"")


def _assignment(part: str, value: Any) -> dict[str, frozenset[TopicPartition]]:
    if not isinstance(value, Mapping) or set(value) != set(EXERCISE_3_MEMBERS):
        raise ValueError(f"{part}: give a dict with exactly the members "
                         f"{list(EXERCISE_3_MEMBERS)} as keys")
    out = {}
    for member, parts in value.items():
        if isinstance(parts, (str, bytes)) or not isinstance(parts, (list, tuple, set,
                                                                     frozenset)):
            raise ValueError(f"{part}: {member} needs a list of partitions such as "
                             f"[\"orders-0\", \"payments-1\"], got {parts!r}")
        out[member] = frozenset(_partition(p) for p in parts)
    return out


def _counts(value: Any, part: str) -> dict[str, int]:
    if not isinstance(value, Mapping) or set(value) != set(EXERCISE_3_MEMBERS) \
            or not all(_is_int(v) for v in value.values()):
        raise ValueError(f"{part}: give a dict of partition counts, "
                         f"{{\"consumer-1\": n, \"consumer-2\": n, \"consumer-3\": n}}")
    return dict(value)


def _judge_part(part: str, value: Any, expected: dict[str, dict[str, frozenset[TopicPartition]]]
                ) -> tuple[str, str]:
    """(status, message) for one part of exercise 3."""
    if unanswered(value):
        return "unanswered", f"{part}: not answered yet"
    want = expected[part]
    try:
        if part.startswith("cooperative"):
            got_counts = _counts(value, part)
            want_counts = {m: len(ps) for m, ps in want.items()}
            if got_counts == want_counts:
                return "correct", (f"{part}: correct, nothing changes owner in the first "
                                   f"round; consumer-1 revokes two partitions and the "
                                   f"follow-up rebalance gives them to consumer-3")
            final = {m: 2 for m in EXERCISE_3_MEMBERS}
            if got_counts == final:
                return "wrong", (f"{part}: that is where the group ends up, after the second "
                                 f"rebalance. In the first, a partition that must change owner "
                                 f"is only revoked by its owner, not yet handed over")
            if sum(got_counts.values()) > sum(EXERCISE_3_TOPICS.values()):
                return "wrong", f"{part}: there are only {sum(EXERCISE_3_TOPICS.values())} " \
                                f"partitions"
            return "wrong", (f"{part}: sticky keeps what each member owns as far as balance "
                             f"allows, and cooperative withholds a partition for one round "
                             f"while its old owner still holds it")
        got = _assignment(part, value)
    except ValueError as e:
        return "wrong", str(e)
    if got == want:
        return "correct", f"{part}: correct"
    every = [tp for ps in got.values() for tp in ps]
    total = sum(EXERCISE_3_TOPICS.values())
    if len(every) != len(set(every)) or len(set(every)) != total:
        return "wrong", (f"{part}: each of the {total} partitions goes to exactly one member "
                         f"(you gave {len(set(every))} distinct, {len(every)} in all)")
    other = "roundrobin" if part == "range" else "range"
    if got == expected[other]:
        return "wrong", f"{part}: that is what {other} gives"
    if part == "range":
        return "wrong", (f"{part}: it splits each topic on its own: the members, in sorted "
                         f"order, get consecutive partitions, P // N each, and the first P % N "
                         f"members one more")
    return "wrong", (f"{part}: it lists every partition (by topic, then number) and deals "
                     f"them one by one to the members in sorted order")


def check_assignment(answer: Any) -> Feedback:
    """Exercise 3: a dict with the keys of `EXERCISE_3_PARTS`: the range and roundrobin
    assignments ({member: [partitions]}) of `EXERCISE_3_TOPICS` to `EXERCISE_3_MEMBERS`, and
    the partition counts after the first cooperative-sticky rebalance when consumer-3 joins a
    group owning `EXERCISE_3_OWNED`. The check runs the kit's assignors."""
    ex = "Exercise 3"
    shape = ('a dict {"range": {...}, "roundrobin": {...}, "cooperative-sticky, round 1": '
             '{...}}')
    if unanswered(answer):
        return _not_answered(ex, shape)
    if not isinstance(answer, Mapping) or set(answer) != set(EXERCISE_3_PARTS):
        return Feedback(ex, "wrong", f"Give {shape}, with exactly these three keys.")
    expected = _expected_assignments()
    verdicts = [_judge_part(part, answer[part], expected) for part in EXERCISE_3_PARTS]
    statuses = {s for s, _ in verdicts}
    message = _sentences([m for _, m in verdicts])
    if statuses == {"correct"}:
        return Feedback(ex, "correct", message)
    if "wrong" in statuses:
        return Feedback(ex, "wrong", message)
    return Feedback(ex, "unanswered", message)


# ---------------------------------------------------------------------------------------------
# Exercise 4: explain a stuck write
# ---------------------------------------------------------------------------------------------

STUCK_PARTITION = 1      # __consumer_offsets-1: replicas 1, 2, 0; broker 1 leads
STALLED_BROKER = 0       # stops fetching at 1 s
SLOW_BROKER = 2          # fetches 200 ms late: slow, but keeps up
_WRITE_AT_MS = 1_000     # the write goes out at 1 s after the stall ...
_QUESTION_AFTER_MS = 1_000  # ... and the question is asked 1 s later
_WRITE_TIMEOUT_MS = 5_000

WHY_CHOICES: Mapping[str, str] = {
    "a": "The leader waits until every replica of the partition has the record, in sync or "
         "not.",
    "b": "The high watermark is the smallest log end offset among the in-sync replicas; the "
         "stalled follower is still in the ISR, and the leader drops it only after "
         "replica.lag.time.max.ms (30 s) without catching up.",
    "c": "The coordinator is still loading the partition, and writes wait in a queue until "
         "loading ends.",
    "d": "The write sits in an open batch until append.linger.ms has passed.",
}
OUTCOME_CHOICES: Mapping[str, str] = {
    "a": "It stays pending until the stalled follower fetches again, then succeeds.",
    "b": "It fails with REQUEST_TIMED_OUT once the write timeout (5000 ms here) has passed; the "
         "record stays in the log and is committed later, when the ISR shrinks.",
    "c": "It fails at once with NOT_COORDINATOR, and the record is taken out of the log.",
    "d": "It succeeds about 30 s later, when the leader drops the stalled follower from the "
         "ISR.",
}


@dataclass
class StuckWrite:
    """The sandbox of exercise 4, stopped 1 s after the write went out."""

    sandbox: RuntimeSandbox
    write: CoordinatorFuture[str]
    written_at: int
    since: int  # trace position just before the write

    @property
    def partition(self) -> Any:
        return self.sandbox.partition(STUCK_PARTITION)

    def describe(self) -> dict[str, Any]:
        """The leader's context and the partition, as `RuntimeSandbox.describe` shows them."""
        return self.sandbox.describe(STUCK_PARTITION)

    def replicas(self) -> Table:
        """Each replica of the partition as the leader sees it."""
        p = self.partition
        rows = []
        for b, r in sorted(p.replicas.items()):
            leader = b == p.leader_id
            rows.append({"broker": b, "role": "leader" if leader else "follower",
                         "log end offset": r.log_end_offset,
                         "confirmed to the leader": r.log_end_offset if leader else r.known_leo,
                         "fetching": "-" if leader else ("yes" if r.fetching else "no"),
                         "fetch delay (ms)": "-" if leader else r.fetch_delay_ms,
                         "in ISR": "yes" if b in p.isr else "no"})
        return Table(rows, ["broker", "role", "log end offset", "confirmed to the leader",
                            "fetching", "fetch delay (ms)", "in ISR"],
                     title=f"{p.tp} at {clock(self.sandbox.scheduler.now)}: high watermark "
                           f"{p.high_watermark}, log end offset {p.log_end_offset}")

    def log(self, level: str = "DEBUG") -> LogView:
        """The runtime's and the partition's log lines since the write was scheduled."""
        return LogView(self.sandbox.log_lines(level, since=self.since))


def stuck_write(seed: int = 0) -> StuckWrite:
    """Three brokers, two `__consumer_offsets` partitions; on partition 1 (led by broker 1) two
    writes commit, broker 2's follower turns slow and broker 0's stops fetching; at 1 s later a
    write `put(c)` goes out. Returned 1 s after that, the write still pending."""
    sb = RuntimeSandbox(brokers=3, partitions=2, append_linger_ms=0,
                        write_timeout_ms=_WRITE_TIMEOUT_MS, seed=seed)
    sb.start()
    sb.run_for(10)
    for key, value in (("a", "1"), ("b", "2")):
        sb.put(key, value, partition=STUCK_PARTITION)
    sb.run_for(100)
    p = sb.partition(STUCK_PARTITION)
    p.lag_replica(SLOW_BROKER, 200)
    p.stall_replica(STALLED_BROKER)
    sb.run_for(_WRITE_AT_MS)
    since = len(sb.trace)
    written_at = sb.scheduler.now
    write = sb.put("c", "3", partition=STUCK_PARTITION)
    sb.run_for(_QUESTION_AFTER_MS)
    return StuckWrite(sb, write, written_at, since)


def choices() -> Table:
    """The choices of exercise 4's two multiple-choice questions."""
    rows = [{"question": "why", "choice": k, "text": v} for k, v in WHY_CHOICES.items()]
    rows += [{"question": "outcome", "choice": k, "text": v} for k, v in OUTCOME_CHOICES.items()]
    return Table(rows, ["question", "choice", "text"], title="exercise 4: the choices")


_HOLDER = re.compile(r"broker (\d+) has confirmed")


@lru_cache(maxsize=1)
def _stuck_facts() -> dict[str, Any]:
    """What the kit does in exercise 4: at the question, and in the 60 s after it."""
    sw = stuck_write()
    p = sw.partition
    described = sw.describe()
    why_text = p.why_not_committed()
    record_end = p.log_end_offset
    facts: dict[str, Any] = {
        "why_not_committed": why_text,
        "holders": tuple(sorted(int(b) for b in _HOLDER.findall(why_text))),
        "leader": p.leader_id,
        "state": described["state"],
        "open_batch": described["open_batch"],
        "stalled_in_isr": STALLED_BROKER in p.isr,
        "hwm": p.high_watermark,
        "record_end": record_end,
        "confirmed": {b: (p.log_end_offset if b == p.leader_id else r.known_leo)
                      for b, r in p.replicas.items()},
        "written_at": sw.written_at,
    }
    sb = sw.sandbox
    deadline = sb.scheduler.now + 60_000

    def when(condition: Any) -> int | None:
        try:
            sb.run_until(condition, limit_ms=max(deadline - sb.scheduler.now, 0))
        except SchedulerLimitExceeded:
            return None
        return sb.scheduler.now

    # Each of these happens once and stays true, so asking in turn finds each moment.
    done_at = when(sw.write.done)
    shrunk_at = when(lambda: STALLED_BROKER not in p.isr)
    committed_at = when(lambda: p.high_watermark >= record_end)
    error = None
    if sw.write.done():
        exc = sw.write.exception()
        error = exc.error if isinstance(exc, KafkaError) else None
    read = sb.get("c", partition=STUCK_PARTITION)
    sb.scheduler.run_pending()
    facts.update({
        "done_by": done_at, "error": error, "succeeded": sw.write.done() and error is None
        and sw.write.exception() is None,
        "shrunk_by": shrunk_at, "committed_by": committed_at,
        "stalled_never_fetched": p.replicas[STALLED_BROKER].log_end_offset < record_end,
        "in_log": p.log_end_offset >= record_end,
        "read_back": read.result() if read.done() and not read.failed() else None,
    })
    facts["why_true"] = {
        "a": not (facts["committed_by"] is not None and facts["stalled_never_fetched"]),
        "b": facts["stalled_in_isr"] and facts["holders"] == (STALLED_BROKER,)
        and facts["committed_by"] is not None and facts["shrunk_by"] is not None
        and facts["committed_by"] >= facts["shrunk_by"],
        "c": facts["state"] != "ACTIVE",
        "d": facts["open_batch"] is not None,
    }
    facts["outcome_true"] = {
        "a": not sw.write.done(),
        "b": facts["error"] is Errors.REQUEST_TIMED_OUT and facts["in_log"]
        and facts["read_back"] == "3",
        "c": facts["error"] is Errors.NOT_COORDINATOR and not facts["in_log"],
        "d": bool(facts["succeeded"]),
    }
    return facts


def _letter(value: Any) -> str | None:
    if isinstance(value, str) and value.strip().lower().strip("()") in ("a", "b", "c", "d"):
        return value.strip().lower().strip("()")
    return None


def check_stuck_write(answer: Any) -> Feedback:
    """Exercise 4: {"broker": id, "why": letter, "outcome": letter}: which replica holds the
    high watermark of the stuck write's partition, why the leader waits for it (`WHY_CHOICES`)
    and what the write's caller gets (`OUTCOME_CHOICES`). The check runs `stuck_write` on and
    compares with `why_not_committed()` and with what the write and the log did."""
    ex = "Exercise 4"
    shape = 'a dict such as {"broker": 1, "why": "a", "outcome": "a"}'
    if unanswered(answer):
        return _not_answered(ex, shape)
    if not isinstance(answer, Mapping) or set(answer) != {"broker", "why", "outcome"}:
        return Feedback(ex, "wrong", f"Give {shape}, with exactly these three keys.")
    f = _stuck_facts()
    parts: list[str] = []
    status = "correct"

    def wrong(text: str) -> None:
        nonlocal status
        status = "wrong"
        parts.append(text)

    pending = [k for k in ("broker", "why", "outcome") if unanswered(answer[k])]
    broker = answer["broker"]
    if "broker" in pending:
        parts.append("broker: not answered yet")
    elif not _is_int(broker) or broker not in f["confirmed"]:
        wrong(f"broker: give a broker id, one of {sorted(f['confirmed'])}")
    elif (broker,) == f["holders"]:
        parts.append(f"broker: correct, broker {broker} has confirmed offset "
                     f"{f['confirmed'][broker]} only, and the write's record ends at "
                     f"{f['record_end']}")
    elif broker == f["leader"]:
        wrong(f"broker: broker {broker} is the leader; its own log already ends at offset "
              f"{f['record_end']}. Which in-sync replica has confirmed less?")
    else:
        wrong(f"broker: broker {broker} is slow, but it has confirmed offset "
              f"{f['confirmed'][broker]}, which covers the write. Which in-sync replica "
              f"has not?")
    for key, table, truth in (("why", WHY_CHOICES, f["why_true"]),
                              ("outcome", OUTCOME_CHOICES, f["outcome_true"])):
        if key in pending:
            parts.append(f"{key}: not answered yet")
            continue
        letter = _letter(answer[key])
        if letter is None:
            wrong(f"{key}: choose one of the letters {', '.join(table)}")
        elif truth[letter]:
            parts.append(f"{key}: correct")
        else:
            wrong(f"{key}: {_stuck_hint(key, letter, f)}")
    if status == "correct" and pending:
        status = "unanswered"
    message = _sentences(parts)
    if status == "correct":
        message += (f" In the run the write failed with {f['error'].name} at "
                    f"{clock(f['done_by'])}, 5000 ms after it went out; at {clock(f['shrunk_by'])} "
                    f"the leader dropped broker {STALLED_BROKER} from the ISR, the high "
                    f"watermark passed the record, and a read now returns c={f['read_back']}. "
                    f"(A group coordinator request would answer the client "
                    f"COORDINATOR_NOT_AVAILABLE instead of REQUEST_TIMED_OUT, and the client "
                    f"retries.)")
    return Feedback(ex, status, message)


def _stuck_hint(key: str, letter: str, f: Mapping[str, Any]) -> str:
    if key == "why":
        return {
            "a": (f"in the run offset {f['record_end']} is committed at "
                  f"{clock(f['committed_by'] or 0)} although broker {STALLED_BROKER} never "
                  f"fetched it: the leader does not wait for every replica"),
            "c": (f"describe() shows state {f['state']}: loading ended long before the write; "
                  f"and a write that meets a loading context fails at once with "
                  f"COORDINATOR_LOAD_IN_PROGRESS, it is not queued"),
            "d": (f"describe() shows open_batch {f['open_batch']}: with append.linger.ms 0 the "
                  f"batch went to the log at once (log end offset {f['record_end']})"),
            "b": "look again at the replica table",
        }[letter]
    return {
        "a": ("nothing waits forever in the runtime: every write has an operation timeout "
              "(offsets.commit.timeout.ms for the group coordinator; 5000 ms in this sandbox)"),
        "c": ("NOT_COORDINATOR comes from an unload or a failed context; this context stays "
              "ACTIVE throughout, and a record that reached the log is not taken out"),
        "d": ("the write's future is completed before the ISR shrinks; what ends a write that "
              "has waited for its operation timeout?"),
        "b": "look again at what happens to the write",
    }[letter]


# ---------------------------------------------------------------------------------------------
# All four
# ---------------------------------------------------------------------------------------------

EXERCISES: Mapping[str, tuple[str, Any]] = {
    "answer_1": ("a session timeout that survives a 10 s pause", check_session_timeout),
    "answer_2": ("who started a generation, from the logs", check_generation_cause),
    "answer_3": ("predict an assignment", check_assignment),
    "answer_4": ("explain a stuck write", check_stuck_write),
}


def scoreboard(*answers: Any) -> Table:
    """Every exercise's check on the given answers (answer_1 ... answer_4), as one table."""
    if len(answers) != len(EXERCISES):
        raise TypeError(f"scoreboard takes the {len(EXERCISES)} answers answer_1 ... "
                        f"answer_{len(EXERCISES)}, got {len(answers)}")
    marks = {"correct": "✔ correct", "wrong": "✘ not yet", "unanswered": "… not answered yet"}
    rows = []
    score = 0
    for (name, (topic, check)), answer in zip(EXERCISES.items(), answers):
        result = check(answer)
        score += result.correct
        rows.append({"exercise": result.exercise, "topic": topic,
                     "result": marks[result.status]})
    return Table(rows, ["exercise", "topic", "result"],
                 title=f"score: {score} of {len(EXERCISES)}")
