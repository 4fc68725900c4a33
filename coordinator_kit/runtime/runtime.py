"""The CoordinatorRuntime: one replicated state machine per coordinator partition.

What it does, in the order a request meets it (Kafka's `CoordinatorRuntime`; docs/kafka-classes.md
names the method behind each point):

* a context per `__consumer_offsets` partition this broker leads, with the state table
  INITIAL -> LOADING -> ACTIVE -> FAILED/CLOSED held as data (`CONTEXT_STATES`);
* loading replays the partition log into a fresh shard; epochs decide which load/unload wins;
* a write runs the operation against the (possibly uncommitted) state, replays its records at
  their offsets, appends them in a batch, and parks the response in the deferred queue until the
  high watermark passes the batch; a failed append reverts every operation of the batch;
* a read runs at the last committed offset and answers at once;
* timers and metadata updates arrive as events in the partition's queue.

A request that finds the context LOADING fails with COORDINATOR_LOAD_IN_PROGRESS; INITIAL,
FAILED, CLOSED or unknown fails with NOT_COORDINATOR. Nothing is queued until loading ends.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from operator import attrgetter
from typing import Any, Generic, TypeVar

from ..clock import Scheduler, TimerHandle, TimerLane
from ..errors import Errors, KafkaError, java_string
from ..kafka_config import fields_from_properties
from ..states import StateTable
from ..timeline import SnapshotRegistry
from ..topic import TopicPartition
from ..trace import LogContext, Trace
from .deferred import DeferredEventQueue
from .events import RejectedExecutionError
from .future import _PENDING, CoordinatorFuture
from .loader import CoordinatorLoader, LoadSummary
from .markers import TransactionResult, end_transaction_marker
from .metadata import MetadataDelta, MetadataImage
from .partition import (NO_PRODUCER_ID, RECORD_BATCH_OVERHEAD, PartitionWriter,
                        ReplicatedPartition, first_record_size, record_body_size,
                        record_size_from_body)
from .processor import DeterministicEventProcessor, EventProcessor
from .records import RecordSerde
from .shard import CoordinatorResult, CoordinatorShard, CoordinatorShardBuilderSupplier
from .snapshottable import SnapshottableCoordinator
from .timer import EventBasedCoordinatorTimer

__all__ = ["CoordinatorRuntime", "CoordinatorState", "CONTEXT_STATES", "RuntimeConfig",
           "CoordinatorContext"]

S = TypeVar("S", bound=CoordinatorShard)
T = TypeVar("T")

NO_OFFSET = -1


class CoordinatorState(Enum):
    INITIAL = "INITIAL"
    LOADING = "LOADING"
    ACTIVE = "ACTIVE"
    CLOSED = "CLOSED"
    FAILED = "FAILED"

    def __str__(self) -> str:
        return self.name


_I, _L, _A, _C, _F = (CoordinatorState.INITIAL, CoordinatorState.LOADING,
                      CoordinatorState.ACTIVE, CoordinatorState.CLOSED, CoordinatorState.FAILED)

# CoordinatorRuntime.CoordinatorState.canTransitionFrom, as data.
CONTEXT_STATES: StateTable[CoordinatorState] = StateTable(
    "CoordinatorContext",
    CoordinatorState,
    valid_previous={
        _I: (),
        _L: (_I, _F),
        _A: (_L, _A),
        _F: (_L, _A),
        _C: (_I, _L, _A, _C, _F),
    },
    triggers={
        (_I, _L): "Load with a higher epoch",
        (_F, _L): "Load with a higher epoch (retry), or reload after an out-of-sync append",
        (_L, _A): "loader finished",
        (_A, _A): "allowed by the table (a Load while ACTIVE only bumps the epoch)",
        (_L, _F): "loader failed",
        (_A, _F): "append returned an unexpected offset",
        (_I, _C): "Unload / close",
        (_L, _C): "Unload with a higher epoch / close",
        (_A, _C): "Unload with a higher epoch / close",
        (_C, _C): "close",
        (_F, _C): "Unload with a higher epoch / close",
    },
    initial=_I,
)

_KAFKA_KEYS = {
    "group.coordinator.append.linger.ms": "append_linger_ms",
    "offsets.commit.timeout.ms": "write_timeout_ms",
    "group.coordinator.threads": "threads",
}


@dataclass(frozen=True)
class RuntimeConfig:
    """Runtime settings, with Kafka's broker defaults (4.0: linger 10 ms, timeout 5 s)."""

    append_linger_ms: int = 10
    write_timeout_ms: int = 5000
    threads: int = 1

    def __post_init__(self) -> None:
        for key, attr in _KAFKA_KEYS.items():
            value = getattr(self, attr)
            low = 0 if attr == "append_linger_ms" else 1
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"Invalid value {value!r} for configuration {key}: Value must "
                                 f"be at least {low}")

    @classmethod
    def from_properties(cls, props: Mapping[str, Any]) -> RuntimeConfig:
        """Build from Kafka config keys; an unknown key is refused by name."""
        return cls(**fields_from_properties(props, _KAFKA_KEYS, "runtime"))


def _optional_int(epoch: int | None) -> str:
    """Java's `OptionalInt.toString()`, which Kafka prints in unload log lines."""
    return "OptionalInt.empty" if epoch is None else f"OptionalInt[{epoch}]"


class _Batch:
    """The open batch: records replayed but not yet appended to the log."""

    __slots__ = ("base_offset", "append_time_ms", "max_batch_size", "records", "size",
                 "next_offset", "deferred_events", "linger", "producer_id", "producer_epoch")

    def __init__(self, base_offset: int, append_time_ms: int, max_batch_size: int,
                 producer_id: int, producer_epoch: int) -> None:
        self.base_offset = base_offset
        self.append_time_ms = append_time_ms
        self.max_batch_size = max_batch_size
        self.records: list[tuple[bytes, bytes | None]] = []
        self.size = RECORD_BATCH_OVERHEAD
        self.next_offset = base_offset
        self.deferred_events: list[Any] = []
        self.linger: TimerHandle | None = None
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch


