"""The control panel, driven the way a learner drives it: `.click()` and `.value =`.

Widgets run here without a kernel (ipywidgets' DummyComm); each test asserts on the cluster's
state and on the views the panel refreshed. Kafka's side: the classic paths of
`GroupMetadataManager` (session expiry, LeaveGroup, rebalances), `CoordinatorState` (context
states, loading on a leader move) and the Java client's heartbeat thread (GC pause).
"""

from __future__ import annotations

import html
import re

import pytest

from coordinator_kit.scenarios import new_cluster, run_scenario
from coordinator_kit.topic import TopicPartition
from coordinator_kit.viz import ControlPanel


@pytest.fixture
def panel():
    """Two consumers in a Stable group (scenario second-joins), timeline off for speed."""
    return ControlPanel(run_scenario("second-joins"), timeline=False)


def _row(p: ControlPanel, client: str) -> dict[str, str]:
    m = re.search(rf'<tr data-client="{client}"[^>]*>(.*?)</tr>', p.member_table.value)
    assert m, f"no row for {client} in the member table"
    return dict(re.findall(r'<td class="ck-([a-z-]+)">(.*?)</td>', m.group(1)))


def _text(view) -> str:
    """A view's HTML as the learner reads it (entities decoded)."""
    return html.unescape(view.value)


def _filled(dot: str) -> list[str]:
    return re.findall(r'^  "([^"]+)" \[style="filled,bold"', dot, flags=re.M)


def _taken(dot: str) -> list[tuple[str, str]]:
    """The numbered path of a live diagram (the moves since the panel's last action), in order:
    each coloured edge's label starts with the numbers of the moves that took it."""
    steps = []
    for src, dst, numbers in re.findall(
            r'^  "([^"]+)" -> "([^"]+)" \[label="([\d, ]+)\\n[^"]*", color="#d84315"', dot,
            flags=re.M):
        steps += [(int(n), (src, dst)) for n in numbers.split(", ")]
    return [edge for _n, edge in sorted(steps)]


DOCUMENTED = {  # attribute -> CSS class (the module docstring's table; the browser test uses it)
    "consumer_select": "ck-consumer-select", "crash_button": "ck-crash",
    "pause_ms": "ck-pause-ms", "pause_button": "ck-pause", "resume_button": "ck-resume",
    "drop_heartbeats_button": "ck-drop-heartbeats",
    "restore_heartbeats_button": "ck-restore-heartbeats", "processing_ms": "ck-processing-ms",
    "slow_poll_button": "ck-slow-poll", "cut_off_button": "ck-cut-off",
    "reconnect_button": "ck-reconnect", "leave_button": "ck-leave",
    "new_consumer_name": "ck-new-consumer", "add_button": "ck-add",
    "partition_select": "ck-partition-select", "broker_select": "ck-broker-select",
    "move_button": "ck-move-coordinator", "fail_load_button": "ck-fail-load",
    "fail_append_button": "ck-fail-append", "stall_button": "ck-stall-replica",
    "unstall_button": "ck-resume-replica", "step_button": "ck-step",
    "advance_ms": "ck-advance-ms", "advance_button": "ck-advance", "play": "ck-play",
    "play_step_ms": "ck-play-step-ms", "refresh_button": "ck-refresh",
    "log_level": "ck-log-level", "status": "ck-status", "message": "ck-message",
    "group_diagram": "ck-group-diagram", "member_diagram": "ck-member-diagram",
    "context_diagram": "ck-context-diagram", "member_table": "ck-member-table",
    "log_tail": "ck-log-tail", "timeline": "ck-timeline", "widget": "ck-panel",
}


def test_every_documented_widget_exists_with_its_css_class(panel):
    import coordinator_kit.viz.panel as module

    for attr, css in DOCUMENTED.items():
        w = getattr(panel, attr)
        assert css in w._dom_classes, f"{attr} lacks CSS class {css}"
        assert re.search(rf"\b{attr}: [^\n]*{css}\b", module.__doc__), \
            f"{attr} ({css}) is not in the module docstring"
    for attr in ("group_diagram", "member_diagram", "context_diagram"):
        assert "ck-diagram" in getattr(panel, attr)._dom_classes
    buttons = [getattr(panel, a) for a in DOCUMENTED if a.endswith("_button")]
    assert all(b.description for b in buttons)
    assert len({b.description for b in buttons}) == len(buttons)  # each findable by its name


