"""Kafka's ``RoundRobinAssignor`` (``org.apache.kafka.clients.consumer``).

All partitions of every subscribed topic, topics in (Java) name order and partitions in numeric
order, are dealt one at a time to the members in ``MemberInfo`` order, in a cycle that simply
skips a member not subscribed to the partition's topic. With identical subscriptions the counts
differ by at most one; with different subscriptions the skipping can skew them.

Dealing is done a topic at a time: inside one topic the cycle only ever stops at that topic's
subscribers, so their positions are found with a binary search instead of stepping over every
member, which keeps the cost at O(P + sum of subscribers per topic * log N).

kafka-python shares RangeAssignor's ``groupby`` slip (interleaved static and dynamic members are
dropped from the cycle) and sorts names by code point; the kit follows Java.
"""

from __future__ import annotations

from bisect import bisect_left

from ..topic import TopicPartition
from ._api import PartitionAssignor, Subscription, java_order, member_sort_key

__all__ = ["RoundRobinAssignor"]


class RoundRobinAssignor(PartitionAssignor):
    """One partition per member per turn over the sorted partition list; EAGER only."""

    name = "roundrobin"

    def _assign(self, counts: dict[str, int],
                subscriptions: dict[str, Subscription]) -> dict[str, list[TopicPartition]]:
        ordered = sorted(subscriptions, key=lambda m: member_sort_key(m, subscriptions[m]))
        positions: dict[str, list[int]] = {}
        for position, member in enumerate(ordered):
            for topic in subscriptions[member].topics:
                if topic in counts:
                    positions.setdefault(topic, []).append(position)
        result: dict[str, list[TopicPartition]] = {member: [] for member in subscriptions}
        cursor = 0  # index in `ordered` of the member whose turn is next
        for topic in sorted(positions, key=java_order):
            eligible = positions[topic]
            first = bisect_left(eligible, cursor) % len(eligible)
            count = counts[topic]
            for partition in range(count):
                member = ordered[eligible[(first + partition) % len(eligible)]]
                result[member].append(TopicPartition(topic, partition))
            cursor = (eligible[(first + count - 1) % len(eligible)] + 1) % len(ordered)
        return result
