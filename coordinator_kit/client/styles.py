"""Which client's log lines a consumer writes: the Java client's (default) or kafka-python's.

`ConsumerConfig(client_style="kafka-python")` (also `Cluster.add_consumer(...,
client_style="kafka-python")`) changes only the wording: the consumer behaves as the Java
classic consumer either way, and its trace holds the same events (kinds, order, virtual times).
For each line the Java client writes, kafka-python 2.x (2.3.2, its last 2.x release) writes the
line below, from `kafka/coordinator/base.py`, `consumer.py` and
`kafka/consumer/subscription_state.py` (catalogue ids KP-*, loggers `kafka.coordinator`,
`kafka.coordinator.consumer`, `kafka.coordinator.heartbeat`,
`kafka.consumer.subscription_state`, rendered in Python logging's layout: see
`coordinator_kit.logs.layout`). Where kafka-python logs nothing at INFO or above (a successful
SyncGroup, most rejoin requests, a generation reset, the "giving away" warning), the event is
recorded without a line.

Where the two clients differ, the kafka-python lines follow kafka-python's code:

* "Setting newly assigned partitions" lists every assigned partition (a Python set,
  `{TopicPartition(topic='orders', partition=0), ...}`, here sorted), not only the added ones;
* lost partitions are logged with the revoke line: kafka-python 2.x has no
  `on_partitions_lost`, it revokes them on the next join;
* an auto-commit that fails is "Auto offset commit failed for group g: <error>", the error
  printed as kafka-python prints its exceptions (`[Error 25] UnknownMemberIdError`, or
  `CommitFailedError: [Error 27] RebalanceInProgressError` for a commit refused during a
  rebalance).

kafka-python also prints a few lines with no Java counterpart, which the kit does not write (so
both styles keep the same events): "Heartbeat session expired, marking coordinator dead" before
the coordinator-dead line, "OffsetCommit for group g failed: ..." before the auto-commit
warning, "Received heartbeat response ..." for a heartbeat answered with an error (written for
successful ones, like Java's "Received successful Heartbeat response"), and its other DEBUG
lines. It marks the coordinator dead before (not after) logging a
JoinGroup failed on a coordinator error; the kit keeps the Java order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import Errors
from ..logs.catalogue import template
from ..logs.layout import level_number
from ..topic import TopicPartition
from ..trace import TraceEvent

if TYPE_CHECKING:
    from .consumer import Consumer

__all__ = ["CLIENT_STYLES", "kafka_python_error", "kafka_python_error_name",
           "kafka_python_log"]

CLIENT_STYLES = ("java", "kafka-python")

# Kafka error name -> kafka-python 2.x exception class, where it is not the CamelCase of the
# name + "Error" (kafka/errors.py at 2.3.2).
_KAFKA_PYTHON_NAMES = {
    "UNKNOWN_SERVER_ERROR": "UnknownError",
    "NONE": "NoError",
    "INVALID_FETCH_SIZE": "InvalidFetchRequestError",
    "NOT_LEADER_OR_FOLLOWER": "NotLeaderForPartitionError",
    "MESSAGE_TOO_LARGE": "MessageSizeTooLargeError",
    "KAFKA_STORAGE_ERROR": "KafkaStorageError",
}


def kafka_python_error_name(error: Errors) -> str:
    """The class kafka-python raises for `error`: `UnknownMemberIdError`..."""
    return _KAFKA_PYTHON_NAMES.get(error.name) or \
        "".join(part.capitalize() for part in error.name.split("_")) + "Error"


def kafka_python_error(error: Errors, *args: Any) -> str:
    """`str()` of kafka-python's exception: `[Error 25] UnknownMemberIdError[: args]`."""
    name = kafka_python_error_name(error)
    if args:
        name += ": " + (str(args[0]) if len(args) == 1 else str(args))
    return f"[Error {error.code}] {name}"


def _tp(tp: TopicPartition) -> str:
    return f"TopicPartition(topic='{tp.topic}', partition={tp.partition})"


def _set(partitions: Iterable[TopicPartition]) -> str:
    items = sorted(partitions)
    return "{" + ", ".join(_tp(tp) for tp in items) + "}" if items else "set()"


def _list(partitions: Iterable[TopicPartition]) -> str:
    return "[" + ", ".join(_tp(tp) for tp in sorted(partitions)) + "]"


def _generation(consumer: Consumer) -> str:
    g = consumer.generation
    return (f"<Generation {g.generation_id} (member_id: {g.member_id}, "
            f"protocol: {g.protocol_name})>")


