"""The log cleaner: compaction of the `__consumer_offsets` partitions (Kafka's `LogCleaner`).

Why it exists: `__consumer_offsets` is a compacted topic (`cleanup.policy=compact`). Every offset
commit appends records, and a coordinator that loads the partition keeps only the latest record
of each key anyway; so only the latest record of each key needs to stay. Without the cleaner a
partition's log, and with it the kit's memory and the time a load takes, grows with every commit.

What Kafka does, and the kit with it (`kafka.log.LogCleaner`, `Cleaner`, `LogCleanerManager`):

* A log is a run of segments (`partition.LogSegment`); the last, *active* one is the only one
  appended to and is never cleaned. It rolls once it would pass `segment.bytes`
  (`offsets.topic.segment.bytes` for this topic).
* Each broker runs a cleaner thread (`CleanerThread.doWork`): it grabs the *filthiest* of its
  logs (`LogCleanerManager.grabFilthiestCompactedLog`), cleans it, and looks again; with nothing
  to clean it sleeps `log.cleaner.backoff.ms` (15 s).
* A log is split at `first_dirty_offset` (the end of the last cleaning, Kafka's
  cleaner-offset-checkpoint) into a clean and a dirty section; the dirty section is cleanable up
  to the first *uncleanable* segment: the active one, or the one holding the last stable offset,
  which is never past the replica's high watermark (`LogCleanerManager.cleanableOffsets`). A log
  is cleaned when cleanable bytes / (clean + cleanable bytes) > `log.cleaner.min.cleanable.ratio`
  (0.5) (`LogToClean.cleanableRatio`).
* Cleaning (`Cleaner.doClean`): map each key of the cleanable records to its last offset
  (`buildOffsetMap`); then recopy every segment from the log start to the end of that section,
  consecutive segments up to `segment.bytes` into one (`groupSegmentsBySize`), keeping a record
  only if no later record of its key is in the map (`Cleaner.shouldRetainRecord`). A tombstone
  (a record with no value) survives the first cleaning that sees it, which stamps its batch with
  a delete horizon, now + `log.cleaner.delete.retention.ms` (24 h) (KIP-534,
  `MemoryRecords.filterTo`); a cleaning after the horizon drops it. A batch left empty goes,
  except the last one of the cleaned section, which stays, empty, so where it ended stays known
  (`BatchRetention.RETAIN_EMPTY`).
* Offsets never change: a recopied batch keeps its base offset and each kept record its offset
  (`LogBatch.record_offset`). A load replays what is left and builds the same state, since a
  coordinator's state is the latest record of each key.

Each replica is cleaned by its own broker's cleaner, on its own high watermark, as in Kafka. The
kit leaves out: the offset map's size (`log.cleaner.dedupe.buffer.size`: Kafka cleans a dirty
section with more keys than fit in several rounds), I/O throttling, index sizes, the compaction
lags, and transactions: a batch with a producer id and a transaction marker are kept as they
are and their keys do not enter the map (Kafka drops aborted data at once and a marker once its
transaction has no data left and its horizon passed); the group coordinator writes neither.

Virtual time: a cleaning takes none. The thread checks at the multiples of the backoff (its
sleeps from broker start), but only after a roll woke it, and again while a rolled segment waits
for the high watermark: a run that never fills a segment never sees the cleaner.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from ..clock import Scheduler, TimerHandle
from ..kafka_config import (check_config_bool, check_config_int, config_error,
                            fields_from_properties)
from ..trace import LogContext, Trace
from .partition import (NO_PRODUCER_ID, RECORD_BATCH_OVERHEAD, LogSegment, Replica,
                        ReplicatedPartition, _entry_base_offset, _entry_next_offset,
                        record_size_in_bytes)

__all__ = ["CleanerConfig", "LogCleaner", "LogToClean", "log_to_clean", "group_segments_by_size"]

_KEYS = {
    "log.cleaner.enable": "enable",
    "log.cleaner.backoff.ms": "backoff_ms",
    "log.cleaner.min.cleanable.ratio": "min_cleanable_ratio",
    "log.cleaner.delete.retention.ms": "delete_retention_ms",
}


@dataclass(frozen=True)
class CleanerConfig:
    """The broker's log cleaner settings, by Kafka's keys and with Kafka's defaults (Kafka's
    `CleanerConfig`; `log.cleaner.delete.retention.ms` and `log.cleaner.min.cleanable.ratio`
    are the broker defaults of the topic configs `delete.retention.ms` and
    `min.cleanable.dirty.ratio`, which `__consumer_offsets` does not override)."""

    enable: bool = True
    backoff_ms: int = 15_000
    min_cleanable_ratio: float = 0.5
    delete_retention_ms: int = 86_400_000

    def __post_init__(self) -> None:
        check_config_bool("log.cleaner.enable", self.enable)
        check_config_int("log.cleaner.backoff.ms", self.backoff_ms, at_least=0, bits=64)
        check_config_int("log.cleaner.delete.retention.ms", self.delete_retention_ms,
                         at_least=0, bits=64)
        ratio, key = self.min_cleanable_ratio, "log.cleaner.min.cleanable.ratio"
        if isinstance(ratio, bool) or not isinstance(ratio, (int, float)):
            raise config_error(key, ratio, f"Expected value to be a double, but it was "
                                           f"{type(ratio).__name__}")
        if not 0 <= ratio <= 1:
            raise config_error(key, ratio, "Value must be no less than 0 and no more than 1")

    @classmethod
    def from_properties(cls, props: Mapping[str, Any]) -> CleanerConfig:
        """Build from Kafka config keys (`log.cleaner.*`); an unknown key is refused by name."""
        return cls(**fields_from_properties(props, _KEYS, "log cleaner"))


@dataclass(frozen=True)
class LogToClean:
    """One replica's log as the cleaner sees it (Kafka's `LogToClean`)."""

    partition: ReplicatedPartition
    replica: Replica
    first_dirty_offset: int
    first_uncleanable_offset: int  # the base of the first segment that may not be cleaned
    clean_bytes: int
    cleanable_bytes: int

    @property
    def total_bytes(self) -> int:
        return self.clean_bytes + self.cleanable_bytes

    @property
    def cleanable_ratio(self) -> float:
        return self.cleanable_bytes / self.total_bytes if self.total_bytes else 0.0


def _overlapping(segments: Sequence[LogSegment], start: int, end: int) -> list[LogSegment]:
    """The segments holding offsets in [start, end) (Kafka's `UnifiedLog.logSegments(from,
    to)`: from the segment that holds `start`)."""
    bases = [s.base_offset for s in segments]
    first = max(0, bisect_right(bases, start) - 1)
    return [s for s in segments[first:] if s.base_offset < end]


def log_to_clean(partition: ReplicatedPartition, replica: Replica) -> LogToClean:
    """What of `replica`'s log is clean and what may be cleaned now
    (`LogCleanerManager.cleanableOffsets`, `calculateCleanableBytes`)."""
    log = replica.batches
    segments = log.segments
    start = segments[0].base_offset
    first_dirty = log.first_dirty_offset
    if first_dirty < start or first_dirty > replica.log_end_offset:
        first_dirty = start  # an invalid checkpoint: the whole log is dirty
    active = segments[-1].base_offset
    # never past the last stable offset (the high watermark: no open transactions here) nor
    # into the active segment
    uncleanable = max(first_dirty, min(replica.high_watermark, active))
    bases = [s.base_offset for s in segments]
    holding = max(0, bisect_right(bases, uncleanable) - 1)
    first_uncleanable = segments[holding].base_offset if holding < len(segments) - 1 else active
    clean = sum(s.size_in_bytes for s in segments if s.base_offset < first_dirty)
    cleanable = sum(s.size_in_bytes for s in _overlapping(
        segments, min(first_dirty, first_uncleanable), first_uncleanable))
    return LogToClean(partition, replica, first_dirty, first_uncleanable, clean, cleanable)


def group_segments_by_size(segments: Sequence[LogSegment], max_size: int
                           ) -> list[list[LogSegment]]:
    """Consecutive segments, up to `max_size` bytes together, to be cleaned into one
    (`Cleaner.groupSegmentsBySize`, without its index-size limits), so that repeated cleanings
    do not leave ever smaller segments."""
    groups: list[list[LogSegment]] = []
    i, n = 0, len(segments)
    while i < n:
        group = [segments[i]]
        size = segments[i].size_in_bytes
        i += 1
        while i < n and size + segments[i].size_in_bytes <= max_size:
            size += segments[i].size_in_bytes
            group.append(segments[i])
            i += 1
        groups.append(group)
    return groups


class _Stats:
    """What one cleaning read and kept (Kafka's `CleanerStats`)."""

    __slots__ = ("bytes_read", "bytes_written", "messages_read", "messages_written")

    def __init__(self) -> None:
        self.bytes_read = self.bytes_written = self.messages_read = self.messages_written = 0


class LogCleaner:
    """One broker's log cleaner, with one cleaner thread ("Cleaner 0"): cleans the broker's
    replicas of the partitions given to `add_log` (Kafka's `LogCleaner`, `CleanerThread`)."""

    def __init__(self, broker_id: int, scheduler: Scheduler, trace: Trace,
                 config: CleanerConfig | None = None) -> None:
        self.broker_id = broker_id
        self.scheduler = scheduler
        self.trace = trace
        self.config = config or CleanerConfig()
        self.log = LogContext(trace, f"broker-{broker_id}", "Cleaner 0: ")
        self.partitions: list[ReplicatedPartition] = []
        self.cleanings = 0  # logs cleaned so far
        self._wakeup: TimerHandle | None = None

    def add_log(self, partition: ReplicatedPartition) -> None:
        """Clean this broker's replica of `partition` (it tells the cleaner when it rolls)."""
        if self.broker_id not in partition.replicas:
            raise ValueError(f"broker {self.broker_id} has no replica of {partition.tp}; its "
                             f"replicas are on brokers {sorted(partition.replicas)}")
        partition._cleaners[self.broker_id] = self
        self.partitions.append(partition)

    # -- the thread ----------------------------------------------------------------------------

    def wake(self) -> None:
        """A log rolled: look at the logs at the thread's next wake-up (it sleeps
        `log.cleaner.backoff.ms` at a time from broker start)."""
        if not self.config.enable or self._wakeup is not None:
            return
        now = self.scheduler.now
        backoff = self.config.backoff_ms
        when = -(-now // backoff) * backoff if backoff else now
        self._wakeup = self.scheduler.call_at(when, self.do_work,
                                              name=f"kafka-log-cleaner-thread-0 broker-"
                                                   f"{self.broker_id}")

    def do_work(self) -> None:
        """Clean the filthiest log while there is one (`CleanerThread.doWork`); sleep again
        while a rolled segment waits for the high watermark."""
        self._wakeup = None
        while True:
            cleanable = self.grab_filthiest_log()
            if cleanable is None:
                break
            self.clean(cleanable)
        if any(ltc.first_uncleanable_offset < ltc.replica.batches.active_segment.base_offset
               for ltc in self._logs()):
            self._wakeup = self.scheduler.call_later(
                max(1, self.config.backoff_ms), self.do_work,
                name=f"kafka-log-cleaner-thread-0 broker-{self.broker_id}")

    def _logs(self) -> list[LogToClean]:
        b = self.broker_id
        return [log_to_clean(p, p.replicas[b]) for p in self.partitions]

    def grab_filthiest_log(self) -> LogToClean | None:
        """The log with the highest dirty ratio above `log.cleaner.min.cleanable.ratio`, if any
        (`LogCleanerManager.grabFilthiestCompactedLog`; ties go to the first partition)."""
        best = None
        for ltc in self._logs():
            if ltc.total_bytes > 0 and ltc.cleanable_ratio > self.config.min_cleanable_ratio \
                    and (best is None or ltc.cleanable_ratio > best.cleanable_ratio):
                best = ltc
        return best

    # -- the cleaner ---------------------------------------------------------------------------

    def clean(self, ltc: LogToClean) -> int:
        """Clean one log (`Cleaner.doClean`); returns the new first dirty offset."""
        now = self.scheduler.now
        partition, log = ltc.partition, ltc.replica.batches
        tp = str(partition.tp)
        start, end = ltc.first_dirty_offset, ltc.first_uncleanable_offset
        self.log.log("LC-BEGIN", tp=tp)
        self.log.log("LC-MAP-START", tp=tp)
        entries = list(log._entries())
        section = entries[:bisect_left(entries, end, key=_entry_base_offset)]
        dirty = _overlapping(log.segments, start, end)
        self.log.log("LC-MAP", tp=tp, segments=len(dirty), start=start, end=end)
        offset_map = _build_offset_map(section, start)
        self.log.log("LC-MAP-DONE", tp=tp)
        # the dates Kafka prints here: the last cleanable segment's last write, and the delete
        # horizon of pre-v2 records (the last clean segment's last write - delete.retention.ms,
        # or 0, the epoch, before the first cleaning)
        clean = [s for s in log.segments if s.base_offset < start]
        self.log.log("LC-CLEANING", tp=tp,
                     prior=self._java_date(dirty[-1].last_modified_ms if dirty else None),
                     horizon=self._java_date(clean[-1].last_modified_ms
                                             - self.config.delete_retention_ms
                                             if clean else None))
        stats = _Stats()
        groups = group_segments_by_size([s for s in log.segments if s.base_offset < end],
                                        partition.segment_bytes)
        cleaned_entries: list[Any] = []
        cleaned_segments: list[LogSegment] = []
        horizon_ms = now + self.config.delete_retention_ms
        i = 0
        for g, group in enumerate(groups):
            upper = groups[g + 1][0].base_offset if g + 1 < len(groups) else end
            size = 0
            while i < len(section) and section[i][0] < upper:
                entry = section[i]
                i += 1
                stats.bytes_read += entry[7]
                stats.messages_read += len(entry[1])
                kept = _retained(entry, offset_map, now, horizon_ms, end)
                if kept is not None:
                    cleaned_entries.append(kept)
                    size += kept[7]
                    stats.messages_written += len(kept[1])
            stats.bytes_written += size
            cleaned_segments.append(LogSegment(group[0].base_offset, size,
                                               group[-1].last_modified_ms))
        log._replace_segments(end, cleaned_entries, cleaned_segments)
        log.first_dirty_offset = end
        self.cleanings += 1
        self.log.event("log_cleaned", level="INFO", tp=tp, broker=self.broker_id,
                       first_dirty_offset=start, end_offset=end,
                       bytes_read=stats.bytes_read, bytes_written=stats.bytes_written,
                       messages_read=stats.messages_read,
                       messages_written=stats.messages_written)
        return end

    def _java_date(self, virtual_ms: int | None) -> str:
        """`new java.util.Date(ms).toString()` of a virtual time on the trace's wall clock, in
        UTC (None: Kafka's 0, the epoch)."""
        at = datetime(1970, 1, 1, tzinfo=timezone.utc) if virtual_ms is None else \
            self.trace.start + timedelta(milliseconds=virtual_ms)
        return at.strftime("%a %b %d %H:%M:%S UTC %Y")

    def __repr__(self) -> str:
        return (f"LogCleaner(broker={self.broker_id}, logs={len(self.partitions)}, "
                f"cleanings={self.cleanings})")


def _build_offset_map(section: Sequence[Any], start: int) -> dict[bytes, int]:
    """Each key's last offset among the records at or after `start` (`Cleaner.buildOffsetMap`;
    the kit's map is a dict, with room for every key). Transactional batches and markers stay
    out of it (see the module docstring)."""
    offset_map: dict[bytes, int] = {}
    first = bisect_right(section, start, key=_entry_next_offset)
    for entry in section[first:]:
        if entry[6] is not None or entry[4] != NO_PRODUCER_ID:
            continue
        base, records = entry[0], entry[1]
        if len(entry) == 8:
            if base >= start:
                for i, (key, _) in enumerate(records):
                    offset_map[key] = base + i
            else:
                for i, (key, _) in enumerate(records):
                    if base + i >= start:
                        offset_map[key] = base + i
        else:
            for delta, (key, _) in zip(entry[8], records):
                if base + delta >= start:
                    offset_map[key] = base + delta
    return offset_map


def _retained(entry: tuple[Any, ...], offset_map: dict[bytes, int], now: int, horizon_ms: int,
              end: int) -> tuple[Any, ...] | None:
    """What of one batch the cleaning keeps: the batch as it is, a recopy with fewer records
    (or the same ones under a new delete horizon), an empty batch, or None
    (`Cleaner.cleanInto`'s filter, `MemoryRecords.filterTo`)."""
    base, records, control, producer_id = entry[0], entry[1], entry[6], entry[4]
    if control is not None or producer_id != NO_PRODUCER_ID:
        return entry  # transactional data and markers: kept as they are here
    cleaned = len(entry) > 8
    deltas = entry[8] if cleaned else range(len(records))
    horizon = entry[10] if cleaned else None
    retain_deletes = horizon is None or now < horizon
    keep: list[int] = []
    tombstones = False
    for i, (key, value) in enumerate(records):
        offset = base + deltas[i]
        if offset >= offset_map.get(key, -1) and (value is not None or retain_deletes):
            keep.append(i)
            if value is None:
                tombstones = True
    if not keep:
        last_delta = entry[9] if cleaned else len(records) - 1
        if base + last_delta + 1 != end:
            return None  # DELETE_EMPTY
        if cleaned and not records:
            return entry
        # RETAIN_EMPTY: the last batch of the cleaned section stays, empty, with its last offset
        return (base, (), entry[2], entry[3], producer_id, entry[5], control,
                RECORD_BATCH_OVERHEAD, (), last_delta, horizon)
    set_horizon = tombstones and horizon is None
    if len(keep) == len(records) and not set_horizon:
        return entry  # writeOriginalBatch
    if set_horizon:
        horizon = horizon_ms
    kept_records = tuple(records[i] for i in keep)
    kept_deltas = tuple(deltas[i] for i in keep)
    # the batch's base timestamp becomes its delete horizon: each record's timestamp delta is
    # then its time (the batch's append time here) minus the horizon
    ts_delta = 0 if horizon is None else entry[3] - horizon
    size = RECORD_BATCH_OVERHEAD + sum(record_size_in_bytes(d, k, v, ts_delta)
                                       for d, (k, v) in zip(kept_deltas, kept_records))
    # a recopied batch's last offset is its last record's (MemoryRecordsBuilder)
    return (base, kept_records, entry[2], entry[3], producer_id, entry[5], control, size,
            kept_deltas, kept_deltas[-1], horizon)
