"""`python -m coordinator_kit logs report PATH...`: the analyses of Kafka logs, as tables.

    python -m coordinator_kit logs report datasets/one-dies
    python -m coordinator_kit logs report broker.log client-*.log --limit 0
    python -m coordinator_kit logs report datasets/one-dies --engine spark

Parses the files (or directories of them), runs every analysis and prints each as a
plain-text table: rebalance episodes, member departures, heartbeat gaps per member, coordinator
loads and unloads, and the group-state timeline, then the quarantined lines grouped by shape.
Times are UTC. `--engine auto` (the default) reads a small input (below
`spark.engine.AUTO_SPARK_BYTES`) with the pure-Python parser and runs the pure-Python analyses
of `coordinator_kit.logs.analyses` on it: no JVM starts, and the answer comes in about a second
instead of ~30 s. A large input (or `--engine spark`, `--master`, `--remote`) goes through
Spark: `load_logs` and the queries of `coordinator_kit.spark.analyses`. The printed text is the
same byte for byte either way (tests/test_logs_analyses_identity.py). A path that does not
exist, a directory with no files, files with no lines, or lines none of which is a coordinator
event is reported on stderr with exit code 2.

`cli.py` (the `logs` command) calls `add_parser(logs_subparsers)` to register `report`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import IO, Any

__all__ = ["add_parser", "run_report", "check_paths", "format_table", "write_report",
           "EXIT_BAD_INPUT"]

EXIT_BAD_INPUT = 2
_TS_FORMAT = "yyyy-MM-dd HH:mm:ss,SSS"   # log4j's, so times read like the log lines they come from

_NO_HEARTBEATS = (
    "No heartbeat lines in the input. The Java consumer logs a heartbeat it sends only at DEBUG "
    "(\"Sending Heartbeat request with generation N and member id M to coordinator ...\") and "
    "at INFO only heartbeats that fail; the coordinator re-arms a member's session timer at "
    "DEBUG (\"Registering timer heartbeat-<group>-<member> ...\"). Collect client or broker "
    "logs at DEBUG to see the gaps.")


def add_parser(logs_subparsers: Any) -> argparse.ArgumentParser:
    """Register `report` on the `logs` command's sub-parsers."""
    p = logs_subparsers.add_parser(
        "report", help="print the analyses of Kafka coordinator logs as tables",
        description="Parse Kafka broker and client logs (files or directories) and print "
        "rebalance episodes, member departures, heartbeat gaps, coordinator loads/unloads and "
        "the group-state timeline as tables (times in UTC).")
    p.add_argument("paths", nargs="+", metavar="PATH", help="log file or directory of log files")
    p.add_argument("--limit", type=_non_negative, default=20, metavar="N",
                   help="rows shown per table (default 20; 0 shows every row)")
    p.add_argument("--width", type=_non_negative, default=60, metavar="CHARS",
                   help="cut longer cells to this many characters (default 60; 0: never)")
    from .cli import add_engine_options

    add_engine_options(p)
    p.set_defaults(func=run_report)
    return p


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {value}")
    return value


def check_paths(paths: Sequence[str]) -> list[str]:
    """Refuse a missing path, a directory without files, or files that are all empty, before
    a JVM is started. URIs with a scheme (hdfs://, s3a://) are left for Spark to check."""
    from .cli import check_input

    return check_input(list(paths), "logs")


def run_report(args: argparse.Namespace) -> int:
    import warnings

    from ..logs.parse import LogInputWarning, SkippedFilesWarning

    from .cli import pick_engine

    try:
        paths = check_paths(list(args.paths))
        engine = pick_engine(args, paths, "logs report")
    except (FileNotFoundError, ValueError) as exc:
        print(f"logs report: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if engine == "python":
        return _report_python(args, paths)
    spark = _session(args.master, args.remote)

    with warnings.catch_warnings():       # skipped files: said once, by check_paths
        warnings.simplefilter("ignore", SkippedFilesWarning)
        warnings.simplefilter("ignore", LogInputWarning)
        events, shapes, counts_of, notes = _parse(paths, spark, engine)
    for note in notes:                    # the same notes as `logs parse` prints
        print(f"logs report: note: {note}", file=sys.stderr)
    # every section below is a query on `events`; checkpointed, each starts from these rows
    # instead of re-analysing the whole parse plan (regexes, joins of multi-line records),
    # which on a few dozen files made Catalyst alone run out of a 2 GiB driver
    events = events.localCheckpoint(eager=True)
    zone = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "UTC")     # times are printed in UTC
    try:
        if events.limit(1).count() == 0:
            _no_events(paths, counts_of())
            return EXIT_BAD_INPUT
        write_report(events, sys.stdout, limit=args.limit, width=args.width, shapes=shapes)
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)
    return 0


