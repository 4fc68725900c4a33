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


class FutureNotDone(RuntimeError):
    """`result()` was called on a future that has not completed yet."""


class CoordinatorFuture(Generic[T]):
    __slots__ = ("name", "_state", "_value", "_exc", "_callbacks", "_cond")

    def __init__(self, name: str = "") -> None:
        self.name = name
        self._state = _PENDING
        self._value: Any = None
        self._exc: BaseException | None = None
        self._callbacks: list[Callable[[CoordinatorFuture[T]], None]] = []
        self._cond = threading.Condition()

    def done(self) -> bool:
        return self._state != _PENDING

    def failed(self) -> bool:
        return self._state == _FAILED

    def complete(self, value: T) -> bool:
        """Complete with a value; False (and no change) when already completed."""
        return self._finish(_DONE, value, None)

    def complete_exceptionally(self, exc: BaseException) -> bool:
        return self._finish(_FAILED, None, exc)

    def _finish(self, state: str, value: Any, exc: BaseException | None) -> bool:
        with self._cond:
            if self._state != _PENDING:
                return False
            self._state, self._value, self._exc = state, value, exc
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for callback in callbacks:
            callback(self)
        return True

    def add_done_callback(self, callback: Callable[[CoordinatorFuture[T]], None]) -> None:
        """Run `callback(self)` on completion (at once if already complete)."""
        with self._cond:
            if self._state == _PENDING:
                self._callbacks.append(callback)
                return
        callback(self)

    def result(self) -> T:
        """The value; raises the failure, or `FutureNotDone` while pending."""
        if self._state == _PENDING:
            raise FutureNotDone(f"future {self.name!r} is still pending; run the scheduler (or "
                                f"wait(timeout) with a threaded processor) until it completes")
        if self._exc is not None:
            raise self._exc
        return self._value

    def exception(self) -> BaseException | None:
        if self._state == _PENDING:
            raise FutureNotDone(f"future {self.name!r} is still pending")
        return self._exc

    def wait(self, timeout_s: float | None = None) -> bool:
        """Block the calling thread until completion (real threads only); True when done."""
        with self._cond:
            return self._cond.wait_for(lambda: self._state != _PENDING, timeout_s)

    def __repr__(self) -> str:
        label = f" {self.name!r}" if self.name else ""
        if self._state == _PENDING:
            return f"<CoordinatorFuture{label} pending>"
        if self._exc is not None:
            err = getattr(self._exc, "error", None)
            what = err.name if err is not None else type(self._exc).__name__
            return f"<CoordinatorFuture{label} failed: {what}>"
        return f"<CoordinatorFuture{label} done: {self._value!r}>"