def _line(consumer: Consumer, java_id: str, context: Mapping[str, Any]
          ) -> tuple[str | None, dict[str, Any]]:
    """kafka-python's template for the happening the Java line `java_id` stands for, and its
    fields; (None, {}) where kafka-python logs nothing."""
    group = consumer.config.group_id
    node = "None" if consumer.coordinator is None else f"coordinator-{consumer.coordinator}"
    error: Errors | None = context.get("error")
    if java_id == "J-DISCOVER":
        return "KP-DISCOVER", {"node": node, "group": group}
    if java_id == "J-COORD-LOST":
        cause = context.get("cause", "")
        if error is Errors.REQUEST_TIMED_OUT:  # kafka.conn closes the connection with this
            reason = kafka_python_error(error, f"Request timed out after "
                                               f"{consumer.config.request_timeout_ms} ms")
        else:
            reason = (kafka_python_error(error) if error is not None
                      else "Heartbeat session expired" if cause.startswith("session timed out")
                      else cause)
        return "KP-COORD-DEAD", {"node": node, "group": group, "reason": reason}
    if java_id == "J-REJOIN":
        return "KP-REJOIN", {"group": group}
    if java_id == "J-REQ-JOIN":
        why = context.get("why")
        if why == "member_id":
            return "KP-MEMBER-ID", {"member": consumer.member_id, "group": group}
        if why == "heartbeat_rebalancing":
            return "KP-HB-REBAL", {"group": group}
        return None, {}
    if java_id == "J-JOINED":
        return "KP-JOINED", {"group": group, "generation": _generation(consumer)}
    if java_id == "J-JOIN-LOADING":
        return "KP-JOIN-LOADING", {"group": group, "node": node}
    if java_id == "J-JOIN-REJOIN":
        if error is Errors.UNKNOWN_MEMBER_ID:
            return "KP-JOIN-UNKNOWN", {"group": group}
        return "KP-JOIN-UNEXPECTED", {"error": kafka_python_error(error or
                                                                  Errors.UNKNOWN_SERVER_ERROR)}
    if java_id == "J-JOIN-COORD":
        return "KP-JOIN-COORD", {"group": group,
                                 "error": kafka_python_error_name(error or
                                                                  Errors.NOT_COORDINATOR)}
    if java_id == "J-JOIN-REBAL":
        return "KP-JOIN-REBAL", {"group": group}
    if java_id in ("J-JOIN-FENCED", "J-JOIN-FATAL"):
        return "KP-JOIN-FATAL", {"group": group, "error": kafka_python_error_name(
            error or Errors.FENCED_INSTANCE_ID)}
    if java_id == "J-FINISHED":
        return "KP-LEADER", {"assignor": context.get("assignor")}
    if java_id == "J-SYNC-REBAL":
        return "KP-SYNC-REBAL", {"group": group}
    if java_id in ("J-SYNC-REJOIN", "J-SYNC-COORD"):
        return "KP-SYNC-FAILED", {"group": group, "error": kafka_python_error(
            error or Errors.UNKNOWN_SERVER_ERROR)}
    if java_id == "J-SYNC-FENCED":
        return "KP-SYNC-FENCED", {"group": group, "instance": consumer.config.group_instance_id}
    if java_id == "J-NOTIFY":
        return "KP-UPDATED", {"partitions": _list(context.get("assigned", ()))}
    if java_id == "J-ASSIGNED":
        return "KP-ASSIGNED", {"partitions": _set(consumer.owned), "group": group}
    if java_id in ("J-REVOKE", "J-LOST"):
        return "KP-REVOKE", {"partitions": _set(context.get("revoked", ())), "group": group}
    if java_id == "J-LEAVE":
        return "KP-LEAVE", {"group": group, "member": consumer.member_id}
    if java_id == "J-HB-SEND":
        sent = context["sent"]
        instance = consumer.config.group_instance_id
        return "KP-HB-SEND", {"node": node, "request": (
            f"HeartbeatRequest_v3(group={group!r}, generation_id={sent.generation_id}, "
            f"member_id={sent.member_id!r}, group_instance_id={instance!r})")}
    if java_id == "J-HB-OK":
        return "KP-HB-RECEIVED", {"group": group, "response":
                                  "HeartbeatResponse_v3(throttle_time_ms=0, error_code=0)"}
    if java_id == "J-HB-COORD":
        return "KP-HB-COORD", {"group": group, "node": node}
    if java_id in ("J-HB-RESET", "J-HB-STALE"):
        if error is Errors.ILLEGAL_GENERATION:
            return "KP-HB-GENERATION", {"group": group}
        if error is Errors.FENCED_INSTANCE_ID:
            return "KP-HB-FENCED", {"group": group, "instance": consumer.config.group_instance_id}
        return "KP-HB-UNKNOWN", {}
    if java_id == "J-POLL-TIMEOUT":
        return "KP-POLL-TIMEOUT", {}
    if java_id == "J-COMMIT-FAIL":
        failed = error or Errors.UNKNOWN_SERVER_ERROR
        if failed in (Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION,
                      Errors.REBALANCE_IN_PROGRESS):
            # kafka-python fails the commit with CommitFailedError(<the broker's error>())
            shown = f"CommitFailedError: {kafka_python_error(failed)}"
        else:
            shown = kafka_python_error(failed, group)
        return "KP-AUTO-COMMIT-FAIL", {"group": group, "error": shown}
    return None, {}  # J-SYNCED, J-GIVE-AWAY, J-RESET: nothing at INFO in kafka-python


def kafka_python_log(consumer: Consumer, java_id: str, fields: dict[str, Any],
                     context: Mapping[str, Any]) -> TraceEvent | None:
    """Record the event of the Java line `java_id` with kafka-python's line for it (or none)."""
    java = template(java_id)
    trace = consumer.log.trace
    kp_id, kp_fields = _line(consumer, java_id, context)
    if kp_id is None:
        if level_number(java.level) < trace.threshold:
            return None
        return trace.record(java.event, consumer.log.source, java.level, dict(fields))
    kp = template(kp_id)
    if level_number(kp.level) < trace.threshold:
        return None
    return trace.record(java.event, consumer.log.source, kp.level, {**fields, **kp_fields}, kp)
