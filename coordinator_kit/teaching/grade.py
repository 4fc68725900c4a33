"""Grading a class: a folder of students' notebooks in, one CSV row per student and exercise out.

Whose notebook, which lesson:

- a notebook in a sub-folder belongs to the student the first-level folder is named after
  (``DIR/<student>/...ipynb``, the usual LMS export); a notebook directly in DIR is named
  ``<student>__<anything>.ipynb``, or ``<student>_<lesson>.ipynb`` / ``<student>-<lesson>.ipynb``
  (``alice_06_classroom_exercises.ipynb``);
- the lesson is the one the notebook's metadata names (``{"coordinator_kit": {"lesson":
  "06_classroom_exercises"}}``, written by the generator, kept by Jupyter when the student
  saves); failing that, the lesson whose name the file name contains. A lesson needs its teacher
  copy, which says what the exercises and their checks are (`coordinator_kit.teaching.exercises`).

Answers: the last statement in the notebook that assigns ``answer_N`` (later cells win), read as
a Python literal with `ast.literal_eval`: nothing of the student's runs. An answer computed by
code (``answer_1 = gaps[0]``) is reported as ``code``; with ``execute=True`` such a notebook is
run in a fresh kernel (`coordinator_kit.teaching.kernel`) and its code answers take the
kernel's values. The teacher copy's checks then run in this process: the student's own check
cells are ignored. No lesson's check needs Spark (notebook 05's read the logs with the
pure-Python parser), so the grader never starts a Spark session; a notebook run with
``execute=True`` starts its own, as it does for the student.

Statuses: ``correct``, ``wrong``, ``unanswered`` (what the check says, or no cell assigns the
answer), ``code`` (not a literal, not executed), ``error`` (the check raised, or the kernel
could not produce the answer), and ``unreadable`` (one row for a file that is empty, not JSON,
not a notebook, of an unknown lesson or of an unknown student).
"""

from __future__ import annotations

import ast
import csv
import json
import re
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from .cells import cell_source, parse_cell, python_source
from .exercises import Lesson
from .student import METADATA_KEY

__all__ = ["COLUMNS", "STATUSES", "Row", "StudentAnswer", "Report", "Unreadable",
           "find_notebooks", "identify", "read_answers", "grade", "write_csv"]

COLUMNS = ("student", "lesson", "exercise", "status", "points", "max_points", "feedback",
           "answer", "source")
STATUSES = ("correct", "wrong", "unanswered", "code", "error", "unreadable")


@dataclass(frozen=True)
class Row:
    student: str
    lesson: str
    exercise: str
    status: str
    points: float
    max_points: float | None
    feedback: str
    answer: str
    source: str
    order: int = 0      # the exercise's place in the lesson (0 for an unreadable file)

    def sort_key(self) -> tuple[str, str, int, str]:
        return (self.student, self.lesson, self.order, self.source)

    def csv_values(self) -> list[str]:
        def number(x: float | None) -> str:
            return "" if x is None else (f"{int(x)}" if float(x).is_integer() else f"{x:g}")
        return [self.student, self.lesson, self.exercise, self.status, number(self.points),
                number(self.max_points), self.feedback, self.answer, self.source]


class Unreadable(Exception):
    """A notebook the grader cannot grade, and why."""

    def __init__(self, reason: str, student: str = "", lesson: str = "") -> None:
        super().__init__(reason)
        self.reason, self.student, self.lesson = reason, student, lesson


def find_notebooks(folder: Path) -> tuple[list[Path], int]:
    """The ``.ipynb`` files under `folder`, sorted, and how many other files were skipped
    (hidden files and folders such as ``.ipynb_checkpoints`` are not counted)."""
    notebooks, other = [], 0
    for path in sorted(folder.rglob("*")):
        parts = path.relative_to(folder).parts
        if any(p.startswith(".") or p == "__MACOSX" for p in parts) or not path.is_file():
            continue
        if path.suffix == ".ipynb":
            notebooks.append(path)
        else:
            other += 1
    return notebooks, other


