"""Example tests for the client-side assignors (Kafka's `RangeAssignor`, `RoundRobinAssignor`,
`StickyAssignor`, `CooperativeStickyAssignor`).

Worked examples, the input rules, the registry and protocol selection, and the places where
kafka-python 3.0.12 and Java disagree (the kit follows Java). Randomised comparisons with
kafka-python and the invariants live in test_assignors_properties.py.
"""

from __future__ import annotations

import importlib

import pytest

from coordinator_kit.assignors import (
    ASSIGNORS,
    Assignment,
    CooperativeStickyAssignor,
    PartitionAssignor,
    RangeAssignor,
    RebalanceProtocol,
    RoundRobinAssignor,
    StickyAssignor,
    Subscription,
    UnknownAssignorError,
    get_assignor,
    java_order,
    select_protocol,
)
from coordinator_kit.assignors.reference import kafka_python_assign
from coordinator_kit.topic import TopicPartition

EAGER, COOPERATIVE = RebalanceProtocol.EAGER, RebalanceProtocol.COOPERATIVE

# kafka-python 3.0.12 loads its protocol schemas with importlib.resources' legacy API.
pytestmark = pytest.mark.filterwarnings(
    r"ignore:.*is deprecated\. Use files\(\) instead:DeprecationWarning")


def tps(text: str) -> tuple[TopicPartition, ...]:
    """'t0p0 t1p2' -> (TopicPartition('t0', 0), TopicPartition('t1', 2)), sorted."""
    out = []
    for item in text.split():
        topic, _, number = item.rpartition("p")
        out.append(TopicPartition(topic, int(number)))
    return tuple(sorted(out))


def parts(result: dict[str, Assignment]) -> dict[str, tuple[TopicPartition, ...]]:
    return {member: a.partitions for member, a in result.items()}


TWO_BY_THREE = {"t0": 3, "t1": 3}
TWO_MEMBERS = {"C0": Subscription(("t0", "t1")), "C1": Subscription(("t0", "t1"))}


# -- a worked example: 2 members, 2 topics x 3 partitions --------------------------------------

def test_range_worked_example():
    """2 members, 2 topics x 3 partitions -> C0 = t0p0,t0p1,t1p0,t1p1; C1 = t0p2,t1p2."""
    result = parts(RangeAssignor().assign(TWO_BY_THREE, TWO_MEMBERS))
    assert result == {"C0": tps("t0p0 t0p1 t1p0 t1p1"), "C1": tps("t0p2 t1p2")}
    assert result == kafka_python_assign("range", TWO_BY_THREE, TWO_MEMBERS)


def test_roundrobin_worked_example():
    """Same input -> C0 = t0p0,t0p2,t1p1; C1 = t0p1,t1p0,t1p2."""
    result = parts(RoundRobinAssignor().assign(TWO_BY_THREE, TWO_MEMBERS))
    assert result == {"C0": tps("t0p0 t0p2 t1p1"), "C1": tps("t0p1 t1p0 t1p2")}
    assert result == kafka_python_assign("roundrobin", TWO_BY_THREE, TWO_MEMBERS)


def test_roundrobin_skips_members_not_subscribed():
    """Roundrobin with different subscriptions (kafka-python's docstring example)."""
    subs = {"C0": Subscription(("t0",)), "C1": Subscription(("t0", "t1")),
            "C2": Subscription(("t0", "t1", "t2"))}
    result = parts(RoundRobinAssignor().assign({"t0": 1, "t1": 2, "t2": 3}, subs))
    assert result == {"C0": tps("t0p0"), "C1": tps("t1p0"), "C2": tps("t1p1 t2p0 t2p1 t2p2")}


def test_sticky_fresh_assignment_is_balanced():
    for name in ("sticky", "cooperative-sticky"):
        result = parts(get_assignor(name).assign(TWO_BY_THREE, TWO_MEMBERS))
        assert sorted(len(p) for p in result.values()) == [3, 3]


# -- range ordering: static members first (Java MemberInfo) ------------------------------------

def test_range_orders_static_members_first_by_instance_id():
    subs = {"a-dynamic": Subscription(("t",)),
            "z-static": Subscription(("t",), group_instance_id="instance-1"),
            "b-static": Subscription(("t",), group_instance_id="instance-2")}
    result = parts(RangeAssignor().assign({"t": 4}, subs))
    # z-static (instance-1) < b-static (instance-2) < a-dynamic: the extra goes to z-static.
    assert result == {"z-static": tps("tp0 tp1"), "b-static": tps("tp2"), "a-dynamic": tps("tp3")}
    assert result == kafka_python_assign("range", {"t": 4}, subs)


