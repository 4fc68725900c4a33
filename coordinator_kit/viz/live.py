"""Live state diagrams: the current state filled, the path that led there numbered 1, 2, 3...

Which moves are numbered: those at or after `since_ms` (a control panel passes the virtual time
of the learner's last action), by default every move of the run; at most the latest `limit`
(`DEFAULT_MOVES`) of them, the legend under the title saying how many earlier ones it left out.

Transitions come from the trace, where each state machine records its moves:

* a consumer member: `member_state` events (`client`, `old`, `new`, `generation`);
* a coordinator context: `context_transition` events (Kafka's DEBUG line "Transition from X to
  Y.", fields `old_state`, `new_state`, `tp`), one stream per broker;
* a classic group: the trace has no event for the group's state itself, so `group_transitions`
  rebuilds the moves from the coordinator's log lines ("Preparing to rebalance" -> Preparing-
  Rebalance, "Stabilized" -> CompletingRebalance, "is now empty" -> Empty, "Loaded classic
  group" -> Stable/Empty, "Unloading group metadata" -> Dead) and takes CompletingRebalance ->
  Stable from the first member's "Successfully synced group" (one network latency after the
  coordinator's own move; marked `derived`). A `group_state` event (`group`, `old`, `new`,
  `generation`), when the group code records one, is used instead of all of that;
* a consumer group (KIP-848): Kafka derives its state from its records
  (`ConsumerGroup.maybeUpdateGroupState`: Empty without members, Assigning while the group
  epoch is ahead of the target assignment's, Stable when every member is STABLE at the target
  epoch, else Reconciling), and so does `consumer_group_transitions`, replaying the
  coordinator's lines in record order: a member joins (at epoch 0), "Bumped group epoch",
  "Computed a new target assignment for epoch", a member's "new assignment state" (DEBUG), a
  member left or fenced, the group loaded or unloaded. Without the DEBUG lines members never
  look reconciled; the live diagram ends the path at the group's own state.

The live diagram of a group reads the group's state itself (`ClassicGroup.state`) from the
coordinator that leads its partition, so it is exact; its path is the trace-based history, which
also serves the timelines in `coordinator_kit.viz.plots`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from ..client.member import MEMBER_STATES, MemberState
from ..client.membership import MEMBER_STATES as CONSUMER_MEMBER_STATES
from ..client.membership import MemberState as ConsumerMemberState
from ..group.classic import CLASSIC_GROUP_STATES, ClassicGroupState
from ..group.modern.consumer_group import CONSUMER_GROUP_STATES, ConsumerGroupState
from ..runtime.runtime import CONTEXT_STATES, CoordinatorState
from ..states import StateTable
from ..topic import TopicPartition
from ..trace import TraceEvent
from .diagrams import Diagram, to_dot

if TYPE_CHECKING:
    from ..cluster import Cluster

__all__ = ["Transition", "member_transitions", "context_transitions", "group_transitions",
           "live_dot", "live_diagram", "member_dot", "group_dot", "context_dot",
           "member_diagram", "group_diagram", "context_diagram", "client_group", "client_groups",
           "generation_id", "numbered_path", "NumberedPath", "DEFAULT_MOVES",
           "consumer_group_transitions"]

_G = ClassicGroupState
_GROUP_BY_NAME = {s.name: s for s in _G} | {s.value: s for s in _G}
_CLIENT_GROUP = re.compile(r"groupId=([^\]]*)\]")


@dataclass(frozen=True)
class Transition:
    """One move of a state machine at virtual time `ts` (`old` is None when unknown)."""

    ts: int
    old: Enum | None
    new: Enum
    generation: int | None = None
    source: str = ""
    derived: bool = False

    @property
    def edge(self) -> tuple[Enum, Enum] | None:
        return None if self.old is None else (self.old, self.new)


def _events(trace: Iterable[TraceEvent]) -> Iterable[TraceEvent]:
    return getattr(trace, "events", trace)


def member_transitions(trace: Iterable[TraceEvent], client: str) -> list[Transition]:
    """Every state change of consumer `client` (all its incarnations), in trace order: a
    classic member's `member_state` events, or a `group.protocol=consumer` member's
    "transitioned from X to Y" lines (`member_state_changed`, its epoch as the generation)."""
    source = f"client-{client}"
    out = []
    for e in _events(trace):
        if e.kind == "member_state" and e.fields.get("client") == client:
            out.append(Transition(e.ts, MemberState[e.fields["old"]],
                                  MemberState[e.fields["new"]], e.fields.get("generation"),
                                  e.source))
        elif e.kind == "member_state_changed" and e.source == source \
                and "from_state" in e.fields:
            out.append(Transition(e.ts, ConsumerMemberState[e.fields["from_state"]],
                                  ConsumerMemberState[e.fields["to_state"]],
                                  e.fields.get("epoch"), e.source))
    return out


def context_transitions(trace: Iterable[TraceEvent], partition: TopicPartition | int,
                        broker: int | None = None) -> list[Transition]:
    """State changes of the coordinator context for `partition` (on `broker`, or on any)."""
    tp = TopicPartition.offsets(partition) if isinstance(partition, int) else partition
    source = None if broker is None else f"broker-{broker}"
    out = []
    for e in _events(trace):
        if e.kind != "context_transition" or e.fields.get("tp") != tp:
            continue
        if source is not None and e.source != source:
            continue
        out.append(Transition(e.ts, CoordinatorState(str(e.fields["old_state"])),
                              CoordinatorState(str(e.fields["new_state"])), None, e.source))
    return out


def client_group(event: TraceEvent) -> str | None:
    """The group a consumer's event belongs to: the Java client's log prefix
    (`[Consumer clientId=.., groupId=..]`) or, in kafka-python's wording, a `group` field."""
    if event.message is not None:
        m = _CLIENT_GROUP.search(event.message)
        if m is not None:
            return m.group(1)
    group = event.fields.get("group")
    return group if isinstance(group, str) else None


