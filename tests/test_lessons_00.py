"""Lesson 00, welcome: the Try it cluster and what its prose promises, the two exercises' runs
and checks, and the two notebooks (teacher copy and the student notebook generated from it).

Exercise 1 is Kafka's classic-group session expiry: the coordinator's ``heartbeat-<group>-
<member>`` timer (GroupMetadataManager.scheduleClassicGroupMemberHeartbeat) is re-armed by every
Heartbeat and, while the group is Stable, by every OffsetCommit; when it fires the member "has
failed" and is removed. Exercise 2 is the CoordinatorRuntime's context life when a load fails
(CoordinatorRuntime.scheduleLoadOperation, then scheduleUnloadOperation on resignation), moves
that CoordinatorState.canTransitionFrom allows.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from coordinator_kit.errors import Errors
from coordinator_kit.lessons import welcome as w
from coordinator_kit.runtime import CONTEXT_STATES, CoordinatorState
from coordinator_kit.runtime.sandbox import RuntimeSandbox
from coordinator_kit.viz import ControlPanel
from coordinator_kit.viz.snapshot import cluster_snapshot
from teacher_copies import solution_answers

ROOT = Path(__file__).resolve().parent.parent
STUDENT = ROOT / "notebooks" / "00_welcome.ipynb"
TEACHER = ROOT / "teachers" / "00_welcome.ipynb"
CHECKS = {"answer_1": w.check_crash_expiry, "answer_2": w.check_failed_load}


def _session_left(cluster, client: str) -> int:
    """What the consumer's card shows as `session @b<coordinator>`: ms left on the session timer
    the coordinator keeps for its member."""
    view = next(c for c in cluster_snapshot(cluster).consumers if c.name == client)
    sessions = [m.session for m in view.memberships if m.session is not None]
    assert len(sessions) == 1
    return sessions[0].remaining_ms


# --------------------------------------------------------------------------------------------
# The Try it cluster, and the walk through it that the notebook describes


def test_small_group_is_stable_with_two_members_and_a_ten_second_session():
    c = w.small_group()
    assert c.scheduler.now == w.SETTLE_MS == 10_000
    g = c.group(w.GROUP)
    assert (g["state"], g["generation"], len(g["members"])) == ("Stable", 1, 2)
    assert len(c.partitions) == 1 and c.coordinator_for(w.GROUP) == 0
    assert {x.config.session_timeout_ms for x in c.consumers.values()} == {10_000}
    assert list(c.consumers) == ["consumer-1", "consumer-2"]


def test_the_try_it_walk_reads_as_the_notebook_says():
    panel = ControlPanel(w.small_group())
    c = panel.cluster
    panel.crash_button.click()
    for _ in range(3):
        panel.advance_button.click()
    assert c.scheduler.now == 13_000
    assert _session_left(c, "consumer-1") == 6_007   # runs down: nothing re-arms it
    assert _session_left(c, "consumer-2") > 9_000    # its heartbeats refill it

    # "More to try": the Predict tab asks when the crashed member is removed
    assert panel.ask("expel:consumer-1") is not None
    assert panel.check(19_007).status == "correct" and c.scheduler.now == 13_000
    panel.next_button.click()   # the expiry: 10 s after the last heartbeat reached broker 0
    assert c.scheduler.now == 19_007 and "has failed" in panel.message.value
    panel.next_button.click()
    panel.next_button.click()
    assert "Stabilized group group-1 generation 2 with 1 members" in panel.message.value

    for _ in range(3):
        panel.previous_button.click()
    assert (panel.recording.position.move, c.scheduler.now) == (1, 10_000)
    assert c.consumer("consumer-1").crashed
    panel.back_button.click()
    assert panel.recording.position.move == 0 and not c.consumer("consumer-1").crashed

    panel.pause_ms.value = 5_000
    panel.pause_button.click()
    assert panel.recording.branch.name == "branch 2" and "main" in panel.recording.branches
    panel.advance_ms.value = 20_000
    panel.advance_button.click()
    here = c.group(w.GROUP)
    there = panel.recording.cluster_at("main", c.scheduler.now).group(w.GROUP)
    assert (here["generation"], len(here["members"])) == (1, 2)
    assert (there["generation"], len(there["members"])) == (2, 1)
    assert panel.last_error is None


def test_a_failed_load_on_the_new_coordinator_turns_the_consumers_away_until_it_moves_again():
    panel = ControlPanel(w.small_group())
    c = panel.cluster
    assert panel.broker_select.value == 1
    panel.fail_load_button.click()
    panel.move_button.click()
    panel.advance_ms.value = 5_000
    panel.advance_button.click()
    assert c.brokers[1].runtime.context_state(c.partition_of(w.GROUP)) is CoordinatorState.FAILED
    assert c.group(w.GROUP)["state"] is None
    assert any("NOT_COORDINATOR" in line for line in c.log_lines("INFO", since=0)[-10:])
    panel.broker_select.value = 2
    panel.move_button.click()
    panel.advance_button.click()
    assert (c.group(w.GROUP)["state"], c.group(w.GROUP)["generation"]) == ("Stable", 1)
    assert panel.last_error is None


# --------------------------------------------------------------------------------------------
# Exercise 1: when is the crashed consumer removed?


def test_the_crashed_member_expires_session_timeout_after_the_last_request_that_reached_it():
    f = w.crash_facts()
    assert f.crash_ms == w.CRASH_AT_MS
    assert f.expired_ms == f.last_rearm_ms + w.SESSION_TIMEOUT_MS
    # an auto-commit (every 5 s) came after the last heartbeat and re-armed the timer too
    assert f.last_rearm_request == "OffsetCommit"
    assert f.last_heartbeat_ms < f.last_rearm_ms < f.crash_ms < f.next_heartbeat_ms
    assert (f.last_heartbeat_ms, f.last_rearm_ms, f.expired_ms) == (15_007, 16_101, 26_101)


def test_without_a_commit_after_the_last_heartbeat_the_heartbeat_counts():
    f = w.crash_facts(10_000)   # the Try it walk: crash at once
    assert f.last_rearm_request == "Heartbeat" and f.last_rearm_ms == f.last_heartbeat_ms == 9_007
    assert f.expired_ms == 19_007


def test_the_panel_shows_the_time_left_that_exercise_1_needs():
    c = w.small_group()
    c.run_for(w.CRASH_AT_MS - c.scheduler.now)
    assert w.CRASH_AT_MS + _session_left(c, w.CRASHED) == w.crash_facts().expired_ms


@pytest.mark.parametrize("answer", [26_101, "26101", "26,101 ms", "26_101", "09:00:26,101",
                                    "09:00:26.101"])
def test_exercise_1_accepts_the_time_in_every_form(answer):
    fb = w.check_crash_expiry(answer)
    assert fb.status == "correct" and "OffsetCommit" in fb.message


@pytest.mark.parametrize("answer, hint", [
    (27_000, "from the crash"),
    (25_007, "after the last Heartbeat"),
    (28_007, "never sent"),
    (26_100, "one network hop"),
    (12_000, "Before the crash"),
    (40_000, "session bar"),
    ("soon", "is not a time"),
    (True, "is not a time"),
])
def test_exercise_1_hints_at_each_slip(answer, hint):
    fb = w.check_crash_expiry(answer)
    assert fb.status == "wrong" and hint in fb.message


# --------------------------------------------------------------------------------------------
# Exercise 2: a failed load, then leadership moves away


def test_a_failed_load_leaves_the_context_failed_until_the_broker_resigns():
    sb = w.failed_load_run()
    s = CoordinatorState
    assert w.context_path(sb, w.FAILED_BROKER) == [s.INITIAL, s.LOADING, s.FAILED, s.CLOSED]
    assert w.context_path(sb, w.NEW_LEADER) == [s.INITIAL, s.LOADING, s.ACTIVE]
    for broker in (w.FAILED_BROKER, w.NEW_LEADER):
        path = w.context_path(sb, broker)
        assert all(CONTEXT_STATES.can_transition(a, b) for a, b in zip(path, path[1:]))
    assert sb.state(broker=w.FAILED_BROKER) is None      # the closed context is dropped
    log = w.transitions_log(sb, w.FAILED_BROKER)
    assert "Transition from LOADING to FAILED." in log and "Failed to load metadata" in log


def test_a_failed_context_answers_not_coordinator_and_the_new_leader_serves():
    # the run of exercise 2 up to the failed load, before leadership moves
    early = RuntimeSandbox(brokers=3, append_linger_ms=0)
    early.leader().loader.fail_next_load(early.tp())
    early.start()
    early.run_for(10)
    write = early.put("k", "v")
    early.scheduler.run_pending()
    assert early.state(broker=w.FAILED_BROKER) is CoordinatorState.FAILED
    assert write.exception().error is Errors.NOT_COORDINATOR
    assert w.failed_load_run().state(broker=w.NEW_LEADER) is CoordinatorState.ACTIVE


@pytest.mark.parametrize("answer", [
    ["INITIAL", "LOADING", "FAILED", "CLOSED"],
    ("initial", " loading", "Failed", "CLOSED "),
    [CoordinatorState.INITIAL, CoordinatorState.LOADING, CoordinatorState.FAILED,
     CoordinatorState.CLOSED],
])
def test_exercise_2_accepts_the_path_in_every_form(answer):
    assert w.check_failed_load(answer).status == "correct"


@pytest.mark.parametrize("answer, hint", [
    (["INITIAL", "FAILED", "CLOSED"], "never moves a context from INITIAL to FAILED"),
    (["INITIAL", "LOADING", "CLOSED"], "when its load fails"),
    (["INITIAL", "LOADING", "FAILED", "LOADING", "ACTIVE"], "does not retry on its own"),
    (["INITIAL", "LOADING", "ACTIVE", "FAILED", "CLOSED"], "never ACTIVE"),
    (["LOADING", "FAILED", "CLOSED"], "Start where every context starts"),
    (["INITIAL", "LOADING", "FAILED"], "Where does unloading leave a context?"),
    (["INITIAL", "LOADING", "FAILED", "DEAD"], "not a state of a coordinator context"),
    ("FAILED", "Give a list"),
    ([], "when its load fails"),
])
def test_exercise_2_hints_at_each_slip(answer, hint):
    fb = w.check_failed_load(answer)
    assert fb.status == "wrong" and hint in fb.message


@pytest.mark.parametrize("check", list(CHECKS.values()))
@pytest.mark.parametrize("placeholder", [..., None])
def test_an_unanswered_exercise_is_reported_not_raised(check, placeholder):
    assert check(placeholder).status == "unanswered"


# --------------------------------------------------------------------------------------------
# The notebooks


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text())["cells"]


def _source(cell: dict) -> str:
    return "".join(cell["source"])


def test_the_teachers_answers_pass_every_check():
    answers = solution_answers(TEACHER)
    assert list(answers) == list(CHECKS)
    for name, check in CHECKS.items():
        assert check(answers[name]).status == "correct", name


def test_every_exercise_has_an_answer_cell_then_its_check():
    code = [_source(c) for c in _cells(STUDENT) if c["cell_type"] == "code"]
    for name, check in CHECKS.items():
        i = code.index(f"{name} = ...")
        assert code[i + 1] == f"welcome.{check.__name__}({name})"


def _outputs_of(path: Path, source: str) -> str:
    for c in _cells(path):
        if _source(c) == source:
            return "".join("".join(o.get("data", {}).get("text/plain", o.get("text", "")))
                           for o in c["outputs"])
    raise AssertionError(f"no cell {source!r} in {path.name}")


def test_stored_outputs_say_unanswered_for_students_and_correct_for_teachers():
    for name, check in CHECKS.items():
        cell = f"welcome.{check.__name__}({name})"
        assert "not answered yet" in _outputs_of(STUDENT, cell)
        assert "✔ correct" in _outputs_of(TEACHER, cell)


def test_the_student_notebook_leaks_no_solution():
    text = STUDENT.read_text()
    assert "BEGIN SOLUTION" not in text and "26_101" not in text and "26101" not in text
    assert not any("solution" in c["metadata"].get("tags", []) for c in _cells(STUDENT))
    assert '["INITIAL", "LOADING", "FAILED", "CLOSED"]' not in text
    assert "teachers/00_welcome.ipynb" in text, "the exercises say where the worked answers are"


@pytest.mark.parametrize("path", [STUDENT, TEACHER], ids=["student", "teacher"])
def test_notebook_shape(path):
    nb = json.loads(path.read_text())
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    assert "widgets" not in nb["metadata"], "save notebooks without widget state"
    cells = nb["cells"]
    assert "you will be able to" in _source(cells[0])
    markdown = "\n".join(_source(c) for c in cells if c["cell_type"] == "markdown")
    order = ["## 1. The coordinator context", "## 4. Try it", "## 5. Make your own scenario",
             "## Exercises", "## Next"]
    assert [markdown.index(h) for h in order] == sorted(markdown.index(h) for h in order)
    nxt = markdown[markdown.index("## Next"):]
    assert "01_heartbeats_and_session_timeouts.ipynb" in nxt and "make teach" in nxt
    assert "make test" not in nxt, "Next is the learner's next step, not a developer's command"
    code = [_source(c) for c in cells if c["cell_type"] == "code"]
    tryit = [i for i, c in enumerate(code) if "panel = ControlPanel(" in c]
    assert len(tryit) == 1
    assert not any(re.search(r"\bpanel\.", c) for c in code[tryit[0] + 1:]), \
        "the Try it panel stays fresh after Run All: no cell below drives it"
    scenario = "\n".join(code[tryit[0] + 1:])
    for api in ("new_cluster(seed=", "add_consumer(", "session_timeout_ms=", "run_for(",
                ".pause(", "group()", 'log_lines("INFO"', "member_diagram(", "Recording(cluster)",
                "ControlPanel(rec)", ".export()", "Recording.from_export(",
                "Recording.from_scenario("):
        assert api in scenario, api
    assert not any(c.lstrip().startswith(("def ", "class ")) or "\ndef " in c for c in code), \
        "logic belongs in coordinator_kit.lessons, not in the notebook"
    assert not any(c.startswith("# NBVAL_IGNORE_OUTPUT") for c in code), \
        "every output of this notebook is deterministic"
    for c in cells:
        for out in c.get("outputs", []):
            assert out["output_type"] != "error", _source(c)
            assert out.get("name") != "stderr", _source(c)
    # the context diagram is stored as a picture that renders before any cell runs
    first = next(c for c in cells if c["cell_type"] == "code" and
                 _source(c) == "state_diagram(CONTEXT_STATES)")
    html = "".join(first["outputs"][0]["data"]["text/html"])
    assert html.startswith('<img src="data:image/svg+xml,')


def test_the_scenario_section_shows_a_saved_run_replayed_line_for_line():
    out = "".join(_outputs_of(STUDENT, c) for c in
                  [_source(c) for c in _cells(STUDENT) if c["cell_type"] == "code"
                   and "Recording.from_export(" in _source(c)])
    assert "same log, line for line: True" in out
    refused = "".join(_outputs_of(STUDENT, _source(c)) for c in _cells(STUDENT)
                      if c["cell_type"] == "code" and "rec.export()" in _source(c))
    assert "ValueError: this recording started from a cluster built in code" in refused


def test_welcome_exports_what_it_names():
    missing = [n for n in w.__all__ if not hasattr(w, n)]
    assert not missing and len(set(w.__all__)) == len(w.__all__)
