"""Coordinator timers that fire as write events (Kafka's `EventBasedCoordinatorTimer`).

A timer never runs its operation on the clock's thread: when it expires it enqueues a write event
`Timeout(tp=..., key=...)` at the tail of the partition's queue, so the operation respects the
one-event-per-partition rule and its records go through the normal write path. One task per key:
scheduling a key again replaces the task, and an expired event whose task was replaced or
cancelled in the meantime is rejected when it runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..clock import Scheduler, TimerHandle
from ..errors import Errors, KafkaError
from ..logs.catalogue import template
from ..logs.layout import level_number
from ..topic import TopicPartition
from ..trace import LogContext
from .events import RejectedExecutionError
from .future import CoordinatorFuture
from .shard import CoordinatorResult

__all__ = ["EventBasedCoordinatorTimer", "DEFAULT_RETRY_BACKOFF_MS"]

DEFAULT_RETRY_BACKOFF_MS = 500
# T-REGISTER's level: checked before the call, so a disabled line (INFO traces: every heartbeat
# and commit registers a session timeout) builds no keyword arguments.
_REGISTER_LEVEL = level_number(template("T-REGISTER").level)

TimeoutOperation = Callable[[], CoordinatorResult[Any]]
# (name, tp, op(shard) -> CoordinatorResult) -> future; provided by the runtime.
WriteScheduler = Callable[[str, Callable[[Any], CoordinatorResult[Any]]], CoordinatorFuture[Any]]


class _TimerTask:
    """One timer of a key, from when it is scheduled until it fires or is cancelled; a new one
    after that, so an expiry enqueued for an older one is rejected (`tasks[key] is not task`).
    Rescheduling it later while it is pending moves its handle (`Scheduler.defer`) and gives
    it the new operation, instead of replacing both."""

    __slots__ = ("key", "handle", "cancelled", "operation", "retry", "retry_backoff_ms")

    def __init__(self, key: str, operation: TimeoutOperation, retry: bool,
                 retry_backoff_ms: int) -> None:
        self.key = key
        self.handle: TimerHandle | None = None
        self.cancelled = False
        self.operation = operation
        self.retry = retry
        self.retry_backoff_ms = retry_backoff_ms

    def cancel(self) -> None:
        self.cancelled = True
        if self.handle is not None:
            self.handle.cancel()


class EventBasedCoordinatorTimer:
    def __init__(self, tp: TopicPartition, scheduler: Scheduler, log: LogContext,
                 enqueue_write: WriteScheduler) -> None:
        self.tp = tp
        self.scheduler = scheduler
        self.log = log
        self._enqueue_write = enqueue_write
        self.tasks: dict[str, _TimerTask] = {}

    def schedule(self, key: str, delay_ms: int, retry: bool, operation: TimeoutOperation,
                 retry_backoff_ms: int = DEFAULT_RETRY_BACKOFF_MS) -> None:
        if self.log.trace.threshold <= _REGISTER_LEVEL:
            self.log.log("T-REGISTER", key=key, delay_ms=delay_ms)
        previous = self.tasks.get(key)
        if previous is not None:
            # Later than the previous deadline (every heartbeat pushes a session timeout back):
            # the same handle moves, drawing the sequence number call_later would have drawn.
            # Its task has not fired (its handle is pending), so no expiry holds it: it takes
            # the new operation in place (the old one is freed at once, not seconds later).
            # (Given before the move: with a threaded processor the timer may run as soon as
            # it moved. If it cannot move, the task is cancelled and replaced below, and an
            # expiry it already fired is rejected.)
            previous.operation = operation
            previous.retry = retry
            previous.retry_backoff_ms = retry_backoff_ms
            handle = previous.handle
            if handle is not None and self.scheduler.defer(handle, delay_ms):
                return
            previous.cancel()
        task = self.tasks[key] = _TimerTask(key, operation, retry, retry_backoff_ms)
        task.handle = self.scheduler.call_later_deferrable(delay_ms, self._expired, task,
                                                           name=f"timer {key}")

    def _expired(self, task: _TimerTask) -> None:
        key, operation, retry, backoff = (task.key, task.operation, task.retry,
                                          task.retry_backoff_ms)
        name = f"Timeout(tp={self.tp}, key={key})"

        def run(_shard: Any) -> CoordinatorResult[Any]:
            self.log.log("T-EXEC", name=name, key=key)
            if self.tasks.get(key) is not task:
                raise RejectedExecutionError(f"Timer {key} was overridden or cancelled")
            del self.tasks[key]
            self.log.event("timer_expired", tp=str(self.tp), key=key)
            return operation()

        def on_done(f: CoordinatorFuture[Any]) -> None:
            exc = f.exception()
            if exc is None:
                return
            if isinstance(exc, RejectedExecutionError):
                self.log.log("T-REJECTED", name=name, key=key)
            elif isinstance(exc, KafkaError) and exc.error in (
                    Errors.NOT_COORDINATOR, Errors.COORDINATOR_LOAD_IN_PROGRESS):
                self.log.log("T-INACTIVE", name=name, key=key, error=exc.detail)
            elif retry:
                self.log.log("T-RETRY", name=name, key=key, error=_message(exc))
                self.schedule(key, backoff, True, operation, backoff)
            else:
                self.log.log("T-DROP", name=name, key=key, error=_message(exc))

        self.log.log("T-FIRE", name=name, key=key)
        try:
            future = self._enqueue_write(name, run)
        except RejectedExecutionError:
            self.log.log("T-CLOSED", name=name, key=key)
            return
        future.add_done_callback(on_done)

    def reschedule(self, key: str, delay_ms: int) -> bool:
        """Push the pending timer of `key` back to `delay_ms` from now, keeping its operation:
        what `schedule` does with an operation that does the same. False, changing nothing,
        when there is no pending timer for `key` or it cannot move in place (an earlier
        deadline); the caller then calls `schedule`. For a session timeout, rescheduled by
        every heartbeat of its member, this makes no new operation (a closure and its cells)
        that would outlive the next garbage collection."""
        task = self.tasks.get(key)
        if task is None or task.handle is None or not self.scheduler.defer(task.handle,
                                                                           delay_ms):
            return False
        if self.log.trace.threshold <= _REGISTER_LEVEL:
            self.log.log("T-REGISTER", key=key, delay_ms=delay_ms)
        return True

    def schedule_if_absent(self, key: str, delay_ms: int, retry: bool,
                           operation: TimeoutOperation) -> None:
        if key not in self.tasks:
            self.schedule(key, delay_ms, retry, operation)

    def cancel(self, key: str) -> None:
        task = self.tasks.pop(key, None)
        if task is not None:
            task.cancel()
            self.log.event("timer_cancelled", tp=str(self.tp), key=key)

    def cancel_all(self) -> None:
        for key in list(self.tasks):
            self.cancel(key)

    def is_scheduled(self, key: str) -> bool:
        return key in self.tasks

    def deadline(self, key: str) -> int | None:
        """Virtual time at which the timer for `key` fires, or None."""
        task = self.tasks.get(key)
        return None if task is None or task.handle is None else task.handle.when

    def __len__(self) -> int:
        return len(self.tasks)


def _message(exc: BaseException) -> str:
    return exc.detail if isinstance(exc, KafkaError) else str(exc)
