"""A consumer of the centralised coordinator draft: a connector thread that registers and then
only answers the coordinator, fetchers, and the application that processes what they fetched.

The client side follows the Apache wiki page "Kafka 0.9 consumer protocol" (2012): discover
the coordinator by asking the brokers round robin (ClusterMetadataRequest), register, then
serve ping / stop-fetcher / start-fetcher; on a closed socket or when the coordinator has been
silent for a whole session timeout (`silence`), close every fetcher, clear the queues and start
over (the lost-connection procedure).

Processing model (the kit's, docs/eras-central.md): every `processing.ms` (100 ms) the
application takes every buffered chunk and processes it (`ProcessedLedger.processed`: the
consumed offset moves past it), then each fetcher of an owned partition that has no chunk
waiting fetches one chunk, from its position up to the log end. So a consumer always holds
up to one poll's worth of records that it has fetched but not processed. A `slow` consumer's
batch takes `duration_ms`; a StopFetcher waits for the batch in flight before it is answered.

A GC pause freezes every thread: requests queue up in the socket, timers do not run. On wake
the application thread runs first (it processes its buffered chunks, whoever owns those
partitions now), then the connector looks at its socket: closed -> LOST; `silence` overdue ->
LOST; otherwise it answers the requests that queued up, in order.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

from ...clock import TimerHandle
from ...trace import LogContext
from ..api import Partition, end_offset
from .network import Connection, Message
from .states import CONSUMER_STATES, ConsumerState

if TYPE_CHECKING:
    from .design import CentralDesign

__all__ = ["CentralConsumer"]

S = ConsumerState
_REGISTERED = (S.IDLE, S.FETCHING, S.STOPPED)


class CentralConsumer:
    def __init__(self, design: CentralDesign, name: str, group: str,
                 topics: tuple[str, ...]) -> None:
        self.design = design
        self.config = design.config
        self.scheduler = design.scheduler
        self.network = design.network
        self.name = name
        self.group = group
        self.topics = tuple(topics)
        self.log = LogContext(design.trace, name,
                              f"[CentralConsumer clientId={name}, groupId={group}] ")
        self.state = S.DISCOVERING
        self.conn: Connection | None = None
        self.coordinator: int | None = None
        self._next_broker = design.rng.randrange(self.config.brokers)
        self._tries = 0
        # fetchers and the queue between them and the application
        self.assigned: dict[Partition, int] = {}        # partition -> fetch position
        self.consumed: dict[Partition, int] = {}        # partition -> next offset to process
        self.buffer: deque[tuple[Partition, int, int]] = deque()
        self.fetchers_running = False
        self.busy_until = 0
        self.slow_ms = 0
        self.processed = 0
        # the connector
        self.last_request_ms = 0
        self._silence: TimerHandle | None = None
        self.error: str | None = None
        # the process
        self.closed = False
        self.paused_until = 0
        self._inbox: deque[tuple[Connection | None, str, Any]] = deque()
        self._closed_while_paused: set[int] = set()
        self._poll_timer: TimerHandle | None = None
        self.transitions: list[tuple[int, ConsumerState, ConsumerState]] = []

    # -- the process ---------------------------------------------------------------------------

    @property
    def paused(self) -> bool:
        return self.scheduler.now < self.paused_until

    def start(self) -> None:
        self._arm_poll()
        self._discover()

    def _arm_poll(self) -> None:
        self._poll_timer = self.scheduler.call_later(self.config.processing_ms, self._poll,
                                                     name=f"central-poll {self.name}")

    def pause(self, duration_ms: int) -> None:
        self.paused_until = max(self.paused_until, self.scheduler.now + duration_ms)
        self.scheduler.call_at(self.paused_until, self._wake, name=f"central-wake {self.name}")

    def shutdown(self, reason: str) -> None:
        """crash (the OS closes the socket) or clean shutdown (the connector closes it)."""
        if self.closed:
            return
        if reason == "shutdown":
            self.log.log("CX-SHUTDOWN")
        self._stop_fetchers()
        self.assigned = {}
        if self.conn is not None:
            self.network.close_by_consumer(self.conn)
        if self._silence is not None:
            self._silence.cancel()
        self.closed = True
        self.design.trace.record("central_consumer_closed", self.name, "DEBUG",
                                 {"group": self.group, "state": self.state.value,
                                  "reason": reason})
        self._inbox.clear()

    def _move(self, state: ConsumerState) -> None:
        CONSUMER_STATES.check(self.state, state)
        self.transitions.append((self.scheduler.now, self.state, state))
        self.design.trace.record("central_consumer_state", self.name, "DEBUG",
                                 {"group": self.group, "from": self.state.value,
                                  "to": state.value})
        self.state = state

    def deliver(self, conn: Connection | None, what: str, payload: Any) -> None:
        """Everything that reaches this process arrives here: kept while it is paused."""
        if self.closed:
            return
        if self.paused:
            if what == "closed" and conn is not None:
                self._closed_while_paused.add(conn.id)
            else:
                self._inbox.append((conn, what, payload))
            return
        self._handle(conn, what, payload)

    def _wake(self) -> None:
        if self.closed or self.paused:
            return
        self._application()                      # [kit choice] the application runs first
        if self.conn is not None and self.state in _REGISTERED + (S.REGISTERING,):
            if self.conn.id in self._closed_while_paused:
                self._lost("socket closed")
            elif self._silence_overdue():
                self._lost(f"no request from the coordinator for "
                           f"{self.scheduler.now - self.last_request_ms} ms")
        self._closed_while_paused.clear()
        inbox, self._inbox = self._inbox, deque()
        for conn, what, payload in inbox:
            if not self.closed and not self.paused:
                self._handle(conn, what, payload)
        if not self.closed and self.state in _REGISTERED + (S.REGISTERING,):
            self._arm_silence(self.config.session_timeout_ms
                              - (self.scheduler.now - self.last_request_ms))
        if not self.closed and not self._poll_timer.pending:
            self._arm_poll()

    # -- fetchers and application --------------------------------------------------------------

    def _poll(self) -> None:
        if self.closed or self.paused:
            return                                   # _wake starts polling again
        self._application()
        if self.fetchers_running:
            waiting = {tp for tp, _, _ in self.buffer}
            now = self.scheduler.now
            end = end_offset(now, self.design.produce_rate_per_s)
            for tp, position in self.assigned.items():
                if tp not in waiting and position < end:
                    self.buffer.append((tp, position, end))
                    self.assigned[tp] = end
        self._arm_poll()

    def _application(self) -> None:
        """Hand every buffered chunk to the application (one batch)."""
        if not self.buffer or self.scheduler.now < self.busy_until:
            return
        batch, self.buffer = self.buffer, deque()
        for tp, start, end in batch:
            self.design.ledger.processed(self.name, tp, start, end)
            self.processed += end - start
            self.design.processed_by[self.name] += end - start
            self.consumed[tp] = end
        if self.slow_ms:
            self.busy_until = self.scheduler.now + self.slow_ms

    def _stop_fetchers(self) -> None:
        self.fetchers_running = False
        self.buffer.clear()

    def holds(self) -> set[Partition]:
        """Partitions whose records this consumer would hand to the application now."""
        if self.closed:
            return set()
        out = {tp for tp, _, _ in self.buffer}
        if self.fetchers_running:
            out.update(self.assigned)
        return out

    # -- discovery and registration ------------------------------------------------------------

    def _discover(self) -> None:
        if self.closed or self.state is not S.DISCOVERING:
            return
        broker = self._next_broker
        self._next_broker = (self._next_broker + 1) % self.config.brokers
        self._tries += 1
        self.network.metadata(self, broker)

    def _retry_discovery(self) -> None:
        """Next broker at once, or after `rediscovery.backoff.ms` once all were tried."""
        if self._tries >= self.config.brokers:
            self._tries = 0
            self.scheduler.call_later(self.config.rediscovery_backoff_ms, self._discover,
                                      name=f"central-rediscover {self.name}")
        else:
            self._discover()

    def _handle(self, conn: Connection | None, what: str, payload: Any) -> None:
        if what == "metadata_failed":
            if self.state is S.DISCOVERING:
                self._retry_discovery()
        elif what == "metadata":
            self._on_metadata(payload)
        elif what == "connect_failed":
            if conn is self.conn and self.state is S.REGISTERING:
                self.log.log("CX-CONNECT-FAILED", node=payload,
                             ms=self.config.rediscovery_backoff_ms)
                self._back_to_discovery()
        elif what == "closed":
            if conn is self.conn and self.state in _REGISTERED + (S.REGISTERING,):
                self._lost("socket closed")
        elif conn is self.conn:
            self._on_message(payload)

    def _on_metadata(self, msg: Message) -> None:
        if self.state is not S.DISCOVERING:
            return
        coordinator = msg["coordinator"]
        if coordinator is None:
            self.log.log("CX-NO-COORDINATOR", via=msg["broker"],
                         ms=self.config.rediscovery_backoff_ms)
            self._tries = 0
            self.scheduler.call_later(self.config.rediscovery_backoff_ms, self._discover,
                                      name=f"central-rediscover {self.name}")
            return
        self._tries = 0
        self.coordinator = coordinator
        self.log.log("CX-DISCOVERED", node=coordinator, via=msg["broker"])
        self._move(S.REGISTERING)
        self.conn = self.network.connect(self, coordinator, Message("RegisterConsumer", {
            "group": self.group, "consumer": self.name, "topics": self.topics,
            "session_timeout_ms": self.config.session_timeout_ms,
            "auto_commit": self.config.auto_commit_enable}))
        # [kit choice] no answer to the registration within a session timeout counts as silence
        self._heard_from_coordinator()

    def _back_to_discovery(self) -> None:
        if self.conn is not None:
            self.network.close_by_consumer(self.conn)
            self.conn = None
        if self._silence is not None:
            self._silence.cancel()
        self._move(S.DISCOVERING)
        self._tries = 0
        self.scheduler.call_later(self.config.rediscovery_backoff_ms, self._discover,
                                  name=f"central-rediscover {self.name}")

    # -- requests from the coordinator ---------------------------------------------------------

    def _on_message(self, msg: Message) -> None:
        if msg.kind == "RegisterConsumerResponse":
            if self.state is not S.REGISTERING:
                return
            if msg["ok"]:
                self._move(S.IDLE)
                self.log.log("CX-CONFIRMED", node=self.coordinator)
                self._heard_from_coordinator()
            else:
                self.log.log("CX-REJECTED", node=self.coordinator, reason=msg["reason"])
                self._back_to_discovery()
            return
        if self.state not in _REGISTERED:
            return
        self._heard_from_coordinator()
        if msg.kind == "Ping":
            self._on_ping(msg)
        elif msg.kind == "StopFetcher":
            self._on_stop(msg)
        elif msg.kind == "StartFetcher":
            self._on_start(msg)

    def _on_ping(self, msg: Message) -> None:
        if msg["group_error"] == "REBALANCE_FAILED" and self.error is None:
            self.error = "REBALANCE_FAILED"
            self.log.log("CX-REBALANCE-FAILED", group=self.group)
        offsets = self._offsets() if self.config.auto_commit_enable else {}
        self.log.log("CX-PING", offsets=_show(offsets))
        self.network.send_to_broker(self.conn, Message("PingResponse",  # type: ignore[arg-type]
                                                       {"offsets": offsets}))

    def _offsets(self) -> dict[Partition, int]:
        return {tp: self.consumed[tp] for tp in sorted(self.assigned) if tp in self.consumed}

    def _on_stop(self, msg: Message) -> None:
        self._stop_fetchers()
        conn = self.conn
        # [kit choice] the batch the application is processing finishes first ("slow stop")
        delay = max(0, self.busy_until - self.scheduler.now)
        if delay:
            self.scheduler.call_later(delay, self._answer_stop, conn, msg,
                                      name=f"central-stop-reply {self.name}")
        else:
            self._answer_stop(conn, msg)

    def _answer_stop(self, conn: Connection | None, msg: Message) -> None:
        if self.paused:
            self.scheduler.call_at(self.paused_until, self._answer_stop, conn, msg)
            return
        if self.closed or conn is not self.conn or self.state not in _REGISTERED:
            return
        offsets = self._offsets()
        self._move(S.STOPPED)
        self.log.log("CX-STOP", offsets=_show(offsets))
        self.network.send_to_broker(conn, Message("StopFetcherResponse", {  # type: ignore
            "rebalance_id": msg["rebalance_id"], "attempt": msg["attempt"],
            "offsets": offsets}))

    def _on_start(self, msg: Message) -> None:
        self._stop_fetchers()                       # [kit choice] stop then apply
        end = end_offset(self.scheduler.now, self.design.produce_rate_per_s)
        reset = end if self.config.auto_offset_reset == "largest" else 0
        assignment: dict[Partition, int] = msg["assignment"]
        self.assigned = {tp: (reset if off < 0 else off) for tp, off in sorted(assignment.items())}
        self.consumed = dict(self.assigned)
        self.fetchers_running = bool(self.assigned)
        self.error = None
        self._move(S.FETCHING if self.assigned else S.IDLE)
        self.log.log("CX-START", partitions=_show(self.assigned))
        self.network.send_to_broker(self.conn, Message("StartFetcherResponse", {  # type: ignore
            "rebalance_id": msg["rebalance_id"], "attempt": msg["attempt"]}))

    # -- silence and the lost-connection procedure ---------------------------------------------

    def _heard_from_coordinator(self) -> None:
        self.last_request_ms = self.scheduler.now
        self._arm_silence(self.config.session_timeout_ms)

    def _arm_silence(self, delay_ms: int) -> None:
        if self._silence is not None:
            self._silence.cancel()
        self._silence = self.scheduler.call_later(max(0, delay_ms), self._silence_fired,
                                                  name=f"central-silence {self.name}")

    def _silence_overdue(self) -> bool:
        return self.scheduler.now - self.last_request_ms >= self.config.session_timeout_ms

    def _silence_fired(self) -> None:
        if self.closed or self.paused or self.state not in _REGISTERED + (S.REGISTERING,):
            return                                   # a paused process checks on wake
        if self._silence_overdue():
            self._lost(f"no request from the coordinator for "
                       f"{self.scheduler.now - self.last_request_ms} ms")

    def _lost(self, reason: str) -> None:
        self._move(S.LOST)
        self.log.log("CX-LOST", node=self.coordinator, reason=reason)
        self._stop_fetchers()
        self.assigned = {}
        if self._silence is not None:
            self._silence.cancel()
        if self.conn is not None:
            self.network.close_by_consumer(self.conn)
            self.conn = None
        self._inbox.clear()
        self._move(S.DISCOVERING)
        self._tries = 0
        self._discover()


def _show(offsets: dict[Partition, int]) -> str:
    return "{" + ", ".join(f"{t}-{p}={o}" for (t, p), o in sorted(offsets.items())) + "}"
