"""The views of a KIP-848 consumer group (`group.protocol=consumer`): the cluster snapshot and
picture, the live group and member diagrams, the swimlanes and the control panel, each checked
against the state the coordinator (`ConsumerGroup`, `ConsumerGroupMember`) and the client
(`ConsumerMembershipManager`) hold."""

from __future__ import annotations

import re

import pytest

from coordinator_kit.cluster import Cluster
from coordinator_kit.group.modern import consumer_group as consumer_group_module
from coordinator_kit.viz.cluster_view import cluster_svg
from coordinator_kit.viz.live import consumer_group_transitions, group_dot, member_dot
from coordinator_kit.viz.plots import figure_svg, group_segments, member_clients, swimlanes
from coordinator_kit.viz.snapshot import cluster_snapshot, coordinator_members


def two_then_a_third(ms_after_join: int = 300) -> Cluster:
    c = Cluster(brokers=3, topics={"orders": 6})
    c.add_consumer("c1", group_protocol="consumer")
    c.add_consumer("c2", group_protocol="consumer")
    c.run_for(15_000)
    c.add_consumer("c3", group_protocol="consumer")
    c.run_for(ms_after_join)
    return c


def test_snapshot_shows_epochs_member_states_and_target_against_current() -> None:
    # 300 ms after c3 joins: group epoch 3 and its target computed at once (Reconciling); c1
    # and c2 still own a partition the target gives c3 (UNREVOKED_PARTITIONS, epoch 2), c3 waits
    # for them (UNRELEASED_PARTITIONS, epoch 3) with its target but nothing owned
    c = two_then_a_third()
    snap = cluster_snapshot(c)
    g = snap.group("group-1")
    assert (g.group_type, g.state, g.generation, g.assignment_epoch, g.protocol) == (
        "consumer", "Reconciling", 3, 3, "uniform")
    by_client = {m.client_id: m for m in g.members}
    group = c.shard_for("group-1").consumer_groups.groups.get("group-1")
    for m in group.members.values():
        view = by_client[m.client_id]
        assert (view.member_epoch, view.member_state) == (m.member_epoch, m.state.name)
    c1, c3 = by_client["c1"], by_client["c3"]
    assert (c1.member_epoch, c1.member_state) == (2, "UNREVOKED_PARTITIONS")
    assert c1.revoking and set(c1.target) == set(c1.assignment)
    assert c1.rebalance is not None and c1.rebalance.name == "rebalance.timeout.ms"
    assert (c3.member_epoch, c3.member_state, c3.assignment) == (3, "UNRELEASED_PARTITIONS", ())
    assert set(c3.target) == set(by_client["c1"].revoking) | set(by_client["c2"].revoking)
    assert c3.session is not None and c3.session.total_ms == 45_000
    assert c3.session.key == f"session-timeout-group-1-{c3.member_id}"
    # the client side: its MemberState and member epoch, its heartbeat interval from the broker
    view = snap.consumer("c3")
    consumer = c.consumer("c3")
    assert (view.group_protocol, view.state, view.generation) == (
        "consumer", str(consumer.state), consumer.member_epoch)
    assert not view.rejoin_needed
    names = [t.name for t in view.timers]
    assert names == ["heartbeat.interval.ms", "max.poll.interval.ms"]
    assert view.timers[0].total_ms == 5_000  # group.consumer.heartbeat.interval.ms
    assert [m.member_id for m in view.memberships] == [consumer.member_id]


def test_snapshot_settles_to_stable_with_target_equal_to_current() -> None:
    c = two_then_a_third(15_000)
    g = cluster_snapshot(c).group("group-1")
    assert (g.state, g.generation, g.assignment_epoch) == ("Stable", 3, 3)
    assert all(m.member_state == "STABLE" and m.member_epoch == 3 and m.target == m.assignment
               and len(m.assignment) == 2 and not m.revoking and m.rebalance is None
               for m in g.members)


def test_classic_groups_keep_their_view() -> None:
    c = Cluster(brokers=3, topics={"orders": 6})
    c.add_consumer("k1")
    c.run_for(15_000)
    snap = cluster_snapshot(c)
    g = snap.group("group-1")
    assert (g.group_type, g.assignment_epoch) == ("classic", None)
    assert all(m.member_epoch is None and m.member_state is None for m in g.members)
    assert snap.consumer("k1").group_protocol == "classic"
    assert "ck-cg-member" not in cluster_svg(snap) and "member epoch" not in cluster_svg(snap)


def test_cluster_picture_draws_the_members_with_epochs_states_and_targets() -> None:
    c = two_then_a_third()
    svg = cluster_svg(cluster_snapshot(c))
    assert 'data-group="group-1" data-state="Reconciling" data-generation="3"' in svg
    assert "group epoch 3" in svg and "assignment epoch 3" in svg
    members = re.findall(r'class="ck-cg-member" data-member-id="[^"]+" data-member-epoch="(\d+)"'
                         r' data-state="(\w+)"', svg)
    assert sorted(members) == [("2", "UNREVOKED_PARTITIONS"), ("2", "UNREVOKED_PARTITIONS"),
                               ("3", "UNRELEASED_PARTITIONS")]
    assert ">UNREVOKED<" in svg and ">UNRELEASED<" in svg and "revoking orders-" in svg
    assert "target orders-" in svg
    assert svg.count("member epoch ") == 3  # each consumer card
    assert 'class="ck-server-member" data-state="UNRELEASED_PARTITIONS"' in svg
    assert "revocation @b" in svg  # the rebalance timer of a member that revokes


