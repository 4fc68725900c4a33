"""KIP-848 consumer groups inside the coordinator shard (Kafka's `GroupMetadataManager`,
`consumerGroup*` paths).

Unlike classic groups, a consumer group changes only by records: a ConsumerGroupHeartbeat handler
reads the group, decides, and returns records (member subscription, subscription metadata, group
epoch, target assignment, current assignment); the runtime replays them into the group before it
appends them, so a failed append rolls everything back. A new group is not put in the map by the
handler: replaying its first record creates it.

Timers (keys as Kafka's `groupSessionTimeoutKey` / `consumerGroupRebalanceTimeoutKey`):
`session-timeout-<group>-<member>` (re-armed by every heartbeat; fences the member when it fires)
and `rebalance-timeout-<group>-<member>` (armed when a member must revoke partitions; fences it if
it is still at that epoch when it fires).

The kit keeps consumer groups in their own map beside the classic groups (Kafka keeps one map of
both). A group id names one kind at a time: a heartbeat for an empty classic group replaces it
(tombstone); a non-empty classic group of the consumer protocol is converted when
`group.consumer.migration.policy` allows (the online upgrade), otherwise the heartbeat fails with
GROUP_ID_NOT_FOUND. Classic-protocol members inside a consumer group, the upgrade and the
downgrade live in `migration.py` (`ConsumerGroupMigration`).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ...assignors.server_api import PartitionAssignorException, SubscriptionType
from ...assignors.server_range import ServerRangeAssignor
from ...assignors.server_uniform import UniformAssignor
from ...errors import Errors, KafkaError
from ...runtime.metadata import MetadataImage
from ...runtime.records import CoordinatorRecord
from ...runtime.shard import CoordinatorResult, CoordinatorTimer
from ...timeline import SnapshotRegistry, TimelineHashMap
from ...trace import LogContext
from .. import records as rec
from ..api import (ConsumerGroupHeartbeatAssignment, ConsumerGroupHeartbeatRequest,
                   ConsumerGroupHeartbeatResponse, RequestContext, TopicPartitions)
from ..classic import ClassicGroupState
from ..config import GroupCoordinatorConfig
from .consumer_group import ConsumerGroup, subscription_type
from .current_assignment import CurrentAssignmentBuilder, leaving_static_member
from .member import (EMPTY_ASSIGNMENT, LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                     Assignment, ClassicMemberMetadata, ClassicProtocol, ConsumerGroupMember,
                     MemberState, freeze)
from .migration import ConsumerGroupMigration
from .target_assignment import TargetAssignmentBuilder
from .topics import TopicMetadata, TopicsView

__all__ = ["ConsumerGroupManager", "session_timeout_key", "rebalance_timeout_key",
           "SERVER_ASSIGNORS", "DEFAULT_SERVER_ASSIGNOR"]

# group.consumer.assignors: Kafka's default list, the first is the default.
SERVER_ASSIGNORS = {"uniform": UniformAssignor(), "range": ServerRangeAssignor()}
DEFAULT_SERVER_ASSIGNOR = "uniform"

EMPTY_RESULT: CoordinatorResult[Any] = CoordinatorResult([])


def session_timeout_key(group_id: str, member_id: str) -> str:
    return f"session-timeout-{group_id}-{member_id}"


def rebalance_timeout_key(group_id: str, member_id: str) -> str:
    return f"rebalance-timeout-{group_id}-{member_id}"


def assignment_to_string(assignment: Assignment) -> str:
    """Kafka's `Utils.assignmentToString`: [topicId-partition, ...]."""
    return "[" + ", ".join(f"{t}-{p}" for t, parts in sorted(assignment.items())
                           for p in sorted(parts)) + "]"


def _java_set(names: Any) -> str:
    return "[" + ", ".join(sorted(names)) + "]"


def _metadata_string(metadata: Mapping[str, TopicMetadata]) -> str:
    return "{" + ", ".join(f"{n}=TopicMetadata(id={t.id}, name={t.name}, "
                           f"numPartitions={t.num_partitions})"
                           for n, t in sorted(metadata.items())) + "}"


def _invalid(message: str) -> KafkaError:
    return Errors.INVALID_REQUEST.exception(message)


def _blank(value: str | None) -> bool:
    return value is not None and value.strip() == ""


