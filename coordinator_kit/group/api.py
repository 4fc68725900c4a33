"""Group coordinator requests and responses (the fields of Kafka's JSON message schemas).

Plain frozen dataclasses: the kit passes them between consumers and brokers on virtual time
instead of encoding them on a socket. Field names follow Kafka's (`generation_id`,
`group_instance_id`, `skip_assignment`...), errors are `Errors` members.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..errors import Errors
from .classic import Protocol

__all__ = ["JoinGroupRequest", "JoinGroupResponse", "JoinGroupResponseMember",
           "SyncGroupRequest", "SyncGroupResponse", "HeartbeatRequest", "HeartbeatResponse",
           "LeaveGroupRequest", "LeaveGroupResponse", "MemberIdentity", "MemberResponse",
           "OffsetCommitRequest", "OffsetCommitResponse", "OffsetFetchRequest",
           "OffsetFetchResponse", "PartitionData", "OffsetFetchPartition", "RequestContext",
           "FindCoordinatorResponse", "JOIN_GROUP_VERSION", "ListGroupsRequest",
           "ListedGroup", "ListGroupsResponse", "OffsetDeleteRequest", "OffsetDeleteResponse",
           "DeleteGroupsRequest", "DeletableGroupResult", "DeleteGroupsResponse",
           "TxnOffsetCommitRequest", "TxnOffsetCommitResponse"]

# The JoinGroup version the kit's consumers speak: v4+ needs a known member id
# (MEMBER_ID_REQUIRED round trip), v9 supports skipping the assignment for a static leader.
JOIN_GROUP_VERSION = 9


@dataclass(frozen=True, slots=True)
class RequestContext:
    """Who sent a request: Kafka's `RequestContext` fields the coordinator uses."""

    client_id: str
    client_host: str = "/127.0.0.1"
    api_version: int = JOIN_GROUP_VERSION


@dataclass(frozen=True, slots=True)
class JoinGroupRequest:
    group_id: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    member_id: str
    protocol_type: str
    protocols: tuple[Protocol, ...]
    group_instance_id: str | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class JoinGroupResponseMember:
    member_id: str
    group_instance_id: str | None
    metadata: bytes


@dataclass(frozen=True, slots=True)
class JoinGroupResponse:
    error: Errors = Errors.NONE
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    skip_assignment: bool = False
    member_id: str = ""
    members: tuple[JoinGroupResponseMember, ...] = ()


@dataclass(frozen=True, slots=True)
class SyncGroupRequest:
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None = None
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignments: Mapping[str, bytes] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SyncGroupResponse:
    error: Errors = Errors.NONE
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""


@dataclass(frozen=True, slots=True)
class HeartbeatRequest:
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None = None


@dataclass(frozen=True, slots=True)
class HeartbeatResponse:
    error: Errors = Errors.NONE


@dataclass(frozen=True, slots=True)
class MemberIdentity:
    member_id: str
    group_instance_id: str | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class MemberResponse:
    member_id: str
    group_instance_id: str | None = None
    error: Errors = Errors.NONE


@dataclass(frozen=True, slots=True)
class LeaveGroupRequest:
    group_id: str
    members: tuple[MemberIdentity, ...]


@dataclass(frozen=True, slots=True)
class LeaveGroupResponse:
    error: Errors = Errors.NONE
    members: tuple[MemberResponse, ...] = ()


@dataclass(frozen=True, slots=True)
class PartitionData:
    """One partition of an OffsetCommit request."""

    offset: int
    leader_epoch: int = -1
    metadata: str | None = ""


@dataclass(frozen=True, slots=True)
class OffsetCommitRequest:
    group_id: str
    generation_id_or_member_epoch: int
    member_id: str
    offsets: Mapping[tuple[str, int], PartitionData]
    group_instance_id: str | None = None
    retention_time_ms: int = -1
    version: int = 8


@dataclass(frozen=True, slots=True)
class OffsetCommitResponse:
    errors: Mapping[tuple[str, int], Errors]
    error: Errors = Errors.NONE  # set when the whole request failed

    def all_ok(self) -> bool:
        return self.error is Errors.NONE and all(e is Errors.NONE for e in self.errors.values())


@dataclass(frozen=True, slots=True)
class OffsetFetchRequest:
    group_id: str
    partitions: tuple[tuple[str, int], ...] | None = None  # None = every committed offset
    require_stable: bool = False
    # OffsetFetch v9+ (KIP-848): a consumer group member's id and epoch, checked like a commit's
    member_id: str | None = None
    member_epoch: int = -1


@dataclass(frozen=True, slots=True)
class OffsetFetchPartition:
    offset: int
    leader_epoch: int = -1
    metadata: str = ""
    error: Errors = Errors.NONE


@dataclass(frozen=True, slots=True)
class OffsetFetchResponse:
    offsets: Mapping[tuple[str, int], OffsetFetchPartition]
    error: Errors = Errors.NONE


@dataclass(frozen=True, slots=True)
class FindCoordinatorResponse:
    error: Errors = Errors.NONE
    node_id: int = -1
    host: str = ""
    port: int = -1


@dataclass(frozen=True, slots=True)
class ListGroupsRequest:
    """ListGroups: every group of every coordinator partition this broker leads. Filters are
    Kafka's (v4 `StatesFilter`, v5 `TypesFilter`): empty = no filter; states match
    case-insensitively ("stable", "Empty"), types by name ("classic", "consumer")."""

    states_filter: tuple[str, ...] = ()
    types_filter: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ListedGroup:
    group_id: str
    protocol_type: str  # "" for a simple group (offsets only, no members ever)
    group_state: str  # Kafka's state name: "Stable", "Empty", ...
    group_type: str = "classic"


