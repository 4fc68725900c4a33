"""The broker's group coordinator service (Kafka's `GroupCoordinatorService`).

It checks a request before any partition sees it (group id, session timeout bounds), finds the
`__consumer_offsets` partition of the group (Java's `String.hashCode` of the group id modulo
`offsets.topic.num.partitions`), schedules the handler on the runtime, and turns internal
failures into the error a client sees (spec §1.16): a timed-out write becomes
COORDINATOR_NOT_AVAILABLE, a heartbeat that reaches a loading coordinator gets NONE.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..errors import Errors, KafkaError, handle_operation_exception
from ..runtime.future import CoordinatorFuture
from ..runtime.runtime import CoordinatorRuntime
from ..topic import TopicPartition
from .api import (HeartbeatRequest, HeartbeatResponse, JoinGroupRequest, JoinGroupResponse,
                  LeaveGroupRequest, LeaveGroupResponse, OffsetCommitRequest,
                  OffsetCommitResponse, OffsetFetchPartition, OffsetFetchRequest,
                  OffsetFetchResponse, RequestContext, SyncGroupRequest, SyncGroupResponse)
from .config import GroupCoordinatorConfig
from .shard import GroupCoordinatorShard

__all__ = ["GroupCoordinatorService", "java_string_hashcode", "partition_for"]

T = TypeVar("T")


def java_string_hashcode(text: str) -> int:
    """Java's `String.hashCode()` (31-based over UTF-16 code units, wrapping at 32 bits)."""
    data = text.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def partition_for(group_id: str, num_partitions: int) -> int:
    """`Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions` (abs(MIN_INT) is 0)."""
    h = java_string_hashcode(group_id)
    return (0 if h == -(1 << 31) else abs(h)) % num_partitions


