"""Messages, sockets and brokers of the centralised coordinator draft.

The draft's coordinator *pushes* requests to consumers over the socket the consumer opened
to register (Apache wiki "Kafka 0.9 consumer protocol": the consumer's connector thread only
reads coordinator requests after registering). So a `Connection` carries requests both ways,
and either end can close it: the other end learns one network delay later (TCP's FIN), or,
when a message is sent to an end that is gone, from the reset that comes back.

The message names are the kit's (the draft gives only the verbs):

| kind | direction | body |
|---|---|---|
| ClusterMetadataRequest / -Response | consumer -> any broker | coordinator (broker id or None) |
| RegisterConsumer / -Response | consumer -> coordinator | group, consumer, topics, session_timeout_ms, auto_commit / ok, reason |
| Ping / PingResponse | coordinator -> consumer | group, group_error / offsets |
| StopFetcher / -Response | coordinator -> consumer | group, rebalance_id, attempt / offsets |
| StartFetcher / -Response | coordinator -> consumer | group, rebalance_id, attempt, assignment {tp: offset} / - |

The `cut` fault drops everything between one consumer and the coordinator (its registration,
its pings, the closes of its socket) while its metadata requests and fetches still go through.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...clock import Scheduler
from .zk import Session, ZooKeeper

if TYPE_CHECKING:
    from .consumer import CentralConsumer
    from .coordinator import Coordinator

__all__ = ["Message", "Connection", "Network", "Broker", "ELECTION_PATH"]

ELECTION_PATH = "/consumers/coordinator"


@dataclass(frozen=True)
class Message:
    kind: str
    body: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return self.body[key]


@dataclass(eq=False)
class Connection:
    """One consumer's socket to one broker (the coordinator's, it hopes)."""

    id: int
    consumer: CentralConsumer
    broker_id: int
    consumer_open: bool = True
    broker_open: bool = True


class Broker:
    """A broker: alive or dead, a ZooKeeper session, maybe the active coordinator."""

    def __init__(self, broker_id: int) -> None:
        self.id = broker_id
        self.alive = True
        self.session: Session | None = None
        self.coordinator: Coordinator | None = None


class Network:
    """Delivers every message one `latency_ms` later, in sending order; counts them."""

    def __init__(self, scheduler: Scheduler, latency_ms: int, brokers: dict[int, Broker],
                 zk: ZooKeeper) -> None:
        self.scheduler = scheduler
        self.latency_ms = latency_ms
        self.brokers = brokers
        self.zk = zk
        self.messages = 0
        self.cut_until: dict[str, int] = {}
        self.lose_next: dict[str, set[str]] = {}   # consumer -> kinds of its next reply to lose
        self.connections: list[Connection] = []
        self._ids = itertools.count(1)

    def is_cut(self, consumer: CentralConsumer) -> bool:
        return self.cut_until.get(consumer.name, -1) > self.scheduler.now

    def _later(self, callback: Any, *args: Any) -> None:
        self.scheduler.call_later(self.latency_ms, callback, *args)

    # -- discovery ------------------------------------------------------------------------------

    def metadata(self, consumer: CentralConsumer, broker_id: int) -> None:
        """ClusterMetadataRequest to one broker; the answer names the coordinator as the
        election node says (it may name a dead broker until the node expires)."""
        self.messages += 1
        self._later(self._metadata_arrives, consumer, broker_id)

    def _metadata_arrives(self, consumer: CentralConsumer, broker_id: int) -> None:
        if not self.brokers[broker_id].alive:
            self._later(consumer.deliver, None, "metadata_failed", broker_id)
            return
        self.messages += 1
        coordinator = self.zk.get(ELECTION_PATH)
        self._later(consumer.deliver, None, "metadata",
                    Message("ClusterMetadataResponse", {"broker": broker_id,
                                                        "coordinator": coordinator}))

    # -- sockets --------------------------------------------------------------------------------

    def connect(self, consumer: CentralConsumer, broker_id: int, register: Message
                ) -> Connection:
        """Open a socket to `broker_id` and send RegisterConsumer on it."""
        conn = Connection(next(self._ids), consumer, broker_id)
        if len(self.connections) > 256:          # forget sockets closed at both ends
            self.connections = [c for c in self.connections if c.consumer_open or c.broker_open]
        self.connections.append(conn)
        self.messages += 1
        self._later(self._connect_arrives, conn, register)
        return conn

    def _connect_arrives(self, conn: Connection, register: Message) -> None:
        broker = self.brokers[conn.broker_id]
        if self.is_cut(conn.consumer) or not broker.alive:
            conn.broker_open = False
            self._later(conn.consumer.deliver, conn, "connect_failed", conn.broker_id)
            return
        if not conn.consumer_open:
            return
        if broker.coordinator is None:
            conn.broker_open = False
            self.send_to_consumer(conn, Message("RegisterConsumerResponse", {
                "ok": False, "reason": f"broker {broker.id} is not the consumer coordinator"}))
            return
        broker.coordinator.receive(conn, register)

    def send_to_broker(self, conn: Connection, msg: Message) -> None:
        self.messages += 1
        lost = self.lose_next.get(conn.consumer.name)
        if lost and msg.kind in lost:            # lost on the way; the socket stays up
            lost.discard(msg.kind)
            return
        self._later(self._to_broker, conn, msg)

    def _to_broker(self, conn: Connection, msg: Message) -> None:
        if self.is_cut(conn.consumer):
            return
        broker = self.brokers[conn.broker_id]
        if not conn.broker_open or not broker.alive or broker.coordinator is None:
            conn.broker_open = False
            self._later(conn.consumer.deliver, conn, "closed", None)   # reset
            return
        broker.coordinator.receive(conn, msg)

    def send_to_consumer(self, conn: Connection, msg: Message) -> None:
        self.messages += 1
        self._later(self._to_consumer, conn, msg)

    def _to_consumer(self, conn: Connection, msg: Message) -> None:
        if self.is_cut(conn.consumer):
            return
        if not conn.consumer_open:
            self._later(self._reset_to_broker, conn)
            return
        conn.consumer.deliver(conn, "message", msg)

    def _reset_to_broker(self, conn: Connection) -> None:
        broker = self.brokers[conn.broker_id]
        if conn.broker_open and broker.alive and broker.coordinator is not None:
            broker.coordinator.disconnected(conn)

    def close_by_consumer(self, conn: Connection) -> None:
        """The consumer closes its socket (or its process dies and the OS does)."""
        if not conn.consumer_open:
            return
        conn.consumer_open = False
        self._later(self._fin_to_broker, conn)

    def _fin_to_broker(self, conn: Connection) -> None:
        if not self.is_cut(conn.consumer):
            self._reset_to_broker(conn)

    def close_by_broker(self, conn: Connection) -> None:
        if not conn.broker_open:
            return
        conn.broker_open = False
        self._later(self._fin_to_consumer, conn)

    def _fin_to_consumer(self, conn: Connection) -> None:
        if conn.consumer_open and not self.is_cut(conn.consumer):
            conn.consumer.deliver(conn, "closed", None)

    def broker_died(self, broker_id: int) -> None:
        """The broker's process is gone: its OS resets every socket it had."""
        for conn in self.connections:
            if conn.broker_id == broker_id:
                self.close_by_broker(conn)
        self.connections = [c for c in self.connections
                            if c.consumer_open or c.broker_open]