def client_groups(events: Iterable[TraceEvent]) -> dict[str, str]:
    """Consumer trace source (`client-<name>`) -> its group, from any event that names it."""
    out: dict[str, str] = {}
    for e in events:
        if e.source.startswith("client-") and e.source not in out:
            group = client_group(e)
            if group is not None:
                out[e.source] = group
    return out


_GENERATION = re.compile(r"(?:Generation |generationId=)(-?\d+)")


def generation_id(value: Any) -> int | None:
    """A generation id from a trace field: a `Generation`, an int, or its logged text."""
    if isinstance(value, int):
        return value
    gid = getattr(value, "generation_id", None)
    if isinstance(gid, int):
        return gid
    m = _GENERATION.search(str(value)) if value is not None else None
    return None if m is None else int(m.group(1))


def _group_state(value: Any) -> ClassicGroupState:
    return value if isinstance(value, ClassicGroupState) else _GROUP_BY_NAME[str(value)]


def group_transitions(trace: Iterable[TraceEvent], group_id: str) -> list[Transition]:
    """The classic group's state changes as the coordinator(s) made them (see module doc)."""
    events = list(_events(trace))
    native = [e for e in events if e.kind == "group_state" and e.fields.get("group") == group_id]
    if native:
        return [Transition(e.ts, None if e.fields.get("old") is None
                           else _group_state(e.fields["old"]), _group_state(e.fields["new"]),
                           e.fields.get("generation"), e.source) for e in native]
    out: list[Transition] = []
    state: ClassicGroupState | None = None
    generation: int | None = None
    groups = client_groups(events)

    def move(e: TraceEvent, new: ClassicGroupState, derived: bool = False) -> None:
        nonlocal state
        out.append(Transition(e.ts, state, new, generation, e.source, derived))
        state = new

    for e in events:
        kind, f = e.kind, e.fields
        if e.source.startswith("broker-") and f.get("group") == group_id:
            if state is None and isinstance(f.get("state"), ClassicGroupState) \
                    and kind != "rebalance_started":
                move(e, f["state"])  # first sight of the group (a join to a new, Empty group)
            if kind == "rebalance_started":
                generation = f.get("generation", generation)
                move(e, _G.PREPARING_REBALANCE)
            elif kind == "group_stabilized":
                generation = f.get("generation", generation)
                move(e, _G.COMPLETING_REBALANCE)
            elif kind == "group_empty":
                generation = f.get("generation", generation)
                move(e, _G.EMPTY)
            elif kind == "group_loaded":
                state = None  # a fresh copy on the new coordinator: no edge into it
                move(e, _G.STABLE if f.get("members") else _G.EMPTY)
            elif kind == "group_unloaded":
                generation = f.get("generation", generation)
                move(e, _G.DEAD)
        elif kind == "synced" and state is _G.COMPLETING_REBALANCE \
                and groups.get(e.source) == group_id:
            if generation_id(f.get("generation")) == generation:
                move(e, _G.STABLE, derived=True)
    return out


