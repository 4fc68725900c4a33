"""The server-side assignors of KIP-848 groups: Kafka's `RangeAssignor` (server side) and
`UniformAssignor`'s homogeneous builder, ported from Kafka's `RangeAssignorTest` and
`OptimizedUniformAssignmentBuilderTest` (each test names the Kafka test).

Kafka iterates members and topic ids in HashMap order; the kit sorts them. Where Kafka's expected
assignment depends on that order, the test checks what does not (validity and balance) and says
so."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coordinator_kit.assignors.server_api import (GroupSpec, MemberSubscriptionSpec,
                                                  PartitionAssignorException, SubscriptionType)
from coordinator_kit.assignors.server_range import ServerRangeAssignor
from coordinator_kit.assignors.server_uniform import UniformAssignor

T1, T2, T3 = "T1-A4s3VTwiI5CTbEp6POw", "T2-B4s3VTwiI5YHbPp6YUe", "T3-CU8fVTLCz5YMkLoDQsa"
HOMO, HETERO = SubscriptionType.HOMOGENEOUS, SubscriptionType.HETEROGENEOUS


def spec(topics, assignment=None, instance=None):
    return MemberSubscriptionSpec(frozenset(topics), instance, None,
                                  {t: frozenset(p) for t, p in (assignment or {}).items()})


def group(members, kind=HOMO):
    inverted: dict[str, dict[int, str]] = {}
    for m, s in members.items():
        for t, parts in s.assignment.items():
            for p in parts:
                inverted.setdefault(t, {})[p] = m
    return GroupSpec(members, kind, inverted)


def plain(result):
    return {m: {t: sorted(p) for t, p in a.items() if p} for m, a in result.items()}


def check_validity_and_balance(members, result, partitions):
    """OptimizedUniformAssignmentBuilderTest.checkValidityAndBalance."""
    owners: dict[tuple[str, int], str] = {}
    for m, a in result.items():
        for t, parts in a.items():
            assert t in members[m].subscribed_topic_ids
            for p in parts:
                assert (t, p) not in owners, f"{t}-{p} twice"
                owners[(t, p)] = m
    wanted = {(t, p) for t, n in partitions.items() for p in range(n)}
    assert set(owners) == wanted
    sizes = [sum(len(p) for p in a.values()) for a in result.values()]
    assert max(sizes) - min(sizes) <= 1


# -- RangeAssignorTest ----------------------------------------------------------------------------

def test_range_one_member_no_topic_and_non_existent_topic() -> None:
    # RangeAssignorTest.testOneMemberNoTopic / testOneMemberSubscribedToNonExistentTopic
    assert plain(ServerRangeAssignor().assign(group({"A": spec(())}), {})) == {"A": {}}
    with pytest.raises(PartitionAssignorException):
        ServerRangeAssignor().assign(group({"A": spec((T2,))}), {T1: 3})


def test_range_two_members_two_topics_same_subscriptions() -> None:
    # RangeAssignorTest.testFirstAssignmentTwoMembersTwoTopicsSameSubscriptions
    members = {"A": spec((T1, T3)), "B": spec((T1, T3))}
    assert plain(ServerRangeAssignor().assign(group(members), {T1: 3, T3: 2})) == {
        "A": {T1: [0, 1], T3: [0]}, "B": {T1: [2], T3: [1]}}


def test_range_three_members_three_topics_different_subscriptions() -> None:
    # RangeAssignorTest.testFirstAssignmentThreeMembersThreeTopicsDifferentSubscriptions
    members = {"A": spec((T1, T2)), "B": spec((T3,)), "C": spec((T2, T3))}
    assert plain(ServerRangeAssignor().assign(group(members, HETERO),
                                              {T1: 3, T2: 3, T3: 2})) == {
        "A": {T1: [0, 1, 2], T2: [0, 1]}, "B": {T3: [0]}, "C": {T2: [2], T3: [1]}}


def test_range_more_members_than_partitions() -> None:
    # RangeAssignorTest.testFirstAssignmentNumMembersGreaterThanNumPartitions
    members = {"A": spec((T1,)), "B": spec((T1,)), "C": spec((T1,))}
    assert plain(ServerRangeAssignor().assign(group(members), {T1: 2})) == {
        "A": {T1: [0]}, "B": {T1: [1]}, "C": {}}


def test_range_mixed_static_membership() -> None:
    # RangeAssignorTest.testMixedStaticMembership: members with an instance id come first (by
    # instance id), so a static member that rejoins under a new member id gets the same range
    members = {"A": spec((T1,), instance="instanceA"), "C": spec((T1,), instance="instanceC"),
               "B": spec((T1,))}
    first = ServerRangeAssignor().assign(group(members), {T1: 5})
    assert plain(first) == {"A": {T1: [0, 1]}, "C": {T1: [2, 3]}, "B": {T1: [4]}}
    members = {"A1": spec((T1,), instance="instanceA"), "C": members["C"], "B": members["B"]}
    again = ServerRangeAssignor().assign(group(members), {T1: 5})
    assert again["A1"] == first["A"] and again["B"] == first["B"] and again["C"] == first["C"]


# -- OptimizedUniformAssignmentBuilderTest (UniformHomogeneousAssignmentBuilder) ------------------

def test_uniform_one_member_no_topic_and_non_existent_topic() -> None:
    # testOneMemberNoTopicSubscription / testOneMemberSubscribedToNonexistentTopic
    assert UniformAssignor().assign(group({"A": spec(())}), {}) == {}
    with pytest.raises(PartitionAssignorException):
        UniformAssignor().assign(group({"A": spec((T2,))}), {T1: 3})


def test_uniform_first_assignment_two_members_two_topics() -> None:
    # testFirstAssignmentTwoMembersTwoTopicsNoMemberRacks: Kafka expects A = T1-0, T3-0, T3-1
    # because Java's HashSet happened to iterate T3 first; the kit iterates topic ids sorted,
    # so it checks what both guarantee: valid and balanced.
    members = {"A": spec((T1, T3)), "B": spec((T1, T3))}
    result = UniformAssignor().assign(group(members), {T1: 3, T3: 2})
    check_validity_and_balance(members, result, {T1: 3, T3: 2})
    assert plain(result) == {"A": {T1: [0, 1, 2]}, "B": {T3: [0, 1]}}


def test_uniform_reassignment_given_unbalanced_previous_assignment() -> None:
    # testReassignmentForTwoMembersTwoTopicsGivenUnbalancedPrevAssignment
    members = {"A": spec((T1, T2), {T1: (0, 1), T2: (0, 1)}),
               "B": spec((T1, T2), {T1: (2,), T2: (2,)})}
    assert plain(UniformAssignor().assign(group(members), {T1: 3, T2: 3})) == {
        "A": {T1: [0, 1], T2: [0]}, "B": {T1: [2], T2: [1, 2]}}


def test_uniform_reassignment_when_one_member_added() -> None:
    # testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics
    members = {"A": spec((T1, T2), {T1: (0, 2), T2: (0,)}),
               "B": spec((T1, T2), {T1: (1,), T2: (1, 2)}),
               "C": spec((T1, T2))}
    assert plain(UniformAssignor().assign(group(members), {T1: 3, T2: 3})) == {
        "A": {T1: [0, 2]}, "B": {T1: [1], T2: [1]}, "C": {T2: [0, 2]}}


# -- UniformHeterogeneousAssignmentBuilderTest (Kafka's test numbers members in sorted order, as
#    the kit does, so its expectations carry over exactly) -----------------------------------------

def test_heterogeneous_first_assignment_two_members_two_topics() -> None:
    # UniformHeterogeneousAssignmentBuilderTest.testFirstAssignmentTwoMembersTwoTopics
    members = {"A": spec((T1, T3)), "B": spec((T3,))}
    assert plain(UniformAssignor().assign(group(members, HETERO), {T1: 3, T3: 6})) == {
        "A": {T1: [0, 1, 2], T3: [4]}, "B": {T3: [0, 1, 2, 3, 5]}}


def test_heterogeneous_reassignment_given_unbalanced_previous_assignment() -> None:
    # UniformHeterogeneousAssignmentBuilderTest
    # .testReassignmentForTwoMembersThreeTopicsGivenUnbalancedPrevAssignment
    members = {"A": spec((T1,), {T1: (0, 1, 2)}),
               "B": spec((T1, T2), {T1: (3,), T2: (0,)}),
               "C": spec((T1, T2, T3), {T1: (4, 5), T2: (1, 2, 3), T3: (0, 1, 2, 3)})}
    assert plain(UniformAssignor().assign(group(members, HETERO), {T1: 6, T2: 4, T3: 4})) == {
        "A": {T1: [0, 1, 2, 5]}, "B": {T1: [3], T2: [0, 1, 2, 3]},
        "C": {T1: [4], T3: [0, 1, 2, 3]}}


def test_heterogeneous_non_existent_topic() -> None:
    # UniformHeterogeneousAssignmentBuilderTest.testTwoMembersSubscribedToNonexistentTopics
    with pytest.raises(PartitionAssignorException):
        UniformAssignor().assign(group({"A": spec((T1,)), "B": spec((T2,))}, HETERO), {T1: 1})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=3), st.integers(1, 6),
       st.randoms(use_true_random=False))
def test_uniform_valid_balanced_and_sticky(counts, n_members, rnd) -> None:
    # OptimizedUniformAssignmentBuilderTest.testValidityAndBalanceForLargeSampleSet, plus
    # stickiness: a member's new target keeps partitions of its previous one up to its quota
    topics = {f"t{i}-id": n for i, n in enumerate(counts)}
    members = {f"m{i}": spec(topics) for i in range(n_members)}
    first = UniformAssignor().assign(group(members), topics)
    if sum(topics.values()) == 0:
        return
    check_validity_and_balance(members, first, topics)
    # one member leaves, another arrives: everyone left keeps what it can
    survivors = sorted(members)[1:] + ["new"]
    members2 = {m: spec(topics, first.get(m, {})) for m in survivors}
    second = UniformAssignor().assign(group(members2), topics)
    check_validity_and_balance(members2, second, topics)
    quota = sum(topics.values()) // len(members2)
    for m in survivors[:-1]:
        kept = sum(len(second[m].get(t, frozenset()) & p) for t, p in first[m].items())
        assert kept >= min(quota, sum(len(p) for p in first[m].values()))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=1, max_size=3),
       st.lists(st.sets(st.integers(0, 2), min_size=1), min_size=1, max_size=5))
def test_heterogeneous_valid(counts, subscriptions) -> None:
    # every partition of a subscribed topic goes to exactly one of its subscribers
    topics = {f"t{i}-id": n for i, n in enumerate(counts)}
    names = sorted(topics)
    members = {f"m{i}": spec([names[t % len(names)] for t in subs])
               for i, subs in enumerate(subscriptions)}
    result = UniformAssignor().assign(group(members, HETERO), topics)
    seen = set()
    for m, a in result.items():
        for t, parts in a.items():
            assert t in members[m].subscribed_topic_ids
            assert not seen & {(t, p) for p in parts}
            seen |= {(t, p) for p in parts}
    subscribed = {t for s in members.values() for t in s.subscribed_topic_ids}
    assert seen == {(t, p) for t in subscribed for p in range(topics[t])}