class _HighWatermarkListener:
    """Coalesces high-watermark updates into one front-of-queue event per partition."""

    def __init__(self, runtime: CoordinatorRuntime[Any], tp: TopicPartition) -> None:
        self.runtime = runtime
        self.tp = tp
        self._last = NO_OFFSET
        self._lock = threading.Lock()

    def __call__(self, tp: TopicPartition, offset: int) -> None:
        rt = self.runtime
        if rt._debug:
            rt.log.log("R-HWM-INCREMENTED", tp=tp, offset=offset)
        with self._lock:
            previous, self._last = self._last, offset
        if previous == NO_OFFSET:
            rt._enqueue_first(_InternalEvent(rt, "HighWatermarkUpdate", tp, self._apply))

    def _apply(self) -> None:
        rt = self.runtime
        with self._lock:
            hwm, self._last = self._last, NO_OFFSET
        tp = self.tp
        ctx = rt._contexts.get(tp)
        if ctx is None:
            rt.log.log("R-HWM-IGNORED-GONE", tp=tp, offset=hwm)
        elif ctx.state is CoordinatorState.ACTIVE and ctx.coordinator is not None:
            if rt._debug:
                rt.log.log("R-HWM-UPDATING", tp=tp, offset=hwm)
            ctx.coordinator.update_last_committed_offset(hwm)
            ctx.deferred.complete_up_to(hwm)
        else:
            rt.log.log("R-HWM-IGNORED-INACTIVE", tp=tp, offset=hwm)


