"""Kafka's server-side `UniformAssignor` (name `uniform`, the default of
`group.consumer.assignors`), homogeneous case: `UniformHomogeneousAssignmentBuilder`.

Goals in order: balance (member sizes differ by at most one), then stickiness (a member keeps
what it holds in the current target, up to its quota). Every member gets `total // members`
partitions and the first `total % members` members visited get one more; partitions nobody holds,
and those taken from members over quota or no longer subscribed, fill the members below quota in
order. Kafka visits members in HashMap order; the kit in sorted member-id order.

The heterogeneous case (members subscribed to different topics: Kafka's
`UniformHeterogeneousAssignmentBuilder`) is not modelled yet and raises
`PartitionAssignorException` naming it; use the `range` assignor for such groups.
"""

from __future__ import annotations

from collections.abc import Mapping

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
        raise PartitionAssignorException(
            "the uniform assignor's heterogeneous case (members subscribed to different topics, "
            "Kafka's UniformHeterogeneousAssignmentBuilder) is not modelled by the kit yet; "
            "use ServerAssignor 'range' for this group")


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
