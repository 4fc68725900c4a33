"""TimelineHashMap.put_if_absent and compute_if_absent: Java's `Map.putIfAbsent` and
`Map.computeIfAbsent`, which Kafka's TimelineHashMap inherits (a get, then a put only when the
key is absent) and Kafka's OffsetMetadataManager calls on its timeline maps
(`pendingTransactionalOffsets.computeIfAbsent`, `openTransactionsByGroup.computeIfAbsent`)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coordinator_kit.timeline import SnapshotRegistry, TimelineHashMap


def test_put_if_absent_returns_the_existing_value_or_stores_and_returns_none():
    registry = SnapshotRegistry()
    m: TimelineHashMap[str, int] = TimelineHashMap(registry)
    assert m.put_if_absent("a", 1) is None and m.get("a") == 1
    assert m.put_if_absent("a", 2) == 1 and m.get("a") == 1  # unchanged
    with pytest.raises(ValueError, match="must not be None"):
        m.put_if_absent("b", None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="keys must not be None"):
        m.put_if_absent(None, 1)  # type: ignore[arg-type]


def test_put_if_absent_is_reverted_by_a_snapshot_and_read_at_older_epochs():
    """SnapshottableHashTable.snapshottableAddUnlessPresent under a TimelineHashMap: the stored
    entry is absent at the snapshot before it and gone after a revert to it; an entry that was
    present is neither replaced nor stashed."""
    registry = SnapshotRegistry()
    m: TimelineHashMap[str, int] = TimelineHashMap(registry)
    m.put("kept", 1)
    snapshot0 = registry.get_or_create_snapshot(0)
    assert m.put_if_absent("new", 2) is None
    assert m.put_if_absent("kept", 9) == 1
    registry.get_or_create_snapshot(1)
    assert m.get("new", epoch=0) is None and m.get("new", epoch=1) == 2
    assert m.size(epoch=0) == 1 and m.size(epoch=1) == 2
    assert m.items(epoch=0) == [("kept", 1)]
    assert snapshot0.get_delta(m._table).stash is None  # nothing stashed
    registry.revert_to_snapshot(0)
    assert m.items() == [("kept", 1)] and "new" not in m


def test_put_if_absent_after_a_remove_keeps_the_old_value_at_the_old_epoch():
    registry = SnapshotRegistry()
    m: TimelineHashMap[str, int] = TimelineHashMap(registry)
    m.put("k", 1)
    registry.get_or_create_snapshot(0)
    m.remove("k")
    assert m.put_if_absent("k", 2) is None
    registry.get_or_create_snapshot(1)
    assert (m.get("k", epoch=0), m.get("k", epoch=1), m.get("k")) == (1, 2, 2)
    registry.revert_to_snapshot(0)
    assert m.get("k") == 1


def test_compute_if_absent_calls_the_factory_only_when_absent():
    registry = SnapshotRegistry()
    m: TimelineHashMap[str, list] = TimelineHashMap(registry)
    calls = []

    def factory(key: str) -> list:
        calls.append(key)
        return [key]
    first = m.compute_if_absent("a", factory)
    assert first == ["a"] and m.compute_if_absent("a", factory) is first and calls == ["a"]
    assert m.compute_if_absent("b", lambda key: None) is None and "b" not in m
    registry.get_or_create_snapshot(0)
    m.compute_if_absent("c", factory)
    registry.revert_to_snapshot(0)
    assert m.keys() == ["a"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["put_if_absent", "put", "remove", "snapshot",
                                           "revert"]),
                          st.integers(0, 4), st.integers(0, 9)), max_size=40))
def test_put_if_absent_matches_a_dict_with_snapshots(ops):
    """Property: against a dict model with copies per snapshot, `put_if_absent` returns what
    `dict.setdefault` would have found (None when it stored), and every snapshot still reads
    as its copy; a revert restores the copy."""
    registry = SnapshotRegistry()
    m: TimelineHashMap[int, int] = TimelineHashMap(registry)
    model: dict[int, int] = {}
    copies: dict[int, dict[int, int]] = {}
    epoch = 0
    for op, key, value in ops:
        if op == "put_if_absent":
            expected = model.get(key)
            assert m.put_if_absent(key, value) == expected
            model.setdefault(key, value)
        elif op == "put":
            m.put(key, value)
            model[key] = value
        elif op == "remove":
            m.remove(key)
            model.pop(key, None)
        elif op == "snapshot":
            epoch += 1
            registry.get_or_create_snapshot(epoch)
            copies[epoch] = dict(model)
        elif copies:  # revert to the newest snapshot
            newest = max(copies)
            registry.revert_to_snapshot(newest)
            model = dict(copies[newest])
        assert dict(m.items()) == model
        for e, copy in copies.items():
            assert dict(m.items(epoch=e)) == copy
            assert all(m.get(k, epoch=e) == copy.get(k) for k in range(5))
