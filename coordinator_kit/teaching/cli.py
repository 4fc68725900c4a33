"""`python -m coordinator_kit notebooks` and `python -m coordinator_kit grade`.

    python -m coordinator_kit notebooks --write          # every student notebook from teachers/
    python -m coordinator_kit notebooks --check          # exit 1 naming the cells that drifted
    python -m coordinator_kit grade DIR [--out FILE.csv] [--execute] [--timeout S]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .student import NOTEBOOKS, TEACHERS

__all__ = ["add_parser", "run_notebooks", "run_grade"]

_GRADE_EPILOG = """\
whose notebook, which lesson:
  DIR/<student>/<anything>.ipynb      a folder per student (the usual LMS export)
  DIR/<student>__<anything>.ipynb     flat, two underscores after the student's name
  DIR/<student>_<lesson>.ipynb        flat, e.g. alice_06_classroom_exercises.ipynb
  The lesson is the one the notebook's metadata names ({"coordinator_kit": {"lesson": ...}},
  written into every student notebook), else the lesson name in the file name. Hidden files
  and folders (.ipynb_checkpoints) are skipped.

exercises and checks:
  Read from the lesson's teacher copy (TEACHERS/<lesson>.ipynb): each answer_N its solution
  blocks assign, judged by the check cell after it (1 point, or the answer cell's
  {"coordinator_kit": {"points": N}}). The teacher copy's checks run in this process, not the
  student's check cells; the lessons' Feedback (correct/wrong/unanswered) and Verdict (ok
  True/False/None) map to one status. No check needs Spark: the grader starts no session.

answers:
  The notebook's last assignment to answer_N, read as a Python literal (nothing runs). An
  answer computed by code gets status "code"; with --execute, notebooks with such answers run
  in a fresh kernel (their own folder as working directory, --timeout seconds per cell) and
  those answers take the kernel's values. --execute runs the students' code with your rights.

CSV columns (one row per student and exercise, sorted by student, lesson, exercise):
  student, lesson, exercise (answer_N), status, points, max_points, feedback (the check's
  message), answer, source (the file, relative to DIR).
  status: correct | wrong | unanswered | code | error (the check raised, or the kernel could
  not give the answer) | unreadable (one row per file that cannot be graded, with the reason).

