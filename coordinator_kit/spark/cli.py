"""`python -m coordinator_kit logs ...`: parse Kafka logs into Parquet (and, from report.py,
analyse them).

    python -m coordinator_kit logs parse PATH... --out DIR [--engine spark|python]

writes DIR/events.parquet and DIR/quarantine.parquet and prints one line,
`parsed N lines: R recognised, Q quarantined, O other`. A missing path or an empty input
is reported on stderr with exit code 2.

Sub-commands register themselves on the `logs` parser: `parse` here; `report` is added by
`coordinator_kit.spark.report.add_parser(logs_subparsers)` when that module exists.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_parser", "run_parse", "write_parsed_python", "check_input", "print_notes"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register `logs` and its sub-commands on the top-level sub-parsers."""
    logs = subparsers.add_parser("logs", help="parse and analyse Kafka coordinator logs",
                                 description="Parse Kafka broker/client logs (many layouts and "
                                 "versions) into Parquet, and analyse them.")
    logs_sub = logs.add_subparsers(dest="logs_command", required=True, metavar="COMMAND")
    _add_parse(logs_sub)
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
    p.add_argument("--engine", choices=("spark", "python"), default="spark",
                   help="spark (default) or the pure-Python reference parser (no JVM)")
    p.add_argument("--overwrite", action="store_true", help="replace existing output files")
    p.add_argument("--master", help="Spark master URL (default: local[*], or "
                   "$COORDINATOR_KIT_SPARK_MASTER)")
    p.add_argument("--remote", help="Spark Connect URL (or $COORDINATOR_KIT_SPARK_REMOTE)")
    p.set_defaults(func=run_parse)


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
        with warnings.catch_warnings():    # skipped files and notes: said once, here
            warnings.simplefilter("ignore", SkippedFilesWarning)
            warnings.simplefilter("ignore", LogInputWarning)
            if args.engine == "python":
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
    print_notes(counts, "logs parse")
    return 0


def write_parsed_python(paths: list[str], out: str | os.PathLike[str], *,
                        overwrite: bool = False) -> Any:
    """The pure-Python engine: the same two Parquet outputs (single files) via pyarrow."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..logs.parse import parse_paths
    from .schema import arrow_schema

    from ..logs.inputs import check_out_dir

    out = check_out_dir(out)
    targets = {"events": out / "events.parquet", "quarantine": out / "quarantine.parquet"}
    for target in targets.values():
        if target.exists() and not overwrite:
            raise FileExistsError(f"{target} exists; remove it or pass --overwrite")
    result = parse_paths(paths)
    if result.counts.read == 0:
        raise ValueError(f"no lines read from {' '.join(map(str, paths))}: the input is empty"
                         + "".join(f"; {note}" for note in result.counts.notes))
    out.mkdir(parents=True, exist_ok=True)
    schema = arrow_schema()
    for name, rows in (("events", result.events), ("quarantine", result.quarantine)):
        target = targets[name]
        if target.is_dir():
            import shutil
            shutil.rmtree(target)
        table = pa.Table.from_pylist(rows, schema=schema)
        pq.write_table(table, target)
    return result.counts
