"""Notebook 00, welcome: the small cluster of its *Try it* section and the checks of its two
exercises.

The exercises ask for what the notebook shows, each checked against a seeded run of the kit:

1. when does the coordinator remove a crashed consumer's member? Kafka's classic group keeps a
   session timer per member (`GroupMetadataManager`'s ``heartbeat-<group>-<member>`` timer,
   re-armed by every Heartbeat and, while the group is Stable, every OffsetCommit); the member
   is removed when it runs out ("has failed, removing it from the group"), ``session.timeout.ms``
   after the last request that re-armed it, whatever the moment the process died;
2. which states does a coordinator context go through when its load fails and leadership then
   moves away? Kafka's `CoordinatorRuntime` creates the context in INITIAL, moves it to LOADING
   (`scheduleLoadOperation`), to FAILED when the load fails, and to CLOSED when the broker
   resigns (`scheduleUnloadOperation`); the moves are those of `CONTEXT_STATES`
   (`CoordinatorState.canTransitionFrom`), the table the notebook's first diagram is drawn from.

A check never raises: an unanswered exercise (``...`` or None) says so, a wrong answer gets a
hint that names what happened in the run. The answers live in the teacher copy
``teachers/00_welcome.ipynb``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..cluster import Cluster
from ..runtime.runtime import CONTEXT_STATES, CoordinatorState
from ..runtime.sandbox import RuntimeSandbox
from ..scenarios import new_cluster
from .heartbeats import (GROUP, Feedback, LessonRun, LogView, clock, member_ids, not_answered,
                         unanswered)

__all__ = [
    "GROUP", "SESSION_TIMEOUT_MS", "SETTLE_MS", "small_group",
    # exercise 1
    "CRASHED", "CRASH_AT_MS", "crash_run", "CrashFacts", "crash_facts", "check_crash_expiry",
    # exercise 2
    "FAILED_BROKER", "NEW_LEADER", "failed_load_run", "context_path", "transitions_log",
    "check_failed_load",
]

SESSION_TIMEOUT_MS = 10_000  # Kafka's default is 45 000: shorter, so an expiry comes soon
SETTLE_MS = 10_000           # small_group runs this long: the group is Stable by then


def small_group(seed: int = 0, **config: Any) -> Cluster:
    """Three brokers, one `__consumer_offsets` partition (led by broker 0) and two consumers of
    `group-1` with ``session.timeout.ms=10000``, run for 10 s: Stable in generation 1.

    `config` takes ConsumerConfig field names (e.g. ``heartbeat_interval_ms=1000``) for both
    consumers."""
    cluster = new_cluster(seed, offsets_partitions=1)
    settings = {"session_timeout_ms": SESSION_TIMEOUT_MS, **config}
    for name in ("consumer-1", "consumer-2"):
        cluster.add_consumer(name, GROUP, **settings)
    cluster.run_for(SETTLE_MS)
    return cluster


# ---------------------------------------------------------------------------------------------
# Exercise 1: when is a crashed consumer removed?

CRASHED = "consumer-2"
CRASH_AT_MS = 17_000


def crash_run(crash_at_ms: int = CRASH_AT_MS, *, seed: int = 0) -> LessonRun:
    """`small_group`, run on to `crash_at_ms`, where `consumer-2` crashes (no LeaveGroup), then
    30 s more. The run's mark is the crash."""
    cluster = small_group(seed)
    if crash_at_ms < cluster.scheduler.now:
        raise ValueError(f"crash_at_ms must be at least {cluster.scheduler.now} (the group is "
                         f"built by then), got {crash_at_ms}")
    cluster.run_for(crash_at_ms - cluster.scheduler.now)
    run = LessonRun(cluster, len(cluster.trace), cluster.scheduler.now, {"crashed": CRASHED})
    cluster.crash(CRASHED)
    cluster.run_for(30_000)
    return run


@dataclass(frozen=True)
class CrashFacts:
    """What the coordinator did about the crashed consumer, read from the run's trace."""

    crash_ms: int
    expired_ms: int           # "has failed, removing it from the group"
    last_rearm_ms: int        # the last request that re-armed the session timer
    last_rearm_request: str   # Heartbeat, OffsetCommit...
    last_heartbeat_ms: int    # the last Heartbeat that re-armed it
    next_heartbeat_ms: int    # when the heartbeat thread would have sent the next one


# the coordinator's operation for each request that re-arms a session timer
_REQUESTS = {"classic-group-heartbeat": "Heartbeat", "commit-offset": "OffsetCommit",
             "classic-group-join": "JoinGroup", "classic-group-sync": "SyncGroup",
             "HighWatermarkUpdate": "SyncGroup (assignment committed)"}


