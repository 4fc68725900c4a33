"""A whole cluster at one instant, as plain frozen data (what the cluster view draws).

`cluster_snapshot(cluster)` reads the state the simulation keeps anyway and copies what a
learner needs to see cause and effect on one screen: the brokers with their
`__consumer_offsets` partitions (leader, ISR, high watermark, log end, each broker's
coordinator context state), the classic groups on their coordinators (Kafka's state names,
generation, leader, protocol, members), every consumer (MemberState, member id, generation,
assignment, what its process is doing), the timers that decide membership as bars that run
down, and every request on the network with where it is.

Where it reads what:

* timers: the consumer's `heartbeat.interval.ms` (from its last heartbeat sent) and
  `max.poll.interval.ms` (from its last poll), as the Java client's heartbeat thread checks
  them; the coordinator's session timer of each member (`heartbeat-<group>-<member>`) and the
  rebalance timer (`join-<group>`, `sync-<group>`) from the context's `CoordinatorTimer`
  (Kafka's `GroupMetadataManager` keys);
* requests: every request's exchange waits in one of the network's timeout lanes (or, when
  a lane refused it, behind a `TimerHandle` whose callback is its `timed_out`) until it is
  answered; its `call` says whether it arrived (or where it was lost), its `response` whether
  the answer is on its way back. FindCoordinator is the scheduler entry `FindCoordinator
  <client>`;
* the last answer each client got: `Consumer.last_answer`, set by the network on delivery.

A snapshot is a pure function of the cluster's state: the same state gives an equal snapshot
(every collection is sorted or in the cluster's own order), so redrawing an earlier state
draws the same picture. Nothing here imports a widget library.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MethodType
from typing import TYPE_CHECKING, Any

from ..client.member import MemberState
from ..cluster import CoordinatorAnswer, Lost, _arrived, _Exchange, _IN_LANE
from ..group.config import NEW_MEMBER_JOIN_TIMEOUT_MS
from ..group.manager import heartbeat_key, join_key, sync_key
from ..group.modern.manager import rebalance_timeout_key, session_timeout_key
from ..group.protocol import ConsumerProtocolAssignment
from ..logs.layout import format_timestamp

if TYPE_CHECKING:
    from ..cluster import Cluster
    from ..group.classic import ClassicGroup

__all__ = ["ClusterSnapshot", "BrokerView", "ContextView", "PartitionView", "ReplicaView",
           "GroupView", "GroupMemberView", "ConsumerView", "TimerBar", "RequestView",
           "AnswerView", "SnapshotChanges", "cluster_snapshot", "snapshot_changes",
           "coordinator_members", "REQUEST_PHASES"]

# Where a request can be, in the order it goes.
REQUEST_PHASES = ("to-broker", "at-coordinator", "returning", "lost")

_RUNNING_HEARTBEAT = (MemberState.COMPLETING_REBALANCE, MemberState.STABLE)
# a KIP-848 client sends no heartbeats in these states (`MemberState` of the Java client;
# AbstractMembershipManager.shouldSkipHeartbeat)
_NO_HEARTBEAT = frozenset(("UNSUBSCRIBED", "FENCED", "FATAL", "STALE"))
_HELD_APIS = {"_on_heartbeat": "Heartbeat", "_on_join": "JoinGroup", "_on_sync": "SyncGroup",
              "_on_commit": "OffsetCommit", "_on_fetch": "OffsetFetch",
              "_on_find": "FindCoordinator"}
_UUID_SUFFIX = 37  # "-" + a UUID: a dynamic member id is "<client.id>-<uuid>"


@dataclass(frozen=True, slots=True)
class TimerBar:
    """One timer that runs down: `remaining_ms` of `total_ms` are left.

    `name` is Kafka's config name for the length (`session.timeout.ms`...), `key` the timer's
    own name (the coordinator's timer key, or the client's). A `deadline` timer removes or
    fences someone when it runs out (drawn urgent as it nears 0); the heartbeat interval is
    not one (it runs out every 3 s: a heartbeat goes)."""

    name: str
    key: str
    remaining_ms: int
    total_ms: int
    owner: str  # "consumer" or "coordinator"
    deadline: bool = True
    note: str = ""  # "in flight", "paused", "expired"...

    @property
    def fraction(self) -> float:
        if self.total_ms <= 0:
            return 0.0
        return min(1.0, max(0.0, self.remaining_ms / self.total_ms))

    @property
    def urgency(self) -> str:
        """"expired", "urgent" (under 20% left), "soon" (under 50%) or "ok"."""
        if not self.deadline:
            return "ok"
        if self.remaining_ms <= 0:
            return "expired"
        f = self.fraction
        return "urgent" if f < 0.2 else "soon" if f < 0.5 else "ok"


@dataclass(frozen=True, slots=True)
class ReplicaView:
    broker_id: int
    log_end_offset: int
    in_isr: bool
    leader: bool
    fetching: bool  # False: stalled (stops fetching from the leader)
    fetch_delay_ms: int  # > 0: a slow replica


@dataclass(frozen=True, slots=True)
class PartitionView:
    """A `__consumer_offsets` partition: leader, ISR, high watermark, log end offset."""

    partition: int
    name: str
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    high_watermark: int
    log_end_offset: int
    replicas: tuple[ReplicaView, ...]
    waiting_for: str  # what holds the high watermark back ("" when everything is committed)


@dataclass(frozen=True, slots=True)
class ContextView:
    """One broker's coordinator context of one partition (`CoordinatorRuntime.context(tp)`)."""

    partition: int
    state: str  # INITIAL, LOADING, ACTIVE, FAILED, CLOSED
    epoch: int
    leader: bool  # this broker leads the partition now
    groups: tuple[str, ...]
    parked_writes: int  # writes waiting for the high watermark (the deferred queue)


