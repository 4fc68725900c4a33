"""The `__consumer_offsets` partitions as a table: one row per record in the leader's log.

The records are decoded with the kit's own `GroupCoordinatorRecordSerde` (Kafka's framing and
schemas), so the table shows what `kafka-console-consumer --formatter
GroupMetadataManager$OffsetsMessageFormatter` would show a learner: which group committed which
offset when, and each generation the coordinator persisted (protocol, leader, members and their
assignments). Time columns use the log4j timestamp layout of the log files, so a row can be put
next to the log lines it belongs to.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..group.modern.topics import topic_id
from ..group.protocol import ConsumerProtocolAssignment
from ..group.records import GroupCoordinatorRecordSerde
from ..logs.layout import DEFAULT_START, format_timestamp

if TYPE_CHECKING:
    from ..cluster import Cluster

__all__ = ["OFFSETS_COLUMNS", "offsets_rows", "offsets_csv"]

OFFSETS_COLUMNS = (
    "partition",            # __consumer_offsets partition
    "offset",               # the record's offset in that partition
    "ts",                   # append time, virtual ms (as `ts` in trace.jsonl)
    "timestamp",            # append time, log4j layout (as in the log files)
    "key_type",             # OffsetCommit / GroupMetadata
    "group",
    "topic_partition",      # OffsetCommit: the committed partition (`orders-3`)
    "committed_offset",     # OffsetCommit: the offset
    "leader_epoch",         # OffsetCommit: the leader epoch (-1: none)
    "commit_timestamp",     # OffsetCommit: commitTimestamp, log4j layout
    "generation",           # GroupMetadata; a consumer group's (KIP-848) epoch records: the
                            # group epoch, the target assignment's epoch, a member's epoch
    "protocol_type",        # GroupMetadata: `consumer` ("" for an emptied group)
    "protocol",             # GroupMetadata: the chosen assignor
    "leader",               # GroupMetadata: the leader's member id
    "members",              # GroupMetadata: member ids, `;`-separated (KIP-848: the record's
                            # member)
    "assignment",           # GroupMetadata: `member=tp,tp;member=tp` from the assignment bytes
                            # (KIP-848: a member's target or current assignment)
    "tombstone",            # true when the record has no value (a deletion)
)

_SERDE = GroupCoordinatorRecordSerde()


def offsets_rows(cluster: Cluster, start: datetime = DEFAULT_START) -> list[dict[str, Any]]:
    """Every record in every `__consumer_offsets` partition's leader log, decoded, in
    (partition, offset) order."""
    rows: list[dict[str, Any]] = []
    names = {topic_id(name): name for name in cluster.topics}  # KIP-848 records name topics by id
    for tp, partition in sorted(cluster.partitions.items(), key=lambda kv: kv[0].partition):
        for batch in partition.read(partition.leader_id):
            if batch.control is not None:
                continue  # transaction markers carry no coordinator record
            for offset, key, value in batch.offset_records():
                rows.append(_row(tp.partition, offset, batch.append_time_ms, key, value, start,
                                 names))
    return rows


def _row(partition: int, offset: int, ts: int, key: bytes, value: bytes | None,
         start: datetime, topic_names: Mapping[str, str] | None = None) -> dict[str, Any]:
    record = _SERDE.deserialize(key, value)
    row: dict[str, Any] = dict.fromkeys(OFFSETS_COLUMNS, "")
    modern = "GroupId" in record.key  # a consumer group's record (KIP-848)
    row.update(partition=partition, offset=offset, ts=ts, timestamp=format_timestamp(ts, start),
               key_type=_SERDE.known_types.get(record.record_type, str(record.record_type)),
               group=record.key["GroupId" if modern else "group"],
               tombstone=str(record.value is None).lower())
    v = record.value
    if modern:
        _consumer_group_row(row, record.key, v, topic_names or {})
    elif "topic" in record.key:
        row["topic_partition"] = f"{record.key['topic']}-{record.key['partition']}"
        if v is not None:
            row.update(committed_offset=v["offset"], leader_epoch=v["leaderEpoch"],
                       commit_timestamp=format_timestamp(v["commitTimestamp"], start))
    elif v is not None:
        members = v["members"]
        row.update(generation=v["generation"], protocol_type=v["protocolType"],
                   protocol=v["protocol"] or "", leader=v["leader"] or "",
                   members=";".join(m["memberId"] for m in members),
                   assignment=";".join(_assignment(m) for m in members))
    return row


_EPOCH_FIELDS = ("Epoch", "AssignmentEpoch", "MemberEpoch")


def _consumer_group_row(row: dict[str, Any], key: Mapping[str, Any],
                        value: Mapping[str, Any] | None, topic_names: Mapping[str, str]) -> None:
    """A consumer group record's cells: its member, its epoch, a member's partitions (topics
    named through `topic_names`, topic id -> name)."""
    member = key.get("MemberId")
    if member is not None:
        row["members"] = member
    if value is None:
        return
    for name in _EPOCH_FIELDS:
        if name in value:
            row["generation"] = value[name]
    if "ServerAssignor" in value:
        row.update(protocol_type="consumer", protocol=value["ServerAssignor"] or "")
    parts = value.get("TopicPartitions", value.get("AssignedPartitions"))
    if parts is not None and member is not None:
        tps = sorted((topic_names.get(t["TopicId"], t["TopicId"]), p) for t in parts
                     for p in t["Partitions"])
        row["assignment"] = f"{member}=" + ",".join(f"{t}-{p}" for t, p in tps)


def _assignment(member: Mapping[str, Any]) -> str:
    raw = member["assignment"]
    tps = ConsumerProtocolAssignment.decode(raw).assigned_partitions if raw else ()
    return f"{member['memberId']}={','.join(str(tp) for tp in tps)}"


def offsets_csv(rows: Iterable[Mapping[str, Any]]) -> str:
    """The rows as CSV text with a header and `\\n` line endings."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=OFFSETS_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()
