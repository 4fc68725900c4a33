"""A classic-protocol consumer on virtual time (the Java client's `ConsumerCoordinator`).

What runs, and where it runs in the Java client:

* the application's poll loop (`poll()` every `processing_ms`): finds the coordinator, joins the
  group when a rejoin is needed, auto-commits, consumes from its partitions (a cooperative member
  keeps consuming what it owns while a rebalance is in flight, an eager one has revoked it all);
* the heartbeat thread: heartbeats every `heartbeat.interval.ms` while COMPLETING_REBALANCE or
  STABLE, notices the coordinator's silence (client-side session timer) and the application's
  (`max.poll.interval.ms`: it then leaves the group);
* responses are handled as the Java client handles each error: rejoin, reset the generation,
  rediscover the coordinator, or give up (fatal).

Every step is a trace event with the Java client's log line (prefix
`[Consumer clientId=..., groupId=...]`). Faults: crash, GC pause, dropped heartbeats, slow poll,
cut off from the network.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..assignors import RebalanceProtocol, Subscription, select_protocol
from ..clock import Scheduler, TimerLane
from ..errors import Errors
from ..group.api import (HeartbeatRequest, HeartbeatResponse, JoinGroupRequest,
                         JoinGroupResponse, LeaveGroupRequest, LeaveGroupResponse,
                         MemberIdentity, OffsetCommitRequest, OffsetCommitResponse,
                         OffsetFetchRequest, OffsetFetchResponse, PartitionData, RequestContext,
                         SyncGroupRequest, SyncGroupResponse)
from ..group.classic import CONSUMER_PROTOCOL_TYPE, Protocol
from ..group.protocol import (ConsumerProtocolAssignment, ConsumerProtocolSubscription,
                              StickyAssignorUserData)
from ..kafka_config import check_flag
from ..logs.layout import level_number
from ..topic import TopicPartition
from ..trace import LogContext
from .config import ConsumerConfig
from .member import MEMBER_STATES, NO_GENERATION, Generation, MemberState
from .styles import kafka_python_log

if TYPE_CHECKING:
    from ..transport import ClientHost, Transport

__all__ = ["Consumer", "HeartbeatWakeups", "ListenerCall"]

# Both clients write their heartbeat lines (sent, answered) at DEBUG: below the trace's level
# the consumer does not build their fields at all (two lines per heartbeat on the hot path).
_HEARTBEAT_LINE_LEVEL = level_number("DEBUG")
# Enum members as module constants: `MemberState.STABLE` is an attribute lookup through the
# enum's metaclass (~180 ns on 3.11), a module global ~20 ns; a tuple's `in` tests identity first.
_STABLE = MemberState.STABLE
_NONE = Errors.NONE
_UNJOINED = MemberState.UNJOINED
_SYNCING_OR_STABLE = (MemberState.COMPLETING_REBALANCE, MemberState.STABLE)
_COOPERATIVE = RebalanceProtocol.COOPERATIVE

_FATAL_JOIN = (Errors.INCONSISTENT_GROUP_PROTOCOL, Errors.INVALID_SESSION_TIMEOUT,
               Errors.INVALID_GROUP_ID, Errors.GROUP_AUTHORIZATION_FAILED,
               Errors.GROUP_MAX_SIZE_REACHED)


# How many rebalance-listener callbacks a consumer remembers (`Consumer.listener_calls`): a
# lesson's run makes a few dozen; a run of days with a rebalance every few minutes would keep
# thousands for nothing (the trace has the J-ASSIGNED/J-REVOKE/J-LOST lines of every one).
LISTENER_HISTORY = 256


@dataclass(frozen=True)
class ListenerCall:
    """One rebalance-listener callback, as the application saw it."""

    ts: int
    callback: str  # onPartitionsRevoked / onPartitionsAssigned / onPartitionsLost
    partitions: tuple[TopicPartition, ...]
    generation: int


def _tp_order(tp: TopicPartition) -> tuple[str, int]:
    """TopicPartition's order as a plain tuple (sorting compares tuples in C)."""
    return (tp.topic, tp.partition)


def _by_partition(item: tuple[TopicPartition, int]) -> tuple[str, int]:
    return (item[0].topic, item[0].partition)


def _check_int(what: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} is a whole number of milliseconds, got {value!r}")


def _join_tps(tps: Any) -> str:
    return ", ".join(str(tp) for tp in sorted(tps))


class _OffsetCommitCall:
    """An OffsetCommit on the network: the call the coordinator runs when it arrives and what
    the consumer does with the answer, in one object (every member auto-commits at about the
    same moment; two closures and their cells would be seven objects per commit)."""

    __slots__ = ("consumer", "request", "offsets")

    def __init__(self, consumer: Consumer, request: OffsetCommitRequest,
                 offsets: dict[TopicPartition, int]) -> None:
        self.consumer = consumer
        self.request = request
        self.offsets = offsets

    def __call__(self, service: Any) -> Any:
        return service.commit_offsets(self.consumer.context, self.request)

    def answered(self, response: OffsetCommitResponse | None, error: Errors | None) -> None:
        self.consumer._on_commit(response, error, self.offsets)


