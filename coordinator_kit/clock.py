"""Virtual time: an integer-millisecond clock and a deterministic scheduler.

Everything in the kit that waits (session timeouts, linger, replica fetches, loads) schedules a
callback here instead of sleeping, so a scenario that spans minutes runs in microseconds and gives
the same trace on every run. Like SimPy's environment the pending callbacks sit in a heap keyed by
``(time, sequence)``: two callbacks due at the same millisecond run in the order they were
scheduled. Like trio's MockClock, time never goes backwards.

The scheduler is safe to call from several threads (the threaded event processor schedules timers
from its workers); callbacks always run on the thread that drives the scheduler. A scheduler that
only ever one thread uses (`Scheduler(threadsafe=False)`, as a `Cluster` makes: its processors are
deterministic) skips the lock on the hot paths, where a `with` on an RLock costs ~0.3 us per
callback; it runs the same callbacks in the same order.
"""

from __future__ import annotations

import heapq
import itertools
from heapq import heappop, heappush
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

__all__ = ["Scheduler", "TimerHandle", "TimerLane", "SchedulerLimitExceeded"]


class SchedulerLimitExceeded(RuntimeError):
    """`run_until` gave up: the condition did not hold within the allowed virtual time."""


class TimerHandle:
    """A scheduled callback; `cancel()` makes sure it never runs."""

    __slots__ = ("when", "seq", "name", "_callback", "_args", "cancelled", "done", "_scheduler")

    def __init__(self, when: int, seq: int, name: str, callback: Callable[..., Any],
                 args: tuple[Any, ...], scheduler: Scheduler | None = None) -> None:
        self.when = when
        self.seq = seq
        self.name = name
        self._callback = callback
        self._args = args
        self.cancelled = False
        self.done = False
        self._scheduler = scheduler

    def cancel(self) -> bool:
        """Cancel the callback; returns False when it already ran or was cancelled."""
        if self.done or self.cancelled:
            return False
        self.cancelled = True
        # Drop what the callback holds (as asyncio does): it will never run, and a handle that
        # sits in the heap until purged must not keep a write, its batch or a reference cycle
        # (a handle whose args point back at its owner) alive until a full GC.
        self._callback = _never_called
        self._args = ()
        if self._scheduler is not None:
            self._scheduler._cancelled += 1
        return True

    @property
    def pending(self) -> bool:
        return not (self.done or self.cancelled)

    def __lt__(self, other: TimerHandle) -> bool:
        return (self.when, self.seq) < (other.when, other.seq)

    def __repr__(self) -> str:
        state = "cancelled" if self.cancelled else "done" if self.done else "pending"
        return f"TimerHandle({self.name!r}, at={self.when}ms, {state})"


_NOTHING: Any = object()
_new_handle = object.__new__  # a TimerHandle whose slots the caller fills in (see call_later)


class _LaneSlot(TimerHandle):
    """The one heap entry of a `TimerLane`: it stands for the lane's first timer."""

    __slots__ = ("lane",)


class _DeferrableHandle(TimerHandle):
    """A handle whose timer `Scheduler.defer` can move later without touching the heap.

    Its heap entry may sit at an earlier (when, seq) than the handle's own; when that entry
    comes to the top it is pushed again at the handle's (when, seq), which `defer` drew from
    the same sequence a new `call_later` would have: the timer runs exactly where a cancelled
    handle plus a new one would have put it, ties included, and the clock does not move for
    the stale entry (as for a cancelled handle)."""

    __slots__ = ()


