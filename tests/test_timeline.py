"""Unit tests for coordinator_kit.timeline, against Kafka's `org.apache.kafka.timeline`
(`SnapshotRegistry`, `SnapshottableHashTable`, `TimelineHashMap`, ...; Kafka's own tests are
`SnapshotRegistryTest`, `TimelineHashMapTest` and friends in `server-common`).

Each test names the operation it checks. Where Kafka's code does something surprising, a test
pins it down and says so.
"""

from __future__ import annotations

from typing import NamedTuple

import pytest

import coordinator_kit.timeline as timeline
from coordinator_kit.timeline import (
    LATEST_EPOCH,
    NO_SNAPSHOT_EPOCH,
    NoSnapshotError,
    SnapshotOrderError,
    SnapshotRegistry,
    TimelineError,
    TimelineHashMap,
    TimelineHashSet,
    TimelineInteger,
    TimelineLong,
    TimelineObject,
)


@pytest.fixture
def registry() -> SnapshotRegistry:
    return SnapshotRegistry()


class _Element(NamedTuple):  # a stored element, (key, value, start_epoch, seq), with names
    key: object
    value: object
    start_epoch: int
    seq: int


def element(m: TimelineHashMap, key: object) -> _Element:  # white-box: the live element
    return _Element(*m._table._live[key])


def named(stash: dict) -> dict:  # white-box: a tier's stash with named elements
    return {k: _Element(*e) for k, e in stash.items()}


# --------------------------------------------------------------------------- a worked example


def test_worked_example_spec_2_3() -> None:
    """A worked example, step by step, including start epochs and tiers."""
    r = SnapshotRegistry()
    m: TimelineHashMap[str, int] = TimelineHashMap(r)

    r.get_or_create_snapshot(0)
    assert r.epochs_list() == [0]

    m.put("a", 1)
    assert element(m, "a").start_epoch == 1
    tier0 = r._by_epoch[0].get_delta(m._table)
    assert tier0.size == 0 and not tier0.stash  # no stash: a is new

    r.get_or_create_snapshot(2)
    assert r.epochs_list() == [0, 2]

    m.put("a", 2)
    assert element(m, "a").start_epoch == 3
    tier2 = r._by_epoch[2].get_delta(m._table)
    assert tier2.size == 1
    assert {k: (e.value, e.start_epoch) for k, e in named(tier2.stash).items()} == {"a": (1, 1)}

    m.put("b", 5)
    assert element(m, "b").start_epoch == 3
    assert set(tier2.stash) == {"a"}  # nothing stashed: b is new

    r.get_or_create_snapshot(4)
    assert r.epochs_list() == [0, 2, 4]

    assert m.get("a", epoch=0) is None  # live a.start 3 > 0; stash a=1 has start 1 > 0
    assert m.get("a", epoch=2) == 1
    assert m.get("a", epoch=4) == 2
    assert m.get("b", epoch=2) is None
    assert (m.size(0), m.size(2), m.size(4)) == (0, 1, 2)

    r.revert_to_snapshot(2)
    assert r.epochs_list() == [0, 2]  # snapshot 4 deleted
    assert dict(m.items()) == {"a": 1}

    r.delete_snapshots_up_to(2)
    assert r.epochs_list() == [2]


# --------------------------------------------------------------------------- SnapshotRegistry


def test_get_or_create_snapshot_returns_newest_when_epoch_equal(registry) -> None:
    """getOrCreateSnapshot: the same epoch as the newest returns it unchanged."""
    m = TimelineHashMap(registry)
    m.put("k", 1)
    first = registry.get_or_create_snapshot(5)
    m.put("k", 2)
    again = registry.get_or_create_snapshot(5)
    assert again is first
    assert registry.epochs_list() == [5]
    assert m.get("k", epoch=5) == 1  # not re-captured by the second call
    registry.idempotent_create_snapshot(5)
    assert registry.epochs_list() == [5]
    registry.idempotent_create_snapshot(9)
    assert registry.epochs_list() == [5, 9]


def test_get_or_create_snapshot_older_than_newest_is_an_error(registry) -> None:
    """getOrCreateSnapshot: newest > e raises, naming both epochs."""
    registry.get_or_create_snapshot(123)
    with pytest.raises(SnapshotOrderError) as info:
        registry.get_or_create_snapshot(1)
    message = str(info.value)
    assert "epoch 1" in message and "epoch 123" in message
    assert "[123]" in message
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, TimelineError)
    assert (info.value.epoch, info.value.newest) == (1, 123)
    assert registry.epochs_list() == [123]