class HeartbeatWakeups:
    """Where a cluster's consumers arm the heartbeat thread's wake-up while a heartbeat is in
    flight: at the session or poll deadline, unless the answer comes first, which it nearly
    always does, cancelling the wake-up.

    As a `TimerHandle`, each cancelled wake-up would sit in the scheduler's heap until its
    deadline, ~40 s after the answer (a hundred members heartbeating leave thousands), and
    every push, pop and garbage collection would walk past it. Here a wake-up is a number in
    a `TimerLane` (same firing order as `call_at`, cancelling touches no heap) and two dicts;
    an int is no object the garbage collector tracks, so a burst of heartbeats leaves nothing
    for it to walk."""

    def __init__(self, scheduler: Scheduler) -> None:
        self._armed: dict[int, Consumer] = {}  # wake-ups that still stand; live(n) in C
        # whom each wake-up wakes: the lane disarms a wake-up (pops it from _armed) just
        # before it runs it, so _fire finds the consumer here
        self._owners: dict[int, Consumer] = {}
        self._numbers = itertools.count(1)
        self.lane = TimerLane(scheduler, self._fire, self._armed.__contains__,
                              self._armed.pop, self._name)

    def arm(self, consumer: Consumer, delay_ms: int) -> int:
        """Wake `consumer`'s heartbeat thread after `delay_ms`; its number, or 0 when the lane
        refuses (a deadline before the lane's last one: the caller uses `call_at`)."""
        n = next(self._numbers)
        if not self.lane.arm(delay_ms, n):
            return 0
        self._armed[n] = self._owners[n] = consumer
        return n

    def cancel(self, n: int) -> None:
        self._armed.pop(n, None)
        self._owners.pop(n, None)

    def pending(self, n: int) -> bool:
        return n in self._armed

    def _fire(self, n: int) -> None:
        consumer = self._owners.pop(n)
        consumer._hb_wakeup = 0
        consumer._heartbeat_tick()

    def _name(self, n: int) -> str:
        return self._owners[n]._heartbeat_name


@dataclass
class _Inflight:
    find: bool = False
    join: bool = False
    sync: bool = False
    heartbeat: bool = False
    commit: bool = False
    fetch: bool = False


