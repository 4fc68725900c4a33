"""Kafka's log templates and layouts: one catalogue for the writer and the parser."""

from .catalogue import LOGGERS, PREFIXES, TEMPLATES, LogTemplate, template
from .layout import (DEFAULT_START, LOG4J_LEVELS, Log4jFormatter, format_log4j,
                     format_timestamp, level_number)

__all__ = ["LOGGERS", "PREFIXES", "TEMPLATES", "LogTemplate", "template", "DEFAULT_START",
           "LOG4J_LEVELS", "Log4jFormatter", "format_log4j", "format_timestamp", "level_number"]
