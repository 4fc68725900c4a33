"""A rebalance as a sequence picture: consumers and coordinators as lifelines, requests and
responses as arrows, drawn from the trace.

What the picture needs from the trace is one event per message end, each with `api`, `client`,
`broker` and a `correlation_id` that pairs them:

* `request_sent` (client side; `dropped` when the network lost it on the way),
* `request_received` (the coordinator's broker starts handling it),
* `response_sent` (the broker completes it; `error`, and `generation` for JoinGroup),
* `response_received` (the client gets it; `error`, `timed_out` when no answer came in time).

`record_requests(cluster)` records exactly these on a cluster's network (call it before running
the scenario). A trace without them still gives a picture, derived from the consumers' own log
lines ("(Re-)joining group", "Successfully joined/synced", "Member ... sending LeaveGroup"): no
Heartbeat, and no arrival times (arrows are flat), which the title says.

The layout is fixed by the data: one column per lifeline, one row per message end in trace
order, positions pinned for Graphviz's `neato`. Same trace, same DOT text, same SVG. The width
is capped (`MAX_WIDTH_PX` up to nine lifelines: more lifelines stand closer, their labels wrap
onto more lines; beyond nine it grows wider) and a long window grows downwards; no label is
under `MIN_FONT_PX`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..trace import LogContext, TraceEvent
from .diagrams import Diagram, dot_quote, wrap
from .live import _events, client_groups, generation_id

if TYPE_CHECKING:
    from ..cluster import Cluster

__all__ = ["Message", "record_requests", "messages", "sequence_dot", "sequence_diagram",
           "second_joins_sequence", "DEFAULT_APIS", "API_COLOURS"]

DEFAULT_APIS = ("JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup")
API_COLOURS = {
    "JoinGroup": "#1565c0",
    "SyncGroup": "#2e7d32",
    "Heartbeat": "#78909c",
    "LeaveGroup": "#6a1b9a",
    "OffsetCommit": "#ef6c00",
    "OffsetFetch": "#00838f",
}
_ERROR_COLOUR = "#c62828"
_NETWORK_KINDS = ("request_sent", "request_received", "response_sent", "response_received")

_LANE_GAP = 2.6    # inches between lifelines, when they fit
_MIN_LANE_GAP = 0.9
_LANES_WIDTH = 7.2  # inches the lifelines may span: with the time column and the margins the
                    # picture stays within MAX_WIDTH_PX (940 px) up to nine lifelines
_ROW = 0.34        # inches between message ends; more when labels take two lines
_TIME_X = -0.9     # the time column
_CHAR_IN = 0.07    # a 9 pt Helvetica character, on average, in inches


@dataclass(frozen=True)
class Message:
    """One arrow: a request (client -> broker) or a response (broker -> client).

    `start`/`end` are (virtual ms, trace seq) of its two ends; `end` is None when it never
    arrived. `note` is shown instead of an arrow (a timeout).
    """

    api: str
    kind: str  # "request" or "response"
    client: str
    broker: int | None
    start: tuple[int, float]
    end: tuple[int, float] | None
    error: str | None = None
    generation: int | None = None
    note: str | None = None

    @property
    def label(self) -> str:
        if self.note is not None:
            return self.note
        if self.kind == "request":
            return self.api + ("" if self.end is not None else " (lost)")
        text = f"{self.api} response"
        if self.error and self.error != "NONE":
            text += f": {self.error}"
        elif self.generation is not None and self.generation >= 0:
            text += f" (generation {self.generation})"
        return text + ("" if self.end is not None else " (lost)")


# -- recording ------------------------------------------------------------------------------------

def record_requests(cluster: Cluster) -> None:
    """Record every request and response on `cluster`'s network as trace events (module doc).

    Idempotent. Does nothing when the network records them itself (`records_requests`).
    """
    network = cluster.network
    if getattr(network, "records_requests", False):
        return
    log = LogContext(cluster.trace, "network")
    counter = itertools.count(1)
    send = network.send

    def recording_send(client: Any, broker: int | None, api: str,
                       call: Callable[[Any], Any], on_response: Callable[[Any, Any], None], *,
                       timeout_ms: int, drop: bool = False) -> None:
        cid = next(counter)
        ids = {"api": api, "client": client.name, "broker": broker, "correlation_id": cid}
        log.event("request_sent", **ids, dropped=bool(drop or not network._up(client, broker)))

        def answered(future: Any) -> None:
            try:
                response = future.result()
            except Exception as exc:  # noqa: BLE001 - shown as the response's error
                log.event("response_sent", **ids, error=type(exc).__name__, generation=None)
                return
            log.event("response_sent", **ids, error=_error_name(response),
                      generation=getattr(response, "generation_id", None))

        def recording_call(service: Any) -> Any:
            log.event("request_received", **ids)
            future = call(service)
            future.add_done_callback(answered)
            return future

        def recording_response(response: Any, error: Any) -> None:
            log.event("response_received", **ids,
                      error=error.name if error is not None else _error_name(response),
                      timed_out=error is not None and response is None)
            on_response(response, error)

        send(client, broker, api, recording_call, recording_response, timeout_ms=timeout_ms,
             drop=drop)

    network.send = recording_send  # type: ignore[method-assign]
    network.records_requests = True  # type: ignore[attr-defined]


def _error_name(response: Any) -> str:
    error = getattr(response, "error", None)
    return "NONE" if error is None else getattr(error, "name", str(error))


# -- messages from the trace ---------------------------------------------------------------------

def messages(trace: Iterable[TraceEvent]) -> tuple[list[Message], bool]:
    """The messages in the trace, and whether they are derived from log lines (no network)."""
    events = list(_events(trace))
    if any(e.kind in _NETWORK_KINDS for e in events):
        return _from_network(events), False
    return _derived(events), True


def _from_network(events: list[TraceEvent]) -> list[Message]:
    by_id: dict[int, dict[str, TraceEvent]] = {}
    for e in events:
        if e.kind in _NETWORK_KINDS:
            by_id.setdefault(e.fields["correlation_id"], {})[e.kind] = e
    out = []
    for _cid, ends in sorted(by_id.items()):
        sent = ends.get("request_sent")
        if sent is None:
            continue
        f = sent.fields
        got = ends.get("request_received")
        out.append(Message(f["api"], "request", f["client"], f["broker"], (sent.ts, sent.seq),
                           None if got is None else (got.ts, got.seq)))
        back, recv = ends.get("response_sent"), ends.get("response_received")
        if back is not None:
            out.append(Message(f["api"], "response", f["client"], f["broker"],
                               (back.ts, back.seq), None if recv is None or recv.fields.get(
                                   "timed_out") else (recv.ts, recv.seq),
                               back.fields.get("error"), back.fields.get("generation")))
        if recv is not None and recv.fields.get("timed_out"):
            out.append(Message(f["api"], "response", f["client"], f["broker"],
                               (recv.ts, recv.seq), None, recv.fields.get("error"),
                               note=f"{f['api']}: {recv.fields.get('error')}"))
    return out


def _derived(events: list[TraceEvent]) -> list[Message]:
    coordinator: dict[str, int | None] = {}
    out: list[Message] = []
    for e in events:
        if not e.source.startswith("client-"):
            if e.kind == "request_dropped":
                f = e.fields
                out.append(Message(f["api"], "request", f["client"], f.get("broker"),
                                   (e.ts, e.seq), None))
            continue
        client = e.source[len("client-"):]
        at = (e.ts, e.seq)
        broker = coordinator.get(client)
        if e.kind == "coordinator_discovered":
            coordinator[client] = e.fields.get("broker")
        elif e.kind == "join_sent":
            out.append(Message("JoinGroup", "request", client, broker, at, at))
        elif e.kind == "joined":
            gen = generation_id(e.fields.get("generation"))
            out.append(Message("JoinGroup", "response", client, broker, at, at, "NONE", gen))
            then = (e.ts, e.seq + 0.5)  # the SyncGroup goes out right after, in the same step
            out.append(Message("SyncGroup", "request", client, broker, then, then))
        elif e.kind == "synced":
            out.append(Message("SyncGroup", "response", client, broker, at, at, "NONE"))
        elif e.kind == "leave_sent":
            out.append(Message("LeaveGroup", "request", client, broker, at, at))
    return out


# -- the picture ---------------------------------------------------------------------------------

_q = dot_quote


def _source_events(source: Any) -> Iterable[TraceEvent]:
    trace = getattr(source, "trace", source)  # a Cluster, a Trace or a list of events
    return _events(trace)


def sequence_dot(source: Any, *, start_ms: int | None = None, end_ms: int | None = None,
                 members: Sequence[str] | None = None, group_id: str | None = None,
                 apis: Sequence[str] = DEFAULT_APIS, title: str | None = None) -> str:
    """DOT text (for `neato`) of the messages sent in [start_ms, end_ms].

    `source`: a Cluster, a Trace or a list of trace events. `members` keeps those consumers
    (in that order); `group_id` keeps the consumers of that group; `apis` the message types.
    """
    if start_ms is not None and end_ms is not None and end_ms < start_ms:
        raise ValueError(f"the window ends before it starts: start_ms={start_ms}, "
                         f"end_ms={end_ms}")
    events = list(_source_events(source))
    found, derived = messages(events)
    unknown = [a for a in apis if a not in API_COLOURS]
    if unknown:
        raise ValueError(f"unknown api(s) {unknown}; choose from {sorted(API_COLOURS)}")
    in_group: set[str] | None = None
    if group_id is not None:
        in_group = {source[len("client-"):] for source, group in client_groups(events).items()
                    if group == group_id}
    chosen = [m for m in found if m.api in apis
              and (start_ms is None or m.start[0] >= start_ms)
              and (end_ms is None or m.start[0] <= end_ms)
              and (members is None or m.client in members)
              and (in_group is None or m.client in in_group)]
    picked = {m.client for m in chosen}
    clients = list(members) if members is not None else [
        c for c in dict.fromkeys(m.client for m in found) if c in picked]  # first to speak first
    brokers = sorted({m.broker for m in chosen if m.broker is not None})
    lanes = [(f"c:{c}", c) for c in clients] + [(f"b:{b}", f"broker {b}") for b in brokers]
    gap = _LANE_GAP if len(lanes) < 2 else \
        max(_MIN_LANE_GAP, min(_LANE_GAP, _LANES_WIDTH / (len(lanes) - 1)))
    x = {key: i * gap for i, (key, _) in enumerate(lanes)}
    ends = sorted({p for m in chosen for p in (m.start, m.end) if p is not None})
    row = {p: i + 1 for i, p in enumerate(ends)}

    def text_of(m: Message, src: str, dst: str) -> str:
        span = abs(x[src] - x[dst]) if dst in x else gap / 2
        return wrap(m.label, max(12, int(span / _CHAR_IN)))

    # a timeout is the client's: its note stands on the client's lifeline
    drawn = [(n, m, *((f"c:{m.client}", f"b:{m.broker}") if m.kind == "request"
                      or m.note is not None else (f"b:{m.broker}", f"c:{m.client}")))
             for n, m in enumerate(chosen)]
    drawn = [d for d in drawn if d[2] in x]
    texts = {n: text_of(m, src, dst) for n, m, src, dst in drawn}
    step = _ROW + (0.1 if any("\n" in t for t in texts.values()) else 0.0)
    depth = (len(ends) + 1) * step
    window = (f"{start_ms if start_ms is not None else 0} ms – "
              + (f"{end_ms} ms" if end_ms is not None else "end"))
    heading = wrap(title or f"Requests and responses, {window}", 90)
    if derived:
        heading += ("\n(derived from the consumers' log lines: no Heartbeat, no arrival times;"
                    "\ncall record_requests(cluster) before running for the full picture)")
    lines = ["digraph \"sequence\" {",
             f'  graph [splines=false, outputorder=edgesfirst, fontname="Helvetica", '
             f'fontsize=11, labelloc=t, label={_q(heading)}];',
             '  node [fontname="Helvetica", fontsize=11];',
             '  edge [fontname="Helvetica", fontsize=9, arrowsize=0.6];']
    tight = ", fontsize=10, margin=\"0.04,0.04\"" if gap < 1.2 else ""
    for i, (key, label) in enumerate(lanes):
        lines.append(f'  "h{i}" [shape=box, style="rounded,filled", fillcolor="#eceff1", '
                     f'label={_q(label)}, pos="{x[key]:.2f},0!"{tight}];')
        lines.append(f'  "f{i}" [shape=point, width=0.01, label="", pos="{x[key]:.2f},'
                     f'{-depth:.2f}!"];')
        lines.append(f'  "h{i}" -> "f{i}" [style=dashed, arrowhead=none, color="#b0bec5"];')
    last_ms = None
    for p in ends:
        if p[0] != last_ms:
            lines.append(f'  "t{row[p]}" [shape=plaintext, fontsize=9, label="{p[0]} ms", '
                         f'pos="{_TIME_X:.2f},{-row[p] * step:.2f}!"];')
            last_ms = p[0]
    for n, m, src, dst in drawn:
        colour = API_COLOURS[m.api]
        error = m.error not in (None, "NONE")
        fontcolor = _ERROR_COLOUR if error or m.end is None else colour
        attrs = [f'color="{colour}"']
        if m.kind == "response":
            attrs.append("style=dashed")
        a = f"m{n}a"
        y0 = -row[m.start] * step
        lines.append(f'  "{a}" [shape=point, width=0.04, color="{colour}", label="", '
                     f'pos="{x[src]:.2f},{y0:.2f}!"];')
        if m.note is None:
            # The label stands just above the arrow's first end, on the side it leaves to: the
            # arrow slopes down from there, so it never runs through its own label.
            text = texts[n]
            width = max(len(t) for t in text.split("\n")) * _CHAR_IN
            rightwards = dst not in x or x[dst] >= x[src]
            lx = x[src] + (width / 2 + 0.08) * (1 if rightwards else -1)
            ly = y0 + 0.1 + 0.07 * text.count("\n")
            lines.append(f'  "{a}l" [shape=plaintext, fontsize=9, fontcolor="{fontcolor}", '
                         f'label={_q(text)}, margin=0, width=0, height=0, '
                         f'pos="{lx:.2f},{ly:.2f}!"];')
        if m.note is not None:
            lines.append(f'  "{a}n" [shape=note, fontsize=9, color="{_ERROR_COLOUR}", '
                         f'label={_q(wrap(m.note, 40))}, pos="{x[src] + 1.2:.2f},'
                         f'{-row[m.start] * step:.2f}!"];')
            continue
        if m.end is None:  # lost on the way: stop half way, with a cross
            mid_x = (x[src] + x[dst]) / 2 if dst in x else x[src] + gap / 2
            lines.append(f'  "{a}x" [shape=plaintext, label="✕", fontcolor="{_ERROR_COLOUR}", '
                         f'pos="{mid_x:.2f},{-row[m.start] * step:.2f}!"];')
            lines.append(f'  "{a}" -> "{a}x" [{", ".join(attrs)}, arrowhead=none];')
            continue
        b = f"m{n}b"
        lines.append(f'  "{b}" [shape=point, width=0.04, color="{colour}", label="", '
                     f'pos="{x[dst]:.2f},{-row[m.end] * step:.2f}!"];')
        lines.append(f'  "{a}" -> "{b}" [{", ".join(attrs)}];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def sequence_diagram(source: Any, **window: Any) -> Diagram:
    """`sequence_dot` as a `Diagram` laid out by `neato` (a picture in Jupyter, also in an
    untrusted notebook)."""
    return Diagram(sequence_dot(source, **window), engine="neato")


def second_joins_sequence(seed: int = 0) -> str:
    """The rebalance of the "second-joins" scenario, requests recorded: `consumer-2` joins a
    stable one-member group at 10 s; drawn from 10 000 to 12 200 ms (diagrams/)."""
    from ..scenarios import new_cluster

    cluster = new_cluster(seed)
    record_requests(cluster)
    cluster.add_consumer("consumer-1")
    cluster.run_for(10_000)
    cluster.add_consumer("consumer-2")
    cluster.run_for(10_000)
    return sequence_dot(cluster, start_ms=10_000, end_ms=12_200,
                        title="A second consumer joins a stable group (scenario second-joins, "
                              "seed 0), 10 000 – 12 200 ms")
