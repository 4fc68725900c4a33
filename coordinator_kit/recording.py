"""A cluster's run as a start plus actions, with checkpoints: rewind, step back, fork, compare.

The kit is deterministic (virtual time, seeded randomness, stable ordering), so a run is fully
described by where it started and what was done to it when. A `Recording` keeps exactly that,
per branch, and moves a live `Cluster` along it:

* **Moves.** A position counts *moves* since the start: every scheduler callback (run one at a
  time, as `Scheduler.step` runs them) and every action (a fault, a new consumer...) is one move.
  `Position(move, time)` names an instant; stepping back one move from just after a crash lands
  just before it, at the same millisecond.
* **Actions.** Everything that changes a run from outside goes through `Recording.act(name,
  ...)`, which calls the `Cluster` method of that name (table `ACTIONS`) and records it with its
  position. Replaying a branch re-applies its actions at the same moves.
* **Checkpoints.** Every so many moves the whole cluster is pickled (closures included, with
  cloudpickle; module-level sentinels by reference so `is` checks keep working; the trace's
  events are not copied: a checkpoint keeps how many there were). Seeking restores the nearest
  checkpoint at or before the target and replays the rest, so a jump anywhere costs one unpickle
  plus at most one checkpoint interval of simulation.
* **Branches.** Acting anywhere but at the end of the computed run forks a new branch there (the
  old one is kept); `fork()` does it explicitly. Branches share their common past (actions,
  checkpoints, trace). `cluster_at(branch, time)` builds a detached copy of another branch's
  cluster, for showing two branches side by side.
* **Self-check.** A replay compares every trace event it produces with the one recorded at that
  place the first time; a difference raises `ReplayDiverged` (it would mean the simulation is not
  deterministic, which the kit promises it is).

The cluster object itself stays the same Python object through every rewind (its state is
restored in place), so a notebook variable holding it stays valid. Objects taken out of it
(a `Consumer`, a `TimerHandle`) belong to one moment: take them again after a seek.

Inspired by RaftScope's `state.js` (checkpoints, `rewind`, `fork`, export) and DSLabs' visual
debugger (deliver the next pending event).
"""

from __future__ import annotations

import importlib
import io
import itertools
import pickle
import sys
import threading
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

import cloudpickle

from .cluster import Cluster, check_run_ms
from .errors import Errors
from .trace import TraceEvent

__all__ = ["Recording", "Position", "Action", "Branch", "ActionSpec", "ACTIONS",
           "ReplayDiverged", "CheckpointError", "important", "IMPORTANT_KINDS", "RECORDING_FORMAT"]

RECORDING_FORMAT = "coordinator_kit.recording/1"


class ReplayDiverged(RuntimeError):
    """A replay produced a trace that differs from the one recorded the first time."""


# -- what can be done to a run ------------------------------------------------------------------

@dataclass(frozen=True)
class ActionSpec:
    """One thing a learner can do to a cluster: the `Cluster` method it calls and what it means
    (the panel shows `hint` when the pointer rests on the button)."""

    name: str
    params: tuple[str, ...]
    hint: str


ACTIONS: dict[str, ActionSpec] = {a.name: a for a in (
    ActionSpec("crash", ("consumer",), "The consumer's process dies: no LeaveGroup, no commit. "
               "The coordinator only notices when the member's session.timeout.ms runs out."),
    ActionSpec("pause", ("consumer", "duration_ms"), "A stop-the-world pause (a long GC): no "
               "poll, no heartbeat for duration_ms. Longer than session.timeout.ms, the "
               "coordinator removes the member."),
    ActionSpec("resume", ("consumer",), "End a pause now: the work it held back runs at once."),
    ActionSpec("drop_heartbeats", ("consumer", "drop"), "Heartbeat requests are lost on the "
               "network (drop=True) or reach the coordinator again (drop=False). Other "
               "requests, OffsetCommit included, still get through."),
    ActionSpec("slow_poll", ("consumer", "processing_ms"), "The application spends "
               "processing_ms between two poll() calls. Above max.poll.interval.ms the "
               "consumer leaves the group by itself."),
    ActionSpec("cut_off", ("consumer", "cut"), "Every message to and from the consumer is lost "
               "(cut=True), or its network comes back (cut=False)."),
    ActionSpec("leave", ("consumer",), "Close the consumer: commit, then LeaveGroup (a static "
               "member sends none). The group rebalances at once."),
    ActionSpec("add_consumer", ("name", "group_id"), "Start a new consumer: it finds the "
               "coordinator and joins, and the group rebalances."),
    ActionSpec("restart_consumer", ("consumer", "down_ms"), "Close the consumer and start a new "
               "process with the same configuration down_ms later."),
    ActionSpec("move_coordinator", ("partition", "to_broker"), "Elect another broker leader of "
               "a __consumer_offsets partition: the old one unloads the groups, the new one "
               "loads them from the log; requests meanwhile get NOT_COORDINATOR or "
               "COORDINATOR_LOAD_IN_PROGRESS."),
    ActionSpec("fail_next_load", ("partition", "broker"), "The broker's next load of the "
               "partition fails: its coordinator context goes to FAILED."),
    ActionSpec("fail_next_append", ("partition", "error"), "The partition's next append fails "
               "(KAFKA_STORAGE_ERROR): the write is answered with the error and its changes "
               "are reverted."),
    ActionSpec("stall_replica", ("partition", "broker", "stalled"), "The broker's replica of "
               "the partition stops fetching (stalled=True) or fetches again: the high "
               "watermark cannot pass it until it drops out of the ISR."),
)}


