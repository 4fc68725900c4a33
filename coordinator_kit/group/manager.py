"""Classic groups inside the coordinator shard (Kafka's `GroupMetadataManager`, classic paths).

Every handler runs as a write event of the group's `__consumer_offsets` partition. Following
Kafka, handlers mutate the (soft-state) `ClassicGroup` directly and write GroupMetadata records
with `replay_records=False`; JoinGroup and SyncGroup answer through a separate response future
that may complete long after the write (when the join phase ends, when the leader's assignment
commits). Timers: `heartbeat-<group>-<member>`, `join-<group>`, `sync-<group>`
(`classicGroupHeartbeatKey`, `classicGroupJoinKey`, `classicGroupSyncKey`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import Errors, KafkaError, handle_operation_exception
from ..runtime.future import CoordinatorFuture
from ..runtime.metadata import MetadataImage
from ..runtime.records import CoordinatorRecord
from ..runtime.shard import CoordinatorResult, CoordinatorTimer
from ..timeline import SnapshotRegistry, TimelineHashMap
from ..trace import LogContext
from . import records as rec
from .api import (HeartbeatRequest, HeartbeatResponse, JoinGroupRequest, JoinGroupResponse,
                  JoinGroupResponseMember, LeaveGroupRequest, LeaveGroupResponse, ListedGroup,
                  MemberResponse, RequestContext, SyncGroupRequest, SyncGroupResponse)
from .classic import (CLASSIC_GROUP_TYPE, UNKNOWN_MEMBER_ID, ClassicGroup, ClassicGroupMember,
                      ClassicGroupState, Protocol)
from .config import NEW_MEMBER_JOIN_TIMEOUT_MS, GroupCoordinatorConfig

__all__ = ["GroupMetadataManager"]

E, P, C, S, D = (ClassicGroupState.EMPTY, ClassicGroupState.PREPARING_REBALANCE,
                 ClassicGroupState.COMPLETING_REBALANCE, ClassicGroupState.STABLE,
                 ClassicGroupState.DEAD)

EMPTY_RESULT: CoordinatorResult[Any] = CoordinatorResult([])
# Responses are immutable: the common heartbeat answers are made once.
_HEARTBEAT_OK = HeartbeatResponse(Errors.NONE)
_HEARTBEAT_REBALANCING = HeartbeatResponse(Errors.REBALANCE_IN_PROGRESS)
_HEARTBEAT_UNKNOWN_MEMBER = HeartbeatResponse(Errors.UNKNOWN_MEMBER_ID)
# A heartbeat writes no records, so its result is one of three, made once (as EMPTY_RESULT;
# the runtime only reads a result).
_HEARTBEAT_OK_RESULT = CoordinatorResult([], _HEARTBEAT_OK)
_HEARTBEAT_REBALANCING_RESULT = CoordinatorResult([], _HEARTBEAT_REBALANCING)
_HEARTBEAT_UNKNOWN_MEMBER_RESULT = CoordinatorResult([], _HEARTBEAT_UNKNOWN_MEMBER)


def heartbeat_key(group_id: str, member_id: str) -> str:
    return f"heartbeat-{group_id}-{member_id}"


def join_key(group_id: str) -> str:
    return f"join-{group_id}"


def sync_key(group_id: str) -> str:
    return f"sync-{group_id}"


def join_reason(request: JoinGroupRequest) -> str:
    return request.reason if request.reason else "not provided"


def _java_set(items: Any) -> str:
    return "[" + ", ".join(items) + "]"


class GroupMetadataManager:
    def __init__(self, log: LogContext, registry: SnapshotRegistry, timer: CoordinatorTimer,
                 time: Any, config: GroupCoordinatorConfig, rng: random.Random) -> None:
        self.log = log
        self.timer = timer
        self.time = time
        self.config = config
        self.rng = rng
        self.groups: TimelineHashMap[str, ClassicGroup] = TimelineHashMap(registry)
        self.image: MetadataImage = MetadataImage.EMPTY  # type: ignore[attr-defined]
        # Called when a member is removed, so the offset manager can see it (hooks for views).
        self.listeners: list[Callable[[str, str, str], None]] = []

    @property
    def now(self) -> int:
        return self.time.now

    # -- lookup --------------------------------------------------------------------------------

    def group(self, group_id: str, committed_offset: int | None = None) -> ClassicGroup | None:
        return self.groups.get(group_id, epoch=committed_offset)

    def get_or_maybe_create_group(self, group_id: str, create: bool) -> ClassicGroup:
        group = self.groups.get(group_id)
        if group is None:
            if not create:
                raise Errors.GROUP_ID_NOT_FOUND.exception(f"Classic group {group_id} not found.")
            group = ClassicGroup(group_id, self.now, self.rng)
            self.groups.put(group_id, group)
        return group

    # -- admin (listGroups, validateDeleteGroup, createGroupTombstoneRecords, maybeDeleteGroup)

    def list_groups(self, states_filter: Iterable[str], types_filter: Iterable[str],
                    committed_offset: int | None) -> list[ListedGroup]:
        """The groups as of `committed_offset` that pass both filters (an empty filter passes
        everything): states compared lower-cased and trimmed, types by Kafka's names (an
        unknown type name matches no group) (`GroupMetadataManager.listGroups`)."""
        states = {s.lower().strip() for s in states_filter}
        types = {t.lower() for t in types_filter}
        return [ListedGroup(gid, g.protocol_type or "", g.state.value, CLASSIC_GROUP_TYPE)
                for gid, g in self.groups.items(epoch=committed_offset)
                if (not states or g.is_in_states(states))
                and (not types or CLASSIC_GROUP_TYPE in types)]

    def group_or_raise(self, group_id: str) -> ClassicGroup:
        """The group, or GROUP_ID_NOT_FOUND (`GroupMetadataManager.group`)."""
        group = self.groups.get(group_id)
        if group is None:
            raise Errors.GROUP_ID_NOT_FOUND.exception(f"Group {group_id} not found.")
        return group

    def validate_delete_group(self, group_id: str) -> None:
        self.group_or_raise(group_id).validate_delete_group()

    def create_group_tombstone_records(self, group_id: str,
                                       records: list[CoordinatorRecord]) -> None:
        records.append(rec.new_group_metadata_tombstone(group_id))

    def maybe_delete_group(self, group_id: str, records: list[CoordinatorRecord]) -> None:
        """A tombstone for the group when it is Empty (`GroupMetadataManager.maybeDeleteGroup`,
        after the clean-up found no offsets left)."""
        group = self.groups.get(group_id)
        if group is not None and group.state is E:
            self.create_group_tombstone_records(group_id, records)

    # -- records -------------------------------------------------------------------------------

    def group_metadata_record(self, group: ClassicGroup,
                              assignment: dict[str, bytes]) -> CoordinatorRecord:
        """GroupMetadata with every member, its subscription and assignment (value v3)."""
        members = [{
            "memberId": m.member_id, "groupInstanceId": m.group_instance_id,
            "clientId": m.client_id, "clientHost": m.client_host,
            "rebalanceTimeout": m.rebalance_timeout_ms, "sessionTimeout": m.session_timeout_ms,
            "subscription": m.metadata(group.protocol_name) if group.protocol_name else b"",
            "assignment": assignment.get(m.member_id, b"")}
            for m in group.members.values()]
        return rec.new_group_metadata_record(
            group.group_id, group.protocol_type or "", group.generation_id, group.protocol_name,
            group.leader_id, group.current_state_timestamp, members)

    def empty_group_metadata_record(self, group: ClassicGroup) -> CoordinatorRecord:
        """Kafka's `newEmptyGroupMetadataRecord`: commits a group's existence, no members."""
        return rec.new_group_metadata_record(group.group_id, group.protocol_type or "",
                                             group.generation_id, None, None,
                                             group.current_state_timestamp, [])

    # -- JoinGroup (classicGroupJoin) ----------------------------------------------------------

    def classic_group_join(self, ctx: RequestContext, request: JoinGroupRequest,
                           response: CoordinatorFuture[JoinGroupResponse]
                           ) -> CoordinatorResult[None]:
        group_id = request.group_id
        unknown = request.member_id == UNKNOWN_MEMBER_ID
        is_new_group = group_id not in self.groups
        try:
            group = self.get_or_maybe_create_group(group_id, unknown)
        except KafkaError:
            response.complete(JoinGroupResponse(Errors.UNKNOWN_MEMBER_ID,
                                                member_id=request.member_id))
            return EMPTY_RESULT
        result: CoordinatorResult[None] = EMPTY_RESULT
        if not self._accept_joining_member(group, request.member_id):
            group.remove(request.member_id)
            response.complete(JoinGroupResponse(Errors.GROUP_MAX_SIZE_REACHED,
                                                member_id=UNKNOWN_MEMBER_ID))
        elif unknown:
            result = self._join_new_member(ctx, request, group, response)
        else:
            result = self._join_existing_member(request, group, response)

        if is_new_group and result is EMPTY_RESULT:
            # Commit the new group's existence; if the append fails, the revert removes it.
            append: CoordinatorFuture[None] = CoordinatorFuture("empty-group-metadata")

            def on_append(f: CoordinatorFuture[None]) -> None:
                if f.failed():
                    error = _append_error(f.exception())
                    self.log.log("G-EMPTY-META-FAIL", group=group_id, error=_message(f))
                    response.complete(JoinGroupResponse(error))

            append.add_done_callback(on_append)
            return CoordinatorResult([self.empty_group_metadata_record(group)], None, append,
                                     replay_records=False)
        return result

    def _accept_joining_member(self, group: ClassicGroup, member_id: str) -> bool:
        max_size = self.config.group_max_size
        if group.state in (E, D):
            return True
        if group.state is P:
            return ((group.has_member(member_id) and group.member(member_id).is_awaiting_join)
                    or group.num_members_awaiting_join < max_size)
        return group.has_member(member_id) or len(group.members) < max_size

    def _join_new_member(self, ctx: RequestContext, request: JoinGroupRequest,
                         group: ClassicGroup, response: CoordinatorFuture[JoinGroupResponse]
                         ) -> CoordinatorResult[None]:
        if group.state is D:
            response.complete(JoinGroupResponse(Errors.COORDINATOR_NOT_AVAILABLE,
                                                member_id=UNKNOWN_MEMBER_ID))
            return EMPTY_RESULT
        if not group.supports_protocols(request.protocol_type, request.protocols):
            response.complete(JoinGroupResponse(Errors.INCONSISTENT_GROUP_PROTOCOL,
                                                member_id=UNKNOWN_MEMBER_ID))
            return EMPTY_RESULT
        new_id = group.generate_member_id(ctx.client_id, request.group_instance_id)
        if request.group_instance_id is not None:
            existing = group.static_member_id(request.group_instance_id)
            if existing is not None:
                self.log.log("G-STATIC-REPLACE", instance=request.group_instance_id,
                             group=group.group_id, state=group.state, old_member=existing)
                return self._update_static_member(ctx, request, group, existing, new_id, response)
            self.log.log("G-STATIC-NEW", instance=request.group_instance_id, group=group.group_id,
                         state=group.state, member=new_id)
            return self._add_member(ctx, request, group, new_id, response)
        if ctx.api_version >= 4:
            self.log.log("G-DYN-JOIN-REQ", group=group.group_id, state=group.state, member=new_id)
            group.pending_join_members.add(new_id)
            self._schedule_heartbeat(group.group_id, new_id, request.session_timeout_ms)
            response.complete(JoinGroupResponse(Errors.MEMBER_ID_REQUIRED, member_id=new_id))
            return EMPTY_RESULT
        self.log.log("G-DYN-JOIN-ADD", group=group.group_id, state=group.state, member=new_id)
        return self._add_member(ctx, request, group, new_id, response)

    def _join_existing_member(self, request: JoinGroupRequest, group: ClassicGroup,
                              response: CoordinatorFuture[JoinGroupResponse]
                              ) -> CoordinatorResult[None]:
        member_id = request.member_id
        if group.state is D:
            response.complete(JoinGroupResponse(Errors.COORDINATOR_NOT_AVAILABLE,
                                                member_id=member_id))
            return EMPTY_RESULT
        if not group.supports_protocols(request.protocol_type, request.protocols):
            response.complete(JoinGroupResponse(Errors.INCONSISTENT_GROUP_PROTOCOL,
                                                member_id=member_id))
            return EMPTY_RESULT
        if group.is_pending_member(member_id):
            if request.group_instance_id is not None:
                raise RuntimeError(f"Received unexpected JoinGroup with groupInstanceId="
                                   f"{request.group_instance_id} for pending member with "
                                   f"memberId={member_id}")
            self.log.log("G-PEND-JOIN", member=member_id, group=group.group_id, state=group.state)
            return self._add_member(None, request, group, member_id, response)
        try:
            self._validate_member(group, member_id, request.group_instance_id, "join-group")
        except KafkaError as exc:
            response.complete(JoinGroupResponse(exc.error, member_id=member_id))
            return EMPTY_RESULT
        member = group.member(member_id)
        reason = join_reason(request)
        if group.state is P:
            return self._update_member(request, group, member,
                                       f"Member {member_id} is joining group during "
                                       f"{group.state}; client reason: {reason}", response)
        if group.state is C:
            if member.matches(request.protocols):
                response.complete(self._join_response(
                    group, member_id, leader_view=group.is_leader(member_id)))
                return EMPTY_RESULT
            return self._update_member(request, group, member,
                                       f"Updating metadata for member {member_id} during "
                                       f"{group.state}; client reason: {reason}", response)
        if group.state is S:
            if group.is_leader(member_id):
                return self._update_member(request, group, member,
                                           f"Leader {member_id} re-joining group during "
                                           f"{group.state}; client reason: {reason}", response)
            if not member.matches(request.protocols):
                return self._update_member(request, group, member,
                                           f"Updating metadata for member {member_id} during "
                                           f"{group.state}; client reason: {reason}", response)
            response.complete(self._join_response(group, member_id, leader_view=False))
            return EMPTY_RESULT
        response.complete(JoinGroupResponse(Errors.UNKNOWN_MEMBER_ID, member_id=member_id))
        return EMPTY_RESULT

    def _join_response(self, group: ClassicGroup, member_id: str, *, leader_view: bool,
                       skip_assignment: bool = False) -> JoinGroupResponse:
        members = tuple(JoinGroupResponseMember(*m) for m in group.current_members_for_leader()) \
            if leader_view else ()
        return JoinGroupResponse(Errors.NONE, group.generation_id, group.protocol_type,
                                 group.protocol_name, group.leader_id or "", skip_assignment,
                                 member_id, members)

    def _validate_member(self, group: ClassicGroup, member_id: str, instance_id: str | None,
                         operation: str) -> None:
        existing = group.static_member_id(instance_id)
        if instance_id is not None and existing is not None and existing != member_id:
            self.log.log("G-STATIC-FENCED", member=member_id, instance=instance_id,
                         existing=existing, operation=operation)
        group.validate_member(member_id, instance_id)

    def _add_member(self, ctx: RequestContext | None, request: JoinGroupRequest,
                    group: ClassicGroup, member_id: str,
                    response: CoordinatorFuture[JoinGroupResponse]) -> CoordinatorResult[None]:
        client_id = ctx.client_id if ctx is not None else member_id.rsplit("-", 5)[0]
        client_host = ctx.client_host if ctx is not None else "/127.0.0.1"
        member = ClassicGroupMember(member_id, request.group_instance_id, client_id, client_host,
                                    request.rebalance_timeout_ms, request.session_timeout_ms,
                                    request.protocol_type, list(request.protocols), is_new=True)
        if group.state is P and group.previous_state is E:
            group.new_member_added = True
        group.add(member, response)
        self._schedule_heartbeat(group.group_id, member_id, NEW_MEMBER_JOIN_TIMEOUT_MS)
        instance = request.group_instance_id if request.group_instance_id is not None else "null"
        return self._maybe_prepare_rebalance_or_complete_join(
            group, f"Adding new member {member_id} with group instance id {instance}; client "
                   f"reason: {join_reason(request)}")

    def _update_member(self, request: JoinGroupRequest, group: ClassicGroup,
                       member: ClassicGroupMember, reason: str,
                       response: CoordinatorFuture[JoinGroupResponse]) -> CoordinatorResult[None]:
        group.update_member(member, request.protocols, request.rebalance_timeout_ms,
                            request.session_timeout_ms, response)
        return self._maybe_prepare_rebalance_or_complete_join(group, reason)

    def _update_static_member(self, ctx: RequestContext, request: JoinGroupRequest,
                              group: ClassicGroup, old_id: str, new_id: str,
                              response: CoordinatorFuture[JoinGroupResponse]
                              ) -> CoordinatorResult[None]:
        """A static member restarted with the same group.instance.id
        (`updateStaticMemberThenRebalanceOrCompleteJoin`)."""
        current_leader = group.leader_id
        new = group.replace_static_member(request.group_instance_id or "", old_id, new_id)
        self.reschedule_heartbeat(group, new)
        old_rebalance, old_session = new.rebalance_timeout_ms, new.session_timeout_ms
        old_protocols = list(new.supported_protocols)
        group.update_member(new, request.protocols, request.rebalance_timeout_ms,
                            request.session_timeout_ms, response)
        instance = request.group_instance_id
        if group.state is S:
            if (group.protocol_name or "") == group.select_protocol():
                self.log.log("G-STATIC-NO-REBALANCE")
                assignment = group.group_assignment()
                append: CoordinatorFuture[None] = CoordinatorFuture("static-member-rejoin")

                def on_append(f: CoordinatorFuture[None]) -> None:
                    if f.failed():
                        group.update_member(new, old_protocols, old_rebalance, old_session, None)
                        old = group.replace_static_member(instance or "", new_id, old_id)
                        self.reschedule_heartbeat(group, old)
                        response.complete(JoinGroupResponse(
                            _append_error(f.exception()), group.generation_id,
                            group.protocol_type, group.protocol_name, current_leader or "",
                            False, UNKNOWN_MEMBER_ID))
                    elif ctx.api_version >= 9:
                        leader = group.is_leader(new_id)
                        group.complete_join_future(new, self._join_response(
                            group, new_id, leader_view=leader, skip_assignment=leader))
                    else:
                        group.complete_join_future(new, JoinGroupResponse(
                            Errors.NONE, group.generation_id, group.protocol_type,
                            group.protocol_name, current_leader or "", False, new_id))

                append.add_done_callback(on_append)
                return CoordinatorResult([self.group_metadata_record(group, assignment)], None,
                                         append, replay_records=False)
            return self._maybe_prepare_rebalance_or_complete_join(
                group, f"Group's selectedProtocol will change because static member {new_id} with "
                       f"instance id {instance} joined with change of protocol; client reason: "
                       f"{join_reason(request)}")
        if group.state is C:
            return self.prepare_rebalance(
                group, f"Updating metadata for static member {new_id} with instance id "
                       f"{instance}; client reason: {join_reason(request)}")
        return self._maybe_complete_join_phase(group)

    # -- rebalance machinery -------------------------------------------------------------------

    def _maybe_prepare_rebalance_or_complete_join(self, group: ClassicGroup,
                                                  reason: str) -> CoordinatorResult[None]:
        if group.can_rebalance():
            return self.prepare_rebalance(group, reason)
        return self._maybe_complete_join_phase(group)

    def prepare_rebalance(self, group: ClassicGroup, reason: str) -> CoordinatorResult[None]:
        if group.state is C:
            self._reset_and_propagate_assignment_with_error(group, Errors.REBALANCE_IN_PROGRESS)
        group.pending_sync_members.clear()
        self.timer.cancel(sync_key(group.group_id))
        initial = group.state is E
        if initial:
            delay = self.config.group_initial_rebalance_delay_ms
            remaining = max(self._rebalance_timeout(group) - delay, 0)
            self.timer.schedule(join_key(group.group_id), delay, False,
                                self._initial_rebalance_timer(group.group_id, delay, remaining))
        group.transition_to(P, self.now)
        self.log.log("G-REBAL", group=group.group_id, state=group.state,
                     generation=group.generation_id, reason=reason)
        return EMPTY_RESULT if initial else self._maybe_complete_join_else_schedule(group)

    def _rebalance_timeout(self, group: ClassicGroup) -> int:
        return max((m.rebalance_timeout_ms for m in group.members.values()), default=0)

    def _initial_rebalance_timer(self, group_id: str, delay: int,
                                 remaining: int) -> Callable[[], CoordinatorResult[None]]:
        def fire() -> CoordinatorResult[None]:
            group = self.groups.get(group_id)
            if group is None:
                return EMPTY_RESULT
            if group.new_member_added and remaining != 0:
                group.new_member_added = False
                new_delay = min(self.config.group_initial_rebalance_delay_ms, remaining)
                new_remaining = max(remaining - delay, 0)
                self.timer.schedule(join_key(group_id), new_delay, False,
                                    self._initial_rebalance_timer(group_id, new_delay,
                                                                  new_remaining))
                return EMPTY_RESULT
            return self.complete_join(group)
        return fire

    def _maybe_complete_join_else_schedule(self, group: ClassicGroup) -> CoordinatorResult[None]:
        if group.has_all_members_joined():
            return self.complete_join(group)
        self.timer.schedule(join_key(group.group_id), self._rebalance_timeout(group), False,
                            self._complete_join_timer(group.group_id))
        return EMPTY_RESULT

    def _complete_join_timer(self, group_id: str) -> Callable[[], CoordinatorResult[None]]:
        def fire() -> CoordinatorResult[None]:
            group = self.groups.get(group_id)
            return EMPTY_RESULT if group is None else self.complete_join(group)
        return fire

    def _maybe_complete_join_phase(self, group: ClassicGroup) -> CoordinatorResult[None]:
        if group.state is not P or group.previous_state is E or \
                not group.has_all_members_joined():
            return EMPTY_RESULT
        return self.complete_join(group)

    def complete_join(self, group: ClassicGroup) -> CoordinatorResult[None]:
        """End the join phase: drop dynamic stragglers, next generation, answer every join."""
        gid = group.group_id
        self.timer.cancel(join_key(gid))
        stragglers = [m for m in group.not_yet_rejoined_members() if not m.is_static]
        if stragglers:
            for m in stragglers:
                group.remove(m.member_id)
                self.timer.cancel(heartbeat_key(gid, m.member_id))
            self.log.log("G-REMOVED-NOT-JOINED", group=gid,
                         members=_java_set(m.member_id for m in stragglers))
        if group.state is D:
            return EMPTY_RESULT
        previous_leader = group.leader_id
        if not self._elect_joined_leader(group, previous_leader) and group.members:
            self.log.log("G-NO-REJOIN", group=gid)
            self.timer.schedule(join_key(gid), self._rebalance_timeout(group), False,
                                self._complete_join_timer(gid))
            return EMPTY_RESULT
        group.init_next_generation(self.now)
        if group.state is E:
            self.log.log("G-EMPTY", group=gid, generation=group.generation_id)
            append: CoordinatorFuture[None] = CoordinatorFuture("empty-group")

            def on_append(f: CoordinatorFuture[None]) -> None:
                if f.failed():
                    self.log.log("G-EMPTY-META-FAIL", group=gid,
                                 error=_append_error(f.exception()).message)

            append.add_done_callback(on_append)
            return CoordinatorResult([self.group_metadata_record(group, {})], None, append,
                                     replay_records=False)
        self.log.log("G-STAB", group=gid, generation=group.generation_id,
                     members=len(group.members))
        for member in list(group.members.values()):
            group.complete_join_future(member, self._join_response(
                group, member.member_id, leader_view=group.is_leader(member.member_id)))
            self.reschedule_heartbeat(group, member)
            member.is_new = False
            group.pending_sync_members.add(member.member_id)
        generation = group.generation_id
        self.timer.schedule(sync_key(gid), self._rebalance_timeout(group), False,
                            lambda: self._expire_pending_sync(gid, generation))
        return EMPTY_RESULT

    def _elect_joined_leader(self, group: ClassicGroup, previous: str | None) -> bool:
        elected = group.maybe_elect_new_joined_leader()
        if previous is not None and group.leader_id != previous and elected:
            old = group.members.get(previous)
            self.log.log("G-LEADER-REELECTED", old_leader=previous,
                         instance=None if old is None else old.group_instance_id,
                         member=group.leader_id)
        return elected

    def _expire_pending_sync(self, group_id: str, generation: int) -> CoordinatorResult[None]:
        group = self.groups.get(group_id)
        if group is None or generation != group.generation_id:
            return EMPTY_RESULT
        if group.state in (C, S) and not group.has_received_sync_from_all_members():
            pending = sorted(group.pending_sync_members)
            for member_id in pending:
                group.remove(member_id)
                self.timer.cancel(heartbeat_key(group_id, member_id))
            self.log.log("G-SYNC-EXPIRED", group=group_id, members=_java_set(pending))
            return self.prepare_rebalance(
                group, f"Removing {_java_set(pending)} on pending sync request expiration")
        return EMPTY_RESULT

    def _reset_and_propagate_assignment_with_error(self, group: ClassicGroup,
                                                   error: Errors) -> None:
        for m in group.members.values():
            m.assignment = b""
        self._propagate_assignment(group, error)

    def _propagate_assignment(self, group: ClassicGroup, error: Errors) -> None:
        ok = error is Errors.NONE
        for m in list(group.members.values()):
            response = SyncGroupResponse(error, group.protocol_type if ok else None,
                                         group.protocol_name if ok else None, m.assignment)
            if group.complete_sync_future(m, response):
                self.reschedule_heartbeat(group, m)

    # -- heartbeats and session expiry (classicGroupHeartbeat, expireClassicGroupMemberHeartbeat)

    def _schedule_heartbeat(self, group_id: str, member_id: str, timeout_ms: int) -> None:
        key = heartbeat_key(group_id, member_id)
        # a pending session timeout of this key already expires this member: push it back
        if not self.timer.reschedule(key, timeout_ms):
            self.timer.schedule(key, timeout_ms, False,
                                lambda: self._expire_heartbeat(group_id, member_id))

    def reschedule_heartbeat(self, group: ClassicGroup, member: ClassicGroupMember) -> None:
        """Push a member's session timeout back (a heartbeat, a join or sync, and a classic
        member's offset commit, as Kafka's commitOffset does)."""
        self._schedule_heartbeat(group.group_id, member.member_id, member.session_timeout_ms)

    def _expire_heartbeat(self, group_id: str, member_id: str) -> CoordinatorResult[None]:
        group = self.groups.get(group_id)
        if group is None or group.state is D:
            return EMPTY_RESULT
        if group.is_pending_member(member_id):
            self.log.log("G-PEND-EXP", member=member_id, group=group_id)
            group.remove(member_id)
            if group.state is P and group.has_all_members_joined():
                return self.complete_join(group)
            return EMPTY_RESULT
        if not group.has_member(member_id):
            return EMPTY_RESULT
        member = group.member(member_id)
        if member.has_satisfied_heartbeat():
            return EMPTY_RESULT
        self.log.log("G-FAIL", member=member_id, group=group_id)
        for listener in self.listeners:
            listener(group_id, member_id, "session_timeout")
        return self._remove_member_and_update(
            group, member, f"removing member {member_id} on heartbeat expiration.")

    def _remove_member_and_update(self, group: ClassicGroup, member: ClassicGroupMember,
                                  reason: str) -> CoordinatorResult[None]:
        group.complete_join_future(member, JoinGroupResponse(Errors.UNKNOWN_MEMBER_ID,
                                                             member_id=UNKNOWN_MEMBER_ID))
        group.remove(member.member_id)
        if group.state in (S, C):
            return self._maybe_prepare_rebalance_or_complete_join(group, reason)
        if group.state is P and group.has_all_members_joined():
            return self.complete_join(group)
        return EMPTY_RESULT

    def classic_group_heartbeat(self, ctx: RequestContext, request: HeartbeatRequest
                                ) -> CoordinatorResult[HeartbeatResponse]:
        group = self.groups.get(request.group_id)
        if group is None:
            raise Errors.UNKNOWN_MEMBER_ID.exception(f"Group {request.group_id} not found.")
        if group.state is D:
            raise Errors.COORDINATOR_NOT_AVAILABLE.exception()
        member = group.members.get(request.member_id)
        if member is None or request.group_instance_id is not None:
            # only a dynamic member the group knows skips this (nothing to refuse or log)
            self._validate_member(group, request.member_id, request.group_instance_id,
                                  "heartbeat")
        if request.generation_id != group.generation_id:
            raise Errors.ILLEGAL_GENERATION.exception(
                f"The request generation id {request.generation_id} is not equal to the group "
                f"generation id {group.generation_id}.")
        if group.state is E:
            return _HEARTBEAT_UNKNOWN_MEMBER_RESULT
        member = group.members[request.member_id]
        self.reschedule_heartbeat(group, member)
        if group.state is P:
            return _HEARTBEAT_REBALANCING_RESULT
        return _HEARTBEAT_OK_RESULT

    # -- SyncGroup (classicGroupSync) ----------------------------------------------------------

    def classic_group_sync(self, ctx: RequestContext, request: SyncGroupRequest,
                           response: CoordinatorFuture[SyncGroupResponse]
                           ) -> CoordinatorResult[None]:
        group = self.groups.get(request.group_id)
        if group is None or group.state is E:
            response.complete(SyncGroupResponse(Errors.UNKNOWN_MEMBER_ID))
            return EMPTY_RESULT
        error = self._validate_sync(group, request)
        member_id = request.member_id
        if error is not None:
            response.complete(SyncGroupResponse(error))
        elif group.state is P:
            response.complete(SyncGroupResponse(Errors.REBALANCE_IN_PROGRESS))
        elif group.state is C:
            group.member(member_id).awaiting_sync_future = response
            self._remove_pending_sync_member(group, member_id)
            if group.is_leader(member_id):
                self.log.log("G-ASSIGN", member=member_id, group=group.group_id,
                             generation=group.generation_id, members=len(group.members),
                             static=len(group.static_member_ids()))
                assignment = dict(request.assignments)
                missing = [m for m in group.members if m not in assignment]
                for m in missing:
                    assignment[m] = b""
                if missing:
                    self.log.log("G-EMPTY-ASSIGN", members=_java_set(missing),
                                 group=group.group_id, generation=group.generation_id)
                append: CoordinatorFuture[None] = CoordinatorFuture("sync-assignment")
                generation = request.generation_id

                def on_append(f: CoordinatorFuture[None]) -> None:
                    if group.state is not C or generation != group.generation_id:
                        return
                    if f.failed():
                        err = _append_error(f.exception())
                        self._reset_and_propagate_assignment_with_error(group, err)
                        self._maybe_prepare_rebalance_or_complete_join(
                            group, f"Error {err.name} when storing group assignmentduring "
                                   f"SyncGroup (member: {member_id}).")
                    else:
                        for m in group.members.values():
                            m.assignment = assignment.get(m.member_id, b"")
                        self._propagate_assignment(group, Errors.NONE)
                        group.transition_to(S, self.now)

                append.add_done_callback(on_append)
                return CoordinatorResult([self.group_metadata_record(group, assignment)], None,
                                         append, replay_records=False)
        elif group.state is S:
            self._remove_pending_sync_member(group, member_id)
            response.complete(SyncGroupResponse(Errors.NONE, group.protocol_type,
                                                group.protocol_name,
                                                group.member(member_id).assignment))
        return EMPTY_RESULT

    def _validate_sync(self, group: ClassicGroup, request: SyncGroupRequest) -> Errors | None:
        if group.state is D:
            return Errors.COORDINATOR_NOT_AVAILABLE
        try:
            self._validate_member(group, request.member_id, request.group_instance_id,
                                  "sync-group")
        except KafkaError as exc:
            return exc.error
        if request.generation_id != group.generation_id:
            return Errors.ILLEGAL_GENERATION
        if (request.protocol_type is not None and request.protocol_type != group.protocol_type) \
                or (request.protocol_name is not None
                    and request.protocol_name != group.protocol_name):
            return Errors.INCONSISTENT_GROUP_PROTOCOL
        return None

    def _remove_pending_sync_member(self, group: ClassicGroup, member_id: str) -> None:
        group.pending_sync_members.discard(member_id)
        if group.state in (D, E, P) or group.has_received_sync_from_all_members():
            self.timer.cancel(sync_key(group.group_id))

    # -- LeaveGroup (classicGroupLeave) --------------------------------------------------------

    def classic_group_leave(self, ctx: RequestContext, request: LeaveGroupRequest
                            ) -> CoordinatorResult[LeaveGroupResponse]:
        group = self.groups.get(request.group_id)
        if group is None:
            raise Errors.UNKNOWN_MEMBER_ID.exception(f"Group {request.group_id} not found.")
        if group.state is D:
            return CoordinatorResult([], LeaveGroupResponse(Errors.COORDINATOR_NOT_AVAILABLE))
        responses = []
        for identity in request.members:
            reason = identity.reason if identity.reason else "not provided"
            mid, iid = identity.member_id, identity.group_instance_id
            if mid == UNKNOWN_MEMBER_ID:
                if iid is not None and iid in group.static_members:
                    self._remove_current_member(group, group.static_members[iid], reason)
                    responses.append(MemberResponse(mid, iid))
                else:
                    responses.append(MemberResponse(mid, iid, Errors.UNKNOWN_MEMBER_ID))
            elif group.is_pending_member(mid):
                group.remove(mid)
                self.timer.cancel(heartbeat_key(group.group_id, mid))
                self.log.log("G-LEAVE-PENDING", group=group.group_id, member=mid, reason=reason)
                responses.append(MemberResponse(mid, iid))
            else:
                try:
                    self._validate_member(group, mid, iid, "leave-group")
                    self._remove_current_member(group, mid, reason)
                    responses.append(MemberResponse(mid, iid))
                except KafkaError as exc:
                    responses.append(MemberResponse(mid, iid, exc.error))
        left = [r.member_id for r in responses if r.error is Errors.NONE]
        result: CoordinatorResult[None] = EMPTY_RESULT
        if left:
            reason = f"explicit `LeaveGroup` request for ({', '.join(left)}) members."
            if group.state in (S, C):
                result = self._maybe_prepare_rebalance_or_complete_join(group, reason)
            elif group.state is P:
                result = self._maybe_complete_join_phase(group)
        return CoordinatorResult(result.records, LeaveGroupResponse(Errors.NONE, tuple(responses)),
                                 result.append_future, result.replay_records)

    def _remove_current_member(self, group: ClassicGroup, member_id: str, reason: str) -> None:
        member = group.member(member_id)
        self.timer.cancel(heartbeat_key(group.group_id, member_id))
        self.log.log("G-LEAVE", group=group.group_id, member=member_id, reason=reason)
        for listener in self.listeners:
            listener(group.group_id, member_id, "leave")
        group.complete_join_future(member, JoinGroupResponse(Errors.UNKNOWN_MEMBER_ID,
                                                             member_id=UNKNOWN_MEMBER_ID))
        group.remove(member_id)

    # -- replay, load and unload (replay, onLoaded, onUnloaded) --------------------------------

    def replay_group_metadata(self, group_id: str, value: dict[str, Any] | None) -> None:
        if value is None:
            self.groups.remove(group_id)
            return
        members = value.get("members") or []
        group = ClassicGroup(group_id, self.now, self.rng, S if members else E)
        group.previous_state = E if members else D
        group.generation_id = value["generation"]
        group.protocol_type = value.get("protocolType") or None
        group.protocol_name = value.get("protocol")
        group.leader_id = value.get("leader")
        ts = value.get("currentStateTimestamp", -1)
        group.current_state_timestamp = None if ts is None or ts < 0 else ts
        for m in members:
            session = m["sessionTimeout"]
            rebalance = m.get("rebalanceTimeout", -1)
            member = ClassicGroupMember(
                m["memberId"], m.get("groupInstanceId"), m["clientId"], m["clientHost"],
                session if rebalance == -1 else rebalance, session,
                group.protocol_type or "",
                [Protocol(group.protocol_name or "", m.get("subscription") or b"")],
                m.get("assignment") or b"")
            group.members[member.member_id] = member
            group.supported_protocols.update(p.name for p in member.supported_protocols)
            if member.group_instance_id is not None:
                group.static_members[member.group_instance_id] = member.member_id
        group.subscribed_topics = group.compute_subscribed_topics()
        self.groups.put(group_id, group)

    def on_loaded(self, image: MetadataImage) -> None:
        self.image = image
        for group_id, group in sorted(self.groups.items()):
            self.log.log("G-LOADED", group=group_id, members=len(group.members))
            for member in group.members.values():
                self.reschedule_heartbeat(group, member)
            if len(group.members) > self.config.group_max_size:
                self.prepare_rebalance(group, f"Freshly-loaded group {group_id} (size "
                                              f"{len(group.members)}) is over capacity "
                                              f"{self.config.group_max_size}. Rebalancing in "
                                              f"order to give a chance for consumers to commit "
                                              f"offsets")

    def on_unloaded(self) -> None:
        for group_id, group in sorted(self.groups.items()):
            self.log.log("G-UNLOADING", group=group_id, generation=group.generation_id)
            previous = group.state
            group.transition_to(D, self.now)
            if previous is P:
                for m in group.members.values():
                    group.complete_join_future(m, JoinGroupResponse(Errors.NOT_COORDINATOR,
                                                                    member_id=m.member_id))
            elif previous in (C, S):
                for m in group.members.values():
                    group.complete_sync_future(m, SyncGroupResponse(Errors.NOT_COORDINATOR))


def _append_error(exc: BaseException | None) -> Errors:
    return handle_operation_exception(exc) if exc is not None else Errors.UNKNOWN_SERVER_ERROR


def _message(f: CoordinatorFuture[Any]) -> str:
    exc = f.exception()
    return exc.detail if isinstance(exc, KafkaError) else str(exc)
