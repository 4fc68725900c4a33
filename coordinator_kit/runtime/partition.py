"""A replicated `__consumer_offsets` partition on virtual time.

Why this exists: a coordinator write is only answered once its records are *committed*, that is
once the high watermark passes them, and the high watermark is the smallest log end offset among
the in-sync replicas. To show why a response is stuck you need the replicas, so here they are:

* the leader appends batches; each follower fetches from its own log end offset;
* a fetch that finds nothing new waits at the leader (long polling) and is answered as soon as
  data arrives; a fetch or response takes `replication_latency_ms` each way;
* the leader learns a follower's position from the offset of its *next* fetch, so a batch is
  committed one fetch round trip after it was copied (as in Kafka);
* a follower whose log end offset is behind the leader's and that has not caught up for
  `replica.lag.time.max.ms` (30 s) is dropped from the ISR by the check that runs every 15 s,
  after which the high watermark moves on without it; it rejoins once it catches up. "Caught
  up" is Kafka's lastCaughtUpTimeMs, which only a fetch moves (`ReplicatedPartition.
  _record_fetch`); a follower at the log end keeps fetching (Kafka answers its waiting fetch
  empty after `replica.fetch.wait.max.ms`, 500 ms, and it fetches again), a stalled one stops.

Faults: stall or slow a follower, make appends fail, move leadership.
"""

from __future__ import annotations

import threading
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from ..clock import Scheduler, TimerHandle
from ..errors import Errors, KafkaError
from ..kafka_config import check_config_int, check_whole
from ..topic import TopicPartition
from ..logs.catalogue import template
from ..logs.layout import level_number
from ..trace import LogContext, Trace

__all__ = ["LogBatch", "BatchLog", "LogSegment", "Replica", "ReplicatedPartition",
           "PartitionWriter", "RECORD_BATCH_OVERHEAD", "record_size_in_bytes",
           "DEFAULT_MAX_MESSAGE_BYTES", "DEFAULT_SEGMENT_BYTES"]

RECORD_BATCH_OVERHEAD = 61  # v2 record batch header, bytes
DEFAULT_MAX_MESSAGE_BYTES = 1048588  # Kafka's message.max.bytes default
DEFAULT_SEGMENT_BYTES = 100 * 1024 * 1024  # Kafka's offsets.topic.segment.bytes default
LOG_DIR = "/tmp/kafka-logs"  # Kafka's log.dirs default, as its log lines name it
NO_PRODUCER_ID = -1
_DEBUG = level_number("DEBUG")
_HWM_LEVEL = level_number(template("P-HWM").level)

HighWatermarkListener = Callable[[TopicPartition, int], None]


def _varint_size(value: int) -> int:
    """Bytes taken by a zig-zag varint, as in Kafka's record format."""
    if -64 <= value < 64:
        return 1  # zig-zag maps [-64, 63] to [0, 127]: one byte
    v = (value << 1) ^ (value >> 63)
    size = 1
    while v >= 0x80:
        v >>= 7
        size += 1
    return size


def record_size_in_bytes(offset_delta: int, key: bytes, value: bytes | None,
                         timestamp_delta: int = 0) -> int:
    """Size of one record inside a v2 batch (attributes, deltas, key, value, no headers).

    The timestamp delta is 0 for a batch as the coordinator appends it (every record carries
    the batch's time); the log cleaner rebases a batch's timestamp on its delete horizon
    (`MemoryRecords.filterTo`), which makes the deltas negative and longer."""
    # attributes (1) + timestamp delta + offset delta + key + value (-1: 1) + headers 0 (1)
    n = len(key)
    body = 2 + _varint_size(timestamp_delta) + _varint_size(offset_delta) + _varint_size(n) + n
    if value is None:
        body += 1
    else:
        n = len(value)
        body += _varint_size(n) + n
    return _varint_size(body) + body


def record_body_size(key: bytes, value: bytes | None) -> int:
    """The part of a record's body that does not depend on its offset delta (see below)."""
    # attributes, timestamp delta and headers count (1 byte each) + key length varint + key
    n = len(key)
    body = n + (4 if n < 64 else 3 + _varint_size(n))
    if value is None:
        return body + 1  # value length -1
    n = len(value)
    return body + n + (1 if n < 64 else _varint_size(n))


def first_record_size(key: bytes, value: bytes | None) -> int:
    """`record_size_from_body(record_body_size(key, value), 0)` in one call: the size of a
    batch's first record (a write's only record, at linger 0)."""
    n = len(key)
    body = n + (5 if n < 64 else 4 + _varint_size(n))  # record_body_size + 1-byte delta 0
    if value is None:
        body += 1
    else:
        n = len(value)
        body += n + (1 if n < 64 else _varint_size(n))
    return body + (1 if body < 64 else 2 if body < 8192 else _varint_size(body))


def record_size_from_body(body_size: int, offset_delta: int) -> int:
    """`record_size_in_bytes(offset_delta, key, value)` from `record_body_size(key, value)`."""
    # a zig-zag varint takes 1 byte for [-64, 63] and 2 bytes for [-8192, 8191]
    body = body_size + (1 if 0 <= offset_delta < 64 else
                        2 if -8192 <= offset_delta < 8192 else _varint_size(offset_delta))
    return body + (1 if body < 64 else 2 if body < 8192 else _varint_size(body))


