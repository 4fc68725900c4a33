"""A shard plus its snapshot registry and offsets (Kafka's `SnapshottableCoordinator`).

`last_written_offset` is the end of what has been appended (and replayed); a snapshot exists at
each such offset so a failed batch can be undone. `last_committed_offset` follows the high
watermark; snapshots below it are dropped, and reads run at it.
"""

from __future__ import annotations

from typing import Any

from ..logs.layout import level_number
from ..timeline import SnapshotRegistry
from ..topic import TopicPartition
from ..trace import LogContext
from .metadata import MetadataDelta, MetadataImage
from .shard import CoordinatorShard

__all__ = ["SnapshottableCoordinator"]

_DEBUG = level_number("DEBUG")


class SnapshottableCoordinator:
    def __init__(self, log: LogContext, registry: SnapshotRegistry, shard: CoordinatorShard,
                 tp: TopicPartition) -> None:
        self.log = log
        self.snapshot_registry = registry
        self.shard = shard
        self.tp = tp
        self.last_written_offset = 0
        self.last_committed_offset = 0
        registry.get_or_create_snapshot(0)

    def replay(self, offset: int, producer_id: int, producer_epoch: int, record: Any) -> None:
        self.shard.replay(offset, producer_id, producer_epoch, record)

    def replay_end_transaction_marker(self, producer_id: int, producer_epoch: int,
                                      result: str) -> None:
        self.shard.replay_end_transaction_marker(producer_id, producer_epoch, result)

    def update_last_written_offset(self, offset: int) -> None:
        if offset <= self.last_written_offset:
            raise RuntimeError(f"New last written offset {offset} of {self.tp} must be greater "
                               f"than {self.last_written_offset}.")
        self.last_written_offset = offset
        self.snapshot_registry.get_or_create_snapshot(offset)  # idempotent_create_snapshot
        if self.log.trace.threshold <= _DEBUG:  # S-WRITTEN is a DEBUG line
            self.log.log("S-WRITTEN", tp=self.tp, offset=offset)

    def revert_last_written_offset(self, offset: int) -> None:
        if offset > self.last_written_offset:
            raise RuntimeError(f"New offset {offset} of {self.tp} must be smaller than "
                               f"{self.last_written_offset}.")
        self.log.log("S-REVERT", tp=self.tp, offset=offset)
        self.last_written_offset = offset
        self.snapshot_registry.revert_to_snapshot(offset)

    def update_last_committed_offset(self, offset: int) -> None:
        if offset < self.last_committed_offset:
            raise RuntimeError(f"New committed offset {offset} of {self.tp} must be greater than "
                               f"or equal to {self.last_committed_offset}.")
        if offset > self.last_written_offset:
            raise RuntimeError(f"New committed offset {offset} of {self.tp} must be less than or "
                               f"equal to {self.last_written_offset}.")
        self.last_committed_offset = offset
        self.snapshot_registry.delete_snapshots_up_to(offset)
        self.log.log("S-COMMITTED", tp=self.tp, offset=offset)

    def on_loaded(self, image: MetadataImage) -> None:
        self.shard.on_loaded(image)

    def on_unloaded(self) -> None:
        self.shard.on_unloaded()

    def on_new_metadata_image(self, image: MetadataImage, delta: MetadataDelta) -> None:
        self.shard.on_new_metadata_image(image, delta)
