"""The broker's group coordinator service (Kafka's `GroupCoordinatorService`).

It checks a request before any partition sees it (group id, session timeout bounds), finds the
`__consumer_offsets` partition of the group (Java's `String.hashCode` of the group id modulo
`offsets.topic.num.partitions`), schedules the handler on the runtime, and turns internal
failures into the error a client sees (`handleOperationException`): a timed-out write becomes
COORDINATOR_NOT_AVAILABLE, a heartbeat that reaches a loading coordinator gets NONE.

Besides the consumer's requests (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit,
OffsetFetch) it serves the admin ones (ListGroups over every partition the broker has,
OffsetDelete, DeleteGroups spread over partitions, ConsumerGroupDescribe for KIP-848 groups) and
a transactional producer's (TxnOffsetCommit, and the WriteTxnMarkers marker that ends the
transaction: `complete_transaction`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ..errors import Errors, KafkaError, handle_operation_exception
from ..runtime.future import CoordinatorFuture
from ..runtime.runtime import CoordinatorRuntime
from ..topic import CONSUMER_OFFSETS, TopicPartition
from ..runtime.markers import TransactionResult
from .api import (ConsumerGroupDescribedGroup, DeletableGroupResult, DeleteGroupsRequest, DeleteGroupsResponse,
                  HeartbeatRequest, HeartbeatResponse, JoinGroupRequest, JoinGroupResponse,
                  LeaveGroupRequest, LeaveGroupResponse, ListedGroup, ListGroupsRequest,
                  ListGroupsResponse, OffsetCommitRequest, OffsetCommitResponse,
                  OffsetDeleteRequest, OffsetDeleteResponse, OffsetFetchPartition,
                  OffsetFetchRequest, OffsetFetchResponse, RequestContext, SyncGroupRequest,
                  SyncGroupResponse, TxnOffsetCommitRequest, TxnOffsetCommitResponse)
from .config import GroupCoordinatorConfig
from .shard import GroupCoordinatorShard

__all__ = ["GroupCoordinatorService", "BrokerResponse", "java_string_hashcode", "partition_for"]

T = TypeVar("T")


def _failure(on_error: Callable[[Errors], T]) -> Callable[[BaseException], T]:
    """What a failed write answers: `on_error` of the error code the failure maps to."""
    return lambda exc: on_error(handle_operation_exception(exc))


class _OffsetCommitWrite:
    """An OffsetCommit's handler call and its answer to a failure, in one object: a group's
    auto-commits come in bursts (every member every 5 s), and as closures each commit would
    leave ten objects (functions, cells, closure tuples) for the garbage collector."""

    __slots__ = ("ctx", "request")

    def __init__(self, ctx: RequestContext, request: OffsetCommitRequest) -> None:
        self.ctx = ctx
        self.request = request

    def __call__(self, shard: GroupCoordinatorShard) -> Any:
        return shard.commit_offset(self.ctx, self.request)

    def error(self, e: Errors) -> OffsetCommitResponse:
        return OffsetCommitResponse({tp: e for tp in self.request.offsets}, e)

    def failed(self, exc: BaseException) -> OffsetCommitResponse:
        return self.error(handle_operation_exception(exc))


def _heartbeat_error(e: Errors) -> HeartbeatResponse:
    # A heartbeat that reaches a loading coordinator is answered NONE, blindly
    # (GroupCoordinatorService.heartbeat).
    return HeartbeatResponse(Errors.NONE if e is Errors.COORDINATOR_LOAD_IN_PROGRESS else e)


# what a failed Heartbeat or LeaveGroup write answers (they capture nothing: made once)
_HEARTBEAT_FAILED = _failure(_heartbeat_error)
_LEAVE_FAILED = _failure(LeaveGroupResponse)


_DELETE_OFFSETS_FAILED = _failure(lambda e: OffsetDeleteResponse(error=e))
# What KafkaApis answers a WriteTxnMarkers marker that met one of these: the transaction
# coordinator does not expect them, and retries NOT_LEADER_OR_FOLLOWER.
_MARKER_NOT_READY = (Errors.COORDINATOR_NOT_AVAILABLE, Errors.COORDINATOR_LOAD_IN_PROGRESS,
                     Errors.NOT_COORDINATOR)


def _marker_error(error: Errors) -> Errors:
    return Errors.NOT_LEADER_OR_FOLLOWER if error in _MARKER_NOT_READY else error


def _when_all_done(futures: list[CoordinatorFuture[Any]], then: Callable[[], None]) -> None:
    """Call `then()` once every future is done (at once when there are none), as
    `FutureUtils.combineFutures` waits for all of them."""
    remaining = [len(futures)]
    if not futures:
        then()
        return

    def one_done(_: CoordinatorFuture[Any]) -> None:
        remaining[0] -= 1
        if remaining[0] == 0:
            then()
    for f in futures:
        f.add_done_callback(one_done)


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


@dataclass(frozen=True)
class BrokerResponse:
    """A response the coordinator sends, for whoever watches the broker (`InvariantMonitor`).

    `handled` says whether the request reached its handler on the shard (it does not when the
    coordinator is loading, inactive or not the leader: the service answers by itself);
    `generation` and `state` are the group's when the handler started (None: no such group).
    """

    broker_id: int
    api: str
    group_id: str
    request: Any
    response: Any
    received_ms: int
    sent_ms: int
    handled: bool
    generation: int | None
    state: str | None
    member_valid: bool = False  # the request's member id (and instance id) were the group's
    # a KIP-848 consumer group's member of the request's member id: its epoch when the handler
    # started (None: no consumer group, or no such member)
    member_epoch: int | None = None


class _Watch:
    """What a response listener learns about one request (made only while someone listens)."""

    __slots__ = ("service", "api", "group_id", "request", "received_ms", "handled",
                 "generation", "state", "member_valid", "member_epoch")

    def __init__(self, service: GroupCoordinatorService, api: str, group_id: str,
                 request: Any) -> None:
        self.service = service
        self.api = api
        self.group_id = group_id
        self.request = request
        self.received_ms = service.runtime.scheduler.now
        self.handled = False
        self.generation: int | None = None
        self.state: str | None = None
        self.member_valid = False
        self.member_epoch: int | None = None

    def wrap(self, op: Callable[..., Any]) -> Callable[..., Any]:
        def handler(shard: GroupCoordinatorShard, *args: Any) -> Any:
            group = shard.groups.group(self.group_id)
            self.handled = True
            if group is not None:
                self.generation, self.state = group.generation_id, group.state.value
                member_id = getattr(self.request, "member_id", None)
                if member_id:
                    try:
                        group.validate_member(member_id,
                                              getattr(self.request, "group_instance_id", None))
                        self.member_valid = True
                    except KafkaError:
                        pass
            elif shard.consumer_groups.has_groups:
                modern = shard.consumer_groups.group(self.group_id)
                member_id = getattr(self.request, "member_id", None)
                member = None if modern is None or not member_id \
                    else modern.members.get(member_id)
                if member is not None:
                    self.member_epoch = member.member_epoch
            return op(shard, *args)
        return handler

    def attach(self, future: CoordinatorFuture[Any]) -> CoordinatorFuture[Any]:
        future.add_done_callback(self._sent)
        return future

    def _sent(self, future: CoordinatorFuture[Any]) -> None:
        service = self.service
        sent = BrokerResponse(service.broker_id, self.api, self.group_id, self.request,
                              future.result(), self.received_ms, service.runtime.scheduler.now,
                              self.handled, self.generation, self.state, self.member_valid,
                              self.member_epoch)
        for listener in list(service._response_listeners):
            listener(sent)


class GroupCoordinatorService:
    def __init__(self, broker_id: int, runtime: CoordinatorRuntime[GroupCoordinatorShard],
                 config: GroupCoordinatorConfig) -> None:
        self.broker_id = broker_id
        self.runtime = runtime
        self.config = config
        self.active = True
        # group id -> its partition: every request asks, and the hash walks the whole id.
        self._partitions: dict[str, TopicPartition] = {}
        self._response_listeners: list[Callable[[BrokerResponse], None]] = []

    def add_response_listener(self, listener: Callable[[BrokerResponse], None]
                              ) -> Callable[[], None]:
        """Call `listener(BrokerResponse)` whenever this broker completes a response (the moment
        it sends it); returns a function that removes the listener. Listening changes nothing
        the cluster does: the listener only reads."""
        self._response_listeners.append(listener)
        return lambda: self._response_listeners.remove(listener)

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
               failed: Callable[[BaseException], T]) -> CoordinatorFuture[T]:
        """Schedule a write whose own future carries the response; a failure completes it
        with `failed(exception)` (the write's future itself: no second future, callback or
        closure per request)."""
        try:
            return self.runtime.schedule_write_operation(
                name, self.partition_for(group_id), op, self.config.offsets_commit_timeout_ms,
                on_error=failed)
        except KafkaError as exc:
            return self._failed(CoordinatorFuture(name), failed(exc))

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
        watch = (_Watch(self, "JoinGroup", request.group_id, request)
                 if self._response_listeners else None)  # only while watched

        def error(e: Errors) -> JoinGroupResponse:
            return JoinGroupResponse(e, member_id=request.member_id)
        bad = self._check_group_id(request.group_id)
        if bad is None and not (self.config.group_min_session_timeout_ms
                                <= request.session_timeout_ms
                                <= self.config.group_max_session_timeout_ms):
            bad = Errors.INVALID_SESSION_TIMEOUT
        if bad is not None:
            future = self._failed(CoordinatorFuture("classic-group-join"), error(bad))
        else:
            def op(shard: GroupCoordinatorShard, response: CoordinatorFuture[Any]) -> Any:
                return shard.classic_group_join(ctx, request, response)
            future = self._write_with_response(
                "classic-group-join", request.group_id,
                op if watch is None else watch.wrap(op), error)
        return future if watch is None else watch.attach(future)

    def sync_group(self, ctx: RequestContext, request: SyncGroupRequest
                   ) -> CoordinatorFuture[SyncGroupResponse]:
        watch = (_Watch(self, "SyncGroup", request.group_id, request)
                 if self._response_listeners else None)  # only while watched
        bad = self._check_group_id(request.group_id)
        if bad is not None:
            future = self._failed(CoordinatorFuture("classic-group-sync"),
                                  SyncGroupResponse(bad))
        else:
            def op(shard: GroupCoordinatorShard, response: CoordinatorFuture[Any]) -> Any:
                return shard.classic_group_sync(ctx, request, response)
            future = self._write_with_response(
                "classic-group-sync", request.group_id,
                op if watch is None else watch.wrap(op), SyncGroupResponse)
        return future if watch is None else watch.attach(future)

    def heartbeat(self, ctx: RequestContext, request: HeartbeatRequest
                  ) -> CoordinatorFuture[HeartbeatResponse]:
        watch = (_Watch(self, "Heartbeat", request.group_id, request)
                 if self._response_listeners else None)  # only while watched
        bad = self._check_group_id(request.group_id)
        if bad is not None:
            future = self._failed(CoordinatorFuture("classic-group-heartbeat"),
                                  HeartbeatResponse(bad))
            return future if watch is None else watch.attach(future)

        def op(shard: GroupCoordinatorShard) -> Any:
            return shard.classic_group_heartbeat(ctx, request)
        future = self._write("classic-group-heartbeat", request.group_id,
                             op if watch is None else watch.wrap(op), _HEARTBEAT_FAILED)
        return future if watch is None else watch.attach(future)

    def leave_group(self, ctx: RequestContext, request: LeaveGroupRequest
                    ) -> CoordinatorFuture[LeaveGroupResponse]:
        watch = (_Watch(self, "LeaveGroup", request.group_id, request)
                 if self._response_listeners else None)  # only while watched
        bad = self._check_group_id(request.group_id)
        if bad is not None:
            future = self._failed(CoordinatorFuture("classic-group-leave"),
                                  LeaveGroupResponse(bad))
        else:
            def op(shard: GroupCoordinatorShard) -> Any:
                return shard.classic_group_leave(ctx, request)
            future = self._write("classic-group-leave", request.group_id,
                                 op if watch is None else watch.wrap(op), _LEAVE_FAILED)
        return future if watch is None else watch.attach(future)

    def commit_offsets(self, ctx: RequestContext, request: OffsetCommitRequest
                       ) -> CoordinatorFuture[OffsetCommitResponse]:
        watch = (_Watch(self, "OffsetCommit", request.group_id or "", request)
                 if self._response_listeners else None)  # only while watched
        write = _OffsetCommitWrite(ctx, request)
        # OffsetCommit accepts an empty group id (like Kafka); only a missing one is refused.
        bad = (Errors.COORDINATOR_NOT_AVAILABLE if not self.active else
               Errors.INVALID_GROUP_ID if request.group_id is None else None)
        if bad is not None:
            future = self._failed(CoordinatorFuture("commit-offset"), write.error(bad))
        else:
            future = self._write("commit-offset", request.group_id,
                                 write if watch is None else watch.wrap(write), write.failed)
        return future if watch is None else watch.attach(future)

    def fetch_offsets(self, ctx: RequestContext, request: OffsetFetchRequest
                      ) -> CoordinatorFuture[OffsetFetchResponse]:
        watch = (_Watch(self, "OffsetFetch", request.group_id, request)
                 if self._response_listeners else None)  # only while watched
        future = self._fetch_offsets(request, watch)
        return future if watch is None else watch.attach(future)

    def _fetch_offsets(self, request: OffsetFetchRequest, watch: _Watch | None
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

                def write(shard: GroupCoordinatorShard) -> Any:
                    return CoordinatorResult([], shard.fetch_offsets(request, None))
                inner = self.runtime.schedule_write_operation(
                    "fetch-offsets", tp, write if watch is None else watch.wrap(write),
                    self.config.offsets_commit_timeout_ms)
            else:
                def read(shard: GroupCoordinatorShard, offset: int) -> Any:
                    return shard.fetch_offsets(request, offset)
                inner = self.runtime.schedule_read_operation(
                    "fetch-offsets", tp, read if watch is None else watch.wrap(read))
        except KafkaError as exc:
            return self._failed(out, error(handle_operation_exception(exc, offset_fetch=True)))

        def done(f: CoordinatorFuture[OffsetFetchResponse]) -> None:
            exc = f.exception()
            out.complete(f.result() if exc is None else
                         error(handle_operation_exception(exc, offset_fetch=True)))
        inner.add_done_callback(done)
        return out

    def list_groups(self, ctx: RequestContext, request: ListGroupsRequest
                    ) -> CoordinatorFuture[ListGroupsResponse]:
        """ListGroups (`GroupCoordinatorService.listGroups`): a read of every coordinator
        partition this broker has, each at its last committed offset, combined in partition
        order. A partition this broker no longer leads (NOT_COORDINATOR) adds nothing; any
        other failure (COORDINATOR_LOAD_IN_PROGRESS while one loads) is the whole answer."""
        out: CoordinatorFuture[ListGroupsResponse] = CoordinatorFuture("list-groups")
        if not self.active:
            return self._failed(out, ListGroupsResponse(error=Errors.COORDINATOR_NOT_AVAILABLE))
        states, types = tuple(request.states_filter), tuple(request.types_filter)

        def read(shard: GroupCoordinatorShard, offset: int) -> list[ListedGroup]:
            return shard.list_groups(states, types, offset)
        try:
            reads = self.runtime.schedule_read_all_operation("list-groups", read)
        except KafkaError as exc:
            return self._failed(out, ListGroupsResponse(error=handle_operation_exception(exc)))

        def combine() -> None:
            groups: list[ListedGroup] = []
            for f in reads:
                exc = f.exception()
                if exc is None:
                    groups.extend(f.result())
                elif not (isinstance(exc, KafkaError) and exc.error is Errors.NOT_COORDINATOR):
                    out.complete(ListGroupsResponse(error=handle_operation_exception(exc)))
                    return
            out.complete(ListGroupsResponse(tuple(groups)))
        _when_all_done(reads, combine)
        return out

    def delete_offsets(self, ctx: RequestContext, request: OffsetDeleteRequest
                       ) -> CoordinatorFuture[OffsetDeleteResponse]:
        """OffsetDelete (`GroupCoordinatorService.deleteOffsets`): a write on the group's
        partition; the tombstones it appends make the deletion survive a coordinator move."""
        watch = (_Watch(self, "OffsetDelete", request.group_id or "", request)
                 if self._response_listeners else None)  # only while watched
        bad = self._check_group_id(request.group_id)
        if bad is not None:
            future = self._failed(CoordinatorFuture("delete-offsets"),
                                  OffsetDeleteResponse(error=bad))
        else:
            def op(shard: GroupCoordinatorShard) -> Any:
                return shard.delete_offsets(ctx, request)
            future = self._write("delete-offsets", request.group_id,
                                 op if watch is None else watch.wrap(op), _DELETE_OFFSETS_FAILED)
        return future if watch is None else watch.attach(future)

    def delete_groups(self, ctx: RequestContext, request: DeleteGroupsRequest
                      ) -> CoordinatorFuture[DeleteGroupsResponse]:
        """DeleteGroups (`GroupCoordinatorService.deleteGroups`): one write per
        `__consumer_offsets` partition for the groups it holds; results come back with the
        missing group ids (INVALID_GROUP_ID) first, then partition by partition, each
        partition's groups in request order. A partition's failure is each of its groups'
        error (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS...)."""
        out: CoordinatorFuture[DeleteGroupsResponse] = CoordinatorFuture("delete-groups")
        if not self.active:
            return self._failed(out, DeleteGroupsResponse(tuple(
                DeletableGroupResult(g, Errors.COORDINATOR_NOT_AVAILABLE)
                for g in request.group_ids)))
        first: list[DeletableGroupResult] = []
        by_partition: dict[TopicPartition, list[str]] = {}
        for group_id in request.group_ids:
            if group_id is None:  # an empty id is accepted, as Kafka does for old clients
                first.append(DeletableGroupResult(None, Errors.INVALID_GROUP_ID))
            else:
                by_partition.setdefault(self.partition_for(group_id), []).append(group_id)
        writes: list[CoordinatorFuture[list[DeletableGroupResult]]] = []
        for tp, group_ids in sorted(by_partition.items()):
            def op(shard: GroupCoordinatorShard, group_ids: list[str] = group_ids) -> Any:
                return shard.delete_groups(ctx, group_ids)

            def failed(exc: BaseException, group_ids: list[str] = group_ids
                       ) -> list[DeletableGroupResult]:
                error = handle_operation_exception(exc)
                return [DeletableGroupResult(g, error) for g in group_ids]
            try:
                writes.append(self.runtime.schedule_write_operation(
                    "delete-groups", tp, op, self.config.offsets_commit_timeout_ms,
                    on_error=failed))
            except KafkaError as exc:
                writes.append(self._failed(CoordinatorFuture("delete-groups"), failed(exc)))

        def combine() -> None:
            results = list(first)
            for f in writes:
                results.extend(f.result())
            out.complete(DeleteGroupsResponse(tuple(results)))
        _when_all_done(writes, combine)
        return out

    def commit_transactional_offsets(self, ctx: RequestContext,
                                     request: TxnOffsetCommitRequest
                                     ) -> CoordinatorFuture[TxnOffsetCommitResponse]:
        """TxnOffsetCommit (`GroupCoordinatorService.commitTransactionalOffsets`): a
        transactional write carrying the producer's id and epoch; the offsets stay pending
        (invisible to OffsetFetch, UNSTABLE_OFFSET_COMMIT with require_stable) until
        `complete_transaction` writes the COMMIT marker."""
        watch = (_Watch(self, "TxnOffsetCommit", request.group_id or "", request)
                 if self._response_listeners else None)  # only while watched

        def error(e: Errors) -> TxnOffsetCommitResponse:
            return TxnOffsetCommitResponse({tp: e for tp in request.offsets}, e)
        bad = self._check_group_id(request.group_id)
        if bad is not None:
            future = self._failed(CoordinatorFuture("txn-commit-offset"), error(bad))
        else:
            def op(shard: GroupCoordinatorShard) -> Any:
                return shard.commit_transactional_offset(ctx, request)
            try:
                future = self.runtime.schedule_transactional_write_operation(
                    "txn-commit-offset", self.partition_for(request.group_id),
                    request.transactional_id, request.producer_id, request.producer_epoch,
                    op if watch is None else watch.wrap(op),
                    self.config.offsets_commit_timeout_ms, on_error=_failure(error))
            except (KafkaError, ValueError) as exc:
                future = self._failed(CoordinatorFuture("txn-commit-offset"),
                                      error(handle_operation_exception(exc)))
        return future if watch is None else watch.attach(future)

    def complete_transaction(self, tp: TopicPartition, producer_id: int, producer_epoch: int,
                             coordinator_epoch: int, result: TransactionResult | str,
                             timeout_ms: int = 30_000) -> CoordinatorFuture[Errors]:
        """A WriteTxnMarkers marker for one `__consumer_offsets` partition
        (`GroupCoordinatorService.completeTransaction`): the COMMIT or ABORT marker of
        `producer_id`'s transaction, written by the runtime. Completes with the error the
        WriteTxnMarkers response carries for the partition, as KafkaApis translates it: NONE
        once the marker is committed; NOT_LEADER_OR_FOLLOWER where the coordinator is not
        available, loading or not the leader (the transaction coordinator retries those).
        `timeout_ms` is the broker's request.timeout.ms, which KafkaApis passes."""
        out: CoordinatorFuture[Errors] = CoordinatorFuture("write-txn-marker")
        if not self.active:
            return self._failed(out, _marker_error(Errors.COORDINATOR_NOT_AVAILABLE))
        if tp.topic != CONSUMER_OFFSETS:
            raise ValueError(f"Completing a transaction for {tp} is not expected: the group "
                             f"coordinator only holds __consumer_offsets partitions")
        try:
            inner = self.runtime.schedule_transaction_completion(
                "write-txn-marker", tp, producer_id, producer_epoch, coordinator_epoch,
                TransactionResult.of(result), timeout_ms)
        except KafkaError as exc:
            return self._failed(out, _marker_error(exc.error))

        def done(f: CoordinatorFuture[None]) -> None:
            exc = f.exception()
            out.complete(Errors.NONE if exc is None else _marker_error(
                exc.error if isinstance(exc, KafkaError) else Errors.UNKNOWN_SERVER_ERROR))
        inner.add_done_callback(done)
        return out

    def consumer_group_describe(self, ctx: RequestContext, group_ids: Sequence[str | None]
                                ) -> CoordinatorFuture[list[ConsumerGroupDescribedGroup]]:
        """ConsumerGroupDescribe (`GroupCoordinatorService.consumerGroupDescribe`): one read
        per `__consumer_offsets` partition (at its last committed offset, like DescribeGroups)
        for the groups it holds. An empty or missing group id is INVALID_GROUP_ID; a
        partition's failure (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS...) is each of its
        groups' error code, without a message (`getErrorDescribedGroupList`). Answers come
        back with the invalid ids first, then partition by partition in request order."""
        out: CoordinatorFuture[list[ConsumerGroupDescribedGroup]] = \
            CoordinatorFuture("consumer-group-describe")
        if not self.active:
            return self._failed(out, [ConsumerGroupDescribedGroup(
                g, Errors.COORDINATOR_NOT_AVAILABLE) for g in group_ids])
        first: list[ConsumerGroupDescribedGroup] = []
        by_partition: dict[TopicPartition, list[str]] = {}
        for group_id in group_ids:
            if not group_id:  # isGroupIdNotEmpty
                first.append(ConsumerGroupDescribedGroup(group_id, Errors.INVALID_GROUP_ID))
            else:
                by_partition.setdefault(self.partition_for(group_id), []).append(group_id)
        reads: list[CoordinatorFuture[list[ConsumerGroupDescribedGroup]]] = []
        failures: list[list[str]] = []
        for tp, ids in sorted(by_partition.items()):
            def read(shard: GroupCoordinatorShard, offset: int, ids: list[str] = ids) -> Any:
                return shard.consumer_group_describe(ids, offset)
            failures.append(ids)
            try:
                reads.append(self.runtime.schedule_read_operation(
                    "consumer-group-describe", tp, read))
            except KafkaError as exc:
                error = handle_operation_exception(exc)
                reads.append(self._failed(CoordinatorFuture("consumer-group-describe"),
                                          [ConsumerGroupDescribedGroup(g, error) for g in ids]))

        def combine() -> None:
            results = list(first)
            for f, ids in zip(reads, failures):
                exc = f.exception()
                if exc is None:
                    results.extend(f.result())
                else:
                    error = handle_operation_exception(exc)
                    results.extend(ConsumerGroupDescribedGroup(g, error) for g in ids)
            out.complete(results)
        _when_all_done(reads, combine)
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

    # -- KIP-848 consumer groups ---------------------------------------------------------------

    def consumer_group_heartbeat(self, ctx: RequestContext, request: Any
                                 ) -> CoordinatorFuture[Any]:
        """A ConsumerGroupHeartbeat (`GroupCoordinatorService.consumerGroupHeartbeat`): a write
        named "consumer-group-heartbeat"; a failure answers its error code and message
        (`handleOperationException`)."""
        from .api import ConsumerGroupHeartbeatResponse

        def failed(exc: BaseException) -> ConsumerGroupHeartbeatResponse:
            error = handle_operation_exception(exc)
            message = exc.detail if isinstance(exc, KafkaError) and exc.error is error \
                else error.message
            return ConsumerGroupHeartbeatResponse(error, message)
        bad = self._check_group_id(request.group_id)
        if bad is not None:
            return self._failed(CoordinatorFuture("consumer-group-heartbeat"),
                                ConsumerGroupHeartbeatResponse(bad, bad.message))

        def op(shard: GroupCoordinatorShard) -> Any:
            return shard.consumer_group_heartbeat(ctx, request)
        return self._write("consumer-group-heartbeat", request.group_id, op, failed)
