"""Graphviz state diagrams drawn from the kit's state tables, and the object a notebook shows.

The DOT text comes straight from a `StateTable` (every edge it allows, labelled with its
trigger), so a diagram can never show a transition the code refuses. States are shown by Kafka's
display name (`str(state)`: `ACTIVE`, `PreparingRebalance`, `STABLE`).

Sizes: a notebook's output area is about 968 px wide, so every diagram is laid out to be at most
`MAX_WIDTH_PX` (940 px) wide at its natural size with no label under `MIN_FONT_PX` (11 px);
Graphviz measures in points (1 pt = 4/3 px). Each table has its own `Layout` (top to bottom,
trigger labels wrapped onto short lines) instead of being shrunk to fit.

The live form numbers a path: `to_dot(table, current=..., path=[(a, b), ...])` fills the current
state and writes 1, 2, 3... on the edges taken, in order, in colour (an edge taken twice carries
both numbers); `taken=(a, b)` colours one edge without a number. `coordinator_kit.viz.live`
reads paths straight off a `Cluster`'s trace.

`Diagram` is what the `*_diagram` functions return: DOT text that Jupyter shows as a picture.
Its picture is `text/html` holding an `<img>` with the SVG as a data URL: JupyterLab renders
that in an untrusted notebook (a stored output, before any cell runs), where it shows
`image/svg+xml` only as text. The SVG has no Graphviz version comment, so the same DOT text gives
the same bytes on one Graphviz version (the kit's notebooks are executed with `dot` 2.43).
`to_dot` needs nothing but Python; drawing needs the Graphviz `dot` binary.
"""

from __future__ import annotations

import functools
import html
import re
import shutil
import subprocess
import textwrap
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from ..client.member import MEMBER_STATES
from ..client.membership import MEMBER_STATES as CONSUMER_MEMBERSHIP_STATES
from ..eras.central.states import CONSUMER_STATES as CENTRAL_CONSUMER_STATES
from ..eras.central.states import GROUP_PHASES as CENTRAL_GROUP_PHASES
from ..eras.zookeeper.states import CONNECTOR_STATES
from ..group.classic import CLASSIC_GROUP_STATES
from ..group.modern.consumer_group import CONSUMER_GROUP_STATES
from ..group.modern.member import MEMBER_STATES as CONSUMER_GROUP_MEMBER_STATES
from ..runtime.runtime import CONTEXT_STATES
from ..states import StateTable

__all__ = ["to_dot", "state_diagram", "node_id", "DIAGRAMS", "LAYOUTS", "Layout", "Diagram",
           "svg_of", "svg_size", "MAX_WIDTH_PX", "MIN_FONT_PX", "TAKEN_COLOUR", "wrap",
           "step_numbers", "dot_quote"]

# Tables drawn into diagrams/ by `python -m coordinator_kit diagrams`.
DIAGRAMS: dict[str, StateTable[Any]] = {
    "coordinator_context": CONTEXT_STATES,
    "classic_group": CLASSIC_GROUP_STATES,
    "consumer_member": MEMBER_STATES,
    "central_group": CENTRAL_GROUP_PHASES,
    "central_consumer": CENTRAL_CONSUMER_STATES,
    "zookeeper_consumer": CONNECTOR_STATES,
    "consumer_group": CONSUMER_GROUP_STATES,
    "consumer_group_member": CONSUMER_GROUP_MEMBER_STATES,
    "consumer_membership": CONSUMER_MEMBERSHIP_STATES,
}

MAX_WIDTH_PX = 940   # widest natural drawing: a JupyterLab output area at 1400 px shows ~968
MIN_FONT_PX = 11     # smallest label at natural size
PX_PER_PT = 4 / 3

TAKEN_COLOUR = "#d84315"
_CURRENT = 'style="filled,bold", fillcolor="#ffd54f", penwidth=2'
_TAKEN = f'color="{TAKEN_COLOUR}", fontcolor="{TAKEN_COLOUR}", penwidth=2.5'
_NODE_PT = 11
_EDGE_PT = 9         # 12 px
_TITLE_PT = 11


@dataclass(frozen=True)
class Layout:
    """How one table is laid out: direction, spacing (inches), characters per label line.

    Top to bottom with labels of about 20 characters keeps every table within `MAX_WIDTH_PX`
    (left to right, the widest was 2,011 px); the test suite draws each one and checks.
    """

    rankdir: str = "TB"
    wrap: int = 20
    nodesep: float = 0.3
    ranksep: float = 0.4


