"""Notebook cells read and run in this process, the way a Jupyter kernel would show them.

The student version of a teacher copy keeps the teacher's stored outputs, except in the cells
that hold or read an answer: there a student must see what the unanswered notebook shows ("not
answered yet"), so `run_cell` computes those outputs here. It runs a cell in a namespace that
holds the notebook's imports (`imports_namespace`) and what earlier such cells assigned, and
turns the value of the cell's last expression into the output IPython's display formatter
gives a kernel (the same ``text/plain`` and ``text/html``), so nbval finds the outputs it
computes when it runs the notebook. The grader runs the teacher copy's checks the same way.

Cells may use IPython syntax (``%time``, ``!ls``): IPython's own transformer turns them into
Python before they are parsed.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
import tokenize
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["cell_source", "python_source", "parse_cell", "names_read", "imports_namespace",
           "run_cell", "display_data", "split_output_lines"]


def cell_source(cell: Mapping[str, Any]) -> str:
    """A cell's source as one string (files store it as a list of lines)."""
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def python_source(source: str) -> str:
    """The cell as plain Python: IPython's magics and shell escapes rewritten as its kernel
    does before running a cell."""
    if "%" not in source and "!" not in source and "?" not in source:
        return source
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(source)


def parse_cell(source: str) -> ast.Module | None:
    """The cell's syntax tree, or None when it is not valid (IPython) Python."""
    try:
        return ast.parse(python_source(source))
    except (SyntaxError, ValueError):
        return None


def names_read(tree: ast.AST) -> set[str]:
    """Every name the code loads (reads), anywhere in it."""
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def imports_namespace(cells: Iterable[Mapping[str, Any]], where: str) -> dict[str, Any]:
    """A namespace holding what the notebook's import statements bind: every ``import`` and
    ``from ... import`` at the top level of its code cells, run in order in this process."""
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": __builtins__}
    for i, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        tree = parse_cell(cell_source(cell))
        if tree is None:
            continue
        imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        for node in imports:
            try:
                exec(compile(ast.Module([node], []), f"{where}, cell {i}", "exec"), namespace)
            except Exception as e:
                raise ValueError(f"{where}, cell {i}: `{ast.unparse(node)}` failed in this "
                                 f"process ({type(e).__name__}: {e})") from None
    return namespace


def _quiet(source: str) -> bool:
    """IPython shows no result when the cell's last token is a semicolon."""
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline)
              if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE,
                                tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)]
    return bool(tokens) and tokens[-1].string == ";"


def display_data(value: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The mime bundle and its metadata that IPython's display formatter makes of a value."""
    from IPython.core.formatters import DisplayFormatter

    data, metadata = DisplayFormatter().format(value)
    return dict(data), dict(metadata)


def split_output_lines(output: dict[str, Any]) -> dict[str, Any]:
    """Text of an output as nbformat stores it: a list of lines (its ``split_lines``)."""
    if output["output_type"] == "stream" and isinstance(output.get("text"), str):
        output["text"] = output["text"].splitlines(True)
    for key, value in output.get("data", {}).items():
        if isinstance(value, str) and (key.startswith("text/")
                                       or key in ("application/javascript", "image/svg+xml")):
            output["data"][key] = value.splitlines(True)
    return output


_CELL_NAME = re.compile(r"[^\w.-]+")


def run_cell(source: str, namespace: dict[str, Any], execution_count: int | None,
             where: str) -> list[dict[str, Any]]:
    """Run a cell in `namespace` and return its outputs as a kernel stores them: what it
    printed (``stream``), then the value of a last expression (``execute_result``), unless it
    is None or the cell ends with ``;``. An exception becomes a ValueError naming `where`."""
    code = python_source(source)
    try:
        tree = ast.parse(code)
    except SyntaxError as e:
        raise ValueError(f"{where}: not valid Python ({e.msg}, line {e.lineno})") from None
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    stdout, stderr = io.StringIO(), io.StringIO()
    filename = f"<{_CELL_NAME.sub('-', where)}>"
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            exec(compile(tree, filename, "exec"), namespace)
            value = None if last is None else eval(compile(last, filename, "eval"), namespace)
    except Exception as e:
        raise ValueError(f"{where}: {type(e).__name__}: {e}") from e
    outputs: list[dict[str, Any]] = []
    for name, stream in (("stdout", stdout), ("stderr", stderr)):
        if stream.getvalue():
            outputs.append({"name": name, "output_type": "stream", "text": stream.getvalue()})
    if value is not None and not _quiet(code):
        data, metadata = display_data(value)
        outputs.append({"data": data, "execution_count": execution_count,
                        "metadata": metadata, "output_type": "execute_result"})
    return [split_output_lines(o) for o in outputs]
