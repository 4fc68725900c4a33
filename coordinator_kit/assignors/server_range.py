"""Kafka's server-side `RangeAssignor` (name `range`, `org.apache.kafka.coordinator.group.
assignor.RangeAssignor`, not the client's).

Members are sorted: those with an instance id first, by instance id, then the others by member id.
Per topic, `partitions // subscribers` each and one more for the first `partitions % subscribers`
members in that order, as contiguous ranges. With equal partition counts, a homogeneous group is
co-partitioned (member i gets the same partition numbers of every topic).
"""

from __future__ import annotations

from collections.abc import Mapping

from .server_api import GroupSpec, MemberAssignment, PartitionAssignorException

__all__ = ["ServerRangeAssignor"]


class ServerRangeAssignor:
    name = "range"

    def assign(self, group: GroupSpec, partitions: Mapping[str, int]
               ) -> dict[str, MemberAssignment]:
        if not group.members:
            return {}
        members = sorted(group.members, key=lambda m: (
            (0, group.members[m].instance_id) if group.members[m].instance_id is not None
            else (1, m)))
        subscribers: dict[str, int] = {}
        for m in members:
            for topic in group.members[m].subscribed_topic_ids:
                if partitions.get(topic, -1) == -1:
                    raise PartitionAssignorException("Member is subscribed to a non-existent topic")
                subscribers[topic] = subscribers.get(topic, 0) + 1
        # per topic: [next range start, min quota, partitions still owed one extra]
        ranges = {t: [0, partitions[t] // n, partitions[t] % n] for t, n in subscribers.items()}
        out: dict[str, MemberAssignment] = {}
        for m in members:
            mine: dict[str, frozenset[int]] = {}
            for topic in sorted(group.members[m].subscribed_topic_ids):
                r = ranges[topic]
                quota = r[1]
                if r[2] > 0:
                    quota += 1
                    r[2] -= 1
                start, end = r[0], min(r[0] + quota, partitions[topic])
                r[0] = end
                if start < end:
                    mine[topic] = frozenset(range(start, end))
            out[m] = mine
        return out