def test_snapshot_epoch_validation(registry) -> None:
    with pytest.raises(TypeError, match="int"):
        registry.get_or_create_snapshot(1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        registry.get_or_create_snapshot(True)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="reserved"):
        registry.get_or_create_snapshot(LATEST_EPOCH)
    with pytest.raises(ValueError, match="64-bit"):
        registry.get_or_create_snapshot(2**63)
    registry.get_or_create_snapshot(-5)  # negative epochs are legal, as in Kafka
    assert registry.epochs_list() == [-5]


def test_introspection_and_repr(registry) -> None:
    """latestEpoch / epochsList / hasSnapshot."""
    assert registry.latest_epoch() == NO_SNAPSHOT_EPOCH == -(2**63)
    assert registry.epochs_list() == []
    assert repr(registry) == "SnapshotRegistry(epochs=[])"
    for e in (0, 2, 4):
        registry.get_or_create_snapshot(e)
    assert registry.latest_epoch() == 4
    assert registry.has_snapshot(2) and not registry.has_snapshot(3)
    assert repr(registry) == "SnapshotRegistry(epochs=[0, 2, 4])"
    assert LATEST_EPOCH == SnapshotRegistry.LATEST_EPOCH == 2**63 - 1


def test_start_epoch_before_any_snapshot(registry) -> None:
    """Start epoch is latest_epoch() + 1 even with no snapshots (Long.MIN_VALUE + 1)."""
    m = TimelineHashMap(registry)
    m.put("x", 1)
    assert element(m, "x").start_epoch == NO_SNAPSHOT_EPOCH + 1
    registry.get_or_create_snapshot(0)
    assert m.get("x", epoch=0) == 1


def test_revert_deletes_newer_snapshots_and_keeps_target(registry) -> None:
    """revertToSnapshot: newer snapshots go, the target stays, values come back."""
    m = TimelineHashMap(registry)
    n = TimelineInteger(registry)
    o = TimelineObject(registry, "init")
    m.put("keep", 1)
    m.put("change", 1)
    m.put("drop", 1)
    registry.get_or_create_snapshot(10)
    m.put("change", 2)
    m.remove("drop")
    m.put("new", 9)
    n.set(7)
    o.set("after-10")
    registry.get_or_create_snapshot(20)
    m.put("change", 3)
    n.set(8)
    registry.get_or_create_snapshot(30)

    registry.revert_to_snapshot(10)

    assert registry.epochs_list() == [10]
    assert m.items() == [("keep", 1), ("change", 1), ("drop", 1)]
    assert (n.get(), o.get()) == (0, "init")
    # The target is still usable: read at it, write and revert again.
    assert m.items(epoch=10) == [("keep", 1), ("change", 1), ("drop", 1)]
    m.put("later", 5)
    n.increment()
    registry.revert_to_snapshot(10)
    assert m.items() == [("keep", 1), ("change", 1), ("drop", 1)]
    assert n.get() == 0


def test_revert_to_newest_snapshot_discards_unsnapshotted_writes(registry) -> None:
    """The coordinator's failure path: revert to the snapshot taken before the batch."""
    m = TimelineHashMap(registry)
    m.put("a", 1)
    registry.get_or_create_snapshot(100)
    m.put("a", 2)
    m.put("b", 3)
    m.remove("a")
    registry.revert_to_snapshot(100)
    assert m.items() == [("a", 1)]


def test_revert_to_missing_snapshot_is_a_clear_error(registry) -> None:
    """revertToSnapshot: snapshot e must exist."""
    registry.get_or_create_snapshot(2)
    registry.get_or_create_snapshot(4)
    with pytest.raises(NoSnapshotError) as info:
        registry.revert_to_snapshot(3)
    message = str(info.value)
    assert "revert to epoch 3" in message
    assert "[2, 4]" in message
    assert "Revert to one of the existing epochs" in message
    assert (info.value.epoch, info.value.epochs, info.value.operation) == (3, [2, 4], "revert")
    assert registry.epochs_list() == [2, 4]  # nothing changed


