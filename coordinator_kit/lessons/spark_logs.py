"""Notebook 05, reading coordinator logs with Spark: loading, the views its cells print, the
pictures, and the checks of its exercises.

The notebook runs the kit's log pipeline (`coordinator_kit.spark`: `load_lines`, the parser's
quarantine, the analyses of `coordinator_kit.spark.analyses`) on three kinds of input:

* ``datasets/`` - every scenario the kit ships, as broker (`server-broker-N.log`) and client
  (`client-NAME.log`) logs in Kafka's log4j layout. Each folder is a separate cluster (a *run*)
  whose virtual clock starts at the same instant and whose group is often called ``group-1``,
  so the lesson qualifies group ids with the folder name before analysing them together;
* logs the lesson writes itself from a seeded cluster (`pause_run`, the crash demo, the "Try it"
  panel), with `write_logs`, in the datasets' layout; `describe_run` tells such a run in plain
  sentences, from what Spark reads back;
* ``notebooks/data/seed001_consumer.log`` - the consumer log excerpt a 2016 blog post on Kafka's
  coordinators quotes (its source line numbers are Kafka 0.9.0.1's), in Kafka's log4j layout
  (see notebooks/data/README.md for the source and how it was built).

Everything Spark returns is ordered before it is collected, and every table here renders from
its rows only (`Table`), so nbval can compare the notebook's output. Timestamps are UTC (the
kit's sessions set `spark.sql.session.timeZone`), shown as the logs show them.

Spark is imported only inside the functions that need it: the exercise checks run without a
JVM where they can (they read the files with the pure-Python parser, which gives the same rows
as the Spark loader, or the kit's trace).
"""

from __future__ import annotations

import atexit
import html
import math
import textwrap
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..cluster import Cluster
from ..logs.fields import EVENT_COLUMNS, QUARANTINE_PROBLEMS
from ..logs.layout import DEFAULT_START, level_number
from ..logs.parse import ParseCounts, classify_line, parse_paths
from .heartbeats import Feedback, Picture, Table, not_answered, short_id, stable_group, unanswered

__all__ = [
    # where the inputs are
    "REPO", "DATASETS", "DATA", "SEED_LOG", "SEED_APPENDER_LINE", "dataset_runs", "dataset_logs",
    # loading
    "LoadedLogs", "load", "collect", "with_run", "qualify_groups", "in_run", "session_facts",
    "quick_jvm", "QUICK_JVM_FLAGS", "QUICK_JVM_OPTIONS",
    # views
    "table", "schema_table", "sample_table", "event_counts", "totals", "kind_table",
    "problem_table", "line_table", "classify_table", "episode_table", "departure_table",
    "load_table", "gap_table", "generation_causes", "cause_table", "WrapTable",
    # a run, in words
    "describe_run", "RunAccount", "SILENCE_TOLD_MS", "OPEN_SILENCE_TOLD_MS",
    # pictures
    "episode_chart", "state_chart", "gap_chart",
    # runs the lesson writes itself
    "write_logs", "pause_run", "PAUSES", "SESSION_TIMEOUT_MS",
    # exercises
    "check_heartbeat_interval", "check_rebalancing_time", "check_departure_causes",
    "check_longest_silence", "seed_heartbeat_gaps", "rebalancing_time", "departure_causes",
    "longest_silence",
]

REPO = Path(__file__).resolve().parents[2]
DATASETS = REPO / "datasets"
DATA = REPO / "notebooks" / "data"
SEED_LOG = DATA / "seed001_consumer.log"
# One line exactly as the blog post prints it: its test appender's pattern kept only the message,
# the logger and the line number, no time and no level.
SEED_APPENDER_LINE = ("(Re-)joining group wfc_integration_test "
                      "(org.apache.kafka.clients.consumer.internals.AbstractCoordinator:309)")

# session.timeout.ms of the kit's consumers (Kafka 3.0+ default), for the heartbeat picture.
SESSION_TIMEOUT_MS = 45_000


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------


def dataset_runs(consumer_protocol: bool = False) -> list[str]:
    """The scenario folders of ``datasets/`` that hold logs, sorted: the classic protocol's
    runs this lesson reads, and with `consumer_protocol` also the KIP-848 ones
    (`CONSUMER_PROTOCOL_DATASETS`, whose lines the lesson does not discuss)."""
    from ..datasets.catalog import CONSUMER_PROTOCOL_DATASETS
    if not DATASETS.is_dir():
        raise FileNotFoundError(f"no datasets folder at {DATASETS}; run `python -m "
                                f"coordinator_kit datasets` from the repository root")
    return sorted(p.name for p in DATASETS.iterdir() if p.is_dir() and any(p.glob("*.log"))
                  and (consumer_protocol or p.name not in CONSUMER_PROTOCOL_DATASETS))


def dataset_logs(runs: Iterable[str] | None = None) -> list[Path]:
    """The broker and client logs (``*.log``) of the given runs, or of every run.

    Only the logs: ``trace.jsonl`` is the kit's own trace (every line of it is also in the logs,
    as JSON) and ``consumer_offsets.csv`` is no log at all.
    """
    known = dataset_runs(consumer_protocol=runs is not None)
    wanted = dataset_runs() if runs is None else list(runs)
    unknown = [r for r in wanted if r not in known]
    if unknown:
        raise ValueError(f"no dataset run(s) {unknown}; the runs are {', '.join(known)}")
    return [f for r in wanted for f in sorted((DATASETS / r).glob("*.log"))]


# ---------------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------------


def _F() -> Any:
    from pyspark.sql import functions as F
    return F


@dataclass
class LoadedLogs:
    """One pass of the log pipeline over some files, kept in memory.

    `lines`: every physical line with the schema's columns and its `kind` (event, other,
    continuation, quarantine); `events` and `quarantine`: what `parse_logs` returns; `counts`:
    read = recognised + other + quarantined.
    """

    lines: Any
    events: Any
    quarantine: Any
    counts: ParseCounts

    def summary(self) -> str:
        return self.counts.summary()


def load(paths: str | Path | Iterable[str | Path], spark: Any = None) -> LoadedLogs:
    """`coordinator_kit.spark.parse_logs`, with the classified lines kept in memory.

    The classification (layout regex, then message regex, for every line) is the expensive
    part; `localCheckpoint` computes it once and cuts the plan there, so every analysis after
    it starts from the small table of lines instead of re-reading and re-matching the files.
    The counts come from one aggregation over those lines.
    """
    from ..spark.load import attach_continuations, load_lines

    F = _F()
    if isinstance(paths, (str, Path)):
        paths = [paths]
    lines = load_lines([str(p) for p in paths], spark).localCheckpoint(eager=True)
    by = {(r["kind"], r["problem"]): int(r["n"]) for r in
          lines.groupBy("kind", "problem").agg(F.count(F.lit(1)).alias("n")).collect()}
    kinds: dict[str, int] = {}
    problems: dict[str, int] = {}
    for (kind, problem), n in by.items():
        kinds[kind] = kinds.get(kind, 0) + n
        if kind == "quarantine":
            problems[problem] = problems.get(problem, 0) + n
    records = lines.where(F.col("kind").isin("event", "quarantine"))
    orphans_n = 0
    if kinds.get("continuation"):      # (rows of kind `joined`, logs.joins, extend the runs)
        records, orphans = attach_continuations(
            records, lines.where(F.col("kind").isin("continuation", "joined")))
        records = records.localCheckpoint(eager=True)
        orphans = orphans.localCheckpoint(eager=True)
        orphans_n = orphans.count()
        if orphans_n:
            problems["truncated"] = problems.get("truncated", 0) + orphans_n
        quarantine = records.where(F.col("kind") == "quarantine").drop("kind") \
            .unionByName(orphans)
    else:
        quarantine = records.where(F.col("kind") == "quarantine").drop("kind")
    events = records.where(F.col("kind") == "event").drop("kind")
    cont = kinds.get("continuation", 0) + kinds.get("joined", 0)
    untimed = events.where(F.col("ts").isNull()).count() if kinds.get("event") else 0
    counts = ParseCounts(read=sum(kinds.values()), recognised=kinds.get("event", 0),
                         other=kinds.get("other", 0) + cont - orphans_n,
                         quarantined=kinds.get("quarantine", 0) + orphans_n,
                         continuation=cont - orphans_n, untimed=untimed,
                         by_problem=dict(sorted(problems.items())))
    counts.check()
    return LoadedLogs(lines, events, quarantine, counts)