A summary (students, notebooks, exercises graded, statuses per exercise, unreadable files)
goes to stdout; without --out the CSV goes to stdout and the summary to stderr.
Exit status: 0, or 1 when a file was unreadable (its row says why), 2 on a usage error.
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    n = sub.add_parser(
        "notebooks", help="generate the student notebooks from the teacher copies, or check "
                          "that they are in step",
        description="Each teacher copy teachers/NN_name.ipynb generates the student notebook "
                    "notebooks/NN_name.ipynb: the lines between '### BEGIN SOLUTION' and '### "
                    "END SOLUTION' become 'answer_N = ...', cells tagged 'solution' are left "
                    "out, everything else is kept byte for byte (outputs too, except those of "
                    "the answer and check cells, computed for the unanswered notebook). "
                    "Execute the teacher copy first, so its stored outputs are current.")
    mode = n.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true",
                      help="write every student notebook from its teacher copy")
    mode.add_argument("--check", action="store_true",
                      help="write nothing; exit 1 naming each student notebook (and cell) that "
                           "differs from what its teacher copy generates")
    n.add_argument("lessons", nargs="*", metavar="LESSON",
                   help="only these lessons (e.g. 06_classroom_exercises); default: every "
                        "teacher copy")
    n.add_argument("--teachers", type=Path, default=TEACHERS,
                   help=f"the teacher copies (default: {TEACHERS})")
    n.add_argument("--notebooks", type=Path, default=NOTEBOOKS,
                   help=f"the student notebooks (default: {NOTEBOOKS})")
    n.set_defaults(func=run_notebooks)

    g = sub.add_parser(
        "grade", help="grade a folder of students' notebooks into a CSV",
        description="Grade a class: every student notebook under DIR, one CSV row per student "
                    "and exercise, and a summary (students, notebooks, exercises graded, "
                    "statuses per exercise).",
        epilog=_GRADE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    g.add_argument("folder", type=Path, metavar="DIR", help="the class's notebooks")
    g.add_argument("--out", type=Path, default=None, metavar="FILE.csv",
                   help="write the CSV here (default: stdout, with the summary on stderr)")
    g.add_argument("--execute", action="store_true",
                   help="run the notebooks whose answers are code in a fresh kernel, and grade "
                        "the values it computes")
    g.add_argument("--timeout", type=float, default=300, metavar="S",
                   help="with --execute: seconds one cell may run (default 300)")
    g.add_argument("--teachers", type=Path, default=TEACHERS,
                   help=f"the teacher copies (default: {TEACHERS})")
    g.set_defaults(func=run_grade)


def _error(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def _shown(path: Path) -> Path:
    """The path relative to the current folder when it is inside it (shorter messages)."""
    try:
        return path.resolve().relative_to(Path.cwd())
    except ValueError:
        return path


def _selected(args: argparse.Namespace) -> list[Path] | None:
    from .student import teacher_copies

    args.teachers, args.notebooks = _shown(args.teachers), _shown(args.notebooks)
    copies = teacher_copies(args.teachers)
    if not copies:
        _error(f"no teacher copies (*.ipynb) in {args.teachers}")
        return None
    if not args.lessons:
        return copies
    by_name = {p.stem: p for p in copies}
    unknown = [n for n in args.lessons if n.removesuffix(".ipynb") not in by_name]
    if unknown:
        _error(f"no teacher copy of {', '.join(unknown)} in {args.teachers}; there are: "
               f"{', '.join(by_name)}")
        return None
    return [by_name[n.removesuffix(".ipynb")] for n in args.lessons]


def run_notebooks(args: argparse.Namespace) -> int:
    from .student import student_drift, student_path, write_student

    copies = _selected(args)
    if copies is None:
        return 2
    drifted = 0
    for teacher in copies:
        student = student_path(teacher, args.notebooks)
        try:
            if args.check:
                problems = student_drift(teacher, student)
                for p in problems:
                    print(p, file=sys.stderr)
                drifted += bool(problems)
                if not problems:
                    print(f"{student}: in step with {teacher}")
            elif write_student(teacher, student):
                print(f"wrote {student} from {teacher}")
            else:
                print(f"{student}: unchanged")
        except ValueError as e:
            return _error(str(e))
    if drifted:
        print(f"{drifted} student notebook{'s' * (drifted != 1)} out of step: edit the teacher "
              f"copies, then run `python -m coordinator_kit notebooks --write`", file=sys.stderr)
    return 1 if drifted else 0


def run_grade(args: argparse.Namespace) -> int:
    from .exercises import load_lessons
    from .grade import grade, write_csv

    if not args.folder.is_dir():
        return _error(f"{args.folder} is not a folder: give the folder holding the class's "
                      f"notebooks")
    if args.timeout <= 0:
        return _error(f"--timeout must be a positive number of seconds, got {args.timeout:g}")
    try:
        lessons = load_lessons(args.teachers)
    except ValueError as e:
        return _error(str(e))
    if not lessons:
        return _error(f"no teacher copies (*.ipynb) in {args.teachers}: the grader reads each "
                      f"lesson's exercises and checks from its teacher copy")
    report = grade(args.folder, lessons, execute=args.execute, timeout=args.timeout)
    if args.out is None:
        write_csv(report.rows, sys.stdout)
        print(report.summary(args.folder, None), file=sys.stderr)
    else:
        with args.out.open("w", encoding="utf-8", newline="") as f:
            write_csv(report.rows, f)
        print(report.summary(args.folder, str(args.out)))
    return 1 if report.unreadable else 0
