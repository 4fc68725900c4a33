"""Event processors: who runs the coordinator events, and when.

`DeterministicEventProcessor` (the default) runs one event per scheduler step on virtual time, so
a scenario is reproducible and a learner can step through it event by event.
`MultiThreadedEventProcessor` runs events on real threads named as in Kafka
(`group-coordinator-event-processor-N`); it shows the concurrency contract for real: never two
events of one partition at once, different partitions in parallel. Both share `EventAccumulator`.
"""

from __future__ import annotations

import random
import threading
from typing import Any

from ..clock import Scheduler, TimerHandle
from ..logs.layout import level_number
from ..trace import LogContext
from .events import EventAccumulator, RejectedExecutionError

__all__ = ["EventProcessor", "DeterministicEventProcessor", "MultiThreadedEventProcessor"]

THREAD_PREFIX = "group-coordinator-event-processor-"
_DEBUG = level_number("DEBUG")


class EventProcessor:
    """Common part: enqueue into the accumulator; subclasses decide who polls it."""

    accumulator: EventAccumulator
    log: LogContext | None = None

    def enqueue_last(self, event: Any) -> None:
        self.accumulator.add_last(event)
        self._wake()

    def enqueue_first(self, event: Any) -> None:
        self.accumulator.add_first(event)
        self._wake()

    def _wake(self) -> None:  # pragma: no cover - overridden
        pass

    _logs_for: LogContext | None = None  # the log the `_thread_logs` children belong to
    _thread_logs: dict[str, LogContext]

    def bind_log(self, log: LogContext) -> None:
        self.log = log

    def _thread_log(self, log: LogContext, thread: str) -> LogContext:
        """The `[thread]: ` child of `log`, made once per thread rather than once per event."""
        if self._logs_for is not log:
            self._thread_logs = {}
            self._logs_for = log
        child = self._thread_logs.get(thread)
        if child is None:
            child = self._thread_logs[thread] = log.child(f"[{thread}]: ")
        return child

    def _run(self, event: Any, thread: str) -> None:
        log = self.log
        if log is not None and log.trace.threshold <= _DEBUG:  # P-EXEC is a DEBUG line
            self._thread_log(log, thread).log("P-EXEC", event=event)
        try:
            event.run()
        except BaseException as exc:  # an event must never kill the processor
            event.complete(exc)
        finally:
            self.accumulator.done(event)

    def _reject_remaining(self, thread: str) -> None:
        while (event := self.accumulator.poll(0.0)) is not None:
            if self.log is not None:
                self._thread_log(self.log, thread).log("P-DRAIN", event=event)
            try:
                event.complete(RejectedExecutionError("EventProcessor is closed."))
            finally:
                self.accumulator.done(event)


