"""A control panel for a `Cluster`: break it, move time, watch what happens.

`ControlPanel(cluster)` is a thin ipywidgets layer over the cluster's own fault and time methods.
Every action runs on virtual time and then refreshes the views: the live diagrams (group, selected
member, coordinator context of the group's `__consumer_offsets` partition), the member table, the
tail of the Kafka-format log and the member-state timeline. Misuse (crashing a consumer that is
already down, moving a partition to its own leader...) is shown in the panel's message line and
kept in `panel.last_error`; it is never raised into the notebook.

In a notebook::

    from coordinator_kit.scenarios import run_scenario
    from coordinator_kit.viz import ControlPanel
    panel = ControlPanel(run_scenario("second-joins"))
    display(panel)      # or leave `panel` as the cell's last expression

Its text/plain form is `repr(panel)` (no model id, no address), so a cell that shows it is stable
under nbval; the widget view itself is `application/vnd.jupyter.widget-view+json`, which nbval
never compares.

Names the tests, the browser test and the notebook helpers rely on (attribute: CSS class):

Consumer
    consumer_select: ck-consumer-select (Dropdown of consumer names)
    crash_button: ck-crash              pause_ms: ck-pause-ms (IntText)
    pause_button: ck-pause              resume_button: ck-resume
    drop_heartbeats_button: ck-drop-heartbeats
    restore_heartbeats_button: ck-restore-heartbeats
    processing_ms: ck-processing-ms (IntText)    slow_poll_button: ck-slow-poll
    cut_off_button: ck-cut-off          reconnect_button: ck-reconnect
    leave_button: ck-leave              new_consumer_name: ck-new-consumer (Text)
    add_button: ck-add
Coordinator
    partition_select: ck-partition-select (Dropdown of `__consumer_offsets` partition numbers)
    broker_select: ck-broker-select (Dropdown of broker ids)
    move_button: ck-move-coordinator    fail_load_button: ck-fail-load
    fail_append_button: ck-fail-append  stall_button: ck-stall-replica
    unstall_button: ck-resume-replica
Time
    step_button: ck-step                advance_ms: ck-advance-ms (IntText)
    advance_button: ck-advance          play: ck-play (ipywidgets.Play; each new value = tick())
    play_step_ms: ck-play-step-ms (IntText: virtual ms per tick)
    refresh_button: ck-refresh          log_level: ck-log-level (Dropdown)
Views (ipywidgets.HTML; `.value` holds the HTML)
    status: ck-status                   message: ck-message (ck-error added on an error)
    group_diagram: ck-diagram ck-group-diagram
    member_diagram: ck-diagram ck-member-diagram
    context_diagram: ck-diagram ck-context-diagram
    member_table: ck-member-table (one <tr data-client="..."> per consumer, cells with classes
                  ck-client, ck-state, ck-generation, ck-assignment, ck-last-heartbeat, ck-status)
    log_tail: ck-log-tail (a <pre> of Kafka log lines)
    timeline: ck-timeline (SVG swimlanes of member states)
    widget: ck-panel (the VBox holding all of the above)

Each diagram's DOT text is kept in `panel.dots` ("group", "member", "context"), so a test can
check the highlights without rendering. Without the `dot` binary the diagrams show their DOT text.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from ..cluster import Cluster
from ..topic import TopicPartition
from .live import context_dot, group_dot, member_dot
from .plots import figure_svg, swimlanes

__all__ = ["ControlPanel", "resume_consumer"]


def resume_consumer(cluster: Cluster, name: str) -> None:
    """End a consumer's stop-the-world pause now (`Consumer.resume()`): the work the pause held
    back runs now, in its original order."""
    cluster.resume(name)


_DIAGRAM_CACHE: dict[str, str] = {}
_DIAGRAM_CACHE_SIZE = 128


def _svg_of(dot_text: str) -> str:
    """Inline SVG for DOT text (cached); the DOT text itself when `dot` is not installed."""
    cached = _DIAGRAM_CACHE.get(dot_text)
    if cached is not None:
        return cached
    binary = shutil.which("dot")
    if binary is None:
        return f"<pre>{html.escape(dot_text)}</pre>"
    svg = subprocess.run([binary, "-Tsvg"], input=dot_text, capture_output=True, text=True,
                         check=True).stdout
    svg = _fit(svg[svg.find("<svg"):])  # drop the XML prolog, doctype and version comment
    if len(_DIAGRAM_CACHE) >= _DIAGRAM_CACHE_SIZE:
        _DIAGRAM_CACHE.pop(next(iter(_DIAGRAM_CACHE)))
    _DIAGRAM_CACHE[dot_text] = svg
    return svg


_SVG_WIDTH = re.compile(r'\swidth="([\d.]+)pt"')
_SVG_HEIGHT = re.compile(r'\sheight="[\d.]+pt"')


def _fit(svg: str) -> str:
    """Let an SVG shrink to the panel's width (its viewBox keeps the proportions)."""
    end = svg.find(">")
    tag = _SVG_WIDTH.sub(lambda m: f' width="100%" style="max-width:{m.group(1)}pt"',
                         svg[:end], count=1)
    return _SVG_HEIGHT.sub("", tag, count=1) + svg[end:]


