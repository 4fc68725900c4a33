"""`python -m coordinator_kit diagrams`: regenerate diagrams/*.dot and *.svg from the tables."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    d = sub.add_parser("diagrams", help="regenerate diagrams/*.dot and *.svg from the tables")
    d.add_argument("--out", type=Path, default=Path("diagrams"))
    d.add_argument("--no-svg", action="store_true", help="write only the .dot files")
    d.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .diagrams import DIAGRAMS, to_dot

    out: Path = args.out
    svg = not args.no_svg
    out.mkdir(parents=True, exist_ok=True)
    dot_bin = shutil.which("dot")
    if svg and dot_bin is None:
        print("error: the Graphviz 'dot' binary is not installed; run `make test` (it installs "
              "it) or `apt-get install graphviz`, or pass --no-svg", file=sys.stderr)
        return 2
    for name, table in DIAGRAMS.items():
        path = out / f"{name}.dot"
        path.write_text(to_dot(table))
        print(f"wrote {path}")
        if svg:
            svg_text = subprocess.run([dot_bin, "-Tsvg", str(path)], check=True,
                                      capture_output=True, text=True).stdout
            (out / f"{name}.svg").write_text(svg_text)
            print(f"wrote {out / f'{name}.svg'}")
    return 0