class GroupCoordinatorService:
    def __init__(self, broker_id: int, runtime: CoordinatorRuntime[GroupCoordinatorShard],
                 config: GroupCoordinatorConfig) -> None:
        self.broker_id = broker_id
        self.runtime = runtime
        self.config = config
        self.active = True
        # group id -> its partition: every request asks, and the hash walks the whole id.
        self._partitions: dict[str, TopicPartition] = {}

    def partition_for(self, group_id: str) -> TopicPartition:
        tp = self._partitions.get(group_id)
        if tp is None:
            tp = TopicPartition.offsets(partition_for(group_id,
                                                      self.config.offsets_topic_num_partitions))
            # The runtime's own object for it when it has one: its dicts then find the key by
            # identity, without comparing the dataclass fields.
            for known in getattr(self.runtime, "partitions", ()):
                if known == tp:
                    tp = known
                    break
            if len(self._partitions) >= 100_000:
                self._partitions.clear()
            self._partitions[group_id] = tp
        return tp

    # -- helpers -------------------------------------------------------------------------------

    def _failed(self, future: CoordinatorFuture[T], value: T) -> CoordinatorFuture[T]:
        future.complete(value)
        return future

    def _write(self, name: str, group_id: str, op: Callable[[GroupCoordinatorShard], Any],
               on_error: Callable[[Errors], T]) -> CoordinatorFuture[T]:
        """Schedule a write whose own future carries the response; map failures."""
        out: CoordinatorFuture[T] = CoordinatorFuture(name)
        try:
            inner = self.runtime.schedule_write_operation(
                name, self.partition_for(group_id), op, self.config.offsets_commit_timeout_ms)
        except KafkaError as exc:
            return self._failed(out, on_error(handle_operation_exception(exc)))

        def done(f: CoordinatorFuture[T]) -> None:
            exc = f.exception()
            if exc is None:
                out.complete(f.result())
            else:
                out.complete(on_error(handle_operation_exception(exc)))
        inner.add_done_callback(done)
        return out

    def _write_with_response(self, name: str, group_id: str,
                             op: Callable[[GroupCoordinatorShard, CoordinatorFuture[T]], Any],
                             on_error: Callable[[Errors], T]) -> CoordinatorFuture[T]:
        """JoinGroup/SyncGroup: the handler answers through `response`, maybe much later."""
        response: CoordinatorFuture[T] = CoordinatorFuture(name)
        try:
            inner = self.runtime.schedule_write_operation(
                name, self.partition_for(group_id), lambda shard: op(shard, response),
                self.config.offsets_commit_timeout_ms)
        except KafkaError as exc:
            return self._failed(response, on_error(handle_operation_exception(exc)))

        def done(f: CoordinatorFuture[Any]) -> None:
            exc = f.exception()
            if exc is not None and not response.done():
                response.complete(on_error(handle_operation_exception(exc)))
        inner.add_done_callback(done)
        return response

    def _check_group_id(self, group_id: str | None) -> Errors | None:
        if not self.active:
            return Errors.COORDINATOR_NOT_AVAILABLE
        if not group_id:
            return Errors.INVALID_GROUP_ID
        return None

    # -- requests ------------------------------------------------------------------------------

    def join_group(self, ctx: RequestContext, request: JoinGroupRequest
                   ) -> CoordinatorFuture[JoinGroupResponse]:
        def error(e: Errors) -> JoinGroupResponse:
            return JoinGroupResponse(e, member_id=request.member_id)
        bad = self._check_group_id(request.group_id)
        if bad is None and not (self.config.group_min_session_timeout_ms
                                <= request.session_timeout_ms
                                <= self.config.group_max_session_timeout_ms):
            bad = Errors.INVALID_SESSION_TIMEOUT
        if bad is not None:
            return self._failed(CoordinatorFuture("classic-group-join"), error(bad))
        return self._write_with_response(
            "classic-group-join", request.group_id,
            lambda shard, response: shard.classic_group_join(ctx, request, response), error)

    def sync_group(self, ctx: RequestContext, request: SyncGroupRequest
                   ) -> CoordinatorFuture[SyncGroupResponse]:
        bad = self._check_group_id(request.group_id)
        if bad is not None:
            return self._failed(CoordinatorFuture("classic-group-sync"), SyncGroupResponse(bad))
        return self._write_with_response(
            "classic-group-sync", request.group_id,
            lambda shard, response: shard.classic_group_sync(ctx, request, response),
            SyncGroupResponse)

    def heartbeat(self, ctx: RequestContext, request: HeartbeatRequest
                  ) -> CoordinatorFuture[HeartbeatResponse]:
        bad = self._check_group_id(request.group_id)
        if bad is not None:
            return self._failed(CoordinatorFuture("classic-group-heartbeat"),
                                HeartbeatResponse(bad))

        def error(e: Errors) -> HeartbeatResponse:
            # A heartbeat that reaches a loading coordinator is answered NONE (spec §1.14).
            return HeartbeatResponse(Errors.NONE if e is Errors.COORDINATOR_LOAD_IN_PROGRESS
                                     else e)
        return self._write("classic-group-heartbeat", request.group_id,
                           lambda shard: shard.classic_group_heartbeat(ctx, request), error)

    def leave_group(self, ctx: RequestContext, request: LeaveGroupRequest
                    ) -> CoordinatorFuture[LeaveGroupResponse]:
        bad = self._check_group_id(request.group_id)
        if bad is not None:
            return self._failed(CoordinatorFuture("classic-group-leave"), LeaveGroupResponse(bad))
        return self._write("classic-group-leave", request.group_id,
                           lambda shard: shard.classic_group_leave(ctx, request),
                           LeaveGroupResponse)

    def commit_offsets(self, ctx: RequestContext, request: OffsetCommitRequest
                       ) -> CoordinatorFuture[OffsetCommitResponse]:
        def error(e: Errors) -> OffsetCommitResponse:
            return OffsetCommitResponse({tp: e for tp in request.offsets}, e)
        # OffsetCommit accepts an empty group id (like Kafka); only a missing one is refused.
        bad = (Errors.COORDINATOR_NOT_AVAILABLE if not self.active else
               Errors.INVALID_GROUP_ID if request.group_id is None else None)
        if bad is not None:
            return self._failed(CoordinatorFuture("commit-offset"), error(bad))
        return self._write("commit-offset", request.group_id,
                           lambda shard: shard.commit_offset(ctx, request), error)

    def fetch_offsets(self, ctx: RequestContext, request: OffsetFetchRequest
                      ) -> CoordinatorFuture[OffsetFetchResponse]:
        def error(e: Errors) -> OffsetFetchResponse:
            parts = request.partitions or ()
            return OffsetFetchResponse({tp: OffsetFetchPartition(-1, -1, "", e) for tp in parts},
                                       e)
        out: CoordinatorFuture[OffsetFetchResponse] = CoordinatorFuture("fetch-offsets")
        if not self.active:
            return self._failed(out, error(Errors.COORDINATOR_NOT_AVAILABLE))
        tp = self.partition_for(request.group_id)
        try:
            if request.require_stable:
                from ..runtime.shard import CoordinatorResult
                inner = self.runtime.schedule_write_operation(
                    "fetch-offsets", tp,
                    lambda shard: CoordinatorResult([], shard.fetch_offsets(request, None)),
                    self.config.offsets_commit_timeout_ms)
            else:
                inner = self.runtime.schedule_read_operation(
                    "fetch-offsets", tp, lambda shard, offset: shard.fetch_offsets(request, offset))
        except KafkaError as exc:
            return self._failed(out, error(handle_operation_exception(exc, offset_fetch=True)))

        def done(f: CoordinatorFuture[OffsetFetchResponse]) -> None:
            exc = f.exception()
            out.complete(f.result() if exc is None else
                         error(handle_operation_exception(exc, offset_fetch=True)))
        inner.add_done_callback(done)
        return out

    def describe_group(self, group_id: str) -> CoordinatorFuture[dict[str, Any]]:
        return self.runtime.schedule_read_operation(
            "describe-groups", self.partition_for(group_id),
            lambda shard, offset: shard.describe_group(group_id, offset))

    # -- partition leadership ------------------------------------------------------------------

    def on_elected(self, tp: TopicPartition, epoch: int) -> None:
        self.runtime.schedule_load_operation(tp, epoch)

    def on_resigned(self, tp: TopicPartition, epoch: int | None) -> None:
        self.runtime.schedule_unload_operation(tp, epoch)
