"""The live panel (`coordinator_kit.viz.live_panel.LivePanel`) driven headless against a live
server with two real kafka-python consumers, and `snapshot.coordinator_members`, which builds
the consumer cards of members the cluster knows only through their group.

What is checked is Kafka's behaviour as the picture shows it: both members with the range
assignment their leader computed; a SIGKILLed member kept by the coordinator until its session
runs out (GroupMetadataManager's session timer, "has failed, removing it from the group"),
then the survivor owning every partition; a client cut off at the server whose requests are
withheld; a coordinator move (`Cluster.move_coordinator`) after which the group is loaded and
served by the new leader of its `__consumer_offsets` partition.
"""

from __future__ import annotations

import dataclasses
import io
import time

import pytest

from coordinator_kit.live.processes import ConsumerProcess
from coordinator_kit.live.server import LiveServer
from coordinator_kit.scenarios import new_cluster
from coordinator_kit.viz.live_panel import LivePanel, NO_REWIND
from coordinator_kit.viz.snapshot import cluster_snapshot, coordinator_members

GROUP = "g-panel"
ORDERS = tuple(f"orders-{p}" for p in range(6))
SESSION_MS = 6000


def test_coordinator_members_rebuild_the_cards_from_the_group_alone():
    """Without the simulation's consumers, the group on its coordinator still tells each
    member's id, generation, assignment (the SyncGroup bytes, decoded) and session timer."""
    cluster = new_cluster(0, offsets_partitions=1)
    for name in ("consumer-1", "consumer-2"):
        cluster.add_consumer(name, "group-1", session_timeout_ms=10_000)
    cluster.run_for(10_000)
    snap = cluster_snapshot(cluster)
    assert coordinator_members(snap) == ()  # every member is a consumer of the snapshot
    bare = dataclasses.replace(snap, consumers=())
    views = coordinator_members(bare, "group-1")
    assert [v.name for v in views] == ["consumer-1", "consumer-2"]
    group = snap.group("group-1")
    for v in views:
        consumer = snap.consumer(v.name)
        assert v.member_id == consumer.member_id
        assert v.assignment == consumer.assignment and v.assignment
        assert (v.state, v.generation, v.coordinator) == ("STABLE", group.generation,
                                                          group.broker)
        assert v.memberships and v.memberships[0].session is not None
    assert coordinator_members(bare, "other-group") == ()


@pytest.fixture(scope="module")
def live():
    log = io.StringIO()
    server = LiveServer(port=0, group_config={"group.initial.rebalance.delay.ms": 500},
                        log=log, produce_rate_per_s=5).start()
    procs = [ConsumerProcess(server.bootstrap, cid, group=GROUP, session_timeout_ms=SESSION_MS,
                             heartbeat_interval_ms=500, seconds=60)
             for cid in ("kp-a", "kp-b")]
    panel = LivePanel(server, group_id=GROUP, consumers=procs, auto_refresh=False)
    yield server, procs, panel, log
    for p in procs:
        p.close()
    server.stop()
    panel.close()
    assert "<b>stopped</b>" in panel.status.value and panel.refresh() is None