def test_delete_missing_snapshot_is_a_clear_error(registry) -> None:
    """deleteSnapshot on a missing epoch."""
    with pytest.raises(NoSnapshotError) as info:
        registry.delete_snapshot(7)
    assert "snapshot at epoch 7" in str(info.value)
    assert "there are no snapshots at all" in str(info.value)
    registry.get_or_create_snapshot(1)
    with pytest.raises(NoSnapshotError, match=r"epoch 7.*\[1\]"):
        registry.delete_snapshot(7)


def test_delete_snapshot_merges_into_previous(registry) -> None:
    """deleteSnapshot: deltas merge into the previous snapshot, which reads the same."""
    m = TimelineHashMap(registry)
    m.put("a", 1)
    registry.get_or_create_snapshot(10)
    m.put("a", 2)  # stash a=1 in 10
    m.put("b", 1)
    registry.get_or_create_snapshot(20)
    m.put("a", 3)  # stash a=2 in 20 (start 11)
    m.remove("b")  # stash b=1 in 20 (start 11)
    m.put("c", 1)
    registry.get_or_create_snapshot(30)

    before = m.items(epoch=10)
    registry.delete_snapshot(20)
    assert registry.epochs_list() == [10, 30]
    assert m.items(epoch=10) == before == [("a", 1)]
    assert m.size(10) == 1
    # Only elements that existed at epoch 10 were kept while merging 20's tier into 10's.
    stash10 = registry._by_epoch[10].get_delta(m._table).stash
    assert {k: e.value for k, e in named(stash10).items()} == {"a": 1}
    assert m.items(epoch=30) == [("a", 3), ("c", 1)]


def test_delete_snapshot_adopts_delta_when_previous_has_none(registry) -> None:
    """If the older snapshot saw no change, it takes over the newer delta unchanged."""
    m = TimelineHashMap(registry)
    n = TimelineLong(registry)
    m.put("a", 1)
    registry.get_or_create_snapshot(10)
    registry.get_or_create_snapshot(20)
    m.put("a", 2)
    n.set(5)
    registry.delete_snapshot(20)
    assert m.get("a", epoch=10) == 1 and m.size(10) == 1
    assert n.get(epoch=10) == 0


def test_delete_oldest_snapshot_simply_erases_it(registry) -> None:
    """deleteSnapshot: the oldest snapshot has nothing to merge into."""
    m = TimelineHashMap(registry)
    registry.get_or_create_snapshot(1)
    m.put("a", 1)
    registry.get_or_create_snapshot(2)
    m.put("a", 2)
    registry.delete_snapshot(1)
    assert registry.epochs_list() == [2]
    assert m.get("a", epoch=2) == 1
    with pytest.raises(NoSnapshotError):
        m.size(1)


def test_scalar_merge_keeps_the_older_value(registry) -> None:
    """deleteSnapshot for scalars: the older snapshot's saved value wins."""
    n = TimelineInteger(registry)
    registry.get_or_create_snapshot(1)
    n.set(10)
    registry.get_or_create_snapshot(2)
    n.set(20)
    registry.get_or_create_snapshot(3)
    registry.delete_snapshot(2)
    assert (n.get(epoch=1), n.get(epoch=3), n.get()) == (0, 20, 20)


def test_delete_snapshots_up_to_is_strictly_less_than(registry) -> None:
    """deleteSnapshotsUpTo: epochs strictly less than e, oldest first."""
    m = TimelineHashMap(registry)
    for epoch in (10, 12, 14):
        m.put("k", epoch)
        registry.get_or_create_snapshot(epoch)
    m.put("k", 99)
    registry.delete_snapshots_up_to(14)
    assert registry.epochs_list() == [14]
    assert m.get("k", epoch=14) == 14
    registry.delete_snapshots_up_to(14)
    assert registry.epochs_list() == [14]
    registry.delete_snapshots_up_to(15)
    assert registry.epochs_list() == []
    assert m.get("k") == 99


def test_reset_drops_snapshots_and_resets_structures(registry) -> None:
    """reset: all snapshots gone, every structure back to empty/initial."""
    m = TimelineHashMap(registry)
    s = TimelineHashSet(registry)
    i = TimelineInteger(registry)
    lg = TimelineLong(registry)
    o = TimelineObject(registry, "<default>")
    registry.get_or_create_snapshot(2)
    m.put("a", 1)
    s.add("x")
    i.set(1)
    lg.set(2)
    o.set("first")
    registry.get_or_create_snapshot(3)
    o.set("second")
    registry.reset()
    assert registry.epochs_list() == []
    assert (len(m), len(s), i.get(), lg.get(), o.get()) == (0, 0, 0, 0, "<default>")
    registry.get_or_create_snapshot(4)  # usable afterwards
    m.put("b", 2)
    assert m.items(epoch=4) == []