_C = ConsumerGroupState
_CG_KINDS = frozenset(("member_joined", "group_epoch_bumped", "target_assignment_computed",
                       "member_assignment_updated", "member_left", "member_fenced",
                       "group_loaded", "group_unloaded"))


def consumer_group_transitions(trace: Iterable[TraceEvent], group_id: str
                               ) -> list[Transition]:
    """A consumer group's state changes, derived as its coordinator derives them (module
    doc); `generation` is the group epoch. A load on a new coordinator starts a fresh copy
    (no edge into it), assumed reconciled (the state a loaded group's members had when
    their records were written); an unload ends the lane."""
    out: list[Transition] = []
    members: dict[str, tuple[int, str]] = {}  # member id -> (member epoch, MemberState name)
    group_epoch = target_epoch = 0
    state: ConsumerGroupState | None = _C.EMPTY  # a new group is created Empty
    loaded_unknown = False  # after a load: members' epochs are not in the trace

    def derive() -> ConsumerGroupState:
        if not members and not loaded_unknown:
            return _C.EMPTY
        if group_epoch > target_epoch:
            return _C.ASSIGNING
        if all(s == "STABLE" and e == target_epoch for e, s in members.values()):
            return _C.STABLE
        return _C.RECONCILING

    def move(e: TraceEvent) -> None:
        nonlocal state
        new = derive()
        if new is not state:
            out.append(Transition(e.ts, state, new, group_epoch, e.source))
            state = new

    for e in _events(trace):
        if e.kind not in _CG_KINDS or e.fields.get("group") != group_id \
                or not e.source.startswith("broker-") or not (e.template_id or "").startswith(
                    "CG-"):
            continue
        f = e.fields
        member = f.get("member")
        kind = e.kind
        if kind == "member_joined":
            members.setdefault(member, (0, "STABLE"))
        elif kind == "group_epoch_bumped":
            group_epoch = int(f["epoch"])
        elif kind == "target_assignment_computed":
            target_epoch = int(f["epoch"])
            loaded_unknown = False
        elif kind == "member_assignment_updated":
            members[member] = (int(f["epoch"]), str(f["state"]))
        elif kind == "member_left" and e.template_id == "CG-STATIC-TEMP-LEFT":
            members[member] = (-2, "STABLE")  # stays, at epoch -2, until it rejoins
        elif kind in ("member_left", "member_fenced"):
            # the records of a removal, replayed in order: its current assignment goes (it is
            # no longer reconciled), then the member, then the group epoch is bumped
            # (GroupMetadataManager.consumerGroupFenceMember)
            loaded_unknown = False
            if member in members:
                members[member] = (-1, "UNKNOWN")
                move(e)
                del members[member]
                move(e)
            group_epoch += 1
        elif kind == "group_loaded":
            members.clear()
            loaded_unknown = bool(f.get("members"))
            state = _C.STABLE if loaded_unknown else _C.EMPTY
            out.append(Transition(e.ts, None, state, None, e.source))
            continue
        elif kind == "group_unloaded":
            state = None
            members.clear()
            continue
        move(e)
    return out


# -- live DOT -------------------------------------------------------------------------------------

DEFAULT_MOVES = 12
"""How many moves a live diagram numbers at most (the latest ones) when no `since_ms` narrows
them down: the whole run of a notebook's scenario, without a tangle of numbers."""


@dataclass(frozen=True)
class NumberedPath:
    """The moves a live diagram numbers, and what its legend says about them."""

    edges: list[tuple[Enum, Enum]]
    legend: str


