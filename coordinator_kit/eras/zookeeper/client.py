"""The consumer's ZooKeeper client: I0Itec's `ZkClient` over ZooKeeper's `ClientCnxn` (3.4).

What the 0.8.2 consumer relies on, and so what the kit reproduces:

* **Pings.** `ClientCnxn` pings when it has sent nothing for a third of the session timeout
  (its read timeout, 2/3 of the session, halved); the kit pings every third. A client that has
  heard nothing for 2/3 of the session goes Disconnected (`Client session timed out, have not
  heard from server in ...ms`) and tries again after a random pause of up to one second.
* **Reconnecting.** Within the session timeout it gets its session back (SyncConnected) and the
  notifications it missed; after it, the server answers that the session expired: the client
  logs `Unable to reconnect to ZooKeeper service, session 0x... has expired`, ZkClient opens a
  new session, calls every state listener's `handleNewSession` and fires every child and data
  listener once (`ZkClient.fireAllEvents`), because watches died with the old session.
* **`retryUntilConnected`.** A request made while disconnected waits and is sent when the
  client is connected again, on whatever session it has then.
* **Listeners over one-shot watches.** `subscribeChildChanges` / `subscribeDataChanges` set a
  watch; when it fires, ZkClient's event thread reads the node again *with a new watch* and
  only then calls the listeners, one event at a time. Every re-read is a request.

Every callback goes through the owning process (`host.run`), so a paused consumer's client does
nothing until it wakes and a crashed one does nothing at all.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

from ...trace import LogContext
from .ensemble import NoNodeError, Notification, ZkError, ZkOp, ZooKeeperEnsemble

__all__ = ["ZkClient", "Host"]

Callback = Callable[[Any, ZkError | None], None]


class Host(Protocol):
    """The process a client lives in: it runs callbacks, or holds them while paused."""

    name: str

    def run(self, fn: Callable[..., Any], *args: Any) -> None: ...

    def later(self, delay_ms: int, fn: Callable[..., Any], *args: Any) -> None: ...


class ZkClient:
    """One consumer's connection and session; `state` is ZooKeeper's `KeeperState` name."""

    def __init__(self, ensemble: ZooKeeperEnsemble, host: Host, session_timeout_ms: int,
                 rng: random.Random, log: LogContext) -> None:
        self.ensemble = ensemble
        self.host = host
        self.name = host.name
        self.session_timeout_ms = session_timeout_ms
        self.rng = rng
        self.log = log
        self.state = "Disconnected"
        self.sid = 0
        self.closed = False
        self.last_heard = 0
        self.pending: deque[tuple[ZkOp, Callback]] = deque()
        self.child_listeners: dict[str, list[Callable[[str, list[str] | None], None]]] = {}
        self.data_listeners: dict[str, list[Callable[[str, str | None], None]]] = {}
        self.new_session_listeners: list[Callable[[], None]] = []
        self._events: deque[Notification] = deque()
        self._event_busy = False
        self._reconnecting = False

    @property
    def scheduler(self) -> Any:
        return self.ensemble.scheduler

    @property
    def events_waiting(self) -> bool:
        """A watch event is queued for, or being handled by, the event thread."""
        return bool(self._events) or self._event_busy

    @property
    def connected(self) -> bool:
        return self.state == "SyncConnected"

    # -- connection ------------------------------------------------------------------------------

    def start(self) -> None:
        """Connect (a new session) and start pinging."""
        self._open_session(first=True)
        self.host.later(self.session_timeout_ms // 3, self._ping_tick)

    def _open_session(self, first: bool = False) -> None:
        ens = self.ensemble
        if not ens.reachable(self.name):
            self.host.later(1 + self.rng.randrange(1000), self._open_session, first)
            return
        ens.messages += 2
        self.host.later(ens.latency_ms, self._session_opened, first)

    def _session_opened(self, first: bool) -> None:
        if self.closed:
            return
        self.sid = self.ensemble.open_session(self, self.session_timeout_ms)
        self._now_connected()
        if not first:
            for listener in list(self.new_session_listeners):
                listener()
            self._fire_all_events()

    def _now_connected(self) -> None:
        self.state = "SyncConnected"
        self.last_heard = self.scheduler.now
        self.log.log("ZK-ESTABLISHED", session=f"{self.sid:x}", timeout=self.session_timeout_ms)
        self.log.log("ZK-STATE", state="SyncConnected")
        self._flush()

    def _ping_tick(self) -> None:
        if self.closed:
            return
        ens = self.ensemble
        now = self.scheduler.now
        if self.connected:
            silent = now - self.last_heard
            # ClientCnxn pings after a third of the session of silence and gives up on a
            # server it has not heard from in two thirds of it (its read timeout)
            if silent >= self.session_timeout_ms * 2 // 3:
                self.log.log("ZK-TIMED-OUT", ms=silent, session=f"{self.sid:x}")
                self._disconnected()
            elif ens.reachable(self.name):
                ens.messages += 2
                self.scheduler.call_later(ens.leg_ms, ens.touch, self.sid, name="ping")
                self.host.later(ens.latency_ms, self._pong)
        self.host.later(self.session_timeout_ms // 3, self._ping_tick)

    def _pong(self) -> None:
        """The server answered: the link works again, so what waited on either side goes
        (TCP delivers what a short cut held back; the client never noticed the cut). A
        session the server expired meanwhile gets no answer but a closed connection: the close
        the server sent at expiry may have been lost in a cut, the next ping finds out."""
        if self.connected and not self.ensemble.session_alive(self.sid):
            self.log.log("ZK-SOCKET-CLOSED", session=f"{self.sid:x}")
            self._disconnected()
            return
        self.last_heard = self.scheduler.now
        if self.connected:
            self._flush()
            if self.ensemble.session_alive(self.sid):
                for event in self.ensemble.take_undelivered(self.sid):
                    self._on_event(self.sid, event)

    def connection_closed(self, sid: int) -> None:
        """The server closed the socket (it expired the session)."""
        self.host.run(self._on_closed, sid)

    def _on_closed(self, sid: int) -> None:
        if sid == self.sid and self.connected and not self.closed:
            self.log.log("ZK-SOCKET-CLOSED", session=f"{sid:x}")
            self._disconnected()

    def _disconnected(self) -> None:
        self.state = "Disconnected"
        self.log.log("ZK-STATE", state="Disconnected")
        self._schedule_reconnect()

    def _schedule_reconnect(self) -> None:
        if not self._reconnecting:
            self._reconnecting = True
            self.host.later(1 + self.rng.randrange(1000), self._reconnect)

    def _reconnect(self) -> None:
        self._reconnecting = False
        if self.closed or self.connected:
            return
        ens = self.ensemble
        if not ens.reachable(self.name):
            self._schedule_reconnect()
            return
        ens.messages += 2
        alive = ens.session_alive(self.sid)
        if alive:
            ens.touch(self.sid)
            missed = ens.take_undelivered(self.sid)
            self.host.later(ens.latency_ms, self._resumed, missed)
        else:
            self.host.later(ens.latency_ms, self._expired)

    def _resumed(self, missed: list[Notification]) -> None:
        if self.closed:
            return
        self._now_connected()
        for event in missed:
            self._on_event(self.sid, event)

    def _expired(self) -> None:
        if self.closed:
            return
        self.log.log("ZK-SESSION-EXPIRED", session=f"{self.sid:x}")
        self.state = "Expired"
        self.log.log("ZK-STATE", state="Expired")
        self._events.clear()
        self._open_session()

    def close(self) -> None:
        """`ZkClient.close`: the session ends now, its ephemeral znodes go with it."""
        if self.closed:
            return
        self.closed = True
        ens = self.ensemble
        if self.connected and ens.reachable(self.name):
            ens.messages += 2
            self.scheduler.call_later(ens.leg_ms, ens.close_session, self.sid,
                                      name="closeSession")
            self.log.log("ZK-CLOSED", session=f"{self.sid:x}")
        self.state = "Closed"

    # -- requests --------------------------------------------------------------------------------

    def call(self, op: ZkOp, callback: Callback) -> None:
        """Send `op`; `callback(result, error)` runs with the reply (retryUntilConnected)."""
        if self.closed:
            return
        if self.connected and self.ensemble.reachable(self.name) and not self.pending:
            self._send(op, callback)
        else:
            self.pending.append((op, callback))

    def _send(self, op: ZkOp, callback: Callback) -> None:
        ens = self.ensemble
        ens.messages += 1
        self.scheduler.call_later(ens.leg_ms, self._at_server, self.sid, op, callback,
                                  name=f"zk {op}")

    def _flush(self) -> None:
        while self.pending and self.connected and self.ensemble.reachable(self.name):
            self._send(*self.pending.popleft())

    def _at_server(self, sid: int, op: ZkOp, callback: Callback) -> None:
        ens = self.ensemble
        if not ens.up or not ens.session_alive(sid):
            # connection loss: ZkClient sends it again once connected
            self.pending.appendleft((op, callback))
            return
        try:
            result, error = ens.execute(sid, op), None
        except ZkError as exc:
            result, error = None, exc
        ens.messages += 1
        self.host.later(ens.latency_ms - ens.leg_ms, self._reply, callback, result, error)

    def _reply(self, callback: Callback, result: Any, error: ZkError | None) -> None:
        self.last_heard = self.scheduler.now
        callback(result, error)

    # -- listeners ---------------------------------------------------------------------------------

    def subscribe_child_changes(self, path: str,
                                listener: Callable[[str, list[str] | None], None]) -> None:
        self.child_listeners.setdefault(path, []).append(listener)
        self.call(ZkOp("exists", path, watch=True), _ignore)
        self.call(ZkOp("getChildren", path, watch=True), _ignore)

    def subscribe_data_changes(self, path: str,
                               listener: Callable[[str, str | None], None]) -> None:
        self.data_listeners.setdefault(path, []).append(listener)
        self.call(ZkOp("exists", path, watch=True), _ignore)

    def subscribe_new_session(self, listener: Callable[[], None]) -> None:
        self.new_session_listeners.append(listener)

    def notified(self, sid: int, event: Notification) -> None:
        """A watch fired on the server; the notification reaches this client's process."""
        self.host.run(self._on_event, sid, event)

    def _on_event(self, sid: int, event: Notification) -> None:
        if sid != self.sid or self.closed:
            return
        self.log.log("ZK-EVENT", type=event.type, path=event.path)
        self._events.append(event)
        self._next_event()

    def _fire_all_events(self) -> None:
        for path in sorted(self.child_listeners):
            self._events.append(Notification("NodeChildrenChanged", path))
        for path in sorted(self.data_listeners):
            self._events.append(Notification("NodeDataChanged", path))
        self._next_event()

    def _next_event(self) -> None:
        """ZkClient's event thread: one event at a time, re-watch, then the listeners."""
        if self._event_busy or not self._events:
            return
        event = self._events.popleft()
        self._event_busy = True
        path = event.path
        if path in self.child_listeners:
            def children(result: Any, error: ZkError | None) -> None:
                for listener in list(self.child_listeners[path]):
                    listener(path, None if error else result)
                self._event_done()
            self.call(ZkOp("getChildren", path, watch=True), children)
        elif path in self.data_listeners:
            def data(result: Any, error: ZkError | None) -> None:
                if isinstance(error, NoNodeError):
                    self.call(ZkOp("exists", path, watch=True), _ignore)
                for listener in list(self.data_listeners[path]):
                    listener(path, None if error else result)
                self._event_done()
            self.call(ZkOp("getData", path, watch=True), data)
        else:
            self._event_done()

    def _event_done(self) -> None:
        self._event_busy = False
        self._next_event()


def _ignore(result: Any, error: ZkError | None) -> None:
    return None
