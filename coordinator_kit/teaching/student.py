"""The student notebook of a lesson, generated from its teacher copy.

A teacher copy (``teachers/NN_name.ipynb``) holds the whole lesson with the solutions, marked
as nbgrader marks them:

- in a code cell, the lines between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` (each marker
  on a line of its own) are the solution. The student gets ``answer_N = ...`` in their place for
  each ``answer_N`` the block assigns, unless the cell already gives the student a starting line
  for it outside the block (``answer_1 = {"LOADING": ..., "FAILED": ...}`` before the block):
  then the block just goes. A block in a markdown cell just goes;
- a cell tagged ``solution`` (a worked answer, the teacher's notes, a cell that shows the
  solution) is left out.

Everything else is kept byte for byte, stored outputs included, so nbval compares the student
notebook's outputs as it compares the teacher's. The exceptions are the cells that held a
solution block and the code cells that read an answer (the check cells, a scoreboard): their
outputs are computed in this process (`coordinator_kit.teaching.cells.run_cell`) from the
student's placeholders, so a student sees "not answered yet" where the teacher sees "correct".
The generator writes ``{"coordinator_kit": {"lesson": "NN_name"}}`` into the notebook's
metadata; the grader recognises the lesson by it.
"""

from __future__ import annotations

import ast
import copy
import json
import re
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .cells import cell_source, imports_namespace, names_read, parse_cell, run_cell

__all__ = ["BEGIN_SOLUTION", "END_SOLUTION", "SOLUTION_TAG", "METADATA_KEY", "REPOSITORY",
           "TEACHERS", "NOTEBOOKS", "solution_blocks", "answer_names", "is_solution_cell",
           "student_version", "notebook_text", "read_notebook", "teacher_copies",
           "student_path", "write_student", "student_drift"]

BEGIN_SOLUTION = "### BEGIN SOLUTION"
END_SOLUTION = "### END SOLUTION"
SOLUTION_TAG = "solution"
METADATA_KEY = "coordinator_kit"
_ANSWER_NAME = re.compile(r"^answer_\w+$")

# The checkout this package was loaded from: its teachers/ and notebooks/ folders.
REPOSITORY = Path(__file__).resolve().parents[2]
TEACHERS = REPOSITORY / "teachers"
NOTEBOOKS = REPOSITORY / "notebooks"


def is_solution_cell(cell: Mapping[str, Any]) -> bool:
    return SOLUTION_TAG in cell.get("metadata", {}).get("tags", [])


def _assigned_answers(code: str) -> list[str]:
    """The answer_N names the statements of `code` assign, in order (empty if it does not
    parse on its own)."""
    try:
        tree = ast.parse(textwrap.dedent(code))
    except SyntaxError:
        return []
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        else:
            continue
        for t in targets:
            if isinstance(t, ast.Name) and _ANSWER_NAME.match(t.id) and t.id not in names:
                names.append(t.id)
    return names


def _block_answers(block: str, where: str) -> list[str]:
    try:
        ast.parse(textwrap.dedent(block))
    except SyntaxError as e:
        raise ValueError(f"{where}: the solution block is not valid Python ({e.msg}, line "
                         f"{e.lineno})") from None
    return _assigned_answers(block)


def _split_blocks(source: str, where: str) -> list[tuple[str, str, str]]:
    """The source as (kind, text, indent) pieces: "keep" lines and "solution" blocks."""
    pieces: list[tuple[str, str, str]] = []
    block: list[str] | None = None
    indent = ""
    for line in source.splitlines(keepends=True):
        marker = line.strip()
        if marker == BEGIN_SOLUTION:
            if block is not None:
                raise ValueError(f"{where}: {BEGIN_SOLUTION!r} inside another solution block")
            block, indent = [], line[:len(line) - len(line.lstrip())]
        elif marker == END_SOLUTION:
            if block is None:
                raise ValueError(f"{where}: {END_SOLUTION!r} without {BEGIN_SOLUTION!r}")
            pieces.append(("solution", "".join(block), indent))
            block = None
        elif block is not None:
            block.append(line)
        else:
            pieces.append(("keep", line, ""))
    if block is not None:
        raise ValueError(f"{where}: {BEGIN_SOLUTION!r} without {END_SOLUTION!r}")
    return pieces


def solution_blocks(notebook: Mapping[str, Any], where: str = "notebook"
                    ) -> list[tuple[int, str, list[str]]]:
    """(cell index, block text, answer names it assigns) for every solution block."""
    out = []
    for i, cell in enumerate(notebook["cells"]):
        for kind, text, _ in _split_blocks(cell_source(cell), f"{where}, cell {i}"):
            if kind == "solution":
                names = (_block_answers(text, f"{where}, cell {i}")
                         if cell["cell_type"] == "code" else [])
                out.append((i, text, names))
    return out


def answer_names(notebook: Mapping[str, Any], where: str = "notebook") -> list[str]:
    """Every answer name the solution blocks assign, in notebook order."""
    names: list[str] = []
    for _cell, _text, assigned in solution_blocks(notebook, where):
        names += [n for n in assigned if n not in names]
    return names


