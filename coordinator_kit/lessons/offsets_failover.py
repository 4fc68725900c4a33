"""Lesson 04: offset commits, their records in `__consumer_offsets`, and coordinator failover.

The notebook runs a `Cluster` (brokers, replicated `__consumer_offsets`, consumers on one
virtual clock). This module holds the views its cells print and the exercise checks:

* where a group lives: Java's `String.hashCode` of the group id, modulo
  `offsets.topic.num.partitions`, names the partition; its leader is the coordinator;
* the records of a `__consumer_offsets` partition decoded with the kit's
  `GroupCoordinatorRecordSerde` (Kafka's framing and schemas), and one record taken apart byte by
  byte;
* what the coordinator serves (an OffsetFetch at the committed offset, DescribeGroups) and what
  each consumer was told is committed, side by side, so "nothing acknowledged was lost" is
  something a cell shows rather than claims.
* where a group is served from, in Kafka's terms (`group_status`): loaded on the partition's
  leader, loading, or not loaded anywhere (a FAILED context), the error its requests get then,
  and what brings it back;
* the run's timeline as a picture that renders in an untrusted notebook (`group_timeline`).

Exercise answers start as `...`; a check then says "not answered yet" without raising.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..cluster import Cluster
from ..errors import Errors
from ..group.api import OffsetCommitRequest, OffsetFetchRequest, PartitionData, RequestContext
from ..group.records import (GROUP_METADATA_RECORD_TYPE, OFFSET_COMMIT_KEY,
                             OFFSET_COMMIT_RECORD_TYPE, OFFSET_COMMIT_VALUE, RECORD_TYPE_NAMES,
                             GroupCoordinatorRecordSerde, Message)
from ..group.service import java_string_hashcode, partition_for
from ..runtime.records import CoordinatorRecord
from ..runtime.runtime import CoordinatorState
from ..invariants import KAFKA_ALLOWS_OFFSET_BEHIND
from ..scenarios import new_cluster
from ..topic import TopicPartition
from .runtime_lifecycle import (NOT_ANSWERED, LogCursor, TextTable, Verdict, as_error,
                                hints, log_table, unanswered)

__all__ = [
    "SERDE", "LogCursor", "TextTable", "Verdict", "NOT_ANSWERED",
    "group_cluster", "where_is", "records_table", "describe_record", "explain_record",
    "coordinator_state", "compare_states", "offsets_table", "wait_for_load",
    "replicas_table", "offset_over_time", "regressions_table",
    "stall_followers", "resume_followers", "count_record_types",
    "ServedState", "GroupStatus", "group_status", "SvgImage", "group_timeline",
    "exercise_2_cluster", "exercise_3_run", "exercise_3_outcome",
    "check_exercise_1", "check_exercise_2", "check_exercise_3",
]

SERDE = GroupCoordinatorRecordSerde()
ADMIN = RequestContext("lesson-04-admin", "/127.0.0.1")


def group_cluster(consumers: int = 2, run_ms: int = 20_000, seed: int = 0,
                  group_id: str = "group-1", **kwargs: Any) -> Cluster:
    """A cluster (3 brokers, `__consumer_offsets` with 3 partitions, topic `orders` with 6)
    with `consumers` consumers in one group, run for `run_ms` of virtual time."""
    if consumers < 0 or run_ms < 0:
        raise ValueError(f"need consumers >= 0 and run_ms >= 0, got {consumers}, {run_ms}")
    cluster = new_cluster(seed=seed, **kwargs)
    for i in range(1, consumers + 1):
        cluster.add_consumer(f"consumer-{i}", group_id)
    cluster.run_for(run_ms)
    return cluster


# --------------------------------------------------------------------------------------------
# Where a group lives


def where_is(cluster: Cluster, group_id: str) -> str:
    """The arithmetic that finds a group's coordinator, and what the cluster says about it."""
    n = cluster.config.offsets_topic_num_partitions
    h = java_string_hashcode(group_id)
    tp = TopicPartition.offsets(partition_for(group_id, n))
    p = cluster.partitions[tp]
    return (f"{group_id!r}.hashCode() = {h}; abs({h}) % {n} = {tp.partition} -> {tp}\n"
            f"{tp}: leader broker {p.leader_id} (leader epoch {p.leader_epoch}), replicas "
            f"{sorted(p.replicas)}, ISR {p.isr}, log end {p.log_end_offset}, high watermark "
            f"{p.high_watermark}\n"
            f"coordinator of {group_id!r}: {cluster.broker_host(p.leader_id)} "
            f"(broker {p.leader_id})")