class CoordinatorContext:
    """Everything the runtime holds for one coordinator partition."""

    def __init__(self, runtime: CoordinatorRuntime[Any], tp: TopicPartition) -> None:
        self.runtime = runtime
        self.tp = tp
        self.log = runtime.log.child(
            f"[GroupCoordinator id={runtime.broker_id} topic={tp.topic} partition={tp.partition}] ")
        self.state = CoordinatorState.INITIAL
        self.epoch = -1
        self.deferred = DeferredEventQueue(self.log)
        self.timer = EventBasedCoordinatorTimer(
            tp, runtime.scheduler, self.log,
            lambda name, op: runtime._schedule_write(name, tp, op, None, log_it=False))
        self.coordinator: SnapshottableCoordinator | None = None
        self.hwm_listener: _HighWatermarkListener | None = None
        self.batch: _Batch | None = None
        # While ACTIVE at linger 0: the partition a write's own batch goes to, looked up once
        # (the high-watermark listener is registered with that same partition object).
        self.own_batch_partition: ReplicatedPartition | None = None

    # -- state machine -------------------------------------------------------------------------

    def transition_to(self, new_state: CoordinatorState) -> None:
        CONTEXT_STATES.check(self.state, new_state)
        old = self.state
        rt = self.runtime
        rt.log.log("R-TRANSITION", old_state=old, new_state=new_state, tp=self.tp)
        if new_state is CoordinatorState.LOADING:
            self.state = new_state
            registry = SnapshotRegistry()
            shard = (rt.shard_builder_supplier()
                     .with_log_context(self.log)
                     .with_snapshot_registry(registry)
                     .with_time(rt.scheduler)
                     .with_timer(self.timer)
                     .with_topic_partition(self.tp)
                     .build())
            self.coordinator = SnapshottableCoordinator(self.log, registry, shard, self.tp)
            self._load()
        elif new_state is CoordinatorState.ACTIVE:
            self.state = new_state
            self.hwm_listener = _HighWatermarkListener(rt, self.tp)
            rt.writer.register_listener(self.tp, self.hwm_listener)
            if rt._flush_every_write:
                self.own_batch_partition = rt.writer.partitions.get(self.tp)
            assert self.coordinator is not None
            self.coordinator.on_loaded(rt.metadata_image)
        else:  # FAILED or CLOSED
            self.state = new_state
            self._unload()
        for callback in rt._state_listeners:
            callback(self.tp, old, new_state)

    def _load(self) -> None:
        rt, tp, epoch = self.runtime, self.tp, self.epoch
        assert self.coordinator is not None
        future = rt.loader.load(tp, self.coordinator)

        def loaded(f: CoordinatorFuture[LoadSummary]) -> None:
            def complete_load() -> None:
                ctx = rt._contexts.get(tp)
                if ctx is None:
                    rt.log.log("R-LOAD-GONE", tp=tp, epoch=epoch)
                    return
                if ctx.state is not CoordinatorState.LOADING:
                    rt.log.log("R-LOAD-COMPLETION-IGNORED", tp=tp, state=ctx.state)
                    return
                try:
                    if f.failed():
                        raise f.exception()  # type: ignore[misc]
                    ctx.transition_to(CoordinatorState.ACTIVE)
                    s = f.result()
                    rt.log.log("R-LOADED", tp=tp, epoch=ctx.epoch,
                               duration_ms=s.end_time_ms - s.start_time_ms,
                               scheduler_ms=s.scheduler_queue_time_ms, records=s.num_records,
                               bytes=s.num_bytes)
                except Exception as exc:
                    rt.log.log("R-LOAD-FAIL", tp=tp, epoch=ctx.epoch, exception=java_string(exc))
                    ctx.transition_to(CoordinatorState.FAILED)

            try:
                rt._schedule_internal(f"CompleteLoad(tp={tp}, epoch={epoch})", tp, complete_load)
            except KafkaError:
                pass  # runtime closed meanwhile: nothing left to complete

        future.add_done_callback(loaded)

    def _unload(self) -> None:
        rt = self.runtime
        self.own_batch_partition = None
        if self.hwm_listener is not None:
            rt.writer.deregister_listener(self.tp, self.hwm_listener)
            self.hwm_listener = None
        self.timer.cancel_all()
        self.deferred.fail_all(Errors.NOT_COORDINATOR.exception())
        self.fail_current_batch(Errors.NOT_COORDINATOR.exception())
        if self.coordinator is not None:
            self.coordinator.on_unloaded()
        self.coordinator = None

    # -- writes --------------------------------------------------------------------------------

    def append(self, producer_id: int, producer_epoch: int, records: Sequence[Any],
               replay: bool, is_atomic: bool, event: _WriteEvent[Any]) -> None:
        """`CoordinatorContext.append`: park a write without records, or replay its records into
        the open batch (allocating one first) and attach the write to it; then flush if due
        (`maybeFlushCurrentBatch`)."""
        if self.state is not _A:
            raise RuntimeError("Coordinator must be active to append records")
        coordinator: SnapshottableCoordinator = self.coordinator  # type: ignore[assignment]
        if not records:
            if self.batch is not None:
                self.batch.deferred_events.append(event)
            elif coordinator.last_committed_offset < coordinator.last_written_offset:
                self.deferred.add(coordinator.last_written_offset, event)
            else:
                event.complete(None)
            return

        rt = self.runtime
        now = rt.scheduler._now
        if producer_id != NO_PRODUCER_ID:
            is_atomic = True
            self.flush_current_batch()
        elif self.batch is None and self.own_batch_partition is not None:
            self._append_own_batch(self.own_batch_partition, producer_epoch, records, replay,
                                   is_atomic, event, coordinator, now)
            return
        batch = self.batch or self._allocate_batch(producer_id, producer_epoch, now)

        # Serialise and measure every record once, before anything is replayed: its size
        # without the offset delta varint (`body`), from which its size at any delta follows.
        # Kafka's estimate of an atomic write puts its records at deltas 0..n-1.
        serialize = rt.serde.serialize
        measured = []
        estimated = RECORD_BATCH_OVERHEAD
        for record in records:
            key_value = serialize(record)  # (key bytes, value bytes or None): goes in the batch
            if key_value.__class__ is not tuple:
                key_value = tuple(key_value)
            body = record_body_size(*key_value)
            size = record_size_from_body(body, len(measured))
            estimated += size
            measured.append((record, key_value, body, size))
        if is_atomic:
            if estimated > batch.max_batch_size:
                raise Errors.MESSAGE_TOO_LARGE.exception(
                    f"Message batch size is {estimated} bytes in append to partition {self.tp} "
                    f"which exceeds the maximum configured size of {batch.max_batch_size}.")
            if batch.records and \
                    batch.size + estimated - RECORD_BATCH_OVERHEAD > batch.max_batch_size:
                self.flush_current_batch()  # no room: the write goes whole into a new batch
                batch = self._allocate_batch(producer_id, producer_epoch, now)

        # The estimate measured record i at delta i: where it goes into an empty batch.
        at_estimate = batch.next_offset == batch.base_offset
        for record, key_value, body, size in measured:
            if not at_estimate:
                size = record_size_from_body(body, batch.next_offset - batch.base_offset)
            if not is_atomic and batch.records and batch.size + size > batch.max_batch_size:
                # Non-atomic: the records may span batches.
                self.flush_current_batch()
                batch = self._allocate_batch(producer_id, producer_epoch, now)
                at_estimate = False
                size = record_size_from_body(body, 0)
            offset = batch.next_offset
            try:
                if replay:
                    coordinator.replay(offset, producer_id, producer_epoch, record)
                batch.records.append(key_value)
                batch.size += size
                batch.next_offset = offset + 1
            except Exception as exc:
                rt.log.log("R-REPLAY-FAIL", record=record, tp=self.tp, error=str(exc))
                batch.deferred_events.append(event)
                self.fail_current_batch(exc)
                return

        batch.deferred_events.append(event)
        # maybeFlushCurrentBatch(now), Kafka's condition as written: at linger 0 every write
        # flushes; with a linger, only the linger timer (or a full batch) does (the condition is
        # often quoted the other way round: docs/kafka-code-vs-common-descriptions.md).
        if batch.producer_id != NO_PRODUCER_ID or \
                (batch.append_time_ms - now) >= rt.config.append_linger_ms:
            self.flush_current_batch()

    def _append_own_batch(self, partition: ReplicatedPartition, producer_epoch: int,
                          records: Sequence[Any], replay: bool, is_atomic: bool,
                          event: _WriteEvent[Any], coordinator: SnapshottableCoordinator,
                          now: int) -> None:
        """`append` at linger 0 with no batch open and no producer (the caller checked the
        context is ACTIVE and `records` not empty): the write's records make a batch of their
        own, flushed at once (linger 0), as the general path would do it, without the `_Batch`
        object, the batch's bookkeeping and the writer's indirections. Whatever leaves that
        path (a record that fails to serialise or replay, records too large for one batch, a
        failed or out-of-sync append, DEBUG lines) first sets up the `_Batch` the general path
        would hold at that point and continues as it does, with the same trace."""
        rt = self.runtime
        max_batch_size = partition.max_message_bytes
        base_offset = coordinator.last_written_offset
        serialize = rt.serde.serialize
        # Serialise and measure every record once, before anything is replayed (see append).
        if len(records) == 1:  # most writes: the loops below, for one record
            record = records[0]
            try:
                key_value = serialize(record)
                if key_value.__class__ is not tuple:
                    key_value = tuple(key_value)
                size = RECORD_BATCH_OVERHEAD + first_record_size(*key_value)
            except BaseException:
                self._own_batch(base_offset, now, max_batch_size, producer_epoch)
                raise
            if size <= max_batch_size:
                try:
                    if replay:
                        coordinator.replay(base_offset, NO_PRODUCER_ID, producer_epoch, record)
                except Exception as exc:
                    self._own_replay_failed(base_offset, now, max_batch_size, producer_epoch,
                                            [], RECORD_BATCH_OVERHEAD, record, event, exc)
                    return
                key_values: Sequence[Any] = (key_value,)
                offset = base_offset + 1
        else:
            measured = []
            size = RECORD_BATCH_OVERHEAD
            try:
                for record in records:
                    key_value = serialize(record)
                    if key_value.__class__ is not tuple:
                        key_value = tuple(key_value)
                    record_size = record_size_from_body(record_body_size(*key_value),
                                                        len(measured))
                    size += record_size
                    measured.append((record, key_value, record_size))
            except BaseException:
                self._own_batch(base_offset, now, max_batch_size, producer_epoch)
                raise
            if size <= max_batch_size:
                offset = base_offset
                key_values = []
                filled = RECORD_BATCH_OVERHEAD
                for record, key_value, record_size in measured:
                    try:
                        if replay:
                            coordinator.replay(offset, NO_PRODUCER_ID, producer_epoch, record)
                    except Exception as exc:
                        self._own_replay_failed(base_offset, now, max_batch_size,
                                                producer_epoch, key_values, filled, record,
                                                event, exc)
                        return
                    key_values.append(key_value)
                    filled += record_size
                    offset += 1
        if size > max_batch_size:
            # MESSAGE_TOO_LARGE (atomic), or records that span batches: the general path, on
            # the batch it would have allocated (it measures the records again; serialising
            # is a pure function of the record).
            self._own_batch(base_offset, now, max_batch_size, producer_epoch)
            self.append(NO_PRODUCER_ID, producer_epoch, records, replay, is_atomic, event)
            return
        # flush_current_batch(), for this batch
        try:
            end = partition.append(rt.broker_id, key_values, NO_PRODUCER_ID,
                                   producer_epoch, None, size)
        except BaseException as exc:
            self._own_flushed_batch(base_offset, now, max_batch_size, producer_epoch,
                                    key_values, size, event)
            self._append_failed(exc)
            raise
        if end != offset or rt._debug:  # (offset > base_offset: there are records)
            batch = self._own_flushed_batch(base_offset, now, max_batch_size, producer_epoch,
                                            key_values, size, event)
            self._appended(batch, end)
            return
        # coordinator.update_last_written_offset(end), written out: `end` is past the last
        # written offset, and its DEBUG line is off
        coordinator.last_written_offset = end
        coordinator.snapshot_registry.get_or_create_snapshot(end)
        # self.deferred.add(end, event), written out
        deferred = self.deferred
        offsets = deferred._offsets
        if offsets and end < offsets[-1]:
            deferred._refuse(end)
        offsets.append(end)
        deferred._events.append(event)

    def _own_replay_failed(self, base_offset: int, now: int, max_batch_size: int,
                           producer_epoch: int, key_values: list[Any], size: int, record: Any,
                           event: _WriteEvent[Any], exc: Exception) -> None:
        """A record of a write's own batch failed to replay: as the general path does it."""
        batch = self._own_batch(base_offset, now, max_batch_size, producer_epoch)
        batch.records = key_values
        batch.size = size
        batch.next_offset = base_offset + len(key_values)
        self.runtime.log.log("R-REPLAY-FAIL", record=record, tp=self.tp, error=str(exc))
        batch.deferred_events.append(event)
        self.fail_current_batch(exc)

    def _own_batch(self, base_offset: int, now: int, max_batch_size: int,
                   producer_epoch: int) -> _Batch:
        """The `_Batch` the general path would have allocated for a write of its own."""
        batch = self.batch = _Batch(base_offset, now, max_batch_size, NO_PRODUCER_ID,
                                    producer_epoch)
        return batch

    def _own_flushed_batch(self, base_offset: int, now: int, max_batch_size: int,
                           producer_epoch: int, key_values: list[Any], size: int,
                           event: _WriteEvent[Any]) -> _Batch:
        """... and that batch as the general path flushes it: full, with the write attached."""
        batch = self._own_batch(base_offset, now, max_batch_size, producer_epoch)
        batch.records = list(key_values)
        batch.size = size
        batch.next_offset = base_offset + len(key_values)
        batch.deferred_events.append(event)
        return batch

    def _allocate_batch(self, producer_id: int, producer_epoch: int, now: int) -> _Batch:
        """Open a batch at the last written offset, with its linger timer
        (`maybeAllocateNewBatch`)."""
        rt = self.runtime
        batch = self.batch = _Batch(
            self.coordinator.last_written_offset,  # type: ignore[union-attr]
            now, rt.writer.max_message_bytes(self.tp), producer_id, producer_epoch)
        linger = rt.config.append_linger_ms
        if linger > 0:
            batch.linger = rt.scheduler.call_later(linger, self._linger_expired, batch,
                                                   name=f"linger {self.tp}")
        return batch

    def _linger_expired(self, batch: _Batch) -> None:
        rt, tp = self.runtime, self.tp

        def flush() -> None:
            if self.batch is not batch:
                return  # the batch was flushed or failed meanwhile (task cancelled)
            rt._with_active_context_or_throw(tp, lambda ctx: ctx.flush_current_batch())

        try:
            rt._enqueue_first(_InternalEvent(rt, "FlushBatch", tp, flush))
        except KafkaError:
            pass

    def flush_current_batch(self) -> None:
        """Append the open batch to the log and park its writes until the HWM passes it."""
        batch = self.batch
        if batch is None:
            return
        try:
            # batch.size is the batch's size in the log (each record measured at its offset
            # delta), so the partition need not measure the records again.
            offset = self.runtime.writer.append(self.tp, batch.records, batch.producer_id,
                                                batch.producer_epoch, None, batch.size)
        except BaseException as exc:
            self._append_failed(exc)
            raise
        self._appended(batch, offset)

    def _appended(self, batch: _Batch, offset: int) -> None:
        """The open batch is in the log, ending at `offset`: park its writes until the HWM
        passes it (the rest of `flush_current_batch`)."""
        rt = self.runtime
        try:
            self.coordinator.update_last_written_offset(offset)  # type: ignore[union-attr]
            if offset != batch.next_offset:
                rt.log.log("R-OUT-OF-SYNC", tp=self.tp, offset=offset, expected=batch.next_offset)
                self.transition_to(CoordinatorState.FAILED)
                self.transition_to(CoordinatorState.LOADING)
                raise Errors.NOT_COORDINATOR.exception()
            if rt._debug:
                self.log.event("batch_flushed", tp=str(self.tp), base_offset=batch.base_offset,
                               end_offset=offset, records=len(batch.records), bytes=batch.size,
                               operations=len(batch.deferred_events))
            self.deferred.add_all(offset, batch.deferred_events)
            # self._free_batch(), written out
            if batch.linger is not None:
                batch.linger.cancel()
                batch.linger = None
            self.batch = None
        except BaseException as exc:
            self._append_failed(exc)
            raise

    def complete_transaction(self, producer_id: int, producer_epoch: int,
                             coordinator_epoch: int, result: TransactionResult,
                             event: _CompleteTransactionEvent) -> None:
        """Replay an end-transaction marker and append it as a control batch of its own; park
        `event` until the high watermark passes it (`CoordinatorContext.completeTransaction`).
        The open batch goes to the log first, so the marker comes after the writes before it;
        a failure reverts the shard to where it was and fails `event`."""
        if self.state is not _A:
            raise RuntimeError("Coordinator must be active to complete a transaction")
        self.flush_current_batch()
        coordinator: SnapshottableCoordinator = self.coordinator  # type: ignore[assignment]
        previous = coordinator.last_written_offset
        try:
            coordinator.replay_end_transaction_marker(producer_id, producer_epoch, result)
            offset = self.runtime.writer.append(
                self.tp, [end_transaction_marker(result, coordinator_epoch)], producer_id,
                producer_epoch, result.value)
            coordinator.update_last_written_offset(offset)
            self.deferred.add(offset, event)
        except BaseException as exc:
            coordinator.revert_last_written_offset(previous)
            event.complete(exc)

    def _append_failed(self, exc: BaseException) -> None:
        self.runtime.log.log("R-APPEND-FAIL", tp=self.tp,
                             error=exc.detail if isinstance(exc, KafkaError) else str(exc))
        self.fail_current_batch(exc)

    def fail_current_batch(self, exc: BaseException) -> None:
        batch = self.batch
        if batch is None:
            return
        assert self.coordinator is not None
        self.coordinator.revert_last_written_offset(batch.base_offset)
        for event in batch.deferred_events:
            event.complete(exc)
        self._free_batch()

    def _free_batch(self) -> None:
        batch = self.batch
        if batch is not None and batch.linger is not None:
            batch.linger.cancel()
            batch.linger = None
        self.batch = None