def _button(description: str, css: str, tooltip: str, style: str = "") -> widgets.Button:
    b = widgets.Button(description=description, tooltip=tooltip, button_style=style,
                       layout=widgets.Layout(width="auto", flex="0 0 auto"))
    b.add_class(css)
    return b


def _int(description: str, value: int, css: str, minimum: int = 0) -> widgets.BoundedIntText:
    w = widgets.BoundedIntText(value=value, min=minimum, max=10**9, description=description,
                               style={"description_width": "initial"},
                               layout=widgets.Layout(width="190px"))
    w.add_class(css)
    return w


_NARROW = {"width": "230px"}


def _members(n: int) -> str:
    return f"{n} member" + ("" if n == 1 else "s")


def _html(*css: str) -> widgets.HTML:
    w = widgets.HTML()
    for c in css:
        w.add_class(c)
    return w


class ControlPanel:
    """Widgets bound to one `Cluster` (see the module docstring for every widget's name)."""

    def __init__(self, cluster: Cluster, *, group_id: str | None = None, log_lines: int = 20,
                 timeline: bool = True, timeline_window_ms: int | None = None) -> None:
        if log_lines < 1:
            raise ValueError(f"log_lines must be at least 1, got {log_lines}")
        self.cluster = cluster
        self._group_id = group_id
        self.log_lines = log_lines
        self.show_timeline = timeline
        self.timeline_window_ms = timeline_window_ms
        self.actions: list[str] = []
        self.last_error: Exception | None = None
        self.dots: dict[str, str] = {}
        self._refreshing = False

        # -- consumer controls ---------------------------------------------------------------
        names = list(cluster.consumers)
        self.consumer_select = widgets.Dropdown(options=names, value=names[0] if names else None,
                                                description="consumer", layout=_NARROW)
        self.consumer_select.add_class("ck-consumer-select")
        self.crash_button = _button("Crash", "ck-crash", "The process dies: no LeaveGroup; "
                                    "the coordinator notices at session.timeout.ms", "danger")
        self.pause_ms = _int("pause (ms)", 60_000, "ck-pause-ms", 1)
        self.pause_button = _button("Pause (GC)", "ck-pause", "A stop-the-world pause: no poll, "
                                    "no heartbeat", "warning")
        self.resume_button = _button("Resume", "ck-resume", "End the pause now")
        self.drop_heartbeats_button = _button("Drop heartbeats", "ck-drop-heartbeats",
                                              "Heartbeat requests are lost on the network",
                                              "warning")
        self.restore_heartbeats_button = _button("Restore heartbeats", "ck-restore-heartbeats",
                                                 "Heartbeats reach the coordinator again")
        self.processing_ms = _int("poll every (ms)", 400_000, "ck-processing-ms")
        self.slow_poll_button = _button("Slow poll", "ck-slow-poll", "Time the application "
                                        "spends between two polls (max.poll.interval.ms)",
                                        "warning")
        self.cut_off_button = _button("Cut off", "ck-cut-off", "Every message to and from this "
                                      "consumer is lost", "warning")
        self.reconnect_button = _button("Reconnect", "ck-reconnect", "Restore its network")
        self.leave_button = _button("Leave group", "ck-leave", "Close the consumer: commit, then "
                                    "LeaveGroup (a static member sends none)")
        self.new_consumer_name = widgets.Text(value=self._next_name(), description="new",
                                              layout=widgets.Layout(width="220px"))
        self.new_consumer_name.add_class("ck-new-consumer")
        self.add_button = _button("Add consumer", "ck-add", "Start a new consumer in the group",
                                  "success")

        # -- coordinator controls ------------------------------------------------------------
        partitions = sorted(tp.partition for tp in cluster.partitions)
        own = cluster.partition_of(self.group_id).partition
        self.partition_select = widgets.Dropdown(options=partitions, value=own,
                                                 description="partition", layout=_NARROW)
        self.partition_select.add_class("ck-partition-select")
        brokers = sorted(cluster.brokers)
        self.broker_select = widgets.Dropdown(options=brokers, value=self._other_broker(own),
                                              description="broker", layout=_NARROW)
        self.broker_select.add_class("ck-broker-select")
        self.move_button = _button("Move coordinator", "ck-move-coordinator", "Elect the chosen "
                                   "broker leader of the partition: unload here, load there",
                                   "warning")
        self.fail_load_button = _button("Fail next load", "ck-fail-load", "The chosen broker's "
                                        "next load of the partition fails")
        self.fail_append_button = _button("Fail next append", "ck-fail-append", "The "
                                          "partition's next append fails (KAFKA_STORAGE_ERROR)")
        self.stall_button = _button("Stall replica", "ck-stall-replica", "The chosen broker's "
                                    "replica stops fetching: the high watermark stops")
        self.unstall_button = _button("Resume replica", "ck-resume-replica", "The replica "
                                      "fetches again")

        # -- time ----------------------------------------------------------------------------
        self.step_button = _button("Step one event", "ck-step", "Run the next scheduled callback")
        self.advance_ms = _int("advance (ms)", 1_000, "ck-advance-ms", 1)
        self.advance_button = _button("Advance", "ck-advance", "Run everything due in the next "
                                      "N virtual ms", "info")
        self.play = widgets.Play(value=0, min=0, max=10**9, step=1, interval=500,
                                 description="play", show_repeat=False)
        self.play.add_class("ck-play")
        self.play_step_ms = _int("ms per tick", 500, "ck-play-step-ms", 1)
        self.refresh_button = _button("Refresh", "ck-refresh", "Redraw the views (after running "
                                      "the cluster from code)")
        self.log_level = widgets.Dropdown(options=["DEBUG", "INFO", "WARN", "ERROR"],
                                          value="INFO", description="log level", layout=_NARROW)
        self.log_level.add_class("ck-log-level")

        # -- views ---------------------------------------------------------------------------
        self.status = _html("ck-status")
        self.message = _html("ck-message")
        self.group_diagram = _html("ck-diagram", "ck-group-diagram")
        self.member_diagram = _html("ck-diagram", "ck-member-diagram")
        self.context_diagram = _html("ck-diagram", "ck-context-diagram")
        self.member_table = _html("ck-member-table")
        self.log_tail = _html("ck-log-tail")
        self.timeline = _html("ck-timeline")

        self._wire()
        def row(children: list[widgets.Widget]) -> widgets.HBox:
            return widgets.HBox(children, layout=widgets.Layout(flex_flow="row wrap",
                                                                align_items="center"))

        self.widget = widgets.VBox([
            self.status,
            row([self.consumer_select, self.crash_button, self.pause_ms, self.pause_button,
                 self.resume_button]),
            row([self.drop_heartbeats_button, self.restore_heartbeats_button,
                 self.processing_ms, self.slow_poll_button, self.cut_off_button,
                 self.reconnect_button, self.leave_button]),
            row([self.new_consumer_name, self.add_button]),
            row([self.partition_select, self.broker_select, self.move_button,
                 self.fail_load_button, self.fail_append_button, self.stall_button,
                 self.unstall_button]),
            row([self.step_button, self.advance_ms, self.advance_button, self.play,
                 self.play_step_ms, self.refresh_button, self.log_level]),
            self.message,
            self.group_diagram, self.member_diagram, self.context_diagram,
            self.member_table, self.timeline, self.log_tail,
        ])
        self.widget.add_class("ck-panel")
        self.refresh()

    # -- naming ---------------------------------------------------------------------------------

    @property
    def selected(self) -> str | None:
        return self.consumer_select.value

    @property
    def group_id(self) -> str:
        """The panel's group: fixed at construction, else the selected consumer's."""
        if self._group_id is not None:
            return self._group_id
        name = self.consumer_select.value if hasattr(self, "consumer_select") else None
        if name is None:
            return next((c.config.group_id for c in self.cluster.consumers.values()), "group-1")
        return self.cluster.consumer(name).config.group_id

    def _next_name(self) -> str:
        i = len(self.cluster.consumers) + 1
        while f"consumer-{i}" in self.cluster.consumers:
            i += 1
        return f"consumer-{i}"

    def _other_broker(self, partition: int) -> int:
        p = self.cluster.partitions[TopicPartition.offsets(partition)]
        others = [b for b in p.isr if b != p.leader_id] or \
            [b for b in sorted(self.cluster.brokers) if b != p.leader_id] or [p.leader_id]
        return others[0]

    # -- wiring ---------------------------------------------------------------------------------

    def _wire(self) -> None:
        c = self.cluster
        on = self._on_click
        on(self.crash_button, "crash {name}", lambda n: c.crash(n))
        on(self.pause_button, "pause {name}", lambda n: c.pause(n, self.pause_ms.value),
           detail=lambda: f" for {self.pause_ms.value} ms")
        on(self.resume_button, "resume {name}", lambda n: resume_consumer(c, n))
        on(self.drop_heartbeats_button, "drop heartbeats of {name}",
           lambda n: c.drop_heartbeats(n, True))
        on(self.restore_heartbeats_button, "restore heartbeats of {name}",
           lambda n: c.drop_heartbeats(n, False))
        on(self.slow_poll_button, "slow the poll of {name}",
           lambda n: c.slow_poll(n, self.processing_ms.value),
           detail=lambda: f" to every {self.processing_ms.value} ms")
        on(self.cut_off_button, "cut off {name}", lambda n: c.cut_off(n, True))
        on(self.reconnect_button, "reconnect {name}", lambda n: c.cut_off(n, False))
        on(self.leave_button, "close {name} (leave the group)", lambda n: c.leave(n))
        self.add_button.on_click(lambda _b: self.add_consumer())
        p, b = self.partition_select, self.broker_select
        self._on_coordinator(self.move_button, lambda: "move __consumer_offsets-"
                             f"{p.value} to broker {b.value} (leader epoch "
                             f"{c.move_coordinator(p.value, b.value)})")
        self._on_coordinator(self.fail_load_button, lambda: (
            c.fail_next_load(p.value, b.value),
            f"fail the next load of __consumer_offsets-{p.value} on broker {b.value}")[1])
        self._on_coordinator(self.fail_append_button, lambda: (
            c.fail_next_append(p.value),
            f"fail the next append to __consumer_offsets-{p.value}")[1])
        self._on_coordinator(self.stall_button, lambda: (
            c.stall_replica(p.value, b.value, True),
            f"stall the replica of __consumer_offsets-{p.value} on broker {b.value}")[1])
        self._on_coordinator(self.unstall_button, lambda: (
            c.stall_replica(p.value, b.value, False),
            f"resume the replica of __consumer_offsets-{p.value} on broker {b.value}")[1])
        self.step_button.on_click(lambda _b: self.step())
        self.advance_button.on_click(lambda _b: self.advance(self.advance_ms.value))
        self.refresh_button.on_click(lambda _b: self.refresh())
        self.play.observe(self._on_play, names="value")
        self.consumer_select.observe(self._on_select, names="value")
        self.log_level.observe(lambda _c: self.refresh(), names="value")
        self.partition_select.observe(self._on_partition, names="value")

    def _on_click(self, button: widgets.Button, what: str, act: Callable[[str], None],
                  detail: Callable[[], str] | None = None) -> None:
        def handler(_b: Any) -> None:
            name = self.selected
            text = what.format(name=name) + (detail() if detail else "")
            if name is None:
                self._failed(text, ValueError("no consumer selected; add one first"))
                return
            self._run(text, lambda: act(name))
        button.on_click(handler)

    def _on_coordinator(self, button: widgets.Button, act: Callable[[], str]) -> None:
        def handler(_b: Any) -> None:
            label = button.description.lower()
            self._run(label, act)
        button.on_click(handler)

    def _on_play(self, change: dict[str, Any]) -> None:
        if change["new"] > change["old"]:  # the Play widget's stop button rewinds: no tick
            self.tick()

    def _on_select(self, _change: dict[str, Any]) -> None:
        if not self._refreshing:
            self.refresh()

    def _on_partition(self, change: dict[str, Any]) -> None:
        self.broker_select.value = self._other_broker(change["new"])

    # -- actions --------------------------------------------------------------------------------

    def _run(self, what: str, act: Callable[[], Any]) -> bool:
        """Run one action, record it, refresh; an error is shown, not raised."""
        now = self.cluster.scheduler.now
        try:
            result = act()
        except Exception as exc:  # noqa: BLE001 - every misuse must reach the learner, not a traceback
            self._failed(what, exc)
            return False
        text = result if isinstance(result, str) else what
        self.last_error = None
        self.actions.append(f"{now} ms: {text}")
        self._say(f"{now} ms: {text}")
        self.refresh()
        return True

    def _failed(self, what: str, exc: Exception) -> None:
        self.last_error = exc
        detail = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        self.actions.append(f"{self.cluster.scheduler.now} ms: {what} refused: {detail}")
        self.message.value = (f'<span style="color:#c62828">⚠ {html.escape(what)}: '
                              f"{html.escape(str(detail))}</span>")
        self.message.add_class("ck-error")
        self.refresh()

    def _say(self, text: str) -> None:
        self.message.remove_class("ck-error")
        self.message.value = html.escape(text)

    def add_consumer(self, name: str | None = None, **config: Any) -> bool:
        """Start a new consumer in the panel's group and select it (the Add button)."""
        name = (name or self.new_consumer_name.value or "").strip() or self._next_name()
        group = self.group_id
        ok = self._run(f"add {name} to {group}",
                       lambda: self.cluster.add_consumer(name, group_id=group, **config))
        if ok:
            self.new_consumer_name.value = self._next_name()
            self.consumer_select.value = name  # refreshes the views for the new consumer
        return ok

    def step(self) -> bool:
        """Run exactly one scheduled callback (one scheduler step)."""
        sched = self.cluster.scheduler
        pending = sched.pending()
        if not pending:
            self._failed("step", ValueError("nothing is scheduled"))
            return False
        label = pending[0].name or "callback"
        return self._run(f"step: ran {label} (due at {pending[0].when} ms)", sched.step)

    def advance(self, ms: int) -> bool:
        """Run everything due in the next `ms` virtual milliseconds."""
        if isinstance(ms, bool) or not isinstance(ms, int) or ms < 1:
            self._failed("advance", ValueError(f"advance by at least 1 ms, got {ms!r}"))
            return False
        start = self.cluster.scheduler.now
        return self._run(f"advance {ms} ms ({start} → {start + ms} ms)",
                         lambda: self.cluster.run_for(ms))

    def tick(self) -> bool:
        """One tick of play: advance `play_step_ms` (the Play widget calls this per value)."""
        return self.advance(self.play_step_ms.value)

    # -- views ----------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Redraw every view from the cluster as it is now."""
        c = self.cluster
        names = list(c.consumers)
        if list(self.consumer_select.options) != names:
            keep = self.consumer_select.value
            self._refreshing = True
            try:
                self.consumer_select.options = names
                self.consumer_select.value = keep if keep in names else (names[0] if names
                                                                         else None)
            finally:
                self._refreshing = False
        gid = self.group_id
        group = c.group(gid)
        broker = c.coordinator_for(gid)
        self.status.value = (
            f"<b>t = {c.scheduler.now} ms</b> · {html.escape(gid)}: {group['state']} "
            f"(generation {group['generation']}, {_members(len(group['members']))}) · "
            f"coordinator: broker {broker} ({c.partition_of(gid)})<br>"
            + html.escape(c.partitions[TopicPartition.offsets(self.partition_select.value)]
                          .why_not_committed()))
        self.dots["group"] = group_dot(c, gid)
        self.group_diagram.value = _svg_of(self.dots["group"])
        if self.selected is not None:
            self.dots["member"] = member_dot(c, self.selected)
            self.member_diagram.value = _svg_of(self.dots["member"])
        else:
            self.dots.pop("member", None)
            self.member_diagram.value = "<i>no consumer yet: add one</i>"
        self.dots["context"] = context_dot(c, gid)
        self.context_diagram.value = _svg_of(self.dots["context"])
        self.member_table.value = self._member_table_html()
        lines = c.log_lines(self.log_level.value)[-self.log_lines:]
        self.log_tail.value = ("<pre style=\"font-size:11px; white-space:pre-wrap\">"
                               + html.escape("\n".join(lines)) + "</pre>")
        if self.show_timeline:
            self.timeline.value = self._timeline_svg()

    def _member_table_html(self) -> str:
        now = self.cluster.scheduler.now
        head = ('<style>.ck-member-table table {border-collapse: collapse; font-size: 12px} '
                '.ck-member-table th, .ck-member-table td {padding: 2px 8px; text-align: left; '
                'white-space: nowrap} .ck-member-table td.ck-member-id, .ck-member-table '
                'td.ck-assignment {white-space: normal}</style>'
                "<table><thead><tr><th>consumer</th><th>state</th><th>generation</th>"
                "<th>member id</th><th>assignment</th><th>last heartbeat</th>"
                "<th>coordinator</th><th>process</th></tr></thead><tbody>")
        rows = []
        for name, consumer in self.cluster.consumers.items():
            d = consumer.describe()
            process = ("crashed" if consumer.crashed else "paused" if d["paused"]
                       else "running" if d["alive"] else "stopped")
            if name in self.cluster.network.cut:
                process += ", cut off"
            if consumer.drop_heartbeats:
                process += ", dropping heartbeats"
            hb = d["last_heartbeat_ms"]
            style = ' style="font-weight:bold"' if name == self.selected else ""
            rows.append(
                f'<tr data-client="{html.escape(name)}"{style}>'
                f'<td class="ck-client">{html.escape(name)}</td>'
                f'<td class="ck-state">{d["state"]}</td>'
                f'<td class="ck-generation">{d["generation"]}</td>'
                f'<td class="ck-member-id">{html.escape(d["member_id"] or "-")}</td>'
                f'<td class="ck-assignment">{html.escape(", ".join(d["assignment"]) or "-")}</td>'
                f'<td class="ck-last-heartbeat">{hb} ms ({now - hb} ms ago)</td>'
                f'<td class="ck-coordinator">{d["coordinator"]}</td>'
                f'<td class="ck-status">{process}</td></tr>')
        return head + "".join(rows) + "</tbody></table>"

    def _timeline_svg(self) -> str:
        now = self.cluster.scheduler.now
        start = None if self.timeline_window_ms is None else max(0, now - self.timeline_window_ms)
        fig = swimlanes(self.cluster.trace, groups=(self.group_id,), start_ms=start, end_ms=now)
        svg = figure_svg(fig)
        return _fit(svg[svg.find("<svg"):])

    # -- display --------------------------------------------------------------------------------

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = repr(self)
        return bundle

    def __repr__(self) -> str:
        return (f"ControlPanel({len(self.cluster.consumers)} consumers, group "
                f"{self.group_id!r}, t={self.cluster.scheduler.now} ms)")
