"""What must always hold in a KIP-848 consumer group (`group.protocol=consumer`), whatever
breaks: the monitor beside `invariants.InvariantMonitor` for the classic protocol.

* **single owner**: at any moment at most one member processes a partition. A member that the
  coordinator knows at the consumer's own epoch (`ConsumerGroupMember.memberEpoch`) may hold only
  what the coordinator assigned to it or is waiting for it to revoke (`assignedPartitions`,
  `partitionsPendingRevocation`); the coordinator gives a partition to a new owner only once the
  old one has acknowledged its revocation (`CurrentAssignmentBuilder`, the partition epochs), so
  no two such members hold one partition. Every batch of records a consumer processes is checked
  at that moment. A consumer the coordinator no longer knows at its epoch (fenced by the session
  timeout while it was cut off or dropped its heartbeats, and not told yet) is a *zombie*: Kafka
  cannot stop it from processing what it still holds (its commits fail), so its batches are
  counted (`zombie_batches`), not reported. A classic consumer inside the consumer group (the
  online migration: `GroupMetadataManager.classicGroupJoinToConsumerGroup`) is watched the same
  way, its generation id being its member epoch;
* **epochs only grow**: each member id's epochs, as its consumer receives them, never go down
  (fencing resets the consumer to 0 to rejoin, and the rejoin brings a higher epoch); the
  coordinator's group epoch and each member's epoch never go down either;
* **no commit at a stale epoch**: an OffsetCommit answered NONE carries the epoch its member had
  on the coordinator when the request was handled (`ConsumerGroup.validateOffsetCommit`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .client.async_consumer import AsyncConsumer
from .client.consumer import Consumer
from .errors import Errors
from .group.modern.topics import topic_id
from .topic import TopicPartition

__all__ = ["ConsumerGroupMonitor", "CG_SINGLE_OWNER", "CG_EPOCHS_GROW", "CG_STALE_COMMIT",
           "CGViolation"]

CG_SINGLE_OWNER = "at most one member processes a partition"
CG_EPOCHS_GROW = "epochs only grow"
CG_STALE_COMMIT = "no commit accepted at a stale member epoch"


@dataclass(frozen=True)
class CGViolation:
    at_ms: int
    invariant: str
    detail: str


@dataclass
class ConsumerGroupMonitor:
    cluster: Any
    group_id: str = "group-1"
    violations: list[CGViolation] = field(default_factory=list)
    checks: int = 0
    batches: int = 0
    zombie_batches: int = 0
    commits_checked: int = 0
    _group_epoch: int = field(default=0, repr=False)
    _member_epochs: dict[str, int] = field(default_factory=dict, repr=False)
    _client_epochs: dict[tuple[str, str], int] = field(default_factory=dict, repr=False)
    _hooked: set[Any] = field(default_factory=set, repr=False)
    _epochs_seen: dict[Any, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.cluster.trace.subscribe(self._on_event)
        for broker in self.cluster.brokers.values():
            broker.service.add_response_listener(self._on_response)
        self._hook_consumers()

    def _fail(self, invariant: str, detail: str) -> None:
        self.violations.append(CGViolation(self.cluster.scheduler.now, invariant, detail))

    def assert_ok(self) -> None:
        assert not self.violations, "\n".join(f"{v.at_ms} ms {v.invariant}: {v.detail}"
                                              for v in self.violations[:10])

    # -- where to look ---------------------------------------------------------------------------

    def _hook_consumers(self) -> None:
        """Watch every batch each consumer of the group processes (new ones as they come)."""
        for consumer in self.cluster.consumers.values():
            if consumer in self._hooked or not isinstance(consumer, (AsyncConsumer, Consumer)) \
                    or consumer.config.group_id != self.group_id:
                continue
            self._hooked.add(consumer)
            previous = consumer.on_records

            def watch(tp: TopicPartition, start: int, end: int, consumer: AsyncConsumer = consumer,
                      previous: Any = previous) -> None:
                self._on_batch(consumer, tp)
                if previous is not None:
                    previous(tp, start, end)
            consumer.on_records = watch

    def _on_event(self, event: Any) -> None:
        if event.source.startswith("client-"):
            self._hook_consumers()
            self.check()

    def _group(self) -> Any:
        broker = self.cluster.coordinator_for(self.group_id)
        if broker is None:
            return None
        runtime = self.cluster.brokers[broker].runtime
        ctx = runtime.context(self.cluster.partition_of(self.group_id))
        if ctx is None or ctx.coordinator is None or ctx.state.name != "ACTIVE":
            return None
        return ctx.coordinator.shard.consumer_groups.group(self.group_id)

    # -- single owner ----------------------------------------------------------------------------

    @staticmethod
    def _epoch_of(consumer: Any) -> int:
        """The member epoch the consumer believes it has (a classic one's generation id)."""
        if isinstance(consumer, AsyncConsumer):
            return consumer.member_epoch
        return consumer.generation.generation_id

    def _held_by(self, group: Any, consumer: Any) -> set[TopicPartition] | None:
        """What the coordinator lets `consumer` hold (None: it does not know it at its epoch)."""
        if group is None or not consumer.running or consumer.crashed:
            return None
        epoch = self._epoch_of(consumer)
        member = group.members.get(consumer.member_id) if consumer.member_id else None
        if member is None or member.member_epoch != epoch or epoch <= 0:
            return None
        names = {topic_id(t): t for t in self.cluster.topics}
        out = set()
        for assignment in (member.assigned_partitions, member.partitions_pending_revocation):
            for tid, parts in assignment.items():
                out.update(TopicPartition(names[tid], p) for p in parts)
        return out

    def _on_batch(self, consumer: Any, tp: TopicPartition) -> None:
        self.batches += 1
        group = self._group()
        if group is None:
            return  # no active coordinator right now: nothing to compare with
        held = self._held_by(group, consumer)
        if held is None:
            self.zombie_batches += 1
            return
        if tp not in held:
            self._fail(CG_SINGLE_OWNER, f"{consumer.name} (member {consumer.member_id}, epoch "
                                        f"{self._epoch_of(consumer)}) processed {tp}, which "
                                        f"the coordinator has not assigned to it")
            return
        for other in self.cluster.consumers.values():
            if other is consumer or not isinstance(other, (AsyncConsumer, Consumer)) \
                    or tp not in other.owned:
                continue
            other_held = self._held_by(group, other)
            if other_held is not None and tp in other_held:
                self._fail(CG_SINGLE_OWNER, f"{consumer.name} processed {tp} while "
                                            f"{other.name} (epoch {self._epoch_of(other)}) "
                                            f"holds it")

    def check(self) -> None:
        """Ownership and epochs on the cluster's state now."""
        self.checks += 1
        group = self._group()
        if group is None:
            return
        owners: dict[TopicPartition, str] = {}
        for consumer in self.cluster.consumers.values():
            if not isinstance(consumer, (AsyncConsumer, Consumer)) \
                    or consumer.config.group_id != self.group_id:
                continue
            held = self._held_by(group, consumer)
            if held is None:
                continue
            for tp in sorted(consumer.owned):
                if tp not in held:
                    self._fail(CG_SINGLE_OWNER, f"{consumer.name} holds {tp}, not assigned to "
                                                f"member {consumer.member_id} at epoch "
                                                f"{self._epoch_of(consumer)}")
                if tp in owners:
                    self._fail(CG_SINGLE_OWNER, f"{tp} held by {owners[tp]} and {consumer.name}")
                owners[tp] = consumer.name
        self._check_epochs(group)

    # -- epochs ----------------------------------------------------------------------------------

    def _check_epochs(self, group: Any) -> None:
        if group.group_epoch < self._group_epoch:
            self._fail(CG_EPOCHS_GROW, f"group epoch {self._group_epoch} -> {group.group_epoch}")
        self._group_epoch = max(self._group_epoch, group.group_epoch)
        for member_id, member in group.members.items():
            last = self._member_epochs.get(member_id, 0)
            if 0 < member.member_epoch < last:
                self._fail(CG_EPOCHS_GROW, f"member {member_id}: epoch {last} -> "
                                           f"{member.member_epoch} on the coordinator")
            self._member_epochs[member_id] = max(last, member.member_epoch)
        for consumer in self.cluster.consumers.values():
            if not isinstance(consumer, AsyncConsumer):
                continue
            epochs = consumer.membership.epochs
            seen = self._epochs_seen.get(consumer, 0)
            self._epochs_seen[consumer] = len(epochs)
            for member_id, epoch in epochs[seen:]:  # the ones received since the last look
                key = (consumer.name, member_id)
                if epoch < self._client_epochs.get(key, 0):
                    self._fail(CG_EPOCHS_GROW, f"{consumer.name} (member {member_id}) received "
                                               f"epoch {epoch} after "
                                               f"{self._client_epochs[key]}")
                self._client_epochs[key] = max(epoch, self._client_epochs.get(key, 0))

    # -- commits ---------------------------------------------------------------------------------

    def _on_response(self, sent: Any) -> None:
        if sent.api != "OffsetCommit" or sent.group_id != self.group_id or not sent.handled:
            return
        request = sent.request
        epoch = request.generation_id_or_member_epoch
        if epoch < 0:
            return  # no member epoch: the admin path (refused while the group has members)
        if sent.generation is not None:
            return  # a classic group then (before an upgrade, after a downgrade): generations
        # are `invariants.InvariantMonitor`'s business
        self.commits_checked += 1
        accepted = sent.response.error is Errors.NONE and any(
            e is Errors.NONE for e in sent.response.errors.values())
        if accepted and sent.member_epoch != epoch:
            self._fail(CG_STALE_COMMIT, f"OffsetCommit of {request.member_id} at epoch {epoch} "
                                        f"answered NONE by broker {sent.broker_id} at "
                                        f"{sent.sent_ms} ms; the member's epoch was "
                                        f"{sent.member_epoch}")
