"""Lesson 06, classroom exercises: the seeded situations behind each exercise, the checks on
right and wrong answers, and the two notebooks (the generator itself: tests/test_teaching.py).

Each check must accept the right answer in every form it advertises, reject a wrong one with a
hint that names what happened in the kit's run, and report an unanswered exercise (``...`` or
None) without raising. The student notebook must hold every exercise the teacher's copy solves
and leak none of the solutions.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from coordinator_kit.assignors import Subscription
from coordinator_kit.assignors.reference import kafka_python_assign
from coordinator_kit.errors import Errors
from coordinator_kit.lessons import classroom as cr
from coordinator_kit.teaching import student as st
from coordinator_kit.topic import TopicPartition
from coordinator_kit.viz import ControlPanel
from teacher_copies import solution_answers

ROOT = Path(__file__).resolve().parent.parent
STUDENT = ROOT / "notebooks" / "06_classroom_exercises.ipynb"
SOLUTIONS = ROOT / "teachers" / "06_classroom_exercises.ipynb"
CHECKS = [cr.check_session_timeout, cr.check_generation_cause, cr.check_assignment,
          cr.check_stuck_write]


# --------------------------------------------------------------------------------------------
# Exercise 1: the session timeout (the broker's limits, heartbeats re-arm, expiry)


def test_a_pause_longer_than_the_session_expels_at_last_rearm_plus_session():
    at_20s, worst = cr.pause_trials(10_000, 3_000)
    for t in (at_20s, worst):
        assert t.refused is None and not t.survived
        assert t.expelled_at == t.last_rearm + 10_000  # the timer, not the pause
        assert t.pause_start < t.expelled_at < t.pause_end
        assert t.generation_before == 2 and t.generation_after > 2
    # The worst moment: 1 ms before the next heartbeat goes out. The last one reached the
    # coordinator 1 ms after it was sent (network latency), hence 3000 - 2.
    assert worst.pause_start - worst.last_rearm == 3_000 - 2
    assert worst.pause_start - worst.last_rearm > at_20s.pause_start - at_20s.last_rearm


def test_a_short_heartbeat_lets_a_12_s_session_cover_a_10_s_pause():
    for t in cr.pause_trials(12_000, 1_000):
        assert t.survived and t.generation_before == t.generation_after == 2
        # the coordinator hears nothing for the pause plus at most one heartbeat interval
        assert t.silence_ms is not None and cr.PAUSE_MS < t.silence_ms <= cr.PAUSE_MS + 1_000


def test_the_broker_refuses_a_session_above_its_maximum():
    """GroupCoordinatorService.joinGroup: a session timeout outside [min, max] ->
    INVALID_SESSION_TIMEOUT."""
    t, _ = cr.pause_trials(45_000)
    assert t.refused is Errors.INVALID_SESSION_TIMEOUT
    assert cr.limited_cluster(45_000).group()["generation"] in (None, -1, 0)


@pytest.mark.parametrize("answer", [
    {"session.timeout.ms": 12_000, "heartbeat.interval.ms": 1_000},
    {"session.timeout.ms": 11_500, "heartbeat.interval.ms": 1_000},
    {"session.timeout.ms": 12_000, "heartbeat.interval.ms": 1_500},
])
def test_exercise_1_accepts_any_configuration_that_survives(answer):
    result = cr.check_session_timeout(answer)
    assert result.correct, result
    assert "generation stays 2" in result.message


def test_exercise_1_names_what_happened_to_a_wrong_answer():
    default_heartbeat = cr.check_session_timeout(12_000)
    assert default_heartbeat.status == "wrong"
    assert re.search(r"expelled at t=\d+ms", default_heartbeat.message)
    assert "Generation went 2→" in default_heartbeat.message
    assert "default, 3000 ms" in default_heartbeat.message
    too_short = cr.check_session_timeout({"session.timeout.ms": 9_000,
                                          "heartbeat.interval.ms": 1_000}).message
    assert "longer than the pause itself" in too_short
    too_long = cr.check_session_timeout({"session.timeout.ms": 45_000,
                                         "heartbeat.interval.ms": 3_000}).message
    assert "INVALID_SESSION_TIMEOUT" in too_long and "12000" in too_long
    assert "must be lower than session.timeout.ms" in cr.check_session_timeout(
        {"session.timeout.ms": 12_000, "heartbeat.interval.ms": 12_000}).message
    assert "whole number" in cr.check_session_timeout({"session.timeout.ms": "12s"}).message
    assert "unknown: ['x']" in cr.check_session_timeout({"x": 1}).message
    assert "dict" in cr.check_session_timeout([12_000]).message


def test_exercise_1_reports_the_longest_silence_against_the_session():
    tight = cr.check_session_timeout({"session.timeout.ms": 12_000,
                                      "heartbeat.interval.ms": 2_000})
    assert tight.correct and "was 11999 ms, below session.timeout.ms=12000" in tight.message
    over = cr.check_session_timeout({"session.timeout.ms": 12_000,
                                     "heartbeat.interval.ms": 2_001})
    assert over.status == "wrong" and "just before a heartbeat" in over.message


def test_gc_trial_shows_both_pauses():
    table = cr.gc_trial(10_000, 3_000)
    assert table.column("pause") == ["at 20 s", "just before a heartbeat"]
    assert all(h.startswith("expelled at") for h in table.column("what happened"))
    assert cr.gc_trial(45_000).column("what happened") == [
        "JoinGroup answered INVALID_SESSION_TIMEOUT"] * 2


# --------------------------------------------------------------------------------------------
# Exercise 2: who started a generation (the reasons prepareRebalance logs)


def test_read_logs_reads_the_committed_files_in_time_order():
    logs = cr.read_logs("many-groups")
    folder = cr.dataset_dir("many-groups")
    assert folder is not None
    files = sorted(folder.glob("server-broker-*.log"))
    assert len(logs) == sum(len(f.read_text().splitlines()) for f in files)
    assert list(logs.columns) == ["file", "line", "timestamp", "ms", "level", "message",
                                  "logger", "raw"]
    assert list(logs.ms) == sorted(logs.ms)
    first = logs.iloc[0]
    assert first.raw == f"[{first.timestamp}] {first.level} {first.message} ({first.logger})"
    with_clients = cr.read_logs("many-groups", clients=True)
    assert set(with_clients.file) > set(logs.file)
    with pytest.raises(ValueError, match="brokers=True"):
        cr.read_logs(brokers=False)


def test_read_logs_without_the_folder_renders_the_same_lines_from_the_kit(monkeypatch):
    committed = cr.read_logs("many-groups")
    monkeypatch.setattr(cr, "dataset_dir", lambda name=None: None)
    rendered = cr.read_logs("many-groups")
    assert rendered.equals(committed)


def test_every_rebalance_ends_in_the_generation_after_the_one_it_names():
    cluster = cr._dataset_cluster("many-groups")
    stabilized = {e.fields["generation"]: e.ts for e in cluster.trace.events
                  if e.kind in ("group_stabilized", "group_empty")
                  and e.fields.get("group") == "billing"}
    starts = cr._rebalance_starts(cluster, "billing")
    assert [s.generation for s in starts] == list(range(1, len(starts) + 1))
    for s in starts:
        assert stabilized[s.generation] >= s.at
        assert s.cause in cr.CAUSES and len(s.members) == 1


def test_the_answer_is_in_the_committed_log_files():
    """Independent of the trace: the exercise is answerable from the files a learner reads."""
    pattern = re.compile(r"Preparing to rebalance group billing in state \w+ with old generation "
                         rf"{cr.EXERCISE_2_GENERATION - 1} \(reason: (.*)\)\. \(")
    folder = cr.dataset_dir("many-groups")
    hits = [m.group(1) for f in sorted(folder.glob("server-broker-*.log"))
            for line in f.read_text().splitlines() if (m := pattern.search(line))]
    assert len(hits) == 1
    answer = solution_answers(SOLUTIONS)["answer_2"]
    assert answer["member id"] in hits[0] and hits[0].startswith("explicit `LeaveGroup`")


@pytest.mark.parametrize("answer", [
    {"member id": "billing-2-5581483c-6d2d-4354-a497-d1c8c1d1d384", "cause": "left"},
    {"member id": "billing-2-5581483c", "cause": "leave"},
    ("billing-2-5581483c", "LeaveGroup"),
])
def test_exercise_2_accepts_the_member_in_every_form(answer):
    result = cr.check_generation_cause(answer)
    assert result.correct, result
    assert "old generation 5" in result.message


def test_exercise_2_hints_at_each_slip():
    client = cr.check_generation_cause({"member id": "billing-2", "cause": "left"})
    assert client.status == "wrong" and "client id" in client.message
    assert "4 different members" in client.message
    next_one = cr.check_generation_cause({"member id": "billing-2-ecd08654", "cause": "joined"})
    assert "ended in generation 7" in next_one.message
    cause = cr.check_generation_cause({"member id": "billing-2-5581483c", "cause": "joined"})
    assert "Right member, wrong cause" in cause.message
    bystander = cr.check_generation_cause({"member id": "analytics-1-aeb25369",
                                           "cause": "failed"})
    assert "No member of group billing" in bystander.message
    assert "one of joined, left, failed" in cr.check_generation_cause(
        {"member id": "billing-2-5581483c", "cause": "exploded"}).message
    assert "exactly the keys" in cr.check_generation_cause({"member": "x"}).message
    assert cr.check_generation_cause({"member id": ..., "cause": "left"}).status == "unanswered"


# --------------------------------------------------------------------------------------------
# Exercise 3: predict an assignment (RangeAssignor, RoundRobinAssignor, CooperativeStickyAssignor)


def test_the_expected_range_and_roundrobin_agree_with_kafka_python():
    expected = cr._expected_assignments()
    subs = {m: Subscription(tuple(cr.EXERCISE_3_TOPICS)) for m in cr.EXERCISE_3_MEMBERS}
    for name in ("range", "roundrobin"):
        peer = kafka_python_assign(name, dict(cr.EXERCISE_3_TOPICS), subs)
        assert {m: frozenset(ps) for m, ps in peer.items()} == expected[name]


def test_cooperative_round_one_withholds_what_changes_owner():
    """KIP-429: a partition moving to consumer-3 is revoked first, handed over next round."""
    round_1 = cr._expected_assignments()["cooperative-sticky, round 1"]
    assert round_1["consumer-3"] == frozenset()
    for member, owned in cr.EXERCISE_3_OWNED.items():
        assert round_1[member] <= frozenset(owned)
    assert [len(round_1[m]) for m in cr.EXERCISE_3_MEMBERS] == [2, 2, 0]


def test_exercise_3_accepts_the_solution_in_every_partition_form():
    answer = solution_answers(SOLUTIONS)["answer_3"]
    assert cr.check_assignment(answer).correct

    def pair(text):
        topic, number = text.rsplit("-", 1)
        return topic, int(number)

    forms = {**answer,
             "range": {m: [TopicPartition(*pair(p)) for p in ps]
                       for m, ps in answer["range"].items()},
             "roundrobin": {m: {pair(p) for p in ps} for m, ps in answer["roundrobin"].items()}}
    assert cr.check_assignment(forms).correct


def test_exercise_3_judges_each_part_on_its_own():
    answer = solution_answers(SOLUTIONS)["answer_3"]
    swapped = {**answer, "range": answer["roundrobin"]}
    result = cr.check_assignment(swapped)
    assert result.status == "wrong" and "that is what roundrobin gives" in result.message
    assert "Roundrobin: correct" in result.message
    final = {**answer, "cooperative-sticky, round 1": {m: 2 for m in cr.EXERCISE_3_MEMBERS}}
    assert "after the second rebalance" in cr.check_assignment(final).message
    twice = {**answer, "range": {"consumer-1": ["orders-0"], "consumer-2": ["orders-0"],
                                 "consumer-3": ["orders-1"]}}
    assert "exactly one member" in cr.check_assignment(twice).message
    junk = {**answer, "roundrobin": {"consumer-1": ["orders"], "consumer-2": [],
                                     "consumer-3": []}}
    assert "is not a partition" in cr.check_assignment(junk).message
    partial = {**answer, "roundrobin": ...}
    assert cr.check_assignment(partial).status == "unanswered"
    assert "exactly these three keys" in cr.check_assignment({"range": {}}).message


# --------------------------------------------------------------------------------------------
# Exercise 4: the stuck write (the operation timeout, the high watermark)


def test_the_stuck_write_waits_for_the_stalled_in_sync_follower_only():
    sw = cr.stuck_write()
    p = sw.partition
    assert not sw.write.done()
    assert p.leader_id == 1 and cr.STALLED_BROKER in p.isr
    confirmed = {b: (p.log_end_offset if b == p.leader_id else r.known_leo)
                 for b, r in p.replicas.items()}
    assert p.high_watermark == min(confirmed[b] for b in p.isr) < p.log_end_offset
    assert "broker 0 has confirmed 2" in p.why_not_committed()
    assert "broker 2" not in p.why_not_committed()
    assert sw.describe()["parked"] == [(3, ["put(c)"])]
    assert sw.replicas().column("in ISR") == ["yes", "yes", "yes"]
    assert "Scheduled execution of write operation put(c)." in sw.log()


def test_the_stuck_write_times_out_but_its_record_commits_when_the_isr_shrinks():
    f = cr._stuck_facts()
    assert f["error"] is Errors.REQUEST_TIMED_OUT
    assert f["done_by"] == f["written_at"] + 5_000
    assert f["shrunk_by"] is not None and f["shrunk_by"] - f["written_at"] >= 30_000 - 1_200
    assert f["committed_by"] == f["shrunk_by"] and f["stalled_never_fetched"]
    assert f["read_back"] == "3"
    for question in ("why_true", "outcome_true"):
        assert sum(f[question].values()) == 1, f[question]


def test_exercise_4_accepts_the_explanation():
    result = cr.check_stuck_write({"broker": 0, "why": "B", "outcome": "(b)"})
    assert result.correct, result
    assert "REQUEST_TIMED_OUT" in result.message and "c=3" in result.message


@pytest.mark.parametrize("answer, hint", [
    ({"broker": 1, "why": "b", "outcome": "b"}, "broker 1 is the leader"),
    ({"broker": 2, "why": "b", "outcome": "b"}, "broker 2 is slow"),
    ({"broker": 7, "why": "b", "outcome": "b"}, "give a broker id"),
    ({"broker": 0, "why": "a", "outcome": "b"}, "does not wait for every replica"),
    ({"broker": 0, "why": "c", "outcome": "b"}, "COORDINATOR_LOAD_IN_PROGRESS"),
    ({"broker": 0, "why": "d", "outcome": "b"}, "open_batch None"),
    ({"broker": 0, "why": "e", "outcome": "b"}, "choose one of the letters"),
    ({"broker": 0, "why": "b", "outcome": "a"}, "operation timeout"),
    ({"broker": 0, "why": "b", "outcome": "c"}, "stays ACTIVE"),
    ({"broker": 0, "why": "b", "outcome": "d"}, "completed before the ISR shrinks"),
])
def test_exercise_4_explains_each_wrong_choice(answer, hint):
    result = cr.check_stuck_write(answer)
    assert result.status == "wrong" and hint in result.message, result


def test_exercise_4_partial_answers_are_not_answered_yet():
    result = cr.check_stuck_write({"broker": 0, "why": ..., "outcome": "b"})
    assert result.status == "unanswered" and "Why: not answered yet" in result.message


# --------------------------------------------------------------------------------------------
# All checks, the scoreboard


@pytest.mark.parametrize("check", CHECKS)
@pytest.mark.parametrize("placeholder", [..., None])
def test_an_unanswered_exercise_is_reported_not_raised(check, placeholder):
    result = check(placeholder)
    assert result.status == "unanswered" and "not answered yet" in repr(result)


def test_the_teachers_answers_pass_every_check():
    answers = solution_answers(SOLUTIONS)
    assert sorted(answers) == sorted(cr.EXERCISES)
    for name, (_topic, check) in cr.EXERCISES.items():
        assert check(answers[name]).correct, name
    board = cr.scoreboard(*(answers[n] for n in cr.EXERCISES))
    assert board.title == "score: 4 of 4"
    assert cr.scoreboard(..., ..., ..., ...).title == "score: 0 of 4"
    with pytest.raises(TypeError, match="4 answers"):
        cr.scoreboard(...)


# --------------------------------------------------------------------------------------------
# The two notebooks


def _cells(path):
    return json.loads(path.read_text())["cells"]


def test_the_student_notebook_leaks_no_solution():
    text = STUDENT.read_text()
    teacher = json.loads(SOLUTIONS.read_text())
    for _cell, block, _names in st.solution_blocks(teacher):
        for line in block.splitlines():
            line = line.strip()
            if line and not line.startswith("#") and len(line) > 3:
                assert line not in text, f"solution line in the student copy: {line!r}"
    for cell in teacher["cells"]:
        if st.SOLUTION_TAG in cell["metadata"].get("tags", []):
            source = "".join(cell["source"])
            assert source not in text
            for out in cell.get("outputs", []):
                printed = "".join(out.get("text", "")) or "".join(
                    out.get("data", {}).get("text/plain", ""))
                for line in printed.splitlines():
                    assert len(line) < 40 or line not in text, line
    answers = solution_answers(SOLUTIONS)
    leaves = []

    def walk(value):
        if isinstance(value, str):
            leaves.append(value)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                walk(v)
    walk(answers)
    full_ids = [m for m in cr._group_facts("many-groups", "billing")[1]
                if m.startswith(answers["answer_2"]["member id"])]
    for leaf in [s for s in leaves if len(s) >= 12] + full_ids:
        assert leaf not in text, f"solution value in the student copy: {leaf!r}"
    for name, (_topic, check) in cr.EXERCISES.items():
        assert check(answers[name]).message not in text


def test_every_exercise_has_an_answer_cell_a_check_and_a_solution():
    student = ["".join(c["source"]) for c in _cells(STUDENT) if c["cell_type"] == "code"]
    teacher = json.loads(SOLUTIONS.read_text())
    solved = [n for _c, _b, names in st.solution_blocks(teacher) for n in names]
    asked = [c.split(" = ")[0] for c in student if re.fullmatch(r"answer_\d+ = \.\.\.", c)]
    assert asked == solved == list(cr.EXERCISES)
    for name, (_topic, check) in cr.EXERCISES.items():
        i = student.index(f"{name} = ...")
        assert student[i + 1] == f"classroom.{check.__name__}({name})"
    assert student[-1] == "classroom.scoreboard(" + ", ".join(cr.EXERCISES) + ")"


def _outputs_of(path, source):
    for c in _cells(path):
        if "".join(c["source"]) == source:
            return "".join("".join(o.get("data", {}).get("text/plain", o.get("text", "")))
                           for o in c["outputs"])
    raise AssertionError(f"no cell {source!r} in {path.name}")


def test_stored_outputs_say_unanswered_for_students_and_correct_for_teachers():
    for name, (_topic, check) in cr.EXERCISES.items():
        cell = f"classroom.{check.__name__}({name})"
        assert "not answered yet" in _outputs_of(STUDENT, cell)
        assert "✔ correct" in _outputs_of(SOLUTIONS, cell)
    board = "classroom.scoreboard(" + ", ".join(cr.EXERCISES) + ")"
    assert "score: 0 of 4" in _outputs_of(STUDENT, board)
    assert "score: 4 of 4" in _outputs_of(SOLUTIONS, board)


@pytest.mark.parametrize("path", [STUDENT, SOLUTIONS], ids=["student", "teacher"])
def test_notebook_shape(path):
    nb = json.loads(path.read_text())
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    assert "widgets" not in nb["metadata"], "save notebooks without widget state"
    cells = nb["cells"]
    assert "you will be able to" in "".join(cells[0]["source"])
    markdown = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    assert "## Try it" in markdown and "## Exercises" in markdown
    assert markdown.index("## Try it") < markdown.index("## Exercises")
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    panel = [i for i, c in enumerate(code) if "panel = ControlPanel(" in c]
    assert len(panel) == 1, "one Try it panel"
    # The Try it panel is still fresh after Run All: no cell below it drives it (a demonstration
    # makes its moves on a recording of its own).
    assert not any(re.search(r"\bpanel\.", c) for c in code[panel[0] + 1:])
    assert not any(c.lstrip().startswith(("def ", "class ")) or "\ndef " in c for c in code), \
        "logic belongs in coordinator_kit.lessons, not in the notebook"
    for c in cells:
        for out in c.get("outputs", []):
            assert out["output_type"] != "error", "".join(c["source"])
            assert out.get("name") != "stderr", "".join(c["source"])


def test_classroom_exports_what_it_names():
    missing = [n for n in cr.__all__ if not hasattr(cr, n)]
    assert not missing and len(set(cr.__all__)) == len(cr.__all__)


def test_the_try_it_walk_reads_as_the_notebook_says():
    """The Try it prose: a 10 s pause of consumer-1 at 20 s; Next event stops at its removal
    (GroupMetadataManager's session timer, 10 s after its last heartbeat reached the
    coordinator), then at the end of the pause; it rejoins and the group reaches generation 3.
    Going back before the pause and pausing again forks a branch."""
    panel = ControlPanel(cr.limited_cluster(session_timeout_ms=10_000, heartbeat_interval_ms=3_000))
    c = panel.cluster
    panel.pause_ms.value = 10_000
    panel.pause_button.click()
    panel.next_button.click()
    assert c.scheduler.now == 28_103 and "has failed" in panel.message.value
    panel.next_button.click()
    assert c.scheduler.now == 30_000
    for _ in range(10):
        if "Stabilized group group-1 generation 3" in panel.message.value:
            break
        panel.next_button.click()
    assert "Stabilized group group-1 generation 3" in panel.message.value
    for _ in range(20):
        if panel.recording.position.move <= 1:
            break
        panel.previous_button.click()
    panel.back_button.click()
    assert (panel.recording.position.move, c.scheduler.now) == (0, 20_000)
    panel.consumer_select.value = "consumer-2"
    panel.pause_button.click()
    assert panel.recording.branch.name == "branch 2" and "main" in panel.recording.branches
    assert panel.last_error is None