_IN_LANE: Any = object()  # a write's `_timeout` while its timeout waits in the runtime's lane

# `live(item)` of the runtime's timeout lane: a write's timeout stands while its `_timeout` is
# `_IN_LANE` (truthy); completing the write sets it to None. An attrgetter runs in C, where a
# Python function would add a frame for each write the lane looks at (two per write).
_timeout_live = attrgetter("_timeout")


def _timeout_disarm(event: _WriteEvent[Any]) -> None:
    if event._timeout is _IN_LANE:
        event._timeout = None


def _timeout_name(event: _WriteEvent[Any]) -> str:
    return f"timeout {event.name}"


class _WriteEvent(Generic[T]):
    __slots__ = ("runtime", "key", "name", "op", "future", "timeout_ms", "response",
                 "append_future", "records", "_timeout", "on_error")

    def __init__(self, runtime: CoordinatorRuntime[Any], name: str, tp: TopicPartition,
                 op: Callable[[Any], CoordinatorResult[T]], timeout_ms: int) -> None:
        self.runtime = runtime
        self.key = tp
        self.name = name
        self.op = op
        self.future: CoordinatorFuture[T] = CoordinatorFuture(name)
        self.timeout_ms = timeout_ms
        # What completion needs from the operation's result, kept from when the operation
        # returned until the write completes (see `result`): its response, its append future
        # and how many records it appended (None: no result held).
        self.response: Any = None
        self.append_future: CoordinatorFuture[None] | None = None
        self.records: int | None = None
        self._timeout: Any = None  # None, _IN_LANE or a TimerHandle
        # what a failure completes the future with (see schedule_write_operation), or None
        self.on_error: Callable[[BaseException], T] | None = None

    @property
    def result(self) -> _Appended | None:
        """What the write holds of its operation's result until it completes (for learners
        and tests; the write keeps the three values in its own slots, no object per write)."""
        if self.records is None:
            return None
        return _Appended(self.response, self.append_future, self.records)

    def run(self) -> None:
        rt = self.runtime
        try:
            # rt._with_active_context_or_throw(self.key, ...), written out: no closure per write
            ctx = rt._contexts.get(self.key)
            if ctx is None or ctx.state is not _A:
                raise _inactive_error(ctx)
            op, self.op = self.op, None  # the write keeps its result, not what made it
            result = op(ctx.coordinator.shard)  # type: ignore[union-attr]
            if result.__class__ is not CoordinatorResult and \
                    not isinstance(result, CoordinatorResult):
                raise TypeError(f"write operation {self.name!r} must return a "
                                f"CoordinatorResult, got {type(result).__name__}")
            # From here on the write keeps only what its completion needs, not the shard's
            # result with its record objects: those would stay alive (and be walked by every
            # garbage collection) until the high watermark passes the batch.
            self.response = result.response
            self.append_future = result.append_future
            records = result.records
            if records.__class__ is not list:
                self.records = 0  # held from here on (the append future fails if list fails)
                records = list(records)
            self.records = len(records)
            if records and ctx.batch is None and ctx.state is _A and \
                    (partition := ctx.own_batch_partition) is not None:
                # ctx.append(...), whose first steps lead here at linger 0
                ctx._append_own_batch(partition, -1, records, result.replay_records,
                                      result.is_atomic, self, ctx.coordinator,
                                      rt.scheduler._now)
            else:
                ctx.append(NO_PRODUCER_ID, -1, records, result.replay_records,
                           result.is_atomic, self)
            if self.future._state is _PENDING:  # not self.future.done()
                # The write times out `timeout_ms` from now unless it completes first: in the
                # runtime's timeout lane (a TimerLane: same firing order and pending() view as
                # a call_later handle, without a heap entry per write), or, when it falls due
                # before the lane's last timeout (a shorter timeout_ms), as a TimerHandle.
                self._timeout = _IN_LANE
                if not rt._timeouts.arm(self.timeout_ms, self):
                    self._timeout = rt.scheduler.call_later(
                        self.timeout_ms, rt._on_operation_timeout, self,
                        name=f"timeout {self.name}")
        except BaseException as exc:
            self.complete(exc)

    def complete(self, exc: BaseException | None) -> None:
        """Complete the append future (if any), then the response future
        (`CoordinatorWriteEvent.complete`)."""
        if exc is None:
            if self.records is None:
                self.future.complete(None)
            else:
                if self.append_future is not None:
                    self.append_future.complete(None)
                self.future.complete(self.response)
        else:
            if self.records is not None and self.append_future is not None:
                self.append_future.complete_exceptionally(exc)
            if self.on_error is None:
                self.future.complete_exceptionally(exc)
            else:
                self.future.complete(self.on_error(exc))
        # A completed write lets go of its result (response, append future): the timeout
        # lane may hold the event itself a while longer, until it drops completed timeouts.
        self.records = self.response = self.append_future = self.on_error = None
        timeout = self._timeout
        if timeout is not None:
            if timeout is not _IN_LANE:
                timeout.cancel()
            self._timeout = None  # a lane timeout is cancelled by this (see _timeout_live)

    def __str__(self) -> str:
        return f"CoordinatorWriteEvent(name={self.name})"

    __repr__ = __str__


