"""Run kafka-python's assignors on the kit's inputs, to compare answers side by side.

kafka-python (a test dependency of the kit, ``pip install -e .[test]``) is imported only when a
function here is called, so the kit's core never needs it. Its assignors take a cluster object
and a list of decoded JoinGroup members; this module builds both from the kit's
``partitions_per_topic`` and `Subscription` values, and turns the answer back into sorted
tuples of the kit's `TopicPartition`.

How previous ownership is passed on: ``sticky`` gets it in its own user data
(``StickyAssignorUserData``: the owned partitions and the generation), as Kafka's eager sticky
assignor does; ``cooperative-sticky`` gets the v1+ ``owned_partitions`` and ``generation_id``
subscription fields. ``range`` and ``roundrobin`` ignore it.

Member order matters to kafka-python in one place: ``range`` and ``roundrobin`` split static from
dynamic members with ``itertools.groupby`` over the list as given, which only works when all
static members come first. ``static_first=True`` (the default) lists them that way, which is
what makes kafka-python agree with Java; pass False to see the divergence.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from ..topic import TopicPartition
from ._api import Subscription

__all__ = ["KAFKA_PYTHON_ASSIGNORS", "kafka_python_assign"]

KAFKA_PYTHON_ASSIGNORS = ("range", "roundrobin", "sticky", "cooperative-sticky")


class _Cluster:
    """The two ``ClusterMetadata`` methods kafka-python's assignors call."""

    def __init__(self, partitions_per_topic: Mapping[str, int]) -> None:
        self._counts = dict(partitions_per_topic)

    def topics(self) -> set[str]:
        return set(self._counts)

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        count = self._counts.get(topic)
        return None if count is None else set(range(count))


def _by_topic(partitions: tuple[TopicPartition, ...]) -> list[tuple[str, list[int]]]:
    grouped: dict[str, list[int]] = defaultdict(list)
    for tp in partitions:
        grouped[tp.topic].append(tp.partition)
    return [(topic, sorted(ps)) for topic, ps in sorted(grouped.items())]


def _assignor(name: str) -> Any:
    if name == "range":
        from kafka.coordinator.assignors.range import RangePartitionAssignor
        return RangePartitionAssignor()
    if name == "roundrobin":
        from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
        return RoundRobinPartitionAssignor()
    if name == "sticky":
        from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
        return StickyPartitionAssignor()
    if name == "cooperative-sticky":
        from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
        return CooperativeStickyAssignor()
    raise ValueError(f"kafka-python has no assignor the kit compares under {name!r}; "
                     f"known: {', '.join(KAFKA_PYTHON_ASSIGNORS)}")


def _metadata(name: str, sub: Subscription) -> Any:
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

    topics = list(sub.topics)
    if name == "sticky":
        from kafka.coordinator.assignors.sticky.user_data import StickyAssignorUserData
        user_data: Any = b""
        if sub.owned_partitions:
            user_data = StickyAssignorUserData(
                previous_assignment=_by_topic(sub.owned_partitions),
                generation=sub.generation_id)
        return ConsumerProtocolSubscription(version=0, topics=topics, user_data=user_data)
    if name == "cooperative-sticky":
        owned = [ConsumerProtocolSubscription.TopicPartition(topic=t, partitions=ps)
                 for t, ps in _by_topic(sub.owned_partitions)]
        return ConsumerProtocolSubscription(version=1, topics=topics, user_data=b"",
                                            owned_partitions=owned,
                                            generation_id=sub.generation_id)
    return ConsumerProtocolSubscription(version=0, topics=topics, user_data=b"")


def kafka_python_assign(name: str, partitions_per_topic: Mapping[str, int],
                        subscriptions: Mapping[str, Subscription], *,
                        static_first: bool = True) -> dict[str, tuple[TopicPartition, ...]]:
    """kafka-python's assignment for these inputs, one sorted tuple per member."""
    from kafka.protocol.consumer.group import JoinGroupResponse

    assignor = _assignor(name)
    order = list(subscriptions)
    if static_first:
        order.sort(key=lambda m: subscriptions[m].group_instance_id is None)
    members = [JoinGroupResponse.JoinGroupResponseMember(
        member_id=m, group_instance_id=subscriptions[m].group_instance_id,
        metadata=_metadata(name, subscriptions[m])) for m in order]
    answer = assignor.assign(_Cluster(partitions_per_topic), members)
    return {m: tuple(sorted(TopicPartition(tp.topic, tp.partition)
                            for tp in answer[m].partitions()))
            for m in subscriptions}