@dataclass(frozen=True)
class Position:
    """An instant of a run: `move` moves made since the start (callbacks and actions), the
    clock at `time` (virtual ms)."""

    move: int
    time: int

    def __str__(self) -> str:
        return f"move {self.move:,} at {self.time:,} ms"


@dataclass(frozen=True)
class Action:
    """An action made at `position` (it is move number `position.move + 1`)."""

    position: Position
    name: str
    args: tuple[Any, ...] = ()
    kwargs: tuple[tuple[str, Any], ...] = ()

    def describe(self) -> str:
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs]
        return f"{self.position.time:,} ms: {self.name}({', '.join(parts)})"

    def to_json(self) -> list[Any]:
        return [self.position.move, self.position.time, self.name, list(self.args),
                dict(self.kwargs)]

    @classmethod
    def from_json(cls, row: list[Any]) -> Action:
        move, time, name, args, kwargs = row
        return cls(Position(int(move), int(time)), str(name), tuple(args),
                   tuple(sorted(dict(kwargs).items())))


@dataclass
class _Checkpoint:
    position: Position
    trace_len: int
    state: bytes


@dataclass
class Branch:
    """One line of a run. `events` is its trace as far as it was computed (`frontier`)."""

    name: str
    parent: str | None
    forked_at: Position | None
    actions: list[Action]
    checkpoints: list[_Checkpoint]
    events: list[TraceEvent]
    frontier: Position
    # positions at which every callback due at or before `time` had run, every ~1,000 moves:
    # from one of them a replay runs whole milliseconds in bulk (see Recording.seek_move)
    index: list[Position]

    def describe(self) -> str:
        where = "" if self.forked_at is None else f", forked from {self.parent} at " \
            f"{self.forked_at.time:,} ms"
        return f"{self.name} ({len(self.actions)} actions{where}; computed to " \
            f"{self.frontier.time:,} ms)"


# -- what counts as an event that matters -------------------------------------------------------

IMPORTANT_KINDS = frozenset({
    "member_state", "rebalance_started", "group_stabilized", "group_empty", "group_loaded",
    "group_unloaded", "context_transition", "member_session_expired", "member_left",
    "generation_reset", "coordinator_lost", "heartbeat_failed_coordinator", "partitions_lost",
    "partitions_revoked", "partitions_assigned", "consumer_crashed", "consumer_paused",
    "consumer_failed", "offset_commit_failed", "leader_elected", "load_completed",
    "load_failed", "static_member_replaced", "isr_shrink", "isr_updated", "request_dropped",
    "poll_timeout", "network_cut", "network_restored",
})


def important(event: TraceEvent) -> bool:
    """An event a learner wants to stop at: a state change, a rebalance starting or ending, a
    member leaving or expiring, a coordinator moving, a lost request, or anything logged at WARN
    or ERROR (failed requests are)."""
    if event.kind in IMPORTANT_KINDS or event.level in ("WARN", "ERROR"):
        return True
    error = event.fields.get("error")
    return isinstance(error, Errors) and error is not Errors.NONE


# -- pickling a cluster -------------------------------------------------------------------------

_LOCK = type(threading.Lock())
_RLOCK = type(threading.RLock())
_ATOMIC = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, int, float,
           str, bytes, bool, type(None), Enum)


def _count_value(counter: itertools.count) -> int:
    text = repr(counter)  # "count(7)": the next value, read without taking it
    return int(text[text.index("(") + 1:text.rindex(")")].split(",")[0])


def _reduce_count(counter: itertools.count) -> tuple[Any, ...]:
    return itertools.count, (_count_value(counter),)


def _reduce_condition(cond: threading.Condition) -> tuple[Any, ...]:
    return threading.Condition, (cond._lock,)  # type: ignore[attr-defined]


class _ModuleConstants:
    """`id -> (module, name)` of the kit's module-level objects (sentinels such as the network's
    `_IN_LANE`, shared caches): a checkpoint refers to them instead of copying them, so that
    identity checks (`x is _IN_LANE`) still hold after a restore."""

    def __init__(self) -> None:
        self._seen = -1
        self.by_id: dict[int, tuple[str, str]] = {}

    def refresh(self) -> None:
        modules = [(n, m) for n, m in list(sys.modules.items())
                   if m is not None and (n == "coordinator_kit" or n.startswith("coordinator_kit."))]
        if len(modules) == self._seen:
            return
        self._seen = len(modules)
        by_id: dict[int, tuple[str, str]] = {}
        for mod_name, module in sorted(modules):
            for name, value in vars(module).items():
                if name.startswith("__") or isinstance(value, _ATOMIC):
                    continue
                by_id.setdefault(id(value), (mod_name, name))
        self.by_id = by_id


_CONSTANTS = _ModuleConstants()


class _EventsMark:
    """Stands for the trace's event list in a checkpoint: how many events there were. Trace
    events never change once recorded, so a checkpoint shares them instead of copying them."""

    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        self.n = n


