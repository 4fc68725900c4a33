"""The classic consumer's member states (Java's `AbstractCoordinator.MemberState`) as data."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ..states import StateTable

__all__ = ["MemberState", "MEMBER_STATES", "Generation", "NO_GENERATION"]


class MemberState(Enum):
    UNJOINED = "UNJOINED"
    PREPARING_REBALANCE = "PREPARING_REBALANCE"
    COMPLETING_REBALANCE = "COMPLETING_REBALANCE"
    STABLE = "STABLE"

    def __str__(self) -> str:
        return self.name


_U, _P, _C, _S = (MemberState.UNJOINED, MemberState.PREPARING_REBALANCE,
                  MemberState.COMPLETING_REBALANCE, MemberState.STABLE)

MEMBER_STATES: StateTable[MemberState] = StateTable(
    "ConsumerMember",
    MemberState,
    valid_previous={_U: (_P, _C, _S), _P: (_U, _P, _C, _S), _C: (_P,), _S: (_C,)},
    triggers={
        (_P, _U): "generation reset (error, leave, poll timeout)",
        (_C, _U): "generation reset (error, leave, poll timeout)",
        (_S, _U): "generation reset (error, leave, poll timeout)",
        (_U, _P): "JoinGroup sent",
        (_P, _P): "JoinGroup sent again (retriable error)",
        (_C, _P): "JoinGroup sent again (SyncGroup failed)",
        (_S, _P): "JoinGroup sent (rejoin requested)",
        (_P, _C): "JoinGroup answered: generation, member id",
        (_C, _S): "SyncGroup answered: assignment",
    },
    initial=_U,
)


@dataclass(frozen=True)
class Generation:
    generation_id: int
    member_id: str
    protocol_name: str | None

    def __str__(self) -> str:
        # Java's Generation.toString
        return (f"Generation{{generationId={self.generation_id}, memberId='{self.member_id}', "
                f"protocol='{self.protocol_name}'}}")


NO_GENERATION = Generation(-1, "", None)
