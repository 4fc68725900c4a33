"""One trace: every transition, request, append, high-watermark move and timer firing.

Each component owns a `LogContext` (Kafka's name for a logger with a fixed prefix) bound to the
shared `Trace`. `LogContext.log(template_id, **fields)` records one structured `TraceEvent` and
renders Kafka's log line for it from the template catalogue; `LogContext.event(kind, ...)` records
an event Kafka does not log. Log lines, tables, diagrams and datasets are all views of the trace.

The trace keeps events at or above its level (DEBUG by default, as a learner wants to see
everything; a broker in production runs at INFO). Checking the level first keeps a disabled event
to one comparison on the hot path.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import IO, Any, Protocol

from .logs.catalogue import CONTINUED, TEMPLATES, LogTemplate, template
from .logs.layout import DEFAULT_START, format_log4j, level_number

__all__ = ["Trace", "TraceEvent", "LogContext", "Clock"]


class Clock(Protocol):
    @property
    def now(self) -> int: ...


@dataclass(frozen=True, slots=True)
class TraceEvent:
    """One thing that happened, at a virtual time, in one component."""

    seq: int
    ts: int
    kind: str
    source: str
    level: str
    fields: dict[str, Any] = field(default_factory=dict)
    template_id: str | None = None
    logger: str | None = None
    message: str | None = None

    def line(self, start: datetime = DEFAULT_START) -> str | None:
        """The Kafka log4j line for this event, or None when Kafka logs nothing for it."""
        if self.message is None or self.logger is None:
            return None
        line = format_log4j(self.ts, self.level, self.message, self.logger, start)
        if self.template_id in CONTINUED:  # a multi-line message: its further lines
            line += TEMPLATES[self.template_id].more.format(**self.fields)
        return line

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "ts": self.ts, "kind": self.kind, "source": self.source,
                "level": self.level, "template": self.template_id, "logger": self.logger,
                "message": self.message, **{f"f_{k}": v for k, v in self.fields.items()}}


class Trace:
    """The ordered record of a scenario, with subscribers for live views."""

    def __init__(self, clock: Clock, *, level: str = "DEBUG", start: datetime = DEFAULT_START,
                 python_logging: bool = True) -> None:
        self.clock = clock
        self.level = level
        self.threshold = level_number(level)
        # the level Kafka's own loggers are set to in this run: what a `log.isDebugEnabled()`
        # choice between two wordings of one happening answers (LogContext.logger_enabled).
        # The trace's level unless a run writes its log at another one (the live server's
        # log_level): a DEBUG trace behind an INFO log must pick Kafka's INFO wording.
        self.logger_threshold = self.threshold
        self.start = start
        self.python_logging = python_logging
        self.events: list[TraceEvent] = []
        self._subscribers: list[Callable[[TraceEvent], None]] = []

    def enabled(self, level: str) -> bool:
        return level_number(level) >= self.threshold

    def subscribe(self, callback: Callable[[TraceEvent], None]) -> Callable[[], None]:
        """Call `callback(event)` for every new event; returns a function that unsubscribes."""
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback)

    def record(self, kind: str, source: str, level: str, fields: dict[str, Any],
               tpl: LogTemplate | None = None, prefix: str = "") -> TraceEvent:
        message = None if tpl is None else prefix + tpl.render(fields)
        event = TraceEvent(len(self.events), self.clock.now, kind, source, level, fields,
                           None if tpl is None else tpl.id, None if tpl is None else tpl.logger,
                           message)
        self.events.append(event)
        if self.python_logging and tpl is not None:
            logger = _PY_LOGGERS.get(tpl.logger)
            if logger is None:
                logger = _PY_LOGGERS[tpl.logger] = logging.getLogger(tpl.logger)
            levelno = level_number(level)
            if logger.isEnabledFor(levelno):
                logger.log(levelno, message, extra={"virtual_ms": event.ts, "kit_source": source})
        if self._subscribers:
            for callback in list(self._subscribers):
                callback(event)
        return event

    # -- views ---------------------------------------------------------------------------------

    def __iter__(self) -> Iterator[TraceEvent]:
        return iter(self.events)

    def __len__(self) -> int:
        return len(self.events)

    def of_kind(self, *kinds: str) -> list[TraceEvent]:
        return [e for e in self.events if e.kind in kinds]

    def lines(self, *, level: str = "DEBUG", source: str | None = None,
              since_seq: int = 0) -> list[str]:
        """Kafka-format log lines at or above `level`, optionally for one component."""
        threshold = level_number(level)
        out = []
        for e in self.events[since_seq:]:
            if e.message is None or level_number(e.level) < threshold:
                continue
            if source is not None and e.source != source:
                continue
            out.append(e.line(self.start))  # type: ignore[arg-type]
        return out

    def to_records(self) -> list[dict[str, Any]]:
        return [e.to_dict() for e in self.events]

    def to_pandas(self) -> Any:
        """The trace as a pandas DataFrame (pandas is imported only here)."""
        import pandas as pd

        return pd.DataFrame.from_records(self.to_records())

    def write_jsonl(self, out: IO[str], events: Iterable[TraceEvent] | None = None) -> int:
        """Write one JSON object per event (sorted keys, stable); returns the count."""
        n = 0
        for e in self.events if events is None else events:
            out.write(json.dumps(e.to_dict(), sort_keys=True, default=str) + "\n")
            n += 1
        return n

    def __repr__(self) -> str:
        return f"Trace({len(self.events)} events, level={self.level})"


# template id -> (template, numeric level): a disabled line costs one lookup and one comparison.
_TEMPLATE_LEVELS: dict[str, tuple[LogTemplate, int]] = {}
# logger name -> logger; `logging.getLogger` takes the logging module's lock on every call, and
# returns the same object for a name anyway.
_PY_LOGGERS: dict[str, logging.Logger] = {}


class LogContext:
    """A component's handle on the trace: a source name and Kafka's log prefix."""

    __slots__ = ("trace", "source", "prefix")

    def __init__(self, trace: Trace, source: str, prefix: str = "") -> None:
        self.trace = trace
        self.source = source
        self.prefix = prefix

    def log(self, template_id: str, **fields: Any) -> TraceEvent | None:
        """Record the event a Kafka log line stands for, with that line."""
        found = _TEMPLATE_LEVELS.get(template_id)
        if found is None:
            tpl = template(template_id)
            found = _TEMPLATE_LEVELS[template_id] = (tpl, level_number(tpl.level))
        tpl, levelno = found
        if levelno < self.trace.threshold:
            return None
        return self.trace.record(tpl.event, self.source, tpl.level, fields, tpl, self.prefix)

    def event(self, kind: str, level: str = "DEBUG", **fields: Any) -> TraceEvent | None:
        """Record an event Kafka has no log line for (a timer cancelled, a fetch made...)."""
        if level_number(level) < self.trace.threshold:
            return None
        return self.trace.record(kind, self.source, level, fields)

    def enabled(self, level: str) -> bool:
        return level_number(level) >= self.trace.threshold

    def logger_enabled(self, level: str) -> bool:
        """Kafka's `log.isDebugEnabled()` where it picks one of two wordings (not whether the
        kit records a line): the level of Kafka's loggers in this run (Trace.logger_threshold)."""
        return level_number(level) >= self.trace.logger_threshold

    def child(self, prefix: str, source: str | None = None) -> LogContext:
        return LogContext(self.trace, source or self.source, prefix)
