"""A control panel around the cluster view: break the cluster, move time both ways, fork.

`ControlPanel(cluster)` puts compact controls above one picture of the whole cluster (the
`ClusterView`: brokers, `__consumer_offsets` partitions, groups, consumers, the timers that
decide membership running down, requests in flight), so that a click and its effect are on one
screen. Every action goes through a `coordinator_kit.recording.Recording`, so the panel can go
back: a scrubber over the run's virtual time, one move back or forward, the next or previous
event that matters, and fork (acting in the past starts a new branch; the old one is kept).
Tabs below the view hold the state diagrams (the moves since the last action numbered), the
member table, Kafka's log lines, the swimlane timeline, a side-by-side comparison of two
branches, and "predict, then reveal" questions checked against the run itself.

Misuse (crashing a consumer that is already down, moving a partition to its own leader...) is
shown in the panel's message line and kept in `panel.last_error`; it is never raised into the
notebook, and it leaves the run as it was.

In a notebook::

    from coordinator_kit.scenarios import run_scenario
    from coordinator_kit.viz import ControlPanel
    panel = ControlPanel(run_scenario("second-joins"))
    panel                       # the cell's last expression shows it

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
    back_button: ck-step-back           step_button: ck-step
    previous_button: ck-previous-event  next_button: ck-next-event
    advance_ms: ck-advance-ms (IntText) advance_button: ck-advance
    play: ck-play (ipywidgets.Play; each new value = tick())
    play_step_ms: ck-play-step-ms (IntText: virtual ms per tick)
    scrubber: ck-scrubber (IntSlider over the branch's computed virtual time; moving it seeks)
    refresh_button: ck-refresh          log_level: ck-log-level (Dropdown)
Branches
    fork_button: ck-fork                branch_select: ck-branch-select (Dropdown)
    compare_select: ck-compare-select (Dropdown: the branch shown beside the current one)
Views (ipywidgets.HTML; `.value` holds the HTML)
    status: ck-status                   message: ck-message (ck-error added on an error)
    view: ck-cluster-view (the ClusterView's widget: one SVG with data-* attributes)
    group_diagram: ck-diagram ck-group-diagram
    member_diagram: ck-diagram ck-member-diagram
    context_diagram: ck-diagram ck-context-diagram
    member_table: ck-member-table (one <tr data-client="..."> per consumer, cells with classes
                  ck-client, ck-state, ck-generation, ck-assignment, ck-last-heartbeat, ck-status)
    log_tail: ck-log-tail (a <pre> of Kafka log lines)
    timeline: ck-timeline (SVG swimlanes of member states)
    compare: ck-compare (the two branches side by side)
    question_select: ck-question-select (Dropdown)   answer: ck-answer (Text)
    check_button: ck-check              feedback: ck-feedback
    tabs: ck-tabs (Cluster, Diagrams, Members, Log, Timeline, Compare, Predict)
    widget: ck-panel (the VBox holding all of the above)

Each diagram's DOT text is kept in `panel.dots` ("group", "member", "context"), so a test can
check the highlights without rendering. Tabs draw lazily: the diagrams, the timeline and the
comparison are drawn when their tab is shown (or by `render_all()`). Without the `dot` binary
the diagrams show their DOT text.
"""

from __future__ import annotations

import html
import shutil
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from ..cluster import Cluster
from ..predict import Question, questions_for, reveal
from ..logs.layout import DEFAULT_START, format_timestamp
from ..recording import ACTIONS, Recording
from ..topic import TopicPartition
from .cluster_view import ClusterView
from .diagrams import svg_of
from .live import context_dot, group_dot, member_dot
from .plots import figure_svg, swimlanes

__all__ = ["ControlPanel", "resume_consumer"]


def resume_consumer(cluster: Cluster, name: str) -> None:
    """End a consumer's stop-the-world pause now (`Consumer.resume()`): the work the pause held
    back runs now, in its original order."""
    cluster.resume(name)


def _svg(dot_text: str) -> str:
    if shutil.which("dot") is None:
        return f"<pre>{html.escape(dot_text)}</pre>"
    return svg_of(dot_text, fit=True)


def _button(description: str, css: str, tooltip: str, style: str = "",
            width: str = "auto") -> widgets.Button:
    b = widgets.Button(description=description, tooltip=tooltip, button_style=style,
                       layout=widgets.Layout(width=width, flex="0 0 auto", height="26px",
                                             margin="1px 2px"))
    b.add_class(css)
    return b


def _int(description: str, value: int, css: str, minimum: int = 0, *, tooltip: str = "",
         width: str = "150px") -> widgets.BoundedIntText:
    w = widgets.BoundedIntText(value=value, min=minimum, max=10**9, description=description,
                               tooltip=tooltip, style={"description_width": "initial"},
                               layout=widgets.Layout(width=width, height="26px"))
    w.add_class(css)
    return w