def _lesson_in_name(stem: str, lessons: Mapping[str, Lesson]) -> str | None:
    found = [name for name in lessons if name in stem]
    return max(found, key=len) if found else None


def _student_of(rel: Path, lessons: Mapping[str, Lesson]) -> str:
    if len(rel.parts) > 1:
        return rel.parts[0].strip()
    stem = rel.stem
    if "__" in stem:
        return stem.split("__", 1)[0].strip()
    lesson = _lesson_in_name(stem, lessons)
    if lesson is not None:
        return stem[:stem.index(lesson)].rstrip("_-. ").strip()
    return ""


def _read(path: Path) -> dict[str, Any]:
    raw = path.read_bytes()
    if not raw.strip():
        raise Unreadable("the file is empty")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise Unreadable(f"not UTF-8 text ({e.reason} at byte {e.start})") from None
    try:
        nb = json.loads(text)
    except json.JSONDecodeError as e:
        raise Unreadable(f"not JSON ({e.msg} at line {e.lineno} column {e.colno}): not a "
                         f"Jupyter notebook, or a damaged one") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise Unreadable("JSON, but not a Jupyter notebook (it has no list of cells)")
    for i, cell in enumerate(nb["cells"]):
        if not isinstance(cell, dict) or "cell_type" not in cell:
            raise Unreadable(f"not a Jupyter notebook: cell {i} has no cell_type")
    return nb


def identify(path: Path, folder: Path, lessons: Mapping[str, Lesson]
             ) -> tuple[str, Lesson, dict[str, Any]]:
    """(student, lesson, notebook) of a file in the class folder, or Unreadable."""
    rel = path.relative_to(folder)
    student = _student_of(rel, lessons)
    nb = None
    try:
        nb = _read(path)
    except Unreadable as e:
        lesson = _lesson_in_name(rel.stem, lessons) or ""
        raise Unreadable(e.reason, student, lesson) from None
    meta = nb.get("metadata")
    named = meta.get(METADATA_KEY, {}).get("lesson") if isinstance(meta, dict) and \
        isinstance(meta.get(METADATA_KEY), dict) else None
    known = ", ".join(lessons) or "none"
    if named is not None:
        if named not in lessons:
            raise Unreadable(f"its metadata says lesson {named!r}, which has no teacher copy "
                             f"(known lessons: {known})", student)
        lesson = named
    else:
        found = _lesson_in_name(rel.stem, lessons)
        if found is None:
            raise Unreadable(f"unknown lesson: no {METADATA_KEY} lesson in its metadata, and its "
                             f"file name contains no lesson name (known lessons: {known})",
                             student)
        lesson = found
    if not student:
        raise Unreadable("cannot tell whose notebook this is: put it in a folder named after "
                         "the student, or name it <student>__<lesson>.ipynb", "", lesson)
    return student, lessons[lesson], nb


@dataclass(frozen=True)
class StudentAnswer:
    kind: str           # literal | code | missing | invalid
    value: Any = None
    text: str = ""      # the code (kind code), or what is wrong (kind invalid)
    cell: int | None = None


_ASSIGN_LINE = re.compile(r"^\s*(answer_\w+)\s*(?::[^=\n]*)?=(?!=)", re.MULTILINE)
# An assignment inside IPython syntax (``%time answer_1 = f()``): only a kernel can run it.
_MAGIC_ASSIGN = re.compile(r"^[ \t]*%.*?\b(answer_\w+)\s*=(?!=)", re.MULTILINE)


def _code_text(code: str, node: ast.AST) -> str:
    text = ast.get_source_segment(code, node) or ast.unparse(node)
    return " ".join(text.split())


