"""The online migration between classic groups and consumer groups (KIP-848), and the classic
protocol members of a consumer group (Kafka's `GroupMetadataManager`: `convertToConsumerGroup`,
`convertToClassicGroup`, `classicGroupJoinToConsumerGroup`, `classicGroupSyncToConsumerGroup`,
`classicGroupHeartbeatToConsumerGroup`, `classicGroupLeaveToConsumerGroup`;
`ConsumerGroup.fromClassicGroup`, `ClassicGroup.fromConsumerGroup`).

* Upgrade: a ConsumerGroupHeartbeat that joins a non-empty classic group of protocol type
  "consumer" turns it into a consumer group when `group.consumer.migration.policy` allows: the
  classic group's tombstone, then the records that build the consumer group (each classic
  member a consumer group member at the classic generation, Stable, with its last assignment as
  its target, its JoinGroup protocols kept as its ClassicMemberMetadata), then the joining
  member's records. Replaying them rebuilds the same group on a new coordinator.
* Classic members: a JoinGroup, SyncGroup, Heartbeat or LeaveGroup of a member that speaks the
  classic protocol is served by the consumer group. The server computes the assignment (the
  member's target, reconciled like a heartbeat member's); the member's generation is its member
  epoch, and a Heartbeat answers REBALANCE_IN_PROGRESS when it should rejoin to move on.
* Downgrade: when the last consumer-protocol member leaves (or is fenced) and every member left
  uses the classic protocol, the consumer group turns back into a classic group (its
  tombstones, then a GroupMetadata record) that starts a rebalance at once.

`ConsumerGroupManager` takes these methods from `ConsumerGroupMigration` (a mixin: it needs the
manager's records, timers and reconciliation).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...errors import Errors, KafkaError
from ...runtime.future import CoordinatorFuture
from ...runtime.records import CoordinatorRecord
from ...runtime.shard import CoordinatorResult
from ...topic import TopicPartition
from .. import records as rec
from ..api import (HeartbeatRequest, HeartbeatResponse, JoinGroupRequest, JoinGroupResponse,
                   LeaveGroupRequest, LeaveGroupResponse, MemberResponse, RequestContext,
                   SyncGroupRequest, SyncGroupResponse, TopicPartitions)
from ..classic import (CONSUMER_PROTOCOL_TYPE, UNKNOWN_MEMBER_ID, ClassicGroup,
                       ClassicGroupMember, ClassicGroupState, Protocol)
from ..protocol import ConsumerProtocolAssignment, ConsumerProtocolSubscription, \
    deserialize_version
from ..records import SchemaError
from .consumer_group import ConsumerGroup
from .member import (EMPTY_ASSIGNMENT, Assignment, ClassicMemberMetadata, ClassicProtocol,
                     ConsumerGroupMember, MemberState, freeze)
from .topics import TopicsView

__all__ = ["ConsumerGroupMigration", "join_timeout_key", "sync_timeout_key",
           "consumer_group_from_classic_group", "classic_group_from_consumer_group"]


def join_timeout_key(group_id: str, member_id: str) -> str:
    """`consumerGroupJoinKey`: a classic member asked to rejoin must do so in time."""
    return f"join-{group_id}-{member_id}"


def sync_timeout_key(group_id: str, member_id: str) -> str:
    """`consumerGroupSyncKey`: a classic member that joined must sync in time."""
    return f"sync-{group_id}-{member_id}"


def _classic_metadata(session_timeout_ms: int,
                      protocols: Any) -> ClassicMemberMetadata:
    return ClassicMemberMetadata(session_timeout_ms, tuple(
        ClassicProtocol(p.name, bytes(p.metadata)) for p in protocols))


def _to_assignment(partitions: Any, topics: TopicsView) -> dict[str, frozenset[int]]:
    """`toTopicPartitionMap`: names to topic ids; a topic the image lacks is left out."""
    out: dict[str, set[int]] = {}
    for tp in partitions:
        t = topics.by_name.get(tp.topic)
        if t is not None:
            out.setdefault(t.id, set()).add(tp.partition)
    return {t: frozenset(p) for t, p in out.items()}


def _to_topic_partitions(owned: Any, topics: TopicsView) -> list[TopicPartitions]:
    """`toTopicPartitions`: a subscription's owned partitions as the heartbeat's list."""
    return [TopicPartitions(t, tuple(sorted(p)))
            for t, p in sorted(_to_assignment(owned, topics).items())]


def _serialize_assignment(assignment: Assignment, topics: TopicsView, version: int) -> bytes:
    """`toConsumerProtocolAssignment` + `ConsumerProtocol.serializeAssignment`, topics by name
    (a topic id the image lacks is left out)."""
    parts = []
    for topic_id, ps in sorted(assignment.items(), key=lambda kv: topics.name_of(kv[0]) or ""):
        name = topics.name_of(topic_id)
        if name is not None:
            parts.extend(TopicPartition(name, p) for p in sorted(ps))
    return ConsumerProtocolAssignment(tuple(parts)).encode(version)


def consumer_group_from_classic_group(registry: Any, classic: ClassicGroup,
                                      topics: TopicsView) -> ConsumerGroup:
    """`ConsumerGroup.fromClassicGroup`: the group epoch and target epoch are the classic
    generation; each member is Stable at that epoch with its last assignment as both its
    assigned partitions and its target. Raises SchemaError on malformed consumer protocol
    bytes. The group is not in the manager's map: replaying its records puts it there."""
    group = ConsumerGroup(registry, classic.group_id)
    group.set_group_epoch(classic.generation_id)
    group.set_target_assignment_epoch(classic.generation_id)
    for m in classic.members.values():
        assigned = _to_assignment(
            ConsumerProtocolAssignment.decode(m.assignment).assigned_partitions, topics)
        subscription = ConsumerProtocolSubscription.decode(m.metadata(classic.protocol_name))
        member = ConsumerGroupMember(
            m.member_id, member_epoch=classic.generation_id,
            previous_member_epoch=classic.generation_id, state=MemberState.STABLE,
            instance_id=m.group_instance_id, rack_id=subscription.rack_id,
            rebalance_timeout_ms=m.rebalance_timeout_ms, client_id=m.client_id,
            client_host=m.client_host, subscribed_topic_names=frozenset(subscription.topics),
            assigned_partitions=freeze(assigned),
            classic_member_metadata=_classic_metadata(m.session_timeout_ms,
                                                      m.supported_protocols))
        group.update_target_assignment(member.member_id, member.assigned_partitions)
        group.update_member(member)
    return group