def _dropdown(options: list[Any], value: Any, description: str, css: str,
              width: str = "170px") -> widgets.Dropdown:
    w = widgets.Dropdown(options=options, value=value, description=description,
                         style={"description_width": "initial"},
                         layout=widgets.Layout(width=width, height="26px"))
    w.add_class(css)
    return w


def _members(n: int) -> str:
    return f"{n} member" + ("" if n == 1 else "s")


def _html(*css: str) -> widgets.HTML:
    w = widgets.HTML()
    for c in css:
        w.add_class(c)
    return w


def _row(children: list[widgets.Widget], label: str = "") -> widgets.HBox:
    items = list(children)
    if label:
        head = widgets.HTML(f"<b style='font-size:12px'>{html.escape(label)}</b>",
                            layout=widgets.Layout(width="84px", flex="0 0 auto"))
        items.insert(0, head)
    return widgets.HBox(items, layout=widgets.Layout(flex_flow="row wrap", align_items="center",
                                                     width="100%"))


def _hint(name: str) -> str:
    return ACTIONS[name].hint


# Compact controls: the view below them should start high on the screen.
_STYLE = """<style>
.ck-panel .jupyter-button, .ck-panel .widget-button {font-size: 12px; padding: 0 7px;
  height: 26px; line-height: 26px}
.ck-panel .widget-text input, .ck-panel .widget-dropdown select,
.ck-panel .widget-inline-hbox .widget-label {font-size: 12px}
.ck-panel .widget-inline-hbox {margin-top: 1px; margin-bottom: 1px}
.ck-panel .ck-status, .ck-panel .ck-message {font-size: 12px; line-height: 16px}
</style>"""

_TABS = ("Cluster", "Diagrams", "Members", "Log", "Timeline", "Compare", "Predict")


