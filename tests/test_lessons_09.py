"""Lesson 09, the new protocol: the views the notebook shows, the prose's claims about the runs
it shows, the checks on right and wrong answers, and the two notebooks (the generator itself:
tests/test_teaching.py). The protocols' behaviour is tested in tests/test_protocols_compare.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coordinator_kit.eras.api import Scenario
from coordinator_kit.lessons import new_protocol as npr
from teacher_copies import solution_answers

ROOT = Path(__file__).resolve().parent.parent
NAME = "09_the_new_protocol.ipynb"
STUDENT = ROOT / "notebooks" / NAME
TEACHER = ROOT / "teachers" / NAME
CHECKS = {"answer_1": npr.check_stopped_on_leave, "answer_2": npr.check_why_later}


# -- runs, views and the prose's claims ------------------------------------------------------


def test_run_is_cached_by_name_and_refuses_unknown_ones():
    assert npr.run("join") is npr.run("join")
    with pytest.raises(ValueError, match="no scenario 'nope'"):
        npr.run("nope")
    with pytest.raises(TypeError, match="scenario name or an eras.api.Scenario"):
        npr.run(42)  # type: ignore[arg-type]


def test_join_claims_of_section_2():
    """Eager: all six stop at ~33.0 s for ~100 ms; cooperative: t-5 from 33.1 s for ~3 s;
    KIP-848: t-4 from 35.3 s for 1.4 s, consumer-1 and consumer-3 undisturbed."""
    rows = {r["protocol"]: r for r in npr.comparison_table(npr.run("join")).rows}
    assert rows["classic eager"]["partitions stopped"] == 6
    assert rows["classic cooperative"]["rounds"] == 2
    assert rows["KIP-848"]["rounds"] == 1 and rows["KIP-848"]["partitions stopped"] == 1
    members = {(r["protocol"], r["member"]): r["could consume (virtual s: partitions)"]
               for r in npr.member_table(npr.run("join")).rows}
    assert members[("classic eager", "consumer-1")].startswith("31.5-33.008: t-0, t-1; 33.114")
    assert members[("classic cooperative", "consumer-4")] == "36.214-60: t-5"
    assert members[("KIP-848", "consumer-2")] == "31.5-35.3: t-3, t-4; 35.3-60: t-3"
    assert members[("KIP-848", "consumer-4")] == "36.7-60: t-4"
    assert members[("KIP-848", "consumer-1")] == "31.5-60: t-0, t-1"


def test_requests_table_has_no_join_or_sync_for_kip848():
    rows = {r["request"]: r for r in npr.requests_table(npr.run("join")).rows}
    assert rows["JoinGroup"]["KIP-848"] == rows["SyncGroup"]["KIP-848"] == 0
    assert rows["ConsumerGroupHeartbeat"]["classic eager"] == 0
    assert rows["total"]["KIP-848"] < rows["total"]["classic eager"]


def test_long_pause_claims_of_section_4():
    c = npr.run("long-pause")
    assert "Member" in str(npr.log_excerpt(c, "consumer", "fenced", since_ms=75_000, limit=1))
    assert str(npr.log_excerpt(c, "consumer", "fenced", limit=1)).startswith(
        "[2025-03-03 09:01:15,2")
    assert str(npr.log_excerpt(c, "eager", "heartbeat expiration", limit=1)).startswith(
        "[2025-03-03 09:01:16,1")
    rows = {r["protocol"]: r for r in npr.comparison_table(c).rows}
    assert rows["KIP-848"]["two consumers (partition-s)"] > \
        rows["classic eager"]["two consumers (partition-s)"] > 0
    coordinator = {r["protocol"]: r for r in npr.comparison_table(npr.run("coordinator")).rows}
    assert all(r["partitions stopped"] == 0 and r["rounds"] == 0 for r in coordinator.values())


def test_log_excerpt_filters_and_names_the_protocols():
    lines = npr.log_excerpt(npr.run("join"), "consumer", "consumer-2", since_ms=31_500,
                            any_of=("Revoke previously",))
    assert len(lines) == 1 and "Revoke previously assigned partitions t-4" in lines.lines[0]
    with pytest.raises(ValueError, match="the protocols are eager, cooperative, consumer"):
        npr.log_excerpt(npr.run("join"), "sticky")


def test_lanes_are_a_deterministic_picture():
    a = npr.lanes(npr.run("join"))
    b = npr.lanes(npr.run("join"))
    assert a.svg == b.svg and "<svg" in a.svg


def test_my_scenario_builds_and_refuses_with_the_value_named():
    sc = npr.my_scenario([(20_000, "join", "consumer-4")], consumers=3, partitions=6)
    assert isinstance(sc, Scenario) and sc.run_ms == 80_000
    with pytest.raises(ValueError, match="names 'consumer-9'"):
        npr.my_scenario([(20_000, "crash", "consumer-9")])
    with pytest.raises(ValueError, match="10000 ms or later"):
        npr.my_scenario([(1_000, "crash", "consumer-1")])
    with pytest.raises(ValueError, match="consumers is a whole number"):
        npr.my_scenario([(20_000, "crash", "consumer-1")], consumers=0)
    with pytest.raises(TypeError, match="a fault is a Fault or a tuple"):
        npr.my_scenario(["crash"])


# -- exercises ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(CHECKS))
def test_every_check_reports_an_unanswered_exercise(name):
    assert CHECKS[name](...).status == "unanswered"


def test_the_teacher_solutions_pass_their_checks():
    answers = solution_answers(TEACHER)
    assert set(answers) == set(CHECKS)
    for name, check in CHECKS.items():
        assert check(answers[name]).correct, name


def test_exercise_1_hints_name_what_was_missed():
    fb = npr.check_stopped_on_leave({"eager": 2, "cooperative": 2, "consumer": 2})
    assert fb.status == "wrong" and "onJoinPrepare" in fb.message
    fb = npr.check_stopped_on_leave({"eager": 6, "cooperative": 6, "consumer": 0})
    assert fb.status == "wrong" and "only what it gives up" in fb.message
    assert npr.check_stopped_on_leave({"eager": 6}).status == "wrong"
    assert npr.check_stopped_on_leave({"eager": True, "cooperative": 2,
                                       "consumer": 2}).status == "wrong"


@pytest.mark.parametrize("letter", ["a", "c", "d"])
def test_exercise_2_wrong_choices_say_why(letter):
    fb = npr.check_why_later(letter)
    assert fb.status == "wrong" and fb.message.startswith(f"Not {letter}:")
    assert npr.check_why_later("e").status == "wrong"


def test_exercise_2_claims_hold_for_the_run():
    """KIP-848 settles later than both classic protocols in `leave`, in one round."""
    rows = {r["protocol"]: r for r in npr.comparison_table(npr.run("leave")).rows}
    assert rows["KIP-848"]["settled after (ms)"] == 3800
    assert rows["classic eager"]["settled after (ms)"] == \
        rows["classic cooperative"]["settled after (ms)"] == 1614
    assert rows["KIP-848"]["rounds"] == 1


# -- the notebooks ---------------------------------------------------------------------------


def test_the_student_notebook_has_every_exercise_and_no_solution():
    text = STUDENT.read_text()
    for name in CHECKS:
        assert f"{name} = ..." in text
    assert "Worked answer" not in text
    assert "### BEGIN SOLUTION" not in text
    assert '\\"eager\\": 6, \\"cooperative\\": 2' not in text


def test_the_notebook_lists_every_choice_of_exercise_2():
    text = "".join("".join(c["source"]) for c in json.loads(TEACHER.read_text())["cells"])
    for letter, choice in npr.EXERCISE_2_CHOICES.items():
        assert f"**{letter}.** {choice}" in text
