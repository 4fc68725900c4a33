"""A lesson's exercises, read from its teacher copy, and running their checks on answers.

An exercise is an answer the teacher copy's solution blocks assign (``answer_1``) and the check
cell that judges it: the first code cell after the answer's cell that reads the answer (cells
tagged ``solution`` skipped), which must be one expression, e.g.
``classroom.check_session_timeout(answer_1)`` or ``check_exercise_1(answer_1)``. Nothing is kept
by hand, so the list cannot drift from the notebook. An exercise is worth 1 point unless its
answer cell's metadata says otherwise: ``{"coordinator_kit": {"points": 2}}``.

`Lesson.check` evaluates the teacher copy's check expression in this process, in a namespace
holding the teacher copy's imports and the student's answers, and maps what the lesson's check
returns to one status: the lessons' ``Feedback`` (status correct/wrong/unanswered) and
``Verdict`` (ok True/False/None) alike. A check that raises gives status ``error`` with the
exception's text.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .cells import cell_source, imports_namespace, names_read, parse_cell, python_source
from .student import METADATA_KEY, answer_names, is_solution_cell, read_notebook, solution_blocks

__all__ = ["Exercise", "Outcome", "Lesson", "exercises", "outcome_of", "load_lessons"]


@dataclass(frozen=True)
class Exercise:
    lesson: str
    name: str           # the answer's name, e.g. "answer_1"
    number: int         # 1, 2, ... in notebook order
    answer_cell: int    # cell indices in the teacher copy
    check_cell: int
    check: str          # the check cell's expression, e.g. "hb.check_expiry_time(answer_1)"
    points: float = 1


@dataclass(frozen=True)
class Outcome:
    status: str         # correct | wrong | unanswered | error
    message: str


def _points(cell: Mapping[str, Any], where: str) -> float:
    value = cell.get("metadata", {}).get(METADATA_KEY, {}).get("points", 1)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError(f"{where}: {METADATA_KEY}.points must be a number >= 0, got {value!r}")
    return value


def exercises(notebook: Mapping[str, Any], lesson: str, where: str = "notebook"
              ) -> list[Exercise]:
    """Every exercise of a teacher copy, in notebook order. Raises ValueError when an answer
    has no check cell after it, or the first cell that reads it is not one expression."""
    cells = notebook["cells"]
    first_cell: dict[str, int] = {}
    for i, _text, names in solution_blocks(notebook, where):
        for name in names:
            first_cell.setdefault(name, i)
    out = []
    for number, name in enumerate(answer_names(notebook, where), start=1):
        at = first_cell[name]
        check = None
        for j in range(at + 1, len(cells)):
            cell = cells[j]
            if cell["cell_type"] != "code" or is_solution_cell(cell):
                continue
            tree = parse_cell(cell_source(cell))
            if tree is None or name not in names_read(tree):
                continue
            if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
                raise ValueError(f"{where}: {name} (cell {at}) is read first by cell {j}, which "
                                 f"is not a single check expression such as "
                                 f"`lesson.check_x({name})`")
            check = (j, ast.unparse(tree.body[0].value))
            break
        if check is None:
            raise ValueError(f"{where}: {name} (cell {at}) has no check cell after it: add a "
                             f"cell such as `lesson.check_x({name})`")
        out.append(Exercise(lesson, name, number, at, check[0], check[1],
                            _points(cells[at], f"{where}, cell {at}")))
    return out


def outcome_of(result: Any) -> Outcome:
    """One status for what a check returned: a ``Feedback`` (status, message), a ``Verdict``
    (ok True/False/None, message), or a bare bool."""
    status = getattr(result, "status", None)
    if status in ("correct", "wrong", "unanswered"):
        return Outcome(status, str(getattr(result, "message", "")))
    if hasattr(result, "ok") and getattr(result, "ok") in (True, False, None):
        ok = result.ok
        return Outcome({True: "correct", False: "wrong", None: "unanswered"}[ok],
                       str(getattr(result, "message", "")))
    if isinstance(result, bool):
        return Outcome("correct" if result else "wrong", "")
    return Outcome("error", f"the check returned {type(result).__name__} {result!r}, not a "
                            f"Feedback or a Verdict")


@dataclass
class Lesson:
    """A lesson as the grader knows it: its teacher copy, exercises and check namespace."""

    name: str
    path: Path
    exercises: list[Exercise]
    notebook: dict[str, Any] = field(repr=False)
    _namespace: dict[str, Any] | None = field(default=None, repr=False)

    @classmethod
    def from_teacher_copy(cls, path: Path) -> "Lesson":
        nb = read_notebook(path)
        return cls(path.stem, path, exercises(nb, path.stem, str(path)), nb)

    @property
    def total_points(self) -> float:
        return sum(e.points for e in self.exercises)

    def namespace(self) -> dict[str, Any]:
        """The teacher copy's imports, run once in this process."""
        if self._namespace is None:
            self._namespace = imports_namespace(
                [c for c in self.notebook["cells"] if not is_solution_cell(c)], str(self.path))
        return self._namespace

    def check(self, exercise: Exercise, answers: Mapping[str, Any]) -> Outcome:
        """Run the teacher copy's check of `exercise` on the student's `answers` (name ->
        value; an answer the student did not give is ``...``)."""
        try:
            namespace = dict(self.namespace())
            for e in self.exercises:
                namespace[e.name] = copy.deepcopy(answers.get(e.name, ...))
            result = eval(compile(python_source(exercise.check), f"<{exercise.lesson} "
                                  f"{exercise.name} check>", "eval"), namespace)
        except Exception as e:   # a check that raises must not stop the class's grading
            return Outcome("error", f"{type(e).__name__}: {e}")
        return outcome_of(result)


def load_lessons(teachers: Path) -> dict[str, Lesson]:
    """Every teacher copy in `teachers`, by lesson name."""
    from .student import teacher_copies

    return {p.stem: Lesson.from_teacher_copy(p) for p in teacher_copies(teachers)}
