"""What must always hold in a cluster, whatever breaks (checked in every scenario test).

On the cluster's state, as it runs (`InvariantMonitor`):

* **single owner**: no partition is owned by two members of the group's current generation at
  once (cooperative too);
* **committed offsets kept**: what a coordinator serves at its committed offset (a read, such
  as an OffsetFetch without `require_stable`: `CoordinatorReadEvent` reads at
  `lastCommittedOffset`) is, for every (group, topic, partition), exactly the last committed
  OffsetCommit record below that offset; an offset deleted by a tombstone the coordinator wrote
  (retention: `OffsetMetadataManager.cleanupExpiredOffsets`; a deleted group) is gone on
  purpose, any other is lost. A committed offset never moves backwards (a later committed
  record of the same partition carries a lower offset only after a deletion);
* **generations grow**: the generations of a group's committed GroupMetadata records never go
  down (until a tombstone deletes the group), and the coordinator's generation is never below
  the last committed one (unless the group was deleted since, by a tombstone not committed
  yet, and a JoinGroup created it anew). The coordinator's own generation may go back on failover: a join
  phase bumps it in memory, and the record only comes with the leader's SyncGroup, so a new
  coordinator that loads the log before that resumes from the last committed generation, as
  Kafka's does (`GroupMetadataManager.replay` builds the group from its last record).

**A regression that Kafka allows** (`Regression`, in `monitor.regressions`, not a violation):
after a coordinator moves, the new one serves at its own high watermark, which can be below the
old leader's. A follower learns the high watermark from the leader's fetch responses, so it is
a round behind; `Partition.makeLeader` keeps that high watermark and resets what it knows of
the followers (`Replica.resetReplicaState`), and `Partition.maybeIncrementLeaderHW` only moves
it once every follower in the ISR has fetched from the new leader. The loader replays the whole
log but marks committed only what is below that high watermark
(`CoordinatorLoaderImpl.doLoad`, `updateLastCommittedOffset`). So an offset acknowledged just
before the move reads back older, until the high watermark passes its record again: at once if
the followers fetch, or only when a stalled follower leaves the ISR (`replica.lag.time.max.ms`).
The record was never lost (it is in the new leader's log), and a consumer does not see the old
offset: its OffsetFetch sets `require_stable` (`ConsumerCoordinator.sendOffsetFetchRequest`),
which reads the latest state and waits for it to commit. The monitor checks that too.

On every response a coordinator sends (`GroupCoordinatorService.add_response_listener`, the
moment the broker completes it):

* **no response before its records commit** (`CoordinatorRuntime`'s deferred queue): an
  OffsetCommit answered NONE for a partition has its OffsetCommit record, appended after the
  request arrived, committed; a SyncGroup answered NONE finds its assignment in a committed
  GroupMetadata record of that generation; a JoinGroup answered NONE while the group is Stable
  (a follower rejoining, a static member replaced without a rebalance) finds the member in a
  committed GroupMetadata record of that generation. Kafka's own exception is left alone: the
  join responses of a join phase (CompletingRebalance) and MEMBER_ID_REQUIRED go out before any
  record (`classicGroupJoin`: the JoinGroup response has its own future, and the record that
  commits a new group's existence may still be in flight);
* **a member with a stale generation is fenced** (`classicGroupSync`, `classicGroupHeartbeat`,
  `ClassicGroup.validateOffsetCommit`): a Heartbeat, SyncGroup or OffsetCommit whose generation
  (>= 0) is not the group's when the handler runs never gets NONE, and gets ILLEGAL_GENERATION
  when the member itself is known. Kafka's exceptions are not violations: an OffsetCommit with
  generation -1 carries no generation (admin tools, `assign()` consumers, simple groups), and a
  Heartbeat that reaches a loading coordinator is answered NONE without being looked at
  (`GroupCoordinatorService.heartbeat`);
* **a stable read sees what was committed** (`committed offsets kept`): an OffsetFetch with
  `require_stable` answered NONE returns, for each partition, the offset of the last record
  committed before the request arrived, or of a later one.

When it looks: on every response (every broker), on every coordinator that becomes active
(`CoordinatorRuntime.on_state_change`), and on the trace's events of the consumers and the
coordinator (`partitions_assigned`, `synced`, `joined`, `member_state`, `group_stabilized`,
`leader_elected`, `load_completed`, and at DEBUG `last_committed_offset_updated`), so the
ownership checks need the trace at INFO or finer; `check()` looks at everything now. Each look
costs what changed since the last (the consumer whose event it is, the records committed since),
not the size of the group or of the log: the monitor keeps the committed records it has read
(`coordinator_kit.committed.CommittedRecords`) and who owns each partition. It only reads, so a
monitored run has the same trace as an unmonitored one. `InvariantMonitor(cluster,
thorough=True)` also rescans everything at each look (for tests of the monitor itself).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .client.consumer import Consumer
from .cluster import Cluster
from .committed import CommittedRecords, GroupMetadataEntry, OffsetCommitEntry, OffsetKey
from .errors import Errors
from .group.records import GROUP_METADATA_RECORD_TYPE, RECORD_TYPE_NAMES
from .group.service import BrokerResponse
from .runtime.runtime import CoordinatorState
from .runtime.snapshottable import SnapshottableCoordinator
from .topic import TopicPartition
from .trace import TraceEvent

__all__ = ["InvariantMonitor", "Violation", "Regression", "CommittedRecords",
           "SINGLE_OWNER", "OFFSETS_KEPT", "GENERATIONS_GROW", "NO_RESPONSE_BEFORE_COMMIT",
           "STALE_GENERATION_FENCED", "KAFKA_ALLOWS_OFFSET_BEHIND"]

SINGLE_OWNER = "single owner"
OFFSETS_KEPT = "committed offsets kept"
GENERATIONS_GROW = "generations grow"
NO_RESPONSE_BEFORE_COMMIT = "no response before its records commit"
STALE_GENERATION_FENCED = "stale generation fenced"
KAFKA_ALLOWS_OFFSET_BEHIND = "committed offset read back older after a coordinator move"

_FENCING_APIS = ("Heartbeat", "SyncGroup", "OffsetCommit")
# trace events after which a consumer's ownership is looked at (its source is the consumer)
_CLIENT_EVENTS = frozenset(("partitions_assigned", "synced", "joined", "member_state"))
# trace events after which the group's and the coordinator's state are looked at
_STATE_EVENTS = frozenset(("group_stabilized", "leader_elected", "load_completed",
                           "last_committed_offset_updated"))
_ACTIVE = CoordinatorState.ACTIVE


@dataclass(frozen=True)
class Violation:
    ts: int
    invariant: str
    detail: str


@dataclass
class Regression:
    """A committed offset that a new coordinator serves older than its predecessor did, which
    Kafka allows (see the module docstring): from `ts` until `restored_ms` (None: not yet), a
    read at the committed offset gives `now` (None: no offset) instead of `was`, because the new
    leader's high watermark (`high_watermark`) is not yet past the record at `record_offset`."""

    ts: int
    group: str
    topic: str
    partition: int
    was: int | None
    now: int | None
    record_offset: int
    high_watermark: int
    leader: int
    restored_ms: int | None = None
    kind: str = KAFKA_ALLOWS_OFFSET_BEHIND

    def __str__(self) -> str:
        until = f"{self.restored_ms} ms" if self.restored_ms is not None else "now"
        return (f"{self.topic}-{self.partition} ({self.group}): {_shown(self.now)} instead of "
                f"{_shown(self.was)} on broker {self.leader}, {self.ts} to {until} (high "
                f"watermark {self.high_watermark}, record at {self.record_offset})")