def read_answers(notebook: Mapping[str, Any], names: Sequence[str]) -> dict[str, StudentAnswer]:
    """Each answer as the notebook's last assignment to it leaves it, read without running
    anything: a literal, code, missing, or invalid (its cell is not valid Python)."""
    wanted = set(names)
    found: dict[str, StudentAnswer] = {}
    for i, cell in enumerate(notebook.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        source = cell_source(cell)
        tree = parse_cell(source)
        if tree is None:
            try:
                ast.parse(python_source(source))
                problem = "not valid Python"
            except SyntaxError as e:
                problem = f"not valid Python ({e.msg}, line {e.lineno})"
            except ValueError as e:
                problem = f"not valid Python ({e})"
            for name in _ASSIGN_LINE.findall(source):
                if name in wanted:
                    found[name] = StudentAnswer("invalid", text=f"the cell that assigns {name} "
                                                                f"(cell {i}) is {problem}", cell=i)
            continue
        code = python_source(source)
        events: list[tuple[int, int, str, StudentAnswer]] = []
        for m in _MAGIC_ASSIGN.finditer(source):
            if m.group(1) in wanted:
                line = source.count("\n", 0, m.start()) + 1
                text = " ".join(source.splitlines()[line - 1].split())
                events.append((line, 0, m.group(1), StudentAnswer("code", text=text, cell=i)))
        plain = set()
        for node in tree.body:
            value, targets = None, []
            if isinstance(node, ast.Assign):
                value, targets = node.value, node.targets
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                value, targets = node.value, [node.target]
            if value is None or not all(isinstance(t, ast.Name) for t in targets):
                continue
            plain.add(id(node))
            for t in targets:
                if t.id not in wanted:
                    continue
                try:
                    answer = StudentAnswer("literal", ast.literal_eval(value), cell=i)
                except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    answer = StudentAnswer("code", text=_code_text(code, value), cell=i)
                events.append((node.lineno, node.col_offset, t.id, answer))
        for node in ast.walk(tree):
            if id(node) in plain:
                continue
            targets = []
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.NamedExpr,
                                 ast.For, ast.AsyncFor, ast.withitem, ast.comprehension)):
                for part in ("targets", "target", "optional_vars"):
                    got = getattr(node, part, None)
                    targets += got if isinstance(got, list) else [got] if got else []
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name) and n.id in wanted:
                        where = node if hasattr(node, "lineno") else t
                        events.append((where.lineno, where.col_offset, n.id,
                                       StudentAnswer("code", text=_code_text(code, where),
                                                     cell=i)))
        for _line, _col, name, answer in sorted(events, key=lambda e: (e[0], e[1])):
            found[name] = answer
    return {name: found.get(name, StudentAnswer("missing")) for name in names}


@dataclass
class Report:
    rows: list[Row]
    students: int
    notebooks: int
    unreadable: list[tuple[str, str]]       # (source, reason)
    skipped_files: int = 0
    duplicates: list[str] = field(default_factory=list)

    @property
    def exercises_graded(self) -> int:
        return sum(1 for r in self.rows if r.status != "unreadable")

    def summary(self, folder: Path, out: str | None) -> str:
        lines = [f"graded {folder}: {self.students} student{'s' * (self.students != 1)}, "
                 f"{self.notebooks} notebook{'s' * (self.notebooks != 1)} "
                 f"({len(self.unreadable)} unreadable), {self.exercises_graded} "
                 f"exercise{'s' * (self.exercises_graded != 1)} graded"]
        counts: dict[tuple[str, int, str], Counter[str]] = {}
        for r in self.rows:
            if r.status != "unreadable":
                counts.setdefault((r.lesson, r.order, r.exercise), Counter())[r.status] += 1
        statuses = [s for s in STATUSES if s != "unreadable"]
        if counts:
            width = max(len("lesson"), *(len(k[0]) for k in counts))
            ex_width = max(len("exercise"), *(len(k[2]) for k in counts))
            lines.append(f"{'lesson':<{width}}  {'exercise':<{ex_width}}  "
                         + "  ".join(f"{s:>10}" for s in statuses))
            for key in sorted(counts):
                lines.append(f"{key[0]:<{width}}  {key[2]:<{ex_width}}  "
                             + "  ".join(f"{counts[key][s]:>10}" for s in statuses))
        for source, reason in self.unreadable:
            lines.append(f"unreadable: {source}: {reason}")
        for line in self.duplicates:
            lines.append(line)
        if self.skipped_files:
            lines.append(f"skipped {self.skipped_files} "
                         + ("file that is not a notebook" if self.skipped_files == 1
                            else "files that are not notebooks"))
        if out:
            lines.append(f"wrote {len(self.rows)} rows to {out}")
        return "\n".join(lines)