# The folder a file is in: a dataset's run, or the folder `write_logs` made.
_RUN_RE = r"([^/]+)/[^/]+$"


def with_run(df: Any) -> Any:
    """`df` with a `run` column: the name of the folder each line's file is in."""
    F = _F()
    return df.withColumn("run", F.regexp_extract(F.col("file"), _RUN_RE, 1))


def qualify_groups(events: Any) -> Any:
    """Events whose `group` is prefixed by their run: ``one-dies/group-1``.

    Every folder of ``datasets/`` is its own cluster, and most of them call their group
    ``group-1``; analysed together unqualified, their rebalances would merge into one group.
    (With logs of several real clusters, prefix the cluster's name the same way.)
    """
    F = _F()
    run = F.regexp_extract(F.col("file"), _RUN_RE, 1)
    return events.withColumn("group", F.when(F.col("group").isNotNull(),
                                             F.concat(run, F.lit("/"), F.col("group"))))


def in_run(df: Any, run: str) -> Any:
    """The rows of `df` read from files of one run (folder)."""
    F = _F()
    return df.where(F.regexp_extract(F.col("file"), _RUN_RE, 1) == run)


def collect(df: Any, max_rows: int = 5_000) -> Any:
    """A small, ordered Spark result as pandas (one job); refuses more than `max_rows` rows.

    Order the DataFrame first (the analyses do): `toPandas` keeps Spark's order, and only an
    explicit order is the same on every run.
    """
    pdf = df.limit(max_rows + 1).toPandas()
    if len(pdf) > max_rows:
        raise ValueError(f"collect: more than {max_rows} rows; aggregate or filter in Spark "
                         f"first (or raise max_rows)")
    return pdf


# The JVM's fast (C1) compiler only: a short, interactive session spends most of its CPU
# compiling Spark's own code with the optimising C2 compiler, which pays off only in jobs that
# run for many minutes. Measured on this kit's notebook 5: about half the CPU and wall time.
# With the fast compiler alone the JVM reserves only 48 MB for compiled code (240 MB in its
# default mode); this notebook fills that, and the JVM then stops compiling altogether ("CodeCache
# is full. Compiler has been disabled." on stderr), so the second flag gives back the 240 MB.
QUICK_JVM_OPTIONS = {
    "-XX:TieredStopAtLevel=1": "fast JIT compiler only: quicker warm-up for short work",
    "-XX:ReservedCodeCacheSize=240m": "room for compiled code, as in the JVM's default mode "
                                      "(the fast compiler alone gets 48 MB)",
}
QUICK_JVM_FLAGS = " ".join(QUICK_JVM_OPTIONS)


def quick_jvm() -> dict[str, str]:
    """A `config` for `get_session` that keeps its quiet log4j settings and adds
    `QUICK_JVM_FLAGS` to the driver JVM (only effective when this call starts the JVM)."""
    from ..spark import session as kit_session

    log4j = kit_session._log4j_conf()    # the same quiet log4j2 file get_session points to
    return {"spark.driver.extraJavaOptions":
            f"-Dlog4j2.configurationFile={log4j} {QUICK_JVM_FLAGS}"}


def session_facts(spark: Any) -> WrapTable:
    """The settings of the session that make its output the same everywhere."""
    conf = spark.conf
    rows = [
        {"setting": "master", "value": spark.sparkContext.master,
         "why": "local[*]: Spark runs inside this kernel, on every core"},
        {"setting": "spark.sql.session.timeZone", "value": conf.get("spark.sql.session.timeZone"),
         "why": "timestamps are read and shown in UTC, whatever the machine's zone"},
        {"setting": "spark.ui.showConsoleProgress", "value": spark.sparkContext.getConf()
         .get("spark.ui.showConsoleProgress", "true"),
         "why": "no progress bars written into the cells"},
        {"setting": "spark.sql.ansi.enabled", "value": conf.get("spark.sql.ansi.enabled"),
         "why": "bad casts fail loudly: the parser uses try_cast for fields that may be missing"},
    ]
    jvm = spark.sparkContext.getConf().get("spark.driver.extraJavaOptions", "")
    rows += [{"setting": "driver JVM", "value": flag, "why": why}
             for flag, why in QUICK_JVM_OPTIONS.items() if flag in jvm.split()]
    return WrapTable(rows, ["setting", "value", "why"], title="the kit's Spark session",
                     wrap={"why": "20em"})


# ---------------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------------

_UUID = re.compile(r"\b([0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")


def _short_text(text: str, width: int | None = None) -> str:
    """Member ids shortened to their first uuid group; cut at `width` characters."""
    text = _UUID.sub(r"\1", text)
    if width is not None and len(text) > width:
        text = text[:width - 1] + "…"
    return text


def _ts_text(value: Any, full: bool) -> str:
    t = value.to_pydatetime() if hasattr(value, "to_pydatetime") else value
    millis = f"{t.microsecond // 1000:03d}"
    return f"{t:%Y-%m-%d %H:%M:%S},{millis}" if full else f"{t:%H:%M:%S},{millis}"


def _missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        import pandas as pd
        return bool(pd.isna(value)) if not isinstance(value, (list, tuple, dict)) else False
    except (TypeError, ValueError):
        return False


def _cell(value: Any, full_ts: bool, width: int | None) -> Any:
    if _missing(value):
        return None
    if isinstance(value, datetime) or type(value).__name__ == "Timestamp":
        return _ts_text(value, full_ts)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()           # numpy scalar -> Python
        if isinstance(value, float) and value.is_integer():
            return int(value)
    if isinstance(value, str):
        return _short_text(value, width)
    return value


def table(data: Any, columns: Sequence[str] | None = None, *, title: str | None = None,
          rename: Mapping[str, str] | None = None, width: int | None = 90,
          full_ts: bool = False) -> Table:
    """A pandas frame (or a Spark DataFrame, collected) as a text/HTML `Table`.

    Timestamps print as the logs print them (``09:01:03,103``; with the date when `full_ts`),
    NULLs as ``-``, member ids shortened to their first 8 hex digits, long texts cut at
    `width`. `rename` maps column names to headers.
    """
    pdf = data if hasattr(data, "iterrows") else collect(data)
    cols = list(columns) if columns is not None else list(pdf.columns)
    missing = [c for c in cols if c not in pdf.columns]
    if missing:
        raise KeyError(f"no column(s) {missing}; columns: {', '.join(map(str, pdf.columns))}")
    names = {c: (rename or {}).get(c, c) for c in cols}
    rows = [{names[c]: _cell(rec[c], full_ts, width) for c in cols}
            for rec in pdf[cols].to_dict("records")]
    return Table(rows, [names[c] for c in cols], title=title)


