"""The assignor contract, after Kafka's ``ConsumerPartitionAssignor``.

In the classic protocol the broker never assigns partitions: it elects one member leader and
hands it every member's subscription; the leader runs the assignor named by the group's chosen
protocol and returns one assignment per member. The kit keeps that split, so an assignor here is
a pure function of (partition counts, subscriptions), with no clock, network or state.

Input rules, shared by every assignor and checked once in `PartitionAssignor.assign`:

* A subscribed topic missing from ``partitions_per_topic`` is skipped, as Kafka skips a topic
  with no metadata ("Skipping assignment for topic ... since no metadata is available").
* A partition count of 0 is treated the same way: Kafka's metadata path drops a topic whose
  partition list is empty before the assignor sees it.
* A negative count (or a non-integer) is refused with an error. Kafka's metadata can never
  produce one; its map-based ``assign(Map<String, Integer>, ...)`` entry points would fail
  building a list of negative capacity.
* Owned partitions that are not in the metadata (unknown topic, or a partition number at or
  above the topic's count) are ignored. Java's sticky assignors drop claims on unknown topics and
  do not look at the partition number (Kafka never shrinks a topic); kafka-python drops both.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import ClassVar

from ..topic import TopicPartition

__all__ = [
    "RebalanceProtocol",
    "Subscription",
    "Assignment",
    "PartitionAssignor",
    "select_protocol",
    "java_order",
]


class RebalanceProtocol(IntEnum):
    """Kafka's ``RebalanceProtocol``; the number is the wire id and "higher is more advanced"."""

    EAGER = 0
    COOPERATIVE = 1

    def __str__(self) -> str:
        return self.name


def java_order(text: str) -> bytes:
    """Sort key giving Java's ``String.compareTo`` order (UTF-16 code units).

    Python compares code points; the two orders differ only between characters above U+FFFF
    and those in U+E000..U+FFFF. Kafka's Java client is the reference, so the kit sorts this way.
    """
    return text.encode("utf-16-be", "surrogatepass")


def _as_tuple(value: object, what: str) -> tuple:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(f"{what} must be a tuple (or other iterable), got {value!r}")
    return tuple(value)


@dataclass(frozen=True, slots=True)
class Subscription:
    """What one member sends in its JoinGroup metadata (ConsumerProtocolSubscription).

    ``topics`` is a set in meaning: duplicates are dropped, the first order is kept.
    ``owned_partitions`` and ``generation_id`` are the v1/v2 fields the sticky assignors use
    to find the previous assignment (-1 means "no generation").
    """

    topics: tuple[str, ...]
    owned_partitions: tuple[TopicPartition, ...] = ()
    generation_id: int = -1
    group_instance_id: str | None = None
    user_data: bytes | None = None

    def __post_init__(self) -> None:
        topics = _as_tuple(self.topics, "Subscription.topics")
        for topic in topics:
            if not isinstance(topic, str) or not topic:
                raise TypeError(f"a subscribed topic must be a non-empty str, got {topic!r}")
        object.__setattr__(self, "topics", tuple(dict.fromkeys(topics)))
        owned = _as_tuple(self.owned_partitions, "Subscription.owned_partitions")
        for tp in owned:
            if not isinstance(tp, TopicPartition):
                raise TypeError(f"owned partitions must be TopicPartition, got {tp!r}")
        object.__setattr__(self, "owned_partitions", owned)
        if isinstance(self.generation_id, bool) or not isinstance(self.generation_id, int):
            raise TypeError(f"generation_id must be an int, got {self.generation_id!r}")
        if self.group_instance_id is not None and (
                not isinstance(self.group_instance_id, str) or not self.group_instance_id):
            raise TypeError("group_instance_id must be None or a non-empty str, "
                            f"got {self.group_instance_id!r}")
        if self.user_data is not None and not isinstance(self.user_data, bytes):
            raise TypeError(f"user_data must be bytes or None, got {type(self.user_data).__name__}")


@dataclass(frozen=True, slots=True)
class Assignment:
    """What the leader sends one member in SyncGroup: its partitions, sorted by topic then number."""

    partitions: tuple[TopicPartition, ...]
    user_data: bytes | None = None

    def __post_init__(self) -> None:
        parts = _as_tuple(self.partitions, "Assignment.partitions")
        for tp in parts:
            if not isinstance(tp, TopicPartition):
                raise TypeError(f"assigned partitions must be TopicPartition, got {tp!r}")
        if len(set(parts)) != len(parts):
            raise ValueError("an assignment lists a partition twice")
        object.__setattr__(self, "partitions", tuple(sorted(parts)))


