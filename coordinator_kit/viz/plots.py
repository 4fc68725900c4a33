"""Timelines from the trace, drawn with matplotlib: state swimlanes and rebalance durations.

Both read only the trace (see `coordinator_kit.viz.live` for where each state change comes
from), so they work on a live cluster and on a finished scenario alike. The figures are plain
`matplotlib.figure.Figure` objects made without pyplot: no global backend state, nothing shown
by accident. `figure_svg` turns one into SVG text that is the same on every run (no date, fixed
ids, text kept as text), so a notebook can compare it and a test can read its labels.

Sizes: 9 inches wide (864 px at the SVG's natural size, inside a notebook's ~968 px output area)
with labels of 9 pt or more (12 px). A rebalance of a few ms in a run of minutes keeps a visible
width (`MIN_WIDTH`) and says how long it really took.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..client.member import MemberState
from ..client.membership import MemberState as ConsumerMemberState
from ..group.classic import ClassicGroupState
from ..group.modern.consumer_group import ConsumerGroupState
from ..trace import TraceEvent
from .live import _events, consumer_group_transitions, group_transitions, member_transitions

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["Segment", "Rebalance", "CoordinatorMove", "member_clients", "member_segments",
           "group_segments", "rebalances", "coordinator_moves", "swimlanes",
           "rebalance_durations", "figure_svg", "MEMBER_COLOURS", "GROUP_COLOURS", "MIN_WIDTH"]

MEMBER_COLOURS = {
    MemberState.UNJOINED: "#b0bec5",
    MemberState.PREPARING_REBALANCE: "#ffb74d",
    MemberState.COMPLETING_REBALANCE: "#4fc3f7",
    MemberState.STABLE: "#81c784",
}
GROUP_COLOURS = {
    ClassicGroupState.EMPTY: "#cfd8dc",
    ClassicGroupState.PREPARING_REBALANCE: "#ffb74d",
    ClassicGroupState.COMPLETING_REBALANCE: "#4fc3f7",
    ClassicGroupState.STABLE: "#81c784",
    ClassicGroupState.DEAD: "#616161",
}
# the consumer group protocol's (KIP-848): the Java client's MemberState and the group's
# ConsumerGroupState, drawn in the same families (joining orange, reconciling blue, stable green)
CONSUMER_MEMBER_COLOURS = {
    ConsumerMemberState.UNSUBSCRIBED: "#b0bec5",
    ConsumerMemberState.JOINING: "#ffb74d",
    ConsumerMemberState.RECONCILING: "#4fc3f7",
    ConsumerMemberState.ACKNOWLEDGING: "#0288d1",
    ConsumerMemberState.STABLE: "#81c784",
    ConsumerMemberState.FENCED: "#e57373",
    ConsumerMemberState.PREPARE_LEAVING: "#90a4ae",
    ConsumerMemberState.LEAVING: "#78909c",
    ConsumerMemberState.FATAL: "#8e0000",
    ConsumerMemberState.STALE: "#ba68c8",
}
CONSUMER_GROUP_COLOURS = {
    ConsumerGroupState.EMPTY: "#cfd8dc",
    ConsumerGroupState.ASSIGNING: "#ffb74d",
    ConsumerGroupState.RECONCILING: "#4fc3f7",
    ConsumerGroupState.STABLE: "#81c784",
    ConsumerGroupState.DEAD: "#616161",
}
_DOWN = "#eeeeee"


@dataclass(frozen=True)
class Segment:
    """`lane` was in `state` from `start` to `end` (virtual ms); state None: process down."""

    lane: str
    state: Any
    start: int
    end: int


@dataclass(frozen=True)
class Rebalance:
    """One rebalance of a group: from entering PreparingRebalance to Stable (or Empty/Dead).

    `end_ms` is None while it is still running. `derived` when the end is the first member's
    SyncGroup response rather than the coordinator's own transition (see `live`).
    """

    group: str
    generation: int | None
    start_ms: int
    end_ms: int | None
    outcome: str | None
    members: int | None
    derived: bool = False

    @property
    def duration_ms(self) -> int | None:
        return None if self.end_ms is None else self.end_ms - self.start_ms


def _end_of(trace: Iterable[TraceEvent], end_ms: int | None) -> int:
    if end_ms is not None:
        return end_ms
    clock = getattr(trace, "clock", None)
    if clock is not None:
        return int(clock.now)
    events = list(_events(trace))
    return events[-1].ts if events else 0


def member_clients(trace: Iterable[TraceEvent]) -> list[str]:
    """Consumers in the order they first changed state (a `group.protocol=consumer` member's
    changes are its "transitioned from X to Y" lines)."""
    seen: dict[str, None] = {}
    for e in _events(trace):
        if e.kind == "member_state":
            seen.setdefault(e.fields["client"], None)
        elif e.kind == "member_state_changed" and "from_state" in e.fields \
                and e.source.startswith("client-"):
            seen.setdefault(e.source[len("client-"):], None)
    return list(seen)


def member_segments(trace: Iterable[TraceEvent], members: Sequence[str] | None = None,
                    end_ms: int | None = None) -> dict[str, list[Segment]]:
    """Per consumer, its states over time; a crash ends the lane until the next incarnation."""
    end = _end_of(trace, end_ms)
    names = list(members) if members is not None else member_clients(trace)
    crashes: dict[str, list[int]] = {n: [] for n in names}
    for e in _events(trace):
        if e.kind == "consumer_crashed" and e.fields.get("client") in crashes:
            crashes[e.fields["client"]].append(e.ts)
    out: dict[str, list[Segment]] = {}
    for name in names:
        moves = member_transitions(trace, name)
        points = sorted([(t.ts, 1, t.new) for t in moves] + [(c, 0, None) for c in crashes[name]],
                        key=lambda p: (p[0], p[1]))
        segs: list[Segment] = []
        for i, (ts, _, state) in enumerate(points):
            stop = points[i + 1][0] if i + 1 < len(points) else end
            if stop > ts:
                segs.append(Segment(name, state, ts, stop))
        out[name] = segs
    return out


def group_segments(trace: Iterable[TraceEvent], group_id: str = "group-1",
                   end_ms: int | None = None) -> list[Segment]:
    end = _end_of(trace, end_ms)
    moves = group_transitions(trace, group_id) or consumer_group_transitions(trace, group_id)
    segs = []
    for i, t in enumerate(moves):
        stop = moves[i + 1].ts if i + 1 < len(moves) else end
        if stop > t.ts:
            segs.append(Segment(group_id, t.new, t.ts, stop))
    return segs


def rebalances(trace: Iterable[TraceEvent], group_id: str = "group-1") -> list[Rebalance]:
    """Every rebalance of the group, from PreparingRebalance to Stable, Empty or Dead."""
    G = ClassicGroupState
    sizes = {e.fields.get("generation"): e.fields.get("members") for e in _events(trace)
             if e.kind == "group_stabilized" and e.fields.get("group") == group_id}
    out: list[Rebalance] = []
    start: int | None = None
    for t in group_transitions(trace, group_id):
        if t.new is G.PREPARING_REBALANCE:
            if start is None:
                start = t.ts
        elif start is not None and t.new in (G.STABLE, G.EMPTY, G.DEAD) and t.old is not None:
            out.append(Rebalance(group_id, t.generation, start, t.ts, str(t.new),
                                 sizes.get(t.generation) if t.new is G.STABLE else 0, t.derived))
            start = None
    if start is not None:
        out.append(Rebalance(group_id, None, start, None, None, None))
    return out


# -- figures --------------------------------------------------------------------------------------

def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100, layout="constrained")


_STEADY = {MemberState.STABLE, ClassicGroupState.STABLE, ClassicGroupState.EMPTY,
           ConsumerMemberState.STABLE, ConsumerMemberState.UNSUBSCRIBED,
           ConsumerGroupState.STABLE, ConsumerGroupState.EMPTY}
MIN_WIDTH = 0.008
"""The narrowest a state that is not steady is drawn, as a share of the window (about 6 px of
the 9 in figure): a 14 ms rebalance in a 100 s run is a bar, not a hairline. Its real length
is written above the group's lane."""
_FONT = 9          # pt: 12 px when the SVG is shown at its natural size (1 pt = 4/3 px)
_LANE_IN = 0.55    # inches per lane


