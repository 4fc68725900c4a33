"""A control panel on a live server: real clients, the kit's brokers, one picture.

`LivePanel(server, group_id=..., consumers=[...])` is the `ControlPanel` of live mode
(`coordinator_kit.live`): the same `ClusterView` picture (brokers, `__consumer_offsets`
partitions and their coordinator contexts, the group's state and generation, the coordinator's
session timer of each member running down), where the consumers are the real kafka-python and
librdkafka clients connected to the server. The cluster knows them only as members of its
groups, so each card is built from the group on its coordinator (`snapshot.coordinator_members`:
member id, generation, the assignment the coordinator handed out in SyncGroup) with what the
server knows of the connection (`LiveServer.clients()`: client id, software name and version,
last request) and what the panel knows of the process (`ConsumerProcess`: running, paused,
crashed, closed).

The buttons act on the real clients and on the cluster: crash (SIGKILL: no LeaveGroup), pause
and resume (SIGSTOP/SIGCONT), stop (a clean close: LeaveGroup) a `ConsumerProcess` the panel
was given; cut a client off or drop its heartbeats at the server, and restore; move the
group's coordinator, stall a `__consumer_offsets` replica, fail the next load. The Log tab
holds the brokers' latest log lines (Kafka's log4j layout).

There is no rewind: the clients run in real time and their processes cannot be stepped back,
so there is no scrubber, no step and no fork (the panel says so). Every read of the cluster is
one `server.call(...)`, on the server's loop, so a picture is one consistent instant.

The picture is redrawn by `refresh()`; `start_auto_refresh(interval_s)` does it from a
background thread, which is how ipywidgets updates a widget while the notebook runs other cells
(the thread ends with the server, after `max_s`, or at `stop_auto_refresh()`). Tests call
`refresh()` themselves (`auto_refresh=False`).

Names (attribute: CSS class): client_select: ck-client-select, crash_button: ck-crash,
pause_button: ck-pause, resume_button: ck-resume, stop_button: ck-stop, cut_off_button:
ck-cut-off, restore_network_button: ck-reconnect, drop_heartbeats_button: ck-drop-heartbeats,
restore_heartbeats_button: ck-restore-heartbeats, partition_select: ck-partition-select,
broker_select: ck-broker-select, move_button: ck-move-coordinator, stall_button:
ck-stall-replica, unstall_button: ck-resume-replica, fail_load_button: ck-fail-load,
refresh_button: ck-refresh, auto_refresh_toggle: ck-auto-refresh, no_rewind: ck-no-rewind,
status: ck-status, message:
ck-message, view: ck-cluster-view, clients_table: ck-clients-table, log_tail: ck-log-tail,
tabs: ck-tabs (Cluster, Clients, Log), widget: ck-panel ck-live-panel.
"""

from __future__ import annotations

import dataclasses
import html
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from ..topic import TopicPartition
from .cluster_view import ClusterView
from .panel import _STYLE, _button, _dropdown, _html, _row, group_line
from .snapshot import (AnswerView, ClusterSnapshot, ConsumerView, cluster_snapshot,
                       coordinator_members)

if TYPE_CHECKING:
    from ..live.processes import ConsumerProcess
    from ..live.server import LiveServer

__all__ = ["LivePanel", "live_snapshot", "process_state"]

NO_REWIND = ("live mode: the clients run in real time, so there is no rewind (no scrubber, "
             "step or fork)")
_TABS = ("Cluster", "Clients", "Log")


def process_state(proc: ConsumerProcess) -> str:
    """What a consumer's process is doing: running, paused (SIGSTOP), crashed (killed by a
    signal) or closed (it exited by itself)."""
    code = proc.proc.poll()
    if code is not None:
        return "crashed" if code < 0 else "closed"
    try:  # the process state letter in /proc/<pid>/stat: T is stopped (SIGSTOP)
        with open(f"/proc/{proc.proc.pid}/stat", encoding="ascii") as f:
            stat = f.read()
        return "paused" if stat.rsplit(")", 1)[1].split()[0] in ("T", "t") else "running"
    except (OSError, IndexError):
        return "running"


