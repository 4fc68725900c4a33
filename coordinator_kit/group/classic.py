"""Classic consumer groups on the broker (Kafka's `ClassicGroup`, `ClassicGroupMember`).

A classic group is *soft state*: the object is mutated directly by the join/sync/heartbeat
handlers, and only its presence in the shard's timeline map is versioned. The GroupMetadata
record written after a join or sync is what survives a coordinator move; replaying it builds a
brand-new group (Stable with members, Empty without).
"""

from __future__ import annotations

import random
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ..errors import Errors
from ..runtime.future import CoordinatorFuture
from ..states import StateTable

__all__ = ["ClassicGroupState", "CLASSIC_GROUP_STATES", "ClassicGroupMember", "ClassicGroup",
           "Protocol", "UNKNOWN_MEMBER_ID", "CONSUMER_PROTOCOL_TYPE", "CLASSIC_GROUP_TYPE"]

UNKNOWN_MEMBER_ID = ""
CONSUMER_PROTOCOL_TYPE = "consumer"
CLASSIC_GROUP_TYPE = "classic"  # Group.GroupType.CLASSIC, as ListGroups names it


class ClassicGroupState(Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"

    def __str__(self) -> str:
        return self.value


_E, _P, _C, _S, _D = (ClassicGroupState.EMPTY, ClassicGroupState.PREPARING_REBALANCE,
                      ClassicGroupState.COMPLETING_REBALANCE, ClassicGroupState.STABLE,
                      ClassicGroupState.DEAD)

# ClassicGroupState.validPreviousStates, as data.
CLASSIC_GROUP_STATES: StateTable[ClassicGroupState] = StateTable(
    "ClassicGroup",
    ClassicGroupState,
    valid_previous={_E: (_P,), _P: (_E, _C, _S), _C: (_P,), _S: (_C,), _D: (_E, _P, _C, _S, _D)},
    triggers={
        (_P, _E): "join phase completes with no members (generation + 1)",
        (_E, _P): "first member joins (initial delay)",
        (_C, _P): "member joins/leaves/expires before the sync completes",
        (_S, _P): "member joins/leaves/expires, leader rejoins",
        (_P, _C): "all members joined or rebalance timeout (generation + 1)",
        (_C, _S): "leader's assignment committed",
        (_E, _D): "partition unloaded",
        (_P, _D): "partition unloaded",
        (_C, _D): "partition unloaded",
        (_S, _D): "partition unloaded",
        (_D, _D): "partition unloaded",
    },
    initial=_E,
)


@dataclass(frozen=True)
class Protocol:
    """One entry of a JoinGroup's protocol list: an assignor name and its subscription bytes."""

    name: str
    metadata: bytes = b""


@dataclass
class ClassicGroupMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    supported_protocols: list[Protocol]
    assignment: bytes = b""
    awaiting_join_future: CoordinatorFuture[Any] | None = field(default=None, repr=False)
    awaiting_sync_future: CoordinatorFuture[Any] | None = field(default=None, repr=False)
    is_new: bool = False

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None

    @property
    def is_awaiting_join(self) -> bool:
        return self.awaiting_join_future is not None

    @property
    def is_awaiting_sync(self) -> bool:
        return self.awaiting_sync_future is not None

    def has_satisfied_heartbeat(self) -> bool:
        """Whether a session-timer expiry should spare this member.

        New members must complete a join in time; members parked in a join or sync are alive by
        definition; anyone else needed a heartbeat that did not come.
        """
        if self.is_new:
            return False
        return self.is_awaiting_join or self.is_awaiting_sync

    def metadata(self, protocol_name: str | None) -> bytes:
        for p in self.supported_protocols:
            if p.name == protocol_name:
                return p.metadata
        raise ValueError(f"member {self.member_id} does not support protocol {protocol_name}")

    def matches(self, protocols: Sequence[Protocol]) -> bool:
        return list(protocols) == list(self.supported_protocols)

    def vote(self, candidates: set[str]) -> str:
        for p in self.supported_protocols:
            if p.name in candidates:
                return p.name
        raise ValueError(f"member {self.member_id} supports none of {sorted(candidates)}")


class ClassicGroup:
    """One classic group's members, generation, leader and state."""

    def __init__(self, group_id: str, now_ms: int, rng: random.Random,
                 state: ClassicGroupState = ClassicGroupState.EMPTY) -> None:
        self.group_id = group_id
        self.state = state
        self.previous_state = ClassicGroupState.DEAD
        self.current_state_timestamp: int | None = now_ms
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.generation_id = 0
        self.leader_id: str | None = None
        self.members: dict[str, ClassicGroupMember] = {}
        self.static_members: dict[str, str] = {}
        self.pending_join_members: set[str] = set()
        self.pending_sync_members: set[str] = set()
        self.num_members_awaiting_join = 0
        self.supported_protocols: Counter[str] = Counter()
        self.subscribed_topics: set[str] | None = None
        self.new_member_added = False
        self._rng = rng

    # -- state ---------------------------------------------------------------------------------

    def transition_to(self, new_state: ClassicGroupState, now_ms: int) -> None:
        CLASSIC_GROUP_STATES.check(self.state, new_state)
        self.previous_state = self.state
        self.state = new_state
        self.current_state_timestamp = now_ms

    def is_in_state(self, state: ClassicGroupState) -> bool:
        return self.state is state

    def can_rebalance(self) -> bool:
        return CLASSIC_GROUP_STATES.can_transition(self.state, _P)

    # -- members -------------------------------------------------------------------------------

    def generate_member_id(self, client_id: str, group_instance_id: str | None) -> str:
        """`<clientId>-<uuid>` or `<groupInstanceId>-<uuid>`, from the shard's seeded generator."""
        suffix = uuid.UUID(int=self._rng.getrandbits(128), version=4)
        return f"{group_instance_id if group_instance_id is not None else client_id}-{suffix}"

    def has_member(self, member_id: str) -> bool:
        return member_id in self.members

    def member(self, member_id: str) -> ClassicGroupMember:
        return self.members[member_id]

    def is_pending_member(self, member_id: str) -> bool:
        return member_id in self.pending_join_members

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    def static_member_id(self, instance_id: str | None) -> str | None:
        return None if instance_id is None else self.static_members.get(instance_id)

    def add(self, member: ClassicGroupMember, future: CoordinatorFuture[Any] | None) -> None:
        if not self.members:
            self.protocol_type = member.protocol_type
        self.members[member.member_id] = member
        self.supported_protocols.update(p.name for p in member.supported_protocols)
        member.awaiting_join_future = future
        if future is not None:
            self.num_members_awaiting_join += 1
        self.pending_join_members.discard(member.member_id)
        if self.leader_id is None:
            self.leader_id = member.member_id
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member.member_id

    def remove(self, member_id: str) -> None:
        removed = self.members.pop(member_id, None)
        if removed is not None:
            self.supported_protocols.subtract(p.name for p in removed.supported_protocols)
            self.supported_protocols += Counter()  # drop zero counts
            if removed.is_awaiting_join:
                self.num_members_awaiting_join -= 1
            if removed.group_instance_id is not None:
                self.static_members.pop(removed.group_instance_id, None)
        if self.is_leader(member_id):
            self.leader_id = next(iter(self.members), None)
        self.pending_join_members.discard(member_id)
        self.pending_sync_members.discard(member_id)

    def update_member(self, member: ClassicGroupMember, protocols: Sequence[Protocol],
                      rebalance_timeout_ms: int, session_timeout_ms: int,
                      future: CoordinatorFuture[Any] | None) -> None:
        self.supported_protocols.subtract(p.name for p in member.supported_protocols)
        member.supported_protocols = list(protocols)
        self.supported_protocols.update(p.name for p in member.supported_protocols)
        self.supported_protocols += Counter()
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        if future is not None and not member.is_awaiting_join:
            self.num_members_awaiting_join += 1
        elif future is None and member.is_awaiting_join:
            self.num_members_awaiting_join -= 1
        member.awaiting_join_future = future

    def replace_static_member(self, instance_id: str, old_member_id: str,
                              new_member_id: str) -> ClassicGroupMember:
        """The new incarnation of a static member takes over the old one's place (KIP-345;
        Kafka's `ClassicGroup.replaceStaticMember`)."""
        old = self.members.pop(old_member_id, None)
        if old is None:
            raise RuntimeError(f"cannot replace non-existing member {old_member_id} of "
                               f"{self.group_id}")
        fenced = Errors.FENCED_INSTANCE_ID
        if old.awaiting_join_future is not None:
            old.awaiting_join_future.complete(_join_error(old_member_id, fenced))
            old.awaiting_join_future = None
            self.num_members_awaiting_join -= 1
        if old.awaiting_sync_future is not None:
            old.awaiting_sync_future.complete(_sync_error(fenced))
            old.awaiting_sync_future = None
        new = ClassicGroupMember(new_member_id, old.group_instance_id, old.client_id,
                                 old.client_host, old.rebalance_timeout_ms, old.session_timeout_ms,
                                 old.protocol_type, list(old.supported_protocols), old.assignment)
        self.members[new_member_id] = new
        if self.is_leader(old_member_id):
            self.leader_id = new_member_id
        self.static_members[instance_id] = new_member_id
        self.pending_sync_members.discard(old_member_id)
        return new

    def validate_member(self, member_id: str, instance_id: str | None) -> None:
        """UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID, as `ClassicGroup.validateMember`."""
        if instance_id is not None:
            existing = self.static_members.get(instance_id)
            if existing is None:
                raise Errors.UNKNOWN_MEMBER_ID.exception(
                    f"Static member with group instance id {instance_id} is unknown.")
            if existing != member_id:
                raise Errors.FENCED_INSTANCE_ID.exception(
                    f"Static member {member_id} with instance id {instance_id} is fenced by "
                    f"existing member {existing}.")
        if member_id not in self.members:
            raise Errors.UNKNOWN_MEMBER_ID.exception(
                f"Member {member_id} is not a member of group {self.group_id}.")

    # -- joins and syncs -----------------------------------------------------------------------

    def has_all_members_joined(self) -> bool:
        return (len(self.members) == self.num_members_awaiting_join
                and not self.pending_join_members)

    def not_yet_rejoined_members(self) -> list[ClassicGroupMember]:
        return [m for m in self.members.values() if not m.is_awaiting_join]

    def complete_join_future(self, member: ClassicGroupMember, response: Any) -> bool:
        if member.awaiting_join_future is None:
            return False
        future, member.awaiting_join_future = member.awaiting_join_future, None
        self.num_members_awaiting_join -= 1
        future.complete(response)
        return True

    def complete_sync_future(self, member: ClassicGroupMember, response: Any) -> bool:
        if member.awaiting_sync_future is None:
            return False
        future, member.awaiting_sync_future = member.awaiting_sync_future, None
        future.complete(response)
        return True

    def has_received_sync_from_all_members(self) -> bool:
        return not self.pending_sync_members

    def maybe_elect_new_joined_leader(self) -> bool:
        if self.leader_id is None:
            return False
        leader = self.members.get(self.leader_id)
        if leader is not None and leader.is_awaiting_join:
            return True
        for m in self.members.values():
            if m.is_awaiting_join:
                self.leader_id = m.member_id
                return True
        return False

    def supports_protocols(self, protocol_type: str, protocols: Sequence[Protocol]) -> bool:
        if self.state is ClassicGroupState.EMPTY:
            return bool(protocol_type) and bool(protocols)
        return (protocol_type == self.protocol_type
                and any(self.supported_protocols.get(p.name, 0) == len(self.members)
                        for p in protocols))

    def select_protocol(self) -> str:
        """Every member votes for its most preferred protocol that all members support.

        Kafka breaks ties by hash-map order; the kit breaks them by the first member's order of
        preference, so the result is the same on every run.
        """
        candidates = {name for name, n in self.supported_protocols.items()
                      if n == len(self.members)}
        if not candidates:
            raise RuntimeError(f"no protocol is supported by all members of {self.group_id}")
        votes = Counter(m.vote(candidates) for m in self.members.values())
        first = next(iter(self.members.values()))
        order = [p.name for p in first.supported_protocols if p.name in candidates]
        return max(order, key=lambda name: (votes[name], -order.index(name)))

    def init_next_generation(self, now_ms: int) -> None:
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(ClassicGroupState.COMPLETING_REBALANCE, now_ms)
        else:
            self.protocol_name = None
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(ClassicGroupState.EMPTY, now_ms)
        self.pending_sync_members.clear()

    def compute_subscribed_topics(self) -> set[str] | None:
        """Union of members' consumer-protocol subscriptions; None when it cannot be known."""
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return None
        if not self.members:
            return set()
        if self.protocol_name is None:
            return None
        from .protocol import ConsumerProtocolSubscription

        topics: set[str] = set()
        for m in self.members.values():
            try:
                topics.update(ConsumerProtocolSubscription.decode(
                    m.metadata(self.protocol_name)).topics)
            except Exception:
                return None
        return topics

    # -- admin (ListGroups, OffsetDelete, DeleteGroups) ----------------------------------------

    def uses_consumer_group_protocol(self) -> bool:
        """The members speak the consumer protocol (`ClassicGroup.usesConsumerGroupProtocol`)."""
        return self.protocol_type == CONSUMER_PROTOCOL_TYPE

    def is_subscribed_to_topic(self, topic: str) -> bool:
        """Whether a member subscribes to `topic` (`ClassicGroup.isSubscribedToTopic`): the
        topics decoded from the members' subscriptions in the chosen protocol; when they are not
        known, a consumer-protocol group counts as subscribed to every topic."""
        if self.subscribed_topics is not None:
            return topic in self.subscribed_topics
        return self.uses_consumer_group_protocol()

    def validate_offset_delete(self) -> None:
        """GROUP_ID_NOT_FOUND for a Dead group; NON_EMPTY_GROUP for one with members, unless
        it uses the consumer protocol (its per-topic subscriptions decide then)
        (`ClassicGroup.validateOffsetDelete`)."""
        if self.state is _D:
            raise Errors.GROUP_ID_NOT_FOUND.exception(f"Group {self.group_id} is in dead state.")
        if self.state in (_S, _P, _C) and not self.uses_consumer_group_protocol():
            raise Errors.NON_EMPTY_GROUP.exception(
                f"Group {self.group_id} is {self.state} and does not use the consumer "
                f"protocol: offsets can only be deleted once it is Empty.")

    def validate_delete_group(self) -> None:
        """GROUP_ID_NOT_FOUND for a Dead group, NON_EMPTY_GROUP for one with members
        (`ClassicGroup.validateDeleteGroup`)."""
        if self.state is _D:
            raise Errors.GROUP_ID_NOT_FOUND.exception(f"Group {self.group_id} is in dead state.")
        if self.state in (_S, _P, _C):
            raise Errors.NON_EMPTY_GROUP.exception(
                f"Group {self.group_id} is {self.state}: only an Empty group can be deleted.")

    def is_in_states(self, states: set[str]) -> bool:
        """The state, lower-cased, is one of `states` (`ClassicGroup.isInStates`)."""
        return self.state.value.lower() in states

    def current_members_for_leader(self) -> list[tuple[str, str | None, bytes]]:
        """(member id, instance id, metadata of the selected protocol) for the JoinGroup leader."""
        return [(m.member_id, m.group_instance_id, m.metadata(self.protocol_name))
                for m in self.members.values()]

    def group_assignment(self) -> dict[str, bytes]:
        return {m.member_id: m.assignment for m in self.members.values()}

    def static_member_ids(self) -> list[str]:
        return [m.member_id for m in self.members.values() if m.is_static]

    def describe(self) -> dict[str, Any]:
        return {"group_id": self.group_id, "state": self.state.value,
                "generation": self.generation_id, "protocol_type": self.protocol_type,
                "protocol": self.protocol_name, "leader": self.leader_id,
                "members": list(self.members)}

    def __repr__(self) -> str:
        return (f"ClassicGroup({self.group_id!r}, {self.state.value}, "
                f"generation={self.generation_id}, members={len(self.members)})")


def _join_error(member_id: str, error: Errors) -> Any:
    from .api import JoinGroupResponse

    return JoinGroupResponse(error=error, member_id=member_id)


def _sync_error(error: Errors) -> Any:
    from .api import SyncGroupResponse

    return SyncGroupResponse(error=error)
