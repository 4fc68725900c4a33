"""A small completable future with a stable repr.

Kafka's runtime hands back `CompletableFuture`s. The kit's futures work the same way on virtual
time (completed by events the scheduler runs) and on real threads (`wait`), and print without
memory addresses so notebook output stays the same from run to run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["CoordinatorFuture", "FutureNotDone"]

T = TypeVar("T")

_PENDING, _DONE, _FAILED = "pending", "done", "failed"

# One lock for every future's state change: each holds it for a few bytecodes and never while
# running a callback or waiting, so sharing it costs nothing, while a runtime creates a future
# (until now with its own lock) for every write.
_LOCK = threading.Lock()


class FutureNotDone(RuntimeError):
    """`result()` was called on a future that has not completed yet."""


class CoordinatorFuture(Generic[T]):
    __slots__ = ("name", "_state", "_value", "_callbacks", "_cond")

    def __init__(self, name: str = "") -> None:
        self.name = name
        self._state = _PENDING
        self._value: Any = None  # the result, or the exception of a failed future
        # Both made on first use: most futures complete on virtual time, with no callback and
        # nobody waiting. A single callback is kept as is, without a list (a request's future
        # has one: the network's), several in a list.
        self._callbacks: Any = None
        self._cond: threading.Condition | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (a recording's checkpoint) with its state as a name: the states are compared
        by identity, and a str loaded from a pickle is a new object."""
        return _rebuild, (self.name, self._state, self._value, self._callbacks)

    def done(self) -> bool:
        return self._state is not _PENDING

    def failed(self) -> bool:
        return self._state is _FAILED

    def complete(self, value: T) -> bool:
        """Complete with a value; False (and no change) when already completed."""
        with _LOCK:
            if self._state is not _PENDING:
                return False
            self._state = _DONE
            self._value = value
            callbacks = self._callbacks
            cond = self._cond
            if callbacks is not None:
                self._callbacks = None
        if cond is not None or callbacks is not None:
            self._notify(cond, callbacks)
        return True

    def complete_exceptionally(self, exc: BaseException) -> bool:
        """Fail with `exc`; False (and no change) when already completed."""
        with _LOCK:
            if self._state is not _PENDING:
                return False
            self._state = _FAILED
            self._value = exc
            callbacks = self._callbacks
            cond = self._cond
            if callbacks is not None:
                self._callbacks = None
        if cond is not None or callbacks is not None:
            self._notify(cond, callbacks)
        return True

    def _notify(self, cond: threading.Condition | None, callbacks: Any) -> None:
        """Wake the waiters, then run the callbacks (outside the lock, in the order added)."""
        if cond is not None:
            with cond:
                cond.notify_all()
        if callbacks.__class__ is list:
            for callback in callbacks:
                callback(self)
        elif callbacks is not None:
            callbacks(self)

    def add_done_callback(self, callback: Callable[[CoordinatorFuture[T]], None]) -> None:
        """Run `callback(self)` on completion (at once if already complete)."""
        with _LOCK:
            if self._state is _PENDING:
                callbacks = self._callbacks
                if callbacks is None:
                    self._callbacks = callback
                elif callbacks.__class__ is list:
                    callbacks.append(callback)
                else:
                    self._callbacks = [callbacks, callback]
                return
        callback(self)

    def result(self) -> T:
        """The value; raises the failure, or `FutureNotDone` while pending."""
        if self._state is not _DONE:
            if self._state is _FAILED:
                raise self._value
            raise FutureNotDone(f"future {self.name!r} is still pending; run the scheduler (or "
                                f"wait(timeout) with a threaded processor) until it completes")
        return self._value

    def exception(self) -> BaseException | None:
        if self._state is _PENDING:
            raise FutureNotDone(f"future {self.name!r} is still pending")
        return self._value if self._state is _FAILED else None

    def wait(self, timeout_s: float | None = None) -> bool:
        """Block the calling thread until completion (real threads only); True when done."""
        with _LOCK:
            if self._cond is None:
                self._cond = threading.Condition(threading.Lock())
            cond = self._cond
        # `_finish` sets the state before it looks for the condition, and `wait_for` checks the
        # state under the condition first, so a completion is never missed.
        with cond:
            return cond.wait_for(lambda: self._state is not _PENDING, timeout_s)

    def __repr__(self) -> str:
        label = f" {self.name!r}" if self.name else ""
        if self._state is _PENDING:
            return f"<CoordinatorFuture{label} pending>"
        if self._state is _FAILED:
            err = getattr(self._value, "error", None)
            what = err.name if err is not None else type(self._value).__name__
            return f"<CoordinatorFuture{label} failed: {what}>"
        return f"<CoordinatorFuture{label} done: {self._value!r}>"


_STATES = {_PENDING: _PENDING, _DONE: _DONE, _FAILED: _FAILED}


def _rebuild(name: str, state: str, value: Any, callbacks: Any) -> CoordinatorFuture[Any]:
    future: CoordinatorFuture[Any] = CoordinatorFuture(name)
    future._state = _STATES[state]  # the module's own str object, so `is` holds again
    future._value = value
    future._callbacks = callbacks
    return future