def schema_table(df: Any) -> Table:
    """Each column of a parsed-log DataFrame: its Spark type and what it holds."""
    docs = {c.name: c.doc for c in EVENT_COLUMNS}
    rows = [{"column": f.name, "Spark type": f.dataType.simpleString(),
             "holds": _short_text(docs.get(f.name, ""), 100)} for f in df.schema.fields]
    return Table(rows, ["column", "Spark type", "holds"], title="typed columns of the events")


_SAMPLE_COLUMNS = ["ts", "event", "group", "member", "generation", "state", "template",
                   "reason"]


def sample_table(events: Any, run: str, file: str, n: int = 8,
                 columns: Sequence[str] = _SAMPLE_COLUMNS) -> WrapTable:
    """The first `n` events of one file of one run, in line order; a reason is printed in full
    under its row."""
    F = _F()
    rows = in_run(events, run).where(F.col("file").endswith("/" + file)) \
        .orderBy("line").limit(n).select(*columns)
    t = table(rows, title=f"{run}/{file}: the first {n} events", width=None)
    return WrapTable(t.rows, t.columns, title=t.title, below=["reason"])


def event_counts(events: Any) -> Table:
    """Recognised lines per source and event, most frequent first within each source."""
    F = _F()
    counts = (events.groupBy("source", "event").agg(F.count(F.lit(1)).alias("lines"))
              .orderBy("source", F.desc("lines"), "event"))
    return table(counts, title="recognised lines per source and event")


def totals(logs: LoadedLogs) -> Table:
    """Per run: lines read, recognised, other and quarantined, and whether they add up."""
    F = _F()
    kinds = ("event", "other", "continuation", "quarantine")
    per = (with_run(logs.lines).groupBy("run")
           .agg(F.countDistinct("file").alias("files"), F.count(F.lit(1)).alias("read"),
                *[F.sum(F.when(F.col("kind") == k, 1).otherwise(0)).alias(k) for k in kinds])
           .orderBy("run"))
    rows = []
    for r in collect(per).to_dict("records"):
        other = int(r["other"]) + int(r["continuation"])
        row = {"run": r["run"], "files": int(r["files"]), "read": int(r["read"]),
               "recognised": int(r["event"]), "other": other,
               "quarantined": int(r["quarantine"])}
        rows.append(row)
    c = logs.counts
    rows.append({"run": "all", "files": sum(r["files"] for r in rows), "read": c.read,
                 "recognised": c.recognised, "other": c.other, "quarantined": c.quarantined})
    for row in rows:
        ok = row["read"] == row["recognised"] + row["other"] + row["quarantined"]
        row["adds up"] = "yes" if ok else "NO"
    return Table(rows, ["run", "files", "read", "recognised", "other", "quarantined", "adds up"],
                 title="read = recognised + other + quarantined")


def kind_table() -> Table:
    """Where a line can end up, and the quarantine's problems."""
    rows = [
        {"kind": "recognised (event)", "what": "a known layout and a message matching a "
         "template: a row of `events`"},
        {"kind": "other", "what": "a known layout, but neither an event nor from a "
         "coordination logger (network, metrics...); also blank and continuation lines"},
    ]
    rows += [{"kind": f"quarantined: {p}", "what": d} for p, d in QUARANTINE_PROBLEMS.items()]
    return Table(rows, ["kind", "what"], title="every line read ends up in exactly one place")


def problem_table(logs: LoadedLogs) -> Table:
    """The quarantine, counted by problem."""
    rows = [{"problem": p, "lines": n} for p, n in logs.counts.by_problem.items()]
    return Table(rows, ["problem", "lines"], title="quarantined lines by problem")


def line_table(logs: LoadedLogs, width: int = 70) -> Table:
    """Every physical line of a (small) input: where it went, and why."""
    F = _F()
    lines = logs.lines.orderBy("file", "line").select(
        "line", "kind", F.coalesce("event", "problem").alias("event / problem"), "template",
        "group", F.regexp_replace("raw", r"^\[[^\]]*\] ", "").alias("line text"))
    return table(lines, title="each line, and where the pipeline put it", width=width)


def classify_table(lines: Sequence[str]) -> Table:
    """How the parser classifies single lines (the pure-Python parser: same rules as Spark)."""
    rows = []
    for text in lines:
        kind, row = classify_line(text)
        rows.append({"line": _short_text(text, 70), "kind": kind,
                     "event / problem": (row or {}).get("event") or (row or {}).get("problem")})
    return Table(rows, ["line", "kind", "event / problem"], title="one line at a time")


class WrapTable(Table):
    """A `Table` that shows long texts in full instead of cutting them: a `wrap` column wraps
    at a width of its own (CSS length), a `below` column is printed under its row (where the
    row has a value), across the table; every other column stays on one line. With
    `break_anywhere`, wrapped cells may also break inside a long name (a dotted Kafka method, a
    file path), so that several columns of prose fit the output area."""

    def __init__(self, rows: Iterable[Mapping[str, Any]], columns: Sequence[str] | None = None,
                 title: str | None = None, *, wrap: Mapping[str, str] | None = None,
                 below: Sequence[str] = (), break_anywhere: bool = False) -> None:
        super().__init__(rows, columns, title)
        self.wrap = dict(wrap or {})
        self.break_anywhere = break_anywhere
        self.below = [c for c in below if c in self.columns]
        self.shown = [c for c in self.columns if c not in self.below]

    def _td(self, column: str, value: Any, tag: str = "td") -> str:
        if column in self.wrap:
            anywhere = "overflow-wrap:anywhere; " if self.break_anywhere else ""
            style = (f"text-align:left; white-space:normal; {anywhere}"
                     f"min-width:{self.wrap[column]}")
        else:
            style = "text-align:left; white-space:nowrap"
        return f"<{tag} style='{style}'>{html.escape(self._cell(value))}</{tag}>"

    def __repr__(self) -> str:
        lines = repr(Table(self.rows, self.shown, title=self.title)).split("\n")
        head = len(lines) - len(self.rows) if self.rows else len(lines)
        out = lines[:head]
        for line, row in zip(lines[head:], self.rows):
            out.append(line)
            out += [f"    {c}: {self._cell(row.get(c))}" for c in self.below
                    if row.get(c) is not None]
        return "\n".join(out)

    def _repr_html_(self) -> str:
        head = "".join(self._td(c, c, "th") for c in self.shown)
        body = []
        for i, r in enumerate(self.rows):
            # a row and its lines below share one background (JupyterLab stripes rows)
            bg = "background:transparent" if i % 2 else "background:rgba(0,0,0,0.04)"
            body.append(f"<tr style='{bg}'>" + "".join(self._td(c, r.get(c)) for c in self.shown)
                        + "</tr>")
            for c in self.below:
                if r.get(c) is not None:
                    body.append(f"<tr style='{bg}'><td></td><td colspan='{len(self.shown) - 1}' "
                                f"style='text-align:left; white-space:normal; padding-top:0; "
                                f"color:#455a64'>{html.escape(c)}: "
                                f"{html.escape(self._cell(r.get(c)))}</td></tr>")
        caption = (f"<caption style='text-align:left'><b>{html.escape(self.title)}</b></caption>"
                   if self.title else "")
        return (f"<table>{caption}<thead><tr>{head}</tr></thead>"
                f"<tbody>{''.join(body)}</tbody></table>")


