"""Notebook 08, your own consumers: a live server, real Kafka clients against it, and the checks
of the notebook's two exercises.

`start_session()` starts a `LiveServer` (`coordinator_kit.live`) on free ports of 127.0.0.1,
writing the brokers' log (Kafka's log4j layout) to a file in a fresh temporary folder; the
session starts real consumers as child processes (two kafka-python, one confluent-kafka, i.e.
librdkafka), shows them in a `LivePanel`, crashes one, measures when the coordinator removes it,
reads the log back with the kit's parser, and describes the group the way
`kafka-consumer-groups --describe` does, with kafka-python's `KafkaAdminClient`.

Real clients run on the wall clock, so their timings and member ids differ from run to run.
What the notebook prints for comparison is what does not: who owns which partitions (every
client uses the range assignor, which sorts members by member id, and a member id starts with
its client id), the group's state and member count, the order of the coordinator's events, and
whether the removal came within the window Kafka's session timer allows.

Every process and the server have time limits (`LIFETIME_S`): the consumers exit by themselves,
and a timer closes the session; `LiveSession.close()` (the notebook's last cell) stops all now.

The exercises' checks need no server: the answers follow from Kafka's rules.

1. which partitions does each survivor own if `rd-1` crashes instead? `RangeAssignor` (Kafka's,
   and kafka-python's and librdkafka's "range"), on the two survivors' member ids;
2. how long after a SIGKILL can the coordinator remove the member, at the earliest and at the
   latest? `GroupMetadataManager` re-arms a member's session timer on every heartbeat (and,
   while Stable, every offset commit) and removes the member ("has failed, removing it from the
   group") when `session.timeout.ms` passes without one; a crash lands anywhere in the
   `heartbeat.interval.ms` after the last heartbeat.
"""

from __future__ import annotations

import logging
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Iterable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from ..assignors import Subscription, get_assignor
from ..feedback import Feedback, not_answered
from ..live.processes import ConsumerProcess
from ..live.server import LiveServer
from ..logs.layout import format_timestamp
from ..logs.parse import ParseCounts, parse_lines
from .heartbeats import Table, unanswered

__all__ = [
    "GROUP", "TOPIC", "PARTITIONS", "SESSION_TIMEOUT_MS", "HEARTBEAT_INTERVAL_MS",
    "INITIAL_REBALANCE_DELAY_MS", "CONSUMERS", "CRASHED", "LIFETIME_S",
    "LiveSession", "Removal", "GroupDescription", "start_session", "describe_group",
    "range_assignment",
    # exercises
    "EXERCISE_1_CRASHED", "check_survivors", "check_removal_window",
]

GROUP = "group-1"
TOPIC = "orders"
PARTITIONS = 6
SESSION_TIMEOUT_MS = 6_000      # group.min.session.timeout.ms: the shortest a broker accepts
HEARTBEAT_INTERVAL_MS = 1_000   # a sixth of the session: several heartbeats fit in it
INITIAL_REBALANCE_DELAY_MS = 500
# client id, library: the member ids sort as the client ids do ("kp-1-<uuid>" < "kp-2-<uuid>")
CONSUMERS: tuple[tuple[str, str], ...] = (("kp-1", "kafka-python"), ("kp-2", "kafka-python"),
                                          ("rd-1", "confluent-kafka"))
CRASHED = "kp-2"
LIFETIME_S = 600.0  # every process, and the server, stop by themselves after this
_TIMING_SLACK_MS = 300  # a client's heartbeat can leave a little after its interval


def range_assignment(members: Iterable[str], partitions: int = PARTITIONS,
                     topic: str = TOPIC) -> dict[str, list[int]]:
    """What Kafka's `RangeAssignor` gives `members` (client ids, which sort as their member ids
    do) subscribed to one topic: partition numbers per member."""
    names = sorted(members)
    subs = {f"{m}-member": Subscription((topic,)) for m in names}
    out = get_assignor("range").assign({topic: partitions}, subs)
    return {m: sorted(tp.partition for tp in out[f"{m}-member"].partitions) for m in names}


