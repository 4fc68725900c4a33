"""What a parsed log line is made of: columns, placeholder -> column mapping, extra events.

This module is the JVM-free half of `coordinator_kit.spark.schema` (which adds the Spark and
Arrow types): the pure-Python parser (`logs.parse`), the pattern builder (`logs.patterns`) and
the Spark loader all take their column names from here, so the three cannot drift.

Every physical line read ends up in exactly one *kind*:

* ``event``        - a known layout and a message that matches a template (the kit's catalogue
                     or a foreign wording from `logs.wordings`): one row in events.parquet;
* ``other``        - a known layout whose message is not a coordinator event and whose logger
                     is not a coordination logger (see `patterns.is_coordination_logger`);
* ``continuation`` - a line that continues the record above it (stack-trace lines, TAB- or
                     space-indented lines, ``Caused by:``, ``... N more``): it is attached to
                     that record and counted with the "other known lines";
* ``quarantine``   - anything else, with a `problem` (QUARANTINE_PROBLEMS).

So ``read = recognised (event) + other (other + continuation) + quarantined`` always holds.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Column", "EVENT_COLUMNS", "COLUMN_NAMES", "PLACEHOLDER_COLUMNS", "TEMPLATE_OVERRIDES",
           "EXTRA_EVENTS", "QUARANTINE_PROBLEMS", "KINDS", "LEVELS", "SOURCES"]


@dataclass(frozen=True)
class Column:
    name: str
    type: str          # "timestamp" | "string" | "int" | "long" (Spark SQL type names)
    doc: str


# The columns of events.parquet and quarantine.parquet, in this order (one schema for both: a
# quarantined line has `problem` set and `event` NULL; an event has `problem` NULL).
EVENT_COLUMNS: tuple[Column, ...] = (
    Column("ts", "timestamp", "when the line was written, UTC (NULL when the layout has no "
           "time, e.g. Python's basicConfig layout)"),
    Column("level", "string", "TRACE, DEBUG, INFO, WARN, ERROR or FATAL (Python's WARNING and "
           "CRITICAL and syslog numbers are mapped onto these)"),
    Column("logger", "string", "the logger name as printed (abbreviated in logback/Spring Boot "
           "layouts; `rdkafka.<FACILITY>` for librdkafka lines)"),
    Column("thread", "string", "thread name when the layout prints one, else NULL"),
    Column("source", "string", "`broker` or `client`: from the template that matched; for other "
           "lines from the logger name and layout"),
    Column("event", "string", "the event name (EVENT_NAMES); NULL on a quarantined line"),
    Column("group", "string", "the group id ({group}, or the client's LogContext `groupId=`)"),
    Column("member", "string", "the member id ({member}, {member_id}, Generation{memberId=...})"),
    Column("generation", "int", "the classic generation id ({generation}, Generation{"
           "generationId=...})"),
    Column("state", "string", "a state name: {state} (group state), {new_state} (coordinator "
           "context), the target state of a librdkafka/KIP-848 transition"),
    Column("reason", "string", "free text why: {reason}, {cause}, {error}, {exception}, "
           "{message}"),
    Column("partition", "int", "the partition the line is about: the __consumer_offsets "
           "partition for coordinator lines ({tp}, {partition}, or `partition=` in the LogContext "
           "prefix); the topic partition's number in client lines with a {tp}"),
    Column("epoch", "int", "{epoch}: coordinator/leader epoch; `OptionalInt[n]` and `Some(n)` "
           "give n, `OptionalInt.empty`/`None` give NULL"),
    Column("duration_ms", "long", "{duration_ms} / {ms}: how long the step took"),
    Column("raw", "string", "the record as read: its first line, plus its continuation lines "
           "joined with \\n; invalid UTF-8 replaced by U+FFFD"),
    Column("file", "string", "the path the line was read from, as given (Spark: a file: URI)"),
    Column("line", "long", "1-based line number of the record's first line in `file`"),
    Column("template", "string", "id of the template that matched (catalogue id such as G-STAB, "
           "or a foreign wording id such as B-STAB-1); tells Kafka versions apart"),
    Column("layout", "string", "the layout id (LAYOUT_IDS in logs.patterns), NULL when unknown"),
    Column("problem", "string", "quarantine reason (QUARANTINE_PROBLEMS), NULL for events"),
)
COLUMN_NAMES: tuple[str, ...] = tuple(c.name for c in EVENT_COLUMNS)

# Catalogue placeholders that fill a column. When a template has several placeholders for one
# column, the first in this order wins and the others are matched but not kept.
# A placeholder not listed here is matched (see patterns.PLACEHOLDER_REGEX) and dropped.
PLACEHOLDER_COLUMNS: dict[str, str] = {
    "group": "group",
    "member": "member",
    "member_id": "member",
    "member_info": "member",         # the KIP-848 client's memberIdInfoForLog ("<no ID>" or id)
    "member_metadata": "member",     # MemberMetadata(memberId=..., ...) in 3.x LeaveGroup lines
    "generation": "generation",
    "state": "state",
    "new_state": "state",
    "to_state": "state",
    "reason": "reason",
    "cause": "reason",
    "error": "reason",
    "exception": "reason",
    "message": "reason",
    "partition": "partition",
    "tp": "partition",
    "epoch": "epoch",
    "duration_ms": "duration_ms",
    "ms": "duration_ms",
}

# (template id, placeholder) -> column (or None) where a catalogue entry uses a name for
# something else. J-RESET's {member_id} is the optional phrase "and member id ", not an id.
TEMPLATE_OVERRIDES: dict[tuple[str, str], str | None] = {
    ("J-RESET", "member_id"): None,
}

# Events that foreign wordings (logs.wordings) produce and the kit's catalogue does not (yet).
# The catalogue's own `event` values are the rest of EVENT_NAMES (see patterns.EVENT_NAMES).
EXTRA_EVENTS: dict[str, str] = {
    # classic broker (Scala GroupCoordinator / GroupMetadataManager, 0.9-3.9)
    "coordinator_elected": "broker became leader of a __consumer_offsets partition (B-ELECT)",
    "coordinator_resigned": "broker lost leadership of a __consumer_offsets partition (B-RESIGN)",
    "group_dead": "empty group removed after its offsets expired (M-DEAD)",
    "offsets_removed": "retention sweep removed expired offsets (M-EXPIRE)",
    # new coordinator, KIP-848 consumer groups (3.7+)
    "member_joined": "a member joined a consumer group (N-JOIN)",
    "group_epoch_bumped": "the group epoch was bumped (N-EPOCH)",
    "target_assignment_computed": "the server-side assignor ran (N-TARGET)",
    "member_assignment_updated": "a member's reconciliation step (N-MSTATE)",
    "member_fenced": "a member was fenced: session or rebalance timeout (N-FENCED)",
    "static_member_rejected": "a static member's instance id is owned by another (N-STATIC-REJECT)",
    "group_converted": "a group was converted between classic and consumer (N-CONVERT)",
    # clients (older Java, KIP-848 Java, kafka-python, librdkafka)
    "member_id_assigned": "the client got its member id (librdkafka MEMBERID, kafka-python)",
    "member_state_changed": "KIP-848 client member state machine step, or librdkafka join "
                            "state change; `state` is the new state",
    "coordinator_state_changed": "librdkafka CGRPSTATE: coordinator connection state step",
    "coordinator_lookup": "the client queries for the coordinator (librdkafka CGRPQUERY)",
    "reconciliation_started": "KIP-848 client starts reconciling a new assignment",
    "heartbeat_failed": "a heartbeat failed for a reason not covered by a finer event",
    "heartbeat_failed_rebalancing": "heartbeat answered REBALANCE_IN_PROGRESS",
    "heartbeat_failed_unknown_member": "heartbeat answered UNKNOWN_MEMBER_ID",
    "heartbeat_session_expired": "the client's own session timer expired (kafka-python)",
    "join_failed": "a JoinGroup response carried an error (librdkafka)",
    "sync_failed": "a SyncGroup response carried an error (librdkafka)",
}

QUARANTINE_PROBLEMS: dict[str, str] = {
    "undecodable bytes": "invalid UTF-8, or control characters other than TAB (binary garbage, "
                         "a file in another encoding)",
    "truncated": "the line starts like a known layout (time stamp and level) but does not "
                 "complete it, or a continuation line with no record before it",
    "unknown layout": "the line matches no layout and does not look like a continuation",
    "unknown message": "a known layout and a coordination logger, but no template matches",
    "bad time stamp": "the record's time stamp gives no time (not a real date, an offset "
                      "beyond 18 hours, or outside the times pandas holds); in a CSV export, "
                      "a time cell in a form the kit does not read",
    "malformed CSV row": "a row of a CSV export (logs.csvexport) with another number of fields "
                         "than its header, or text after a closing quote",
    "unclosed CSV quote": "a quoted field of a CSV export that is never closed: the row runs "
                          "to the end of the file",
}

KINDS: tuple[str, ...] = ("event", "other", "continuation", "quarantine")
LEVELS: tuple[str, ...] = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")
SOURCES: tuple[str, ...] = ("broker", "client")
