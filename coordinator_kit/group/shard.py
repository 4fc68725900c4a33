"""The group coordinator shard: one `__consumer_offsets` partition's groups and offsets.

Kafka's `GroupCoordinatorShard` routes each request to `GroupMetadataManager` (groups) or
`OffsetMetadataManager` (offsets), replays records into both, and runs the periodic clean-up
of expired offsets and empty groups (timer `expire-group-metadata`).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Sequence
from typing import Any

from ..runtime.future import CoordinatorFuture
from ..runtime.metadata import MetadataDelta, MetadataImage
from ..runtime.partition import NO_PRODUCER_ID
from ..runtime.records import CoordinatorRecord
from ..runtime.shard import CoordinatorResult, CoordinatorShard, CoordinatorShardBuilder
from ..trace import LogContext
from . import records as rec
from ..errors import Errors, KafkaError
from ..runtime.markers import TransactionResult
from .api import (ConsumerGroupDescribedGroup, ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse,
                  DeletableGroupResult, HeartbeatRequest, HeartbeatResponse, JoinGroupRequest,
                  JoinGroupResponse, LeaveGroupRequest, LeaveGroupResponse, ListedGroup,
                  OffsetCommitRequest, OffsetCommitResponse, OffsetDeleteRequest,
                  OffsetDeleteResponse, OffsetFetchRequest, OffsetFetchResponse, RequestContext,
                  SyncGroupRequest, SyncGroupResponse, TxnOffsetCommitRequest,
                  TxnOffsetCommitResponse)
from .classic import ClassicGroupState
from .config import GroupCoordinatorConfig
from .manager import GroupMetadataManager
from .modern.describe import described_group
from .modern.manager import DEFAULT_SERVER_ASSIGNOR, ConsumerGroupManager
from .offsets import OffsetMetadataManager

__all__ = ["GroupCoordinatorShard", "GroupCoordinatorShardBuilder", "group_shard_supplier",
           "EXPIRE_GROUP_METADATA_KEY"]

EXPIRE_GROUP_METADATA_KEY = "expire-group-metadata"


class GroupCoordinatorShard(CoordinatorShard):
    def __init__(self, log: LogContext, groups: GroupMetadataManager,
                 offsets: OffsetMetadataManager, timer: Any, config: GroupCoordinatorConfig,
                 consumer_groups: ConsumerGroupManager) -> None:
        self.log = log
        self.groups = groups
        self.offsets = offsets
        self.timer = timer
        self.config = config
        self.consumer_groups = consumer_groups  # KIP-848 groups
        offsets.consumer_groups = consumer_groups

    # -- handlers (each runs inside one write or read event of the runtime) ---------------------

    # A classic request for the id of a KIP-848 group goes to the consumer group manager
    # (`has_groups` is an attribute: shards that never held one pay no lookup).

    def classic_group_join(self, ctx: RequestContext, request: JoinGroupRequest,
                           response: CoordinatorFuture[JoinGroupResponse]) -> CoordinatorResult:
        if self.consumer_groups.has_groups:
            group = self.consumer_groups.groups.get(request.group_id)
            if group is not None:
                return self.consumer_groups.classic_group_join(group, ctx, request, response)
        return self.groups.classic_group_join(ctx, request, response)

    def classic_group_sync(self, ctx: RequestContext, request: SyncGroupRequest,
                           response: CoordinatorFuture[SyncGroupResponse]) -> CoordinatorResult:
        if self.consumer_groups.has_groups:
            group = self.consumer_groups.groups.get(request.group_id)
            if group is not None:
                return self.consumer_groups.classic_group_sync(group, ctx, request, response)
        return self.groups.classic_group_sync(ctx, request, response)

    def classic_group_heartbeat(self, ctx: RequestContext, request: HeartbeatRequest
                                ) -> CoordinatorResult[HeartbeatResponse]:
        if self.consumer_groups.has_groups:
            group = self.consumer_groups.groups.get(request.group_id)
            if group is not None:
                return self.consumer_groups.classic_group_heartbeat(group, ctx, request)
        return self.groups.classic_group_heartbeat(ctx, request)

    def classic_group_leave(self, ctx: RequestContext, request: LeaveGroupRequest
                            ) -> CoordinatorResult[LeaveGroupResponse]:
        if self.consumer_groups.has_groups:
            group = self.consumer_groups.groups.get(request.group_id)
            if group is not None:
                return self.consumer_groups.classic_group_leave(group, request)
        return self.groups.classic_group_leave(ctx, request)

    def consumer_group_heartbeat(self, ctx: RequestContext,
                                 request: ConsumerGroupHeartbeatRequest
                                 ) -> CoordinatorResult[ConsumerGroupHeartbeatResponse]:
        return self.consumer_groups.consumer_group_heartbeat(ctx, request)

    def commit_offset(self, ctx: RequestContext, request: OffsetCommitRequest
                      ) -> CoordinatorResult[OffsetCommitResponse]:
        return self.offsets.commit_offset(ctx, request)

    def fetch_offsets(self, request: OffsetFetchRequest,
                      committed_offset: int | None) -> OffsetFetchResponse:
        return self.offsets.fetch_offsets(request, committed_offset)

    def describe_group(self, group_id: str, committed_offset: int | None) -> dict[str, Any]:
        group = self.groups.group(group_id, committed_offset)
        if group is None:
            consumer_group = self.consumer_groups.group(group_id, committed_offset)
            if consumer_group is not None:  # KIP-848 (Kafka: ConsumerGroupDescribe)
                return consumer_group.describe(committed_offset)
            return {"group_id": group_id, "state": "Dead", "generation": -1, "members": []}
        return group.describe()

    def consumer_group_describe(self, group_ids: Sequence[str], committed_offset: int | None
                                ) -> list[ConsumerGroupDescribedGroup]:
        """ConsumerGroupDescribe (`GroupMetadataManager.consumerGroupDescribe`): each group as
        it stood at the last committed offset; a missing group or one that is not a consumer
        group is GROUP_ID_NOT_FOUND, with `GroupMetadataManager.consumerGroup`'s message."""
        out: list[ConsumerGroupDescribedGroup] = []
        for group_id in group_ids:
            group = self.consumer_groups.group(group_id, committed_offset)
            if group is not None:
                out.append(described_group(group, committed_offset, DEFAULT_SERVER_ASSIGNOR,
                                           self.consumer_groups.topics))
                continue
            message = (f"Group {group_id} is not a consumer group."
                       if self.groups.group(group_id, committed_offset) is not None
                       else f"Group {group_id} not found.")
            out.append(ConsumerGroupDescribedGroup(group_id, Errors.GROUP_ID_NOT_FOUND, message))
        return out

    def list_groups(self, states_filter: Iterable[str], types_filter: Iterable[str],
                    committed_offset: int | None) -> list[ListedGroup]:
        listed = self.groups.list_groups(states_filter, types_filter, committed_offset)
        if self.consumer_groups.has_groups:  # KIP-848 groups (`ConsumerGroup.isInStates`)
            states = {s.lower().strip() for s in states_filter}
            types = {t.lower() for t in types_filter}
            if not types or "consumer" in types:
                for gid, g in sorted(self.consumer_groups.groups.items(epoch=committed_offset)):
                    state = g.state_at(committed_offset).value
                    if not states or state.lower() in states:
                        listed.append(ListedGroup(gid, "consumer", state, "consumer"))
        return listed

    def commit_transactional_offset(self, ctx: RequestContext, request: TxnOffsetCommitRequest
                                    ) -> CoordinatorResult[TxnOffsetCommitResponse]:
        return self.offsets.commit_transactional_offset(ctx, request)

    def delete_offsets(self, ctx: RequestContext, request: OffsetDeleteRequest
                       ) -> CoordinatorResult[OffsetDeleteResponse]:
        return self.offsets.delete_offsets(request)

    def delete_groups(self, ctx: RequestContext, group_ids: Sequence[str]
                      ) -> CoordinatorResult[list[DeletableGroupResult]]:
        """Tombstones for each deletable group's offsets (committed and pending) and for its
        GroupMetadata; a group that cannot go gets its own error (GROUP_ID_NOT_FOUND,
        NON_EMPTY_GROUP) (`GroupCoordinatorShard.deleteGroups`)."""
        results: list[DeletableGroupResult] = []
        records: list[CoordinatorRecord] = []
        deleted: list[str] = []
        offsets = 0
        for group_id in group_ids:
            try:
                consumer_group = (self.consumer_groups.groups.get(group_id)
                                  if self.consumer_groups.has_groups else None)
                if consumer_group is not None:  # a KIP-848 group: its own check and tombstones
                    consumer_group.validate_delete_group()
                    offsets += self.offsets.delete_all_offsets(group_id, records)
                    records.extend(consumer_group.tombstone_records())
                    deleted.append(group_id)
                    results.append(DeletableGroupResult(group_id))
                    continue
                self.groups.validate_delete_group(group_id)
                offsets += self.offsets.delete_all_offsets(group_id, records)
                self.groups.create_group_tombstone_records(group_id, records)
                deleted.append(group_id)
                results.append(DeletableGroupResult(group_id))
            except KafkaError as exc:
                results.append(DeletableGroupResult(group_id, exc.error))
        self.log.log("C-GROUPS-DELETED", groups=", ".join(deleted), offsets=offsets)
        return CoordinatorResult(records, results)

    def cleanup_group_metadata(self) -> CoordinatorResult[None]:
        """Expire offsets and delete empty groups without offsets (Kafka's
        `GroupCoordinatorShard.cleanupGroupMetadata`); re-arms itself."""
        records: list[CoordinatorRecord] = []
        group_ids = set(self.groups.groups.keys()) | set(self.offsets.offsets.keys())
        if self.consumer_groups.has_groups:
            group_ids.update(self.consumer_groups.groups.keys())
        for group_id in sorted(group_ids):
            if self.offsets.cleanup_expired_offsets(group_id, records):
                if self.consumer_groups.has_groups and group_id in self.consumer_groups.groups:
                    self.consumer_groups.maybe_delete_group(group_id, records)
                else:
                    self.groups.maybe_delete_group(group_id, records)
        self.log.log("C-CLEANUP", records=len(records), ms=0)
        self._schedule_cleanup()
        return CoordinatorResult(records, None, is_atomic=False)

    def _schedule_cleanup(self) -> None:
        interval = self.config.offsets_retention_check_interval_ms
        self.timer.schedule(EXPIRE_GROUP_METADATA_KEY, interval, True, self.cleanup_group_metadata,
                            retry_backoff_ms=interval)

    # -- CoordinatorShard ----------------------------------------------------------------------

    def replay(self, offset: int, producer_id: int, producer_epoch: int,
               record: CoordinatorRecord) -> None:
        if record.record_type in (0, rec.OFFSET_COMMIT_RECORD_TYPE):
            if producer_id == NO_PRODUCER_ID:
                self.offsets.replay(offset, record)
            else:  # a transactional producer's batch
                self.offsets.replay(offset, record, producer_id)
        elif record.record_type == rec.GROUP_METADATA_RECORD_TYPE:
            self.groups.replay_group_metadata(record.key["group"],
                                              None if record.value is None else dict(record.value))
        elif 3 <= record.record_type <= 8:  # KIP-848 consumer group records
            self.consumer_groups.replay(record)
        else:
            raise RuntimeError(f"Unknown record type {record.record_type} in the group "
                               f"coordinator shard")

    def replay_end_transaction_marker(self, producer_id: int, producer_epoch: int,
                                      result: TransactionResult | str) -> None:
        self.offsets.replay_end_transaction_marker(producer_id, result)

    def on_loaded(self, image: MetadataImage) -> None:
        self.consumer_groups.on_loaded(image)
        self.groups.on_loaded(image)
        self._schedule_cleanup()

    def on_unloaded(self) -> None:
        self.timer.cancel(EXPIRE_GROUP_METADATA_KEY)
        self.consumer_groups.on_unloaded()
        self.groups.on_unloaded()

    def on_new_metadata_image(self, image: MetadataImage, delta: MetadataDelta) -> None:
        self.groups.image = image
        self.consumer_groups.on_new_metadata_image(image)