def _shown(offset: int | None) -> str:
    return "none" if offset is None else str(offset)


@dataclass
class InvariantMonitor:
    cluster: Cluster
    group_id: str = "group-1"
    thorough: bool = False  # also rescan everything at each look (tests of the monitor)
    violations: list[Violation] = field(default_factory=list)
    regressions: list[Regression] = field(default_factory=list)
    checks: int = 0  # looks at the state (events and `check()`); responses: `responses_checked`
    responses_checked: int = 0
    _max_generation: int = field(default=-1, repr=False)
    _max_committed_generation: int = field(default=-1, repr=False)
    _committed: dict[TopicPartition, CommittedRecords] = field(default_factory=dict, repr=False)
    _owner: dict[TopicPartition, Consumer] = field(default_factory=dict, repr=False)
    # the coordinator whose committed view was last looked at, and up to where
    _view: SnapshottableCoordinator | None = field(default=None, repr=False)
    _view_at: int = field(default=0, repr=False)
    _served: int = field(default=0, repr=False)  # the highest committed offset served so far
    _behind: dict[OffsetKey, Regression] = field(default_factory=dict, repr=False)
    _reported: set[tuple[str, str]] = field(default_factory=set, repr=False)

    def __post_init__(self) -> None:
        self._tp = self.cluster.partition_of(self.group_id)
        self.cluster.trace.subscribe(self._on_event)
        for broker in self.cluster.brokers.values():
            broker.service.add_response_listener(self.on_response)
            broker.runtime.on_state_change(self._on_context_state)

    def _fail(self, invariant: str, detail: str) -> None:
        """Record a violation, once (a state that stays wrong is seen again at each look)."""
        if (invariant, detail) in self._reported:
            return
        self._reported.add((invariant, detail))
        self.violations.append(Violation(self.cluster.scheduler.now, invariant, detail))

    # -- when to look ---------------------------------------------------------------------------

    def _on_event(self, event: TraceEvent) -> None:
        kind = event.kind
        if kind in _CLIENT_EVENTS:
            self.checks += 1
            consumer = self.cluster.consumers.get(event.source[7:])  # "client-NAME"
            if consumer is not None:
                self._check_owner(consumer)
            self._check_state()
        elif kind in _STATE_EVENTS:
            self.checks += 1
            self._check_state()

    def _on_context_state(self, tp: TopicPartition, old: CoordinatorState,
                          new: CoordinatorState) -> None:
        if tp == self._tp and new is _ACTIVE:
            self._check_offsets()

    def check(self) -> None:
        """Check every invariant on the cluster's current state, rescanning everything."""
        self.checks += 1
        self._full_single_owner()
        self._check_generations()
        self._check_offsets(whole=True)

    def _check_state(self) -> None:
        self._check_generations()
        self._check_offsets(whole=self.thorough)
        if self.thorough:
            self._full_single_owner()

    # -- single owner ---------------------------------------------------------------------------

    def _valid(self, consumer: Consumer, generation: int, members: dict[str, Any]) -> bool:
        """A live member of the group's current generation."""
        return (consumer.running and not consumer.crashed
                and consumer.config.group_id == self.group_id
                and consumer.generation.generation_id == generation
                and consumer.generation.member_id in members)

    def _check_owner(self, consumer: Consumer) -> None:
        """Check one consumer's partitions against who owns each (a previous owner is looked
        at again: it may have left the generation since)."""
        group = self._group()
        if group is None or not consumer.owned:
            return
        generation, members = group.generation_id, group.members
        if not self._valid(consumer, generation, members):
            return
        owner = self._owner
        for tp in consumer.owned:
            other = owner.get(tp)
            if other is not None and other is not consumer and tp in other.owned \
                    and self._valid(other, generation, members):
                self._fail(SINGLE_OWNER, f"{tp} owned by {other.name} and {consumer.name} in "
                                         f"generation {generation}")
            owner[tp] = consumer

    def _full_single_owner(self) -> None:
        group = self._group()
        if group is None:
            return
        generation, members = group.generation_id, group.members
        owners: dict[TopicPartition, str] = {}
        for c in self.cluster.consumers.values():
            if not self._valid(c, generation, members):
                continue
            for tp in c.owned:
                if tp in owners and owners[tp] != c.name:
                    self._fail(SINGLE_OWNER, f"{tp} owned by {owners[tp]} and {c.name} in "
                                             f"generation {generation}")
                owners[tp] = c.name
                self._owner[tp] = c

    def _group(self) -> Any:
        """The group as its active coordinator holds it now (latest, uncommitted included).

        A loading coordinator has none: its shard is half replayed, and it serves nobody
        (`CoordinatorRuntime.withActiveContextOrThrow` answers COORDINATOR_LOAD_IN_PROGRESS)."""
        found = self._coordinator()
        return None if found is None else found[1].shard.groups.groups.get(self.group_id)

    # -- generations grow -----------------------------------------------------------------------

    def _on_group_metadata(self, group_id: str, entry: GroupMetadataEntry) -> None:
        if group_id != self.group_id:
            return
        if entry.generation < 0:  # a tombstone: the group is gone, a new one starts over
            self._max_committed_generation = -1
        elif entry.generation < self._max_committed_generation:
            self._fail(GENERATIONS_GROW, f"committed generation went from "
                                         f"{self._max_committed_generation} back to "
                                         f"{entry.generation} (record at offset "
                                         f"{entry.log_offset})")
        else:
            self._max_committed_generation = entry.generation

    def _check_generations(self) -> None:
        self.committed_records(self.group_id)  # reads the new records (`_on_group_metadata`)
        group = self._group()
        if group is None:
            return
        generation = group.generation_id
        if 0 <= generation < self._max_committed_generation \
                and not self._deleted_since_commit(self.group_id):
            self._fail(GENERATIONS_GROW, f"the coordinator is at generation {generation}, below "
                                         f"the committed generation "
                                         f"{self._max_committed_generation}")
        if generation > self._max_generation:
            self._max_generation = generation

    def _deleted_since_commit(self, group_id: str) -> bool:
        """The coordinator's log holds a tombstone of the group above the high watermark: the
        group was deleted (`GroupCoordinatorShard.cleanupGroupMetadata`, when it is empty and
        its offsets expired), and the shard's latest state already lost it on replay
        (`GroupMetadataManager.replay`), so a JoinGroup since created it anew at generation 0.
        Read only when a generation looks too low, so the rare case pays for the look."""
        return any(record.record_type == GROUP_METADATA_RECORD_TYPE and record.value is None
                   and record.key["group"] == group_id
                   for _, record in self.committed_records(group_id).uncommitted())

    # -- committed offsets kept -----------------------------------------------------------------

    def _on_offset_commit(self, key: OffsetKey, entry: OffsetCommitEntry,
                          previous: OffsetCommitEntry | None) -> None:
        """A committed OffsetCommit record: it never carries a lower offset than the record
        before it, unless a tombstone deleted that one."""
        if entry.offset is not None and previous is not None and previous.offset is not None \
                and entry.offset < previous.offset:
            group, topic, partition = key
            self._fail(OFFSETS_KEPT, f"committed offset of {topic}-{partition} (group {group}) "
                                     f"moved back from {previous.offset} to {entry.offset} "
                                     f"(records at offsets {previous.log_offset} and "
                                     f"{entry.log_offset})")

    def _coordinator(self) -> tuple[int, SnapshottableCoordinator] | None:
        """The active coordinator of the watched partition: (broker, coordinator)."""
        p = self.cluster.partitions[self._tp]
        ctx = self.cluster.brokers[p.leader_id].runtime.context(self._tp)
        if ctx is None or ctx.state is not _ACTIVE or ctx.coordinator is None:
            return None
        return p.leader_id, ctx.coordinator

    def _check_offsets(self, whole: bool = False) -> None:
        """Compare what the coordinator serves at its committed offset with the committed
        records: all of it for a coordinator seen for the first time (or `whole`), else the
        partitions whose records it committed since the last look."""
        records = self.committed_records(self.group_id)
        found = self._coordinator()
        if found is None:
            return
        broker, coordinator = found
        at = coordinator.last_committed_offset
        if coordinator is not self._view or whole:
            new = coordinator is not self._view
            self._view, self._view_at = coordinator, at
            for key in list(records.keys()):
                self._check_key(records, coordinator, broker, at, key, new)
        elif at > self._view_at:
            for key in sorted(records.moved_between(self._view_at, at)):
                self._check_key(records, coordinator, broker, at, key, False)
            self._view_at = at
        else:
            return
        if self._behind:
            for key, regression in list(self._behind.items()):
                if regression.record_offset < at:
                    regression.restored_ms = self.cluster.scheduler.now
                    del self._behind[key]
        if at > self._served:
            self._served = at

    def _check_key(self, records: CommittedRecords, coordinator: SnapshottableCoordinator,
                   broker: int, at: int, key: OffsetKey, new: bool) -> None:
        group, topic, partition = key
        served = _served_offset(coordinator, at, key)
        expected = records.latest_below(key, at)
        expected_offset = None if expected is None else expected.offset
        if served is None and expected_offset is None or served is not None and \
                expected is not None and served.record_offset == expected.log_offset:
            if new:
                self._maybe_behind(records, broker, at, key, expected_offset)
            return
        tp = f"{topic}-{partition} (group {group})"
        if served is None:
            assert expected is not None
            self._fail(OFFSETS_KEPT, f"committed offset {expected_offset} of {tp}, record at "
                                     f"offset {expected.log_offset}, is gone from broker "
                                     f"{broker}'s coordinator (committed offset {at})")
        elif expected_offset is None or served.offset < expected_offset:
            self._fail(OFFSETS_KEPT, f"committed offset of {tp} went back from "
                                     f"{_shown(expected_offset)} to {served.offset} on broker "
                                     f"{broker} (the coordinator serves the record at offset "
                                     f"{served.record_offset}; committed below {at}: "
                                     f"{_where(expected)})")
        else:
            self._fail(OFFSETS_KEPT, f"committed offset of {tp} is {served.offset} on broker "
                                     f"{broker} (record at offset {served.record_offset}), but "
                                     f"the last committed record below {at} is "
                                     f"{_where(expected)}")

    def _maybe_behind(self, records: CommittedRecords, broker: int, at: int, key: OffsetKey,
                      now: int | None) -> None:
        """A coordinator seen for the first time serves `now` for `key`: is a newer record that
        an earlier coordinator served above its committed offset? (Kafka allows it; the record
        must still be in the new leader's log.)"""
        if at >= self._served:
            return
        latest = records.latest_below(key, self._served)
        if latest is None or latest.log_offset < at or latest.offset == now:
            return
        group, topic, partition = key
        leader_end = self.cluster.partitions[self._tp].replicas[broker].log_end_offset
        if leader_end <= latest.log_offset:
            self._fail(OFFSETS_KEPT, f"committed offset {_shown(latest.offset)} of "
                                     f"{topic}-{partition} (group {group}), record at offset "
                                     f"{latest.log_offset}, is lost: the new leader's log ends "
                                     f"at {leader_end}")
            return
        regression = Regression(self.cluster.scheduler.now, group, topic, partition,
                                latest.offset, now, latest.log_offset, at, broker)
        self.regressions.append(regression)
        self._behind[key] = regression

    def _stable_fetch_sees_commits(self, sent: BrokerResponse) -> None:
        """An OffsetFetch with `require_stable` answered NONE returns, for each partition, the
        last record committed before the request arrived, or a later one."""
        response = sent.response
        if response.error is not Errors.NONE or not sent.request.require_stable:
            return
        records = self.committed_records(sent.group_id)
        for (topic, partition), data in sorted(response.offsets.items()):
            if data.error is not Errors.NONE:
                continue
            entries = records.offset_commits.get((sent.group_id, topic, partition))
            if not entries:
                continue
            returned = data.offset if data.offset >= 0 else None
            # the entries committed before the request arrived, and every later one
            start = next((i for i in range(len(entries) - 1, -1, -1)
                          if entries[i].seen_ms < sent.received_ms), None)
            if start is None:
                continue  # nothing known committed before it arrived
            if any(e.offset == returned for e in list(entries)[start:]):
                continue
            before = entries[start]
            self._fail(OFFSETS_KEPT, f"OffsetFetch (require_stable) for {topic}-{partition} "
                                     f"(group {sent.group_id}) answered {_shown(returned)} by "
                                     f"broker {sent.broker_id} at {sent.sent_ms} ms, but "
                                     f"{_shown(before.offset)} was committed before the "
                                     f"request arrived ({sent.received_ms} ms, record at "
                                     f"offset {before.log_offset})")

    # -- response invariants -------------------------------------------------------------------

    def committed_records(self, group_id: str) -> CommittedRecords:
        """The committed records of the partition that holds `group_id`, read up to now."""
        tp = self.cluster.partition_of(group_id)
        records = self._committed.get(tp)
        if records is None:
            horizon = max(60_000, 4 * self.cluster.config.offsets_commit_timeout_ms)
            records = self._committed[tp] = CommittedRecords(
                self.cluster.partitions[tp], self._now, horizon_ms=horizon,
                on_offset_commit=self._on_offset_commit if tp == self._tp else None,
                on_group_metadata=self._on_group_metadata if tp == self._tp else None)
        records.refresh()
        return records

    def _now(self) -> int:
        return self.cluster.scheduler.now

    def on_response(self, sent: BrokerResponse) -> None:
        """Check a response as its broker sends it (a `BrokerResponse` listener)."""
        self.responses_checked += 1
        api = sent.api
        if api in _FENCING_APIS:
            self._stale_generation_fenced(sent)
        if api == "OffsetCommit":
            self._commit_after_records(sent)
        elif api == "OffsetFetch":
            self._stable_fetch_sees_commits(sent)
        elif api == "SyncGroup" and sent.response.error is Errors.NONE:
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
        elif api == "JoinGroup" and sent.response.error is Errors.NONE:
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
        if sent.group_id == self.group_id:
            self._check_offsets(whole=self.thorough)  # costs nothing when nothing moved

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
        records = self._committed.get(self._tp)
        return {"checks": self.checks, "responses_checked": self.responses_checked,
                "violations": len(self.violations),
                "regressions_kafka_allows": len(self.regressions),
                "max_generation": self._max_generation,
                "committed_partitions": 0 if records is None else sum(
                    1 for k in records.keys() if k[0] == self.group_id
                    and (e := records.latest(k)) is not None and e.offset is not None),
                "offsets_deleted": 0 if records is None else records.deletions}


def _served_offset(coordinator: SnapshottableCoordinator, at: int, key: OffsetKey) -> Any:
    """The OffsetAndMetadata a read at committed offset `at` finds for `key` (or None), as
    `OffsetMetadataManager.fetchOffsets` reads it."""
    group, topic, partition = key
    offsets = coordinator.shard.offsets.offsets.get(group, epoch=at)
    return None if offsets is None else offsets.get((topic, partition), epoch=at)


def _where(entry: OffsetCommitEntry | None) -> str:
    if entry is None:
        return "none"
    what = "a tombstone" if entry.offset is None else f"offset {entry.offset}"
    return f"{what} (record at offset {entry.log_offset})"
