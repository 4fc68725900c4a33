"""The consumer protocol's opaque bytes: what a Java consumer puts in JoinGroup and SyncGroup.

The coordinator stores these bytes in GroupMetadata records (`subscription`, `assignment`) and
only looks inside a subscription to learn a consumer group's topics (`ClassicGroup
.computeSubscribedTopics`, which offset retention needs). The layout is a
2-byte version header followed by Kafka's `ConsumerProtocolSubscription` / `Assignment` schema
(clients/src/main/resources/common/message/), encoded and decoded the way Kafka's
`ConsumerProtocol` does it:

* a version above 3 is written and read as 3 (newer versions only append fields); a negative
  one is refused;
* a subscription's topics and owned partitions are sorted, owned partitions grouped by topic;
  an assignment's partitions are grouped by topic in order of first appearance;
* a decoded empty rack id is no rack (None); a negative generation is no generation (-1).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from coordinator_kit.topic import TopicPartition

from .records import BufferUnderflowError, Message, SchemaError, field

__all__ = ["ConsumerProtocolSubscription", "ConsumerProtocolAssignment", "SUBSCRIPTION_SCHEMA",
           "ASSIGNMENT_SCHEMA", "CONSUMER_PROTOCOL_TYPE", "deserialize_version",
           "StickyAssignorUserData", "STICKY_ASSIGNOR_USER_DATA_SCHEMA"]

CONSUMER_PROTOCOL_TYPE = "consumer"
_HIGHEST_VERSION = 3
_I16 = struct.Struct(">h")

SUBSCRIPTION_SCHEMA = Message.of(
    "ConsumerProtocolSubscription", "0-3", "none",
    field("Topics", "[]string", "0+"),
    field("UserData", "bytes", "0+", nullable="0+", default=None),
    field("OwnedPartitions", "[]TopicPartition", "1+", ignorable=True, fields=(
        field("Topic", "string", "1+"),
        field("Partitions", "[]int32", "1+"))),
    field("GenerationId", "int32", "2+", default=-1, ignorable=True),
    field("RackId", "string", "3+", nullable="3+", default=None, ignorable=True))

ASSIGNMENT_SCHEMA = Message.of(
    "ConsumerProtocolAssignment", "0-3", "none",
    field("AssignedPartitions", "[]TopicPartition", "0+", fields=(
        field("Topic", "string", "0+"),
        field("Partitions", "[]int32", "0+"))),
    field("UserData", "bytes", "0+", nullable="0+", default=None))


def deserialize_version(data: bytes) -> int:
    """The int16 version header (`ConsumerProtocol.deserializeVersion`)."""
    if len(data) < 2:
        raise BufferUnderflowError("Buffer underflow while parsing consumer protocol's header")
    return _I16.unpack_from(data)[0]


def _check_version(version: int, what: str) -> int:
    if version < 0:
        raise SchemaError(f"Unsupported {what} version: {version}")
    return min(version, _HIGHEST_VERSION)


def _java_order(topic: str) -> bytes:
    """Java's String order (UTF-16 code units), which `Collections.sort` uses."""
    return topic.encode("utf-16-be", "surrogatepass")


def _grouped(partitions: Iterable[TopicPartition]) -> list[dict[str, Any]]:
    """Topic -> partitions, topics in order of first appearance (Kafka's keyed collection)."""
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return [{"Topic": topic, "Partitions": ids} for topic, ids in by_topic.items()]


def _flattened(rows: list[dict[str, Any]]) -> tuple[TopicPartition, ...]:
    return tuple(TopicPartition(row["Topic"], p) for row in rows for p in row["Partitions"])


def _decode(schema: Message, data: bytes, what: str) -> dict[str, Any]:
    version = _check_version(deserialize_version(data), what)
    try:
        return schema.decode(data, version, offset=2)
    except BufferUnderflowError as exc:
        raise BufferUnderflowError(f"Buffer underflow while parsing consumer protocol's "
                                   f"{what}: {exc}") from exc


