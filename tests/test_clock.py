"""The virtual clock (`coordinator_kit.clock.Scheduler`).

Everything in the kit that waits schedules a callback on this clock instead of sleeping, so these
tests pin down its contract: integer milliseconds, a stable order for callbacks due at the same
time, cancellation, the `run_*` drivers, `advance` (a stalled thread), clear errors for bad input,
and (last) that nothing in the package reads the wall clock or the global random generator.
"""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest

from coordinator_kit.clock import Scheduler, SchedulerLimitExceeded, TimerHandle, TimerLane


def recorder(sched: Scheduler, log: list):
    """A callback factory: each callback appends `(label, sched.now)` to `log`."""

    def make(label):
        def cb(*args):
            log.append((label, sched.now) if not args else (label, sched.now, args))
        cb.__name__ = f"cb_{label}"
        return cb

    return make


# -- integer-millisecond time and ordering -------------------------------------------------------


def test_clock_starts_at_zero_or_start_ms_and_reads_integers():
    assert Scheduler().now == 0
    sched = Scheduler(start_ms=1_000)
    assert sched.now == 1_000 and sched.milliseconds() == 1_000
    sched.call_later(250, lambda: None)
    sched.step()
    assert sched.now == 1_250
    assert type(sched.now) is int


def test_callbacks_run_in_time_order_with_args():
    sched = Scheduler()
    log: list = []
    cb = recorder(sched, log)
    sched.call_later(30, cb("c"))
    sched.call_later(10, cb("a"), 1, 2)
    sched.call_at(20, cb("b"))
    sched.run_for(100)
    assert log == [("a", 10, (1, 2)), ("b", 20), ("c", 30)]
    assert sched.now == 100


def test_ties_are_broken_by_scheduling_order():
    """Two callbacks due at the same millisecond run in the order they were scheduled."""
    sched = Scheduler()
    log: list = []
    cb = recorder(sched, log)
    labels = ["x", "y", "z", "w", "v"]
    for label in labels:
        sched.call_at(50, cb(label))
    sched.call_later(50, cb("later-via-call_later"))
    sched.run_until(50)
    assert [entry[0] for entry in log] == labels + ["later-via-call_later"]
    assert all(entry[1] == 50 for entry in log)


def test_call_soon_runs_after_everything_already_due_now():
    sched = Scheduler()
    log: list = []
    cb = recorder(sched, log)

    def first():
        log.append(("first", sched.now))
        sched.call_soon(cb("soon-from-first"))

    sched.call_soon(first)
    sched.call_soon(cb("second"))
    assert sched.run_pending() == 3
    assert [e[0] for e in log] == ["first", "second", "soon-from-first"]
    assert sched.now == 0


def test_pending_and_peek():
    sched = Scheduler()
    assert sched.peek() is None and sched.pending() == []
    h2 = sched.call_at(20, lambda: None, name="two")
    h1 = sched.call_at(10, lambda: None, name="one")
    assert sched.peek() == 10
    assert sched.pending() == [h1, h2]
    assert "one" in repr(h1) and "10ms" in repr(h1) and "pending" in repr(h1)
    h1.cancel()
    assert sched.peek() == 20
    assert sched.pending() == [h2]


# -- cancellation ------------------------------------------------------------------------------


def test_cancelled_callback_never_runs():
    sched = Scheduler()
    ran: list = []
    handle = sched.call_later(10, ran.append, "cancelled")
    sched.call_later(10, ran.append, "kept")
    assert isinstance(handle, TimerHandle) and handle.pending
    assert handle.cancel() is True
    assert not handle.pending and handle.cancelled
    assert handle.cancel() is False  # second cancel is a no-op
    sched.run_for(1_000)
    assert ran == ["kept"]
    assert "cancelled" in repr(handle)


def test_cancel_returns_false_after_the_callback_ran():
    sched = Scheduler()
    handle = sched.call_later(5, lambda: None)
    sched.run_for(5)
    assert handle.done
    assert handle.cancel() is False
    assert not handle.cancelled