@dataclass(frozen=True)
class LogBatch:
    """One record batch as stored in the log.

    As appended, record i of a batch is at offset `base_offset + i`. The log cleaner recopies a
    batch with only the records it keeps (Kafka's `Cleaner.cleanInto`, `MemoryRecords.filterTo`):
    the batch keeps its base offset, each kept record its offset (`offset_deltas`, from the base)
    and the batch its last offset (`last_offset_delta`; an emptied batch the cleaner keeps still
    says where it ended). Offsets never change: read them with `record_offset(i)` or
    `offset_records()`, never as `base_offset + i`. A batch whose tombstones (or marker) the
    cleaner kept carries the time after which the next cleaning drops them
    (`delete_horizon_ms`, KIP-534).
    """

    base_offset: int
    records: tuple[tuple[bytes, bytes | None], ...]
    leader_epoch: int
    append_time_ms: int
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = -1
    control: str | None = None  # "COMMIT" / "ABORT" for transaction markers
    size_in_bytes: int = field(default=0, compare=False)
    offset_deltas: tuple[int, ...] | None = None  # None: record i is at base_offset + i
    last_offset_delta: int | None = None  # None: len(records) - 1
    delete_horizon_ms: int | None = None

    @property
    def next_offset(self) -> int:
        last = self.last_offset_delta
        return self.base_offset + (len(self.records) if last is None else last + 1)

    @property
    def last_offset(self) -> int:
        return self.next_offset - 1

    def record_offset(self, i: int) -> int:
        """The offset of the batch's i-th record."""
        deltas = self.offset_deltas
        return self.base_offset + (i if deltas is None else deltas[i])

    def offset_records(self) -> Iterator[tuple[int, bytes, bytes | None]]:
        """(offset, key, value) of each record, in offset order."""
        base, deltas = self.base_offset, self.offset_deltas
        for i, (key, value) in enumerate(self.records):
            yield base + (i if deltas is None else deltas[i]), key, value

    @staticmethod
    def measure(records: Sequence[tuple[bytes, bytes | None]],
                offset_deltas: Sequence[int] | None = None, timestamp_delta: int = 0) -> int:
        if offset_deltas is None and not timestamp_delta:
            return RECORD_BATCH_OVERHEAD + sum(
                record_size_in_bytes(i, k, v) for i, (k, v) in enumerate(records))
        deltas = range(len(records)) if offset_deltas is None else offset_deltas
        return RECORD_BATCH_OVERHEAD + sum(
            record_size_in_bytes(d, k, v, timestamp_delta) for d, (k, v) in zip(deltas, records))


# A batch as the log stores it: the fields of `LogBatch` in order, in a plain tuple; the first
# eight for a batch as appended, all eleven for one the log cleaner recopied.
_Entry = tuple[Any, ...]


def _entry_next_offset(entry: _Entry) -> int:
    if len(entry) == 8:
        return entry[0] + len(entry[1])
    return entry[0] + entry[9] + 1


_entry_base_offset = itemgetter(0)


class LogSegment:
    """One segment of a replica's log (Kafka's `LogSegment`): the offset it starts at, the bytes
    of the batches it holds, and when it was last written (its file's last-modified time).

    A log is a run of segments; the last one is the *active* segment, the only one appended
    to. An append that would take the active segment past `segment.bytes` (for
    `__consumer_offsets`, `offsets.topic.segment.bytes`) first rolls a new one at the batch's
    base offset (`UnifiedLog.maybeRoll`, `LogSegment.shouldRoll`). The log cleaner never cleans
    the active segment, and replaces the segments it cleans with fewer, smaller ones.
    """

    __slots__ = ("base_offset", "size_in_bytes", "last_modified_ms")

    def __init__(self, base_offset: int, size_in_bytes: int = 0, last_modified_ms: int = 0
                 ) -> None:
        self.base_offset = base_offset
        self.size_in_bytes = size_in_bytes
        self.last_modified_ms = last_modified_ms

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LogSegment):
            return NotImplemented
        return (self.base_offset, self.size_in_bytes, self.last_modified_ms) == \
            (other.base_offset, other.size_in_bytes, other.last_modified_ms)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        # Kafka's LogSegment.toString, without the index and file fields
        return (f"LogSegment(baseOffset={self.base_offset}, size={self.size_in_bytes}, "
                f"lastModifiedTime={self.last_modified_ms})")


