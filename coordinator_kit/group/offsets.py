"""Committed offsets in the coordinator shard (Kafka's `OffsetMetadataManager`).

Offsets are hard state: a commit only produces OffsetCommit records, and the runtime replays them
into a timeline map (group -> (topic, partition) -> offset) before they are even appended, so a
failed append rolls them back and a fetch at the committed offset never sees an uncommitted one.

A transactional producer's offsets (TxnOffsetCommit) replay into a second store, pending per
producer id, until the end-transaction marker moves them into the first (COMMIT) or drops them
(ABORT); OffsetDelete and DeleteGroups write tombstones for committed and pending offsets alike.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..errors import Errors
from ..logs.layout import level_number
from ..runtime.records import CoordinatorRecord
from ..runtime.shard import CoordinatorResult
from ..runtime.markers import TransactionResult
from ..runtime.partition import NO_PRODUCER_ID
from ..timeline import SnapshotRegistry, TimelineHashMap, TimelineHashSet
from ..trace import LogContext
from . import records as rec
from .api import (OffsetCommitRequest, OffsetCommitResponse, OffsetDeleteRequest,
                  OffsetDeleteResponse, OffsetFetchPartition, OffsetFetchRequest,
                  OffsetFetchResponse, RequestContext, TxnOffsetCommitRequest,
                  TxnOffsetCommitResponse)
from .classic import ClassicGroup, ClassicGroupState
from .config import GroupCoordinatorConfig
from .manager import GroupMetadataManager

__all__ = ["OffsetAndMetadata", "OffsetMetadataManager"]

_DEBUG = level_number("DEBUG")


class OffsetAndMetadata(NamedTuple):
    """A committed offset as the shard keeps it (immutable; a tuple, cheap to make: one per
    OffsetCommit record replayed)."""

    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp_ms: int
    expire_timestamp_ms: int | None
    record_offset: int


# Enum members as module constants for the commit path (an enum member lookup goes through the
# metaclass, ~180 ns on 3.11; a module global ~20 ns).
_NONE = Errors.NONE
_G_DEAD, _G_EMPTY = ClassicGroupState.DEAD, ClassicGroupState.EMPTY
_G_SYNCING = ClassicGroupState.COMPLETING_REBALANCE
_G_STABLE_OR_PREPARING = (ClassicGroupState.STABLE, ClassicGroupState.PREPARING_REBALANCE)
_UNSTABLE = OffsetFetchPartition(-1, -1, "", Errors.UNSTABLE_OFFSET_COMMIT)


class OffsetMetadataManager:
    def __init__(self, log: LogContext, registry: SnapshotRegistry,
                 groups: GroupMetadataManager, config: GroupCoordinatorConfig, time: Any) -> None:
        self.log = log
        self.registry = registry
        self.groups = groups
        self.config = config
        self.time = time
        self.offsets: TimelineHashMap[str, TimelineHashMap[tuple[str, int], OffsetAndMetadata]] \
            = TimelineHashMap(registry)
        # Offsets of ongoing transactions, by producer id then group (Kafka's
        # `pendingTransactionalOffsets`): moved into `offsets` by a COMMIT marker, dropped by
        # an ABORT one; and the producers with such offsets, by group (`openTransactionsByGroup`).
        self.pending_transactional_offsets: TimelineHashMap[
            int, TimelineHashMap[str, TimelineHashMap[tuple[str, int], OffsetAndMetadata]]] \
            = TimelineHashMap(registry)
        self.open_transactions_by_group: TimelineHashMap[str, TimelineHashSet[int]] = \
            TimelineHashMap(registry)
        self.consumer_groups: Any = None  # the shard's ConsumerGroupManager (KIP-848 groups)

    # -- commit --------------------------------------------------------------------------------

    def commit_offset(self, ctx: RequestContext, request: OffsetCommitRequest
                      ) -> CoordinatorResult[OffsetCommitResponse]:
        group = self._validate_commit(request)
        now = self.time.now
        expire = now + request.retention_time_ms if request.retention_time_ms > 0 else None
        errors: dict[tuple[str, int], Errors] = {}
        records: list[CoordinatorRecord] = []
        debug = self.log.trace.threshold <= _DEBUG  # O-COMMIT is a DEBUG line: skip its fields
        for (topic, partition), data in sorted(request.offsets.items()):
            metadata = data.metadata or ""
            if len(metadata) > self.config.offset_metadata_max_bytes:
                errors[(topic, partition)] = Errors.OFFSET_METADATA_TOO_LARGE
                continue
            if debug:
                self.log.log("O-COMMIT", group=request.group_id, offset=data.offset, topic=topic,
                             partition=partition, member=request.member_id,
                             leader_epoch=_java_optional(data.leader_epoch))
            records.append(rec.new_offset_commit_record(
                request.group_id, topic, partition, data.offset,
                None if data.leader_epoch < 0 else data.leader_epoch, metadata, now, expire))
            errors[(topic, partition)] = _NONE
        if group is not None and request.member_id and \
                group.state in _G_STABLE_OR_PREPARING:
            member = group.members.get(request.member_id)
            if member is not None:
                self.groups.reschedule_heartbeat(group, member)
        return CoordinatorResult(records, OffsetCommitResponse(errors))

    def _validate_commit(self, request: OffsetCommitRequest) -> ClassicGroup | None:
        gen = request.generation_id_or_member_epoch
        if self.consumer_groups.has_groups:  # an attribute: no lookup on classic-only shards
            consumer_group = self.consumer_groups.groups.get(request.group_id)
            if consumer_group is not None:  # ConsumerGroup.validateOffsetCommit (KIP-848)
                consumer_group.validate_offset_commit(request.member_id,
                                                      request.group_instance_id, gen, False,
                                                      request.version)
                return None
        group = self.groups.groups.get(request.group_id)
        if group is None:
            if gen < 0:
                self.log.log("O-SIMPLE-GROUP", group=request.group_id)
                return self.groups.get_or_maybe_create_group(request.group_id, True)
            if request.version >= 9:
                raise Errors.GROUP_ID_NOT_FOUND.exception(f"Group {request.group_id} not found.")
            raise Errors.ILLEGAL_GENERATION.exception(
                f"Group {request.group_id} not found and generation {gen} is not -1.")
        if group.state is _G_DEAD:
            raise Errors.COORDINATOR_NOT_AVAILABLE.exception()
        if gen < 0 and group.state is _G_EMPTY:
            return group
        if gen >= 0 or request.member_id or request.group_instance_id is not None:
            group.validate_member(request.member_id, request.group_instance_id)
            if gen != group.generation_id:
                raise Errors.ILLEGAL_GENERATION.exception(
                    f"The request generation id {gen} is not equal to the group generation id "
                    f"{group.generation_id}.")
        elif group.state is not _G_EMPTY:
            raise Errors.UNKNOWN_MEMBER_ID.exception(
                "The request was rejected because the group is not empty and the commit carries "
                "no member id.")
        if group.state is _G_SYNCING:
            raise Errors.REBALANCE_IN_PROGRESS.exception(
                f"Group {request.group_id} is completing a rebalance; commit again after the "
                f"SyncGroup.")
        return group

    # -- fetch ---------------------------------------------------------------------------------

    def fetch_offsets(self, request: OffsetFetchRequest,
                      committed_offset: int | None) -> OffsetFetchResponse:
        """Offsets as of `committed_offset` (None reads the latest, for require_stable: then a
        partition with pending transactional offsets answers UNSTABLE_OFFSET_COMMIT, as
        `OffsetMetadataManager.fetchOffsets`/`fetchAllOffsets` do)."""
        group_id = request.group_id
        if self.consumer_groups.has_groups:
            consumer_group = self.consumer_groups.groups.get(group_id, epoch=committed_offset)
            if consumer_group is not None:  # ConsumerGroup.validateOffsetFetch (KIP-848)
                consumer_group.validate_offset_fetch(request.member_id, request.member_epoch,
                                                     committed_offset)
        group_offsets = self.offsets.get(group_id, epoch=committed_offset)
        # a require_stable read of a group with an ongoing transaction
        unstable = committed_offset is None and \
            self.open_transactions_by_group.get(group_id) is not None
        if request.partitions is None:
            if group_offsets is None:
                return OffsetFetchResponse({})
            return OffsetFetchResponse({
                tp: _UNSTABLE if unstable and self.has_pending_transactional_offsets(group_id, tp)
                else OffsetFetchPartition(o.offset, o.leader_epoch, o.metadata)
                for tp, o in sorted(group_offsets.items(epoch=committed_offset))})
        out = {}
        for tp in request.partitions:
            if unstable and self.has_pending_transactional_offsets(group_id, tp):
                out[tp] = _UNSTABLE
                continue
            o = None if group_offsets is None else group_offsets.get(tp, epoch=committed_offset)
            out[tp] = OffsetFetchPartition(-1, -1, "") if o is None else \
                OffsetFetchPartition(o.offset, o.leader_epoch, o.metadata)
        return OffsetFetchResponse(out)

    def committed(self, group_id: str) -> dict[tuple[str, int], int]:
        """Latest offsets of a group (including uncommitted ones), for views and invariants."""
        group_offsets = self.offsets.get(group_id)
        return {} if group_offsets is None else {tp: o.offset for tp, o in
                                                  sorted(group_offsets.items())}

    # -- replay --------------------------------------------------------------------------------

    def replay(self, offset: int, record: CoordinatorRecord,
               producer_id: int = NO_PRODUCER_ID) -> None:
        """An OffsetCommit record or tombstone (`OffsetMetadataManager.replay`): a record of a
        transactional batch (`producer_id` >= 0) is kept pending for its producer; a tombstone
        also drops the group's pending offsets for that partition."""
        key = record.key
        group_id, tp = key["group"], (key["topic"], key["partition"])
        if record.value is None:
            group_offsets = self.offsets.get(group_id)
            if group_offsets is not None:
                group_offsets.remove(tp)
                if group_offsets.size() == 0:
                    self.offsets.remove(group_id)
            open_transactions = self.open_transactions_by_group.get(group_id)
            if open_transactions is not None:
                for pid in open_transactions.to_list():
                    pending = self.pending_transactional_offsets.get(pid)
                    if pending is not None:
                        _remove_offset(pending, group_id, tp)
            return
        if not (self.consumer_groups.has_groups and group_id in self.consumer_groups.groups):
            self.groups.get_or_maybe_create_group(group_id, True)
        v = record.value
        expire = v.get("expireTimestamp", -1)
        value = OffsetAndMetadata(
            v["offset"], v.get("leaderEpoch", -1), v.get("metadata") or "",
            v["commitTimestamp"], None if expire is None or expire < 0 else expire, offset)
        if producer_id != NO_PRODUCER_ID:
            self._replay_transactional(producer_id, group_id, tp, value)
            return
        group_offsets = self.offsets.get(group_id)
        if group_offsets is None:
            group_offsets = TimelineHashMap(self.registry)
            self.offsets.put(group_id, group_offsets)
        group_offsets.put(tp, value)

    def _replay_transactional(self, producer_id: int, group_id: str, tp: tuple[str, int],
                              value: OffsetAndMetadata) -> None:
        registry = self.registry
        by_group = self.pending_transactional_offsets.compute_if_absent(
            producer_id, lambda _: TimelineHashMap(registry))
        assert by_group is not None
        by_tp = by_group.compute_if_absent(group_id, lambda _: TimelineHashMap(registry))
        assert by_tp is not None
        by_tp.put(tp, value)
        producers = self.open_transactions_by_group.compute_if_absent(
            group_id, lambda _: TimelineHashSet(registry))
        assert producers is not None
        producers.add(producer_id)

    def replay_end_transaction_marker(self, producer_id: int,
                                      result: TransactionResult | str) -> None:
        """COMMIT moves the producer's pending offsets into the committed ones, unless a
        partition already holds an offset from a later record; ABORT drops them
        (`OffsetMetadataManager.replayEndTransactionMarker`). A marker for a producer with
        nothing pending changes nothing."""
        result = TransactionResult.of(result)
        pending = self.pending_transactional_offsets.remove(producer_id)
        if pending is None:
            return
        for group_id in pending.keys():
            producers = self.open_transactions_by_group.get(group_id)
            if producers is not None:
                producers.remove(producer_id)
                if producers.size() == 0:
                    self.open_transactions_by_group.remove(group_id)
        if result is not TransactionResult.COMMIT:
            self.log.log("O-TXN-ABORTED", producer_id=producer_id)
            return
        self.log.log("O-TXN-COMMITTED", producer_id=producer_id)
        for group_id, by_tp in pending.items():
            for tp, value in by_tp.items():
                group_offsets = self.offsets.get(group_id)
                existing = None if group_offsets is None else group_offsets.get(tp)
                # The most recent record wins: a later plain commit is not overwritten.
                if existing is None or value.record_offset > existing.record_offset:
                    if group_offsets is None:
                        group_offsets = TimelineHashMap(self.registry)
                        self.offsets.put(group_id, group_offsets)
                    group_offsets.put(tp, value)

    # -- transactions (commitTransactionalOffset) ----------------------------------------------

    def commit_transactional_offset(self, ctx: RequestContext, request: TxnOffsetCommitRequest
                                    ) -> CoordinatorResult[TxnOffsetCommitResponse]:
        """The records of a TxnOffsetCommit (`OffsetMetadataManager.commitTransactionalOffset`):
        plain OffsetCommit records (never an expire timestamp); the runtime writes them in the
        producer's batch, so replay keeps them pending until the transaction ends."""
        self._validate_transactional_commit(request)
        now = self.time.now
        errors: dict[tuple[str, int], Errors] = {}
        records: list[CoordinatorRecord] = []
        debug = self.log.trace.threshold <= _DEBUG
        for (topic, partition), data in sorted(request.offsets.items()):
            metadata = data.metadata or ""
            if len(metadata) > self.config.offset_metadata_max_bytes:
                errors[(topic, partition)] = Errors.OFFSET_METADATA_TOO_LARGE
                continue
            if debug:
                self.log.log("O-TXN-COMMIT", group=request.group_id, offset=data.offset,
                             topic=topic, partition=partition, member=request.member_id,
                             leader_epoch=_java_optional(data.leader_epoch))
            records.append(rec.new_offset_commit_record(
                request.group_id, topic, partition, data.offset,
                None if data.leader_epoch < 0 else data.leader_epoch, metadata, now))
            errors[(topic, partition)] = _NONE
        return CoordinatorResult(records, TxnOffsetCommitResponse(errors))

    def _validate_transactional_commit(self, request: TxnOffsetCommitRequest) -> ClassicGroup:
        """`validateTransactionalOffsetCommit` + `ClassicGroup.validateOffsetCommit` with
        isTransactional: an unknown group is created (a simple group) only for generation -1;
        the group state is not enforced, and an empty member id with generation -1 passes
        (producers that send no consumer group metadata)."""
        gen = request.generation_id
        group = self.groups.groups.get(request.group_id)
        if group is None:
            if gen < 0:
                return self.groups.get_or_maybe_create_group(request.group_id, True)
            raise Errors.ILLEGAL_GENERATION.exception(
                f"Group {request.group_id} not found and generation {gen} is not -1.")
        if group.state is _G_DEAD:
            raise Errors.COORDINATOR_NOT_AVAILABLE.exception()
        if gen < 0 and group.state is _G_EMPTY:
            return group
        if gen >= 0 or request.member_id or request.group_instance_id is not None:
            group.validate_member(request.member_id, request.group_instance_id)
            if gen != group.generation_id:
                raise Errors.ILLEGAL_GENERATION.exception(
                    f"The request generation id {gen} is not equal to the group generation id "
                    f"{group.generation_id}.")
        return group

    def has_pending_transactional_offsets(self, group_id: str, tp: tuple[str, int]) -> bool:
        """Some open transaction holds an offset of `tp` for the group
        (`hasPendingTransactionalOffsets`)."""
        producers = self.open_transactions_by_group.get(group_id)
        if producers is None:
            return False
        for pid in producers.to_list():
            pending = self.pending_transactional_offsets.get(pid)
            if pending is not None:
                by_tp = pending.get(group_id)
                if by_tp is not None and tp in by_tp:
                    return True
        return False

    def has_committed_offset(self, group_id: str, tp: tuple[str, int]) -> bool:
        group_offsets = self.offsets.get(group_id)
        return group_offsets is not None and tp in group_offsets

    def pending_offsets(self, group_id: str) -> dict[int, dict[tuple[str, int], int]]:
        """Producer id -> the group's pending offsets (latest state), for views and tests."""
        out: dict[int, dict[tuple[str, int], int]] = {}
        producers = self.open_transactions_by_group.get(group_id)
        for pid in ([] if producers is None else producers.to_list()):
            pending = self.pending_transactional_offsets.get(pid)
            by_tp = None if pending is None else pending.get(group_id)
            if by_tp is not None and by_tp.size():
                out[pid] = {tp: o.offset for tp, o in sorted(by_tp.items())}
        return out

    # -- deletion (deleteOffsets, deleteAllOffsets) --------------------------------------------

    def delete_offsets(self, request: OffsetDeleteRequest
                       ) -> CoordinatorResult[OffsetDeleteResponse]:
        """OffsetDelete (`OffsetMetadataManager.deleteOffsets`): GROUP_ID_NOT_FOUND or
        NON_EMPTY_GROUP for the whole request; per partition, GROUP_SUBSCRIBED_TO_TOPIC for a
        topic a member subscribes to, else NONE and a tombstone when there is an offset
        (committed or pending) to delete."""
        group = self.groups.group_or_raise(request.group_id)
        group.validate_offset_delete()
        errors: dict[tuple[str, int], Errors] = {}
        records: list[CoordinatorRecord] = []
        group_id = request.group_id
        for tp in request.partitions:
            topic, partition = tp
            if group.is_subscribed_to_topic(topic):
                errors[tp] = Errors.GROUP_SUBSCRIBED_TO_TOPIC
                continue
            errors[tp] = _NONE
            if self.has_committed_offset(group_id, tp) or \
                    self.has_pending_transactional_offsets(group_id, tp):
                records.append(rec.new_offset_commit_tombstone(group_id, topic, partition))
        return CoordinatorResult(records, OffsetDeleteResponse(errors))

    def delete_all_offsets(self, group_id: str, records: list[CoordinatorRecord]) -> int:
        """Tombstones for every offset of the group, committed or pending (one per partition);
        returns how many (`OffsetMetadataManager.deleteAllOffsets`)."""
        deleted = 0
        group_offsets = self.offsets.get(group_id)
        if group_offsets is not None:
            for topic, partition in group_offsets.keys():
                records.append(rec.new_offset_commit_tombstone(group_id, topic, partition))
                deleted += 1
        producers = self.open_transactions_by_group.get(group_id)
        for pid in ([] if producers is None else producers.to_list()):
            pending = self.pending_transactional_offsets.get(pid)
            by_tp = None if pending is None else pending.get(group_id)
            for tp in ([] if by_tp is None else by_tp.keys()):
                if not self.has_committed_offset(group_id, tp):
                    records.append(rec.new_offset_commit_tombstone(group_id, *tp))
                    deleted += 1
        return deleted

    # -- retention (cleanupExpiredOffsets, OffsetExpirationConditionImpl) ----------------------

    def cleanup_expired_offsets(self, group_id: str, records: list[CoordinatorRecord]) -> bool:
        """Tombstones for expired offsets; True when the group has no offsets left and no
        open transaction (`cleanupExpiredOffsets`: a partition with pending transactional
        offsets keeps its offset, and a group with an ongoing transaction is not deleted)."""
        group_offsets = self.offsets.get(group_id)
        consumer_group = (self.consumer_groups.groups.get(group_id)
                          if self.consumer_groups.has_groups else None)
        if consumer_group is not None:
            if group_offsets is None:
                return True
            # ConsumerGroup.offsetExpirationCondition: commit time; a topic a member subscribes
            # to never expires (ModernGroup.isSubscribedToTopic)
            rule: tuple[set[str] | None, int | None] | None = (
                set(consumer_group.subscribed_topic_names.keys()), None)
        else:
            group = self.groups.groups.get(group_id)
            if group is None:
                return group_offsets is None
            if group_offsets is None:
                return True
            rule = self._expiration_rule(group)
        if rule is None:
            return False
        subscribed, base = rule
        now = self.time.now
        retention = self.config.offsets_retention_ms
        all_expired = True
        in_transaction = group_id in self.open_transactions_by_group
        for (topic, partition), o in sorted(group_offsets.items()):
            if subscribed is not None and topic in subscribed:
                all_expired = False
                continue
            if o.expire_timestamp_ms is not None:
                expired = now >= o.expire_timestamp_ms
            else:
                expired = now - (base if base is not None else o.commit_timestamp_ms) >= retention
            if expired and in_transaction and \
                    self.has_pending_transactional_offsets(group_id, (topic, partition)):
                expired = False  # not while a transaction may still commit an offset here
            if expired:
                records.append(rec.new_offset_commit_tombstone(group_id, topic, partition))
                self.log.log("O-EXPIRED", group=group_id, topic=topic, partition=partition)
            else:
                all_expired = False
        return all_expired and not in_transaction

    def _expiration_rule(self, group: ClassicGroup) -> tuple[set[str] | None, int | None] | None:
        """(topics that never expire, base timestamp) for a group, or None when nothing expires."""
        if group.protocol_type is None:
            return None, None  # simple group: commit time, every topic
        if group.state is ClassicGroupState.EMPTY:
            return None, group.current_state_timestamp
        if group.state is ClassicGroupState.STABLE and group.protocol_type == "consumer" \
                and group.subscribed_topics is not None:
            return set(group.subscribed_topics), None
        return None


def _java_optional(leader_epoch: int) -> str:
    return "Optional.empty" if leader_epoch < 0 else f"Optional[{leader_epoch}]"


def _remove_offset(by_group: TimelineHashMap[str, TimelineHashMap[tuple[str, int], Any]],
                   group_id: str, tp: tuple[str, int]) -> None:
    """Remove one partition's offset, and the group's map once empty (`Offsets.remove`)."""
    by_tp = by_group.get(group_id)
    if by_tp is not None:
        by_tp.remove(tp)
        if by_tp.size() == 0:
            by_group.remove(group_id)