class ConsumerGroupManager(ConsumerGroupMigration):
    def __init__(self, log: LogContext, registry: SnapshotRegistry, timer: CoordinatorTimer,
                 time: Any, config: GroupCoordinatorConfig, rng: random.Random,
                 classic: Any) -> None:
        self.log = log
        self.registry = registry
        self.timer = timer
        self.time = time
        self.config = config
        self.rng = rng
        self.classic = classic  # the shard's GroupMetadataManager (classic groups)
        self.groups: TimelineHashMap[str, ConsumerGroup] = TimelineHashMap(registry)
        self.topics = TopicsView(MetadataImage.EMPTY)  # type: ignore[attr-defined]
        # Set once a consumer group record is replayed here, never unset: lets the offset paths
        # skip the consumer group lookup on shards that only ever held classic groups.
        self.has_groups = False

    # -- lookup ----------------------------------------------------------------------------------

    def group(self, group_id: str, committed_offset: int | None = None) -> ConsumerGroup | None:
        return self.groups.get(group_id, epoch=committed_offset)

    def consumer_group(self, group_id: str) -> ConsumerGroup:
        group = self.groups.get(group_id)
        if group is None:
            if group_id in self.classic.groups:
                raise Errors.GROUP_ID_NOT_FOUND.exception(
                    f"Group {group_id} is not a consumer group")
            raise Errors.GROUP_ID_NOT_FOUND.exception(f"Group {group_id} not found.")
        return group

    def _get_or_maybe_create_group(self, group_id: str, create: bool,
                                   records: list[CoordinatorRecord]) -> ConsumerGroup:
        """`getOrMaybeCreateConsumerGroup`: a new group is not put in the map (replay does)."""
        group = self.groups.get(group_id)
        if group is not None:
            return group
        classic = self.classic.groups.get(group_id)
        if classic is None:
            if not create:
                raise Errors.GROUP_ID_NOT_FOUND.exception(
                    f"Consumer group {group_id} not found.")
            return ConsumerGroup(self.registry, group_id)
        if create and classic.state is ClassicGroupState.EMPTY:
            records.append(rec.new_group_metadata_tombstone(group_id))  # replay removes it
            return ConsumerGroup(self.registry, group_id)
        if create and self._validate_online_upgrade(classic):
            return self._convert_to_consumer_group(classic, records)
        raise Errors.GROUP_ID_NOT_FOUND.exception(f"Group {group_id} is not a consumer group")

    def _persisted_group(self, group_id: str, create: bool) -> ConsumerGroup | None:
        """`getOrMaybeCreatePersistedConsumerGroup` (replay): a simple classic group (one that
        only holds offsets) with the same id is replaced."""
        group = self.groups.get(group_id)
        if group is not None:
            return group
        if not create:
            return None
        classic = self.classic.groups.get(group_id)
        if classic is not None:
            if classic.protocol_type is not None or classic.members:
                raise RuntimeError(f"Group {group_id} is not a consumer group")
            self.classic.groups.remove(group_id)
        group = ConsumerGroup(self.registry, group_id)
        self.groups.put(group_id, group)
        self.has_groups = True
        return group

    # -- ConsumerGroupHeartbeat ------------------------------------------------------------------

    def consumer_group_heartbeat(self, ctx: RequestContext,
                                 request: ConsumerGroupHeartbeatRequest
                                 ) -> CoordinatorResult[ConsumerGroupHeartbeatResponse]:
        self._validate(request)
        if request.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
            return self._leave(request.group_id, request.instance_id, request.member_id,
                               request.member_epoch)
        return self._heartbeat(ctx, request)

    def _validate(self, r: ConsumerGroupHeartbeatRequest) -> None:
        """`throwIfConsumerGroupHeartbeatRequestIsInvalid`."""
        if _blank(r.group_id):
            raise _invalid("GroupId can't be empty.")
        if _blank(r.instance_id):
            raise _invalid("InstanceId can't be empty.")
        if _blank(r.rack_id):
            raise _invalid("RackId can't be empty.")
        if r.subscribed_topic_regex:  # an empty one is no regex (librdkafka sends "" in v1)
            raise _invalid("SubscribedTopicRegex is not supported yet.")
        if r.member_epoch > 0 or r.member_epoch == LEAVE_GROUP_MEMBER_EPOCH:
            if r.member_id.strip() == "":
                raise _invalid("MemberId can't be empty.")
        elif r.member_epoch == 0:
            if r.rebalance_timeout_ms == -1:
                raise _invalid("RebalanceTimeoutMs must be provided in first request.")
            if r.topic_partitions is None or len(r.topic_partitions) > 0:
                raise _invalid("TopicPartitions must be empty when (re-)joining.")
            if not r.subscribed_topic_names:
                raise _invalid("SubscribedTopicNames must be set in first request.")
        elif r.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            if r.member_id.strip() == "":
                raise _invalid("MemberId can't be empty.")
            if r.instance_id is None:
                raise _invalid("InstanceId can't be null.")
        else:
            raise _invalid("MemberEpoch is invalid.")
        if r.server_assignor is not None and r.server_assignor not in SERVER_ASSIGNORS:
            raise Errors.UNSUPPORTED_ASSIGNOR.exception(
                f"ServerAssignor {r.server_assignor} is not supported. Supported assignors: "
                f"{', '.join(SERVER_ASSIGNORS)}.")

    def _new_member_id(self) -> str:
        """Kafka's `Uuid.randomUuid().toString()`, from the shard's seeded generator."""
        return rec.uuid_string(self.rng.getrandbits(128).to_bytes(16, "big"))

    def _heartbeat(self, ctx: RequestContext, r: ConsumerGroupHeartbeatRequest
                   ) -> CoordinatorResult[ConsumerGroupHeartbeatResponse]:
        now = self.time.now
        records: list[CoordinatorRecord] = []
        group_id = r.group_id
        create = r.member_epoch == 0
        group = self._get_or_maybe_create_group(group_id, create, records)
        if group.num_members() >= self.config.consumer_group_max_size and \
                (r.member_id == "" or not group.has_member(r.member_id)):
            raise Errors.GROUP_MAX_SIZE_REACHED.exception(
                f"The consumer group has reached its maximum capacity of "
                f"{self.config.consumer_group_max_size} members.")
        member_id = r.member_id or self._new_member_id()
        if r.instance_id is None:
            member = group.get_or_maybe_create_member(member_id, create)
            self._check_epoch(member, r.member_epoch, r.topic_partitions)
            if create:
                self.log.log("CG-MEMBER-JOINS", group=group_id, member=member_id,
                             protocol="consumer")
        else:
            member = self._static_member(group, member_id, r.member_epoch, r.instance_id,
                                         r.topic_partitions, create, records)

        # 1. the member's subscription
        updated = replace(
            member,
            instance_id=r.instance_id if r.instance_id is not None else member.instance_id,
            rack_id=r.rack_id if r.rack_id is not None else member.rack_id,
            rebalance_timeout_ms=(r.rebalance_timeout_ms if r.rebalance_timeout_ms != -1
                                  else member.rebalance_timeout_ms),
            server_assignor_name=(r.server_assignor if r.server_assignor is not None
                                  else member.server_assignor_name),
            subscribed_topic_names=(frozenset(r.subscribed_topic_names)
                                    if r.subscribed_topic_names is not None
                                    else member.subscribed_topic_names),
            client_id=ctx.client_id, client_host=ctx.client_host,
            classic_member_metadata=None)  # a classic static member replaced by this one
        target_epoch, target = self._update_subscription_and_target(group, member, updated, now,
                                                                    records)

        # 3. reconcile the member
        updated = self._maybe_reconcile(group_id, updated, group, target_epoch, target,
                                        r.topic_partitions, records)
        self._schedule_session_timeout(group_id, member_id)

        full = r.member_epoch == 0 or (r.rebalance_timeout_ms != -1
                                       and r.subscribed_topic_names is not None
                                       and r.topic_partitions is not None)
        assignment = None
        if full or dict(member.assigned_partitions) != dict(updated.assigned_partitions):
            assignment = ConsumerGroupHeartbeatAssignment(tuple(
                TopicPartitions(t, tuple(sorted(p)))
                for t, p in sorted(updated.assigned_partitions.items())))
        return CoordinatorResult(records, ConsumerGroupHeartbeatResponse(
            member_id=updated.member_id, member_epoch=updated.member_epoch,
            heartbeat_interval_ms=self.config.consumer_group_heartbeat_interval_ms,
            assignment=assignment))

    def _update_subscription_and_target(self, group: ConsumerGroup, member: ConsumerGroupMember,
                                        updated: ConsumerGroupMember, now: int,
                                        records: list[CoordinatorRecord]
                                        ) -> tuple[int, Assignment]:
        """Steps 1 and 2 of a heartbeat or a classic member's JoinGroup: persist the member's
        subscription, refresh the subscription metadata and bump the group epoch when they
        changed, then compute the target assignment if the group epoch is ahead of it."""
        group_id, member_id = group.group_id, updated.member_id
        bump = False
        if updated != member:
            records.append(self._subscription_record(group_id, updated))
            if updated.subscribed_topic_names != member.subscribed_topic_names:
                self.log.log("CG-SUBSCRIBED-TOPICS", group=group_id, member=member_id,
                             topics=_java_set(updated.subscribed_topic_names))
                bump = True

        group_epoch = group.group_epoch
        metadata: Mapping[str, TopicMetadata] = dict(group.subscription_metadata.items())
        kind = group.subscription_type
        if bump or group.has_metadata_expired(now):
            names = group.compute_subscribed_topic_names(member, updated)
            new_metadata = group.compute_subscription_metadata(names, self.topics)
            members = group.num_members()
            if not group.has_member(updated.member_id) and \
                    not group.has_static_member(updated.instance_id):
                members += 1
            kind = subscription_type(names, members)
            if new_metadata != metadata:
                self.log.log("CG-SUBSCRIPTION-METADATA", group=group_id,
                             metadata=_metadata_string(new_metadata))
                bump = True
                records.append(rec.new_consumer_group_subscription_metadata_record(
                    group_id, {n: (t.id, t.num_partitions) for n, t in new_metadata.items()}))
            metadata = new_metadata
            if bump:
                group_epoch += 1
                records.append(rec.new_consumer_group_epoch_record(group_id, group_epoch))
                self.log.log("CG-EPOCH-BUMPED", group=group_id, epoch=group_epoch)
            # the metadata refresh interval is Integer.MAX_VALUE in Kafka's builder: a refresh
            # happens after a load or a new image (requestMetadataRefresh), or after a revert
            group.metadata_refresh_deadline = (now + 2**31 - 1, group_epoch)

        # 2. the target assignment
        if group_epoch > group.assignment_epoch:
            target = self._update_target(group, group_epoch, member, updated, metadata, kind,
                                         records)
            return group_epoch, target
        return (group.assignment_epoch,
                group.target_assignment_of(updated.member_id, updated.instance_id))

    def _check_epoch(self, member: ConsumerGroupMember, received: int,
                     owned: Sequence[TopicPartitions] | None) -> None:
        """`throwIfConsumerGroupMemberEpochIsInvalid`: one lost response is forgiven (the
        previous epoch, owning only partitions it still has)."""
        if received > member.member_epoch:
            raise Errors.FENCED_MEMBER_EPOCH.exception(
                f"The consumer group member has a greater member epoch ({received}) than the one "
                f"known by the group coordinator ({member.member_epoch}). The member must abandon "
                f"all its partitions and rejoin.")
        if received < member.member_epoch:
            if received != member.previous_member_epoch or \
                    not _is_subset(owned, member.assigned_partitions):
                raise Errors.FENCED_MEMBER_EPOCH.exception(
                    f"The consumer group member has a smaller member epoch ({received}) than the "
                    f"one known by the group coordinator ({member.member_epoch}). The member must "
                    f"abandon all its partitions and rejoin.")

    def _static_member(self, group: ConsumerGroup, member_id: str, epoch: int, instance_id: str,
                       owned: Sequence[TopicPartitions] | None, create: bool,
                       records: list[CoordinatorRecord],
                       classic: bool = False) -> ConsumerGroupMember:
        """`getOrMaybeSubscribeStaticConsumerGroupMember` (`classic`: a JoinGroup's member,
        whose epoch is not checked and who may replace any member of its instance id)."""
        existing = group.static_member(instance_id)
        protocol = "classic" if classic else "consumer"
        if create:
            if existing is None:
                self.log.log("CG-STATIC-JOINS", group=group.group_id, member=member_id,
                             instance=instance_id, protocol=protocol)
                return group.get_or_maybe_create_member(member_id, True)
            if not classic and not existing.use_classic_protocol and \
                    existing.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                self.log.log("CG-INSTANCE-UNRELEASED", group=group.group_id, member=member_id,
                             instance=instance_id, owner=existing.member_id)
                raise Errors.UNRELEASED_INSTANCE_ID.exception(
                    f"Static member {member_id} with instance id {instance_id} cannot join the "
                    f"group because the instance id is owned by {existing.member_id} member.")
            new = replace(existing.with_member_id(member_id), member_epoch=0,
                          previous_member_epoch=0)
            self._replace_member(records, group, existing, new)
            self.log.log("CG-STATIC-REJOINS", group=group.group_id, instance=instance_id,
                         protocol=protocol, member=member_id, old_member=existing.member_id)
            return new
        if existing is None:
            raise Errors.UNKNOWN_MEMBER_ID.exception(f"Instance id {instance_id} is unknown.")
        self._check_instance_not_fenced(existing, group.group_id, member_id, instance_id)
        if not classic:
            self._check_epoch(existing, epoch, owned)
        return existing

    def _check_instance_not_fenced(self, member: ConsumerGroupMember, group_id: str,
                                   member_id: str, instance_id: str) -> None:
        if member.member_id != member_id:
            self.log.log("CG-INSTANCE-FENCED", group=group_id, member=member_id,
                         instance=instance_id, owner=member.member_id)
            raise Errors.FENCED_INSTANCE_ID.exception(
                f"Static member {member_id} with instance id {instance_id} was fenced by member "
                f"{member.member_id}.")

    def _subscription_record(self, group_id: str, m: ConsumerGroupMember) -> CoordinatorRecord:
        classic = m.classic_member_metadata
        return rec.new_consumer_group_member_subscription_record(
            group_id, m.member_id, m.instance_id, m.rack_id, m.client_id, m.client_host,
            sorted(m.subscribed_topic_names), m.subscribed_topic_regex, m.rebalance_timeout_ms,
            m.server_assignor_name,
            None if classic is None else (classic.session_timeout_ms, [
                (p.name, p.metadata) for p in classic.supported_protocols]))

    def _current_assignment_record(self, group_id: str,
                                   m: ConsumerGroupMember) -> CoordinatorRecord:
        return rec.new_consumer_group_current_assignment_record(
            group_id, m.member_id, m.member_epoch, m.previous_member_epoch, m.state.value,
            m.assigned_partitions, m.partitions_pending_revocation)

    def _replace_member(self, records: list[CoordinatorRecord], group: ConsumerGroup,
                        old: ConsumerGroupMember, new: ConsumerGroupMember) -> None:
        """`replaceMember`: the old id's tombstones, then the new id with the old target."""
        self._remove_member_records(records, group.group_id, old.member_id)
        records.append(self._subscription_record(group.group_id, new))
        records.append(rec.new_consumer_group_target_assignment_record(
            group.group_id, new.member_id, group.target_assignment_of(old.member_id)))
        records.append(self._current_assignment_record(group.group_id, new))

    @staticmethod
    def _remove_member_records(records: list[CoordinatorRecord], group_id: str,
                               member_id: str) -> None:
        """`removeMember`: the order matters (replay checks it)."""
        records.append(rec.new_consumer_group_current_assignment_tombstone(group_id, member_id))
        records.append(rec.new_consumer_group_target_assignment_tombstone(group_id, member_id))
        records.append(rec.new_consumer_group_member_subscription_tombstone(group_id, member_id))

    def _update_target(self, group: ConsumerGroup, group_epoch: int,
                       member: ConsumerGroupMember, updated: ConsumerGroupMember,
                       metadata: Mapping[str, TopicMetadata], kind: SubscriptionType,
                       records: list[CoordinatorRecord]) -> Assignment:
        """`updateTargetAssignment`."""
        assignor = group.compute_preferred_server_assignor(member, updated) or \
            DEFAULT_SERVER_ASSIGNOR
        builder = (TargetAssignmentBuilder(group.group_id, group_epoch, SERVER_ASSIGNORS[assignor])
                   .with_members(dict(group.members.items()))
                   .with_static_members(dict(group.static_members.items()))
                   .with_subscription_metadata(metadata)
                   .with_subscription_type(kind)
                   .with_target_assignment(dict(group.target_assignment.items()))
                   .with_inverted_target_assignment(group.inverted_target_view())
                   .with_topics_image(self.topics)
                   .add_or_update_member(updated.member_id, updated))
        previous = group.static_member_id(updated.instance_id)
        if previous is not None and previous != updated.member_id:
            builder.remove_member(previous)
        try:
            result = builder.build()
        except PartitionAssignorException as exc:
            message = (f"Failed to compute a new target assignment for epoch {group_epoch}: "
                       f"{exc}")
            self.log.log("CG-TARGET-FAILED", group=group.group_id, epoch=group_epoch, error=exc)
            raise Errors.UNKNOWN_SERVER_ERROR.exception(message) from exc
        if self.log.logger_enabled("DEBUG"):
            shown = "{" + ", ".join(f"{m}=MemberAssignment(partitions={assignment_to_string(a)})"
                                    for m, a in sorted(result.target_assignment.items())) + "}"
            self.log.log("CG-TARGET-COMPUTED-DEBUG", group=group.group_id, epoch=group_epoch,
                         assignor=assignor, ms=0, assignment=shown)
        else:
            self.log.log("CG-TARGET-COMPUTED", group=group.group_id, epoch=group_epoch,
                         assignor=assignor, ms=0)
        records.extend(result.records)
        return result.target_assignment.get(updated.member_id, EMPTY_ASSIGNMENT)

    def _maybe_reconcile(self, group_id: str, member: ConsumerGroupMember,
                         group: ConsumerGroup, target_epoch: int, target: Assignment,
                         owned: Sequence[TopicPartitions] | None,
                         records: list[CoordinatorRecord]) -> ConsumerGroupMember:
        """`maybeReconcile`."""
        if member.is_reconciled_to(target_epoch):
            return member
        updated = (CurrentAssignmentBuilder(member)
                   .with_target_assignment(target_epoch, target)
                   .with_current_partition_epoch(group.current_partition_epoch)
                   .with_owned_topic_partitions(owned)
                   .build())
        if updated != member:
            records.append(self._current_assignment_record(group_id, updated))
            if self.log.enabled("DEBUG"):
                self.log.log("CG-ASSIGNMENT-STATE", group=group_id, member=updated.member_id,
                             epoch=updated.member_epoch,
                             previous_epoch=updated.previous_member_epoch,
                             state=updated.state.name,
                             assigned=assignment_to_string(updated.assigned_partitions),
                             revoked=assignment_to_string(updated.partitions_pending_revocation))
            if updated.state is MemberState.UNREVOKED_PARTITIONS:
                self._schedule_rebalance_timeout(group_id, updated.member_id,
                                                 updated.member_epoch,
                                                 updated.rebalance_timeout_ms)
            else:
                self.timer.cancel(rebalance_timeout_key(group_id, updated.member_id))
        return updated

    # -- leaving and fencing ---------------------------------------------------------------------

    def _leave(self, group_id: str, instance_id: str | None, member_id: str, epoch: int
               ) -> CoordinatorResult[ConsumerGroupHeartbeatResponse]:
        """`consumerGroupLeave`."""
        group = self.consumer_group(group_id)
        response = ConsumerGroupHeartbeatResponse(member_id=member_id, member_epoch=epoch)
        if instance_id is None:
            member = group.get_or_maybe_create_member(member_id, False)
            self.log.log("CG-MEMBER-LEFT", group=group_id, member=member_id)
            return self._fence(group, member, response)
        member = group.static_member(instance_id)
        if member is None:
            raise Errors.UNKNOWN_MEMBER_ID.exception(f"Instance id {instance_id} is unknown.")
        self._check_instance_not_fenced(member, group_id, member_id, instance_id)
        if epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            self.log.log("CG-STATIC-TEMP-LEFT", group=group_id, member=member_id,
                         instance=instance_id)
            leaving = leaving_static_member(member, LEAVE_GROUP_STATIC_MEMBER_EPOCH)
            return CoordinatorResult(
                [self._current_assignment_record(group_id, leaving)],
                ConsumerGroupHeartbeatResponse(member_id=member.member_id,
                                               member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH))
        self.log.log("CG-STATIC-LEFT", group=group_id, member=member_id, instance=instance_id)
        return self._fence(group, member, response)

    def _fence(self, group: ConsumerGroup, member: ConsumerGroupMember,
               response: Any) -> CoordinatorResult[Any]:
        """`consumerGroupFenceMember`: the group turns back into a classic group when the
        member was its last consumer-protocol member and the policy allows (the online
        downgrade; the maps change directly, the records are not replayed)."""
        records: list[CoordinatorRecord] = []
        if group.num_classic_protocol_members == len(group.members) - 1 and \
                self._validate_online_downgrade_with_fenced_member(group, member.member_id):
            self._convert_to_classic_group(group, member.member_id, records)
            return CoordinatorResult(records, response, replay_records=False)
        self._remove_member_records(records, group.group_id, member.member_id)
        metadata = group.compute_subscription_metadata(
            group.compute_subscribed_topic_names(member, None), self.topics)
        if metadata != dict(group.subscription_metadata.items()):
            self.log.log("CG-SUBSCRIPTION-METADATA", group=group.group_id,
                         metadata=_metadata_string(metadata))
            records.append(rec.new_consumer_group_subscription_metadata_record(
                group.group_id, {n: (t.id, t.num_partitions) for n, t in metadata.items()}))
        records.append(rec.new_consumer_group_epoch_record(group.group_id,
                                                           group.group_epoch + 1))
        # Kafka 4.0.2's consumerGroupFenceMembers logs the bump (its 4.0 source did not)
        self.log.log("CG-EPOCH-BUMPED", group=group.group_id, epoch=group.group_epoch + 1)
        self._cancel_timers(group.group_id, member.member_id)
        return CoordinatorResult(records, response)

    def _fence_operation(self, group_id: str, member_id: str, reason: str
                         ) -> CoordinatorResult[None]:
        """`consumerGroupFenceMemberOperation` (the session timer's operation)."""
        found = self._timed_member(group_id, member_id)
        if found is None:
            return EMPTY_RESULT
        group, member = found
        self.log.log("CG-FENCED", group=group_id, member=member_id, reason=reason)
        return self._fence(group, member, None)

    def _timed_member(self, group_id: str, member_id: str) -> tuple[Any, Any] | None:
        """The group and member a firing timer is about, or None (logged) when either is gone:
        the lookup both of Kafka's timer operations start with."""
        group = self.groups.get(group_id)
        if group is None:
            self.log.log("CG-FENCE-NO-GROUP", group=group_id, member=member_id)
            return None
        member = group.members.get(member_id)
        if member is None:
            self.log.log("CG-FENCE-NO-MEMBER", group=group_id, member=member_id)
            return None
        return group, member

    def _schedule_session_timeout(self, group_id: str, member_id: str,
                                  timeout_ms: int | None = None) -> None:
        """`scheduleConsumerGroupSessionTimeout` (a classic member's own session timeout, or
        group.consumer.session.timeout.ms)."""
        self.timer.schedule(
            session_timeout_key(group_id, member_id),
            self.config.consumer_group_session_timeout_ms if timeout_ms is None else timeout_ms,
            True,
            lambda: self._fence_operation(group_id, member_id, "the member session expired"))

    def _schedule_rebalance_timeout(self, group_id: str, member_id: str, member_epoch: int,
                                    rebalance_timeout_ms: int) -> None:
        def expire() -> CoordinatorResult[None]:
            found = self._timed_member(group_id, member_id)
            if found is None:
                return EMPTY_RESULT
            group, member = found
            if member.member_epoch == member_epoch:
                self.log.log("CG-REBALANCE-TIMEOUT", group=group_id, member=member_id,
                             epoch=member_epoch, ms=rebalance_timeout_ms)
                return self._fence(group, member, None)
            self.log.log("CG-REBALANCE-TIMEOUT-IGNORED", group=group_id, member=member_id,
                         epoch=member_epoch)
            return EMPTY_RESULT
        self.timer.schedule(rebalance_timeout_key(group_id, member_id), rebalance_timeout_ms,
                            True, expire)

    # -- replay (GroupMetadataManager.replay for types 3-8) --------------------------------------

    def replay(self, record: CoordinatorRecord) -> None:
        t, key, value = record.record_type, record.key, record.value
        group_id = key["GroupId"]
        if t == rec.CONSUMER_GROUP_MEMBER_METADATA_RECORD_TYPE:
            self._replay_member_metadata(group_id, key["MemberId"], value)
        elif t == rec.CONSUMER_GROUP_METADATA_RECORD_TYPE:
            self._replay_group_metadata(group_id, value)
        elif t == rec.CONSUMER_GROUP_PARTITION_METADATA_RECORD_TYPE:
            group = self._persisted_group(group_id, value is not None)
            if group is not None:
                group.set_subscription_metadata({} if value is None else {
                    row["TopicName"]: TopicMetadata(row["TopicId"], row["TopicName"],
                                                    row["NumPartitions"])
                    for row in value["Topics"]})
        elif t == rec.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_RECORD_TYPE:
            group = self._persisted_group(group_id, value is not None)
            if group is None:
                return
            if value is None:
                group.remove_target_assignment(key["MemberId"])
            else:
                group.update_target_assignment(
                    key["MemberId"], freeze(rec.assignment_from_value(value["TopicPartitions"])))
        elif t == rec.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_RECORD_TYPE:
            group = self._persisted_group(group_id, value is not None)
            if group is None:
                return
            if value is None:
                if not group.target_assignment.is_empty():
                    raise RuntimeError(
                        f"Received a tombstone record to delete target assignment of {group_id} "
                        f"but the assignment still has {len(group.target_assignment)} members.")
                group.set_target_assignment_epoch(-1)
            else:
                group.set_target_assignment_epoch(value["AssignmentEpoch"])
        elif t == rec.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_RECORD_TYPE:
            self._replay_current_assignment(group_id, key["MemberId"], value)
        else:
            raise RuntimeError(f"Unknown consumer group record type {t}")

    def _replay_member_metadata(self, group_id: str, member_id: str,
                                value: Mapping[str, Any] | None) -> None:
        group = self._persisted_group(group_id, value is not None)
        if group is None:
            return
        if value is not None:
            old = group.get_or_maybe_create_member(member_id, True)
            group.update_member(replace(
                old, instance_id=value["InstanceId"], rack_id=value["RackId"],
                client_id=value["ClientId"], client_host=value["ClientHost"],
                subscribed_topic_names=frozenset(value["SubscribedTopicNames"]),
                subscribed_topic_regex=value["SubscribedTopicRegex"],
                rebalance_timeout_ms=value["RebalanceTimeoutMs"],
                server_assignor_name=value["ServerAssignor"],
                classic_member_metadata=_classic_member_metadata(
                    value.get("ClassicMemberMetadata"))))
            return
        old_member = group.members.get(member_id)
        if old_member is None:
            return
        if old_member.member_epoch != LEAVE_GROUP_MEMBER_EPOCH:
            raise RuntimeError(f"Received a tombstone record to delete member {member_id} but "
                               f"did not receive ConsumerGroupCurrentMemberAssignmentValue "
                               f"tombstone.")
        if member_id in group.target_assignment:
            raise RuntimeError(f"Received a tombstone record to delete member {member_id} but "
                               f"did not receive ConsumerGroupTargetAssignmentMetadataValue "
                               f"tombstone.")
        group.remove_member(member_id)

    def _replay_group_metadata(self, group_id: str, value: Mapping[str, Any] | None) -> None:
        if value is not None:
            group = self._persisted_group(group_id, True)
            assert group is not None
            group.set_group_epoch(value["Epoch"])
            return
        group = self.groups.get(group_id)
        if group is None:
            return
        if not group.members.is_empty():
            raise RuntimeError(f"Received a tombstone record to delete group {group_id} but the "
                               f"group still has {len(group.members)} members.")
        if not group.target_assignment.is_empty():
            raise RuntimeError(f"Received a tombstone record to delete group {group_id} but the "
                               f"target assignment still has {len(group.target_assignment)} "
                               f"members.")
        if group.assignment_epoch != -1:
            raise RuntimeError(f"Received a tombstone record to delete group {group_id} but did "
                               f"not receive ConsumerGroupTargetAssignmentMetadataValue "
                               f"tombstone.")
        self.groups.remove(group_id)

    def _replay_current_assignment(self, group_id: str, member_id: str,
                                   value: Mapping[str, Any] | None) -> None:
        group = self._persisted_group(group_id, value is not None)
        if group is None:
            return
        if value is not None:
            old = group.get_or_maybe_create_member(member_id, True)
            group.update_member(replace(
                old, member_epoch=value["MemberEpoch"],
                previous_member_epoch=value["PreviousMemberEpoch"],
                state=MemberState.from_value(value["State"]),
                assigned_partitions=freeze(rec.assignment_from_value(
                    value["AssignedPartitions"])),
                partitions_pending_revocation=freeze(rec.assignment_from_value(
                    value["PartitionsPendingRevocation"]))))
            return
        old_member = group.members.get(member_id)
        if old_member is None:
            return
        group.update_member(replace(
            old_member, member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
            previous_member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
            assigned_partitions=EMPTY_ASSIGNMENT, partitions_pending_revocation=EMPTY_ASSIGNMENT))

    # -- load / unload / metadata ----------------------------------------------------------------

    def on_new_metadata_image(self, image: MetadataImage) -> None:
        old = self.topics.by_name
        self.topics = TopicsView(image)
        changed = {n for n in set(old) | set(self.topics.by_name)
                   if old.get(n) != self.topics.by_name.get(n)}
        for _, group in sorted(self.groups.items()):
            if changed & set(group.subscribed_topic_names.keys()):
                group.request_metadata_refresh()

    def on_loaded(self, image: MetadataImage) -> None:
        self.topics = TopicsView(image)
        for group_id, group in sorted(self.groups.items()):
            self.log.log("CG-LOADED", group=group_id, members=len(group.members))
            for member_id, member in sorted(group.members.items()):
                self.log.log("CG-LOADED-MEMBER", member=member_id, group=group_id)
                self._schedule_session_timeout(group_id, member_id)
                if member.state is MemberState.UNREVOKED_PARTITIONS:
                    self._schedule_rebalance_timeout(group_id, member_id, member.member_epoch,
                                                     member.rebalance_timeout_ms)

    def on_unloaded(self) -> None:
        for group_id, group in sorted(self.groups.items()):
            self.log.log("CG-UNLOADED", group=group_id, epoch=group.group_epoch)


def _classic_member_metadata(value: Mapping[str, Any] | None) -> ClassicMemberMetadata | None:
    """A ConsumerGroupMemberMetadataValue's ClassicMemberMetadata (null for a member of the
    consumer protocol)."""
    if value is None:
        return None
    return ClassicMemberMetadata(value["SessionTimeoutMs"], tuple(
        ClassicProtocol(p["Name"], bytes(p["Metadata"])) for p in value["SupportedProtocols"]))


def _is_subset(owned: Sequence[TopicPartitions] | None, target: Assignment) -> bool:
    """`isSubset`: every owned partition is in `target` (no list: not a subset)."""
    if owned is None:
        return False
    for tp in owned:
        parts = target.get(tp.topic_id)
        if parts is None or any(p not in parts for p in tp.partitions):
            return False
    return True
