"""A live server with real consumers for a notebook: start, watch, crash, read, stop.

`LiveSession` starts a `LiveServer` on free ports of 127.0.0.1, writing its brokers' log
(Kafka's log4j layout) to a file in a fresh temporary folder, starts real consumers of one
group as child processes (`ConsumerProcess`: kafka-python or confluent-kafka), shows them in a
`LivePanel`, crashes one (SIGKILL) and measures when the coordinator removes it, reads the log
back with the kit's parser, and stops everything in the right order: the panels' refreshing,
the consumers (a clean close: LeaveGroup), then the server, so no request is left in flight.

Real clients run on the wall clock: waiting for them is done here, with `time.monotonic()`,
like the rest of live mode (`driver.RealTimeDriver`). Every process and the server have a time
limit (`lifetime_s`): the consumers exit by themselves, and a timer closes the session.
"""

from __future__ import annotations

import logging
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from ..logs.layout import format_timestamp
from ..logs.parse import ParseCounts, parse_lines
from .processes import ConsumerProcess
from .server import LiveServer

__all__ = ["LiveSession", "Removal", "client_of", "quiet_loggers"]

_TIMING_SLACK_MS = 300  # a client's heartbeat can leave a little after its interval


@dataclass(frozen=True)
class Removal:
    """A crashed member's removal, in the server's virtual ms (level with the wall clock)."""

    client: str
    crashed_at_ms: int
    removed_at_ms: int
    session_timeout_ms: int
    heartbeat_interval_ms: int

    @property
    def after_ms(self) -> int:
        return self.removed_at_ms - self.crashed_at_ms

    @property
    def within_window(self) -> bool:
        """Removed no earlier than `session.timeout.ms` minus one heartbeat interval and no
        later than `session.timeout.ms` after the crash (with a little slack for a real
        client's heartbeat thread, which sends a few ms after its interval)."""
        low = self.session_timeout_ms - self.heartbeat_interval_ms - _TIMING_SLACK_MS
        return low <= self.after_ms <= self.session_timeout_ms + _TIMING_SLACK_MS

    def __repr__(self) -> str:
        return (f"{self.client} was removed {self.after_ms:,} ms after the crash "
                f"(session.timeout.ms={self.session_timeout_ms:,}, heartbeat.interval.ms="
                f"{self.heartbeat_interval_ms:,})")