# --------------------------------------------------------------------------------------------
# Records


def describe_record(record: CoordinatorRecord) -> tuple[str, str]:
    """(key, value) of a group coordinator record in a few words; a tombstone's value is null."""
    name = RECORD_TYPE_NAMES.get(record.record_type, "?")
    k = record.key
    if record.record_type in (0, OFFSET_COMMIT_RECORD_TYPE):
        key = f"{name} {k['group']} {k['topic']}-{k['partition']}"
        if record.value is None:
            return key, "null"
        v = record.value
        return key, (f"v{record.value_version} offset={v['offset']} "
                     f"commitTimestamp={v['commitTimestamp']}")
    if record.record_type == GROUP_METADATA_RECORD_TYPE:
        key = f"{name} {k['group']}"
        if record.value is None:
            return key, "null"
        v = record.value
        members = ", ".join(_client(m["memberId"]) for m in v["members"]) or "none"
        return key, (f"v{record.value_version} generation={v['generation']} "
                     f"protocol={v['protocol']} members=[{members}]")
    return f"{name} {dict(k)}", "null" if record.value is None else str(dict(record.value))


def _client(member_id: str) -> str:
    """A member id is `<clientId>-<UUID>`; the client id is enough to tell members apart here."""
    parts = member_id.rsplit("-", 5)
    return parts[0] if len(parts) == 6 else member_id


def records_table(cluster: Cluster, group_id: str, broker: int | None = None,
                  last: int | None = None) -> TextTable:
    """The records of the group's `__consumer_offsets` partition on one broker (the leader by
    default), decoded with Kafka's serde; `last` keeps only the last rows."""
    table = log_table(cluster.partitions[cluster.partition_of(group_id)], SERDE, broker,
                      describe_record)
    if last is not None:
        if last < 1:
            raise ValueError(f"last must be >= 1, got {last}")
        table.rows = table.rows[-last:]
    return table


def count_record_types(cluster: Cluster, group_id: str, broker: int | None = None
                       ) -> dict[str, int]:
    """How many records of each type the group's partition holds (on the leader by default)."""
    p = cluster.partitions[cluster.partition_of(group_id)]
    b = p.leader_id if broker is None else broker
    counts: dict[str, int] = {}
    for batch in p.read(b):
        for key, value in batch.records:
            name = RECORD_TYPE_NAMES[SERDE.deserialize(key, value).record_type]
            counts[name] = counts.get(name, 0) + 1
    return dict(sorted(counts.items()))


def _raw_record(cluster: Cluster, group_id: str, offset: int) -> tuple[bytes, bytes | None]:
    p = cluster.partitions[cluster.partition_of(group_id)]
    for batch in p.read(p.leader_id):
        if batch.base_offset <= offset < batch.next_offset:
            for at, key, value in batch.offset_records():
                if at == offset:
                    return key, value
    raise ValueError(f"no record at offset {offset} in {p.tp}; its log ends at "
                     f"{p.log_end_offset} (the log cleaner removes a record once a later one "
                     f"has its key)")


def _fields(schema: Message, data: bytes, version: int, start: int) -> list[tuple[str, str, str]]:
    """(field, hex bytes, value) for each field of a non-flexible struct starting at `start`."""
    rows, pos = [], start
    sizes = {"int8": 1, "int16": 2, "int32": 4, "int64": 8}
    fmt = {"int8": ">b", "int16": ">h", "int32": ">i", "int64": ">q"}
    for f in schema.fields:
        if version not in f.versions:
            continue
        if f.type in sizes:
            raw = data[pos:pos + sizes[f.type]]
            rows.append((f.name, raw.hex(" "), str(struct.unpack(fmt[f.type], raw)[0])))
            pos += sizes[f.type]
        elif f.type == "string":
            (n,) = struct.unpack(">h", data[pos:pos + 2])
            raw = data[pos:pos + 2 + max(n, 0)]
            rows.append((f.name, raw.hex(" "), "null" if n < 0 else repr(raw[2:].decode())))
            pos += 2 + max(n, 0)
        else:
            raise ValueError(f"{schema.name}.{f.name} ({f.type}) is not a flat field; "
                             f"explain_record takes OffsetCommit records")
    if pos != len(data):
        raise ValueError(f"{len(data) - pos} bytes left after {schema.name}")
    return rows


