"""Kafka's ``RangeAssignor`` (``org.apache.kafka.clients.consumer``), without rack awareness
(KIP-881).

Each topic is split on its own: its partitions in numeric order, its subscribers in Java's
``MemberInfo`` order (static members first by group.instance.id, then dynamic ones by member
id). With P partitions and N subscribers everyone gets ``P // N`` consecutive partitions and the
first ``P % N`` get one more. Because the same members come first for every topic, co-numbered
partitions of co-partitioned topics land on the same member (what joins need), and the extras
pile up on the first members (the well-known imbalance).

kafka-python differs from Java in one case: it splits members into static and dynamic with
``itertools.groupby`` over the unsorted member list, so when static and dynamic members
interleave in the JoinGroup response some members are dropped from the split and get nothing.
The kit follows Java.
"""

from __future__ import annotations

from collections import defaultdict

from ..topic import TopicPartition
from ._api import PartitionAssignor, Subscription, member_sort_key

__all__ = ["RangeAssignor"]


class RangeAssignor(PartitionAssignor):
    """Per-topic contiguous ranges; EAGER only."""

    name = "range"

    def _assign(self, counts: dict[str, int],
                subscriptions: dict[str, Subscription]) -> dict[str, list[TopicPartition]]:
        ordered = sorted(subscriptions, key=lambda m: member_sort_key(m, subscriptions[m]))
        subscribers: dict[str, list[str]] = defaultdict(list)
        for member in ordered:
            for topic in subscriptions[member].topics:
                if topic in counts:
                    subscribers[topic].append(member)
        result: dict[str, list[TopicPartition]] = {member: [] for member in subscriptions}
        for topic, members in subscribers.items():
            per_member, extra = divmod(counts[topic], len(members))
            start = 0
            for index, member in enumerate(members):
                length = per_member + (1 if index < extra else 0)
                result[member].extend(TopicPartition(topic, p) for p in range(start, start + length))
                start += length
        return result