def _rearms(run: LessonRun, client: str) -> list[tuple[int, str]]:
    """(time, request) of every re-arm of `client`'s session timer with the full session, in
    order: the request is the coordinator event that was executing when the timer was set."""
    keys = {f"heartbeat-{GROUP}-{m}" for m in member_ids(run.cluster, client)}
    executing: dict[str, str] = {}
    out = []
    for e in run.cluster.trace.events:
        if e.kind == "event_executed":
            name = getattr(e.fields.get("event"), "name", "") or ""
            executing[e.source] = _REQUESTS.get(name, name)
        elif e.kind == "timer_registered" and str(e.fields.get("key", "")) in keys \
                and int(e.fields["delay_ms"]) == SESSION_TIMEOUT_MS:
            out.append((e.ts, executing.get(e.source, "?")))
    return out


@lru_cache(maxsize=None)
def crash_facts(crash_at_ms: int = CRASH_AT_MS) -> CrashFacts:
    """The facts of `crash_run(crash_at_ms)` that the check of exercise 1 compares with."""
    run = crash_run(crash_at_ms)
    members = set(member_ids(run.cluster, CRASHED))
    expired = next(e.ts for e in run.events("member_session_expired")
                   if e.fields.get("member") in members)
    before = [(t, op) for t, op in _rearms(run, CRASHED) if t <= run.start_ms]
    last_t, last_op = before[-1]
    heartbeats = [t for t, op in before if op == "Heartbeat"]
    interval = run.cluster.consumer(CRASHED).config.heartbeat_interval_ms
    # a Heartbeat reaches the coordinator one network hop (1 ms) after the thread sends it
    return CrashFacts(run.start_ms, expired, last_t, last_op, heartbeats[-1],
                      heartbeats[-1] - 1 + interval)


_CLOCK = re.compile(r"^(\d\d):(\d\d):(\d\d)[,.](\d{3})$")


def _as_ms(answer: Any) -> int | None:
    """Virtual ms from an int, "26101", "26,101 ms" or a log time "09:00:26,101"; else None."""
    if isinstance(answer, bool):
        return None
    if isinstance(answer, int):
        return answer
    if not isinstance(answer, str):
        return None
    text = answer.strip().lower()
    m = re.fullmatch(r"([\d_,\s]+?)\s*(ms)?", text)
    if m and any(ch.isdigit() for ch in m.group(1)):
        return int(re.sub(r"[_,\s]", "", m.group(1)))
    m = _CLOCK.match(text)
    if m:
        h, mi, s, ms = (int(x) for x in m.groups())
        return ((h - 9) * 3600 + mi * 60 + s) * 1000 + ms
    return None


def check_crash_expiry(answer: Any) -> Feedback:
    """Exercise 1: the virtual time at which the coordinator removes `consumer-2`, crashed at
    17 000 ms in the *Try it* cluster (``session.timeout.ms=10000``)."""
    ex = "Exercise 1"
    if unanswered(answer):
        return not_answered(ex, "a time: virtual ms such as 23456, or a log time such as "
                                "\"09:00:23,456\"")
    ms = _as_ms(answer)
    if ms is None:
        return Feedback(ex, "wrong", f"{answer!r} is not a time. Give virtual ms (an int such "
                                     f"as 23456) or a log time such as \"09:00:23,456\".")
    f = crash_facts()
    if ms == f.expired_ms:
        return Feedback(ex, "correct", f"The last request that re-armed consumer-2's session "
                        f"timer ({f.last_rearm_request}) reached the coordinator at "
                        f"{f.last_rearm_ms:,} ms ({clock(f.last_rearm_ms)}); "
                        f"{SESSION_TIMEOUT_MS:,} ms later, at "
                        f"{ms:,} ms ({clock(ms)}), the coordinator logs that the member \"has "
                        f"failed\" and removes it. The crash itself is invisible to the broker.")
    if ms == f.crash_ms + SESSION_TIMEOUT_MS:
        hint = ("That counts session.timeout.ms from the crash. The coordinator does not know "
                "when the process died: its timer runs from the last request that reached it.")
    elif ms == f.last_heartbeat_ms + SESSION_TIMEOUT_MS and f.last_rearm_ms != f.last_heartbeat_ms:
        hint = (f"That is {SESSION_TIMEOUT_MS:,} ms after the last Heartbeat "
                f"({f.last_heartbeat_ms:,} ms), but a later {f.last_rearm_request} re-armed the "
                f"timer too: in a classic group, the coordinator counts offset commits as signs "
                f"of life.")
    elif ms == f.next_heartbeat_ms + 1 + SESSION_TIMEOUT_MS:
        hint = (f"The heartbeat due at {f.next_heartbeat_ms:,} ms was never sent: consumer-2 "
                f"had crashed by then.")
    elif ms <= f.crash_ms:
        hint = ("Before the crash consumer-2 is alive and re-arms its session every few "
                "seconds: it cannot be removed then.")
    elif abs(ms - f.expired_ms) <= 2:
        hint = ("Very close. The timer starts when a request reaches the coordinator, one "
                "network hop (1 ms) after the consumer sent it.")
    else:
        hint = ("Find the last request from consumer-2 that reached the coordinator before "
                "17 000 ms (the panel's session bar on broker 0, or the DEBUG log), then add "
                "session.timeout.ms.")
    return Feedback(ex, "wrong", f"{ms:,} ms ({clock(ms)}) is not it. {hint}")


