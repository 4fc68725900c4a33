"""Coordinator events and the accumulator that orders them (Kafka's `EventAccumulator`).

All work for a coordinator partition is an event keyed by that partition. The accumulator keeps
one FIFO queue per key and hands out at most one event per key at a time, so a partition's state
is never touched by two threads at once while different partitions proceed in parallel. Among the
keys that have work, one is picked at random (from a seeded generator here) for fairness.
"""

from __future__ import annotations

import random
import threading
from collections import deque
from typing import Any, Hashable, Protocol

__all__ = ["CoordinatorEvent", "EventAccumulator", "RejectedExecutionError"]


class RejectedExecutionError(RuntimeError):
    """An event was refused: the processor is closed, or a timer was cancelled/overridden."""


class CoordinatorEvent(Protocol):
    @property
    def key(self) -> Hashable: ...

    def run(self) -> None: ...

    def complete(self, exc: BaseException | None) -> None: ...


class EventAccumulator:
    """Per-key FIFO queues with at most one in-flight event per key."""

    def __init__(self, rng: random.Random | None = None) -> None:
        self._rng = rng if rng is not None else random.Random(0)
        self._queues: dict[Hashable, deque[Any]] = {}
        self._available: list[Hashable] = []
        self._inflight: set[Hashable] = set()
        self._size = 0
        self._closed = False
        # One lock, two conditions: `_cond` wakes pollers (a key became available, or close),
        # `_idle` wakes `wait_idle`. Sharing one condition would let `notify()` (one waiter, as in
        # Kafka) wake an idle-waiter instead of a poller, leaving the poller asleep until timeout.
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._idle = threading.Condition(self._lock)

    # -- producers ------------------------------------------------------------------------------

    def add_last(self, event: Any) -> None:
        self._add(event, front=False)

    def add_first(self, event: Any) -> None:
        """Jump the queue of its key (used for high-watermark updates and linger flushes)."""
        self._add(event, front=True)

    def _add(self, event: Any, front: bool) -> None:
        with self._cond:
            if self._closed:
                raise RejectedExecutionError(f"can't accept {event}: the accumulator is closed")
            key = event.key
            queue = self._queues.get(key)
            if queue is None:
                queue = self._queues[key] = deque()
                if key not in self._inflight:
                    self._available.append(key)
                    self._cond.notify()
            if front:
                queue.appendleft(event)
            else:
                queue.append(event)
            self._size += 1

    # -- consumers ------------------------------------------------------------------------------

    def poll(self, timeout_s: float | None = 0.0) -> Any | None:
        """Take the head event of a random available key; None if none within the timeout."""
        with self._cond:
            if not self._available:
                if timeout_s == 0.0 or self._closed:
                    return None
                self._cond.wait_for(lambda: self._available or self._closed, timeout_s)
                if not self._available:
                    return None
            i = self._rng.randrange(len(self._available))
            last = self._available.pop()
            key = last
            if i < len(self._available):
                key, self._available[i] = self._available[i], last
            queue = self._queues[key]
            event = queue.popleft()
            if not queue:
                del self._queues[key]
            self._inflight.add(key)
            self._size -= 1
            return event

    def done(self, event: Any) -> None:
        """The event of this key finished: its next event may now be handed out."""
        with self._cond:
            key = event.key
            self._inflight.discard(key)
            if key in self._queues:
                self._available.append(key)
                self._cond.notify()
            if self._size == 0 and not self._inflight:
                self._idle.notify_all()

    def wait_idle(self, timeout_s: float | None = None) -> bool:
        """Block until nothing is queued or in flight; True when idle."""
        with self._idle:
            return self._idle.wait_for(lambda: self._size == 0 and not self._inflight, timeout_s)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    @property
    def closed(self) -> bool:
        return self._closed

    def size(self) -> int:
        return self._size

    def queued(self, key: Hashable) -> list[Any]:
        """Events waiting for `key`, head first (for learners' inspection)."""
        with self._cond:
            return list(self._queues.get(key, ()))

    def in_flight(self) -> set[Hashable]:
        with self._cond:
            return set(self._inflight)