@dataclass(frozen=True, slots=True)
class BrokerView:
    broker_id: int
    host: str
    alive: bool
    leads: tuple[int, ...]
    follows: tuple[int, ...]
    contexts: tuple[ContextView, ...]
    stalled: tuple[int, ...]  # partitions this broker's replica has stopped fetching


@dataclass(frozen=True, slots=True)
class GroupMemberView:
    """A member as its coordinator knows it, with its session timer."""

    member_id: str
    client_id: str
    instance_id: str | None
    leader: bool
    pending: bool  # got MEMBER_ID_REQUIRED, not in the group yet
    awaiting: str  # "join" (held at the join barrier), "sync", or ""
    session: TimerBar | None
    broker: int
    # what the coordinator handed it in SyncGroup (its `ConsumerProtocolAssignment`), as
    # "topic-partition" names; empty before the leader's assignment and for other protocols.
    # A consumer group's (KIP-848) member: the partitions it owns now (its current assignment)
    assignment: tuple[str, ...] = ()
    # a consumer group's member only (None/() in a classic group): its member epoch, its
    # MemberState on the coordinator (STABLE, UNREVOKED_PARTITIONS, UNRELEASED_PARTITIONS),
    # the target assignment the coordinator wants it to reach, the partitions it must give up
    # first, and its rebalance timer (`rebalance.timeout.ms`, running while it revokes)
    member_epoch: int | None = None
    member_state: str | None = None
    target: tuple[str, ...] = ()
    revoking: tuple[str, ...] = ()
    rebalance: TimerBar | None = None


@dataclass(frozen=True, slots=True)
class GroupView:
    group_id: str
    broker: int
    partition: int
    coordinator: bool  # the broker leads the group's partition (False: an old copy)
    context_state: str
    state: str  # Kafka's display names: PreparingRebalance, CompletingRebalance, Stable...
    generation: int
    protocol_type: str | None
    protocol: str | None
    leader: str | None  # member id
    leader_client: str | None
    members: tuple[GroupMemberView, ...]
    awaiting_join: int
    rebalance: TimerBar | None
    # "classic", or "consumer" for a KIP-848 consumer group: then `state` is a
    # ConsumerGroupState (Empty, Assigning, Reconciling, Stable), `generation` the group epoch,
    # `assignment_epoch` the target assignment's epoch and `protocol` the server assignor
    group_type: str = "classic"
    assignment_epoch: int | None = None


@dataclass(frozen=True, slots=True)
class AnswerView:
    """An answer a client got: its API, error name ("NONE" for success) and time."""

    api: str
    error: str
    at_ms: int
    broker: int | None


@dataclass(frozen=True, slots=True)
class RequestView:
    """A request on the network, from its send until its answer is delivered or it times out.

    `phase` is one of REQUEST_PHASES; `error` is the answer's error name once the coordinator
    answered (on the way back, or lost there); `detail` says in words why it waits or where it
    was lost. `id` is the sequence number of its timeout: stable for the request's lifetime."""

    id: int
    client: str
    api: str
    broker: int | None
    phase: str
    error: str | None
    detail: str
    lost_where: str  # "send", "arrival", "return" for a lost request, else ""
    timeout_at_ms: int
    due_ms: int | None  # when it arrives or its answer is delivered (on the wire), else None