class DeterministicEventProcessor(EventProcessor):
    """Runs queued events on the virtual clock, one scheduler step per event.

    `max_events_per_step=1` (the default) is what learners step through: every
    `Scheduler.step()` that runs the processor runs exactly one coordinator event.
    A larger number, or None for no limit, lets one step run several events in a row, which
    saves a scheduler round trip per event (used by `benchmarks/runtime.py`). It runs the same
    events in the same order at the same virtual times, so a run to a time (`run_until(ms)`,
    `run_for`) leaves the same trace: the step keeps taking events only while no other callback
    is due at the current time and no event woke the processor (which schedules its next step
    among the other callbacks). What differs is the grouping: `step()` may run several events,
    and `run_until(condition)` checks its condition only between steps.
    """

    thread_name = THREAD_PREFIX + "0"

    def __init__(self, scheduler: Scheduler, *, seed: int = 0,
                 accumulator: EventAccumulator | None = None,
                 max_events_per_step: int | None = 1) -> None:
        if max_events_per_step is not None and (isinstance(max_events_per_step, bool) or
                                                not isinstance(max_events_per_step, int) or
                                                max_events_per_step < 1):
            raise ValueError(f"max_events_per_step must be an int >= 1 or None, got "
                             f"{max_events_per_step!r}")
        self.scheduler = scheduler
        # Every event runs on the thread that drives the scheduler, and the runtime enqueues on
        # it too, so the processor's own accumulator skips the locking (pass one to keep it).
        self.accumulator = accumulator or EventAccumulator(random.Random(seed),
                                                           thread_safe=False)
        self.max_events_per_step = max_events_per_step
        self._handle: TimerHandle | None = None
        self.events_run = 0

    def enqueue_last(self, event: Any) -> None:
        self.accumulator.add_last(event)
        handle = self._handle  # self._wake(), written out: this runs for every write
        if handle is None or handle.done or handle.cancelled:
            self._handle = self.scheduler.call_soon(self._run_one, name="event-processor")

    def _wake(self) -> None:
        handle = self._handle
        if handle is None or handle.done or handle.cancelled:  # not handle.pending
            self._handle = self.scheduler.call_soon(self._run_one, name="event-processor")

    def _run_one(self) -> None:
        """One scheduler step: run the next event, then, unless the step is limited to one,
        the events that would run next anyway (see the class doc)."""
        self._handle = None
        accumulator = self.accumulator
        event = accumulator.poll(0.0)
        if event is not None:
            limit = self.max_events_per_step
            scheduler = self.scheduler
            heap = scheduler._heap
            log = self.log
            if log is not None and log.trace.threshold <= _DEBUG:  # P-EXEC is a DEBUG line
                log = self._thread_log(log, self.thread_name)
            else:
                log = None
            ran = 0
            while True:
                self.events_run += 1
                ran += 1
                if log is not None:
                    log.log("P-EXEC", event=event)
                try:
                    event.run()
                except BaseException as exc:  # an event must never kill the processor
                    try:
                        event.complete(exc)
                    except BaseException:
                        accumulator.done(event)
                        raise
                # With one event per step, the next one waits for the next step, behind every
                # callback already due now. So it may run at once exactly when no callback is due
                # at or before now and the event did not wake the processor (a wake schedules
                # the next step where it has to be among what the event scheduled after it).
                if ran == limit or self._handle is not None or \
                        (heap and heap[0][0] <= scheduler._now):
                    accumulator.done(event)
                    break
                event = accumulator.done_and_poll(event)
                if event is None:
                    break
        if accumulator._size > 0:  # accumulator.size()
            self._wake()

    def close(self) -> None:
        self.accumulator.close()
        if self._handle is not None:
            self._handle.cancel()
        self._reject_remaining(self.thread_name)


class MultiThreadedEventProcessor(EventProcessor):
    """Runs events on `num_threads` real threads, polling the shared accumulator."""

    def __init__(self, num_threads: int = 1, *, seed: int = 0,
                 accumulator: EventAccumulator | None = None, poll_timeout_s: float = 0.3) -> None:
        if num_threads < 1:
            raise ValueError(f"group.coordinator.threads must be >= 1, got {num_threads}")
        self.accumulator = accumulator or EventAccumulator(random.Random(seed))
        self._poll_timeout_s = poll_timeout_s
        self._shutting_down = False
        self.threads = [threading.Thread(target=self._loop, name=f"{THREAD_PREFIX}{i}",
                                         daemon=True) for i in range(num_threads)]
        for t in self.threads:
            t.start()

    def _loop(self) -> None:
        name = threading.current_thread().name
        while not self._shutting_down:
            event = self.accumulator.poll(self._poll_timeout_s)
            if event is not None:
                self._run(event, name)
        self._reject_remaining(name)

    def wait_idle(self, timeout_s: float | None = 10.0) -> bool:
        """Block until every queued event has run; True when idle."""
        return self.accumulator.wait_idle(timeout_s)

    def close(self) -> None:
        self.accumulator.close()
        self._shutting_down = True
        for t in self.threads:
            t.join()