def _report_python(args: argparse.Namespace, paths: list[str]) -> int:
    """The python engine: the pure-Python parser and `logs.analyses`; no JVM starts."""
    import warnings

    from ..logs.parse import LogInputWarning, SkippedFilesWarning, parse_paths
    from ..logs.quarantine import quarantine_shapes

    with warnings.catch_warnings():       # skipped files: said once, by check_paths
        warnings.simplefilter("ignore", SkippedFilesWarning)
        warnings.simplefilter("ignore", LogInputWarning)
        result = parse_paths(paths)
    for note in result.counts.notes:
        print(f"logs report: note: {note}", file=sys.stderr)
    if not result.events:
        _no_events(paths, result.counts)
        return EXIT_BAD_INPUT
    write_report(result.events, sys.stdout, limit=args.limit, width=args.width,
                 shapes=quarantine_shapes(result.quarantine))
    return 0


def _no_events(paths: list[str], counts: Any) -> None:
    print(f"logs report: error: no coordinator events in {' '.join(paths)}: "
          f"{counts.read} lines read, none is a Kafka group-coordination message "
          f"({counts.quarantined} quarantined, {counts.other} other); "
          "`logs parse` writes the quarantined lines out for a look",
          file=sys.stderr)


def _parse(paths: list[str], spark: Any, engine: str) -> tuple[Any, Any, Any, list[Any]]:
    """(events DataFrame, quarantine shapes, a function giving the counts, input notes) from
    Spark's own parse (engine "python" does not come here: `_report_python`)."""
    from .load import parse_logs
    from .quarantine import quarantine_shapes_spark

    parsed = parse_logs(paths, spark)
    return parsed.events, quarantine_shapes_spark(parsed.quarantine), parsed.counts, parsed.notes


def _session(master: str | None, remote: str | None) -> Any:
    """The active session when there is one (a notebook, the tests) and nothing else was asked;
    else the kit's `get_session`."""
    if master is None and remote is None:
        from pyspark.sql import SparkSession
        active = SparkSession.getActiveSession()
        if active is not None:
            return active
    from .session import get_session
    return get_session(master, remote=remote)


def write_report(events: Any, out: IO[str], *, limit: int = 20, width: int = 60,
                 shapes: list[Any] | None = None) -> None:
    """Print every analysis of `events` as a table to `out`; with `shapes`
    (logs.quarantine.quarantine_shapes), a last section on the quarantined lines.

    `events` is a `load_logs` DataFrame (the analyses run as Spark queries,
    `spark.analyses`; times print in the session's time zone, UTC in `logs report`), or the
    pure-Python parser's rows (`parse_paths(...).events`, or their pandas DataFrame): then
    `logs.analyses` runs them, without Spark, and the text is the same byte for byte."""
    frames = _SparkFrames() if _is_spark(events) else _PythonFrames()
    A = frames.analyses()
    prepared = frames.prepare(events)
    n, files, first, last = frames.span(events, prepared)
    events = prepared
    out.write(f"{n} coordinator events from {files} file(s)")
    if first is not None:
        out.write(f", {first} to {last} UTC")
    out.write("\n")

    sections: list[tuple[str, Callable[[], Any], str | None]] = [
        ("Rebalance episodes per group", lambda: A.rebalance_episodes(events), None),
        ("Member departures by cause", lambda: A.member_departures(events), None),
    ]
    for title, make, note in sections:
        _section(out, frames, title, make(), limit, width, note)

    client = A.heartbeat_gap_summary(A.heartbeat_gaps(events, basis="client"))
    if not frames.empty(client):
        _section(out, frames, "Heartbeat gaps per member (client heartbeat lines)", client,
                 limit, width)
    else:
        broker = A.heartbeat_gap_summary(A.heartbeat_gaps(events, basis="broker"))
        if not frames.empty(broker):
            _section(out, frames, "Heartbeat gaps per member (coordinator session-timer "
                     "resets; the clients' lines hold no heartbeats)", broker, limit, width)
        else:
            _section(out, frames, "Heartbeat gaps per member", None, limit, width,
                     _NO_HEARTBEATS)

    _section(out, frames, "Coordinator loads and unloads per partition",
             A.coordinator_loads(events), limit, width)
    _section(out, frames, "Group state timeline", A.group_state_timeline(events), limit, width)
    if shapes is not None:
        from .quarantine import format_shapes

        out.write("\n== Quarantined lines by shape (`logs quarantine` shows them alone)\n")
        out.write(format_shapes(shapes, limit=limit, width=width) + "\n")


def _is_spark(events: Any) -> bool:
    """A pyspark DataFrame (classic or Connect), told apart without importing pyspark."""
    return any(c.__module__.startswith("pyspark.") for c in type(events).__mro__)