class Consumer:
    def __new__(cls, *args: Any, **kwargs: Any) -> Consumer:
        """A `group.protocol=consumer` config makes an `AsyncConsumer` (KIP-848), as Kafka's
        `KafkaConsumer` picks its delegate by group.protocol (`ConsumerDelegateCreator`).
        (No arguments: `copy` making an instance to fill in.)"""
        config = args[1] if len(args) > 1 else kwargs.get("config")
        if cls is Consumer and getattr(config, "group_protocol", "classic") == "consumer":
            from .async_consumer import AsyncConsumer
            return super().__new__(AsyncConsumer)
        return super().__new__(cls)

    def __init__(self, cluster: ClientHost, config: ConsumerConfig, topics: tuple[str, ...], *,
                 processing_ms: int = 100) -> None:
        """`cluster` is where the consumer runs (`transport.ClientHost`: a `Cluster`); its
        requests go through `cluster.network`, a `transport.Transport`, to the brokers'
        group coordinator endpoints, so the consumer never knows what carries them."""
        if not topics:
            raise ValueError(f"consumer {config.client_id} must subscribe to at least one topic")
        unknown = [t for t in topics if t not in cluster.topics]
        if unknown:
            has = (f"the cluster has {sorted(cluster.topics)}" if cluster.topics else
                   "the cluster has no data topics (Cluster(topics={'orders': 6}) makes one)")
            raise ValueError(f"unknown topic(s) {unknown}; {has}")
        _check_int("processing_ms", processing_ms)
        if processing_ms < 0:
            raise ValueError(f"processing_ms must be >= 0, got {processing_ms}")
        self.cluster = cluster
        self.transport: Transport = cluster.network
        self.config = config
        self.topics = tuple(topics)
        self.processing_ms = processing_ms
        self.scheduler = cluster.scheduler
        self.name = config.client_id
        self.log = LogContext(cluster.trace, f"client-{config.client_id}",
                              f"[Consumer clientId={config.client_id}, groupId={config.group_id}] ")
        self.assignors = config.assignors()
        self.protocol = select_protocol(self.assignors)
        # membership
        self.state = MemberState.UNJOINED
        self.generation = NO_GENERATION
        self.coordinator: int | None = None
        self.rejoin_needed = True
        self.rejoin_reason = ""
        self.needs_join_prepare = True
        self.owned: set[TopicPartition] = set()
        # the last LISTENER_HISTORY callbacks (a long run's rebalances would otherwise pile up)
        self.listener_calls: deque[ListenerCall] = deque(maxlen=LISTENER_HISTORY)
        self.fatal: Errors | None = None
        # consumption
        self.positions: dict[TopicPartition, int] = {}
        self.committed: dict[TopicPartition, int] = {}
        self.consumed = 0
        # called with (tp, start, end) when records [start, end) reach the application (set by
        # views that count what was processed twice, e.g. `eras.classic`); None: nobody asks
        self.on_records: Callable[[TopicPartition, int, int], None] | None = None
        # timers (virtual ms)
        self.last_poll = 0
        self.last_heartbeat_sent = 0
        self.last_heartbeat_received = 0
        self.next_auto_commit = 0
        self.inflight = _Inflight()
        # the last answer the network delivered (an exchange of `Cluster.network`, or a
        # FindCoordinator answer), for views; set by the network, never read here
        self.last_answer: Any = None
        self.running = False
        self.crashed = False
        self.closed = False
        self.starts_at: int | None = None  # set when a restart schedules the start
        self.paused_until = 0
        self.drop_heartbeats = False
        self._hb_handle: Any = None
        self._poll_handle: Any = None
        self._context: RequestContext | None = None
        self._kafka_python = config.client_style == "kafka-python"
        self._poll_name = f"poll {self.name}"
        self._heartbeat_name = f"heartbeat {self.name}"
        # The poll loop's and heartbeat thread's callbacks, bound once: a bound method made per
        # timer would live in the scheduler's heap until the timer runs.
        self._poll_callback = self._poll
        self._heartbeat_callback = self._heartbeat_tick
        # the heartbeat thread's next wake-up: a TimerHandle, or the number of an in-flight
        # wake-up in the cluster's HeartbeatWakeups (0: none)
        self._wakeups: HeartbeatWakeups | None = getattr(cluster, "heartbeat_wakeups", None)
        self._hb_wakeup = 0
        # work held back by a pause: (handle, callback, args), see _deferred and resume
        self._held: list[tuple[Any, Callable[..., None], tuple[Any, ...]]] = []
        self._heartbeat_request: HeartbeatRequest | None = None
        # (generation, request, call, on_response) of the heartbeats this generation sends
        self._heartbeat_calls: tuple[Any, ...] | None = None
        # the sticky assignor's memory of the last assignment (Java's StickyAssignor keeps it
        # in the assignor: memberAssignment and generation)
        self._sticky_memory: StickyAssignorUserData | None = None
        self._state_listeners: list[Callable[[Consumer, MemberState, MemberState], None]] = []

    # -- identity and views --------------------------------------------------------------------

    @property
    def member_id(self) -> str:
        return self.generation.member_id

    @property
    def context(self) -> RequestContext:
        context = self._context
        if context is None:
            index = self.cluster.client_index(self)
            context = RequestContext(self.config.client_id, f"/10.0.0.{index}")
            if index:  # registered: its place among the cluster's consumers never changes
                self._context = context
        return context

    def node(self) -> str:
        b = self.coordinator
        if b is None:
            return "null"
        return f"{self.cluster.broker_host(b)} (id: {2147483647 - b} rack: null)"

    def describe(self) -> dict[str, Any]:
        return {"client": self.name, "state": self.state.name,
                "generation": self.generation.generation_id, "member_id": self.member_id,
                "coordinator": self.coordinator, "assignment": sorted(str(t) for t in self.owned),
                "last_heartbeat_ms": self.last_heartbeat_received,
                "alive": self.running and not self.crashed,
                "paused": self.scheduler.now < self.paused_until}

    def on_state_change(self, callback: Callable[[Consumer, MemberState, MemberState], None]
                        ) -> None:
        self._state_listeners.append(callback)

    def _transition(self, new: MemberState) -> None:
        if new is self.state and new is not MemberState.PREPARING_REBALANCE:
            return
        MEMBER_STATES.check(self.state, new)
        old, self.state = self.state, new
        self.log.event("member_state", level="INFO", client=self.name, old=old.name,
                       new=new.name, generation=self.generation.generation_id,
                       member=self.member_id)
        for callback in self._state_listeners:
            callback(self, old, new)

    def _log(self, java_id: str, fields: dict[str, Any], **context: Any) -> None:
        """Record the event of the Java client's line `java_id` (with `fields`), worded as this
        consumer's `client_style` says; `context` gives kafka-python's wording what it needs."""
        if self._kafka_python:
            kafka_python_log(self, java_id, fields, context)
        else:
            self.log.log(java_id, **fields)

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        if self.running:
            raise RuntimeError(f"consumer {self.name} is already running")
        if self.crashed:
            raise RuntimeError(f"consumer {self.name} crashed; cluster.restart_consumer("
                               f"{self.name!r}) starts a new process")
        if self.closed:
            raise RuntimeError(f"consumer {self.name} was closed; cluster.restart_consumer("
                               f"{self.name!r}) starts a new process")
        self.running = True
        self.last_poll = self.scheduler.now
        self._poll_handle = self.scheduler.call_soon(self._poll, name=f"poll {self.name}")

    def close(self) -> None:
        """Graceful shutdown: commit if auto-commit is on, leave the group (dynamic members)."""
        self._require_alive("close")
        if self.config.enable_auto_commit and self.state is _STABLE:
            self._commit(self._consumed_offsets(), auto=True)
        self._maybe_leave_group("the consumer is being closed")
        self._stop()
        self.closed = True

    def _stop(self) -> None:
        self.running = False
        if self._poll_handle is not None:
            self._poll_handle.cancel()
            self._poll_handle = None
        self._disarm_heartbeat()

    def _require_alive(self, what: str) -> None:
        if self.crashed:
            raise RuntimeError(f"can't {what} consumer {self.name}: it has crashed")
        if self.closed:
            raise RuntimeError(f"can't {what} consumer {self.name}: it was closed and has left "
                               f"the group (cluster.restart_consumer({self.name!r}) starts it "
                               f"again)")
        if not self.running:
            when = (f"; it starts at {self.starts_at} ms, run the cluster until then"
                    if self.starts_at is not None and self.starts_at >= self.scheduler.now
                    else "; start it first")
            raise RuntimeError(f"can't {what} consumer {self.name}: it is not running yet{when}")

    # -- faults --------------------------------------------------------------------------------

    def crash(self) -> None:
        """The process dies: no LeaveGroup, nothing more is sent; the broker finds out through
        the session timeout."""
        self._require_alive("crash")
        self.crashed = True
        self._stop()
        self.log.event("consumer_crashed", level="INFO", client=self.name)

    def pause(self, duration_ms: int) -> None:
        """A stop-the-world pause (GC): no poll, no heartbeat, responses wait until it ends."""
        self._require_alive("pause")
        _check_int("a pause", duration_ms)
        if duration_ms <= 0:
            raise ValueError(f"a pause must last more than 0 ms, got {duration_ms}")
        self.paused_until = max(self.paused_until, self.scheduler.now + duration_ms)
        self.log.event("consumer_paused", level="INFO", client=self.name, until=self.paused_until)

    def set_processing_ms(self, processing_ms: int) -> None:
        """Time the application spends between two polls (slow processing)."""
        self._require_alive("slow the poll of")
        _check_int("processing_ms", processing_ms)
        if processing_ms < 0:
            raise ValueError(f"processing_ms must be >= 0, got {processing_ms}")
        self.processing_ms = processing_ms

    def set_drop_heartbeats(self, drop: bool) -> None:
        self._require_alive("drop the heartbeats of")
        check_flag("drop", drop)
        self.drop_heartbeats = drop

    def resume(self) -> None:
        """End a stop-the-world pause now (a learner's "the GC finished early"): the work the
        pause held back (polls, heartbeat ticks, answers, each waiting for the pause's end as a
        "resume <name>" callback) runs now, in the order it would have run."""
        self._require_alive("resume")
        scheduler = self.scheduler
        if scheduler.now >= self.paused_until:
            raise ValueError(f"consumer {self.name} is not paused; pause it first")
        self.paused_until = scheduler.now
        held = sorted((h.when, h.seq, h, fn, args) for h, fn, args in self._held
                      if h.pending)
        self._held = []
        for _, _, handle, fn, args in held:
            handle.cancel()
            scheduler.call_soon(fn, *args, name=handle.name)
        self.log.event("consumer_resumed", level="INFO", client=self.name)

    def _deferred(self, fn: Callable[..., None], *args: Any) -> bool:
        """Run later if the process is paused; True when deferred. Dead processes do nothing."""
        if self.crashed or not self.running:
            return True
        if self.scheduler._now < self.paused_until:
            handle = self.scheduler.call_at(self.paused_until, fn, *args,
                                            name=f"resume {self.name}")
            # kept for resume(): the held-back work, with what it runs
            self._held = [h for h in self._held if h[0].pending]
            self._held.append((handle, fn, args))
            return True
        return False

    # -- the poll loop -------------------------------------------------------------------------

    def _poll(self) -> None:
        self._poll_handle = None
        scheduler = self.scheduler
        now = scheduler._now
        if self.crashed or not self.running or now < self.paused_until:
            self._deferred(self._poll)
            return
        self.last_poll = now
        if self.fatal is None:
            if self.coordinator is not None and not self.rejoin_needed \
                    and self.state is _STABLE:
                # Stable: the coordinator part of poll() only auto-commits when due.
                if now >= self.next_auto_commit and self.config.enable_auto_commit:
                    self._maybe_auto_commit()
                owned = self.owned
                if len(owned) == 1:
                    # _consume() for one partition, written out (a member of a big group)
                    for tp in owned:
                        positions = self.positions
                        pos = positions.get(tp)
                        if pos is not None:
                            take = self.cluster.end_offset(tp) - pos
                            if take > 0:
                                budget = self.config.max_poll_records
                                if take > budget:
                                    take = budget
                                positions[tp] = pos + take
                                self.consumed += take
                                if self.on_records is not None:
                                    self.on_records(tp, pos, pos + take)
                else:
                    self._consume()
            else:
                self._coordinator_poll()
                self._consume()
        self._poll_handle = scheduler.call_later(self.processing_ms or 1, self._poll_callback,
                                                 name=self._poll_name)

    def _coordinator_poll(self) -> None:
        if self.coordinator is None:
            self._find_coordinator()
            return
        if self.rejoin_needed and not (self.inflight.join or self.inflight.sync):
            self._join_group()
        elif self.state is _STABLE:
            self._maybe_auto_commit()

    def _consume(self) -> None:
        if (self.state is not _STABLE or self.rejoin_needed) and (
                self.protocol is not _COOPERATIVE or self.state is _UNJOINED):
            # A rebalance (or a rejoin asked for): EAGER's onJoinPrepare revoked everything, so
            # nothing is fetchable until onPartitionsAssigned. COOPERATIVE revokes nothing there:
            # what the member owns stays assigned, and so fetchable (SubscriptionState
            # .isFetchable), while JoinGroup and SyncGroup are in flight, and KafkaConsumer.poll
            # keeps returning its records; only partitions revoked after the SyncGroup stop. An
            # UNJOINED member consumes nothing: its generation was reset and what it still holds
            # is about to be given away as lost.
            return
        budget = self.config.max_poll_records
        positions = self.positions
        end_offset = self.cluster.end_offset
        for tp in sorted(self.owned, key=_tp_order) if len(self.owned) > 1 else self.owned:
            pos = positions.get(tp)
            if pos is None:
                continue
            take = end_offset(tp) - pos
            if take > budget:
                take = budget
            if take > 0:
                self.positions[tp] = pos + take
                self.consumed += take
                if self.on_records is not None:
                    self.on_records(tp, pos, pos + take)
                budget -= take
            if budget <= 0:
                break

    # -- coordinator discovery -----------------------------------------------------------------

    def _find_coordinator(self) -> None:
        if self.inflight.find:
            return
        self.inflight.find = True
        self.transport.find_coordinator(self, self.config.group_id, self._on_find)

    def _on_find(self, broker: int | None, error: Errors | None) -> None:
        if self._deferred(self._on_find, broker, error):
            return
        self.inflight.find = False
        if error is None and broker is not None:
            self.coordinator = broker
            self.last_heartbeat_received = self.scheduler.now
            self._log("J-DISCOVER", {"node": self.node(), "client": self.name,
                                     "group": self.config.group_id, "broker": broker})
            self._coordinator_poll()

    def mark_coordinator_unknown(self, cause: str, disconnected: bool = False,
                                 error: Errors | None = None) -> None:
        if self.coordinator is not None:
            self._log("J-COORD-LOST", {"node": self.node(), "cause": cause,
                                       "disconnected": str(disconnected).lower()},
                      cause=cause, error=error)
            self.coordinator = None
            self.inflight = _Inflight(commit=self.inflight.commit)

    # -- join / sync ---------------------------------------------------------------------------

    def request_rejoin(self, reason: str, full_reason: str | None = None,
                       why: str | None = None) -> None:
        self._log("J-REQ-JOIN", {"reason": full_reason or reason}, why=why)
        self.rejoin_reason = reason
        self.rejoin_needed = True

    def _reset_generation(self, reason: str, reset_member_id: bool) -> None:
        self._log("J-RESET", {"member_id": "and member id " if reset_member_id else "",
                              "reason": reason})
        self._transition(MemberState.UNJOINED)
        self.generation = (NO_GENERATION if reset_member_id
                           else Generation(-1, self.generation.member_id, None))

    def _reset_state_and_rejoin(self, reason: str, reset_member_id: bool) -> None:
        self._reset_generation(reason, reset_member_id)
        self.request_rejoin(reason)
        self.needs_join_prepare = True

    def _on_join_prepare(self) -> None:
        """Before a JoinGroup: commit (auto-commit), then revoke (eager) or lose partitions."""
        if self.config.enable_auto_commit and self.generation.generation_id >= 0 and self.owned:
            self._commit(self._consumed_offsets(), auto=True)
        if self.generation.generation_id < 0 or not self.generation.member_id:
            if self.owned:
                self._log("J-GIVE-AWAY", {})
                self._lose(self.owned)
        elif self.protocol is RebalanceProtocol.EAGER and self.owned:
            self._revoke(set(self.owned))
        self.needs_join_prepare = False

    def _join_group(self) -> None:
        if self.needs_join_prepare:
            self._on_join_prepare()
        self._transition(MemberState.PREPARING_REBALANCE)
        self._log("J-REJOIN", {})
        owned = tuple(sorted(self.owned)) if self.protocol is RebalanceProtocol.COOPERATIVE \
            else ()
        subscription = ConsumerProtocolSubscription(
            topics=tuple(sorted(self.topics)), owned_partitions=owned,
            generation_id=self.generation.generation_id).encode()
        protocols = []
        for a in self.assignors:
            metadata = subscription
            if a.name == "sticky" and self._sticky_memory is not None:
                # Java's StickyAssignor.subscriptionUserData: the last assignment and its
                # generation (an eager member owns nothing any more when it rejoins)
                metadata = ConsumerProtocolSubscription(
                    topics=tuple(sorted(self.topics)), owned_partitions=owned,
                    generation_id=self.generation.generation_id,
                    user_data=self._sticky_memory.encode()).encode()
            protocols.append(Protocol(a.name, metadata))
        request = JoinGroupRequest(
            self.config.group_id, self.config.session_timeout_ms,
            self.config.max_poll_interval_ms, self.generation.member_id,
            CONSUMER_PROTOCOL_TYPE, tuple(protocols),
            self.config.group_instance_id, self.rejoin_reason or None)
        self.inflight.join = True
        sent = self.generation
        self.transport.send(self, self.coordinator, "JoinGroup",
                                  lambda svc: svc.join_group(self.context, request),
                                  lambda r, e: self._on_join(r, e, sent),
                                  timeout_ms=max(self.config.request_timeout_ms,
                                                 self.config.max_poll_interval_ms + 5000))

    def _on_join(self, response: JoinGroupResponse | None, net_error: Errors | None,
                 sent: Generation) -> None:
        if self._deferred(self._on_join, response, net_error, sent):
            return
        self.inflight.join = False
        if response is None:
            self.mark_coordinator_unknown(f"{net_error}", disconnected=True, error=net_error)
            return
        error = response.error
        if error is _NONE:
            if self.state is not MemberState.PREPARING_REBALANCE:
                return
            self.generation = Generation(response.generation_id, response.member_id,
                                         response.protocol_name)
            self._transition(MemberState.COMPLETING_REBALANCE)
            self._log("J-JOINED", {"generation": self.generation})
            self.last_heartbeat_sent = self.scheduler.now
            self.last_heartbeat_received = max(self.last_heartbeat_received, self.scheduler.now)
            self._arm_heartbeat()
            if response.leader == response.member_id:
                self._sync_group(self._perform_assignment(response))
            else:
                self._sync_group({})
            return
        if error is Errors.MEMBER_ID_REQUIRED:
            self.generation = Generation(-1, response.member_id, None)
            self.request_rejoin(f"need to re-join with the given member-id: "
                                f"{response.member_id}", why="member_id")
            self._join_group()
            return
        if error is Errors.COORDINATOR_LOAD_IN_PROGRESS:
            self._log("J-JOIN-LOADING", {"node": self.node()})
            self._retry_later()
            return
        if error in (Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION):
            self._log("J-JOIN-REJOIN", {"message": error.message, "generation": sent},
                      error=error)
            if self.generation == sent:
                self._reset_state_and_rejoin(f"encountered {error.name} from JOIN_GROUP "
                                             f"response", True)
            self._join_group()
            return
        if error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR):
            self._log("J-JOIN-COORD", {"message": error.message, "generation": sent},
                      error=error)
            self.mark_coordinator_unknown(error.name, error=error)
            self._rebalance_failed(error)
            return
        if error is Errors.REBALANCE_IN_PROGRESS:
            self._log("J-JOIN-REBAL", {})
            self._join_group()
            return
        if error is Errors.FENCED_INSTANCE_ID:
            self._log("J-JOIN-FENCED", {"instance": self.config.group_instance_id,
                                        "generation": sent}, error=error)
        else:
            self._log("J-JOIN-FATAL", {"message": error.message}, error=error)
        self._fail(error)

    def _rebalance_failed(self, error: Errors) -> None:
        simple = (error.value.exception or "KafkaException")
        self.request_rejoin(f"rebalance failed due to {simple}",
                            f"rebalance failed due to '{error.message}' ({simple})")
        self._retry_later()

    def _retry_later(self) -> None:
        if self._poll_handle is not None:
            self._poll_handle.cancel()
        self._poll_handle = self.scheduler.call_later(
            max(self.config.retry_backoff_ms, 1), self._poll, name=f"poll {self.name}")

    def _fail(self, error: Errors) -> None:
        self.fatal = error
        self._transition(MemberState.UNJOINED)
        self.log.event("consumer_failed", level="ERROR", client=self.name, error=error.name)

    def _perform_assignment(self, response: JoinGroupResponse) -> dict[str, bytes]:
        assignor = next(a for a in self.assignors if a.name == response.protocol_name)
        subs = {}
        for m in response.members:
            s = ConsumerProtocolSubscription.decode(m.metadata)
            owned, generation = s.owned_partitions, s.generation_id
            if assignor.name == "sticky":
                # Java's StickyAssignor.memberData reads both from its user data only
                previous = StickyAssignorUserData.decode(s.user_data)
                owned, generation = ((), -1) if previous is None else \
                    (previous.previous_assignment, previous.generation)
            subs[m.member_id] = Subscription(s.topics, owned, generation, m.group_instance_id,
                                             s.user_data)
        topics = {t for s in subs.values() for t in s.topics}
        result = assignor.assign({t: self.cluster.topics[t] for t in topics
                                  if t in self.cluster.topics}, subs)
        shown = ", ".join(f"{m}=Assignment(partitions=[{_join_tps(a.partitions)}])"
                          for m, a in result.items())
        self._log("J-FINISHED", {"generation": response.generation_id,
                                 "assignments": "{" + shown + "}"}, assignor=assignor.name)
        return {m: ConsumerProtocolAssignment(a.partitions).encode() for m, a in result.items()}

    def _sync_group(self, assignments: dict[str, bytes]) -> None:
        request = SyncGroupRequest(self.config.group_id, self.generation.generation_id,
                                   self.generation.member_id, self.config.group_instance_id,
                                   CONSUMER_PROTOCOL_TYPE, self.generation.protocol_name,
                                   assignments)
        self.inflight.sync = True
        sent = self.generation
        self.transport.send(self, self.coordinator, "SyncGroup",
                                  lambda svc: svc.sync_group(self.context, request),
                                  lambda r, e: self._on_sync(r, e, sent),
                                  timeout_ms=self.config.request_timeout_ms)

    def _on_sync(self, response: SyncGroupResponse | None, net_error: Errors | None,
                 sent: Generation) -> None:
        if self._deferred(self._on_sync, response, net_error, sent):
            return
        self.inflight.sync = False
        if response is None:
            self.mark_coordinator_unknown(f"{net_error}", disconnected=True, error=net_error)
            return
        error = response.error
        if error is _NONE:
            if self.state is not MemberState.COMPLETING_REBALANCE or self.generation != sent:
                self._reset_state_and_rejoin(
                    f"rebalance failed since the generation/state was modified by heartbeat "
                    f"thread to {self.generation}/{self.state} before the rebalance callback "
                    f"triggered", True)
                return
            self._log("J-SYNCED", {"generation": self.generation})
            self._transition(_STABLE)
            self.rejoin_needed = False
            self.rejoin_reason = ""
            self.needs_join_prepare = True  # the next rebalance starts with onJoinPrepare again
            self._on_join_complete(ConsumerProtocolAssignment.decode(response.assignment))
            if self.rejoin_needed and self.coordinator is not None:
                # A cooperative revocation asked for the follow-up rebalance: joinGroupIfNeeded
                # loops while a rejoin is needed, so onJoinPrepare and the follow-up JoinGroup
                # run in the same poll() as onJoinComplete, not on the next one.
                self._join_group()
            return
        if error is Errors.REBALANCE_IN_PROGRESS:
            self._log("J-SYNC-REBAL", {"generation": sent})
            self.request_rejoin("rebalance failed due to RebalanceInProgressException",
                                f"rebalance failed due to '{error.message}' "
                                f"(RebalanceInProgressException)")
            self._join_group()
            return
        if error in (Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION):
            self._log("J-SYNC-REJOIN", {"message": error.message, "generation": sent},
                      error=error)
            if self.generation == sent:
                self._reset_state_and_rejoin(f"encountered {error.name} from SYNC_GROUP "
                                             f"response", error is not Errors.ILLEGAL_GENERATION)
            self._join_group()
            return
        if error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR):
            self._log("J-SYNC-COORD", {"message": error.message, "generation": sent},
                      error=error)
            self.mark_coordinator_unknown(error.name, error=error)
            self._rebalance_failed(error)
            return
        if error is Errors.FENCED_INSTANCE_ID:
            self._log("J-SYNC-FENCED", {"instance": self.config.group_instance_id,
                                        "generation": sent})
        self._fail(error)

    def _on_join_complete(self, assignment: ConsumerProtocolAssignment) -> None:
        assigned = set(assignment.assigned_partitions)
        if self.generation.protocol_name == "sticky":  # StickyAssignor.onAssignment
            self._sticky_memory = StickyAssignorUserData(tuple(sorted(assigned)),
                                                         self.generation.generation_id)
        self._log("J-NOTIFY", {"partitions": _join_tps(assigned)}, assigned=assigned)
        if self.protocol is RebalanceProtocol.COOPERATIVE:
            revoked = self.owned - assigned
            added = assigned - self.owned
            if revoked:
                self._revoke(revoked)
                self.request_rejoin("need to revoke partitions and re-join",
                                    f"need to revoke partitions [{_join_tps(revoked)}] as "
                                    f"indicated by the current assignment and re-join")
        else:
            added = assigned
        self.owned |= added
        self._log("J-ASSIGNED", {"partitions": _join_tps(added)})
        self._listener("onPartitionsAssigned", added)
        self.next_auto_commit = self.scheduler.now + self.config.auto_commit_interval_ms
        missing = [tp for tp in sorted(added) if tp not in self.positions]
        if missing:
            self._fetch_positions(tuple(missing))

    def _revoke(self, partitions: set[TopicPartition]) -> None:
        self._log("J-REVOKE", {"partitions": _join_tps(partitions)}, revoked=partitions)
        self._listener("onPartitionsRevoked", partitions)
        self.owned -= partitions
        for tp in partitions:
            self.positions.pop(tp, None)

    def _lose(self, partitions: set[TopicPartition]) -> None:
        partitions = set(partitions)
        self._log("J-LOST", {"partitions": _join_tps(partitions)}, revoked=partitions)
        self._listener("onPartitionsLost", partitions)
        self.owned -= partitions
        for tp in partitions:
            self.positions.pop(tp, None)

    def _listener(self, callback: str, partitions: set[TopicPartition]) -> None:
        self.listener_calls.append(ListenerCall(self.scheduler.now, callback,
                                                tuple(sorted(partitions)),
                                                self.generation.generation_id))

    # -- heartbeats (the heartbeat thread) -----------------------------------------------------

    def _arm_heartbeat(self) -> None:
        """Wake the heartbeat thread at its next deadline (never in the past: when nothing is due,
        it waits `retry.backoff.ms`, as the Java thread does, so virtual time always moves)."""
        self._disarm_heartbeat()
        config = self.config
        now = self.scheduler._now
        due = self.last_poll + config.max_poll_interval_ms + 1
        session = self.last_heartbeat_received + config.session_timeout_ms + 1
        if session < due:
            due = session
        in_flight = self.inflight.heartbeat
        if not in_flight:
            interval = self.last_heartbeat_sent + config.heartbeat_interval_ms
            if interval < due:
                due = interval
        if due <= now:
            due = now + max(config.retry_backoff_ms, 1)
        if in_flight and self._wakeups is not None:
            # the deadline while the heartbeat is in flight (see HeartbeatWakeups), unless it
            # falls before the last one armed there (then call_at, as below)
            self._hb_wakeup = self._wakeups.arm(self, due - now)
            if self._hb_wakeup:
                return
        self._hb_handle = self.scheduler.call_at(due, self._heartbeat_callback,
                                                 name=self._heartbeat_name)

    def _disarm_heartbeat(self) -> None:
        """Cancel the heartbeat thread's next wake-up, a handle or an in-flight wake-up."""
        if self._hb_handle is not None:
            self._hb_handle.cancel()
            self._hb_handle = None
        if self._hb_wakeup:
            self._wakeups.cancel(self._hb_wakeup)  # type: ignore[union-attr]
            self._hb_wakeup = 0

    def _heartbeat_tick(self) -> None:
        self._hb_handle = None
        now = self.scheduler._now
        if self.crashed or not self.running or now < self.paused_until:
            self._deferred(self._heartbeat_tick)
            return
        if self.state not in _SYNCING_OR_STABLE or self.fatal is not None:
            return  # the thread disables itself; the next successful join re-arms it
        config = self.config
        if self.coordinator is None:
            self._find_coordinator()
        elif now - self.last_heartbeat_received > config.session_timeout_ms:
            self.mark_coordinator_unknown("session timed out without receiving a heartbeat "
                                          "response")
        elif now - self.last_poll > config.max_poll_interval_ms:
            self._log("J-POLL-TIMEOUT", {})
            self._maybe_leave_group("consumer poll timeout has expired.")
            return
        elif now - self.last_heartbeat_sent >= config.heartbeat_interval_ms \
                and not self.inflight.heartbeat:
            self._send_heartbeat()
        self._arm_heartbeat_later()

    def _arm_heartbeat_later(self) -> None:
        if self.state in _SYNCING_OR_STABLE:
            if self.coordinator is None:
                self._hb_handle = self.scheduler.call_later(
                    max(self.config.retry_backoff_ms, 1), self._heartbeat_tick,
                    name=self._heartbeat_name)
            else:
                self._arm_heartbeat()

    def _send_heartbeat(self) -> None:
        self.last_heartbeat_sent = self.scheduler._now
        self.inflight.heartbeat = True
        sent = self.generation
        request = self._heartbeat_request
        if request is None or request.generation_id != sent.generation_id \
                or request.member_id != sent.member_id:
            # the same generation sends the same (immutable) request every time
            request = self._heartbeat_request = HeartbeatRequest(
                self.config.group_id, sent.generation_id, sent.member_id,
                self.config.group_instance_id)
        calls = self._heartbeat_calls
        if calls is None or calls[0] is not sent or calls[1] is not request:
            # and the same two callables for the network (made once, not per heartbeat)
            calls = self._heartbeat_calls = (
                sent, request, lambda svc: svc.heartbeat(self.context, request),
                lambda r, e: self._on_heartbeat(r, e, sent))
        if self.log.trace.threshold <= _HEARTBEAT_LINE_LEVEL:
            self._log("J-HB-SEND", {"generation": sent.generation_id, "member": sent.member_id,
                                    "node": self.node()}, sent=sent)
        self.transport.send(self, self.coordinator, "Heartbeat", calls[2], calls[3],
                                  timeout_ms=self.config.request_timeout_ms,
                                  drop=self.drop_heartbeats)

    def _on_heartbeat(self, response: HeartbeatResponse | None, net_error: Errors | None,
                      sent: Generation) -> None:
        if self.crashed or not self.running or self.scheduler._now < self.paused_until:
            self._deferred(self._on_heartbeat, response, net_error, sent)
            return
        self.inflight.heartbeat = False
        if response is not None and response.error is _NONE:
            # _handle_heartbeat_response's first case, written out: nearly every response
            self.last_heartbeat_received = self.scheduler._now
            if self.log.trace.threshold <= _HEARTBEAT_LINE_LEVEL:
                self._log("J-HB-OK", {})
        else:
            self._handle_heartbeat_response(response, net_error, sent)
        handle = self._hb_handle
        if (self._hb_wakeup and self._wakeups.pending(self._hb_wakeup)) or \
                not (handle is None or handle.done or handle.cancelled):  # a wake-up pending
            self._arm_heartbeat()
        else:
            self._arm_heartbeat_later()

    def _handle_heartbeat_response(self, response: HeartbeatResponse | None,
                                   net_error: Errors | None, sent: Generation) -> None:
        if response is None:
            self.mark_coordinator_unknown(f"{net_error}", disconnected=True, error=net_error)
            return
        error = response.error
        now = self.scheduler._now
        if error is _NONE:
            self.last_heartbeat_received = now
            if self.log.trace.threshold <= _HEARTBEAT_LINE_LEVEL:
                self._log("J-HB-OK", {})
        elif error is Errors.REBALANCE_IN_PROGRESS:
            self.last_heartbeat_received = now
            if self.state is _STABLE:
                self.request_rejoin("group is already rebalancing",
                                    why="heartbeat_rebalancing")
        elif error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR):
            self._log("J-HB-COORD", {"node": self.node()})
            self.mark_coordinator_unknown(error.name, error=error)
        elif error in (Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID,
                       Errors.FENCED_INSTANCE_ID):
            instance = ("Optional.empty" if self.config.group_instance_id is None
                        else f"Optional[{self.config.group_instance_id}]")
            if self.generation == sent:
                self._log("J-HB-RESET", {"generation": sent, "instance": instance,
                                         "error": error.name}, error=error)
                if error is Errors.FENCED_INSTANCE_ID:
                    self._fail(error)
                    return
                self._reset_state_and_rejoin(f"encountered {error.name} from HEARTBEAT response",
                                             error is not Errors.ILLEGAL_GENERATION)
            else:
                self._log("J-HB-STALE", {"generation": sent, "instance": instance,
                                         "error": error.name}, error=error)

    # -- leave ---------------------------------------------------------------------------------

    def _maybe_leave_group(self, reason: str) -> None:
        if self.coordinator is not None and self.generation.member_id and \
                self.config.group_instance_id is None and \
                self.state is not MemberState.UNJOINED:
            self._log("J-LEAVE", {"member": self.generation.member_id, "node": self.node(),
                                  "reason": reason})
            request = LeaveGroupRequest(self.config.group_id,
                                        (MemberIdentity(self.generation.member_id, None,
                                                        reason),))
            self.transport.send(self, self.coordinator, "LeaveGroup",
                                      lambda svc: svc.leave_group(self.context, request),
                                      lambda r, e: None, timeout_ms=self.config.request_timeout_ms)
        self._reset_state_and_rejoin("consumer pro-actively leaving the group", True)

    # -- offsets -------------------------------------------------------------------------------

    def _consumed_offsets(self) -> dict[TopicPartition, int]:
        owned = self.owned
        return {tp: pos for tp, pos in sorted(self.positions.items(), key=_by_partition)
                if tp in owned}

    def _maybe_auto_commit(self) -> None:
        if self.config.enable_auto_commit and self.scheduler._now >= self.next_auto_commit:
            self.next_auto_commit = self.scheduler._now + self.config.auto_commit_interval_ms
            offsets = self._consumed_offsets()
            if offsets and offsets != {tp: o for tp, o in self.committed.items()
                                       if tp in offsets}:
                self._commit(offsets, auto=True)

    def commit_sync(self) -> None:
        """Commit the consumed positions now (the result arrives on virtual time)."""
        self._require_alive("commit for")
        self._commit(self._consumed_offsets(), auto=False)

    def _commit(self, offsets: dict[TopicPartition, int], *, auto: bool) -> None:
        if not offsets or self.coordinator is None:
            return
        gen = self.generation
        request = OffsetCommitRequest(
            self.config.group_id, gen.generation_id, gen.member_id,
            {(tp.topic, tp.partition): PartitionData(o) for tp, o in offsets.items()},
            self.config.group_instance_id)
        self.inflight.commit = True
        call = _OffsetCommitCall(self, request, offsets)
        self.transport.send(self, self.coordinator, "OffsetCommit", call, call.answered,
                                  timeout_ms=self.config.request_timeout_ms)

    def _on_commit(self, response: OffsetCommitResponse | None, net_error: Errors | None,
                   offsets: dict[TopicPartition, int]) -> None:
        if self._deferred(self._on_commit, response, net_error, offsets):
            return
        self.inflight.commit = False
        if response is None:
            return
        for e in response.errors.values():
            if e is not _NONE:
                break
        else:  # every partition committed (nearly always): nothing failed to map
            committed = self.committed
            for tp, o in offsets.items():
                committed[tp] = o
            return
        failed = {TopicPartition(t, p): e for (t, p), e in response.errors.items()
                  if e is not _NONE}
        for tp, o in offsets.items():
            if tp not in failed:
                self.committed[tp] = o
        if not failed:
            return
        error = next(iter(failed.values()))
        shown = "{" + ", ".join(f"{tp}=OffsetAndMetadata{{offset={o}, leaderEpoch=null, "
                                f"metadata=''}}" for tp, o in offsets.items()) + "}"
        self._log("J-COMMIT-FAIL", {"offsets": shown, "message": error.message}, error=error)
        if error is Errors.REBALANCE_IN_PROGRESS:
            self.request_rejoin("offset commit failed since group is already rebalancing")
        elif error in (Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID):
            if self.state is _STABLE:
                self._reset_state_and_rejoin(f"encountered {error.name} from OFFSET_COMMIT "
                                             f"response", error is Errors.UNKNOWN_MEMBER_ID)
        elif error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR):
            self.mark_coordinator_unknown(error.name, error=error)

    def _fetch_positions(self, partitions: tuple[TopicPartition, ...]) -> None:
        if self.coordinator is None:
            return
        request = OffsetFetchRequest(self.config.group_id,
                                     tuple((tp.topic, tp.partition) for tp in partitions),
                                     require_stable=True)
        self.inflight.fetch = True
        self.transport.send(self, self.coordinator, "OffsetFetch",
                                  lambda svc: svc.fetch_offsets(self.context, request),
                                  lambda r, e: self._on_fetch(r, e, partitions),
                                  timeout_ms=self.config.request_timeout_ms)

    def _on_fetch(self, response: OffsetFetchResponse | None, net_error: Errors | None,
                  partitions: tuple[TopicPartition, ...]) -> None:
        if self._deferred(self._on_fetch, response, net_error, partitions):
            return
        self.inflight.fetch = False
        if response is None or response.error is not _NONE:
            return
        for tp in partitions:
            if tp not in self.owned:
                continue
            data = response.offsets.get((tp.topic, tp.partition))
            if data is not None and data.offset >= 0:
                self.positions[tp] = data.offset
                self.committed[tp] = data.offset
            else:
                self.positions[tp] = (0 if self.config.auto_offset_reset == "earliest"
                                      else self.cluster.end_offset(tp))

    def __repr__(self) -> str:
        return (f"Consumer({self.name!r}, {self.state.name}, "
                f"generation={self.generation.generation_id}, owned={len(self.owned)})")