@dataclass(frozen=True, slots=True)
class ConsumerView:
    name: str
    group_id: str
    offsets_partition: int  # the `__consumer_offsets` partition of its group
    state: str  # MemberState name
    generation: int
    member_id: str
    protocol: str | None
    coordinator: int | None
    assignment: tuple[str, ...]
    process: str  # running, paused, crashed, closed, not started, failed
    status: tuple[str, ...]  # words for what the process does: "paused until 61,000 ms"...
    cut_off: bool
    dropping_heartbeats: bool
    processing_ms: int
    rejoin_needed: bool
    timers: tuple[TimerBar, ...]  # the client's own: heartbeat interval, max.poll.interval.ms
    memberships: tuple[GroupMemberView, ...]  # as the coordinator(s) know it, with sessions
    last_answer: AnswerView | None
    held: tuple[AnswerView, ...]  # answers a pause holds back (handled when it ends)
    # a real client of a live server (`coordinator_members`): its software (ApiVersions'
    # client_software_name and version) and its last request (the server does not keep the
    # answers' errors, so `error` is ""); empty for the simulation's consumers
    software: str = ""
    last_request: AnswerView | None = None
    # "consumer" for a KIP-848 member (`group.protocol=consumer`): then `state` is the Java
    # client's MemberState (JOINING, RECONCILING, ACKNOWLEDGING, STABLE, FENCED...) and
    # `generation` its member epoch
    group_protocol: str = "classic"


@dataclass(frozen=True, slots=True)
class ClusterSnapshot:
    now_ms: int
    clock: str  # the log4j timestamp of now, as the kit's log lines print it
    brokers: tuple[BrokerView, ...]
    partitions: tuple[PartitionView, ...]
    groups: tuple[GroupView, ...]
    consumers: tuple[ConsumerView, ...]
    requests: tuple[RequestView, ...]

    def consumer(self, name: str) -> ConsumerView:
        for c in self.consumers:
            if c.name == name:
                return c
        raise KeyError(f"no consumer named {name!r} in the snapshot; known: "
                       f"{[c.name for c in self.consumers]}")

    def group(self, group_id: str) -> GroupView:
        """The group on its coordinator (the partition's leader), else any copy of it."""
        copies = [g for g in self.groups if g.group_id == group_id]
        if not copies:
            raise KeyError(f"no group {group_id!r} on any coordinator at {self.now_ms} ms; "
                           f"known: {sorted({g.group_id for g in self.groups})}")
        return next((g for g in copies if g.coordinator), copies[0])

    def broker(self, broker_id: int) -> BrokerView:
        for b in self.brokers:
            if b.broker_id == broker_id:
                return b
        raise KeyError(f"no broker {broker_id!r}; brokers: {[b.broker_id for b in self.brokers]}")

    def requests_of(self, client: str) -> tuple[RequestView, ...]:
        return tuple(r for r in self.requests if r.client == client)


# -- reading the cluster ----------------------------------------------------------------------


def cluster_snapshot(cluster: Cluster) -> ClusterSnapshot:
    """The cluster at this instant (module doc). Reads only; changes nothing."""
    now = cluster.scheduler.now
    partitions = tuple(_partition_view(p) for _, p in sorted(cluster.partitions.items()))
    brokers, groups = _brokers_and_groups(cluster, now)
    consumers = tuple(_consumer_view(cluster, c, groups, now)
                      for c in cluster.consumers.values())
    requests = _requests(cluster, groups, partitions, now)
    return ClusterSnapshot(now, format_timestamp(now, cluster.trace.start), brokers, partitions,
                           groups, consumers, requests)


def _partition_view(p: Any) -> PartitionView:
    isr = tuple(sorted(p.isr))
    replicas = tuple(ReplicaView(b, r.log_end_offset, b in isr, b == p.leader_id, r.fetching,
                                 r.fetch_delay_ms)
                     for b, r in sorted(p.replicas.items()))
    hwm, leo = p.high_watermark, p.log_end_offset
    return PartitionView(p.tp.partition, str(p.tp), p.leader_id, p.leader_epoch, isr, hwm, leo,
                         replicas, "" if hwm >= leo else p.why_not_committed())


def _brokers_and_groups(cluster: Cluster, now: int
                        ) -> tuple[tuple[BrokerView, ...], tuple[GroupView, ...]]:
    brokers: list[BrokerView] = []
    groups: list[GroupView] = []
    items = sorted(cluster.partitions.items())
    for b, broker in sorted(cluster.brokers.items()):
        contexts = []
        for tp, p in items:
            ctx = broker.runtime.context(tp)
            if ctx is None:
                continue
            leader = p.leader_id == b
            names: tuple[str, ...] = ()
            coordinator = ctx.coordinator
            if coordinator is not None:
                manager = coordinator.shard.groups
                found = sorted(manager.groups.items(), key=lambda kv: kv[0])
                names = tuple(gid for gid, _ in found)
                groups.extend(_group_view(cluster, b, tp.partition, leader, ctx, manager, g, now)
                              for _, g in found)
                modern = coordinator.shard.consumer_groups
                if modern.has_groups:  # KIP-848 consumer groups
                    found_cg = sorted(modern.groups.items(), key=lambda kv: kv[0])
                    names = tuple(sorted(names + tuple(gid for gid, _ in found_cg)))
                    groups.extend(_consumer_group_view(b, tp.partition, leader, ctx, modern, g,
                                                       now) for _, g in found_cg)
            contexts.append(ContextView(tp.partition, ctx.state.name, ctx.epoch, leader, names,
                                        len(ctx.deferred)))
        leads = tuple(tp.partition for tp, p in items if p.leader_id == b)
        follows = tuple(tp.partition for tp, p in items if b in p.replicas and p.leader_id != b)
        stalled = tuple(tp.partition for tp, p in items
                        if b in p.replicas and p.leader_id != b and not p.replicas[b].fetching)
        brokers.append(BrokerView(b, cluster.broker_host(b), broker.alive, leads, follows,
                                  tuple(contexts), stalled))
    return tuple(brokers), tuple(groups)