def test_a_callback_can_cancel_a_later_one_due_at_the_same_time():
    sched = Scheduler()
    ran: list = []
    later = sched.call_at(10, ran.append, "second")
    sched.call_at(5, lambda: ran.append("first") or later.cancel())
    sched.call_at(10, ran.append, "third")  # scheduled before `first` ran, after `later`
    sched.run_for(20)
    assert ran == ["first", "third"]


def test_cancel_inside_own_callback_returns_false():
    sched = Scheduler()
    result: list = []
    holder: list[TimerHandle] = []
    holder.append(sched.call_later(1, lambda: result.append(holder[0].cancel())))
    sched.step()
    assert result == [False]


# -- step / run_for / run_until / run_pending --------------------------------------------------


def test_step_runs_exactly_one_callback_and_moves_the_clock_to_it():
    sched = Scheduler()
    ran: list = []
    sched.call_at(7, ran.append, "a")
    sched.call_at(7, ran.append, "b")
    sched.call_at(40, ran.append, "c")
    assert sched.step() is True and ran == ["a"] and sched.now == 7
    assert sched.step() is True and ran == ["a", "b"] and sched.now == 7
    assert sched.step() is True and ran == ["a", "b", "c"] and sched.now == 40
    assert sched.step() is False and sched.now == 40


def test_step_skips_cancelled_callbacks():
    sched = Scheduler()
    ran: list = []
    sched.call_at(3, ran.append, "gone").cancel()
    sched.call_at(9, ran.append, "kept")
    assert sched.step() is True
    assert ran == ["kept"] and sched.now == 9


def test_run_for_runs_what_is_due_and_ends_exactly_later():
    sched = Scheduler(start_ms=100)
    ran: list = []
    sched.call_at(150, ran.append, 150)
    sched.call_at(200, ran.append, 200)  # due exactly at the end: runs
    sched.call_at(201, ran.append, 201)  # one ms too late: stays pending
    assert sched.run_for(100) == 2
    assert ran == [150, 200]
    assert sched.now == 200
    assert sched.peek() == 201


def test_run_until_time_ends_at_the_target_even_with_nothing_scheduled():
    sched = Scheduler()
    assert sched.run_until(12_345) == 0
    assert sched.now == 12_345
    assert sched.run_for(0) == 0 and sched.now == 12_345


def test_run_until_time_includes_callbacks_scheduled_by_callbacks():
    sched = Scheduler()
    ran: list = []

    def tick():
        ran.append(sched.now)
        sched.call_later(10, tick)

    sched.call_soon(tick)
    assert sched.run_until(35) == 4
    assert ran == [0, 10, 20, 30]
    assert sched.now == 35
    assert sched.peek() == 40


def test_run_until_condition_stops_as_soon_as_it_holds():
    sched = Scheduler()
    ran: list = []
    for t in (10, 20, 30, 40):
        sched.call_at(t, ran.append, t)

    def reached_20():
        return 20 in ran

    assert sched.run_until(reached_20) == 2
    assert ran == [10, 20] and sched.now == 20
    # Already true: nothing runs.
    assert sched.run_until(reached_20) == 0
    assert sched.now == 20


def test_run_until_condition_raises_naming_it_when_nothing_is_left():
    sched = Scheduler()
    sched.call_at(10, lambda: None)

    def group_is_stable():
        return False

    with pytest.raises(SchedulerLimitExceeded, match="group_is_stable") as info:
        sched.run_until(group_is_stable, limit_ms=None)
    assert "nothing left to run" in str(info.value)
    assert sched.now == 10


@pytest.mark.parametrize("limit_ms", [None, 5_000, 3_600_000])
def test_run_until_condition_nothing_left_leaves_the_clock_at_the_last_callback(limit_ms):
    """With nothing left to run the error reports (and the clock keeps) the time the condition was
    last checked, whatever the limit; it does not jump to the limit as if time had been spent."""
    sched = Scheduler()
    sched.call_at(10, lambda: None)
    sched.call_at(20, lambda: None)

    def never():
        return False

    with pytest.raises(SchedulerLimitExceeded,
                       match=r"'never' still false at 20 ms: nothing left to run"):
        sched.run_until(never, limit_ms=limit_ms)
    assert sched.now == 20


