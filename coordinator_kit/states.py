"""State machines as data.

Kafka writes its state machines as "which previous states may enter this state" (for example
`CoordinatorState.canTransitionFrom` and `ClassicGroupState.validPreviousStates`). `StateTable`
holds exactly that table plus a label for each edge saying what triggers it; the code enforces the
table and the diagrams in `diagrams/` are drawn from it, so the two cannot disagree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Generic, TypeVar

from .errors import IllegalStateTransition

__all__ = ["StateTable", "Edge"]

S = TypeVar("S", bound=Enum)


@dataclass(frozen=True)
class Edge(Generic[S]):
    source: S
    target: S
    trigger: str


class StateTable(Generic[S]):
    """Allowed transitions of one state machine, keyed by target state."""

    def __init__(self, name: str, states: type[S], valid_previous: Mapping[S, Iterable[S]],
                 triggers: Mapping[tuple[S, S], str], initial: S) -> None:
        self.name = name
        self.states = states
        self.initial = initial
        self.valid_previous: dict[S, frozenset[S]] = {
            s: frozenset(valid_previous.get(s, ())) for s in states}
        missing = [f"{a.name} -> {b.name}" for b in states for a in self.valid_previous[b]
                   if (a, b) not in triggers]
        extra = [f"{a.name} -> {b.name}" for (a, b) in triggers if a not in self.valid_previous[b]]
        if missing or extra:
            raise ValueError(f"{name}: trigger labels out of step with the table; "
                             f"unlabelled edges {missing}, labels for illegal edges {extra}")
        self.triggers = dict(triggers)

    def can_transition(self, current: S, target: S) -> bool:
        return current in self.valid_previous[target]

    def check(self, current: S, target: S) -> None:
        """Raise `IllegalStateTransition`, naming both states, unless the table allows it."""
        if not self.can_transition(current, target):
            allowed = sorted(s.name for s in self.valid_previous[target])
            raise IllegalStateTransition(self.name, current.name, target.name, allowed)

    def edges(self) -> list[Edge[S]]:
        """Every allowed edge, in declaration order of the states (stable for diagrams)."""
        order = list(self.states)
        return [Edge(a, b, self.triggers[(a, b)])
                for b in order for a in order if a in self.valid_previous[b]]

    def __repr__(self) -> str:
        return f"StateTable({self.name!r}, {len(self.edges())} edges)"
