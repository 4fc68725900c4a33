"""`python -m coordinator_kit logs ...`: parse Kafka logs into Parquet (and, from report.py,
analyse them).

    python -m coordinator_kit logs parse PATH... --out DIR [--engine auto|python|spark]
    python -m coordinator_kit logs quarantine PATH... [--engine auto|python|spark]

`parse` writes DIR/events.parquet and DIR/quarantine.parquet and prints
`parsed N lines: R recognised, Q quarantined, O other`, then where it wrote them; which engine
ran, and why, goes to stderr. `quarantine` prints the quarantined lines grouped by shape
(`logs.quarantine`), flagging the groups that look like group coordination. A missing path
or an empty input is reported on stderr with exit code 2.

`--engine auto` (the default) parses small inputs with the pure-Python parser and large ones
with Spark (`spark.engine.choose_engine`): both give the same rows, Python without the JVM's
start. The Python parse streams its rows to Parquet (`write_parsed_python`), so its memory
stays flat on a large input.

Sub-commands register themselves on the `logs` parser: `parse` and `quarantine` here;
`report` is added by `coordinator_kit.spark.report.add_parser(logs_subparsers)`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_parser", "run_parse", "run_quarantine", "write_parsed_python", "check_input",
           "print_notes", "add_engine_options", "pick_engine"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register `logs` and its sub-commands on the top-level sub-parsers."""
    logs = subparsers.add_parser("logs", help="parse and analyse Kafka coordinator logs",
                                 description="Parse Kafka broker/client logs (many layouts and "
                                 "versions) into Parquet, and analyse them.")
    logs_sub = logs.add_subparsers(dest="logs_command", required=True, metavar="COMMAND")
    _add_parse(logs_sub)
    _add_quarantine(logs_sub)
    _add_optional(logs_sub, f"{__package__}.report")
    return logs


def _add_optional(logs_sub: Any, module_name: str) -> None:
    """Let another module add a `logs` sub-command (report.py adds `report`)."""
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            return                         # not written yet
        raise
    module.add_parser(logs_sub)


def _add_parse(logs_sub: Any) -> None:
    p = logs_sub.add_parser("parse", help="parse log files into events.parquet and "
                            "quarantine.parquet",
                            description="Parse log files (or directories of them) and write "
                            "OUT/events.parquet and OUT/quarantine.parquet.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="log file or directory")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory")
    p.add_argument("--overwrite", action="store_true", help="replace existing output files")
    add_engine_options(p)
    p.set_defaults(func=run_parse)


def add_engine_options(p: argparse.ArgumentParser) -> None:
    """--engine, --master, --remote: shared by parse, quarantine and report."""
    from .engine import AUTO_SPARK_BYTES, ENGINES, THRESHOLD_ENV

    p.add_argument("--engine", choices=ENGINES, default="auto",
                   help="auto (default): the pure-Python parser below "
                   f"{AUTO_SPARK_BYTES // 2**20} MiB of input (${THRESHOLD_ENV}), Spark "
                   "above; python: the pure-Python parser (and, for report, the pure-Python "
                   "analyses): no JVM; spark: always Spark (same rows, same report)")
    p.add_argument("--master", help="Spark master URL (default: local[*], or "
                   "$COORDINATOR_KIT_SPARK_MASTER); implies Spark")
    p.add_argument("--remote", help="Spark Connect URL (or $COORDINATOR_KIT_SPARK_REMOTE); "
                   "implies Spark")


def pick_engine(args: argparse.Namespace, paths: list[str], command: str) -> str:
    """The engine for `args.engine` and `paths` (spark.engine.choose_engine); when it was
    chosen automatically, which one and why goes to stderr."""
    from .engine import choose_engine

    choice = choose_engine(paths, args.engine, master=args.master, remote=args.remote)
    if args.engine == "auto":
        print(f"{command}: engine: {choice}", file=sys.stderr)
    return choice.engine


def _add_quarantine(logs_sub: Any) -> None:
    p = logs_sub.add_parser("quarantine", help="group the lines the parser could not read by "
                            "shape, and flag those that look like group coordination",
                            description="Parse log files (or directories of them) and print "
                            "the quarantined lines grouped by shape (numbers, ids and hex "
                            "masked), with counts and an example file:line each; groups "
                            "holding words of group coordination are marked kafka.")
    from .report import _non_negative

    p.add_argument("paths", nargs="+", metavar="PATH", help="log file or directory")
    p.add_argument("--limit", type=_non_negative, default=20, metavar="N",
                   help="groups shown (default 20; 0 shows every group)")
    p.add_argument("--width", type=_non_negative, default=60, metavar="CHARS",
                   help="cut longer cells to this many characters (default 60; 0: never)")
    add_engine_options(p)
    p.set_defaults(func=run_quarantine)


def run_quarantine(args: argparse.Namespace) -> int:
    import warnings

    from ..logs.parse import LogInputWarning, SkippedFilesWarning
    from .quarantine import format_shapes

    try:
        paths = check_input(list(args.paths), "logs quarantine")
        engine = pick_engine(args, paths, "logs quarantine")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SkippedFilesWarning)
            warnings.simplefilter("ignore", LogInputWarning)
            if engine == "python":
                from ..logs.parse import parse_paths
                from ..logs.quarantine import quarantine_shapes

                result = parse_paths(paths)
                counts, shapes = result.counts, quarantine_shapes(result.quarantine)
            else:
                from .load import parse_logs
                from .quarantine import quarantine_shapes_spark
                from .session import get_session

                parsed = parse_logs(paths, get_session(args.master, remote=args.remote),
                                    checkpoint=True)
                counts, shapes = parsed.counts(), quarantine_shapes_spark(parsed.quarantine)
    except (FileNotFoundError, ValueError) as exc:
        print(f"logs quarantine: error: {exc}", file=sys.stderr)
        return 2
    print(counts.summary())
    print(format_shapes(shapes, limit=args.limit, width=args.width))
    print_notes(counts, "logs quarantine")
    return 0