def test_run_until_condition_raises_when_the_limit_is_reached():
    """A periodic timer never empties the heap; the limit turns a wrong expectation into an error."""
    sched = Scheduler()
    ticks: list = []

    def heartbeat():
        ticks.append(sched.now)
        sched.call_later(100, heartbeat)

    sched.call_soon(heartbeat)

    def member_expired():
        return False

    with pytest.raises(SchedulerLimitExceeded) as info:
        sched.run_until(member_expired, limit_ms=1_000)
    message = str(info.value)
    assert "member_expired" in message
    assert "limit of 1000 ms reached" in message
    # Only callbacks due within the limit ran, and the clock stopped at the limit.
    assert ticks == list(range(0, 1_001, 100))
    assert sched.now == 1_000


def test_run_until_condition_default_limit_is_finite():
    sched = Scheduler()

    def forever():
        sched.call_later(60_000, forever)

    sched.call_soon(forever)
    with pytest.raises(SchedulerLimitExceeded, match="limit of"):
        sched.run_until(lambda: False)
    assert sched.now == 3_600_000


def test_run_pending_runs_only_what_is_due_now():
    sched = Scheduler(start_ms=50)
    ran: list = []
    sched.call_soon(ran.append, "now")
    sched.call_at(50, ran.append, "also-now")
    sched.call_at(51, ran.append, "later")
    assert sched.run_pending() == 2
    assert ran == ["now", "also-now"] and sched.now == 50


# -- advance -----------------------------------------------------------------------------------


def test_advance_jumps_without_running_then_overdue_callbacks_run_late_in_order():
    sched = Scheduler()
    ran: list = []
    sched.call_at(10, lambda: ran.append(("a", sched.now)))
    sched.call_at(10, lambda: ran.append(("b", sched.now)))
    sched.call_at(30, lambda: ran.append(("c", sched.now)))
    sched.call_at(500, lambda: ran.append(("d", sched.now)))

    assert sched.advance(100) == 3  # three callbacks are now overdue
    assert ran == [] and sched.now == 100

    assert sched.run_pending() == 3
    # They ran late, at the new time, in their original order; time did not go backwards.
    assert ran == [("a", 100), ("b", 100), ("c", 100)]
    assert sched.now == 100
    sched.run_for(1_000)
    assert ran[-1] == ("d", 500)


def test_advance_then_step_never_moves_time_backwards():
    sched = Scheduler()
    times: list = []
    for t in (5, 15, 25):
        sched.call_at(t, lambda: times.append(sched.now))
    sched.advance(20)
    while sched.step():
        pass
    assert times == [20, 20, 25]
    assert times == sorted(times)


def test_after_advance_new_callbacks_are_relative_to_the_new_time():
    sched = Scheduler()
    sched.advance(1_000)
    handle = sched.call_later(5, lambda: None)
    assert handle.when == 1_005
    with pytest.raises(ValueError, match="already reads 1000 ms"):
        sched.call_at(999, lambda: None)


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize("call", [
    lambda s: s.call_later(-1, lambda: None),
    lambda s: s.run_for(-5),
    lambda s: s.advance(-1),
    lambda s: Scheduler(start_ms=-10),
])
def test_negative_durations_are_rejected(call):
    with pytest.raises(ValueError, match=r"must be >= 0 ms, got -\d+"):
        call(Scheduler())


@pytest.mark.parametrize("bad", [1.5, 10.0, "10", None, True])
@pytest.mark.parametrize("method", ["call_later", "call_at", "run_for", "advance", "run_until"])
def test_non_integer_milliseconds_are_rejected(method, bad):
    sched = Scheduler()
    args = (bad, lambda: None) if method.startswith("call_") else (bad,)
    with pytest.raises(TypeError, match="integer number of milliseconds") as info:
        getattr(sched, method)(*args)
    assert repr(bad) in str(info.value)