def classic_group_from_consumer_group(group: ConsumerGroup, leaving_member_id: str, now: int,
                                      rng: Any, topics: TopicsView,
                                      joining: ConsumerGroupMember | None = None
                                      ) -> ClassicGroup:
    """`ClassicGroup.fromConsumerGroup`: Stable at the group epoch, protocol type "consumer",
    every member but the leaving one (and the `joining` static member that replaces it, with
    its assignment), each with its target assignment serialized at the version of its
    subscription."""
    classic = ClassicGroup(group.group_id, now, rng, ClassicGroupState.STABLE)
    classic.previous_state = ClassicGroupState.EMPTY
    classic.generation_id = group.group_epoch
    classic.protocol_type = CONSUMER_PROTOCOL_TYPE
    classic.leader_id = None
    kept = [m for member_id, m in sorted(group.members.items()) if member_id != leaving_member_id]
    for m in kept + ([joining] if joining is not None else []):
        meta = m.classic_member_metadata
        assert meta is not None  # every member left uses the classic protocol
        classic.add(ClassicGroupMember(
            m.member_id, m.instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
            meta.session_timeout_ms, CONSUMER_PROTOCOL_TYPE,
            [Protocol(p.name, p.metadata) for p in meta.supported_protocols]), None)
    classic.protocol_name = classic.select_protocol()
    classic.subscribed_topics = classic.compute_subscribed_topics()
    for member in classic.members.values():
        version = deserialize_version(member.metadata(classic.protocol_name))
        of = (leaving_member_id if joining is not None and member.member_id == joining.member_id
              else member.member_id)
        member.assignment = _serialize_assignment(
            group.target_assignment.get(of, EMPTY_ASSIGNMENT), topics, version)
    return classic


