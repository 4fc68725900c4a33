"""Teacher copies and the student notebooks generated from them (coordinator_kit.teaching):
the markers (nbgrader's ``### BEGIN SOLUTION`` / ``### END SOLUTION`` and the ``solution`` tag),
outputs kept byte for byte except where an answer is held or read, the drift check and its CLI,
and the exercises each teacher copy defines.

Every teacher copy in teachers/ is checked: its student notebook is exactly what it generates,
and the grader finds every exercise it solves, with a check that accepts its solution.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest
from teacher_copies import NOTEBOOKS, TEACHERS, answer_cells, read, teacher_copy_of, write

from coordinator_kit.__main__ import main
from coordinator_kit.lessons.heartbeats import Feedback
from coordinator_kit.lessons.runtime_lifecycle import Verdict
from coordinator_kit.teaching import exercises as ex
from coordinator_kit.teaching import student as st
from coordinator_kit.teaching.cells import cell_source, run_cell
from coordinator_kit.teaching.grade import read_answers

COPIES = st.teacher_copies(TEACHERS)


def _nb(*cells):
    return {"cells": [dict(c) for c in cells], "metadata": {"kernelspec": {"name": "python3"}},
            "nbformat": 4, "nbformat_minor": 5}


def _code(source, tags=(), outputs=(), count=3):
    return {"cell_type": "code", "source": source, "metadata": {"tags": list(tags)},
            "outputs": list(outputs), "execution_count": count}


def _md(source, tags=()):
    return {"cell_type": "markdown", "source": source, "metadata": {"tags": list(tags)}}


def _stream(text):
    return {"name": "stdout", "output_type": "stream", "text": [text]}


def _result(text, count):
    return {"data": {"text/plain": [text]}, "execution_count": count, "metadata": {},
            "output_type": "execute_result"}


# --------------------------------------------------------------------------------------------
# The generator


def test_student_version_blanks_solutions_and_recomputes_only_answer_cells():
    teacher = _nb(
        _code("import math", outputs=[_stream("kept as stored\n")], count=1),
        _code("x = 1\n### BEGIN SOLUTION\nanswer_1 = 42\nhelper = 2\n### END SOLUTION\nx",
              outputs=[_result("1", 2)], count=2),
        _code("if True:\n    ### BEGIN SOLUTION\n    answer_2 = {'a': 1}\n    ### END SOLUTION",
              count=3),
        _code('answer_3 = {"a": ...}   # fill in a\n### BEGIN SOLUTION\nanswer_3 = {"a": 1}\n'
              '### END SOLUTION', count=4),
        _code("### BEGIN SOLUTION\nprint('worked')\n### END SOLUTION",
              outputs=[_stream("worked\n")], count=5),
        _code("print('teacher only')", tags=["solution"], outputs=[_stream("teacher only\n")]),
        _md("Question\n### BEGIN SOLUTION\nThe answer is 42.\n### END SOLUTION\n"),
        _md("**Worked answer**: 42", tags=["solution"]),
        _code("print(answer_1, answer_3)", outputs=[_stream("42 {'a': 1}\n")], count=7),
        _code("math.floor(2.5)  # reads no answer: its stored output stays",
              outputs=[_result("'stale, but stored'", 8)], count=8),
        _code("answer_2;", count=9),
    )
    before = json.dumps(teacher)
    student = st.student_version(teacher, "99_test")
    assert json.dumps(teacher) == before, "the teacher copy is left alone"
    sources = [cell_source(c) for c in student["cells"]]
    assert sources == ["import math", "x = 1\nanswer_1 = ...\nx", "if True:\n    answer_2 = ...",
                       'answer_3 = {"a": ...}   # fill in a', "", "Question",
                       "print(answer_1, answer_3)",
                       "math.floor(2.5)  # reads no answer: its stored output stays",
                       "answer_2;"]
    outputs = [c.get("outputs") for c in student["cells"]]
    assert outputs == [[_stream("kept as stored\n")], [_result("1", 2)], [], [], [], None,
                       [_stream("Ellipsis {'a': Ellipsis}\n")],
                       [_result("'stale, but stored'", 8)], []]
    assert [c.get("execution_count") for c in student["cells"]] == [1, 2, 3, 4, 5, None, 7, 8, 9]
    assert student["metadata"] == {"kernelspec": {"name": "python3"},
                                   "coordinator_kit": {"lesson": "99_test"}}
    assert [b[2] for b in st.solution_blocks(teacher)] == [["answer_1"], ["answer_2"],
                                                          ["answer_3"], [], []]
    assert st.answer_names(teacher) == ["answer_1", "answer_2", "answer_3"]


@pytest.mark.parametrize("source, problem", [
    ("### BEGIN SOLUTION\nanswer_1 = 1", "without '### END SOLUTION'"),
    ("answer_1 = 1\n### END SOLUTION", "without '### BEGIN SOLUTION'"),
    ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION", "inside another"),
    ("### BEGIN SOLUTION\nanswer_1 = (\n### END SOLUTION", "not valid Python"),
    ("answer_1 = 1  ### END SOLUTION", "still contains"),
])
def test_student_version_refuses_broken_markers(source, problem):
    with pytest.raises(ValueError, match=re.escape(problem)) as e:
        st.student_version(_nb(_code(source)), "99_test", "teachers/99_test.ipynb")
    assert "teachers/99_test.ipynb" in str(e.value)


def test_an_answer_cell_that_needs_the_notebooks_state_is_refused_by_name():
    """Answer and check cells run with the notebook's imports only: a check that reads a
    variable of an earlier cell cannot be computed for the student notebook."""
    teacher = _nb(_code("seed = 3"), _code("### BEGIN SOLUTION\nanswer_1 = 3\n### END SOLUTION"),
                  _code("answer_1 == seed"))
    with pytest.raises(ValueError, match=r"t\.ipynb, cell 2: NameError: name 'seed'"):
        st.student_version(teacher, "99_test", "t.ipynb")


def test_run_cell_shows_what_a_kernel_shows():
    from coordinator_kit.lessons.heartbeats import Table

    ns = {"Table": Table}
    outputs = run_cell("t = Table([{'a': 1}], ['a'], title='x')\nprint('hi')\nt", ns, 4, "c")
    assert outputs[0] == {"name": "stdout", "output_type": "stream", "text": ["hi\n"]}
    assert outputs[1]["output_type"] == "execute_result" and outputs[1]["execution_count"] == 4
    assert set(outputs[1]["data"]) == {"text/plain", "text/html"}
    assert run_cell("t  # a comment\n", ns, 5, "c")[0]["data"] == outputs[1]["data"]
    assert run_cell("t;", ns, 6, "c") == [] and run_cell("None", ns, 7, "c") == []


@pytest.mark.parametrize("name", sorted(p.name for p in NOTEBOOKS.glob("0*.ipynb")))
def test_a_teacher_copy_made_from_a_lesson_notebook_generates_it_again(name):
    """Notebooks 01-05 as teacher copies (a solution block after each answer line): the
    generated student notebook is the committed one, outputs of the check cells included,
    although those are computed in this process and the committed ones came from a kernel."""
    student = read(NOTEBOOKS / name)
    answers = answer_cells(student)
    teacher = teacher_copy_of(student, {n: "None" for n in answers})
    generated = st.student_version(teacher, name.removesuffix(".ipynb"))
    student["metadata"]["coordinator_kit"] = {"lesson": name.removesuffix(".ipynb")}
    assert st.notebook_text(generated) == st.notebook_text(student)
    assert [e.name for e in ex.exercises(teacher, "x")] == list(answers)


# --------------------------------------------------------------------------------------------
# Every teacher copy in teachers/


def test_the_teachers_folder_holds_the_teacher_copies():
    assert "06_classroom_exercises.ipynb" in [p.name for p in COPIES]
    assert not (NOTEBOOKS / "solutions").exists(), "teacher copies live outside notebooks/"
    for teacher in COPIES:
        assert st.student_path(teacher, NOTEBOOKS).is_file()


@pytest.mark.parametrize("teacher", COPIES, ids=[p.stem for p in COPIES])
def test_every_student_notebook_is_what_its_teacher_copy_generates(teacher):
    assert st.student_drift(teacher, st.student_path(teacher, NOTEBOOKS)) == []


@pytest.mark.parametrize("teacher", COPIES, ids=[p.stem for p in COPIES])
def test_every_exercise_of_a_teacher_copy_has_a_check_that_accepts_its_solution(teacher):
    nb = read(teacher)
    lesson = ex.Lesson.from_teacher_copy(teacher)
    names = st.answer_names(nb)
    assert [e.name for e in lesson.exercises] == names and names
    assert [e.number for e in lesson.exercises] == list(range(1, len(names) + 1))
    student = read(st.student_path(teacher, NOTEBOOKS))
    student_code = [cell_source(c) for c in student["cells"] if c["cell_type"] == "code"]
    solutions = read_answers(nb, names)
    for e in lesson.exercises:
        assert e.answer_cell < e.check_cell and e.name in e.check
        assert e.check in student_code, "the student sees the check the grader runs"
        if solutions[e.name].kind == "literal":
            outcome = lesson.check(e, {n: a.value for n, a in solutions.items()})
            assert outcome.status == "correct", (e.name, outcome)
        else:
            assert solutions[e.name].kind == "code", solutions[e.name]


# --------------------------------------------------------------------------------------------
# Exercises and outcomes


def test_an_answer_without_a_check_cell_is_refused():
    nb = _nb(_code("### BEGIN SOLUTION\nanswer_1 = 3\n### END SOLUTION"), _code("1 + 1"))
    with pytest.raises(ValueError, match="answer_1 .cell 0. has no check cell after it"):
        ex.exercises(nb, "x")
    nb["cells"].append(_code("x = answer_1\ncheck(x)"))
    with pytest.raises(ValueError, match="read first by cell 2, which is not a single check"):
        ex.exercises(nb, "x")
    nb["cells"][2] = _code("print(answer_1)", tags=["solution"])
    nb["cells"].append(_code("check(answer_1)"))
    nb["cells"][0]["metadata"]["coordinator_kit"] = {"points": 2}
    [e] = ex.exercises(nb, "x")
    assert (e.answer_cell, e.check_cell, e.check, e.points) == (0, 3, "check(answer_1)", 2)


def test_both_kinds_of_check_result_map_to_one_status():
    assert ex.outcome_of(Feedback("Exercise 1", "wrong", "no")) == ex.Outcome("wrong", "no")
    assert ex.outcome_of(Feedback("Exercise 1", "unanswered", "?")).status == "unanswered"
    assert ex.outcome_of(Verdict("Exercise 2", True, "yes")) == ex.Outcome("correct", "yes")
    assert ex.outcome_of(Verdict("Exercise 2", False, "no")).status == "wrong"
    assert ex.outcome_of(Verdict("Exercise 2", None, "?")).status == "unanswered"
    assert ex.outcome_of(True).status == "correct"
    assert ex.outcome_of(42) == ex.Outcome("error", "the check returned int 42, not a Feedback "
                                                    "or a Verdict")


# --------------------------------------------------------------------------------------------
# The command line


def test_notebooks_write_and_check(tmp_path, capsys):
    teachers, notebooks = tmp_path / "teachers", tmp_path / "notebooks"
    teachers.mkdir()
    notebooks.mkdir()
    shutil.copy(TEACHERS / "06_classroom_exercises.ipynb", teachers)
    args = ["--teachers", str(teachers), "--notebooks", str(notebooks)]
    assert main(["notebooks", "--check", *args]) == 1
    assert "is missing" in capsys.readouterr().err
    assert main(["notebooks", "--write", *args]) == 0
    assert "wrote" in capsys.readouterr().out
    student = notebooks / "06_classroom_exercises.ipynb"
    assert student.read_text() == (NOTEBOOKS / "06_classroom_exercises.ipynb").read_text()
    assert main(["notebooks", "--write", *args]) == 0
    assert "unchanged" in capsys.readouterr().out
    assert main(["notebooks", "--check", *args, "06_classroom_exercises"]) == 0
    nb = read(student)
    nb["cells"][11]["outputs"][0]["data"]["text/plain"] = ["Exercise 1: ✔ correct. leaked"]
    write(nb, student)
    assert main(["notebooks", "--check", *args]) == 1
    err = capsys.readouterr().err
    assert "cell 11 differs in outputs" in err and "classroom.check_session_timeout" in err
    assert "1 student notebook out of step" in err
    assert main(["notebooks", "--check", *args, "07_nothing"]) == 2
    assert "no teacher copy of 07_nothing" in capsys.readouterr().err