def test_limit_ms_must_be_an_integer_too():
    with pytest.raises(TypeError, match="limit_ms must be an integer number of milliseconds"):
        Scheduler().run_until(lambda: True, limit_ms=2.5)


def test_scheduling_in_the_past_is_rejected_with_a_clear_message():
    sched = Scheduler(start_ms=100)
    with pytest.raises(ValueError) as info:
        sched.call_at(99, lambda: None, name="session-timeout")
    message = str(info.value)
    assert "session-timeout" in message and "99 ms" in message and "100 ms" in message
    assert sched.pending() == []


def test_run_until_a_past_time_is_rejected():
    sched = Scheduler(start_ms=100)
    with pytest.raises(ValueError, match=r"run_until\(50\) is in the past: the clock reads 100 ms"):
        sched.run_until(50)
    assert sched.now == 100


# -- a scheduler only one thread uses ------------------------------------------------------------


def _drive(sched: Scheduler, rng: random.Random, log: list, action: float,
           spans: list[int]) -> None:
    """The drivers the randomised workloads mix in, by `action` (< 1): `run_for` one of
    `spans` below 0.8, `step` below 0.9, else a look at `pending()` and `peek()`."""
    if action < 0.8:
        log.append(("run_for", sched.run_for(rng.choice(spans))))
    elif action < 0.9:
        log.append(("step", sched.step(), sched.now))
    else:
        log.append(("pending", [(h.name, h.when) for h in sched.pending()], sched.peek()))


def _workload(sched: Scheduler, seed: int) -> list:
    """A seeded mix of call_at/call_later/call_soon, cancellations, a timer lane, callbacks that
    schedule more, and every driver; returns what ran, when, and what the drivers returned."""
    rng = random.Random(seed)
    log: list = []
    handles: list[TimerHandle] = []
    dead: set[int] = set()
    lane = TimerLane(sched, lambda i: log.append(("lane", i, sched.now)),
                     lambda i: i not in dead, dead.add, lambda i: f"lane {i}")

    def cb(label: int) -> None:
        log.append((label, sched.now))
        if rng.random() < 0.6:
            schedule(label * 10 + 1)

    def schedule(label: int) -> None:
        kind = rng.random()
        if kind < 0.3:
            handles.append(sched.call_later(rng.choice([0, 0, 1, 5, 50]), cb, label % 10_000,
                                            name=f"cb {label}"))
        elif kind < 0.5:
            handles.append(sched.call_at(sched.now + rng.randint(0, 30), cb, label % 10_000))
        elif kind < 0.7:
            handles.append(sched.call_soon(cb, label % 10_000))
        else:
            lane.arm(rng.choice([20, 20, 40]), label % 10_000)

    for step in range(300):
        action = rng.random()
        if action < 0.5:
            schedule(step)
        elif action < 0.6 and handles:
            log.append(("cancel", rng.choice(handles).cancel()))
        elif action < 0.65:
            dead.add(rng.randrange(step + 1))
        else:
            _drive(sched, rng, log, action, [0, 1, 3, 17])
    log.append(("run_for", sched.run_for(1_000), sched.now))
    return log


@pytest.mark.parametrize("seed", range(8))
def test_a_single_threaded_scheduler_runs_the_same_callbacks_in_the_same_order(seed):
    """`Scheduler(threadsafe=False)` (what a Cluster uses) only skips the lock."""
    assert _workload(Scheduler(threadsafe=False), seed) == _workload(Scheduler(), seed)


def test_a_single_threaded_scheduler_refuses_bad_input_the_same_way():
    sched = Scheduler(start_ms=100, threadsafe=False)
    with pytest.raises(ValueError, match="must be >= 0 ms, got -1"):
        sched.call_later(-1, lambda: None)
    with pytest.raises(TypeError, match="integer number of milliseconds, got 1.5"):
        sched.call_at(1.5, lambda: None)
    with pytest.raises(ValueError, match="cannot schedule 'late' at 99 ms: the clock already "
                                         "reads 100 ms"):
        sched.call_at(99, lambda: None, name="late")
    assert sched.pending() == [] and sched.run_for(10) == 0 and sched.now == 110