class _SparkFrames:
    """The report's reads of Spark DataFrames."""

    @staticmethod
    def analyses() -> Any:
        from . import analyses
        return analyses

    @staticmethod
    def prepare(events: Any) -> Any:
        return events

    @staticmethod
    def span(events: Any, prepared: Any) -> tuple[int, int, str | None, str | None]:
        from pyspark.sql import functions as F

        fmt = "yyyy-MM-dd HH:mm:ss"
        row = events.agg(F.count(F.lit(1)).alias("n"),
                         F.date_format(F.min("ts"), fmt).alias("first"),
                         F.date_format(F.max("ts"), fmt).alias("last"),
                         F.countDistinct("file").alias("files")).first()
        return row["n"], row["files"], row["first"], row["last"]

    @staticmethod
    def empty(df: Any) -> bool:
        return df.limit(1).count() == 0

    @staticmethod
    def rows(df: Any, limit: int) -> tuple[list[str], list[list[str | None]], int]:
        """Header, the first `limit` rows as text (timestamps in log4j's layout), the total."""
        from pyspark.sql import functions as F
        from pyspark.sql import types as T

        cols = []
        for field in df.schema.fields:
            c = F.col(f"`{field.name}`")
            if isinstance(field.dataType, (T.TimestampType, T.TimestampNTZType)):
                c = F.date_format(c, _TS_FORMAT)
            cols.append(c.cast("string").alias(field.name))
        text = df.select(*cols)
        taken = (text.limit(limit + 1) if limit else text).collect()
        rows = [list(r) for r in taken[:limit or None]]
        total = len(taken) if not limit or len(taken) <= limit else df.count()
        return df.columns, rows, total


class _PythonFrames:
    """The same reads of `logs.analyses`' pandas DataFrames, giving Spark's text: times in
    log4j's layout (UTC), integers as integers, doubles as Java prints them."""

    @staticmethod
    def analyses() -> Any:
        from ..logs import analyses
        return analyses

    @staticmethod
    def prepare(events: Any) -> Any:
        from ..logs.analyses import prepare
        return prepare(events)

    @staticmethod
    def span(events: Any, prepared: Any) -> tuple[int, int, str | None, str | None]:
        """Every event counts (also those without a time stamp, which `prepared` leaves
        out); first and last time from the timed ones."""
        if hasattr(events, "columns"):                 # a pandas DataFrame of the rows
            files = int(events["file"].nunique())
        else:
            files = len({r["file"] for r in events if r["file"] is not None})
        stamps = [r["ts"] for r in prepared]
        if not stamps:
            return len(events), files, None, None
        return len(events), files, _ts_text(min(stamps))[:19], _ts_text(max(stamps))[:19]

    @staticmethod
    def empty(df: Any) -> bool:
        return len(df) == 0

    @staticmethod
    def rows(df: Any, limit: int) -> tuple[list[str], list[list[str | None]], int]:
        from ..logs.analyses import java_double_string

        shown = df if not limit else df.head(limit)
        columns: list[list[str | None]] = []
        for name in df.columns:
            col = shown[name]
            kind = col.dtype.kind
            missing = col.isna().tolist()
            if kind == "M":
                micros = (col.to_numpy(dtype="datetime64[ns]").view("int64") // 1000).tolist()
                text = [None if m else _ts_text(v) for v, m in zip(micros, missing)]
            elif kind == "f":
                text = [None if m else java_double_string(v)
                        for v, m in zip(col.tolist(), missing)]
            else:
                text = [None if m else str(v) for v, m in zip(col.tolist(), missing)]
            columns.append(text)
        rows = [list(r) for r in zip(*columns)] if columns else []
        return list(df.columns), rows, len(df)


def _ts_text(micros: int) -> str:
    """A time in microseconds since the epoch as `date_format(ts, _TS_FORMAT)` in UTC."""
    from datetime import datetime, timedelta, timezone

    t = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=micros)
    return f"{t:%Y-%m-%d %H:%M:%S},{t.microsecond // 1000:03d}"


def _section(out: IO[str], frames: Any, title: str, df: Any, limit: int, width: int,
             note: str | None = None) -> None:
    out.write(f"\n== {title}\n")
    if df is None:
        out.write(f"{note}\n")
        return
    header, rows, total = frames.rows(df, limit)
    if total == 0:
        out.write("(none)\n")
        return
    out.write(format_table(header, rows, width=width) + "\n")
    if total > len(rows):
        out.write(f"(showing {len(rows)} of {total} rows; --limit 0 shows all)\n")
    if note:
        out.write(f"{note}\n")


def format_table(header: Sequence[str], rows: Sequence[Sequence[str | None]], *,
                 width: int = 60) -> str:
    """A plain-text table: numbers right-aligned, text left-aligned, NULL shown as '-'."""
    def cell(v: str | None) -> str:
        if v is None:
            return "-"
        v = v.replace("\n", " ")
        return v if not width or len(v) <= width else v[:max(width - 1, 1)] + "…"

    body = [[cell(v) for v in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in body]) for i, h in enumerate(header)]
    numeric = [all(_is_number(r[i]) for r in body if r[i] != "-") and
               any(r[i] != "-" for r in body) for i in range(len(header))]

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.rjust(w) if num else v.ljust(w)
                         for v, w, num in zip(values, widths, numeric)).rstrip()

    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in body])


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True

