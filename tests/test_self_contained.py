"""The repository stands on its own: nothing in it cites documents a reader does not have.

The kit was written from notes that are not part of the repository (a behaviour write-up with
numbered sections, research notes on clients and log formats, a design note, an issue tracker,
and copies of public pages kept under numbered file names). A reader of the repository cannot
open any of them, so code, tests, notebooks and docs cite what a reader can follow instead:
Kafka's own classes and methods, KIPs, public pages by their address, or a page under `docs/`.
This test fails when such a citation comes back, naming the file, the line and what to cite
instead.

It reads the text of every tracked kind of source: Python files, Markdown, the notebooks'
cells (markdown and code; outputs are printed by the package, which is read itself), the
diagrams' sources and the build files. Generated data (the datasets' logs, the test logs, the
SVGs) is not read. The few matches that are legitimate are listed in `ALLOWED`, each with why.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# What a citation of the private notes looks like, and what to write instead.
PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a numbered section of a document outside the repository ('§1.5'); name the Kafka class or "
     "method (docs/kafka-classes.md lists them)", re.compile(r"§")),
    ("'the spec' / 'spec 3.4': name the Kafka class or method, or a page under docs/",
     re.compile(r"(?i)\bthe spec\b|\bspec(?:'s)?\s+(?:section|sec\.|\d)|(?<![a-z])spec_\d")),
    ("a seed text by number ('seed 000', 'seeds 001 and 002'); describe the public page it "
     "copies (docs/kafka-code-vs-common-descriptions.md lists them) or say what it showed",
     re.compile(r"(?i)(?<![a-z])seeds?[ _-]?0\d\d(?!\d)|\b\d{3}_[0-9a-f]{16}\b")),
    ("an issue or item of a tracker the repository does not have ('issue 4', 'item 6'); say what "
     "the requirement is", re.compile(r"(?i)\bissues?\s+#?\d+\b|\bitem\s+\d+\s*\)|\(item\s+\d+\b")),
    ("a file of the private notes; cite Kafka's code or docs/ instead",
     re.compile(r"(?i)kafka-coordinator-spec|client-coordinator\.md|jupyter-spark-notes|"
                r"kafka-log-formats|coordination-history|teaching-anchors|style-anchors|"
                r"wire-feasibility|DESIGN\.md|(?-i:\bDESIGN\b)")),
    ("a path of the private notes", re.compile(r"(?i)/work/shared|shared/(?:reference|seeds)\b|"
                                               r"\breference/[\w-]+\.md")),
    ("the private notes by another name ('reference material', 'the design card', 'the task "
     "text', 'the founders')", re.compile(r"(?i)reference material|design card|task text|"
                                          r"\bfounders?\b|\bprinciple\s+\d")),
    ("the people who build the kit ('the lead'); say what happened instead",
     re.compile(r"\bthe lead(?:'s)?\b")),
)

# Legitimate matches: (path relative to the root, the exact matched text, why).
ALLOWED: tuple[tuple[str, str, str], ...] = (
    # The data file and the constant that names it keep their names; notebooks/data/README.md
    # says where the log comes from.
    ("coordinator_kit/lessons/spark_logs.py", "seed001", "the file name of SEED_LOG"),
    ("notebooks/data/README.md", "seed001", "the file name of SEED_LOG"),
    ("notebooks/05_reading_coordinator_logs_with_spark.ipynb", "seed001",
     "the file name of SEED_LOG, shown to the learner"),
    ("teachers/05_reading_coordinator_logs_with_spark.ipynb", "seed001",
     "the file name of SEED_LOG, in the teacher copy the student notebook is generated from"),
    # Code names (a public constant, test names) that carry the old labels; renaming them is a
    # separate change. Each is listed so that no new one slips in.
    ("coordinator_kit/lessons/runtime_lifecycle.py", "SEED_000",
     "the public name SEED_000_DIFFERENCES"),
    ("tests/test_lessons_03_04.py", "SEED_000", "uses SEED_000_DIFFERENCES"),
    ("tests/test_runtime.py", "seed_000", "the test name test_seed_000_lifecycle_end_to_end_..."),
    ("tests/test_runtime.py", "spec_1",
     "the test name test_context_transition_table_is_exactly_spec_1_2"),
    ("tests/test_timeline.py", "spec_2", "the test name test_worked_example_spec_2_3"),
    ("tests/test_group_coordinator.py", "spec_3",
     "the test name test_classic_group_transition_table_is_spec_3_3"),
)

_SUFFIXES = {".py", ".md", ".ipynb", ".dot", ".yml", ".yaml", ".toml", ".cfg", ".sh", ".txt"}
_FILES = ("Makefile", ".ci/run", ".gitignore")
_SKIP_DIRS = {".git", ".venv", "__pycache__", ".hypothesis", ".pytest_cache", "node_modules",
              ".ipynb_checkpoints", "build", "dist", "spark-warehouse"}
# Generated data: log lines and tables the kit writes or copies, not prose.
_SKIP_UNDER = ("datasets/", "tests/data/")
_KEEP_UNDER = ("datasets/README.md",)


def _sources() -> list[Path]:
    found = []
    for path in sorted(ROOT.rglob("*")):
        rel = path.relative_to(ROOT).as_posix()
        if any(part in _SKIP_DIRS or part.startswith(".notebook-eyes")
               for part in path.relative_to(ROOT).parts):
            continue
        if not path.is_file() or path.resolve() == Path(__file__).resolve():
            continue
        if rel.startswith(_SKIP_UNDER) and rel not in _KEEP_UNDER:
            continue
        if path.suffix in _SUFFIXES or rel in _FILES:
            found.append(path)
    return found


def _lines(path: Path) -> list[tuple[str, str]]:
    """(where, text) for each line a reader sees: a notebook's cell sources, a file's lines."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".ipynb":
        return [(f"line {n}", line) for n, line in enumerate(text.splitlines(), 1)]
    out = []
    for i, cell in enumerate(json.loads(text)["cells"]):
        source = "".join(cell["source"])
        for n, line in enumerate(source.splitlines(), 1):
            out.append((f"cell {i} ({cell['cell_type']}) line {n}", line))
    return out