class TimerLane:
    """Timers armed in (time, sequence) order that share one place in the scheduler's heap.

    For many short-lived timers of one kind, such as a write's timeout (armed when the write
    is appended, cancelled when it commits, seconds before it is due): arming takes a sequence
    number and an append, and cancelling is the owner's business (`live(item)` says whether
    the timer still stands), so neither touches the heap. A lane timer runs exactly where a
    `TimerHandle` made by `call_later` at the same moment would: it keeps the (when, seq)
    that call_later would have given it, its place in the heap is always the first timer not
    yet run, and a cancelled first timer is skipped the way a cancelled handle is (no clock
    movement). `Scheduler.pending()` lists each live lane timer as a handle named
    `name(item)`; cancelling that handle calls `disarm(item)`, as does the lane when the timer
    fires, so that `live(item)` is False from then on.

    `arm` refuses (returns False) a timer due before the lane's last one, which could not keep
    its order in a first-in-first-out lane, and a delay that is not an int >= 0; the owner then
    uses `call_later` (which raises for a bad delay, as it always did).
    """

    def __init__(self, scheduler: Scheduler, callback: Callable[[Any], Any],
                 live: Callable[[Any], bool], disarm: Callable[[Any], Any],
                 name: Callable[[Any], str]) -> None:
        self.scheduler = scheduler
        self.callback = callback
        self.live = live
        self.disarm = disarm
        self.name = name
        # The timers in (when, seq) order, as three parallel deques: ints are not tracked by
        # the cyclic GC, where a (when, seq, item) tuple per timer would be.
        self._whens: deque[int] = deque()
        self._seqs: deque[int] = deque()
        self._items: deque[Any] = deque()
        self._slot: _LaneSlot | None = None  # in the heap at the first timer's (when, seq)
        scheduler._lanes.append(self)

    def arm(self, delay_ms: int, item: Any) -> bool:
        """Run `callback(item)` after `delay_ms`, unless `live(item)` is False by then."""
        if delay_ms.__class__ is not int or delay_ms < 0:
            return False
        sched = self.scheduler
        if not sched._threadsafe:
            # the body below without the lock (one thread only), written out
            when = sched._now + delay_ms
            items = self._items
            if items and not self.live(items[0]):
                self._drop_cancelled()
            whens = self._whens
            if whens and when < whens[-1]:
                return False
            seq = next(sched._seq)
            whens.append(when)
            self._seqs.append(seq)
            items.append(item)
            if self._slot is None:
                self._place(when, seq)
            return True
        with sched._lock:
            when = sched._now + delay_ms
            items = self._items
            # Forget the cancelled timers at the front (timeouts mostly end in arming order);
            # the slot may still stand for one of them: it moves on when it reaches the top.
            if items and not self.live(items[0]):
                self._drop_cancelled()
            whens = self._whens
            if whens and when < whens[-1]:
                return False
            seq = next(sched._seq)
            whens.append(when)
            self._seqs.append(seq)
            items.append(item)
            if self._slot is None:
                self._place(when, seq)
            return True

    def _drop_cancelled(self) -> None:
        """Drop the timers at the front whose item is no longer live."""
        items, live = self._items, self.live
        whens, seqs = self._whens, self._seqs
        while items and not live(items[0]):
            items.popleft()
            whens.popleft()
            seqs.popleft()

    def _place(self, when: int, seq: int) -> None:
        slot = _LaneSlot(when, seq, "lane", self._fire, (seq,), None)
        slot.lane = self
        self._slot = slot
        self.scheduler._push_entry(when, seq, slot)

    def _drop_dead_head(self) -> bool:
        """Called with the slot at the top of the heap: True when the first timer still stands.

        Otherwise the slot moves to the first live timer (or leaves the heap); the caller
        then pops the old slot and looks at the heap again."""
        self._drop_cancelled()
        if self._items and self._seqs[0] == self._slot.seq:  # type: ignore[union-attr]
            return True
        self._slot = None
        if self._items:
            self._place(self._whens[0], self._seqs[0])
        return False

    def _fire(self, seq: int) -> None:
        items, whens, seqs = self._items, self._whens, self._seqs
        if not self.scheduler._threadsafe:  # the block below without the lock, written out
            item = items.popleft() if items and seqs[0] == seq else _NOTHING
            if item is not _NOTHING:
                whens.popleft()
                seqs.popleft()
            self._slot = None
            if items:
                self._place(whens[0], seqs[0])
        else:
            with self.scheduler._lock:
                # The slot was popped as live; another thread may have cancelled its timer and
                # `arm` dropped it since, in which case there is nothing to run.
                if items and seqs[0] == seq:
                    item = items.popleft()
                    whens.popleft()
                    seqs.popleft()
                else:
                    item = _NOTHING
                self._slot = None
                if items:
                    self._place(whens[0], seqs[0])
        if item is not _NOTHING:
            self.disarm(item)
            self.callback(item)

    def _pending(self) -> list[tuple[int, int, TimerHandle]]:
        return [(when, seq, _LaneTimerView(self, when, seq, item))
                for when, seq, item in zip(self._whens, self._seqs, self._items)
                if self.live(item)]

    def __len__(self) -> int:
        return sum(1 for item in self._items if self.live(item))


