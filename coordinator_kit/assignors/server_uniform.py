"""Kafka's server-side `UniformAssignor` (name `uniform`, the default of
`group.consumer.assignors`), homogeneous case: `UniformHomogeneousAssignmentBuilder`.

Goals in order: balance (member sizes differ by at most one), then stickiness (a member keeps
what it holds in the current target, up to its quota). Every member gets `total // members`
partitions and the first `total % members` members visited get one more; partitions nobody holds,
and those taken from members over quota or no longer subscribed, fill the members below quota in
order. Kafka visits members in HashMap order; the kit in sorted member-id order.

When members subscribe to different topics, `UniformHeterogeneousAssignmentBuilder`: members
keep what they hold of topics they still subscribe to; unassigned partitions go, topic by topic
(most partitions per subscriber first), to the least loaded subscriber; then, for up to 16 rounds,
partitions move from the most to the least loaded subscribers of each topic until every topic's
subscribers differ by at most one (or nothing can move). Members are numbered in sorted member-id
order (Kafka: HashMap order).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from functools import cmp_to_key

from .server_api import (GroupSpec, MemberAssignment, PartitionAssignorException,
                         SubscriptionType)

__all__ = ["UniformAssignor"]


class UniformAssignor:
    name = "uniform"

    def assign(self, group: GroupSpec, partitions: Mapping[str, int]
               ) -> dict[str, MemberAssignment]:
        if not group.members:
            return {}
        if group.subscription_type is SubscriptionType.HOMOGENEOUS:
            return _homogeneous(group, partitions)
        return _Heterogeneous(group, partitions).build()


def _homogeneous(group: GroupSpec, partitions: Mapping[str, int]) -> dict[str, MemberAssignment]:
    member_ids = sorted(group.members)
    subscribed = group.members[member_ids[0]].subscribed_topic_ids
    if not subscribed:
        return {}
    unassigned: list[tuple[str, int]] = []
    total = 0
    for topic in sorted(subscribed):
        n = partitions.get(topic, -1)
        if n == -1:
            raise PartitionAssignorException(
                f"Members are subscribed to topic {topic} which doesn't exist in the topic "
                f"metadata.")
        unassigned.extend((topic, p) for p in range(n) if not group.is_partition_assigned(topic, p))
        total += n
    min_quota, extra = divmod(total, len(member_ids))
    target: dict[str, dict[str, set[int]]] = {}
    unfilled: list[tuple[str, int]] = []
    # maybeRevokePartitions
    for member_id in member_ids:
        quota = min_quota
        if extra > 0:
            quota += 1
            extra -= 1
        new: dict[str, set[int]] = {}
        for topic, parts in sorted(group.members[member_id].assignment.items()):
            if topic not in subscribed:
                continue  # the whole topic goes
            kept = set()
            for p in sorted(parts):
                if quota > 0:
                    quota -= 1
                    kept.add(p)
                else:
                    unassigned.append((topic, p))
            if kept:
                new[topic] = kept
        if quota > 0:
            unfilled.append((member_id, quota))
        target[member_id] = new
    # assignRemainingPartitions
    i = 0
    for member_id, quota in unfilled:
        for _ in range(quota):
            if i >= len(unassigned):
                break
            topic, p = unassigned[i]
            i += 1
            target[member_id].setdefault(topic, set()).add(p)
    if i < len(unassigned):
        raise PartitionAssignorException("Partitions were left unassigned")
    return {m: {t: frozenset(ps) for t, ps in a.items()} for m, a in target.items()}


_MAX_ITERATION_COUNT = 16


def _uuid_order(topic_id: str) -> tuple[int, int]:
    """Kafka's `Uuid.compareTo`: most, then least significant 64 bits, as signed longs; an id
    that is not a printed Uuid (in hand-made tests) sorts by its text after every real one."""
    try:
        raw = base64.urlsafe_b64decode(topic_id + "=" * (-len(topic_id) % 4))
    except ValueError:
        raw = b""
    if len(raw) != 16:
        return (2**63, 0)
    return (int.from_bytes(raw[:8], "big", signed=True),
            int.from_bytes(raw[8:], "big", signed=True))


class _Heterogeneous:
    """Kafka's `UniformHeterogeneousAssignmentBuilder`, step for step."""

    def __init__(self, group: GroupSpec, partitions: Mapping[str, int]) -> None:
        self.group = group
        self.partitions = partitions
        self.member_ids = sorted(group.members)
        self.index = {m: i for i, m in enumerate(self.member_ids)}
        self.subscribers: dict[str, list[int]] = {}
        for i, m in enumerate(self.member_ids):
            for topic in sorted(group.members[m].subscribed_topic_ids):
                if partitions.get(topic, -1) == -1:
                    raise PartitionAssignorException(
                        f"Members are subscribed to topic {topic} which doesn't exist in the "
                        f"topic metadata.")
                self.subscribers.setdefault(topic, []).append(i)
        self.sizes = [0] * len(self.member_ids)
        self.owners = {t: [-1] * partitions[t] for t in self.subscribers}
        self.target: dict[str, dict[str, set[int]]] = {}

    def _topic_key(self, topic: str) -> tuple[float, int, tuple[int, int]]:
        n, subs = self.partitions[topic], len(self.subscribers[topic])
        return (-(n / subs), subs, _uuid_order(topic))  # partitions per subscriber descending

    def _sorted_topics(self, topics: object) -> list[str]:
        return sorted(topics, key=self._topic_key)  # type: ignore[call-overload]

    def build(self) -> dict[str, MemberAssignment]:
        if not self.subscribers:
            return {}
        # maybeRevokePartitions
        for m in self.member_ids:
            i = self.index[m]
            subscribed = self.group.members[m].subscribed_topic_ids
            kept: dict[str, set[int]] = {}
            for topic, parts in sorted(self.group.members[m].assignment.items()):
                if topic in subscribed:
                    self.sizes[i] += len(parts)
                    for p in parts:
                        self.owners[topic][p] = i
                    kept[topic] = set(parts)
            self.target[m] = kept
        # computeUnassignedPartitions + assignRemainingPartitions
        unassigned = {t: [p for p, o in enumerate(owners) if o == -1]
                      for t, owners in self.owners.items()}
        balancer = _Balancer(self.sizes)
        for topic in self._sorted_topics(t for t, ps in unassigned.items() if ps):
            balancer.initialize(self.subscribers[topic])
            for p in unassigned[topic]:
                self._assign(topic, p, balancer.next_least_loaded())
        # balance
        topics = [t for t in self.subscribers if len(self.subscribers[t]) >= 2]
        if topics:
            self._balance_topics(self._sorted_topics(topics))
        return {m: {t: frozenset(ps) for t, ps in a.items() if ps}
                for m, a in self.target.items()}

    def _balance_topics(self, topics: list[str]) -> None:
        last = -1
        balancer = _Balancer(self.sizes)
        for _ in range(_MAX_ITERATION_COUNT):
            for k, topic in enumerate(topics):
                if k == last:
                    return
                if self._balance_topic(topic, balancer) > 0 or last == -1:
                    last = k

    def _balance_topic(self, topic: str, balancer: _Balancer) -> int:
        moved = 0
        owners = self.owners[topic]
        if balancer.initialize(self.subscribers[topic]) <= 1:
            return moved
        order = sorted(range(len(owners)), key=lambda p: (owners[p], p))
        start: dict[int, int] = {}
        end: dict[int, int] = {}
        for i, p in enumerate(order):
            start.setdefault(owners[p], i)
            end[owners[p]] = i + 1
        while not balancer.is_balanced():
            most = -1
            while True:
                most = balancer.next_most_loaded()
                if most == -1:
                    break
                if most not in end or end[most] - start[most] <= 0:
                    balancer.exclude_most_loaded()
                    continue
                break
            if most == -1:
                break
            partition = order[end[most] - 1]
            end[most] -= 1
            least = balancer.next_least_loaded()
            if balancer.is_balanced():
                break
            self._assign(topic, partition, least)
            moved += 1
        return moved

    def _assign(self, topic: str, partition: int, member: int) -> None:
        old = self.owners[topic][partition]
        if old != -1:
            parts = self.target[self.member_ids[old]].get(topic)
            if parts is not None:
                parts.discard(partition)
                if not parts:
                    del self.target[self.member_ids[old]][topic]
            self.sizes[old] -= 1
        self.target[self.member_ids[member]].setdefault(topic, set()).add(partition)
        self.owners[topic][partition] = member
        self.sizes[member] += 1