def _server_view(server: LiveServer, group_id: str) -> dict[str, Any]:
    """Everything the panel reads, read on the server's loop (one instant)."""
    cluster = server.cluster
    snap = cluster_snapshot(cluster)
    last: dict[str, AnswerView] = {}
    software: dict[str, str] = {}
    for conn in server.connections:
        cid = conn.client_id or "?"
        if conn.software is not None:
            software[cid] = " ".join(conn.software)
        if conn.last_api and (cid not in last or conn.last_request_at >= last[cid].at_ms):
            last[cid] = AnswerView(conn.last_api, "", int(conn.last_request_at), conn.broker_id)
    return {"snapshot": snap, "members": coordinator_members(snap, group_id),
            "clients": server.clients(), "last": last, "software": software,
            "cut": set(server.cut), "dropping": set(server.dropping_heartbeats),
            "ports": {b: server.port_of(b) for b in cluster.brokers},
            "group_line": group_line(cluster, group_id),
            "coordinator": cluster.coordinator_for(group_id),
            "partition": cluster.partition_of(group_id).partition,
            "partitions": sorted(tp.partition for tp in cluster.partitions),
            "isr": {tp.partition: (p.leader_id, sorted(p.isr))
                    for tp, p in cluster.partitions.items()},
            "brokers": sorted(cluster.brokers)}


def live_snapshot(server: LiveServer, group_id: str,
                  processes: Iterable[ConsumerProcess] = ()) -> tuple[ClusterSnapshot,
                                                                     dict[str, Any]]:
    """The live cluster as the cluster view draws it, and the raw facts it was built from.

    The consumers are the group's members (`coordinator_members`) with their software, last
    request, cut-off and dropped-heartbeat flags from the server, and their process state from
    `processes`; a process of `processes` that is no member (crashed and expelled, closed, not
    joined yet) keeps a card with nothing assigned. Brokers carry their live listener's
    address."""
    facts = server.call(_server_view, server, group_id)
    snap: ClusterSnapshot = facts["snapshot"]
    procs = {p.client_id: p for p in processes}
    views: list[ConsumerView] = []
    seen: set[str] = set()

    def flags(cid: str) -> tuple[bool, bool, list[str]]:
        cut, dropping = cid in facts["cut"], cid in facts["dropping"]
        words = (["cut off"] if cut else []) + (["dropping heartbeats"] if dropping else [])
        return cut, dropping, words

    for m in facts["members"]:
        cid = m.memberships[0].client_id if m.memberships else m.name
        seen.add(cid)
        proc = procs.get(cid)
        process = process_state(proc) if proc is not None else "running"
        cut, dropping, words = flags(cid)
        views.append(dataclasses.replace(
            m, process=process, status=tuple(words), cut_off=cut, dropping_heartbeats=dropping,
            software=facts["software"].get(cid, ""), last_request=facts["last"].get(cid)))
    for cid in sorted(set(procs) - seen):
        proc = procs[cid]
        process = process_state(proc)
        cut, dropping, words = flags(cid)
        if process == "running":
            words.insert(0, "not a member (joining)")
        views.append(ConsumerView(
            cid, group_id, facts["partition"], "UNJOINED", -1, "", None, None, (), process,
            tuple(words), cut, dropping, 0, False, (), (), None, (),
            software=facts["software"].get(cid, proc.client),
            last_request=facts["last"].get(cid)))
    views.sort(key=lambda v: v.name)
    brokers = tuple(dataclasses.replace(b, host=f"{server.host}:{facts['ports'][b.broker_id]}")
                    for b in snap.brokers)
    return dataclasses.replace(snap, consumers=tuple(views), brokers=brokers), facts