_ROOTS: list[Cluster] = []  # the cluster a checkpoint is being loaded into (see `_root`)
_LOAD_LOCK = threading.Lock()


def _root() -> Cluster:
    return _ROOTS[-1]


def _constant(module: str, name: str) -> Any:
    return getattr(importlib.import_module(module), name)


class _Pickler(cloudpickle.Pickler):
    dispatch_table = {**cloudpickle.Pickler.dispatch_table,  # type: ignore[dict-item]
                      _LOCK: lambda _l: (threading.Lock, ()),
                      _RLOCK: lambda _l: (threading.RLock, ()),
                      threading.Condition: _reduce_condition,
                      itertools.count: _reduce_count}

    def __init__(self, file: io.BytesIO, root: Cluster) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._root = root
        self._constants = _CONSTANTS.by_id

    def reducer_override(self, obj: Any) -> Any:
        # Called for instances, classes and functions (not for str, int, list, dict...): the
        # cluster itself becomes a reference to the cluster being restored, so everything that
        # points at it keeps pointing at the same object; the kit's module-level objects are
        # referred to by name, so that identity checks (`x is _IN_LANE`) hold after a restore.
        if obj is self._root:
            return _root, ()
        ref = self._constants.get(id(obj))
        if ref is not None:
            return _constant, ref
        return super().reducer_override(obj)


class CheckpointError(RuntimeError):
    """The cluster holds something that cannot be copied into a checkpoint."""


def _snapshot(cluster: Cluster) -> bytes:
    _CONSTANTS.refresh()
    buf = io.BytesIO()
    trace = cluster.trace
    events = trace.events
    trace.events = _EventsMark(len(events))  # type: ignore[assignment]
    try:
        _Pickler(buf, cluster).dump(cluster.__dict__)
    except (TypeError, pickle.PicklingError, AttributeError) as exc:
        raise CheckpointError(
            f"cannot checkpoint this cluster ({exc}): something attached to it cannot be "
            "copied, typically a callback given to Consumer.on_state_change or "
            "Trace.subscribe that holds an open file, a socket, a lock or a widget. Attach such "
            "callbacks after recording, or make them keep only plain data") from exc
    finally:
        trace.events = events
    return buf.getvalue()


def _restore(state: bytes, cluster: Cluster, events: list[TraceEvent]) -> None:
    with _LOAD_LOCK:
        _ROOTS.append(cluster)
        try:
            restored = pickle.loads(state)
        finally:
            _ROOTS.pop()
    trace = restored["trace"]
    trace.events = events[:trace.events.n]
    cluster.__dict__.clear()
    cluster.__dict__.update(restored)


# -- the cursor: one cluster moving along one branch --------------------------------------------

class _Cursor:
    """A cluster at a position of a branch, moving forward by callbacks and the branch's
    recorded actions (never past the branch's frontier: the caller extends that)."""

    def __init__(self, cluster: Cluster, branch: Branch, position: Position) -> None:
        self.cluster = cluster
        self.branch = branch
        self.move = position.move

    @property
    def position(self) -> Position:
        return Position(self.move, self.cluster.scheduler.now)

    def restore(self, checkpoint: _Checkpoint) -> None:
        _restore(checkpoint.state, self.cluster, self.branch.events)
        self.move = checkpoint.position.move

    def next_action(self) -> Action | None:
        """The branch's first action not yet applied."""
        actions = self.branch.actions
        lo, hi = 0, len(actions)
        while lo < hi:
            mid = (lo + hi) // 2
            if actions[mid].position.move < self.move:
                lo = mid + 1
            else:
                hi = mid
        return actions[lo] if lo < len(actions) else None

    def _apply(self, action: Action) -> None:
        self._clock_to(action.position.time)
        _call(self.cluster, action)
        self.move += 1

    def _clock_to(self, time: int) -> None:
        sched = self.cluster.scheduler
        if sched.now < time:
            sched.advance(time - sched.now)

    def step(self) -> bool:
        """One move: the branch's action due here, else the next callback."""
        action = self.next_action()
        if action is not None and action.position.move == self.move:
            self._apply(action)
            return True
        if not self.cluster.scheduler.step():
            return False
        self.move += 1
        return True

    def _bulk(self, time: int) -> None:
        """Run every callback due at or before `time` (no action lies in between)."""
        if time >= self.cluster.scheduler.now:
            self.move += self.cluster.scheduler.run_until(time)

    def to_position(self, target: Position) -> None:
        """Reach `target` exactly: a position this branch went through (its move count, then
        its clock). Whole milliseconds run in bulk; only the last one callback by callback."""
        while True:
            action = self.next_action()
            if action is None or action.position.move >= target.move:
                break
            self.to_position(action.position)
            self._apply(action)
        self._bulk(target.time - 1)
        while self.move < target.move:
            if not self.step():
                raise ReplayDiverged(f"nothing left to run at move {self.move:,}, expected to "
                                     f"reach {target}")
        if self.move != target.move:
            raise ReplayDiverged(f"ran past {target}: at move {self.move:,}")
        self._clock_to(target.time)

    def to_move(self, move: int) -> None:
        """Make moves one by one until `move` were made (used where the time is not known)."""
        while self.move < move:
            if not self.step():
                raise ReplayDiverged(f"nothing left to run at move {self.move:,}, expected to "
                                     f"reach move {move:,}")

    def to_time(self, time: int, limit: Position) -> None:
        """Everything due at or before `time` (actions included), the clock at `time`; never
        past `limit` (the branch's frontier)."""
        if time >= limit.time:
            self.to_position(limit)
            return
        while True:
            action = self.next_action()
            if action is None or action.position.time > time:
                break
            self.to_position(action.position)
            self._apply(action)
        self._bulk(time)