def _task_remaining(timer: Any, key: str, now: int) -> tuple[int, bool] | None:
    """(ms left, fired) of a coordinator timer, or None when none is scheduled."""
    task = timer.tasks.get(key)
    if task is None or task.handle is None:
        return None
    handle = task.handle
    fired = handle.done
    return (0 if fired else max(0, handle.when - now)), fired


def _group_view(cluster: Cluster, broker: int, partition: int, leader: bool, ctx: Any,
                manager: Any, group: ClassicGroup, now: int) -> GroupView:
    timer = ctx.timer
    gid = group.group_id
    members = []
    for m in group.members.values():
        members.append(GroupMemberView(
            m.member_id, m.client_id, m.group_instance_id, group.leader_id == m.member_id,
            False, "join" if m.is_awaiting_join else "sync" if m.is_awaiting_sync else "",
            _session_bar(timer, gid, m.member_id, NEW_MEMBER_JOIN_TIMEOUT_MS if m.is_new
                         else m.session_timeout_ms, now), broker,
            _assigned(m.assignment) if group.protocol_type == "consumer" else ()))
    for mid in sorted(group.pending_join_members):
        client = _client_of(cluster, mid)
        total = cluster.consumers[client].config.session_timeout_ms \
            if client in cluster.consumers else 0
        members.append(GroupMemberView(mid, client, None, False, True, "",
                                       _session_bar(timer, gid, mid, total, now), broker))
    rebalance = None
    for key in (join_key(gid), sync_key(gid)):
        left = _task_remaining(timer, key, now)
        if left is None:
            continue
        timeout = max((m.rebalance_timeout_ms for m in group.members.values()), default=0)
        name = "rebalance.timeout.ms"
        if key.startswith("join-") and group.previous_state.value == "Empty":
            name = "group.initial.rebalance.delay.ms"
            timeout = manager.config.group_initial_rebalance_delay_ms
        remaining, fired = left
        rebalance = TimerBar(name, key, remaining, max(timeout, remaining), "coordinator",
                             note="expired" if fired else
                             ("join phase" if key.startswith("join-") else "sync phase"))
    leader_member = group.members.get(group.leader_id) if group.leader_id else None
    return GroupView(gid, broker, partition, leader, ctx.state.name, group.state.value,
                     group.generation_id, group.protocol_type, group.protocol_name,
                     group.leader_id, None if leader_member is None else leader_member.client_id,
                     tuple(members), group.num_members_awaiting_join, rebalance)


def _partition_names(assignment: Any, manager: Any) -> tuple[str, ...]:
    """A consumer group assignment (topic id -> partitions) as sorted "topic-partition"
    names, topics named through the coordinator's metadata image."""
    out = []
    for tid, parts in assignment.items():
        name = manager.topics.name_of(tid) or tid
        out.extend((name, p) for p in parts)
    return tuple(f"{t}-{p}" for t, p in sorted(out))


def _consumer_group_view(broker: int, partition: int, leader: bool, ctx: Any, manager: Any,
                         group: Any, now: int) -> GroupView:
    """A KIP-848 consumer group as its coordinator holds it (`ConsumerGroup`): group epoch,
    target assignment epoch, each member's epoch, MemberState, current and target assignment,
    and the coordinator's session and rebalance timers of each member
    (`GroupMetadataManager.consumerGroupSessionTimeoutKey` / `consumerGroupRebalanceTimeoutKey`)."""
    timer = ctx.timer
    gid = group.group_id
    session_ms = manager.config.consumer_group_session_timeout_ms
    members = []
    for m in sorted(group.members.values(), key=lambda m: (m.client_id, m.member_id)):
        key = session_timeout_key(gid, m.member_id)
        left = _task_remaining(timer, key, now)
        session = None if left is None else TimerBar(
            "session.timeout.ms", key, left[0], max(session_ms, left[0]), "coordinator",
            note="fencing queued" if left[1] else "")
        rkey = rebalance_timeout_key(gid, m.member_id)
        rleft = _task_remaining(timer, rkey, now)
        rebalance = None if rleft is None else TimerBar(
            "rebalance.timeout.ms", rkey, rleft[0], max(m.rebalance_timeout_ms, rleft[0]),
            "coordinator", note="fencing queued" if rleft[1] else "revoking")
        members.append(GroupMemberView(
            m.member_id, m.client_id, m.instance_id, False, False, "", session, broker,
            _partition_names(m.assigned_partitions, manager), m.member_epoch, m.state.name,
            _partition_names(group.target_assignment.get(m.member_id) or {}, manager),
            _partition_names(m.partitions_pending_revocation, manager), rebalance))
    from ..group.modern.describe import preferred_server_assignor
    from ..group.modern.manager import DEFAULT_SERVER_ASSIGNOR
    return GroupView(gid, broker, partition, leader, ctx.state.name, group.state.value,
                     group.group_epoch, "consumer",
                     preferred_server_assignor(group, None) or DEFAULT_SERVER_ASSIGNOR,
                     None, None, tuple(members), 0, None, "consumer", group.assignment_epoch)


