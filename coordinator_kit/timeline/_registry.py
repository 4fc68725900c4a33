"""SnapshotRegistry: the ordered list of snapshots shared by timeline structures.

Each snapshot is identified by an epoch (in the coordinator, a log offset) and stands for
the state at the moment it was created. The structures themselves always hold the current
state; when they overwrite or drop something that an existing snapshot still needs, they
stash the old item in the *newest* snapshot's delta. Reading an older epoch therefore walks
the snapshots from that epoch forward, and the first stash found is the answer.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator
from typing import Any, Final

from ._errors import NoSnapshotError, SnapshotOrderError
from ._protocols import Delta, Revertable

__all__ = ["LATEST_EPOCH", "NO_SNAPSHOT_EPOCH", "SnapshotRegistry"]

#: Reads at this epoch (Java's ``Long.MAX_VALUE``) mean "the current state".
LATEST_EPOCH: Final[int] = 2**63 - 1

#: What ``latest_epoch()`` reports while the registry is empty (Java's ``Long.MIN_VALUE``).
#: New elements take ``latest_epoch() + 1`` as their start epoch, so this keeps that rule
#: working before the first snapshot exists.
NO_SNAPSHOT_EPOCH: Final[int] = -(2**63)


def check_epoch(epoch: object, *, what: str = "epoch") -> int:
    """Return ``epoch`` if it is an int in Java's long range, else raise.

    Epochs are compared and incremented; a float or a bool would silently do the wrong thing.
    """
    if isinstance(epoch, bool) or not isinstance(epoch, int):
        raise TypeError(f"{what} must be an int, got {type(epoch).__name__} {epoch!r}")
    if not NO_SNAPSHOT_EPOCH <= epoch <= LATEST_EPOCH:
        raise ValueError(f"{what} {epoch} is outside the 64-bit range Kafka uses for epochs")
    return epoch


def read_epoch(epoch: int | None) -> int:
    """Normalise the ``epoch=`` argument of a read: None means the latest state."""
    return LATEST_EPOCH if epoch is None else check_epoch(epoch)


class Snapshot:
    """One point in time: an epoch plus one delta per structure that changed after it.

    Internal to the package. The first structure to change after the snapshot keeps its
    delta in the snapshot itself (`_owner`, `_delta`): a coordinator takes a snapshot per
    batch, and with a single map changed per batch (the key-value shard at linger 0) a dict
    and a pair per snapshot would be two more objects for the garbage collector to walk.
    Further structures go into `_more`, keyed by ``id(owner)`` because structures may be
    unhashable (maps compare by content); the registry keeps every owner alive.
    """

    __slots__ = ("epoch", "_owner", "_delta", "_more")

    def __init__(self, epoch: int) -> None:
        self.epoch = epoch
        self._owner: Revertable | None = None
        self._delta: Delta | None = None
        self._more: dict[int, tuple[Revertable, Delta]] | None = None

    def get_delta(self, owner: Revertable) -> Any:
        if self._owner is owner:
            return self._delta
        if self._more is not None:
            found = self._more.get(id(owner))
            if found is not None:
                return found[1]
        return None

    def set_delta(self, owner: Revertable, delta: Delta) -> None:
        if self._owner is None or self._owner is owner:
            self._owner, self._delta = owner, delta
        else:
            if self._more is None:
                self._more = {}
            self._more[id(owner)] = (owner, delta)

    def deltas(self) -> list[tuple[Revertable, Delta]]:
        """(owner, delta) pairs, in the order the structures first changed."""
        out: list[tuple[Revertable, Delta]] = []
        if self._owner is not None:
            out.append((self._owner, self._delta))  # type: ignore[arg-type]
        if self._more is not None:
            out += self._more.values()
        return out

    def handle_revert(self) -> None:
        for owner, delta in self.deltas():
            owner.execute_revert(self.epoch, delta)

    def merge_from(self, source: Snapshot) -> None:
        """Absorb a newer snapshot that is being deleted.

        A structure with no delta here simply adopts the newer delta object; otherwise the
        newer delta is folded into ours, which keeps only what existed at our epoch.
        """
        for owner, delta in source.deltas():
            mine = self.get_delta(owner)
            if mine is None:
                self.set_delta(owner, delta)
            else:
                mine.merge_from(self.epoch, delta)
        source.erase()

    def erase(self) -> None:
        self._owner = self._delta = self._more = None

    def __repr__(self) -> str:
        return f"Snapshot(epoch={self.epoch})"


class SnapshotRegistry:
    """Creates, reverts and deletes snapshots for every structure registered with it.

    Like Kafka's class it is not thread-safe: the coordinator touches a shard's registry from
    one event-processor thread at a time. Structures register themselves when constructed and
    stay registered for the registry's lifetime.
    """

    LATEST_EPOCH: Final[int] = LATEST_EPOCH
    NO_SNAPSHOT_EPOCH: Final[int] = NO_SNAPSHOT_EPOCH

    def __init__(self) -> None:
        self._snapshots: list[Snapshot] = []  # oldest first, strictly increasing epochs
        self._by_epoch: dict[int, Snapshot] = {}
        self._revertables: list[Revertable] = []

    # ----------------------------------------------------------------- introspection

    def latest_epoch(self) -> int:
        """Epoch of the newest snapshot, or ``NO_SNAPSHOT_EPOCH`` when there is none."""
        return self._snapshots[-1].epoch if self._snapshots else NO_SNAPSHOT_EPOCH

    def epochs_list(self) -> list[int]:
        """Epochs of all snapshots, oldest first."""
        return [s.epoch for s in self._snapshots]

    def has_snapshot(self, epoch: int) -> bool:
        return epoch in self._by_epoch

    def __repr__(self) -> str:
        return f"SnapshotRegistry(epochs={self.epochs_list()})"

    # ----------------------------------------------------------------- changes

    def get_or_create_snapshot(self, epoch: int) -> Snapshot:
        """Return the snapshot at ``epoch``, creating it if it would be the newest.

        Asking again for the newest epoch is a no-op (it does *not* re-capture the state);
        asking for anything older than the newest raises ``SnapshotOrderError``.
        """
        if epoch.__class__ is not int or not NO_SNAPSHOT_EPOCH < epoch < LATEST_EPOCH:
            check_epoch(epoch)  # raises for a non-int or an epoch outside Java's long range
            if epoch in (LATEST_EPOCH, NO_SNAPSHOT_EPOCH):
                # Kafka would accept these, but they collide with its two sentinel values
                # (the "read latest" marker and the empty list's head) and misbehave.
                raise ValueError(
                    f"cannot create a snapshot at epoch {epoch}: that value is reserved "
                    f"(LATEST_EPOCH / NO_SNAPSHOT_EPOCH)"
                )
        snapshots = self._snapshots
        if snapshots:
            newest = snapshots[-1]
            if newest.epoch >= epoch:
                if newest.epoch == epoch:
                    return newest
                raise SnapshotOrderError(epoch, newest.epoch, self.epochs_list())
        snapshot = Snapshot(epoch)
        snapshots.append(snapshot)
        self._by_epoch[epoch] = snapshot
        return snapshot

    def idempotent_create_snapshot(self, epoch: int) -> None:
        """Same as ``get_or_create_snapshot`` without returning the snapshot."""
        self.get_or_create_snapshot(epoch)

    def revert_to_snapshot(self, epoch: int) -> None:
        """Roll every registered structure back to its state at snapshot ``epoch``.

        Newer snapshots are deleted first (each merges into its predecessor, so their
        stashes end up in the target); the target snapshot itself survives.
        """
        target = self._require(epoch, "revert")
        index = self._index_of(target)
        while len(self._snapshots) > index + 1:
            self._delete(self._snapshots[index + 1])
        target.handle_revert()

    def delete_snapshot(self, epoch: int) -> None:
        """Forget snapshot ``epoch`` without changing what older snapshots read."""
        self._delete(self._require(epoch, "delete"))

    def delete_snapshots_up_to(self, epoch: int) -> None:
        """Delete every snapshot whose epoch is strictly less than ``epoch``, oldest first."""
        check_epoch(epoch)
        # The oldest snapshot has nothing older to merge into, so deleting from the front only
        # erases: do that for every snapshot below `epoch`, then drop them in one go.
        snapshots = self._snapshots
        by_epoch = self._by_epoch
        count = 0
        for snapshot in snapshots:
            if snapshot.epoch >= epoch:
                break
            snapshot.erase()
            del by_epoch[snapshot.epoch]
            count += 1
        if count:
            del snapshots[:count]

    def reset(self) -> None:
        """Drop all snapshots, then put every registered structure back to its initial state."""
        self.delete_snapshots_up_to(LATEST_EPOCH)
        for revertable in self._revertables:
            revertable.reset()

    def register(self, revertable: Revertable) -> None:
        """Attach a structure so that ``reset()`` reaches it. Structures call this themselves."""
        self._revertables.append(revertable)

    # ----------------------------------------------------------------- for the structures

    def newest_snapshot(self) -> Snapshot | None:
        """The snapshot that receives stashes, if any."""
        return self._snapshots[-1] if self._snapshots else None

    def snapshots_from(self, epoch: int) -> Iterator[Snapshot]:
        """Snapshots from the one at ``epoch`` to the newest; raises if ``epoch`` is missing.

        The check happens here, eagerly, so a read fails before it yields anything.
        """
        start = self._index_of(self._require(epoch, "read"))
        return iter(self._snapshots[start:])

    # ----------------------------------------------------------------- helpers

    def _require(self, epoch: int, operation: str) -> Snapshot:
        check_epoch(epoch)
        snapshot = self._by_epoch.get(epoch)
        if snapshot is None:
            raise NoSnapshotError(epoch, self.epochs_list(), operation)
        return snapshot

    def _index_of(self, snapshot: Snapshot) -> int:
        return bisect_left(self._snapshots, snapshot.epoch, key=lambda s: s.epoch)

    def _delete(self, snapshot: Snapshot) -> None:
        index = self._index_of(snapshot)
        if index > 0:
            self._snapshots[index - 1].merge_from(snapshot)
        else:
            snapshot.erase()
        del self._snapshots[index]
        del self._by_epoch[snapshot.epoch]