class ControlPanel:
    """Widgets bound to one run of a `Cluster` (see the module docstring for every name)."""

    def __init__(self, source: Cluster | Recording, *, group_id: str | None = None,
                 log_lines: int = 20, timeline: bool = True,
                 timeline_window_ms: int | None = None) -> None:
        if isinstance(log_lines, bool) or not isinstance(log_lines, int) or log_lines < 1:
            raise ValueError(f"log_lines must be a whole number at least 1, got {log_lines!r}")
        if isinstance(source, Recording):
            self.recording = source
        elif isinstance(source, Cluster):
            self.recording = Recording(source)
        else:
            raise TypeError(f"ControlPanel needs a Cluster or a Recording, got "
                            f"{type(source).__name__}")
        if group_id is not None and (not isinstance(group_id, str) or not group_id):
            raise TypeError(f"group_id is a group id (a non-empty str), or None for the selected "
                            f"consumer's group, got {group_id!r}")
        cluster = self.cluster
        self._group_id = group_id
        self.log_lines = log_lines
        self.show_timeline = timeline
        self.timeline_window_ms = timeline_window_ms
        self.actions: list[str] = []
        self.last_error: Exception | None = None
        self.dots: dict[str, str] = {}
        self._refreshing = False
        self._dirty: set[str] = set()
        self._questions: dict[str, Question] = {}

        # -- consumer controls ---------------------------------------------------------------
        names = list(cluster.consumers)
        self.consumer_select = _dropdown(names, names[0] if names else None, "",
                                         "ck-consumer-select", "140px")
        self.crash_button = _button("Crash", "ck-crash", _hint("crash"), "danger")
        self.pause_ms = _int("ms", 60_000, "ck-pause-ms", 1, width="100px",
                             tooltip="How long the pause lasts (virtual ms)")
        self.pause_button = _button("Pause (GC)", "ck-pause", _hint("pause"), "warning")
        self.resume_button = _button("Resume", "ck-resume", _hint("resume"))
        self.drop_heartbeats_button = _button("Drop heartbeats", "ck-drop-heartbeats",
                                              _hint("drop_heartbeats"), "warning")
        self.restore_heartbeats_button = _button("Restore heartbeats", "ck-restore-heartbeats",
                                                 "Heartbeats reach the coordinator again.")
        self.processing_ms = _int("poll every (ms)", 400_000, "ck-processing-ms", width="175px",
                                  tooltip="Time the application spends between two polls "
                                  "(virtual ms)")
        self.slow_poll_button = _button("Slow poll", "ck-slow-poll", _hint("slow_poll"),
                                        "warning")
        self.cut_off_button = _button("Cut off", "ck-cut-off", _hint("cut_off"), "warning")
        self.reconnect_button = _button("Reconnect", "ck-reconnect", "Restore the consumer's "
                                        "network: its requests get through again.")
        self.leave_button = _button("Leave group", "ck-leave", _hint("leave"))
        self.new_consumer_name = widgets.Text(value=self._next_name(), description="new",
                                              style={"description_width": "initial"},
                                              layout=widgets.Layout(width="140px",
                                                                    height="26px"))
        self.new_consumer_name.add_class("ck-new-consumer")
        self.add_button = _button("Add consumer", "ck-add", _hint("add_consumer"), "success")

        # -- coordinator controls ------------------------------------------------------------
        partitions = sorted(tp.partition for tp in cluster.partitions)
        own = cluster.partition_of(self.group_id).partition
        self.partition_select = _dropdown(partitions, own, "partition",
                                          "ck-partition-select", "110px")
        brokers = sorted(cluster.brokers)
        self.broker_select = _dropdown(brokers, self._other_broker(own), "broker",
                                       "ck-broker-select", "100px")
        self.move_button = _button("Move coordinator", "ck-move-coordinator",
                                   _hint("move_coordinator"), "warning")
        self.fail_load_button = _button("Fail next load", "ck-fail-load", _hint("fail_next_load"))
        self.fail_append_button = _button("Fail next append", "ck-fail-append",
                                          _hint("fail_next_append"))
        self.stall_button = _button("Stall replica", "ck-stall-replica", _hint("stall_replica"))
        self.unstall_button = _button("Resume replica", "ck-resume-replica", "The broker's "
                                      "replica fetches again and catches up.")

        # -- time ----------------------------------------------------------------------------
        self.back_button = _button("◀ Back", "ck-step-back", "Undo the last move (one "
                                   "scheduler callback or one action): go back one event.")
        self.step_button = _button("Step ▶", "ck-step", "Run the next scheduled callback "
                                   "(deliver the next pending event).")
        self.previous_button = _button("|◀ Previous event", "ck-previous-event", "Back to the "
                                       "last event that mattered (a state change, an error, a "
                                       "rebalance starting or ending).")
        self.next_button = _button("Next event ▶|", "ck-next-event", "Run until the next event "
                                   "that matters (a state change, an error, a rebalance "
                                   "starting or ending).")
        self.advance_ms = _int("ms", 1_000, "ck-advance-ms", 1, width="100px",
                               tooltip="How far Advance moves virtual time")
        self.advance_button = _button("Advance", "ck-advance", "Run everything due in the next "
                                      "N virtual ms.", "info")
        self.play = widgets.Play(value=0, min=0, max=10**9, step=1, interval=500,
                                 show_repeat=False, layout=widgets.Layout(width="110px"))
        self.play.add_class("ck-play")
        self.play_step_ms = _int("ms/tick", 500, "ck-play-step-ms", 1, width="115px",
                                 tooltip="Virtual ms per tick of play")
        self.refresh_button = _button("Refresh", "ck-refresh", "Redraw the views (after running "
                                      "the cluster from code).")
        rec = self.recording
        self.scrubber = widgets.IntSlider(value=rec.position.time, min=rec.start.time,
                                          max=max(rec.frontier.time, rec.start.time + 1),
                                          step=100, description="t (ms)",
                                          continuous_update=False, readout_format=",",
                                          style={"description_width": "initial"},
                                          layout=widgets.Layout(width="600px"))
        self.scrubber.add_class("ck-scrubber")
        self.log_level = _dropdown(["DEBUG", "INFO", "WARN", "ERROR"], "INFO", "log level",
                                   "ck-log-level", "160px")

        # -- branches ------------------------------------------------------------------------
        self.fork_button = _button("Fork here", "ck-fork", "Start a new branch at this instant "
                                   "(the current one is kept); acting in the past forks too.")
        self.branch_select = _dropdown(list(rec.branches), rec.branch.name, "branch",
                                       "ck-branch-select", "160px")
        self.compare_select = _dropdown(["-"], "-", "compare with", "ck-compare-select",
                                        "210px")

        # -- views ---------------------------------------------------------------------------
        self.status = _html("ck-status")
        self.message = _html("ck-message")
        self.cluster_view = ClusterView()
        self.view = self.cluster_view.widget
        self.group_diagram = _html("ck-diagram", "ck-group-diagram")
        self.member_diagram = _html("ck-diagram", "ck-member-diagram")
        self.context_diagram = _html("ck-diagram", "ck-context-diagram")
        self.member_table = _html("ck-member-table")
        self.log_tail = _html("ck-log-tail")
        self.timeline = _html("ck-timeline")
        self.compare = _html("ck-compare")
        self.question_select = _dropdown([], None, "question", "ck-question-select", "98%")
        self.question_form = widgets.HTML()
        self.answer = widgets.Text(description="your answer",
                                   style={"description_width": "initial"},
                                   layout=widgets.Layout(width="360px"))
        self.answer.add_class("ck-answer")
        self.check_button = _button("Check", "ck-check", "Compare your answer with what the "
                                    "run does next (worked out on a copy: this run does not "
                                    "move).", "primary")
        self.feedback = _html("ck-feedback")

        tabs = [
            widgets.VBox([self.view]),
            widgets.VBox([self.group_diagram, self.member_diagram, self.context_diagram]),
            widgets.VBox([self.member_table]),
            widgets.VBox([self.log_level, self.log_tail]),
            widgets.VBox([self.timeline]),
            widgets.VBox([self.compare_select, self.compare]),
            widgets.VBox([self.question_select, self.question_form,
                          widgets.HBox([self.answer, self.check_button]), self.feedback]),
        ]
        self.tabs = widgets.Tab(children=tabs, titles=_TABS)
        self.tabs.add_class("ck-tabs")

        self._wire()
        self.widget = widgets.VBox([
            widgets.HTML(_STYLE),
            self.status,
            _row([self.consumer_select, self.crash_button, self.pause_ms, self.pause_button,
                  self.resume_button, self.drop_heartbeats_button,
                  self.restore_heartbeats_button, self.cut_off_button, self.reconnect_button],
                 "consumer"),
            _row([self.processing_ms, self.slow_poll_button, self.leave_button,
                  self.new_consumer_name, self.add_button], ""),
            _row([self.partition_select, self.broker_select, self.move_button,
                  self.fail_load_button, self.fail_append_button, self.stall_button,
                  self.unstall_button], "coordinator"),
            _row([self.back_button, self.step_button, self.previous_button, self.next_button,
                  self.advance_ms, self.advance_button, self.play, self.play_step_ms,
                  self.refresh_button], "time"),
            _row([self.scrubber, self.fork_button, self.branch_select], ""),
            self.message,
            self.tabs,
        ], layout=widgets.Layout(width="100%", max_width="968px"))
        self.widget.add_class("ck-panel")
        self.refresh()

    # -- naming ---------------------------------------------------------------------------------

    @property
    def cluster(self) -> Cluster:
        """The live cluster (the same object through every rewind)."""
        return self.recording.cluster

    @property
    def selected(self) -> str | None:
        return self.consumer_select.value

    @property
    def group_id(self) -> str:
        """The panel's group: fixed at construction, else the selected consumer's."""
        if self._group_id is not None:
            return self._group_id
        name = self.consumer_select.value if hasattr(self, "consumer_select") else None
        if name is None or name not in self.cluster.consumers:
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
        act = self._act
        on = self._on_click
        on(self.crash_button, "crash {name}", lambda n: act("crash", n))
        on(self.pause_button, "pause {name}", lambda n: act("pause", n, self.pause_ms.value),
           detail=lambda: f" for {self.pause_ms.value} ms")
        on(self.resume_button, "resume {name}", lambda n: act("resume", n))
        on(self.drop_heartbeats_button, "drop heartbeats of {name}",
           lambda n: act("drop_heartbeats", n, True))
        on(self.restore_heartbeats_button, "restore heartbeats of {name}",
           lambda n: act("drop_heartbeats", n, False))
        on(self.slow_poll_button, "slow the poll of {name}",
           lambda n: act("slow_poll", n, self.processing_ms.value),
           detail=lambda: f" to every {self.processing_ms.value} ms")
        on(self.cut_off_button, "cut off {name}", lambda n: act("cut_off", n, True))
        on(self.reconnect_button, "reconnect {name}", lambda n: act("cut_off", n, False))
        on(self.leave_button, "close {name} (leave the group)", lambda n: act("leave", n))
        self.add_button.on_click(lambda _b: self.add_consumer())
        p, b = self.partition_select, self.broker_select
        self._on_coordinator(self.move_button, lambda: "move __consumer_offsets-"
                             f"{p.value} to broker {b.value} (leader epoch "
                             f"{act('move_coordinator', p.value, b.value)})")
        self._on_coordinator(self.fail_load_button, lambda: (
            act("fail_next_load", p.value, b.value),
            f"fail the next load of __consumer_offsets-{p.value} on broker {b.value}")[1])
        self._on_coordinator(self.fail_append_button, lambda: (
            act("fail_next_append", p.value),
            f"fail the next append to __consumer_offsets-{p.value}")[1])
        self._on_coordinator(self.stall_button, lambda: (
            act("stall_replica", p.value, b.value, True),
            f"stall the replica of __consumer_offsets-{p.value} on broker {b.value}")[1])
        self._on_coordinator(self.unstall_button, lambda: (
            act("stall_replica", p.value, b.value, False),
            f"resume the replica of __consumer_offsets-{p.value} on broker {b.value}")[1])
        self.step_button.on_click(lambda _b: self.step())
        self.back_button.on_click(lambda _b: self.step_back())
        self.next_button.on_click(lambda _b: self.next_event())
        self.previous_button.on_click(lambda _b: self.previous_event())
        self.advance_button.on_click(lambda _b: self.advance(self.advance_ms.value))
        self.refresh_button.on_click(lambda _b: self.refresh())
        self.fork_button.on_click(lambda _b: self.fork())
        self.check_button.on_click(lambda _b: self.check())
        self.play.observe(self._on_play, names="value")
        self.scrubber.observe(self._on_scrub, names="value")
        self.consumer_select.observe(self._on_select, names="value")
        self.branch_select.observe(self._on_branch, names="value")
        self.compare_select.observe(lambda _c: self._quiet_or(self._render_compare),
                                    names="value")
        self.question_select.observe(lambda _c: self._quiet_or(self._show_question),
                                     names="value")
        self.log_level.observe(lambda _c: self._quiet_or(self.refresh), names="value")
        self.partition_select.observe(self._on_partition, names="value")
        self.tabs.observe(lambda _c: self._render_tab(), names="selected_index")

    def _act(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return self.recording.act(name, *args, **kwargs)

    def _quiet_or(self, fn: Callable[[], Any]) -> None:
        if not self._refreshing:
            fn()

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
            self._run(button.description.lower(), act)
        button.on_click(handler)

    def _on_play(self, change: dict[str, Any]) -> None:
        if change["new"] > change["old"]:  # the Play widget's stop button rewinds: no tick
            self.tick()

    def _on_select(self, _change: dict[str, Any]) -> None:
        if not self._refreshing:
            self.refresh()

    def _on_partition(self, change: dict[str, Any]) -> None:
        self.broker_select.value = self._other_broker(change["new"])

    def _on_scrub(self, change: dict[str, Any]) -> None:
        if not self._refreshing:
            self.seek(int(change["new"]))

    def _on_branch(self, change: dict[str, Any]) -> None:
        if not self._refreshing and change["new"] is not None:
            self.switch(change["new"])

    # -- actions --------------------------------------------------------------------------------

    def _run(self, what: str, act: Callable[[], Any], *, record: bool = True) -> bool:
        """Run one action, record it, refresh; an error is shown, not raised."""
        now = self.cluster.scheduler.now
        branch = self.recording.branch.name
        try:
            result = act()
        except Exception as exc:  # noqa: BLE001 - every misuse must reach the learner, not a traceback
            self._failed(what, exc)
            return False
        text = result if isinstance(result, str) else what
        if self.recording.branch.name != branch:
            text += f" (a new branch, {self.recording.branch.name!r}: {branch!r} is kept)"
        self.last_error = None
        if record:
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

    def add_consumer(self, name: str | None = None) -> bool:
        """Start a new consumer in the panel's group and select it (the Add button)."""
        name = (name or self.new_consumer_name.value or "").strip() or self._next_name()
        group = self.group_id
        # a new member speaks the protocol the group's consumers speak (KIP-848 or classic)
        modern = any(c.config.group_id == group and c.config.group_protocol == "consumer"
                     for c in self.cluster.consumers.values())
        extra = {"group_protocol": "consumer"} if modern else {}
        ok = self._run(f"add {name} to {group}",
                       lambda: self._act("add_consumer", name, group, **extra))
        if ok:
            self.new_consumer_name.value = self._next_name()
            self.consumer_select.value = name  # refreshes the views for the new consumer
        return ok

    def step(self) -> bool:
        """Run exactly one move: the next scheduled callback (or a recorded action)."""
        pending = self.cluster.scheduler.pending()
        if not pending and self.recording.at_end():
            self._failed("step", ValueError("nothing is scheduled"))
            return False
        label = f"ran {pending[0].name or 'callback'} (due at {pending[0].when} ms)" \
            if pending else "replayed the next move"
        return self._run(f"step: {label}", self.recording.step)

    def step_back(self) -> bool:
        """Undo the last move."""
        if self.recording.position.move == self.recording.start.move:
            self._failed("step back", ValueError("this is where the recording starts"))
            return False
        return self._run("step back one move", self.recording.step_back, record=False)

    def next_event(self) -> bool:
        """Run to just after the next event that matters; the message names it."""
        found: list[Any] = []

        def go() -> str:
            e = self.recording.next_event()
            found.append(e)
            return "next event: none in the next 10 minutes" if e is None else \
                f"next event: {_event_text(e)}"
        return self._run("next event", go, record=False)

    def previous_event(self) -> bool:
        def go() -> str:
            e = self.recording.previous_event()
            if e is None:
                raise ValueError("no earlier event that matters on this branch")
            return f"back to: {_event_text(e)}"
        return self._run("previous event", go, record=False)

    def advance(self, ms: int) -> bool:
        """Run everything due in the next `ms` virtual milliseconds."""
        if isinstance(ms, bool) or not isinstance(ms, int) or ms < 1:
            self._failed("advance", ValueError(f"advance by at least 1 ms, got {ms!r}"))
            return False
        start = self.cluster.scheduler.now
        return self._run(f"advance {ms} ms ({start} → {start + ms} ms)",
                         lambda: self.recording.run_for(ms))

    def tick(self) -> bool:
        """One tick of play: advance `play_step_ms` (the Play widget calls this per value)."""
        return self.advance(self.play_step_ms.value)

    def seek(self, time_ms: int) -> bool:
        """Go to virtual time `time_ms` of this branch (the scrubber calls this)."""
        return self._run(f"go to {time_ms} ms", lambda: self.recording.seek(time_ms),
                         record=False)

    def fork(self, name: str | None = None) -> bool:
        """A new branch from here (the current one is kept)."""
        return self._run("fork", lambda: f"forked {self.recording.fork(name).name!r} at "
                         f"{self.cluster.scheduler.now} ms", record=False)

    def switch(self, name: str) -> bool:
        """Show branch `name`, at the same virtual time when it reaches that far."""
        return self._run(f"switch to branch {name!r}", lambda: self.recording.switch(name),
                         record=False)

    def ask(self, key: str | None = None) -> Question | None:
        """Show the Predict tab with question `key` (see `questions_for`), or the first one."""
        self._refresh_questions()
        if key is not None:
            if key not in self._questions:
                self._failed("ask", ValueError(f"no question {key!r} now; questions: "
                                               f"{', '.join(self._questions)}"))
                return None
            self.question_select.value = key
        self.tabs.selected_index = _TABS.index("Predict")
        self._show_question()
        q = self._questions.get(self.question_select.value)
        return q

    def check(self, answer: Any = None) -> Any:
        """Judge the answer (the text box's, or `answer`) against what the run does next."""
        q = self._questions.get(self.question_select.value)
        if q is None:
            self.feedback.value = "<i>no question selected</i>"
            return None
        given = self.answer.value if answer is None else answer
        feedback, _truth = reveal(self.recording, q, given)
        colour = {"correct": "#2e7d32", "wrong": "#c62828"}.get(feedback.status, "#555")
        self.feedback.value = (f'<div style="color:{colour};font-size:13px;max-width:900px">'
                               f"{html.escape(repr(feedback))}</div>")
        return feedback

    # -- views ----------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Redraw the views from the cluster as it is now (the visible tab at once, the others
        when they are shown)."""
        c = self.cluster
        rec = self.recording
        self._refreshing = True
        try:
            names = list(c.consumers)
            if list(self.consumer_select.options) != names:
                keep = self.consumer_select.value
                self.consumer_select.options = names
                self.consumer_select.value = keep if keep in names else (names[0] if names
                                                                         else None)
            if list(self.branch_select.options) != list(rec.branches):
                self.branch_select.options = list(rec.branches)
            self.branch_select.value = rec.branch.name
            others = ["-"] + [b for b in rec.branches if b != rec.branch.name]
            if list(self.compare_select.options) != others:
                keep = self.compare_select.value
                self.compare_select.options = others
                self.compare_select.value = keep if keep in others and keep != "-" else \
                    (others[1] if len(others) > 1 else "-")
            self.scrubber.max = max(rec.frontier.time, rec.start.time + 1)
            self.scrubber.min = rec.start.time
            self.scrubber.value = c.scheduler.now
            self.new_consumer_name.value = self.new_consumer_name.value or self._next_name()
            self._refresh_questions()
        finally:
            self._refreshing = False
        gid = self.group_id
        broker = c.coordinator_for(gid)
        now = c.scheduler.now
        where = "end" if rec.at_end() else f"computed to {rec.frontier.time:,} ms"
        self.status.value = (
            f"<b>t = {now} ms</b> ({format_timestamp(now, DEFAULT_START)[11:]}) · "
            f"{html.escape(group_line(c, gid))} · coordinator: broker {broker} "
            f"({c.partition_of(gid)}) · branch <b>{html.escape(rec.branch.name)}</b>, move "
            f"{rec.position.move:,} ({where})<br>"
            + html.escape(c.partitions[TopicPartition.offsets(self.partition_select.value)]
                          .why_not_committed()))
        since = self.since_ms
        self.dots["group"] = group_dot(c, gid, since_ms=since)
        if self.selected is not None and self.selected in c.consumers:
            self.dots["member"] = member_dot(c, self.selected, since_ms=since)
        else:
            self.dots.pop("member", None)
        self.dots["context"] = context_dot(c, gid, since_ms=since)
        self.cluster_view.show(c)
        self.member_table.value = self._member_table_html()
        lines = c.log_lines(self.log_level.value)[-self.log_lines:]
        self.log_tail.value = ("<pre style=\"font-size:11px; white-space:pre-wrap\">"
                               + html.escape("\n".join(lines)) + "</pre>")
        self._dirty = {"Diagrams", "Timeline", "Compare"}
        self._render_tab()

    @property
    def since_ms(self) -> int:
        """Where the diagrams start numbering moves: the branch's last action up to now, or
        the recording's start."""
        now = self.recording.position.move
        done = [a for a in self.recording.branch.actions if a.position.move < now]
        return done[-1].position.time if done else self.recording.start.time

    def render_all(self) -> None:
        """Draw every tab now (the panel draws a tab when it is shown)."""
        for tab in ("Diagrams", "Timeline", "Compare"):
            self._render(tab)
        self._dirty.clear()

    def _render_tab(self) -> None:
        index = self.tabs.selected_index
        tab = _TABS[index] if index is not None else "Cluster"
        if tab in self._dirty:
            self._render(tab)
            self._dirty.discard(tab)

    def _render(self, tab: str) -> None:
        if tab == "Diagrams":
            self.group_diagram.value = _svg(self.dots["group"])
            self.member_diagram.value = _svg(self.dots["member"]) if "member" in self.dots \
                else "<i>no consumer yet: add one</i>"
            self.context_diagram.value = _svg(self.dots["context"])
        elif tab == "Timeline":
            self.timeline.value = self._timeline_svg() if self.show_timeline else \
                "<i>the timeline is off for this panel</i>"
        elif tab == "Compare":
            self._render_compare()

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
            generation = (f'epoch {d["member_epoch"]}' if d.get("protocol") == "consumer"
                          else d["generation"])
            rows.append(
                f'<tr data-client="{html.escape(name)}"{style}>'
                f'<td class="ck-client">{html.escape(name)}</td>'
                f'<td class="ck-state">{d["state"]}</td>'
                f'<td class="ck-generation">{generation}</td>'
                f'<td class="ck-member-id">{html.escape(d["member_id"] or "-")}</td>'
                f'<td class="ck-assignment">{html.escape(", ".join(d["assignment"]) or "-")}</td>'
                f'<td class="ck-last-heartbeat">{hb} ms ({now - hb} ms ago)</td>'
                f'<td class="ck-coordinator">{d["coordinator"]}</td>'
                f'<td class="ck-status">{process}</td></tr>')
        return head + "".join(rows) + "</tbody></table>"

    def _timeline_svg(self, cluster: Cluster | None = None, title: str | None = None) -> str:
        c = cluster or self.cluster
        now = c.scheduler.now
        start = None if self.timeline_window_ms is None else max(0, now - self.timeline_window_ms)
        fig = swimlanes(c.trace, groups=(self.group_id,), start_ms=start, end_ms=now,
                        title=title)
        svg = figure_svg(fig)
        return svg[svg.find("<svg"):]

    def _render_compare(self) -> None:
        other = self.compare_select.value
        rec = self.recording
        if other in (None, "-") or other not in rec.branches:
            self.compare.value = ("<i>one branch only: press <b>Fork here</b> (or act at an "
                                  "earlier time) to make another, then pick it here</i>")
            return
        now = self.cluster.scheduler.now
        b = rec.branches[other]
        at = min(now, b.frontier.time)
        twin = rec.cluster_at(other, at)
        self.compare.value = compare_html(self.cluster, rec.branch.name, twin, other,
                                          self.group_id) + \
            self._timeline_svg(title=f"branch {rec.branch.name}") + \
            self._timeline_svg(twin, title=f"branch {other}")

    def _refresh_questions(self) -> None:
        qs = questions_for(self.cluster, self.group_id)
        self._questions = {q.key: q for q in qs}
        options = [(q.text, q.key) for q in qs]
        if list(self.question_select.options) != options:
            keep = self.question_select.value
            self.question_select.options = options
            keys = [k for _t, k in options]
            self.question_select.value = keep if keep in keys else (keys[0] if keys else None)

    def _show_question(self) -> None:
        q = self._questions.get(self.question_select.value)
        self.question_form.value = "" if q is None else \
            f"<span style='font-size:12px;color:#555'>Answer with {html.escape(q.form)}.</span>"
        self.feedback.value = ""

    # -- display --------------------------------------------------------------------------------

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = repr(self)
        return bundle

    def __repr__(self) -> str:
        return (f"ControlPanel({len(self.cluster.consumers)} consumers, group "
                f"{self.group_id!r}, t={self.cluster.scheduler.now} ms)")


