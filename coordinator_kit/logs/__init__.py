"""Kafka's log templates and layouts: one catalogue for the writer and the parser."""

import logging
import sys
from typing import IO

from .catalogue import LOGGERS, PREFIXES, TEMPLATES, LogTemplate, template
from .layout import (DEFAULT_START, LOG4J_LEVELS, Log4jFormatter, format_log4j,
                     format_timestamp, level_number)

__all__ = ["LOGGERS", "PREFIXES", "TEMPLATES", "LogTemplate", "template", "DEFAULT_START",
           "LOG4J_LEVELS", "Log4jFormatter", "format_log4j", "format_timestamp", "level_number",
           "ROOT_LOGGERS", "print_logs"]

# Top-level names of every logger the kit writes to. Like any library, the kit attaches a
# NullHandler so that nothing is printed unless the user asks (Python would otherwise print
# WARN/ERROR lines to stderr through its last-resort handler, into notebook cells).
ROOT_LOGGERS = sorted({name.split(".")[0] if not name.startswith("org.apache.kafka")
                       else "org.apache.kafka" for name in LOGGERS.values()})
for _name in ROOT_LOGGERS:
    logging.getLogger(_name).addHandler(logging.NullHandler())


def print_logs(level: str = "INFO", stream: IO[str] | None = None) -> logging.Handler:
    """Print the kit's Kafka log lines as they happen (log4j layout, virtual time).

    Returns the handler; pass it to `logging.getLogger(name).removeHandler` to stop.
    """
    handler = logging.StreamHandler(stream or sys.stdout)
    handler.setFormatter(Log4jFormatter())
    handler.setLevel(level_number(level))
    for name in ROOT_LOGGERS:
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        if logger.level == logging.NOTSET or logger.level > level_number(level):
            logger.setLevel(level_number(level))
    return handler
