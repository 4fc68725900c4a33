"""What a server-side assignor sees and returns (Kafka's `ConsumerGroupPartitionAssignor`,
`GroupSpec`, `MemberSubscription`, `SubscribedTopicDescriber`, `GroupAssignment`).

With the consumer group protocol (KIP-848) the group coordinator itself computes the target
assignment, on topic ids. Kafka iterates members and topics in HashMap order; the kit iterates
them sorted (member id, topic id, partition), so the same group always gets the same assignment.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

__all__ = ["SubscriptionType", "MemberSubscriptionSpec", "GroupSpec", "ServerAssignor",
           "PartitionAssignorException", "MemberAssignment"]

# topic id -> partitions
MemberAssignment = Mapping[str, frozenset[int]]


class SubscriptionType(Enum):
    """Kafka's `SubscriptionType`: HOMOGENEOUS when every member subscribes to the same topics."""

    HOMOGENEOUS = "HOMOGENEOUS"
    HETEROGENEOUS = "HETEROGENEOUS"


class PartitionAssignorException(Exception):
    """Kafka's `PartitionAssignorException`: the assignor could not compute an assignment (the
    heartbeat then fails with UNKNOWN_SERVER_ERROR)."""


@dataclass(frozen=True)
class MemberSubscriptionSpec:
    """Kafka's `MemberSubscriptionAndAssignmentImpl`: a member's subscription (topic ids that
    exist), instance and rack ids, and its current *target* assignment."""

    subscribed_topic_ids: frozenset[str]
    instance_id: str | None = None
    rack_id: str | None = None
    assignment: MemberAssignment = field(default_factory=dict)


@dataclass(frozen=True)
class GroupSpec:
    """Kafka's `GroupSpecImpl`: the members, the subscription type and which member holds each
    partition in the current target (`isPartitionAssigned`)."""

    members: Mapping[str, MemberSubscriptionSpec]
    subscription_type: SubscriptionType
    inverted_target: Mapping[str, Mapping[int, str]] = field(default_factory=dict)

    def is_partition_assigned(self, topic_id: str, partition: int) -> bool:
        owners = self.inverted_target.get(topic_id)
        return owners is not None and partition in owners


class ServerAssignor(Protocol):
    name: str

    def assign(self, group: GroupSpec, partitions: Mapping[str, int]
               ) -> dict[str, MemberAssignment]:
        """`partitions`: topic id -> partition count (Kafka's `SubscribedTopicDescriber`)."""
        ...
