"""The coordinator of the centralised design drafted for Kafka 0.9: one broker, elected in
ZooKeeper, serves every consumer group.

It never looks for consumers: they register (C1/C2). It pings each one and fails it after
`ping.max.missed` unanswered pings (C3-C5, C14) or, by default, when its socket closes (C15).
A rebalance is queued per group (C7/C8) and run by a handler: StopFetcher to every member,
wait for all replies, compute the range assignment, StartFetcher to every member, wait for all
replies (C9-C12). A missing reply fails that member and retries the whole procedure after a
backoff, up to `rebalance.max.retries` attempts, then gives up: REBALANCE_FAILED (C13, C18).
Consumed offsets arrive in ping and stop replies and are flushed to ZooKeeper periodically
(C16); group directories, ownership and offsets are what a new coordinator reads at startup
(C17). Rule numbers and the kit's choices: docs/eras-central.md. Sources: Apache wiki pages
"Central Consumer Coordination" (2012) and "Kafka Detailed Consumer Coordinator Design".
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...clock import TimerHandle
from ...trace import LogContext
from ..api import Partition
from .network import Connection, Message
from .states import GROUP_PHASES, GroupPhase

if TYPE_CHECKING:
    from .design import CentralDesign

__all__ = ["Coordinator", "Member", "Group", "range_assignment"]

_REBALANCING = (GroupPhase.STOPPING, GroupPhase.STARTING, GroupPhase.BACKOFF)


def range_assignment(members: dict[str, tuple[str, ...]], partitions: dict[str, int]
                     ) -> dict[str, list[Partition]]:
    """Kafka 0.8's range assignment (`RangeAssignor`), one stream per consumer: per topic,
    consumers sorted as strings, n = P // C partitions each, the first P % C one more."""
    out: dict[str, list[Partition]] = {m: [] for m in members}
    for topic in sorted({t for ts in members.values() for t in ts}):
        consumers = sorted(m for m, ts in members.items() if topic in ts)
        count = partitions.get(topic, 0)
        n, extra = divmod(count, len(consumers))
        for i, m in enumerate(consumers):
            start = n * i + min(i, extra)
            out[m].extend((topic, p) for p in range(start, start + n + (1 if i < extra else 0)))
    return out


@dataclass
class Member:
    """The coordinator's view of one registered consumer (in memory only)."""

    consumer_id: str
    group: str
    topics: tuple[str, ...]
    session_timeout_ms: int
    auto_commit: bool
    conn: Connection
    alive: bool = True
    outstanding: bool = False
    missed: int = 0
    owned: set[Partition] = field(default_factory=set)
    last_reported_offsets: dict[Partition, int] = field(default_factory=dict)
    ping_timer: TimerHandle | None = None


@dataclass
class Group:
    group_id: str
    phase: GroupPhase = GroupPhase.STABLE
    members: dict[str, Member] = field(default_factory=dict)
    generation: int = 0
    attempt: int = 0
    rebalance_id: int = 0
    snapshot: tuple[str, ...] = ()
    snapshot_members: dict[str, Member] = field(default_factory=dict)
    awaiting: set[str] = field(default_factory=set)
    collected_offsets: dict[Partition, int] = field(default_factory=dict)
    target: dict[str, list[Partition]] = field(default_factory=dict)
    owners: dict[Partition, str] = field(default_factory=dict)
    pending: bool = False
    queued: bool = False
    timer: TimerHandle | None = None


