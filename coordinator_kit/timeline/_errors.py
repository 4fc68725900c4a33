"""Exceptions raised by the timeline package.

Kafka throws a bare ``RuntimeException`` for every timeline misuse. The kit gives each
case its own class so a learner (or a test) can tell them apart, and writes messages that
say what existed and what to do instead.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["TimelineError", "NoSnapshotError", "SnapshotOrderError"]


def _describe_epochs(epochs: Sequence[int]) -> str:
    if not epochs:
        return "there are no snapshots at all"
    return "existing snapshot epochs: [" + ", ".join(str(e) for e in epochs) + "]"


class TimelineError(RuntimeError):
    """Base class, a ``RuntimeError`` because that is what Kafka throws in each case."""


# What each operation should try instead, appended to a NoSnapshotError message.
_ADVICE = {
    "read": "read at one of the existing epochs, or at the latest state (epoch=None)",
    "revert": "revert to one of the existing epochs",
    "delete": "delete one of the existing epochs",
}


class NoSnapshotError(TimelineError):
    """An operation needed the snapshot at ``epoch`` but the registry holds none there.

    For reads this is data-dependent, as in Kafka: a map lookup whose live entry is old
    enough never consults the registry, so only some keys raise.
    """

    def __init__(self, epoch: int, epochs: Sequence[int], operation: str = "read") -> None:
        self.epoch = epoch
        self.epochs = list(epochs)
        self.operation = operation
        if operation == "read":
            what = f"Cannot read at epoch {epoch}: the answer needs history, but there is"
        elif operation == "revert":
            what = f"Cannot revert to epoch {epoch}: there is"
        else:
            what = f"Cannot delete the snapshot at epoch {epoch}: there is"
        advice = _ADVICE.get(operation, "use one of the existing epochs")
        super().__init__(
            f"{what} no in-memory snapshot at epoch {epoch} "
            f"({_describe_epochs(self.epochs)}). {advice[0].upper()}{advice[1:]}."
        )


class SnapshotOrderError(TimelineError):
    """A snapshot was requested at an epoch older than the newest one.

    Snapshots form an ordered list and writes stash history into the newest one only, so
    a new snapshot can never be slotted in behind an existing one.
    """

    def __init__(self, epoch: int, newest: int, epochs: Sequence[int]) -> None:
        self.epoch = epoch
        self.newest = newest
        self.epochs = list(epochs)
        super().__init__(
            f"Cannot create a snapshot at epoch {epoch}: the newest snapshot is already at "
            f"epoch {newest}, and snapshots must be created in non-decreasing epoch order "
            f"({_describe_epochs(self.epochs)}). Use an epoch >= {newest}, or first revert to "
            f"a snapshot at or before epoch {epoch}."
        )
