"""Virtual time that follows the wall clock, for a live server.

The kit's core never reads a clock: the scheduler's `now` moves only when someone runs it. In
live mode real clients send requests in real time, so something must run the scheduler up to
"now" as the wall clock moves on: this driver. It reads `time.monotonic()` (the only place in
live mode that does), maps it to virtual milliseconds since the server started, and runs every
callback due by then; timers (sessions, rebalances, replica fetches, writes' lingering) then
fire at the wall-clock moment Kafka's would. It never runs the clock ahead of the wall clock,
so a request that arrives is always handled at a virtual time at or after its real arrival.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ..clock import Scheduler

__all__ = ["RealTimeDriver"]


class RealTimeDriver:
    def __init__(self, scheduler: Scheduler,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.scheduler = scheduler
        self._monotonic = monotonic
        self._origin_s = monotonic() - scheduler.now / 1000
        self.callbacks_run = 0

    def wall_ms(self) -> int:
        """Virtual milliseconds the wall clock has reached."""
        return int((self._monotonic() - self._origin_s) * 1000)

    def advance(self) -> int:
        """Run everything due up to the wall clock's now; returns how many callbacks ran."""
        target = self.wall_ms()
        if target < self.scheduler.now:
            target = self.scheduler.now  # never backwards (the scheduler may be ahead by < 1 ms)
        ran = self.scheduler.run_until(target)
        self.callbacks_run += ran
        return ran

    def seconds_to_next(self, cap_s: float = 0.05) -> float:
        """How long the caller may sleep before something is due (at most `cap_s`)."""
        due = self.scheduler.peek()
        if due is None:
            return cap_s
        return max(0.0, min(cap_s, (due - self.wall_ms()) / 1000))
