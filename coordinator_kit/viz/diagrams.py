"""Graphviz state diagrams drawn from the kit's state tables.

The DOT text comes straight from a `StateTable` (every edge it allows, labelled with its
trigger), so a diagram can never show a transition the code refuses. `to_dot` needs nothing but
Python; `state_diagram` wraps it for Jupyter and needs the `graphviz` package and `dot` to render.
States are shown by Kafka's display name (`str(state)`: `ACTIVE`, `PreparingRebalance`, `STABLE`).
The live form (`current`, `taken`) fills the current state and colours the edge just taken; see
`coordinator_kit.viz.live` for live diagrams read straight off a `Cluster`.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from ..client.member import MEMBER_STATES
from ..group.classic import CLASSIC_GROUP_STATES
from ..runtime.runtime import CONTEXT_STATES
from ..states import StateTable

__all__ = ["to_dot", "state_diagram", "node_id", "DIAGRAMS"]

# Tables drawn into diagrams/ by `python -m coordinator_kit diagrams`.
DIAGRAMS: dict[str, StateTable[Any]] = {
    "coordinator_context": CONTEXT_STATES,
    "classic_group": CLASSIC_GROUP_STATES,
    "consumer_member": MEMBER_STATES,
}

_CURRENT = 'style="filled,bold", fillcolor="#ffd54f", penwidth=2'
_TAKEN = 'color="#d84315", fontcolor="#d84315", penwidth=2.5'


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def node_id(state: Enum) -> str:
    """The name a state's node carries: Kafka's display name (`str(state)`)."""
    return str(state)


def to_dot(table: StateTable[Any], *, current: Enum | None = None,
           taken: tuple[Enum, Enum] | None = None, title: str | None = None) -> str:
    """DOT source for `table`, highlighting the `current` state and the edge just `taken`."""
    lines = [f"digraph {_q(table.name)} {{",
             "  rankdir=LR;",
             '  graph [fontname="Helvetica", fontsize=12, labelloc=t, '
             f'label={_q(title or table.name)}];',
             '  node [shape=box, style="rounded,filled", fillcolor="#eceff1", '
             'fontname="Helvetica"];',
             '  edge [fontname="Helvetica", fontsize=9];',
             '  start [shape=point, width=0.12, fillcolor=black, label=""];',
             f"  start -> {_q(node_id(table.initial))};"]
    for state in table.states:
        attrs = f" [{_CURRENT}]" if state is current else ""
        lines.append(f"  {_q(node_id(state))}{attrs};")
    for edge in table.edges():
        attrs = [f"label={_q(edge.trigger)}"]
        if taken is not None and (edge.source, edge.target) == taken:
            attrs.append(_TAKEN)
        lines.append(f"  {_q(node_id(edge.source))} -> {_q(node_id(edge.target))} "
                     f"[{', '.join(attrs)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def state_diagram(table: StateTable[Any], *, current: Enum | None = None,
                  taken: tuple[Enum, Enum] | None = None, title: str | None = None) -> Any:
    """A `graphviz.Source` that Jupyter renders as SVG."""
    import graphviz

    return graphviz.Source(to_dot(table, current=current, taken=taken, title=title))