def _assigned(data: bytes) -> tuple[str, ...]:
    """The partitions of a SyncGroup assignment (`ConsumerProtocolAssignment`), sorted by
    topic and partition; () when there is none or it is not the consumer protocol's."""
    if not data:
        return ()
    try:
        parts = ConsumerProtocolAssignment.decode(data).assigned_partitions
    except Exception:  # noqa: BLE001 - a foreign protocol's bytes: nothing to show
        return ()
    return tuple(str(tp) for tp in sorted(parts, key=lambda tp: (tp.topic, tp.partition)))


def _session_bar(timer: Any, group_id: str, member_id: str, total: int, now: int
                 ) -> TimerBar | None:
    key = heartbeat_key(group_id, member_id)
    left = _task_remaining(timer, key, now)
    if left is None:
        return None
    remaining, fired = left
    return TimerBar("session.timeout.ms", key, remaining, max(total, remaining), "coordinator",
                    note="removal queued" if fired else "")


def _client_of(cluster: Cluster, member_id: str) -> str:
    for name, c in cluster.consumers.items():
        if c.generation.member_id == member_id:
            return name
    return member_id[:-_UUID_SUFFIX] if len(member_id) > _UUID_SUFFIX else member_id


def _error_name(response: Any) -> str:
    """The answer's error: the request's, else the first failed partition's (OffsetCommit)."""
    error = getattr(response, "error", None)
    if error is not None and error.name != "NONE":
        return error.name
    errors = getattr(response, "errors", None)
    if errors:
        for _, e in sorted(errors.items()):
            if e.name != "NONE":
                return e.name
    return "NONE" if error is None else error.name


def _answer_view(answer: Any) -> AnswerView | None:
    if answer is None:
        return None
    if isinstance(answer, CoordinatorAnswer):
        return AnswerView("FindCoordinator", "NONE" if answer.error is None
                          else answer.error.name, answer.answered_at, answer.broker)
    error = "REQUEST_TIMED_OUT" if answer.response is None else _error_name(answer.response)
    return AnswerView(answer.api, error, answer.answered_at, answer.broker)


def _held_answers(consumer: Any) -> tuple[AnswerView, ...]:
    held = []
    for handle, fn, args in getattr(consumer, "_held", ()):
        if not handle.pending:
            continue
        api = _HELD_APIS.get(getattr(fn, "__name__", ""))
        if api is None:
            continue
        if api == "FindCoordinator":
            broker, error = args[0], args[1]
            held.append(AnswerView(api, "NONE" if error is None else error.name, handle.when,
                                   broker))
            continue
        response, net_error = args[0], args[1]
        error = (net_error.name if net_error is not None else
                 "REQUEST_TIMED_OUT" if response is None else _error_name(response))
        held.append(AnswerView(api, error, handle.when, consumer.coordinator))
    return tuple(held)