class ConsumerGroupMigration:
    """The migration paths of `ConsumerGroupManager` (see the module docstring)."""

    # provided by ConsumerGroupManager
    log: Any
    registry: Any
    timer: Any
    time: Any
    config: Any
    rng: Any
    classic: Any
    groups: Any
    topics: TopicsView

    # -- upgrade (convertToConsumerGroup) -------------------------------------------------------

    def _validate_online_upgrade(self, classic: ClassicGroup) -> bool:
        """`validateOnlineUpgrade`."""
        gid = classic.group_id
        if not self.config.consumer_group_migration_policy.is_upgrade_enabled:
            self.log.log("CG-UPGRADE-DISABLED", group=gid)
            return False
        if not classic.uses_consumer_group_protocol():
            self.log.log("CG-UPGRADE-NOT-CONSUMER", group=gid)
            return False
        if len(classic.members) > self.config.consumer_group_max_size:
            self.log.log("CG-UPGRADE-TOO-BIG", group=gid)
            return False
        return True

    def _convert_to_consumer_group(self, classic: ClassicGroup,
                                   records: list[CoordinatorRecord]) -> ConsumerGroup:
        """`convertToConsumerGroup`: the classic members waiting in a join or a sync are told
        REBALANCE_IN_PROGRESS (they rejoin the consumer group), then the classic group's
        tombstone and the consumer group's records."""
        for m in list(classic.members.values()):
            classic.complete_join_future(m, JoinGroupResponse(Errors.REBALANCE_IN_PROGRESS,
                                                              member_id=m.member_id))
            classic.complete_sync_future(m, SyncGroupResponse(Errors.REBALANCE_IN_PROGRESS))
        records.append(rec.new_group_metadata_tombstone(classic.group_id))
        try:
            group = consumer_group_from_classic_group(self.registry, classic, self.topics)
        except (SchemaError, ValueError) as exc:
            self.log.log("CG-UPGRADE-MALFORMED", group=classic.group_id, error=exc)
            raise Errors.GROUP_ID_NOT_FOUND.exception(
                f"Cannot upgrade the classic group {classic.group_id} to consumer group because "
                f"the embedded consumer protocol is malformed.") from exc
        self._create_consumer_group_records(group, records)
        for member_id, member in sorted(group.members.items()):
            assert member.classic_member_metadata is not None
            self._schedule_session_timeout(group.group_id, member_id,
                                           member.classic_member_metadata.session_timeout_ms)
        return group

    def _create_consumer_group_records(self, group: ConsumerGroup,
                                       records: list[CoordinatorRecord]) -> None:
        """`ConsumerGroup.createConsumerGroupRecords`: members, group epoch, targets, target
        epoch, current assignments (members in id order)."""
        members = sorted(group.members.items())
        g = group.group_id
        records.extend(self._subscription_record(g, m) for _, m in members)  # type: ignore
        records.append(rec.new_consumer_group_epoch_record(g, group.group_epoch))
        records.extend(rec.new_consumer_group_target_assignment_record(
            g, mid, group.target_assignment.get(mid, EMPTY_ASSIGNMENT)) for mid, _ in members)
        records.append(rec.new_consumer_group_target_assignment_epoch_record(
            g, group.group_epoch))
        records.extend(self._current_assignment_record(g, m)  # type: ignore
                       for _, m in members)

    # -- downgrade (convertToClassicGroup) ------------------------------------------------------

    def _validate_online_downgrade_with_fenced_member(self, group: ConsumerGroup,
                                                      member_id: str) -> bool:
        """`validateOnlineDowngradeWithFencedMember`."""
        if not group.all_members_use_classic_protocol_except(member_id):
            return False
        if group.num_members() <= 1:
            self.log.log("CG-DOWNGRADE-EMPTY", group=group.group_id)
            return False
        if not self.config.consumer_group_migration_policy.is_downgrade_enabled:
            self.log.log("CG-DOWNGRADE-DISABLED", group=group.group_id)
            return False
        if group.num_members() - 1 > self.config.group_max_size:
            self.log.log("CG-DOWNGRADE-TOO-BIG", group=group.group_id)
            return False
        return True

    def _validate_online_downgrade_with_replaced_member(self, group: ConsumerGroup,
                                                        replaced_member_id: str) -> bool:
        """`validateOnlineDowngradeWithReplacedMemberId`: a classic static member takes the
        place of the last consumer-protocol member."""
        if not group.all_members_use_classic_protocol_except(replaced_member_id):
            return False
        if not self.config.consumer_group_migration_policy.is_downgrade_enabled:
            self.log.log("CG-DOWNGRADE-DISABLED", group=group.group_id)
            return False
        if group.num_members() > self.config.group_max_size:
            self.log.log("CG-DOWNGRADE-TOO-BIG", group=group.group_id)
            return False
        return True

    def _convert_to_classic_group(self, group: ConsumerGroup, leaving_member_id: str,
                                  records: list[CoordinatorRecord],
                                  joining: ConsumerGroupMember | None = None) -> None:
        """`convertToClassicGroup`: the consumer group's tombstones and the classic group's
        GroupMetadata record; the maps are changed here, not by replay (the classic group
        object must live on to rebalance). A member that left starts a rebalance; a static
        member that replaced it (`joining`) takes its assignment and no rebalance starts."""
        if joining is None:
            records.extend(group.tombstone_records())
        else:  # createGroupTombstoneRecordsWithReplacedMember
            records.extend(r if r.key.get("MemberId") != leaving_member_id else
                           type(r)(r.record_type, {**r.key, "MemberId": joining.member_id},
                                   None)
                           for r in group.tombstone_records())
        now = self.time.now
        classic = classic_group_from_consumer_group(group, leaving_member_id, now,
                                                    self.classic.rng, self.topics, joining)
        records.append(self.classic.group_metadata_record(classic, classic.group_assignment()))
        self.groups.remove(group.group_id)
        self.classic.groups.put(group.group_id, classic)
        for member in classic.members.values():
            self.classic.reschedule_heartbeat(classic, member)
        if joining is None:
            self.classic.prepare_rebalance(
                classic, f"Downgrade group {group.group_id} from consumer to classic.")

    # -- classic members: JoinGroup (classicGroupJoinToConsumerGroup) ---------------------------

    def classic_group_join(self, group: ConsumerGroup, ctx: RequestContext,
                           request: JoinGroupRequest,
                           response: CoordinatorFuture[JoinGroupResponse]
                           ) -> CoordinatorResult[Any]:
        """`classicGroupJoin` for a consumer group's id: an empty consumer group is deleted
        (`maybeDeleteEmptyConsumerGroup`: tombstones appended, not replayed) and the classic
        group created in its place; a non-empty one takes the member in."""
        if group.is_empty():
            tombstones = group.tombstone_records()
            self.groups.remove(group.group_id)
            result = self.classic.classic_group_join(ctx, request, response)
            return CoordinatorResult(tombstones + list(result.records), result.response,
                                     result.append_future, replay_records=False,
                                     is_atomic=result.is_atomic)
        return self._classic_join_to_consumer_group(group, ctx, request, response)

    def _classic_join_to_consumer_group(self, group: ConsumerGroup, ctx: RequestContext,
                                        request: JoinGroupRequest,
                                        response: CoordinatorFuture[JoinGroupResponse]
                                        ) -> CoordinatorResult[Any]:
        now = self.time.now
        records: list[CoordinatorRecord] = []
        group_id = request.group_id
        instance_id = request.group_instance_id
        unknown = request.member_id == UNKNOWN_MEMBER_ID
        member_id = self._new_member_id() if unknown else request.member_id  # type: ignore
        max_size = self.config.consumer_group_max_size
        if group.num_members() >= max_size and (member_id == "" or
                                                not group.has_member(member_id)):
            raise Errors.GROUP_MAX_SIZE_REACHED.exception(
                f"The consumer group has reached its maximum capacity of {max_size} members.")
        if not group.supports_classic_protocols(request.protocol_type,
                                                {p.name for p in request.protocols}):
            raise Errors.INCONSISTENT_GROUP_PROTOCOL.exception(
                f"Member {member_id}'s protocols are not supported.")
        if unknown and instance_id is None and ctx.api_version >= 4:
            # JoinGroupRequest.requiresKnownMemberId
            response.complete(JoinGroupResponse(Errors.MEMBER_ID_REQUIRED, member_id=member_id))
            self.log.log("CG-CLASSIC-MEMBER-ID-REQUIRED", group=group_id, member=member_id)
            return CoordinatorResult([])

        if instance_id is None:
            member = group.get_or_maybe_create_member(member_id, True)
            self.log.log("CG-MEMBER-JOINS", group=group_id, member=member_id, protocol="classic")
        else:
            member = self._static_member(group, member_id, -1, instance_id, [],  # type: ignore
                                         unknown, records, classic=True)
        try:
            subscription = ConsumerProtocolSubscription.decode(request.protocols[0].metadata)
        except (SchemaError, ValueError, IndexError) as exc:
            raise Errors.UNKNOWN_SERVER_ERROR.exception(
                "Malformed embedded consumer protocol in subscription deserialization.") from exc

        updated = replace(
            member,
            instance_id=instance_id if instance_id is not None else member.instance_id,
            rack_id=subscription.rack_id if subscription.rack_id is not None
            else member.rack_id,
            rebalance_timeout_ms=(request.rebalance_timeout_ms
                                  if request.rebalance_timeout_ms != -1
                                  else member.rebalance_timeout_ms),
            subscribed_topic_names=frozenset(subscription.topics),
            client_id=ctx.client_id, client_host=ctx.client_host,
            classic_member_metadata=_classic_metadata(request.session_timeout_ms,
                                                      request.protocols))
        target_epoch, target = self._update_subscription_and_target(  # type: ignore
            group, member, updated, now, records)
        updated = self._maybe_reconcile(  # type: ignore
            group_id, updated, group, target_epoch, target,
            _to_topic_partitions(subscription.owned_partitions, self.topics), records)

        # 4. the last consumer-protocol member, static, replaced by this classic one: downgrade
        replaced = group.static_member_id(instance_id)
        downgrade = replaced is not None and \
            self._validate_online_downgrade_with_replaced_member(group, replaced)
        if downgrade:
            assert replaced is not None
            self._convert_to_classic_group(group, replaced, records, updated)

        assert updated.classic_member_metadata is not None
        answer = JoinGroupResponse(
            generation_id=updated.member_epoch, protocol_type=CONSUMER_PROTOCOL_TYPE,
            protocol_name=updated.classic_member_metadata.supported_protocols[0].name,
            member_id=updated.member_id)
        session_ms = request.session_timeout_ms
        rebalance_ms = request.rebalance_timeout_ms
        append: CoordinatorFuture[None] = CoordinatorFuture("classic-join-consumer-group")

        def on_append(f: CoordinatorFuture[None]) -> None:
            if f.failed():
                return
            self.timer.cancel(join_timeout_key(group_id, answer.member_id))
            if not downgrade:  # still a consumer group: its session and sync timeouts
                self._schedule_session_timeout(group_id, answer.member_id,  # type: ignore
                                               session_ms)
                self._schedule_sync_timeout(group_id, answer.member_id, rebalance_ms)
            response.complete(answer)
        append.add_done_callback(on_append)
        return CoordinatorResult(records, None, append, replay_records=not downgrade)

    # -- classic members: SyncGroup, Heartbeat --------------------------------------------------

    def _validate_consumer_group_member(self, group: ConsumerGroup, member_id: str,
                                        instance_id: str | None) -> ConsumerGroupMember:
        """`validateConsumerGroupMember`, then `throwIfMemberDoesNotUseClassicProtocol`."""
        if instance_id is None:
            member = group.get_or_maybe_create_member(member_id, False)
        else:
            found = group.static_member(instance_id)
            if found is None:
                raise Errors.UNKNOWN_MEMBER_ID.exception(
                    f"Member with instance id {instance_id} is not a member of group "
                    f"{group.group_id}.")
            self._check_instance_not_fenced(found, group.group_id, member_id,  # type: ignore
                                            instance_id)
            member = found
        if not member.use_classic_protocol:
            raise Errors.UNKNOWN_MEMBER_ID.exception(
                f"Member {member.member_id} does not use the classic protocol.")
        return member

    @staticmethod
    def _check_generation(member: ConsumerGroupMember, generation_id: int) -> None:
        """`throwIfGenerationIdUnmatched`."""
        if member.member_epoch != generation_id:
            raise Errors.ILLEGAL_GENERATION.exception(
                f"The request generation id {generation_id} is not equal to the member epoch "
                f"{member.member_epoch} of member {member.member_id}.")

    def classic_group_sync(self, group: ConsumerGroup, ctx: RequestContext,
                           request: SyncGroupRequest,
                           response: CoordinatorFuture[SyncGroupResponse]
                           ) -> CoordinatorResult[Any]:
        """`classicGroupSyncToConsumerGroup`: the member's assignment is its assigned
        partitions (the server's), serialized at its subscription's version; the leader's
        assignments in the request are ignored."""
        if group.is_empty():  # classicGroupSync: an empty group knows no member
            response.complete(SyncGroupResponse(Errors.UNKNOWN_MEMBER_ID))
            return CoordinatorResult([])
        group_id, member_id = request.group_id, request.member_id
        member = self._validate_consumer_group_member(group, member_id,
                                                      request.group_instance_id)
        self._check_generation(member, request.generation_id)
        meta = member.classic_member_metadata
        assert meta is not None
        protocol_name = meta.supported_protocols[0].name
        if request.protocol_type is not None and \
                request.protocol_type != CONSUMER_PROTOCOL_TYPE:
            raise Errors.INCONSISTENT_GROUP_PROTOCOL.exception(
                f"The protocol type {request.protocol_type} from member {member.member_id} "
                f"request is not equal to the group protocol type {CONSUMER_PROTOCOL_TYPE}.")
        if request.protocol_name is not None and request.protocol_name != protocol_name:
            raise Errors.INCONSISTENT_GROUP_PROTOCOL.exception(
                f"The protocol name {request.protocol_name} from member {member.member_id} "
                f"request is not equal to the protocol name {protocol_name} returned in the "
                f"join response.")
        if group.group_epoch > member.member_epoch and \
                member.state is not MemberState.UNREVOKED_PARTITIONS:
            self._schedule_join_timeout_if_absent(group_id, member.member_id,
                                                  member.rebalance_timeout_ms)
            raise Errors.REBALANCE_IN_PROGRESS.exception(
                f"A new rebalance is triggered in group {group_id} and member "
                f"{member.member_id} should rejoin to catch up.")
        try:
            version = deserialize_version(meta.supported_protocols[0].metadata)
        except SchemaError as exc:
            raise Errors.UNKNOWN_SERVER_ERROR.exception(
                "Malformed embedded consumer protocol in version deserialization.") from exc
        answer = SyncGroupResponse(
            protocol_type=request.protocol_type, protocol_name=request.protocol_name,
            assignment=_serialize_assignment(member.assigned_partitions, self.topics, version))
        append: CoordinatorFuture[None] = CoordinatorFuture("classic-sync-consumer-group")

        def on_append(f: CoordinatorFuture[None]) -> None:
            if f.failed():
                return
            self.timer.cancel(sync_timeout_key(group_id, member_id))
            self._schedule_session_timeout(group_id, member_id,  # type: ignore
                                           meta.session_timeout_ms)
            response.complete(answer)
        append.add_done_callback(on_append)
        return CoordinatorResult([], None, append, replay_records=False)

    def classic_group_heartbeat(self, group: ConsumerGroup, ctx: RequestContext,
                                request: HeartbeatRequest) -> CoordinatorResult[Any]:
        """`classicGroupHeartbeatToConsumerGroup`: REBALANCE_IN_PROGRESS when the member should
        rejoin: the group epoch moved past it, it must revoke partitions, or partitions it
        waited for are free now."""
        member = self._validate_consumer_group_member(group, request.member_id,
                                                      request.group_instance_id)
        self._check_generation(member, request.generation_id)
        assert member.classic_member_metadata is not None
        self._schedule_session_timeout(group.group_id, member.member_id,  # type: ignore
                                       member.classic_member_metadata.session_timeout_ms)
        error = Errors.NONE
        if member.member_epoch < group.group_epoch or \
                member.state is MemberState.UNREVOKED_PARTITIONS or \
                (member.state is MemberState.UNRELEASED_PARTITIONS
                 and not group.waiting_on_unreleased_partition(member)):
            error = Errors.REBALANCE_IN_PROGRESS
            self._schedule_join_timeout_if_absent(group.group_id, member.member_id,
                                                  member.rebalance_timeout_ms)
        return CoordinatorResult([], HeartbeatResponse(error))

    # -- classic members: LeaveGroup (classicGroupLeaveToConsumerGroup) ------------------------

    def classic_group_leave(self, group: ConsumerGroup, request: LeaveGroupRequest
                            ) -> CoordinatorResult[Any]:
        """Each leaving classic member is removed (its records, its timers), or answers its
        error; if any left, the subscription metadata is refreshed and the group epoch
        bumped."""
        group_id = group.group_id
        out: list[MemberResponse] = []
        records: list[CoordinatorRecord] = []
        leaving: list[ConsumerGroupMember] = []
        for identity in request.members:
            member_id, instance_id = identity.member_id, identity.group_instance_id
            reason = identity.reason if identity.reason is not None else "not provided"
            try:
                if instance_id is None:
                    member = group.get_or_maybe_create_member(member_id, False)
                    self._require_classic(member)
                    self.log.log("CG-CLASSIC-LEFT", group=group_id, member=member_id,
                                 reason=reason)
                else:
                    found = group.static_member(instance_id)
                    if found is None:
                        raise Errors.UNKNOWN_MEMBER_ID.exception(
                            f"Instance id {instance_id} is unknown.")
                    if member_id != UNKNOWN_MEMBER_ID:
                        self._check_instance_not_fenced(found, group_id,  # type: ignore
                                                        member_id, instance_id)
                    self._require_classic(found)
                    member = found
                    member_id = member.member_id
                    self.log.log("CG-CLASSIC-STATIC-LEFT", group=group_id, member=member_id,
                                 instance=instance_id, reason=reason)
                self._remove_member_records(records, group_id, member_id)  # type: ignore
                self._cancel_timers(group_id, member_id)
                out.append(MemberResponse(member_id, instance_id))
                leaving.append(member)
            except KafkaError as exc:
                out.append(MemberResponse(member_id, instance_id, exc.error))
        if records:
            names = dict(group.subscribed_topic_names.items())
            for member in leaving:
                for name in member.subscribed_topic_names:
                    n = names.get(name, 0) - 1
                    if n > 0:
                        names[name] = n
                    else:
                        names.pop(name, None)
            metadata = group.compute_subscription_metadata(names, self.topics)
            if metadata != dict(group.subscription_metadata.items()):
                from .manager import _metadata_string
                self.log.log("CG-SUBSCRIPTION-METADATA-INFO", group=group_id,
                             metadata=_metadata_string(metadata))
                records.append(rec.new_consumer_group_subscription_metadata_record(
                    group_id, {n: (t.id, t.num_partitions) for n, t in metadata.items()}))
            records.append(rec.new_consumer_group_epoch_record(group_id, group.group_epoch + 1))
        return CoordinatorResult(records, LeaveGroupResponse(Errors.NONE, tuple(out)))

    @staticmethod
    def _require_classic(member: ConsumerGroupMember) -> None:
        if not member.use_classic_protocol:
            raise Errors.UNKNOWN_MEMBER_ID.exception(
                f"Member {member.member_id} does not use the classic protocol.")

    # -- timers ---------------------------------------------------------------------------------

    def _schedule_join_timeout_if_absent(self, group_id: str, member_id: str,
                                         rebalance_timeout_ms: int) -> None:
        """`scheduleConsumerGroupJoinTimeoutIfAbsent`."""
        self.timer.schedule_if_absent(
            join_timeout_key(group_id, member_id), rebalance_timeout_ms, True,
            lambda: self._fence_operation(  # type: ignore
                group_id, member_id,
                "the classic member failed to join within the rebalance timeout"))

    def _schedule_sync_timeout(self, group_id: str, member_id: str,
                               rebalance_timeout_ms: int) -> None:
        """`scheduleConsumerGroupSyncTimeout`."""
        self.timer.schedule(
            sync_timeout_key(group_id, member_id), rebalance_timeout_ms, True,
            lambda: self._fence_operation(  # type: ignore
                group_id, member_id, "the member failed to sync within timeout"))

    def _cancel_classic_timers(self, group_id: str, member_id: str) -> None:
        self.timer.cancel(join_timeout_key(group_id, member_id))
        self.timer.cancel(sync_timeout_key(group_id, member_id))

    def _cancel_timers(self, group_id: str, member_id: str) -> None:
        """`cancelTimers`: session, rebalance, join and sync."""
        from .manager import rebalance_timeout_key, session_timeout_key
        self.timer.cancel(session_timeout_key(group_id, member_id))
        self.timer.cancel(rebalance_timeout_key(group_id, member_id))
        self._cancel_classic_timers(group_id, member_id)

    # -- clean-up (maybeDeleteGroup) ------------------------------------------------------------

    def maybe_delete_group(self, group_id: str, records: list[CoordinatorRecord]) -> None:
        """The group's tombstones when it is Empty (`GroupMetadataManager.maybeDeleteGroup`,
        after the clean-up found none of its offsets left)."""
        group = self.groups.get(group_id)
        if group is not None and group.is_empty():
            records.extend(group.tombstone_records())
