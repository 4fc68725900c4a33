"""Reconciliation of one member (Kafka's `CurrentAssignmentBuilder`), ported from Kafka's
`CurrentAssignmentBuilderTest` case by case (each test names the Kafka test it ports), and the
member state table (`MemberState`)."""

from __future__ import annotations

import pytest

from coordinator_kit.errors import Errors, IllegalStateTransition, KafkaError
from coordinator_kit.group.api import TopicPartitions
from coordinator_kit.group.modern.current_assignment import CurrentAssignmentBuilder
from coordinator_kit.group.modern.member import (MEMBER_STATES, ConsumerGroupMember, MemberState,
                                                 freeze)

T1, T2 = "topic1-id-aaaaaaaaaaaa", "topic2-id-bbbbbbbbbbbb"
S, RV, RL, U = (MemberState.STABLE, MemberState.UNREVOKED_PARTITIONS,
                MemberState.UNRELEASED_PARTITIONS, MemberState.UNKNOWN)


def assignment(a=(), b=()):
    return freeze({T1: a, T2: b})


def member(state, epoch, previous, assigned, revoking=None):
    return ConsumerGroupMember("member", member_epoch=epoch, previous_member_epoch=previous,
                               state=state, assigned_partitions=assigned,
                               partitions_pending_revocation=revoking or freeze({}))


def owned(a, b):
    return (TopicPartitions(T1, tuple(a)), TopicPartitions(T2, tuple(b)))


def build(m, epoch, target, partition_epoch, owned_partitions=None):
    fn = partition_epoch if callable(partition_epoch) else (lambda t, p: partition_epoch)
    return (CurrentAssignmentBuilder(m).with_target_assignment(epoch, target)
            .with_current_partition_epoch(fn).with_owned_topic_partitions(owned_partitions)
            .build())


# name of Kafka's test: (member, target epoch, target, partition epoch, owned, expected)
CASES = {
    "testStableToStable": (
        member(S, 10, 10, assignment((1, 2, 3), (4, 5, 6))), 11,
        assignment((1, 2, 3), (4, 5, 6)), 10, None,
        member(S, 11, 10, assignment((1, 2, 3), (4, 5, 6)))),
    "testStableToStableWithNewPartitions": (
        member(S, 10, 10, assignment((1, 2, 3), (4, 5, 6))), 11,
        assignment((1, 2, 3, 4), (4, 5, 6, 7)), -1, None,
        member(S, 11, 10, assignment((1, 2, 3, 4), (4, 5, 6, 7)))),
    "testStableToUnrevokedPartitions": (
        member(S, 10, 10, assignment((1, 2, 3), (4, 5, 6))), 11,
        assignment((2, 3, 4), (5, 6, 7)), -1, None,
        member(RV, 10, 10, assignment((2, 3), (5, 6)), assignment((1,), (4,)))),
    "testStableToUnreleasedPartitions": (
        member(S, 10, 10, assignment((1, 2, 3), (4, 5, 6))), 11,
        assignment((1, 2, 3, 4), (4, 5, 6, 7)), 10, None,
        member(RL, 11, 10, assignment((1, 2, 3), (4, 5, 6)))),
    "testStableToUnreleasedPartitionsWithOwnedPartitionsNotHavingRevokedPartitions": (
        member(S, 10, 10, assignment((1, 2, 3), (4, 5, 6))), 11,
        assignment((1, 2, 3), (4, 5, 7)), lambda t, p: 10 if t == T2 else -1, (),
        member(RL, 11, 10, assignment((1, 2, 3), (4, 5)))),
    "testUnrevokedPartitionsToStable": (
        member(RV, 10, 10, assignment((2, 3), (5, 6)), assignment((1,), (4,))), 11,
        assignment((2, 3), (5, 6)), -1, owned((2, 3), (5, 6)),
        member(S, 11, 10, assignment((2, 3), (5, 6)))),
    "testUnrevokedPartitionsToUnrevokedPartitions": (
        member(RV, 10, 10, assignment((2, 3), (5, 6)), assignment((1,), (4,))), 12,
        assignment((3,), (6,)), -1, owned((2, 3), (5, 6)),
        member(RV, 11, 10, assignment((3,), (6,)), assignment((2,), (5,)))),
    "testUnrevokedPartitionsToUnreleasedPartitions": (
        member(RV, 11, 10, assignment((2, 3), (5, 6))), 11,
        assignment((2, 3, 4), (5, 6, 7)), 10, owned((2, 3), (5, 6)),
        member(RL, 11, 11, assignment((2, 3), (5, 6)))),
    "testUnreleasedPartitionsToStable": (
        member(RL, 11, 11, assignment((2, 3), (5, 6))), 12,
        assignment((2, 3), (5, 6)), 10, None,
        member(S, 12, 11, assignment((2, 3), (5, 6)))),
    "testUnreleasedPartitionsToStableWithNewPartitions": (
        member(RL, 11, 11, assignment((2, 3), (5, 6))), 11,
        assignment((2, 3, 4), (5, 6, 7)), -1, None,
        member(S, 11, 11, assignment((2, 3, 4), (5, 6, 7)))),
    "testUnreleasedPartitionsToUnreleasedPartitions": (
        member(RL, 11, 11, assignment((2, 3), (5, 6))), 11,
        assignment((2, 3, 4), (5, 6, 7)), 10, None,
        member(RL, 11, 11, assignment((2, 3), (5, 6)))),
    "testUnreleasedPartitionsToUnrevokedPartitions": (
        member(RL, 11, 11, assignment((2, 3), (5, 6))), 12,
        assignment((3,), (6,)), 10, None,
        member(RV, 11, 11, assignment((3,), (6,)), assignment((2,), (5,)))),
}


@pytest.mark.parametrize("kafka_test", sorted(CASES))
def test_current_assignment_builder(kafka_test: str) -> None:
    m, epoch, target, partition_epoch, owned_partitions, expected = CASES[kafka_test]
    assert build(m, epoch, target, partition_epoch, owned_partitions) == expected


def test_remains_in_unrevoked_partitions() -> None:
    # CurrentAssignmentBuilderTest.testRemainsInUnrevokedPartitions: no owned list, or one that
    # still names a partition pending revocation, leaves the member as it is.
    m = member(RV, 10, 10, assignment((2, 3), (5, 6)), assignment((1,), (4,)))
    target = assignment((3,), (6,))
    assert build(m, 12, target, -1, None) == m
    assert build(m, 12, target, -1, owned((1, 2, 3), (5, 6))) == m
    assert build(m, 12, target, -1, owned((2, 3), (4, 5, 6))) == m


def test_unknown_state() -> None:
    # CurrentAssignmentBuilderTest.testUnknownState: fenced first, reconciled from scratch once
    # it rejoins with an explicit empty owned list.
    m = member(U, 11, 11, assignment((3,), (6,)), assignment((2,), (5,)))
    target = assignment((3,), (6,))
    with pytest.raises(KafkaError) as err:
        build(m, 12, target, 10, None)
    assert err.value.error is Errors.FENCED_MEMBER_EPOCH
    assert build(m, 12, target, 11, ()) == member(S, 12, 11, assignment((3,), (6,)))


def test_member_state_values_and_table() -> None:
    # MemberState's persisted bytes; an unknown byte reads as UNKNOWN (MemberState.fromValue)
    assert [s.value for s in MemberState] == [0, 1, 2, 127]
    assert MemberState.from_value(5) is MemberState.UNKNOWN
    MEMBER_STATES.check(S, RV)
    with pytest.raises(IllegalStateTransition):
        MEMBER_STATES.check(S, U)  # nothing moves a member into UNKNOWN