def numbered_path(table: StateTable[Any], moves: Sequence[Transition | tuple[Enum, Enum]], *,
                  since_ms: int | None = None, limit: int | None = DEFAULT_MOVES,
                  ) -> NumberedPath:
    """The edges to number, in order: the moves at or after `since_ms` (all of them when None)
    that are edges of `table`, the latest `limit` of them; and a legend line saying so.

    A move with no edge (a group loaded fresh on a new coordinator: no state before it) is
    not numbered.
    """
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be at least 1 (or None for every move), got {limit}")
    chosen = [m for m in moves if since_ms is None or not isinstance(m, Transition)
              or m.ts >= since_ms]
    edges = [e for e in (m.edge if isinstance(m, Transition) else m for m in chosen)
             if e is not None and table.can_transition(e[0], e[1])]
    earlier = 0
    if limit is not None and len(edges) > limit:
        earlier, edges = len(edges) - limit, edges[-limit:]
    when = "in this run" if since_ms is None else f"since {since_ms:,} ms"
    if not edges:
        legend = f"No transition {when}; filled: the state now."
    else:
        legend = (f"Orange 1, 2, 3…: the transitions {when}, in order; filled: the state now."
                  if len(edges) > 1 else
                  f"Orange 1: the transition {when}; filled: the state now.")
    if earlier:
        legend += f" (… {earlier} earlier move{'s' if earlier > 1 else ''} not numbered)"
    return NumberedPath(edges, legend)


def live_dot(table: StateTable[Any], current: Enum | None,
             last: Transition | tuple[Enum, Enum] | None = None, title: str | None = None, *,
             moves: Sequence[Transition | tuple[Enum, Enum]] | None = None,
             since_ms: int | None = None, limit: int | None = DEFAULT_MOVES) -> str:
    """DOT for `table` with `current` filled and either a numbered path or one edge in colour.

    `moves` (transitions from the trace, oldest first): the ones at or after `since_ms`, the
    latest `limit` of them, are numbered 1, 2, 3... on their edges, with a legend line under
    the title (see `numbered_path`). Without `moves`, `last` is coloured with no number, and
    only when it is an edge the table allows that ends in `current` (a stale transition, from
    before a restart or a reload, is not shown as the one just taken).
    """
    if moves is not None:
        path = numbered_path(table, moves, since_ms=since_ms, limit=limit)
        return to_dot(table, current=current, path=path.edges, title=title, legend=path.legend)
    edge = last.edge if isinstance(last, Transition) else last
    taken = None
    if edge is not None and current is not None and edge[1] == current \
            and table.can_transition(edge[0], edge[1]):
        taken = edge
    return to_dot(table, current=current, taken=taken, title=title)


def live_diagram(table: StateTable[Any], current: Enum | None,
                 last: Transition | tuple[Enum, Enum] | None = None,
                 title: str | None = None, *,
                 moves: Sequence[Transition | tuple[Enum, Enum]] | None = None,
                 since_ms: int | None = None, limit: int | None = DEFAULT_MOVES) -> Diagram:
    """`live_dot` as a `Diagram` (a picture in Jupyter, also in an untrusted notebook)."""
    return Diagram(live_dot(table, current, last, title, moves=moves, since_ms=since_ms,
                            limit=limit), title=title or table.name)


def member_dot(cluster: Cluster, name: str, since_ms: int | None = None,
               limit: int | None = DEFAULT_MOVES) -> str:
    """The consumer member `name`: its state now and the moves it made (all its incarnations)
    since `since_ms`, numbered in order; by default the latest `limit` moves of the run."""
    consumer = cluster.consumer(name)
    moves = member_transitions(cluster.trace, name)
    status = ("crashed" if consumer.crashed else "paused" if consumer.describe()["paused"]
              else "running" if consumer.running else "stopped")
    modern = isinstance(consumer.state, ConsumerMemberState)
    title = (f"{name} ({status}): {consumer.state}, {'epoch' if modern else 'generation'} "
             f"{consumer.generation.generation_id}, at {cluster.scheduler.now:,} ms")
    table = CONSUMER_MEMBER_STATES if modern else MEMBER_STATES
    moves = [m for m in moves if isinstance(m.new, table.states)]  # this incarnation's kind
    return live_dot(table, consumer.state, title=title, moves=moves, since_ms=since_ms,
                    limit=limit)


def _classic_group(cluster: Cluster, group_id: str) -> Any:
    shard = cluster.shard_for(group_id)
    return None if shard is None else shard.groups.group(group_id)


