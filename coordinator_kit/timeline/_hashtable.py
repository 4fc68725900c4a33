"""The snapshottable hash table underneath TimelineHashMap and TimelineHashSet.

Every element records a ``start_epoch``: ``registry.latest_epoch() + 1`` when it was put in
(a replacement is a new element). An element belongs to snapshot E exactly when its start
epoch is <= E. When a write replaces or removes an element that the newest snapshot still
contains, the old element is stashed in that snapshot's tier; once stashed, the key's live
element is newer than the snapshot, so later writes to it stash nothing more.

Reading key K at epoch E:
  1. the live element, if its start epoch is <= E (no snapshot is consulted: this is why a
     missing snapshot only raises for *some* keys);
  2. otherwise the tiers from snapshot E to the newest, in order: the first stashed copy of K
     decides (present if its start epoch is <= E, absent if not);
  3. nothing found: K was absent at E.

Each tier also records the table's size when its snapshot was taken, which answers
``size(E)`` without a scan.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from operator import itemgetter
from typing import Generic, TypeVar

from ._registry import LATEST_EPOCH, NO_SNAPSHOT_EPOCH, SnapshotRegistry

__all__ = ["Element", "SnapshottableHashTable", "KEY", "VALUE", "START_EPOCH", "SEQ"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

#: One stored key/value: a plain tuple ``(key, value, start_epoch, seq)``, read with the
#: index constants below. It is never changed once stored, so snapshots can share it.
#: ``seq`` is the order in which the key entered the table (kept across replacements); it
#: gives reads at past epochs the same, stable order that the live dict has. Why a plain
#: tuple: it costs one BUILD_TUPLE instead of an object and an ``__init__`` call, and a tuple
#: holding only atoms (string keys and values, int epochs) is one Python's cyclic garbage
#: collector stops tracking, so a large map of such elements is not walked by every full
#: collection (an object per element would be).
Element = tuple
KEY, VALUE, START_EPOCH, SEQ = 0, 1, 2, 3


class HashTier(Generic[K, V]):
    """One table's delta in one snapshot: the size then, and the stashed old elements.

    The stash is None (nothing stashed), one element tuple, or a dict key -> element once a
    second key is stashed. A coordinator snapshot per batch usually stashes one element (at
    linger 0, the previous value of the one key the write changed): no dict for that.
    """

    __slots__ = ("size", "_stash")

    def __init__(self, size: int, stash: dict[K, Element] | None = None) -> None:
        self.size = size
        self._stash: Element | dict[K, Element] | None = stash or None

    @property
    def stash(self) -> dict[K, Element] | None:
        """The stashed elements by key (a copy when there is one), or None."""
        stash = self._stash
        if stash is None or stash.__class__ is dict:
            return stash  # type: ignore[return-value]
        return {stash[KEY]: stash}  # type: ignore[index, dict-item]

    def get(self, key: K) -> Element | None:
        stash = self._stash
        if stash is None:
            return None
        if stash.__class__ is tuple:
            return stash if stash[KEY] == key else None  # type: ignore[index, return-value]
        return stash.get(key)  # type: ignore[union-attr]

    def items(self) -> list[tuple[K, Element]]:
        stash = self._stash
        if stash is None:
            return []
        if stash.__class__ is tuple:
            return [(stash[KEY], stash)]  # type: ignore[index, list-item]
        return list(stash.items())  # type: ignore[union-attr]

    def put(self, element: Element) -> None:
        """Stash `element` under its key (replacing one stashed for that key)."""
        stash = self._stash
        if stash is None:
            self._stash = element
        elif stash.__class__ is tuple:
            if stash[KEY] == element[KEY]:  # type: ignore[index]
                self._stash = element
            else:
                self._stash = {stash[KEY]: stash, element[KEY]: element}  # type: ignore[index]
        else:
            stash[element[KEY]] = element  # type: ignore[index]

    def merge_from(self, destination_epoch: int, source: object) -> None:
        assert isinstance(source, HashTier)
        for _, element in source.items():
            # Elements born after our epoch were never part of our snapshot.
            if element[START_EPOCH] <= destination_epoch:
                self.put(element)

    def __repr__(self) -> str:
        return f"HashTier(size={self.size}, stash={self.stash!r})"


class SnapshottableHashTable(Generic[K, V]):
    """Live dict plus per-snapshot tiers. Shared engine; use the map or set front ends."""

    def __init__(self, registry: SnapshotRegistry) -> None:
        self._registry = registry
        self._live: dict[K, Element] = {}
        self._next_seq = 0
        registry.register(self)

    # ----------------------------------------------------------------- reads

    def get_element(self, key: K, epoch: int) -> Element | None:
        current = self._live.get(key)
        if current is not None and current[START_EPOCH] <= epoch:
            return current
        if epoch == LATEST_EPOCH:
            return None
        for snapshot in self._registry.snapshots_from(epoch):
            tier: HashTier[K, V] | None = snapshot.get_delta(self)
            if tier is not None:
                found = tier.get(key)
                if found is not None:
                    return found if found[START_EPOCH] <= epoch else None
        return None

    def size(self, epoch: int) -> int:
        if epoch == LATEST_EPOCH:
            return len(self._live)
        for snapshot in self._registry.snapshots_from(epoch):
            tier: HashTier[K, V] | None = snapshot.get_delta(self)
            if tier is not None:
                return tier.size
        return len(self._live)

    def elements(self, epoch: int) -> list[Element]:
        """All elements present at ``epoch``, in key-arrival order.

        Kafka's historical iterator unions the live table with every tier from ``epoch``
        on; after a revert the same old element can sit in two tiers and Kafka yields it
        twice. Here each key is decided once, by the same rule as ``get_element``.
        """
        if epoch == LATEST_EPOCH:
            return list(self._live.values())
        snapshots = self._registry.snapshots_from(epoch)  # raises before any work
        decided: dict[K, Element | None] = {
            k: e for k, e in self._live.items() if e[START_EPOCH] <= epoch
        }
        for snapshot in snapshots:
            tier: HashTier[K, V] | None = snapshot.get_delta(self)
            if tier is None:
                continue
            for key, element in tier.items():
                if key not in decided:
                    decided[key] = element if element[START_EPOCH] <= epoch else None
        present = [e for e in decided.values() if e is not None]
        present.sort(key=_seq_of)
        return present

    def iter_live(self) -> Iterator[Element]:
        return iter(list(self._live.values()))

    # ----------------------------------------------------------------- writes

    def add_or_replace(self, key: K, value: V) -> Element | None:
        """Store ``key -> value`` as a new element; return the element it replaced."""
        live = self._live
        prev = live.get(key)
        prev_size = len(live)
        if prev is None:
            seq = self._next_seq
            self._next_seq = seq + 1
        else:
            seq = prev[SEQ]
        snapshots = self._registry._snapshots  # newest last: latest_epoch(), newest_snapshot()
        if not snapshots:
            # no snapshot: no tier to note growth in, nothing to stash
            live[key] = (key, value, NO_SNAPSHOT_EPOCH + 1, seq)
            return prev
        newest = snapshots[-1]
        newest_epoch = newest.epoch
        live[key] = (key, value, newest_epoch + 1, seq)
        if prev is not None and prev[START_EPOCH] > newest_epoch:
            return prev  # _stash: the replaced element is in no snapshot
        # _tier(prev_size): the first change since the newest snapshot remembers its size
        owner = newest._owner
        if owner is self:
            tier = newest._delta
        elif owner is None:  # the first structure to change since the snapshot was taken
            tier = newest._delta = HashTier(prev_size)
            newest._owner = self
        else:
            tier = newest.get_delta(self)
            if tier is None:
                tier = HashTier(prev_size)
                newest.set_delta(self, tier)
        if prev is not None:
            if tier._stash is None:
                tier._stash = prev  # the one element stashed (see HashTier)
            else:
                tier.put(prev)
        return prev

    def add_unless_present(self, key: K, value: V) -> bool:
        """Insert only if absent (set semantics: re-adding changes nothing, stashes nothing)."""
        if key in self._live:
            return False
        prev_size = len(self._live)
        self._live[key] = (key, value, self._registry.latest_epoch() + 1, self._take_seq())
        self._note_growth(prev_size)
        return True

    def remove(self, key: K) -> Element | None:
        prev = self._live.pop(key, None)
        if prev is not None:
            self._stash(prev, len(self._live) + 1)
        return prev

    def clear(self) -> None:
        """Remove everything one element at a time, so snapshots keep what they need."""
        for key in list(self._live):
            self.remove(key)

    # ----------------------------------------------------------------- Revertable

    def execute_revert(self, target_epoch: int, delta: object) -> None:
        assert isinstance(delta, HashTier)
        for key in [k for k, e in self._live.items() if e[START_EPOCH] > target_epoch]:
            del self._live[key]
        self._live.update(delta.items())
        # Re-inserted elements landed at the end of the dict; restore arrival order.
        ordered = sorted(self._live.values(), key=_seq_of)
        self._live.clear()
        self._live.update((e[KEY], e) for e in ordered)

    def reset(self) -> None:
        self.clear()

    # ----------------------------------------------------------------- stashing

    def _take_seq(self) -> int:
        seq = self._next_seq
        self._next_seq += 1
        return seq

    def _tier(self, prev_size: int) -> HashTier[K, V] | None:
        newest = self._registry.newest_snapshot()
        if newest is None:
            return None
        tier: HashTier[K, V] | None = newest.get_delta(self)
        if tier is None:
            # The first change since the newest snapshot: remember the size it saw.
            tier = HashTier(prev_size)
            newest.set_delta(self, tier)
        return tier

    def _note_growth(self, prev_size: int) -> None:
        self._tier(prev_size)

    def _stash(self, prev: Element, prev_size: int) -> None:
        newest = self._registry.newest_snapshot()
        if newest is None or prev[START_EPOCH] > newest.epoch:
            return  # not part of any snapshot: nothing to preserve
        tier = self._tier(prev_size)
        assert tier is not None
        tier.put(prev)


_seq_of = itemgetter(SEQ)