def test_initial_views_show_the_cluster(panel):
    assert "t = 20000 ms" in panel.status.value
    assert "group-1: Stable (generation 2, 2 members)" in panel.status.value
    assert panel.consumer_select.options == ("consumer-1", "consumer-2")
    row = _row(panel, "consumer-1")
    assert row["state"] == "STABLE" and row["generation"] == "2"
    assert row["assignment"] == "orders-0, orders-1, orders-2"
    c1 = panel.cluster.consumer("consumer-1")
    assert row["last-heartbeat"].startswith(f"{c1.last_heartbeat_received} ms")
    assert _filled(panel.dots["group"]) == ["Stable"]
    assert _filled(panel.dots["member"]) == ["STABLE"]
    assert _filled(panel.dots["context"]) == ["ACTIVE"]
    tail = panel.log_tail.value
    assert tail.count("\n") == panel.log_lines - 1
    assert "Adding newly assigned partitions: orders-3, orders-4, orders-5" in tail
    assert panel.last_error is None


def test_crash_then_session_timeout_removes_the_member(panel):
    """expireClassicGroupMemberHeartbeat: a crashed member sends nothing; the coordinator
    expires it after session.timeout.ms (45 s) and rebalances the rest."""
    panel.consumer_select.value = "consumer-1"
    panel.crash_button.click()
    c1 = panel.cluster.consumer("consumer-1")
    assert c1.crashed and panel.last_error is None
    assert _row(panel, "consumer-1")["status"] == "crashed"
    assert _text(panel.message) == "20000 ms: crash consumer-1"
    member_id = c1.member_id
    panel.advance_ms.value = 60_000
    panel.advance_button.click()
    group = panel.cluster.group("group-1")
    assert member_id not in group["members"] and group["generation"] == 3
    assert "group-1: Stable (generation 3, 1 member)" in panel.status.value
    assert "has failed, removing it from the group" in panel.log_tail.value
    assert _row(panel, "consumer-2")["assignment"] == ", ".join(f"orders-{i}" for i in range(6))


def test_misuse_is_shown_in_the_panel_not_raised(panel):
    panel.crash_button.click()
    panel.crash_button.click()  # already crashed: must not raise
    assert isinstance(panel.last_error, RuntimeError)
    assert "can't crash consumer consumer-1: it has crashed" in _text(panel.message)
    assert "ck-error" in panel.message._dom_classes
    panel.broker_select.value = panel.cluster.coordinator_for("group-1")
    panel.move_button.click()  # to its own leader
    assert "broker 2 already leads __consumer_offsets-2" in _text(panel.message)
    panel.stall_button.click()  # the leader is not a follower
    assert "is the leader of __consumer_offsets-2, not a follower" in _text(panel.message)
    panel.new_consumer_name.value = "consumer-2"
    panel.add_button.click()  # a name already taken
    assert "there is already a consumer named 'consumer-2'" in _text(panel.message)
    assert panel.advance(0) is False and "at least 1 ms" in _text(panel.message)
    panel.advance_ms.value = 10
    panel.advance_button.click()  # a good action clears the error
    assert panel.last_error is None and "ck-error" not in panel.message._dom_classes
    assert [a for a in panel.actions if "refused" in a][0].endswith("it has crashed")


def test_pause_then_resume(panel):
    panel.consumer_select.value = "consumer-2"
    panel.pause_ms.value = 60_000
    panel.pause_button.click()
    c2 = panel.cluster.consumer("consumer-2")
    assert c2.paused_until == 80_000
    assert _row(panel, "consumer-2")["status"] == "paused"
    panel.advance_ms.value = 5_000
    panel.advance_button.click()
    before = c2.last_heartbeat_received
    assert before < 20_000  # paused: no heartbeat answered since
    panel.resume_button.click()
    assert _row(panel, "consumer-2")["status"] == "running"
    panel.advance_ms.value = 3_000
    panel.advance_button.click()
    assert c2.last_heartbeat_received > 25_000  # heartbeats flow again, long before 80 s
    assert c2.state.name == "STABLE"
    panel.resume_button.click()  # not paused any more
    assert "consumer consumer-2 is not paused; pause it first" in _text(panel.message)