def _call(cluster: Cluster, action: Action) -> Any:
    spec = ACTIONS.get(action.name)
    if spec is None:
        raise ValueError(f"unknown action {action.name!r}; known: {', '.join(ACTIONS)}")
    args = list(action.args)
    kwargs = dict(action.kwargs)
    if action.name == "fail_next_append":  # an error is recorded by name; another str is
        if len(args) > 1 and args[1] in Errors.__members__:  # refused by the cluster, by name
            args[1] = Errors[args[1]]
        if kwargs.get("error") in Errors.__members__:
            kwargs["error"] = Errors[kwargs["error"]]
    return getattr(cluster, action.name)(*args, **kwargs)


def _json_value(name: str, value: Any) -> Any:
    if isinstance(value, Errors):
        return value.name
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, (bool, int, str)) for v in value):
        return list(value)
    raise TypeError(f"action argument {name}={value!r} cannot be recorded: use str, int, bool "
                    f"or None (a recording must replay from its JSON export)")


# -- the recording ------------------------------------------------------------------------------

_MIN_INTERVAL = 2_000
_MAX_INTERVAL = 20_000
_INDEX_EVERY = 1_000  # moves between two entries of a branch's time index


class Recording:
    """A live `Cluster` that can go back: seek, step back, jump to the next event that matters,
    fork a branch, and build another branch's cluster for comparison.

    `Recording(cluster)` starts from the cluster as it is now (its past is not recorded: the
    start is move 0). `Recording.from_builder("module:function", **kwargs)` and
    `Recording.from_scenario(name, seed)` also remember how the start was built, so that
    `export()` gives a JSON document from which `Recording.from_export` rebuilds the run.
    `checkpoint_every` fixes the checkpoint interval in moves (by default it follows the size of
    a checkpoint: small clusters every 2,000 moves, 100 consumers about every 50,000).
    """

    def __init__(self, cluster: Cluster, *, checkpoint_every: int | None = None,
                 _recipe: Mapping[str, Any] | None = None) -> None:
        if not isinstance(cluster, Cluster):
            raise TypeError(f"Recording needs a Cluster, got {type(cluster).__name__}")
        if checkpoint_every is not None and (isinstance(checkpoint_every, bool) or
                                             not isinstance(checkpoint_every, int) or
                                             checkpoint_every < 1):
            raise ValueError(f"checkpoint_every must be a whole number of moves >= 1, got "
                             f"{checkpoint_every!r}")
        self._recipe = dict(_recipe) if _recipe is not None else None
        self._fixed_interval = checkpoint_every
        start = Position(0, cluster.scheduler.now)
        state = _snapshot(cluster)
        first = _Checkpoint(start, len(cluster.trace.events), state)
        main = Branch("main", None, None, [], [first], cluster.trace.events, start, [start])
        self.branches: dict[str, Branch] = {"main": main}
        self._cursor = _Cursor(cluster, main, start)
        self._interval = checkpoint_every or self._interval_for(len(state))
        self._chunk_ms = 1_000
        self._last_event_seek: tuple[int, Position] | None = None
        self.start = start
        self.restores = 0  # checkpoints restored so far (tests and benchmarks read it)

    # -- building -----------------------------------------------------------------------------

    @classmethod
    def from_builder(cls, builder: str, *, checkpoint_every: int | None = None,
                     **kwargs: Any) -> Recording:
        """Build the start with `module:function(**kwargs)` (a function returning a Cluster)."""
        for key, value in kwargs.items():
            _json_value(key, value)
        cluster = _build(builder, kwargs)
        return cls(cluster, checkpoint_every=checkpoint_every,
                   _recipe={"builder": builder, "kwargs": dict(kwargs)})

    @classmethod
    def from_scenario(cls, name: str, seed: int = 0, *, checkpoint_every: int | None = None,
                      **kwargs: Any) -> Recording:
        """Start from a named scenario of `coordinator_kit.scenarios`, after it ran."""
        return cls.from_builder("coordinator_kit.scenarios:run_scenario", name=name, seed=seed,
                                checkpoint_every=checkpoint_every, **kwargs)

    # -- where we are -------------------------------------------------------------------------

    @property
    def cluster(self) -> Cluster:
        """The live cluster (always the same object; its state follows every seek)."""
        return self._cursor.cluster

    @property
    def branch(self) -> Branch:
        return self._cursor.branch

    @property
    def position(self) -> Position:
        return self._cursor.position

    @property
    def frontier(self) -> Position:
        """How far the current branch has been computed."""
        return self.branch.frontier

    @property
    def actions(self) -> list[Action]:
        """The current branch's actions, oldest first."""
        return list(self.branch.actions)

    @property
    def checkpoints(self) -> list[Position]:
        """Where the current branch keeps checkpoints."""
        return [c.position for c in self.branch.checkpoints]

    def at_end(self) -> bool:
        """True at the end of what the branch has computed (where an action extends it)."""
        return self.position == self.branch.frontier

    def __repr__(self) -> str:
        n = len(self.branches)
        return (f"Recording(branch {self.branch.name!r} at {self.position}, computed to "
                f"{self.frontier.time:,} ms, {n} branch{'' if n == 1 else 'es'})")

    # -- moving forward -----------------------------------------------------------------------

    def run_for(self, ms: int) -> Position:
        """Run everything due in the next `ms` virtual milliseconds (like `Cluster.run_for`, at
        most `MAX_RUN_MS`, a virtual week)."""
        _check_ms("ms", ms, minimum=0)
        check_run_ms("ms", ms)
        return self.run_to(self.position.time + ms)

    def run_to(self, time: int) -> Position:
        """Go to virtual time `time` on this branch: replayed up to what was computed, computed
        (with checkpoints) beyond it, at most `MAX_RUN_MS` (a virtual week) ahead. A time before
        now seeks back."""
        _check_ms("time", time, minimum=0)
        check_run_ms("time", time, now=self.position.time)
        if time < self.position.time:
            return self.seek(time)
        cur = self._cursor
        frontier = self.branch.frontier
        if cur.move < frontier.move:
            self._replay(lambda: cur.to_time(time, frontier))
        if cur.move == frontier.move and time >= frontier.time:
            self._extend_to_time(time)
        return self.position

    def step(self) -> bool:
        """One move forward: the branch's next action, else the next callback. False when
        nothing is left to run."""
        cur = self._cursor
        frontier = self.branch.frontier
        if cur.move >= frontier.move:
            cur._clock_to(frontier.time)
            if not cur.step():
                return False
            self._advance_frontier()
            return True
        self._replay(cur.step)
        return True

    def next_event(self, predicate: Callable[[TraceEvent], bool] = important, *,
                   limit_ms: int = 600_000) -> TraceEvent | None:
        """Go to just after the move that recorded the next trace event that matters
        (`important` by default), computing the branch further when needed, at most `limit_ms`
        ahead (at most `MAX_RUN_MS`, a virtual week). Returns that event; None when there was
        none (the position is then `limit_ms` ahead)."""
        _check_ms("limit_ms", limit_ms, minimum=1)
        check_run_ms("limit_ms", limit_ms)
        start = len(self.cluster.trace.events)
        deadline = self.position.time + limit_ms
        while True:
            events = self.branch.events
            found = next((e for e in itertools.islice(events, start, None) if predicate(e)),
                         None)
            if found is not None:
                if found.ts > deadline:
                    self.run_to(deadline)
                    return None
                self.seek_event(found.seq)
                return found
            start = len(events)
            if self.branch.frontier.time >= deadline:
                self.run_to(deadline)
                return None
            frontier = self.branch.frontier.time
            self.run_to(min(deadline, frontier + max(1_000, limit_ms // 10)))

    def previous_event(self, predicate: Callable[[TraceEvent], bool] = important
                       ) -> TraceEvent | None:
        """Go back to just after the move that recorded the last event that matters before
        now (None, and no move, when there is none)."""
        n = len(self.cluster.trace.events)
        here = self.position
        first = self.branch.checkpoints[0].trace_len  # what happened before the start is not
        for e in reversed(self.cluster.trace.events[first:n]):  # reachable
            if not predicate(e):
                continue
            if self._last_event_seek == (e.seq, here):
                continue  # we stand right after it: the one before
            self.seek_event(e.seq)
            if self.position == here:  # it was the move that brought us here
                continue
            return e
        return None

    # -- moving back --------------------------------------------------------------------------

    def seek(self, time: int) -> Position:
        """Go to virtual time `time` on this branch: everything due at or before it done."""
        _check_ms("time", time, minimum=0)
        if time < self.start.time:
            raise ValueError(f"time {time:,} ms is before the recording's start at "
                             f"{self.start.time:,} ms")
        if time > self.branch.frontier.time:
            return self.run_to(time)
        cur = self._cursor
        if time < cur.position.time:
            self._restore(_last(self.branch, lambda c: c.position.time <= time))
        frontier = self.branch.frontier
        self._replay(lambda: cur.to_time(time, frontier))
        return self.position

    def seek_position(self, target: Position) -> Position:
        """Go to exactly `target` (a position this branch went through)."""
        frontier = self.branch.frontier
        if target.move > frontier.move or target.time > frontier.time:
            raise ValueError(f"{target} is beyond what branch {self.branch.name!r} has "
                             f"computed ({frontier})")
        cur = self._cursor
        if target.move < cur.move or (target.move == cur.move and target.time < cur.position.time):
            self._restore(_last(self.branch, lambda c: c.position.move <= target.move and
                                c.position.time <= target.time))
        self._replay(lambda: cur.to_position(target))
        return self.position

    def seek_move(self, move: int) -> Position:
        """Go to just after move number `move` of this branch."""
        if isinstance(move, bool) or not isinstance(move, int) or move < self.start.move:
            raise ValueError(f"move must be a whole number >= {self.start.move}, got {move!r}")
        frontier = self.branch.frontier
        if move > frontier.move:
            raise ValueError(f"move {move:,} is beyond what branch {self.branch.name!r} has "
                             f"computed ({frontier.move:,} moves); step or run_to to compute "
                             "further")
        if move == frontier.move:
            return self.seek_position(frontier)
        cur = self._cursor
        # the last indexed position at or before `move`: bulk up to it, then move by move
        index = self.branch.index
        lo, hi = 0, len(index)
        while lo < hi:
            mid = (lo + hi) // 2
            if index[mid].move <= move:
                lo = mid + 1
            else:
                hi = mid
        near = index[lo - 1]
        if move < cur.move:
            self._restore(_last(self.branch, lambda c: c.position.move <= move))

        def forward() -> None:
            if near.move > cur.move:
                cur.to_position(near)
            cur.to_move(move)
        self._replay(forward)
        return self.position

    def step_back(self, moves: int = 1) -> Position:
        """Undo the last `moves` moves (callbacks or actions)."""
        if isinstance(moves, bool) or not isinstance(moves, int) or moves < 1:
            raise ValueError(f"moves must be a whole number >= 1, got {moves!r}")
        return self.seek_move(max(self.start.move, self.position.move - moves))

    def seek_event(self, seq: int) -> Position:
        """Go to just after the move that recorded trace event number `seq` of this branch."""
        events = self.branch.events
        if isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq < len(events):
            raise ValueError(f"no trace event #{seq!r} on branch {self.branch.name!r} (it has "
                             f"{len(events):,} so far)")
        first = self.branch.checkpoints[0].trace_len
        if seq < first:
            raise ValueError(f"trace event #{seq} happened before the recording started (its "
                             f"first event is #{first}): a recording can only go back to its "
                             "start")
        cur = self._cursor
        target = events[seq]
        if len(cur.cluster.trace.events) > seq or cur.position.time > target.ts:
            self._restore(_last(self.branch, lambda c: c.trace_len <= seq))

        def forward() -> None:
            before = target.ts - 1
            if before > cur.cluster.scheduler.now:
                cur.to_time(before, self.branch.frontier)
            while len(cur.cluster.trace.events) <= seq:
                if not cur.step():
                    raise ReplayDiverged(f"trace event #{seq} never came back")
        self._replay(forward)
        self._last_event_seek = (seq, self.position)
        return self.position

    # -- acting -------------------------------------------------------------------------------

    def act(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Do `name` to the cluster now (see `ACTIONS`) and record it; returns what the `Cluster`
        method returns. Anywhere but at the end of the computed branch, this first forks a new
        branch here (the old one is kept). A refused action (the cluster raises) leaves no
        trace: the cluster is put back as it was and the error is raised."""
        spec = ACTIONS.get(name)
        if spec is None:
            raise ValueError(f"unknown action {name!r}; known actions: {', '.join(ACTIONS)}")
        if len(args) > len(spec.params):
            raise TypeError(f"{name} takes at most {len(spec.params)} arguments "
                            f"({', '.join(spec.params)}), got {len(args)}")
        action = Action(self.position, name,
                        tuple(_json_value(p, a) for p, a in zip(spec.params, args)),
                        tuple(sorted((k, _json_value(k, v)) for k, v in kwargs.items())))
        if not self.at_end():
            self.fork()
        cur = self._cursor
        branch = self.branch
        if branch.checkpoints[-1].position != cur.position:
            self._checkpoint()  # the way back if the cluster refuses, and a cheap step back
        trace_len = len(branch.events)
        try:
            result = _call(cur.cluster, action)
        except Exception:
            del branch.events[trace_len:]
            cp = branch.checkpoints[-1]
            self._restore(cp)
            cur.cluster.trace.events = branch.events
            raise
        branch.actions.append(action)
        cur.move += 1
        self._advance_frontier()
        return result

    def fork(self, name: str | None = None) -> Branch:
        """A new branch from the current position, made current; the old branch is kept."""
        old = self.branch
        if name is None:
            i = len(self.branches) + 1
            while f"branch {i}" in self.branches:
                i += 1
            name = f"branch {i}"
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"a branch name must be a non-empty string, got {name!r}")
        if name in self.branches:
            raise ValueError(f"there is already a branch named {name!r}")
        cur = self._cursor
        pos = cur.position
        events = cur.cluster.trace.events
        if events is old.events:  # at the old frontier: the old branch keeps its own list
            events = list(events)
            cur.cluster.trace.events = events
        new = Branch(name, old.name, pos,
                     [a for a in old.actions if a.position.move < pos.move],
                     [c for c in old.checkpoints if c.position.move <= pos.move and
                      c.position.time <= pos.time],
                     events, pos,
                     [p for p in old.index if p.move <= pos.move and p.time <= pos.time])
        self.branches[name] = new
        cur.branch = new
        if new.checkpoints[-1].position != pos:
            self._checkpoint()
        return new

    def switch(self, name: str, *, time: int | None = None) -> Position:
        """Make branch `name` current, at `time` (default: the current time, or the branch's
        end when it ends earlier)."""
        branch = self._branch(name)
        if time is None:
            time = min(self.position.time, branch.frontier.time)
        _check_ms("time", time, minimum=self.start.time)
        if time > branch.frontier.time:
            raise ValueError(f"branch {name!r} is computed to {branch.frontier.time:,} ms, not "
                             f"{time:,}")
        cur = self._cursor
        cur.branch = branch
        self._restore(_last(branch, lambda c: c.position.time <= time))
        self._replay(lambda: cur.to_time(time, branch.frontier))
        return self.position

    def cluster_at(self, branch: str, time: int) -> Cluster:
        """A detached copy of branch `branch`'s cluster at `time` (for showing two branches side
        by side); the live cluster does not move."""
        b = self._branch(branch)
        _check_ms("time", time, minimum=self.start.time)
        if time > b.frontier.time:
            raise ValueError(f"branch {branch!r} is computed to {b.frontier.time:,} ms, not "
                             f"{time:,}; switch to it and run it further first")
        cp = _last(b, lambda c: c.position.time <= time)
        copy = Cluster.__new__(Cluster)
        _restore(cp.state, copy, b.events)
        cursor = _Cursor(copy, b, cp.position)
        self.restores += 1
        with _quiet(copy):
            cursor.to_time(time, b.frontier)
        _verify(copy.trace.events, b.events, cp.trace_len)
        return copy

    def lookahead(self, ms: int) -> list[TraceEvent]:
        """The trace events this branch makes in the next `ms` virtual ms (its later actions
        included), worked out on a copy: the live cluster does not move and nothing is added
        to the branch. For "predict, then reveal" questions."""
        _check_ms("ms", ms, minimum=0)
        target = self.position.time + ms
        copy = Cluster.__new__(Cluster)
        _restore(_snapshot(self.cluster), copy, self.cluster.trace.events)
        cursor = _Cursor(copy, self.branch, self.position)
        start = len(copy.trace.events)
        frontier = self.branch.frontier
        with _quiet(copy):
            if target <= frontier.time:
                cursor.to_time(target, frontier)
            else:
                if cursor.move < frontier.move or cursor.position.time < frontier.time:
                    cursor.to_position(frontier)
                copy.scheduler.run_until(target)
        return copy.trace.events[start:]

    # -- export -------------------------------------------------------------------------------

    def export(self) -> dict[str, Any]:
        """A JSON-ready document of the run: how the start was built and every branch's
        actions. `Recording.from_export(doc)` rebuilds it."""
        if self._recipe is None:
            raise ValueError("this recording started from a cluster built in code, so its start "
                             "cannot be written down; use Recording.from_scenario(...) or "
                             "Recording.from_builder('module:function', ...) to export")
        return {"format": RECORDING_FORMAT, "start": self._recipe,
                "branches": [{"name": b.name, "parent": b.parent,
                              "forked_at": None if b.forked_at is None
                              else [b.forked_at.move, b.forked_at.time],
                              "actions": [a.to_json() for a in b.actions],
                              "computed_to": [b.frontier.move, b.frontier.time]}
                             for b in self.branches.values()],
                "current": {"branch": self.branch.name,
                            "position": [self.position.move, self.position.time]}}

    @classmethod
    def from_export(cls, doc: Mapping[str, Any], *, checkpoint_every: int | None = None
                    ) -> Recording:
        """Rebuild a run from `export()`: the start, then each branch's actions replayed to
        where it had been computed; the current branch and position as they were."""
        if not isinstance(doc, Mapping) or doc.get("format") != RECORDING_FORMAT:
            got = doc.get("format") if isinstance(doc, Mapping) else type(doc).__name__
            raise ValueError(f"not a recording export: expected format {RECORDING_FORMAT!r}, "
                             f"got {got!r}")
        start = doc["start"]
        rec = cls.from_builder(start["builder"], checkpoint_every=checkpoint_every,
                               **start["kwargs"])
        for entry in doc["branches"]:
            if entry["parent"] is not None:
                parent = rec._branch(entry["parent"])
                rec.switch(parent.name, time=parent.frontier.time)
                move, time = entry["forked_at"]
                rec.seek_position(Position(int(move), int(time)))
                rec.fork(entry["name"])
            for row in entry["actions"]:
                action = Action.from_json(row)
                if action.position.move < rec.position.move:
                    continue  # made before the fork: the parent's
                rec._extend_to(action.position)
                rec.act(action.name, *action.args, **dict(action.kwargs))
            move, time = entry["computed_to"]
            rec._extend_to(Position(int(move), int(time)))
        current = doc["current"]
        branch = rec._branch(current["branch"])
        rec.switch(branch.name, time=branch.frontier.time)
        move, time = current["position"]
        rec.seek_position(Position(int(move), int(time)))
        return rec

    # -- internals ----------------------------------------------------------------------------

    def _branch(self, name: str) -> Branch:
        try:
            return self.branches[name]
        except KeyError:
            raise KeyError(f"no branch named {name!r}; branches: "
                           f"{', '.join(self.branches)}") from None

    def _extend_to(self, target: Position) -> None:
        """From the end of the branch, compute until exactly `target`."""
        cur = self._cursor
        if not self.at_end():
            raise ValueError("internal: extending a branch from before its end")
        if target.time - 1 > cur.position.time:
            self._extend_to_time(target.time - 1)
        while cur.move < target.move:
            if not cur.step():
                raise ReplayDiverged(f"could not reach {target}: nothing left to run")
            self._advance_frontier()
        cur._clock_to(target.time)
        self._advance_frontier()
        if self.position != target:
            raise ReplayDiverged(f"expected to reach {target}, reached {self.position}")

    @staticmethod
    def _interval_for(state_bytes: int) -> int:
        # A checkpoint takes ~50 ns per byte to write, a move ~3.5 us to replay: one every
        # bytes/20 moves keeps checkpointing near a quarter of the recording's time (100
        # consumers: ~0.5 MB, one per ~26k moves, ~90 ms of replay at most), and small clusters
        # checkpoint every 2,000 moves, so that stepping back stays instant.
        return max(_MIN_INTERVAL, min(_MAX_INTERVAL, state_bytes // 20))

    def _checkpoint(self) -> None:
        cur = self._cursor
        state = _snapshot(cur.cluster)
        self.branch.checkpoints.append(
            _Checkpoint(cur.position, len(cur.cluster.trace.events), state))
        if self._fixed_interval is None:
            self._interval = self._interval_for(len(state))

    def _advance_frontier(self) -> None:
        cur = self._cursor
        b = self.branch
        b.frontier = cur.position
        b.events = cur.cluster.trace.events
        if cur.move - b.checkpoints[-1].position.move >= self._interval:
            self._checkpoint()

    def _extend_to_time(self, time: int) -> None:
        """From the end of the branch, compute up to `time` in chunks of virtual time sized to
        make about `_INDEX_EVERY` moves each; each chunk's end goes into the branch's index."""
        cur = self._cursor
        sched = cur.cluster.scheduler
        chunk = self._chunk_ms
        index = self.branch.index
        while True:
            end = min(time, sched.now + chunk)
            ran = sched.run_until(end)
            cur.move += ran
            if ran and index[-1].move <= cur.move - _INDEX_EVERY // 2:
                index.append(cur.position)
            self._advance_frontier()
            chunk = int(chunk * _INDEX_EVERY / ran) if ran else chunk * 4
            chunk = max(1, min(chunk, 3_600_000))
            if end >= time:
                break
        self._chunk_ms = chunk

    def _restore(self, cp: _Checkpoint) -> None:
        self._cursor.restore(cp)
        self.restores += 1

    def _replay(self, go: Callable[[], Any]) -> None:
        """Move the cursor inside the computed part of the branch, checking every trace event
        it makes against the one recorded there; Python logging stays quiet (the lines were
        logged the first time)."""
        cur = self._cursor
        recorded = self.branch.events
        if cur.cluster.trace.events is recorded:
            cur.cluster.trace.events = list(recorded)  # the frontier's own list stays as it is
        start = len(cur.cluster.trace.events)
        with _quiet(cur.cluster):
            go()
        _verify(cur.cluster.trace.events, recorded, start)
        if self.at_end():
            if len(cur.cluster.trace.events) != len(recorded):
                raise ReplayDiverged(f"the replay reached the end of branch "
                                     f"{self.branch.name!r} with "
                                     f"{len(cur.cluster.trace.events):,} trace events, "
                                     f"recorded {len(recorded):,}")
            cur.cluster.trace.events = recorded  # at the end again: share the list


class _quiet:
    """Python logging off while replaying (the records went out the first time)."""

    def __init__(self, cluster: Cluster) -> None:
        self.trace = cluster.trace

    def __enter__(self) -> None:
        self.was = self.trace.python_logging
        self.trace.python_logging = False

    def __exit__(self, *exc: Any) -> None:
        self.trace.python_logging = self.was


def _last(branch: Branch, ok: Callable[[_Checkpoint], bool]) -> _Checkpoint:
    for cp in reversed(branch.checkpoints):
        if ok(cp):
            return cp
    return branch.checkpoints[0]


def _verify(made: list[TraceEvent], recorded: list[TraceEvent], start: int) -> None:
    end = min(len(made), len(recorded))
    for i in range(start, end):
        a, b = made[i], recorded[i]
        if a is b:
            continue
        if (a.ts, a.kind, a.source, a.level, a.message) != \
                (b.ts, b.kind, b.source, b.level, b.message):
            raise ReplayDiverged(
                f"replay diverged at trace event #{i}: recorded {b.ts} ms {b.kind} "
                f"{b.message or b.fields!r}, replayed {a.ts} ms {a.kind} "
                f"{a.message or a.fields!r}")


def _check_ms(name: str, value: Any, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be a whole number of milliseconds >= {minimum}, got "
                         f"{value!r}")


def _build(builder: str, kwargs: Mapping[str, Any]) -> Cluster:
    module_name, _, func_name = builder.partition(":")
    if not module_name or not func_name:
        raise ValueError(f"builder must be 'module:function', got {builder!r}")
    try:
        func = getattr(importlib.import_module(module_name), func_name)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"cannot find builder {builder!r}: {exc}") from None
    cluster = func(**kwargs)
    if not isinstance(cluster, Cluster):
        raise TypeError(f"builder {builder!r} returned {type(cluster).__name__}, not a Cluster")
    return cluster
