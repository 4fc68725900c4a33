"""`python -m coordinator_kit logs report PATH...`: the analyses of Kafka logs, as tables.

    python -m coordinator_kit logs report datasets/one-dies
    python -m coordinator_kit logs report broker.log client-*.log --limit 0
    python -m coordinator_kit logs report datasets/one-dies --engine spark

Parses the files (or directories of them) with `load_logs`, runs every analysis of
`coordinator_kit.spark.analyses` and prints each as a plain-text table: rebalance episodes,
member departures, heartbeat gaps per member, coordinator loads and unloads, and the group-state
timeline, then the quarantined lines grouped by shape. Times are UTC. The analyses are Spark
queries; `--engine auto` (the default) parses a small input with the pure-Python parser and
hands its rows to Spark, a large one with Spark itself (`spark.engine`). A path that does not exist, a directory with no files, files with no
lines, or lines none of which is a coordinator event is reported on stderr with exit code 2.

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
    spark = _session(args.master, args.remote)

    with warnings.catch_warnings():       # skipped files: said once, by check_paths
        warnings.simplefilter("ignore", SkippedFilesWarning)
        warnings.simplefilter("ignore", LogInputWarning)
        events, shapes, counts_of, notes = _parse(paths, spark, engine)
    for note in notes:                    # the same notes as `logs parse` prints
        print(f"logs report: note: {note}", file=sys.stderr)
    events = events.cache()
    zone = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "UTC")     # times are printed in UTC
    try:
        if events.limit(1).count() == 0:
            counts = counts_of()
            print(f"logs report: error: no coordinator events in {' '.join(paths)}: "
                  f"{counts.read} lines read, none is a Kafka group-coordination message "
                  f"({counts.quarantined} quarantined, {counts.other} other); "
                  "`logs parse` writes the quarantined lines out for a look",
                  file=sys.stderr)
            return EXIT_BAD_INPUT
        write_report(events, sys.stdout, limit=args.limit, width=args.width, shapes=shapes)
    finally:
        events.unpersist()
        spark.conf.set("spark.sql.session.timeZone", zone)
    return 0


def _parse(paths: list[str], spark: Any, engine: str) -> tuple[Any, Any, Any, list[Any]]:
    """(events DataFrame, quarantine shapes, a function giving the counts, input notes).

    The python engine parses with `logs.parse` and hands the events to Spark as one table
    (the analyses are Spark queries): the same rows as Spark's own parse, without its
    cold query over the text."""
    if engine == "python":
        import pyarrow as pa

        from ..logs.parse import parse_paths
        from ..logs.quarantine import quarantine_shapes
        from .schema import arrow_schema, spark_schema

        result = parse_paths(paths)
        table = pa.Table.from_pylist(result.events, schema=arrow_schema())
        events = (spark.createDataFrame(table, spark_schema()) if table.num_rows
                  else spark.createDataFrame([], spark_schema()))
        return (events, quarantine_shapes(result.quarantine), lambda: result.counts,
                result.counts.notes)
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
    """Print every analysis of `events` (a `load_logs` DataFrame) as a table to `out`; with
    `shapes` (logs.quarantine.quarantine_shapes), a last section on the quarantined lines."""
    from . import analyses as A

    from pyspark.sql import functions as F

    n = events.count()
    span = events.agg(F.min("ts").alias("first"), F.max("ts").alias("last"),
                      F.countDistinct("file").alias("files")).first()
    out.write(f"{n} coordinator events from {span['files']} file(s)")
    if span["first"] is not None:
        out.write(f", {span['first']:%Y-%m-%d %H:%M:%S} to {span['last']:%Y-%m-%d %H:%M:%S} UTC")
    out.write("\n")

    sections: list[tuple[str, Callable[[], Any], str | None]] = [
        ("Rebalance episodes per group", lambda: A.rebalance_episodes(events), None),
        ("Member departures by cause", lambda: A.member_departures(events), None),
    ]
    for title, make, note in sections:
        _section(out, title, make(), limit, width, note)

    client = A.heartbeat_gap_summary(A.heartbeat_gaps(events, basis="client"))
    if client.limit(1).count() > 0:
        _section(out, "Heartbeat gaps per member (client heartbeat lines)", client, limit, width)
    else:
        broker = A.heartbeat_gap_summary(A.heartbeat_gaps(events, basis="broker"))
        if broker.limit(1).count() > 0:
            _section(out, "Heartbeat gaps per member (coordinator session-timer resets; the "
                     "clients' lines hold no heartbeats)", broker, limit, width)
        else:
            _section(out, "Heartbeat gaps per member", None, limit, width, _NO_HEARTBEATS)

    _section(out, "Coordinator loads and unloads per partition", A.coordinator_loads(events),
             limit, width)
    _section(out, "Group state timeline", A.group_state_timeline(events), limit, width)
    if shapes is not None:
        from .quarantine import format_shapes

        out.write("\n== Quarantined lines by shape (`logs quarantine` shows them alone)\n")
        out.write(format_shapes(shapes, limit=limit, width=width) + "\n")


def _section(out: IO[str], title: str, df: Any, limit: int, width: int,
             note: str | None = None) -> None:
    out.write(f"\n== {title}\n")
    if df is None:
        out.write(f"{note}\n")
        return
    header, rows, total = _rows(df, limit)
    if total == 0:
        out.write("(none)\n")
        return
    out.write(format_table(header, rows, width=width) + "\n")
    if total > len(rows):
        out.write(f"(showing {len(rows)} of {total} rows; --limit 0 shows all)\n")
    if note:
        out.write(f"{note}\n")


def _rows(df: Any, limit: int) -> tuple[list[str], list[list[str | None]], int]:
    """Header, the first `limit` rows as text (timestamps in log4j's layout), and the total."""
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