def test_dropped_heartbeats_without_commits_get_the_member_expelled():
    """classicGroupHeartbeat, expireClassicGroupMemberHeartbeat: the session timer runs out
    (45 s) when no heartbeat arrives; the member is removed and the group rebalances."""
    c = new_cluster(0)
    for name in ("consumer-1", "consumer-2"):
        c.add_consumer(name, enable_auto_commit=False)
        c.run_for(10_000)
    p = ControlPanel(c, timeline=False)
    p.consumer_select.value = "consumer-2"
    p.drop_heartbeats_button.click()
    c2 = c.consumer("consumer-2")
    assert c2.drop_heartbeats
    assert "dropping heartbeats" in _row(p, "consumer-2")["status"]
    member_id = c2.member_id
    p.advance_ms.value = 50_000
    p.advance_button.click()
    assert member_id not in c.group("group-1")["members"]
    assert any(f"Member {member_id} in group group-1 has failed, removing it from the group"
               in line for line in c.log_lines("INFO"))
    p.restore_heartbeats_button.click()
    assert not c2.drop_heartbeats


def test_offset_commits_keep_a_member_whose_heartbeats_are_lost(panel):
    """Kafka's `OffsetMetadataManager.validateOffsetCommit`: for the classic protocol, offset
    commits maintain the session while the group is Stable or PreparingRebalance. With
    auto-commit on, dropped heartbeats alone do not expel the member; the client only sees its
    heartbeats time out and rediscovers the coordinator."""
    panel.consumer_select.value = "consumer-2"
    panel.drop_heartbeats_button.click()
    member_id = panel.cluster.consumer("consumer-2").member_id
    panel.advance_ms.value = 60_000
    panel.advance_button.click()
    assert member_id in panel.cluster.group("group-1")["members"]
    assert "is unavailable or invalid due to cause: REQUEST_TIMED_OUT" in _text(panel.log_tail)


def test_slow_poll_cut_off_and_reconnect(panel):
    panel.consumer_select.value = "consumer-1"
    panel.processing_ms.value = 350_000
    panel.slow_poll_button.click()
    assert panel.cluster.consumer("consumer-1").processing_ms == 350_000
    panel.cut_off_button.click()
    assert "consumer-1" in panel.cluster.network.cut
    assert "cut off" in _row(panel, "consumer-1")["status"]
    panel.reconnect_button.click()
    assert "consumer-1" not in panel.cluster.network.cut


def test_add_a_consumer_and_see_the_rebalance(panel):
    panel.add_button.click()
    assert panel.consumer_select.options == ("consumer-1", "consumer-2", "consumer-3")
    assert panel.consumer_select.value == "consumer-3"
    assert panel.new_consumer_name.value == "consumer-4"
    panel.advance_ms.value = 10
    panel.advance_button.click()
    assert _filled(panel.dots["group"]) == ["PreparingRebalance"]
    assert _taken(panel.dots["group"]) == [("Stable", "PreparingRebalance")]
    assert _filled(panel.dots["member"]) == ["PREPARING_REBALANCE"]
    panel.advance_ms.value = 10_000
    panel.advance_button.click()
    group = panel.cluster.group("group-1")
    assert len(group["members"]) == 3 and group["state"] == "Stable"
    assert [_row(panel, f"consumer-{i}")["state"] for i in (1, 2, 3)] == ["STABLE"] * 3
    # consumer-3's moves since it was added, numbered: the join (MEMBER_ID_REQUIRED sends it
    # round twice), the sync, Stable
    assert _taken(panel.dots["member"])[0] == ("UNJOINED", "PREPARING_REBALANCE")
    assert _taken(panel.dots["member"])[-1] == ("COMPLETING_REBALANCE", "STABLE")


