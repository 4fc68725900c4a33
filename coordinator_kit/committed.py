"""What a `__consumer_offsets` partition has committed: its records below the high watermark,
decoded once each, for the invariant monitor (`coordinator_kit.invariants`).

"Committed" is what some leader of the partition had below its high watermark: the highest
high watermark any replica holds. A new leader starts from the high watermark it learned as a
follower, which can be below its predecessor's (Kafka's `Partition.makeLeader` keeps the log's
high watermark; `Replica.resetReplicaState` forgets where the followers are), so the current
leader's high watermark alone would forget records that were committed, and acknowledged,
before the move. Those records are still in the new leader's log (it was in the ISR), and a
committed record is never truncated: reading on from where the last read stopped sees each one
exactly once, in log order.

Kept, all of it incremental (a read costs what is new, not the log or the group):

* every OffsetCommit record and tombstone, per (group, topic, partition), with the time the
  record was appended and the time the reader first saw it committed; a key's older entry is
  let go once a later one is below every replica's high watermark (no future leader can start
  below it) and no commit response can still be waiting for it;
* the OffsetCommit records in log order (what moved when a committed offset moves);
* per group and generation, each member's assignments in the committed GroupMetadata records
  (a group's tombstone forgets them: a group created again starts over at generation 0).

Listeners (`on_offset_commit`, `on_group_metadata`) hear about each record as it is read.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .group.records import (GROUP_METADATA_RECORD_TYPE, OFFSET_COMMIT_RECORD_TYPE,
                            GroupCoordinatorRecordSerde)
from .runtime.partition import ReplicatedPartition
from .runtime.records import UnknownRecordTypeError
from .topic import TopicPartition

__all__ = ["CommittedRecords", "OffsetCommitEntry", "GroupMetadataEntry", "OffsetKey"]

_SERDE = GroupCoordinatorRecordSerde()

OffsetKey = tuple[str, str, int]  # (group, topic, partition)


@dataclass(frozen=True, slots=True)
class OffsetCommitEntry:
    """One committed OffsetCommit record; `offset` None for a tombstone (a deletion the
    coordinator wrote: expired by retention, or the group's offsets deleted)."""

    log_offset: int
    append_ms: int
    offset: int | None
    seen_ms: int  # when the reader first saw it below a high watermark (>= its commit)


@dataclass(frozen=True, slots=True)
class GroupMetadataEntry:
    log_offset: int
    generation: int  # -1 for the group's tombstone
    assignments: dict[str, bytes]


class CommittedRecords:
    """The committed group coordinator records of one `__consumer_offsets` partition.

    `horizon_ms`: how long a key's superseded OffsetCommit entries are kept (a response to a
    commit is checked against the entries appended since its request arrived; the latest entry
    of every key is always kept)."""

    def __init__(self, partition: ReplicatedPartition, now: Callable[[], int], *,
                 horizon_ms: int = 60_000,
                 on_offset_commit: Callable[[OffsetKey, OffsetCommitEntry,
                                             OffsetCommitEntry | None], None] | None = None,
                 on_group_metadata: Callable[[str, GroupMetadataEntry], None] | None = None
                 ) -> None:
        self.partition = partition
        self.tp: TopicPartition = partition.tp
        self._now = now
        self.horizon_ms = horizon_ms
        self.on_offset_commit = on_offset_commit
        self.on_group_metadata = on_group_metadata
        self.next_offset = 0  # everything below it has been read
        self.offset_commits: dict[OffsetKey, deque[OffsetCommitEntry]] = {}
        # OffsetCommit records (values and tombstones) in log order: (log offset, key)
        self._order_offsets: list[int] = []
        self._order_keys: list[OffsetKey] = []
        self._order_start = 0  # the entries before it are let go
        # group -> generation -> member id -> the assignments committed for it
        self._members: dict[str, dict[int, dict[str, set[bytes]]]] = {}
        self.deletions = 0  # OffsetCommit tombstones read
        self._floor = 0  # the lowest high watermark of any replica, at the last read

    # -- reading on ------------------------------------------------------------------------------

    @property
    def frontier(self) -> int:
        """The highest high watermark any replica holds: what has been committed."""
        return max(r.high_watermark for r in self.partition.replicas.values())

    def refresh(self) -> None:
        """Read the records committed since the last call."""
        p = self.partition
        best = None
        for b, r in p.replicas.items():  # the replica with the highest high watermark
            if best is None or r.high_watermark > best[1] or (
                    r.high_watermark == best[1] and b == p.leader_id):
                best = (b, r.high_watermark)
        assert best is not None
        broker, hwm = best
        if self.next_offset >= hwm:
            return
        now = self._now()
        self._floor = min(r.high_watermark for r in p.replicas.values())
        for batch in p.read(broker, self.next_offset):
            if batch.control is not None:
                self.next_offset = batch.next_offset
                continue
            for offset, key, value in batch.offset_records():  # a cleaned batch keeps offsets
                if offset < self.next_offset:
                    continue
                if offset >= hwm:
                    return
                self._add(offset, batch.append_time_ms, now, key, value)
                self.next_offset = offset + 1

    def _add(self, offset: int, append_ms: int, now: int, key: bytes,
             value: bytes | None) -> None:
        try:
            record = _SERDE.deserialize(key, value)
        except (UnknownRecordTypeError, RuntimeError):
            return
        if record.record_type in (0, OFFSET_COMMIT_RECORD_TYPE):
            k = record.key
            okey = (k["group"], k["topic"], k["partition"])
            entry = OffsetCommitEntry(offset, append_ms,
                                      None if record.value is None else record.value["offset"],
                                      now)
            entries = self.offset_commits.get(okey)
            if entries is None:
                entries = self.offset_commits[okey] = deque()
            previous = entries[-1] if entries else None
            entries.append(entry)
            # Let go of an entry once no reader needs it: a later entry of the key is below
            # every replica's high watermark (so below where any future leader starts), and no
            # commit response can still be waiting for it.
            horizon, floor = now - self.horizon_ms, self._floor
            while len(entries) > 1 and entries[1].log_offset < floor \
                    and entries[0].append_ms < horizon:
                entries.popleft()
            self._order_offsets.append(offset)
            self._order_keys.append(okey)
            if entry.offset is None:
                self.deletions += 1
            if self.on_offset_commit is not None:
                self.on_offset_commit(okey, entry, previous)
        elif record.record_type == GROUP_METADATA_RECORD_TYPE:
            group = record.key["group"]
            if record.value is None:
                entry_ = GroupMetadataEntry(offset, -1, {})
                self._members.pop(group, None)
            else:
                members = {m["memberId"]: m["assignment"] for m in record.value["members"]}
                entry_ = GroupMetadataEntry(offset, record.value["generation"], members)
                by_member = self._members.setdefault(group, {}).setdefault(entry_.generation, {})
                for member_id, assignment in members.items():
                    by_member.setdefault(member_id, set()).add(assignment)
            if self.on_group_metadata is not None:
                self.on_group_metadata(group, entry_)

    # -- lookups ---------------------------------------------------------------------------------

    def latest(self, key: OffsetKey) -> OffsetCommitEntry | None:
        entries = self.offset_commits.get(key)
        return entries[-1] if entries else None

    def latest_below(self, key: OffsetKey, log_offset: int) -> OffsetCommitEntry | None:
        """The key's last committed entry below `log_offset` (None: none kept below it)."""
        for entry in reversed(self.offset_commits.get(key, ())):
            if entry.log_offset < log_offset:
                return entry
        return None

    def keys(self) -> Iterator[OffsetKey]:
        return iter(self.offset_commits)

    def moved_between(self, low: int, high: int) -> set[OffsetKey]:
        """The keys with an OffsetCommit record (or tombstone) at a log offset in [low, high)
        (`low` at or above the lowest high watermark of the replicas)."""
        offsets = self._order_offsets
        # no future leader starts below the lowest high watermark of the replicas: let go of
        # what is below it (now and then, so that a read costs what is new)
        start = bisect_left(offsets, self._floor, self._order_start)
        if start > 1024 and start * 2 > len(offsets):
            del offsets[:start]
            del self._order_keys[:start]
            start = 0
        self._order_start = start
        i = bisect_left(offsets, low, start)
        return set(self._order_keys[i:bisect_left(offsets, high, i)])

    def offset_commit(self, group: str, topic: str, partition: int, offset: int,
                      since_ms: int) -> OffsetCommitEntry | None:
        """The committed OffsetCommit record of this offset appended at or after `since_ms`."""
        for entry in reversed(self.offset_commits.get((group, topic, partition), ())):
            if entry.append_ms < since_ms:
                return None
            if entry.offset == offset:
                return entry
        return None

    def has_member(self, group: str, generation: int, member_id: str,
                   assignment: bytes | None = None) -> bool:
        """A committed GroupMetadata record of `generation` lists the member (with exactly this
        assignment, when one is given)."""
        assignments = self._members.get(group, {}).get(generation, {}).get(member_id)
        return assignments is not None and (assignment is None or assignment in assignments)

    def uncommitted(self) -> list[tuple[int, Any]]:
        """(offset, record) for the leader's records at or above the high watermark (for
        messages)."""
        p = self.partition
        hwm = p.high_watermark
        out = []
        for batch in p.read(p.leader_id, hwm):
            for offset, key, value in batch.offset_records():
                if offset >= hwm and batch.control is None:
                    try:
                        out.append((offset, _SERDE.deserialize(key, value)))
                    except (UnknownRecordTypeError, RuntimeError):
                        pass
        return out

    def __repr__(self) -> str:
        return f"CommittedRecords({self.tp}, read up to offset {self.next_offset})"
