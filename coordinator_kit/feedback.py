"""What a check says about an answer: correct, not yet (with a hint), or not answered yet.

The lessons' exercise checks and the "predict, then reveal" questions of the control panel
answer with a `Feedback`; the grader (`coordinator_kit.teaching`) reads its `status`. It lives
below both, so that the widgets need not import the lessons.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Feedback", "not_answered", "wrong_counts"]


@dataclass(frozen=True)
class Feedback:
    """What a check cell shows: correct, not yet (with a hint), or not answered yet."""

    exercise: str
    status: str  # "correct" | "wrong" | "unanswered"
    message: str

    def __post_init__(self) -> None:
        if self.status not in ("correct", "wrong", "unanswered"):
            raise ValueError(f"Feedback status must be correct, wrong or unanswered, "
                             f"got {self.status!r}")

    @property
    def correct(self) -> bool:
        return self.status == "correct"

    def __bool__(self) -> bool:
        return self.correct

    def __repr__(self) -> str:
        mark = {"correct": "✔ correct", "wrong": "✘ not yet",
                "unanswered": "… not answered yet"}[self.status]
        return f"{self.exercise}: {mark}. {self.message}"


def not_answered(exercise: str, what: str) -> Feedback:
    """The feedback for a placeholder answer: say what to put in its place."""
    return Feedback(exercise, "unanswered",
                    f"Replace the `...` in the answer cell with {what}, run it, then run this "
                    f"cell again.")


def wrong_counts(exercise: str, answer: Any, keys: Iterable[str], unit: str) -> Feedback | None:
    """The feedback for an answer that should be {key: whole number >= 0} with exactly `keys`
    but is not (None when it has that shape): `unit` names what the numbers count."""
    keys = list(keys)
    if not isinstance(answer, Mapping) or set(answer) != set(keys):
        return Feedback(exercise, "wrong", f"Give a dict with exactly the keys {keys}.")
    if any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in answer.values()):
        return Feedback(exercise, "wrong", f"Each value is a whole number of {unit}; got "
                                           f"{dict(answer)}.")
    return None
