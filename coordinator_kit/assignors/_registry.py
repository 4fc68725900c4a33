"""Assignors by protocol name: what ``partition.assignment.strategy`` is checked against."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ._api import PartitionAssignor
from ._range import RangeAssignor
from ._roundrobin import RoundRobinAssignor
from ._sticky import CooperativeStickyAssignor, StickyAssignor

__all__ = ["ASSIGNORS", "UnknownAssignorError", "get_assignor"]

# The kit's assignors are stateless, so one shared instance each is enough.
ASSIGNORS: Mapping[str, PartitionAssignor] = MappingProxyType({
    a.name: a for a in (RangeAssignor(), RoundRobinAssignor(), StickyAssignor(),
                        CooperativeStickyAssignor())})

# Java configs name classes rather than protocols; accept those spellings too.
_JAVA_PACKAGE = "org.apache.kafka.clients.consumer."
_JAVA_CLASSES = {"RangeAssignor": "range", "RoundRobinAssignor": "roundrobin",
                 "StickyAssignor": "sticky", "CooperativeStickyAssignor": "cooperative-sticky"}


class UnknownAssignorError(ValueError):
    """A name that is neither a known protocol name nor one of Kafka's assignor class names."""


def get_assignor(name: str) -> PartitionAssignor:
    """The assignor for a protocol name ("range") or Kafka class name ("...RangeAssignor")."""
    if not isinstance(name, str):
        raise TypeError(f"an assignor name must be a str, got {name!r}")
    key = name.strip()
    if key in ASSIGNORS:
        return ASSIGNORS[key]
    simple = key.removeprefix(_JAVA_PACKAGE)
    if simple in _JAVA_CLASSES:
        return ASSIGNORS[_JAVA_CLASSES[simple]]
    known = ", ".join(sorted(ASSIGNORS))
    raise UnknownAssignorError(
        f"unknown partition assignor {name!r}; known assignors: {known} "
        f"(or their Java class names, e.g. {_JAVA_PACKAGE}RangeAssignor)")
