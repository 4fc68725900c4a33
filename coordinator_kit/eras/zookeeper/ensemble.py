"""A small ZooKeeper ensemble on the kit's scheduler: sessions, znodes, one-shot watches.

Just enough of ZooKeeper 3.4 (the version Kafka 0.8.2 ran on) for the 0.8.2 consumer to behave
as it did, seen as one server (an ensemble that is either up or not):

* **Sessions** (`ZooKeeperServer` / `SessionTrackerImpl`): any message from a client (a request
  or a ping) renews its session; a session not heard from for its timeout expires: the server
  logs `Expiring session 0x..., timeout of ...ms exceeded`, deletes the session's ephemeral
  znodes (firing the watches on them) and drops the session's watches.
* **Znodes**: persistent or ephemeral, each with a data version; `create` (NodeExists when the
  path is taken, NoNode when the parent is missing), `delete`, `getData`, `setData`,
  `getChildren`, `exists`.
* **Watches** are one-shot (`WatchManager`): a data watch (set by getData/exists) fires once on
  the node's change or deletion, a child watch (set by getChildren) fires once when a child is
  created or deleted; whoever wants the next event must read again with a watch.
* **Latency**: a request reaches the server after half of `latency_ms` and its reply comes back
  after the other half; a watch notification takes half as well.
* **Counting**: every request, reply, ping, pong, connect handshake and watch notification is
  one message (`messages`); `ops` counts requests by operation (`reads()` sums the reads) and
  `reads_under` counts getData by parent path: `/consumers/<g>/ids` is where the herd shows.

Faults, and what they do here (docs/eras-zookeeper.md has the story):

* `outage(ms)`: the ensemble is unreachable (lost quorum). Clients stop hearing pongs and go
  Disconnected after 2/3 of their session timeout; no session expires while the ensemble is
  down, and when it comes back every session starts a fresh timeout (a new ZooKeeper leader
  renews all sessions). Watches stay registered; changes cannot happen while it is down.
* `cut(client, ms)`: one client cannot reach the ensemble. The server stops hearing its pings
  and expires its session after the timeout (ephemerals deleted, watches of others fire); the
  client, on its side, goes Disconnected and retries; when the cut heals it learns Expired
  (or, within the timeout, reconnects to the same session and gets the notifications it
  missed: ZooKeeper re-registers a reconnecting client's watches).
* `delay_watches(client, ms)`: one client's watch notifications arrive late, so it acts on an
  older view of the group than the others (reads are not atomic across znodes either).

Kit choices where ZooKeeper's behaviour depends on timing the kit does not model: a request
sent while its client cannot reach the ensemble waits in the client until it is connected
again (ZkClient's `retryUntilConnected`), and one that reached the server gets its reply.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...clock import Scheduler
from ...trace import LogContext, Trace

__all__ = ["ZooKeeperEnsemble", "Znode", "ServerSession", "ZkError", "NodeExistsError",
           "NoNodeError", "NotEmptyError", "ZkOp", "Notification"]


class ZkError(Exception):
    """A `KeeperException`; `code` is ZooKeeper's name for it."""

    code = "SYSTEMERROR"

    def __init__(self, path: str) -> None:
        super().__init__(f"KeeperErrorCode = {self.code} for {path}")
        self.path = path


class NodeExistsError(ZkError):
    code = "NodeExists"


class NoNodeError(ZkError):
    code = "NoNode"


class NotEmptyError(ZkError):
    code = "Directory not empty"


@dataclass
class Znode:
    data: str
    version: int = 0
    ephemeral_owner: int = 0            # session id, 0 for a persistent node
    children: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class ZkOp:
    """One request: `kind` is create/delete/getData/setData/getChildren/exists."""

    kind: str
    path: str
    data: str = ""
    ephemeral: bool = False
    watch: bool = False

    def __str__(self) -> str:
        return f"{self.kind} {self.path}"


@dataclass(frozen=True)
class Notification:
    """A `WatchedEvent`: NodeDataChanged, NodeDeleted, NodeCreated or NodeChildrenChanged."""

    type: str
    path: str


@dataclass
class ServerSession:
    id: int
    timeout_ms: int
    client: Any                          # the ZkClient that owns it
    last_heard: int
    alive: bool = True
    undelivered: list[Notification] = field(default_factory=list)


_READS = ("getData", "getChildren", "exists")