class LivePanel:
    """Widgets bound to a running `LiveServer` (see the module docstring for every name)."""

    def __init__(self, server: LiveServer, *, group_id: str = "group-1",
                 consumers: Iterable[ConsumerProcess] = (), log_lines: int = 14,
                 auto_refresh: bool = True, interval_s: float = 1.0, max_s: float = 900.0,
                 width: int = 960) -> None:
        if not getattr(server, "running", False):
            raise ValueError("LivePanel needs a running LiveServer: call server.start() first")
        if not isinstance(group_id, str) or not group_id:
            raise TypeError(f"group_id is a group id (a non-empty str), got {group_id!r}")
        if isinstance(log_lines, bool) or not isinstance(log_lines, int) or log_lines < 1:
            raise ValueError(f"log_lines must be a whole number at least 1, got {log_lines!r}")
        self.server = server
        self.group_id = group_id
        self.processes: dict[str, ConsumerProcess] = {}
        for p in consumers:
            self.add_process(p)
        self.actions: list[str] = []
        self.last_error: Exception | None = None
        self.snapshot: ClusterSnapshot | None = None
        self.facts: dict[str, Any] = {}
        self.lines: deque[str] = deque(maxlen=log_lines)
        self._log_seq = 0
        self._lock = threading.RLock()
        self._refreshing = False
        self._toggling = False
        self._auto: threading.Thread | None = None
        self._auto_stop = threading.Event()

        # -- client controls --------------------------------------------------------------
        self.client_select = _dropdown([], None, "", "ck-client-select", "150px")
        self.crash_button = _button("Crash (SIGKILL)", "ck-crash", "Kill the process at once: "
                                    "no LeaveGroup, no commit. The coordinator removes its "
                                    "member when session.timeout.ms runs out.", "danger")
        self.pause_button = _button("Pause (SIGSTOP)", "ck-pause", "Freeze the process (as a "
                                    "long GC pause would): no heartbeats, no polls.", "warning")
        self.resume_button = _button("Resume (SIGCONT)", "ck-resume", "Let a paused process "
                                     "run again.")
        self.stop_button = _button("Stop (clean close)", "ck-stop", "SIGTERM: the consumer "
                                   "commits, sends LeaveGroup and exits; the group rebalances "
                                   "at once.")
        self.cut_off_button = _button("Cut off", "ck-cut-off", "The server loses every request "
                                      "of this client and answers none, as a network partition "
                                      "would.", "warning")
        self.restore_network_button = _button("Restore network", "ck-reconnect", "Requests get "
                                              "through again (its connections are closed, so "
                                              "it reconnects).")
        self.drop_heartbeats_button = _button("Drop heartbeats", "ck-drop-heartbeats", "The "
                                              "server withholds this client's heartbeats from "
                                              "the coordinator.", "warning")
        self.restore_heartbeats_button = _button("Restore heartbeats", "ck-restore-heartbeats",
                                                 "Heartbeats reach the coordinator again.")
        # -- coordinator controls -----------------------------------------------------------
        self.partition_select = _dropdown([], None, "partition", "ck-partition-select", "110px")
        self.broker_select = _dropdown([], None, "broker", "ck-broker-select", "100px")
        self.move_button = _button("Move coordinator", "ck-move-coordinator", "Elect another "
                                   "leader for the __consumer_offsets partition: the old "
                                   "coordinator unloads the group, the new one loads it, and "
                                   "the clients get NOT_COORDINATOR and look for it again.",
                                   "warning")
        self.stall_button = _button("Stall replica", "ck-stall-replica", "The broker's replica "
                                    "stops fetching from the leader: writes wait for the high "
                                    "watermark until the ISR shrinks.")
        self.unstall_button = _button("Resume replica", "ck-resume-replica", "The replica "
                                      "fetches again and catches up.")
        self.fail_load_button = _button("Fail next load", "ck-fail-load", "The broker's next "
                                        "load of the partition fails (its context goes FAILED).")
        # -- refreshing ----------------------------------------------------------------------
        self.refresh_button = _button("Refresh", "ck-refresh", "Redraw from the server now.")
        self.auto_refresh_toggle = widgets.ToggleButton(
            value=False, description=f"auto refresh every {interval_s:g} s",
            tooltip="Redraw from the server on a timer",
            layout=widgets.Layout(width="auto", height="26px", margin="1px 2px"))
        self.auto_refresh_toggle.add_class("ck-auto-refresh")
        # -- views ---------------------------------------------------------------------------
        self.no_rewind = widgets.HTML(f"<i style='font-size:12px;color:#555'>{NO_REWIND}</i>")
        self.no_rewind.add_class("ck-no-rewind")
        self.status = _html("ck-status")
        self.message = _html("ck-message")
        self.cluster_view = ClusterView(width=width)
        self.view = self.cluster_view.widget
        self.clients_table = _html("ck-clients-table")
        self.log_tail = _html("ck-log-tail")
        self.tabs = widgets.Tab(children=[widgets.VBox([self.view]),
                                          widgets.VBox([self.clients_table]),
                                          widgets.VBox([self.log_tail])], titles=_TABS)
        self.tabs.add_class("ck-tabs")
        self.interval_s = interval_s
        self.max_s = max_s
        self._wire()
        self.widget = widgets.VBox([
            widgets.HTML(_STYLE), self.status,
            _row([self.client_select, self.crash_button, self.pause_button, self.resume_button,
                  self.stop_button], "client"),
            _row([self.cut_off_button, self.restore_network_button,
                  self.drop_heartbeats_button, self.restore_heartbeats_button], "at server"),
            _row([self.partition_select, self.broker_select, self.move_button,
                  self.stall_button, self.unstall_button, self.fail_load_button],
                 "coordinator"),
            _row([self.refresh_button, self.auto_refresh_toggle, self.no_rewind], "view"),
            self.message, self.tabs,
        ], layout=widgets.Layout(width="100%", max_width="968px"))
        self.widget.add_class("ck-panel")
        self.widget.add_class("ck-live-panel")
        self.refresh()
        if auto_refresh:
            self.start_auto_refresh(interval_s)

    # -- the processes ----------------------------------------------------------------------

    def add_process(self, proc: ConsumerProcess) -> None:
        """Let the panel's process buttons act on `proc` (by its client id)."""
        if not hasattr(proc, "client_id") or not hasattr(proc, "crash"):
            raise TypeError(f"consumers are ConsumerProcess objects "
                            f"(coordinator_kit.live.processes), got {type(proc).__name__}")
        self.processes[proc.client_id] = proc

    @property
    def selected(self) -> str | None:
        return self.client_select.value

    def _process(self, client_id: str) -> ConsumerProcess:
        proc = self.processes.get(client_id)
        if proc is None:
            raise ValueError(f"{client_id!r} is not a process this panel was given "
                             f"(consumers=...); it has {sorted(self.processes) or 'none'}. The "
                             f"server-side faults (cut off, drop heartbeats) act on any client.")
        return proc

    # -- wiring -----------------------------------------------------------------------------

    def _wire(self) -> None:
        def on(button: widgets.Button, fn: Callable[[str], Any]) -> None:
            def handler(_b: Any) -> None:
                name = self.selected
                if name is None:
                    self._failed(button.description.lower(),
                                 ValueError("no client selected: none is connected yet"))
                    return
                fn(name)
            button.on_click(handler)
        on(self.crash_button, self.crash)
        on(self.pause_button, self.pause)
        on(self.resume_button, self.resume)
        on(self.stop_button, self.stop_client)
        on(self.cut_off_button, lambda n: self.cut_off(n, True))
        on(self.restore_network_button, lambda n: self.cut_off(n, False))
        on(self.drop_heartbeats_button, lambda n: self.drop_heartbeats(n, True))
        on(self.restore_heartbeats_button, lambda n: self.drop_heartbeats(n, False))
        p, b = self.partition_select, self.broker_select
        self.move_button.on_click(lambda _b: self.move_coordinator(p.value, b.value))
        self.stall_button.on_click(lambda _b: self.stall_replica(p.value, b.value, True))
        self.unstall_button.on_click(lambda _b: self.stall_replica(p.value, b.value, False))
        self.fail_load_button.on_click(lambda _b: self.fail_next_load(p.value, b.value))
        self.refresh_button.on_click(lambda _b: self.refresh())
        self.auto_refresh_toggle.observe(self._on_toggle, names="value")
        self.partition_select.observe(self._on_partition, names="value")

    def _on_toggle(self, change: dict[str, Any]) -> None:
        if self._toggling:
            return
        if change["new"]:
            self.start_auto_refresh(self.interval_s)
        else:
            self.stop_auto_refresh()

    def _on_partition(self, change: dict[str, Any]) -> None:
        if not self._refreshing and change["new"] is not None:
            self.broker_select.value = self._other_broker(change["new"])

    def _other_broker(self, partition: int) -> int | None:
        leader, isr = self.facts.get("isr", {}).get(partition, (None, []))
        brokers = self.facts.get("brokers", [])
        others = [b for b in isr if b != leader] or [b for b in brokers if b != leader]
        return others[0] if others else leader

    # -- actions ------------------------------------------------------------------------------

    def _run(self, what: str, act: Callable[[], Any]) -> bool:
        """Run one action, note it, refresh; an error is shown, not raised."""
        try:
            result = act()
        except Exception as exc:  # noqa: BLE001 - every misuse must reach the learner
            self._failed(what, exc)
            return False
        text = result if isinstance(result, str) else what
        self.last_error = None
        at = self._now_ms()
        self.actions.append(f"{at:,} ms: {text}")
        self.message.remove_class("ck-error")
        self.message.value = html.escape(f"{at:,} ms: {text}")
        self.refresh()
        return True

    def _failed(self, what: str, exc: Exception) -> None:
        self.last_error = exc
        detail = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        self.actions.append(f"{what} refused: {detail}")
        self.message.value = (f'<span style="color:#c62828">⚠ {html.escape(what)}: '
                              f"{html.escape(str(detail))}</span>")
        self.message.add_class("ck-error")

    def _now_ms(self) -> int:
        return self.snapshot.now_ms if self.snapshot is not None else 0

    def crash(self, client_id: str) -> bool:
        """SIGKILL the client's process: no LeaveGroup; its member stays until its session
        runs out (`session.timeout.ms` after its last heartbeat)."""
        def go() -> None:
            proc = self._process(client_id)
            if not proc.alive:
                raise ValueError(f"{client_id} is not running (its process "
                                 f"{process_state(proc)})")
            proc.crash()
        return self._run(f"crash {client_id} (SIGKILL)", go)

    def pause(self, client_id: str) -> bool:
        """SIGSTOP: the process freezes (a stop-the-world pause) until `resume`."""
        return self._run(f"pause {client_id} (SIGSTOP)", lambda: self._alive(client_id).pause())

    def resume(self, client_id: str) -> bool:
        return self._run(f"resume {client_id} (SIGCONT)",
                         lambda: self._alive(client_id).resume())

    def stop_client(self, client_id: str) -> bool:
        """SIGTERM: a clean close (commit, LeaveGroup); the group rebalances at once."""
        return self._run(f"stop {client_id} (clean close, LeaveGroup)",
                         lambda: self._alive(client_id).stop())

    def _alive(self, client_id: str) -> ConsumerProcess:
        proc = self._process(client_id)
        if not proc.alive:
            raise ValueError(f"{client_id} is not running (its process {process_state(proc)})")
        return proc

    def cut_off(self, client_id: str, cut: bool = True) -> bool:
        """At the server: lose every request of `client_id` (`LiveServer.cut_off`), or
        restore it."""
        return self._run(("cut off " if cut else "restore the network of ") + client_id,
                         lambda: self.server.call(self.server.cut_off, client_id, cut))

    def drop_heartbeats(self, client_id: str, drop: bool = True) -> bool:
        """At the server: withhold `client_id`'s heartbeats (`LiveServer.drop_heartbeats`), or
        let them through again."""
        return self._run(("drop the heartbeats of " if drop else "restore the heartbeats of ")
                         + client_id,
                         lambda: self.server.call(self.server.drop_heartbeats, client_id, drop))

    def move_coordinator(self, partition: int | None = None, broker: int | None = None) -> bool:
        """Move the leadership of `__consumer_offsets-<partition>` (default: the group's) to
        `broker` (default: another in-sync replica)."""
        part = self.facts.get("partition") if partition is None else partition
        cluster = self.server.cluster

        def go() -> str:
            epoch = self.server.call(cluster.move_coordinator, part, broker)
            leader = self.server.call(lambda: cluster.partitions[
                TopicPartition.offsets(part)].leader_id)
            return (f"move __consumer_offsets-{part} to broker {leader} (leader epoch "
                    f"{epoch})")
        return self._run(f"move __consumer_offsets-{part}", go)

    def stall_replica(self, partition: int, broker: int, stalled: bool = True) -> bool:
        cluster = self.server.cluster
        word = "stall" if stalled else "resume"
        return self._run(f"{word} the replica of __consumer_offsets-{partition} on broker "
                         f"{broker}",
                         lambda: self.server.call(cluster.stall_replica, partition, broker,
                                                  stalled))

    def fail_next_load(self, partition: int, broker: int) -> bool:
        cluster = self.server.cluster
        return self._run(f"fail the next load of __consumer_offsets-{partition} on broker "
                         f"{broker}",
                         lambda: self.server.call(cluster.fail_next_load, partition, broker))

    # -- views --------------------------------------------------------------------------------

    def refresh(self) -> ClusterSnapshot | None:
        """Read the server (one `server.call`) and redraw every view; returns the snapshot
        drawn (None when the server has stopped: the last picture stays)."""
        with self._lock:
            if not self.server.running:
                if "<b>live</b>" in self.status.value:
                    self.status.value = (self.status.value.replace("<b>live</b>",
                                                                   "<b>stopped</b>")
                                         + "<br>the server has stopped: this is its last "
                                           "picture")
                return None
            snap, facts = live_snapshot(self.server, self.group_id, self.processes.values())
            new_lines = self.server.call(self._new_log_lines)
            self.snapshot, self.facts = snap, facts
            self.lines.extend(new_lines)
            self._refreshing = True
            try:
                self._update_selects(snap, facts)
            finally:
                self._refreshing = False
            coordinator = facts["coordinator"]
            self.status.value = (
                f"<b>live</b> · t = {snap.now_ms:,} ms since the server started · "
                f"{html.escape(facts['group_line'])} · coordinator: broker {coordinator} "
                f"(__consumer_offsets-{facts['partition']}) · "
                f"{len(facts['clients'])} clients connected")
            self.cluster_view.show_snapshot(snap)
            self.clients_table.value = self._clients_html(facts)
            self.log_tail.value = ("<pre style=\"font-size:11px; white-space:pre-wrap\">"
                                   + html.escape("\n".join(self.lines)) + "</pre>")
            return snap

    def _new_log_lines(self) -> list[str]:
        trace = self.server.cluster.trace
        lines = trace.lines(level="INFO", since_seq=self._log_seq)
        self._log_seq = len(trace.events)
        return lines

    def _update_selects(self, snap: ClusterSnapshot, facts: dict[str, Any]) -> None:
        names = sorted({c.name for c in snap.consumers} | set(self.processes))
        if list(self.client_select.options) != names:
            keep = self.client_select.value
            self.client_select.options = names
            self.client_select.value = keep if keep in names else (names[0] if names else None)
        if list(self.partition_select.options) != facts["partitions"]:
            self.partition_select.options = facts["partitions"]
            self.partition_select.value = facts["partition"]
        if list(self.broker_select.options) != facts["brokers"]:
            self.broker_select.options = facts["brokers"]
        if self.broker_select.value is None or self.broker_select.value == \
                facts["isr"][self.partition_select.value][0]:
            self.broker_select.value = self._other_broker(self.partition_select.value)

    def _clients_html(self, facts: dict[str, Any]) -> str:
        head = ('<style>.ck-clients-table table {border-collapse: collapse; font-size: 12px} '
                '.ck-clients-table th, .ck-clients-table td {padding: 2px 8px; text-align: '
                'left}</style><table><thead><tr><th>client id</th><th>software</th>'
                "<th>process</th><th>connections</th><th>member id</th>"
                "<th>assignment (SyncGroup)</th><th>at the server</th></tr></thead><tbody>")
        rows = []
        by_id = {r["client_id"]: r for r in facts["clients"]}
        for cid in sorted(set(by_id) | set(self.processes)):
            r = by_id.get(cid, {})
            proc = self.processes.get(cid)
            member = r.get("members", {}).get(self.group_id, "")
            parts = r.get("assignment", {}).get(self.group_id, [])
            faults = ", ".join(w for w, on in (("cut off", r.get("cut")),
                                               ("dropping heartbeats",
                                                r.get("dropping_heartbeats"))) if on) or "-"
            rows.append(
                f'<tr data-client="{html.escape(cid)}"><td class="ck-client">{html.escape(cid)}'
                f'</td><td>{html.escape(r.get("software") or "-")}</td>'
                f'<td class="ck-process">{process_state(proc) if proc else "-"}</td>'
                f'<td>{r.get("connections", 0)} (brokers '
                f'{", ".join(map(str, sorted(set(r.get("brokers", []))))) or "-"})</td>'
                f'<td class="ck-member-id">{html.escape(member or "-")}</td>'
                f'<td class="ck-assignment">'
                f'{html.escape(", ".join(f"{t}-{p}" for t, p in parts) or "-")}</td>'
                f"<td>{faults}</td></tr>")
        return head + "".join(rows) + "</tbody></table>"

    # -- refreshing on a timer ---------------------------------------------------------------

    def start_auto_refresh(self, interval_s: float = 1.0) -> None:
        """Refresh every `interval_s` from a background thread until `stop_auto_refresh()`,
        the server stops, or `max_s` have passed."""
        if interval_s <= 0:
            raise ValueError(f"interval_s must be > 0, got {interval_s!r}")
        self.stop_auto_refresh()
        self.interval_s = interval_s
        stop = self._auto_stop = threading.Event()
        deadline = time.monotonic() + self.max_s

        def run() -> None:
            while not stop.wait(interval_s):
                if time.monotonic() > deadline or not self.server.running:
                    break
                try:
                    self.refresh()
                except Exception as exc:  # noqa: BLE001 - a stopped server mid-read
                    self.last_error = exc
                    if not self.server.running:
                        break
            if not self.server.running:
                self.refresh()  # says so in the status line
            self._set_toggle(False)
        self._auto = threading.Thread(target=run, name="live panel refresh", daemon=True)
        self._auto.start()
        self._set_toggle(True)

    def stop_auto_refresh(self) -> None:
        self._auto_stop.set()
        thread = self._auto
        if thread is not None and thread is not threading.current_thread():
            thread.join(self.interval_s + 5)
        self._auto = None
        self._set_toggle(False)

    @property
    def auto_refreshing(self) -> bool:
        return self._auto is not None and self._auto.is_alive()

    def _set_toggle(self, on: bool) -> None:
        self._toggling = True
        try:
            self.auto_refresh_toggle.value = on
        finally:
            self._toggling = False

    def close(self) -> None:
        """Stop refreshing (the processes and the server are the caller's to stop); once the
        server has stopped, the status line says so."""
        self.stop_auto_refresh()
        self.refresh()

    # -- display -----------------------------------------------------------------------------

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = repr(self)
        return bundle

    def __repr__(self) -> str:
        state = "live, no rewind" if self.server.running else "server stopped"
        return (f"LivePanel(group {self.group_id!r}, {len(self.processes)} consumer "
                f"processes, {state})")
