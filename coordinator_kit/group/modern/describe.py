"""ConsumerGroupDescribe's view of a consumer group (Kafka's `ConsumerGroup.asDescribedGroup`
and `ConsumerGroupMember.asConsumerGroupDescribeMember`), read at a committed offset.

A read never sees records that are not committed yet: every timeline structure is read at the
partition's last committed offset, as `GroupMetadataManager.consumerGroupDescribe` does.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..api import (ConsumerGroupDescribedGroup, ConsumerGroupDescribeMember,
                   DescribedTopicPartitions)
from .consumer_group import ConsumerGroup
from .member import ConsumerGroupMember
from .topics import TopicsView

__all__ = ["described_group", "preferred_server_assignor"]


def preferred_server_assignor(group: ConsumerGroup, committed_offset: int | None) -> str | None:
    """`ConsumerGroup.preferredServerAssignor(committedOffset)`: the assignor most members ask
    for (the kit breaks a tie by name, as `compute_preferred_server_assignor` does)."""
    counts = dict(group.server_assignors.items(epoch=committed_offset))
    if not counts:
        return None
    return min(counts, key=lambda name: (-counts[name], name))


def _partitions(assignment: Mapping[str, frozenset[int]], topics: TopicsView
                ) -> tuple[DescribedTopicPartitions, ...]:
    """`topicPartitionsFromMap`: a topic the metadata image does not know is left out."""
    out = []
    for tid, parts in sorted(assignment.items()):
        name = topics.name_of(tid)
        if name is not None:
            out.append(DescribedTopicPartitions(tid, name, tuple(sorted(parts))))
    return tuple(sorted(out, key=lambda t: t.topic_name))


def _member(m: ConsumerGroupMember, target: Mapping[str, frozenset[int]] | None,
            topics: TopicsView) -> ConsumerGroupDescribeMember:
    return ConsumerGroupDescribeMember(
        member_id=m.member_id, member_epoch=m.member_epoch, client_id=m.client_id,
        client_host=m.client_host, instance_id=m.instance_id, rack_id=m.rack_id,
        subscribed_topic_names=tuple(sorted(m.subscribed_topic_names)),
        subscribed_topic_regex=m.subscribed_topic_regex,
        assignment=_partitions(m.assigned_partitions, topics),
        target_assignment=_partitions(target or {}, topics))


def described_group(group: ConsumerGroup, committed_offset: int | None, default_assignor: str,
                    topics: TopicsView) -> ConsumerGroupDescribedGroup:
    """`ConsumerGroup.asDescribedGroup`: state, group and assignment epochs, the assignor the
    group uses (the preferred one, else `default_assignor`), and every member with its current
    and target assignment, in member id order."""
    at = committed_offset
    members = sorted(group.members.values(epoch=at), key=lambda m: m.member_id)
    return ConsumerGroupDescribedGroup(
        group_id=group.group_id,
        group_state=group.state_at(at).value,
        group_epoch=group._group_epoch.get(at),
        assignment_epoch=group._target_epoch.get(at),
        assignor_name=preferred_server_assignor(group, at) or default_assignor,
        members=tuple(_member(m, group.target_assignment.get(m.member_id, epoch=at), topics)
                      for m in members))