def _checked_counts(partitions_per_topic: Mapping[str, int]) -> dict[str, int]:
    """Topics with at least one partition; refuse counts Kafka could never report."""
    if not isinstance(partitions_per_topic, Mapping):
        raise TypeError("partitions_per_topic must be a mapping of topic -> partition count")
    counts: dict[str, int] = {}
    for topic, count in partitions_per_topic.items():
        if not isinstance(topic, str) or not topic:
            raise TypeError(f"topic names must be non-empty str, got {topic!r}")
        if isinstance(count, bool) or not isinstance(count, int):
            raise TypeError(f"partition count of topic {topic!r} must be an int, got {count!r}")
        if count < 0:
            raise ValueError(f"partition count of topic {topic!r} must be >= 0, got {count}")
        if count > 0:
            counts[topic] = count
    return counts


def _checked_subscriptions(subscriptions: Mapping[str, Subscription]) -> dict[str, Subscription]:
    if not isinstance(subscriptions, Mapping):
        raise TypeError("subscriptions must be a mapping of member id -> Subscription")
    static_ids: dict[str, str] = {}
    for member_id, sub in subscriptions.items():
        if not isinstance(member_id, str) or not member_id:
            raise TypeError(f"member ids must be non-empty str, got {member_id!r}")
        if not isinstance(sub, Subscription):
            raise TypeError(f"subscription of member {member_id!r} must be a Subscription, "
                            f"got {type(sub).__name__}")
        instance = sub.group_instance_id
        if instance is not None:
            if instance in static_ids:
                raise ValueError(
                    f"group.instance.id {instance!r} is claimed by members "
                    f"{static_ids[instance]!r} and {member_id!r}; the broker lets one member "
                    "hold a static id at a time")
            static_ids[instance] = member_id
    return dict(subscriptions)


def member_sort_key(member_id: str, sub: Subscription) -> tuple[int, bytes, bytes]:
    """Java's ``MemberInfo`` order: static members first by instance id, then the rest by id."""
    if sub.group_instance_id is not None:
        return (0, java_order(sub.group_instance_id), java_order(member_id))
    return (1, java_order(member_id), b"")


class PartitionAssignor(ABC):
    """Base of the kit's assignors (Kafka's ``ConsumerPartitionAssignor``).

    Subclasses set ``name`` (the protocol name sent in JoinGroup) and, if they support more
    than EAGER, ``supported_protocols`` in order of preference; they implement ``_assign`` on
    input that has already been checked and cleaned (see the module docstring).
    """

    name: ClassVar[str]
    supported_protocols: ClassVar[tuple[RebalanceProtocol, ...]] = (RebalanceProtocol.EAGER,)

    @property
    def rebalance_protocol(self) -> RebalanceProtocol:
        """The protocol this assignor prefers when it is the only one configured."""
        return max(self.supported_protocols)

    def assign(self, partitions_per_topic: Mapping[str, int],
               subscriptions: Mapping[str, Subscription]) -> dict[str, Assignment]:
        """One `Assignment` for every member in ``subscriptions`` (empty if it gets nothing)."""
        counts = _checked_counts(partitions_per_topic)
        subs = _checked_subscriptions(subscriptions)
        raw = self._assign(counts, subs)
        return {member: Assignment(tuple(raw.get(member, ()))) for member in subs}

    @abstractmethod
    def _assign(self, counts: dict[str, int],
                subscriptions: dict[str, Subscription]) -> Mapping[str, Iterable[TopicPartition]]:
        """Place the partitions; ``counts`` holds only topics with one partition or more."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def select_protocol(assignors: Iterable[PartitionAssignor]) -> RebalanceProtocol:
    """The protocol a consumer with these assignors runs (Java ``ConsumerCoordinator``).

    Keep only the protocols every assignor supports and take the highest id; no common protocol
    is a configuration error. Java's default ``[range, cooperative-sticky]`` runs EAGER (range
    supports nothing else), which lets a group move to cooperative-sticky by rolling restarts.
    """
    assignors = list(assignors)
    if not assignors:
        raise ValueError("partition.assignment.strategy needs at least one assignor")
    common = set(assignors[0].supported_protocols)
    for assignor in assignors[1:]:
        common &= set(assignor.supported_protocols)
    if not common:
        names = ", ".join(a.name for a in assignors)
        raise ValueError(f"Specified assignors [{names}] do not have commonly supported "
                         "rebalance protocol")
    return max(common)