def explain_record(cluster: Cluster, group_id: str, offset: int) -> TextTable:
    """One OffsetCommit record of the group's partition, taken apart field by field: Kafka's
    framing (int16 record type, key struct; int16 value version, value struct)."""
    key, value = _raw_record(cluster, group_id, offset)
    record = SERDE.deserialize(key, value)
    if record.record_type not in (0, OFFSET_COMMIT_RECORD_TYPE):
        raise ValueError(f"offset {offset} holds a "
                         f"{RECORD_TYPE_NAMES.get(record.record_type, '?')} record; "
                         f"explain_record takes OffsetCommit records")
    key_schema, value_schema = OFFSET_COMMIT_KEY, OFFSET_COMMIT_VALUE
    table = TextTable(["part", "field", "bytes", "value"],
                      title=f"record at offset {offset}: key {len(key)} bytes, value "
                            f"{0 if value is None else len(value)} bytes")
    table.add(["key", "record type", key[:2].hex(" "),
               f"{record.record_type} ({RECORD_TYPE_NAMES[record.record_type]})"])
    for name, raw, shown in _fields(key_schema, key, record.record_type, 2):
        table.add(["key", name, raw, shown])
    if value is None:
        table.add(["value", "(tombstone)", "-", "null"])
        return table
    table.add(["value", "value version", value[:2].hex(" "), str(record.value_version)])
    for name, raw, shown in _fields(value_schema, value, record.value_version, 2):
        table.add(["value", name, raw, shown])
    return table


# --------------------------------------------------------------------------------------------
# What the coordinator serves, and what the consumers were told


@dataclass(frozen=True)
class ServedState:
    """The group and its offsets as the coordinator serves them at its committed offset."""

    broker: int | None
    context: str
    group: Mapping[str, Any]
    offsets: Mapping[tuple[str, int], int]
    error: str | None = None

    def __repr__(self) -> str:
        g = self.group
        members = ", ".join(_client(m) for m in g.get("members", [])) or "none"
        offsets = ", ".join(f"{t}-{p}={o}" for (t, p), o in sorted(self.offsets.items()))
        head = f"coordinator: broker {self.broker}, context {self.context}"
        if self.error:
            return f"{head}\nrequests fail with {self.error}"
        return (f"{head}\ngroup {g.get('group_id')}: {g.get('state')}, generation "
                f"{g.get('generation')}, members [{members}]\ncommitted offsets: {offsets or '-'}")


def coordinator_state(cluster: Cluster, group_id: str) -> ServedState:
    """Ask the group's coordinator, as a client would: DescribeGroups and OffsetFetch, both
    read operations, answered from the state at the last committed offset."""
    tp = cluster.partition_of(group_id)
    b = cluster.partitions[tp].leader_id
    rt = cluster.brokers[b].runtime
    state = rt.context_state(tp)
    context = "none" if state is None else state.name
    if state is not CoordinatorState.ACTIVE:
        error = Errors.COORDINATOR_LOAD_IN_PROGRESS if state is CoordinatorState.LOADING \
            else Errors.NOT_COORDINATOR
        return ServedState(b, context, {}, {}, error.name)
    service = cluster.brokers[b].service
    described = service.describe_group(group_id)
    fetched = service.fetch_offsets(ADMIN, OffsetFetchRequest(group_id))
    cluster.scheduler.run_pending()
    response = fetched.result()
    offsets = {tp_: data.offset for tp_, data in response.offsets.items()}
    return ServedState(b, context, described.result(), offsets)


