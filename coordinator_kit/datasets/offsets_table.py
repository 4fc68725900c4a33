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
    "generation",           # GroupMetadata
    "protocol_type",        # GroupMetadata: `consumer` ("" for an emptied group)
    "protocol",             # GroupMetadata: the chosen assignor
    "leader",               # GroupMetadata: the leader's member id
    "members",              # GroupMetadata: member ids, `;`-separated
    "assignment",           # GroupMetadata: `member=tp,tp;member=tp` from the assignment bytes
    "tombstone",            # true when the record has no value (a deletion)
)

_SERDE = GroupCoordinatorRecordSerde()


def offsets_rows(cluster: Cluster, start: datetime = DEFAULT_START) -> list[dict[str, Any]]:
    """Every record in every `__consumer_offsets` partition's leader log, decoded, in
    (partition, offset) order."""
    rows: list[dict[str, Any]] = []
    for tp, partition in sorted(cluster.partitions.items(), key=lambda kv: kv[0].partition):
        for batch in partition.read(partition.leader_id):
            if batch.control is not None:
                continue  # transaction markers carry no coordinator record
            for offset, key, value in batch.offset_records():
                rows.append(_row(tp.partition, offset, batch.append_time_ms, key, value, start))
    return rows


def _row(partition: int, offset: int, ts: int, key: bytes, value: bytes | None,
         start: datetime) -> dict[str, Any]:
    record = _SERDE.deserialize(key, value)
    row: dict[str, Any] = dict.fromkeys(OFFSETS_COLUMNS, "")
    row.update(partition=partition, offset=offset, ts=ts, timestamp=format_timestamp(ts, start),
               key_type=_SERDE.known_types.get(record.record_type, str(record.record_type)),
               group=record.key["group"], tombstone=str(record.value is None).lower())
    v = record.value
    if "topic" in record.key:
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