def group_line(cluster: Cluster, group_id: str) -> str:
    """The group as its coordinator holds it, or, when no coordinator has it loaded, why not
    and what its members' requests get (CoordinatorRuntime answers NOT_COORDINATOR for a
    partition it has no active context for, COORDINATOR_LOAD_IN_PROGRESS while it loads)."""
    group = cluster.group(group_id)
    if group["state"] is not None:
        if "group_epoch" in group:  # a KIP-848 consumer group (ConsumerGroup.describe)
            return (f"{group_id}: {group['state']} (consumer group, group epoch "
                    f"{group['group_epoch']}, assignment epoch {group['assignment_epoch']}, "
                    f"{_members(len(group['members']))})")
        return (f"{group_id}: {group['state']} (generation {group['generation']}, "
                f"{_members(len(group['members']))})")
    tp = cluster.partition_of(group_id)
    broker = cluster.coordinator_for(group_id)
    state = None if broker is None else cluster.brokers[broker].runtime.context_state(tp)
    if state is not None and state.name == "LOADING":
        return (f"{group_id}: being loaded ({tp} on broker {broker} is LOADING; requests get "
                "COORDINATOR_LOAD_IN_PROGRESS)")
    if state is not None and state.name == "INITIAL":
        return (f"{group_id}: not loaded yet ({tp} on broker {broker}: context INITIAL, its "
                "load is scheduled; requests get NOT_COORDINATOR)")
    if state is not None and state.name == "ACTIVE":
        return f"{group_id}: not in {tp} on broker {broker} (no member has joined yet)"
    shown = "no context" if state is None else f"context {state.name}"
    return (f"{group_id}: not loaded ({tp} on broker {broker}: {shown}; requests get "
            "NOT_COORDINATOR until a new leader loads it)")