def test_range_imbalance_compounds_across_topics():
    """The same members get the extra partition of every topic."""
    subs = {f"C{i}": Subscription(("a", "b", "c")) for i in range(2)}
    result = parts(RangeAssignor().assign({"a": 3, "b": 3, "c": 3}, subs))
    assert [len(result["C0"]), len(result["C1"])] == [6, 3]


def test_names_sort_in_java_utf16_order():
    """Java compares UTF-16 code units: U+10000 (surrogate D800) sorts before U+FFFF."""
    high_bmp, astral = "\uffff", "\U00010000"
    assert high_bmp < astral  # Python: code points
    assert java_order(astral) < java_order(high_bmp)  # Java
    subs = {high_bmp: Subscription(("t",)), astral: Subscription(("t",))}
    kit = parts(RangeAssignor().assign({"t": 3}, subs))
    assert kit == {astral: tps("tp0 tp1"), high_bmp: tps("tp2")}
    # kafka-python sorts by code point and gives the extra partition to the other member.
    assert kafka_python_assign("range", {"t": 3}, subs)[high_bmp] == tps("tp0 tp1")


# -- where kafka-python 3.0.12 disagrees with Java ---------------------------------------------

INTERLEAVED = {"s1": Subscription(("t",), group_instance_id="i1"), "d1": Subscription(("t",)),
               "s2": Subscription(("t",), group_instance_id="i2")}


def test_kafka_python_drops_interleaved_static_members():
    """kafka-python groups static/dynamic members with itertools.groupby over the unsorted list.

    With JoinGroup order static, dynamic, static, the first static member is lost: range gives it
    nothing and splits the topic between the other two. Java (and the kit) give 2/1/1.
    """
    kit_range = parts(RangeAssignor().assign({"t": 4}, INTERLEAVED))
    assert kit_range == {"s1": tps("tp0 tp1"), "s2": tps("tp2"), "d1": tps("tp3")}
    kp_range = kafka_python_assign("range", {"t": 4}, INTERLEAVED, static_first=False)
    assert kp_range["s1"] == ()
    kp_rr = kafka_python_assign("roundrobin", {"t": 4}, INTERLEAVED, static_first=False)
    assert kp_rr["s1"] == ()
    # Listed static-first, kafka-python agrees with Java.
    assert kafka_python_assign("range", {"t": 4}, INTERLEAVED) == kit_range


def test_kafka_python_roundrobin_fails_when_it_must_skip_a_member():
    """kafka-python's skip loop keeps the (instance id, member id) pair instead of the member id,
    so the first skip raises KeyError; the kit (and Java) skip the member."""
    subs = {"C0": Subscription(("t0",)), "C1": Subscription(("t1",))}
    with pytest.raises(KeyError):
        kafka_python_assign("roundrobin", {"t0": 2, "t1": 2}, subs)
    assert parts(RoundRobinAssignor().assign({"t0": 2, "t1": 2}, subs)) == {
        "C0": tps("t0p0 t0p1"), "C1": tps("t1p0 t1p1")}


def test_same_generation_double_claim_java_drops_both_kafka_python_keeps_the_first():
    """Java's AbstractStickyAssignor invalidates a partition two members claim in the same
    generation; kafka-python keeps it with whichever claimant came first in JoinGroup order."""
    tp = TopicPartition("t", 0)
    subs = {"a": Subscription(("t",), owned_partitions=(tp,), generation_id=5),
            "b": Subscription(("t",), owned_partitions=(tp,), generation_id=5),
            "c": Subscription(("t",), generation_id=5)}
    assert StickyAssignor().plan({"t": 3}, subs).owner == {}
    assert tp in kafka_python_assign("sticky", {"t": 3}, subs)["a"]
    reordered = dict(reversed(list(subs.items())))
    assert tp in kafka_python_assign("sticky", {"t": 3}, reordered)["b"]


def test_cooperative_sticky_supports_eager_like_java():
    """Java lists [COOPERATIVE, EAGER] (rolling upgrades); kafka-python 3.0.12 COOPERATIVE only."""
    from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor as KP
    assert [p.name for p in KP().supported_protocols()] == ["COOPERATIVE"]
    assert CooperativeStickyAssignor().supported_protocols == (COOPERATIVE, EAGER)


# -- protocols and the registry ----------------------------------------------------------------