# --------------------------------------------------------------------------- reads at an epoch


def test_reads_at_latest_epoch_equal_reads_without_epoch(registry) -> None:
    """Reads at an epoch: LATEST_EPOCH (or no epoch) reads the current state."""
    m = TimelineHashMap(registry)
    m.put("a", 1)
    assert m.get("a", epoch=LATEST_EPOCH) == m.get("a") == m["a"] == 1
    assert m.size(LATEST_EPOCH) == len(m) == 1
    assert m.items(epoch=LATEST_EPOCH) == m.items() == [("a", 1)]


def test_data_dependent_no_snapshot_error(registry) -> None:
    """Reads at an epoch: an old-enough live entry answers without a snapshot; others raise."""
    m = TimelineHashMap(registry)
    m.put("old", 1)  # start epoch MIN + 1
    registry.get_or_create_snapshot(5)
    m.put("new", 2)  # start epoch 6

    # Epoch 3 has no snapshot. "old" is live since before 3: no history needed.
    assert m.get("old", epoch=3) == 1
    assert m.contains_key("old", epoch=3)
    # "new" started at 6 > 3: history is needed, and there is none at 3.
    with pytest.raises(NoSnapshotError) as info:
        m.get("new", epoch=3)
    message = str(info.value)
    assert "epoch 3" in message
    assert "[5]" in message
    assert "latest state (epoch=None)" in message
    assert info.value.operation == "read"
    # An absent key also needs history.
    with pytest.raises(NoSnapshotError):
        m.contains_key("missing", epoch=3)
    # size and iteration always consult the registry.
    with pytest.raises(NoSnapshotError):
        m.size(3)
    with pytest.raises(NoSnapshotError):
        m.items(epoch=3)
    with pytest.raises(NoSnapshotError):
        m.keys(epoch=7)
    # Same data-dependence past the newest snapshot.
    assert m.get("new", epoch=7) == 2
    with pytest.raises(NoSnapshotError):
        m.get("missing", epoch=7)


def test_scalar_reads_at_missing_epoch_always_raise(registry) -> None:
    """Scalars have no start epoch, so any past read needs the snapshot."""
    n = TimelineInteger(registry)
    o = TimelineObject(registry, "v")
    registry.get_or_create_snapshot(5)
    for read in (lambda: n.get(epoch=3), lambda: n.get(epoch=6), lambda: o.get(epoch=6)):
        with pytest.raises(NoSnapshotError, match=r"epoch \d.*\[5\]"):
            read()


def test_lookup_at_epoch_scans_tiers_forward(registry) -> None:
    """SnapshottableHashTable: the first stashed copy found from E forward decides."""
    m = TimelineHashMap(registry)
    registry.get_or_create_snapshot(0)
    m.put("k", "v1")  # start 1
    registry.get_or_create_snapshot(1)
    m.put("k", "v2")  # stash v1 in 1; start 2
    registry.get_or_create_snapshot(2)
    m.remove("k")  # stash v2 in 2
    registry.get_or_create_snapshot(3)
    assert [m.get("k", epoch=e) for e in (0, 1, 2, 3)] == [None, "v1", "v2", None]
    assert [m.contains_key("k", epoch=e) for e in (0, 1, 2, 3)] == [False, True, True, False]
    assert [m.size(e) for e in (0, 1, 2, 3)] == [0, 1, 1, 0]


def test_element_belongs_to_snapshot_at_its_start_epoch(registry) -> None:
    """SnapshottableHashTable: live element with startEpoch <= E answers (equality too)."""
    m = TimelineHashMap(registry)
    registry.get_or_create_snapshot(4)
    m.put("k", 1)  # start epoch 5
    registry.get_or_create_snapshot(5)  # no tier at 5: only the live element can answer
    assert element(m, "k").start_epoch == 5
    assert m.get("k", epoch=5) == 1
    assert m.get("k", epoch=4) is None


def test_copy_on_write_stashes_only_first_change_after_snapshot(registry) -> None:
    """Copy on write: only the first overwrite after the newest snapshot is stashed."""
    m = TimelineHashMap(registry)
    m.put("k", "orig")
    registry.get_or_create_snapshot(10)
    m.put("k", "x")
    m.put("k", "y")
    m.remove("k")
    m.put("k", "z")
    stash = registry._by_epoch[10].get_delta(m._table).stash
    assert {k: e.value for k, e in named(stash).items()} == {"k": "orig"}
    assert m.get("k", epoch=10) == "orig"
    assert m.get("k") == "z"