def _wait(panel, condition, what, timeout_s=30.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        snap = panel.refresh()
        if snap is not None and condition(snap):
            return snap
        time.sleep(0.2)
    raise AssertionError(f"{what} not seen in {timeout_s} s; last picture: {panel.snapshot}")


def _members(snap):
    g = snap.group(GROUP)
    return [m for m in g.members if not m.pending]


def _stable_pair(snap):
    if not any(g.group_id == GROUP for g in snap.groups):
        return False
    owned = [p for c in snap.consumers for p in c.assignment]
    return (snap.group(GROUP).state == "Stable" and len(_members(snap)) == 2
            and sorted(owned) == sorted(ORDERS))


def test_view_lists_both_real_clients_as_members(live):
    server, procs, panel, _log = live
    snap = _wait(panel, _stable_pair, "two members with every partition")
    assert [c.name for c in snap.consumers] == ["kp-a", "kp-b"]
    for c in snap.consumers:
        assert c.state == "STABLE" and c.process == "running"
        assert c.member_id.startswith(c.name + "-")  # Kafka's member id: client id + uuid
        assert c.software.startswith("kafka-python ")  # ApiVersions' client software name
        assert len(c.assignment) == 3
    # the leader's range assignment: the member whose id sorts first gets the first half
    first = min(snap.consumers, key=lambda c: c.member_id)
    assert first.assignment == ORDERS[:3]
    svg = panel.cluster_view.svg
    assert 'data-consumer="kp-a"' in svg and 'data-consumer="kp-b"' in svg
    assert f'data-group="{GROUP}" data-state="Stable"' in svg
    assert "kp-a" in panel.clients_table.value and "kafka-python" in panel.clients_table.value
    assert NO_REWIND in panel.no_rewind.value
    assert repr(panel) == f"LivePanel(group {GROUP!r}, 2 consumer processes, live, no rewind)"


def test_move_coordinator_button_moves_the_group(live):
    server, procs, panel, _log = live
    _wait(panel, _stable_pair, "a stable pair")
    old = panel.snapshot.group(GROUP).broker
    assert panel.partition_select.value == panel.facts["partition"]
    target = panel.broker_select.value
    assert target != old
    panel.move_button.click()
    assert panel.last_error is None, panel.last_error
    assert f"to broker {target}" in panel.message.value
    snap = _wait(panel, lambda s: s.group(GROUP).broker == target and _stable_pair(s)
                 and all(c.coordinator == target for c in s.consumers),
                 "the group served by the new coordinator")
    assert f"coordinator: broker {target}" in panel.status.value
    assert f'data-broker="{target}" data-coordinator="true"' in panel.cluster_view.svg
    # the clients followed: they talk to the new coordinator (NOT_COORDINATOR, then
    # FindCoordinator again)
    assert all(c.memberships[0].broker == target for c in snap.consumers)


def test_cut_off_button_withholds_the_clients_requests(live):
    server, procs, panel, _log = live
    _wait(panel, _stable_pair, "a stable pair")
    panel.client_select.value = "kp-b"
    panel.cut_off_button.click()
    assert panel.last_error is None, panel.last_error
    assert server.call(lambda: "kp-b" in server.cut)

    def withheld():
        return server.call(lambda: any(c.stalled for c in server.connections
                                       if c.client_id == "kp-b"))
    deadline = time.monotonic() + 10
    while not withheld():
        assert time.monotonic() < deadline, "no request of kp-b was withheld"
        time.sleep(0.1)
    snap = panel.refresh()
    card = next(c for c in snap.consumers if c.name == "kp-b")
    assert card.cut_off and "cut off" in card.status
    assert 'data-status="cut off"' in panel.cluster_view.svg
    panel.restore_network_button.click()
    assert server.call(lambda: "kp-b" not in server.cut)
    assert not withheld()  # the stalled connections are closed: the client reconnects


def test_crash_button_kills_and_the_session_timeout_expels(live):
    server, procs, panel, log = live
    _wait(panel, _stable_pair, "a stable pair")
    panel.client_select.value = "kp-a"
    panel.crash_button.click()
    assert panel.last_error is None, panel.last_error
    assert not procs[0].alive and procs[0].proc.returncode == -9  # SIGKILL
    # no LeaveGroup: the coordinator still holds the dead member, its session running down
    snap = panel.refresh()
    crashed = next(c for c in snap.consumers if c.name == "kp-a")
    assert crashed.process == "crashed"
    assert len(_members(snap)) == 2 and crashed.memberships
    snap = _wait(panel, lambda s: len(_members(s)) == 1 and s.group(GROUP).state == "Stable"
                 and next(c for c in s.consumers if c.name == "kp-b").assignment == ORDERS,
                 "the survivor owning every partition", timeout_s=SESSION_MS / 1000 + 20)
    assert [m.client_id for m in _members(snap)] == ["kp-b"]
    gone = next(c for c in snap.consumers if c.name == "kp-a")
    assert gone.assignment == () and gone.memberships == ()
    assert any("Member kp-a-" in line and "has failed, removing it from the group" in line
               for line in log.getvalue().splitlines())
    assert "has failed, removing it from the group" in panel.log_tail.value
    # a process button on a process that is gone: a clear message, nothing raised
    panel.crash_button.click()
    assert "kp-a is not running" in str(panel.last_error)
    assert "ck-error" in panel.message._dom_classes


def test_replica_and_load_buttons_act_on_the_cluster(live):
    """Stall replica: the broker's replica of a `__consumer_offsets` partition stops fetching
    (drawn "stalled"), and fetches again on Resume replica; Fail next load arms the broker's
    loader. A partition other than the group's, so the group is left alone."""
    server, procs, panel, _log = live
    panel.refresh()
    other = next(p for p in panel.facts["partitions"] if p != panel.facts["partition"])
    panel.partition_select.value = other
    leader, isr = panel.facts["isr"][other]
    follower = panel.broker_select.value
    assert follower != leader and follower in isr
    panel.stall_button.click()
    assert panel.last_error is None, panel.last_error
    replica = next(r for p in panel.snapshot.partitions if p.partition == other
                   for r in p.replicas if r.broker_id == follower)
    assert not replica.fetching
    assert 'data-fetching="false"' in panel.cluster_view.svg  # drawn "stalled"
    panel.unstall_button.click()
    replica = next(r for p in panel.snapshot.partitions if p.partition == other
                   for r in p.replicas if r.broker_id == follower)
    assert replica.fetching
    panel.fail_load_button.click()
    assert panel.last_error is None, panel.last_error
    assert f"fail the next load of __consumer_offsets-{other} on broker {follower}" in \
        panel.message.value
    # a partition that does not exist: refused with the cluster's message, nothing raised
    assert not panel.stall_replica(99, follower)
    assert "no partition __consumer_offsets-99" in str(panel.last_error)
