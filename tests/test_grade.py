"""Grading a class folder (``python -m coordinator_kit grade``): students and lessons recognised
from folders, file names and the notebook metadata the generator writes; answers read as
literals (or, with --execute, from a kernel); the teacher copies' checks; one CSV row per
student and exercise, every unreadable file reported without stopping the run.

The class is built from the generated student notebooks: teacher copy 06 as committed, teacher
copies of lessons 03 (checks return a ``Verdict``) and 05 (its checks read the logs without
Spark) made from their student notebooks, and a small lesson whose check raises.
"""

from __future__ import annotations

import copy
import csv
import io
import shutil

import pytest
from teacher_copies import NOTEBOOKS, TEACHERS, answer_cells, read, teacher_copy_of, write

from coordinator_kit.__main__ import main
from coordinator_kit.lessons import classroom as cr
from coordinator_kit.lessons import runtime_lifecycle as rl
from coordinator_kit.lessons import spark_logs as sl
from coordinator_kit.teaching import grade as gr
from coordinator_kit.teaching.exercises import load_lessons
from coordinator_kit.teaching.student import student_version

L03, L05, L06 = ("03_coordinator_runtime_lifecycle", "05_reading_coordinator_logs_with_spark",
                 "06_classroom_exercises")
RIGHT_03 = {"answer_1": '{"LOADING": "COORDINATOR_LOAD_IN_PROGRESS", "FAILED": '
                        '"NOT_COORDINATOR", "unloaded": "NOT_COORDINATOR"}',
            "answer_2": "[2, 3, 5, 6]", "answer_3": "(3, 4)", "answer_4": "102"}
RIGHT_05 = {"answer_1": "3000", "answer_2": "12608",
            "answer_3": repr(sl.departure_causes()), "answer_4": repr(sl.longest_silence())}
# The teacher copy's own solutions (literals), as the grader reads them.
RIGHT_06 = {n: a.value for n, a in gr.read_answers(
    read(TEACHERS / f"{L06}.ipynb"), list(cr.EXERCISES)).items()}

