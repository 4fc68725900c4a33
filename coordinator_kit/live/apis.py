"""One handler per API: a decoded `kafka.protocol` request in, its response out (Kafka's
`KafkaApis`).

The group APIs do no coordination of their own: each one becomes the kit's request dataclass
(`coordinator_kit.group.api`) and goes to the `GroupCoordinatorService` of the broker the
client connected to, exactly as a simulated consumer's request does through the simulated
network; the answer comes back as that service's response and is put on the wire. So a real
client meets the same group coordinator, CoordinatorRuntime and `__consumer_offsets` replicas
as the simulation's consumers, with the same errors and log lines. The data APIs (Metadata,
ListOffsets, Fetch, Produce, CreateTopics) serve the in-memory data log (`datalog.py`).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from kafka.record import MemoryRecords, MemoryRecordsBuilder

from ..errors import Errors, KafkaError, handle_operation_exception
from ..group.api import (ConsumerGroupHeartbeatRequest, DeleteGroupsRequest, HeartbeatRequest,
                         JoinGroupRequest, TopicPartitions,
                         LeaveGroupRequest, ListGroupsRequest, MemberIdentity,
                         OffsetCommitRequest, OffsetDeleteRequest, OffsetFetchRequest,
                         PartitionData, RequestContext, SyncGroupRequest)
from ..group.classic import Protocol
from ..group.modern.topics import topic_id as kit_topic_id
from ..group.protocol import ConsumerProtocolAssignment
from ..runtime.future import CoordinatorFuture
from ..topic import CONSUMER_OFFSETS, illegal_name_reason
from .datalog import PartitionLog, topic_id, topic_id_string, wire_topic_id
from .versions import CODECS

if TYPE_CHECKING:
    from .server import Connection, LiveServer

__all__ = ["KafkaApis", "DATA_ERRORS"]

# Error codes of the data plane (Kafka's `Errors`), by name; the coordinator's are `Errors`.
DATA_ERRORS = {
    "NONE": 0, "OFFSET_OUT_OF_RANGE": 1, "CORRUPT_MESSAGE": 2, "UNKNOWN_TOPIC_OR_PARTITION": 3,
    "LEADER_NOT_AVAILABLE": 5, "NOT_LEADER_OR_FOLLOWER": 6, "COORDINATOR_NOT_AVAILABLE": 15, "INVALID_TOPIC_EXCEPTION": 17,
    "TOPIC_ALREADY_EXISTS": 36, "INVALID_PARTITIONS": 37, "INVALID_REPLICATION_FACTOR": 38,
    "INVALID_REQUEST": 42, "GROUP_ID_NOT_FOUND": 69, "UNKNOWN_TOPIC_ID": 100,
}
_E = DATA_ERRORS
_ZERO_UUID = uuid.UUID(int=0)  # Kafka's Uuid.ZERO_UUID: "no topic id"
_LIST_LATEST, _LIST_EARLIEST, _LIST_MAX_TIMESTAMP = -1, -2, -3
_LIST_EARLIEST_LOCAL, _LIST_LATEST_TIERED = -4, -5
_ACKS_NONE = 0
_GROUP_KEY, _TRANSACTION_KEY = 0, 1
# ApiVersionsRequest's SOFTWARE_NAME_VERSION_PATTERN (KIP-511): v3+ names the client software
_SOFTWARE_NAME_VERSION = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")
_NO_TXN_COORDINATOR = ("coordinator_kit runs no transaction coordinator: use a "
                       "non-transactional producer")


def _code(error: Errors | None) -> int:
    return 0 if error is None else error.code


def cluster_id(name: str) -> str:
    """A Kafka-shaped cluster id (22 characters of URL-safe base64, as `Uuid.toString`)."""
    return kit_topic_id(f"cluster:{name}")


class KafkaApis:
    """The handlers of one live server (every listener shares them)."""

    def __init__(self, server: LiveServer) -> None:
        self.server = server
        self.cluster = server.cluster
        self.data = server.data
        self._next_producer_id = 1000

    # -- helpers ------------------------------------------------------------------------------

    def _ctx(self, conn: Connection, version: int) -> RequestContext:
        return RequestContext(conn.client_id or "", f"/{conn.peer_host}", api_version=version)

    def _service(self, conn: Connection) -> Any:
        return self.cluster.brokers[conn.broker_id].service

    def _await(self, future: CoordinatorFuture[Any]) -> Awaitable[Any]:
        return self.server.wait_for(future)

    def _response(self, api_key: int, version: int, **fields: Any) -> Any:
        return CODECS[api_key].response(version=version, **fields)

    def _leader_of(self, log: PartitionLog | None, conn: Connection) -> int:
        if log is None:
            return _E["UNKNOWN_TOPIC_OR_PARTITION"]
        if log.leader != conn.broker_id:
            return _E["NOT_LEADER_OR_FOLLOWER"]
        return 0

    # -- dispatch -----------------------------------------------------------------------------

    def handler(self, api_key: int) -> Callable[[Connection, int, Any], Awaitable[Any]]:
        return getattr(self, f"on_{CODECS[api_key].name}")

    # -- cluster metadata ---------------------------------------------------------------------

    async def on_ApiVersions(self, conn: Connection, version: int, request: Any) -> Any:
        if version >= 3:
            software = (request.client_software_name, request.client_software_version)
            if not all(_SOFTWARE_NAME_VERSION.fullmatch(s) for s in software):
                # ApiVersionsRequest.isValid: KafkaApis answers INVALID_REQUEST, no api keys
                # (getErrorResponse lists them only for UNSUPPORTED_VERSION), and the
                # SocketServer does not record the client's software
                return self._response(18, version, error_code=_E["INVALID_REQUEST"],
                                      api_keys=[], throttle_time_ms=0)
            conn.software = software
        return self._response(18, version, error_code=0, api_keys=self.server.api_versions(),
                              throttle_time_ms=0)

    def _brokers(self) -> list[tuple[int, str, int]]:
        return [(b, self.server.host, self.server.port_of(b))
                for b, broker in sorted(self.cluster.brokers.items()) if broker.alive]

    async def on_Metadata(self, conn: Connection, version: int, request: Any) -> Any:
        R = CODECS[3].response
        brokers = [R.MetadataResponseBroker(node_id=b, host=h, port=p, rack=None)
                   for b, h, p in self._brokers()]
        wanted = request.topics
        names: list[str]
        topics = []
        if wanted is None:
            names = sorted(self.data.topics) + [CONSUMER_OFFSETS]
        else:
            names = [t.name for t in wanted if t.name is not None]
            # v10+ may name topics by id (librdkafka does for a KIP-848 assignment, which
            # carries ids only): KafkaApis.handleTopicMetadataRequest answers the known ids
            # by name and the unknown ones with UNKNOWN_TOPIC_ID and no name
            ids = [t.topic_id for t in wanted if t.name is None
                   and getattr(t, "topic_id", None) not in (None, _ZERO_UUID)]
            if ids:
                by_id = {topic_id(n): n for n in [*self.data.topics, CONSUMER_OFFSETS]}
                for tid in ids:
                    if tid in by_id:
                        names.append(by_id[tid])
                    else:
                        topics.append(R.MetadataResponseTopic(
                            error_code=_E["UNKNOWN_TOPIC_ID"], name=None, topic_id=tid,
                            is_internal=False, partitions=[]))
        for name in names:
            topics.append(self._topic_metadata(R, name, version,
                                               allow_create=getattr(
                                                   request, "allow_auto_topic_creation", True)
                                               and wanted is not None))
        return R(version=version, throttle_time_ms=0, brokers=brokers,
                 cluster_id=self.server.cluster_id, controller_id=0, topics=topics)

    def _topic_metadata(self, R: Any, name: str, version: int, allow_create: bool) -> Any:
        T, P = R.MetadataResponseTopic, R.MetadataResponseTopic.MetadataResponsePartition
        if name == CONSUMER_OFFSETS:
            parts = []
            for tp, p in sorted(self.cluster.partitions.items()):
                parts.append(P(error_code=0, partition_index=tp.partition, leader_id=p.leader_id,
                               leader_epoch=p.leader_epoch, replica_nodes=list(p.replicas),
                               isr_nodes=sorted(p.isr), offline_replicas=[]))
            return T(error_code=0, name=name, topic_id=topic_id(name), is_internal=True,
                     partitions=parts)
        logs = self.data.topics.get(name)
        if logs is None and allow_create and self.server.auto_create_topics \
                and not illegal_name_reason(name):
            # Kafka creates it and answers LEADER_NOT_AVAILABLE for now, with no partitions
            # (AutoTopicCreationManager): the client asks again and finds it
            self.server.create_topic(name, self.server.default_partitions,
                                     why="auto-created by Metadata")
            return T(error_code=_E["LEADER_NOT_AVAILABLE"], name=name, topic_id=topic_id(name),
                     is_internal=False, partitions=[])
        if logs is None:
            code = _E["INVALID_TOPIC_EXCEPTION"] if illegal_name_reason(name) else \
                _E["UNKNOWN_TOPIC_OR_PARTITION"]
            return T(error_code=code, name=name, topic_id=topic_id(name), is_internal=False,
                     partitions=[])
        replicas = self.server.replicas_of
        parts = [P(error_code=0, partition_index=log.partition, leader_id=log.leader,
                   leader_epoch=0, replica_nodes=replicas(log), isr_nodes=replicas(log),
                   offline_replicas=[]) for log in logs]
        return T(error_code=0, name=name, topic_id=topic_id(name), is_internal=False,
                 partitions=parts)

    async def on_DescribeCluster(self, conn: Connection, version: int, request: Any) -> Any:
        R = CODECS[60].response
        brokers = [R.DescribeClusterBroker(broker_id=b, host=h, port=p, rack=None)
                   for b, h, p in self._brokers()]
        return R(version=version, throttle_time_ms=0, error_code=0, error_message=None,
                 endpoint_type=1, cluster_id=self.server.cluster_id, controller_id=0,
                 brokers=brokers)

    async def on_CreateTopics(self, conn: Connection, version: int, request: Any) -> Any:
        R = CODECS[19].response
        results = []
        for topic in request.topics:
            name = topic.name
            partitions = topic.num_partitions if topic.num_partitions != -1 else \
                self.server.default_partitions
            rf = topic.replication_factor if topic.replication_factor != -1 else \
                min(3, len(self.cluster.brokers))
            code, message = 0, None
            if illegal_name_reason(name) or name == CONSUMER_OFFSETS:
                code = _E["INVALID_TOPIC_EXCEPTION"]
                message = illegal_name_reason(name) or f"{name} is Kafka's internal topic"
            elif name in self.data.topics:
                code, message = _E["TOPIC_ALREADY_EXISTS"], f"Topic '{name}' already exists."
            elif partitions < 1:
                code = _E["INVALID_PARTITIONS"]
                message = "Number of partitions was set to an invalid non-positive value."
            elif rf < 1 or rf > len(self.cluster.brokers):
                code = _E["INVALID_REPLICATION_FACTOR"]
                message = (f"Unable to replicate the partition {rf} time(s): The target "
                           f"replication factor of {rf} cannot be reached because only "
                           f"{len(self.cluster.brokers)} broker(s) are registered.")
            elif not request.validate_only:
                self.server.create_topic(name, partitions, why="CreateTopics")
            results.append(R.CreatableTopicResult(
                name=name, topic_id=topic_id(name) if code == 0 else None,  # zero on failure
                error_code=code, error_message=message,
                num_partitions=partitions if code == 0 else -1,
                replication_factor=rf if code == 0 else -1, configs=None))
        return R(version=version, throttle_time_ms=0, topics=results)

    # -- coordinator discovery ----------------------------------------------------------------

    async def on_FindCoordinator(self, conn: Connection, version: int, request: Any) -> Any:
        R = CODECS[10].response
        key_type = request.key_type if version >= 1 else _GROUP_KEY
        keys = list(request.coordinator_keys) if version >= 4 else [request.key]
        answers = []
        for key in keys:
            if key_type == _TRANSACTION_KEY:
                answers.append((key, -1, "", -1, Errors.COORDINATOR_NOT_AVAILABLE.code,
                                _NO_TXN_COORDINATOR))
                continue
            if key_type != _GROUP_KEY:
                answers.append((key, -1, "", -1, _E["INVALID_REQUEST"],
                                f"Unknown coordinator type {key_type}"))
                continue
            leader = self.cluster.coordinator_for(key)
            if leader is None or not self.cluster.brokers[leader].alive:
                error = Errors.COORDINATOR_NOT_AVAILABLE
                answers.append((key, -1, "", -1, error.code, error.message))
            else:
                answers.append((key, leader, self.server.host, self.server.port_of(leader), 0,
                                None))
        self.server.note(conn, "FindCoordinator", keys=keys,
                         coordinator=[a[1] for a in answers])
        if version >= 4:
            return R(version=version, throttle_time_ms=0, coordinators=[
                R.Coordinator(key=k, node_id=n, host=h, port=p, error_code=e, error_message=m)
                for k, n, h, p, e, m in answers])
        k, n, h, p, e, m = answers[0]
        return R(version=version, throttle_time_ms=0, error_code=e,
                 error_message=m if e else None, node_id=n, host=h, port=p)

    # -- the classic group protocol -----------------------------------------------------------

    async def on_JoinGroup(self, conn: Connection, version: int, request: Any) -> Any:
        req = JoinGroupRequest(
            group_id=request.group_id, session_timeout_ms=request.session_timeout_ms,
            rebalance_timeout_ms=(request.rebalance_timeout_ms if version >= 1
                                  else request.session_timeout_ms),
            member_id=request.member_id, protocol_type=request.protocol_type,
            protocols=tuple(Protocol(p.name, bytes(p.metadata)) for p in request.protocols),
            group_instance_id=request.group_instance_id if version >= 5 else None,
            reason=request.reason if version >= 8 else None)
        resp = await self._await(self._service(conn).join_group(self._ctx(conn, version), req))
        conn.member_of[request.group_id] = resp.member_id or request.member_id
        R = CODECS[11].response
        return R(version=version, throttle_time_ms=0, error_code=_code(resp.error),
                 generation_id=resp.generation_id, protocol_type=resp.protocol_type,
                 protocol_name=resp.protocol_name if version >= 7 else
                 (resp.protocol_name or ""),
                 leader=resp.leader, skip_assignment=resp.skip_assignment,
                 member_id=resp.member_id,
                 members=[R.JoinGroupResponseMember(member_id=m.member_id,
                                                    group_instance_id=m.group_instance_id,
                                                    metadata=m.metadata)
                          for m in resp.members])

    async def on_SyncGroup(self, conn: Connection, version: int, request: Any) -> Any:
        req = SyncGroupRequest(
            group_id=request.group_id, generation_id=request.generation_id,
            member_id=request.member_id,
            group_instance_id=request.group_instance_id if version >= 3 else None,
            protocol_type=request.protocol_type if version >= 5 else None,
            protocol_name=request.protocol_name if version >= 5 else None,
            assignments={a.member_id: bytes(a.assignment) for a in request.assignments})
        resp = await self._await(self._service(conn).sync_group(self._ctx(conn, version), req))
        if resp.error is Errors.NONE:
            conn.assignments[request.group_id] = _decode_assignment(resp.assignment)
        return CODECS[14].response(version=version, throttle_time_ms=0,
                                   error_code=_code(resp.error),
                                   protocol_type=resp.protocol_type,
                                   protocol_name=resp.protocol_name,
                                   assignment=resp.assignment)

    async def on_Heartbeat(self, conn: Connection, version: int, request: Any) -> Any:
        req = HeartbeatRequest(request.group_id, request.generation_id, request.member_id,
                               request.group_instance_id if version >= 3 else None)
        resp = await self._await(self._service(conn).heartbeat(self._ctx(conn, version), req))
        return CODECS[12].response(version=version, throttle_time_ms=0,
                                   error_code=_code(resp.error))

    async def on_LeaveGroup(self, conn: Connection, version: int, request: Any) -> Any:
        if version >= 3:
            members = tuple(MemberIdentity(m.member_id, m.group_instance_id,
                                           m.reason if version >= 5 else None)
                            for m in request.members)
        else:
            members = (MemberIdentity(request.member_id),)
        resp = await self._await(self._service(conn).leave_group(
            self._ctx(conn, version), LeaveGroupRequest(request.group_id, members)))
        R = CODECS[13].response
        return R(version=version, throttle_time_ms=0, error_code=_code(resp.error),
                 members=[R.MemberResponse(member_id=m.member_id,
                                           group_instance_id=m.group_instance_id,
                                           error_code=_code(m.error)) for m in resp.members])

    # -- the consumer group protocol (KIP-848) ------------------------------------------------

    async def on_ConsumerGroupHeartbeat(self, conn: Connection, version: int,
                                        request: Any) -> Any:
        """One heartbeat of a `group.protocol=consumer` member: the coordinator computes the
        assignment and answers with the member's epoch and the partitions it may use."""
        owned = None if request.topic_partitions is None else tuple(
            TopicPartitions(topic_id_string(t.topic_id), tuple(t.partitions))
            for t in request.topic_partitions)
        req = ConsumerGroupHeartbeatRequest(
            group_id=request.group_id, member_id=request.member_id,
            member_epoch=request.member_epoch, instance_id=request.instance_id,
            rack_id=request.rack_id, rebalance_timeout_ms=request.rebalance_timeout_ms,
            subscribed_topic_names=None if request.subscribed_topic_names is None
            else tuple(request.subscribed_topic_names),
            subscribed_topic_regex=request.subscribed_topic_regex if version >= 1 else None,
            server_assignor=request.server_assignor, topic_partitions=owned)
        resp = await self._await(self._service(conn).consumer_group_heartbeat(
            self._ctx(conn, version), req))
        if resp.member_id:
            conn.member_of[request.group_id] = resp.member_id
        R = CODECS[68].response
        assignment = None
        if resp.assignment is not None:
            names = {kit_topic_id(n): n for n in self.data.topics}
            conn.assignments[request.group_id] = sorted(
                (names.get(t.topic_id, t.topic_id), p)
                for t in resp.assignment.topic_partitions for p in t.partitions)
            assignment = R.Assignment(topic_partitions=[
                R.Assignment.TopicPartitions(topic_id=wire_topic_id(t.topic_id),
                                             partitions=list(t.partitions))
                for t in resp.assignment.topic_partitions])
        return R(version=version, throttle_time_ms=0, error_code=_code(resp.error),
                 error_message=resp.error_message, member_id=resp.member_id,
                 member_epoch=resp.member_epoch,
                 heartbeat_interval_ms=resp.heartbeat_interval_ms, assignment=assignment)

    async def on_ConsumerGroupDescribe(self, conn: Connection, version: int,
                                       request: Any) -> Any:
        """What admin clients send to describe a `group.protocol=consumer` group: its epochs,
        assignor and each member's current and target assignment (topics by id and name)."""
        groups = await self._await(self._service(conn).consumer_group_describe(
            self._ctx(conn, version), list(request.group_ids)))
        R = CODECS[69].response
        D = R.DescribedGroup

        def parts(tps: Any) -> Any:
            return D.Member.Assignment(topic_partitions=[
                D.Member.Assignment.TopicPartitions(topic_id=wire_topic_id(t.topic_id),
                                                    topic_name=t.topic_name,
                                                    partitions=list(t.partitions))
                for t in tps])
        return R(version=version, throttle_time_ms=0, groups=[D(
            error_code=_code(g.error), error_message=g.error_message, group_id=g.group_id,
            group_state=g.group_state, group_epoch=g.group_epoch,
            assignment_epoch=g.assignment_epoch, assignor_name=g.assignor_name,
            members=[D.Member(
                member_id=m.member_id, instance_id=m.instance_id, rack_id=m.rack_id,
                member_epoch=m.member_epoch, client_id=m.client_id, client_host=m.client_host,
                subscribed_topic_names=list(m.subscribed_topic_names),
                subscribed_topic_regex=m.subscribed_topic_regex,
                assignment=parts(m.assignment), target_assignment=parts(m.target_assignment),
                member_type=m.member_type) for m in g.members],
            authorized_operations=-2147483648) for g in groups])

    # -- offsets ------------------------------------------------------------------------------

    def _partition_known(self, name: str, partition: int) -> bool:
        """Whether Metadata knows `name`-`partition` (Kafka's metadataCache.getPartitionInfo)."""
        if name == CONSUMER_OFFSETS:
            return 0 <= partition < len(self.cluster.partitions)
        logs = self.data.topics.get(name)
        return logs is not None and 0 <= partition < len(logs)

    async def on_OffsetCommit(self, conn: Connection, version: int, request: Any) -> Any:
        R = CODECS[8].response
        offsets: dict[tuple[str, int], PartitionData] = {}
        # KafkaApis.handleOffsetCommitRequest answers a topic or partition its metadata cache
        # does not know with UNKNOWN_TOPIC_OR_PARTITION before the group coordinator sees it
        unknown: list[tuple[str, int]] = []
        for topic in request.topics:
            for p in topic.partitions:
                if not self._partition_known(topic.name, p.partition_index):
                    unknown.append((topic.name, p.partition_index))
                    continue
                offsets[(topic.name, p.partition_index)] = PartitionData(
                    p.committed_offset, p.committed_leader_epoch if version >= 6 else -1,
                    p.committed_metadata)
        topics: dict[str, list[Any]] = {}
        for name, partition in unknown:
            topics.setdefault(name, []).append(
                R.OffsetCommitResponseTopic.OffsetCommitResponsePartition(
                    partition_index=partition, error_code=_E["UNKNOWN_TOPIC_OR_PARTITION"]))
        if not offsets:
            return R(version=version, throttle_time_ms=0, topics=[
                R.OffsetCommitResponseTopic(name=n, partitions=ps) for n, ps in topics.items()])
        req = OffsetCommitRequest(
            request.group_id,
            request.generation_id_or_member_epoch if version >= 1 else -1,
            request.member_id if version >= 1 else "", offsets,
            request.group_instance_id if version >= 7 else None,
            request.retention_time_ms if 2 <= version <= 4 else -1, version)
        resp = await self._await(self._service(conn).commit_offsets(self._ctx(conn, version),
                                                                    req))
        for (name, partition) in offsets:
            error = resp.errors.get((name, partition), resp.error)
            topics.setdefault(name, []).append(
                R.OffsetCommitResponseTopic.OffsetCommitResponsePartition(
                    partition_index=partition, error_code=_code(error)))
        return R(version=version, throttle_time_ms=0, topics=[
            R.OffsetCommitResponseTopic(name=n, partitions=ps) for n, ps in topics.items()])

    async def _fetch_group_offsets(self, conn: Connection, version: int, group_id: str,
                                   topics: Any, require_stable: bool,
                                   member_id: str | None = None, member_epoch: int = -1) -> Any:
        partitions = None if topics is None else tuple(
            (t.name, p) for t in topics for p in t.partition_indexes)
        req = OffsetFetchRequest(group_id, partitions, require_stable, member_id, member_epoch)
        return await self._await(self._service(conn).fetch_offsets(self._ctx(conn, version),
                                                                   req))

    async def on_OffsetFetch(self, conn: Connection, version: int, request: Any) -> Any:
        R = CODECS[9].response
        require_stable = bool(request.require_stable) if version >= 7 else False
        if version >= 8:
            groups = []
            for g in request.groups:
                resp = await self._fetch_group_offsets(
                    conn, version, g.group_id, g.topics, require_stable,
                    g.member_id if version >= 9 else None,
                    g.member_epoch if version >= 9 else -1)
                G = R.OffsetFetchResponseGroup
                by_topic: dict[str, list[Any]] = {}
                for (name, partition), o in sorted(resp.offsets.items()):
                    by_topic.setdefault(name, []).append(
                        G.OffsetFetchResponseTopics.OffsetFetchResponsePartitions(
                            partition_index=partition, committed_offset=o.offset,
                            committed_leader_epoch=o.leader_epoch, metadata=o.metadata,
                            error_code=_code(o.error)))
                groups.append(G(group_id=g.group_id, error_code=_code(resp.error), topics=[
                    G.OffsetFetchResponseTopics(name=n, partitions=ps)
                    for n, ps in by_topic.items()]))
            return R(version=version, throttle_time_ms=0, groups=groups)
        resp = await self._fetch_group_offsets(conn, version, request.group_id, request.topics,
                                               require_stable)
        T = R.OffsetFetchResponseTopic
        by_topic = {}
        for (name, partition), o in sorted(resp.offsets.items()):
            # before v2 a group-level error is reported on every partition
            error = o.error if version >= 2 or resp.error is Errors.NONE else resp.error
            by_topic.setdefault(name, []).append(T.OffsetFetchResponsePartition(
                partition_index=partition, committed_offset=o.offset,
                committed_leader_epoch=o.leader_epoch, metadata=o.metadata,
                error_code=_code(error)))
        return R(version=version, throttle_time_ms=0, error_code=_code(resp.error),
                 topics=[T(name=n, partitions=ps) for n, ps in by_topic.items()])

    # -- group administration -----------------------------------------------------------------

    async def on_DescribeGroups(self, conn: Connection, version: int, request: Any) -> Any:
        R = CODECS[15].response
        described = []
        for group_id in request.groups:
            described.append(await self._describe(conn, version, R, group_id))
        return R(version=version, throttle_time_ms=0, groups=described)

    async def _describe(self, conn: Connection, version: int, R: Any, group_id: str) -> Any:
        D = R.DescribedGroup
        runtime = self.cluster.brokers[conn.broker_id].runtime
        tp = self._service(conn).partition_for(group_id)

        # authorized_operations=None is Kafka's Integer.MIN_VALUE ("not asked for"): the
        # codec's bitfield writes None so and takes a set of bits otherwise (an int fails)
        def read(shard: Any, offset: int) -> Any:
            group = shard.groups.group(group_id, offset)
            if group is None:
                # GroupMetadataManager.describeGroups: Dead; from v6 (KIP-1043) also
                # GROUP_ID_NOT_FOUND with classicGroup()'s message (a consumer group too)
                if version < 6:
                    return D(error_code=0, group_id=group_id, group_state="Dead",
                             protocol_type="", protocol_data="", members=[],
                             authorized_operations=None)
                message = (f"Group {group_id} is not a classic group."
                           if shard.consumer_groups.group(group_id, offset) is not None
                           else f"Group {group_id} not found.")
                return D(error_code=_E["GROUP_ID_NOT_FOUND"], error_message=message,
                         group_id=group_id, group_state="Dead", protocol_type="",
                         protocol_data="", members=[], authorized_operations=None)
            members = []
            for m in group.members.values():
                metadata = next((p.metadata for p in m.supported_protocols
                                 if p.name == group.protocol_name), b"")
                members.append(D.DescribedGroupMember(
                    member_id=m.member_id, group_instance_id=m.group_instance_id,
                    client_id=m.client_id, client_host=m.client_host,
                    member_metadata=metadata if group.state.value != "PreparingRebalance"
                    and group.state.value != "CompletingRebalance" else b"",
                    member_assignment=m.assignment if group.state.value == "Stable" else b""))
            return D(error_code=0, group_id=group_id, group_state=group.state.value,
                     protocol_type=group.protocol_type or "",
                     protocol_data=group.protocol_name or "", members=members,
                     authorized_operations=None)
        try:
            future = runtime.schedule_read_operation("describe-groups", tp, read)
            return await self._await(future)
        except KafkaError as exc:
            error = handle_operation_exception(exc)
        except Exception as exc:  # the runtime's own failures map as Kafka maps them
            error = handle_operation_exception(exc)
        return D(error_code=error.code, group_id=group_id, group_state="", protocol_type="",
                 protocol_data="", members=[], authorized_operations=None)

    async def on_ListGroups(self, conn: Connection, version: int, request: Any) -> Any:
        """The groups of every coordinator partition this broker leads (an admin client asks
        every broker and merges the answers)."""
        req = ListGroupsRequest(
            tuple(request.states_filter or ()) if version >= 4 else (),
            tuple(request.types_filter or ()) if version >= 5 else ())
        resp = await self._await(self._service(conn).list_groups(self._ctx(conn, version), req))
        R = CODECS[16].response
        return R(version=version, throttle_time_ms=0, error_code=_code(resp.error), groups=[
            R.ListedGroup(group_id=g.group_id, protocol_type=g.protocol_type,
                          group_state=g.group_state, group_type=g.group_type)
            for g in resp.groups])

    async def on_DeleteGroups(self, conn: Connection, version: int, request: Any) -> Any:
        req = DeleteGroupsRequest(tuple(request.groups_names))
        resp = await self._await(self._service(conn).delete_groups(self._ctx(conn, version),
                                                                   req))
        R = CODECS[42].response
        return R(version=version, throttle_time_ms=0, results=[
            R.DeletableGroupResult(group_id=r.group_id, error_code=_code(r.error))
            for r in resp.results])

    async def on_OffsetDelete(self, conn: Connection, version: int, request: Any) -> Any:
        partitions = tuple((t.name, p.partition_index) for t in request.topics
                           for p in t.partitions)
        resp = await self._await(self._service(conn).delete_offsets(
            self._ctx(conn, version), OffsetDeleteRequest(request.group_id, partitions)))
        R = CODECS[47].response
        T = R.OffsetDeleteResponseTopic
        by_topic: dict[str, list[Any]] = {}
        for name, partition in partitions:
            error = resp.errors.get((name, partition), Errors.NONE)
            by_topic.setdefault(name, []).append(T.OffsetDeleteResponsePartition(
                partition_index=partition, error_code=_code(error)))
        return R(version=version, error_code=_code(resp.error), throttle_time_ms=0,
                 topics=[T(name=n, partitions=ps) for n, ps in by_topic.items()])

    # -- data ---------------------------------------------------------------------------------

    async def on_InitProducerId(self, conn: Connection, version: int, request: Any) -> Any:
        R = CODECS[22].response
        if request.transactional_id is not None:
            return R(version=version, throttle_time_ms=0,
                     error_code=Errors.COORDINATOR_NOT_AVAILABLE.code, producer_id=-1,
                     producer_epoch=-1)
        self._next_producer_id += 1
        return R(version=version, throttle_time_ms=0, error_code=0,
                 producer_id=self._next_producer_id, producer_epoch=0)

    async def on_ListOffsets(self, conn: Connection, version: int, request: Any) -> Any:
        R = CODECS[2].response
        T = R.ListOffsetsTopicResponse
        topics = []
        for topic in request.topics:
            parts = []
            for p in topic.partitions:
                log = self.data.partition(topic.name, p.partition_index)
                code = self._leader_of(log, conn)
                offset, ts = -1, -1
                if code == 0 and log is not None:
                    found: tuple[int, int] | None
                    if p.timestamp == _LIST_LATEST:
                        found = (log.high_watermark, -1)
                    elif p.timestamp in (_LIST_EARLIEST, _LIST_EARLIEST_LOCAL):
                        found = (log.log_start_offset, -1)
                    elif p.timestamp == _LIST_MAX_TIMESTAMP:
                        found = log.max_timestamp()
                    elif p.timestamp == _LIST_LATEST_TIERED:
                        found = (-1, -1)  # nothing is tiered
                    else:
                        found = log.offset_for_timestamp(p.timestamp)
                    if found is not None:
                        offset, ts = found
                parts.append(T.ListOffsetsPartitionResponse(
                    partition_index=p.partition_index, error_code=code, timestamp=ts,
                    offset=offset, leader_epoch=0 if code == 0 else -1))
            topics.append(T(name=topic.name, partitions=parts))
        return R(version=version, throttle_time_ms=0, topics=topics)

    def _fetch_once(self, conn: Connection, request: Any) -> tuple[list[Any], int,
                                                                   list[PartitionLog]]:
        R = CODECS[1].response
        T = R.FetchableTopicResponse
        P = T.PartitionData
        total = 0
        topics = []
        logs: list[PartitionLog] = []
        budget = request.max_bytes if request.max_bytes > 0 else 52_428_800
        for topic in request.topics:
            parts = []
            for p in topic.partitions:
                log = self.data.partition(topic.topic, p.partition)
                code = self._leader_of(log, conn)
                records = None
                hw = lso = start = -1
                if code == 0 and log is not None:
                    logs.append(log)
                    hw = lso = log.high_watermark
                    start = log.log_start_offset
                    if not start <= p.fetch_offset <= hw:
                        code = _E["OFFSET_OUT_OF_RANGE"]
                    elif p.fetch_offset < hw and budget > 0:
                        chosen = log.read(p.fetch_offset, min(p.partition_max_bytes, budget))
                        records = _batch(chosen, self.server.epoch_ms)
                        budget -= len(records)
                        total += len(records)
                parts.append(P(partition_index=p.partition, error_code=code, high_watermark=hw,
                               last_stable_offset=lso, log_start_offset=start,
                               aborted_transactions=None, preferred_read_replica=-1,
                               records=records if records is not None else b""))
            topics.append(T(topic=topic.topic, partitions=parts))
        return topics, total, logs

    async def on_Fetch(self, conn: Connection, version: int, request: Any) -> Any:
        topics, total, logs = self._fetch_once(conn, request)
        if total == 0 and total < max(request.min_bytes, 1) and request.max_wait_ms > 0 \
                and logs:
            # Kafka parks a fetch that found nothing in its purgatory until data arrives or
            # max.wait.ms passes (DelayedFetch); a fetch answered at once would make the client
            # spin (hundreds of empty fetches a second).
            await self.server.wait_for_data(logs, request.max_wait_ms / 1000)
            topics, total, logs = self._fetch_once(conn, request)
        return CODECS[1].response(version=version, throttle_time_ms=0, error_code=0,
                                  session_id=0, responses=topics)

    async def on_Produce(self, conn: Connection, version: int, request: Any) -> Any:
        R = CODECS[0].response
        T = R.TopicProduceResponse
        responses = []
        for topic in request.topic_data:
            parts = []
            for p in topic.partition_data:
                log = self.data.partition(topic.name, p.index)
                code = self._leader_of(log, conn)
                base, message = -1, None
                if code == 0 and log is not None:
                    try:
                        base = self.server.append_records(log, bytes(p.records or b""))
                    except Exception as exc:  # corrupt batch: that partition fails, not the server
                        code, message = _E["CORRUPT_MESSAGE"], f"{type(exc).__name__}: {exc}"
                parts.append(T.PartitionProduceResponse(
                    index=p.index, error_code=code, base_offset=base, log_append_time_ms=-1,
                    log_start_offset=log.log_start_offset if log is not None else -1,
                    record_errors=[], error_message=message))
            responses.append(T(name=topic.name, partition_responses=parts))
        if request.acks == _ACKS_NONE:
            return None  # acks=0: the producer expects no response
        return R(version=version, responses=responses, throttle_time_ms=0)


