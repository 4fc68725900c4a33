"""A minimal ZooKeeper for the centralised coordinator draft: nodes, sessions, ephemeral
nodes and one-shot watches, on the virtual clock.

What the draft needs from ZooKeeper and no more: the election node `/consumers/coordinator`
(ephemeral, bound to the winning broker's session, gone when that session ends), the group
directories, the ownership written at the end of each rebalance, the flushed offsets, and the
topics' partition counts with a watch on each (Apache wiki "Central Consumer Coordination" and
its ZooKeeper-channel variant). Sessions end either at once (a clean close) or when the session
timeout passes after the client stops heart-beating (a dead broker): that delay is what keeps a
dead coordinator's election node in place, as in ZooKeeper's own session expiry.

A watch fires once, one network delay after the change, as `callback(path, event)` with event
"created", "changed" or "deleted"; the client sets it again if it still cares (ZooKeeper's
one-shot watches).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ...clock import Scheduler, TimerHandle

__all__ = ["ZooKeeper", "Session", "NodeExists"]

Watch = Callable[[str, str], None]


class NodeExists(Exception):
    """ZooKeeper's NodeExistsException: create() on a path that is there."""


@dataclass
class Session:
    id: int
    owner: str
    timeout_ms: int
    alive: bool = True
    expiry: TimerHandle | None = None
    ephemerals: set[str] = field(default_factory=set)


class ZooKeeper:
    """The ensemble as one store (the draft never depends on which server answers)."""

    def __init__(self, scheduler: Scheduler, latency_ms: int) -> None:
        self.scheduler = scheduler
        self.latency_ms = latency_ms
        self.nodes: dict[str, object] = {}
        self.owner: dict[str, int] = {}             # ephemeral path -> session id
        self.sessions: dict[int, Session] = {}
        self._watches: dict[str, list[Watch]] = {}
        self.operations = 0                          # reads and writes served
        self._next_session = 0

    # -- sessions -------------------------------------------------------------------------------

    def open_session(self, owner: str, timeout_ms: int) -> Session:
        self._next_session += 1
        s = Session(self._next_session, owner, timeout_ms)
        self.sessions[s.id] = s
        return s

    def close_session(self, session: Session) -> None:
        """A clean close: the ephemeral nodes go at once."""
        if session.expiry is not None:
            session.expiry.cancel()
        self._end(session)

    def client_died(self, session: Session) -> None:
        """The client stopped heart-beating: the session expires after its timeout."""
        if session.alive and session.expiry is None:
            session.expiry = self.scheduler.call_later(session.timeout_ms, self._end, session,
                                                       name=f"zk-session-expiry-{session.id}")

    def _end(self, session: Session) -> None:
        if not session.alive:
            return
        session.alive = False
        for path in sorted(session.ephemerals):
            self._delete(path)
        session.ephemerals.clear()

    # -- nodes ----------------------------------------------------------------------------------

    def create(self, path: str, data: object, session: Session | None = None) -> None:
        """Create `path` (ephemeral when `session` is given); NodeExists when it is there."""
        self.operations += 1
        if session is not None and not session.alive:
            raise ValueError(f"session {session.id} of {session.owner} has expired")
        if path in self.nodes:
            raise NodeExists(path)
        self.nodes[path] = data
        if session is not None:
            self.owner[path] = session.id
            session.ephemerals.add(path)
        self._fire(path, "created")

    def set(self, path: str, data: object) -> None:
        """Write `path`, creating it (persistent) when missing."""
        self.operations += 1
        existed = path in self.nodes
        self.nodes[path] = data
        self._fire(path, "changed" if existed else "created")

    def get(self, path: str, watch: Watch | None = None) -> object | None:
        self.operations += 1
        if watch is not None:
            self._watches.setdefault(path, []).append(watch)
        return self.nodes.get(path)

    def children(self, path: str) -> list[str]:
        """Names directly under `path`, sorted (ZooKeeper's getChildren, ordered)."""
        self.operations += 1
        prefix = path.rstrip("/") + "/"
        return sorted({p[len(prefix):].split("/", 1)[0] for p in self.nodes
                       if p.startswith(prefix)})

    def _delete(self, path: str) -> None:
        if path in self.nodes:
            del self.nodes[path]
            self.owner.pop(path, None)
            self._fire(path, "deleted")

    def _fire(self, path: str, event: str) -> None:
        watches = self._watches.pop(path, None)
        for watch in watches or ():
            self.scheduler.call_later(self.latency_ms, watch, path, event,
                                      name=f"zk-watch {path}")
