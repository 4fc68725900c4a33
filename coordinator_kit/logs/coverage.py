"""How much of a log's coordination the parser understands: coordinator lines recognised.

A **coordinator line** is a record (a line in one of `patterns.LAYOUTS`) written by the group
coordination machinery of a broker or a consumer:

- the broker's group coordinator and its runtime: loggers under
  `org.apache.kafka.coordinator.group.` (GroupMetadataManager, GroupCoordinatorService,
  GroupCoordinatorShard, ...), `org.apache.kafka.coordinator.common.runtime.`
  (CoordinatorRuntime, its event processor and loader) and the classic
  `kafka.coordinator.group.`;
- Kafka's Java consumer: `org.apache.kafka.clients.consumer.internals.` ConsumerCoordinator,
  AbstractCoordinator (and its inner classes), ConsumerRebalanceListenerInvoker, the KIP-848
  membership and heartbeat managers and CoordinatorRequestManager;
- kafka-python: `kafka.coordinator` and the loggers under it;
- librdkafka: the debug and log lines of its consumer-group contexts (`RDKAFKA_GROUP_FACILITIES`:
  CGRP..., HEARTBEAT, JOINGROUP, SYNCGROUP, ASSIGNOR, ...), whether librdkafka writes them
  itself (`rdkafka.<FAC>` loggers) or confluent-kafka hands them to Python's `logging`
  (logger `confluent_kafka`, message `<FAC> [<handle>] [thrd:...]: ...`).

A coordinator line is **recognised** when its message matches one of the parser's templates
(`catalogue`, `wordings`): an event, or a known wording that is no event. `coverage(paths)`
counts both, with the parser's own counts (`read == recognised + other + quarantined`) and the
unrecognised messages by frequency, so a gap names itself.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from .inputs import open_log, scan_inputs
from .parse import ParseCounts, classify_line, iter_lines, parse_paths
from .patterns import LAYOUT_CLASSIFIER, LAYOUTS, MESSAGE_CLASSIFIER

__all__ = ["Coverage", "coverage", "coordinator_line", "RDKAFKA_GROUP_FACILITIES",
           "COORDINATOR_LOGGER_RE"]

# librdkafka's consumer-group membership contexts (`debug=cgrp` turns them on; rdkafka_cgrp.c
# names them): the group's and the member's states, the coordinator, JoinGroup, SyncGroup,
# LeaveGroup, heartbeats, the assignor, rebalances, member ids and commits. Its partition
# bookkeeping (ASSIGN, ASSIGNMENT, GRPASSIGNMENT, OFFSETFETCH, CGRPOP, CGRPQUERY, ...) is not.
RDKAFKA_GROUP_FACILITIES = frozenset({
    "CGRP", "CGRPSTATE", "CGRPJOINSTATE", "CGRPCOORD", "JOIN", "JOINGROUP", "SYNCGROUP",
    "LEAVEGROUP", "HEARTBEAT", "ASSIGNOR", "REBALANCE", "REJOIN", "MEMBERID", "GRPLEADER",
    "COMMIT", "SESSTMOUT", "MAXPOLL",
})

COORDINATOR_LOGGER_RE = re.compile(
    r"^(?:org\.apache\.kafka\.coordinator\.group\.|org\.apache\.kafka\.coordinator\.common\."
    r"runtime\.|kafka\.coordinator\.group\.)"
    r"|^org\.apache\.kafka\.clients\.consumer\.internals\.(?:ConsumerCoordinator|"
    r"AbstractCoordinator|ConsumerRebalanceListenerInvoker|[A-Za-z]*MembershipManager[A-Za-z]*|"
    r"[A-Za-z]*HeartbeatRequestManager|CoordinatorRequestManager)(?:\$|$)"
    r"|^kafka\.coordinator(?:\.(?:base|consumer|heartbeat|assignors(?:\.[a-z_]+)*))?$")
_PY_RDKAFKA = re.compile(r"^([A-Z][A-Z0-9_]*) \[[^\]]*\] ")
_SLOT = {name: i for i, name in enumerate(("date", "time", "frac", "tz", "epoch", "level",
                                           "logger", "thread", "msg"))}


def coordinator_line(logger: str | None, msg: str | None) -> bool:
    """Whether a record with this logger (as the parser reads it, librdkafka's facility
    prefixed `rdkafka.`) and message is a coordinator line (the module docstring)."""
    if not logger:
        return False
    if logger.startswith("rdkafka."):
        return logger[len("rdkafka."):] in RDKAFKA_GROUP_FACILITIES
    if logger == "confluent_kafka":
        m = _PY_RDKAFKA.match(msg or "")
        return bool(m) and m.group(1) in RDKAFKA_GROUP_FACILITIES
    return COORDINATOR_LOGGER_RE.search(logger) is not None


@dataclass
class Coverage:
    """The parser's counts over some logs, and its coverage of their coordinator lines."""

    counts: ParseCounts
    coordinator: int = 0
    recognised: int = 0
    by_file: dict[str, tuple[int, int]] = field(default_factory=dict)  # file -> (coord, rec)
    unrecognised: Counter[str] = field(default_factory=Counter)  # "logger: message" -> lines

    @property
    def ratio(self) -> float:
        return self.recognised / self.coordinator if self.coordinator else 1.0

    def summary(self) -> str:
        return (f"{self.counts.summary()}; coordinator lines: {self.coordinator}, recognised "
                f"{self.recognised} ({100 * self.ratio:.1f} %)")


def _shape(msg: str) -> str:
    """A message with its numbers, ids and quoted names blanked, to group unrecognised ones."""
    msg = re.sub(r"\"[^\"]*\"|'[^']*'", "<q>", msg)
    return re.sub(r"[0-9a-f]{8}-[0-9a-f-]{27}|\b\d+\b", "<n>", msg)[:160]


def coverage(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> Coverage:
    """Parse `paths` and measure how many coordinator lines the parser recognises."""
    out = Coverage(parse_paths(paths).counts)
    for f in scan_inputs(paths).files:
        coord = rec = 0
        with open_log(f) as stream:
            for data in iter_lines(stream):
                text = data.decode("utf-8", "replace")
                found = LAYOUT_CLASSIFIER.match_values(text)
                if found is None:
                    continue
                i, values = found
                logger, msg = values[_SLOT["logger"]], values[_SLOT["msg"]] or ""
                if logger and LAYOUTS[i].logger_prefix:
                    logger = LAYOUTS[i].logger_prefix + logger
                if not coordinator_line(logger, msg):
                    continue
                coord += 1
                kind, _ = classify_line(text)
                known = kind == "event" or MESSAGE_CLASSIFIER.match_values(msg) is not None
                if known:
                    rec += 1
                else:
                    out.unrecognised[f"{logger}: {_shape(msg)}"] += 1
        out.by_file[f.name] = (coord, rec)
        out.coordinator += coord
        out.recognised += rec
    return out