def episode_table(episodes: Any, *, title: str = "rebalance episodes") -> WrapTable:
    """`rebalance_episodes` as a table: generations, times, duration, members, the state the
    episode ended in, and under each episode the reason in full (member ids shortened)."""
    pdf = episodes if hasattr(episodes, "iterrows") else collect(episodes)
    rows = []
    for r in pdf.to_dict("records"):
        before, after = _cell(r["generation_before"], False, None), \
            _cell(r["generation_after"], False, None)
        mb, ma = _cell(r["members_before"], False, None), _cell(r["members_after"], False, None)
        rows.append({"group": r["group"],
                     "generation": f"{_dash(before)} → {_dash(after)}",
                     "start": _cell(r["start_ts"], False, None),
                     "end": _cell(r["end_ts"], False, None),
                     "ms": _cell(r["duration_ms"], False, None),
                     "members": f"{_dash(mb)} → {_dash(ma)}",
                     "ended": r["end_state"] if not _missing(r["end_state"]) else None,
                     "reason": _cell(r["reason"], False, None)})
    return WrapTable(rows, ["group", "generation", "start", "end", "ms", "members", "ended",
                            "reason"], title=title, below=["reason"])


def _dash(value: Any) -> str:
    return "-" if value is None else str(value)


def departure_table(departures: Any, *, title: str = "member departures by cause") -> Table:
    return table(departures, ["ts", "group", "member", "cause", "detail", "source"],
                 title=title, width=44)


def load_table(loads: Any, *, title: str = "coordinator loads and unloads") -> Table:
    return table(loads, ["partition", "broker", "operation", "epoch", "scheduled_ts",
                         "finished_ts", "outcome", "duration_ms"],
                 rename={"scheduled_ts": "scheduled", "finished_ts": "finished",
                         "duration_ms": "ms"}, title=title)


def gap_table(summary: Any, *, title: str = "heartbeat gaps per member (coordinator side)"
              ) -> Table:
    return table(summary, ["group", "member", "gaps", "max_gap_ms", "mean_gap_ms",
                           "max_gap_ended"],
                 rename={"max_gap_ms": "longest (ms)", "mean_gap_ms": "mean (ms)",
                         "max_gap_ended": "longest ended"}, title=title)


# How the coordinator words the reason of a rebalance (GroupMetadataManager): the cause, and
# the member it names. Checked in this order; the first that matches wins.
_CAUSES = (
    ("joined", r"^Adding new member (\S+) with group instance id"),
    ("failed", r"^removing member (\S+) on heartbeat expiration"),
    ("left", r"^explicit `LeaveGroup` request for \(([^)]+)\) members"),
    ("left", r"^Removing member (\S+) on LeaveGroup"),
    ("rejoined", r"^[Ll]eader (\S+) re-joining group"),
    ("rejoined", r"^Updating metadata for (?:static )?member (\S+)"),
)


def generation_causes(episodes: Any, run: str | None = None) -> Any:
    """Which member's join, failure or departure started each rebalance, and the generation it
    led to: `rebalance_episodes` plus `cause` and `caused_by`, read from the reason the
    coordinator logged when it prepared the rebalance (`GroupMetadataManager.prepareRebalance`).

    `run`: keep the groups of one run only (groups qualified by `qualify_groups`)."""
    F = _F()
    if run is not None:
        episodes = episodes.where(F.col("group").startswith(run + "/"))
    reason = F.coalesce(F.col("reason"), F.lit(""))
    cause = F.lit("other")
    member = F.lit(None).cast("string")
    for name, pattern in reversed(_CAUSES):
        hit = reason.rlike(pattern)
        cause = F.when(hit, F.lit(name)).otherwise(cause)
        member = F.when(hit, F.regexp_extract(reason, pattern, 1)).otherwise(member)
    return (episodes.select("group", "generation_after", "start_ts", cause.alias("cause"),
                            member.alias("caused_by"), "duration_ms")
            .orderBy("group", "start_ts"))


def cause_table(causes: Any, *, groups: Sequence[str] | None = None,
                title: str = "who started each generation") -> Table:
    """`generation_causes` as a table, for the given groups only (default: all)."""
    pdf = causes if hasattr(causes, "iterrows") else collect(causes)
    if groups is not None:
        unknown = sorted(set(groups) - set(pdf["group"]))
        if unknown:
            raise ValueError(f"no group(s) {unknown} here; groups: {sorted(set(pdf['group']))}")
        pdf = pdf[pdf["group"].isin(list(groups))]
    return table(pdf, ["group", "generation_after", "start_ts", "cause", "caused_by",
                          "duration_ms"],
                 rename={"generation_after": "generation", "start_ts": "rebalance started",
                         "caused_by": "member", "duration_ms": "rebalance (ms)"}, title=title)


# ---------------------------------------------------------------------------------------------
# A run, in words
# ---------------------------------------------------------------------------------------------

# A pause shorter than the session timeout leaves no line at INFO; at DEBUG it shows as a long
# gap between two re-arms of the member's session timer. Gaps from this long are told.
SILENCE_TOLD_MS = 10_000
# A member the coordinator has not heard from for this long when the logs end (a heartbeat
# every 3 s, an offset commit every 5 s when healthy) is told as silent, with when its session
# would expire.
OPEN_SILENCE_TOLD_MS = 5_000


class RunAccount:
    """A run told in a few sentences, in time order (text/plain and an HTML list)."""

    def __init__(self, title: str, sentences: Sequence[str]) -> None:
        self.title = title
        self.sentences = list(sentences)

    def __len__(self) -> int:
        return len(self.sentences)

    def __iter__(self) -> Any:
        return iter(self.sentences)

    def __contains__(self, text: str) -> bool:
        return any(text in s for s in self.sentences)

    def __repr__(self) -> str:
        out = [self.title]
        for i, s in enumerate(self.sentences, 1):
            out += textwrap.wrap(s, 96, initial_indent=f"{i}. ", subsequent_indent="   ")
        return "\n".join(out)

    def _repr_html_(self) -> str:
        items = "".join(f"<li>{html.escape(s)}</li>" for s in self.sentences)
        return (f"<div><b>{html.escape(self.title)}</b>"
                f"<ol style='margin-top:0.3em'>{items}</ol></div>")


def _at(ts: Any, start: datetime = DEFAULT_START) -> str:
    """``63.1 s (09:01:03,103)``: virtual time since the run's start, and the log's stamp."""
    return f"{_seconds(ts, start):,.1f} s ({_cell(ts, False, None)})"


def _ms_text(ms: Any) -> str:
    return f"{int(ms):,} ms".replace(",", " ")


def _cause_of(reason: str) -> tuple[str, str | None]:
    for name, pattern in _CAUSES:
        m = re.search(pattern, reason)
        if m:
            return name, m.group(1)
    return "other", None