@dataclass(frozen=True)
class CoordinatorMove:
    """The group's coordinator changed at `ts`: unloaded by one broker, loaded by `broker`."""

    group: str
    ts: int
    broker: int | None


def coordinator_moves(trace: Iterable[TraceEvent], group_id: str = "group-1"
                      ) -> list[CoordinatorMove]:
    """Each time another broker loaded the group ("Loaded classic group" on a broker other than
    the one that held it: a coordinator failover or a moved partition leader)."""
    out: list[CoordinatorMove] = []
    holder: str | None = None
    for e in _events(trace):
        if e.fields.get("group") != group_id or not e.source.startswith("broker-"):
            continue
        if e.kind == "group_loaded":
            if holder is not None and e.source != holder:
                out.append(CoordinatorMove(group_id, e.ts, int(e.source[len("broker-"):])))
            holder = e.source
        elif holder is None and e.kind in ("rebalance_started", "group_unloaded",
                                           "group_stabilized"):
            holder = e.source
    return out


def _merged(segs: list[Segment]) -> list[Segment]:
    """Adjacent segments in one state as one (a JoinGroup sent again stays PreparingRebalance)."""
    out: list[Segment] = []
    for s in segs:
        if out and out[-1].state == s.state and out[-1].end == s.start:
            out[-1] = Segment(s.lane, s.state, out[-1].start, s.end)
        else:
            out.append(s)
    return out


