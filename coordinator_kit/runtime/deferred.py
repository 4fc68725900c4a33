"""The purgatory of written-but-uncommitted responses (Kafka's `DeferredEventQueue`).

A write's records are applied and appended at once, but its response waits here, keyed by the log
offset its batch ends at, until the high watermark reaches that offset. It is not a holding area
for requests that arrive while a coordinator loads: those fail with COORDINATOR_LOAD_IN_PROGRESS.
"""

from __future__ import annotations

from collections import deque
from itertools import repeat
from typing import Any

from ..logs.layout import level_number
from ..trace import LogContext

__all__ = ["DeferredEventQueue"]

_DEBUG = level_number("DEBUG")


class DeferredEventQueue:
    def __init__(self, log: LogContext) -> None:
        self.log = log
        # Kafka keeps a TreeMap of offset -> events. Offsets only ever grow here, so two
        # parallel deques in arrival order do the same: the offset each event waits for, and
        # the event. Parking a write allocates nothing (no list or pair per offset), and the
        # ints are not tracked by the cyclic garbage collector.
        self._offsets: deque[int] = deque()
        self._events: deque[Any] = deque()

    def add(self, offset: int, event: Any) -> None:
        offsets = self._offsets
        if offsets and offset < offsets[-1]:
            self._refuse(offset)
        offsets.append(offset)
        self._events.append(event)

    def add_all(self, offset: int, events: list[Any]) -> None:
        """`add(offset, event)` for each event in order (a flushed batch parks its writes)."""
        if not events:
            return
        offsets = self._offsets
        if offsets and offset < offsets[-1]:
            self._refuse(offset)
        if len(events) == 1:  # a batch of one write (every batch at linger 0)
            offsets.append(offset)
            self._events.append(events[0])
        else:
            offsets.extend(repeat(offset, len(events)))
            self._events.extend(events)

    def _refuse(self, offset: int) -> None:
        last_offset = self._offsets[-1]
        raise ValueError(f"There is already a deferred event with offset {last_offset}. "
                         f"We should not add one with an offset of {offset} which is "
                         f"lower than that.")

    def complete_up_to(self, offset: int) -> int:
        """Complete every event parked at an offset <= `offset`, lowest first."""
        n = 0
        offsets, events = self._offsets, self._events
        log = self.log
        debug = log.trace.threshold <= _DEBUG  # D-COMPLETE is a DEBUG line
        while offsets and offsets[0] <= offset:
            offsets.popleft()
            event = events.popleft()
            if debug:
                log.log("D-COMPLETE", offset=offset, event=event)
            event.complete(None)
            n += 1
        return n

    def fail_all(self, exc: BaseException) -> int:
        n = 0
        name = getattr(exc, "error", None)
        label = name.value.exception if name is not None else type(exc).__name__
        offsets, events = self._offsets, self._events
        while events:
            offsets.popleft()
            event = events.popleft()
            self.log.log("D-FAIL", exception=label, event=event)
            event.complete(exc)
            n += 1
        return n

    def highest_pending_offset(self) -> int:
        return self._offsets[-1] if self._offsets else -1

    def pending(self) -> list[tuple[int, list[Any]]]:
        """(offset, events) pairs still waiting, lowest offset first, for inspection."""
        out: list[tuple[int, list[Any]]] = []
        for offset, event in zip(self._offsets, self._events):
            if out and out[-1][0] == offset:
                out[-1][1].append(event)
            else:
                out.append((offset, [event]))
        return out

    def __len__(self) -> int:
        return len(self._events)