def _last_heard(member: str, gaps: list[dict[str, Any]]) -> str:
    """", the coordinator had last heard from it at T, N ms earlier" from the gap that the
    member's removal closed (broker logs at DEBUG), or "" without such a gap."""
    closing = [g for g in gaps if g["member"] == member and g["event"] != "timer_registered"]
    if not closing:
        return ""
    g = closing[-1]
    return (f": the coordinator had last heard from it at {_at(g['prev_ts'])}, "
            f"{_ms_text(g['gap_ms'])} earlier")


def _episode_sentence(r: Mapping[str, Any], departures: list[dict[str, Any]],
                      gaps: list[dict[str, Any]]) -> str:
    reason = r["reason"] if isinstance(r["reason"], str) else ""
    cause, member = _cause_of(reason)
    who = _short_text(member) if member else None
    before = _cell(r["generation_before"], False, None)
    after = _cell(r["generation_after"], False, None)
    opened = f"Generation {_dash(after)} of {r['group']} started at {_at(r['start_ts'])}"
    if cause == "joined" and before == 0:
        why = f"when {who} joined the empty group"
    elif cause == "joined":
        why = f"because {who} joined"
    elif cause == "failed":
        heard = _last_heard(member or "", gaps)
        why = f"because {who}'s session expired (heartbeat expiration)" + (
            f"{heard}, and its session timer ran out" if heard else
            ": session.timeout.ms had passed since the coordinator last heard from it")
    elif cause == "left":
        left = [d for d in departures if d["member"] == member]
        if left and left[-1]["cause"] == "poll_timeout":
            why = (f"because {who} left the group: its poll loop overran max.poll.interval.ms, "
                   f"so its heartbeat thread sent LeaveGroup")
        else:
            detail = left[-1]["detail"] if left and isinstance(left[-1]["detail"], str) else None
            why = f"because {who} left the group (LeaveGroup" + \
                (f": {detail})" if detail else ")")
    elif cause == "rejoined":
        why = f"because {who} joined again with new metadata"
    else:
        why = f"(the coordinator's reason: {_short_text(reason) or 'none logged'})"
    end = r["end_state"] if isinstance(r["end_state"], str) else None
    members = _cell(r["members_after"], False, None)
    if end is None or _missing(r["end_ts"]):
        done = "it was still rebalancing when the logs end"
    elif end == "Stable":
        noun = "member" if members == 1 else "members"
        count = f" with {members} {noun}" if members is not None else ""
        again = " again" if before else ""
        done = (f"the group was Stable{again}{count} at {_at(r['end_ts'])}, "
                f"{_ms_text(r['duration_ms'])} later")
    elif end == "Empty":
        done = f"the group was Empty at {_at(r['end_ts'])}: no member was left"
    else:
        done = f"it ended {end} at {_at(r['end_ts'])}"
    restarts = _cell(r.get("restarts"), False, None)
    over = f" (the rebalance started over {restarts} times: a member joined or left " \
           f"meanwhile)" if restarts else ""
    return f"{opened} {why}; {done}{over}."


_DEPARTED = {
    "session_expiry": "was removed because its session expired as well",
    "leave": "left the group (LeaveGroup)",
    "poll_timeout": "left the group: its poll loop overran max.poll.interval.ms",
    "fencing": "was replaced by a new member with its group.instance.id (static membership)",
    "rebalance_timeout": "was removed: it did not rejoin within the rebalance timeout",
    "unknown_member": "found that the coordinator had removed it (UNKNOWN_MEMBER_ID)",
}


def _departure_sentence(d: Mapping[str, Any], gaps: list[dict[str, Any]]) -> str:
    what = _DEPARTED.get(d["cause"], f"left ({d['cause']})")
    heard = _last_heard(d["member"], gaps) if d["cause"] == "session_expiry" else ""
    return f"At {_at(d['ts'])} {_short_text(d['member'])} of {d['group']} {what}{heard}."


def _load_sentences(loads: list[dict[str, Any]]) -> list[tuple[Any, int, str]]:
    """(time, order, sentence) for the coordinator's moves after start-up: an unload is told
    before the load that takes over at the same instant."""
    out = []
    for r in loads:
        tp = f"__consumer_offsets-{r['partition']}"
        when = r["scheduled_ts"] if not _missing(r["scheduled_ts"]) else r["finished_ts"]
        epoch = _cell(r["epoch"], False, None)
        if r["operation"] == "unload":
            out.append((when, 0, f"At {_at(when)} broker {r['broker']} unloaded {tp}: it is no "
                                 f"longer the coordinator of the groups stored there."))
        elif r["outcome"] == "failed":
            detail = _short_text(r["detail"]) if isinstance(r["detail"], str) else "no detail"
            out.append((when, 1, f"At {_at(when)} broker {r['broker']} failed to load {tp} "
                                 f"(leader epoch {_dash(epoch)}: {detail}). Until a load "
                                 f"succeeds, requests for its groups fail with "
                                 f"NOT_COORDINATOR."))
        elif epoch:                            # epoch 0: the start-up load, not a move
            if r["outcome"] == "completed":
                out.append((when, 1, f"At {_at(when)} broker {r['broker']} loaded {tp} (leader "
                                     f"epoch {epoch}) in {_ms_text(r['duration_ms'])}: it "
                                     f"replayed the groups' records and is now their "
                                     f"coordinator."))
            else:
                out.append((when, 1, f"At {_at(when)} broker {r['broker']} began to load {tp}; "
                                     f"the logs end before it finished."))
    return out