def test_names_and_protocols():
    assert sorted(ASSIGNORS) == ["cooperative-sticky", "range", "roundrobin", "sticky"]
    for name in ("range", "roundrobin", "sticky"):
        assert ASSIGNORS[name].name == name
        assert ASSIGNORS[name].supported_protocols == (EAGER,)
        assert ASSIGNORS[name].rebalance_protocol is EAGER
    assert ASSIGNORS["cooperative-sticky"].rebalance_protocol is COOPERATIVE
    assert str(COOPERATIVE) == "COOPERATIVE" and int(COOPERATIVE) == 1


def test_select_protocol_follows_java():
    """ConsumerCoordinator: the default [range, cooperative-sticky] runs EAGER; cooperative
    alone runs COOPERATIVE."""
    assert select_protocol([get_assignor("range"), get_assignor("cooperative-sticky")]) is EAGER
    assert select_protocol([get_assignor("cooperative-sticky")]) is COOPERATIVE

    class CooperativeOnly(RoundRobinAssignor):
        name = "cooperative-only"
        supported_protocols = (COOPERATIVE,)

    with pytest.raises(ValueError, match="do not have commonly supported rebalance protocol"):
        select_protocol([get_assignor("range"), CooperativeOnly()])
    with pytest.raises(ValueError):
        select_protocol([])


def test_get_assignor_accepts_protocol_and_java_class_names():
    assert get_assignor("range") is ASSIGNORS["range"]
    assert get_assignor("org.apache.kafka.clients.consumer.CooperativeStickyAssignor") \
        is ASSIGNORS["cooperative-sticky"]
    assert get_assignor("StickyAssignor") is ASSIGNORS["sticky"]


def test_get_assignor_refuses_unknown_names_listing_known_ones():
    with pytest.raises(UnknownAssignorError) as info:
        get_assignor("uniform")
    message = str(info.value)
    assert "'uniform'" in message
    assert "cooperative-sticky, range, roundrobin, sticky" in message
    assert isinstance(info.value, ValueError)
    with pytest.raises(TypeError):
        get_assignor(None)  # type: ignore[arg-type]


def test_exports():
    module = importlib.import_module("coordinator_kit.assignors")
    assert all(hasattr(module, name) for name in module.__all__)
    assert len(set(module.__all__)) == len(module.__all__)
    assert isinstance(ASSIGNORS["range"], PartitionAssignor)


# -- value objects -----------------------------------------------------------------------------

def test_subscription_defaults_and_cleaning():
    sub = Subscription(["t1", "t0", "t1"])  # type: ignore[arg-type]
    assert sub.topics == ("t1", "t0")
    assert (sub.owned_partitions, sub.generation_id, sub.group_instance_id, sub.user_data) == \
        ((), -1, None, None)
    with pytest.raises(TypeError, match="tuple"):
        Subscription("t0")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Subscription(("t0",), owned_partitions=(("t0", 1),))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Subscription(("t0",), generation_id=True)
    with pytest.raises(TypeError):
        Subscription(("t0",), group_instance_id="")
    with pytest.raises(TypeError):
        Subscription(("t0",), user_data="text")  # type: ignore[arg-type]


def test_assignment_sorts_and_refuses_duplicates():
    a = Assignment(tps("t1p0 t0p2 t0p1"))
    assert a.partitions == (TopicPartition("t0", 1), TopicPartition("t0", 2),
                            TopicPartition("t1", 0))
    with pytest.raises(ValueError):
        Assignment((TopicPartition("t", 0), TopicPartition("t", 0)))


# -- input rules (module docstring of coordinator_kit.assignors._api) --------------------------

@pytest.mark.parametrize("name", sorted(ASSIGNORS))
def test_unknown_and_empty_topics_are_skipped(name):
    """Kafka skips a subscribed topic with no metadata, or with no partitions."""
    subs = {"C0": Subscription(("ghost", "empty", "t")), "C1": Subscription(("ghost",))}
    result = parts(get_assignor(name).assign({"t": 2, "empty": 0, "unrelated": 5}, subs))
    assert result == {"C0": tps("tp0 tp1"), "C1": ()}


@pytest.mark.parametrize("name", sorted(ASSIGNORS))
def test_bad_partition_counts_are_refused(name):
    assignor = get_assignor(name)
    with pytest.raises(ValueError, match="must be >= 0"):
        assignor.assign({"t": -1}, TWO_MEMBERS)
    with pytest.raises(TypeError):
        assignor.assign({"t": 1.5}, TWO_MEMBERS)  # type: ignore[dict-item]
    with pytest.raises(TypeError):
        assignor.assign({"t": True}, TWO_MEMBERS)
    with pytest.raises(TypeError):
        assignor.assign({"t": 1}, {"C0": ("t",)})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="group.instance.id 'i'"):
        assignor.assign({"t": 1}, {"a": Subscription(("t",), group_instance_id="i"),
                                   "b": Subscription(("t",), group_instance_id="i")})


