"""A group coordinator shard driven by hand, for the KIP-848 tests (after Kafka's
`GroupMetadataManagerTestContext`): a heartbeat returns its records, which are replayed at once
as the runtime would, and the timers are a `MockCoordinatorTimer` fired by `sleep`."""

from __future__ import annotations

import random
from typing import Any

from coordinator_kit.group.api import (ConsumerGroupHeartbeatRequest, OffsetCommitRequest,
                                       RequestContext)
from coordinator_kit.group.config import GroupCoordinatorConfig
from coordinator_kit.group.shard import GroupCoordinatorShardBuilder
from coordinator_kit.runtime.metadata import MetadataImage
from coordinator_kit.timeline import SnapshotRegistry
from coordinator_kit.topic import TopicPartition
from coordinator_kit.trace import LogContext, Trace


class MockTime:
    def __init__(self) -> None:
        self.now = 0


class MockCoordinatorTimer:
    """Kafka's `MockCoordinatorTimer`: timeouts by key, fired in deadline order by `poll`."""

    def __init__(self, time: MockTime) -> None:
        self.time = time
        self.timeouts: dict[str, tuple[int, Any]] = {}

    def schedule(self, key, delay_ms, retry, operation, retry_backoff_ms=500) -> None:
        self.timeouts[key] = (self.time.now + delay_ms, operation)

    def schedule_if_absent(self, key, delay_ms, retry, operation) -> None:
        if key not in self.timeouts:
            self.schedule(key, delay_ms, retry, operation)

    def reschedule(self, key, delay_ms) -> bool:
        if key not in self.timeouts:
            return False
        self.timeouts[key] = (self.time.now + delay_ms, self.timeouts[key][1])
        return True

    def cancel(self, key) -> None:
        self.timeouts.pop(key, None)

    def is_scheduled(self, key) -> bool:
        return key in self.timeouts

    def deadline(self, key) -> int | None:
        entry = self.timeouts.get(key)
        return None if entry is None else entry[0]


class ConsumerGroupContext:
    def __init__(self, topics: dict[str, int], **config: Any) -> None:
        self.time = MockTime()
        self.trace = Trace(self.time, level="DEBUG")
        self.timer = MockCoordinatorTimer(self.time)
        self.registry = SnapshotRegistry()
        builder = GroupCoordinatorShardBuilder(
            GroupCoordinatorConfig.from_properties(config), random.Random(0))
        builder.with_log_context(LogContext(self.trace, "shard")) \
            .with_snapshot_registry(self.registry).with_time(self.time) \
            .with_timer(self.timer).with_topic_partition(TopicPartition.offsets(0))
        self.shard = builder.build()
        self.shard.on_loaded(MetadataImage(1, topics))
        self.offset = 0

    @property
    def manager(self):
        return self.shard.consumer_groups

    def group(self, group_id: str = "g"):
        return self.manager.groups.get(group_id)

    def replay(self, records) -> None:
        for r in records:
            self.shard.replay(self.offset, -1, -1, r)
            self.offset += 1

    def heartbeat(self, request: ConsumerGroupHeartbeatRequest, client_id: str = "client"):
        result = self.shard.consumer_group_heartbeat(RequestContext(client_id), request)
        if result.replay_records:  # a downgrade changed the maps itself
            self.replay(result.records)
        return result

    def commit(self, request: OffsetCommitRequest):
        result = self.shard.commit_offset(RequestContext("client"), request)
        self.replay(result.records)
        return result

    def sleep(self, ms: int) -> list[Any]:
        """Advance the clock and fire due timers (their records replayed); their results."""
        self.time.now += ms
        fired = []
        while True:
            due = sorted((d, k) for k, (d, _) in self.timer.timeouts.items()
                         if d <= self.time.now)
            if not due:
                return fired
            _, key = due[0]
            _, op = self.timer.timeouts.pop(key)
            result = op()
            if result.replay_records:
                self.replay(result.records)
            fired.append((key, result))

    def lines(self, level: str = "INFO") -> list[str]:
        return self.trace.lines(level=level)
