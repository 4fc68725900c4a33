"""Lesson 10, the kit and real Kafka side by side: the views the notebook shows, the prose's
claims about the recorded runs (datasets/real-kafka), the checks on right and wrong answers,
the re-record cell without Kafka, and the two notebooks (the generator itself:
tests/test_teaching.py). The recording and the parser's coverage: tests/test_real_kafka_dataset.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coordinator_kit.lessons import real_kafka as rk
from teacher_copies import solution_answers

ROOT = Path(__file__).resolve().parent.parent
NAME = "10_the_kit_and_real_kafka.ipynb"
STUDENT = ROOT / "notebooks" / NAME
TEACHER = ROOT / "teachers" / NAME
CHECKS = {"answer_1": rk.check_expiry_ms, "answer_2": rk.check_what_differs}


def _prose() -> str:
    return "".join("".join(c["source"]) for c in json.loads(TEACHER.read_text())["cells"]
                   if c["cell_type"] == "markdown")


# -- the views and the prose's claims -----------------------------------------------------------


def test_section_2_every_differing_fact_is_a_known_difference():
    """A fact that differs is listed with the entry of realkafka.fidelity.KNOWN_DIFFERENCES
    that explains it; the prose counts the facts compared and names the differing one."""
    from coordinator_kit.realkafka.fidelity import KNOWN_DIFFERENCES

    table = rk.runs_table()
    assert [r["scenario"] for r in table.rows] == rk.manifest()["scenarios"]
    compared = differ = 0
    for row in table.rows:
        for client in rk.manifest()["clients"]:
            if row[client] == "not run":
                assert row["scenario"].startswith("kip848-") and client == "kafka-python"
                continue
            n, total = (int(x) for x in row[client].removesuffix(" differ").split(" of "))
            differ, compared = differ + n, compared + total
    facts = rk.differing_facts().rows
    assert len(facts) == differ
    known = {d.what for d in KNOWN_DIFFERENCES}
    for f in facts:
        assert f["known difference"] in known, f
    prose = _prose()
    assert f"One fact of the {compared} compared differs" in prose
    assert [(f["scenario"], f["client"], f["what"]) for f in facts] == \
        [("max-poll", "kafka-python", "generations joined")]
    assert "`a` joined generation 5" in prose and facts[0]["kit"].endswith("b:2,5")


def test_differing_facts_says_when_no_known_difference_explains_one(monkeypatch):
    monkeypatch.setattr(rk, "KNOWN_KINDS", {})
    assert all(f["known difference"] == "-" for f in rk.differing_facts().rows)


def test_section_2_crash_expires_in_full():
    rows = {r["what"]: r for r in rk.comparison("crash-expires", "java").rows}
    assert len(rows) == 16 and all(r["same"] == "yes" for r in rows.values())
    assert rows["generations joined"]["Kafka 4.0.2"] == "a:1,2,3 b:2"
    assert rows["3. b SIGKILLed; a takes all: DescribeGroups"]["kit"] == \
        "Stable consumer/range a:6"
    with pytest.raises(ValueError, match="no recorded run of 'nope'"):
        rk.comparison("nope")


def _ms(row, side, earlier):
    return round((float(row[f"{side} s"]) - float(earlier[f"{side} s"])) * 1000)


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
        assert 450 <= _ms(stabilized[0], side, first) <= 600, side
    # "when b joins, Kafka's rebalance lasts N ms, the kit's M ms"
    joins = [r for r in table.rows if r["event"] == "rebalance_started"]
    kafka, kit = (_ms(stabilized[1], side, joins[1]) for side in ("Kafka 4.0.2", "kit"))
    prose = _prose()
    assert f"Kafka's rebalance lasts {kafka} ms, the kit's\n{kit} ms" in prose
    # "b joins later on Kafka (3.5 s after the group's first line, 1.7 s on the kit)"
    second = [r for r in table.rows if r["event"] == "member_id_required"][1]
    assert (f"({float(second['Kafka 4.0.2 s']):.1f} s after the group's\nfirst line, "
            f"{float(second['kit s']):.1f} s on the kit)") in prose


LINES = "Kafka's lines"


def test_section_3_wording_totals():
    rows = rk.wording_table().rows
    lines = sum(r["Kafka's lines"] for r in rows)
    same = sum(int(r["same wording"].split(" of ")[0]) for r in rows)
    assert f"{same} of Kafka's {lines} lines" in _prose().replace("\n", " ")
    classic = [r for r in rows if not r["scenario"].startswith("kip848-")]
    in_order = sum(int(r["events in the same order"].split(" of ")[0]) for r in classic)
    groups = sum(r["groups"] for r in classic)
    assert f"in {in_order} of the {groups} classic groups" in _prose().replace("\n", " ")
    differing = {r["scenario"] for r in classic
                 if r["same wording"] != f"{r[LINES]} of {r[LINES]}"}
    assert differing == {"short-pause", "long-pause", "static-restart", "max-poll"}
    out_of_order = {r["scenario"] for r in classic
                    if not r["events in the same order"].startswith(f"{r['groups']} of")}
    assert out_of_order == {"max-poll"}


def test_section_3_kip848_lines_the_kit_does_not_write():
    """GroupMetadataManager logs a target assignment after each epoch bump and the epoch bumped
    after fencing a member; the kit's live server wrote neither when the data was recorded (the
    prose says so, and that the kit has since been fixed: tests/test_live_kip848_log.py)."""
    table = rk.broker_side_by_side("kip848-crash-expires", "java")
    kafka_only = [r["event"] for r in table.rows if r["kit"] == "-"]
    assert set(kafka_only) == {"target_assignment_computed", "group_epoch_bumped"}
    assert all(r["Kafka 4.0.2"] != "-" for r in table.rows)
    fenced = next(e for e in rk.broker_events("kit", "g-kip848-crash-expires-java")
                  if e["event"] == "member_fenced")
    assert rk._message(fenced["raw"]).endswith("session expired..")
    assert "Computed a new target assignment for epoch N" in _prose()
    assert "the kit now writes all three" in _prose()


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
    from coordinator_kit.logs.parse import parse_paths

    rows = rk.coverage_table().rows
    assert [r["source"] for r in rows][0] == "Kafka 4.0.2 broker"
    assert all(r["%"] == "100.0" for r in rows), rows
    total = sum(r["coordinator lines"] for r in rows)
    assert f"{total:,}".replace(",", " ") + " of them" in _prose()
    # "Ten lines are quarantined, all in the Java consumer's KIP-848 runs"
    quarantined = {r["source"]: r["quarantined"] for r in rows if r["quarantined"]}
    assert quarantined == {"Kafka's Java consumer": 10}
    java = sorted((rk.DATASET / "kafka" / "clients").rglob("java-*.log"))
    for q in parse_paths(java).quarantine:
        assert "Reconciling assignment with local epoch" in q["raw"], q["raw"][:200]
        assert "groupId=g-kip848-" in q["raw"]


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
    rows = rk.timing_table("SIGKILLed", "paused past the session").rows
    assert {r["scenario"] for r in rows} == {"crash-expires", "kip848-crash-expires",
                                             "long-pause"}
    for r in rows:
        assert 5.5 <= float(r["Kafka (s)"]) <= 7.5 and r["within 2.5 s"] == "yes", r


def test_timing_table_other_timers_max_poll_interval_and_static_session():
    """max-poll ends on max.poll.interval.ms (8 s), static-restart on its 10 s session."""
    from coordinator_kit.realkafka.scenarios import MAX_POLL_MS, STATIC_SESSION_MS

    rows = rk.timing_table("past max.poll.interval.ms", "stopped past the session").rows
    assert {r["scenario"] for r in rows} == {"max-poll", "static-restart"}
    for r in rows:
        timer = MAX_POLL_MS if r["scenario"] == "max-poll" else STATIC_SESSION_MS
        assert timer / 1000 - 0.6 <= float(r["Kafka (s)"]) <= timer / 1000 + 1.5, r
        assert r["within 2.5 s"] == "yes", r
    assert len(rk.timing_table().rows) > len(rows)


def test_the_known_differences_table_wraps_inside_long_names():
    """Section 7: a dotted method or a path may break, so the four columns fit the page."""
    from coordinator_kit.realkafka.fidelity import KNOWN_DIFFERENCES, differences_frame

    table = rk.as_table(differences_frame())
    assert len(table.rows) == len(KNOWN_DIFFERENCES)
    html = table._repr_html_()
    assert html.count("overflow-wrap:anywhere") == 4 * (len(KNOWN_DIFFERENCES) + 1)


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


def test_rerecord_runs_only_when_asked(monkeypatch):
    """run=False (the notebook's RERECORD = False) starts no broker: one line, how to run it,
    and what is missing when Kafka cannot run here."""
    def no_run(*_a, **_k):
        raise AssertionError("a scenario ran")
    import coordinator_kit.realkafka.scenarios as scenarios
    monkeypatch.setattr(scenarios, "run_scenario", no_run)
    monkeypatch.setattr(rk, "kafka_missing", lambda: None)
    out = rk.rerecord("second-joins", "kafka-python", run=False)
    assert out == ("Not re-recorded: set RERECORD = True and run this cell to run second-joins "
                   "with kafka-python on Kafka and on the kit (about 45 s).")
    monkeypatch.setattr(rk, "kafka_missing", lambda: "Kafka 4.0.2 is not fetched: run it")
    out = rk.rerecord(run=False)
    assert out.endswith("It needs Kafka first: Kafka 4.0.2 is not fetched: run it.")
    assert "\n" not in out and repr(out) == out, "shown as one line, without quotes"


def test_rerecord_when_asked_runs_on_both_and_compares(monkeypatch):
    """run=True runs the scenario on a Kafka target and on a kit target and compares their
    traces; the targets here hand back the recorded traces (no broker is started)."""
    from contextlib import contextmanager

    import coordinator_kit.realkafka.scenarios as scenarios

    kafka, kit = rk._pair("max-poll", "kafka-python")
    ran = []

    def target(name):
        @contextmanager
        def make(**_kw):
            yield name
        return make

    def run(target, scenario, client):
        ran.append((target, scenario, client))
        return kafka if target == "kafka" else kit

    monkeypatch.setattr(rk, "kafka_missing", lambda: None)
    monkeypatch.setattr(scenarios, "kafka_target", target("kafka"))
    monkeypatch.setattr(scenarios, "kit_target", target("kit"))
    monkeypatch.setattr(scenarios, "run_scenario", run)
    table = rk.rerecord("max-poll", "kafka-python", run=True)
    assert ran == [("kafka", "max-poll", "kafka-python"), ("kit", "max-poll", "kafka-python")]
    assert table.rows == rk.comparison("max-poll", "kafka-python").rows
    assert table.title.endswith("26 facts, 1 differ")


def test_kafka_missing_names_what_to_do(monkeypatch, tmp_path):
    monkeypatch.setenv("COORDINATOR_KIT_KAFKA_CACHE", str(tmp_path))
    why = rk.kafka_missing()
    assert why is not None and ("kafka fetch" in why or "Java" in why)


# -- the exercises ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(CHECKS))
def test_every_check_reports_an_unanswered_exercise(name):
    assert CHECKS[name](...).status == "unanswered"


def test_the_teacher_solutions_pass_their_checks():
    answers = solution_answers(TEACHER)
    assert set(answers) == set(CHECKS)
    for name, check in CHECKS.items():
        assert check(answers[name]).correct, name


def test_exercise_1_is_read_from_the_log_and_hints_name_the_mistake():
    truth = rk.expiry_ms()
    assert truth == solution_answers(TEACHER)["answer_1"] == 6018
    assert rk.check_expiry_ms(truth - 3).correct and rk.check_expiry_ms(truth + 3.0).correct
    assert "18 ms after the group settled" in rk.check_expiry_ms(truth).message
    assert "the rule" in rk.check_expiry_ms(6000).message
    assert "default" in rk.check_expiry_ms(45000).message
    assert rk.check_expiry_ms(7000).status == "wrong"
    assert rk.check_expiry_ms("6018").status == "wrong"
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
    assert "answer_1 = 6018" not in text
    assert f"teachers/{NAME}" in text, "the exercises say where the worked answers are"


def test_the_notebook_lists_every_choice_of_exercise_2():
    text = _prose()
    for letter, choice in rk.EXERCISE_2_CHOICES.items():
        assert f"**{letter}.** {choice}" in text.replace("`", "")


def test_the_rerecord_cell_is_not_compared_and_shown_once():
    cells = json.loads(STUDENT.read_text())["cells"]
    rerecord = [c for c in cells if "rk.rerecord(" in "".join(c["source"])]
    assert len(rerecord) == 1
    source = "".join(rerecord[0]["source"])
    assert source.startswith("# NBVAL_IGNORE_OUTPUT")
    assert "RERECORD = False" in source and "run=RERECORD" in source, "no broker unless asked"


def test_side_by_side_takes_pandas_frames_as_notebook_5_passes_them():
    """Notebook 5 hands Spark's collected frames (pandas Timestamps) to crash_side_by_side."""
    import pandas as pd
    from coordinator_kit.logs.parse import parse_paths

    one_dies = rk.DATASET.parent / "one-dies" / "server-broker-2.log"
    kit = pd.DataFrame([e for e in parse_paths([one_dies]).events if e["group"] == "group-1"])
    kafka = pd.DataFrame(rk.broker_events("kafka", "g-crash-expires-java"))
    kit["ts"], kafka["ts"] = pd.to_datetime(kit["ts"]), pd.to_datetime(kafka["ts"])
    assert rk.crash_side_by_side(kit, kafka).rows == rk.crash_side_by_side().rows