def describe_run(events: Any, *, now_ms: int | None = None,
                 title: str = "what the logs say happened",
                 session_timeout_ms: int = SESSION_TIMEOUT_MS) -> RunAccount:
    """A run's logs, read with Spark, told in plain sentences in time order: each rebalance
    (which generation, when, whose join, failure or departure started it, and for a session
    expiry when the coordinator last heard from the member), members removed without a
    rebalance of their own, the long silences that cost no member its place, and the
    coordinator's moves after start-up (`rebalance_episodes`, `member_departures`,
    `heartbeat_gaps(..., basis="broker")`, `coordinator_loads`).

    `events`: the events of ONE cluster's logs (`load(...).events`); silences and "last heard
    from" need its broker logs at DEBUG (`write_logs(..., broker_level="DEBUG")`). `now_ms`:
    the cluster's virtual time, for the last sentence (the logs end at their last line).
    """
    from ..spark.analyses import (coordinator_loads, heartbeat_gaps, member_departures,
                                  rebalance_episodes)

    F = _F()
    episodes = collect(rebalance_episodes(events)).to_dict("records")
    departures = collect(member_departures(events)).to_dict("records")
    rearms = collect(heartbeat_gaps(events, basis="broker")).to_dict("records")
    gaps = [g for g in rearms if not _missing(g["gap_ms"])]
    loads = collect(coordinator_loads(events)).to_dict("records")
    last = events.agg(F.max("ts")).collect()[0][0]

    told: list[tuple[Any, int, str]] = []
    named = set()
    for r in episodes:
        cause, member = _cause_of(r["reason"] if isinstance(r["reason"], str) else "")
        if cause in ("failed", "left"):
            named.add((r["group"], member))
        told.append((r["start_ts"], 0, _episode_sentence(r, departures, gaps)))
    for d in departures:
        if (d["group"], d["member"]) not in named:
            told.append((d["ts"], 1, _departure_sentence(d, gaps)))
    told += [(when, 2 + order, text) for when, order, text in _load_sentences(loads)]
    for g in gaps:
        if g["event"] == "timer_registered" and g["gap_ms"] >= SILENCE_TOLD_MS:
            under = "less than" if g["gap_ms"] < session_timeout_ms else "as long as"
            told.append((g["prev_ts"], 4,
                         f"The coordinator went {_ms_text(g['gap_ms'])} without hearing from "
                         f"{_short_text(g['member'])}, from {_at(g['prev_ts'])} to "
                         f"{_at(g['ts'])}: {under} session.timeout.ms "
                         f"({_ms_text(session_timeout_ms)}), so the member stayed in the group "
                         f"(a pause, or heartbeats lost on the way)."))
    told.sort(key=lambda t: (_seconds(t[0], DEFAULT_START), t[1]))
    sentences = [t[2] for t in told]
    now = now_ms / 1000 if now_ms is not None else \
        (_seconds(last, DEFAULT_START) if last is not None else None)
    silent = []
    last_rows = {(g["group"], g["member"]): g for g in rearms}     # ordered by time: the last
    for g in last_rows.values():
        heard = _seconds(g["ts"], DEFAULT_START)
        if g["event"] != "timer_registered" or now is None or \
                (now - heard) * 1000 < OPEN_SILENCE_TOLD_MS:
            continue
        ts = g["ts"].to_pydatetime() if hasattr(g["ts"], "to_pydatetime") else g["ts"]
        expires = ts + timedelta(milliseconds=session_timeout_ms)
        silent.append(f"The coordinator has not heard from {_short_text(g['member'])} of "
                      f"{g['group']} since {_at(g['ts'])}: {_ms_text(round((now - heard) * 1000))} "
                      f"by {now:,.1f} s. If it stays silent, its session expires at "
                      f"{_at(expires)}, session.timeout.ms after that.")
    sentences += silent
    only_joins = not silent and all(t[1] == 0 for t in told) and all(
        _cause_of(r["reason"] if isinstance(r["reason"], str) else "")[0] == "joined"
        for r in episodes)
    until = f"{now_ms / 1000:,.1f} s, where the run stands now" if now_ms is not None else \
        (f"the logs' last line, at {_at(last)}" if last is not None else "the end of the logs")
    if only_joins:
        sentences.append(f"Nothing else happened up to {until}: no member left or failed, and "
                         f"the coordinator did not move.")
    else:
        sentences.append(f"The account ends at {until}.")
    return RunAccount(title, sentences)


# ---------------------------------------------------------------------------------------------
# Pictures
# ---------------------------------------------------------------------------------------------

_END_COLOURS = {"Stable": "#81c784", "Empty": "#cfd8dc", "Dead": "#616161"}


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def _picture(fig: Any, title: str) -> Picture:
    from ..viz.plots import figure_svg

    return Picture(figure_svg(fig), title)


def _seconds(ts: Any, start: datetime) -> float:
    t = ts.to_pydatetime() if hasattr(ts, "to_pydatetime") else ts
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return (t - start).total_seconds()