@pytest.mark.parametrize("name", sorted(ASSIGNORS))
def test_empty_group(name):
    assert get_assignor(name).assign({"t": 3}, {}) == {}


@pytest.mark.parametrize("name", ["sticky", "cooperative-sticky"])
def test_owned_partitions_outside_the_metadata_are_ignored(name):
    owned = (TopicPartition("t", 7), TopicPartition("gone", 0), TopicPartition("t", 0))
    subs = {"C0": Subscription(("t",), owned_partitions=owned, generation_id=3),
            "C1": Subscription(("t",), generation_id=3)}
    result = parts(get_assignor(name).assign({"t": 2}, subs))
    assert result == {"C0": tps("tp0"), "C1": tps("tp1")}


# -- sticky ------------------------------------------------------------------------------------

def owned_by(assignment: dict[str, tuple[TopicPartition, ...]], generation: int = 1,
             topics: tuple[str, ...] = ()) -> dict[str, Subscription]:
    return {m: Subscription(topics, owned_partitions=p, generation_id=generation)
            for m, p in assignment.items()}


def test_sticky_keeps_everything_when_a_member_leaves():
    """KIP-54 example 1: C1 leaves; C0 and C2 keep all they had and split C1's partitions."""
    topics = ("t0", "t1", "t2", "t3")
    before = {"C0": tps("t0p0 t1p1 t3p0"), "C1": tps("t0p1 t2p0 t3p1"), "C2": tps("t1p0 t2p1")}
    subs = owned_by({"C0": before["C0"], "C2": before["C2"]}, topics=topics)
    result = parts(StickyAssignor().assign({t: 2 for t in topics}, subs))
    assert set(before["C0"]) <= set(result["C0"]) and set(before["C2"]) <= set(result["C2"])
    assert [len(result["C0"]), len(result["C2"])] == [4, 4]


def test_sticky_balances_different_subscriptions():
    """KIP-54 example 2: C0 -> t0; C1 -> t0, t1; C2 -> t0, t1, t2 (1, 2, 3 partitions)."""
    counts = {"t0": 1, "t1": 2, "t2": 3}
    subs = {"C0": Subscription(("t0",)), "C1": Subscription(("t0", "t1")),
            "C2": Subscription(("t0", "t1", "t2"))}
    result = parts(StickyAssignor().assign(counts, subs))
    assert result == {"C0": tps("t0p0"), "C1": tps("t1p0 t1p1"), "C2": tps("t2p0 t2p1 t2p2")}
    # C0 leaves: C1 takes t0p0 and nobody else moves (5 of 5 kept).
    after = parts(StickyAssignor().assign(counts, {
        "C1": Subscription(("t0", "t1"), owned_partitions=result["C1"], generation_id=1),
        "C2": Subscription(("t0", "t1", "t2"), owned_partitions=result["C2"], generation_id=1)}))
    assert after == {"C1": tps("t0p0 t1p0 t1p1"), "C2": tps("t2p0 t2p1 t2p2")}


def test_sticky_join_moves_only_the_new_members_share():
    topics = ("t0", "t1")
    start = parts(StickyAssignor().assign({"t0": 6, "t1": 6},
                                          {f"C{i}": Subscription(topics) for i in range(3)}))
    subs = owned_by(start, topics=topics)
    subs["C3"] = Subscription(topics)
    result = parts(StickyAssignor().assign({"t0": 6, "t1": 6}, subs))
    assert sorted(len(p) for p in result.values()) == [3, 3, 3, 3]
    moved = sum(len(set(start[m]) - set(result[m])) for m in start)
    assert moved == 3


def test_higher_generation_wins_a_conflicting_claim():
    tp = TopicPartition("t", 0)
    subs = {"old": Subscription(("t",), owned_partitions=(tp,), generation_id=4),
            "new": Subscription(("t",), owned_partitions=(tp,), generation_id=5)}
    plan = StickyAssignor().plan({"t": 2}, subs)
    assert plan.owner == {tp: "new"}
    assert plan.target["new"] == [tp]
    assert sorted(plan.claimants[tp]) == ["new", "old"]


def test_same_generation_claims_cancel_and_the_partition_is_withheld():
    """Two owners in one generation is invalid input; Java drops both claims, and the
    cooperative assignor withholds the partition from everyone for one round."""
    tp = TopicPartition("t", 0)
    subs = {"a": Subscription(("t",), owned_partitions=(tp,), generation_id=5),
            "b": Subscription(("t",), owned_partitions=(tp,), generation_id=5)}
    plan = StickyAssignor().plan({"t": 2}, subs)
    assert plan.owner == {}
    cooperative = parts(CooperativeStickyAssignor().assign({"t": 2}, subs))
    assert tp not in cooperative["a"] + cooperative["b"]
    assert sum(len(p) for p in cooperative.values()) == 1