@dataclass(frozen=True)
class GroupStatus:
    """Where a group is served from, in Kafka's terms: the broker that leads its
    `__consumer_offsets` partition (what FindCoordinator answers), the state of that broker's
    coordinator context for the partition, the group as it holds it when the context is
    ACTIVE, and otherwise the error the group's requests get there and what brings the group
    back."""

    group_id: str
    partition: str
    broker: int
    leader_epoch: int
    context: str                      # CoordinatorState name, or "none"
    context_epoch: int | None
    group: Mapping[str, Any] | None   # DescribeGroups, when the context is ACTIVE
    error: Errors | None              # what a request for the group gets, when not ACTIVE
    failure: str | None = None        # the exception of the failed load, when FAILED

    @property
    def loaded(self) -> bool:
        return self.context == CoordinatorState.ACTIVE.name

    def short(self) -> str:
        """One line, for a status bar: the group's state when it is served, otherwise why
        not and what its requests get."""
        if self.loaded:
            g = self.group or {}
            n = len(g.get("members", []))
            return (f"{self.group_id}: {g.get('state')} (generation {g.get('generation')}, "
                    f"{n} member{'s' if n != 1 else ''})")
        what = "loading" if self.context == CoordinatorState.LOADING.name else "not loaded"
        error = self.error.name if self.error else "NONE"
        return (f"{self.group_id}: {what} (context {self.context} on broker {self.broker}, "
                f"requests get {error})")

    def __str__(self) -> str:
        import textwrap

        where = f"broker {self.broker} ({self.partition}, leader epoch {self.leader_epoch})"
        if self.loaded:
            g = self.group or {}
            members = len(g.get("members", []))
            if g.get("state") in (None, "Dead") and not members:
                text = (f"{self.group_id}: not in the state of {where}, whose context is ACTIVE: "
                        f"no member has joined it and no offset of it is committed there.")
            else:
                text = (f"{self.group_id}: {g.get('state')}, generation {g.get('generation')}, "
                        f"{members} member{'s' if members != 1 else ''}; served by {where}, "
                        f"context ACTIVE.")
            return textwrap.fill(text, 96)
        error = self.error.name if self.error else "NONE"
        if self.context == CoordinatorState.FAILED.name:
            cause = f" ({self.failure})" if self.failure else ""
            text = (f"{self.group_id} is not loaded on any broker. {where.capitalize()} leads "
                    f"the partition, so FindCoordinator names it, but its coordinator context "
                    f"for the partition is FAILED: the load at epoch {self.context_epoch} "
                    f"failed{cause}. Every request for the group (Heartbeat, OffsetCommit, "
                    f"OffsetFetch, JoinGroup, DescribeGroups) gets {error}, and the clients "
                    f"look the coordinator up again, only to be sent back to broker "
                    f"{self.broker}. A context stays FAILED until a load with a higher leader "
                    f"epoch: the group comes back when {self.partition} gets a new leader "
                    f"(move the coordinator), which loads the group and its offsets from the "
                    f"log.")
        elif self.context == CoordinatorState.LOADING.name:
            text = (f"{self.group_id} is loading on {where}: the loader is replaying the "
                    f"partition's log. Requests get {error} and the clients retry the same "
                    f"broker (a classic Heartbeat is answered NONE); the group is served once "
                    f"the load completes.")
        elif self.context == CoordinatorState.INITIAL.name:
            text = (f"{self.group_id} is not loaded yet: {where} has just been made leader; "
                    f"its context for the partition is INITIAL and its Load event waits in "
                    f"the queue. Until the load starts, requests for the group get {error}.")
        else:
            state = "no coordinator context" if self.context == "none" else \
                f"a context in state {self.context}"
            text = (f"{self.group_id} is not loaded on any broker: {where} leads the partition "
                    f"but has {state} for it. Requests for the group get {error}; the group "
                    f"comes back when a broker loads the partition at a new leader epoch.")
        return textwrap.fill(text, 96)

    __repr__ = __str__