# ---------------------------------------------------------------------------------------------
# Exercise 2: a failed load, then leadership moves away

FAILED_BROKER = 0  # leads __consumer_offsets-0; its first load fails
NEW_LEADER = 1     # takes the partition over 10 ms later


def failed_load_run(seed: int = 0) -> RuntimeSandbox:
    """A `RuntimeSandbox` whose broker 0 fails to load `__consumer_offsets-0` (an injected
    storage error while reading the log), after which leadership moves to broker 1."""
    sb = RuntimeSandbox(brokers=3, append_linger_ms=0, seed=seed)
    sb.leader().loader.fail_next_load(sb.tp())
    sb.start()
    sb.run_for(10)
    sb.move_leader(0, to_broker=NEW_LEADER)
    sb.run_for(10)
    return sb


def context_path(sandbox: RuntimeSandbox, broker: int, partition: int = 0
                 ) -> list[CoordinatorState]:
    """Every state `broker`'s context of the partition was in, in order, from its creation
    (INITIAL), read from the trace's ``context_transition`` events."""
    tp = sandbox.tp(partition)
    path: list[CoordinatorState] = []
    for e in sandbox.trace.events:
        if e.kind == "context_transition" and e.source == f"broker-{broker}" \
                and e.fields.get("tp") == tp:
            if not path:
                path.append(e.fields["old_state"])
            path.append(e.fields["new_state"])
    return path


def transitions_log(sandbox: RuntimeSandbox, broker: int) -> LogView:
    """The DEBUG lines "Transition from X to Y." of `broker`'s runtime, and its INFO/ERROR lines
    about loading and unloading."""
    tag = f"[GroupCoordinator id={broker}]"
    return LogView([line for line in sandbox.log_lines("DEBUG") if tag in line and (
        "Transition from" in line or "loading" in line.lower() or "load metadata" in line)])


@lru_cache(maxsize=None)
def _failed_load_path() -> tuple[CoordinatorState, ...]:
    return tuple(context_path(failed_load_run(), FAILED_BROKER))


def _state(value: Any) -> CoordinatorState | None:
    if isinstance(value, CoordinatorState):
        return value
    if isinstance(value, str):
        try:
            return CoordinatorState[value.strip().upper()]
        except KeyError:
            return None
    return None


def check_failed_load(answer: Any) -> Feedback:
    """Exercise 2: every state broker 0's context of `__consumer_offsets-0` is in, in order,
    when its load fails and leadership then moves to broker 1."""
    ex = "Exercise 2"
    if unanswered(answer):
        return not_answered(ex, "a list of states in order, e.g. [\"INITIAL\", \"ACTIVE\"]")
    if isinstance(answer, str) or not isinstance(answer, Sequence):
        return Feedback(ex, "wrong", f"Give a list of state names in order, such as "
                                     f"[\"INITIAL\", \"ACTIVE\"], not {answer!r}.")
    states = [_state(v) for v in answer]
    unknown = [v for v, s in zip(answer, states) if s is None]
    if unknown:
        names = ", ".join(s.name for s in CONTEXT_STATES.states)
        return Feedback(ex, "wrong", f"{', '.join(repr(u) for u in unknown)}: not a state of a "
                                     f"coordinator context. The states are {names}.")
    truth = list(_failed_load_path())
    path = " → ".join(s.name for s in truth)
    if states == truth:
        return Feedback(ex, "correct", f"{path}. Broker 0 creates the context and starts "
                        f"loading; the load fails, so the context is FAILED (requests get "
                        f"NOT_COORDINATOR); when broker 1 takes leadership, broker 0 unloads it "
                        f"and the context is CLOSED, then dropped.")
    illegal = [(a, b) for a, b in zip(states, states[1:])
               if not CONTEXT_STATES.can_transition(a, b)]
    retried = any(a is CoordinatorState.FAILED and b is CoordinatorState.LOADING
                  for a, b in zip(states, states[1:]))
    if illegal:
        a, b = illegal[0]
        hint = (f"The runtime never moves a context from {a.name} to {b.name}: that arrow is "
                f"not in the diagram of section 1.")
    elif CoordinatorState.FAILED not in states:
        hint = "What state does a context go to when its load fails?"
    elif retried:
        hint = ("A FAILED context does not retry on its own: only a new leader election loads "
                "it again. Here broker 1 is elected, so broker 0 resigns and unloads the "
                "partition.")
    elif CoordinatorState.ACTIVE in states:
        hint = "The load never completes, so the context is never ACTIVE on broker 0."
    elif states[0] is not truth[0]:
        hint = ("Start where every context starts: the state it is created in, before the "
                "load begins.")
    elif states[-1] is not truth[-1]:
        hint = ("A FAILED context stays FAILED until the next leader election. Here broker 1 "
                "is elected, so broker 0 resigns and unloads the partition. Where does "
                "unloading leave a context?")
    else:
        hint = "Compare your list with the arrows of the diagram in section 1."
    return Feedback(ex, "wrong", f"{' → '.join(s.name for s in states) or '(empty)'} is not "
                                 f"it. {hint}")