# -- a deferrable timer (a session timeout pushed back by every heartbeat) ----------------------


def _session_timers(sched: Scheduler, seed: int, deferred: bool) -> list:
    """Session-like timers per key, rescheduled (often later, sometimes earlier), cancelled,
    mixed with plain callbacks and every driver; with `deferred`, a reschedule moves the
    handle (`defer`) whenever it can, otherwise it cancels and calls `call_later` again."""
    rng = random.Random(seed)
    log: list = []
    handles: dict[int, TimerHandle] = {}

    def fire(key: int, version: int) -> None:
        log.append(("fire", key, version, sched.now))
        if rng.random() < 0.3:
            reschedule(rng.randrange(10), version + 1)

    def reschedule(key: int, version: int) -> None:
        delay = rng.choice([0, 5, 30, 30, 45, 45, 60])
        old = handles.get(key)
        if deferred and old is not None and sched.defer(old, delay, key, version):
            log.append(("moved", key))  # True where the handle was still pending
            return
        if old is not None:
            log.append(("moved", key) if old.cancel() else ("new", key))
        else:
            log.append(("new", key))
        call = sched.call_later_deferrable if deferred else sched.call_later
        handles[key] = call(delay, fire, key, version, name=f"timer {key}")

    for step in range(400):
        action = rng.random()
        if action < 0.45:
            reschedule(rng.randrange(10), step)
        elif action < 0.55:
            sched.call_later(rng.choice([0, 1, 30]), lambda s=step: log.append(("cb", s, sched.now)))
        elif action < 0.6 and handles:
            log.append(("cancel", handles[rng.choice(sorted(handles))].cancel()))
        else:
            _drive(sched, rng, log, action, [0, 1, 5, 30])
    log.append(("run_for", sched.run_for(1_000), sched.now))
    return log