def test_consumer_group_transitions_are_the_ones_the_group_made() -> None:
    # every move ConsumerGroup.maybeUpdateGroupState makes (recorded where the table checks it)
    # is the move rebuilt from the coordinator's log lines, in order
    made: list[tuple[str, str]] = []
    table = consumer_group_module.CONSUMER_GROUP_STATES
    check = table.check

    def recording(old, new):
        made.append((old.value, new.value))
        return check(old, new)
    table.check = recording
    try:
        c = Cluster(brokers=3, topics={"orders": 6})
        c.add_consumer("c1", group_protocol="consumer")
        c.run_for(3_000)
        c.add_consumer("c2", group_protocol="consumer")
        c.run_for(12_000)
        c.add_consumer("c3", group_protocol="consumer")
        c.run_for(12_000)
        c.crash("c2")
        c.run_for(60_000)
        c.leave("c1")
        c.leave("c3")
        c.run_for(5_000)
    finally:
        table.check = check
    rebuilt = [(t.old.value, t.new.value) for t in consumer_group_transitions(c.trace, "group-1")]
    assert rebuilt == made
    assert made[0] == ("Empty", "Stable") and made[-1] == ("Assigning", "Empty")


def test_group_diagram_of_a_consumer_group() -> None:
    c = two_then_a_third()
    dot = group_dot(c, "group-1", since_ms=15_000)
    assert "Reconciling,\\ngroup epoch 3, assignment epoch 3" in dot
    assert 'digraph "ConsumerGroup"' in dot and "PreparingRebalance" not in dot
    assert '"Reconciling" [style="filled' in dot  # the state now
    # since the join: Stable -> Reconciling (its record at epoch 0), -> Assigning (epoch
    # bump), -> Reconciling (target computed), numbered 1, 2, 3
    numbered = dict(re.findall(r'"(\w+ -> \w+)" \[label="(\d)', dot.replace('" -> "', " -> ")))
    assert numbered == {"Stable -> Reconciling": "1", "Reconciling -> Assigning": "2",
                        "Assigning -> Reconciling": "3"}


def test_member_diagram_of_a_fenced_member() -> None:
    c = two_then_a_third(15_000)
    c.pause("c2", 60_000)
    c.run_for(80_000)
    dot = member_dot(c, "c2", since_ms=30_000)
    assert "FENCED" in dot and "JOINING" in dot and "epoch" in dot.splitlines()[2]


def test_swimlanes_have_consumer_group_and_consumer_protocol_lanes() -> None:
    c = two_then_a_third(15_000)
    assert member_clients(c.trace) == ["c1", "c2", "c3"]
    states = {str(s.state) for s in group_segments(c.trace, "group-1")}
    assert {"Stable", "Reconciling"} <= states
    svg = figure_svg(swimlanes(c.trace, groups=("group-1",)))
    for label in ("group-1 (coordinator)", "c1", "c3", "Reconciling", "RECONCILING", "JOINING"):
        assert label in svg


def test_classic_swimlanes_are_unchanged_by_the_consumer_protocol_colours() -> None:
    c = Cluster(brokers=3, topics={"orders": 6})
    c.add_consumer("k1")
    c.add_consumer("k2")
    c.run_for(20_000)
    svg = figure_svg(swimlanes(c.trace, groups=("group-1",)))
    assert "Reconciling" not in svg and "JOINING" not in svg and "PREPARING_REBALANCE" in svg


def test_coordinator_members_of_a_consumer_group_carry_member_state_and_epoch() -> None:
    # what the live panel shows for real clients: the coordinator's MemberState and epoch
    c = two_then_a_third()
    snap = cluster_snapshot(c)
    bare = snap.__class__(snap.now_ms, snap.clock, snap.brokers, snap.partitions, snap.groups,
                          (), snap.requests)
    views = {v.name: v for v in coordinator_members(bare, "group-1")}
    assert sorted(views) == ["c1", "c2", "c3"]
    assert (views["c3"].state, views["c3"].generation, views["c3"].group_protocol) == (
        "UNRELEASED_PARTITIONS", 3, "consumer")
    assert views["c1"].state == "UNREVOKED_PARTITIONS"


def test_control_panel_on_a_consumer_group() -> None:
    pytest.importorskip("ipywidgets")
    from coordinator_kit.viz.panel import ControlPanel

    c = Cluster(brokers=3, topics={"orders": 6})
    c.add_consumer("c1", group_protocol="consumer")
    c.add_consumer("c2", group_protocol="consumer")
    c.run_for(15_000)
    panel = ControlPanel(c)
    assert "group-1: Stable (consumer group, group epoch 2, assignment epoch 2, 2 members)" \
        in panel.status.value
    assert panel.add_consumer("c3")  # the Add button: a member of the same protocol
    assert panel.cluster.consumer("c3").config.group_protocol == "consumer"
    panel.advance(300)
    panel.render_all()
    assert "Reconciling (consumer group, group epoch 3" in panel.status.value
    assert "<td class=\"ck-generation\">epoch 3</td>" in panel.member_table.value
    assert "Reconciling" in panel.group_diagram.value
