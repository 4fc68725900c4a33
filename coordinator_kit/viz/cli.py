"""`python -m coordinator_kit diagrams`: regenerate diagrams/*.dot and *.svg.

What is drawn: every state table in `DIAGRAMS` (laid out by `dot`) and the pictures in
`pictures()` (a rebalance drawn from a seeded scenario's trace, laid out by `neato`). The tests
compare the committed files with what this command would write, so a table or a scenario that
changes without a regenerate fails the suite.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

__all__ = ["add_parser", "run", "pictures", "generated_names", "render_svg"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    d = sub.add_parser("diagrams", help="regenerate diagrams/*.dot and *.svg from the tables")
    d.add_argument("--out", type=Path, default=Path("diagrams"))
    d.add_argument("--no-svg", action="store_true", help="write only the .dot files")
    d.set_defaults(func=run)


def pictures() -> dict[str, tuple[str, Callable[[], str]]]:
    """name -> (Graphviz engine, function returning the DOT text), state tables first."""
    from .diagrams import DIAGRAMS, to_dot

    from .sequence import second_joins_sequence

    out: dict[str, tuple[str, Callable[[], str]]] = {
        name: ("dot", (lambda t=table: to_dot(t))) for name, table in DIAGRAMS.items()}
    out["rebalance_sequence"] = ("neato", second_joins_sequence)
    return out


def generated_names() -> list[str]:
    return list(pictures())


def render_svg(dot_text: str, engine: str = "dot") -> str:
    """A standalone SVG file's text from DOT text through the Graphviz binary (`dot` or
    `neato`), without Graphviz's version comment (`coordinator_kit.viz.diagrams.svg_of`)."""
    from .diagrams import svg_of

    return svg_of(dot_text, engine, prolog=True)


def run(args: argparse.Namespace) -> int:
    out: Path = args.out
    svg = not args.no_svg
    out.mkdir(parents=True, exist_ok=True)
    if svg and shutil.which("dot") is None:
        print("error: the Graphviz 'dot' binary is not installed; run `make test` (it installs "
              "it) or `apt-get install graphviz`, or pass --no-svg", file=sys.stderr)
        return 2
    for name, (engine, make) in pictures().items():
        text = make()
        path = out / f"{name}.dot"
        path.write_text(text)
        print(f"wrote {path}")
        if svg:
            (out / f"{name}.svg").write_text(render_svg(text, engine))
            print(f"wrote {out / f'{name}.svg'}")
    return 0
