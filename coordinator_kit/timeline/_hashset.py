"""TimelineHashSet: a set whose past states can be read and restored."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Set
from typing import Any, TypeVar

from ._hashtable import KEY, SnapshottableHashTable
from ._registry import SnapshotRegistry, read_epoch

__all__ = ["TimelineHashSet"]

T = TypeVar("T", bound=Hashable)


class TimelineHashSet(Set[T]):
    """A set on a ``SnapshotRegistry``, built on the same table as ``TimelineHashMap``.

    ``add`` of an element already present is a true no-op: the stored element keeps its
    start epoch and nothing is stashed. ``add`` and ``remove`` return whether the set
    changed (Kafka's contract); ``discard`` is the quiet Python spelling of ``remove``.
    Elements are stored by reference, so they should be immutable (they are hashed anyway).
    None is not accepted as an element. Reads take ``epoch=None`` (latest) or a snapshot
    epoch, and raise ``NoSnapshotError`` when history is needed but missing.
    """

    def __init__(self, registry: SnapshotRegistry, expected_size: int = 0) -> None:
        # expected_size mirrors Kafka's constructor so ported code reads the same; Python
        # dicts size themselves, so it is only a hint and is ignored.
        self._registry = registry
        self._table: SnapshottableHashTable[T, None] = SnapshottableHashTable(registry)

    # ----------------------------------------------------------------- writes

    def add(self, element: T) -> bool:
        """Add ``element``; True if it was not already present."""
        self._check(element)
        return self._table.add_unless_present(element, None)

    def remove(self, element: T) -> bool:
        """Remove ``element``; True if it was present (never raises for a missing one)."""
        self._check(element)
        return self._table.remove(element) is not None

    def discard(self, element: T) -> None:
        self.remove(element)

    def clear(self) -> None:
        self._table.clear()

    # ----------------------------------------------------------------- reads

    def contains(self, element: T, epoch: int | None = None) -> bool:
        self._check(element)
        return self._table.get_element(element, read_epoch(epoch)) is not None

    def __contains__(self, element: object) -> bool:
        return self.contains(element)  # type: ignore[arg-type]

    def size(self, epoch: int | None = None) -> int:
        return self._table.size(read_epoch(epoch))

    def is_empty(self, epoch: int | None = None) -> bool:
        return self.size(epoch) == 0

    def __len__(self) -> int:
        return self._table.size(read_epoch(None))

    def to_list(self, epoch: int | None = None) -> list[T]:
        """Elements at ``epoch`` in the order they were added (stable across runs)."""
        return [e[KEY] for e in self._table.elements(read_epoch(epoch))]

    def to_set(self, epoch: int | None = None) -> set[T]:
        """A plain ``set`` copy of the elements at ``epoch``."""
        return set(self.to_list(epoch))

    def __iter__(self) -> Iterator[T]:
        return iter(self.to_list())

    def __repr__(self) -> str:
        return f"TimelineHashSet({self.to_list()!r})"

    @classmethod
    def _from_iterable(cls, it: Iterable[Any]) -> set[Any]:
        # Set operators (&, |, -) build results through this hook; a plain set is the only
        # sensible result, since a new timeline set would need a registry.
        return set(it)

    @staticmethod
    def _check(element: object) -> None:
        if element is None:
            raise ValueError("TimelineHashSet elements must not be None")