def group_status(cluster: Cluster, group_id: str = "group-1") -> GroupStatus:
    """The truth about where `group_id` is served, read from the cluster as it is now (see
    `GroupStatus`). A broker's context answers a request with
    `CoordinatorRuntime.withActiveContextOrThrow`: ACTIVE runs it, LOADING answers
    COORDINATOR_LOAD_IN_PROGRESS, anything else (FAILED, CLOSED, no context) NOT_COORDINATOR."""
    tp = cluster.partition_of(group_id)
    p = cluster.partitions[tp]
    b = p.leader_id
    ctx = cluster.brokers[b].runtime.context(tp)
    state = None if ctx is None else ctx.state
    context = "none" if state is None else state.name
    epoch = None if ctx is None else ctx.epoch
    if state is CoordinatorState.ACTIVE:
        served = coordinator_state(cluster, group_id)
        return GroupStatus(group_id, str(tp), b, p.leader_epoch, context, epoch,
                           dict(served.group), None)
    error = Errors.COORDINATOR_LOAD_IN_PROGRESS if state is CoordinatorState.LOADING \
        else Errors.NOT_COORDINATOR
    failure = None
    if state is CoordinatorState.FAILED:
        source = f"broker-{b}"
        for e in reversed(cluster.trace.events):
            if e.kind == "load_failed" and e.source == source \
                    and str(e.fields.get("tp")) == str(tp):
                exc = str(e.fields.get("exception", ""))
                failure = exc.split(":")[0].rsplit(".", 1)[-1] or None
                break
    return GroupStatus(group_id, str(tp), b, p.leader_epoch, context, epoch, None, error,
                       failure)


class SvgImage:
    """An SVG picture for a notebook cell, stored as `text/html`: an `<img>` with the SVG as a
    data URL, which JupyterLab shows in an untrusted notebook too (it shows `image/svg+xml`
    only as text until the cells run), and its title as `text/plain`."""

    def __init__(self, svg: str, title: str) -> None:
        start = svg.find("<svg")
        if start < 0:
            raise ValueError("SvgImage needs SVG text containing an <svg> element")
        self.svg = svg[start:]
        self.title = title

    def html(self) -> str:
        import html
        import urllib.parse

        data = urllib.parse.quote(self.svg, safe=" /:=;,'()!*@$+?-_.~")
        return (f'<img src="data:image/svg+xml,{data}" alt="{html.escape(self.title)}" '
                f'title="{html.escape(self.title)}">')

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/html": self.html(), "text/plain": repr(self)}

    def __repr__(self) -> str:
        return f"<picture: {self.title}>"


def group_timeline(cluster: Cluster, group_id: str = "group-1") -> SvgImage:
    """The run so far as swimlanes (`coordinator_kit.viz.plots.swimlanes`): the group as each
    coordinator held it on top, each member's state below, coordinator moves marked."""
    import matplotlib.pyplot as plt

    from ..viz.plots import figure_svg, swimlanes

    fig = swimlanes(cluster.trace, groups=(group_id,))
    try:
        svg = figure_svg(fig)
    finally:
        plt.close(fig)
    return SvgImage(svg, f"{group_id} and its members, 0 to {cluster.scheduler.now:,} ms")


def compare_states(before: ServedState, after: ServedState) -> TextTable:
    """Field by field: what the old coordinator served and what the new one serves."""
    table = TextTable(["what", "before", "after", "same"])

    def row(what: str, a: Any, b: Any) -> None:
        table.add([what, a, b, "yes" if a == b else "NO"])

    row("coordinator broker", before.broker, after.broker)
    for key in ("state", "generation", "protocol", "leader"):
        row(f"group {key}", before.group.get(key), after.group.get(key))
    row("group members", len(before.group.get("members", [])),
        len(after.group.get("members", [])))
    for tp in sorted(set(before.offsets) | set(after.offsets)):
        row(f"offset {tp[0]}-{tp[1]}", before.offsets.get(tp), after.offsets.get(tp))
    return table


