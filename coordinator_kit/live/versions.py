"""What the live server advertises in ApiVersions, and the codec class of each API.

Clients pick, per API, the lower of their own highest version and the broker's, so this table
*is* the server's behaviour on the wire. The ranges are Apache Kafka 4.0's, capped where a
higher version needs something the kit does not have: topic ids (Fetch 13+, Produce 10+ name
topics by id or change the response), the KIP-848 consumer protocol (OffsetCommit 9+,
OffsetFetch 9+ carry member epochs) and the single-shape caps that keep one request layout per
API where Kafka itself answers both the same way. ListOffsets goes to 10 because kafka-python
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
from kafka.protocol.producer.transaction import InitProducerIdRequest, InitProducerIdResponse

__all__ = ["ApiSpec", "CODECS", "ADVERTISED", "API_NAMES", "supported"]


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
    ("OffsetCommit", 8, 2, 8, OffsetCommitRequest, OffsetCommitResponse),
    ("OffsetFetch", 9, 1, 8, OffsetFetchRequest, OffsetFetchResponse),
    ("FindCoordinator", 10, 0, 4, FindCoordinatorRequest, FindCoordinatorResponse),
    ("JoinGroup", 11, 0, 9, JoinGroupRequest, JoinGroupResponse),
    ("Heartbeat", 12, 0, 4, HeartbeatRequest, HeartbeatResponse),
    ("LeaveGroup", 13, 0, 5, LeaveGroupRequest, LeaveGroupResponse),
    ("SyncGroup", 14, 0, 5, SyncGroupRequest, SyncGroupResponse),
    ("DescribeGroups", 15, 0, 5, DescribeGroupsRequest, DescribeGroupsResponse),
    ("ListGroups", 16, 0, 5, ListGroupsRequest, ListGroupsResponse),
    ("ApiVersions", 18, 0, 4, ApiVersionsRequest, ApiVersionsResponse),
    ("CreateTopics", 19, 2, 7, CreateTopicsRequest, CreateTopicsResponse),
    ("InitProducerId", 22, 0, 4, InitProducerIdRequest, InitProducerIdResponse),
    ("DeleteGroups", 42, 0, 2, DeleteGroupsRequest, DeleteGroupsResponse),
    ("OffsetDelete", 47, 0, 0, OffsetDeleteRequest, OffsetDeleteResponse),
    ("DescribeCluster", 60, 0, 1, DescribeClusterRequest, DescribeClusterResponse),
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