def test_stash_goes_to_newest_snapshot_only(registry) -> None:
    m = TimelineHashMap(registry)
    m.put("k", 1)
    registry.get_or_create_snapshot(1)
    registry.get_or_create_snapshot(2)
    m.put("k", 2)
    assert registry._by_epoch[1].get_delta(m._table) is None
    assert named(registry._by_epoch[2].get_delta(m._table).stash)["k"].value == 1
    assert m.get("k", epoch=1) == m.get("k", epoch=2) == 1


def test_clear_is_snapshot_aware(registry) -> None:
    m = TimelineHashMap(registry)
    m.put(123, "abc")
    m.put(456, "def")
    registry.get_or_create_snapshot(2)
    m.clear()
    assert len(m) == 0 and m.is_empty()
    assert m.items(epoch=2) == [(123, "abc"), (456, "def")]
    assert not m.is_empty(2)


# --------------------------------------------------------------------------- map API


def test_map_write_api(registry) -> None:
    m: TimelineHashMap[str, int] = TimelineHashMap(registry)
    assert m.put("a", 1) is None
    assert m.put("a", 2) == 1
    m["b"] = 3
    assert m.remove("zz") is None  # Kafka-style: no error
    assert m.remove("a") == 2
    assert m.pop("b") == 3
    assert m.pop("b", "dflt") == "dflt"
    with pytest.raises(KeyError):
        m.pop("b")
    m["c"] = 4
    del m["c"]
    with pytest.raises(KeyError):
        del m["c"]
    with pytest.raises(KeyError):
        m["c"]
    assert len(m) == 0


def test_map_read_api_and_order(registry) -> None:
    m: TimelineHashMap[str, int] = TimelineHashMap(registry)
    for k, v in (("z", 1), ("a", 2), ("m", 3)):
        m[k] = v
    m["z"] = 10  # replacing keeps the key's position
    assert m.keys() == ["z", "a", "m"] == list(m)
    assert m.values() == [10, 2, 3]
    assert m.items() == [("z", 10), ("a", 2), ("m", 3)]
    assert "a" in m and "q" not in m
    assert m.get("q") is None and m.get("q", 0) == 0
    assert m == {"a": 2, "m": 3, "z": 10}  # Mapping equality on the live contents
    assert repr(m) == "TimelineHashMap({'z': 10, 'a': 2, 'm': 3})"


def test_historical_order_is_arrival_order(registry) -> None:
    """Reads at an epoch come back in a stable order: the order the keys arrived."""
    m = TimelineHashMap(registry)
    for k in ("c", "a", "b"):
        m[k] = 1
    registry.get_or_create_snapshot(1)
    m.remove("c")
    m["c"] = 2  # re-added: now last in the live order
    m["a"] = 5
    assert m.keys() == ["a", "b", "c"]
    assert m.keys(epoch=1) == ["c", "a", "b"]
    registry.revert_to_snapshot(1)
    assert m.keys() == ["c", "a", "b"]  # the live order is restored too


def test_map_rejects_none(registry) -> None:
    m = TimelineHashMap(registry)
    with pytest.raises(ValueError, match="keys must not be None"):
        m.put(None, 1)
    with pytest.raises(ValueError, match=r"values must not be None \(key 'k'\)"):
        m.put("k", None)
    with pytest.raises(ValueError, match="keys must not be None"):
        m.get(None)
    assert len(m) == 0


def test_values_are_stored_by_reference(registry) -> None:
    """Values are stored by reference: mutating a stored value in place is invisible to
    snapshots."""
    m = TimelineHashMap(registry)
    members = ["m1"]
    m.put("group", members)
    registry.get_or_create_snapshot(1)
    members.append("m2")  # in-place mutation: no put, so nothing is stashed
    assert m.get("group", epoch=1) == ["m1", "m2"]
    registry.revert_to_snapshot(1)
    assert m.get("group") == ["m1", "m2"]
    m.put("group", ("m1",))  # replacing is what the timeline sees
    registry.revert_to_snapshot(1)
    assert m.get("group") == ["m1", "m2"]


