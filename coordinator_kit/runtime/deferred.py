"""The purgatory of written-but-uncommitted responses (Kafka's `DeferredEventQueue`).

A write's records are applied and appended at once, but its response waits here, keyed by the log
offset its batch ends at, until the high watermark reaches that offset. It is not a holding area
for requests that arrive while a coordinator loads: those fail with COORDINATOR_LOAD_IN_PROGRESS.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from ..logs.layout import level_number
from ..trace import LogContext

__all__ = ["DeferredEventQueue"]

_DEBUG = level_number("DEBUG")


class DeferredEventQueue:
    def __init__(self, log: LogContext) -> None:
        self.log = log
        # Offsets only ever grow, so an ordered deque of (offset, [events]) acts as a TreeMap.
        self._pending: deque[tuple[int, list[Any]]] = deque()

    def add(self, offset: int, event: Any) -> None:
        if self._pending:
            last_offset, events = self._pending[-1]
            if offset < last_offset:
                raise ValueError(f"There is already a deferred event with offset {last_offset}. "
                                 f"We should not add one with an offset of {offset} which is "
                                 f"lower than that.")
            if offset == last_offset:
                events.append(event)
                return
        self._pending.append((offset, [event]))

    def add_all(self, offset: int, events: list[Any]) -> None:
        """`add(offset, event)` for each event in order (a flushed batch parks its writes)."""
        if not events:
            return
        pending = self._pending
        if pending:
            last_offset, parked = pending[-1]
            if offset < last_offset:
                self.add(offset, events[0])  # raises, as the first add would
            if offset == last_offset:
                parked.extend(events)
                return
        pending.append((offset, list(events)))

    def complete_up_to(self, offset: int) -> int:
        """Complete every event parked at an offset <= `offset`, lowest first."""
        n = 0
        pending = self._pending
        log = self.log
        while pending and pending[0][0] <= offset:
            _, events = pending.popleft()
            for event in events:
                if log.trace.threshold <= _DEBUG:  # D-COMPLETE is a DEBUG line
                    log.log("D-COMPLETE", offset=offset, event=event)
                event.complete(None)
                n += 1
        return n

    def fail_all(self, exc: BaseException) -> int:
        n = 0
        name = getattr(exc, "error", None)
        label = name.value.exception if name is not None else type(exc).__name__
        while self._pending:
            _, events = self._pending.popleft()
            for event in events:
                self.log.log("D-FAIL", exception=label, event=event)
                event.complete(exc)
                n += 1
        return n

    def highest_pending_offset(self) -> int:
        return self._pending[-1][0] if self._pending else -1

    def pending(self) -> list[tuple[int, list[Any]]]:
        """(offset, events) pairs still waiting, for inspection."""
        return [(o, list(e)) for o, e in self._pending]

    def __len__(self) -> int:
        return sum(len(e) for _, e in self._pending)
