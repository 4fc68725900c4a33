"""The schema of parsed coordinator logs: column names, Spark and Arrow types, event names.

One schema for every output of the log pipeline (`load_logs`, `events.parquet`,
`quarantine.parquet`, and the pure-Python parser in `coordinator_kit.logs.parse`):

=============  =========  ==========================  =========================================
column         Spark      pandas (toPandas / Arrow)   meaning
=============  =========  ==========================  =========================================
ts             timestamp  datetime64[ns] (UTC, naive) when the line was written (UTC)
level          string     object                      TRACE DEBUG INFO WARN ERROR FATAL
logger         string     object                      logger name as printed
thread         string     object                      thread name, when the layout has one
source         string     object                      broker | client
event          string     object                      one of EVENT_NAMES (NULL in quarantine)
group          string     object                      group id
member         string     object                      member id
generation     int        Int32 / float64 if NULLs    classic generation id
state          string     object                      group/context/member state name
reason         string     object                      why: {reason} {cause} {error} {exception}
partition      int        Int32 / float64 if NULLs    __consumer_offsets (or topic) partition
epoch          int        Int32 / float64 if NULLs    coordinator / leader epoch
duration_ms    bigint     Int64 / float64 if NULLs    how long a load/assignment/cleanup took
raw            string     object                      the record's text (continuations joined)
file           string     object                      where it was read from
line           bigint     int64                       1-based line of the record's first line
template       string     object                      template id that matched (version hint)
layout         string     object                      layout id (logs.patterns.LAYOUT_IDS)
problem        string     object                      quarantine reason, NULL for events
=============  =========  ==========================  =========================================

The first 17 columns are the parsed log's own (`ISSUE_COLUMNS`, the set the loader started
with); `template`, `layout` and `problem` are added at the end. Placeholders of the catalogue
map to columns through `PLACEHOLDER_COLUMNS`
({group}->group, {member}/{member_id}->member, {generation}->generation, {partition}/{tp}->
partition, {epoch}->epoch, {ms}/{duration_ms}->duration_ms, {state}/{new_state}->state,
{reason}/{cause}/{error}/{exception}/{message}->reason); a client line's group also comes from
its `[Consumer clientId=..., groupId=...]` prefix and a shard line's partition from its
`[GroupCoordinator id=.. topic=.. partition=..]` prefix.

`EVENT_NAMES` is every `event` of the template catalogue plus `EXTRA_EVENTS` (events only
foreign wordings produce). A template added to the catalogue adds its event here by itself.

Importing this module does not start a JVM; `spark_schema()` imports pyspark's type classes
only when called.
"""

from __future__ import annotations

from typing import Any

from ..logs.catalogue import TEMPLATES
from ..logs.fields import (COLUMN_NAMES, EVENT_COLUMNS, EXTRA_EVENTS, KINDS, LEVELS,
                           PLACEHOLDER_COLUMNS, QUARANTINE_PROBLEMS, SOURCES, Column)

__all__ = ["Column", "EVENT_COLUMNS", "COLUMN_NAMES", "ISSUE_COLUMNS", "PLACEHOLDER_COLUMNS",
           "EVENT_NAMES", "CATALOGUE_EVENTS", "EXTRA_EVENTS", "QUARANTINE_PROBLEMS", "KINDS",
           "LEVELS", "SOURCES", "spark_schema", "arrow_schema", "pandas_dtypes", "ddl"]

# The first 17 columns, in their order (a prefix of COLUMN_NAMES); the name is historical.
ISSUE_COLUMNS: tuple[str, ...] = COLUMN_NAMES[:17]

CATALOGUE_EVENTS: frozenset[str] = frozenset(t.event for t in TEMPLATES.values())
EVENT_NAMES: tuple[str, ...] = tuple(sorted(CATALOGUE_EVENTS | set(EXTRA_EVENTS)))

_ARROW = {"timestamp": ("timestamp", "us", "UTC"), "string": ("string",), "int": ("int32",),
          "long": ("int64",)}
_PANDAS = {"timestamp": "datetime64[ns]", "string": "object", "int": "Int32", "long": "Int64"}


def spark_schema() -> Any:
    """The pyspark `StructType` of events.parquet / quarantine.parquet (all columns nullable)."""
    from pyspark.sql import types as T

    spark_types = {"timestamp": T.TimestampType(), "string": T.StringType(),
                   "int": T.IntegerType(), "long": T.LongType()}
    return T.StructType([T.StructField(c.name, spark_types[c.type], True)
                         for c in EVENT_COLUMNS])


def ddl() -> str:
    """The same schema as a Spark DDL string (`ts TIMESTAMP, level STRING, ...`)."""
    names = {"timestamp": "TIMESTAMP", "string": "STRING", "int": "INT", "long": "BIGINT"}
    return ", ".join(f"`{c.name}` {names[c.type]}" for c in EVENT_COLUMNS)


def arrow_schema() -> Any:
    """The pyarrow schema the Parquet files are written with (timestamps in UTC, microseconds)."""
    import pyarrow as pa

    def arrow_type(spec: tuple) -> Any:
        if spec[0] == "timestamp":
            return pa.timestamp(spec[1], tz=spec[2])
        return getattr(pa, spec[0])()

    return pa.schema([pa.field(c.name, arrow_type(_ARROW[c.type]), nullable=True)
                      for c in EVENT_COLUMNS])


def pandas_dtypes() -> dict[str, str]:
    """Column -> pandas dtype for the pure-Python parser's DataFrame (nullable integers)."""
    return {c.name: _PANDAS[c.type] for c in EVENT_COLUMNS}