class _Balancer:
    """`UniformHeterogeneousAssignmentBuilder.MemberAssignmentBalancer`: the least loaded range
    of a topic's subscribers grows rightwards, the most loaded range leftwards."""

    def __init__(self, sizes: list[int]) -> None:
        self.sizes = sizes
        self.members: list[int] = []
        self.least_end = 0
        self.least_count = -1
        self.next_least = 0
        self.most_start = 0
        self.most_end = 0
        self.most_count = 1
        self.next_most = -1

    def initialize(self, members: list[int]) -> int:
        if not members:
            raise ValueError("Cannot balance an empty subscriber list.")
        self.members = sorted(members, key=cmp_to_key(
            lambda a, b: (self.sizes[a] - self.sizes[b]) or (a - b)))
        first, last = self.members[0], self.members[-1]
        self.least_end, self.least_count, self.next_least = 0, self.sizes[first] - 1, 0
        n = len(self.members)
        self.most_start, self.most_end = n, n
        self.most_count, self.next_most = self.sizes[last] + 1, n - 1
        return self.sizes[last] - self.sizes[first]

    def next_least_loaded(self) -> int:
        if self.next_least >= self.least_end:
            self.least_count += 1
            while self.least_end < len(self.members) and \
                    self.sizes[self.members[self.least_end]] == self.least_count:
                self.least_end += 1
            self.next_least = 0
        member = self.members[self.next_least]
        self.next_least += 1
        return member

    def next_most_loaded(self) -> int:
        if self.next_most < self.most_start:
            if self.most_end <= self.most_start and self.most_start > 0:
                self.most_count = self.sizes[self.members[self.most_start - 1]]
            else:
                self.most_count -= 1
            while self.most_start > 0 and \
                    self.sizes[self.members[self.most_start - 1]] == self.most_count:
                self.most_start -= 1
            self.next_most = self.most_end - 1
        if self.next_most < 0:
            return -1
        member = self.members[self.next_most]
        self.next_most -= 1
        return member

    def exclude_most_loaded(self) -> None:
        i = self.next_most + 1
        member = self.members[i]
        self.members[i] = self.members[self.most_end - 1]
        self.members[self.most_end - 1] = member
        self.most_end -= 1

    def is_balanced(self) -> bool:
        return self.most_count - self.least_count <= 1