def _consumer_view(cluster: Cluster, c: Any, groups: tuple[GroupView, ...], now: int
                   ) -> ConsumerView:
    config = c.config
    paused = c.running and now < c.paused_until
    cut = c.name in cluster.network.cut
    status: list[str] = []
    if c.crashed:
        process = "crashed"
    elif c.closed:
        process = "closed"
        status.append("closed: left the group")
    elif not c.running:
        process = "not started"
        status.append("not started yet" + (f" (starts at {c.starts_at:,} ms)"
                                           if c.starts_at is not None and c.starts_at >= now
                                           else ""))
    elif c.fatal is not None:
        process = "failed"
        status.append(f"failed: {c.fatal.name}")
    else:
        process = "paused" if paused else "running"
    if paused:
        status.append(f"paused until {c.paused_until:,} ms")
    if c.running and cut:
        status.append("cut off")
    if c.running and c.drop_heartbeats:
        status.append("dropping heartbeats")
    if c.running and c.processing_ms > config.heartbeat_interval_ms:
        status.append(f"slow poll: {c.processing_ms:,} ms per poll")
    timers: list[TimerBar] = []
    modern = getattr(c, "membership", None) is not None  # an AsyncConsumer (KIP-848)
    if c.running and modern:
        interval = c.heartbeat_interval_ms
        if interval > 0 and c.state.name not in _NO_HEARTBEAT and c.fatal is None:
            note = ("paused" if paused else "no coordinator" if c.coordinator is None
                    else "in flight" if c._hb_inflight else "")
            timers.append(TimerBar("heartbeat.interval.ms", f"heartbeat {c.name}",
                                   max(0, c._hb_due - now), interval, "consumer",
                                   deadline=False, note=note))
        poll = config.max_poll_interval_ms
        timers.append(TimerBar("max.poll.interval.ms", f"poll {c.name}",
                               max(0, c.last_poll + poll - now), poll, "consumer",
                               note="paused" if paused else ""))
    elif c.running:
        if c.state in _RUNNING_HEARTBEAT and c.fatal is None:
            interval = config.heartbeat_interval_ms
            note = ("paused" if paused else "no coordinator" if c.coordinator is None
                    else "in flight" if c.inflight.heartbeat else "")
            timers.append(TimerBar("heartbeat.interval.ms", f"heartbeat {c.name}",
                                   max(0, c.last_heartbeat_sent + interval - now), interval,
                                   "consumer", deadline=False, note=note))
        poll = config.max_poll_interval_ms
        timers.append(TimerBar("max.poll.interval.ms", f"poll {c.name}",
                               max(0, c.last_poll + poll - now), poll, "consumer",
                               note="paused" if paused else ""))
    memberships = tuple(m for g in groups if g.group_id == config.group_id
                        for m in g.members if m.client_id == c.name
                        or m.member_id == c.generation.member_id)
    return ConsumerView(
        c.name, config.group_id, cluster.partition_of(config.group_id).partition, c.state.name,
        c.generation.generation_id, c.member_id, c.generation.protocol_name, c.coordinator,
        tuple(str(tp) for tp in sorted(c.owned)), process, tuple(status), cut,
        c.drop_heartbeats, c.processing_ms, False if modern else c.rejoin_needed,
        tuple(timers), memberships, _answer_view(c.last_answer), _held_answers(c),
        group_protocol="consumer" if modern else "classic")


# -- members the cluster knows only as members ---------------------------------------------------


# A member's state as its coordinator sees it, by the group's state (the client's own MemberState
# is inside its process); a member held at the join barrier is rebalancing whatever the state.
_STATE_SEEN = {"PreparingRebalance": "PREPARING_REBALANCE",
               "CompletingRebalance": "COMPLETING_REBALANCE", "Stable": "STABLE"}


def coordinator_members(snapshot: ClusterSnapshot, group_id: str | None = None
                        ) -> tuple[ConsumerView, ...]:
    """A `ConsumerView` for every member a coordinator holds that is none of the snapshot's
    consumers: the real clients of a live server (`coordinator_kit.live`), which the cluster
    knows only as members of its groups (`ClassicGroup.members`, `ConsumerGroup.members`).

    Everything comes from the group on its coordinator: the member's state as the coordinator
    sees it (STABLE while the group is Stable; PREPARING_REBALANCE at the join barrier...), the
    group's generation, the member id, the assignment the coordinator handed it in SyncGroup
    (decoded `ConsumerProtocolAssignment`) and its session timer, with any old copy on a
    broker that no longer leads the partition. The process is not known to the cluster: it
    says "running", and a caller that knows better (the live panel) replaces `process` and
    `status`. A KIP-848 member's state is its MemberState on the coordinator (STABLE,
    UNREVOKED_PARTITIONS, UNRELEASED_PARTITIONS) and its generation its member epoch.
    Members come sorted by group, then client id; two members with one client id
    are told apart by their member ids. `group_id` keeps one group's."""
    known_ids = {c.member_id for c in snapshot.consumers if c.member_id}
    known_names = {c.name for c in snapshot.consumers}
    rows: list[tuple[GroupView, GroupMemberView]] = []
    for g in snapshot.groups:
        if not g.coordinator or (group_id is not None and g.group_id != group_id):
            continue
        for m in g.members:
            if m.pending or m.member_id in known_ids or m.client_id in known_names:
                continue
            rows.append((g, m))
    rows.sort(key=lambda gm: (gm[0].group_id, gm[1].client_id, gm[1].member_id))
    clients = [m.client_id for _, m in rows]
    views = []
    for g, m in rows:
        name = m.client_id if clients.count(m.client_id) == 1 else \
            f"{m.client_id} ({m.member_id[-_UUID_SUFFIX + 1:][:8]})"
        modern = g.group_type == "consumer"
        # a KIP-848 member: its MemberState and epoch as the coordinator keeps them
        state = (m.member_state or "UNKNOWN") if modern else \
            "PREPARING_REBALANCE" if m.awaiting == "join" else \
            _STATE_SEEN.get(g.state, "UNJOINED")
        copies = tuple(x for other in snapshot.groups if other.group_id == g.group_id
                       for x in other.members if x.member_id == m.member_id)
        views.append(ConsumerView(
            name, g.group_id, g.partition, state,
            m.member_epoch if modern and m.member_epoch is not None else g.generation,
            m.member_id, g.protocol, g.broker, m.assignment, "running", (), False, False, 0,
            False, (), copies, None, (), group_protocol="consumer" if modern else "classic"))
    return tuple(views)