def test_leave_sends_leave_group(panel):
    """classicGroupLeave: LeaveGroup removes a dynamic member at once and starts a rebalance."""
    panel.consumer_select.value = "consumer-2"
    member_id = panel.cluster.consumer("consumer-2").member_id
    panel.leave_button.click()
    assert _row(panel, "consumer-2")["status"] == "stopped"
    panel.advance_ms.value = 5
    panel.advance_button.click()
    assert member_id not in panel.cluster.group("group-1")["members"]
    assert f"[Group group-1] Member {member_id} has left group through explicit `LeaveGroup` " \
           f"request; client reason: the consumer is being closed" in _text(panel.log_tail)


def test_move_the_coordinator(panel):
    """CoordinatorState: the old leader unloads (CLOSED), the new one loads (LOADING -> ACTIVE)."""
    tp = panel.cluster.partition_of("group-1")
    assert panel.partition_select.value == tp.partition
    old = panel.cluster.coordinator_for("group-1")
    target = panel.broker_select.value
    assert target != old
    panel.move_button.click()
    assert panel.cluster.coordinator_for("group-1") == target
    assert f"on broker {target} (leader)" in panel.dots["context"]
    panel.advance_ms.value = 20
    panel.advance_button.click()
    assert _filled(panel.dots["context"]) == ["ACTIVE"]
    assert _taken(panel.dots["context"]) == [("INITIAL", "LOADING"), ("LOADING", "ACTIVE")]
    assert panel.cluster.brokers[old].runtime.context(tp) is None
    assert f"coordinator: broker {target}" in panel.status.value


def test_fail_the_next_load_then_move(panel):
    target = panel.broker_select.value
    panel.fail_load_button.click()
    panel.move_button.click()
    panel.advance_ms.value = 20
    panel.advance_button.click()
    assert panel.cluster.brokers[target].runtime.context_state(
        panel.cluster.partition_of("group-1")).name == "FAILED"
    assert _filled(panel.dots["context"]) == ["FAILED"]
    assert _taken(panel.dots["context"]) == [("INITIAL", "LOADING"), ("LOADING", "FAILED")]


def test_fail_the_next_append(panel):
    p = panel.cluster.partitions[panel.cluster.partition_of("group-1")]
    panel.fail_append_button.click()
    assert len(p._append_failures) == 1
    panel.advance_ms.value = 10_000  # auto-commits write to the partition
    panel.advance_button.click()
    assert not p._append_failures
    panel.log_level.value = "WARN"
    tail = _text(panel.log_tail)
    # The failed write is answered KAFKA_STORAGE_ERROR -> NOT_COORDINATOR
    # (handleOperationException): the consumers' auto-commit fails and they rediscover the
    # coordinator.
    assert "ERROR [GroupCoordinator id=2] Writing records to __consumer_offsets-2 failed" in tail
    assert "WARN [Consumer clientId=consumer-1, groupId=group-1] Asynchronous auto-commit" in tail
    assert panel.last_error is None


def test_a_stalled_replica_holds_the_high_watermark(panel):
    p = panel.cluster.partitions[panel.cluster.partition_of("group-1")]
    follower = panel.broker_select.value
    panel.stall_button.click()
    assert not p.replicas[follower].fetching
    panel.advance_ms.value = 10_000  # auto-commits append; the stalled follower never confirms
    panel.advance_button.click()
    assert "not fetching (stalled)" in panel.status.value
    panel.unstall_button.click()
    panel.advance_ms.value = 100
    panel.advance_button.click()
    assert p.replicas[follower].fetching
    assert "everything up to offset" in panel.status.value


def test_partition_choice_picks_a_follower_broker(panel):
    for part in panel.partition_select.options:
        panel.partition_select.value = part
        p = panel.cluster.partitions[TopicPartition.offsets(part)]
        assert panel.broker_select.value != p.leader_id


def test_step_runs_exactly_one_callback(panel):
    sched = panel.cluster.scheduler
    first = sched.pending()[0]
    panel.step_button.click()
    assert first.done and sched.now == first.when
    assert f"step: ran {first.name} (due at {first.when} ms)" in _text(panel.message)
    assert f"t = {first.when} ms" in panel.status.value


