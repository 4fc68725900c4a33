"""Reconciling one member towards the target assignment (Kafka's `CurrentAssignmentBuilder`).

A member moves to a new epoch only in steps the group can trust: partitions it must give up are
first listed as pending revocation (state UNREVOKED_PARTITIONS, epoch unchanged) until its
heartbeat no longer reports them; partitions still owned by another member (their *partition
epoch* is set) are held back (state UNRELEASED_PARTITIONS) until that member releases them. So a
partition is never owned by two members at once. The moves between states are the table
`MEMBER_STATES` in `member.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ...errors import Errors
from .member import (EMPTY_ASSIGNMENT, MEMBER_STATES, Assignment, ConsumerGroupMember,
                     MemberState, freeze)

__all__ = ["CurrentAssignmentBuilder"]


class CurrentAssignmentBuilder:
    """`new CurrentAssignmentBuilder(member).withTargetAssignment(epoch, target)
    .withCurrentPartitionEpoch(fn).withOwnedTopicPartitions(owned).build()`.

    `owned_topic_partitions` is the heartbeat's TopicPartitions (objects with `topic_id` and
    `partitions`), or None when the request did not carry them.
    """

    def __init__(self, member: ConsumerGroupMember) -> None:
        self.member = member
        self.target_epoch = 0
        self.target: Assignment = EMPTY_ASSIGNMENT
        self.current_partition_epoch: Callable[[str, int], int] = lambda t, p: -1
        self.owned: Sequence[Any] | None = None

    def with_target_assignment(self, epoch: int, target: Assignment) -> CurrentAssignmentBuilder:
        self.target_epoch, self.target = epoch, target
        return self

    def with_current_partition_epoch(self, fn: Callable[[str, int], int]
                                     ) -> CurrentAssignmentBuilder:
        self.current_partition_epoch = fn
        return self

    def with_owned_topic_partitions(self, owned: Sequence[Any] | None
                                    ) -> CurrentAssignmentBuilder:
        self.owned = owned
        return self

    def build(self) -> ConsumerGroupMember:
        m = self.member
        if m.state is MemberState.STABLE:
            if m.member_epoch != self.target_epoch:
                return self._next(m.member_epoch, m.assigned_partitions)
            return m
        if m.state is MemberState.UNREVOKED_PARTITIONS:
            if self._owns_revoked(m.partitions_pending_revocation):
                return m
            return self._next(m.member_epoch + 1, m.assigned_partitions)
        if m.state is MemberState.UNRELEASED_PARTITIONS:
            return self._next(m.member_epoch, m.assigned_partitions)
        # UNKNOWN: a newer coordinator's state; fence unless the member rejoined empty-handed.
        if self.owned is None or len(self.owned) > 0:
            raise Errors.FENCED_MEMBER_EPOCH.exception(
                "The consumer group member is in a unknown state. The member must abandon all "
                "its partitions and rejoin.")
        return self._next(self.target_epoch, m.assigned_partitions)

    def _owns_revoked(self, pending: Mapping[str, frozenset[int]]) -> bool:
        """`ownsRevokedPartitions`: no owned list counts as still owning them."""
        if self.owned is None:
            return True
        for tp in self.owned:
            revoking = pending.get(tp.topic_id, frozenset())
            if any(p in revoking for p in tp.partitions):
                return True
        return False

    def _next(self, member_epoch: int, assigned: Assignment) -> ConsumerGroupMember:
        """`computeNextAssignment`."""
        has_unreleased = False
        new_assigned: dict[str, set[int]] = {}
        new_revoking: dict[str, set[int]] = {}
        new_pending_assignment: dict[str, set[int]] = {}
        for topic in sorted(set(self.target) | set(assigned)):
            target = self.target.get(topic, frozenset())
            current = assigned.get(topic, frozenset())
            keep = set(current) & set(target)
            revoke = set(current) - keep
            want = set(target) - keep
            unreleased = {p for p in want if self.current_partition_epoch(topic, p) != -1}
            if unreleased:
                want -= unreleased
                has_unreleased = True
            if keep:
                new_assigned[topic] = keep
            if revoke:
                new_revoking[topic] = revoke
            if want:
                new_pending_assignment[topic] = want
        m = self.member
        if new_revoking and self._owns_revoked(new_revoking):
            out = m.with_epoch(member_epoch, state=MemberState.UNREVOKED_PARTITIONS,
                               assigned_partitions=freeze(new_assigned),
                               partitions_pending_revocation=freeze(new_revoking))
        elif new_pending_assignment:
            for topic, parts in new_pending_assignment.items():
                new_assigned.setdefault(topic, set()).update(parts)
            out = m.with_epoch(self.target_epoch,
                               state=(MemberState.UNRELEASED_PARTITIONS if has_unreleased
                                      else MemberState.STABLE),
                               assigned_partitions=freeze(new_assigned),
                               partitions_pending_revocation=EMPTY_ASSIGNMENT)
        elif has_unreleased:
            out = m.with_epoch(self.target_epoch, state=MemberState.UNRELEASED_PARTITIONS,
                               assigned_partitions=freeze(new_assigned),
                               partitions_pending_revocation=EMPTY_ASSIGNMENT)
        else:
            out = m.with_epoch(self.target_epoch, state=MemberState.STABLE,
                               assigned_partitions=freeze(new_assigned),
                               partitions_pending_revocation=EMPTY_ASSIGNMENT)
        if out.state is not m.state:
            MEMBER_STATES.check(m.state, out.state)
        return out


def leaving_static_member(member: ConsumerGroupMember, epoch: int) -> ConsumerGroupMember:
    """`consumerGroupStaticMemberGroupLeave`'s copy: epoch -2, nothing pending revocation."""
    return replace(member, member_epoch=epoch, partitions_pending_revocation=EMPTY_ASSIGNMENT)