# -- requests on the network --------------------------------------------------------------------


def _requests(cluster: Cluster, groups: tuple[GroupView, ...],
              partitions: tuple[PartitionView, ...], now: int) -> tuple[RequestView, ...]:
    network = cluster.network
    found: list[tuple[int, int, _Exchange]] = []  # (timeout seq, timeout when, exchange)
    for lane in network._lanes.values():
        for when, seq, exchange in zip(lane._whens, lane._seqs, lane._items):
            if exchange.timeout is _IN_LANE:
                found.append((seq, when, exchange))
    on_wire: dict[int, int] = {}  # id(exchange) -> when its arrival or delivery is due
    finds = []
    for when, seq, handle in cluster.scheduler._heap:
        if handle.cancelled or handle.done:
            continue
        callback = handle._callback
        if callback.__class__ is _Exchange:
            on_wire[id(callback)] = handle.when
        elif callback.__class__ is MethodType and callback.__self__.__class__ is _Exchange:
            exchange = callback.__self__
            if not exchange.answered:  # a timeout a lane refused (a TimerHandle)
                found.append((handle.seq, handle.when, exchange))
        elif handle.name.startswith("FindCoordinator "):
            finds.append(handle)
    by_group = {g.group_id: g for g in groups if g.coordinator}
    by_partition = {p.partition: p for p in partitions}
    views = []
    for seq, deadline, x in sorted(found, key=lambda f: f[0]):
        views.append(_request_view(cluster, seq, deadline, x, on_wire.get(id(x)), by_group,
                                   by_partition))
    for handle in sorted(finds, key=lambda h: h.seq):
        client = handle.name[len("FindCoordinator "):]
        views.append(RequestView(handle.seq, client, "FindCoordinator", None, "to-broker", None,
                                 "looking for the group's coordinator", "", handle.when,
                                 handle.when))
    return tuple(sorted(views, key=lambda v: (v.client, v.id)))


_LOST_WORDS = {("send", "dropped"): "heartbeat dropped on the way out",
               ("return", "cut off"): "answer lost: client cut off",
               ("return", "broker down"): "answer lost: broker down",
               ("send", "cut off"): "lost: the client is cut off",
               ("arrival", "cut off"): "lost: the client is cut off"}


def _request_view(cluster: Cluster, seq: int, deadline: int, x: _Exchange, due: int | None,
                  by_group: dict[str, GroupView], by_partition: dict[int, PartitionView]
                  ) -> RequestView:
    client = x.client.name
    call = x.call
    error = None
    where = ""
    if call.__class__ is Lost:
        phase, where = "lost", call.where
        detail = _LOST_WORDS.get((where, call.why), f"lost: {call.why}")
        if x.response is not None:
            error = _error_name(x.response)
    elif call is not _arrived:
        phase, detail = "to-broker", f"on its way to b{x.broker}"
    elif x.response is not None:
        phase, error = "returning", _error_name(x.response)
        detail = f"answer on its way back from b{x.broker}"
    else:
        phase = "at-coordinator"
        detail = _waiting_detail(cluster, x, by_group, by_partition)
    return RequestView(seq, client, x.api, x.broker, phase, error, detail, where, deadline,
                       due if phase in ("to-broker", "returning") else None)


def _waiting_detail(cluster: Cluster, x: _Exchange, by_group: dict[str, GroupView],
                    by_partition: dict[int, PartitionView]) -> str:
    """In words, why a request that reached its coordinator has no answer yet."""
    group_id = x.client.config.group_id
    group = by_group.get(group_id)
    member = None if group is None else next(
        (m for m in group.members if m.member_id == x.client.generation.member_id
         or (m.client_id == x.client.name and m.awaiting)), None)
    if group is not None and member is not None:
        if x.api == "JoinGroup" and member.awaiting == "join":
            return (f"at the join barrier, {group.awaiting_join}/"
                    f"{sum(1 for m in group.members if not m.pending)} joined")
        if x.api == "SyncGroup" and member.awaiting == "sync":
            if group.state == "CompletingRebalance":
                return "waiting for the leader's assignment"
    tp = cluster.partition_of(group_id)
    if cluster.partitions[tp].leader_id != x.broker:
        return f"at b{x.broker}, not the coordinator now"
    p = by_partition.get(tp.partition)
    if p is not None and p.high_watermark < p.log_end_offset:
        return f"waiting for the HWM: {p.high_watermark} < LEO {p.log_end_offset}"
    return f"queued at the coordinator b{x.broker}"


# -- what changed between two snapshots ----------------------------------------------------------