def offsets_table(cluster: Cluster, group_id: str = "group-1") -> TextTable:
    """Per partition: its owner, the owner's position, what the consumers were told is
    committed (acknowledged), and what the coordinator serves now."""
    served = coordinator_state(cluster, group_id)
    acknowledged: dict[tuple[str, int], tuple[str, int]] = {}
    owners: dict[tuple[str, int], tuple[str, int]] = {}
    for name, consumer in sorted(cluster.consumers.items()):
        if consumer.config.group_id != group_id:
            continue
        for tp, offset in consumer.committed.items():
            key = (tp.topic, tp.partition)
            if key not in acknowledged or offset > acknowledged[key][1]:
                acknowledged[key] = (name, offset)
        for tp in consumer.owned:
            owners[(tp.topic, tp.partition)] = (name, consumer.positions.get(tp, -1))
    table = TextTable(["partition", "owner", "position", "acknowledged", "coordinator",
                       "acknowledged <= coordinator"],
                      title=f"t = {cluster.scheduler.now} ms, coordinator broker "
                            f"{served.broker} ({served.context})")
    for key in sorted(set(acknowledged) | set(owners) | set(served.offsets)):
        owner, position = owners.get(key, (None, None))
        ack = acknowledged.get(key, (None, None))[1]
        have = served.offsets.get(key)
        ok = "-" if ack is None else ("yes" if have is not None and ack <= have else "NO")
        table.add([f"{key[0]}-{key[1]}", owner, position, ack, have, ok])
    return table


def replicas_table(cluster: Cluster, group_id: str) -> TextTable:
    """The replicas of the group's `__consumer_offsets` partition: each broker's log end and
    the high watermark it knows (a follower learns it from the leader's fetch responses, so it
    is a round behind), whether it fetches and whether it is in the ISR."""
    p = cluster.partitions[cluster.partition_of(group_id)]
    table = TextTable(["broker", "role", "log end", "high watermark", "fetching", "in ISR"],
                      title=f"t = {cluster.scheduler.now} ms, {p.tp}, leader epoch "
                            f"{p.leader_epoch}, ISR {p.isr}")
    for b, replica in sorted(p.replicas.items()):
        table.add([b, "leader" if b == p.leader_id else "follower", replica.log_end_offset,
                   replica.high_watermark, "-" if b == p.leader_id else
                   ("yes" if replica.fetching else "NO (stalled)"),
                   "yes" if b in p.isr else "no"])
    return table


def offset_over_time(cluster: Cluster, group_id: str, partition: tuple[str, int],
                     times: Sequence[int]) -> TextTable:
    """Run the cluster to each of `times` (virtual ms) and note, for one partition of the
    group, what its coordinator serves to a read at the committed offset (an OffsetFetch
    without require_stable, as `kafka-consumer-groups --describe` sends) and the highest
    offset the consumers were told is committed, with the leader's high watermark and ISR."""
    table = TextTable(["t (ms)", "leader", "ISR", "high watermark", "log end", "served",
                       "acknowledged"],
                      title=f"{partition[0]}-{partition[1]} of {group_id}")
    tp = cluster.partition_of(group_id)
    for t in times:
        cluster.run_until(t)
        p = cluster.partitions[tp]
        served = coordinator_state(cluster, group_id)
        acknowledged = max((offset for c in cluster.consumers.values()
                            if c.config.group_id == group_id
                            for t_, offset in c.committed.items()
                            if (t_.topic, t_.partition) == partition), default=None)
        table.add([t, p.leader_id, ",".join(map(str, p.isr)), p.high_watermark,
                   p.log_end_offset,
                   served.error or served.offsets.get(partition, "-"), acknowledged])
    return table


def regressions_table(cluster: Cluster) -> TextTable:
    """The regressions that Kafka allows, as the cluster's `InvariantMonitor` saw them: a
    committed offset a new coordinator served older than its predecessor had (its high
    watermark not yet past the newer record), from when and until when."""
    table = TextTable(["partition", "group", "served", "instead of", "broker", "from (ms)",
                       "until (ms)", "high watermark", "record at"],
                      title=f"{KAFKA_ALLOWS_OFFSET_BEHIND} (Kafka allows it)")
    for r in cluster.monitor.regressions:  # type: ignore[attr-defined]
        table.add([f"{r.topic}-{r.partition}", r.group, "none" if r.now is None else r.now,
                   "none" if r.was is None else r.was, r.leader, r.ts,
                   "-" if r.restored_ms is None else r.restored_ms, r.high_watermark,
                   r.record_offset])
    return table