class _TransactionalWriteEvent(_WriteEvent[T]):
    """A write on behalf of a transactional producer (`CoordinatorWriteEvent` built by
    `scheduleTransactionalWriteOperation`): its records are replayed with the producer's id and
    epoch and go to the log in a batch of their own, flushed at once (`append` flushes the open
    batch first and never lingers on a transactional one)."""

    __slots__ = ("transactional_id", "producer_id", "producer_epoch")

    def __init__(self, runtime: CoordinatorRuntime[Any], name: str, tp: TopicPartition,
                 transactional_id: str | None, producer_id: int, producer_epoch: int,
                 op: Callable[[Any], CoordinatorResult[T]], timeout_ms: int) -> None:
        super().__init__(runtime, name, tp, op, timeout_ms)
        self.transactional_id = transactional_id
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch

    def run(self) -> None:
        rt = self.runtime
        try:
            ctx = rt._contexts.get(self.key)
            if ctx is None or ctx.state is not _A:
                raise _inactive_error(ctx)
            op, self.op = self.op, None
            result = op(ctx.coordinator.shard)  # type: ignore[union-attr]
            if not isinstance(result, CoordinatorResult):
                raise TypeError(f"write operation {self.name!r} must return a "
                                f"CoordinatorResult, got {type(result).__name__}")
            self.response = result.response
            self.append_future = result.append_future
            self.records = 0
            records = list(result.records)
            self.records = len(records)
            ctx.append(self.producer_id, self.producer_epoch, records, result.replay_records,
                       result.is_atomic, self)
            if self.future._state is _PENDING:
                self._timeout = rt.scheduler.call_later(
                    self.timeout_ms, rt._on_operation_timeout, self, name=f"timeout {self.name}")
        except BaseException as exc:
            self.complete(exc)