def _episodes(segs: list[Segment], min_ms: float) -> list[list[Segment]]:
    """Runs of consecutive states that are not steady and too short to see (< `min_ms`)."""
    out: list[list[Segment]] = []
    run: list[Segment] = []
    for s in segs:
        if s.state is not None and s.state not in _STEADY and s.end - s.start < min_ms \
                and (not run or run[-1].end == s.start):
            run.append(s)
            continue
        if run:
            out.append(run)
        run = [s] if s.state is not None and s.state not in _STEADY \
            and s.end - s.start < min_ms else []
    if run:
        out.append(run)
    return out


def swimlanes(trace: Iterable[TraceEvent], *, members: Sequence[str] | None = None,
              groups: Sequence[str] = ("group-1",), start_ms: int | None = None,
              end_ms: int | None = None, title: str | None = None) -> Figure:
    """Member (and group) states over virtual time, one lane each; crashes and pauses marked.

    Lanes: each group as its coordinator saw it, then each consumer in order of appearance.
    A state that is not steady (a rebalance, a reset, an unloaded group) is drawn at least
    `MIN_WIDTH` of the window wide, and a rebalance drawn wider than it lasted has its length
    written above the group's lane; a coordinator move is a dashed line across every lane,
    labelled with the broker that took over. 9 inches wide, labels of 9 pt or more, so the SVG
    fits a notebook's output area at its natural size.
    """
    from matplotlib.patches import Patch

    end = _end_of(trace, end_ms)
    start = 0 if start_ms is None else start_ms
    if end <= start:
        end = start + 1
    min_ms = (end - start) * MIN_WIDTH
    lanes: list[tuple[str, list[Segment], dict[Any, str]]] = []
    colours_of = {**GROUP_COLOURS, **CONSUMER_GROUP_COLOURS, **MEMBER_COLOURS,
                  **CONSUMER_MEMBER_COLOURS}
    for g in groups:
        lanes.append((f"{g} (coordinator)", group_segments(trace, g, end), colours_of))
    for name, segs in member_segments(trace, members, end).items():
        lanes.append((name, segs, colours_of))
    fig = _figure(9, 0.7 + _LANE_IN * max(len(lanes), 1) + 0.9)
    ax = fig.subplots()
    pauses = [(e.fields["client"], e.ts, e.fields["until"]) for e in _events(trace)
              if e.kind == "consumer_paused"]
    crashes = [(e.fields["client"], e.ts) for e in _events(trace) if e.kind == "consumer_crashed"]
    labels = []
    bar = dict(edgecolors="white", linewidth=0.5)
    for y, (label, segs, colours) in enumerate(lanes):
        labels.append(label)
        segs = _merged(segs)
        for s in segs:
            a, b = max(s.start, start), min(s.end, end)
            if b <= a:
                continue
            colour = _DOWN if s.state is None else colours[s.state]
            ax.broken_barh([(a / 1000, (b - a) / 1000)], (y - 0.3, 0.6), facecolors=colour,
                           **bar)
        for run in _episodes(segs, min_ms):
            if run[-1].end <= start or run[0].start >= end:
                continue
            total = run[-1].end - run[0].start
            share = max(total, min_ms) / len(run)
            for i, s in enumerate(run):  # in order, equal shares: which states, not how long
                ax.broken_barh([((run[0].start + i * share) / 1000, share / 1000)],
                               (y - 0.3, 0.6), facecolors=colours[s.state],
                               edgecolors="#37474f", linewidth=0.4, zorder=3)
        for client, ts, until in pauses:
            if client == label and until > start and ts < end:
                a, b = max(ts, start), min(until, end)
                ax.broken_barh([(a / 1000, (b - a) / 1000)], (y - 0.3, 0.6),
                               facecolors="none", edgecolors="#37474f", hatch="///",
                               linewidth=0, zorder=4)
        for client, ts in crashes:
            if client == label and start <= ts <= end:
                ax.plot([ts / 1000], [y], marker="X", color="#c62828", markersize=9, zorder=5)
    notes: list[tuple[int, float, str]] = []  # (lane, ms, text) written above a lane
    for y, g in enumerate(groups):
        for r in rebalances(trace, g):
            if r.duration_ms is not None and r.duration_ms < min_ms and start <= r.start_ms <= end:
                notes.append((y, r.start_ms, f"{r.duration_ms:,} ms"))
        for move in coordinator_moves(trace, g):
            if start <= move.ts <= end:
                ax.axvline(move.ts / 1000, color="#37474f", linestyle="--", linewidth=0.9,
                           zorder=6)
                notes.append((y, move.ts, f"coordinator → broker {move.broker}"))
    px_ms = (end - start) / 650  # ms per pixel of the axes (about 6.5 in at 100 dpi)
    right: dict[int, float] = {}
    for y, ms, text in sorted(notes, key=lambda n: (n[0], n[1])):
        if ms < right.get(y, float("-inf")):
            continue  # it would cover the previous one; the bar is still there
        ax.text(ms / 1000, y - 0.34, text, fontsize=_FONT, ha="left", va="bottom",
                color="#263238", zorder=7)
        right[y] = ms + (len(text) * 6 + 8) * px_ms
    ax.set_yticks(range(len(labels)), labels, fontsize=10)
    ax.set_ylim(len(labels) - 0.5, -0.75)
    ax.set_xlim(start / 1000, end / 1000)
    ax.tick_params(axis="x", labelsize=10)
    ax.set_xlabel("virtual time (s)", fontsize=10)
    ax.grid(axis="x", color="#e0e0e0", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.set_title(title or "Member states over virtual time", fontsize=11)
    shown = {s.state for _, segs, _ in lanes for s in segs}
    modern = [s for s in (*CONSUMER_GROUP_COLOURS, *CONSUMER_MEMBER_COLOURS) if s in shown]
    handles = [Patch(facecolor=c, label=str(s)) for s, c in MEMBER_COLOURS.items()]
    if modern:  # KIP-848 lanes: their states, each once (a group's and a member's STABLE...)
        handles = []
        labels_seen: set[str] = set()
        for s in modern:
            if str(s) not in labels_seen and str(s) not in ("Empty", "Dead"):
                labels_seen.add(str(s))
                handles.append(Patch(facecolor=colours_of[s], label=str(s)))
        handles += [Patch(facecolor=c, label=str(s)) for s, c in MEMBER_COLOURS.items()
                    if s in shown]
    handles += [Patch(facecolor=GROUP_COLOURS[ClassicGroupState.EMPTY], label="Empty"),
                Patch(facecolor=GROUP_COLOURS[ClassicGroupState.DEAD], label="Dead"),
                Patch(facecolor="none", edgecolor="#37474f", hatch="///", label="paused"),
                Patch(facecolor=_DOWN, edgecolor="#9e9e9e", label="crashed")]
    fig.legend(handles=handles, loc="outside lower center", ncol=4, fontsize=_FONT,
               frameon=False)
    return fig


def rebalance_durations(trace: Iterable[TraceEvent], group_id: str = "group-1",
                        *, title: str | None = None) -> Figure:
    """One bar per rebalance: how long the group took from PreparingRebalance to Stable."""
    found = rebalances(trace, group_id)
    fig = _figure(6, 3.2)
    ax = fig.subplots()
    ax.set_title(title or f"Rebalance durations, {group_id} (PreparingRebalance → Stable)",
                 fontsize=11)
    ax.set_ylabel("duration (ms, virtual)")
    if not found:
        ax.text(0.5, 0.5, "no rebalance yet", ha="center", va="center", transform=ax.transAxes)
        ax.set_xticks([])
        return fig
    now = _end_of(trace, None)
    names, heights, colours, hatches = [], [], [], []
    for r in found:
        names.append(f"gen {r.generation}" if r.generation is not None else "running")
        heights.append(r.duration_ms if r.duration_ms is not None else now - r.start_ms)
        colours.append({"Stable": "#81c784", "Empty": "#cfd8dc", "Dead": "#616161"}.get(
            r.outcome or "", "#ffb74d"))
        hatches.append("" if r.end_ms is not None else "///")
    x = range(len(found))
    bars = ax.bar(x, heights, color=colours, edgecolor="#37474f", linewidth=0.6)
    for bar, hatch in zip(bars, hatches):
        bar.set_hatch(hatch)
    ax.bar_label(bars, labels=[f"{h} ms" for h in heights], fontsize=8)
    ax.set_xticks(list(x), names)
    ax.margins(y=0.15)
    return fig


def figure_svg(fig: Figure) -> str:
    """The figure as SVG text, identical on every run (no date, fixed ids, text as text)."""
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "coordinator_kit", "svg.fonttype": "none"}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    return buf.getvalue()