def test_read_epoch_type_checked(registry) -> None:
    m = TimelineHashMap(registry)
    with pytest.raises(TypeError, match="epoch must be an int"):
        m.get("a", epoch="3")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- set


def test_set_semantics(registry) -> None:
    s: TimelineHashSet[str] = TimelineHashSet(registry)
    assert s.add("a") is True
    assert s.add("a") is False
    assert s.add("b") is True
    registry.get_or_create_snapshot(1)
    assert s.add("a") is False  # re-adding changes nothing, stashes nothing
    assert registry._by_epoch[1].get_delta(s._table) is None
    assert s.remove("a") is True
    assert s.remove("a") is False  # Kafka-style: no error
    s.discard("zzz")
    s.add("c")
    assert "b" in s and "a" not in s
    assert s.contains("a", epoch=1) and not s.contains("c", epoch=1)
    assert (s.size(), s.size(1), len(s)) == (2, 2, 2)
    assert s.to_list() == ["b", "c"] == list(s)
    assert s.to_list(epoch=1) == ["a", "b"]
    assert s.to_set(epoch=1) == {"a", "b"}
    assert s == {"b", "c"}
    assert s & {"c", "d"} == {"c"}
    assert repr(s) == "TimelineHashSet(['b', 'c'])"
    registry.revert_to_snapshot(1)
    assert s.to_list() == ["a", "b"]
    s.clear()
    assert s.is_empty() and s.to_set(epoch=1) == {"a", "b"}
    with pytest.raises(ValueError, match="elements must not be None"):
        s.add(None)
    with pytest.raises(NoSnapshotError):
        s.to_set(epoch=0)


def test_set_lookup_is_data_dependent_too(registry) -> None:
    s = TimelineHashSet(registry)
    s.add("old")
    registry.get_or_create_snapshot(5)
    s.add("new")
    assert s.contains("old", epoch=3)
    with pytest.raises(NoSnapshotError):
        s.contains("new", epoch=3)


# --------------------------------------------------------------------------- scalars


def test_timeline_integer_snapshots(registry) -> None:
    """TimelineInteger (like every scalar): the first stashed value from E forward, else live."""
    n = TimelineInteger(registry)
    assert n.get() == n.get(epoch=LATEST_EPOCH) == 0
    registry.get_or_create_snapshot(2)
    n.set(1)
    registry.get_or_create_snapshot(3)
    n.set(2)
    n.increment()
    n.increment()
    n.decrement()
    registry.get_or_create_snapshot(4)
    assert (n.get(epoch=2), n.get(epoch=3), n.get(epoch=4), n.get()) == (0, 1, 3, 3)
    registry.revert_to_snapshot(3)
    assert n.get() == 1
    registry.revert_to_snapshot(2)
    assert n.get() == 0
    assert repr(n) == "TimelineInteger(0)" and int(n) == 0


def test_scalar_set_stashes_only_once_per_snapshot(registry) -> None:
    n = TimelineLong(registry)
    registry.get_or_create_snapshot(1)
    n.set(5)
    n.set(6)
    assert registry._by_epoch[1].get_delta(n).value == 0
    assert n.get(epoch=1) == 0


def test_timeline_object(registry) -> None:
    o = TimelineObject(registry, "1000")
    registry.get_or_create_snapshot(2)
    o.set("1001")
    registry.get_or_create_snapshot(3)
    o.set("1002")
    o.set("1003")
    o.set("1002")
    registry.get_or_create_snapshot(4)
    assert [o.get(epoch=e) for e in (2, 3, 4)] == ["1000", "1001", "1002"]
    registry.revert_to_snapshot(3)
    assert o.get() == "1001"
    assert repr(o) == "TimelineObject('1001')"
    with pytest.raises(ValueError, match="must not be None"):
        o.set(None)
    with pytest.raises(ValueError, match="must not be None"):
        TimelineObject(registry, None)


def test_integer_widths_wrap_like_java(registry) -> None:
    i = TimelineInteger(registry)
    i.set(2**31 - 1)
    i.increment()
    assert i.get() == -(2**31)
    i.decrement()
    assert i.get() == 2**31 - 1
    with pytest.raises(ValueError, match="32-bit"):
        i.set(2**31)
    with pytest.raises(TypeError):
        i.set(1.0)  # type: ignore[arg-type]
    lg = TimelineLong(registry)
    lg.set(2**31)
    lg.set(2**63 - 1)
    lg.increment()
    assert lg.get() == -(2**63)


