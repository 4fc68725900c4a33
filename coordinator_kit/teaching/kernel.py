"""Running a student's notebook in a fresh kernel and reading its answers back (``grade
--execute``), for answers written as code rather than as literals.

The notebook's code cells run top to bottom in a new ``python3`` kernel (nbclient, as nbval
runs notebooks): the notebook's own folder is the working directory, each cell may run for
`timeout` seconds before the kernel is interrupted, and a cell that raises does not stop the
run. The kernel imports the same ``coordinator_kit`` as the grader. A last cell, added here,
pickles the answers; the grader unpickles them with `read_value`, which rebuilds Python's plain
values and the kit's own types only (a student's notebook cannot make the grader call anything
else), and then runs the checks in its own process.
"""

from __future__ import annotations

import base64
import io
import os
import pickle
import secrets
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .cells import cell_source
from .student import REPOSITORY

__all__ = ["KernelAnswer", "run_for_answers", "read_value"]

_BUILTINS = {"set", "frozenset", "list", "dict", "tuple", "int", "float", "complex", "str",
             "bytes", "bytearray", "bool", "slice", "range", "Ellipsis"}
_ALLOWED = {("collections", "OrderedDict"), ("datetime", "datetime"), ("datetime", "date"),
            ("datetime", "time"), ("datetime", "timedelta"), ("datetime", "timezone"),
            ("decimal", "Decimal"), ("fractions", "Fraction")}


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if module == "builtins" and name in _BUILTINS:
            return super().find_class(module, name)
        if (module, name) in _ALLOWED:
            return super().find_class(module, name)
        if module == "coordinator_kit" or module.startswith("coordinator_kit."):
            found = super().find_class(module, name)
            if isinstance(found, type):
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not a value the grader reads back "
                                     f"(Python's plain values and the kit's own types only)")


def read_value(data: bytes) -> Any:
    """Unpickle an answer, allowing Python's plain values and coordinator_kit's classes only."""
    return _Unpickler(io.BytesIO(data)).load()


@dataclass(frozen=True)
class KernelAnswer:
    """An answer as the kernel left it: `value` when `problem` is None."""

    value: Any = None
    problem: str | None = None


_COLLECT = '''
def __coordinator_kit_answers(names, marker):
    import base64, pickle

    def plain(v):
        # numpy and pandas scalars (a Spark or pandas result) become Python's own numbers
        if type(v).__module__.split(".")[0] in ("numpy", "pandas") and hasattr(v, "item"):
            try:
                return v.item()
            except Exception:
                return v
        if type(v) in (list, tuple, set, frozenset):
            return type(v)(plain(x) for x in v)
        if type(v) is dict:
            return {plain(k): plain(x) for k, x in v.items()}
        return v

    found = {}
    for name in names:
        if name not in globals():
            found[name] = ("missing", None)
            continue
        value = plain(globals()[name])
        try:
            found[name] = ("ok", pickle.dumps(value))
        except Exception as e:
            found[name] = ("unpicklable", f"{type(value).__name__} ({type(e).__name__}: {e})")
    print(marker + base64.b64encode(pickle.dumps(found)).decode())

__coordinator_kit_answers(__NAMES__, __MARKER__)
del __coordinator_kit_answers
'''


def _cell_errors(cells: Sequence[Any], index: Sequence[int], timeout: float) -> list[str]:
    errors = []
    for cell, i in zip(cells, index):
        for out in cell.get("outputs", []):
            if out.get("output_type") != "error":
                continue
            if out.get("ename") == "KeyboardInterrupt":
                errors.append(f"cell {i} ran longer than {timeout:g} s and was interrupted")
            else:
                errors.append(f"cell {i} raised {out.get('ename')}: {out.get('evalue')}")
    return errors


def run_for_answers(notebook: Mapping[str, Any], folder: Path, names: Sequence[str],
                    timeout: float) -> dict[str, KernelAnswer]:
    """Run the notebook's code cells in a fresh kernel with `folder` as working directory and
    return each of `names` as the kernel holds it after the last cell."""
    import nbformat
    from nbclient import NotebookClient

    code = [(i, cell_source(c)) for i, c in enumerate(notebook.get("cells", []))
            if isinstance(c, Mapping) and c.get("cell_type") == "code"]
    marker = f"coordinator-kit-answers-{secrets.token_hex(8)}:"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for _, src in code]
    nb.cells.append(nbformat.v4.new_code_cell(
        _COLLECT.replace("__NAMES__", repr(list(names))).replace("__MARKER__", repr(marker))))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPOSITORY)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    client = NotebookClient(nb, timeout=int(timeout), kernel_name="python3", allow_errors=True,
                            interrupt_on_timeout=True,
                            resources={"metadata": {"path": str(folder)}})
    try:
        # The kernel process's own stderr carries only its startup chatter; what the
        # notebook prints reaches the cells' outputs.
        client.execute(env=env, stderr=subprocess.DEVNULL)
    except Exception as e:   # the kernel died, or would not start
        problem = f"the notebook did not run to its end in a kernel ({type(e).__name__}: {e})"
        return {n: KernelAnswer(problem=problem) for n in names}
    errors = _cell_errors(nb.cells[:-1], [i for i, _ in code], timeout)
    ran = "; ".join(errors[:3]) if errors else "the notebook ran without errors"
    payload = None
    for out in nb.cells[-1].get("outputs", []):
        for line in "".join(out.get("text", "")).splitlines():
            if line.startswith(marker):
                payload = line[len(marker):]
    if payload is None:
        problem = f"the kernel did not report the answers ({ran})"
        return {n: KernelAnswer(problem=problem) for n in names}
    found = read_value(base64.b64decode(payload))
    answers = {}
    for name in names:
        kind, data = found.get(name, ("missing", None))
        if kind == "missing":
            answers[name] = KernelAnswer(problem=f"{name} is not defined after running the "
                                                 f"notebook ({ran})")
        elif kind == "unpicklable":
            answers[name] = KernelAnswer(problem=f"{name} holds a {data}: the grader cannot "
                                                 f"read it back; give a Python value")
        else:
            try:
                answers[name] = KernelAnswer(read_value(data))
            except Exception as e:
                answers[name] = KernelAnswer(problem=f"{name}: {e}")
    return answers