class ZooKeeperEnsemble:
    """The ensemble as its clients see it (one address, up or down)."""

    def __init__(self, scheduler: Scheduler, trace: Trace, *, latency_ms: int = 2) -> None:
        self.scheduler = scheduler
        self.log = LogContext(trace, "zookeeper")
        self.latency_ms = latency_ms
        self.nodes: dict[str, Znode] = {"/": Znode("")}
        self.sessions: dict[int, ServerSession] = {}
        self._ids = itertools.count(1)
        self.up = True
        self.cut_off: set[str] = set()     # client names that cannot reach the ensemble
        self.watch_delay_ms: dict[str, int] = {}   # client name -> extra delay of its watches
        self.messages = 0
        self.ops: dict[str, int] = {}
        self.reads_under: dict[str, int] = {}   # parent path -> reads of its children's data
        self._data_watches: dict[str, set[int]] = {}
        self._child_watches: dict[str, set[int]] = {}
        # called as on_write(session id, op) when a create or setData is applied (checkers)
        self.on_write: Callable[[int, ZkOp], None] | None = None

    # -- what clients call ---------------------------------------------------------------------

    @property
    def leg_ms(self) -> int:
        """One way: half the round trip (the request leg rounds down)."""
        return self.latency_ms // 2

    def reachable(self, client_name: str) -> bool:
        return self.up and client_name not in self.cut_off

    def reads(self) -> int:
        """getData + getChildren + exists requests so far (what the herd effect multiplies)."""
        return sum(self.ops.get(k, 0) for k in _READS)

    def open_session(self, client: Any, timeout_ms: int) -> int:
        sid = 0x14F0000000000 + next(self._ids)
        self.sessions[sid] = ServerSession(sid, timeout_ms, client, self.scheduler.now)
        self._arm_expiry(sid)
        return sid

    def session_alive(self, sid: int) -> bool:
        s = self.sessions.get(sid)
        return s is not None and s.alive

    def touch(self, sid: int) -> None:
        """A message from the session's client arrived (a request or a ping)."""
        s = self.sessions.get(sid)
        if s is not None and s.alive:
            s.last_heard = self.scheduler.now

    def close_session(self, sid: int) -> None:
        """The client closed its session (`ZooKeeper.close`): ephemerals go at once."""
        self._end_session(sid)

    def execute(self, sid: int, op: ZkOp) -> Any:
        """Apply one request for session `sid` (at its arrival); raises a `ZkError`."""
        self.ops[op.kind] = self.ops.get(op.kind, 0) + 1
        self.touch(sid)
        node = self.nodes.get(op.path)
        if op.kind == "create":
            if node is not None:
                raise NodeExistsError(op.path)
            parent, name = _split(op.path)
            if parent not in self.nodes:
                raise NoNodeError(parent)
            if self.on_write is not None:
                self.on_write(sid, op)
            self.nodes[op.path] = Znode(op.data, 0, sid if op.ephemeral else 0)
            self.nodes[parent].children.add(name)
            self._fire(self._data_watches, op.path, "NodeCreated")
            self._fire(self._child_watches, parent, "NodeChildrenChanged")
            return op.path
        if op.kind == "exists":
            if op.watch:
                self._data_watches.setdefault(op.path, set()).add(sid)
            return node is not None
        if node is None:
            raise NoNodeError(op.path)
        if op.kind == "getData":
            parent = op.path.rpartition("/")[0] or "/"
            self.reads_under[parent] = self.reads_under.get(parent, 0) + 1
            if op.watch:
                self._data_watches.setdefault(op.path, set()).add(sid)
            return node.data
        if op.kind == "getChildren":
            if op.watch:
                self._child_watches.setdefault(op.path, set()).add(sid)
            return sorted(node.children)
        if op.kind == "setData":
            if self.on_write is not None:
                self.on_write(sid, op)
            node.data = op.data
            node.version += 1
            self._fire(self._data_watches, op.path, "NodeDataChanged")
            return node.version
        if op.kind == "delete":
            self._delete(op.path)
            return None
        raise ValueError(f"unknown ZooKeeper operation {op.kind!r}")

    def ensure_path(self, path: str, data: str = "") -> None:
        """Create a persistent path and its parents now (set-up, as an admin tool would)."""
        parts = path.strip("/").split("/")
        for i in range(1, len(parts) + 1):
            p = "/" + "/".join(parts[:i])
            if p not in self.nodes:
                parent, name = _split(p)
                self.nodes[p] = Znode(data if i == len(parts) else "")
                self.nodes[parent].children.add(name)

    def set_by_admin(self, path: str, data: str) -> None:
        """An admin tool (or the controller) writes an existing znode now: watchers fire."""
        node = self.nodes[path]
        node.data = data
        node.version += 1
        self._fire(self._data_watches, path, "NodeDataChanged")

    def ephemerals(self, sid: int) -> list[str]:
        return sorted(p for p, n in self.nodes.items() if n.ephemeral_owner == sid)

    # -- faults ----------------------------------------------------------------------------------

    def outage(self, duration_ms: int) -> None:
        """The ensemble is unreachable for `duration_ms`; sessions are renewed when it is back."""
        self.up = False
        self.log.event("zk_outage", "INFO", duration_ms=duration_ms)
        self.scheduler.call_later(duration_ms, self._recover, name="zookeeper back")

    def _recover(self) -> None:
        self.up = True
        now = self.scheduler.now
        for s in self.sessions.values():
            if s.alive:
                s.last_heard = now
        self.log.event("zk_recovered", "INFO")

    def cut(self, client_name: str, duration_ms: int) -> None:
        self.cut_off.add(client_name)
        self.scheduler.call_later(duration_ms, self.cut_off.discard, client_name,
                                  name=f"heal {client_name}")

    def delay_watches(self, client_name: str, delay_ms: int) -> None:
        """From now on, `client_name`'s watch notifications arrive `delay_ms` late (a slow
        link or a busy event thread): it acts on an older view than the others."""
        self.watch_delay_ms[client_name] = delay_ms

    # -- sessions and watches ----------------------------------------------------------------

    def _arm_expiry(self, sid: int) -> None:
        s = self.sessions[sid]
        due = max(0, s.last_heard + s.timeout_ms - self.scheduler.now)
        self.scheduler.call_later(due, self._check_expiry, sid, name=f"session 0x{sid:x}")

    def _check_expiry(self, sid: int) -> None:
        s = self.sessions.get(sid)
        if s is None or not s.alive:
            return
        if not self.up or self.scheduler.now < s.last_heard + s.timeout_ms:
            if not self.up:         # frozen while down; renewed on recovery
                s.last_heard = self.scheduler.now
            self._arm_expiry(sid)
            return
        self.log.log("ZK-EXPIRING", session=f"{sid:x}", timeout=s.timeout_ms)
        self._end_session(sid)
        if self.reachable(s.client.name):      # the server closes the client's socket
            self.scheduler.call_later(self.leg_ms, s.client.connection_closed, sid,
                                      name="socket closed")

    def _end_session(self, sid: int) -> None:
        s = self.sessions.get(sid)
        if s is None or not s.alive:
            return
        s.alive = False
        for watchers in (*self._data_watches.values(), *self._child_watches.values()):
            watchers.discard(sid)
        for path in self.ephemerals(sid):
            if path in self.nodes:
                self._delete(path)

    def _delete(self, path: str) -> None:
        node = self.nodes[path]
        if node.children:
            raise NotEmptyError(path)
        del self.nodes[path]
        parent, name = _split(path)
        self.nodes[parent].children.discard(name)
        self._fire(self._data_watches, path, "NodeDeleted")
        self._fire(self._child_watches, path, "NodeDeleted")
        self._fire(self._child_watches, parent, "NodeChildrenChanged")

    def _fire(self, table: dict[str, set[int]], path: str, type_: str) -> None:
        """Fire and forget the watches on `path` (one-shot), in session order."""
        watchers = table.pop(path, None)
        if not watchers:
            return
        event = Notification(type_, path)
        for sid in sorted(watchers):
            s = self.sessions[sid]
            if self.reachable(s.client.name):
                self.messages += 1
                delay = self.leg_ms + self.watch_delay_ms.get(s.client.name, 0)
                self.scheduler.call_later(delay, s.client.notified, sid, event,
                                          name=f"watch {type_} {path}")
            else:
                s.undelivered.append(event)

    def take_undelivered(self, sid: int) -> list[Notification]:
        """Notifications kept for a session while its client was away (sent on reconnect)."""
        s = self.sessions[sid]
        out, s.undelivered = s.undelivered, []
        self.messages += len(out)
        return out


def _split(path: str) -> tuple[str, str]:
    parent, _, name = path.rpartition("/")
    return parent or "/", name

