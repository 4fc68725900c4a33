"""Live state diagrams: the current state filled, the transition just taken in colour.

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
  `generation`), when the group code records one, is used instead of all of that.

The live diagram of a group reads the group itself (`ClassicGroup.state`, `previous_state`) from
the coordinator that leads its partition, so it is exact; the trace-based history serves the
timelines in `coordinator_kit.viz.plots`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from ..client.member import MEMBER_STATES, MemberState
from ..group.classic import CLASSIC_GROUP_STATES, ClassicGroupState
from ..runtime.runtime import CONTEXT_STATES, CoordinatorState
from ..states import StateTable
from ..topic import TopicPartition
from ..trace import TraceEvent
from .diagrams import to_dot

if TYPE_CHECKING:
    from ..cluster import Cluster

__all__ = ["Transition", "member_transitions", "context_transitions", "group_transitions",
           "live_dot", "live_diagram", "member_dot", "group_dot", "context_dot",
           "member_diagram", "group_diagram", "context_diagram", "client_group", "client_groups",
           "generation_id"]

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
    """Every state change of consumer `client` (all its incarnations), in trace order."""
    return [Transition(e.ts, MemberState[e.fields["old"]], MemberState[e.fields["new"]],
                       e.fields.get("generation"), e.source)
            for e in _events(trace)
            if e.kind == "member_state" and e.fields.get("client") == client]


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


# -- live DOT -------------------------------------------------------------------------------------

def live_dot(table: StateTable[Any], current: Enum | None,
             last: Transition | tuple[Enum, Enum] | None = None, title: str | None = None) -> str:
    """DOT for `table` with `current` filled and `last` in colour.

    The edge is drawn only when it is one the table allows and it ends in `current` (a stale
    transition, from before a restart or a reload, is not shown as the one just taken).
    """
    edge = last.edge if isinstance(last, Transition) else last
    taken = None
    if edge is not None and current is not None and edge[1] == current \
            and table.can_transition(edge[0], edge[1]):
        taken = edge
    return to_dot(table, current=current, taken=taken, title=title)


def live_diagram(table: StateTable[Any], current: Enum | None,
                 last: Transition | tuple[Enum, Enum] | None = None,
                 title: str | None = None) -> Any:
    """`live_dot` as a `graphviz.Source` (renders as SVG in Jupyter)."""
    import graphviz

    return graphviz.Source(live_dot(table, current, last, title))


def member_dot(cluster: Cluster, name: str) -> str:
    """The consumer member `name`: its state now and its last move (from the trace)."""
    consumer = cluster.consumer(name)
    moves = member_transitions(cluster.trace, name)
    status = ("crashed" if consumer.crashed else "paused" if consumer.describe()["paused"]
              else "running" if consumer.running else "stopped")
    title = (f"{name} ({status}): {consumer.state}, generation "
             f"{consumer.generation.generation_id}")
    return live_dot(MEMBER_STATES, consumer.state, moves[-1] if moves else None, title)


def _classic_group(cluster: Cluster, group_id: str) -> Any:
    shard = cluster.shard_for(group_id)
    return None if shard is None else shard.groups.group(group_id)


def group_dot(cluster: Cluster, group_id: str = "group-1") -> str:
    """The classic group as its coordinator holds it now, with its last move."""
    group = _classic_group(cluster, group_id)
    broker = cluster.coordinator_for(group_id)
    where = f"on broker {broker} ({cluster.partition_of(group_id)})"
    if group is None:
        return live_dot(CLASSIC_GROUP_STATES, None, None, f"{group_id} {where}: not loaded")
    title = f"{group_id} {where}: {group.state}, generation {group.generation_id}"
    return live_dot(CLASSIC_GROUP_STATES, group.state, (group.previous_state, group.state), title)


def context_dot(cluster: Cluster, group_id: str = "group-1") -> str:
    """The coordinator context of the group's `__consumer_offsets` partition on its leader."""
    tp = cluster.partition_of(group_id)
    broker = cluster.coordinator_for(group_id)
    ctx = None if broker is None else cluster.brokers[broker].runtime.context(tp)
    if ctx is None:
        return live_dot(CONTEXT_STATES, None, None, f"{tp} on broker {broker}: no context")
    moves = context_transitions(cluster.trace, tp, broker)
    title = f"{tp} on broker {broker} (leader): {ctx.state}, epoch {ctx.epoch}"
    return live_dot(CONTEXT_STATES, ctx.state, moves[-1] if moves else None, title)


def member_diagram(cluster: Cluster, name: str) -> Any:
    import graphviz

    return graphviz.Source(member_dot(cluster, name))


def group_diagram(cluster: Cluster, group_id: str = "group-1") -> Any:
    import graphviz

    return graphviz.Source(group_dot(cluster, group_id))


def context_diagram(cluster: Cluster, group_id: str = "group-1") -> Any:
    import graphviz

    return graphviz.Source(context_dot(cluster, group_id))
