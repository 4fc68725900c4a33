"""Teacher copies made from student notebooks, for the tests of the generator and the grader:
each cell that assigns an answer keeps the student's line and gets a solution block after it,
as a teacher would write it (teachers/README.md)."""

from __future__ import annotations

import ast
import copy
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from coordinator_kit.teaching.cells import cell_source

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
TEACHERS = ROOT / "teachers"
_ANSWER_CELL = re.compile(r"^(answer_\w+) = ")


def answer_cells(notebook: Mapping[str, Any]) -> dict[str, int]:
    """answer_N -> the index of the code cell whose first line assigns it."""
    found = {}
    for i, cell in enumerate(notebook["cells"]):
        m = _ANSWER_CELL.match(cell_source(cell))
        if cell["cell_type"] == "code" and m:
            found[m.group(1)] = i
    return found


def teacher_copy_of(student: Mapping[str, Any], solutions: Mapping[str, str]) -> dict[str, Any]:
    """`student` with a solution block (`solutions[name]`, source text) in each answer cell."""
    nb = copy.deepcopy(dict(student))
    nb["metadata"].pop("coordinator_kit", None)
    for name, i in answer_cells(nb).items():
        cell = nb["cells"][i]
        source = (f"{cell_source(cell)}\n### BEGIN SOLUTION\n{name} = {solutions[name]}\n"
                  f"### END SOLUTION")
        cell["source"] = source.splitlines(keepends=True)
    return nb


def write(nb: Mapping[str, Any], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    return path


def read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def solution_answers(teacher: Path) -> dict[str, object]:
    """answer_N -> the literal a teacher copy's solution blocks assign to it."""
    from coordinator_kit.teaching import student as st

    answers = {}
    for _cell, block, _names in st.solution_blocks(json.loads(teacher.read_text())):
        for node in ast.parse(block).body:
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                answers[node.targets[0].id] = ast.literal_eval(node.value)
    return answers