class _CompleteTransactionEvent:
    """Writes an end-transaction marker (Kafka's `CoordinatorCompleteTransactionEvent`): its
    future completes with None once the marker is committed, or fails."""

    __slots__ = ("runtime", "key", "name", "producer_id", "producer_epoch", "coordinator_epoch",
                 "result", "timeout_ms", "future", "_timeout")

    def __init__(self, runtime: CoordinatorRuntime[Any], name: str, tp: TopicPartition,
                 producer_id: int, producer_epoch: int, coordinator_epoch: int,
                 result: TransactionResult, timeout_ms: int) -> None:
        self.runtime = runtime
        self.key = tp
        self.name = name
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.coordinator_epoch = coordinator_epoch
        self.result = result
        self.timeout_ms = timeout_ms
        self.future: CoordinatorFuture[None] = CoordinatorFuture(name)
        self._timeout: TimerHandle | None = None

    def run(self) -> None:
        rt = self.runtime
        try:
            ctx = rt._contexts.get(self.key)
            if ctx is None or ctx.state is not _A:
                raise _inactive_error(ctx)
            ctx.complete_transaction(self.producer_id, self.producer_epoch,
                                     self.coordinator_epoch, self.result, self)
            if self.future._state is _PENDING:
                self._timeout = rt.scheduler.call_later(
                    self.timeout_ms, rt._on_operation_timeout, self, name=f"timeout {self.name}")
        except BaseException as exc:
            self.complete(exc)

    def complete(self, exc: BaseException | None) -> None:
        if exc is None:
            self.future.complete(None)
        else:
            self.future.complete_exceptionally(exc)
        timeout, self._timeout = self._timeout, None
        if timeout is not None:
            timeout.cancel()

    def __str__(self) -> str:
        return f"CoordinatorCompleteTransactionEvent(name={self.name})"

    __repr__ = __str__


class _Appended:
    """What a write keeps once its operation returned: the response and the append future it
    completes when the batch commits (`CoordinatorResult.appendFuture`), and how many records it
    appended; a view
    made on demand by `_WriteEvent.result`."""

    __slots__ = ("response", "append_future", "records")

    def __init__(self, response: Any, append_future: CoordinatorFuture[None] | None,
                 records: int) -> None:
        self.response = response
        self.append_future = append_future
        self.records = records

    def __repr__(self) -> str:
        return f"_Appended(records={self.records}, response={self.response!r})"


def _inactive_error(ctx: CoordinatorContext | None) -> KafkaError:
    """The error for an operation on a context that is not ACTIVE (`withActiveContextOrThrow`)."""
    if ctx is not None and ctx.state is _L:
        return Errors.COORDINATOR_LOAD_IN_PROGRESS.exception()
    return Errors.NOT_COORDINATOR.exception()


class _ReadEvent(Generic[T]):
    __slots__ = ("runtime", "key", "name", "op", "future")

    def __init__(self, runtime: CoordinatorRuntime[Any], name: str, tp: TopicPartition,
                 op: Callable[[Any, int], T]) -> None:
        self.runtime = runtime
        self.key = tp
        self.name = name
        self.op = op
        self.future: CoordinatorFuture[T] = CoordinatorFuture(name)

    def run(self) -> None:
        try:
            def body(ctx: CoordinatorContext) -> T:
                assert ctx.coordinator is not None
                return self.op(ctx.coordinator.shard, ctx.coordinator.last_committed_offset)
            self.future.complete(self.runtime._with_active_context_or_throw(self.key, body))
        except BaseException as exc:
            self.complete(exc)

    def complete(self, exc: BaseException | None) -> None:
        if exc is not None:
            self.future.complete_exceptionally(exc)

    def __str__(self) -> str:
        return f"CoordinatorReadEvent(name={self.name})"

    __repr__ = __str__


class _InternalEvent:
    __slots__ = ("runtime", "key", "name", "op")

    def __init__(self, runtime: CoordinatorRuntime[Any], name: str, tp: TopicPartition,
                 op: Callable[[], None]) -> None:
        self.runtime = runtime
        self.key = tp
        self.name = name
        self.op = op

    def run(self) -> None:
        try:
            self.op()
        except BaseException as exc:
            self.complete(exc)

    def complete(self, exc: BaseException | None) -> None:
        if exc is not None:
            self.runtime.log.log("R-EXEC-FAILED", name=self.name,
                                 error=exc.detail if isinstance(exc, KafkaError)
                                 else str(exc) or type(exc).__name__)

    def __str__(self) -> str:
        return f"CoordinatorInternalEvent(name={self.name})"

    __repr__ = __str__