# ---------------------------------------------------------------------------------------------
# The session: a server, its consumers, its panels


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
    """A live server with the notebook's consumers; see the module docstring."""

    def __init__(self, *, lifetime_s: float = LIFETIME_S, seed: int = 0,
                 produce_rate_per_s: float = 5.0) -> None:
        if lifetime_s <= 0:
            raise ValueError(f"lifetime_s must be > 0 (seconds before everything stops), got "
                             f"{lifetime_s!r}")
        self.lifetime_s = lifetime_s
        self.folder = Path(tempfile.mkdtemp(prefix="coordinator-kit-live-"))
        self.log_path = self.folder / "server.log"
        self._log = open(self.log_path, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self.server = LiveServer(
            port=0, topics={TOPIC: PARTITIONS}, seed=seed, log=self._log,
            produce_rate_per_s=produce_rate_per_s,
            group_config={"group.initial.rebalance.delay.ms": INITIAL_REBALANCE_DELAY_MS})
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
                f"{TOPIC!r} with {PARTITIONS} partitions, {len(self.consumers)} consumer "
                f"processes, {state})")

    # -- consumers ------------------------------------------------------------------------------

    def start_consumers(self, which: Sequence[tuple[str, str]] = CONSUMERS) -> Table:
        """Start one consumer process per (client id, library) in `GROUP`."""
        for client_id, library in which:
            if client_id in self.consumers:
                raise ValueError(f"{client_id} is already started; client ids: "
                                 f"{sorted(self.consumers)}")
            self.consumers[client_id] = ConsumerProcess(
                self.bootstrap, client_id, group=GROUP, client=library, topics=TOPIC,
                seconds=self.lifetime_s, session_timeout_ms=SESSION_TIMEOUT_MS,
                heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS)
            for panel in self.panels:
                panel.add_process(self.consumers[client_id])
        return Table([{"client id": c, "library": lib,
                       "settings": f"group.id={GROUP}, session.timeout.ms={SESSION_TIMEOUT_MS}, "
                                   f"heartbeat.interval.ms={HEARTBEAT_INTERVAL_MS}"}
                      for c, lib in which], title="started (each its own process)")

    def group(self) -> dict[str, Any]:
        """The group as its coordinator holds it now (`Cluster.group`)."""
        return self.server.call(lambda: self.server.cluster.group(GROUP))

    def assignments(self) -> dict[str, list[int]]:
        """Partition numbers per live client, as each one's rebalance listener last heard."""
        return {cid: [p for _t, p in proc.assignment]
                for cid, proc in sorted(self.consumers.items()) if proc.alive}

    def wait_stable(self, members: int, timeout_s: float = 40.0) -> Table:
        """Wait until the group is Stable with `members` members and the live clients' own
        assignments cover every partition once; returns `assignment_table()`."""
        deadline = time.monotonic() + timeout_s
        while True:
            g = self.group()
            owned = sorted(p for ps in self.assignments().values() for p in ps)
            if g["state"] == "Stable" and len(g["members"]) == members \
                    and len(self.assignments()) == members and owned == list(range(PARTITIONS)):
                return self.assignment_table()
            if time.monotonic() > deadline:
                raise TimeoutError(f"{GROUP} did not settle with {members} members in "
                                   f"{timeout_s} s: the coordinator has {g}, the clients own "
                                   f"{self.assignments()}")
            time.sleep(0.1)

    def assignment_table(self) -> Table:
        """Who owns what (stable from run to run: no member ids, no times)."""
        g = self.group()
        rows = [{"client id": cid, "library": self.consumers[cid].client,
                 "partitions": ps} for cid, ps in self.assignments().items()]
        return Table(rows, title=f"{GROUP}: {g['state']}, {len(g['members'])} members")

    def wait_committed(self, timeout_s: float = 15.0) -> dict[tuple[str, int], int]:
        """Wait until every partition has a committed offset (the clients auto-commit every
        second; a partition that changed owner is committed by its new owner soon after)."""
        deadline = time.monotonic() + timeout_s
        while True:
            committed = self.server.call(lambda: self.server.cluster.committed_offsets(GROUP))
            if sorted(p for t, p in committed if t == TOPIC) == list(range(PARTITIONS)):
                return committed
            if time.monotonic() > deadline:
                raise TimeoutError(f"{GROUP} has committed offsets for {sorted(committed)} "
                                   f"only, after {timeout_s} s")
            time.sleep(0.1)

    def panel(self, **options: Any) -> Any:
        """A `LivePanel` on this session's server and consumers, refreshing every second."""
        from ..viz.live_panel import LivePanel

        panel = LivePanel(self.server, group_id=GROUP, consumers=self.consumers.values(),
                          max_s=self.lifetime_s, **options)
        self.panels.append(panel)
        return panel

    # -- the crash ------------------------------------------------------------------------------

    def crash(self, client_id: str = CRASHED) -> str:
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

    def removal(self, client_id: str = CRASHED, timeout_s: float = 30.0) -> Removal:
        """Wait for the coordinator to remove the crashed member ("has failed") and the group
        to settle without it; the removal's time comes from the coordinator's own event."""
        if client_id not in self.crashed_at:
            raise ValueError(f"{client_id} was not crashed by this session; crashed: "
                             f"{sorted(self.crashed_at) or 'none'}")
        self.wait_stable(sum(1 for p in self.consumers.values() if p.alive), timeout_s)

        def when() -> int | None:
            for e in self.server.cluster.trace.events:
                if e.kind == "member_session_expired" and e.fields.get("group") == GROUP \
                        and str(e.fields.get("member", "")).startswith(client_id + "-"):
                    return e.ts
            return None
        removed = self.server.call(when)
        if removed is None:
            raise RuntimeError(f"{client_id} left {GROUP} without a session expiry: did it "
                               f"close cleanly?")
        return Removal(client_id, self.crashed_at[client_id], removed, SESSION_TIMEOUT_MS,
                       HEARTBEAT_INTERVAL_MS)

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

    def events_after_crash(self, client_id: str = CRASHED) -> Table:
        """The group's coordinator events from the crash on, in order, with member ids cut to
        their client ids and no times (so the table is the same on every run)."""
        since = self.server.started_at + timedelta(milliseconds=self.crashed_at[client_id])
        rows = [{"event": row["event"],
                 # the leader who sends the assignment is whoever rejoined first: not shown
                 "member": _client_of(row["member"]) if row["event"] != "assignment_received"
                 else "(the leader)", "state": row["state"]}
                for row in self.log_events()
                if row["group"] == GROUP and row["ts"] is not None and row["ts"] >= since]
        return Table(rows, title=f"{GROUP}'s coordinator after {client_id} was killed")

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
        with _quiet("asyncio"):
            self.server.stop()
        for panel in self.panels:
            panel.refresh()  # the status line says the server has stopped
        self._log.close()
        if not keep_log:
            shutil.rmtree(self.folder, ignore_errors=True)
        return (f"stopped {stopped} running consumer process"
                f"{'es' if stopped != 1 else ''} ({len(self.consumers)} started) and the server")