class Coordinator:
    """The consumer coordinator on one broker, from its election (C17) to the broker's death."""

    def __init__(self, design: CentralDesign, broker_id: int) -> None:
        self.design = design
        self.config = design.config
        self.scheduler = design.scheduler
        self.network = design.network
        self.zk = design.zk
        self.broker_id = broker_id
        self.log = LogContext(design.trace, f"coordinator-{broker_id}",
                              f"[ConsumerCoordinator {broker_id}]: ")
        self.groups: dict[str, Group] = {}
        self.by_conn: dict[int, Member] = {}
        self.rebalance_queue: deque[str] = deque()
        self.handling: set[str] = set()
        self.topic_index: dict[str, set[str]] = {}
        self.partitions: dict[str, int] = {}
        self.offsets_cache: dict[tuple[str, Partition], int] = {}
        self.active = False
        self._dispatch_soon = False
        self._timers: list[TimerHandle] = []

    # -- C17: startup, shutdown ----------------------------------------------------------------

    def start(self) -> None:
        """C17: read topics, groups, ownership and offsets from ZooKeeper; watch the topics;
        no members yet (nobody is connected): wait for registrations."""
        self.active = True
        for topic in self.zk.children("/brokers/topics"):
            self.partitions[topic] = int(self.zk.get(f"/brokers/topics/{topic}",  # type: ignore
                                                     watch=self._topic_changed))
        for g in self.zk.children("/consumers"):
            if g == "coordinator":
                continue
            group = self.groups[g] = Group(g)
            owned = self.zk.get(f"/consumers/{g}/owners")
            if isinstance(owned, dict):
                group.generation = owned["generation"]
                group.owners = dict(owned["owners"])
            for consumer in self.zk.children(f"/consumers/{g}/subscriptions"):
                for t in self.zk.get(f"/consumers/{g}/subscriptions/{consumer}"):  # type: ignore
                    self.topic_index.setdefault(t, set()).add(g)
        self.log.log("CC-ELECTED", groups=len(self.groups), topics=len(self.partitions))
        self._timers.append(self.scheduler.call_later(
            self.config.offsets_flush_interval_ms, self._flush, name="central-offsets-flush"))

    def stop(self) -> None:
        """The broker died: every timer stops, the in-memory state is gone."""
        self.active = False
        for t in self._timers:
            t.cancel()
        for group in self.groups.values():
            if group.timer is not None:
                group.timer.cancel()
            for m in group.members.values():
                if m.ping_timer is not None:
                    m.ping_timer.cancel()

    # -- requests ------------------------------------------------------------------------------

    def receive(self, conn: Connection, msg: Message) -> None:
        if not self.active:
            return
        if msg.kind == "RegisterConsumer":
            self._register(conn, msg)
            return
        m = self.by_conn.get(conn.id)
        if m is None or not m.alive:
            return                      # a reply on a socket of a member failed meanwhile
        if msg.kind == "PingResponse":
            self._ping_response(m, msg)
        elif msg.kind == "StopFetcherResponse":
            self._stop_response(m, msg)
        elif msg.kind == "StartFetcherResponse":
            self._start_response(m, msg)

    def disconnected(self, conn: Connection) -> None:
        """C15: the consumer closed its socket (or sent on a socket we had closed)."""
        m = self.by_conn.get(conn.id)
        if self.active and m is not None and m.alive and self.config.disconnect_is_failure:
            self.fail(m, "socket closed")

    def _register(self, conn: Connection, msg: Message) -> None:
        g, cid = msg["group"], msg["consumer"]
        timeout = msg["session_timeout_ms"]
        reason = None
        if not (self.config.min_session_timeout_ms <= timeout
                <= self.config.max_session_timeout_ms):
            reason = (f"session timeout {timeout} ms outside [{self.config.min_session_timeout_ms}"
                      f", {self.config.max_session_timeout_ms}]")
        elif not msg["topics"]:
            reason = "empty subscription"
        elif (old := self.groups.get(g)) is not None and cid in old.members:
            reason = f"consumer id {cid} is held by a live member"
        if reason is not None:                                          # C2
            self.log.log("CC-REJECTED", member=cid, group=g, reason=reason)
            self.network.send_to_consumer(conn, Message("RegisterConsumerResponse",
                                                        {"ok": False, "reason": reason}))
            self.network.close_by_broker(conn)
            return
        group = self.groups.get(g)                                      # C1
        if group is None:
            group = self.groups[g] = Group(g)
        topics = tuple(msg["topics"])
        m = Member(cid, g, topics, timeout, msg["auto_commit"], conn)
        group.members[cid] = m
        self.by_conn[conn.id] = m
        self.zk.set(f"/consumers/{g}/subscriptions/{cid}", topics)
        for t in topics:
            self.topic_index.setdefault(t, set()).add(g)
        self.log.log("CC-REGISTERED", member=cid, group=g, session_ms=timeout,
                     topics=",".join(topics))
        self.network.send_to_consumer(conn, Message("RegisterConsumerResponse", {"ok": True}))
        self._arm_ping(m)
        self.request_rebalance(g, f"consumer {cid} registered")

    # -- C3-C5: pings --------------------------------------------------------------------------

    def _arm_ping(self, m: Member) -> None:
        m.ping_timer = self.scheduler.call_later(
            self.config.ping_interval_for(m.session_timeout_ms), self._ping_tick, m,
            name=f"central-ping {m.consumer_id}")

    def _ping_tick(self, m: Member) -> None:
        if not m.alive or not self.active:
            return
        group = self.groups[m.group]
        if self.config.pause_pings_during_rebalance and group.phase in _REBALANCING:
            self._arm_ping(m)
            return
        if m.outstanding:                                               # C3
            m.missed += 1
            self.log.log("CC-PING-MISSED", member=m.consumer_id, group=m.group,
                         missed=m.missed, max_missed=self.config.ping_max_missed)
            if m.missed >= self.config.ping_max_missed:
                self.fail(m, f"{m.missed} pings unanswered")
                return
        m.outstanding = True                                            # C4
        self.log.log("CC-PING", member=m.consumer_id, group=m.group)
        error = "REBALANCE_FAILED" if group.phase is GroupPhase.REBALANCE_FAILED else None
        self.network.send_to_consumer(m.conn, Message("Ping", {"group": m.group,
                                                               "group_error": error}))
        self._arm_ping(m)

    def _ping_response(self, m: Member, msg: Message) -> None:          # C5
        m.outstanding = False
        m.missed = 0
        for tp, offset in msg["offsets"].items():
            owned = tp in m.owned
            self.design.offset_reported(m.group, m.consumer_id, tp, offset, owned, owned)
            if owned:                            # [kit choice] offsets of others ignored
                m.last_reported_offsets[tp] = offset
                self.offsets_cache[(m.group, tp)] = offset

    # -- C14: failing a member -----------------------------------------------------------------

    def fail(self, m: Member, reason: str, *, from_timer: bool = False) -> None:
        if not m.alive:
            return
        m.alive = False
        group = self.groups[m.group]
        del group.members[m.consumer_id]
        if m.ping_timer is not None:
            m.ping_timer.cancel()
        m.owned = set()
        self.log.log("CC-FAILED", member=m.consumer_id, group=m.group, reason=reason)
        if self.config.close_on_fail:
            self.network.close_by_broker(m.conn)
        if from_timer:
            return
        waiting_on_it = group.phase in (GroupPhase.STOPPING, GroupPhase.STARTING) \
            and m.consumer_id in group.awaiting
        if not waiting_on_it:
            self.request_rebalance(m.group, f"consumer {m.consumer_id} failed")
        elif self.config.fail_fast:
            self._retry_or_give_up(group, backoff_ms=0)

    # -- C6-C9: triggers and the queue ---------------------------------------------------------

    def request_rebalance(self, g: str, reason: str) -> None:
        group = self.groups[g]
        if group.phase in _REBALANCING:                                 # C8
            group.pending = True
            self.log.log("CC-PENDING", group=g, state=group.phase.value, reason=reason)
            return
        if not group.queued:                                            # C7
            group.queued = True
            self.rebalance_queue.append(g)
            self.log.log("CC-QUEUED", group=g, reason=reason)
            self._schedule_dispatch()

    def _schedule_dispatch(self) -> None:
        if not self._dispatch_soon:
            self._dispatch_soon = True
            self.scheduler.call_soon(self._dispatch, name="central-rebalance-handler")

    def _dispatch(self) -> None:                                        # C9
        self._dispatch_soon = False
        if not self.active:
            return
        while self.rebalance_queue and len(self.handling) < self.config.rebalance_handler_threads:
            g = self.rebalance_queue.popleft()
            group = self.groups[g]
            group.queued = False
            group.pending = False
            self.handling.add(g)
            group.attempt = 1
            self._start_attempt(group)

    def _release(self, group: Group) -> None:
        self.handling.discard(group.group_id)
        if self.rebalance_queue:
            self._schedule_dispatch()

    def _topic_changed(self, path: str, event: str) -> None:           # C6
        if not self.active:
            return
        topic = path.rsplit("/", 1)[1]
        count = self.zk.get(path, watch=self._topic_changed)
        if count is None or count == self.partitions.get(topic):
            return
        self.partitions[topic] = int(count)  # type: ignore[arg-type]
        groups = sorted(self.topic_index.get(topic, ()))
        self.log.log("CC-TOPIC", topic=topic, count=count, groups=",".join(groups))
        for g in groups:
            if g in self.groups:
                self.request_rebalance(g, f"partitions of {topic} changed")

    # -- C10-C13: one rebalance ----------------------------------------------------------------

    def _move(self, group: Group, phase: GroupPhase) -> None:
        GROUP_PHASES.check(group.phase, phase)
        group.phase = phase
        self.design.trace.record("central_group_phase", self.log.source, "DEBUG",
                                 {"group": group.group_id, "phase": phase.value})

    def _start_attempt(self, group: Group) -> None:                     # C10
        group.rebalance_id += 1
        group.snapshot = tuple(sorted(m for m, mm in group.members.items() if mm.alive))
        group.snapshot_members = {c: group.members[c] for c in group.snapshot}
        group.collected_offsets = {}
        if not group.snapshot:
            self._move(group, GroupPhase.STABLE)
            group.target, group.owners = {}, {}
            self.log.log("CC-EMPTY", group=group.group_id)
            self._release(group)
            return
        self.design.count_round(group.group_id)
        group.awaiting = set(group.snapshot)
        self._move(group, GroupPhase.STOPPING)
        self.log.log("CC-ATTEMPT", attempt=group.attempt,
                     max_attempts=self.config.rebalance_max_retries, group=group.group_id,
                     members=",".join(group.snapshot))
        for cid in group.snapshot:
            self.network.send_to_consumer(group.snapshot_members[cid].conn, Message("StopFetcher", {
                "group": group.group_id, "rebalance_id": group.rebalance_id,
                "attempt": group.attempt}))
        self._arm_reply_timer(group)

    def _arm_reply_timer(self, group: Group) -> None:
        if group.timer is not None:
            group.timer.cancel()
        timeout = self._reply_timeout(group)
        group.timer = self.scheduler.call_later(timeout, self._reply_timeout_fired, group,
                                                group.rebalance_id, group.phase,
                                                name=f"central-reply-timeout {group.group_id}")

    def _reply_timeout(self, group: Group) -> int:
        if self.config.rebalance_reply_timeout_ms is not None:
            return self.config.rebalance_reply_timeout_ms
        sessions = [m.session_timeout_ms for m in group.snapshot_members.values()]
        return max(sessions, default=self.config.session_timeout_ms)

    def _tag_ok(self, group: Group, msg: Message) -> bool:
        return not self.config.tag_rebalance_messages or msg["rebalance_id"] == group.rebalance_id

    def _stop_response(self, m: Member, msg: Message) -> None:          # C11
        group = self.groups[m.group]
        if group.phase is not GroupPhase.STOPPING or m.consumer_id not in group.awaiting \
                or not self._tag_ok(group, msg):
            return
        for tp, offset in msg["offsets"].items():
            # what it last started (it keeps `owned` until its next StartFetcher reply, so a
            # retry still takes its offsets); untagged, a late reply may speak for another
            # attempt's partitions and is believed (the draft's ambiguity)
            if tp in m.owned or not self.config.tag_rebalance_messages:
                self.design.offset_reported(m.group, m.consumer_id, tp, offset, True,
                                            tp in m.owned)
                group.collected_offsets[tp] = offset
                m.last_reported_offsets[tp] = offset
        group.awaiting.discard(m.consumer_id)
        if not group.awaiting:
            self._assign(group)

    def _start_offset(self, group: Group, tp: Partition) -> int:
        """collected > cache > ZooKeeper > -1 (the consumer's auto.offset.reset)."""
        g = group.group_id
        if tp in group.collected_offsets:
            return group.collected_offsets[tp]
        if (g, tp) in self.offsets_cache:
            return self.offsets_cache[(g, tp)]
        stored = self.zk.get(f"/consumers/{g}/offsets/{tp[0]}/{tp[1]}")
        return -1 if stored is None else int(stored)  # type: ignore[arg-type]

    def _assign(self, group: Group) -> None:
        g = group.group_id
        subs = {c: group.snapshot_members[c].topics for c in group.snapshot}
        group.target = range_assignment(subs, self.partitions)
        starts = {tp: self._start_offset(group, tp) for c in group.snapshot
                  for tp in group.target[c]}
        for tp, offset in starts.items():
            if offset >= 0:
                self.offsets_cache[(g, tp)] = offset
                self.zk.set(f"/consumers/{g}/offsets/{tp[0]}/{tp[1]}", offset)
        self.zk.set(f"/consumers/{g}/owners", {
            "generation": group.generation + 1,
            "owners": {tp: c for c in group.snapshot for tp in group.target[c]}})
        group.awaiting = set(group.snapshot)
        self._move(group, GroupPhase.STARTING)
        self.log.log("CC-ASSIGN", group=g, assignment=_show(group.target))
        for c in group.snapshot:
            if not group.snapshot_members[c].alive:
                continue                # failed since it stopped: the reply timer handles it
            self.network.send_to_consumer(group.snapshot_members[c].conn, Message("StartFetcher", {
                "group": g, "rebalance_id": group.rebalance_id, "attempt": group.attempt,
                "assignment": {tp: starts[tp] for tp in group.target[c]}}))
        self._arm_reply_timer(group)

    def _start_response(self, m: Member, msg: Message) -> None:         # C12
        group = self.groups[m.group]
        if group.phase is not GroupPhase.STARTING or m.consumer_id not in group.awaiting \
                or not self._tag_ok(group, msg):
            return
        group.awaiting.discard(m.consumer_id)
        m.owned = set(group.target.get(m.consumer_id, ()))
        if group.awaiting:
            return
        if group.timer is not None:
            group.timer.cancel()
        self._move(group, GroupPhase.STABLE)
        group.generation += 1
        group.owners = {tp: c for c in group.snapshot for tp in group.target[c]}
        self.log.log("CC-STABLE", group=group.group_id, generation=group.generation)
        self._release(group)
        if group.pending:
            group.pending = False
            self.request_rebalance(group.group_id, "requested during the rebalance")

    def _reply_timeout_fired(self, group: Group, rebalance_id: int, phase: GroupPhase) -> None:
        if not self.active or group.rebalance_id != rebalance_id or group.phase is not phase \
                or not group.awaiting:
            return
        late = sorted(group.awaiting)                                   # C13
        timeout = self._reply_timeout(group)
        request = "StopFetcher" if phase is GroupPhase.STOPPING else "StartFetcher"
        self.log.log("CC-TIMEOUT", attempt=group.attempt, group=group.group_id, ms=timeout,
                     members=",".join(late))
        for cid in late:
            m = group.members.get(cid)
            if m is not None:
                self.fail(m, f"no reply to {request} within {timeout} ms", from_timer=True)
        self._retry_or_give_up(group, self.config.rebalance_backoff_ms)

    def _retry_or_give_up(self, group: Group, backoff_ms: int) -> None:
        if group.timer is not None:
            group.timer.cancel()
        group.awaiting = set()
        if group.attempt >= self.config.rebalance_max_retries:
            self._move(group, GroupPhase.REBALANCE_FAILED)
            self.log.log("CC-REBALANCE-FAILED", group=group.group_id, attempts=group.attempt)
            group.pending = False
            self._release(group)
            if self.config.rebalance_failed_retry_ms is not None:       # C18
                group.timer = self.scheduler.call_later(
                    self.config.rebalance_failed_retry_ms, self._failed_retry, group,
                    name=f"central-failed-retry {group.group_id}")
            return
        group.attempt += 1
        self._move(group, GroupPhase.BACKOFF)
        group.timer = self.scheduler.call_later(backoff_ms, self._backoff_over, group,
                                                group.rebalance_id,
                                                name=f"central-backoff {group.group_id}")

    def _backoff_over(self, group: Group, rebalance_id: int) -> None:
        if self.active and group.phase is GroupPhase.BACKOFF and group.rebalance_id == rebalance_id:
            self.log.log("CC-BACKOFF", group=group.group_id, attempt=group.attempt,
                         max_attempts=self.config.rebalance_max_retries)
            self._start_attempt(group)

    def _failed_retry(self, group: Group) -> None:
        if self.active and group.phase is GroupPhase.REBALANCE_FAILED:
            self.request_rebalance(group.group_id, "rebalance.failed.retry.ms passed")

    # -- C16: offsets flush --------------------------------------------------------------------

    def _flush(self) -> None:
        if not self.active:
            return
        for (g, tp), offset in sorted(self.offsets_cache.items()):
            self.zk.set(f"/consumers/{g}/offsets/{tp[0]}/{tp[1]}", offset)
        self.log.log("CC-FLUSH", count=len(self.offsets_cache))
        self._timers = [self.scheduler.call_later(
            self.config.offsets_flush_interval_ms, self._flush, name="central-offsets-flush")]


def _show(target: dict[str, list[Partition]]) -> str:
    """`consumer-1=[t-0,t-1] consumer-2=[...]`, in consumer order."""
    return " ".join(f"{c}=[{','.join(f'{t}-{p}' for t, p in tps)}]"
                    for c, tps in sorted(target.items()))