def _student_source(cell: Mapping[str, Any], where: str) -> str | None:
    """The cell's student source, or None when it holds no solution block."""
    pieces = _split_blocks(cell_source(cell), where)
    if all(kind == "keep" for kind, _, _ in pieces):
        return None
    kept = "".join(text for kind, text, _ in pieces if kind == "keep")
    given = set(_assigned_answers(kept)) if cell["cell_type"] == "code" else set()
    lines = []
    for kind, text, indent in pieces:
        if kind == "keep":
            lines.append(text)
        elif cell["cell_type"] == "code":
            lines += [f"{indent}{name} = ...\n" for name in _block_answers(text, where)
                      if name not in given]
    return "".join(lines).rstrip("\n")


def student_version(notebook: Mapping[str, Any], lesson: str,
                    where: str = "notebook") -> dict[str, Any]:
    """The student notebook of a teacher copy (see the module docstring). Raises ValueError
    naming the cell when a marker is broken or an answer cell cannot be run here."""
    nb = copy.deepcopy(dict(notebook))
    answers = set(answer_names(nb, where))
    cells, recompute = [], []
    for i, cell in enumerate(nb.get("cells", [])):
        if is_solution_cell(cell):
            continue
        new = _student_source(cell, f"{where}, cell {i}")
        if new is not None:
            cell["source"] = new.splitlines(keepends=True)
        if cell["cell_type"] == "code":
            tree = parse_cell(cell_source(cell))
            if new is not None or (tree is not None and names_read(tree) & answers):
                recompute.append((i, cell))
        cells.append(cell)
    nb["cells"] = cells
    if recompute:
        namespace = imports_namespace(cells, where)
        for i, cell in recompute:
            cell["outputs"] = run_cell(cell_source(cell), namespace, cell.get("execution_count"),
                                       f"{where}, cell {i}")
    nb.setdefault("metadata", {})[METADATA_KEY] = {"lesson": lesson}
    text = json.dumps(nb, ensure_ascii=False)
    for marker in (BEGIN_SOLUTION, END_SOLUTION):
        if marker in text:
            raise ValueError(f"{where}: the student version still contains {marker!r}: a "
                             f"marker must stand on a line of its own, in a code or markdown "
                             f"cell")
    return nb


def notebook_text(notebook: Mapping[str, Any]) -> str:
    """The notebook as nbformat writes it (sorted keys, one-space indent, UTF-8 kept)."""
    return json.dumps(notebook, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def read_notebook(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def teacher_copies(teachers: Path = TEACHERS) -> list[Path]:
    """The teacher copies in a folder, by name (``NN_name.ipynb``; checkpoints skipped)."""
    if not teachers.is_dir():
        return []
    return sorted(p for p in teachers.glob("*.ipynb") if not p.name.startswith("."))


def student_path(teacher: Path, notebooks: Path = NOTEBOOKS) -> Path:
    """Where the student notebook of a teacher copy lives: the same name in `notebooks`."""
    return notebooks / teacher.name


def _generated(teacher: Path) -> str:
    return notebook_text(student_version(read_notebook(teacher), teacher.stem, str(teacher)))


def write_student(teacher: Path, student: Path) -> bool:
    """Write the student notebook generated from `teacher`; True if the file changed."""
    text = _generated(teacher)
    if student.is_file() and student.read_text(encoding="utf-8") == text:
        return False
    student.write_text(text, encoding="utf-8")
    return True


_FIELDS = ("cell_type", "source", "metadata", "outputs", "execution_count", "id",
           "attachments")


def _describe(cell: Mapping[str, Any]) -> str:
    first = next((line for line in cell_source(cell).splitlines() if line.strip()), "")
    return f"{cell.get('cell_type', '?')} cell `{first[:60]}`"


def student_drift(teacher: Path, student: Path, limit: int = 5) -> list[str]:
    """How the student notebook differs from what its teacher copy generates, cell by cell
    (at most `limit` differences). Empty when it is exactly the generated file."""
    want_text = _generated(teacher)
    if not student.is_file():
        return [f"{student} is missing: `python -m coordinator_kit notebooks --write` writes it"]
    have_text = student.read_text(encoding="utf-8")
    if have_text == want_text:
        return []
    fix = (f"edit {teacher}, not the student notebook, then run `python -m coordinator_kit "
           f"notebooks --write`")
    try:
        have = json.loads(have_text)
    except json.JSONDecodeError as e:
        return [f"{student} is not JSON ({e}); {fix}"]
    want = json.loads(want_text)
    problems = []
    if have.get("metadata") != want.get("metadata"):
        problems.append(f"{student}: the notebook metadata differs")
    have_cells, want_cells = have.get("cells", []), want["cells"]
    for i, (w, h) in enumerate(zip(want_cells, have_cells)):
        fields = [f for f in _FIELDS if w.get(f) != h.get(f)]
        if fields:
            problems.append(f"{student}: cell {i} differs in {', '.join(fields)}: expected "
                            f"{_describe(w)}, found {_describe(h)}")
    if len(have_cells) != len(want_cells):
        problems.append(f"{student} has {len(have_cells)} cells, {teacher} generates "
                        f"{len(want_cells)}")
    if not problems:
        problems.append(f"{student}: same content, other formatting (not as nbformat writes "
                        f"it)")
    shown = problems[:limit]
    if len(problems) > limit:
        shown.append(f"{student}: ... and {len(problems) - limit} more differences")
    shown[-1] += f"; {fix}"
    return shown
