"""Loading a coordinator partition from its log (Kafka's `CoordinatorLoaderImpl`).

The loader runs on its own single-threaded scheduler: loads queue behind each other, and the
time a load waited is reported as "spent in the scheduler". It replays every record from the log
start to the log end into a fresh shard: what the log cleaner left of the compacted part (each
record at its own offset, `LogBatch.offset_records`), then the rest. Snapshots are only taken once the replay has passed the
high watermark, so afterwards only snapshots at or above the committed offset exist, and a
replayed-but-uncommitted tail is possible.

Virtual time: a load takes `load_base_ms` plus one millisecond per `records_per_ms` records; a
learner can make the next load of a partition slow or fail.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..clock import Scheduler
from ..errors import Errors, KafkaError
from ..topic import TopicPartition
from ..trace import LogContext
from .future import CoordinatorFuture
from .partition import ReplicatedPartition
from .records import RecordSerde, UnknownRecordTypeError
from .snapshottable import SnapshottableCoordinator

__all__ = ["CoordinatorLoader", "LoadSummary"]


@dataclass(frozen=True)
class LoadSummary:
    start_time_ms: int
    end_time_ms: int
    scheduler_queue_time_ms: int
    num_records: int
    num_bytes: int


class CoordinatorLoader:
    """Replays a partition's log into a coordinator, one load at a time, on virtual time."""

    def __init__(self, broker_id: int, scheduler: Scheduler,
                 partitions: dict[TopicPartition, ReplicatedPartition], serde: RecordSerde,
                 log: LogContext, *, load_base_ms: int = 1, records_per_ms: int = 1000) -> None:
        if load_base_ms < 0 or records_per_ms < 1:
            raise ValueError("load_base_ms must be >= 0 and records_per_ms >= 1")
        self.broker_id = broker_id
        self.scheduler = scheduler
        self.partitions = partitions
        self.serde = serde
        self.log = log
        self.load_base_ms = load_base_ms
        self.records_per_ms = records_per_ms
        self._busy_until = 0
        self._extra_delay: dict[TopicPartition, int] = {}
        self._failures: dict[TopicPartition, KafkaError | Exception] = {}
        self.closed = False

    # -- faults --------------------------------------------------------------------------------

    def slow_next_load(self, tp: TopicPartition, extra_ms: int) -> None:
        if extra_ms < 0:
            raise ValueError(f"extra_ms must be >= 0, got {extra_ms}")
        self._extra_delay[tp] = extra_ms

    def fail_next_load(self, tp: TopicPartition, error: Exception | None = None) -> None:
        self._failures[tp] = error or Errors.KAFKA_STORAGE_ERROR.exception(
            f"Error while reading the log of {tp} (injected fault)")

    # -- loading -------------------------------------------------------------------------------

    def load(self, tp: TopicPartition, coordinator: SnapshottableCoordinator
             ) -> CoordinatorFuture[LoadSummary]:
        future: CoordinatorFuture[LoadSummary] = CoordinatorFuture(f"load {tp}")
        if self.closed:
            future.complete_exceptionally(RuntimeError("Coordinator loader is closed."))
            return future
        start = self.scheduler.now
        begin = max(start, self._busy_until)
        partition = self.partitions.get(tp)
        records = sum(len(b.records) for b in partition.read(self.broker_id)) if partition else 0
        duration = self.load_base_ms + records // self.records_per_ms + self._extra_delay.pop(tp, 0)
        self._busy_until = begin + duration
        self.scheduler.call_at(self._busy_until, self._do_load, tp, coordinator, future, start,
                               begin - start, name=f"load-{tp}")
        return future

    def _do_load(self, tp: TopicPartition, coordinator: SnapshottableCoordinator,
                 future: CoordinatorFuture[LoadSummary], start: int, queue_ms: int) -> None:
        try:
            future.complete(self._replay(tp, coordinator, start, queue_ms))
        except Exception as exc:  # every failure fails the load, as in Kafka
            future.complete_exceptionally(exc)

    def _replay(self, tp: TopicPartition, coordinator: SnapshottableCoordinator, start: int,
                queue_ms: int) -> LoadSummary:
        if self.closed:
            raise RuntimeError("Coordinator loader is closed.")
        failure = self._failures.pop(tp, None)
        if failure is not None:
            raise failure
        partition = self.partitions.get(tp)
        if partition is None:
            raise Errors.NOT_LEADER_OR_FOLLOWER.exception(
                f"Could not load records from {tp} because the log does not exist.")
        if partition.leader_id != self.broker_id:
            raise Errors.NOT_LEADER_OR_FOLLOWER.exception(
                f"Stopped loading records from {tp} because the partition is not online or is no "
                f"longer the leader.")
        previous_hwm = -1
        num_records = num_bytes = 0
        for batch in partition.read(self.broker_id, partition.log_start_offset):
            if batch.control is not None:
                coordinator.replay_end_transaction_marker(batch.producer_id,
                                                          batch.producer_epoch, batch.control)
            else:
                for offset, key, value in batch.offset_records():
                    num_records += 1
                    try:
                        record = self.serde.deserialize(key, value)
                    except UnknownRecordTypeError as exc:
                        self.log.log("L-UNKNOWN-TYPE", type=exc.unknown_type, tp=tp)
                        continue
                    try:
                        coordinator.replay(offset, batch.producer_id, batch.producer_epoch,
                                           record)
                    except Exception as exc:
                        raise RuntimeError(
                            f"Replaying record {record} from {tp} at offset {offset} with "
                            f"producer id {batch.producer_id} and producer epoch "
                            f"{batch.producer_epoch} failed due to: {exc}") from exc
            num_bytes += batch.size_in_bytes
            current = batch.next_offset
            hwm = partition.high_watermark
            if current >= hwm:
                coordinator.update_last_written_offset(current)
                if hwm > previous_hwm:
                    coordinator.update_last_committed_offset(hwm)
                    previous_hwm = hwm
        return LoadSummary(start, self.scheduler.now, queue_ms, num_records, num_bytes)

    def close(self) -> None:
        self.closed = True