@dataclass(frozen=True, slots=True)
class ListGroupsResponse:
    groups: tuple[ListedGroup, ...] = ()
    error: Errors = Errors.NONE


@dataclass(frozen=True, slots=True)
class OffsetDeleteRequest:
    group_id: str
    partitions: tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class OffsetDeleteResponse:
    """Per-partition errors (NONE or GROUP_SUBSCRIBED_TO_TOPIC), or `error` for the whole
    request (GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP, NOT_COORDINATOR...), then no partitions."""

    errors: Mapping[tuple[str, int], Errors] = field(default_factory=dict)
    error: Errors = Errors.NONE


@dataclass(frozen=True, slots=True)
class DeleteGroupsRequest:
    group_ids: tuple[str | None, ...]


@dataclass(frozen=True, slots=True)
class DeletableGroupResult:
    group_id: str | None
    error: Errors = Errors.NONE


@dataclass(frozen=True, slots=True)
class DeleteGroupsResponse:
    """One result per requested group id (a group's error is its own)."""

    results: tuple[DeletableGroupResult, ...] = ()

    def errors(self) -> dict[str | None, Errors]:
        return {r.group_id: r.error for r in self.results}


@dataclass(frozen=True, slots=True)
class TxnOffsetCommitRequest:
    """A transactional producer's offsets (`Producer.sendOffsetsToTransaction`): pending until
    the transaction commits. `generation_id` -1 with an empty `member_id` is the old
    producer path (no consumer group metadata)."""

    transactional_id: str
    group_id: str
    producer_id: int
    producer_epoch: int
    offsets: Mapping[tuple[str, int], PartitionData]
    generation_id: int = -1
    member_id: str = ""
    group_instance_id: str | None = None


@dataclass(frozen=True, slots=True)
class TxnOffsetCommitResponse:
    errors: Mapping[tuple[str, int], Errors]
    error: Errors = Errors.NONE  # set when the whole request failed

    def all_ok(self) -> bool:
        return self.error is Errors.NONE and all(e is Errors.NONE for e in self.errors.values())


# --- ConsumerGroupHeartbeat (API key 68, KIP-848) ----------------------------------------------

@dataclass(frozen=True, slots=True)
class TopicPartitions:
    """ConsumerGroupHeartbeat's TopicPartitions: a topic id (Kafka's `Uuid`, printed form) and
    partitions."""

    topic_id: str
    partitions: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ConsumerGroupHeartbeatRequest:
    """ConsumerGroupHeartbeatRequest v0-v1. `None` (Kafka's null) means "unchanged since the last
    heartbeat" for the optional fields; member epoch 0 joins, -1 leaves, -2 is a static member
    leaving for a while."""

    group_id: str
    member_id: str = ""
    member_epoch: int = 0
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    topic_partitions: tuple[TopicPartitions, ...] | None = None


@dataclass(frozen=True, slots=True)
class ConsumerGroupHeartbeatAssignment:
    """The response's Assignment: the partitions the member may use now."""

    topic_partitions: tuple[TopicPartitions, ...] = ()


@dataclass(frozen=True, slots=True)
class ConsumerGroupHeartbeatResponse:
    error: Errors = Errors.NONE
    error_message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: ConsumerGroupHeartbeatAssignment | None = None
    throttle_time_ms: int = 0


__all__ += ["TopicPartitions", "ConsumerGroupHeartbeatRequest", "ConsumerGroupHeartbeatAssignment",
            "ConsumerGroupHeartbeatResponse"]


# --- ConsumerGroupDescribe (API key 69, KIP-848) -----------------------------------------------

@dataclass(frozen=True, slots=True)
class DescribedTopicPartitions:
    """ConsumerGroupDescribe's TopicPartitions: a topic by id and by name, and partitions."""

    topic_id: str
    topic_name: str
    partitions: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ConsumerGroupDescribeMember:
    """One member as ConsumerGroupDescribe shows it (`ConsumerGroupMember
    .asConsumerGroupDescribeMember`): what it owns now (`assignment`) and what the coordinator
    wants it to own (`target_assignment`, the group's target for it)."""

    member_id: str
    member_epoch: int
    client_id: str = ""
    client_host: str = ""
    instance_id: str | None = None
    rack_id: str | None = None
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    assignment: tuple[DescribedTopicPartitions, ...] = ()
    target_assignment: tuple[DescribedTopicPartitions, ...] = ()
    member_type: int = 1  # v1's MemberType (KIP-1099): 1 a consumer-protocol member, 0 classic


@dataclass(frozen=True, slots=True)
class ConsumerGroupDescribedGroup:
    """One group of a ConsumerGroupDescribe response (`ConsumerGroup.asDescribedGroup`); an
    error (GROUP_ID_NOT_FOUND, NOT_COORDINATOR...) leaves the other fields at their defaults,
    as Kafka's `DescribedGroup` does."""

    group_id: str | None
    error: Errors = Errors.NONE
    error_message: str | None = None
    group_state: str = ""
    group_epoch: int = 0
    assignment_epoch: int = 0
    assignor_name: str = ""
    members: tuple[ConsumerGroupDescribeMember, ...] = ()


__all__ += ["DescribedTopicPartitions", "ConsumerGroupDescribeMember",
            "ConsumerGroupDescribedGroup"]
