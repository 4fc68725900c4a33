"""What the runtime asks of a coordinator: the shard SPI, its builder, and operation results.

A shard (Kafka's `CoordinatorShard`) is the state machine of one coordinator partition. It changes
its *hard* state only by replaying records, so the runtime can rebuild it from the log and roll it
back to a snapshot. A write operation returns a `CoordinatorResult`: the records to append and the
response to send once they are committed.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from ..clock import Scheduler
from ..timeline import SnapshotRegistry
from ..topic import TopicPartition
from ..trace import LogContext
from .future import CoordinatorFuture
from .metadata import MetadataDelta, MetadataImage

__all__ = ["CoordinatorShard", "CoordinatorShardBuilder", "CoordinatorShardBuilderSupplier",
           "CoordinatorResult", "CoordinatorTimer"]

T = TypeVar("T")
S = TypeVar("S", bound="CoordinatorShard")


@dataclass(slots=True)
class CoordinatorResult(Generic[T]):
    """Records to append and the response to release when they commit.

    `append_future` completes (before the response) once the records commit or fail; classic
    groups hang follow-up work on it. `replay_records=False` appends without replaying (the
    handler already mutated soft state). `is_atomic` keeps all records in one batch.
    """

    records: Sequence[Any] = field(default_factory=list)
    response: T | None = None
    append_future: CoordinatorFuture[None] | None = None
    replay_records: bool = True
    is_atomic: bool = True


class CoordinatorTimer(Protocol):
    def schedule(self, key: str, delay_ms: int, retry: bool,
                 operation: Callable[[], CoordinatorResult[Any]],
                 retry_backoff_ms: int = 500) -> None: ...

    def schedule_if_absent(self, key: str, delay_ms: int, retry: bool,
                           operation: Callable[[], CoordinatorResult[Any]]) -> None: ...

    def reschedule(self, key: str, delay_ms: int) -> bool: ...

    def cancel(self, key: str) -> None: ...

    def is_scheduled(self, key: str) -> bool: ...


class CoordinatorShard(ABC):
    """The state machine of one coordinator partition."""

    @abstractmethod
    def replay(self, offset: int, producer_id: int, producer_epoch: int, record: Any) -> None:
        """Apply one record (on append, and when loading the log)."""

    def replay_end_transaction_marker(self, producer_id: int, producer_epoch: int,
                                      result: str) -> None:
        """Apply a COMMIT/ABORT marker (only shards with transactional writes care)."""

    def on_loaded(self, image: MetadataImage) -> None:
        """The partition finished loading and is now active: arm timers, apply the image."""

    def on_unloaded(self) -> None:
        """The partition is being unloaded: release whatever is not in the log."""

    def on_new_metadata_image(self, image: MetadataImage, delta: MetadataDelta) -> None:
        """A newer metadata image arrived while active."""


class CoordinatorShardBuilder(ABC, Generic[S]):
    """Collects what a shard needs, then builds it (Kafka's `CoordinatorShardBuilder`)."""

    def __init__(self) -> None:
        self.log: LogContext | None = None
        self.snapshot_registry: SnapshotRegistry | None = None
        self.time: Scheduler | None = None
        self.timer: CoordinatorTimer | None = None
        self.tp: TopicPartition | None = None

    def with_log_context(self, log: LogContext) -> CoordinatorShardBuilder[S]:
        self.log = log
        return self

    def with_snapshot_registry(self, registry: SnapshotRegistry) -> CoordinatorShardBuilder[S]:
        self.snapshot_registry = registry
        return self

    def with_time(self, time: Scheduler) -> CoordinatorShardBuilder[S]:
        self.time = time
        return self

    def with_timer(self, timer: CoordinatorTimer) -> CoordinatorShardBuilder[S]:
        self.timer = timer
        return self

    def with_topic_partition(self, tp: TopicPartition) -> CoordinatorShardBuilder[S]:
        self.tp = tp
        return self

    def _require(self) -> None:
        missing = [n for n in ("log", "snapshot_registry", "time", "timer", "tp")
                   if getattr(self, n) is None]
        if missing:
            raise ValueError(f"{type(self).__name__}.build() is missing {', '.join(missing)}; "
                             f"call the matching with_* methods first")

    @abstractmethod
    def build(self) -> S:
        ...


CoordinatorShardBuilderSupplier = Callable[[], CoordinatorShardBuilder[Any]]