def test_advance_and_play_move_virtual_time(panel):
    now = panel.cluster.scheduler.now
    panel.advance_ms.value = 1_234
    panel.advance_button.click()
    assert panel.cluster.scheduler.now == now + 1_234
    panel.play_step_ms.value = 250
    panel.play.value = panel.play.value + 1  # what the Play widget does on each tick
    assert panel.cluster.scheduler.now == now + 1_234 + 250
    assert panel.tick() and panel.cluster.scheduler.now == now + 1_234 + 500
    panel.play.value = 0  # the Play widget's stop rewinds the value: no tick
    assert panel.cluster.scheduler.now == now + 1_234 + 500


def test_log_level_choice_changes_the_tail(panel):
    panel.log_level.value = "DEBUG"
    assert " DEBUG " in panel.log_tail.value
    panel.log_level.value = "INFO"
    assert " DEBUG " not in panel.log_tail.value


def test_selecting_a_consumer_redraws_its_diagram(panel):
    panel.consumer_select.value = "consumer-2"
    assert "consumer-2 (running): STABLE" in panel.dots["member"]
    assert 'style="font-weight:bold"' in re.search(r'<tr data-client="consumer-2"[^>]*>',
                                                    panel.member_table.value).group(0)


def test_an_empty_cluster_panel():
    p = ControlPanel(new_cluster(0), timeline=False)
    assert p.consumer_select.options == () and p.consumer_select.value is None
    p.crash_button.click()
    assert "no consumer selected; add one first" in _text(p.message)
    assert "member" not in p.dots
    p.add_button.click()
    assert list(p.cluster.consumers) == ["consumer-1"] and p.selected == "consumer-1"
    p.advance_ms.value = 10_000
    p.advance_button.click()
    assert _row(p, "consumer-1")["state"] == "STABLE"


def test_bad_construction_is_refused():
    with pytest.raises(ValueError, match="log_lines must be a whole number at least 1, got 0"):
        ControlPanel(new_cluster(0), log_lines=0)
    with pytest.raises(ValueError, match="got '5'"):
        ControlPanel(new_cluster(0), log_lines="5")
    with pytest.raises(TypeError, match="ControlPanel needs a Cluster or a Recording, got "
                                        "NoneType"):
        ControlPanel(None)


def test_diagrams_and_timeline_render_as_svg():
    import shutil

    p = ControlPanel(run_scenario("second-joins"))
    p.consumer_select.value = "consumer-1"
    p.crash_button.click()
    p.render_all()  # the panel draws a tab when it is shown
    if shutil.which("dot"):
        for view in (p.group_diagram, p.member_diagram, p.context_diagram):
            assert view.value.startswith("<svg")
        assert "consumer-1 (crashed): STABLE, generation 2" in _text(p.member_diagram)
    assert p.timeline.value.startswith("<svg")
    assert "consumer-1" in p.timeline.value and "group-1 (coordinator)" in p.timeline.value


def test_display_is_stable_text_plus_the_widget_view(panel):
    """What a notebook stores: text/plain without address or model id (nbval compares it) and
    the widget view (nbval never compares `application/vnd.jupyter.widget-view+json`: its model
    ids are random)."""
    from IPython.core.formatters import format_display_data

    data, _ = format_display_data(panel)
    assert data["text/plain"] == "ControlPanel(2 consumers, group 'group-1', t=20000 ms)"
    assert data["application/vnd.jupyter.widget-view+json"]["model_id"] == panel.widget.model_id


def test_status_says_why_a_group_is_not_loaded(panel):
    """A failed load leaves the group nowhere: CoordinatorRuntime answers NOT_COORDINATOR for a
    partition whose context is not ACTIVE, COORDINATOR_LOAD_IN_PROGRESS while it loads."""
    panel.fail_load_button.click()
    panel.move_button.click()
    assert "not loaded yet (__consumer_offsets-2 on broker 0: context INITIAL, its load is " \
           "scheduled" in panel.status.value
    panel.advance_ms.value = 20
    panel.advance_button.click()
    assert "group-1: not loaded (__consumer_offsets-2 on broker 0: context FAILED; requests " \
           "get NOT_COORDINATOR" in panel.status.value
    assert "None" not in panel.status.value
