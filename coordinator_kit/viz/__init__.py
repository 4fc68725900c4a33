"""Views for notebooks: diagrams drawn from the state tables, live diagrams, a rebalance's
sequence picture, timelines, the whole cluster on one screen, and a widget control panel.

`diagrams` needs nothing but Python (DOT text; drawing calls the Graphviz `dot` binary) and is
imported eagerly, so the `diagrams` command stays light; the rest import matplotlib or ipywidgets
and load on first use. Every diagram function returns a `Diagram`, which a notebook shows as a
picture, also in an untrusted notebook (see `coordinator_kit.viz.diagrams`).
"""

from __future__ import annotations

import importlib
from typing import Any

from .diagrams import DIAGRAMS, Diagram, state_diagram, svg_of, to_dot

__all__ = [
    "DIAGRAMS", "Diagram", "state_diagram", "svg_of", "to_dot",
    # live diagrams (coordinator_kit.viz.live)
    "live_dot", "live_diagram", "group_diagram", "member_diagram", "context_diagram",
    "group_dot", "member_dot", "context_dot",
    # the sequence picture (coordinator_kit.viz.sequence)
    "record_requests", "sequence_dot", "sequence_diagram",
    # timelines (coordinator_kit.viz.plots)
    "swimlanes", "rebalance_durations", "rebalances", "figure_svg",
    # the whole cluster at one instant (coordinator_kit.viz.snapshot, .cluster_view)
    "cluster_snapshot", "ClusterSnapshot", "snapshot_changes", "cluster_svg", "cluster_html",
    "ClusterView",
    # widgets (coordinator_kit.viz.panel, .live_panel)
    "ControlPanel", "LivePanel",
]

_LAZY = {
    **{n: "live" for n in ("live_dot", "live_diagram", "group_diagram", "member_diagram",
                           "context_diagram", "group_dot", "member_dot", "context_dot")},
    **{n: "sequence" for n in ("record_requests", "sequence_dot", "sequence_diagram")},
    **{n: "plots" for n in ("swimlanes", "rebalance_durations", "rebalances", "figure_svg")},
    **{n: "snapshot" for n in ("cluster_snapshot", "ClusterSnapshot", "snapshot_changes")},
    **{n: "cluster_view" for n in ("cluster_svg", "cluster_html", "ClusterView")},
    "ControlPanel": "panel",
    "LivePanel": "live_panel",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
