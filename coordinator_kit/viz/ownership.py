"""Who consumed each partition, over virtual time, under each coordination design.

One panel per design (oldest first), one lane per partition of a group: a bar in the consumer's
colour while one consumer hands its records to the application, grey while nobody does, red
hatching while two or more would (a consumer that was declared dead but still holds records,
or a race for ownership). The faults are dashed lines across every panel. Drawn from
`eras.compare.Measures.changes`, so it shows exactly what the comparison table counts.

9 inches wide with labels of 9 pt or more, like the kit's other timelines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..eras.api import Fault, Partition
from ..eras.compare import Comparison, Measures
from .plots import _FONT, _figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["ownership_lanes", "owner_segments", "CONSUMER_COLOURS", "NOBODY", "SEVERAL"]

CONSUMER_COLOURS = ("#64b5f6", "#81c784", "#ffb74d", "#ba68c8", "#4db6ac", "#f06292",
                    "#a1887f", "#90a4ae", "#dce775", "#7986cb")
NOBODY = "#e0e0e0"
SEVERAL = "#c62828"


def _fault_label(f: Fault) -> str:
    what = {"crash": "crashes", "pause": "pauses", "join": "joins", "leave": "leaves",
            "cut": "cut off", "slow": "slows down", "coordinator": "coordinator fails"}[f.kind]
    return what if f.target is None else f"{f.target} {what}"


def owner_segments(m: Measures, group: str, end_ms: int
                   ) -> dict[Partition, list[tuple[int, int, frozenset[str]]]]:
    """Per partition of `group`: (start, end, consumers) spans, from `m.changes`."""
    spans: dict[Partition, list[tuple[int, int, frozenset[str]]]] = {}
    last: dict[Partition, tuple[int, frozenset[str]]] = {}
    for ts, g, tp, who in m.changes:
        if g != group:
            continue
        if tp in last:
            t0, was = last[tp]
            if ts > t0:
                spans.setdefault(tp, []).append((t0, ts, was))
        last[tp] = (ts, who)
    for tp, (t0, was) in last.items():
        if end_ms > t0:
            spans.setdefault(tp, []).append((t0, end_ms, was))
    return dict(sorted(spans.items()))


def ownership_lanes(comparison: Comparison, group: str = "group-1", *,
                    start_ms: int | None = None, end_ms: int | None = None,
                    title: str | None = None) -> Figure:
    """The lanes of every design in `comparison` for `group`, one panel per design."""
    from matplotlib.patches import Patch

    scenario = comparison.scenario
    end = scenario.run_ms if end_ms is None else end_ms
    start = 0 if start_ms is None else start_ms
    names = list(scenario.consumers.get(group, ())) + [
        f.target for f in scenario.faults if f.kind == "join" and f.target]
    colour = {n: CONSUMER_COLOURS[i % len(CONSUMER_COLOURS)] for i, n in enumerate(names)}
    per_design = [owner_segments(m, group, end) for m in comparison.measures]
    lanes = max((len(s) for s in per_design), default=1)
    lane_in = 0.22 if lanes <= 12 else 2.6 / lanes
    heights = [0.45 + lane_in * lanes for _ in per_design]
    fig = _figure(9, sum(heights) + 1.3)
    axes = fig.subplots(len(per_design), 1, sharex=True, squeeze=False,
                        gridspec_kw={"height_ratios": heights})[:, 0]
    for ax, m, spans in zip(axes, comparison.measures, per_design):
        for y, (tp, segs) in enumerate(spans.items()):
            for a, b, who in segs:
                a, b = max(a, start), min(b, end)
                if b <= a:
                    continue
                if len(who) == 1:
                    (only,) = who
                    face, hatch = colour.get(only, "#78909c"), None
                elif who:
                    face, hatch = "#ffcdd2", "////"
                else:
                    face, hatch = NOBODY, None
                ax.broken_barh([(a / 1000, (b - a) / 1000)], (y - 0.4, 0.8), facecolors=face,
                               edgecolors=SEVERAL if hatch else "white", hatch=hatch,
                               linewidth=0.4 if hatch else 0.3)
        ax.set_yticks(range(len(spans)), [f"{t}-{p}" for t, p in spans],
                      fontsize=_FONT if lanes <= 12 else 7)
        ax.set_ylim(len(spans) - 0.5, -0.5)
        for f in scenario.faults:
            if start <= f.at_ms <= end:
                ax.axvline(f.at_ms / 1000, color="#37474f", linestyle="--", linewidth=0.9)
        if ax is axes[0]:
            for f in scenario.faults:
                if start <= f.at_ms <= end:
                    ax.text(f.at_ms / 1000, -0.55, f" {_fault_label(f)}", fontsize=_FONT,
                            ha="left", va="bottom", color="#263238")
        ax.set_title(m.title, fontsize=10, loc="left", pad=16 if ax is axes[0] else 6)
        ax.grid(axis="x", color="#e0e0e0", linewidth=0.6)
        ax.set_axisbelow(True)
        ax.tick_params(axis="x", labelsize=10)
    axes[-1].set_xlim(start / 1000, end / 1000)
    axes[-1].set_xlabel("virtual time (s)", fontsize=10)
    fig.suptitle(title or f"Who consumes each partition of {group}: {scenario.name}",
                 fontsize=11)
    handles = [Patch(facecolor=colour[n], label=n) for n in names[:8]]
    handles += [Patch(facecolor=NOBODY, label="nobody"),
                Patch(facecolor="#ffcdd2", edgecolor=SEVERAL, hatch="////",
                      label="two or more")]
    fig.legend(handles=handles, loc="outside lower center", ncol=min(len(handles), 5),
               fontsize=_FONT, frameon=False)
    return fig
