"""Lesson 10, the kit and real Kafka side by side: the views the notebook shows, the prose's
claims about the recorded runs (datasets/real-kafka), the checks on right and wrong answers,
the re-record cell without Kafka, and the two notebooks (the generator itself:
tests/test_teaching.py). The recording and the parser's coverage: tests/test_real_kafka_dataset.py.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from coordinator_kit.lessons import real_kafka as rk
from coordinator_kit.teaching import student as st

ROOT = Path(__file__).resolve().parent.parent
NAME = "10_the_kit_and_real_kafka.ipynb"
STUDENT = ROOT / "notebooks" / NAME
TEACHER = ROOT / "teachers" / NAME
CHECKS = {"answer_1": rk.check_expiry_ms, "answer_2": rk.check_what_differs}


def _solution_answers() -> dict[str, object]:
    answers = {}
    for _cell, block, _names in st.solution_blocks(json.loads(TEACHER.read_text())):
        for node in ast.parse(block).body:
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                answers[node.targets[0].id] = ast.literal_eval(node.value)
    return answers


def _prose() -> str:
    return "".join("".join(c["source"]) for c in json.loads(TEACHER.read_text())["cells"]
                   if c["cell_type"] == "markdown")


# -- the views and the prose's claims -----------------------------------------------------------


def test_section_2_no_client_visible_fact_differs_for_any_client():
    table = rk.runs_table()
    assert [r["scenario"] for r in table.rows] == rk.manifest()["scenarios"]
    for row in table.rows:
        for client in rk.manifest()["clients"]:
            assert row[client].startswith("0 of "), (row["scenario"], client, row[client])
    assert "Not one fact differs" in _prose()


def test_section_2_crash_expires_in_full():
    rows = {r["what"]: r for r in rk.comparison("crash-expires", "java").rows}
    assert len(rows) == 16 and all(r["same"] == "yes" for r in rows.values())
    assert rows["generations joined"]["Kafka 4.0.2"] == "a:1,2,3 b:2"
    assert rows["3. b SIGKILLed; a takes all: DescribeGroups"]["kit"] == \
        "Stable consumer/range a:6"
    with pytest.raises(ValueError, match="no recorded run of 'nope'"):
        rk.comparison("nope")


def test_section_3_claims_about_the_broker_logs():
    table = rk.broker_side_by_side("crash-expires", "java")
    events = [r["event"] for r in table.rows]
    assert "/" not in "".join(events), "both logs have the same events in the same order"
    assert all(r["Kafka 4.0.2"] != "-" and r["kit"] != "-" for r in table.rows)
    assert events[-1] == "group_empty"
    stabilized = [r for r in table.rows if r["event"] == "group_stabilized"]
    # "stabilise the generation 500 ms later": the initial rebalance delay, on both
    first = table.rows[2]
    for side in ("Kafka 4.0.2", "kit"):
        delay = float(stabilized[0][f"{side} s"]) - float(first[f"{side} s"])
        assert 0.45 <= delay <= 0.6, (side, delay)
    # "Kafka's rebalance lasts 330 ms, the kit's 125 ms" when b joins
    joins = [r for r in table.rows if r["event"] == "rebalance_started"]
    assert round((float(stabilized[1]["Kafka 4.0.2 s"]) - float(joins[1]["Kafka 4.0.2 s"]))
                 * 1000) == 330
    assert round((float(stabilized[1]["kit s"]) - float(joins[1]["kit s"])) * 1000) == 125
    prose = _prose()
    assert "Kafka's rebalance lasts 330 ms, the kit's\n125 ms" in prose


def test_section_3_wording_totals():
    rows = rk.wording_table().rows
    lines = sum(r["Kafka's lines"] for r in rows)
    same = sum(int(r["same wording"].split(" of ")[0]) for r in rows)
    assert (same, lines) == (267, 273)
    assert all(r["events in the same order"] == "3 of 3 groups" for r in rows)
    assert "267 of 273 lines read the same" in _prose()
    differing = {r["scenario"] for r in rows if not r["same wording"].startswith(
        str(r["Kafka's lines"]))}
    assert differing == {"short-pause", "long-pause"}


def test_section_4_three_wordings_of_one_join():
    rows = {r["event"]: r for r in rk.client_events_table("crash-expires").rows}
    for client in ("Kafka's Java consumer", "kafka-python"):
        assert rows["joined"][client] == 3 and rows["partitions_assigned"][client] == 3
    assert rows["member_state_changed"]["confluent-kafka (librdkafka)"] > 0
    lines = rk.client_log("crash-expires", "confluent-kafka", "a", "JoinGroup response", limit=2)
    assert "GenerationId -1" in lines.lines[0] and "GenerationId 1," in lines.lines[1]
    with pytest.raises(ValueError, match="no log"):
        rk.client_log("crash-expires", "java", "zz")


def test_section_5_every_coordinator_line_is_recognised():
    rows = rk.coverage_table().rows
    assert [r["source"] for r in rows][0] == "Kafka 4.0.2 broker"
    assert all(r["%"] == "100.0" and r["quarantined"] == 0 for r in rows), rows


def test_section_6_the_kit_simulated_crash_tells_the_same_story():
    rows = rk.crash_side_by_side().rows
    same = [r for r in rows if r["kit: one-dies"] != "-" and r["Kafka: crash-expires"] != "-"]
    assert len(same) == 14 and same == rows[:14], "the same fourteen lines in the same order"
    assert [r["event"] for r in rows[14:]] == ["member_session_expired", "rebalance_started",
                                               "group_empty"]
    assert all(r["kit: one-dies"] == "-" for r in rows[14:])
    expired = next(r for r in rows if r["event"] == "member_session_expired")
    assert expired["kit: one-dies s"] == "63.100"


def test_timing_table_keeps_session_expiries_near_6_s():
    for r in rk.timing_table("takes all").rows:
        assert 5.5 <= float(r["Kafka (s)"]) <= 7.5 and r["within 2.5 s"] == "yes", r


def test_logs_and_broker_events_refuse_unknown_names():
    with pytest.raises(ValueError, match="which must be one of"):
        rk.logs("nope")
    with pytest.raises(ValueError, match="which must be kafka or kit"):
        rk.broker_events("broker", "g")
    assert len(rk.logs("kafka")) == len(rk.logs("broker")) + len(rk.logs("clients"))


def test_rerecord_without_kafka_says_why_in_one_line(monkeypatch):
    monkeypatch.setattr(rk, "kafka_missing", lambda: "Kafka 4.0.2 is not fetched: run it")
    out = rk.rerecord()
    assert out == ("Not re-recorded: Kafka 4.0.2 is not fetched: run it. The tables above are "
                   "the recorded runs.")


def test_kafka_missing_names_what_to_do(monkeypatch, tmp_path):
    monkeypatch.setenv("COORDINATOR_KIT_KAFKA_CACHE", str(tmp_path))
    why = rk.kafka_missing()
    assert why is not None and ("kafka fetch" in why or "Java" in why)


# -- the exercises ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(CHECKS))
def test_every_check_reports_an_unanswered_exercise(name):
    assert CHECKS[name](...).status == "unanswered"


def test_the_teacher_solutions_pass_their_checks():
    answers = _solution_answers()
    assert set(answers) == set(CHECKS)
    for name, check in CHECKS.items():
        assert check(answers[name]).correct, name


def test_exercise_1_is_read_from_the_log_and_hints_name_the_mistake():
    assert rk.expiry_ms() == 6150
    assert rk.check_expiry_ms(6140).correct and rk.check_expiry_ms(6160.0).correct
    assert "the rule" in rk.check_expiry_ms(6000).message
    assert "default" in rk.check_expiry_ms(45000).message
    assert rk.check_expiry_ms(7000).status == "wrong"
    assert rk.check_expiry_ms("6150").status == "wrong"
    assert rk.check_expiry_ms(True).status == "wrong"


@pytest.mark.parametrize("letter", ["a", "c", "d"])
def test_exercise_2_wrong_choices_say_why(letter):
    fb = rk.check_what_differs(letter)
    assert fb.status == "wrong" and fb.message.startswith(f"Not {letter}:")
    assert rk.check_what_differs("e").status == "wrong"
    assert rk.check_what_differs(" B ").correct


# -- the notebooks ----------------------------------------------------------------------------


def test_the_student_notebook_has_every_exercise_and_no_solution():
    text = STUDENT.read_text()
    for name in CHECKS:
        assert f"{name} = ..." in text
    assert "Worked answer" not in text
    assert "### BEGIN SOLUTION" not in text
    assert "answer_1 = 6150" not in text
    assert f"teachers/{NAME}" in text, "the exercises say where the worked answers are"


def test_the_notebook_lists_every_choice_of_exercise_2():
    text = _prose()
    for letter, choice in rk.EXERCISE_2_CHOICES.items():
        assert f"**{letter}.** {choice}" in text.replace("`", "")


def test_the_rerecord_cell_is_not_compared_and_shown_once():
    cells = json.loads(STUDENT.read_text())["cells"]
    rerecord = [c for c in cells if "rk.rerecord(" in "".join(c["source"])]
    assert len(rerecord) == 1
    assert "".join(rerecord[0]["source"]).startswith("# NBVAL_IGNORE_OUTPUT")


def test_side_by_side_takes_pandas_frames_as_notebook_5_passes_them():
    """Notebook 5 hands Spark's collected frames (pandas Timestamps) to crash_side_by_side."""
    import pandas as pd
    from coordinator_kit.logs.parse import parse_paths

    one_dies = rk.DATASET.parent / "one-dies" / "server-broker-2.log"
    kit = pd.DataFrame([e for e in parse_paths([one_dies]).events if e["group"] == "group-1"])
    kafka = pd.DataFrame(rk.broker_events("kafka", "g-crash-expires-java"))
    kit["ts"], kafka["ts"] = pd.to_datetime(kit["ts"]), pd.to_datetime(kafka["ts"])
    assert rk.crash_side_by_side(kit, kafka).rows == rk.crash_side_by_side().rows