# --------------------------------------------------------------------------- Kafka quirks


def test_quirk_lower_epoch_after_deleting_newest_snapshot(registry) -> None:
    """Kafka quirk, reproduced: start epochs follow the newest snapshot that *existed*.

    After deleting the newest snapshot, a new snapshot at a lower epoch sees elements that
    were written after the deleted one as "not yet born": get says absent while size
    counts them. Revert does not have this problem; the coordinator only ever creates
    snapshots at growing offsets, or after a revert.
    """
    m = TimelineHashMap(registry)
    registry.get_or_create_snapshot(0)
    registry.get_or_create_snapshot(4)
    m.put("x", 1)  # start epoch 5
    registry.delete_snapshot(4)
    registry.get_or_create_snapshot(2)
    assert m.get("x", epoch=2) is None
    assert m.size(2) == 1
    assert m.get("x") == 1


def test_historical_items_never_repeat_a_key_after_revert(registry) -> None:
    """Kafka's historical iterator yields a=1 twice here (size says 1); the kit yields it once.

    After reverting to 2, snapshot 2 keeps its stash {a=1} and a=1 is live again; a later
    overwrite stashes the same a=1 in snapshot 4 as well.
    """
    m = TimelineHashMap(registry)
    m.put("a", 1)
    registry.get_or_create_snapshot(2)
    m.put("a", 2)
    registry.revert_to_snapshot(2)
    registry.get_or_create_snapshot(4)
    m.put("a", 9)
    assert m.items(epoch=2) == [("a", 1)]
    assert m.size(2) == 1


def test_historical_items_never_miss_an_element_after_revert(registry) -> None:
    """Kafka's historical iterator yields only [a] here although contains(b, 13) is true.

    Re-stashing b after the revert makes Kafka's stash table grow past the live table, and
    its slot-by-slot walk then skips part of the stash. The kit answers [a, b].
    """
    s = TimelineHashSet(registry)
    s.add("a")
    s.add("b")
    registry.get_or_create_snapshot(13)
    s.clear()
    registry.revert_to_snapshot(13)
    s.remove("b")
    assert s.contains("a", epoch=13) and s.contains("b", epoch=13)
    assert s.to_list(epoch=13) == ["a", "b"]
    assert s.size(13) == 2


# --------------------------------------------------------------------------- exports


def test_public_api_is_exported() -> None:
    assert sorted(timeline.__all__) == sorted(
        [
            "LATEST_EPOCH",
            "NO_SNAPSHOT_EPOCH",
            "Delta",
            "NoSnapshotError",
            "Revertable",
            "SnapshotOrderError",
            "SnapshotRegistry",
            "TimelineError",
            "TimelineHashMap",
            "TimelineHashSet",
            "TimelineInteger",
            "TimelineLong",
            "TimelineObject",
        ]
    )
    for name in timeline.__all__:
        assert getattr(timeline, name) is not None
    assert issubclass(NoSnapshotError, RuntimeError)


def test_custom_revertable_can_register(registry) -> None:
    """Anything with execute_revert/reset can join a registry (Kafka's `Revertable`)."""

    class Counter:
        def __init__(self) -> None:
            self.resets = 0

        def execute_revert(self, target_epoch: int, delta: object) -> None:
            raise AssertionError("no delta was ever set")

        def reset(self) -> None:
            self.resets += 1

    c = Counter()
    assert isinstance(c, timeline.Revertable)
    registry.register(c)
    registry.get_or_create_snapshot(1)
    registry.revert_to_snapshot(1)
    registry.reset()
    assert c.resets == 1


def test_elements_of_atoms_are_plain_tuples_the_cyclic_gc_stops_tracking(registry) -> None:
    """A map of string keys and values (the key-value shard's store) is not walked by every
    full garbage collection: its elements are plain tuples of atoms, which the collector
    untracks the first time it sees them."""
    import gc

    m = TimelineHashMap(registry)
    registry.get_or_create_snapshot(0)
    for i in range(100):
        m.put(f"k{i}", f"v{i}")
    registry.get_or_create_snapshot(1)
    m.put("k0", "again")  # the old element is stashed in snapshot 1
    gc.collect()
    assert not any(gc.is_tracked(e) for e in m._table._live.values())
    assert not gc.is_tracked(registry._by_epoch[1].get_delta(m._table).stash["k0"])
    assert m.get("k0") == "again" and m.get("k0", epoch=1) == "v0"
