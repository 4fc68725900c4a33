"""What must always hold in a cluster, whatever breaks (checked in every scenario test).

On the cluster's state, after every assignment, sync, stabilisation, election, load and
high-watermark move (`check()`):

* no partition is owned by two members of the current generation at once (cooperative too);
* committed offsets are never lost and never move backwards, across coordinator failover;
* generations only grow: the generations of a group's committed GroupMetadata records never go
  down (until a tombstone deletes the group), and the coordinator's generation is never below
  the last committed one. The coordinator's own generation may go back on failover: a join
  phase bumps it in memory, and the record only comes with the leader's SyncGroup, so a new
  coordinator that loads the log before that resumes from the last committed generation, as
  Kafka's does (`GroupMetadataManager.replay` builds the group from its last record).

On every response a coordinator sends (`GroupCoordinatorService.add_response_listener`, the
moment the broker completes it):

* **no response before its records commit** (`CoordinatorRuntime`'s deferred queue): an
  OffsetCommit answered NONE for a partition has its OffsetCommit record, appended after the
  request arrived, below the partition's high watermark; a SyncGroup answered NONE finds its
  assignment in a committed GroupMetadata record of that generation; a JoinGroup answered NONE
  while the group is Stable (a follower rejoining, a static member replaced without a rebalance)
  finds the member in a committed GroupMetadata record of that generation. Kafka's own exception
  is left alone: the join responses of a join phase (CompletingRebalance) and MEMBER_ID_REQUIRED
  go out before any record (`classicGroupJoin`: the JoinGroup response has its own future, and
  the record that commits a new group's existence may still be in flight);
* **a member with a stale generation is fenced** (`classicGroupSync`, `classicGroupHeartbeat`,
  `ClassicGroup.validateOffsetCommit`): a Heartbeat, SyncGroup or OffsetCommit whose generation
  (>= 0) is not the group's when the handler runs never gets NONE, and gets ILLEGAL_GENERATION
  when the member itself is known. Kafka's exceptions are not violations: an OffsetCommit with
  generation -1 carries no generation (admin tools, `assign()` consumers, simple groups), and a
  Heartbeat that reaches a loading coordinator is answered NONE without being looked at
  (`GroupCoordinatorService.heartbeat`).

`InvariantMonitor` watches a `Cluster` as it runs (through the trace and the brokers' response
listeners; it only reads, so a monitored run has the same trace as an unmonitored one) and
collects violations with the virtual time and what was seen, so a failing test says exactly
what went wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .cluster import Cluster
from .errors import Errors
from .group.records import (GROUP_METADATA_RECORD_TYPE, OFFSET_COMMIT_RECORD_TYPE,
                            RECORD_TYPE_NAMES, GroupCoordinatorRecordSerde)
from .group.service import BrokerResponse
from .runtime.records import UnknownRecordTypeError
from .topic import TopicPartition
from .trace import TraceEvent

__all__ = ["InvariantMonitor", "Violation", "CommittedRecords",
           "NO_RESPONSE_BEFORE_COMMIT", "STALE_GENERATION_FENCED"]

NO_RESPONSE_BEFORE_COMMIT = "no response before its records commit"
STALE_GENERATION_FENCED = "stale generation fenced"

_SERDE = GroupCoordinatorRecordSerde()
_FENCING_APIS = ("Heartbeat", "SyncGroup", "OffsetCommit")


@dataclass(frozen=True)
class Violation:
    ts: int
    invariant: str
    detail: str


@dataclass(frozen=True)
class _OffsetCommitEntry:
    log_offset: int
    append_ms: int
    offset: int


@dataclass(frozen=True)
class _GroupMetadataEntry:
    log_offset: int
    generation: int  # -1 for the group's tombstone
    assignments: dict[str, bytes]


class CommittedRecords:
    """The group coordinator records of one `__consumer_offsets` partition that are committed
    (below the high watermark), decoded once each. Committed records are never truncated, so
    reading on from where the last call stopped sees each one exactly once."""

    def __init__(self, cluster: Cluster, tp: TopicPartition) -> None:
        self.partition = cluster.partitions[tp]
        self.next_offset = 0
        self.offset_commits: dict[tuple[str, str, int], list[_OffsetCommitEntry]] = {}
        self.group_metadata: dict[str, list[_GroupMetadataEntry]] = {}

    def refresh(self) -> None:
        p = self.partition
        hwm = p.high_watermark
        if self.next_offset >= hwm:
            return
        for batch in p.read(p.leader_id, self.next_offset):
            if batch.control is not None:
                self.next_offset = batch.next_offset
                continue
            for i, (key, value) in enumerate(batch.records):
                offset = batch.base_offset + i
                if offset < self.next_offset:
                    continue
                if offset >= hwm:
                    return
                self._add(offset, batch.append_time_ms, key, value)
                self.next_offset = offset + 1

    def _add(self, offset: int, append_ms: int, key: bytes, value: bytes | None) -> None:
        try:
            record = _SERDE.deserialize(key, value)
        except (UnknownRecordTypeError, RuntimeError):
            return
        if record.value is None:
            if record.record_type == GROUP_METADATA_RECORD_TYPE:
                self.group_metadata.setdefault(record.key["group"], []).append(
                    _GroupMetadataEntry(offset, -1, {}))
            return
        if record.record_type in (0, OFFSET_COMMIT_RECORD_TYPE):
            k = record.key
            self.offset_commits.setdefault((k["group"], k["topic"], k["partition"]), []).append(
                _OffsetCommitEntry(offset, append_ms, record.value["offset"]))
        elif record.record_type == GROUP_METADATA_RECORD_TYPE:
            members = {m["memberId"]: m["assignment"] for m in record.value["members"]}
            self.group_metadata.setdefault(record.key["group"], []).append(
                _GroupMetadataEntry(offset, record.value["generation"], members))

    def offset_commit(self, group: str, topic: str, partition: int, offset: int,
                      since_ms: int) -> _OffsetCommitEntry | None:
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
        for entry in self.group_metadata.get(group, ()):
            if entry.generation == generation and member_id in entry.assignments and (
                    assignment is None or entry.assignments[member_id] == assignment):
                return True
        return False

    def __repr__(self) -> str:
        return f"CommittedRecords({self.partition.tp}, read up to offset {self.next_offset})"

    def uncommitted(self) -> list[tuple[int, Any]]:
        """(offset, record) for the records at or above the high watermark (for messages)."""
        p = self.partition
        hwm = p.high_watermark
        out = []
        for batch in p.read(p.leader_id, hwm):
            for i, (key, value) in enumerate(batch.records):
                if batch.base_offset + i >= hwm and batch.control is None:
                    try:
                        out.append((batch.base_offset + i, _SERDE.deserialize(key, value)))
                    except (UnknownRecordTypeError, RuntimeError):
                        pass
        return out


@dataclass
class InvariantMonitor:
    cluster: Cluster
    group_id: str = "group-1"
    violations: list[Violation] = field(default_factory=list)
    checks: int = 0  # state checks (`check()`); responses are counted in `responses_checked`
    responses_checked: int = 0
    _max_generation: int = field(default=-1, repr=False)
    _max_committed_generation: int = field(default=-1, repr=False)
    _generations_seen: int = field(default=0, repr=False)
    _max_committed: dict[tuple[str, int], int] = field(default_factory=dict, repr=False)
    _committed: dict[TopicPartition, CommittedRecords] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.cluster.trace.subscribe(self._on_event)
        for broker in self.cluster.brokers.values():
            broker.service.add_response_listener(self.on_response)

    def _fail(self, invariant: str, detail: str) -> None:
        self.violations.append(Violation(self.cluster.scheduler.now, invariant, detail))

    def _on_event(self, event: TraceEvent) -> None:
        if event.kind in ("partitions_assigned", "synced", "group_stabilized", "leader_elected",
                          "load_completed", "last_committed_offset_updated"):
            self.check()

    def check(self) -> None:
        """Check every invariant on the cluster's current state."""
        self.checks += 1
        self._single_owner()
        self._generations_grow()
        self._offsets_never_lost()

    # -- state invariants ----------------------------------------------------------------------

    def _single_owner(self) -> None:
        group = self.cluster.group(self.group_id)
        generation = group.get("generation")
        if generation is None:
            return
        owners: dict[TopicPartition, str] = {}
        for c in self.cluster.consumers.values():
            if c.config.group_id != self.group_id or c.crashed or not c.running:
                continue
            if c.generation.generation_id != generation or c.member_id not in group["members"]:
                continue
            for tp in c.owned:
                if tp in owners:
                    self._fail("single owner", f"{tp} owned by {owners[tp]} and {c.name} in "
                                               f"generation {generation}")
                owners[tp] = c.name

    def _generations_grow(self) -> None:
        entries = self.committed_records(self.group_id).group_metadata.get(self.group_id, [])
        for entry in entries[self._generations_seen:]:
            if entry.generation < 0:  # a tombstone: the group is gone, a new one starts over
                self._max_committed_generation = -1
            elif entry.generation < self._max_committed_generation:
                self._fail("generations grow", f"committed generation went from "
                                               f"{self._max_committed_generation} back to "
                                               f"{entry.generation} (record at offset "
                                               f"{entry.log_offset})")
            else:
                self._max_committed_generation = entry.generation
        self._generations_seen = len(entries)
        generation = self.cluster.group(self.group_id).get("generation")
        if generation is None:
            return
        if 0 <= generation < self._max_committed_generation:
            self._fail("generations grow", f"the coordinator is at generation {generation}, below "
                                           f"the committed generation "
                                           f"{self._max_committed_generation}")
        self._max_generation = max(self._max_generation, generation)

    def _offsets_never_lost(self) -> None:
        shard = self.cluster.shard_for(self.group_id)
        if shard is None:
            return
        b = self.cluster.coordinator_for(self.group_id)
        ctx = self.cluster.brokers[b].runtime.context(self.cluster.partition_of(self.group_id)) \
            if b is not None else None
        if ctx is None or ctx.coordinator is None:
            return
        committed_at = ctx.coordinator.last_committed_offset
        fetched = shard.offsets.fetch_offsets(_all(self.group_id), committed_at).offsets
        current = {tp: p.offset for tp, p in fetched.items()}
        for tp, best in self._max_committed.items():
            now = current.get(tp)
            if now is None:
                self._fail("committed offsets kept", f"committed offset {best} of {tp} is gone")
            elif now < best:
                self._fail("committed offsets kept", f"committed offset of {tp} went back "
                                                     f"from {best} to {now}")
        for tp, o in current.items():
            self._max_committed[tp] = max(o, self._max_committed.get(tp, o))

    # -- response invariants -------------------------------------------------------------------

    def committed_records(self, group_id: str) -> CommittedRecords:
        """The committed records of the partition that holds `group_id`, read up to now."""
        tp = self.cluster.partition_of(group_id)
        records = self._committed.get(tp)
        if records is None:
            records = self._committed[tp] = CommittedRecords(self.cluster, tp)
        records.refresh()
        return records

    def on_response(self, sent: BrokerResponse) -> None:
        """Check a response as its broker sends it (a `BrokerResponse` listener)."""
        self.responses_checked += 1
        if sent.api in _FENCING_APIS:
            self._stale_generation_fenced(sent)
        if sent.api == "OffsetCommit":
            self._commit_after_records(sent)
        elif sent.api == "SyncGroup" and sent.response.error is Errors.NONE:
            request = sent.request
            if not self.committed_records(sent.group_id).has_member(
                    sent.group_id, request.generation_id, request.member_id,
                    sent.response.assignment):
                self._fail(NO_RESPONSE_BEFORE_COMMIT,
                           f"SyncGroup response NONE to {request.member_id} (group "
                           f"{sent.group_id}, generation {request.generation_id}) sent by broker "
                           f"{sent.broker_id} at {sent.sent_ms} ms, but no committed "
                           f"GroupMetadata record of that generation holds its assignment"
                           f"{self._tail(sent.group_id)}")
        elif sent.api == "JoinGroup" and sent.response.error is Errors.NONE:
            state = self._group_state(sent.broker_id, sent.group_id)
            response = sent.response
            if state == "Stable" and not self.committed_records(sent.group_id).has_member(
                    sent.group_id, response.generation_id, response.member_id):
                self._fail(NO_RESPONSE_BEFORE_COMMIT,
                           f"JoinGroup response NONE to {response.member_id} (group "
                           f"{sent.group_id}, Stable, generation {response.generation_id}) sent "
                           f"by broker {sent.broker_id} at {sent.sent_ms} ms, but no committed "
                           f"GroupMetadata record of that generation lists the member"
                           f"{self._tail(sent.group_id)}")

    def _commit_after_records(self, sent: BrokerResponse) -> None:
        request = sent.request
        records = None
        for (topic, partition), error in sorted(sent.response.errors.items()):
            if error is not Errors.NONE:
                continue
            data = request.offsets.get((topic, partition))
            if data is None:
                continue
            records = records or self.committed_records(sent.group_id)
            if records.offset_commit(sent.group_id, topic, partition, data.offset,
                                     sent.received_ms) is None:
                self._fail(NO_RESPONSE_BEFORE_COMMIT,
                           f"OffsetCommit response NONE for {topic}-{partition} offset "
                           f"{data.offset} (group {sent.group_id}) sent by broker "
                           f"{sent.broker_id} at {sent.sent_ms} ms, but its record is not below "
                           f"the high watermark {records.partition.high_watermark}"
                           f"{self._tail(sent.group_id)}")

    def _stale_generation_fenced(self, sent: BrokerResponse) -> None:
        request = sent.request
        generation = (request.generation_id_or_member_epoch if sent.api == "OffsetCommit"
                      else request.generation_id)
        if not sent.handled or sent.generation is None or generation < 0 \
                or generation == sent.generation:
            return  # not looked at (loading: a blind NONE), no group, no generation, or current
        if sent.api == "OffsetCommit":
            errors = set(sent.response.errors.values())
            answered = (Errors.NONE if Errors.NONE in errors or not errors
                        else sorted(errors, key=lambda e: e.code)[0])
        else:
            answered = sent.response.error
        who = (f"{sent.api} from {request.member_id or '(no member id)'} with generation "
               f"{generation}, answered {answered.name} by broker {sent.broker_id} at "
               f"{sent.sent_ms} ms, while group {sent.group_id} was at generation "
               f"{sent.generation} ({sent.state})")
        if answered is Errors.NONE:
            self._fail(STALE_GENERATION_FENCED, who)
        elif sent.member_valid and sent.state != "Dead" \
                and answered is not Errors.ILLEGAL_GENERATION:
            # the member passed validation, so Kafka's next check is the generation
            self._fail(STALE_GENERATION_FENCED, who + "; a known member gets ILLEGAL_GENERATION")

    def _group_state(self, broker_id: int, group_id: str) -> str | None:
        ctx = self.cluster.brokers[broker_id].runtime.context(self.cluster.partition_of(group_id))
        if ctx is None or ctx.coordinator is None:
            return None
        group = ctx.coordinator.shard.groups.group(group_id)
        return None if group is None else group.state.value

    def _tail(self, group_id: str) -> str:
        pending = [f"{offset} {RECORD_TYPE_NAMES.get(record.record_type, record.record_type)}"
                   for offset, record in self.committed_records(group_id).uncommitted()]
        return f" (uncommitted: {', '.join(pending[:5])})" if pending else ""

    # -- results -------------------------------------------------------------------------------

    def assert_ok(self) -> None:
        if self.violations:
            lines = "\n".join(f"  {v.ts} ms  {v.invariant}: {v.detail}" for v in self.violations)
            raise AssertionError(f"{len(self.violations)} invariant violation(s):\n{lines}")

    def summary(self) -> dict[str, Any]:
        return {"checks": self.checks, "responses_checked": self.responses_checked,
                "violations": len(self.violations),
                "max_generation": self._max_generation,
                "committed_partitions": len(self._max_committed)}


def _all(group_id: str) -> Any:
    from .group.api import OffsetFetchRequest

    return OffsetFetchRequest(group_id, None)