@pytest.mark.parametrize("threadsafe", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_a_deferred_handle_runs_where_cancel_and_call_later_would_have_put_it(seed, threadsafe):
    """`defer` draws the sequence number `call_later` would have: same callbacks, order, times,
    `step`/`run_for` counts and `pending()` (a stale heap entry never moves the clock)."""
    expected = _session_timers(Scheduler(threadsafe=threadsafe), seed, deferred=False)
    assert _session_timers(Scheduler(threadsafe=threadsafe), seed, deferred=True) == expected
    assert any(e[0] == "moved" for e in expected) and any(e[0] == "fire" for e in expected)


def test_defer_refuses_what_it_cannot_do_in_place():
    sched = Scheduler()
    ran: list = []
    h = sched.call_later_deferrable(10, ran.append, "a")
    assert not sched.defer(h, 5, "b")            # earlier than the handle: cancel + call_later
    assert not sched.defer(h, -1, "b") and not sched.defer(h, 1.5, "b")
    assert not sched.defer(sched.call_later(10, ran.append, "c"), 20, "d")  # not deferrable
    assert sched.defer(h, 20, "e") and h.when == 20
    assert sched.run_for(15) == 1 and ran == ["c"] and sched.now == 15  # the stale entry: no run
    assert sched.run_for(10) == 1 and ran == ["c", "e"]
    assert not sched.defer(h, 20, "f")           # it ran
    h2 = sched.call_later_deferrable(10, ran.append, "g")
    h2.cancel()
    assert not sched.defer(h2, 20, "h") and sched.run_for(100) == 0


# -- no wall clock, no global RNG -----------------------------------------------------------------

PACKAGE = Path(__file__).resolve().parent.parent / "coordinator_kit"
# live/ is the kit's one edge with the real world: its RealTimeDriver reads the wall clock to move
# virtual time along with real clients, and its child processes and sockets live in real time.
# The cluster it drives is the same deterministic core, which the rest of this check covers.
# realkafka/ stands outside the model too: it starts a real Kafka broker and real clients and
# waits for them in real time (its cluster id is a random UUID, as Kafka's own).
EXCLUDED_DIRS = ("viz", "spark", "live", "realkafka")
# Measuring tools, not the model: logs/redos.py times a regex on growing inputs to find one that
# backtracks (its callers compare times taken in the same process); nothing simulated calls it.
MEASURING_TOOLS = ("logs/redos.py",)

# Attribute accesses (called or passed around) that read real time or the process-global RNG.
FORBIDDEN = {
    "time.time", "time.time_ns", "time.monotonic", "time.monotonic_ns", "time.perf_counter",
    "time.sleep",
    "datetime.now", "datetime.utcnow", "datetime.today", "date.today",
    "random.random", "random.randint", "random.randrange", "random.choice", "random.choices",
    "random.shuffle", "random.sample", "random.uniform", "random.seed", "random.getrandbits",
    "uuid.uuid1", "uuid.uuid4",
    "os.urandom",
}
# `from time import sleep` and friends: the same functions reached by a bare name.
FORBIDDEN_FROM_IMPORTS = {
    tuple(name.split(".")) for name in FORBIDDEN if name.split(".")[0] in {"time", "random", "uuid",
                                                                           "os"}
}


def _dotted(node: ast.AST) -> list[str] | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return parts[::-1]
    return None


def find_wall_clock_uses(source: str, filename: str = "<string>") -> list[str]:
    """`file:line: what` for each wall-clock / global-RNG use in `source` (comments and strings
    are ignored because the check walks the syntax tree; `random.Random(seed)` is allowed)."""
    tree = ast.parse(source, filename)
    aliases: dict[str, str] = {}  # local name -> module it stands for (`import time as t`)
    problems: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                aliases[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                if (node.module, alias.name) in FORBIDDEN_FROM_IMPORTS:
                    problems.append(f"{filename}:{node.lineno}: from {node.module} import "
                                    f"{alias.name}")
                elif node.module == "datetime" and alias.name in {"datetime", "date"}:
                    aliases[alias.asname or alias.name] = alias.name
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        parts = _dotted(node)
        if parts is None:
            continue
        parts = aliases.get(parts[0], parts[0]).split(".") + parts[1:]
        if ".".join(parts[-2:]) in FORBIDDEN:
            problems.append(f"{filename}:{node.lineno}: {'.'.join(parts)}")
    return sorted(set(problems))


def _package_sources() -> list[Path]:
    files = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] in EXCLUDED_DIRS or rel.as_posix() in MEASURING_TOOLS:
            continue
        files.append(path)
    return files


def test_the_checker_itself_catches_wall_clock_and_global_rng_uses():
    sample = "\n".join([
        "import time, random, uuid",            # 1
        "import time as t",                     # 2
        "from datetime import datetime",        # 3
        "from time import sleep",               # 4
        "rng = random.Random(42)",              # 5 allowed
        "x = rng.random()",                     # 6 allowed (seeded instance)
        "a = time.time()",                      # 7
        "b = t.monotonic()",                    # 8
        "c = datetime.now()",                   # 9
        "d = random.choice([1, 2])",            # 10
        "e = uuid.uuid4()",                     # 11
        "f = 'time.sleep(1) in a string is fine'",  # 12 allowed
        "# time.time() in a comment is fine",   # 13 allowed
        "clock = time.monotonic",               # 14 passing it around counts too
    ])
    found = find_wall_clock_uses(sample, "sample.py")
    lines = sorted(int(p.split(":")[1]) for p in found)
    assert lines == [4, 7, 8, 9, 10, 11, 14], found


def test_no_wall_clock_or_global_rng_in_the_package():
    """Determinism: the model reads only the virtual clock and seeded `random.Random` instances.

    Walks every .py file under coordinator_kit/ (except the viz/ and spark/ front-ends) and names
    each offending file and line.
    """
    sources = _package_sources()
    assert PACKAGE / "clock.py" in sources and len(sources) > 5
    problems: list[str] = []
    for path in sources:
        rel = path.relative_to(PACKAGE.parent).as_posix()
        problems += find_wall_clock_uses(path.read_text(encoding="utf-8"), rel)
    assert not problems, ("wall clock or global RNG used in the model (use the Scheduler / a "
                          "seeded random.Random instead):\n  " + "\n  ".join(problems))