def _answer_text(answer: StudentAnswer, value: Any = ..., executed: bool = False) -> str:
    if executed:
        return repr(value)
    if answer.kind == "literal":
        return repr(answer.value)
    if answer.kind == "code":
        return answer.text
    return ""


def _grade_notebook(student: str, lesson: Lesson, nb: Mapping[str, Any], path: Path,
                    source: str, execute: bool, timeout: float,
                    log: Callable[[str], None]) -> list[Row]:
    answers = read_answers(nb, [e.name for e in lesson.exercises])
    values: dict[str, Any] = {n: a.value for n, a in answers.items() if a.kind == "literal"}
    kernel: dict[str, Any] = {}
    code = [n for n, a in answers.items() if a.kind == "code"]
    if execute and code:
        from .kernel import run_for_answers

        log(f"grade: running {source} in a kernel ({', '.join(code)} written as code)")
        kernel = run_for_answers(nb, path.parent, code, timeout)
        values.update({n: k.value for n, k in kernel.items() if k.problem is None})
    rows = []
    for e in lesson.exercises:
        a = answers[e.name]
        executed = e.name in kernel and kernel[e.name].problem is None
        answer = _answer_text(a, values.get(e.name), executed)
        if a.kind == "missing":
            status, feedback = "unanswered", f"no cell of the notebook assigns {e.name}"
        elif a.kind == "invalid":
            status, feedback = "wrong", a.text
        elif a.kind == "code" and e.name in kernel and not executed:
            status, feedback = "error", str(kernel[e.name].problem)
        elif a.kind == "code" and not executed:
            status, feedback = "code", (f"{e.name} is computed by code, not written as a "
                                        f"Python literal: grade with --execute to run the "
                                        f"notebook")
        else:
            outcome = lesson.check(e, values)
            status, feedback = outcome.status, outcome.message
        rows.append(Row(student, lesson.name, e.name, status,
                        e.points if status == "correct" else 0, e.points, feedback, answer,
                        source, e.number))
    return rows


def grade(folder: Path, lessons: Mapping[str, Lesson], *, execute: bool = False,
          timeout: float = 300, log: Callable[[str], None] | None = None) -> Report:
    """Grade every notebook under `folder` against the lessons' teacher copies."""
    if log is None:
        def log(line: str) -> None:
            print(line, file=sys.stderr)
    paths, skipped = find_notebooks(folder)
    rows: list[Row] = []
    unreadable: list[tuple[str, str]] = []
    students: set[str] = set()
    seen: dict[tuple[str, str], list[str]] = {}
    for path in paths:
        source = path.relative_to(folder).as_posix()
        try:
            student, lesson, nb = identify(path, folder, lessons)
        except Unreadable as e:
            log(f"grade: cannot grade {source}: {e.reason}")
            unreadable.append((source, e.reason))
            total = lessons[e.lesson].total_points if e.lesson in lessons else None
            rows.append(Row(e.student, e.lesson, "", "unreadable", 0, total, e.reason, "",
                            source))
            if e.student:
                students.add(e.student)
            continue
        students.add(student)
        seen.setdefault((student, lesson.name), []).append(source)
        rows += _grade_notebook(student, lesson, nb, path, source, execute, timeout, log)
    duplicates = [f"note: {student} has {len(sources)} notebooks of {lesson}, all graded: "
                  f"{', '.join(sources)}" for (student, lesson), sources in sorted(seen.items())
                  if len(sources) > 1]
    for line in duplicates:
        log(f"grade: {line}")
    rows.sort(key=Row.sort_key)
    return Report(rows, len(students), len(paths), unreadable, skipped, duplicates)


def write_csv(rows: Sequence[Row], stream: IO[str]) -> None:
    writer = csv.writer(stream)
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow(row.csv_values())