LAYOUTS: dict[str, Layout] = {
    "CoordinatorContext": Layout(),
    "ClassicGroup": Layout(),
    "ConsumerMember": Layout(),
    "CentralGroup": Layout(),
    "CentralConsumer": Layout(wrap=16),
    "ZookeeperConsumerConnector": Layout(wrap=16, nodesep=0.2),
    "ConsumerGroup": Layout(wrap=14, nodesep=0.2),
    "ConsumerGroupMember": Layout(wrap=16),
    "ConsumerMembershipManager": Layout(wrap=12, nodesep=0.05),
}


def dot_quote(text: str) -> str:
    """A DOT string literal (newlines become `\\n`, centred lines)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


_q = dot_quote


def _lines(text: str, width: int) -> list[str]:
    return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)


def wrap(text: str, width: int) -> str:
    """`text` on lines of about `width` characters (at most 3 more when that saves a line),
    as even as the words allow: no word left alone on the last line, words never split."""
    if len(text) <= width:
        return text
    best: tuple[int, int, int] | None = None
    for w in range(max(1, width // 2), width + 4):
        lines = _lines(text, w)
        lengths = [len(line) for line in lines]
        score = (len(lines), max(lengths) - min(lengths), -w)
        if best is None or score < best:
            best = score
    assert best is not None
    return "\n".join(_lines(text, -best[2]))


def node_id(state: Enum) -> str:
    """The name a state's node carries: Kafka's display name (`str(state)`)."""
    return str(state)


def step_numbers(numbers: Sequence[int]) -> str:
    """The numbers written on an edge taken: `3`, `2, 5`, or `2, 3 … 9 (6×)` for many."""
    if len(numbers) <= 4:
        return ", ".join(map(str, numbers))
    return f"{numbers[0]}, {numbers[1]} … {numbers[-1]} ({len(numbers)}×)"


def to_dot(table: StateTable[Any], *, current: Enum | None = None,
           taken: tuple[Enum, Enum] | None = None,
           path: Sequence[tuple[Enum, Enum]] | None = None, title: str | None = None,
           legend: str | None = None) -> str:
    """DOT source for `table`: `current` filled, the edge `taken` in colour, or a numbered
    `path` (edges in the order taken; ones the table refuses are skipped). `legend` is a line
    under the title saying what the highlights mean."""
    layout = LAYOUTS.get(table.name, Layout())
    steps: dict[tuple[Enum, Enum], list[int]] = {}
    allowed = [e for e in path or () if table.can_transition(e[0], e[1])]
    for n, edge in enumerate(allowed, start=1):
        steps.setdefault(edge, []).append(n)
    heading = wrap(title or table.name, 86)
    if legend:
        heading += "\n" + wrap(legend, 90)
    lines = [f"digraph {_q(table.name)} {{",
             f"  rankdir={layout.rankdir};",
             f'  graph [fontname="Helvetica", fontsize={_TITLE_PT}, labelloc=t, '
             f"nodesep={layout.nodesep}, ranksep={layout.ranksep}, label={_q(heading)}];",
             '  node [shape=box, style="rounded,filled", fillcolor="#eceff1", '
             f'fontname="Helvetica", fontsize={_NODE_PT}];',
             f'  edge [fontname="Helvetica", fontsize={_EDGE_PT}];',
             '  start [shape=point, width=0.12, fillcolor=black, label=""];',
             f"  start -> {_q(node_id(table.initial))};"]
    for state in table.states:
        attrs = f" [{_CURRENT}]" if state is current else ""
        lines.append(f"  {_q(node_id(state))}{attrs};")
    for edge in table.edges():
        key = (edge.source, edge.target)
        label = wrap(edge.trigger, layout.wrap)
        coloured = key in steps or (taken is not None and key == taken)
        if key in steps:
            label = step_numbers(steps[key]) + "\n" + label
        attrs = [f"label={_q(label)}"]
        if coloured:
            attrs.append(_TAKEN)
        lines.append(f"  {_q(node_id(edge.source))} -> {_q(node_id(edge.target))} "
                     f"[{', '.join(attrs)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


# -- rendering ------------------------------------------------------------------------------------

_VERSION_COMMENT = re.compile(r"<!-- Generated by graphviz version [^>]*-->\n?")
_SVG_SIZE = re.compile(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"')
_SVG_WIDTH = re.compile(r'\swidth="([\d.]+)pt"')
_SVG_HEIGHT = re.compile(r'\sheight="[\d.]+pt"')


def _render(dot_text: str, engine: str) -> str:
    binary = shutil.which(engine)
    if binary is None:
        raise FileNotFoundError(f"the Graphviz {engine!r} binary is not installed; run `make "
                                f"test` (it installs it) or `apt-get install graphviz`")
    svg = subprocess.run([binary, "-Tsvg"], input=dot_text, check=True, capture_output=True,
                         text=True).stdout
    return _VERSION_COMMENT.sub("", svg)


@functools.lru_cache(maxsize=256)
def svg_of(dot_text: str, engine: str = "dot", *, fit: bool = False,
           prolog: bool = False) -> str:
    """The SVG text of `dot_text` laid out by `engine` (cached), without the Graphviz version.

    `fit=True` lets it shrink into a narrower box (width 100%, at most its natural width; the
    viewBox keeps the proportions), for HTML views such as the control panel. `prolog=True`
    keeps the XML declaration and doctype (a standalone .svg file).
    """
    svg = _render(dot_text, engine)
    if not prolog:
        svg = svg[svg.find("<svg"):]
    if fit:
        start = svg.find("<svg")
        end = svg.find(">", start)
        tag = _SVG_WIDTH.sub(lambda m: f' width="100%" style="max-width:{m.group(1)}pt"',
                             svg[start:end], count=1)
        svg = svg[:start] + _SVG_HEIGHT.sub("", tag, count=1) + svg[end:]
    return svg


def svg_size(svg: str) -> tuple[float, float]:
    """(width, height) in CSS px of an SVG as Graphviz writes it (sizes in pt)."""
    m = _SVG_SIZE.search(svg)
    if m is None:
        raise ValueError("no <svg width=...pt height=...pt> in this text: not Graphviz output")
    return float(m.group(1)) * PX_PER_PT, float(m.group(2)) * PX_PER_PT


_DOT_LABEL = re.compile(r'label="((?:[^"\\]|\\.)*)"')


class Diagram:
    """A Graphviz picture for a notebook cell: DOT text, drawn on demand.

    Jupyter shows it as `text/html` (an `<img>` holding the SVG as a data URL: it renders in
    an untrusted notebook too) and `text/plain` (its title). `source` is the DOT text, `svg`
    the drawing.
    """

    def __init__(self, source: str, engine: str = "dot", title: str | None = None) -> None:
        self.source = source
        self.engine = engine
        self.title = title if title is not None else _title_of(source)

    @property
    def svg(self) -> str:
        return svg_of(self.source, self.engine)

    def html(self) -> str:
        data = urllib.parse.quote(self.svg, safe=" /:=;,'()!*@$+?-_.~")
        return (f'<img src="data:image/svg+xml,{data}" alt="{html.escape(self.title)}" '
                f'title="{html.escape(self.title)}">')

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        try:
            return {"text/html": self.html(), "text/plain": repr(self)}
        except FileNotFoundError as exc:
            return {"text/plain": f"{self!r}\n({exc})\n{self.source}"}

    def save(self, path: Any) -> None:
        """Write the SVG (with its XML prolog) to `path`."""
        from pathlib import Path

        Path(path).write_text(svg_of(self.source, self.engine, prolog=True))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Diagram) and (self.source, self.engine) == (other.source,
                                                                           other.engine)

    def __hash__(self) -> int:
        return hash((self.source, self.engine))

    def __repr__(self) -> str:
        return f"<diagram: {self.title}>"


def _title_of(source: str) -> str:
    for line in source.splitlines():
        if line.lstrip().startswith("graph [") and "label=" in line:
            m = _DOT_LABEL.search(line)
            if m:
                return m.group(1).replace("\\n", " ").replace('\\"', '"').replace("\\\\", "\\")
    return "diagram"


def state_diagram(table: StateTable[Any], *, current: Enum | None = None,
                  taken: tuple[Enum, Enum] | None = None,
                  path: Sequence[tuple[Enum, Enum]] | None = None, title: str | None = None,
                  legend: str | None = None) -> Diagram:
    """`to_dot` as a `Diagram` that a notebook shows as a picture."""
    return Diagram(to_dot(table, current=current, taken=taken, path=path, title=title,
                          legend=legend), title=title or table.name)