TINY = {"cells": [
    {"cell_type": "code", "execution_count": 1, "id": "c0", "metadata": {}, "outputs": [],
     "source": ["from coordinator_kit.lessons.heartbeats import Feedback"]},
    {"cell_type": "code", "execution_count": 2, "id": "c1",
     "metadata": {"coordinator_kit": {"points": 2}}, "outputs": [],
     "source": ["### BEGIN SOLUTION\n", "answer_1 = 4\n", "### END SOLUTION"]},
    {"cell_type": "code", "execution_count": 3, "id": "c2", "metadata": {}, "outputs": [],
     "source": ['Feedback("Exercise 1", "unanswered", "not yet") if answer_1 is ... else '
                'Feedback("Exercise 1", "correct" if 100 // answer_1 == 25 else "wrong", "")']}],
    "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}


def _set(nb, name, source):
    """A copy of a student notebook with `name`'s answer cell replaced by `source`."""
    nb = copy.deepcopy(nb)
    nb["cells"][answer_cells(nb)[name]]["source"] = source.splitlines(keepends=True)
    return nb


@pytest.fixture(scope="module")
def school(tmp_path_factory):
    """teachers/ (06 as committed, 03, 05 and a tiny lesson) and their student notebooks."""
    root = tmp_path_factory.mktemp("school")
    teachers = root / "teachers"
    teachers.mkdir()
    shutil.copy(TEACHERS / f"{L06}.ipynb", teachers)
    write(teacher_copy_of(read(NOTEBOOKS / f"{L03}.ipynb"), RIGHT_03), teachers / f"{L03}.ipynb")
    write(teacher_copy_of(read(NOTEBOOKS / f"{L05}.ipynb"), RIGHT_05), teachers / f"{L05}.ipynb")
    write(TINY, teachers / "90_tiny.ipynb")
    students = {p.stem: student_version(read(p), p.stem) for p in teachers.glob("*.ipynb")}
    return teachers, students


def _rows(text):
    return [tuple(r) for r in csv.reader(io.StringIO(text))]


def test_the_class_folder_is_graded_into_one_row_per_student_and_exercise(school, tmp_path,
                                                                          capsys):
    teachers, students = school
    s06, s03, s05 = students[L06], students[L03], students[L05]
    c = tmp_path / "class"
    alice = s06
    for name, value in RIGHT_06.items():
        alice = _set(alice, name, f"{name} = {value!r}")
    write(alice, c / "alice" / f"{L06}.ipynb")
    a03 = _set(_set(_set(s03, "answer_1", f"answer_1 = {RIGHT_03['answer_1']}"),
                    "answer_2", "answer_2 = [2, 3, 5, 6]"), "answer_3", "answer_3 = (1, 4)")
    write(a03, c / "alice" / "submission" / f"{L03}.ipynb")
    bob = _set(s06, "answer_1", 'answer_1 = {"session.timeout.ms": 10000, '
                                '"heartbeat.interval.ms": 3000}')
    del bob["cells"][answer_cells(bob)["answer_2"]]
    bob = _set(_set(bob, "answer_3", "answer_3 = dict(range={})"),
               "answer_4", 'answer_4 = {"broker": 0,')
    write(bob, c / f"bob__{L06}.ipynb")
    carol = _set(_set(s06, "answer_1", 'answer_1 = "12000"'),
                 "answer_4", 'answer_4 = {"broker": 0, "why": "b"}')
    del carol["metadata"]["coordinator_kit"]           # the lesson from the file name
    carol["cells"].append({"cell_type": "code", "execution_count": None, "id": "late",
                           "metadata": {}, "outputs": [], "source": ["answer_1 = 11_500"]})
    write(carol, c / f"carol_{L06}-Copy1.ipynb")
    gina = s05
    for name, value in RIGHT_05.items():
        gina = _set(gina, name, f"{name} = {value}")
    write(gina, c / "gina" / f"{L05}.ipynb")
    write(_set(students["90_tiny"], "answer_1", "answer_1 = 0"), c / "hank" / "tiny.ipynb")
    (c / "dave").mkdir()
    (c / "dave" / "notes.ipynb").write_text("this is not a notebook")
    (c / "erin").mkdir()
    (c / "erin" / f"{L06}.ipynb").write_text("")
    write({"cells": [], "metadata": {"coordinator_kit": {"lesson": "99_missing"}}},
          c / "frank" / "lesson.ipynb")
    (c / "ivy").mkdir()
    (c / "ivy" / f"{L06}.ipynb").write_text('{"cells": "none"}')
    write(s06, c / f"{L06}.ipynb")                      # whose?
    write(alice, c / "alice" / ".ipynb_checkpoints" / f"{L06}-checkpoint.ipynb")
    (c / "README.txt").write_text("class of 2026")

    out = tmp_path / "grades.csv"
    assert main(["grade", str(c), "--out", str(out), "--teachers", str(teachers)]) == 1
    rows = _rows(out.read_text())
    assert rows[0] == gr.COLUMNS

    def fb(check, value):
        return check(value).message

    code_3 = ("answer_3 is computed by code, not written as a Python literal: grade with "
              "--execute to run the notebook")
    known = f"{L03}, {L05}, {L06}, 90_tiny"
    a06, b06, c06 = f"alice/{L06}.ipynb", f"bob__{L06}.ipynb", f"carol_{L06}-Copy1.ipynb"
    a03_src, g05 = f"alice/submission/{L03}.ipynb", f"gina/{L05}.ipynb"
    assert rows[1:] == [
        ("", L06, "", "unreadable", "0", "4", "cannot tell whose notebook this is: put it in a "
         "folder named after the student, or name it <student>__<lesson>.ipynb", "",
         f"{L06}.ipynb"),
        ("alice", L03, "answer_1", "correct", "1", "1",
         fb(rl.check_exercise_1, eval(RIGHT_03["answer_1"])),
         repr(eval(RIGHT_03["answer_1"])), a03_src),
        ("alice", L03, "answer_2", "correct", "1", "1", fb(rl.check_exercise_2, [2, 3, 5, 6]),
         "[2, 3, 5, 6]", a03_src),
        ("alice", L03, "answer_3", "wrong", "0", "1", fb(rl.check_exercise_3, (1, 4)), "(1, 4)",
         a03_src),
        ("alice", L03, "answer_4", "unanswered", "0", "1", fb(rl.check_exercise_4, ...),
         "Ellipsis", a03_src),
        *[("alice", L06, name, "correct", "1", "1", fb(check, RIGHT_06[name]),
           repr(RIGHT_06[name]), a06) for name, (_t, check) in cr.EXERCISES.items()],
        ("bob", L06, "answer_1", "wrong", "0", "1",
         fb(cr.check_session_timeout, {"session.timeout.ms": 10000,
                                       "heartbeat.interval.ms": 3000}),
         "{'session.timeout.ms': 10000, 'heartbeat.interval.ms': 3000}", b06),
        ("bob", L06, "answer_2", "unanswered", "0", "1", "no cell of the notebook assigns "
         "answer_2", "", b06),
        ("bob", L06, "answer_3", "code", "0", "1", code_3, "dict(range={})", b06),
        ("bob", L06, "answer_4", "wrong", "0", "1", "the cell that assigns answer_4 (cell 29) "
         "is not valid Python ('{' was never closed, line 1)", "", b06),
        ("carol", L06, "answer_1", "wrong", "0", "1", fb(cr.check_session_timeout, 11_500),
         "11500", c06),
        ("carol", L06, "answer_2", "unanswered", "0", "1", fb(cr.check_generation_cause, ...),
         "Ellipsis", c06),
        ("carol", L06, "answer_3", "unanswered", "0", "1", fb(cr.check_assignment, ...),
         "Ellipsis", c06),
        ("carol", L06, "answer_4", "wrong", "0", "1",
         fb(cr.check_stuck_write, {"broker": 0, "why": "b"}), "{'broker': 0, 'why': 'b'}", c06),
        ("dave", "", "", "unreadable", "0", "", "not JSON (Expecting value at line 1 column 1): "
         "not a Jupyter notebook, or a damaged one", "", "dave/notes.ipynb"),
        ("erin", L06, "", "unreadable", "0", "4", "the file is empty", "",
         f"erin/{L06}.ipynb"),
        ("frank", "", "", "unreadable", "0", "", "its metadata says lesson '99_missing', which "
         f"has no teacher copy (known lessons: {known})", "", "frank/lesson.ipynb"),
        *[("gina", L05, name, "correct", "1", "1", fb(check, eval(RIGHT_05[name])),
           repr(eval(RIGHT_05[name])), g05)
          for name, check in zip(RIGHT_05, (sl.check_heartbeat_interval,
                                            sl.check_rebalancing_time,
                                            sl.check_departure_causes,
                                            sl.check_longest_silence))],
        ("hank", "90_tiny", "answer_1", "error", "0", "2",
         "ZeroDivisionError: integer division or modulo by zero", "0", "hank/tiny.ipynb"),
        ("ivy", L06, "", "unreadable", "0", "4", "JSON, but not a Jupyter notebook (it has no "
         "list of cells)", "", f"ivy/{L06}.ipynb"),
    ]
    captured = capsys.readouterr()
    summary = captured.out.splitlines()
    assert summary[0] == (f"graded {c}: 9 students, 11 notebooks (5 unreadable), "
                          f"21 exercises graded")
    assert summary[1].split() == ["lesson", "exercise", "correct", "wrong", "unanswered",
                                  "code", "error"]
    [line] = [x.split() for x in summary if x.split()[:2] == [L06, "answer_3"]]
    assert line[2:] == ["1", "0", "1", "1", "0"]     # alice, carol, bob
    assert "unreadable: dave/notes.ipynb: not JSON" in captured.out
    assert "skipped 1 file that is not a notebook" in captured.out
    assert f"wrote 26 rows to {out}" in captured.out
    assert f"grade: cannot grade erin/{L06}.ipynb: the file is empty" in captured.err


def test_the_grader_starts_no_spark(school, tmp_path, monkeypatch):
    """Notebook 05's checks read the logs with the pure-Python parser: grading a 05 notebook
    must not ask for a Spark session (the student's kernel makes its own)."""
    from pyspark.sql import SparkSession

    from coordinator_kit.spark import session

    def refuse(*_args, **_kwargs):
        raise AssertionError("the grader asked for a Spark session")

    monkeypatch.setattr(SparkSession.Builder, "getOrCreate", refuse)
    monkeypatch.setattr(session, "get_session", refuse)
    teachers, students = school
    gina = students[L05]
    for name, value in RIGHT_05.items():
        gina = _set(gina, name, f"{name} = {value}")
    write(gina, tmp_path / "gina" / f"{L05}.ipynb")
    report = gr.grade(tmp_path, load_lessons(teachers), log=lambda line: None)
    assert [r.status for r in report.rows] == ["correct"] * 4


def test_literal_answers_are_read_without_running_anything():
    nb = {"cells": [
        {"cell_type": "code", "source": "answer_1 = -12_000\nanswer_2: dict = {'a': (1, ...)}"},
        {"cell_type": "markdown", "source": "answer_3 = 5"},
        {"cell_type": "code", "source": "answer_3 = open('/etc/passwd').read()"},
        {"cell_type": "code", "source": "for answer_4 in range(3):\n    pass"},
        {"cell_type": "code", "source": "%time answer_5 = 1\nanswer_6 = 7"},
        {"cell_type": "code", "source": "answer_6 += 1"},
        {"cell_type": "code", "source": "answer_7 = (\n"},
    ]}
    got = gr.read_answers(nb, [f"answer_{i}" for i in range(1, 9)])
    assert got["answer_1"] == gr.StudentAnswer("literal", -12_000, cell=0)
    assert got["answer_2"] == gr.StudentAnswer("literal", {"a": (1, ...)}, cell=0)
    assert got["answer_3"] == gr.StudentAnswer("code", text="open('/etc/passwd').read()", cell=2)
    assert got["answer_4"].kind == "code" and got["answer_4"].text.startswith("for answer_4")
    assert got["answer_5"] == gr.StudentAnswer("code", text="%time answer_5 = 1", cell=4)
    assert got["answer_6"] == gr.StudentAnswer("code", text="answer_6 += 1", cell=5)
    assert got["answer_7"].kind == "invalid" and "cell 6" in got["answer_7"].text
    assert got["answer_8"] == gr.StudentAnswer("missing")


def test_execute_runs_code_answers_in_a_kernel(school, tmp_path, capsys):
    """--execute: the notebook runs in a fresh kernel from its own folder; code answers take
    the kernel's values (the kit's types too), a failing cell leaves its answer an error."""
    teachers, students = school
    nb = _set(students[L06], "answer_1", 'import pathlib\nanswer_1 = {"session.timeout.ms": '
              'int(pathlib.Path("session.txt").read_text()), "heartbeat.interval.ms": 1000}')
    nb = _set(nb, "answer_2", "answer_2 = 1 // 0")
    nb = _set(nb, "answer_3", "from coordinator_kit.topic import TopicPartition\n"
                              "answer_3 = {'range': [TopicPartition('orders', 0)]}")
    write(nb, tmp_path / "class" / "hank" / f"{L06}.ipynb")
    (tmp_path / "class" / "hank" / "session.txt").write_text("12000")
    out = tmp_path / "grades.csv"
    assert main(["grade", str(tmp_path / "class"), "--out", str(out), "--teachers",
                 str(teachers), "--execute", "--timeout", "120"]) == 0
    rows = _rows(out.read_text())[1:]
    src = f"hank/{L06}.ipynb"
    assert rows[0] == ("hank", L06, "answer_1", "correct", "1", "1",
                       cr.check_session_timeout(RIGHT_06["answer_1"]).message,
                       repr(RIGHT_06["answer_1"]), src)
    assert rows[1][:4] == ("hank", L06, "answer_2", "error")
    assert rows[1][6].startswith("answer_2 is not defined after running the notebook (cell ")
    assert "raised ZeroDivisionError: integer division or modulo by zero" in rows[1][6]
    assert rows[2][3:5] == ("wrong", "0") and "TopicPartition(topic='orders'" in rows[2][7]
    assert rows[3][3] == "unanswered"
    assert f"grade: running {src} in a kernel (answer_1, answer_2, answer_3 written as code)" \
        in capsys.readouterr().err


def test_grade_refuses_a_missing_folder_or_no_teacher_copies(tmp_path, capsys):
    assert main(["grade", str(tmp_path / "nowhere")]) == 2
    assert "is not a folder" in capsys.readouterr().err
    assert main(["grade", str(tmp_path), "--teachers", str(tmp_path)]) == 2
    assert "no teacher copies" in capsys.readouterr().err


def test_without_out_the_csv_goes_to_stdout(school, tmp_path, capsys):
    teachers, students = school
    write(students["90_tiny"], tmp_path / "c" / "zoe__90_tiny.ipynb")
    assert main(["grade", str(tmp_path / "c"), "--teachers", str(teachers)]) == 0
    captured = capsys.readouterr()
    assert _rows(captured.out) == [gr.COLUMNS, (
        "zoe", "90_tiny", "answer_1", "unanswered", "0", "2", "not yet", "Ellipsis",
        "zoe__90_tiny.ipynb")]
    assert captured.err.startswith(f"graded {tmp_path / 'c'}: 1 student, 1 notebook ")


def test_rows_sort_by_student_lesson_and_the_exercises_order_in_the_lesson():
    rows = [gr.Row("b", "06", "answer_1", "correct", 1, 1, "", "", "x", 1),
            gr.Row("a", "06", "answer_10", "correct", 1, 1, "", "", "y", 10),
            gr.Row("a", "06", "answer_2", "wrong", 0, 1, "", "", "y", 2)]
    assert [r.exercise for r in sorted(rows, key=gr.Row.sort_key)] == ["answer_2", "answer_10",
                                                                     "answer_1"]