def _allowed(rel: str, matched: str) -> bool:
    return any(rel == path and matched.lower() == text.lower() for path, text, _ in ALLOWED)


def find_citations(paths: list[Path] | None = None) -> list[str]:
    """Every citation of the private notes in `paths` (default: the repository's sources)."""
    problems = []
    for path in _sources() if paths is None else paths:
        rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
        for where, line in _lines(path):
            for advice, pattern in PATTERNS:
                for m in pattern.finditer(line):
                    if not _allowed(rel, m.group(0)):
                        problems.append(f"{rel}, {where}: {m.group(0)!r} in {line.strip()!r}: "
                                        f"{advice}")
    return problems


def test_the_scan_reads_the_package_tests_notebooks_and_docs():
    rels = {p.relative_to(ROOT).as_posix() for p in _sources()}
    for must in ("coordinator_kit/runtime/runtime.py", "tests/test_runtime.py", "README.md",
                 "docs/README.md", "datasets/README.md", "notebooks/data/README.md",
                 "notebooks/03_coordinator_runtime_lifecycle.ipynb", "benchmarks/simulation.py",
                 "diagrams/classic_group.dot", "environment.yml", "pyproject.toml"):
        assert must in rels, f"{must} is not scanned"
    assert not any(r.endswith((".log", ".jsonl", ".csv", ".svg")) for r in rels)
    assert "tests/test_self_contained.py" not in rels


def test_nothing_cites_documents_outside_the_repository():
    problems = find_citations()
    assert not problems, ("cites documents a reader of the repository does not have:\n"
                          + "\n".join(problems))


def test_every_allowed_match_is_still_needed():
    """An allow-list entry that no longer matches anything would hide the next one: remove it."""
    for path, text, why in ALLOWED:
        matched = {m.group(0).lower() for _, line in _lines(ROOT / path)
                   for _, pattern in PATTERNS for m in pattern.finditer(line)}
        assert text.lower() in matched, f"ALLOWED entry for {path} ({why}) matches nothing"


@pytest.mark.parametrize("line, caught", [
    ("# Spec §1.16: CoordinatorOperationExceptionHelper.handleOperationException.", True),
    ('"""Seed 000\'s claims, one block each."""', True),
    ("Two write-ups this kit started from (seeds 001 and 002) say", True),
    ("Seed `000_d2164be25fec9263.txt`, a widely shared write-up", True),
    ("SEED_001_CLAIMS = ()", True),
    ("def test_seed_002_story():", True),
    ("def test_table_is_exactly_spec_3_3():", True),
    ("The seed-001 consumer logs each heartbeat", True),
    ("The first 17 columns are the ones issue 4 names", True),
    ("The exercises (issue 5, item 6):", True),
    ("(see shared/reference/jupyter-spark-notes.md)", True),
    ("The notebooks stay thin (DESIGN.md, principle 6)", True),
    ('a property test (DESIGN "Tests")', True),
    ("as the design card says", True),
    ("the lead's quiet-machine run decides", True),
    # legitimate text
    ("CoordinatorRuntime.scheduleLoadOperation (docs/kafka-classes.md)", False),
    ("Every run below is on virtual time with fixed seeds, so the output is the same", False),
    ("the 60 s GC pause (default configs, seed 0)", False),
    ("for name, spec in DATASETS.items():", False),
    ("the leader's SyncGroup; the leader runs the assignor", False),
    ("section 4 shows it; KIP-848 moves assignment to the broker", False),
    ("the design of the runtime: one context per partition", False),
    ("an issue with the linger condition", False),
])
def test_the_patterns_catch_citations_and_leave_kafka_prose_alone(tmp_path, line, caught):
    f = tmp_path / "sample.py"
    f.write_text(line + "\n", encoding="utf-8")
    assert bool(find_citations([f])) is caught, line
