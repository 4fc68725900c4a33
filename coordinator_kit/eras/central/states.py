"""The two state machines of the centralised coordinator draft, as data.

A group's phase lives on the coordinator (STABLE, STOPPING, STARTING, BACKOFF,
REBALANCE_FAILED); a consumer's state lives in the consumer (DISCOVERING ... FETCHING; a crash
or a shutdown ends the process in whatever state it is, as the draft's protocol page has no
state for it). The
draft describes both in prose (Apache wiki "Central Consumer Coordination" and "Kafka 0.9
consumer protocol"); the rule numbers in the trigger labels (C1-C18) are those of
docs/eras-central.md. The code calls `check` on every move, and `diagrams/` is drawn from
these tables.
"""

from __future__ import annotations

from enum import Enum

from ...states import StateTable

__all__ = ["GroupPhase", "ConsumerState", "GROUP_PHASES", "CONSUMER_STATES"]


class GroupPhase(Enum):
    STABLE = "STABLE"
    STOPPING = "STOPPING"
    STARTING = "STARTING"
    BACKOFF = "BACKOFF"
    REBALANCE_FAILED = "REBALANCE_FAILED"

    def __str__(self) -> str:
        return self.value


class ConsumerState(Enum):
    DISCOVERING = "DISCOVERING"
    REGISTERING = "REGISTERING"
    IDLE = "IDLE"
    FETCHING = "FETCHING"
    STOPPED = "STOPPED"
    LOST = "LOST"

    def __str__(self) -> str:
        return self.value


_S, _SP, _ST, _B, _F = (GroupPhase.STABLE, GroupPhase.STOPPING, GroupPhase.STARTING,
                        GroupPhase.BACKOFF, GroupPhase.REBALANCE_FAILED)

GROUP_PHASES: StateTable[GroupPhase] = StateTable(
    "CentralGroup",
    GroupPhase,
    valid_previous={_S: (_S, _ST, _B, _F), _SP: (_S, _B, _F), _ST: (_SP,), _B: (_SP, _ST),
                    _F: (_SP, _ST)},
    triggers={
        (_S, _SP): "C9/C10 handler takes the group: StopFetcher to all",
        (_F, _SP): "C9/C10 a new trigger after a failed rebalance",
        (_B, _SP): "C10 backoff over: next attempt",
        (_SP, _ST): "C11 all stopped: StartFetcher with the assignment",
        (_ST, _S): "C12 all started (generation + 1)",
        (_S, _S): "C10 no live members: nothing to assign",
        (_B, _S): "C10 no live members left",
        (_F, _S): "C10 no live members left",
        (_SP, _B): "C13 reply timeout, retries left",
        (_ST, _B): "C13 reply timeout, retries left",
        (_SP, _F): "C13 reply timeout, last attempt",
        (_ST, _F): "C13 reply timeout, last attempt",
    },
    initial=_S,
)

_D, _R, _I, _FE, _SO, _L = (ConsumerState.DISCOVERING, ConsumerState.REGISTERING,
                             ConsumerState.IDLE, ConsumerState.FETCHING, ConsumerState.STOPPED,
                             ConsumerState.LOST)

CONSUMER_STATES: StateTable[ConsumerState] = StateTable(
    "CentralConsumer",
    ConsumerState,
    valid_previous={_D: (_R, _L), _R: (_D,), _I: (_R, _SO, _FE, _I),
                    _FE: (_SO, _I, _FE), _SO: (_I, _FE, _SO),
                    _L: (_R, _I, _FE, _SO)},
    triggers={
        (_R, _D): "REJECT or unreachable",
        (_L, _D): "rediscover",
        (_D, _R): "coordinator known: RegisterConsumer",
        (_R, _I): "CONFIRM",
        (_SO, _I): "StartFetcher, none",
        (_FE, _I): "StartFetcher, none (stop, apply)",
        (_I, _I): "StartFetcher, none",
        (_SO, _FE): "StartFetcher with partitions",
        (_I, _FE): "StartFetcher with partitions",
        (_FE, _FE): "StartFetcher (stop, apply)",
        (_I, _SO): "StopFetcher answered",
        (_FE, _SO): "StopFetcher answered",
        (_SO, _SO): "StopFetcher (next attempt)",
        (_R, _L): "socket closed or no answer",
        (_I, _L): "silence or socket closed",
        (_FE, _L): "silence or socket closed",
        (_SO, _L): "silence or socket closed",
    },
    initial=_D,
)
