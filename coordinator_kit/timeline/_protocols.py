"""The two small interfaces that tie timeline structures to a SnapshotRegistry.

The registry knows nothing about maps or integers: it only holds, per snapshot, one opaque
``Delta`` per registered ``Revertable``, and calls back into the structure when a snapshot
is reverted to or the registry is reset. Anything implementing these can join a registry.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["Delta", "Revertable"]


@runtime_checkable
class Delta(Protocol):
    """History one structure stashed in one snapshot."""

    def merge_from(self, destination_epoch: int, source: Delta) -> None:
        """Fold a newer snapshot's delta into this one when that snapshot is deleted.

        ``destination_epoch`` is the epoch of the snapshot that owns ``self``; anything in
        ``source`` that did not exist yet at that epoch must be left out.
        """
        ...


@runtime_checkable
class Revertable(Protocol):
    """A structure whose contents can be rolled back to a snapshot."""

    def execute_revert(self, target_epoch: int, delta: Delta) -> None:
        """Restore the state at ``target_epoch`` using that snapshot's (merged) delta."""
        ...

    def reset(self) -> None:
        """Return to the initial, empty state."""
        ...
