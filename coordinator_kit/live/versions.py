"""What the live server advertises in ApiVersions, and the codec class of each API.

Clients pick, per API, the lower of their own highest version and the broker's, so this table
*is* the server's behaviour on the wire. The ranges are Apache Kafka 4.0's, capped where a
higher version needs something the kit does not have: topic ids in the data path (Fetch 13+,
Produce 10+, OffsetCommit 10+ and OffsetFetch 10+ name topics by id). ConsumerGroupHeartbeat
(KIP-848) speaks topic ids, which the kit derives from the names (`group.modern.topics`), and
Metadata gives the same ids. ListOffsets goes to 10 because kafka-python
guesses the broker's version from it (10 reads as 4.0; below 7 it would guess older than 3.0
and change defaults such as session.timeout.ms).

The codec is kafka-python's `kafka.protocol` (classes generated from Kafka's own JSON
schemas): it encodes both the flexible (compact, tagged-field) and the classic layouts. It has
no registry of request classes, so `CODECS` is that registry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafka.protocol.admin.cluster import DescribeClusterRequest, DescribeClusterResponse
from kafka.protocol.admin.groups import (DeleteGroupsRequest, DeleteGroupsResponse,
                                         DescribeGroupsRequest, DescribeGroupsResponse,
                                         ListGroupsRequest, ListGroupsResponse)
from kafka.protocol.admin.topics import CreateTopicsRequest, CreateTopicsResponse
from kafka.protocol.consumer.fetch import FetchRequest, FetchResponse
from kafka.protocol.consumer.group import (HeartbeatRequest, HeartbeatResponse,
                                           JoinGroupRequest, JoinGroupResponse,
                                           LeaveGroupRequest, LeaveGroupResponse,
                                           OffsetCommitRequest, OffsetCommitResponse,
                                           OffsetDeleteRequest, OffsetDeleteResponse,
                                           OffsetFetchRequest, OffsetFetchResponse,
                                           SyncGroupRequest, SyncGroupResponse)
from kafka.protocol.consumer.offsets import ListOffsetsRequest, ListOffsetsResponse
from kafka.protocol.metadata.api_versions import ApiVersionsRequest, ApiVersionsResponse
from kafka.protocol.metadata.find_coordinator import (FindCoordinatorRequest,
                                                      FindCoordinatorResponse)
from kafka.protocol.metadata.metadata import MetadataRequest, MetadataResponse
from kafka.protocol.producer.produce import ProduceRequest, ProduceResponse
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.producer.transaction import InitProducerIdRequest, InitProducerIdResponse

from . import schemas


class ConsumerGroupHeartbeatRequest(ApiMessage, load_json=schemas):
    """KIP-848's heartbeat (API key 68): kafka-python 3.0.12 has no class for it, so it is
    built from the layout in `live/schemas`."""


class ConsumerGroupHeartbeatResponse(ApiMessage, load_json=schemas):
    """The answer to ConsumerGroupHeartbeat (API key 68)."""


class ConsumerGroupDescribeRequest(ApiMessage, load_json=schemas):
    """KIP-848's describe (API key 69), what admin clients send for a consumer group: built
    from `live/schemas` as the heartbeat is (v1 only adds the response's MemberType)."""


class ConsumerGroupDescribeResponse(ApiMessage, load_json=schemas):
    """The answer to ConsumerGroupDescribe (API key 69): per group its epochs, assignor and
    members with their current and target assignments."""

__all__ = ["ApiSpec", "CODECS", "ADVERTISED", "API_NAMES", "KAFKA_API_KEYS", "kafka_api_name",
           "supported"]


@dataclass(frozen=True)
class ApiSpec:
    """One API the server speaks: Kafka's name and key, the advertised range, the codec."""

    name: str
    key: int
    min_version: int
    max_version: int
    request: Any
    response: Any


# name, key, advertised min, advertised max (Kafka 4.0's range, capped as the docstring says)
_TABLE: list[tuple[str, int, int, int, Any, Any]] = [
    ("Produce", 0, 3, 9, ProduceRequest, ProduceResponse),
    ("Fetch", 1, 4, 12, FetchRequest, FetchResponse),
    ("ListOffsets", 2, 1, 10, ListOffsetsRequest, ListOffsetsResponse),
    ("Metadata", 3, 0, 12, MetadataRequest, MetadataResponse),
    ("OffsetCommit", 8, 2, 9, OffsetCommitRequest, OffsetCommitResponse),
    ("OffsetFetch", 9, 1, 9, OffsetFetchRequest, OffsetFetchResponse),
    ("FindCoordinator", 10, 0, 4, FindCoordinatorRequest, FindCoordinatorResponse),
    ("JoinGroup", 11, 0, 9, JoinGroupRequest, JoinGroupResponse),
    ("Heartbeat", 12, 0, 4, HeartbeatRequest, HeartbeatResponse),
    ("LeaveGroup", 13, 0, 5, LeaveGroupRequest, LeaveGroupResponse),
    ("SyncGroup", 14, 0, 5, SyncGroupRequest, SyncGroupResponse),
    ("DescribeGroups", 15, 0, 6, DescribeGroupsRequest, DescribeGroupsResponse),
    ("ListGroups", 16, 0, 5, ListGroupsRequest, ListGroupsResponse),
    ("ApiVersions", 18, 0, 4, ApiVersionsRequest, ApiVersionsResponse),
    ("CreateTopics", 19, 2, 7, CreateTopicsRequest, CreateTopicsResponse),
    ("InitProducerId", 22, 0, 4, InitProducerIdRequest, InitProducerIdResponse),
    ("DeleteGroups", 42, 0, 2, DeleteGroupsRequest, DeleteGroupsResponse),
    ("OffsetDelete", 47, 0, 0, OffsetDeleteRequest, OffsetDeleteResponse),
    ("DescribeCluster", 60, 0, 1, DescribeClusterRequest, DescribeClusterResponse),
    ("ConsumerGroupHeartbeat", 68, 0, 1, ConsumerGroupHeartbeatRequest,
     ConsumerGroupHeartbeatResponse),
    ("ConsumerGroupDescribe", 69, 0, 1, ConsumerGroupDescribeRequest,
     ConsumerGroupDescribeResponse),
]

CODECS: dict[int, ApiSpec] = {key: ApiSpec(name, key, lo, hi, req, resp)
                              for name, key, lo, hi, req, resp in _TABLE}
API_NAMES: dict[int, str] = {spec.key: spec.name for spec in CODECS.values()}
# what ApiVersions answers: (api key, min, max), by key
ADVERTISED: tuple[tuple[int, int, int], ...] = tuple(
    (spec.key, spec.min_version, spec.max_version) for spec in sorted(CODECS.values(),
                                                                        key=lambda s: s.key))

for _spec in CODECS.values():  # the codec must know every version we advertise
    assert _spec.request.max_version >= _spec.max_version, _spec.name


def supported(api_key: int, api_version: int) -> bool:
    """Whether (api_key, api_version) is advertised (Kafka's `ApiVersionManager.isApiEnabled`)."""
    spec = CODECS.get(api_key)
    return spec is not None and spec.min_version <= api_version <= spec.max_version


# Kafka's `ApiKeys` enum by id (names from its message schemas, clients/src/main/resources/
# common/message/*Request.json): how Kafka names an API in the errors it logs ("Received request
# api key LIST_OFFSETS with version 0 which is not enabled"). An id not in this table is one
# Kafka's `ApiKeys.forId` does not know, and its request header does not parse.
KAFKA_API_KEYS: tuple[str, ...] = (
    "PRODUCE", "FETCH", "LIST_OFFSETS", "METADATA", "LEADER_AND_ISR", "STOP_REPLICA",
    "UPDATE_METADATA", "CONTROLLED_SHUTDOWN", "OFFSET_COMMIT", "OFFSET_FETCH", "FIND_COORDINATOR",
    "JOIN_GROUP", "HEARTBEAT", "LEAVE_GROUP", "SYNC_GROUP", "DESCRIBE_GROUPS", "LIST_GROUPS",
    "SASL_HANDSHAKE", "API_VERSIONS", "CREATE_TOPICS", "DELETE_TOPICS", "DELETE_RECORDS",
    "INIT_PRODUCER_ID", "OFFSET_FOR_LEADER_EPOCH", "ADD_PARTITIONS_TO_TXN", "ADD_OFFSETS_TO_TXN",
    "END_TXN", "WRITE_TXN_MARKERS", "TXN_OFFSET_COMMIT", "DESCRIBE_ACLS", "CREATE_ACLS",
    "DELETE_ACLS", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "ALTER_REPLICA_LOG_DIRS",
    "DESCRIBE_LOG_DIRS", "SASL_AUTHENTICATE", "CREATE_PARTITIONS", "CREATE_DELEGATION_TOKEN",
    "RENEW_DELEGATION_TOKEN", "EXPIRE_DELEGATION_TOKEN", "DESCRIBE_DELEGATION_TOKEN",
    "DELETE_GROUPS", "ELECT_LEADERS", "INCREMENTAL_ALTER_CONFIGS",
    "ALTER_PARTITION_REASSIGNMENTS", "LIST_PARTITION_REASSIGNMENTS", "OFFSET_DELETE",
    "DESCRIBE_CLIENT_QUOTAS", "ALTER_CLIENT_QUOTAS", "DESCRIBE_USER_SCRAM_CREDENTIALS",
    "ALTER_USER_SCRAM_CREDENTIALS", "VOTE", "BEGIN_QUORUM_EPOCH", "END_QUORUM_EPOCH",
    "DESCRIBE_QUORUM", "ALTER_PARTITION", "UPDATE_FEATURES", "ENVELOPE", "FETCH_SNAPSHOT",
    "DESCRIBE_CLUSTER", "DESCRIBE_PRODUCERS", "BROKER_REGISTRATION", "BROKER_HEARTBEAT",
    "UNREGISTER_BROKER", "DESCRIBE_TRANSACTIONS", "LIST_TRANSACTIONS", "ALLOCATE_PRODUCER_IDS",
    "CONSUMER_GROUP_HEARTBEAT", "CONSUMER_GROUP_DESCRIBE", "CONTROLLER_REGISTRATION",
    "GET_TELEMETRY_SUBSCRIPTIONS", "PUSH_TELEMETRY", "ASSIGN_REPLICAS_TO_DIRS",
    "LIST_CLIENT_METRICS_RESOURCES", "DESCRIBE_TOPIC_PARTITIONS", "SHARE_GROUP_HEARTBEAT",
    "SHARE_GROUP_DESCRIBE", "SHARE_FETCH", "SHARE_ACKNOWLEDGE", "ADD_RAFT_VOTER",
    "REMOVE_RAFT_VOTER", "UPDATE_RAFT_VOTER", "INITIALIZE_SHARE_GROUP_STATE",
    "READ_SHARE_GROUP_STATE", "WRITE_SHARE_GROUP_STATE", "DELETE_SHARE_GROUP_STATE",
    "READ_SHARE_GROUP_STATE_SUMMARY",
)

for _spec in CODECS.values():  # the kit's names are Kafka's, in the enum's spelling
    assert KAFKA_API_KEYS[_spec.key].replace("_", "") == _spec.name.upper(), _spec.name


def kafka_api_name(api_key: int) -> str | None:
    """Kafka's `ApiKeys` name of an id, or None when Kafka has no API with that id."""
    return KAFKA_API_KEYS[api_key] if 0 <= api_key < len(KAFKA_API_KEYS) else None