def start_session(**options: Any) -> LiveSession:
    """A live server on free ports of 127.0.0.1 (see `LiveSession`)."""
    return LiveSession(**options)


_MEMBER_ID = re.compile(r"^(.*)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def _client_of(member_id: str | None) -> str | None:
    """`kp-2-<uuid>` -> `kp-2` (Kafka's dynamic member id is the client id, "-", a UUID)."""
    if member_id is None:
        return None
    m = _MEMBER_ID.match(member_id)
    return m.group(1) if m else member_id


@contextmanager
def _quiet(*loggers: str) -> Any:
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


# ---------------------------------------------------------------------------------------------
# kafka-consumer-groups --describe, with kafka-python's admin client


@dataclass(frozen=True)
class GroupDescription:
    """What `kafka-consumer-groups --describe --group G` prints, gathered with kafka-python's
    `KafkaAdminClient`: DescribeGroups (`describe_groups`: state, members, their client ids,
    hosts and assignments), OffsetFetch (`list_group_offsets`: committed offsets) and
    ListOffsets (`list_partition_offsets`: log end offsets)."""

    group: str
    state: str
    protocol: str
    rows: tuple[dict[str, Any], ...]

    @property
    def table(self) -> Table:
        """The full table: offsets, lag and member ids change from run to run."""
        return Table(self.rows, columns=["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET",
                                         "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST",
                                         "CLIENT-ID"],
                     title=f"Consumer group '{self.group}' ({self.state}, {self.protocol})")

    def summary(self) -> Table:
        """The same group without what changes from run to run: per partition, its owner's
        client id and whether an offset is committed and not past the log's end."""
        rows = [{"TOPIC": r["TOPIC"], "PARTITION": r["PARTITION"], "CLIENT-ID": r["CLIENT-ID"],
                 "committed": r["CURRENT-OFFSET"] != "-",
                 "0 <= LAG": r["LAG"] != "-" and r["LAG"] >= 0} for r in self.rows]
        members = len({r["CONSUMER-ID"] for r in self.rows if r["CONSUMER-ID"] != "-"})
        return Table(rows, title=f"{self.group}: {self.state}, {members} members, "
                                 f"protocol {self.protocol}")


def describe_group(bootstrap: str, group: str = GROUP, timeout_s: float = 15.0
                   ) -> GroupDescription:
    """Describe `group` as `kafka-consumer-groups --describe` does, from a kafka-python
    `KafkaAdminClient` connected to `bootstrap` (closed before returning)."""
    from kafka import KafkaAdminClient, TopicPartition
    from kafka.admin import OffsetSpec

    with _quiet("kafka"):
        admin = KafkaAdminClient(bootstrap_servers=bootstrap.split(","),
                                 client_id="kit-admin", request_timeout_ms=int(timeout_s * 1000))
        try:
            described = admin.describe_groups([group])[group]
            committed = admin.list_group_offsets({group: None})[group]
            partitions = sorted({TopicPartition(tp.topic, tp.partition) for tp in committed}
                                | {TopicPartition(t, p) for m in described["members"]
                                   for t, p in _assigned(m)})
            ends = admin.list_partition_offsets({tp: OffsetSpec.LATEST for tp in partitions})
        finally:
            admin.close()
    owner: dict[tuple[str, int], dict[str, Any]] = {}
    for m in described["members"]:
        for tp in _assigned(m):
            owner[tp] = m
    rows = []
    for tp in partitions:
        key = (tp.topic, tp.partition)
        m = owner.get(key)
        current = committed[tp].offset if tp in committed else None
        end = ends[tp].offset if tp in ends else None
        rows.append({"GROUP": group, "TOPIC": tp.topic, "PARTITION": tp.partition,
                     "CURRENT-OFFSET": "-" if current is None or current < 0 else current,
                     "LOG-END-OFFSET": "-" if end is None else end,
                     "LAG": "-" if current is None or current < 0 or end is None
                     else end - current,
                     "CONSUMER-ID": m["member_id"] if m else "-",
                     "HOST": m["client_host"] if m else "-",
                     "CLIENT-ID": m["client_id"] if m else "-"})
    return GroupDescription(group, described["group_state"], described["protocol_data"],
                            tuple(rows))


def _assigned(member: dict[str, Any]) -> list[tuple[str, int]]:
    """The (topic, partition) pairs of a described member's decoded assignment."""
    assignment = member.get("member_assignment") or {}
    out = []
    for t in assignment.get("assigned_partitions", []) or []:
        for p in t.get("partitions", []):
            out.append((t["topic"], p))
    return sorted(out)


# ---------------------------------------------------------------------------------------------
# Exercises

EXERCISE_1_CRASHED = "rd-1"


def check_survivors(answer: Any) -> Feedback:
    """Exercise 1: the three consumers are Stable with the range assignment, and `rd-1` (not
    `kp-2`) is killed. Which partitions does each survivor own once the group has settled?
    Answer: {"kp-1": [...], "kp-2": [...]} (partition numbers of `orders`)."""
    name = "Exercise 1"
    if unanswered(answer):
        return not_answered(name, 'a dict {"kp-1": [...], "kp-2": [...]} of partition numbers')
    survivors = [c for c, _ in CONSUMERS if c != EXERCISE_1_CRASHED]
    truth = range_assignment(survivors)
    if not isinstance(answer, dict) or sorted(answer) != sorted(survivors):
        return Feedback(name, "wrong", f"Answer with one entry per survivor: "
                                       f"{', '.join(survivors)} (a dict of lists of partition "
                                       f"numbers), got {answer!r}.")
    try:
        given = {k: sorted(int(p) for p in v) for k, v in answer.items()}
    except (TypeError, ValueError):
        return Feedback(name, "wrong", "Each value is a list of partition numbers, e.g. "
                                       "[0, 1, 2].")
    if given == truth:
        return Feedback(name, "correct",
                        f"Range sorts the two members by member id ({' < '.join(survivors)}), "
                        f"gives each {PARTITIONS // len(survivors)} partitions of {TOPIC} in "
                        f"order: {truth}. Range does not try to keep what a member had: "
                        f"kp-2 had [2, 3] and now owns [3, 4, 5].")
    if sorted(p for v in given.values() for p in v) != list(range(PARTITIONS)):
        return Feedback(name, "wrong", f"After the rebalance every one of the {PARTITIONS} "
                                       f"partitions has exactly one owner.")
    return Feedback(name, "wrong", "Every client in this notebook uses the range assignor: it "
                                   "sorts the members by member id and hands out contiguous "
                                   "runs of partitions, the first members first.")


def check_removal_window(answer: Any) -> Feedback:
    """Exercise 2: with `session.timeout.ms` = 6000 and `heartbeat.interval.ms` = 1000, how
    long after a SIGKILL does the coordinator remove the member, at the earliest and at the
    latest (ignoring network and scheduling delays)? Answer: {"earliest_ms": ..., "latest_ms":
    ...}."""
    name = "Exercise 2"
    if unanswered(answer):
        return not_answered(name, 'a dict {"earliest_ms": ..., "latest_ms": ...}')
    if not isinstance(answer, dict) or sorted(answer) != ["earliest_ms", "latest_ms"]:
        return Feedback(name, "wrong", f'Answer with {{"earliest_ms": ..., "latest_ms": ...}}, '
                                       f"got {answer!r}.")
    earliest, latest = answer["earliest_ms"], answer["latest_ms"]
    truth = (SESSION_TIMEOUT_MS - HEARTBEAT_INTERVAL_MS, SESSION_TIMEOUT_MS)
    if (earliest, latest) == truth:
        return Feedback(name, "correct",
                        f"The session timer restarts at every heartbeat and runs "
                        f"{SESSION_TIMEOUT_MS:,} ms. A crash just before a heartbeat was due "
                        f"leaves {truth[0]:,} ms of it; a crash just after one leaves all "
                        f"{truth[1]:,} ms.")
    if latest != truth[1]:
        return Feedback(name, "wrong", "The latest: the process dies right after a heartbeat "
                                       "restarted the coordinator's session timer. How long "
                                       "does that timer run?")
    return Feedback(name, "wrong", "The earliest: the process dies just before its next "
                                   "heartbeat was due. How long ago was the last one, and so "
                                   "how much of the session timer is left?")