class LiveSession:
    """A live server, the consumer processes of one group, its panels (module docstring)."""

    def __init__(self, *, group: str = "group-1", topic: str = "orders", partitions: int = 6,
                 session_timeout_ms: int = 6_000, heartbeat_interval_ms: int = 1_000,
                 initial_rebalance_delay_ms: int = 500, lifetime_s: float = 600.0,
                 seed: int = 0, produce_rate_per_s: float = 5.0) -> None:
        if lifetime_s <= 0:
            raise ValueError(f"lifetime_s must be > 0 (seconds before everything stops), got "
                             f"{lifetime_s!r}")
        self.lifetime_s = lifetime_s
        self.group_id, self.topic, self.partitions = group, topic, partitions
        self.session_timeout_ms = session_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.folder = Path(tempfile.mkdtemp(prefix="coordinator-kit-live-"))
        self.log_path = self.folder / "server.log"
        self._log = open(self.log_path, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self.server = LiveServer(
            port=0, topics={topic: partitions}, seed=seed, log=self._log,
            produce_rate_per_s=produce_rate_per_s,
            group_config={"group.initial.rebalance.delay.ms": initial_rebalance_delay_ms})
        self.server.start()
        self.consumers: dict[str, ConsumerProcess] = {}
        self.panels: list[Any] = []
        self.crashed_at: dict[str, int] = {}
        self.closed = False
        self._limit = threading.Timer(lifetime_s, self.close)
        self._limit.daemon = True
        self._limit.start()

    # -- naming ---------------------------------------------------------------------------------

    @property
    def bootstrap(self) -> str:
        """`bootstrap.servers` for a client of your own (e.g. in a terminal)."""
        return self.server.bootstrap

    def now_ms(self) -> int:
        return self.server.call(lambda: self.server.cluster.scheduler.now)

    def __repr__(self) -> str:
        state = "stopped" if self.closed else "running"
        return (f"LiveSession({len(self.server.cluster.brokers)} brokers on 127.0.0.1, topic "
                f"{self.topic!r} with {self.partitions} partitions, {len(self.consumers)} "
                f"consumer processes, {state})")

    # -- consumers ------------------------------------------------------------------------------

    def add_consumers(self, which: Sequence[tuple[str, str]]) -> list[ConsumerProcess]:
        """Start one consumer process per (client id, library) in the session's group, with
        its session timeout and heartbeat interval, for at most `lifetime_s`."""
        started = []
        for client_id, library in which:
            if client_id in self.consumers:
                raise ValueError(f"{client_id} is already started; client ids: "
                                 f"{sorted(self.consumers)}")
            proc = self.consumers[client_id] = ConsumerProcess(
                self.bootstrap, client_id, group=self.group_id, client=library,
                topics=self.topic, seconds=self.lifetime_s,
                session_timeout_ms=self.session_timeout_ms,
                heartbeat_interval_ms=self.heartbeat_interval_ms)
            for panel in self.panels:
                panel.add_process(proc)
            started.append(proc)
        return started

    def group(self) -> dict[str, Any]:
        """The group as its coordinator holds it now (`Cluster.group`)."""
        return self.server.call(lambda: self.server.cluster.group(self.group_id))

    def assignments(self) -> dict[str, list[int]]:
        """Partition numbers per live client, as each one's rebalance listener last heard."""
        return {cid: [p for _t, p in proc.assignment]
                for cid, proc in sorted(self.consumers.items()) if proc.alive}

    def wait_settled(self, members: int, timeout_s: float = 40.0) -> dict[str, list[int]]:
        """Wait until the group is Stable with `members` members and the live clients' own
        assignments cover every partition once; returns those assignments."""
        deadline = time.monotonic() + timeout_s
        while True:
            g = self.group()
            owned = self.assignments()
            if g["state"] == "Stable" and len(g["members"]) == members \
                    and len(owned) == members \
                    and sorted(p for ps in owned.values() for p in ps) == \
                    list(range(self.partitions)):
                return owned
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.group_id} did not settle with {members} members in "
                                   f"{timeout_s} s: the coordinator has {g}, the clients own "
                                   f"{owned}")
            time.sleep(0.1)

    def wait_committed(self, timeout_s: float = 15.0) -> dict[tuple[str, int], int]:
        """Wait until every partition has a committed offset (the clients auto-commit every
        second; a partition that changed owner is committed by its new owner soon after)."""
        deadline = time.monotonic() + timeout_s
        while True:
            committed = self.server.call(
                lambda: self.server.cluster.committed_offsets(self.group_id))
            if sorted(p for t, p in committed if t == self.topic) == list(range(self.partitions)):
                return committed
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.group_id} has committed offsets for "
                                   f"{sorted(committed)} only, after {timeout_s} s")
            time.sleep(0.1)

    def panel(self, **options: Any) -> Any:
        """A `LivePanel` on this session's server and consumers, refreshing every second."""
        from ..viz.live_panel import LivePanel

        panel = LivePanel(self.server, group_id=self.group_id, consumers=self.consumers.values(),
                          max_s=self.lifetime_s, **options)
        self.panels.append(panel)
        return panel

    # -- the crash ------------------------------------------------------------------------------

    def crash(self, client_id: str) -> str:
        """SIGKILL the consumer: it sends nothing more (no LeaveGroup, no commit)."""
        proc = self.consumers.get(client_id)
        if proc is None:
            raise ValueError(f"no consumer {client_id!r}; started: {sorted(self.consumers)}")
        if not proc.alive:
            raise ValueError(f"{client_id} is not running")
        proc.crash()
        self.crashed_at[client_id] = self.now_ms()
        return (f"{client_id} killed (SIGKILL, exit code {proc.proc.returncode}); the "
                f"coordinator still counts {len(self.group()['members'])} members")

    def removal(self, client_id: str, timeout_s: float = 30.0) -> Removal:
        """Wait for the coordinator to remove the crashed member ("has failed") and the group
        to settle without it; the removal's time comes from the coordinator's own event."""
        if client_id not in self.crashed_at:
            raise ValueError(f"{client_id} was not crashed by this session; crashed: "
                             f"{sorted(self.crashed_at) or 'none'}")
        self.wait_settled(sum(1 for p in self.consumers.values() if p.alive), timeout_s)

        def when() -> int | None:
            for e in self.server.cluster.trace.events:
                if e.kind == "member_session_expired" \
                        and e.fields.get("group") == self.group_id \
                        and str(e.fields.get("member", "")).startswith(client_id + "-"):
                    return e.ts
            return None
        removed = self.server.call(when)
        if removed is None:
            raise RuntimeError(f"{client_id} left {self.group_id} without a session expiry: "
                               f"did it close cleanly?")
        return Removal(client_id, self.crashed_at[client_id], removed, self.session_timeout_ms,
                       self.heartbeat_interval_ms)

    # -- the log --------------------------------------------------------------------------------

    def log_lines(self, contains: str = "", *, since_crash_of: str | None = None) -> list[str]:
        """The server's log file as written (wall-clock times): the lines that contain
        `contains`, from the crash of `since_crash_of` on if given."""
        self._log.flush()
        since = ""
        if since_crash_of is not None:
            since = "[" + format_timestamp(self.crashed_at[since_crash_of],
                                           self.server.started_at) + "]"
        return [line for line in self.log_path.read_text(encoding="utf-8").splitlines()
                if contains in line and line[:len(since)] >= since]

    def log_events(self) -> list[dict[str, Any]]:
        """The log file read by the kit's parser (`logs.parse.parse_lines`, the semantics of
        `logs parse`): one row per recognised event."""
        counts = ParseCounts()
        rows = [row for kind, row in parse_lines(self.log_lines(), self.log_path.name, counts)
                if kind == "event"]
        counts.check()
        return rows

    def events_since_crash(self, client_id: str) -> list[dict[str, Any]]:
        """The group's coordinator events from the crash of `client_id` on, in order: event,
        member (cut back to its client id; "(the leader)" for the assignment, which comes from
        whichever survivor rejoined first) and state, with no times."""
        since = self.server.started_at + timedelta(milliseconds=self.crashed_at[client_id])
        return [{"event": row["event"],
                 "member": client_of(row["member"]) if row["event"] != "assignment_received"
                 else "(the leader)", "state": row["state"]}
                for row in self.log_events()
                if row["group"] == self.group_id and row["ts"] is not None
                and row["ts"] >= since]

    # -- the end --------------------------------------------------------------------------------

    def close(self, keep_log: bool = False) -> str:
        """Stop everything: the panels' refreshing, every consumer (a clean close: LeaveGroup),
        the server; then delete the log's folder (unless `keep_log`)."""
        if self.closed:
            return "already stopped"
        self.closed = True
        self._limit.cancel()
        for panel in self.panels:
            panel.close()
        stopped = 0
        for proc in self.consumers.values():
            if proc.alive:
                proc.stop(timeout_s=10)
                stopped += 1
            proc.close()
        deadline = time.monotonic() + 3
        while self.server.running and time.monotonic() < deadline and self.server.call(
                lambda: any(c.client_id in self.consumers for c in self.server.connections)):
            time.sleep(0.05)  # their connections close: the server has nothing in flight
        with quiet_loggers("asyncio"):
            self.server.stop()
        for panel in self.panels:
            panel.refresh()  # the status line says the server has stopped
        self._log.close()
        if not keep_log:
            shutil.rmtree(self.folder, ignore_errors=True)
        return (f"stopped {stopped} running consumer process"
                f"{'es' if stopped != 1 else ''} ({len(self.consumers)} started) and the server")


_MEMBER_ID = re.compile(r"^(.*)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def client_of(member_id: str | None) -> str | None:
    """`kp-2-<uuid>` -> `kp-2` (Kafka's dynamic member id is the client id, "-", a UUID)."""
    if member_id is None:
        return None
    m = _MEMBER_ID.match(member_id)
    return m.group(1) if m else member_id


@contextmanager
def quiet_loggers(*loggers: str) -> Iterator[None]:
    """Keep these loggers' records off stderr for a moment (the asyncio loop reports the
    tasks still waiting on closed connections when the server's loop closes)."""
    saved = [(logging.getLogger(n), logging.getLogger(n).level) for n in loggers]
    for logger, _ in saved:
        logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for logger, level in saved:
            logger.setLevel(level)
