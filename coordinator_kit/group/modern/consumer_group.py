"""A KIP-848 consumer group (Kafka's `ConsumerGroup` and its base `ModernGroup`).

Its state is hard state: it changes only when the shard replays a consumer group record (types
3-8), and every field lives in a timeline structure, so a failed write is rolled back and reads at
the committed offset see committed state only. The group's state (Empty, Assigning, Reconciling,
Stable) is not set by handlers: it is derived after every change (`maybeUpdateGroupState`), and
the moves it can make are the table `CONSUMER_GROUP_STATES`.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any

from ...assignors.server_api import SubscriptionType
from ...errors import Errors
from ...states import StateTable
from ...timeline import SnapshotRegistry, TimelineHashMap, TimelineInteger, TimelineObject
from .member import EMPTY_ASSIGNMENT, Assignment, ConsumerGroupMember, MemberState
from .topics import TopicMetadata, TopicsView

__all__ = ["ConsumerGroupState", "CONSUMER_GROUP_STATES", "ConsumerGroup", "subscription_type"]


class ConsumerGroupState(Enum):
    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"

    def __str__(self) -> str:
        return self.value  # ConsumerGroupState.toString


_E, _A, _R, _S = (ConsumerGroupState.EMPTY, ConsumerGroupState.ASSIGNING,
                  ConsumerGroupState.RECONCILING, ConsumerGroupState.STABLE)

# Kafka derives the state (ConsumerGroup.maybeUpdateGroupState) instead of listing moves; these
# are the moves that derivation makes, record by record. Dead is in Kafka's enum but no consumer
# group enters it (a deleted group is removed from the map).
CONSUMER_GROUP_STATES: StateTable[ConsumerGroupState] = StateTable(
    "ConsumerGroup", ConsumerGroupState,
    valid_previous={_E: (_A, _R, _S), _A: (_E, _R, _S), _R: (_E, _A, _S), _S: (_E, _A, _R)},
    triggers={
        (_A, _E): "last member removed", (_R, _E): "last member removed",
        (_S, _E): "last member removed",
        (_E, _A): "member joins a group whose epoch is ahead of its target",
        (_R, _A): "group epoch bumped (subscription change, member left or fenced)",
        (_S, _A): "group epoch bumped (subscription change, member left or fenced)",
        (_E, _R): "member joins at epoch 0 behind the target epoch",
        (_A, _R): "target assignment computed; members not reconciled yet",
        # taken on every join and leave, by the order of the records: a new member's
        # metadata is replayed before the group epoch is bumped (epoch 0, not the target's),
        # a leaving member's current-assignment tombstone before it is removed (epoch -1/-2)
        (_S, _R): "a member's record is replayed off the target epoch (joining or leaving)",
        (_E, _S): "first member's record replayed (epochs still 0)",
        (_A, _S): "target assignment computed; every member already reconciled",
        (_R, _S): "every member STABLE at the target epoch",
    },
    initial=_E)


def subscription_type(subscribed_topic_names: Mapping[str, int],
                      number_of_members: int) -> SubscriptionType:
    """`ModernGroup.subscriptionType`: HOMOGENEOUS iff every topic has every member."""
    if all(n == number_of_members for n in subscribed_topic_names.values()):
        return SubscriptionType.HOMOGENEOUS
    return SubscriptionType.HETEROGENEOUS


def _count(counts: dict[str, int], names: Any, delta: int) -> None:
    for name in names:
        n = counts.get(name, 0) + delta
        if n > 0:
            counts[name] = n
        else:
            counts.pop(name, None)


class ConsumerGroup:
    protocol_type = "consumer"

    def __init__(self, registry: SnapshotRegistry, group_id: str) -> None:
        self.registry = registry
        self.group_id = group_id
        self._group_epoch = TimelineInteger(registry)
        self.members: TimelineHashMap[str, ConsumerGroupMember] = TimelineHashMap(registry)
        self.subscribed_topic_names: TimelineHashMap[str, int] = TimelineHashMap(registry)
        self.subscription_metadata: TimelineHashMap[str, TopicMetadata] = TimelineHashMap(registry)
        self._subscription_type = TimelineObject(registry, SubscriptionType.HOMOGENEOUS)
        self._target_epoch = TimelineInteger(registry)
        self.target_assignment: TimelineHashMap[str, Assignment] = TimelineHashMap(registry)
        self.inverted_target: TimelineHashMap[str, TimelineHashMap[int, str]] = \
            TimelineHashMap(registry)
        self._state = TimelineObject(registry, ConsumerGroupState.EMPTY)
        self.static_members: TimelineHashMap[str, str] = TimelineHashMap(registry)
        self.server_assignors: TimelineHashMap[str, int] = TimelineHashMap(registry)
        self.partition_epochs: TimelineHashMap[str, TimelineHashMap[int, int]] = \
            TimelineHashMap(registry)
        # Members that joined with the classic protocol, and how many of them support each
        # protocol name (ConsumerGroup.numClassicProtocolMembers /
        # classicProtocolMembersSupportedProtocols).
        self._num_classic_members = TimelineInteger(registry)
        self.classic_protocol_counts: TimelineHashMap[str, int] = TimelineHashMap(registry)
        # Soft state (ModernGroup.metadataRefreshDeadline): (deadline ms, group epoch).
        self.metadata_refresh_deadline: tuple[int, int] = (0, 0)

    # -- epochs and state ------------------------------------------------------------------------

    @property
    def group_epoch(self) -> int:
        return self._group_epoch.get()

    def set_group_epoch(self, epoch: int) -> None:
        self._group_epoch.set(epoch)
        self._update_state()

    @property
    def assignment_epoch(self) -> int:
        return self._target_epoch.get()

    def set_target_assignment_epoch(self, epoch: int) -> None:
        self._target_epoch.set(epoch)
        self._update_state()

    @property
    def state(self) -> ConsumerGroupState:
        return self._state.get()

    def state_at(self, committed_offset: int | None) -> ConsumerGroupState:
        return self._state.get(committed_offset)

    @property
    def subscription_type(self) -> SubscriptionType:
        return self._subscription_type.get()

    def _update_state(self) -> None:
        """`maybeUpdateGroupState`."""
        if self.members.is_empty():
            new = _E
        elif self._group_epoch.get() > self._target_epoch.get():
            new = _A
        else:
            target = self._target_epoch.get()
            new = _S if all(m.is_reconciled_to(target) for m in self.members.values()) else _R
        old = self._state.get()
        if new is not old:
            CONSUMER_GROUP_STATES.check(old, new)
            self._state.set(new)

    # -- members ---------------------------------------------------------------------------------

    def has_member(self, member_id: str) -> bool:
        return member_id in self.members

    def num_members(self) -> int:
        return len(self.members)

    def get_or_maybe_create_member(self, member_id: str, create: bool) -> ConsumerGroupMember:
        member = self.members.get(member_id)
        if member is not None:
            return member
        if not create:
            raise Errors.UNKNOWN_MEMBER_ID.exception(
                f"Member {member_id} is not a member of group {self.group_id}.")
        return ConsumerGroupMember(member_id)

    def static_member_id(self, instance_id: str | None) -> str | None:
        return None if instance_id is None else self.static_members.get(instance_id)

    def static_member(self, instance_id: str) -> ConsumerGroupMember | None:
        member_id = self.static_member_id(instance_id)
        return None if member_id is None else self.get_or_maybe_create_member(member_id, False)

    def has_static_member(self, instance_id: str | None) -> bool:
        return instance_id is not None and instance_id in self.static_members

    def update_member(self, new: ConsumerGroupMember) -> None:
        old = self.members.put(new.member_id, new)
        self._update_subscriptions(old, new)
        if (old is not None and old.use_classic_protocol) or new.use_classic_protocol:
            self._update_classic_counts(old, new)
        self._remove_partition_epochs(old)
        self._add_partition_epochs(new.assigned_partitions, new.member_epoch)
        self._add_partition_epochs(new.partitions_pending_revocation, new.member_epoch)
        if new.instance_id is not None:
            self.static_members.put(new.instance_id, new.member_id)
        self._update_state()

    def remove_member(self, member_id: str) -> None:
        old = self.members.remove(member_id)
        self._update_subscriptions(old, None)
        if old is not None and old.use_classic_protocol:
            self._update_classic_counts(old, None)
        self._remove_partition_epochs(old)
        if old is not None and old.instance_id is not None:
            self.static_members.remove(old.instance_id)
        self._update_state()

    def _update_subscriptions(self, old: ConsumerGroupMember | None,
                              new: ConsumerGroupMember | None) -> None:
        counts = dict(self.subscribed_topic_names.items())
        if old is not None:
            _count(counts, old.subscribed_topic_names, -1)
        if new is not None:
            _count(counts, new.subscribed_topic_names, +1)
        for name in list(self.subscribed_topic_names.keys()):
            if name not in counts:
                self.subscribed_topic_names.remove(name)
        for name, n in counts.items():
            if self.subscribed_topic_names.get(name) != n:
                self.subscribed_topic_names.put(name, n)
        self._subscription_type.set(subscription_type(counts, len(self.members)))
        assignors = dict(self.server_assignors.items())
        if old is not None and old.server_assignor_name is not None:
            _count(assignors, (old.server_assignor_name,), -1)
        if new is not None and new.server_assignor_name is not None:
            _count(assignors, (new.server_assignor_name,), +1)
        for name in list(self.server_assignors.keys()):
            if name not in assignors:
                self.server_assignors.remove(name)
        for name, n in assignors.items():
            if self.server_assignors.get(name) != n:
                self.server_assignors.put(name, n)

    # -- members that use the classic protocol --------------------------------------------------

    @property
    def num_classic_protocol_members(self) -> int:
        return self._num_classic_members.get()

    def _update_classic_counts(self, old: ConsumerGroupMember | None,
                               new: ConsumerGroupMember | None) -> None:
        """`maybeUpdateNumClassicProtocolMembers` and
        `maybeUpdateClassicProtocolMembersSupportedProtocols`."""
        delta = 0
        counts = dict(self.classic_protocol_counts.items())
        for member, sign in ((old, -1), (new, +1)):
            if member is not None and member.classic_member_metadata is not None:
                delta += sign
                _count(counts, {p.name for p in
                                member.classic_member_metadata.supported_protocols}, sign)
        self._num_classic_members.set(self._num_classic_members.get() + delta)
        for name in list(self.classic_protocol_counts.keys()):
            if name not in counts:
                self.classic_protocol_counts.remove(name)
        for name, n in counts.items():
            if self.classic_protocol_counts.get(name) != n:
                self.classic_protocol_counts.put(name, n)

    def supports_classic_protocols(self, protocol_type: str | None,
                                   protocol_names: set[str]) -> bool:
        """`supportsClassicProtocols`: the consumer protocol type, and (once the group has
        members) one protocol every classic member supports."""
        if protocol_type != self.protocol_type:
            return False
        if self.state is ConsumerGroupState.EMPTY:
            return bool(protocol_names)
        n = self.num_classic_protocol_members
        return any(self.classic_protocol_counts.get(name, 0) == n for name in protocol_names)

    def all_members_use_classic_protocol_except(self, member_id: str) -> bool:
        """`allMembersUseClassicProtocolExcept`."""
        return (self.num_classic_protocol_members == len(self.members) - 1
                and not self.get_or_maybe_create_member(member_id, False).use_classic_protocol)

    def waiting_on_unreleased_partition(self, member: ConsumerGroupMember) -> bool:
        """`waitingOnUnreleasedPartition`: a target partition the member does not have yet is
        still owned by another member."""
        if member.state is not MemberState.UNRELEASED_PARTITIONS:
            return False
        for topic, parts in self.target_assignment.get(member.member_id,
                                                       EMPTY_ASSIGNMENT).items():
            mine = member.assigned_partitions.get(topic, frozenset())
            for p in parts:
                if p not in mine and self.current_partition_epoch(topic, p) != -1:
                    return True
        return False

    def is_empty(self) -> bool:
        """`ConsumerGroup.isEmpty`: the Empty state."""
        return self.state is ConsumerGroupState.EMPTY

    def validate_delete_group(self) -> None:
        """`ConsumerGroup.validateDeleteGroup`: only an Empty group can be deleted."""
        if self.state is not ConsumerGroupState.EMPTY:
            raise Errors.NON_EMPTY_GROUP.exception()

    # -- partition epochs (who owns what, at which epoch) ----------------------------------------

    def current_partition_epoch(self, topic_id: str, partition: int) -> int:
        """-1 when no member owns (or is revoking) the partition."""
        parts = self.partition_epochs.get(topic_id)
        if parts is None:
            return -1
        epoch = parts.get(partition)
        return -1 if epoch is None else epoch

    def _remove_partition_epochs(self, old: ConsumerGroupMember | None) -> None:
        if old is None:
            return
        for assignment in (old.assigned_partitions, old.partitions_pending_revocation):
            for topic, parts in assignment.items():
                epochs = self.partition_epochs.get(topic)
                if epochs is None:
                    raise RuntimeError(f"Cannot remove the epoch {old.member_epoch} from {topic} "
                                       f"because it does not have any epoch")
                for p in parts:
                    prev = epochs.remove(p)
                    if prev != old.member_epoch:
                        raise RuntimeError(
                            f"Cannot remove the epoch {old.member_epoch} from {topic}-{p} "
                            f"because the partition is still owned at a different epoch {prev}")
                if epochs.is_empty():
                    self.partition_epochs.remove(topic)

    def _add_partition_epochs(self, assignment: Assignment, epoch: int) -> None:
        for topic, parts in assignment.items():
            epochs = self.partition_epochs.get(topic)
            if epochs is None:
                epochs = TimelineHashMap(self.registry)
                self.partition_epochs.put(topic, epochs)
            for p in parts:
                prev = epochs.put(p, epoch)
                if prev is not None:
                    raise RuntimeError(
                        f"Cannot set the epoch of {topic}-{p} to {epoch} because the partition "
                        f"is still owned at epoch {prev}")

    # -- target assignment -----------------------------------------------------------------------

    def target_assignment_of(self, member_id: str, instance_id: str | None = None) -> Assignment:
        """`targetAssignment(memberId, instanceId)`: a static member sees its instance's."""
        if instance_id is None:
            return self.target_assignment.get(member_id, EMPTY_ASSIGNMENT)
        previous = self.static_member_id(instance_id)
        if previous is not None:
            return self.target_assignment.get(previous, EMPTY_ASSIGNMENT)
        return EMPTY_ASSIGNMENT

    def update_target_assignment(self, member_id: str, new: Assignment) -> None:
        self._update_inverted(member_id, self.target_assignment.get(member_id, EMPTY_ASSIGNMENT),
                              new)
        self.target_assignment.put(member_id, new)

    def remove_target_assignment(self, member_id: str) -> None:
        self._update_inverted(member_id, self.target_assignment.get(member_id, EMPTY_ASSIGNMENT),
                              EMPTY_ASSIGNMENT)
        self.target_assignment.remove(member_id)

    def _update_inverted(self, member_id: str, old: Assignment, new: Assignment) -> None:
        for topic in sorted(set(old) | set(new)):
            old_parts, new_parts = old.get(topic, frozenset()), new.get(topic, frozenset())
            owners = self.inverted_target.get(topic)
            if owners is None:
                owners = TimelineHashMap(self.registry)
            for p in old_parts - new_parts:
                if owners.get(p) == member_id:  # moved A->B with B written first: keep B
                    owners.remove(p)
            for p in new_parts - old_parts:
                owners.put(p, member_id)
            if owners.is_empty():
                self.inverted_target.remove(topic)
            else:
                self.inverted_target.put(topic, owners)

    def inverted_target_view(self) -> dict[str, dict[int, str]]:
        return {t: dict(owners.items()) for t, owners in self.inverted_target.items()}

    # -- subscription metadata -------------------------------------------------------------------

    def set_subscription_metadata(self, metadata: Mapping[str, TopicMetadata]) -> None:
        self.subscription_metadata.clear()
        for name, t in metadata.items():
            self.subscription_metadata.put(name, t)

    def compute_subscribed_topic_names(self, old: ConsumerGroupMember | None,
                                       new: ConsumerGroupMember | None) -> dict[str, int]:
        counts = dict(self.subscribed_topic_names.items())
        if old is not None:
            _count(counts, old.subscribed_topic_names, -1)
        if new is not None:
            _count(counts, new.subscribed_topic_names, +1)
        return counts

    @staticmethod
    def compute_subscription_metadata(names: Mapping[str, int],
                                      topics: TopicsView) -> dict[str, TopicMetadata]:
        return {n: topics.by_name[n] for n in sorted(names) if n in topics.by_name}

    def has_metadata_expired(self, now: int) -> bool:
        deadline, epoch = self.metadata_refresh_deadline
        return now >= deadline or self.group_epoch < epoch

    def request_metadata_refresh(self) -> None:
        self.metadata_refresh_deadline = (0, 0)

    def compute_preferred_server_assignor(self, old: ConsumerGroupMember | None,
                                          new: ConsumerGroupMember | None) -> str | None:
        """The most requested ServerAssignor, counting `new` instead of `old`. Kafka breaks a
        tie by HashMap order; the kit takes the first name alphabetically."""
        counts = dict(self.server_assignors.items())
        if old is not None and old.server_assignor_name is not None:
            _count(counts, (old.server_assignor_name,), -1)
        if new is not None and new.server_assignor_name is not None:
            _count(counts, (new.server_assignor_name,), +1)
        if not counts:
            return None
        return min(counts, key=lambda name: (-counts[name], name))

    # -- offsets (ConsumerGroup.validateOffsetCommit / validateOffsetFetch) ---------------------

    def validate_offset_commit(self, member_id: str, instance_id: str | None, member_epoch: int,
                               is_transactional: bool, api_version: int) -> None:
        if member_epoch < 0 and self.members.is_empty():
            return  # admin client or a consumer without group management: empty group only
        member = self.get_or_maybe_create_member(member_id, False)
        if not is_transactional and not member.use_classic_protocol and api_version < 9:
            raise Errors.UNSUPPORTED_VERSION.exception(
                "OffsetCommit version 9 or above must be used by members using the modern group "
                "protocol")
        _validate_member_epoch(member_epoch, member.member_epoch, member.use_classic_protocol)

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int,
                              committed_offset: int | None) -> None:
        if member_id is None and member_epoch < 0:
            return
        member = self.members.get(member_id, epoch=committed_offset) if member_id else None
        if member is None:
            raise Errors.UNKNOWN_MEMBER_ID.exception(
                f"Member {member_id} is not a member of group {self.group_id}.")
        _validate_member_epoch(member_epoch, member.member_epoch, member.use_classic_protocol)

    def tombstone_records(self) -> list[Any]:
        """`createGroupTombstoneRecords`: the order replay requires (current assignments, target
        assignments, target epoch, members, subscription metadata, group epoch)."""
        from .. import records as rec
        ids = sorted(self.members.keys())
        g = self.group_id
        return ([rec.new_consumer_group_current_assignment_tombstone(g, m) for m in ids]
                + [rec.new_consumer_group_target_assignment_tombstone(g, m) for m in ids]
                + [rec.new_consumer_group_target_assignment_epoch_tombstone(g)]
                + [rec.new_consumer_group_member_subscription_tombstone(g, m) for m in ids]
                + [rec.new_consumer_group_subscription_metadata_tombstone(g),
                   rec.new_consumer_group_epoch_tombstone(g)])

    # -- views -----------------------------------------------------------------------------------

    def describe(self, committed_offset: int | None = None) -> dict[str, Any]:
        members = sorted(self.members.values(epoch=committed_offset), key=lambda m: m.member_id)
        return {"group_id": self.group_id, "state": self.state_at(committed_offset).value,
                "group_epoch": self._group_epoch.get(committed_offset),
                "assignment_epoch": self._target_epoch.get(committed_offset),
                "members": [{"member_id": m.member_id, "member_epoch": m.member_epoch,
                             "state": m.state.name, "instance_id": m.instance_id,
                             "assigned": {t: sorted(p) for t, p in
                                          sorted(m.assigned_partitions.items())}}
                            for m in members]}


def _validate_member_epoch(received: int, expected: int, use_classic_protocol: bool) -> None:
    if received != expected:
        if use_classic_protocol:  # a classic member's generation id is its member epoch
            raise Errors.ILLEGAL_GENERATION.exception(
                f"The received generation id {received} does not match the expected member "
                f"epoch {expected}.")
        raise Errors.STALE_MEMBER_EPOCH.exception(
            f"The received member epoch {received} does not match the expected member epoch "
            f"{expected}.")
