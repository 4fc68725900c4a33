"""ConsumerGroupDescribe (API key 69) through the broker's service on a simulated cluster
(`GroupCoordinatorService.consumerGroupDescribe`, `GroupMetadataManager.consumerGroupDescribe`,
`ConsumerGroup.asDescribedGroup`), and how DescribeGroups and ListGroups show a consumer group.
The expected answers are what Apache Kafka 4.0.2 gave to the same requests (probed with raw
requests and confluent-kafka's AdminClient against a real broker)."""

from __future__ import annotations

from coordinator_kit.cluster import Cluster
from coordinator_kit.errors import Errors
from coordinator_kit.group.api import ListGroupsRequest, RequestContext
from coordinator_kit.group.modern.topics import topic_id

CTX = RequestContext("admin")


def cluster(**kw) -> Cluster:
    return Cluster(brokers=3, topics={"orders": 6}, trace_level="INFO", **kw)


def describe(c: Cluster, *group_ids, broker: int | None = None):
    broker = c.coordinator_for(group_ids[0] or "g") if broker is None else broker
    f = c.brokers[broker].service.consumer_group_describe(CTX, list(group_ids))
    c.run_until(f.done, limit_ms=5000)
    return f.result()


def two_members() -> Cluster:
    c = cluster()
    c.add_consumer("c1", group_protocol="consumer")
    c.add_consumer("c2", group_protocol="consumer")
    c.run_for(20_000)
    return c


def test_a_stable_group_with_epochs_members_and_both_assignments() -> None:
    # ConsumerGroup.asDescribedGroup: state, group epoch, assignment epoch, the default
    # assignor (uniform) when no member asks for one, members in member id order
    c = two_members()
    (g,) = describe(c, "group-1")
    assert (g.error, g.error_message, g.group_id) == (Errors.NONE, None, "group-1")
    assert (g.group_state, g.group_epoch, g.assignment_epoch) == ("Stable", 2, 2)
    assert g.assignor_name == "uniform"
    assert [m.member_id for m in g.members] == sorted(m.member_id for m in g.members)
    owned = {}
    for m in g.members:
        assert m.member_epoch == 2 and m.member_type == 1
        assert m.client_id in ("c1", "c2") and m.subscribed_topic_names == ("orders",)
        assert m.assignment == m.target_assignment  # reconciled: current == target
        (tp,) = m.assignment
        assert (tp.topic_id, tp.topic_name) == (topic_id("orders"), "orders")
        owned[m.client_id] = set(tp.partitions)
    assert owned["c1"] | owned["c2"] == set(range(6)) and not owned["c1"] & owned["c2"]


def test_target_ahead_of_current_while_a_new_member_reconciles() -> None:
    # a third member joins: the target moves at once (group epoch 3); the others give up
    # partitions over their next heartbeats, so for a while target != current
    c = two_members()
    c.add_consumer("c3", group_protocol="consumer")
    seen = []
    for _ in range(40):
        c.run_for(250)
        (g,) = describe(c, "group-1")
        seen.append((g.group_state, g.group_epoch, g.assignment_epoch,
                     any(m.assignment != m.target_assignment for m in g.members)))
    assert ("Reconciling", 3, 3, True) in seen
    assert seen[-1] == ("Stable", 3, 3, False)


def test_missing_and_classic_groups_are_group_id_not_found_with_kafkas_messages() -> None:
    # GroupMetadataManager.consumerGroup(groupId, committedOffset): "Group %s not found." and
    # "Group %s is not a consumer group." (Kafka 4.0.2 answers exactly these)
    c = cluster(offsets_partitions=1)
    c.add_consumer("k1", group_id="classic-g")  # a classic member
    c.add_consumer("c1", group_id="cg", group_protocol="consumer")
    c.run_for(20_000)
    cg, classic, missing = describe(c, "cg", "classic-g", "missing")
    assert cg.error is Errors.NONE and cg.group_state == "Stable"
    assert (classic.group_id, classic.error, classic.error_message, classic.group_state,
            classic.members) == ("classic-g", Errors.GROUP_ID_NOT_FOUND,
                                 "Group classic-g is not a consumer group.", "", ())
    assert (missing.error, missing.error_message) == (Errors.GROUP_ID_NOT_FOUND,
                                                      "Group missing not found.")


def test_invalid_ids_first_and_a_partition_it_does_not_lead_is_not_coordinator() -> None:
    # GroupCoordinatorService.consumerGroupDescribe: empty ids answer INVALID_GROUP_ID first; a
    # read on a partition this broker does not lead fails NOT_COORDINATOR, code only
    c = two_members()
    other = next(b for b in c.brokers if b != c.coordinator_for("group-1"))
    first, second = describe(c, "", "group-1", broker=other)
    assert (first.group_id, first.error) == ("", Errors.INVALID_GROUP_ID)
    assert (second.group_id, second.error, second.error_message) == (
        "group-1", Errors.NOT_COORDINATOR, None)


def test_after_a_coordinator_move_load_in_progress_then_the_same_group_rebuilt() -> None:
    # a read on a partition still loading fails COORDINATOR_LOAD_IN_PROGRESS (code only);
    # once loaded, the replayed records give back the same group (GroupMetadataManager.replay)
    c = two_members()
    (before,) = describe(c, "group-1")
    new = next(b for b in c.brokers if b != c.coordinator_for("group-1"))
    c.move_coordinator("group-1", to_broker=new)
    f = c.brokers[new].service.consumer_group_describe(CTX, ["group-1"])
    c.run_until(f.done, limit_ms=5000)
    assert (f.result()[0].error, f.result()[0].error_message) == (
        Errors.COORDINATOR_LOAD_IN_PROGRESS, None)
    c.run_for(1_000)
    (after,) = describe(c, "group-1", broker=new)
    assert after == before


def test_list_groups_types_filter_and_states_of_consumer_groups() -> None:
    # ListGroups v5 (Kafka 4.0.2): a consumer group is type "consumer", protocol type
    # "consumer"; TypesFilter matches case-insensitively
    c = cluster(offsets_partitions=1)
    c.add_consumer("k1", group_id="classic-g")
    c.add_consumer("c1", group_id="cg", group_protocol="consumer")
    c.run_for(20_000)
    svc = c.brokers[c.coordinator_for("cg")].service

    def listed(types=(), states=()):
        f = svc.list_groups(CTX, ListGroupsRequest(tuple(states), tuple(types)))
        c.run_until(f.done, limit_ms=5000)
        return sorted((g.group_id, g.protocol_type, g.group_state, g.group_type)
                      for g in f.result().groups)
    both = [("cg", "consumer", "Stable", "consumer"), ("classic-g", "consumer", "Stable",
                                                       "classic")]
    assert listed() == both
    assert listed(types=("consumer",)) == both[:1]
    assert listed(types=("Consumer",)) == both[:1]
    assert listed(types=("classic",)) == both[1:]
    assert listed(states=("stable",), types=("consumer",)) == both[:1]
    assert listed(states=("Reconciling",)) == []
