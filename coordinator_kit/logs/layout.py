"""Kafka's default log4j layout, `[%d] %p %m (%c)%n`, rendered on virtual time.

Kafka's shipped `log4j.properties` prints `[2024-01-01 09:00:00,123] INFO message (logger)`.
The timestamp here is the kit's virtual clock added to a fixed start date, so the same scenario
prints the same lines on every machine and in every time zone.

A kafka-python consumer logs through Python's `logging`, not log4j. Its lines (the loggers in
`PYTHON_LAYOUT_LOGGERS`) render in the layout of the Python Logging HOWTO's example formatter,
`%(asctime)s - %(name)s - %(levelname)s - %(message)s` (the parser's layout `PY-DASHED`,
common in public kafka-python logs; `logging.basicConfig()`'s default
`%(levelname)s:%(name)s:%(message)s` has no time): `2025-03-03 09:00:01,234 -
kafka.coordinator - INFO - (Re-)joining group group-1`, with Python's level names (WARNING,
CRITICAL). `format_log4j` (and so `TraceEvent.line()` and `Log4jFormatter`) picks it for those
loggers; every other line is unchanged.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta, timezone

__all__ = ["DEFAULT_START", "format_timestamp", "format_log4j", "Log4jFormatter",
           "LOG4J_LEVELS", "level_number", "format_python", "PYTHON_LAYOUT",
           "PYTHON_LAYOUT_LOGGERS"]

# Virtual time 0 is shown as this instant (UTC). Chosen once; changing it changes every dataset.
DEFAULT_START = datetime(2025, 3, 3, 9, 0, 0, tzinfo=timezone.utc)

# log4j level names, and the numbers Python's logging uses for them (TRACE is added below).
LOG4J_LEVELS = {"TRACE": 5, "DEBUG": logging.DEBUG, "INFO": logging.INFO,
                "WARN": logging.WARNING, "ERROR": logging.ERROR, "FATAL": logging.CRITICAL}
_PY_TO_LOG4J = {v: k for k, v in LOG4J_LEVELS.items()}
logging.addLevelName(5, "TRACE")


def level_number(name: str) -> int:
    try:
        return LOG4J_LEVELS[name]
    except KeyError:
        raise ValueError(f"unknown log level {name!r}; use one of {', '.join(LOG4J_LEVELS)}") \
            from None


def format_timestamp(virtual_ms: int, start: datetime = DEFAULT_START) -> str:
    """`yyyy-MM-dd HH:mm:ss,SSS` for a virtual time in milliseconds."""
    t = start + timedelta(milliseconds=virtual_ms)
    return f"{t:%Y-%m-%d %H:%M:%S},{t.microsecond // 1000:03d}"


def format_log4j(virtual_ms: int, level: str, message: str, logger: str,
                 start: datetime = DEFAULT_START) -> str:
    if logger in PYTHON_LAYOUT_LOGGERS:
        return format_python(virtual_ms, level, message, logger, start)
    return f"[{format_timestamp(virtual_ms, start)}] {level} {message} ({logger})"


# The Python layout the kit writes kafka-python's lines in (module docstring).
PYTHON_LAYOUT = "%(asctime)s - %(name)s - %(levelname)s - %(message)s"
# kafka-python's coordinator loggers (logs.catalogue, the KP-* templates).
PYTHON_LAYOUT_LOGGERS = frozenset({"kafka.coordinator", "kafka.coordinator.consumer",
                                   "kafka.coordinator.heartbeat",
                                   "kafka.consumer.subscription_state"})
# log4j level names -> Python's `levelname`
_PYTHON_LEVEL_NAMES = {"WARN": "WARNING", "FATAL": "CRITICAL"}


def format_python(virtual_ms: int, level: str, message: str, logger: str,
                  start: datetime = DEFAULT_START) -> str:
    """`PYTHON_LAYOUT` on virtual time: asctime is Python's default `yyyy-MM-dd HH:mm:ss,SSS`."""
    return (f"{format_timestamp(virtual_ms, start)} - {logger} - "
            f"{_PYTHON_LEVEL_NAMES.get(level, level)} - {message}")


class Log4jFormatter(logging.Formatter):
    """A `logging.Formatter` printing records in Kafka's layout on the kit's virtual clock.

    Records the kit emits carry `virtual_ms`; a record without it (someone else's logger) is
    shown at virtual time 0 rather than at the wall clock, keeping output reproducible.
    """

    def __init__(self, start: datetime = DEFAULT_START) -> None:
        super().__init__()
        self.start = start

    def format(self, record: logging.LogRecord) -> str:
        ms = getattr(record, "virtual_ms", 0)
        level = _PY_TO_LOG4J.get(record.levelno, record.levelname)
        return format_log4j(ms, level, record.getMessage(), record.name, self.start)
