"""Event processors: the contract both must keep (Kafka's `MultiThreadedEventProcessor` on an
`EventAccumulator`), then what is special to each.

* Contract tests run over `DeterministicEventProcessor` (driven by a `Scheduler`, virtual time) and
  `MultiThreadedEventProcessor` with 2, 3 and 4 real threads (driven by `wait_idle`).
* A threaded-only test shows the concurrency contract with real threads: never two events of one
  key at once, several keys at once.
* Deterministic-only tests: one event per scheduler `step()`, zero virtual time per event.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, defaultdict

import pytest

from coordinator_kit.clock import Scheduler
from coordinator_kit.runtime.events import RejectedExecutionError
from coordinator_kit.runtime.processor import (
    THREAD_PREFIX,
    DeterministicEventProcessor,
    MultiThreadedEventProcessor,
)

WAIT_S = 10.0  # generous upper bound for anything the threaded tests wait for


class Ev:
    """A test event: runs `action` (if any), records itself, completes itself on success.

    Like Kafka's coordinator events, a successful `run()` completes the event; when `run()` raises,
    the processor is the one that calls `complete(exc)`.
    """

    def __init__(self, key, label="", action=None, journal=None):
        self.key = key
        self.label = label
        self.action = action
        self.journal = journal  # shared list of (key, label) in run order
        self.runs = 0
        self.completions: list = []  # every `complete` call's argument
        self.thread = None
        self._lock = threading.Lock()

    def run(self):
        with self._lock:
            self.runs += 1
        self.thread = threading.current_thread().name
        if self.journal is not None:
            self.journal.append((self.key, self.label))  # list.append is atomic
        if self.action is not None:
            self.action(self)
        self.complete(None)

    def complete(self, exc):
        with self._lock:
            self.completions.append(exc)

    def __repr__(self):
        return f"Ev({self.key}{self.label})"


class Harness:
    """One processor plus the way to drive it until everything enqueued has run."""

    def __init__(self, kind: str, threads: int = 0, seed: int = 0):
        self.kind = kind
        if kind == "deterministic":
            self.scheduler = Scheduler()
            self.proc = DeterministicEventProcessor(self.scheduler, seed=seed)
        else:
            self.scheduler = None
            self.proc = MultiThreadedEventProcessor(threads, seed=seed)

    @property
    def threaded(self) -> bool:
        return self.scheduler is None

    def drive(self) -> None:
        """Run until every enqueued event has run and been `done`."""
        if self.threaded:
            assert self.proc.wait_idle(WAIT_S), "threaded processor did not go idle"
        else:
            self.scheduler.run_pending()
            assert self.proc.accumulator.size() == 0

    def close(self) -> None:
        self.proc.close()


PROCESSORS = [
    pytest.param(("deterministic", 0), id="deterministic"),
    pytest.param(("threaded", 2), id="threaded-2"),
    pytest.param(("threaded", 3), id="threaded-3"),
    pytest.param(("threaded", 4), id="threaded-4"),
]


@pytest.fixture(params=PROCESSORS)
def harness(request):
    kind, threads = request.param
    h = Harness(kind, threads)
    yield h
    h.close()
    if h.threaded:
        assert not any(t.is_alive() for t in h.proc.threads)


def wait_until(predicate, what: str, timeout_s: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.001)


# -- the contract, for both processors ---------------------------------------------------------


def test_every_enqueued_event_runs_exactly_once(harness):
    """Each event is polled once, run once and completed once."""
    events = [Ev(f"tp-{i % 5}", str(i)) for i in range(60)]
    for e in events:
        harness.proc.enqueue_last(e)
    harness.drive()
    assert [e.runs for e in events] == [1] * 60
    assert [e.completions for e in events] == [[None]] * 60
    assert harness.proc.accumulator.size() == 0
    assert harness.proc.accumulator.in_flight() == set()


def test_per_key_fifo_order_is_preserved(harness):
    """Events of one key run in the order they were enqueued (keys interleaved)."""
    journal: list = []
    keys = ["tp-0", "tp-1", "tp-2"]
    for i in range(20):
        for k in keys:
            harness.proc.enqueue_last(Ev(k, i, journal=journal))
    harness.drive()
    per_key = defaultdict(list)
    for key, label in journal:
        per_key[key].append(label)
    assert dict(per_key) == {k: list(range(20)) for k in keys}


def test_enqueue_first_jumps_the_queue_of_its_key(harness):
    """`enqueueFirst` (HWM updates, linger flushes) goes ahead of queued events."""
    journal: list = []
    gate = threading.Event()
    started = threading.Event()

    def hold(_):
        started.set()
        assert gate.wait(WAIT_S)

    # Keep key tp-0 busy so the following events are all queued when enqueue_first is called.
    # (The deterministic processor runs nothing until its scheduler is driven.)
    if harness.threaded:
        harness.proc.enqueue_last(Ev("tp-0", "hold", action=hold, journal=journal))
        assert started.wait(WAIT_S)
    else:
        gate.set()
    for i in range(3):
        harness.proc.enqueue_last(Ev("tp-0", i, journal=journal))
    harness.proc.enqueue_first(Ev("tp-0", "hwm", journal=journal))
    gate.set()
    harness.drive()
    labels = [label for _, label in journal if label != "hold"]
    assert labels == ["hwm", 0, 1, 2]


def test_an_event_that_raises_is_completed_with_its_exception_and_processing_continues(harness):
    """On exception the processor calls `event.complete(t)`, then `done`, and goes on."""
    journal: list = []
    boom = ValueError("boom")
    crash = RuntimeError("crash")

    def raise_(exc):
        def action(_):
            raise exc
        return action

    a1 = Ev("tp-0", "1", journal=journal)
    a2 = Ev("tp-0", "2", action=raise_(boom), journal=journal)
    a3 = Ev("tp-0", "3", journal=journal)
    b1 = Ev("tp-1", "1", action=raise_(crash), journal=journal)
    b2 = Ev("tp-1", "2", journal=journal)
    for e in (a1, a2, b1, a3, b2):
        harness.proc.enqueue_last(e)
    harness.drive()

    assert a2.completions == [boom] and a2.completions[0] is boom
    assert b1.completions == [crash]
    for e in (a1, a3, b2):
        assert e.runs == 1 and e.completions == [None]
    # The key is released after a failure (its next event ran) and the processor still works.
    later = Ev("tp-0", "later")
    harness.proc.enqueue_last(later)
    harness.drive()
    assert later.completions == [None]
    if harness.threaded:
        assert all(t.is_alive() for t in harness.proc.threads)


def test_after_close_enqueue_is_rejected(harness):
    """Closing closes the accumulator first, so new events are rejected."""
    harness.proc.close()
    with pytest.raises(RejectedExecutionError):
        harness.proc.enqueue_last(Ev("tp-0"))
    with pytest.raises(RejectedExecutionError):
        harness.proc.enqueue_first(Ev("tp-0"))
    if harness.threaded:
        assert not any(t.is_alive() for t in harness.proc.threads)


def test_close_completes_queued_events_with_rejected_execution_error(harness):
    """At shutdown the remaining queued events are drained and completed with
    RejectedExecutionException; they never run. Events already running finish normally."""
    keys = ["tp-0", "tp-1"]
    gate = threading.Event()
    started: Counter = Counter()
    lock = threading.Lock()

    def hold(e):
        with lock:
            started[e.key] += 1
        assert gate.wait(WAIT_S)

    first = [Ev(k, "first", action=hold) for k in keys]
    for e in first:
        harness.proc.enqueue_last(e)
    if harness.threaded:
        # Both keys are now in flight on two threads, blocked on the gate.
        wait_until(lambda: len(started) == 2, "the two holding events to start")
    else:
        gate.set()
        assert harness.scheduler.step() and harness.scheduler.step()
        assert harness.proc.events_run == 2

    queued = [Ev(k, str(i)) for i in range(4) for k in keys]
    for e in queued:
        harness.proc.enqueue_last(e)
    assert harness.proc.accumulator.size() == len(queued)

    if harness.threaded:
        # close() joins the worker threads, two of which are blocked: close from another thread.
        closer = threading.Thread(target=harness.proc.close, daemon=True)
        closer.start()
        # Idle workers see the shutdown and exit; only the two blocked ones remain. Releasing them
        # only now guarantees nobody can pick up a queued event after the close began.
        wait_until(lambda: sum(t.is_alive() for t in harness.proc.threads) == 2,
                   "idle workers to exit")
        with pytest.raises(RejectedExecutionError):
            harness.proc.enqueue_last(Ev("tp-9", "too-late"))
        gate.set()
        closer.join(WAIT_S)
        assert not closer.is_alive(), "close() did not return"
    else:
        harness.proc.close()
        with pytest.raises(RejectedExecutionError):
            harness.proc.enqueue_last(Ev("tp-9", "too-late"))
        assert harness.scheduler.step() is False  # nothing left: the processor's step was cancelled

    for e in first:
        assert e.runs == 1 and e.completions == [None]
    for e in queued:
        assert e.runs == 0, f"{e} ran after close"
        assert len(e.completions) == 1 and isinstance(e.completions[0], RejectedExecutionError)
        assert "closed" in str(e.completions[0])
    assert harness.proc.accumulator.size() == 0


# -- real threads: the concurrency contract ------------------------------------------------------


def test_threaded_processor_never_runs_two_events_of_a_key_at_once_but_runs_keys_in_parallel():
    """With real threads: at most one in-flight event per key, different keys in parallel.

    4 keys x 10 events on 4 threads. The i-th event of every key waits on a 4-party barrier, so
    overlap of all four keys is forced by construction (no reliance on timing luck); after the
    barrier each event sleeps a few ms of real time (the only place these tests use real time),
    which would expose a second event of the same key running alongside it.
    """
    keys = [f"tp-{i}" for i in range(4)]
    rounds = 10
    barrier = threading.Barrier(len(keys), timeout=WAIT_S)
    lock = threading.Lock()
    running: Counter = Counter()
    max_per_key: Counter = Counter()
    state = {"running": 0, "max_running": 0}
    order: dict = defaultdict(list)
    threads_used: set = set()

    def work(e):
        with lock:
            running[e.key] += 1
            max_per_key[e.key] = max(max_per_key[e.key], running[e.key])
            state["running"] += 1
            state["max_running"] = max(state["max_running"], state["running"])
            order[e.key].append(e.label)
            threads_used.add(threading.current_thread().name)
        try:
            barrier.wait()  # every key's i-th event is running now
            time.sleep(0.005)
        finally:
            with lock:
                running[e.key] -= 1
                state["running"] -= 1

    proc = MultiThreadedEventProcessor(4, seed=11)
    try:
        events = [Ev(k, i, action=work) for i in range(rounds) for k in keys]
        for e in events:
            proc.enqueue_last(e)
        assert proc.wait_idle(30.0), "events did not finish"
    finally:
        proc.close()

    failures = [(e, e.completions) for e in events if e.completions != [None]]
    assert not failures, (f"events failed (a BrokenBarrierError means the keys did not run in "
                          f"parallel within {WAIT_S} s): {failures[:4]}")
    assert dict(max_per_key) == {k: 1 for k in keys}, "two events of one key ran at once"
    assert state["max_running"] == len(keys) > 1
    assert dict(order) == {k: list(range(rounds)) for k in keys}
    assert threads_used == {f"{THREAD_PREFIX}{i}" for i in range(4)}


def test_threaded_processor_threads_are_named_like_kafka_and_validated():
    proc = MultiThreadedEventProcessor(3)
    try:
        assert [t.name for t in proc.threads] == [
            "group-coordinator-event-processor-0",
            "group-coordinator-event-processor-1",
            "group-coordinator-event-processor-2",
        ]
        assert all(t.is_alive() for t in proc.threads)
    finally:
        proc.close()
    assert not any(t.is_alive() for t in proc.threads)
    with pytest.raises(ValueError, match="group.coordinator.threads must be >= 1, got 0"):
        MultiThreadedEventProcessor(0)


# -- the deterministic processor: one event per step, zero virtual time ----------------------------


def test_each_scheduler_step_runs_at_most_one_event_in_zero_virtual_time():
    """A learner can step through a scenario event by event; events take no virtual time."""
    sched = Scheduler(start_ms=1_000)
    proc = DeterministicEventProcessor(sched, seed=3)
    journal: list = []
    events = [Ev(f"tp-{i % 3}", i, journal=journal) for i in range(6)]
    for e in events:
        proc.enqueue_last(e)
    timer_ran: list = []
    sched.call_later(5, lambda: timer_ran.append(sched.now))

    assert journal == []  # enqueueing runs nothing
    for n in range(1, 7):
        assert sched.step() is True
        assert proc.events_run == n and len(journal) == n, "a step ran more than one event"
        assert sched.now == 1_000, "an event took virtual time"
        assert timer_ran == []
    assert sched.step() is True  # only the 5 ms timer is left
    assert timer_ran == [1_005] and proc.events_run == 6
    assert sched.step() is False
    assert all(e.completions == [None] for e in events)


def test_deterministic_processor_interleaves_with_timers_due_now():
    """The processor's step is an ordinary scheduler callback: a timer due at the same millisecond
    that was scheduled between two events' steps runs between them."""
    sched = Scheduler()
    proc = DeterministicEventProcessor(sched)
    journal: list = []
    proc.enqueue_last(Ev("tp-0", "a", journal=journal))
    proc.enqueue_last(Ev("tp-0", "b", journal=journal))
    sched.call_soon(lambda: journal.append(("timer", "t")))
    sched.run_pending()
    assert [label for _, label in journal] == ["a", "t", "b"]