def group_dot(cluster: Cluster, group_id: str = "group-1", since_ms: int | None = None,
              limit: int | None = DEFAULT_MOVES) -> str:
    """The group as its coordinator holds it now, and its moves since `since_ms`: a classic
    group (below), or a KIP-848 consumer group, drawn from `CONSUMER_GROUP_STATES` with its
    own state (`ConsumerGroup.state`) and `consumer_group_transitions`.

    The state is the group's own (`ClassicGroup.state`); the moves come from the trace
    (`group_transitions`). When the trace has not caught up yet (CompletingRebalance -> Stable
    is read off the first member's SyncGroup answer, one network latency after the
    coordinator's move), the group's own last move (`previous_state` -> `state`) ends the path.
    """
    group = _classic_group(cluster, group_id)
    broker = cluster.coordinator_for(group_id)
    where = f"on broker {broker} ({cluster.partition_of(group_id)})"
    now = f"at {cluster.scheduler.now:,} ms"
    shard = cluster.shard_for(group_id)
    modern = None if group is not None or shard is None or not shard.consumer_groups.has_groups \
        else shard.consumer_groups.group(group_id)
    if modern is not None:  # a KIP-848 consumer group: its own table and derived moves
        cmoves: list[Transition] = consumer_group_transitions(cluster.trace, group_id)
        last = cmoves[-1].new if cmoves else None
        if modern.state is not last and last is not None \
                and CONSUMER_GROUP_STATES.can_transition(last, modern.state):
            cmoves.append(Transition(cluster.scheduler.now, last, modern.state))
        title = (f"{group_id} {where}: {modern.state}, group epoch {modern.group_epoch}, "
                 f"assignment epoch {modern.assignment_epoch}, {now}")
        return live_dot(CONSUMER_GROUP_STATES, modern.state, title=title, moves=cmoves,
                        since_ms=since_ms, limit=limit)
    if group is None:
        return live_dot(CLASSIC_GROUP_STATES, None, title=f"{group_id} {where}: not loaded, "
                        f"{now}", moves=[], since_ms=since_ms, limit=limit)
    moves: list[Transition | tuple[Enum, Enum]] = list(group_transitions(cluster.trace, group_id))
    if group.state is not (moves[-1].new if moves else None) and group.previous_state is not None:
        moves.append(Transition(cluster.scheduler.now, group.previous_state, group.state))
    title = f"{group_id} {where}: {group.state}, generation {group.generation_id}, {now}"
    return live_dot(CLASSIC_GROUP_STATES, group.state, title=title, moves=moves,
                    since_ms=since_ms, limit=limit)


def context_dot(cluster: Cluster, group_id: str = "group-1", since_ms: int | None = None,
                limit: int | None = DEFAULT_MOVES) -> str:
    """The coordinator context of the group's `__consumer_offsets` partition on its leader, and
    the moves of that broker's context since `since_ms`."""
    tp = cluster.partition_of(group_id)
    broker = cluster.coordinator_for(group_id)
    ctx = None if broker is None else cluster.brokers[broker].runtime.context(tp)
    now = f"at {cluster.scheduler.now:,} ms"
    if ctx is None:
        return live_dot(CONTEXT_STATES, None, title=f"{tp} on broker {broker}: no context, {now}",
                        moves=[], since_ms=since_ms, limit=limit)
    moves = context_transitions(cluster.trace, tp, broker)
    title = f"{tp} on broker {broker} (leader): {ctx.state}, epoch {ctx.epoch}, {now}"
    return live_dot(CONTEXT_STATES, ctx.state, title=title, moves=moves, since_ms=since_ms,
                    limit=limit)


def member_diagram(cluster: Cluster, name: str, since_ms: int | None = None,
                   limit: int | None = DEFAULT_MOVES) -> Diagram:
    """`member_dot` as a picture."""
    return Diagram(member_dot(cluster, name, since_ms, limit))


def group_diagram(cluster: Cluster, group_id: str = "group-1", since_ms: int | None = None,
                  limit: int | None = DEFAULT_MOVES) -> Diagram:
    """`group_dot` as a picture."""
    return Diagram(group_dot(cluster, group_id, since_ms, limit))


def context_diagram(cluster: Cluster, group_id: str = "group-1", since_ms: int | None = None,
                    limit: int | None = DEFAULT_MOVES) -> Diagram:
    """`context_dot` as a picture."""
    return Diagram(context_dot(cluster, group_id, since_ms, limit))
