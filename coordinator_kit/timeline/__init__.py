"""Snapshottable ("timeline") data structures, after Kafka's ``org.apache.kafka.timeline``.

The group coordinator keeps all of its in-memory state in these structures so that a failed
log append can be undone by reverting to the snapshot taken before the write, and so that
reads can be served as of the last committed offset. A ``SnapshotRegistry`` owns the list of
snapshots; maps, sets and scalars register with it, always hold the current state, and stash
overwritten items into the newest snapshot the first time they change after it.

Quick tour::

    registry = SnapshotRegistry()
    members = TimelineHashMap(registry)
    registry.get_or_create_snapshot(0)
    members.put("m1", "state-a")
    members.get("m1", epoch=0)        # None: m1 did not exist at snapshot 0
    registry.revert_to_snapshot(0)    # members is empty again

Values are held by reference: mutating a stored object in place changes it in every
snapshot at once. Store immutable values and replace them.
"""

from ._errors import NoSnapshotError, SnapshotOrderError, TimelineError
from ._hashmap import TimelineHashMap
from ._hashset import TimelineHashSet
from ._protocols import Delta, Revertable
from ._registry import LATEST_EPOCH, NO_SNAPSHOT_EPOCH, SnapshotRegistry
from ._scalars import TimelineInteger, TimelineLong, TimelineObject

__all__ = [
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