def test_event_enqueued_by_an_event_runs_in_a_later_step_not_reentrantly():
    sched = Scheduler()
    proc = DeterministicEventProcessor(sched)
    journal: list = []
    child = Ev("tp-1", "child", journal=journal)

    def spawn(_):
        proc.enqueue_last(child)
        assert child.runs == 0  # not run inside the parent

    proc.enqueue_last(Ev("tp-0", "parent", action=spawn, journal=journal))
    assert sched.step() and journal == [("tp-0", "parent")]
    assert sched.step() and journal == [("tp-0", "parent"), ("tp-1", "child")]
    assert sched.step() is False


def test_deterministic_processor_order_is_reproducible_for_a_seed():
    def run(seed):
        sched = Scheduler()
        proc = DeterministicEventProcessor(sched, seed=seed)
        journal: list = []
        for i in range(5):
            for k in range(6):
                proc.enqueue_last(Ev(f"tp-{k}", i, journal=journal))
        sched.run_pending()
        return journal

    assert run(7) == run(7)
    assert len({tuple(run(seed)) for seed in range(6)}) > 1


def test_max_events_per_step_runs_events_back_to_back_only_while_nothing_else_is_due():
    """`max_events_per_step` > 1 (or None) groups events into fewer steps; the events, their order
    and the callbacks between them stay those of one event per step."""
    def run(per_step):
        sched = Scheduler()
        proc = DeterministicEventProcessor(sched, seed=5, max_events_per_step=per_step)
        journal: list = []

        def spawn(ev):  # an event that schedules a callback due now and enqueues another event
            sched.call_soon(lambda: journal.append(("timer", ev.label)))
            proc.enqueue_last(Ev(ev.key, f"{ev.label}-child", journal=journal))

        for i in range(12):
            proc.enqueue_last(Ev(f"tp-{i % 3}", i, action=spawn if i % 5 == 0 else None,
                                 journal=journal))
        sched.call_later(0, lambda: journal.append(("timer", "early")))
        steps = 0
        while sched.step():
            steps += 1
        return journal, steps, proc.events_run

    one, steps_one, ran_one = run(1)
    for per_step in (2, 3, None):
        journal, steps, ran = run(per_step)
        assert journal == one and ran == ran_one
        assert steps < steps_one
    assert run(3)[1] >= ran_one // 3


def test_max_events_per_step_refuses_anything_but_a_positive_int_or_none():
    for bad in (0, -1, True, 1.5, "2"):
        with pytest.raises(ValueError, match="max_events_per_step must be an int >= 1 or None"):
            DeterministicEventProcessor(Scheduler(), max_events_per_step=bad)
