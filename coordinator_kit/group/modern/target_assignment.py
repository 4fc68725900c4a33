"""The group's next target assignment (Kafka's `modern.TargetAssignmentBuilder`).

Given the members (with one member added, updated or removed by the current request), the
subscription metadata and the current target, it runs the server assignor and returns the
records of the difference: a ConsumerGroupTargetAssignmentMember record for every member whose
target changed, then ConsumerGroupTargetAssignmentMetadata with the new assignment epoch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ...assignors.server_api import (GroupSpec, MemberSubscriptionSpec, ServerAssignor,
                                     SubscriptionType)
from ...runtime.records import CoordinatorRecord
from .. import records as rec
from .member import EMPTY_ASSIGNMENT, Assignment, ConsumerGroupMember, freeze
from .topics import TopicMetadata, TopicsView

__all__ = ["TargetAssignmentBuilder", "TargetAssignmentResult"]


@dataclass(frozen=True)
class TargetAssignmentResult:
    records: list[CoordinatorRecord]
    target_assignment: dict[str, Assignment]


class TargetAssignmentBuilder:
    def __init__(self, group_id: str, group_epoch: int, assignor: ServerAssignor) -> None:
        self.group_id = group_id
        self.group_epoch = group_epoch
        self.assignor = assignor
        self.members: Mapping[str, ConsumerGroupMember] = {}
        self.static_members: Mapping[str, str] = {}
        self.subscription_metadata: Mapping[str, TopicMetadata] = {}
        self.subscription_type = SubscriptionType.HOMOGENEOUS
        self.target: Mapping[str, Assignment] = {}
        self.inverted: Mapping[str, Mapping[int, str]] = {}
        self.topics: TopicsView | None = None
        self.updated: dict[str, ConsumerGroupMember | None] = {}

    def with_members(self, members: Mapping[str, ConsumerGroupMember]) -> TargetAssignmentBuilder:
        self.members = members
        return self

    def with_static_members(self, static: Mapping[str, str]) -> TargetAssignmentBuilder:
        self.static_members = static
        return self

    def with_subscription_metadata(self, metadata: Mapping[str, TopicMetadata]
                                   ) -> TargetAssignmentBuilder:
        self.subscription_metadata = metadata
        return self

    def with_subscription_type(self, kind: SubscriptionType) -> TargetAssignmentBuilder:
        self.subscription_type = kind
        return self

    def with_target_assignment(self, target: Mapping[str, Assignment]) -> TargetAssignmentBuilder:
        self.target = target
        return self

    def with_inverted_target_assignment(self, inverted: Mapping[str, Mapping[int, str]]
                                        ) -> TargetAssignmentBuilder:
        self.inverted = inverted
        return self

    def with_topics_image(self, topics: TopicsView) -> TargetAssignmentBuilder:
        self.topics = topics
        return self

    def add_or_update_member(self, member_id: str, member: ConsumerGroupMember
                             ) -> TargetAssignmentBuilder:
        self.updated[member_id] = member
        return self

    def remove_member(self, member_id: str) -> TargetAssignmentBuilder:
        self.updated[member_id] = None
        return self

    def _spec(self, member: ConsumerGroupMember, assignment: Assignment) -> MemberSubscriptionSpec:
        by_name = {} if self.topics is None else self.topics.by_name
        ids = frozenset(by_name[n].id for n in member.subscribed_topic_names if n in by_name)
        return MemberSubscriptionSpec(ids, member.instance_id, member.rack_id, assignment)

    def build(self) -> TargetAssignmentResult:
        """Raises `PartitionAssignorException` when the assignor cannot assign."""
        specs: dict[str, MemberSubscriptionSpec] = {
            m_id: self._spec(m, self.target.get(m_id, EMPTY_ASSIGNMENT))
            for m_id, m in self.members.items()}
        for m_id, m in self.updated.items():
            if m is None:
                specs.pop(m_id, None)
                continue
            assignment = self.target.get(m_id, EMPTY_ASSIGNMENT)
            if m.instance_id is not None:  # a new static member takes over a departed one
                previous = self.static_members.get(m.instance_id)
                if previous is not None and previous != m_id:
                    assignment = self.target.get(previous, EMPTY_ASSIGNMENT)
            specs[m_id] = self._spec(m, assignment)
        partitions = {t.id: t.num_partitions for t in self.subscription_metadata.values()}
        new = self.assignor.assign(GroupSpec(specs, self.subscription_type, self.inverted),
                                   partitions)
        records: list[CoordinatorRecord] = []
        out: dict[str, Assignment] = {}
        for m_id in sorted(specs):
            new_assignment = freeze(new.get(m_id, {}))
            out[m_id] = new_assignment
            old = self.target.get(m_id)
            if old is None or dict(old) != dict(new_assignment):
                records.append(rec.new_consumer_group_target_assignment_record(
                    self.group_id, m_id, new_assignment))
        records.append(rec.new_consumer_group_target_assignment_epoch_record(
            self.group_id, self.group_epoch))
        return TargetAssignmentResult(records, out)
