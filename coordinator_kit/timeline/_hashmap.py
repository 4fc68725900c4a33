"""TimelineHashMap: a dict whose past states can be read and restored."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping
from typing import Any, TypeVar, overload

from ._hashtable import KEY, VALUE, SnapshottableHashTable
from ._registry import SnapshotRegistry, read_epoch

__all__ = ["TimelineHashMap"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
D = TypeVar("D")

_MISSING: Any = object()


class TimelineHashMap(Mapping[K, V]):
    """A mapping on a ``SnapshotRegistry``: writes change the present, reads can name an epoch.

    Reads take ``epoch=None`` (the latest state) or the epoch of an existing snapshot. A read
    at an epoch with no snapshot raises ``NoSnapshotError`` whenever it needs history; a
    ``get``/``contains_key`` whose live entry is old enough succeeds anyway (as in Kafka).

    Values are stored by reference, exactly like Kafka's map. Mutating a stored value in
    place changes it in every snapshot at once, because no snapshot holds a copy: the
    timeline only sees ``put``/``remove``. Store immutable values (or nested timeline
    structures) and replace them with ``put``.

    Method names follow Kafka where Kafka has them: ``put`` and ``remove`` return the
    previous value or None and never raise for a missing key. The Python forms
    (``m[k] = v``, ``del m[k]``, ``pop``) behave like a dict's. ``keys``/``values``/``items``
    return lists, so it is safe to keep writing while looping over a result.
    None is not accepted as a key or value.
    """

    def __init__(self, registry: SnapshotRegistry, expected_size: int = 0) -> None:
        # expected_size mirrors Kafka's constructor so ported code reads the same; Python
        # dicts size themselves, so it is only a hint and is ignored.
        self._registry = registry
        self._table: SnapshottableHashTable[K, V] = SnapshottableHashTable(registry)

    # ----------------------------------------------------------------- writes

    def put(self, key: K, value: V) -> V | None:
        """Map ``key`` to ``value``; return the previous value, or None if there was none."""
        if key is None or value is None:
            self._check_key(key)
            raise ValueError(f"TimelineHashMap values must not be None (key {key!r})")
        prev = self._table.add_or_replace(key, value)
        return None if prev is None else prev[VALUE]

    def __setitem__(self, key: K, value: V) -> None:
        self.put(key, value)

    def put_if_absent(self, key: K, value: V) -> V | None:
        """Store ``value`` only when ``key`` is absent: return the value already there (and
        change nothing, stash nothing), or None when it was stored (Java's
        ``Map.putIfAbsent``, which Kafka's TimelineHashMap inherits). A snapshot revert
        takes the stored entry out again, like any ``put``."""
        if key is None or value is None:
            self._check_key(key)
            raise ValueError(f"TimelineHashMap values must not be None (key {key!r})")
        table = self._table
        element = table._live.get(key)
        if element is not None:
            return element[VALUE]
        table.add_unless_present(key, value)
        return None

    def compute_if_absent(self, key: K, factory: Callable[[K], V | None]) -> V | None:
        """The value of ``key``, made by ``factory(key)`` and stored when absent (Java's
        ``Map.computeIfAbsent``, which Kafka's OffsetMetadataManager calls on its timeline
        maps); a factory that returns None stores nothing and None is returned."""
        self._check_key(key)
        table = self._table
        element = table._live.get(key)
        if element is not None:
            return element[VALUE]
        value = factory(key)
        if value is not None:
            table.add_unless_present(key, value)
        return value

    def remove(self, key: K) -> V | None:
        """Remove ``key``; return its value, or None if it was absent."""
        self._check_key(key)
        prev = self._table.remove(key)
        return None if prev is None else prev[VALUE]

    @overload
    def pop(self, key: K) -> V: ...
    @overload
    def pop(self, key: K, default: D) -> V | D: ...

    def pop(self, key: K, default: Any = _MISSING) -> Any:
        """Like ``dict.pop``: KeyError for a missing key unless a default is given."""
        value = self.remove(key)
        if value is None:
            if default is _MISSING:
                raise KeyError(key)
            return default
        return value

    def __delitem__(self, key: K) -> None:
        if self.remove(key) is None:
            raise KeyError(key)

    def clear(self) -> None:
        """Remove every entry (snapshots keep theirs)."""
        self._table.clear()

    # ----------------------------------------------------------------- reads

    def get(self, key: K, default: Any = None, epoch: int | None = None) -> Any:
        """Value of ``key`` at ``epoch`` (None = latest), or ``default`` if absent then."""
        self._check_key(key)
        if epoch is None:  # the latest state is the live dict (get_element at LATEST_EPOCH)
            element = self._table._live.get(key)
        else:
            element = self._table.get_element(key, read_epoch(epoch))
        return default if element is None else element[VALUE]

    def contains_key(self, key: K, epoch: int | None = None) -> bool:
        self._check_key(key)
        return self._table.get_element(key, read_epoch(epoch)) is not None

    def __contains__(self, key: object) -> bool:
        return self.contains_key(key)  # type: ignore[arg-type]

    def __getitem__(self, key: K) -> V:
        self._check_key(key)
        element = self._table.get_element(key, read_epoch(None))
        if element is None:
            raise KeyError(key)
        return element[VALUE]

    def size(self, epoch: int | None = None) -> int:
        return self._table.size(read_epoch(epoch))

    def is_empty(self, epoch: int | None = None) -> bool:
        return self.size(epoch) == 0

    def __len__(self) -> int:
        return self._table.size(read_epoch(None))

    def items(self, epoch: int | None = None) -> list[tuple[K, V]]:  # type: ignore[override]
        """(key, value) pairs at ``epoch``, in the order the keys arrived."""
        return [(e[KEY], e[VALUE]) for e in self._table.elements(read_epoch(epoch))]

    def keys(self, epoch: int | None = None) -> list[K]:  # type: ignore[override]
        return [e[KEY] for e in self._table.elements(read_epoch(epoch))]

    def values(self, epoch: int | None = None) -> list[V]:  # type: ignore[override]
        return [e[VALUE] for e in self._table.elements(read_epoch(epoch))]

    def __iter__(self) -> Iterator[K]:
        return iter(self.keys())

    def __repr__(self) -> str:
        return f"TimelineHashMap({dict(self.items())!r})"

    # ----------------------------------------------------------------- helpers

    @staticmethod
    def _check_key(key: object) -> None:
        if key is None:
            raise ValueError("TimelineHashMap keys must not be None")