class _LaneTimerView(TimerHandle):
    """A live lane timer as `Scheduler.pending()` shows it; `cancel()` cancels the timer."""

    __slots__ = ("_lane", "_item")

    def __init__(self, lane: TimerLane, when: int, seq: int, item: Any) -> None:
        super().__init__(when, seq, lane.name(item), lane.callback, (item,), None)
        self._lane = lane
        self._item = item

    def cancel(self) -> bool:
        if not self._lane.live(self._item) or not super().cancel():
            return False
        self._lane.disarm(self._item)
        return True


def _never_called(*args: Any) -> None:  # pragma: no cover - a cancelled handle never runs
    raise AssertionError("a cancelled timer ran")


def _check_ms(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an integer number of milliseconds, got {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0 ms, got {value}: virtual time never goes backwards")
    return value


class Scheduler:
    """Integer-millisecond virtual clock with a heap of pending callbacks."""

    def __init__(self, start_ms: int = 0, *, threadsafe: bool = True) -> None:
        """`threadsafe=False`: only the thread that drives the scheduler ever calls it (no
        threaded processor, no other thread scheduling); the hot paths then skip the lock."""
        self._now = _check_ms("start_ms", start_ms)
        self._threadsafe = bool(threadsafe)
        # (when, seq, handle): the tuples compare in C, so a push or pop never calls back into
        # TimerHandle.__lt__ (the heap holds every write's timeout, thousands of entries).
        self._heap: list[tuple[int, int, TimerHandle]] = []
        self._seq = itertools.count()
        self._lock = threading.RLock()
        self._wakeup = threading.Condition(self._lock)
        self._sleepers = 0  # threads in wait_for_work: only then is there anyone to notify
        self._cancelled = 0  # about how many cancelled handles the heap holds (see _maybe_purge)
        self._lanes: list[TimerLane] = []  # each has at most one entry (a _LaneSlot) in the heap
        if not self._threadsafe:
            # The scheduling calls without the lock (bound once; the instance attribute wins).
            self.call_at = self._call_at_unlocked  # type: ignore[method-assign]
            self.call_later = self._call_later_unlocked  # type: ignore[method-assign]
            self.call_soon = self._call_soon_unlocked  # type: ignore[method-assign]

    # -- reading the time ---------------------------------------------------------------------

    @property
    def now(self) -> int:
        """Current virtual time in milliseconds."""
        return self._now

    def milliseconds(self) -> int:
        """Kafka's `Time.milliseconds()` on the virtual clock."""
        return self._now

    # -- scheduling ----------------------------------------------------------------------------

    def call_at(self, when: int, callback: Callable[..., Any], *args: Any,
                name: str = "") -> TimerHandle:
        """Run `callback(*args)` at virtual time `when` (not before `now`)."""
        if when.__class__ is not int:  # bool is not int: checked below
            _check_ms("when", when)
        with self._lock:
            if when < self._now:
                _check_ms("when", when)
                raise ValueError(f"cannot schedule {name or callback!r} at {when} ms: the clock "
                                 f"already reads {self._now} ms")
            # the handle made and pushed in place, as in every scheduling call below
            if self._cancelled > 512:
                self._maybe_purge()
            seq = next(self._seq)
            handle = TimerHandle(when, seq, name or getattr(callback, "__name__", "?"), callback,
                                 args, self)
            heappush(self._heap, (when, seq, handle))
            if self._sleepers:
                self._wakeup.notify_all()
            return handle

    def _maybe_purge(self) -> None:
        if self._cancelled > 512 and 2 * self._cancelled > len(self._heap):
            # Mostly dead (every write's timeout is cancelled when the write completes, long
            # before it is due): drop the cancelled handles, as asyncio does, so they free what
            # they hold and pushes stay cheap. Nothing observable changes: they would never run.
            self._heap[:] = [e for e in self._heap if not e[2].cancelled]
            heapq.heapify(self._heap)
            self._cancelled = 0

    def _push_entry(self, when: int, seq: int, handle: TimerHandle) -> None:
        """Put a handle in the heap at a (when, seq) taken earlier (a lane's slot)."""
        heapq.heappush(self._heap, (when, seq, handle))
        if self._sleepers:
            self._wakeup.notify_all()

    def call_later(self, delay_ms: int, callback: Callable[..., Any], *args: Any,
                   name: str = "") -> TimerHandle:
        """Run `callback(*args)` after `delay_ms` virtual milliseconds."""
        if delay_ms.__class__ is not int or delay_ms < 0:  # bool is not int: checked below
            _check_ms("delay_ms", delay_ms)
        with self._lock:
            if self._cancelled > 512:
                self._maybe_purge()
            when = self._now + delay_ms
            seq = next(self._seq)
            handle = TimerHandle(when, seq, name or getattr(callback, "__name__", "?"), callback,
                                 args, self)
            heappush(self._heap, (when, seq, handle))
            if self._sleepers:
                self._wakeup.notify_all()
            return handle

    def call_soon(self, callback: Callable[..., Any], *args: Any, name: str = "") -> TimerHandle:
        """Run `callback(*args)` at the current time, after everything already due now."""
        with self._lock:
            if self._cancelled > 512:
                self._maybe_purge()
            when = self._now
            seq = next(self._seq)
            handle = TimerHandle(when, seq, name or getattr(callback, "__name__", "?"), callback,
                                 args, self)
            heappush(self._heap, (when, seq, handle))
            if self._sleepers:
                self._wakeup.notify_all()
            return handle

    # The three calls above for a scheduler one thread uses (`threadsafe=False`): the same
    # checks, the same (when, seq) and heap entry, no lock.

    def _call_at_unlocked(self, when: int, callback: Callable[..., Any], *args: Any,
                          name: str = "") -> TimerHandle:
        if when.__class__ is not int:
            _check_ms("when", when)
        if when < self._now:
            _check_ms("when", when)
            raise ValueError(f"cannot schedule {name or callback!r} at {when} ms: the clock "
                             f"already reads {self._now} ms")
        if self._cancelled > 512:
            self._maybe_purge()
        seq = next(self._seq)
        # TimerHandle(when, seq, name, callback, args, self), written out: no __init__ call
        handle = _new_handle(TimerHandle)
        handle.when = when
        handle.seq = seq
        handle.name = name or getattr(callback, "__name__", "?")
        handle._callback = callback
        handle._args = args
        handle.cancelled = handle.done = False
        handle._scheduler = self
        heappush(self._heap, (when, seq, handle))
        if self._sleepers:
            self._notify_sleepers()
        return handle

    def _call_later_unlocked(self, delay_ms: int, callback: Callable[..., Any], *args: Any,
                             name: str = "") -> TimerHandle:
        if delay_ms.__class__ is not int or delay_ms < 0:
            _check_ms("delay_ms", delay_ms)
        if self._cancelled > 512:
            self._maybe_purge()
        when = self._now + delay_ms
        seq = next(self._seq)
        # TimerHandle(when, seq, name, callback, args, self), written out: no __init__ call
        handle = _new_handle(TimerHandle)
        handle.when = when
        handle.seq = seq
        handle.name = name or getattr(callback, "__name__", "?")
        handle._callback = callback
        handle._args = args
        handle.cancelled = handle.done = False
        handle._scheduler = self
        heappush(self._heap, (when, seq, handle))
        if self._sleepers:
            self._notify_sleepers()
        return handle

    def _call_soon_unlocked(self, callback: Callable[..., Any], *args: Any,
                            name: str = "") -> TimerHandle:
        return self._call_at_unlocked(self._now, callback, *args, name=name)

    def call_later_deferrable(self, delay_ms: int, callback: Callable[..., Any], *args: Any,
                              name: str = "") -> TimerHandle:
        """`call_later` for a timer that is often pushed back (a session timeout rescheduled
        by every heartbeat): its handle can be moved later with `defer`."""
        if delay_ms.__class__ is not int or delay_ms < 0:
            _check_ms("delay_ms", delay_ms)
        with self._lock:
            if self._cancelled > 512:
                self._maybe_purge()
            when = self._now + delay_ms
            seq = next(self._seq)
            handle = _DeferrableHandle(when, seq, name or getattr(callback, "__name__", "?"),
                                       callback, args, self)
            heappush(self._heap, (when, seq, handle))
            if self._sleepers:
                self._wakeup.notify_all()
            return handle

    def defer(self, handle: TimerHandle, delay_ms: int, *args: Any) -> bool:
        """Move a pending `call_later_deferrable` handle to `delay_ms` from now; with `args`,
        the callback gets those from then on (without, it keeps its own).

        The same as cancelling it and calling `call_later(delay_ms, callback, *args)` (the
        same sequence number is drawn), without a new handle or heap entry. Returns False,
        changing nothing, when that cannot be done in place: the handle ran or was cancelled,
        is not deferrable, the delay is not an int >= 0, or the new time is earlier than the
        handle's (its heap entry would come up too late); the caller then does just that."""
        if (handle.__class__ is not _DeferrableHandle or delay_ms.__class__ is not int
                or delay_ms < 0):
            return False
        if self._threadsafe:
            with self._lock:
                return self._defer(handle, delay_ms, args)
        return self._defer(handle, delay_ms, args)

    def _defer(self, handle: TimerHandle, delay_ms: int, args: tuple[Any, ...]) -> bool:
        when = self._now + delay_ms
        if handle.done or handle.cancelled or when < handle.when:
            return False
        handle.when = when
        handle.seq = next(self._seq)
        if args:
            handle._args = args
        return True

    def _notify_sleepers(self) -> None:
        with self._lock:
            self._wakeup.notify_all()

    # -- running -------------------------------------------------------------------------------

    def _drop_dead_head(self) -> bool:
        """Pop the top of the heap if it stands for nothing (a cancelled handle, or a lane slot
        whose timer was cancelled: the slot then moves on). True when something was popped."""
        heap = self._heap
        head = heap[0][2]
        if head.cancelled:
            heapq.heappop(heap)
            self._cancelled -= 1
            return True
        if head.__class__ is _LaneSlot:
            if not head.lane._drop_dead_head():  # type: ignore[attr-defined]
                heapq.heappop(heap)  # the slot's timer was cancelled; a new slot is in the heap
                return True
            return False
        if head.__class__ is _DeferrableHandle and heap[0][1] != head.seq:
            # deferred since this entry was pushed: move it to the handle's (when, seq)
            heapq.heapreplace(heap, (head.when, head.seq, head))
            return True
        return False

    def _pop_live(self, limit: int | None) -> TimerHandle | None:
        with self._lock:
            heap = self._heap
            while heap:
                head = heap[0][2]
                if (head.cancelled or head.__class__ is not TimerHandle) and self._drop_dead_head():
                    continue
                if limit is not None and head.when > limit:
                    return None
                heapq.heappop(heap)
                head.done = True  # under the lock, as in run_until
                if head.when > self._now:  # max(now, when): time never goes backwards
                    self._now = head.when
                return head
            return None

    def peek(self) -> int | None:
        """Time of the next pending callback, or None when nothing is scheduled."""
        with self._lock:
            while self._heap and self._drop_dead_head():
                pass
            return self._heap[0][0] if self._heap else None

    def pending(self) -> list[TimerHandle]:
        """Pending callbacks in the order they will run."""
        with self._lock:
            # a deferred handle runs at its own (when, seq), not its heap entry's
            entries = [(h.when, h.seq, h) for _, _, h in self._heap
                       if h.__class__ is not _LaneSlot]
            for lane in self._lanes:
                entries += lane._pending()
            return [h for _, _, h in sorted(entries) if h.pending]

    def step(self) -> bool:
        """Run the next callback, moving the clock to its time. False when nothing is pending."""
        handle = self._pop_live(None)
        if handle is None:
            return False
        self._run(handle)
        return True

    def _run(self, handle: TimerHandle) -> None:
        handle.done = True
        callback, args = handle._callback, handle._args
        # A handle that ran keeps nothing alive (the processor or a write may still hold it).
        handle._callback = _never_called
        handle._args = ()
        callback(*args)

    def run_until(self, when: int | Callable[[], bool], *,
                  limit_ms: int | None = 3_600_000) -> int:
        """Run callbacks until a time or a condition; returns how many callbacks ran.

        With an integer, every callback due at or before `when` runs and the clock then reads
        `when`. With a callable, callbacks run one at a time until it returns True; it gives up
        with `SchedulerLimitExceeded` when nothing is left to run or after `limit_ms` of virtual
        time (one hour by default; periodic timers never leave the heap empty, so a wrong
        expectation must fail loudly instead of spinning). `limit_ms=None` means no limit.
        """
        ran = 0
        if callable(when):
            condition = when
            deadline = None if limit_ms is None else self._now + _check_ms("limit_ms", limit_ms)
            while not condition():
                handle = self._pop_live(deadline)
                if handle is None:
                    if deadline is None or self.peek() is None:
                        # Nothing will ever happen: leave the clock where the condition was last
                        # checked instead of jumping to the limit.
                        reason = "nothing left to run"
                    else:
                        reason = f"limit of {limit_ms} ms reached"
                        with self._lock:
                            self._now = max(self._now, deadline)
                    raise SchedulerLimitExceeded(
                        f"condition {getattr(condition, '__name__', condition)!r} still false at "
                        f"{self._now} ms: {reason}")
                # self._run(handle), written out: this loop runs every callback of a scenario
                handle.done = True
                callback, args = handle._callback, handle._args
                handle._callback = _never_called
                handle._args = ()
                callback(*args)
                ran += 1
            return ran
        _check_ms("when", when)
        if when < self._now:
            raise ValueError(f"run_until({when}) is in the past: the clock reads {self._now} ms")
        # self._run(self._pop_live(when)) until nothing is due, written out: this loop runs
        # every callback of a scenario driven by run_for.
        heap = self._heap
        if not self._threadsafe:
            # the loop below without the lock (one thread only), written out
            while heap:
                entry = heap[0]
                handle = entry[2]
                if (handle.cancelled or handle.__class__ is not TimerHandle) and self._drop_dead_head():
                    continue
                if entry[0] > when:
                    break
                heappop(heap)
                if entry[0] > self._now:  # max(now, when): time never goes backwards
                    self._now = entry[0]
                handle.done = True
                callback, args = handle._callback, handle._args
                handle._callback = _never_called
                handle._args = ()
                callback(*args)
                ran += 1
            if when > self._now:
                self._now = when
            return ran
        lock = self._lock
        while True:
            with lock:
                if not heap:
                    break
                entry = heap[0]
                handle = entry[2]
                if (handle.cancelled or handle.__class__ is not TimerHandle) and self._drop_dead_head():
                    continue
                if entry[0] > when:
                    break
                heappop(heap)
                if entry[0] > self._now:  # max(now, when): time never goes backwards
                    self._now = entry[0]
                # done under the lock: a `defer` or `cancel` from another thread from now on
                # sees that the callback runs (a deferred timer then gets a new handle)
                handle.done = True
            callback, args = handle._callback, handle._args
            handle._callback = _never_called
            handle._args = ()
            callback(*args)
            ran += 1
        with self._lock:
            self._now = max(self._now, when)
        return ran

    def run_for(self, duration_ms: int) -> int:
        """Run everything due in the next `duration_ms`; the clock ends `duration_ms` later."""
        return self.run_until(self._now + _check_ms("duration_ms", duration_ms))

    def run_pending(self) -> int:
        """Run what is due now (zero virtual time passes)."""
        return self.run_until(self._now)

    def advance(self, duration_ms: int) -> int:
        """Jump the clock forward without running anything (trio's `MockClock.jump`).

        Callbacks that became overdue run late, at the new time, on the next `step`/`run_*`.
        This is how a stalled thread looks from inside: nothing happens, then everything at once.
        Returns the number of callbacks now overdue.
        """
        _check_ms("duration_ms", duration_ms)
        with self._lock:
            self._now += duration_ms
            return sum(1 for h in self.pending() if h.when < self._now)

    def wait_for_work(self, timeout_s: float) -> None:
        """Block the driving thread until a callback is scheduled (threaded processor support)."""
        with self._wakeup:
            self._sleepers += 1
            try:
                self._wakeup.wait(timeout_s)
            finally:
                self._sleepers -= 1

    def __repr__(self) -> str:
        return f"Scheduler(now={self._now}ms, pending={len(self.pending())})"