def wait_for_load(cluster: Cluster, group_id: str, limit_ms: int = 60_000) -> int:
    """Run until the group's current leader has an ACTIVE context; returns the virtual time."""
    tp = cluster.partition_of(group_id)

    def active() -> bool:
        b = cluster.partitions[tp].leader_id
        return cluster.brokers[b].runtime.context_state(tp) is CoordinatorState.ACTIVE
    cluster.run_until(active, limit_ms=limit_ms)
    return cluster.scheduler.now


def stall_followers(cluster: Cluster, group_id: str) -> list[int]:
    """The followers of the group's partition stop fetching; returns their broker ids."""
    p = cluster.partitions[cluster.partition_of(group_id)]
    followers = [b for b in p.replicas if b != p.leader_id]
    for b in followers:
        p.stall_replica(b)
    return followers


def resume_followers(cluster: Cluster, group_id: str) -> None:
    p = cluster.partitions[cluster.partition_of(group_id)]
    for b in p.replicas:
        if b != p.leader_id:
            p.resume_replica(b)


# --------------------------------------------------------------------------------------------
# Exercise checks

EXERCISE_1_GROUP = "payments"
EXERCISE_1_PARTITIONS = 50  # offsets.topic.num.partitions, Kafka's default


def check_exercise_1(answer: Any) -> Verdict:
    """Exercise 1: the `__consumer_offsets` partition of group "payments" with 50 partitions."""
    ex = "Exercise 1"
    missing = unanswered(ex, answer, "a partition number")
    if missing:
        return missing
    if not isinstance(answer, int) or isinstance(answer, bool):
        return Verdict(ex, False, "give the partition number as an int, e.g. 7")
    expected = partition_for(EXERCISE_1_GROUP, EXERCISE_1_PARTITIONS)
    h = java_string_hashcode(EXERCISE_1_GROUP)
    if answer == expected:
        return Verdict(ex, True, f"'{EXERCISE_1_GROUP}'.hashCode() is {h}, and abs({h}) % "
                                 f"{EXERCISE_1_PARTITIONS} = {expected}: the leader of "
                                 f"__consumer_offsets-{expected} coordinates the group.")
    if not 0 <= answer < EXERCISE_1_PARTITIONS:
        hint = f"partitions are numbered 0..{EXERCISE_1_PARTITIONS - 1}."
    elif answer == partition_for(EXERCISE_1_GROUP, 3):
        hint = ("that is the partition with 3 partitions (this notebook's cluster); the "
                "question asks for Kafka's default of 50.")
    else:
        hint = ("take Java's String.hashCode() of the group id (not Python's hash(); the kit "
                "has java_string_hashcode), its absolute value, modulo "
                "offsets.topic.num.partitions.")
    return Verdict(ex, False, hint)


def exercise_2_cluster() -> Cluster:
    """One consumer in group-1 for 30 s of virtual time (seed 0): the log to read."""
    return group_cluster(consumers=1, run_ms=30_000)


def check_exercise_2(answer: Any) -> Verdict:
    """Exercise 2: how many OffsetCommit and GroupMetadata records `exercise_2_cluster()` wrote
    to group-1's partition."""
    ex = "Exercise 2"
    missing = unanswered(ex, answer,
                          'a dict {"OffsetCommit": ..., "GroupMetadata": ...} of counts')
    if missing:
        return missing
    if not isinstance(answer, Mapping) or set(answer) != {"OffsetCommit", "GroupMetadata"}:
        return Verdict(ex, False, 'give a dict with the keys "OffsetCommit" and '
                                  '"GroupMetadata"')
    blank = [k for k, v in sorted(answer.items()) if v is NOT_ANSWERED]
    if len(blank) == 2:
        return Verdict(ex, None, "replace each ... with a count and run this cell again.")
    if blank:
        return Verdict(ex, None, f"fill in the count of {blank[0]} too.")
    counts = count_record_types(exercise_2_cluster(), "group-1")
    expected = {"OffsetCommit": counts.get("OffsetCommit", 0),
                "GroupMetadata": counts.get("GroupMetadata", 0)}
    if dict(answer) == expected:
        return Verdict(ex, True, f"{expected['GroupMetadata']} GroupMetadata records (the "
                                 f"empty group, then each completed rebalance) and "
                                 f"{expected['OffsetCommit']} OffsetCommit records, one per "
                                 f"partition per auto-commit.")
    parts = []
    if answer.get("OffsetCommit") != expected["OffsetCommit"]:
        parts.append("each auto-commit writes one OffsetCommit record per partition the "
                     "consumer owns; an auto-commit that finds nothing new is not sent.")
    if answer.get("GroupMetadata") != expected["GroupMetadata"]:
        parts.append("a GroupMetadata record is written when the group is created (empty) and "
                     "when the leader's assignment is stored.")
    return Verdict(ex, False, hints("read records_table(exercise_2_cluster(), 'group-1').",
                                    *parts))


