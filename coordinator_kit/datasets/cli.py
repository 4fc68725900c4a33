"""`python -m coordinator_kit datasets`: write, check, or generate large datasets.

    python -m coordinator_kit datasets                  # (re)write datasets/
    python -m coordinator_kit datasets --check          # exit 1 naming files that drifted
    python -m coordinator_kit datasets --scenario one-dies --out /tmp/d
    python -m coordinator_kit datasets --large 1G [--seed 7] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    d = sub.add_parser(
        "datasets", help="write the sample datasets (datasets/), check them, or generate large "
                         "logs with --large SIZE",
        description="Write the sample datasets generated from the named scenarios, check that "
                    "the committed ones regenerate byte for byte, or write gigabytes of "
                    "coordinator logs for many groups (--large).")
    d.add_argument("--out", type=Path, default=None,
                   help="where to write (default: datasets/ in the current directory; with "
                        "--large: coordinator_kit-datasets-large/ in the system temp directory)")
    d.add_argument("--check", action="store_true",
                   help="regenerate in memory and compare with --out; exit 1 naming each file "
                        "that differs, is missing or is unexpected")
    d.add_argument("--scenario", action="append", metavar="NAME",
                   help="only this scenario (repeatable); the README is written only for the "
                        "full set")
    d.add_argument("--large", metavar="SIZE",
                   help="write SIZE of broker and client logs for many groups with faults "
                        "(e.g. 200M, 1G; K/M/G are powers of 1024)")
    d.add_argument("--seed", type=int, default=0, help="seed for --large (default 0)")
    d.set_defaults(func=run)


def _error(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    from .catalog import DATASETS

    if args.large is not None:
        if args.check or args.scenario:
            return _error("--check and --scenario apply to the committed datasets, not to "
                          "--large; run them without --large")
        return _run_large(args)
    names = None
    if args.scenario:
        unknown = [n for n in args.scenario if n not in DATASETS]
        if unknown:
            return _error(f"no dataset scenario {', '.join(map(repr, unknown))}; known: "
                          f"{', '.join(DATASETS)}")
        names = list(dict.fromkeys(args.scenario))
    out: Path = args.out if args.out is not None else Path("datasets")
    if args.check:
        return _run_check(out, names)
    return _run_write(out, names)


def _run_check(out: Path, names: list[str] | None) -> int:
    from .writer import check, render_all

    if not out.is_dir():
        return _error(f"{out} is not a directory; --check compares regenerated files with a "
                      f"folder of datasets (default: datasets/)")
    rendered = render_all(names)
    problems = check(out, names, rendered)
    if problems:
        print(f"{out} does not match a fresh regeneration ({len(problems)} file(s)); run "
              f"`python -m coordinator_kit datasets` to rewrite it, and review the diff:",
              file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        return 1
    print(f"{out} matches a fresh regeneration ({len(rendered)} files)")
    return 0


def _run_write(out: Path, names: list[str] | None) -> int:
    from .writer import write_all

    try:
        changed = write_all(out, names)
    except OSError as exc:
        return _error(f"can't write the datasets to {out}: {exc.strerror or exc} "
                      f"({exc.filename or out}); choose another directory with --out")
    for path in changed:
        print(f"{'wrote' if path.exists() else 'removed'} {path}")
    if not changed:
        print(f"{out} is up to date")
    return 0


def _run_large(args: argparse.Namespace) -> int:
    from .large import DEFAULT_LARGE_OUT, generate_large, parse_size

    try:
        size = parse_size(args.large)
    except ValueError as exc:
        return _error(str(exc))
    out: Path = args.out if args.out is not None else Path(tempfile.gettempdir()) / \
        DEFAULT_LARGE_OUT
    try:
        result = generate_large(out, size, seed=args.seed, progress=sys.stderr)
    except OSError as exc:
        return _error(str(exc))
    print(f"wrote {len(result.files)} log files, {result.total_bytes} bytes "
          f"({result.total_bytes / 1024 ** 2:.1f} MiB), {result.lines} lines, "
          f"{result.episodes} groups, to {out} (groups.csv lists them)")
    return 0
