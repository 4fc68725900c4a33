"""The data topics of a live server: an in-memory log per partition, so consumers fetch real
records and producers append them.

A record keeps what a consumer can see of it (offset, timestamp, key, value, headers); the
server builds the v2 record batch a Fetch returns from them (`kafka.record`). Leaders are
spread over the brokers as Kafka's default placement does for a fresh topic (partition p on
broker p mod n). The log never truncates: a live session is minutes long, and
`max_records_per_partition` bounds it (the oldest are dropped, and the log start offset moves,
as retention would).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

from ..group.modern.topics import topic_id as kit_topic_id
from ..group.records import uuid_bytes, uuid_string
from ..topic import illegal_name_reason

__all__ = ["DataRecord", "PartitionLog", "DataTopics", "topic_id", "topic_id_string",
           "wire_topic_id"]


def wire_topic_id(printed: str) -> uuid.UUID:
    """A topic id in Kafka's printed form (`Uuid.toString`) as the wire codec's `uuid.UUID`."""
    return uuid.UUID(bytes=uuid_bytes("TopicId", printed))


def topic_id(name: str) -> uuid.UUID:
    """The id of topic `name` on the wire: the group coordinator's own (`group.modern.topics`,
    derived from the name), so the ids of Metadata and of ConsumerGroupHeartbeat agree.
    Kafka draws a random one at creation; a derived one is the same in every run."""
    return wire_topic_id(kit_topic_id(name))


def topic_id_string(value: uuid.UUID) -> str:
    """The printed form of a wire topic id (Kafka's `Uuid.toString`)."""
    return uuid_string(value.bytes)


@dataclass(frozen=True, slots=True)
class DataRecord:
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes], ...] = ()


class PartitionLog:
    """One partition's records, its log start offset and its high watermark."""

    def __init__(self, topic: str, partition: int, leader: int,
                 max_records: int = 100_000) -> None:
        self.topic = topic
        self.partition = partition
        self.leader = leader
        self.max_records = max_records
        self.records: list[DataRecord] = []
        self.log_start_offset = 0

    @property
    def high_watermark(self) -> int:
        return self.log_start_offset + len(self.records)

    def append(self, timestamp: int, key: bytes | None, value: bytes | None,
               headers: tuple[tuple[str, bytes], ...] = ()) -> int:
        """Append one record; returns its offset."""
        offset = self.high_watermark
        self.records.append(DataRecord(offset, timestamp, key, value, headers))
        if len(self.records) > self.max_records:
            drop = len(self.records) - self.max_records
            del self.records[:drop]
            self.log_start_offset += drop
        return offset

    def read(self, offset: int, max_bytes: int) -> list[DataRecord]:
        """Records from `offset` on, about `max_bytes` of them, but always at least one (as
        Kafka returns at least one batch even when it is larger than the limit)."""
        start = offset - self.log_start_offset
        out: list[DataRecord] = []
        size = 0
        for record in self.records[start:]:
            size += 70 + len(record.key or b"") + len(record.value or b"")
            if out and size > max_bytes:
                break
            out.append(record)
        return out

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """The first (offset, timestamp) at or after `timestamp` (ListOffsets by time)."""
        for record in self.records:
            if record.timestamp >= timestamp:
                return record.offset, record.timestamp
        return None

    def max_timestamp(self) -> tuple[int, int] | None:
        """(offset, timestamp) of the record with the largest timestamp (ListOffsets -3)."""
        if not self.records:
            return None
        best = max(self.records, key=lambda r: (r.timestamp, -r.offset))
        return best.offset, best.timestamp


class DataTopics:
    """Every data topic of the live server, by name; listeners hear of each append."""

    def __init__(self, brokers: int, max_records_per_partition: int = 100_000) -> None:
        self.brokers = brokers
        self.max_records = max_records_per_partition
        self.topics: dict[str, list[PartitionLog]] = {}
        self._listeners: list[Callable[[PartitionLog], None]] = []

    def create(self, name: str, partitions: int) -> list[PartitionLog]:
        why = illegal_name_reason(name)
        if why:
            raise ValueError(f"topic name {name!r} is illegal: {why}")
        if name in self.topics:
            raise ValueError(f"topic {name!r} already exists")
        if partitions < 1:
            raise ValueError(f"topic {name!r} needs at least one partition, got {partitions}")
        logs = [PartitionLog(name, p, p % self.brokers, self.max_records)
                for p in range(partitions)]
        self.topics[name] = logs
        return logs

    def partition(self, name: str, partition: int) -> PartitionLog | None:
        logs = self.topics.get(name)
        if logs is None or not 0 <= partition < len(logs):
            return None
        return logs[partition]

    def append(self, log: PartitionLog, timestamp: int, key: bytes | None,
               value: bytes | None, headers: tuple[tuple[str, bytes], ...] = ()) -> int:
        offset = log.append(timestamp, key, value, headers)
        for listener in list(self._listeners):
            listener(log)
        return offset

    def add_listener(self, listener: Callable[[PartitionLog], None]) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)