def _check_input(paths: list[str]) -> list[str]:
    """Refuse, before any work, input with nothing to read (missing paths raise
    FileNotFoundError naming them; kit data files are named on stderr)."""
    return check_input(paths, "logs parse")


def check_input(paths: list[str], command: str) -> list[str]:
    """Shared by `logs parse` and `logs report`: the local paths scanned (logs.inputs), the
    kit's data files left out said on stderr; ValueError when no file is left to read or
    every file is empty. URIs with a scheme (hdfs://, s3a://) are left for Spark."""
    from ..logs.inputs import scan_inputs
    from ..logs.parse import skipped_note

    local = [p.removeprefix("file://") for p in paths
             if "://" not in p or p.startswith("file://")]
    inputs = scan_inputs(local)            # FileNotFoundError names the missing path
    if inputs.kit_files:                   # the kit's trace.jsonl and tables, say which
        print(f"{command}: {skipped_note(inputs.kit_files)}", file=sys.stderr)
    if len(local) == len(paths):
        if not inputs.files:
            why = "".join(f"; {n}" for n in inputs.notes)
            raise ValueError(f"no log files under {' '.join(paths)}: the directories are "
                             f"empty (hidden and _-prefixed files are skipped){why}"
                             if not inputs.notes else
                             f"no log file to read under {' '.join(paths)}{why}")
        if all(f.size == 0 for f in inputs.files):
            raise ValueError(f"the input is empty: {', '.join(f.name for f in inputs.files)} "
                             "hold no lines")
    return paths


def print_notes(counts: Any, command: str) -> None:
    """The notes on the input (followed, skipped, not read, read in part), one a line."""
    for line in counts.notes_text():
        print(f"{command}: note: {line}", file=sys.stderr)


def run_parse(args: argparse.Namespace) -> int:
    import warnings

    from ..logs.inputs import check_out_dir
    from ..logs.parse import LogInputWarning, SkippedFilesWarning

    try:
        paths = _check_input(list(args.paths))
        check_out_dir(args.out)
        engine = pick_engine(args, paths, "logs parse")
        with warnings.catch_warnings():    # skipped files and notes: said once, here
            warnings.simplefilter("ignore", SkippedFilesWarning)
            warnings.simplefilter("ignore", LogInputWarning)
            if engine == "python":
                counts = write_parsed_python(paths, args.out, overwrite=args.overwrite)
            else:
                from .load import write_parsed
                from .session import get_session

                spark = get_session(args.master, remote=args.remote)
                counts = write_parsed(paths, args.out, spark, overwrite=args.overwrite)
    except (FileNotFoundError, FileExistsError, ValueError) as exc:
        print(f"logs parse: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:                 # writing the output failed
        print(f"logs parse: error: cannot write {exc.filename or args.out}: "
              f"{exc.strerror or exc}; give another --out", file=sys.stderr)
        return 2
    print(counts.summary())
    out = Path(args.out)
    print(f"wrote {out / 'events.parquet'} ({counts.recognised} events) and "
          f"{out / 'quarantine.parquet'} ({counts.quarantined} quarantined records)")
    print_notes(counts, "logs parse")
    return 0


def write_parsed_python(paths: list[str], out: str | os.PathLike[str], *,
                        overwrite: bool = False, batch_rows: int = 65_536) -> Any:
    """The pure-Python engine: the same two Parquet outputs (single files) via pyarrow.

    The rows are streamed to the files `batch_rows` at a time (one row group each), so memory
    stays flat on a large input; the files are written under temporary names and put in place
    only once the whole input was read."""
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..logs.inputs import check_out_dir
    from ..logs.parse import ParseCounts, iter_parsed
    from .schema import arrow_schema

    out = check_out_dir(out)
    targets = {"events": out / "events.parquet", "quarantine": out / "quarantine.parquet"}
    for target in targets.values():
        if target.exists() and not overwrite:
            raise FileExistsError(f"{target} exists; remove it or pass --overwrite")
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    schema = arrow_schema()
    partial = {name: out / f".{name}.parquet.partial" for name in targets}
    writers = {name: pq.ParquetWriter(path, schema) for name, path in partial.items()}
    batches: dict[str, list[dict[str, Any]]] = {"events": [], "quarantine": []}
    counts = ParseCounts()
    done = False
    try:
        for kind, row in iter_parsed(paths, counts):
            name = "events" if kind == "event" else "quarantine"
            batch = batches[name]
            batch.append(row)
            if len(batch) >= batch_rows:
                writers[name].write_table(pa.Table.from_pylist(batch, schema=schema))
                batch.clear()
        for name, batch in batches.items():
            if batch:
                writers[name].write_table(pa.Table.from_pylist(batch, schema=schema))
        for writer in writers.values():
            writer.close()
        if counts.read == 0:
            raise ValueError(f"no lines read from {' '.join(map(str, paths))}: the input is "
                             "empty" + "".join(f"; {note}" for note in counts.notes))
        for name, target in targets.items():
            if target.is_dir():
                shutil.rmtree(target)
            partial[name].replace(target)
        done = True
    finally:
        if not done:
            for writer in writers.values():
                writer.close()
            for path in partial.values():
                path.unlink(missing_ok=True)
            if created:
                shutil.rmtree(out, ignore_errors=True)
    return counts