def _batch(records: list[Any], epoch_ms: int) -> bytes:
    """One v2 record batch (magic 2, no compression) holding `records`."""
    if not records:
        return b""
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 30,
                                   offset=records[0].offset)
    for r in records:
        builder.append(r.timestamp, r.key, r.value, list(r.headers))
    builder.close()
    return bytes(builder.buffer())


def parse_records(data: bytes) -> list[tuple[int, bytes | None, bytes | None,
                                             tuple[tuple[str, bytes], ...]]]:
    """(timestamp, key, value, headers) of every record in produced batches; raises on a
    corrupt batch (before anything is appended)."""
    out = []
    records = MemoryRecords(data)
    while records.has_next():
        batch = records.next_batch()
        if hasattr(batch, "validate_crc") and not batch.validate_crc():
            raise ValueError("Record batch is corrupt (CRC mismatch)")
        for r in batch:
            out.append((r.timestamp, r.key, r.value, tuple(r.headers)))
    return out


def _decode_assignment(data: bytes) -> list[tuple[str, int]]:
    """The partitions a SyncGroup assigned (the kit's `ConsumerProtocolAssignment`), for views;
    empty when the bytes are not the consumer protocol's."""
    if not data:
        return []
    try:
        parts = ConsumerProtocolAssignment.decode(data).assigned_partitions
    except Exception:  # noqa: BLE001 - a foreign protocol's bytes: nothing to show
        return []
    return sorted((tp.topic, tp.partition) for tp in parts)