class GroupCoordinatorShardBuilder(CoordinatorShardBuilder[GroupCoordinatorShard]):
    def __init__(self, config: GroupCoordinatorConfig, rng: random.Random) -> None:
        super().__init__()
        self.config = config
        self.rng = rng

    def build(self) -> GroupCoordinatorShard:
        self._require()
        assert self.log is not None and self.snapshot_registry is not None
        assert self.timer is not None and self.time is not None
        groups = GroupMetadataManager(self.log, self.snapshot_registry, self.timer, self.time,
                                      self.config, self.rng)
        offsets = OffsetMetadataManager(self.log, self.snapshot_registry, groups, self.config,
                                        self.time)
        consumer_groups = ConsumerGroupManager(self.log, self.snapshot_registry, self.timer,
                                               self.time, self.config, self.rng, groups)
        return GroupCoordinatorShard(self.log, groups, offsets, self.timer, self.config,
                                     consumer_groups)


def group_shard_supplier(config: GroupCoordinatorConfig, seed: int, broker_id: int):
    """A supplier whose every shard gets its own seeded generator (member ids stay unique
    across reloads, and the same scenario gives the same ids)."""
    loads = itertools.count()

    def supplier() -> GroupCoordinatorShardBuilder:
        return GroupCoordinatorShardBuilder(
            config, random.Random(f"{seed}/{broker_id}/{next(loads)}"))
    return supplier