def test_sticky_balances_through_a_chain():
    """joiner (t1 only) can take nothing directly from the busiest member m0 (t0 only), but
    m2 can pass t1p0 to it and take t0p1 from m0. kafka-python only checks direct moves and
    stops at a spread of 2."""
    counts = {"t0": 2, "t1": 1}
    subs = {"m0": Subscription(("t0",), owned_partitions=tps("t0p0"), generation_id=1),
            "joiner": Subscription(("t1",)),
            "m2": Subscription(("t0", "t1"), owned_partitions=tps("t1p0"), generation_id=1)}
    result = parts(StickyAssignor().assign(counts, subs))
    assert result == {"m0": tps("t0p0"), "joiner": tps("t1p0"), "m2": tps("t0p1")}
    theirs = kafka_python_assign("sticky", counts, subs)
    assert sorted(len(p) for p in theirs.values()) == [0, 1, 2]


def test_sticky_trades_partitions_back_to_their_owners():
    """Balance fixes the counts (2, 1, 1); among those assignments the kit keeps the most:
    m0 keeps t0p1 and t1p0, m2 keeps t0p0, only t1p1 moves."""
    counts = {"t0": 2, "t1": 2}
    subs = {"m0": Subscription(("t0", "t1"), owned_partitions=tps("t0p1 t1p0 t1p1"),
                               generation_id=1),
            "m1": Subscription(("t1",), generation_id=1),
            "m2": Subscription(("t0",), owned_partitions=tps("t0p0"), generation_id=1)}
    result = parts(StickyAssignor().assign(counts, subs))
    assert result == {"m0": tps("t0p1 t1p0"), "m1": tps("t1p1"), "m2": tps("t0p0")}


def test_revoked_topic_is_dropped_from_the_owner():
    """A member that unsubscribed from a topic loses its partitions of it."""
    subs = {"C0": Subscription(("t1",), owned_partitions=tps("t0p0 t0p1 t1p0"), generation_id=2),
            "C1": Subscription(("t0", "t1"), generation_id=2)}
    result = parts(StickyAssignor().assign({"t0": 2, "t1": 1}, subs))
    assert result == {"C0": tps("t1p0"), "C1": tps("t0p0 t0p1")}


# -- cooperative-sticky (KIP-429: revoke first, hand over in the follow-up rebalance) ----------

def test_cooperative_join_takes_two_rounds():
    topics = ("t0", "t1")
    first = {"C0": tps("t0p0 t0p1 t0p2"), "C1": tps("t1p0 t1p1 t1p2")}
    subs = owned_by(first, topics=topics)
    subs["C2"] = Subscription(topics, generation_id=-1)
    assignor = CooperativeStickyAssignor()
    plan = assignor.plan(TWO_BY_THREE, subs)
    round1 = parts(assignor.assign(TWO_BY_THREE, subs))
    # C2's share is withheld: C0 and C1 revoke one partition each and rejoin.
    assert round1 == {"C0": tps("t0p0 t0p1"), "C1": tps("t1p0 t1p1"), "C2": ()}
    assert plan.withheld() == {"C2": [TopicPartition("t0", 2), TopicPartition("t1", 2)]}
    round2 = parts(assignor.assign(TWO_BY_THREE, owned_by(round1, generation=2, topics=topics)))
    assert round2 == {"C0": tps("t0p0 t0p1"), "C1": tps("t1p0 t1p1"), "C2": tps("t0p2 t1p2")}


def test_cooperative_under_eager_equals_sticky():
    """Under EAGER members own nothing when they join, so nothing is withheld."""
    subs = {f"C{i}": Subscription(("t0", "t1"), generation_id=3) for i in range(3)}
    assert CooperativeStickyAssignor().assign({"t0": 5, "t1": 4}, subs) == \
        StickyAssignor().assign({"t0": 5, "t1": 4}, subs)


def test_partition_of_a_departed_member_is_handed_over_at_once():
    """Only members still in the group can hold a partition; a leaver's are free immediately."""
    subs = {"C0": Subscription(("t",), owned_partitions=tps("tp0"), generation_id=3),
            "C1": Subscription(("t",), generation_id=3)}
    assert parts(CooperativeStickyAssignor().assign({"t": 2}, subs)) == \
        {"C0": tps("tp0"), "C1": tps("tp1")}