EXERCISE_3_GROUP = "audit"  # a simple group: offsets committed by a tool, no members
EXERCISE_3_OFFSET = 4242
EXERCISE_3_STALL_MS = 6_000


def exercise_3_run() -> tuple[Cluster, Any]:
    """The run behind exercise 3: a tool commits EXERCISE_3_OFFSET for `orders-0` in group
    "audit" at 100 ms, while the followers of the group's partition have stopped fetching; they
    resume EXERCISE_3_STALL_MS later. Returns the cluster 100 ms after that and the commit's
    future (its result is the OffsetCommit response)."""
    cluster = group_cluster(consumers=0, run_ms=100)
    tp = cluster.partition_of(EXERCISE_3_GROUP)
    coordinator = cluster.brokers[cluster.partitions[tp].leader_id].service
    stall_followers(cluster, EXERCISE_3_GROUP)
    response = coordinator.commit_offsets(ADMIN, OffsetCommitRequest(
        EXERCISE_3_GROUP, -1, "", {("orders", 0): PartitionData(EXERCISE_3_OFFSET)}))
    cluster.run_for(EXERCISE_3_STALL_MS)
    resume_followers(cluster, EXERCISE_3_GROUP)
    cluster.run_for(100)
    return cluster, response


def exercise_3_outcome() -> tuple[Errors | None, bool]:
    """A commit reaches a coordinator whose followers have stopped fetching; they resume
    EXERCISE_3_STALL_MS later. Returns the error in the commit's response and whether the
    coordinator serves the committed offset afterwards."""
    cluster, response = exercise_3_run()
    result = response.result()
    errors = {e for e in result.errors.values()} | {result.error}
    errors.discard(Errors.NONE)
    error = min(errors, key=lambda e: e.name) if errors else None
    served = coordinator_state(cluster, EXERCISE_3_GROUP).offsets.get(("orders", 0))
    return error, served == EXERCISE_3_OFFSET


def check_exercise_3(answer: Any) -> Verdict:
    """Exercise 3: (error in the commit's response, does the coordinator serve the offset?)."""
    ex = "Exercise 3"
    missing = unanswered(ex, answer, 'a pair (error name or "NONE", True or False)')
    if missing:
        return missing
    if not isinstance(answer, (list, tuple)) or len(answer) != 2 or \
            not isinstance(answer[1], bool):
        return Verdict(ex, False, 'give a pair: (error name or "NONE", True or False)')
    try:
        error = as_error(answer[0])
    except ValueError as exc:
        return Verdict(ex, False, str(exc))
    expected_error, expected_kept = exercise_3_outcome()
    if (error, answer[1]) == (expected_error, expected_kept):
        return Verdict(ex, True, "after offsets.commit.timeout.ms (5 s) the write times out "
                                 "(REQUEST_TIMED_OUT), which the group coordinator answers as "
                                 "COORDINATOR_NOT_AVAILABLE; but a timeout rolls nothing back, "
                                 "so once the followers catch up the offset is committed and "
                                 "served.")
    parts = []
    if error is not expected_error:
        parts.append("the response does not wait 6 s: offsets.commit.timeout.ms is 5 s, and "
                     "the service maps the runtime's error for the client "
                     "(handleOperationException)."
                     if error in (None, Errors.REQUEST_TIMED_OUT) else
                     "nothing unloads here: leadership does not move.")
    if answer[1] != expected_kept:
        parts.append("a timed-out write is not reverted: its record is in the log and the "
                     "shard, and commits when the high watermark passes it (notebook 03, "
                     "'A replica stalls').")
    return Verdict(ex, False, hints(*parts))
