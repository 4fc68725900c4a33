"""Single-value timeline structures: TimelineObject, TimelineInteger, TimelineLong.

A scalar keeps one live value. The first ``set`` after the newest snapshot was taken saves
the value being overwritten into that snapshot; later sets before the next snapshot save
nothing, since the snapshot already knows its value. Reading epoch E returns the first saved
value found from snapshot E forward, or the live value if none of them saved one.
Unlike the hash table, every read at a past epoch consults the registry, so a missing
snapshot always raises ``NoSnapshotError``.
"""

from __future__ import annotations

from typing import Final, Generic, TypeVar

from ._registry import LATEST_EPOCH, SnapshotRegistry, read_epoch

__all__ = ["TimelineObject", "TimelineInteger", "TimelineLong"]

T = TypeVar("T")


class _Saved(Generic[T]):
    """A scalar's delta: its value when the snapshot was taken."""

    __slots__ = ("value",)

    def __init__(self, value: T) -> None:
        self.value = value

    def merge_from(self, destination_epoch: int, source: object) -> None:
        # The older snapshot already holds the value it needs; the newer one adds nothing.
        pass


class _TimelineScalar(Generic[T]):
    """Shared snapshot logic for the scalar types."""

    def __init__(self, registry: SnapshotRegistry, initial: T) -> None:
        self._registry = registry
        self._initial = initial
        self._value = initial
        registry.register(self)

    def get(self, epoch: int | None = None) -> T:
        """The value at ``epoch`` (None = latest)."""
        epoch = read_epoch(epoch)
        if epoch == LATEST_EPOCH:
            return self._value
        for snapshot in self._registry.snapshots_from(epoch):
            saved: _Saved[T] | None = snapshot.get_delta(self)
            if saved is not None:
                return saved.value
        return self._value

    def _store(self, value: T) -> None:
        newest = self._registry.newest_snapshot()
        if newest is not None and newest.get_delta(self) is None:
            newest.set_delta(self, _Saved(self._value))
        self._value = value

    def execute_revert(self, target_epoch: int, delta: object) -> None:
        assert isinstance(delta, _Saved)
        self._value = delta.value

    def reset(self) -> None:
        """Back to the initial value (saved into the newest snapshot if there is one)."""
        self._store(self._initial)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._value!r})"


class TimelineObject(_TimelineScalar[T]):
    """A snapshottable reference to a (preferably immutable) object; never None.

    The object is held by reference: mutating it in place is invisible to snapshots, which
    share the very same object. Replace it with ``set`` instead.
    """

    def __init__(self, registry: SnapshotRegistry, initial_value: T) -> None:
        if initial_value is None:
            raise ValueError("TimelineObject initial value must not be None")
        super().__init__(registry, initial_value)

    def set(self, value: T) -> None:
        if value is None:
            raise ValueError("TimelineObject value must not be None")
        self._store(value)


class _TimelineFixedWidthInt(_TimelineScalar[int]):
    """Integer scalar that wraps on overflow like Java's fixed-width types."""

    BITS: int = 64
    INIT: Final[int] = 0

    def __init__(self, registry: SnapshotRegistry) -> None:
        super().__init__(registry, self.INIT)

    def set(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{type(self).__name__} holds ints, got {type(value).__name__}")
        low, high = -(1 << (self.BITS - 1)), (1 << (self.BITS - 1)) - 1
        if not low <= value <= high:
            raise ValueError(
                f"{value} does not fit in {type(self).__name__} ({self.BITS}-bit signed)"
            )
        self._store(value)

    def increment(self) -> None:
        """Add one, wrapping from the maximum to the minimum as Java does."""
        self._store(self._wrap(self._value + 1))

    def decrement(self) -> None:
        """Subtract one, wrapping from the minimum to the maximum as Java does."""
        self._store(self._wrap(self._value - 1))

    def _wrap(self, value: int) -> int:
        half = 1 << (self.BITS - 1)
        return (value + half) % (1 << self.BITS) - half

    def __int__(self) -> int:
        return self._value

    def __index__(self) -> int:
        return self._value


class TimelineInteger(_TimelineFixedWidthInt):
    """Snapshottable 32-bit int (Java ``int``), starting at 0."""

    BITS = 32


class TimelineLong(_TimelineFixedWidthInt):
    """Snapshottable 64-bit int (Java ``long``), starting at 0."""

    BITS = 64