class CoordinatorRuntime(Generic[S]):
    """Runs coordinator shards for the partitions one broker leads (Kafka's
    `CoordinatorRuntime`)."""

    def __init__(self, *, broker_id: int, scheduler: Scheduler, trace: Trace,
                 partitions: dict[TopicPartition, ReplicatedPartition],
                 shard_builder_supplier: CoordinatorShardBuilderSupplier, serde: RecordSerde,
                 config: RuntimeConfig | None = None, processor: EventProcessor | None = None,
                 loader: CoordinatorLoader | None = None, seed: int = 0) -> None:
        self.broker_id = broker_id
        self.scheduler = scheduler
        self.trace = trace
        self.config = config or RuntimeConfig()
        self._write_timeout_ms = self.config.write_timeout_ms  # the config is frozen
        self.log = LogContext(trace, f"broker-{broker_id}", f"[GroupCoordinator id={broker_id}] ")
        self._debug = self.log.enabled("DEBUG")
        self.shard_builder_supplier = shard_builder_supplier
        self.serde = serde
        self.partitions = partitions
        self.writer = PartitionWriter(broker_id, partitions)
        # At linger 0 every write's batch is flushed by the write itself: a write with
        # no batch open goes straight to the partition (`_append_own_batch`), which is the
        # kit's PartitionWriter's own append (a replaced writer keeps the general path).
        self._flush_every_write = self.config.append_linger_ms == 0 and \
            type(self.writer) is PartitionWriter
        self.loader = loader or CoordinatorLoader(broker_id, scheduler, partitions, serde,
                                                  self.log.child(""))
        self.processor = processor or DeterministicEventProcessor(scheduler, seed=seed)
        self.processor.bind_log(self.log)
        self.metadata_image: MetadataImage = MetadataImage.EMPTY  # type: ignore[attr-defined]
        self._contexts: dict[TopicPartition, CoordinatorContext] = {}
        self._lock = threading.RLock()
        self._running = True
        self._state_listeners: list[Callable[[TopicPartition, CoordinatorState,
                                              CoordinatorState], None]] = []
        self._on_operation_timeout = self._operation_timeout  # bound once, not once per write
        self._timeouts = TimerLane(scheduler, self._on_operation_timeout, _timeout_live,
                                   _timeout_disarm, _timeout_name)

    # -- plumbing ------------------------------------------------------------------------------

    def _throw_if_not_running(self) -> None:
        if not self._running:
            raise Errors.NOT_COORDINATOR.exception()

    def _enqueue_last(self, event: Any) -> None:
        try:
            self.processor.enqueue_last(event)
        except RejectedExecutionError:
            raise Errors.NOT_COORDINATOR.exception(
                "Can't accept an event because the processor is closed") from None

    def _enqueue_first(self, event: Any) -> None:
        try:
            self.processor.enqueue_first(event)
        except RejectedExecutionError:
            raise Errors.NOT_COORDINATOR.exception(
                "Can't accept an event because the processor is closed") from None

    def _with_active_context_or_throw(self, tp: TopicPartition,
                                      fn: Callable[[CoordinatorContext], T]) -> T:
        ctx = self._contexts.get(tp)
        if ctx is None:
            raise Errors.NOT_COORDINATOR.exception()
        if ctx.state is CoordinatorState.ACTIVE:
            return fn(ctx)
        if ctx.state is CoordinatorState.LOADING:
            raise Errors.COORDINATOR_LOAD_IN_PROGRESS.exception()
        raise Errors.NOT_COORDINATOR.exception()

    def _schedule_internal(self, name: str, tp: TopicPartition, op: Callable[[], None]) -> None:
        if self._debug:
            self.log.log("R-SCHED-INTERNAL", name=name)
        self._enqueue_last(_InternalEvent(self, name, tp, op))

    def _operation_timeout(self, event: _WriteEvent[Any]) -> None:
        name = str(event)
        try:
            self._schedule_internal(
                f"OperationTimeout(name={name}, tp={event.key})", event.key,
                lambda: event.complete(Errors.REQUEST_TIMED_OUT.exception(
                    f"{name} timed out after {event.timeout_ms}ms")))
        except KafkaError:
            pass

    def _maybe_create_context(self, tp: TopicPartition) -> CoordinatorContext:
        with self._lock:
            ctx = self._contexts.get(tp)
            if ctx is None:
                ctx = self._contexts[tp] = CoordinatorContext(self, tp)
            return ctx

    # -- public API ----------------------------------------------------------------------------

    def schedule_write_operation(self, name: str, tp: TopicPartition,
                                 op: Callable[[S], CoordinatorResult[T]],
                                 timeout_ms: int | None = None, *,
                                 on_error: Callable[[BaseException], T] | None = None
                                 ) -> CoordinatorFuture[T]:
        """Run `op(shard)` as a write; the future completes when its records commit.

        With `on_error`, a failed write completes its future with `on_error(exc)` instead of
        failing it: Kafka's `scheduleWriteOperation(...).exceptionally(...)`, as the group
        coordinator service chains it to turn a failure into an error response, without a
        second future per request."""
        if not self._running:  # _throw_if_not_running()
            raise Errors.NOT_COORDINATOR.exception()
        # self._schedule_write(name, tp, op, timeout_ms), written out: this runs for every write
        if self._debug:
            self.log.log("R-SCHED-WRITE", name=name)
        event = _WriteEvent(self, name, tp, op,
                            self._write_timeout_ms if timeout_ms is None else timeout_ms)
        event.on_error = on_error
        try:
            self.processor.enqueue_last(event)
        except RejectedExecutionError:
            raise Errors.NOT_COORDINATOR.exception(
                "Can't accept an event because the processor is closed") from None
        return event.future

    def _schedule_write(self, name: str, tp: TopicPartition, op: Callable[[Any], Any],
                        timeout_ms: int | None, log_it: bool = True) -> CoordinatorFuture[Any]:
        if log_it and self._debug:
            self.log.log("R-SCHED-WRITE", name=name)
        event = _WriteEvent(self, name, tp, op,
                            self.config.write_timeout_ms if timeout_ms is None else timeout_ms)
        try:
            self.processor.enqueue_last(event)
        except RejectedExecutionError:
            if log_it:
                raise Errors.NOT_COORDINATOR.exception(
                    "Can't accept an event because the processor is closed") from None
            raise
        return event.future

    def schedule_read_operation(self, name: str, tp: TopicPartition,
                                op: Callable[[S, int], T]) -> CoordinatorFuture[T]:
        """Run `op(shard, last_committed_offset)`; answers at once, from committed state."""
        self._throw_if_not_running()
        if self._debug:
            self.log.log("R-SCHED-READ", name=name)
        event = _ReadEvent(self, name, tp, op)
        self._enqueue_last(event)
        return event.future

    def schedule_read_all_operation(self, name: str, op: Callable[[S, int], T]
                                    ) -> list[CoordinatorFuture[T]]:
        """`schedule_read_operation(name, tp, op)` for every partition this runtime has a
        context for, in partition order (`scheduleReadAllOperation`): each read runs at its
        partition's last committed offset; one whose context is not ACTIVE fails as a read
        does (NOT_COORDINATOR, or COORDINATOR_LOAD_IN_PROGRESS while it loads)."""
        self._throw_if_not_running()
        if self._debug:
            self.log.log("R-SCHED-READ-ALL", name=name)
        return [self.schedule_read_operation(name, tp, op) for tp in sorted(self._contexts)]

    def schedule_transactional_write_operation(
            self, name: str, tp: TopicPartition, transactional_id: str | None,
            producer_id: int, producer_epoch: int, op: Callable[[S], CoordinatorResult[T]],
            timeout_ms: int | None = None, *,
            on_error: Callable[[BaseException], T] | None = None) -> CoordinatorFuture[T]:
        """A write whose records belong to a transaction (`scheduleTransactionalWriteOperation`):
        replayed with `producer_id`/`producer_epoch` (the shard keeps them pending) and appended
        in a batch of their own carrying them. The broker's check that the partition was added
        to the transaction (KIP-890 verification) is not modelled: the write goes ahead."""
        self._throw_if_not_running()
        if isinstance(producer_id, bool) or not isinstance(producer_id, int) or producer_id < 0:
            raise ValueError(f"a transactional write needs a producer id >= 0, got "
                             f"{producer_id!r}")
        if self._debug:
            self.log.log("R-SCHED-TXN-WRITE", name=name)
        event = _TransactionalWriteEvent(
            self, name, tp, transactional_id, producer_id, producer_epoch, op,
            self._write_timeout_ms if timeout_ms is None else timeout_ms)
        event.on_error = on_error
        self._enqueue_last(event)
        return event.future

    def schedule_transaction_completion(self, name: str, tp: TopicPartition, producer_id: int,
                                        producer_epoch: int, coordinator_epoch: int,
                                        result: TransactionResult | str,
                                        timeout_ms: int | None = None
                                        ) -> CoordinatorFuture[None]:
        """Write the marker that commits or aborts `producer_id`'s transaction in `tp`
        (`scheduleTransactionCompletion`); the future completes when the marker commits."""
        self._throw_if_not_running()
        result = TransactionResult.of(result)
        if self._debug:
            self.log.log("R-SCHED-TXN-COMPLETION", tp=tp, producer_id=producer_id,
                         producer_epoch=producer_epoch, coordinator_epoch=coordinator_epoch,
                         result=result.value)
        event = _CompleteTransactionEvent(
            self, name, tp, producer_id, producer_epoch, coordinator_epoch, result,
            self._write_timeout_ms if timeout_ms is None else timeout_ms)
        self._enqueue_last(event)
        return event.future

    def schedule_load_operation(self, tp: TopicPartition, partition_epoch: int) -> None:
        """This broker became leader of `tp` at `partition_epoch`: load it
        (`scheduleLoadOperation`)."""
        self._throw_if_not_running()
        self.log.log("R-SCHED-LOAD", tp=tp, epoch=partition_epoch)
        self._maybe_create_context(tp)

        def load() -> None:
            ctx = self._maybe_create_context(tp)
            if ctx.epoch < partition_epoch:
                ctx.epoch = partition_epoch
                if ctx.state in (CoordinatorState.INITIAL, CoordinatorState.FAILED):
                    ctx.transition_to(CoordinatorState.LOADING)
                elif ctx.state is CoordinatorState.LOADING:
                    self.log.log("R-LOAD-ALREADY-LOADING", tp=tp)
                elif ctx.state is CoordinatorState.ACTIVE:
                    self.log.log("R-LOAD-ALREADY-ACTIVE", tp=tp)
                else:
                    self.log.log("R-LOAD-BAD-STATE", tp=tp, state=ctx.state)
            else:
                self.log.log("R-LOAD-IGNORED", tp=tp, current_epoch=ctx.epoch,
                             epoch=partition_epoch)

        self._schedule_internal(f"Load(tp={tp}, epoch={partition_epoch})", tp, load)

    def schedule_unload_operation(self, tp: TopicPartition, partition_epoch: int | None) -> None:
        """This broker lost `tp` (or the topic was deleted: epoch None); unload it
        (`scheduleUnloadOperation`)."""
        self._throw_if_not_running()
        shown = _optional_int(partition_epoch)
        self.log.log("R-SCHED-UNLOAD", tp=tp, epoch=shown)

        def unload() -> None:
            ctx = self._contexts.get(tp)
            if ctx is None:
                self.log.log("R-UNLOAD-NEVER-LOADED", tp=tp, epoch=shown)
            elif partition_epoch is None or ctx.epoch < partition_epoch:
                self.log.log("R-UNLOAD-START", tp=tp, epoch=shown)
                ctx.transition_to(CoordinatorState.CLOSED)
                with self._lock:
                    if self._contexts.get(tp) is ctx:
                        del self._contexts[tp]
                self.log.log("R-UNLOAD-DONE", tp=tp, epoch=shown)
            else:
                self.log.log("R-UNLOAD-IGNORED", tp=tp, epoch=shown, current_epoch=ctx.epoch)

        self._schedule_internal(f"UnloadCoordinator(tp={tp}, epoch={shown})", tp, unload)

    def on_new_metadata_image(self, image: MetadataImage, delta: MetadataDelta) -> None:
        """Store the image for future loads and hand it to every active shard
        (`onNewMetadataImage`)."""
        self._throw_if_not_running()
        if self._debug:
            self.log.log("R-SCHED-IMAGE", offset=image.offset)
        self.metadata_image = image
        for tp in sorted(self._contexts):
            def apply(tp: TopicPartition = tp) -> None:
                ctx = self._contexts.get(tp)
                if ctx is None:
                    self.log.log("R-IMAGE-GONE", offset=image.offset, tp=tp)
                elif ctx.state is CoordinatorState.ACTIVE and ctx.coordinator is not None:
                    self.log.log("R-APPLY-IMAGE", offset=image.offset, tp=tp)
                    ctx.coordinator.on_new_metadata_image(image, delta)
                else:
                    self.log.log("R-IMAGE-IGNORED", offset=image.offset, tp=tp)
            self._schedule_internal(f"UpdateImage(tp={tp}, offset={image.offset})", tp, apply)

    def close(self) -> None:
        """Stop: reject queued events, unload every coordinator."""
        if not self._running:
            self.log.log("R-ALREADY-CLOSING")
            return
        self._running = False
        self.log.log("R-CLOSING")
        self.loader.close()
        self.processor.close()
        with self._lock:
            for ctx in list(self._contexts.values()):
                ctx.transition_to(CoordinatorState.CLOSED)
            self._contexts.clear()
        self.log.log("R-CLOSED")

    # -- introspection for learners and tests --------------------------------------------------

    def on_state_change(self, callback: Callable[[TopicPartition, CoordinatorState,
                                                  CoordinatorState], None]) -> None:
        """Call `callback(tp, old, new)` after every context transition (live diagrams)."""
        self._state_listeners.append(callback)

    def context_state(self, tp: TopicPartition) -> CoordinatorState | None:
        ctx = self._contexts.get(tp)
        return None if ctx is None else ctx.state

    def context(self, tp: TopicPartition) -> CoordinatorContext | None:
        return self._contexts.get(tp)

    def partitions_loaded(self) -> list[TopicPartition]:
        return sorted(tp for tp, c in self._contexts.items()
                      if c.state is CoordinatorState.ACTIVE)

    def describe(self, tp: TopicPartition) -> dict[str, Any]:
        """A plain snapshot of one context: state, epoch, offsets, snapshots, parked writes."""
        ctx = self._contexts.get(tp)
        if ctx is None:
            return {"tp": str(tp), "state": None}
        c = ctx.coordinator
        return {
            "tp": str(tp),
            "state": ctx.state.name,
            "epoch": ctx.epoch,
            "last_written_offset": None if c is None else c.last_written_offset,
            "last_committed_offset": None if c is None else c.last_committed_offset,
            "snapshots": None if c is None else c.snapshot_registry.epochs_list(),
            "open_batch": None if ctx.batch is None else
            (ctx.batch.base_offset, ctx.batch.next_offset),
            "parked": [(o, [e.name for e in es]) for o, es in ctx.deferred.pending()],
            "timers": sorted(ctx.timer.tasks),
        }

    def __repr__(self) -> str:
        states = ", ".join(f"{tp}={c.state.name}" for tp, c in sorted(self._contexts.items()))
        return f"CoordinatorRuntime(broker={self.broker_id}, {{{states}}})"