@dataclass(frozen=True)
class SnapshotChanges:
    """What differs from an earlier snapshot, by entity: a tuple of words per changed one.

    Only what a learner would call a change counts: a state, a generation, a member id, an
    assignment, a process status, a membership, an answer's error (not a new answer with the
    same error: heartbeats answer every 3 s), a context's state or epoch, a partition's leader
    or ISR, a broker going down, a request that is new or moved on. Timers and high watermarks
    move all the time and are not marked."""

    consumers: dict[str, tuple[str, ...]]
    groups: dict[str, tuple[str, ...]]
    contexts: dict[tuple[int, int], tuple[str, ...]]  # (broker, partition)
    partitions: dict[int, tuple[str, ...]]
    brokers: dict[int, tuple[str, ...]]
    requests: dict[int, str]  # request id -> "new" or "moved on"

    def __bool__(self) -> bool:
        return any((self.consumers, self.groups, self.contexts, self.partitions, self.brokers,
                    self.requests))


NO_CHANGES = SnapshotChanges({}, {}, {}, {}, {}, {})


def _fields_changed(pairs: tuple[tuple[str, Any, Any], ...]) -> tuple[str, ...]:
    return tuple(word for word, before, after in pairs if before != after)


def snapshot_changes(previous: ClusterSnapshot | None, current: ClusterSnapshot
                     ) -> SnapshotChanges:
    """What changed from `previous` to `current` (nothing when `previous` is None)."""
    if previous is None:
        return NO_CHANGES
    consumers: dict[str, tuple[str, ...]] = {}
    before_consumers = {c.name: c for c in previous.consumers}
    for c in current.consumers:
        b = before_consumers.get(c.name)
        if b is None:
            consumers[c.name] = ("new",)
            continue
        words = _fields_changed((
            ("state", b.state, c.state), ("generation", b.generation, c.generation),
            ("member id", b.member_id, c.member_id), ("assignment", b.assignment, c.assignment),
            ("coordinator", b.coordinator, c.coordinator),
            ("process", (b.process, b.status), (c.process, c.status)),
            ("membership", _memberships(b), _memberships(c)),
            ("answer", _answer_error(b), _answer_error(c))))
        if words:
            consumers[c.name] = words
    groups: dict[str, tuple[str, ...]] = {}
    before_groups = {g.group_id: g for g in previous.groups if g.coordinator}
    for g in current.groups:
        if not g.coordinator:
            continue
        b = before_groups.get(g.group_id)
        if b is None:
            groups[g.group_id] = ("new",)
            continue
        words = _fields_changed((
            ("coordinator", b.broker, g.broker), ("state", b.state, g.state),
            ("generation", b.generation, g.generation), ("leader", b.leader, g.leader),
            ("protocol", b.protocol, g.protocol),
            ("members", sorted(m.member_id for m in b.members),
             sorted(m.member_id for m in g.members))))
        if words:
            groups[g.group_id] = words
    contexts: dict[tuple[int, int], tuple[str, ...]] = {}
    before_contexts = {(br.broker_id, x.partition): x for br in previous.brokers
                       for x in br.contexts}
    for br in current.brokers:
        for x in br.contexts:
            b = before_contexts.get((br.broker_id, x.partition))
            words = ("new",) if b is None else _fields_changed((
                ("state", b.state, x.state), ("epoch", b.epoch, x.epoch)))
            if words:
                contexts[(br.broker_id, x.partition)] = words
    partitions: dict[int, tuple[str, ...]] = {}
    before_partitions = {p.partition: p for p in previous.partitions}
    for p in current.partitions:
        b = before_partitions.get(p.partition)
        if b is None:
            continue
        words = _fields_changed((
            ("leader", b.leader, p.leader), ("ISR", b.isr, p.isr),
            ("replica", _replica_faults(b), _replica_faults(p))))
        if words:
            partitions[p.partition] = words
    brokers: dict[int, tuple[str, ...]] = {}
    before_brokers = {br.broker_id: br for br in previous.brokers}
    for br in current.brokers:
        b = before_brokers.get(br.broker_id)
        if b is not None and b.alive != br.alive:
            brokers[br.broker_id] = ("alive",)
    requests: dict[int, str] = {}
    before_requests = {r.id: r for r in previous.requests}
    for r in current.requests:
        b = before_requests.get(r.id)
        if b is None:
            requests[r.id] = "new"
        elif (b.phase, b.error) != (r.phase, r.error):
            requests[r.id] = "moved on"
    return SnapshotChanges(consumers, groups, contexts, partitions, brokers, requests)


def _memberships(c: ConsumerView) -> tuple[tuple[str, int, bool], ...]:
    return tuple(sorted((m.member_id, m.broker, m.pending) for m in c.memberships))


def _answer_error(c: ConsumerView) -> str | None:
    return None if c.last_answer is None else c.last_answer.error


def _replica_faults(p: PartitionView) -> tuple[tuple[int, bool, int], ...]:
    return tuple((r.broker_id, r.fetching, r.fetch_delay_ms) for r in p.replicas)
