"""The control panel's time controls, driven as a learner drives them: scrub back before a
fault, step back and forward, jump to the next event that matters, fork, compare two branches,
predict then reveal. The panel runs on a `Recording`, so every way back must give exactly the
state (and the picture) the run had there."""

from __future__ import annotations

import html
import re

import pytest

from coordinator_kit.recording import ACTIONS
from coordinator_kit.scenarios import run_scenario
from coordinator_kit.viz import ControlPanel
from coordinator_kit.viz.cluster_view import cluster_svg


@pytest.fixture
def panel() -> ControlPanel:
    return ControlPanel(run_scenario("second-joins"), timeline=False)


def consumer_state(p: ControlPanel, name: str) -> str:
    """What the cluster view's SVG says of a consumer (its data-* attributes)."""
    m = re.search(rf'<g [^>]*data-consumer="{name}"[^>]*>', p.view.value)
    assert m, f"no {name} in the cluster view"
    return m.group(0)


def trace_rows(p: ControlPanel) -> list[tuple]:
    return [(e.seq, e.ts, e.kind, e.source, e.level, e.message) for e in p.cluster.trace.events]


def test_scrub_back_before_a_crash_and_forward_again(panel):
    """The browser test's story in Python: crash consumer-1, let the coordinator expire it
    (session.timeout.ms, 45 s), scrub back before the crash: the view shows consumer-1 alive
    in generation 2 again; forward: the same trace, byte for byte."""
    panel.crash_button.click()
    panel.advance_ms.value = 60_000
    panel.advance_button.click()
    after = trace_rows(panel)
    assert 'data-process="crashed"' in consumer_state(panel, "consumer-1")
    assert panel.cluster.group()["generation"] == 3
    assert panel.scrubber.max == 80_000 and panel.scrubber.value == 80_000

    panel.scrubber.value = 20_000 - 0  # the crash happened at 20,000 ms, the start
    panel.back_button.click()  # ... undo it: one move back
    c1 = panel.cluster.consumer("consumer-1")
    assert not c1.crashed and panel.cluster.group()["generation"] == 2
    assert 'data-process="crashed"' not in consumer_state(panel, "consumer-1")
    assert panel.recording.branch.name == "main"  # looking back does not fork

    panel.scrubber.value = 80_000
    assert trace_rows(panel) == after
    assert panel.cluster.consumer("consumer-1").crashed


def test_step_back_then_forward_gives_the_same_picture(panel):
    """The same cluster state gives the same picture: ten moves back, then ten forward."""
    panel.pause_ms.value = 50_000
    panel.pause_button.click()
    panel.advance_ms.value = 30_000
    panel.advance_button.click()
    pictures = [picture(panel)]
    for _ in range(10):
        panel.back_button.click()
        pictures.append(picture(panel))
    assert len(set(pictures)) > 5  # the moves changed what is shown
    for expected in reversed(pictures[:-1]):
        panel.step_button.click()
        assert picture(panel) == expected


def picture(p: ControlPanel) -> str:
    """The view of the cluster now, without change marks (they depend on the picture before)."""
    return cluster_svg(p.cluster_view.snapshot)


def test_next_event_names_what_happened(panel):
    panel.crash_button.click()
    panel.next_button.click()
    text = html.unescape(panel.message.value)
    assert "next event: 63,103 ms, broker-2:" in text
    assert "has failed, removing it from the group" in text
    assert panel.cluster.scheduler.now == 63_103
    panel.previous_button.click()
    assert panel.cluster.scheduler.now < 63_103


def test_acting_in_the_past_forks_and_compare_shows_both(panel):
    """A 10 s and a 50 s GC pause from the same instant: only the 50 s one outlasts
    session.timeout.ms, so only that branch has a new generation."""
    panel.pause_ms.value = 10_000
    panel.pause_button.click()
    panel.advance_ms.value = 70_000
    panel.advance_button.click()
    panel.scrubber.value = 20_000
    panel.back_button.click()  # before the pause
    panel.pause_ms.value = 50_000
    panel.pause_button.click()
    assert "a new branch, 'branch 2'" in html.unescape(panel.message.value)
    panel.advance_ms.value = 70_000
    panel.advance_button.click()
    assert list(panel.branch_select.options) == ["main", "branch 2"]
    assert panel.branch_select.value == "branch 2"
    assert panel.compare_select.value == "main"
    panel.tabs.selected_index = 5  # Compare
    table = html.unescape(panel.compare.value)
    assert "branch branch 2" in table and "branch main" in table
    row = re.search(r'<tr data-row="group group-1">(.*?)</tr>', table).group(1)
    assert "generation 2" in row and re.search(r"generation [3-9]", row)
    # back to main: the short pause never caused a rebalance
    panel.branch_select.value = "main"
    assert panel.cluster.group()["generation"] == 2
    assert panel.recording.branch.name == "main"


def test_fork_button_keeps_the_branch(panel):
    panel.advance_ms.value = 1_000
    panel.advance_button.click()
    panel.fork_button.click()
    assert panel.recording.branch.name == "branch 2"
    assert set(panel.branch_select.options) == {"main", "branch 2"}


def test_every_fault_button_explains_itself_on_hover(panel):
    for attr, action in [("crash_button", "crash"), ("pause_button", "pause"),
                         ("resume_button", "resume"), ("drop_heartbeats_button",
                                                       "drop_heartbeats"),
                         ("slow_poll_button", "slow_poll"), ("cut_off_button", "cut_off"),
                         ("leave_button", "leave"), ("add_button", "add_consumer"),
                         ("move_button", "move_coordinator"),
                         ("fail_load_button", "fail_next_load"),
                         ("fail_append_button", "fail_next_append"),
                         ("stall_button", "stall_replica")]:
        assert getattr(panel, attr).tooltip == ACTIONS[action].hint
    for attr in ("back_button", "step_button", "next_button", "previous_button",
                 "advance_button", "fork_button", "reconnect_button",
                 "restore_heartbeats_button", "unstall_button", "check_button"):
        assert getattr(panel, attr).tooltip, attr


def test_predict_then_reveal(panel):
    """When does the coordinator remove a crashed member? Its last heartbeat reached the
    coordinator at 18,103 ms; session.timeout.ms is 45,000."""
    panel.crash_button.click()
    q = panel.ask("expel:consumer-1")
    assert q is not None and panel.tabs.selected_index == 6
    panel.answer.value = "60000"
    panel.check_button.click()
    assert "not yet" in html.unescape(panel.feedback.value)
    panel.answer.value = "63103"
    panel.check_button.click()
    assert "correct" in html.unescape(panel.feedback.value)
    assert panel.cluster.scheduler.now == 20_000  # revealing does not move the run
    assert panel.ask("nope") is None and "no question 'nope'" in html.unescape(
        panel.message.value)


def test_diagrams_number_the_moves_since_the_last_action(panel):
    panel.consumer_select.value = "consumer-1"
    panel.pause_ms.value = 60_000
    panel.pause_button.click()
    panel.advance_ms.value = 70_000
    panel.advance_button.click()
    assert panel.since_ms == 20_000
    dot = panel.dots["member"]
    numbers = [int(n) for n in re.findall(r'label="(\d+)[^"]*"', dot)] or \
        [int(n) for n in re.findall(r"\b(\d)\b", dot)]
    assert numbers, dot


def test_a_misused_scrub_or_step_back_is_refused_in_the_panel(panel):
    assert panel.step_back() is False
    assert "this is where the recording starts" in html.unescape(panel.message.value)