class BatchLog(Sequence[LogBatch]):
    """A replica's log: a read-only sequence of `LogBatch`, stored as plain tuples, and its
    segments (`segments`, the last one active; see `LogSegment`).

    A long log is the largest thing a coordinator keeps alive (one batch per write at linger
    0). Plain tuples of ints, strings and bytes are untracked by Python's cyclic garbage
    collector once it has seen them, where dataclass instances are walked by every full
    collection; and full chunks of `_CHUNK` batches are tuples too, so a full collection does
    not even walk a list with an item per batch. The log hands out a `LogBatch` for each batch
    read (equal batch for batch, not the same object twice). Batches are in offset order.
    """

    __slots__ = ("_chunks", "_chunk_ends", "_tail", "segments", "_active", "first_dirty_offset")

    def __init__(self, batches: Sequence[LogBatch] = ()) -> None:
        self._chunks: list[tuple[_Entry, ...]] = []  # full chunks of _CHUNK entries
        self._chunk_ends: list[int] = []  # the next offset after each chunk
        self._tail: list[_Entry] = []  # the last entries, fewer than _CHUNK
        self._active = LogSegment(0)
        self.segments: list[LogSegment] = [self._active]  # oldest first; the last is active
        # Where the dirty section starts: the end of what the log cleaner has cleaned (Kafka's
        # cleaner-offset-checkpoint); the log start until the first cleaning.
        self.first_dirty_offset = 0
        for batch in batches:
            entry = _entry(batch)
            self._append_entry(entry)
            self._active.size_in_bytes += entry[7]
            self._active.last_modified_ms = entry[3]

    # -- segments ------------------------------------------------------------------------------

    @property
    def log_start_offset(self) -> int:
        return self.segments[0].base_offset

    @property
    def active_segment(self) -> LogSegment:
        return self._active

    def roll(self, base_offset: int, now_ms: int) -> LogSegment:
        """Start a new active segment at `base_offset` (`LocalLog.roll`)."""
        segment = self._active = LogSegment(base_offset, 0, now_ms)
        self.segments.append(segment)
        return segment

    def size_in_bytes(self) -> int:
        return sum(s.size_in_bytes for s in self.segments)

    def _replace_segments(self, end_offset: int, entries: list[_Entry],
                          segments: list[LogSegment]) -> None:
        """Put cleaned `segments` holding `entries` in place of every segment before
        `end_offset`, a segment's base (`UnifiedLog.replaceSegments`); the rest stays."""
        kept = [e for e in self._entries() if e[0] >= end_offset]
        rest = [s for s in self.segments if s.base_offset >= end_offset]
        self._chunks, self._chunk_ends, self._tail = [], [], []
        self._extend_entries(tuple(entries) + tuple(kept))
        self.segments = segments + rest
        self._active = self.segments[-1]

    # -- the stored entries (the partition works on these) -------------------------------------

    def _append_entry(self, entry: _Entry) -> None:
        tail = self._tail
        tail.append(entry)
        if len(tail) == _CHUNK:
            self._seal_tail()

    def _extend_entries(self, entries: tuple[_Entry, ...]) -> None:
        """`_append_entry` for each entry in order (a follower copying a fetch response)."""
        start, n = 0, len(entries)
        while start < n:
            tail = self._tail
            end = min(n, start + _CHUNK - len(tail))
            tail += entries[start:end]
            start = end
            if len(tail) == _CHUNK:
                self._seal_tail()

    def _seal_tail(self) -> None:
        """The tail is full: it becomes a chunk (a tuple the cyclic GC stops tracking)."""
        tail = self._tail
        self._chunks.append(tuple(tail))
        self._chunk_ends.append(_entry_next_offset(tail[-1]))
        self._tail = []

    def _entries(self) -> Iterator[_Entry]:
        for chunk in self._chunks:
            yield from chunk
        yield from self._tail

    def _entries_after(self, offset: int) -> tuple[_Entry, ...]:
        """The entries that end after `offset` (a follower at `offset` has the others)."""
        c = bisect_right(self._chunk_ends, offset)  # the first chunk that ends after offset
        chunks = self._chunks
        first = chunks[c] if c < len(chunks) else self._tail
        i = bisect_right(first, offset, key=_entry_next_offset)
        if c == len(chunks):
            return tuple(first[i:])
        out = list(first[i:])
        for chunk in chunks[c + 1:]:
            out += chunk
        out += self._tail
        return tuple(out)

    def _last_entry(self) -> _Entry | None:
        if self._tail:
            return self._tail[-1]
        return self._chunks[-1][-1] if self._chunks else None

    # -- Sequence[LogBatch] ---------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._chunks) * _CHUNK + len(self._tail)

    def __getitem__(self, index):  # type: ignore[no-untyped-def, override]
        if isinstance(index, slice):
            return [LogBatch(*e) for e in list(self._entries())[index]]
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("BatchLog index out of range")
        c, i = divmod(index, _CHUNK)
        return LogBatch(*(self._chunks[c][i] if c < len(self._chunks) else self._tail[i]))

    def __iter__(self) -> Iterator[LogBatch]:
        for entry in self._entries():
            yield LogBatch(*entry)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, BatchLog):
            return list(self) == list(other)
        if isinstance(other, list):
            return list(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def append(self, batch: LogBatch) -> None:
        self._append_entry(_entry(batch))

    def __repr__(self) -> str:
        return repr(list(self))


_CHUNK = 1024


def _entry(batch: LogBatch) -> _Entry:
    entry = (batch.base_offset, tuple(batch.records), batch.leader_epoch, batch.append_time_ms,
             batch.producer_id, batch.producer_epoch, batch.control, batch.size_in_bytes)
    if batch.offset_deltas is None and batch.last_offset_delta is None \
            and batch.delete_horizon_ms is None:
        return entry
    deltas = tuple(range(len(batch.records))) if batch.offset_deltas is None \
        else tuple(batch.offset_deltas)
    last = batch.next_offset - batch.base_offset - 1
    return entry + (deltas, last, batch.delete_horizon_ms)


class Replica:
    """One broker's copy of the partition, and what the leader knows about it."""

    def __init__(self, broker_id: int) -> None:
        self.broker_id = broker_id
        self.batches = BatchLog()
        self.log_end_offset = 0
        self.high_watermark = 0  # this replica's own view (followers learn it from fetches)
        # follower-side fault knobs
        self.fetching = True
        self.fetch_delay_ms = 0
        # leader-side view of this replica (Kafka's ReplicaState)
        self.known_leo = 0
        self.last_caught_up_ms = 0  # lastCaughtUpTimeMs
        self.last_fetch_ms = 0  # lastFetchTimeMs: when the leader got its last fetch
        self.last_fetch_leader_leo = 0  # lastFetchLeaderLogEndOffset: leader LEO at that fetch
        self.parked_offset: int | None = None
        self.parked_since_ms = 0  # when the fetch waiting at the leader (or its last re-send) came
        self.inflight: TimerHandle | None = None

    def truncate_to(self, offset: int) -> None:
        """Drop the batches past `offset` (`UnifiedLog.truncateTo`): segments that start after
        it go, the last one left becomes the active segment, and the cleaner's checkpoint
        moves back if it was past it (`LogCleanerManager.maybeTruncateCheckpoint`)."""
        old = self.batches
        keep = BatchLog()
        segments = [LogSegment(s.base_offset, 0, s.last_modified_ms) for s in old.segments
                    if s.base_offset <= offset] or [LogSegment(offset)]
        bases = [s.base_offset for s in segments]
        for e in old._entries():
            if _entry_next_offset(e) <= offset:
                keep._append_entry(e)
                segments[max(0, bisect_right(bases, e[0]) - 1)].size_in_bytes += e[7]
        keep.segments = segments
        keep._active = segments[-1]
        keep.first_dirty_offset = min(old.first_dirty_offset, offset)
        self.batches = keep
        last = keep._last_entry()
        self.log_end_offset = _entry_next_offset(last) if last is not None else 0
        self.high_watermark = min(self.high_watermark, self.log_end_offset)

    def __repr__(self) -> str:
        return (f"Replica(broker={self.broker_id}, leo={self.log_end_offset}, "
                f"hw={self.high_watermark}, fetching={self.fetching})")


class ReplicatedPartition:
    """The log of one partition across its replicas, with leader, ISR and high watermark."""

    def __init__(self, tp: TopicPartition, scheduler: Scheduler, trace: Trace,
                 replicas: Sequence[int] = (0, 1, 2), leader: int | None = None, *,
                 replication_latency_ms: int = 1, replica_lag_time_max_ms: int = 30000,
                 replica_fetch_wait_max_ms: int = 500,
                 max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
                 topic_id: str = "AAAAAAAAAAAAAAAAAAAAAQ",
                 segment_bytes: int = DEFAULT_SEGMENT_BYTES) -> None:
        if not replicas:
            raise ValueError(f"{tp} needs at least one replica")
        if len(set(replicas)) != len(replicas):
            raise ValueError(f"{tp}: replica list {list(replicas)} names a broker twice")
        leader = replicas[0] if leader is None else leader
        if leader not in replicas:
            raise ValueError(f"{tp}: leader {leader} is not one of the replicas {list(replicas)}")
        if replication_latency_ms < 0 or replica_lag_time_max_ms <= 0:
            raise ValueError("replication_latency_ms must be >= 0 and replica.lag.time.max.ms > 0")
        if replica_fetch_wait_max_ms <= 0:
            raise ValueError(f"replica.fetch.wait.max.ms must be > 0, got "
                             f"{replica_fetch_wait_max_ms}")
        check_config_int("segment.bytes", segment_bytes, at_least=1)
        self.tp = tp
        self.scheduler = scheduler
        self.trace = trace
        self.topic_id = topic_id
        self.replicas = {b: Replica(b) for b in replicas}
        self.leader_id = leader
        self.leader_epoch = 0
        self.partition_epoch = 0
        self.isr: list[int] = list(replicas)
        self._parked = 0  # followers whose fetch waits at the leader (see _set_parked)
        self.replication_latency_ms = replication_latency_ms
        self.replica_lag_time_max_ms = replica_lag_time_max_ms
        self.replica_fetch_wait_max_ms = replica_fetch_wait_max_ms
        self.max_message_bytes = max_message_bytes
        self.segment_bytes = segment_bytes  # the topic's segment.bytes
        # the log cleaner of each broker that cleans its replica here (`LogCleaner.add_log`)
        self._cleaners: dict[int, Any] = {}
        self._listeners: dict[int, HighWatermarkListener] = {}
        self._append_failures: list[KafkaError] = []
        self._lock = threading.RLock()
        self._start_ms = int(trace.start.timestamp() * 1000)
        for f in self._followers():
            self._send_fetch(f)
        self._isr_check = self.scheduler.call_later(
            self.replica_lag_time_max_ms // 2, self._check_isr, name=f"isr-expiration-{tp}")

    # -- introspection -------------------------------------------------------------------------

    @property
    def leader(self) -> Replica:
        return self.replicas[self.leader_id]

    @property
    def high_watermark(self) -> int:
        return self.leader.high_watermark

    @property
    def log_end_offset(self) -> int:
        return self.leader.log_end_offset

    @property
    def log_start_offset(self) -> int:
        return 0

    def _log(self, broker: int | None = None) -> LogContext:
        b = self.leader_id if broker is None else broker
        return LogContext(self.trace, f"broker-{b}", f"[Partition {self.tp} broker={b}] ")

    def _followers(self) -> list[Replica]:
        return [r for b, r in self.replicas.items() if b != self.leader_id]

    def why_not_committed(self) -> str:
        """Plain words on what holds the high watermark back (for learners)."""
        with self._lock:
            leo, hwm = self.log_end_offset, self.high_watermark
            if hwm >= leo:
                return f"{self.tp}: everything up to offset {leo} is committed"
            laggards = [f"broker {r.broker_id} has confirmed {r.known_leo}"
                        + ("" if r.fetching else " and is not fetching (stalled)")
                        + (f" and fetches {r.fetch_delay_ms} ms late" if r.fetch_delay_ms else "")
                        for r in self._followers()
                        if r.broker_id in self.isr and r.known_leo < leo]
            return (f"{self.tp}: high watermark {hwm} < log end offset {leo}; in-sync replicas "
                    f"{self.isr}; waiting for: " + ("; ".join(laggards) or "the next fetch"))

    # -- listeners (Kafka's PartitionWriter.registerListener) ---------------------------------

    def register_listener(self, broker_id: int, listener: HighWatermarkListener) -> None:
        self._listeners[broker_id] = listener

    def deregister_listener(self, broker_id: int, listener: HighWatermarkListener) -> None:
        if self._listeners.get(broker_id) is listener:
            del self._listeners[broker_id]

    # -- the leader's side ---------------------------------------------------------------------

    def append(self, broker_id: int, records: Sequence[tuple[bytes, bytes | None]],
               producer_id: int = NO_PRODUCER_ID, producer_epoch: int = -1,
               control: str | None = None, size_in_bytes: int | None = None) -> int:
        """Append one batch on the leader; returns the log end offset after it.

        `size_in_bytes`, when the caller has it, must be `LogBatch.measure(records)` (the
        runtime sums the record sizes while it fills a batch); otherwise it is measured here.
        """
        with self._lock:
            if broker_id != self.leader_id:
                raise Errors.NOT_LEADER_OR_FOLLOWER.exception(
                    f"Broker {broker_id} is not the leader of {self.tp} (the leader is "
                    f"{self.leader_id}).")
            if self._append_failures:
                raise self._append_failures.pop(0)
            size = LogBatch.measure(records) if size_in_bytes is None else size_in_bytes
            if size > self.max_message_bytes:
                raise Errors.RECORD_LIST_TOO_LARGE.exception(
                    f"Batch of {size} bytes exceeds max.message.bytes {self.max_message_bytes} "
                    f"of {self.tp}.")
            leader = self.replicas[broker_id]
            records = tuple(records)
            base_offset = leader.log_end_offset
            now = self.scheduler._now
            log = leader.batches
            segment = log._active
            used = segment.size_in_bytes
            if used and used > self.segment_bytes - size:  # LogSegment.shouldRoll
                segment = self._roll(leader, base_offset)
            segment.size_in_bytes += size
            segment.last_modified_ms = now
            # LogBatch(base_offset, records, ...) as the log stores it (see BatchLog);
            # leader.batches._append_entry(entry), written out
            tail = log._tail
            tail.append((base_offset, records, self.leader_epoch, now,
                         producer_id, producer_epoch, control, size))
            if len(tail) == _CHUNK:
                log._seal_tail()
            leader.log_end_offset = leader.known_leo = end = base_offset + len(records)
            if self._parked:
                for b, f in self.replicas.items():  # the waiting followers, in replica order
                    if b != broker_id and f.parked_offset is not None:
                        self._refetch_parked(f, now)
                        self._respond(f, f.parked_offset)
            if len(self.isr) == 1:
                # Only an ISR without followers lets an append move the high watermark: with
                # one, the HWM is already at the least follower position (every fetch and ISR
                # change recomputes it, and nothing else raises a follower's position), which
                # a longer leader log does not change.
                self._maybe_increment_hwm()
            return end

    def read(self, broker_id: int, start_offset: int = 0) -> list[LogBatch]:
        """Batches from `start_offset` on the given broker's replica (the loader reads these);
        the batches before it are skipped by bisection, so reading on from where the last read
        stopped costs what is new, not the whole log."""
        with self._lock:
            return [LogBatch(*e) for e in self.replicas[broker_id].batches._entries_after(
                start_offset)]

    def _maybe_increment_hwm(self) -> None:
        leader_id = self.leader_id
        replicas = self.replicas
        leader = replicas[leader_id]
        # min(known_leo of each ISR member, the leader's log end offset for the leader)
        new = None
        for b in self.isr:
            leo = leader.log_end_offset if b == leader_id else replicas[b].known_leo
            if new is None or leo < new:
                new = leo
        if new is None:
            raise ValueError(f"{self.tp}: the ISR is empty")
        old = leader.high_watermark
        if new > old:
            leader.high_watermark = new
            if self.trace.threshold <= _HWM_LEVEL:  # no LogContext or str(tp) for nothing
                self._log().log("P-HWM", old=old, new=new, tp=str(self.tp))
            listener = self._listeners.get(self.leader_id)
            if listener is not None:
                listener(self.tp, new)

    def _on_fetch(self, f: Replica, offset: int, epoch: int) -> None:
        with self._lock:
            f.inflight = None
            if epoch != self.leader_epoch or f.broker_id == self.leader_id:
                return
            leo = self.leader.log_end_offset
            now = self.scheduler._now
            self._record_fetch(f, offset, now, leo)
            f.known_leo = min(offset, leo)
            self._maybe_expand_isr(f)
            self._maybe_increment_hwm()
            if offset < leo:
                self._respond(f, offset)
            else:
                self._set_parked(f, offset)
                f.parked_since_ms = now

    @staticmethod
    def _record_fetch(f: Replica, offset: int, fetch_ms: int, leader_end: int) -> None:
        """What the leader learns from a fetch at `offset` that came at `fetch_ms` while its log
        ended at `leader_end` (Kafka's `Replica.updateFetchStateOrThrow`).

        lastCaughtUpTimeMs is the latest time at which the follower had everything the leader
        had: this fetch's time if it asks from the leader's log end, else the previous fetch's
        time if it asks from where the leader's log ended then. The second case keeps a
        follower in sync under a steady stream of small writes, where no fetch ever reaches the
        moving log end.
        """
        if offset >= leader_end:
            if fetch_ms > f.last_caught_up_ms:
                f.last_caught_up_ms = fetch_ms
        elif offset >= f.last_fetch_leader_leo and f.last_fetch_ms > f.last_caught_up_ms:
            f.last_caught_up_ms = f.last_fetch_ms
        if leader_end > f.last_fetch_leader_leo:
            f.last_fetch_leader_leo = leader_end
        f.last_fetch_ms = fetch_ms

    def _refetch_parked(self, f: Replica, now: int) -> None:
        """Account for the fetches a follower waiting at the log end has sent up to `now`.

        In Kafka the leader answers a waiting fetch empty after `replica.fetch.wait.max.ms` and
        the follower fetches again at once, so a live follower at the log end fetches every
        wait + round trip, each fetch moving lastCaughtUpTimeMs. The kit keeps one waiting
        fetch instead of those timers, and works out the last of them when it matters: when a
        write answers the fetch, when the follower stalls and when its fetch delay changes.
        """
        period = self.replica_fetch_wait_max_ms + 2 * self.replication_latency_ms \
            + f.fetch_delay_ms
        since = f.parked_since_ms
        last = since + (now - since) // period * period
        if last > since:
            offset = f.parked_offset
            assert offset is not None
            self._record_fetch(f, offset, last, offset)  # nothing was appended in between
            f.parked_since_ms = last

    def _set_parked(self, f: Replica, offset: int | None) -> None:
        """A follower's fetch waits at the leader (`offset`) or not (None); `append` answers
        the waiting ones, and counts them to skip the look when there are none."""
        if (f.parked_offset is None) != (offset is None):
            self._parked += 1 if offset is not None else -1
        f.parked_offset = offset

    def _respond(self, f: Replica, offset: int) -> None:
        self._set_parked(f, None)
        # ordered by offset: skip what the follower has by bisection
        batches = self.leader.batches._entries_after(offset)
        f.inflight = self.scheduler.call_later(
            self.replication_latency_ms, self._on_fetch_response, f, batches,
            self.leader.high_watermark, self.leader_epoch,
            name=f"fetch-response-{self.tp}-to-{f.broker_id}")

    def _check_isr(self) -> None:
        with self._lock:
            now = self.scheduler.now
            leader = self.leader
            out = []
            for b in self.isr:
                if b == self.leader_id:
                    continue
                r = self.replicas[b]
                # Kafka's ReplicaState.isCaughtUp: at the log end, or caught up recently
                if r.known_leo != leader.log_end_offset \
                        and now - r.last_caught_up_ms > self.replica_lag_time_max_ms:
                    out.append(r)
            if out:
                old = ",".join(map(str, self.isr))
                self.isr = [b for b in self.isr if b not in {r.broker_id for r in out}]
                desc = " ".join(f"(brokerId: {r.broker_id}, endOffset: {r.known_leo}, "
                                f"lastCaughtUpTimeMs: {self._start_ms + r.last_caught_up_ms})"
                                for r in out)
                self._log().log("P-ISR-SHRINK", old_isr=old, new_isr=",".join(map(str, self.isr)),
                                hwm=leader.high_watermark, leo=leader.log_end_offset,
                                out_of_sync=desc)
                self._isr_changed()
                self._maybe_increment_hwm()
            self._isr_check = self.scheduler.call_later(
                self.replica_lag_time_max_ms // 2, self._check_isr,
                name=f"isr-expiration-{self.tp}")

    def _maybe_expand_isr(self, f: Replica) -> None:
        if f.broker_id not in self.isr and f.known_leo >= self.leader.high_watermark \
                and f.known_leo >= self.leader.log_end_offset:
            self.isr = sorted([*self.isr, f.broker_id])
            self._isr_changed()

    def _isr_changed(self) -> None:
        self.partition_epoch += 1
        self._log().log("P-ISR-UPDATED", isr=",".join(map(str, self.isr)), under_min_isr="",
                        version=self.partition_epoch)

    # -- the followers' side -------------------------------------------------------------------

    def _send_fetch(self, f: Replica) -> None:
        if not f.fetching or f.inflight is not None:
            return
        f.inflight = self.scheduler.call_later(
            self.replication_latency_ms + f.fetch_delay_ms, self._on_fetch, f,
            f.log_end_offset, self.leader_epoch, name=f"fetch-{self.tp}-from-{f.broker_id}")

    def _on_fetch_response(self, f: Replica, batches: tuple[_Entry, ...], leader_hwm: int,
                           epoch: int) -> None:
        with self._lock:
            f.inflight = None
            if epoch != self.leader_epoch or not f.fetching:
                self._send_fetch(f)
                return
            copied_from = f.log_end_offset
            # The batches are contiguous, in offset order: copy those from the follower's end.
            i = bisect_left(batches, copied_from, key=_entry_base_offset)
            if i < len(batches):
                self._append_fetched(f, batches[i:] if i else batches)
                f.log_end_offset = _entry_next_offset(batches[-1])
            f.high_watermark = max(f.high_watermark, min(leader_hwm, f.log_end_offset))
            if f.log_end_offset > copied_from and self.trace.threshold <= _DEBUG:
                LogContext(self.trace, f"broker-{f.broker_id}").event(
                    "replica_fetched", tp=str(self.tp), broker=f.broker_id,
                    from_offset=copied_from, to_offset=f.log_end_offset)
            self._send_fetch(f)

    def _append_fetched(self, f: Replica, entries: tuple[_Entry, ...]) -> None:
        """A follower appends the batches a fetch brought, rolling its own segments by the
        same rule as the leader (so, batch for batch, at the same offsets)."""
        log = f.batches
        segment = log._active
        limit = self.segment_bytes
        for entry in entries:
            size = entry[7]
            used = segment.size_in_bytes
            if used and used > limit - size:
                segment = self._roll(f, entry[0])
            segment.size_in_bytes += size
        segment.last_modified_ms = self.scheduler._now
        log._extend_entries(entries)

    def _roll(self, replica: Replica, base_offset: int) -> LogSegment:
        """The replica's active segment is full: a new one starts at `base_offset`
        (`LocalLog.roll`), and its broker's log cleaner may now have work."""
        segment = replica.batches.roll(base_offset, self.scheduler._now)
        b = replica.broker_id
        LogContext(self.trace, f"broker-{b}", f"[LocalLog partition={self.tp}, dir={LOG_DIR}] "
                   ).log("LL-ROLL", offset=base_offset, ms=0)
        cleaner = self._cleaners.get(b)
        if cleaner is not None:
            cleaner.wake()
        return segment

    # -- faults and leadership -----------------------------------------------------------------

    def stall_replica(self, broker_id: int) -> None:
        """The follower stops fetching (a stopped or partitioned broker).

        A fetch waiting at the leader stops being sent again: the follower's last fetch, and
        so its lastCaughtUpTimeMs, is the last one sent before the stall.
        """
        with self._lock:
            f = self._follower(broker_id)
            if f.parked_offset is not None:
                self._refetch_parked(f, self.scheduler.now)
                self._set_parked(f, None)
            f.fetching = False
            if f.inflight is not None:
                f.inflight.cancel()
                f.inflight = None

    def resume_replica(self, broker_id: int) -> None:
        with self._lock:
            f = self._follower(broker_id)
            if f.parked_offset is not None:
                self._refetch_parked(f, self.scheduler.now)
            f.fetching = True
            self._set_parked(f, None)
            self._send_fetch(f)

    def lag_replica(self, broker_id: int, fetch_delay_ms: int) -> None:
        """Every fetch of this follower leaves `fetch_delay_ms` late (a slow replica)."""
        if fetch_delay_ms < 0:
            raise ValueError(f"fetch_delay_ms must be >= 0, got {fetch_delay_ms}")
        with self._lock:
            f = self._follower(broker_id)
            if f.parked_offset is not None:  # the re-sends so far went at the old delay
                self._refetch_parked(f, self.scheduler.now)
            f.fetch_delay_ms = fetch_delay_ms

    def fail_next_append(self, error: Errors = Errors.KAFKA_STORAGE_ERROR,
                         message: str | None = None, count: int = 1) -> None:
        """The next `count` appends on the leader fail with `error` (an `Errors` member)."""
        if error is Errors.NONE:
            raise ValueError("error=Errors.NONE is success, not a failure: pass an error such as "
                             "Errors.KAFKA_STORAGE_ERROR")
        if not isinstance(error, Errors):
            how = (f"pass Errors.{error}" if isinstance(error, str) and error in Errors.__members__
                   else "e.g. Errors.KAFKA_STORAGE_ERROR or Errors.NOT_ENOUGH_REPLICAS")
            raise TypeError(f"error is an Errors member (from coordinator_kit.errors import "
                            f"Errors), got {error!r}: {how}")
        check_whole("count", count, at_least=1)
        with self._lock:
            self._append_failures.extend(error.exception(message) for _ in range(count))

    def _follower(self, broker_id: int) -> Replica:
        if broker_id not in self.replicas:
            raise ValueError(f"broker {broker_id} has no replica of {self.tp}; replicas are "
                             f"{sorted(self.replicas)}")
        if broker_id == self.leader_id:
            raise ValueError(f"broker {broker_id} is the leader of {self.tp}, not a follower; "
                             f"stall or slow one of {[r.broker_id for r in self._followers()]}")
        return self.replicas[broker_id]

    def elect_leader(self, broker_id: int) -> int:
        """Make an in-sync replica the leader; returns the new leader epoch.

        Followers with records past the new leader's log end drop them (they were never
        committed); the new leader starts from the high watermark it had learned as a follower.
        """
        with self._lock:
            if broker_id not in self.replicas:
                raise ValueError(f"broker {broker_id} has no replica of {self.tp}")
            if broker_id not in self.isr:
                raise ValueError(f"broker {broker_id} is not in the ISR {self.isr} of {self.tp}; "
                                 f"electing it would lose committed records")
            previous, previous_epoch = self.leader_id, self.leader_epoch
            self.leader_id = broker_id
            self.leader_epoch += 1
            self.partition_epoch += 1
            leader = self.leader
            self._set_parked(leader, None)
            if leader.inflight is not None:
                leader.inflight.cancel()
                leader.inflight = None
            leader.fetching = True
            now = self.scheduler.now
            for f in self._followers():
                if f.log_end_offset > leader.log_end_offset:
                    f.truncate_to(leader.log_end_offset)
                # Kafka's Replica.resetReplicaState for a new leader
                f.known_leo = 0
                f.last_caught_up_ms = now if f.broker_id in self.isr else 0
                f.last_fetch_ms = 0
                f.last_fetch_leader_leo = -1
                self._set_parked(f, None)
                if f.inflight is not None:
                    f.inflight.cancel()
                    f.inflight = None
                self._send_fetch(f)
            LogContext(self.trace, f"broker-{broker_id}", f"[Broker id={broker_id}] ").log(
                "P-LEADER", tp=str(self.tp), topic_id=self.topic_id, epoch=self.leader_epoch,
                offset=leader.log_end_offset, partition_epoch=self.partition_epoch,
                hwm=leader.high_watermark, isr=",".join(map(str, self.isr)), under_min_isr="",
                previous=f"Some({previous})", previous_epoch=previous_epoch)
            return self.leader_epoch

    def __repr__(self) -> str:
        return (f"ReplicatedPartition({self.tp}, leader={self.leader_id}, "
                f"epoch={self.leader_epoch}, leo={self.log_end_offset}, "
                f"hwm={self.high_watermark}, isr={self.isr})")


class PartitionWriter:
    """One broker's view of the coordinator partitions (Kafka's `PartitionWriter`)."""

    def __init__(self, broker_id: int, partitions: dict[TopicPartition, ReplicatedPartition]
                 ) -> None:
        self.broker_id = broker_id
        self.partitions = partitions

    def _partition(self, tp: TopicPartition) -> ReplicatedPartition:
        p = self.partitions.get(tp)
        if p is None:
            raise Errors.NOT_LEADER_OR_FOLLOWER.exception(
                f"Broker {self.broker_id} has no replica of {tp}.")
        return p

    def max_message_bytes(self, tp: TopicPartition) -> int:
        p = self.partitions.get(tp)
        return (p if p is not None else self._partition(tp)).max_message_bytes

    def register_listener(self, tp: TopicPartition, listener: HighWatermarkListener) -> None:
        self._partition(tp).register_listener(self.broker_id, listener)

    def deregister_listener(self, tp: TopicPartition, listener: HighWatermarkListener) -> None:
        p = self.partitions.get(tp)
        if p is not None:
            p.deregister_listener(self.broker_id, listener)

    def append(self, tp: TopicPartition, records: Sequence[tuple[bytes, bytes | None]],
               producer_id: int = NO_PRODUCER_ID, producer_epoch: int = -1,
               control: str | None = None, size_in_bytes: int | None = None) -> int:
        p = self.partitions.get(tp)
        if p is None:
            self._partition(tp)  # raises NOT_LEADER_OR_FOLLOWER
        return p.append(self.broker_id, records, producer_id, producer_epoch, control,
                        size_in_bytes)
