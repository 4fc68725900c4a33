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

    def __init__(self, rng: random.Random | None = None, *, thread_safe: bool = True) -> None:
        """`thread_safe=False` is for a single thread that both adds and polls (the
        deterministic processor's own accumulator): adding, polling an available event and
        finishing one then skip the lock. Blocking calls (`poll` with a timeout and nothing
        available, `wait_idle`) and the inspection methods lock either way."""
        self._rng = rng if rng is not None else random.Random(0)
        self.thread_safe = thread_safe
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
        # Threads blocked in `poll` / `wait_idle` (changed under the lock). With nobody waiting,
        # as always on the deterministic processor, adding and finishing an event skip the
        # `notify` calls, which are Python-level and cost more than the rest of the operation.
        self._pollers = 0
        self._idle_waiters = 0
        # `randrange(n)` with one positive int is `_randbelow(n)`: call that directly (the same
        # draws from the same generator, so the same choices), unless randrange was overridden.
        randrange = getattr(type(self._rng), "randrange", None)
        self._pick = (self._rng._randbelow  # type: ignore[attr-defined]
                      if randrange is random.Random.randrange
                      and hasattr(self._rng, "_randbelow") else self._rng.randrange)
        # For a plain random.Random, _randbelow(1) is `getrandbits(1)` until it returns 0 (one
        # key with work, the usual case): the same draws, without the Python-level call.
        self._getrandbits = (self._rng.getrandbits if type(self._rng) is random.Random
                             and self._pick == self._rng._randbelow_with_getrandbits
                             else None)
        if not thread_safe:
            self.add_last = self._add_last  # type: ignore[method-assign]
            self.add_first = self._add_first  # type: ignore[method-assign]
            self.poll = self._poll_unlocked  # type: ignore[method-assign]
            self.done = self._done  # type: ignore[method-assign]
            self.done_and_poll = self._done_and_poll  # type: ignore[method-assign]

    # -- producers ------------------------------------------------------------------------------

    def add_last(self, event: Any) -> None:
        with self._lock:
            self._add_last(event)

    def add_first(self, event: Any) -> None:
        """Jump the queue of its key (used for high-watermark updates and linger flushes)."""
        with self._lock:
            self._add_first(event)

    def _add_last(self, event: Any) -> None:
        if self._closed:
            raise RejectedExecutionError(f"can't accept {event}: the accumulator is closed")
        key = event.key
        queue = self._queues.get(key)
        if queue is None:
            queue = self._new_queue(key)
        queue.append(event)
        self._size += 1

    def _add_first(self, event: Any) -> None:
        if self._closed:
            raise RejectedExecutionError(f"can't accept {event}: the accumulator is closed")
        key = event.key
        queue = self._queues.get(key)
        if queue is None:
            queue = self._new_queue(key)
        queue.appendleft(event)
        self._size += 1

    def _new_queue(self, key: Hashable) -> deque[Any]:
        """A key gets work (called under the lock): it becomes available unless in flight."""
        queue = self._queues[key] = deque()
        if key not in self._inflight:
            self._available.append(key)
            if self._pollers:
                self._cond.notify()
        return queue

    # -- consumers ------------------------------------------------------------------------------

    def poll(self, timeout_s: float | None = 0.0) -> Any | None:
        """Take the head event of a random available key; None if none within the timeout."""
        with self._lock:
            available = self._available
            if not available:
                if timeout_s == 0.0 or self._closed:
                    return None
                self._pollers += 1
                try:
                    self._cond.wait_for(lambda: self._available or self._closed, timeout_s)
                finally:
                    self._pollers -= 1
                if not available:
                    return None
            return self._take()

    def _poll_unlocked(self, timeout_s: float | None = 0.0) -> Any | None:
        if self._available:
            return self._take()
        return EventAccumulator.poll(self, timeout_s)  # nothing available: the locked path

    def _take(self) -> Any:
        """Hand out the head event of a random available key (one is available)."""
        available = self._available
        n = len(available)
        if n == 1 and self._getrandbits is not None:
            getrandbits = self._getrandbits
            while getrandbits(1):  # _randbelow(1), as the generator computes it
                pass
            key = available.pop()
        else:
            i = self._pick(n)
            last = available.pop()
            key = last
            if i < len(available):
                key, available[i] = available[i], last
        queue = self._queues[key]
        event = queue.popleft()
        if not queue:
            del self._queues[key]
        self._inflight.add(key)
        self._size -= 1
        return event

    def done(self, event: Any) -> None:
        """The event of this key finished: its next event may now be handed out."""
        with self._lock:
            self._done(event)

    def _done(self, event: Any) -> None:
        key = event.key
        self._inflight.discard(key)
        if key in self._queues:
            self._available.append(key)
            if self._pollers:
                self._cond.notify()
        if self._idle_waiters and self._size == 0 and not self._inflight:
            self._idle.notify_all()

    def done_and_poll(self, event: Any) -> Any | None:
        """`done(event)`, then `poll(0.0)`: how a processor thread goes on to its next event."""
        with self._lock:
            return self._done_and_poll(event)

    def _done_and_poll(self, event: Any) -> Any | None:
        key = event.key
        queue = self._queues.get(key)
        if queue is not None and not self._available and not self._pollers and \
                self._getrandbits is not None:
            # The finished key would be the only one available, so `poll` would draw
            # `_randbelow(1)` and hand out the head of this same queue: do just that (the same
            # draws, the same event); the key stays in flight.
            getrandbits = self._getrandbits
            while getrandbits(1):
                pass
            event = queue.popleft()
            if not queue:
                del self._queues[key]
            self._size -= 1
            return event
        self._done(event)
        return self._take() if self._available else None

    def wait_idle(self, timeout_s: float | None = None) -> bool:
        """Block until nothing is queued or in flight; True when idle."""
        with self._idle:
            self._idle_waiters += 1
            try:
                return self._idle.wait_for(lambda: self._size == 0 and not self._inflight,
                                           timeout_s)
            finally:
                self._idle_waiters -= 1

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
