"""Spark side of the kit: a session factory and the log loader.

Importing this package does not import pyspark; `get_session` and `load_logs` do.
"""

from __future__ import annotations

from typing import Any

__all__ = ["get_session", "load_logs", "load_lines", "parse_logs", "write_parsed"]


def __getattr__(name: str) -> Any:   # lazy: keep `import coordinator_kit.spark` JVM- and pyspark-free
    if name == "get_session":
        from .session import get_session
        return get_session
    if name in ("load_logs", "load_lines", "parse_logs", "write_parsed"):
        from . import load
        return getattr(load, name)
    raise AttributeError(f"module 'coordinator_kit.spark' has no attribute {name!r}")