@dataclass(frozen=True)
class ConsumerProtocolSubscription:
    """A member's JoinGroup metadata (Java's `ConsumerPartitionAssignor.Subscription`)."""

    topics: tuple[str, ...]
    user_data: bytes | None = None
    owned_partitions: tuple[TopicPartition, ...] = ()
    generation_id: int = -1
    rack_id: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "topics", tuple(self.topics))
        object.__setattr__(self, "owned_partitions", tuple(self.owned_partitions))
        if self.generation_id < 0:
            object.__setattr__(self, "generation_id", -1)

    def encode(self, version: int = _HIGHEST_VERSION) -> bytes:
        version = _check_version(version, "subscription")
        owned = sorted(self.owned_partitions, key=lambda tp: (_java_order(tp.topic),
                                                              tp.partition))
        data = {"Topics": sorted(self.topics, key=_java_order), "UserData": self.user_data,
                "OwnedPartitions": _grouped(owned), "GenerationId": self.generation_id,
                "RackId": self.rack_id}
        return _I16.pack(version) + SUBSCRIPTION_SCHEMA.encode(data, version)

    @classmethod
    def decode(cls, data: bytes) -> ConsumerProtocolSubscription:
        fields = _decode(SUBSCRIPTION_SCHEMA, data, "subscription")
        return cls(tuple(fields["Topics"]), fields["UserData"],
                   _flattened(fields["OwnedPartitions"]), fields["GenerationId"],
                   fields["RackId"] or None)


@dataclass(frozen=True)
class ConsumerProtocolAssignment:
    """A member's SyncGroup assignment (Java's `ConsumerPartitionAssignor.Assignment`)."""

    assigned_partitions: tuple[TopicPartition, ...]
    user_data: bytes | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "assigned_partitions", tuple(self.assigned_partitions))

    def encode(self, version: int = _HIGHEST_VERSION) -> bytes:
        version = _check_version(version, "assignment")
        data = {"AssignedPartitions": _grouped(self.assigned_partitions),
                "UserData": self.user_data}
        return _I16.pack(version) + ASSIGNMENT_SCHEMA.encode(data, version)

    @classmethod
    def decode(cls, data: bytes) -> ConsumerProtocolAssignment:
        fields = _decode(ASSIGNMENT_SCHEMA, data, "assignment")
        return cls(_flattened(fields["AssignedPartitions"]), fields["UserData"])


# Java's StickyAssignor user data (STICKY_ASSIGNOR_USER_DATA_V0/V1; kafka-python's
# StickyAssignorUserData.json): no version header, always written as v1, read as v1 then v0.
STICKY_ASSIGNOR_USER_DATA_SCHEMA = Message.of(
    "StickyAssignorUserData", "0-1", "none",
    field("PreviousAssignment", "[]TopicPartition", "0+", fields=(
        field("Topic", "string", "0+"),
        field("Partitions", "[]int32", "0+"))),
    field("Generation", "int32", "1+", default=-1, ignorable=True))


@dataclass(frozen=True)
class StickyAssignorUserData:
    """What the eager `StickyAssignor` puts in its subscription's user data: the member's last
    assignment and its generation. An eager member revokes everything before it rejoins, so
    its owned partitions are empty on the wire: this is where the assignor's stickiness comes
    from (Java's `StickyAssignor.subscriptionUserData` / `memberData`)."""

    previous_assignment: tuple[TopicPartition, ...]
    generation: int = -1

    def __post_init__(self) -> None:  # sorted (topics in Java's order): one form per content
        object.__setattr__(self, "previous_assignment", tuple(sorted(
            self.previous_assignment, key=lambda tp: (_java_order(tp.topic), tp.partition))))

    def encode(self) -> bytes:
        by_topic: dict[str, list[int]] = {}
        for tp in self.previous_assignment:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        rows = [{"Topic": t, "Partitions": ps} for t, ps in by_topic.items()]
        return STICKY_ASSIGNOR_USER_DATA_SCHEMA.encode(
            {"PreviousAssignment": rows, "Generation": self.generation}, 1)

    @classmethod
    def decode(cls, data: bytes | None) -> StickyAssignorUserData | None:
        """The user data, or None when there is none or it reads as neither version (Java
        then ignores the previous assignment)."""
        if not data:
            return None
        for version in (1, 0):
            try:
                fields = STICKY_ASSIGNOR_USER_DATA_SCHEMA.decode(data, version)
            except SchemaError:
                continue
            return cls(_flattened(fields["PreviousAssignment"]), fields["Generation"])
        return None
