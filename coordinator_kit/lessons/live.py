"""Notebook 08, your own consumers: a live server, real Kafka clients against it, and the checks
of the notebook's two exercises.

`start_session()` starts a `LiveServer` (`coordinator_kit.live`) on free ports of 127.0.0.1
through `coordinator_kit.live.session.LiveSession`, which writes the brokers' log to a file,
starts real consumers as child processes (here two kafka-python, one confluent-kafka, i.e.
librdkafka), shows them in a `LivePanel`, crashes one, measures when the coordinator removes it
and reads the log back with the kit's parser; this module adds the lesson's settings, the tables
the notebook prints, and `describe_group`, which describes the group the way
`kafka-consumer-groups --describe` does, with kafka-python's `KafkaAdminClient`.

Real clients run on the wall clock, so their timings and member ids differ from run to run.
What the notebook prints for comparison is what does not: who owns which partitions (every
client uses the range assignor, which sorts members by member id, and a member id starts with
its client id), the group's state and member count, the order of the coordinator's events, and
whether the removal came within the window Kafka's session timer allows.

Every process and the server have time limits (`LIFETIME_S`): the consumers exit by themselves,
and a timer closes the session; `close()` (the notebook's last cell) stops all now.

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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..assignors import Subscription, get_assignor
from ..feedback import Feedback, not_answered
from ..live.session import LiveSession, Removal, quiet_loggers
from .heartbeats import Table, unanswered

__all__ = [
    "GROUP", "TOPIC", "PARTITIONS", "SESSION_TIMEOUT_MS", "HEARTBEAT_INTERVAL_MS",
    "INITIAL_REBALANCE_DELAY_MS", "CONSUMERS", "CRASHED", "LIFETIME_S",
    "LessonSession", "LiveSession", "Removal", "GroupDescription", "start_session",
    "describe_group", "list_groups",
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


class LessonSession(LiveSession):
    """The notebook's session (`coordinator_kit.live.session.LiveSession` with the lesson's
    group, topic and timeouts), whose answers are tables that print the same on every run."""

    def __init__(self, *, lifetime_s: float = LIFETIME_S, seed: int = 0,
                 produce_rate_per_s: float = 5.0) -> None:
        super().__init__(group=GROUP, topic=TOPIC, partitions=PARTITIONS,
                         session_timeout_ms=SESSION_TIMEOUT_MS,
                         heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS,
                         initial_rebalance_delay_ms=INITIAL_REBALANCE_DELAY_MS,
                         lifetime_s=lifetime_s, seed=seed, produce_rate_per_s=produce_rate_per_s)

    def start_consumers(self, which: Sequence[tuple[str, str]] = CONSUMERS) -> Table:
        """Start one consumer process per (client id, library)."""
        self.add_consumers(which)
        return Table([{"client id": c, "library": lib,
                       "settings": f"group.id={GROUP}, session.timeout.ms={SESSION_TIMEOUT_MS}, "
                                   f"heartbeat.interval.ms={HEARTBEAT_INTERVAL_MS}"}
                      for c, lib in which], title="started (each its own process)")

    def wait_stable(self, members: int, timeout_s: float = 40.0) -> Table:
        """Wait until the group is Stable with `members` members and the live clients' own
        assignments cover every partition once; returns `assignment_table()`."""
        self.wait_settled(members, timeout_s)
        return self.assignment_table()

    def assignment_table(self) -> Table:
        """Who owns what (stable from run to run: no member ids, no times)."""
        g = self.group()
        rows = [{"client id": cid, "library": self.consumers[cid].client,
                 "partitions": ps} for cid, ps in self.assignments().items()]
        return Table(rows, title=f"{GROUP}: {g['state']}, {len(g['members'])} members")

    def events_after_crash(self, client_id: str = CRASHED) -> Table:
        """The group's coordinator events from the crash on (`events_since_crash`)."""
        return Table(self.events_since_crash(client_id),
                     title=f"{GROUP}'s coordinator after {client_id} was killed")


def start_session(**options: Any) -> LessonSession:
    """A live server on free ports of 127.0.0.1 with the lesson's settings (`LessonSession`)."""
    return LessonSession(**options)


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


def list_groups(bootstrap: str, timeout_s: float = 15.0) -> Table:
    """Every group, as `kafka-consumer-groups --list --state` prints them: kafka-python's
    `KafkaAdminClient.list_groups` sends ListGroups to every broker (each answers for the
    coordinator partitions it leads) and merges the answers."""
    from kafka import KafkaAdminClient

    with quiet_loggers("kafka"):
        admin = KafkaAdminClient(bootstrap_servers=bootstrap.split(","),
                                 client_id="kit-admin", request_timeout_ms=int(timeout_s * 1000))
        try:
            groups = admin.list_groups()
        finally:
            admin.close()
    rows = [{"GROUP": g["group_id"], "STATE": g["group_state"], "TYPE": g["group_type"],
             "PROTOCOL TYPE": g["protocol_type"]}
            for g in sorted(groups, key=lambda g: g["group_id"])]
    return Table(rows, columns=["GROUP", "STATE", "TYPE", "PROTOCOL TYPE"],
                 title="kafka-consumer-groups --list --state")


def describe_group(bootstrap: str, group: str = GROUP, timeout_s: float = 15.0
                   ) -> GroupDescription:
    """Describe `group` as `kafka-consumer-groups --describe` does, from a kafka-python
    `KafkaAdminClient` connected to `bootstrap` (closed before returning)."""
    from kafka import KafkaAdminClient, TopicPartition
    from kafka.admin import OffsetSpec

    with quiet_loggers("kafka"):
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