def _event_text(e: Any) -> str:
    """An event as the message line names it: its Kafka log line, or (for the events Kafka
    does not log, such as a member's state change) its kind and fields in words."""
    if e.message:
        text = e.message
    elif e.kind == "member_state":
        f = e.fields
        text = f"{f.get('client')} {f.get('old')} -> {f.get('new')} (generation " \
            f"{f.get('generation')})"
    else:
        fields = ", ".join(f"{k}={v}" for k, v in e.fields.items())
        text = f"{e.kind.replace('_', ' ')}" + (f" ({fields})" if fields else "")
    return f"{e.ts:,} ms, {e.source}: {text}"


def compare_html(a: Cluster, a_name: str, b: Cluster, b_name: str, group_id: str) -> str:
    """Two branches at the same instant, side by side: the group and each consumer, cells that
    differ highlighted."""
    def group_cells(c: Cluster) -> list[str]:
        g = c.group(group_id)
        epoch = (f"group epoch {g['group_epoch']}" if "group_epoch" in g
                 else f"generation {g['generation']}")
        return [f"{g['state']}", epoch, _members(len(g["members"]))]

    def consumer_cells(c: Cluster, name: str) -> list[str]:
        if name not in c.consumers:
            return ["-", "", ""]
        d = c.consumers[name].describe()
        process = "crashed" if c.consumers[name].crashed else "paused" if d["paused"] else \
            "running" if d["alive"] else "stopped"
        epoch = (f"epoch {d['member_epoch']}" if d.get("protocol") == "consumer"
                 else f"generation {d['generation']}")
        return [f"{d['state']} ({process})", epoch,
                ", ".join(p.rsplit("-", 1)[1] for p in d["assignment"]) or "-"]

    rows = [("group " + group_id, group_cells(a), group_cells(b))]
    for name in dict.fromkeys([*a.consumers, *b.consumers]):
        rows.append((name, consumer_cells(a, name), consumer_cells(b, name)))
    out = ['<table style="border-collapse:collapse;font-size:13px;margin:4px 0">',
           f'<tr><th style="text-align:left;padding:2px 8px">at {a.scheduler.now:,} ms</th>'
           f'<th colspan="3" style="text-align:left;padding:2px 8px">branch '
           f"{html.escape(a_name)}</th><th colspan='3' style='text-align:left;padding:2px 8px'>"
           f"branch {html.escape(b_name)}</th></tr>"]
    for label, left, right in rows:
        cells = []
        for x, y in ((left, right), (right, left)):
            for i, value in enumerate(x):
                diff = value != y[i]
                style = "padding:2px 8px;" + ("background:#fff3e0;font-weight:bold" if diff
                                               else "")
                cells.append(f'<td style="{style}">{html.escape(value)}</td>')
        out.append(f'<tr data-row="{html.escape(label)}"><td style="padding:2px 8px">'
                   f"<b>{html.escape(label)}</b></td>{''.join(cells)}</tr>")
    out.append("</table>")
    return "".join(out)
