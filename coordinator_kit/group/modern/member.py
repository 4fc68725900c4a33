"""A member of a consumer group (Kafka's `ConsumerGroupMember` and `MemberState`).

Members are immutable: every change makes a new one (`dataclasses.replace`, Kafka's
`ConsumerGroupMember.Builder`), so the group can keep them in timeline maps and a failed write
rolls back to the object it had. An assignment is a mapping of topic id to a frozenset of
partitions (Kafka's `Map<Uuid, Set<Integer>>`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from types import MappingProxyType

from ...states import StateTable

__all__ = ["MemberState", "MEMBER_STATES", "ConsumerGroupMember", "Assignment", "EMPTY_ASSIGNMENT",
           "LEAVE_GROUP_MEMBER_EPOCH", "LEAVE_GROUP_STATIC_MEMBER_EPOCH", "ClassicMemberMetadata",
           "ClassicProtocol"]

# ConsumerGroupHeartbeatRequest.LEAVE_GROUP_MEMBER_EPOCH / LEAVE_GROUP_STATIC_MEMBER_EPOCH
LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2

Assignment = Mapping[str, frozenset[int]]
EMPTY_ASSIGNMENT: Assignment = MappingProxyType({})


class MemberState(Enum):
    """Kafka's `modern.MemberState`, with the byte each state is written as."""

    STABLE = 0
    UNREVOKED_PARTITIONS = 1
    UNRELEASED_PARTITIONS = 2
    UNKNOWN = 127

    def __str__(self) -> str:
        return self.name  # a Java enum prints its name

    @classmethod
    def from_value(cls, value: int) -> MemberState:
        """`MemberState.fromValue`: an unknown byte (a newer coordinator's state) is UNKNOWN."""
        for s in cls:
            if s.value == value:
                return s
        return cls.UNKNOWN


_S, _RV, _RL, _U = (MemberState.STABLE, MemberState.UNREVOKED_PARTITIONS,
                    MemberState.UNRELEASED_PARTITIONS, MemberState.UNKNOWN)

# Every move `CurrentAssignmentBuilder.build` can make between two different states (staying in
# a state with a new epoch or new partitions is not a transition of this table).
MEMBER_STATES: StateTable[MemberState] = StateTable(
    "ConsumerGroupMember", MemberState,
    valid_previous={_S: (_RV, _RL, _U), _RV: (_S, _RL, _U), _RL: (_S, _RV, _U)},
    triggers={
        (_RV, _S): "owned partitions no longer list the revoked ones; next assignment complete",
        (_RL, _S): "the partitions it waited for were released by their previous owners",
        (_U, _S): "rejoined with no partitions; reconciled from scratch",
        (_S, _RV): "new target takes away partitions the member still owns",
        (_RL, _RV): "newer target takes away partitions the member owns",
        (_U, _RV): "rejoined with no partitions; reconciled from scratch",
        (_S, _RL): "new target holds partitions another member has not released yet",
        (_RV, _RL): "revoked; some target partitions are still owned by others",
        (_U, _RL): "rejoined with no partitions; reconciled from scratch",
    },
    initial=_S)


@dataclass(frozen=True)
class ClassicProtocol:
    """One protocol a classic member offered in its JoinGroup: the assignor name and its
    subscription bytes (ConsumerGroupMemberMetadataValue.ClassicProtocol)."""

    name: str
    metadata: bytes


@dataclass(frozen=True)
class ClassicMemberMetadata:
    """What a member that speaks the classic protocol inside a consumer group keeps
    (ConsumerGroupMemberMetadataValue.ClassicMemberMetadata): its session timeout and the
    protocols of its last JoinGroup, in its order of preference."""

    session_timeout_ms: int
    supported_protocols: tuple[ClassicProtocol, ...]


@dataclass(frozen=True)
class ConsumerGroupMember:
    """Kafka's `ConsumerGroupMember`. A member that joined with JoinGroup (the classic
    protocol) carries `classic_member_metadata`; a ConsumerGroupHeartbeat member has None.
    Defaults are `ConsumerGroupMember.Builder`'s."""

    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: MemberState = MemberState.STABLE
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: frozenset[str] = frozenset()
    subscribed_topic_regex: str | None = ""
    server_assignor_name: str | None = None
    assigned_partitions: Assignment = field(default_factory=lambda: EMPTY_ASSIGNMENT)
    partitions_pending_revocation: Assignment = field(default_factory=lambda: EMPTY_ASSIGNMENT)
    classic_member_metadata: ClassicMemberMetadata | None = None

    @property
    def use_classic_protocol(self) -> bool:
        """`ConsumerGroupMember.useClassicProtocol`."""
        return self.classic_member_metadata is not None

    def is_reconciled_to(self, target_assignment_epoch: int) -> bool:
        """`ModernGroupMember.isReconciledTo`: STABLE at exactly that epoch."""
        return self.state is MemberState.STABLE and self.member_epoch == target_assignment_epoch

    def with_epoch(self, member_epoch: int, **changes: object) -> ConsumerGroupMember:
        """`Builder.updateMemberEpoch`: the old epoch becomes the previous one."""
        return replace(self, member_epoch=member_epoch,
                       previous_member_epoch=self.member_epoch, **changes)  # type: ignore[arg-type]

    def with_member_id(self, member_id: str) -> ConsumerGroupMember:
        """`new Builder(member, newMemberId)`: a copy under another id (static rejoin)."""
        return replace(self, member_id=member_id)

    def subscription_fields(self) -> tuple[object, ...]:
        """What ConsumerGroupMemberMetadata persists."""
        return (self.instance_id, self.rack_id, self.client_id, self.client_host,
                self.subscribed_topic_names, self.subscribed_topic_regex,
                self.rebalance_timeout_ms, self.server_assignor_name,
                self.classic_member_metadata)


def freeze(assignment: Mapping[str, object]) -> Assignment:
    """An assignment with frozenset values and no empty topics (what the builders keep)."""
    items = sorted(assignment.items())
    return MappingProxyType({t: frozenset(p) for t, p in items if p})  # type: ignore[arg-type]
