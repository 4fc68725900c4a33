"""The whole cluster on one screen, as one hand-written SVG (and a widget that redraws it).

`cluster_svg(snapshot, previous=None)` draws a `ClusterSnapshot`: brokers on the left with
their `__consumer_offsets` partitions (leader, ISR, high watermark, each broker's coordinator
context) and the groups they coordinate; consumers on the right with their MemberState,
generation, assignment, process status and the timers that decide membership as bars that run
down; every request on the network as an arrow between the two, labelled with its API and,
once answered, the answer's error. With `previous`, what changed since then is outlined in
orange and named ("changed: state, generation"), so two moments never look alike.

The picture is a pure function of the snapshot: same snapshot, same bytes (no ids, no clock,
fixed number formatting), so a control panel can redraw any earlier state. Every part carries
a CSS class and `data-*` attributes (`data-consumer`, `data-state`, `data-request`,
`data-phase`...) so a browser test can read the state from the DOM.

`ClusterView` holds the picture in an `ipywidgets.HTML` (CSS class `ck-cluster-view`) and
remembers the previous snapshot for the change marks; stored in a notebook, its HTML form
shows the last picture before any cell runs.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from html import escape
from typing import Any

from .snapshot import (NO_CHANGES, ClusterSnapshot, ConsumerView, GroupMemberView, GroupView,
                       RequestView, SnapshotChanges, TimerBar, cluster_snapshot,
                       snapshot_changes)

__all__ = ["cluster_svg", "cluster_html", "ClusterView", "MIN_FONT_PX"]

MIN_FONT_PX = 11  # no text smaller than this
FONT = "Arial, 'Liberation Sans', Helvetica, sans-serif"
MONO = "'DejaVu Sans Mono', Menlo, Consolas, monospace"

# colours
INK, MUTED, FAINT, LINE = "#111827", "#4b5563", "#9ca3af", "#d1d5db"
CHANGED = "#ea580c"
MEMBER_STATE_COLOURS = {"STABLE": "#15803d", "COMPLETING_REBALANCE": "#0e7490",
                        "PREPARING_REBALANCE": "#b45309", "UNJOINED": "#6b7280",
                        # the KIP-848 client's MemberState (ConsumerMembershipManager)
                        "JOINING": "#b45309", "RECONCILING": "#0e7490",
                        "ACKNOWLEDGING": "#0e7490", "FENCED": "#b91c1c", "FATAL": "#7f1d1d",
                        "STALE": "#b91c1c", "PREPARE_LEAVING": "#6b7280",
                        "LEAVING": "#6b7280", "UNSUBSCRIBED": "#6b7280"}
GROUP_STATE_COLOURS = {"Stable": "#15803d", "CompletingRebalance": "#0e7490",
                       "PreparingRebalance": "#b45309", "Empty": "#6b7280", "Dead": "#111827",
                       # a KIP-848 consumer group's (ConsumerGroup.ConsumerGroupState)
                       "Assigning": "#b45309", "Reconciling": "#0e7490"}
# a KIP-848 member's MemberState on the coordinator (modern.MemberState)
SERVER_MEMBER_STATE_COLOURS = {"STABLE": "#15803d", "UNREVOKED_PARTITIONS": "#b45309",
                               "UNRELEASED_PARTITIONS": "#0e7490", "UNKNOWN": "#6b7280"}
CONTEXT_COLOURS = {"ACTIVE": "#15803d", "LOADING": "#b45309", "FAILED": "#b91c1c",
                   "CLOSED": "#6b7280", "INITIAL": "#9ca3af"}
PROCESS_COLOURS = {"crashed": "#b91c1c", "failed": "#b91c1c", "paused": "#7c3aed",
                   "closed": "#6b7280", "not started": "#6b7280"}
BAR_COLOURS = {"ok": "#22c55e", "soon": "#f59e0b", "urgent": "#ef4444", "expired": "#991b1b"}
BAR_NEUTRAL = "#60a5fa"
PHASE_COLOURS = {"to-broker": "#2563eb", "at-coordinator": "#b45309", "lost": "#6b7280"}
ANSWER_OK, ANSWER_ERROR = "#15803d", "#dc2626"

# geometry
ROW = 16  # a text row
BAR_ROW = 17
REQUEST_ROW = 36  # one request's label pair and arrow in the channel
MAX_REQUEST_ROWS = 4


# -- text measuring (Arial's advance widths, in em; other fonts differ by a few percent) ----------

_NARROW = set("ijl.,:;|!'I")
_SEMI = set("ftr()[]-/ ")
_WIDE = set("mwMW@%")
_CAPS = set("ABCDEFGHJKLNOPQRSTUVXYZ&")


def _em(ch: str) -> float:
    if ch in _NARROW:
        return 0.28
    if ch in _SEMI:
        return 0.34
    if ch in _WIDE:
        return 0.86
    if ch in _CAPS:
        return 0.68
    if ch == "…":
        return 1.0
    return 0.56


def text_width(text: str, size: float, bold: bool = False) -> float:
    """About how wide `text` is at `size` px (an upper estimate: 6% over Arial's widths)."""
    return sum(_em(ch) for ch in text) * size * (1.12 if bold else 1.06)


def _fit(text: str, size: float, width: float, bold: bool = False) -> str:
    """`text`, cut with an ellipsis to fit `width` px."""
    if text_width(text, size, bold) <= width:
        return text
    while text and text_width(text + "…", size, bold) > width:
        text = text[:-1]
    return text + "…"


# -- SVG primitives ------------------------------------------------------------------------------


def _n(x: float) -> str:
    """A coordinate, the same string for the same number on every machine."""
    r = round(x, 1)
    return str(int(r)) if r == int(r) else f"{r:.1f}"


def _attrs(attrs: dict[str, Any]) -> str:
    out = []
    for k, v in attrs.items():
        if v is None:
            continue
        if isinstance(v, float):
            v = _n(v)
        out.append(f' {k.replace("_", "-")}="{escape(str(v), quote=True)}"')
    return "".join(out)


class _Svg:
    def __init__(self) -> None:
        self.parts: list[str] = []

    def add(self, part: str) -> None:
        self.parts.append(part)

    def open(self, **attrs: Any) -> None:
        self.parts.append(f"<g{_attrs(attrs)}>")

    def close(self) -> None:
        self.parts.append("</g>")

    def rect(self, x: float, y: float, w: float, h: float, **attrs: Any) -> None:
        self.parts.append(f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="{_n(h)}"'
                          f"{_attrs(attrs)}/>")

    def line(self, x1: float, y1: float, x2: float, y2: float, **attrs: Any) -> None:
        self.parts.append(f'<line x1="{_n(x1)}" y1="{_n(y1)}" x2="{_n(x2)}" y2="{_n(y2)}"'
                          f"{_attrs(attrs)}/>")

    def path(self, d: str, **attrs: Any) -> None:
        self.parts.append(f'<path d="{d}"{_attrs(attrs)}/>')

    def text(self, x: float, y: float, text: str, size: float = 12, *, fill: str = INK,
             bold: bool = False, anchor: str | None = None, family: str | None = None,
             title: str | None = None, **attrs: Any) -> None:
        weight = ' font-weight="bold"' if bold else ""
        anchor_attr = f' text-anchor="{anchor}"' if anchor else ""
        family_attr = f' font-family="{family}"' if family else ""
        tip = f"<title>{escape(title)}</title>" if title else ""
        self.parts.append(f'<text x="{_n(x)}" y="{_n(y)}" font-size="{_n(size)}" '
                          f'fill="{fill}"{weight}{anchor_attr}{family_attr}{_attrs(attrs)}>'
                          f"{tip}{escape(text)}</text>")

    def pill(self, x: float, y: float, text: str, colour: str, size: float = 11,
             **attrs: Any) -> float:
        """A filled label with its baseline at `y`; returns its width."""
        w = text_width(text, size, True) + 10
        self.rect(x, y - size - 1, w, size + 5, rx=3, fill=colour, **attrs)
        self.text(x + 5, y, text, size, fill="#ffffff", bold=True)
        return w

    def svg(self) -> str:
        return "".join(self.parts)


def _ms(ms: int) -> str:
    return f"{ms:,} ms"


def _short_id(member_id: str, keep: int = 8) -> str:
    """`consumer-1-2ccb1916-8855-...` -> `consumer-1-2ccb1916…` (the client id and the UUID's
    first group are enough to tell members apart on screen; the full id is in the tooltip)."""
    head, sep, _ = member_id.partition("-" + member_id[-36:]) if len(member_id) > 37 \
        else (member_id, "", "")
    if not sep:
        return member_id
    return f"{head}-{member_id[-36:][:keep]}…"


# -- the picture -----------------------------------------------------------------------------------


class _Layout:
    """Column positions for a picture `width` px wide."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.pad = 8
        self.broker_w = round(width * 0.33)
        self.consumer_w = round(width * 0.40)
        self.broker_x = self.pad
        self.consumer_x = width - self.pad - self.consumer_w
        self.channel_x0 = self.broker_x + self.broker_w
        self.channel_x1 = self.consumer_x


def cluster_svg(snapshot: ClusterSnapshot, previous: ClusterSnapshot | None = None,
                width: int = 960) -> str:
    """The cluster at `snapshot`'s instant as one SVG, `width` px wide (height as needed).

    With `previous`, what changed since then is outlined and named (module doc)."""
    if isinstance(width, bool) or not isinstance(width, int) or width < 720:
        raise ValueError(f"width must be a whole number of px >= 720 (the three columns need "
                         f"it), got {width!r}")
    changes = snapshot_changes(previous, snapshot)
    lay = _Layout(width)
    svg = _Svg()
    y = _header(svg, snapshot, previous, changes, lay)
    top = y + 8
    brokers_svg = _Svg()
    anchors: dict[tuple[int, int | None], float] = {}
    broker_bottom = _brokers(brokers_svg, snapshot, changes, lay, top, anchors)
    consumers_svg = _Svg()
    cards: dict[str, tuple[float, float]] = {}
    consumer_bottom = _consumers(consumers_svg, snapshot, changes, lay, top, cards)
    requests_svg = _Svg()
    _requests(requests_svg, snapshot, changes, lay, anchors, cards, top)
    bottom = max(broker_bottom, consumer_bottom, top + 40)
    legend_y = bottom + 14
    legend = _Svg()
    height = _legend(legend, lay, legend_y, previous is not None) + 8
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{_n(height)}" '
            f'viewBox="0 0 {width} {_n(height)}" style="max-width:100%;height:auto" '
            f'font-family="{FONT}" class="ck-cluster-svg" data-now-ms="{snapshot.now_ms}">'
            f'<rect x="0" y="0" width="{width}" height="{_n(height)}" fill="#ffffff"/>')
    return (head + svg.svg() + brokers_svg.svg() + requests_svg.svg() + consumers_svg.svg()
            + legend.svg() + "</svg>")


def _header(svg: _Svg, snap: ClusterSnapshot, previous: ClusterSnapshot | None,
            changes: SnapshotChanges, lay: _Layout) -> float:
    x = lay.pad
    svg.open(**{"class": "ck-header", "data-now-ms": snap.now_ms})
    svg.text(x, 24, f"t = {snap.now_ms:,} ms", 18, bold=True)
    tx = x + text_width(f"t = {snap.now_ms:,} ms", 18, True) + 12
    svg.text(tx, 24, f"[{snap.clock}]", 13, fill=MUTED, family=MONO)
    in_flight = len(snap.requests)
    summary = (f"{len(snap.brokers)} brokers · {len(snap.consumers)} consumers · "
               f"{in_flight} request{'s' if in_flight != 1 else ''} in flight")
    svg.text(lay.width - lay.pad, 24, summary, 12, fill=MUTED, anchor="end")
    y = 24
    groups = [g for g in snap.groups if g.coordinator]
    for g in groups[:3]:
        y += 21
        svg.open(**{"class": "ck-group-summary", "data-group": g.group_id, "data-state": g.state,
                    "data-generation": g.generation})
        svg.text(x, y, g.group_id, 13, bold=True)
        gx = x + text_width(g.group_id, 13, True) + 8
        gx += svg.pill(gx, y, g.state, GROUP_STATE_COLOURS.get(g.state, MUTED)) + 8
        members = sum(1 for m in g.members if not m.pending)
        epoch = (f"group epoch {g.generation} · assignment epoch {g.assignment_epoch}"
                 if g.group_type == "consumer" else f"generation {g.generation}")
        words = (f"{epoch} · {members} member{'s' if members != 1 else ''}"
                 + (f" · leader {g.leader_client}" if g.leader_client else "")
                 + (f" · {g.protocol}" if g.protocol else "")
                 + f" · coordinator broker {g.broker} (__consumer_offsets-{g.partition}, "
                   f"{g.context_state})")
        svg.text(gx, y, _fit(words, 12, lay.width - lay.pad - gx), 12, fill=INK)
        svg.close()
    if len(groups) > 3:
        y += 18
        svg.text(x, y, f"+ {len(groups) - 3} more groups (see the brokers)", 12, fill=MUTED)
    if not groups:
        y += 21
        svg.text(x, y, "no group on any coordinator yet", 12, fill=MUTED)
    if previous is not None:
        y += 19
        _changes_line(svg, previous, changes, x, y, lay.width - 2 * lay.pad)
    svg.close()
    return y + 6


def _changes_line(svg: _Svg, previous: ClusterSnapshot, changes: SnapshotChanges, x: float,
                  y: float, w: float) -> None:
    """One line naming what the orange outlines mark."""
    items = [f"broker {b}: {', '.join(words)}" for b, words in sorted(changes.brokers.items())]
    items += [f"{gid}: {', '.join(words)}" for gid, words in sorted(changes.groups.items())]
    items += [f"__consumer_offsets-{p}: {', '.join(words)}"
              for p, words in sorted(changes.partitions.items())]
    items += [f"b{b} context p{p}: {', '.join(words)}"
              for (b, p), words in sorted(changes.contexts.items())]
    items += [f"{name}: {', '.join(words)}" for name, words in changes.consumers.items()]
    new = sum(1 for v in changes.requests.values() if v == "new")
    if new:
        items.append(f"{new} new request{'s' if new != 1 else ''}")
    svg.open(**{"class": "ck-changes", "data-since-ms": previous.now_ms})
    lead = (f"changed since {previous.now_ms:,} ms:" if items
            else f"nothing changed since {previous.now_ms:,} ms")
    svg.text(x, y, lead, 12, fill=CHANGED if items else MUTED, bold=bool(items))
    if items:
        lx = x + text_width(lead, 12, True) + 6
        svg.text(lx, y, _fit(" · ".join(items), 12, x + w - lx), 12, fill=INK)
    svg.close()


def _changed_box(svg: _Svg, x: float, y: float, w: float, h: float, words: Iterable[str],
                 kind: str, tag: bool = True) -> None:
    """The orange outline of something that changed since the previous picture, with a tag
    naming what changed on its top edge (`tag`: boxes whose top edge has room for it)."""
    words = tuple(words)
    if not words:
        return
    svg.rect(x - 1.5, y - 1.5, w + 3, h + 3, rx=6, fill="none", stroke=CHANGED,
             stroke_width=3, **{"class": f"ck-changed ck-changed-{kind}",
                                "data-changed": " ".join(words)})
    if not tag:
        return
    label = "new" if words == ("new",) else "changed: " + ", ".join(words)
    label = _fit(label, 11, w - 24, True)
    tw = text_width(label, 11, True) + 10
    svg.rect(x + w - tw - 6, y - 9, tw, 16, rx=3, fill=CHANGED)
    svg.text(x + w - tw - 1, y + 3, label, 11, fill="#ffffff", bold=True)


# -- brokers -----------------------------------------------------------------------------------


def _brokers(svg: _Svg, snap: ClusterSnapshot, changes: SnapshotChanges, lay: _Layout,
             top: float, anchors: dict[tuple[int, int | None], float]) -> float:
    x, w = lay.broker_x, lay.broker_w
    parts = {p.partition: p for p in snap.partitions}
    groups_on: dict[tuple[int, int], list[GroupView]] = {}
    for g in snap.groups:
        groups_on.setdefault((g.broker, g.partition), []).append(g)
    y = top
    for b in snap.brokers:
        box = _Svg()
        by = y
        inner_x, inner_w = x + 8, w - 16
        # title
        box.text(inner_x, by + 18, f"broker {b.broker_id}", 14, bold=True)
        box.text(inner_x + text_width(f"broker {b.broker_id}", 14, True) + 8, by + 18, b.host,
                 11, fill=MUTED)
        if not b.alive:
            box.pill(x + w - 8 - text_width("DOWN", 11, True) - 10, by + 18, "DOWN", "#b91c1c")
        anchors[(b.broker_id, None)] = by + 14
        cy = by + 26
        contexts = {c.partition: c for c in b.contexts}
        for p_id in b.leads:
            p = parts[p_id]
            ctx = contexts.get(p_id)
            block_top = cy
            box.open(**{"class": "ck-partition", "data-partition": p_id, "data-leader": p.leader,
                        "data-hwm": p.high_watermark, "data-leo": p.log_end_offset,
                        "data-isr": ",".join(map(str, p.isr))})
            cy += ROW
            box.text(inner_x, cy, p.name, 12, bold=True)
            px = inner_x + text_width(p.name, 12, True) + 6
            box.text(px, cy, f"leader, epoch {p.leader_epoch}", 11, fill=MUTED)
            if ctx is not None:
                state = ctx.state
                pw = text_width(state, 11, True) + 10
                box.open(**{"class": "ck-context", "data-broker": b.broker_id,
                            "data-partition": p_id, "data-state": state})
                box.pill(x + w - 8 - pw, cy, state, CONTEXT_COLOURS.get(state, MUTED))
                box.close()
                words = changes.contexts.get((b.broker_id, p_id), ())
                if words:
                    box.rect(x + w - 10 - pw, cy - 14, pw + 4, 19, rx=4, fill="none",
                             stroke=CHANGED, stroke_width=2.5,
                             **{"class": "ck-changed ck-changed-context"})
            anchors[(b.broker_id, p_id)] = cy - 4
            cy += ROW
            lagging = p.high_watermark < p.log_end_offset
            hwm_text = f"HWM {p.high_watermark:,}"
            box.text(inner_x, cy, hwm_text, 12, bold=lagging,
                     fill=ANSWER_ERROR if lagging else INK)
            hx = inner_x + text_width(hwm_text, 12, lagging) + 4
            box.text(hx, cy, f"· LEO {p.log_end_offset:,} · ISR {{{','.join(map(str, p.isr))}}}",
                     12, fill=INK)
            cy += ROW
            rx = inner_x
            box.text(rx, cy, "LEO by replica:", 11, fill=MUTED)
            rx += text_width("LEO by replica:", 11) + 4
            for r in p.replicas:
                label = f"b{r.broker_id} {r.log_end_offset:,}"
                if not r.fetching:
                    label += " stalled"
                elif r.fetch_delay_ms:
                    label += f" +{r.fetch_delay_ms:,}ms"
                if not r.in_isr:
                    label += " (out of ISR)"
                colour = ("#b91c1c" if not r.fetching or not r.in_isr
                          else "#b45309" if r.fetch_delay_ms or r.log_end_offset
                          < p.log_end_offset else MUTED)
                tw = text_width(label, 11, r.leader)
                box.open(**{"class": "ck-replica", "data-broker": r.broker_id,
                            "data-in-isr": str(r.in_isr).lower(),
                            "data-fetching": str(r.fetching).lower()})
                box.text(rx, cy, label, 11, fill=colour, bold=r.leader)
                box.close()
                rx += tw + 8
            if lagging:
                cy += ROW
                box.text(inner_x, cy, _fit("writes wait until every ISR replica has them", 11,
                                           inner_w), 11, fill=ANSWER_ERROR)
            box.close()
            words = changes.partitions.get(p_id, ())
            for g in groups_on.get((b.broker_id, p_id), []):
                cy = _group_box(box, g, changes, inner_x, cy + 6, inner_w)
            if words:
                _changed_box(box, inner_x - 4, block_top + 3, inner_w + 8, cy - block_top + 2,
                             words, "partition", tag=False)
            cy += 4
        # contexts of partitions it does not lead (an old leader's CLOSED one, a FAILED load)
        others = [c for c in b.contexts if c.partition not in b.leads]
        for c in others:
            cy += ROW
            box.open(**{"class": "ck-context", "data-broker": b.broker_id,
                        "data-partition": c.partition, "data-state": c.state})
            label = f"__consumer_offsets-{c.partition} (not leader):"
            box.text(inner_x, cy, label, 11, fill=MUTED)
            box.pill(inner_x + text_width(label, 11) + 6, cy, c.state,
                     CONTEXT_COLOURS.get(c.state, MUTED))
            box.close()
            if (b.broker_id, c.partition) in changes.contexts:
                pw = text_width(c.state, 11, True) + 10
                box.rect(inner_x + text_width(label, 11) + 4, cy - 14, pw + 4, 19, rx=4,
                         fill="none", stroke=CHANGED, stroke_width=2.5,
                         **{"class": "ck-changed ck-changed-context"})
            for g in groups_on.get((b.broker_id, c.partition), []):
                cy = _group_box(box, g, changes, inner_x, cy + 6, inner_w)
        if b.follows:
            cy += ROW
            follows = "follower of " + ", ".join(f"p{p}" for p in b.follows)
            box.text(inner_x, cy, follows, 11, fill=MUTED)
            if b.stalled:
                box.text(inner_x + text_width(follows, 11) + 8, cy,
                         "stalled on " + ", ".join(f"p{p}" for p in b.stalled), 11,
                         fill="#b91c1c", bold=True)
        height = cy - by + 10
        fill = "#f9fafb" if b.alive else "#e5e7eb"
        svg.open(**{"class": "ck-broker", "data-broker": b.broker_id,
                    "data-alive": str(b.alive).lower(),
                    "data-leads": ",".join(map(str, b.leads))})
        svg.rect(x, by, w, height, rx=6, fill=fill, stroke="#6b7280" if b.alive else "#b91c1c",
                 stroke_width=1.5, stroke_dasharray=None if b.alive else "6 4")
        svg.add(box.svg())
        _changed_box(svg, x, by, w, height, changes.brokers.get(b.broker_id, ()), "broker")
        svg.close()
        y = by + height + 10
    return y


def _group_box(svg: _Svg, g: GroupView, changes: SnapshotChanges, x: float, y: float,
               w: float) -> float:
    """A group on its coordinator; returns the bottom."""
    members = [m for m in g.members if not m.pending]
    body = _Svg()
    cy = y + ROW
    body.text(x + 6, cy, g.group_id, 12, bold=True)
    gx = x + 6 + text_width(g.group_id, 12, True) + 6
    gx += body.pill(gx, cy, g.state, GROUP_STATE_COLOURS.get(g.state, MUTED)) + 6
    modern = g.group_type == "consumer"
    body.text(gx, cy, _fit(f"group epoch {g.generation}" if modern
                           else f"generation {g.generation}", 12, x + w - gx - 4), 12, bold=True)
    cy += ROW
    words = [f"{len(members)} member{'s' if len(members) != 1 else ''}"]
    if modern:
        words.insert(0, f"assignment epoch {g.assignment_epoch}")
    if g.state == "PreparingRebalance":
        words.append(f"{g.awaiting_join} joined")
    if g.leader_client:
        words.append(f"leader {g.leader_client}")
    if g.protocol:
        words.append(g.protocol if modern else f"protocol {g.protocol}")
    pending = len(g.members) - len(members)
    if pending:
        words.append(f"{pending} pending")
    body.text(x + 6, cy, _fit(" · ".join(words), 11, w - 12), 11, fill=INK,
              title=None if g.leader is None else f"leader member id {g.leader}")
    if not g.coordinator:
        cy += ROW
        body.text(x + 6, cy, "an old copy: this broker no longer leads the partition", 11,
                  fill="#b91c1c")
    if modern:
        for m in members:
            cy += ROW
            cy = _modern_member_row(body, m, x + 6, cy, w - 12)
    if g.rebalance is not None:
        cy += 4
        cy = _bar(body, g.rebalance, x + 6, cy, w - 12,
                  "initial delay" if g.rebalance.name.startswith("group.initial")
                  else "join phase" if g.rebalance.key.startswith("join-") else "sync phase")
    bottom = cy + 6
    svg.open(**{"class": "ck-group", "data-group": g.group_id, "data-state": g.state,
                "data-generation": g.generation, "data-broker": g.broker,
                "data-coordinator": str(g.coordinator).lower()})
    svg.rect(x, y, w, bottom - y, rx=5, fill="#ffffff", stroke=GROUP_STATE_COLOURS.get(
        g.state, MUTED), stroke_width=1.5)
    svg.add(body.svg())
    if g.coordinator:
        _changed_box(svg, x, y, w, bottom - y, changes.groups.get(g.group_id, ()), "group",
                     tag=False)
    svg.close()
    return bottom


def _modern_member_row(svg: _Svg, m: GroupMemberView, x: float, y: float, w: float) -> float:
    """One consumer group member as the coordinator holds it: client, member epoch, its
    MemberState pill, what it owns and, where they differ, its target and what it revokes."""
    svg.open(**{"class": "ck-cg-member", "data-member-id": m.member_id,
                "data-member-epoch": m.member_epoch, "data-state": m.member_state,
                "data-assignment": ",".join(m.assignment),
                "data-target": ",".join(m.target)})
    head = f"{m.client_id} e{m.member_epoch}"
    svg.text(x, y, _fit(head, 11, w * 0.3), 11, bold=True, title=f"member id {m.member_id}")
    px = x + min(text_width(head, 11, True), w * 0.3) + 5
    state = m.member_state or "UNKNOWN"
    px += svg.pill(px, y, _SHORT_STATE.get(state, state),
                   SERVER_MEMBER_STATE_COLOURS.get(state, MUTED), size=10) + 5
    owns = _assignment(m.assignment) if m.assignment else "nothing"
    svg.text(px, y, _fit(f"owns {owns}", 11, x + w - px), 11, fill=INK)
    more = []
    if m.revoking:
        more.append(f"revoking {_assignment(m.revoking)}")
    if m.target != m.assignment:
        more.append(f"target {_assignment(m.target) if m.target else 'nothing'}")
    if more:  # where it is going, on a second row
        y += ROW - 2
        svg.text(x + 12, y, _fit("→ " + " · ".join(more), 11, w - 12), 11, fill=MUTED)
    svg.close()
    return y


# the coordinator's MemberState names, short enough for a pill
_SHORT_STATE = {"UNREVOKED_PARTITIONS": "UNREVOKED", "UNRELEASED_PARTITIONS": "UNRELEASED"}


def _bar(svg: _Svg, bar: TimerBar, x: float, y: float, w: float, label: str) -> float:
    """A timer that runs down, on one row from `y`; returns the row's bottom.

    [label][track with the remaining part filled][remaining / total ms]"""
    label_w = min(132.0, w * 0.36)
    value = f"{bar.remaining_ms:,} / {bar.total_ms:,} ms"
    value_w = text_width("000,000 / 000,000 ms", 11)
    track_x = x + label_w
    track_w = max(30.0, w - label_w - value_w - 6)
    base = y + 12
    urgency = bar.urgency
    colour = BAR_COLOURS[urgency] if bar.deadline else BAR_NEUTRAL
    svg.open(**{"class": f"ck-timer ck-timer-{urgency}", "data-timer": bar.name,
                "data-key": bar.key, "data-remaining-ms": bar.remaining_ms,
                "data-total-ms": bar.total_ms, "data-owner": bar.owner})
    svg.text(x, base, _fit(label, 11, label_w - 4), 11, fill=MUTED,
             title=f"{bar.name} ({bar.key})")
    svg.rect(track_x, y + 2, track_w, 12, rx=2, fill="#e5e7eb")
    filled = track_w * bar.fraction
    if filled > 0:
        svg.rect(track_x, y + 2, filled, 12, rx=2, fill=colour)
    if bar.note and bar.note not in ("join phase", "sync phase"):
        note = _fit(bar.note, 11, track_w - 6)
        if bar.fraction < 0.5:  # in the empty part of the track, else on the filled part
            svg.text(track_x + track_w - 3, base - 1, note, 11, fill=INK, anchor="end")
        else:
            svg.text(track_x + 3, base - 1, note, 11, fill="#ffffff", bold=True)
    svg.text(x + w, base, value, 11, fill=BAR_COLOURS[urgency] if urgency in (
        "urgent", "expired") else INK, bold=urgency in ("urgent", "expired"), anchor="end")
    svg.close()
    return y + BAR_ROW


# -- consumers ---------------------------------------------------------------------------------


def _assignment(parts: tuple[str, ...]) -> str:
    """orders-0, orders-1, orders-2 -> orders-[0, 1, 2] (topics in their order)."""
    by_topic: dict[str, list[str]] = {}
    for tp in parts:
        topic, _, partition = tp.rpartition("-")
        by_topic.setdefault(topic, []).append(partition)
    return "; ".join(f"{t}-[{', '.join(ps)}]" if len(ps) > 1 else f"{t}-{ps[0]}"
                     for t, ps in by_topic.items())


def _card_height(c: ConsumerView) -> float:
    bars = max(3, len(c.timers) + len(c.memberships)
               + sum(1 for m in c.memberships if m.rebalance is not None))
    extra = ROW if c.group_protocol == "consumer" else 0
    return 8 + ROW * 3 + extra + bars * BAR_ROW + ROW + 10


def _consumers(svg: _Svg, snap: ClusterSnapshot, changes: SnapshotChanges, lay: _Layout,
               top: float, cards: dict[str, tuple[float, float]]) -> float:
    x, w = lay.consumer_x, lay.consumer_w
    groups = len({c.group_id for c in snap.consumers}) > 1
    y = top
    for c in snap.consumers:
        h = max(_card_height(c), min(len(snap.requests_of(c.name)), MAX_REQUEST_ROWS)
                * REQUEST_ROW + 8)
        cards[c.name] = (y, h)
        _card(svg, snap, c, changes, x, y, w, h, groups)
        y += h + 10
    return y


def _card(svg: _Svg, snap: ClusterSnapshot, c: ConsumerView, changes: SnapshotChanges,
          x: float, y: float, w: float, h: float, show_group: bool) -> None:
    gone = c.process in ("crashed", "closed", "not started")
    svg.open(**{"class": f"ck-consumer ck-process-{c.process.replace(' ', '-')}",
                "data-consumer": c.name, "data-state": c.state,
                "data-generation": c.generation, "data-member-id": c.member_id,
                "data-process": c.process, "data-group": c.group_id,
                "data-changed": " ".join(changes.consumers.get(c.name, ())) or None})
    svg.rect(x, y, w, h, rx=6, fill="#f3f4f6" if gone else "#ffffff",
             stroke=PROCESS_COLOURS.get(c.process, "#6b7280"), stroke_width=1.5,
             stroke_dasharray="6 4" if gone else None)
    ix, iw = x + 8, w - 16
    cy = y + 20
    svg.text(ix, cy, c.name, 14, bold=True, fill=MUTED if gone else INK)
    sx = ix + text_width(c.name, 14, True) + 8
    svg.open(**{"class": "ck-member-state", "data-state": c.state})
    sx += svg.pill(sx, cy, c.state, MEMBER_STATE_COLOURS.get(
        c.state, SERVER_MEMBER_STATE_COLOURS.get(c.state, MUTED))) + 6
    svg.close()
    right = x + w - 8
    if c.process != "running":
        label = c.process
        pw = text_width(label, 11, True) + 10
        svg.open(**{"class": "ck-process", "data-process": c.process})
        svg.pill(right - pw, cy, label, PROCESS_COLOURS.get(c.process, MUTED))
        svg.close()
        right -= pw + 4
    if c.software:  # a real client of a live server: which library it is
        sw = _fit(c.software, 11, max(0.0, right - sx - 4))
        svg.text(sx, cy, sw, 11, fill=MUTED, **{"class": "ck-software",
                                                "data-software": c.software})
        sx += text_width(sw, 11) + 6
    # what else is wrong with it, on the name line (as far as there is room)
    flags = list(c.status)
    if c.rejoin_needed and c.state == "STABLE":
        flags.append("rejoin requested")
    fx = sx
    svg.open(**{"class": "ck-status", "data-status": "; ".join(flags) or None})
    for flag in flags:
        colour = ("#b91c1c" if flag.startswith(("cut off", "failed")) else "#7c3aed"
                  if flag.startswith("paused") else "#6b7280" if flag.startswith(
                      ("closed", "not started")) else "#c2410c")
        tw = text_width(flag, 11, True) + 10
        if fx + tw > right:
            break
        svg.pill(fx, cy, flag, colour)
        fx += tw + 4
    svg.close()
    cy += ROW
    modern = c.group_protocol == "consumer"
    gen = f"member epoch {c.generation}" if modern else f"generation {c.generation}"
    svg.text(ix, cy, gen, 12, bold=True)
    gx = ix + text_width(gen, 12, True) + 8
    member = ("member " + _short_id(c.member_id)) if c.member_id else "no member id"
    rest = member + (f" · {c.group_id}" if show_group else "")
    svg.text(gx, cy, _fit(rest, 11, x + w - 8 - gx), 11, fill=MUTED,
             title=c.member_id or None)
    cy += ROW
    # the assignment, then the coordinator it talks to, on one line
    coordinator = (f"coordinator b{c.coordinator}" if c.coordinator is not None
                   else "coordinator unknown")
    cw = text_width(coordinator, 11, c.coordinator is None)
    svg.text(x + w - 8 - cw, cy, coordinator, 11,
             fill=MUTED if c.coordinator is not None or gone else "#b45309",
             bold=c.coordinator is None and not gone)
    assigned = _assignment(c.assignment) if c.assignment else "nothing assigned"
    svg.text(ix, cy, "assignment", 11, fill=MUTED)
    ax = ix + text_width("assignment", 11) + 6
    svg.open(**{"class": "ck-assignment", "data-assignment": ",".join(c.assignment)})
    svg.text(ax, cy, _fit(assigned, 12, x + w - 16 - cw - ax), 12, fill=INK if c.assignment
             else FAINT)
    svg.close()
    if modern:  # the coordinator's view of it: epoch, MemberState, target (KIP-848)
        cy += ROW
        seen = next((m for m in c.memberships if m.member_id == c.member_id), None)
        svg.text(ix, cy, "coordinator", 11, fill=MUTED)
        sx = ix + text_width("coordinator", 11) + 6
        if seen is None:
            svg.text(sx, cy, "does not know this member", 11, fill=FAINT)
        else:
            svg.open(**{"class": "ck-server-member", "data-state": seen.member_state,
                        "data-member-epoch": seen.member_epoch,
                        "data-target": ",".join(seen.target)})
            state = seen.member_state or "UNKNOWN"
            epoch = f"epoch {seen.member_epoch}"
            svg.text(sx, cy, epoch, 11, bold=True)
            sx += text_width(epoch, 11, True) + 5
            sx += svg.pill(sx, cy, _SHORT_STATE.get(state, state),
                           SERVER_MEMBER_STATE_COLOURS.get(state, MUTED), size=10) + 5
            target = _assignment(seen.target) if seen.target else "nothing"
            svg.text(sx, cy, _fit(f"target {target}", 11, x + w - 8 - sx), 11, fill=INK)
            svg.close()
    cy += 4
    bars = 0
    for bar in c.timers:
        cy = _bar(svg, bar, ix, cy, iw, bar.name)
        bars += 1
    if gone and not c.timers:
        svg.text(ix, cy + 13, "no process: no heartbeats, no polls", 11, fill=MUTED)
        cy += BAR_ROW
        bars += 1
    for m in c.memberships:
        if m.session is None:
            continue
        label = (f"session @b{m.broker}" if m.member_id == c.member_id
                 else f"old member @b{m.broker}")
        if m.pending:
            label = f"pending @b{m.broker}"
        svg.open(**{"class": "ck-membership", "data-member-id": m.member_id,
                    "data-broker": m.broker, "data-awaiting": m.awaiting or None})
        cy = _bar(svg, m.session, ix, cy, iw, label)
        svg.close()
        bars += 1
        if m.rebalance is not None:  # KIP-848: the time it has left to revoke
            cy = _bar(svg, m.rebalance, ix, cy, iw, f"revocation @b{m.broker}")
            bars += 1
    if not c.memberships:
        svg.text(ix, cy + 13, "not a member of the group on any coordinator", 11, fill=MUTED)
        cy += BAR_ROW
        bars += 1
    cy += BAR_ROW * max(0, 3 - bars)
    cy += ROW
    _answer_line(svg, snap, c, changes, ix, cy, iw)
    _changed_box(svg, x, y, w, h, changes.consumers.get(c.name, ()), "consumer")
    svg.close()


def _answer_line(svg: _Svg, snap: ClusterSnapshot, c: ConsumerView, changes: SnapshotChanges,
                 x: float, y: float, w: float) -> None:
    a = c.last_answer
    if c.held:
        h = c.held[-1]
        text = (f"held by the pause: {h.api} {h.error}"
                + (f" (+{len(c.held) - 1} more)" if len(c.held) > 1 else ""))
        svg.open(**{"class": "ck-held", "data-api": h.api, "data-error": h.error})
        svg.text(x, y, _fit(text, 11, w), 11, fill="#7c3aed", bold=True)
        svg.close()
        return
    if a is None and c.last_request is not None:
        # a real client: the server keeps its last request, not the answer's error
        r = c.last_request
        svg.open(**{"class": "ck-last-request", "data-api": r.api, "data-at-ms": r.at_ms})
        svg.text(x, y, "last request", 11, fill=MUTED)
        lx = x + text_width("last request", 11) + 6
        svg.text(lx, y, r.api, 12, bold=True)
        lx += text_width(r.api, 12, True) + 5
        where = "" if r.broker is None else f" to b{r.broker}"
        svg.text(lx, y, _fit(f"{max(0, snap.now_ms - r.at_ms):,} ms ago{where}", 11, x + w - lx),
                 11, fill=MUTED, title=f"at {r.at_ms:,} ms")
        svg.close()
        return
    if a is None:
        svg.text(x, y, "no answer yet", 11, fill=FAINT)
        return
    ago = snap.now_ms - a.at_ms
    svg.open(**{"class": "ck-last-answer", "data-api": a.api, "data-error": a.error,
                "data-at-ms": a.at_ms})
    svg.text(x, y, "last answer", 11, fill=MUTED)
    lx = x + text_width("last answer", 11) + 6
    svg.text(lx, y, a.api, 12, bold=True)
    lx += text_width(a.api, 12, True) + 5
    colour = ANSWER_OK if a.error == "NONE" else ANSWER_ERROR
    svg.text(lx, y, a.error, 12, bold=True, fill=colour)
    lx += text_width(a.error, 12, True) + 5
    where = ("" if a.broker is None or (a.broker == c.coordinator
                                        and a.api != "FindCoordinator")
             else f", from b{a.broker}" if a.api != "FindCoordinator" else f": b{a.broker}")
    svg.text(lx, y, _fit(f"{ago:,} ms ago{where}", 11, x + w - lx), 11, fill=MUTED,
             title=f"at {a.at_ms:,} ms")
    svg.close()


# -- requests ------------------------------------------------------------------------------------


def _requests(svg: _Svg, snap: ClusterSnapshot, changes: SnapshotChanges, lay: _Layout,
              anchors: dict[tuple[int, int | None], float],
              cards: dict[str, tuple[float, float]], top: float) -> None:
    x0, x1 = lay.channel_x0, lay.channel_x1
    label_x0 = x1 - (x1 - x0) * 0.84  # the straight part, where the labels are
    partitions = {c.name: c.offsets_partition for c in snap.consumers}
    into: dict[float, int] = {}  # arrows ending at one anchor: spread them a little
    for name, (cy, ch) in cards.items():
        mine = snap.requests_of(name)
        shown = mine[:MAX_REQUEST_ROWS] if len(mine) <= MAX_REQUEST_ROWS \
            else mine[:MAX_REQUEST_ROWS - 1]
        for i, r in enumerate(shown):
            ry = cy + 24 + i * REQUEST_ROW
            if r.broker is None:
                ty = anchors.get((min((b.broker_id for b in snap.brokers), default=0), None),
                                 top + 14)
            else:
                ty = anchors.get((r.broker, partitions.get(name)),
                                 anchors.get((r.broker, None), top + 14))
            k = into.get(ty, 0)
            into[ty] = k + 1
            ty += (k % 5) * 3 - 6
            _request(svg, r, changes.requests.get(r.id), x0, ty, label_x0, x1, ry)
        if len(mine) > len(shown):
            ry = cy + 24 + len(shown) * REQUEST_ROW
            svg.text(x1 - 6, ry + 4, f"+ {len(mine) - len(shown)} more requests", 11,
                     fill=MUTED, anchor="end")


def _request(svg: _Svg, r: RequestView, change: str | None, bx: float, by: float,
             lx: float, cx: float, y: float) -> None:
    """One request: a straight part at the consumer (with the labels) and a slanted part to the
    broker; the arrowhead says which way it goes."""
    if r.phase == "returning" or (r.phase == "lost" and r.lost_where == "return"):
        colour = ANSWER_OK if r.error == "NONE" else ANSWER_ERROR
    else:
        colour = PHASE_COLOURS.get(r.phase, MUTED)
    lost = r.phase == "lost"
    dash = "5 4" if lost else None
    svg.open(**{"class": f"ck-request ck-request-{r.phase}", "data-request": r.api,
                "data-client": r.client, "data-broker": r.broker if r.broker is not None
                else None, "data-phase": r.phase, "data-error": r.error,
                "data-request-id": r.id, "data-changed": change})
    width = 3 if change else 2
    # the slanted part to the broker's edge, then the straight part along the labels
    svg.path(f"M{_n(cx)} {_n(y)} L{_n(lx)} {_n(y)} L{_n(bx + 2)} {_n(by)}", fill="none",
             stroke=colour, stroke_width=width, stroke_dasharray=dash)
    if r.phase in ("to-broker", "at-coordinator"):
        _arrowhead(svg, lx, y, bx + 2, by, colour)
    elif r.phase == "returning":
        _arrowhead(svg, lx, y, cx, y, colour)
    if r.phase == "at-coordinator":
        # the request sits at the coordinator: a pause sign on the broker's edge
        svg.rect(bx + 6, by - 7, 4, 14, fill=colour)
        svg.rect(bx + 12, by - 7, 4, 14, fill=colour)
    if lost:
        px, py = ((cx - 22, y) if r.lost_where in ("send", "return") else
                  (bx + 16, by + (y - by) * 16 / max(1.0, lx - bx)))
        svg.path(f"M{_n(px - 6)} {_n(py - 6)} L{_n(px + 6)} {_n(py + 6)} M{_n(px - 6)} "
                 f"{_n(py + 6)} L{_n(px + 6)} {_n(py - 6)}", stroke="#b91c1c", stroke_width=3)
    # labels: the API above the line; below it the answer's error, or where the request is
    head = r.api + (" →" if r.phase == "to-broker" else " ←" if r.phase == "returning"
                    else "")
    label_w = cx - lx - 6
    if change == "new":
        tw = text_width("new", 11, True) + 8
        svg.rect(lx, y - 17, tw, 15, rx=3, fill=CHANGED)
        svg.text(lx + 4, y - 5, "new", 11, fill="#ffffff", bold=True)
        svg.text(lx + tw + 4, y - 5, _fit(head, 12, label_w - tw - 4, True), 12, fill=colour,
                 bold=True)
    else:
        svg.text(lx + 2, y - 5, _fit(head, 12, label_w, True), 12, fill=colour, bold=True)
    if r.error is not None:
        svg.text(lx + 2, y + 15, _fit(r.error, 12, label_w, True), 12, fill=colour, bold=True,
                 title=r.detail, **{"class": "ck-answer-error"})
    else:
        svg.text(lx + 2, y + 14, _fit(r.detail, 11, label_w), 11, fill=MUTED, title=r.detail)
    svg.close()


def _arrowhead(svg: _Svg, fx: float, fy: float, tx: float, ty: float, colour: str) -> None:
    """A filled triangle at (tx, ty) pointing away from (fx, fy)."""
    dx, dy = tx - fx, ty - fy
    length = max(1e-6, (dx * dx + dy * dy) ** 0.5)
    ux, uy = dx / length, dy / length
    size = 9
    bx, by = tx - ux * size, ty - uy * size
    px, py = -uy * size * 0.5, ux * size * 0.5
    svg.path(f"M{_n(tx)} {_n(ty)} L{_n(bx + px)} {_n(by + py)} L{_n(bx - px)} {_n(by - py)} Z",
             fill=colour)


# -- legend --------------------------------------------------------------------------------------


def _legend(svg: _Svg, lay: _Layout, y: float, marking: bool) -> float:
    svg.open(**{"class": "ck-legend"})
    x = lay.pad
    svg.line(x, y - 8, lay.width - lay.pad, y - 8, stroke=LINE, stroke_width=1)
    y += 8
    items: list[tuple[str, str, str]] = [
        ("to-broker", PHASE_COLOURS["to-broker"], "request on its way"),
        ("at-coordinator", PHASE_COLOURS["at-coordinator"], "waiting at the coordinator"),
        ("returning", ANSWER_OK, "answer NONE"),
        ("returning-error", ANSWER_ERROR, "answer with an error"),
        ("lost", PHASE_COLOURS["lost"], "lost (times out later)"),
    ]
    for kind, colour, words in items:
        dash = "5 4" if kind == "lost" else None
        svg.line(x, y - 4, x + 26, y - 4, stroke=colour, stroke_width=2, stroke_dasharray=dash)
        if kind == "lost":
            svg.path(f"M{_n(x + 9)} {_n(y - 9)} L{_n(x + 17)} {_n(y + 1)} M{_n(x + 9)} "
                     f"{_n(y + 1)} L{_n(x + 17)} {_n(y - 9)}", stroke="#b91c1c", stroke_width=2.5)
        elif kind == "at-coordinator":
            svg.rect(x + 28, y - 10, 3, 12, fill=colour)
            svg.rect(x + 33, y - 10, 3, 12, fill=colour)
        else:
            _arrowhead(svg, x, y - 4, x + 26, y - 4, colour)
        tx = x + (40 if kind == "at-coordinator" else 32)
        svg.text(tx, y, words, 11, fill=MUTED)
        x = tx + text_width(words, 11) + 16
    y += 20
    x = lay.pad
    svg.text(x, y, "time left:", 11, fill=MUTED)
    x += text_width("time left:", 11) + 6
    for urgency, words in (("ok", "over half"), ("soon", "under half"),
                           ("urgent", "under 20%"), ("expired", "ran out")):
        svg.rect(x, y - 10, 22, 11, rx=2, fill=BAR_COLOURS[urgency])
        svg.text(x + 26, y, words, 11, fill=MUTED)
        x += 26 + text_width(words, 11) + 12
    svg.rect(x, y - 10, 22, 11, rx=2, fill=BAR_NEUTRAL)
    svg.text(x + 26, y, "next heartbeat (not a deadline)", 11, fill=MUTED)
    x += 26 + text_width("next heartbeat (not a deadline)", 11) + 12
    if marking:
        svg.rect(x, y - 11, 22, 13, rx=3, fill="none", stroke=CHANGED, stroke_width=2.5)
        svg.text(x + 26, y, "changed since the previous picture", 11, fill=MUTED)
    svg.close()
    return y + 4


# -- HTML and the widget -------------------------------------------------------------------------


def cluster_html(svg: str, *, inline: bool = True) -> str:
    """The picture as HTML: inline `<svg>` (`inline=True`) or an `<img>` holding it as a data
    URI, in a `<div class="ck-cluster-view">`."""
    if inline:
        body = svg
    else:
        data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
        width = svg[svg.find('width="') + 7:svg.find('"', svg.find('width="') + 7)]
        body = (f'<img class="ck-cluster-svg" alt="cluster view" width="{width}" '
                f'style="max-width:100%;height:auto" src="data:image/svg+xml;base64,{data}"/>')
    return f'<div class="ck-cluster-view">{body}</div>'


class ClusterView:
    """A cluster picture that redraws after every step, marking what changed since the last.

    `show(cluster)` takes a snapshot, draws it against the previous one and puts it in
    `widget` (an `ipywidgets.HTML` with CSS class `ck-cluster-view`); `show_snapshot(snap)`
    does the same for a snapshot taken earlier (rewinding is showing an older snapshot).
    `reset()` forgets the previous snapshot (the next picture marks nothing)."""

    def __init__(self, cluster: Any | None = None, *, width: int = 960,
                 mark_changes: bool = True) -> None:
        import ipywidgets as widgets

        self.width = width
        self.mark_changes = mark_changes
        self.widget = widgets.HTML()
        self.widget.add_class("ck-cluster-view")
        self.snapshot: ClusterSnapshot | None = None
        self.previous: ClusterSnapshot | None = None
        self.svg = ""
        if cluster is not None:
            self.show(cluster)

    def show(self, cluster: Any) -> ClusterSnapshot:
        snap = cluster_snapshot(cluster)
        self.show_snapshot(snap)
        return snap

    def show_snapshot(self, snapshot: ClusterSnapshot) -> None:
        self.previous = self.snapshot if self.mark_changes else None
        self.snapshot = snapshot
        self.svg = cluster_svg(snapshot, self.previous, self.width)
        self.widget.value = cluster_html(self.svg)

    def reset(self) -> None:
        self.previous = None
        self.snapshot = None

    @property
    def changes(self) -> SnapshotChanges:
        if self.snapshot is None:
            return NO_CHANGES
        return snapshot_changes(self.previous, self.snapshot)

    def _repr_html_(self) -> str:
        # JupyterLab's sanitizer (an untrusted notebook's stored output) strips an inline
        # <svg> down to its text, but keeps an <img> with a data URI: the stored form is that
        return (cluster_html(self.svg, inline=False) if self.svg
                else "<i>no cluster shown yet</i>")

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/html"] = self._repr_html_()
        bundle["text/plain"] = repr(self)
        return bundle

    def __repr__(self) -> str:
        if self.snapshot is None:
            return "ClusterView(nothing shown yet)"
        return (f"ClusterView(t={self.snapshot.now_ms} ms, {len(self.snapshot.brokers)} "
                f"brokers, {len(self.snapshot.consumers)} consumers, "
                f"{len(self.snapshot.requests)} requests in flight)")