def episode_chart(episodes: Any, *, title: str = "rebalance episodes: how long each took"
                  ) -> Picture:
    """One horizontal bar per episode (grouped by group, in time order), its length the
    episode's duration in ms, coloured by the state the group ended in."""
    from matplotlib.patches import Patch

    pdf = episodes if hasattr(episodes, "iterrows") else collect(episodes)
    recs = pdf.to_dict("records")
    fig = _figure(8, 0.8 + 0.24 * max(len(recs), 1))
    ax = fig.subplots()
    labels, widths, colours = [], [], []
    for r in recs:
        after = _cell(r["generation_after"], False, None)
        labels.append(f"{r['group']}  gen {_dash(after)}")
        ms = _cell(r["duration_ms"], False, None)
        widths.append(0 if ms is None else ms)
        colours.append(_END_COLOURS.get(r["end_state"] if isinstance(r["end_state"], str)
                                        else "", "#ffb74d"))
    y = list(range(len(recs)))
    bars = ax.barh(y, widths, color=colours, edgecolor="#37474f", linewidth=0.5)
    ax.bar_label(bars, labels=[f"{w:,} ms" for w in widths], fontsize=7, padding=2)
    ax.set_yticks(y, labels, fontsize=7)
    ax.set_ylim(len(recs) - 0.5, -0.5)
    ax.set_xlabel("duration (ms): 'Preparing to rebalance' → 'Assignment received'")
    ax.margins(x=0.12)
    ax.grid(axis="x", color="#e0e0e0", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.set_title(title, fontsize=10)
    handles = [Patch(facecolor=c, edgecolor="#37474f", label=f"ended {s}")
               for s, c in _END_COLOURS.items()]
    ax.legend(handles=handles, fontsize=7, loc="lower right", frameon=False)
    return _picture(fig, title)


def state_chart(timeline: Any, *, start: datetime = DEFAULT_START, end: datetime | None = None,
                title: str = "group states, read from the broker logs") -> Picture:
    """Lanes of group states over time (one per group), from `group_state_timeline`."""
    from matplotlib.patches import Patch

    from ..group.classic import ClassicGroupState
    from ..viz.plots import GROUP_COLOURS

    colours = {s.value if hasattr(s, "value") else str(s): c for s, c in GROUP_COLOURS.items()}
    colours.update({str(s): c for s, c in GROUP_COLOURS.items()})
    pdf = timeline if hasattr(timeline, "iterrows") else collect(timeline)
    recs = pdf.to_dict("records")
    groups = list(dict.fromkeys(r["group"] for r in recs))
    last = max((_seconds(r["to_ts"] if not _missing(r["to_ts"]) else r["from_ts"], start)
                for r in recs), default=1.0)
    stop = _seconds(end, start) if end is not None else last + max(5.0, 0.05 * last)
    fig = _figure(9, 0.9 + 0.42 * max(len(groups), 1))
    ax = fig.subplots()
    for y, g in enumerate(groups):
        for r in recs:
            if r["group"] != g:
                continue
            a = _seconds(r["from_ts"], start)
            b = stop if _missing(r["to_ts"]) else _seconds(r["to_ts"], start)
            ax.broken_barh([(a, max(b - a, 0.05))], (y - 0.35, 0.7),
                           facecolors=colours.get(r["state"], "#ffffff"),
                           edgecolors="white", linewidth=0.4)
    ax.set_yticks(range(len(groups)), groups, fontsize=8)
    ax.set_ylim(len(groups) - 0.5, -0.5)
    ax.set_xlim(0, stop)
    ax.set_xlabel(f"seconds after {start:%H:%M:%S} UTC")
    ax.grid(axis="x", color="#e0e0e0", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.set_title(title, fontsize=10)
    handles = [Patch(facecolor=GROUP_COLOURS[s], label=str(s)) for s in ClassicGroupState]
    fig.legend(handles=handles, loc="outside lower center", ncol=5, fontsize=8, frameon=False)
    return _picture(fig, title)


def gap_chart(gaps: Any, *, start: datetime = DEFAULT_START,
              session_timeout_ms: int = SESSION_TIMEOUT_MS,
              title: str = "time since the coordinator last heard from each member") -> Picture:
    """`heartbeat_gaps(..., basis="broker")` as a saw-tooth per member: the time since the
    coordinator last re-armed the member's session timer grows until the next re-arm (a dot)
    and drops to zero. A gap closed by the member's removal instead of a re-arm (the
    "has failed" line of a session expiry, or a LeaveGroup) is dashed and ends in a cross."""
    gp = gaps if hasattr(gaps, "iterrows") else collect(gaps)
    fig = _figure(8, 3.6)
    ax = fig.subplots()
    palette = ["#1565c0", "#ef6c00", "#2e7d32", "#6a1b9a", "#c62828", "#00838f"]
    members = list(dict.fromkeys(m for m in gp["member"] if isinstance(m, str)))
    for i, m in enumerate(members):
        colour = palette[i % len(palette)]
        rows = [r for r in gp[gp["member"] == m].to_dict("records") if not _missing(r["prev_ts"])]
        xs: list[float] = []
        ys: list[float] = []
        for r in rows:
            a, b = _seconds(r["prev_ts"], start), _seconds(r["ts"], start)
            gap = float(r["gap_ms"]) / 1000
            if r["event"] == "timer_registered":
                xs += [a, b, b]
                ys += [0.0, gap, 0.0]
                continue
            ax.plot([a, b], [0.0, gap], linestyle="--", color=colour, linewidth=1.0)
            ax.plot([b], [gap], marker="X", color="#c62828", markersize=8)
            what = "removed: session expired" if "expired" in str(r["event"]) else "left"
            ax.annotate(f"{short_id(m)} {what} after {float(r['gap_ms']):,.0f} ms", (b, gap),
                        textcoords="offset points", xytext=(-8, -11), ha="right", fontsize=7)
        ax.plot(xs, ys, color=colour, linewidth=0.8, label=short_id(m))
        peaks = [(x, y) for x, y in zip(xs[1::3], ys[1::3])]
        ax.plot([p[0] for p in peaks], [p[1] for p in peaks], linestyle="none", marker="o",
                markersize=2.2, color=colour)
    limit = session_timeout_ms / 1000
    ax.axhline(limit, color="#c62828", linewidth=0.8, linestyle=":")
    ax.text(0.995, limit, f"session.timeout.ms = {session_timeout_ms:,} ms ",
            transform=ax.get_yaxis_transform(), ha="right", va="bottom", fontsize=7,
            color="#c62828")
    ax.set_ylim(0, limit * 1.18)
    ax.set_xlabel(f"seconds after {start:%H:%M:%S} UTC")
    ax.set_ylabel("since last re-arm (s)")
    ax.grid(color="#eeeeee", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.set_title(title, fontsize=10)
    fig.legend(loc="outside lower center", ncol=max(len(members), 1), fontsize=8, frameon=False)
    return _picture(fig, title)


# ---------------------------------------------------------------------------------------------
# Runs the lesson writes itself
# ---------------------------------------------------------------------------------------------

_TEMP_DIRS: list[str] = []


def _cleanup() -> None:
    for d in _TEMP_DIRS:
        shutil.rmtree(d, ignore_errors=True)


atexit.register(_cleanup)


def write_logs(cluster: Cluster, directory: str | Path | None = None, *,
               broker_level: str = "INFO", client_level: str = "INFO", name: str = "try-it"
               ) -> Path:
    """Write a cluster's log lines as the datasets hold them: one `server-broker-N.log` per
    broker, one `client-NAME.log` per consumer, each in trace order, Kafka's log4j layout.

    Without `directory` the files go to a new folder `name` inside a temporary directory that
    is removed when Python exits. Returns the folder.
    """
    from ..datasets.writer import log_file_name

    thresholds = {"broker": level_number(broker_level), "client": level_number(client_level)}
    if directory is None:
        base = tempfile.mkdtemp(prefix="coordinator_kit-lesson05-")
        _TEMP_DIRS.append(base)
        folder = Path(base) / name
    else:
        folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    files: dict[str, list[str]] = {log_file_name(f"broker-{b}"): [] for b in sorted(cluster.brokers)}
    for c in cluster.consumers:
        files.setdefault(log_file_name(f"client-{c}"), [])
    start = cluster.trace.start
    for e in cluster.trace.events:
        if e.message is None:
            continue
        side = "broker" if e.source.startswith("broker-") else "client"
        if level_number(e.level) < thresholds[side]:
            continue
        files.setdefault(log_file_name(e.source), []).append(e.line(start) or "")
    for file, lines in sorted(files.items()):
        (folder / file).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return folder


# consumer -> (pause starts at, pause length), virtual ms
PAUSES = {"consumer-1": (20_000, 30_000), "consumer-2": (60_000, 60_000)}


@lru_cache(maxsize=2)
def pause_run(seed: int = 0) -> Cluster:
    """Two consumers, Stable at 20 s; consumer-1 freezes for 30 s at 20 s (shorter than
    session.timeout.ms: it stays), consumer-2 for 60 s at 60 s (longer: it is removed, and
    joins again as a new member when it wakes). Runs until 150 s."""
    cluster = stable_group(2, seed=seed)
    for name, (at, length) in sorted(PAUSES.items(), key=lambda kv: kv[1][0]):
        cluster.run_for(at - cluster.scheduler.now)
        cluster.pause(name, length)
    cluster.run_for(150_000 - cluster.scheduler.now)
    return cluster


# ---------------------------------------------------------------------------------------------
# Exercises: answers computed without Spark (the files, with the pure-Python parser that gives
# the Spark loader's rows, or the kit's trace); tests/test_lessons_05.py checks they agree with
# what the Spark pipeline finds.
# ---------------------------------------------------------------------------------------------

@lru_cache(maxsize=1)
def seed_heartbeat_gaps() -> tuple[int, ...]:
    """The gaps (ms) between the 0.9 consumer's heartbeat responses (``SEED_LOG``): its DEBUG
    "Received successful heartbeat response." lines, events `heartbeat_succeeded` (wording
    J-HB-OK-0). A 0.9 client logs no line when it sends a heartbeat, so the responses are what
    there is."""
    rows = [r for r in parse_paths(SEED_LOG).events if r["event"] == "heartbeat_succeeded"]
    times = sorted(r["ts"] for r in rows)
    return tuple((b - a) // timedelta(milliseconds=1) for a, b in zip(times, times[1:]))


def check_heartbeat_interval(answer: Any) -> Feedback:
    """Exercise 1: the 0.9 consumer's heartbeat.interval.ms (``SEED_LOG``), measured from the
    time stamps of its "Received successful heartbeat response." lines (events
    heartbeat_succeeded)."""
    ex = "Exercise 1"
    if unanswered(answer):
        return not_answered(ex, "a number of milliseconds")
    if isinstance(answer, bool) or not isinstance(answer, (int, float)):
        return Feedback(ex, "wrong", f"Give a number of milliseconds, got {answer!r}.")
    gaps = seed_heartbeat_gaps()
    shown = ", ".join(f"{g} ms" for g in gaps)
    if answer == 3000:
        return Feedback(ex, "correct", f"The responses are {shown} apart: heartbeat.interval.ms "
                                       f"= 3000, Kafka's default. The next heartbeat is timed "
                                       f"from when the previous one was sent, and the response "
                                       f"arrives a millisecond or two later.")
    if min(gaps) - 5 <= answer <= max(gaps) + 5:
        return Feedback(ex, "wrong", f"Close: that is what the lines measure ({shown}). The "
                                     f"config is a round number a little below that; the rest "
                                     f"is the round trip of each heartbeat.")
    if 29_000 <= answer <= 31_000:
        return Feedback(ex, "wrong", "That is the session timeout this consumer sent "
                                     "(session_timeout=30000 in its JoinGroup). Measure the time "
                                     "between two heartbeat responses instead.")
    return Feedback(ex, "wrong", f"{answer} ms is not it. Keep the rows of seed.events "
                                 f"named heartbeat_succeeded and take the differences between "
                                 f"consecutive time stamps.")


_END_EVENTS = {"assignment_received", "group_empty", "group_unloaded", "group_dead",
               "group_loaded"}


def _broker_events(run: str) -> list[dict[str, Any]]:
    rows = parse_paths([f for f in dataset_logs([run]) if f.name.startswith("server-")]).events
    return sorted(rows, key=lambda r: (r["ts"], r["file"], r["line"]))


@lru_cache(maxsize=8)
def rebalancing_time(run: str = "rolling-restart", group: str = "group-1") -> int:
    """Total ms a group of a dataset run spent rebalancing: from each "Preparing to rebalance"
    that opens an episode to the line that ends it (the episode rule of `rebalance_episodes`)."""
    total, opened = 0, None
    for r in _broker_events(run):
        if r["group"] != group:
            continue
        if r["event"] == "rebalance_started" and opened is None:
            opened = r["ts"]
        elif r["event"] in _END_EVENTS and opened is not None:
            total += (r["ts"] - opened) // timedelta(milliseconds=1)
            opened = None
    return total


def check_rebalancing_time(answer: Any) -> Feedback:
    """Exercise 2: in datasets/rolling-restart, how many milliseconds in total did group-1
    spend rebalancing (the sum of its episodes' durations)?"""
    ex = "Exercise 2"
    if unanswered(answer):
        return not_answered(ex, "a number of milliseconds")
    if isinstance(answer, bool) or not isinstance(answer, int):
        return Feedback(ex, "wrong", f"Give a whole number of milliseconds, got {answer!r}.")
    truth = rebalancing_time()
    if answer == truth:
        return Feedback(ex, "correct", f"{truth} ms: four episodes, the first join of the three "
                                       f"consumers and one per restart (from the LeaveGroup to "
                                       f"the new generation's assignment).")
    if answer < truth:
        hint = ("too little. Did you keep only some episodes, or only the first start of the "
                "group? Filter on group 'rolling-restart/group-1' and sum duration_ms.")
    else:
        hint = ("too much. Did you sum over all runs? Every dataset folder has a group-1; "
                "filter on 'rolling-restart/group-1'.")
    return Feedback(ex, "wrong", f"{answer} ms is {hint}")


_POLL = re.compile(r"(?i)poll timeout|poll interval|max\.poll|poll expired")


@lru_cache(maxsize=4)
def departure_causes(run: str = "many-groups") -> dict[str, int]:
    """Departures per cause in a dataset run, read from its broker lines (`classicGroupLeave`,
    `expireClassicGroupMemberHeartbeat`):
    "has failed" -> session_expiry; "has left ... LeaveGroup" -> poll_timeout when the client's
    reason names the poll timeout, else leave; a static member replaced -> fencing."""
    out: dict[str, int] = {}
    for r in _broker_events(run):
        ev = r["event"]
        if ev in ("member_session_expired", "pending_member_expired"):
            cause = "session_expiry"
        elif ev in ("member_left", "pending_member_left"):
            cause = "poll_timeout" if _POLL.search(r["reason"] or "") else "leave"
        elif ev == "static_member_replaced":
            cause = "fencing"
        else:
            continue
        out[cause] = out.get(cause, 0) + 1
    return dict(sorted(out.items()))


def check_departure_causes(answer: Any) -> Feedback:
    """Exercise 3: in datasets/many-groups, how many member departures of each cause did the
    brokers log? A dict cause -> count, with the causes `member_departures` uses."""
    from ..spark.analyses import DEPARTURE_CAUSES

    ex = "Exercise 3"
    if unanswered(answer):
        return not_answered(ex, 'a dict such as {"leave": 1, "session_expiry": 2}')
    if not isinstance(answer, Mapping):
        return Feedback(ex, "wrong", f"Give a dict cause -> count, got {type(answer).__name__}.")
    unknown = sorted(set(answer) - set(DEPARTURE_CAUSES))
    if unknown:
        return Feedback(ex, "wrong", f"Unknown cause(s) {unknown}; member_departures uses "
                                     f"{', '.join(DEPARTURE_CAUSES)}.")
    given = {k: v for k, v in answer.items() if v}
    truth = departure_causes()
    if given == truth:
        return Feedback(ex, "correct", "; ".join(f"{k}: {v}" for k, v in truth.items()) +
                        ". The billing consumer left through its heartbeat thread each time its "
                        "poll loop overran max.poll.interval.ms; the crashed analytics consumer "
                        "and the cut-off shipping consumer went silent until their sessions "
                        "expired.")
    diff = sorted(set(given) ^ set(truth) | {k for k in given if given[k] != truth.get(k)})
    return Feedback(ex, "wrong", f"Not yet: the counts for {', '.join(diff)} differ. Did you "
                                 f"keep only the many-groups run (in_run), and count with "
                                 f"groupBy('cause')?")


@lru_cache(maxsize=2)
def longest_silence(client: str = "consumer-1") -> int:
    """The longest time (ms) the coordinator went without re-arming `client`'s session timer
    in `pause_run` (from the trace: its timer_registered events for that member)."""
    from .heartbeats import member_ids

    cluster = pause_run()
    keys = {f"heartbeat-group-1-{m}" for m in member_ids(cluster, client)}
    times = [e.ts for e in cluster.trace.events
             if e.kind == "timer_registered" and str(e.fields.get("key")) in keys]
    return max((b - a for a, b in zip(times, times[1:])), default=0)


def check_longest_silence(answer: Any) -> Feedback:
    """Exercise 4: in the pause run, consumer-1 froze for 30 s and stayed in the group. What was
    the longest gap, in ms, between two re-arms of its session timer on the coordinator?"""
    ex = "Exercise 4"
    if unanswered(answer):
        return not_answered(ex, "a number of milliseconds")
    if isinstance(answer, bool) or not isinstance(answer, int):
        return Feedback(ex, "wrong", f"Give a whole number of milliseconds, got {answer!r}.")
    truth = longest_silence()
    pause = PAUSES["consumer-1"][1]
    if answer == truth:
        return Feedback(ex, "correct", f"{truth} ms: longer than the {pause} ms pause (the last "
                                       f"re-arm came before the pause began, the next one only "
                                       f"after it ended) and shorter than session.timeout.ms, "
                                       f"so the coordinator kept consumer-1.")
    if answer == pause:
        return Feedback(ex, "wrong", f"{pause} ms is the pause. The coordinator does not see the "
                                     f"pause, only the requests: measure from the last re-arm "
                                     f"before it to the first one after it.")
    return Feedback(ex, "wrong", f"{answer} ms is not it. Take heartbeat_gaps(..., "
                                 f"basis='broker') of the pause run and the largest gap_ms of "
                                 f"consumer-1's member id.")
