"""Consumers and brokers together: scenarios, faults and invariants (the Java client's
`AbstractCoordinator`/`ConsumerCoordinator` against the classic paths of Kafka's
`GroupMetadataManager`; docs/kafka-classes.md)."""

from __future__ import annotations

import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coordinator_kit.client import ConsumerConfig, MemberState
from coordinator_kit.cluster import Cluster
from coordinator_kit.errors import Errors
from coordinator_kit.group.api import OffsetCommitRequest, PartitionData, RequestContext
from coordinator_kit.invariants import InvariantMonitor
from coordinator_kit.scenarios import SCENARIOS, new_cluster, run_scenario
from coordinator_kit.topic import TopicPartition
from faults import ACTIONS, apply_fault


def kinds(cluster, kind, source=None):
    return [e for e in cluster.trace.of_kind(kind) if source is None or e.source == source]


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_every_named_scenario_keeps_the_invariants_and_ends_stable(name):
    cluster = run_scenario(name, trace_level="INFO")
    cluster.monitor.assert_ok()
    assert cluster.monitor.checks > 3
    assert cluster.group()["state"] == "Stable"
    live = [c for c in cluster.consumers.values() if c.running and not c.crashed]
    owned = sorted(tp for c in live for tp in c.owned)
    assert owned == sorted(TopicPartition("orders", p) for p in range(6))


def test_same_seed_same_trace_different_seed_different_member_ids():
    a = run_scenario("one-dies", seed=3).log_lines("DEBUG")
    b = run_scenario("one-dies", seed=3).log_lines("DEBUG")
    c = run_scenario("one-dies", seed=4).log_lines("DEBUG")
    assert a == b and a != c


def test_join_sequence_with_member_id_required_round_trip():
    """FindCoordinator, JoinGroup (MEMBER_ID_REQUIRED, KIP-394), JoinGroup again, SyncGroup, the
    assignment: `AbstractCoordinator.joinGroupIfNeeded`, in the Java client's words."""
    cluster = run_scenario("consumer-joins")
    lines = cluster.log_lines(source="client-consumer-1")
    msgs = [ln.split("groupId=group-1] ", 1)[1].rsplit(" (", 1)[0] for ln in lines]
    assert msgs[0].startswith("Discovered group coordinator localhost:")
    assert msgs[1] == "(Re-)joining group"
    assert msgs[2].startswith("Request joining group due to: need to re-join with the given "
                              "member-id: consumer-1-")
    assert msgs[3] == "(Re-)joining group"
    assert msgs[4].startswith("Successfully joined group with generation Generation{"
                              "generationId=1, memberId='consumer-1-")
    assert msgs[5].startswith("Finished assignment for group at generation 1:")
    assert msgs[6].startswith("Successfully synced group in generation")
    assert msgs[8] == ("Adding newly assigned partitions: orders-0, orders-1, orders-2, "
                       "orders-3, orders-4, orders-5")
    c = cluster.consumer("consumer-1")
    assert c.state is MemberState.STABLE and c.consumed > 0


def test_eager_rebalance_revokes_everything_before_rejoining():
    cluster = run_scenario("second-joins")
    calls = [(x.callback, len(x.partitions)) for x in cluster.consumer("consumer-1").listener_calls]
    assert calls == [("onPartitionsAssigned", 6), ("onPartitionsRevoked", 6),
                     ("onPartitionsAssigned", 3)]


def test_cooperative_rebalance_revokes_only_what_moves_and_follows_up():
    cluster = new_cluster()
    for name in ("a", "b"):
        cluster.add_consumer(name, partition_assignment_strategy=("cooperative-sticky",))
        cluster.run_for(10_000)
    calls = [(x.callback, x.partitions) for x in cluster.consumer("a").listener_calls]
    assert calls[0][0] == "onPartitionsAssigned" and len(calls[0][1]) == 6
    assert calls[1][0] == "onPartitionsRevoked" and len(calls[1][1]) == 3  # only what moves
    assert [c for c, _ in calls].count("onPartitionsRevoked") == 1
    assert cluster.group()["generation"] == 3  # the follow-up rebalance hands them over
    assert len(cluster.consumer("b").owned) == 3
    cluster.monitor.assert_ok()


def test_crash_is_noticed_by_session_timeout_and_partitions_move():
    cluster = run_scenario("second-joins", trace_level="INFO")
    cluster.crash("consumer-2")
    crash_at = cluster.scheduler.now
    cluster.run_for(60_000)
    expired = kinds(cluster, "member_session_expired")
    assert len(expired) == 1
    assert 42_000 <= expired[0].ts - crash_at <= 45_000  # last heartbeat < 3 s before the crash
    assert len(cluster.consumer("consumer-1").owned) == 6


def test_gc_pause_shorter_than_session_timeout_causes_no_rebalance():
    cluster = run_scenario("second-joins", trace_level="INFO")
    before = cluster.group()["generation"]
    cluster.pause("consumer-1", 10_000)
    cluster.run_for(30_000)
    assert cluster.group()["generation"] == before
    assert not kinds(cluster, "member_session_expired")


def test_gc_pause_longer_than_session_timeout_loses_partitions_and_rejoins():
    cluster = run_scenario("long-gc-pause")
    c1 = cluster.consumer("consumer-1")
    callbacks = [x.callback for x in c1.listener_calls]
    assert "onPartitionsLost" in callbacks
    assert any("Resetting generation and member id due to: encountered" in ln and
               ("UNKNOWN_MEMBER_ID" in ln or "ILLEGAL_GENERATION" in ln)
               for ln in cluster.log_lines(source="client-consumer-1"))
    assert c1.state is MemberState.STABLE and c1.owned
    cluster.monitor.assert_ok()


def test_resume_ends_a_pause_early_and_runs_the_held_back_work_now():
    """A pause (a stop-the-world GC stops the poll loop and the heartbeat thread,
    `AbstractCoordinator.HeartbeatThread`) that `resume()` ends after 5 s: what the pause
    held back runs at once, in order, and the member never misses its session; resuming a
    running or crashed member is refused."""
    cluster = run_scenario("second-joins", trace_level="INFO")
    c1, sched = cluster.consumer("consumer-1"), cluster.scheduler
    generation = cluster.group()["generation"]
    cluster.pause("consumer-1", 60_000)
    cluster.run_for(5_000)
    held = [h for h in sched.pending() if h.name == "resume consumer-1"]
    assert held and all(h.when == c1.paused_until for h in held)
    received, now = c1.last_heartbeat_received, sched.now
    cluster.resume("consumer-1")
    assert c1.paused_until == now and not any(h.name == "resume consumer-1" and h.when > now
                                              for h in sched.pending())
    assert kinds(cluster, "consumer_resumed")
    cluster.run_for(5_000)
    assert c1.last_poll > now and c1.last_heartbeat_received > received
    assert cluster.group()["generation"] == generation
    assert not kinds(cluster, "member_session_expired")
    with pytest.raises(ValueError, match="consumer consumer-1 is not paused; pause it first"):
        cluster.resume("consumer-1")
    cluster.crash("consumer-2")
    with pytest.raises(RuntimeError, match="can't resume consumer consumer-2: it has crashed"):
        cluster.resume("consumer-2")


def test_slow_poll_exceeds_max_poll_interval_and_the_member_leaves():
    cluster = new_cluster(trace_level="INFO")
    cluster.add_consumer("slow", max_poll_interval_ms=10_000)
    cluster.add_consumer("fast")
    cluster.run_for(10_000)
    cluster.slow_poll("slow", 15_000)
    cluster.run_for(12_000)
    lines = cluster.log_lines(source="client-slow")
    assert any("consumer poll timeout has expired." in ln and " WARN " in ln for ln in lines)
    assert any("sending LeaveGroup request to coordinator" in ln and
               "due to consumer poll timeout has expired." in ln for ln in lines)
    assert any("has left group through explicit `LeaveGroup` request" in ln
               for ln in cluster.log_lines(source="broker-" + str(cluster.coordinator_for(
                   "group-1"))))


def test_dropped_heartbeats_expel_a_member_that_does_not_commit():
    cluster = new_cluster(trace_level="INFO")
    for name in ("consumer-1", "consumer-2"):
        cluster.add_consumer(name, enable_auto_commit=False)
    cluster.run_for(20_000)
    cluster.drop_heartbeats("consumer-2")
    cluster.run_for(50_000)
    expired = kinds(cluster, "member_session_expired")
    assert len(expired) == 1 and expired[0].fields["member"].startswith("consumer-2-")
    assert cluster.consumer("consumer-2").consumed > 0  # it kept polling all along


def test_offset_commits_keep_a_member_alive_without_heartbeats():
    """Kafka's OffsetMetadataManager reschedules the member's session on every commit in Stable
    or PreparingRebalance, so an auto-committing consumer survives lost heartbeats."""
    cluster = run_scenario("second-joins", trace_level="INFO")
    cluster.drop_heartbeats("consumer-2")
    cluster.run_for(120_000)
    assert not kinds(cluster, "member_session_expired")
    assert len(cluster.group()["members"]) == 2


def test_a_request_timeout_cancelled_from_pending_leaves_its_answer_deliverable():
    """A learner (or the panel) may cancel any pending timer, a request's timeout included:
    the answer still arrives and is handled, and nothing times out."""
    cluster = Cluster(topics={"events": 2})
    cluster.add_consumer("c1", topics=("events",))
    cluster.run_until(lambda: cluster.consumer("c1").state is MemberState.STABLE)
    sched = cluster.scheduler
    sched.run_until(lambda: any(h.name == "Heartbeat timeout c1" for h in sched.pending()))
    timeout = next(h for h in sched.pending() if h.name == "Heartbeat timeout c1")
    received = cluster.consumer("c1").last_heartbeat_received
    assert timeout.cancel()
    cluster.run_for(100)
    assert cluster.consumer("c1").last_heartbeat_received > received
    assert not any(h.name == "Heartbeat timeout c1" for h in sched.pending())
    assert cluster.consumer("c1").state is MemberState.STABLE


def test_in_flight_heartbeat_wakeup_is_pending_like_a_timer_and_cancelled_by_the_answer():
    """`AbstractCoordinator.HeartbeatThread`: while a heartbeat is in flight the thread sleeps
    until the session or poll deadline. That wake-up (kept in the cluster's HeartbeatWakeups
    lane) shows in `pending()` under the thread's name at that deadline, the answer cancels it,
    and one cancelled from `pending()` never runs."""
    cluster = Cluster(topics={"events": 2})
    cluster.add_consumer("c1", topics=("events",))
    cluster.run_until(lambda: cluster.consumer("c1").state is MemberState.STABLE)
    c1, sched = cluster.consumer("c1"), cluster.scheduler
    sched.run_until(lambda: c1.inflight.heartbeat)
    wakeups = [h for h in sched.pending() if h.name == "heartbeat c1"]
    assert [h.when for h in wakeups] == [
        min(c1.last_poll + c1.config.max_poll_interval_ms,
            c1.last_heartbeat_received + c1.config.session_timeout_ms) + 1]
    sched.run_until(lambda: not c1.inflight.heartbeat)
    assert [h.when for h in sched.pending() if h.name == "heartbeat c1"] == [
        c1.last_heartbeat_sent + c1.config.heartbeat_interval_ms]
    # cancel the in-flight wake-up from pending() and drop the answer: the thread stays
    # asleep until the request times out (nothing else wakes it)
    cluster.drop_heartbeats("c1")
    sched.run_until(lambda: c1.inflight.heartbeat)
    assert next(h for h in sched.pending() if h.name == "heartbeat c1").cancel()
    sent = c1.last_heartbeat_sent
    cluster.run_for(c1.config.request_timeout_ms - 1)
    assert c1.last_heartbeat_sent == sent and c1.inflight.heartbeat
    assert not any(h.name == "heartbeat c1" for h in sched.pending())


def test_heartbeat_wakeups_refuse_a_deadline_before_their_last_and_run_in_order():
    """The lane keeps `call_at`'s order: a wake-up due before the last one armed is refused
    (the consumer then uses `call_at`), a cancelled one never runs, the others run in order."""
    cluster = Cluster(topics={"events": 2})
    for name in ("c1", "c2", "c3"):
        cluster.add_consumer(name, topics=("events",))
    c1, c2, c3 = (cluster.consumer(n) for n in ("c1", "c2", "c3"))
    wakeups, ran = cluster.heartbeat_wakeups, []
    for c in (c1, c2, c3):
        c._heartbeat_tick = lambda c=c: ran.append((c.name, cluster.scheduler.now))
    start = cluster.scheduler.now
    first, second = wakeups.arm(c1, 100), wakeups.arm(c2, 200)
    assert first and second and wakeups.arm(c3, 150) == 0  # before the last: refused
    third = wakeups.arm(c3, 300)
    wakeups.cancel(second)
    assert wakeups.pending(first) and not wakeups.pending(second)
    cluster.scheduler.run_until(start + 300)
    assert ran == [("c1", start + 100), ("c3", start + 300)]
    assert not wakeups.pending(first) and not wakeups.pending(third)


def test_cut_off_consumer_rejoins_after_the_network_heals():
    """A JoinGroup lost in a partition waits for its request timeout, which the client
    stretches to max.poll.interval.ms + 5 s; a short poll interval keeps the test short."""
    cluster = new_cluster(trace_level="INFO")
    for name in ("consumer-1", "consumer-2"):
        cluster.add_consumer(name, max_poll_interval_ms=20_000)
    cluster.run_for(20_000)
    cluster.cut_off("consumer-2")
    cluster.run_for(60_000)
    assert kinds(cluster, "member_session_expired")
    cluster.cut_off("consumer-2", False)
    cluster.run_for(40_000)
    assert cluster.consumer("consumer-2").state is MemberState.STABLE
    assert len(cluster.group()["members"]) == 2
    cluster.monitor.assert_ok()


def test_coordinator_failover_keeps_offsets_and_consumers_follow():
    cluster = run_scenario("second-joins")
    cluster.run_for(6_000)
    before = cluster.committed_offsets()
    old = cluster.coordinator_for("group-1")
    cluster.move_coordinator("group-1")
    cluster.run_for(15_000)
    new = cluster.coordinator_for("group-1")
    assert new != old
    after = cluster.committed_offsets()
    assert all(after[tp] >= o for tp, o in before.items())
    assert all(c.coordinator == new for c in cluster.consumers.values())
    assert any("Discovered group coordinator" in ln for ln in
               cluster.log_lines(source="client-consumer-1")[-20:])
    cluster.monitor.assert_ok()


def test_failed_load_and_failed_append_are_survived():
    cluster = run_scenario("second-joins", trace_level="INFO")
    tp = cluster.partition_of("group-1")
    p = cluster.partitions[tp]
    target = next(b for b in p.isr if b != p.leader_id)
    cluster.fail_next_load(tp.partition, target)
    cluster.fail_next_append(tp.partition)
    cluster.run_for(10_000)
    cluster.move_coordinator("group-1", to_broker=target)
    cluster.run_for(10_000)
    assert cluster.brokers[target].runtime.context_state(tp).name == "FAILED"
    # A later election at a higher epoch retries the load.
    other = next(b for b in p.isr if b != target)
    cluster.move_coordinator("group-1", to_broker=other)
    cluster.run_for(20_000)
    assert cluster.group()["state"] == "Stable"
    cluster.monitor.assert_ok()


def test_stale_generation_is_fenced_on_commit():
    cluster = run_scenario("long-gc-pause")
    svc = cluster.brokers[cluster.coordinator_for("group-1")].service
    gen = cluster.group()["generation"]
    member = cluster.consumer("consumer-2").member_id
    f = svc.commit_offsets(RequestContext("zombie"), OffsetCommitRequest(
        "group-1", gen - 1, member, {("orders", 0): PartitionData(1)}))
    cluster.run_for(100)
    assert f.result().errors[("orders", 0)] is Errors.ILLEGAL_GENERATION


def test_static_membership_rolling_restart_has_no_rebalance_dynamic_has_some():
    static = run_scenario("rolling-restart-static", trace_level="INFO")
    dynamic = run_scenario("rolling-restart", trace_level="INFO")
    assert len(kinds(static, "rebalance_started")) == 1  # only the initial one
    assert static.group()["generation"] == 1
    assert len(kinds(dynamic, "rebalance_started")) >= 4
    assert len(kinds(static, "static_member_replaced")) == 3


def test_misuse_is_refused_with_clear_messages():
    cluster = Cluster()
    with pytest.raises(KeyError, match="no consumer named 'ghost'; known consumers: none"):
        cluster.crash("ghost")
    cluster.add_consumer("a")
    cluster.crash("a")
    with pytest.raises(RuntimeError, match="can't pause consumer a: it has crashed"):
        cluster.pause("a", 100)
    cluster.add_consumer("b")
    with pytest.raises(ValueError, match="a pause must last more than 0 ms, got -5"):
        cluster.pause("b", -5)
    with pytest.raises(ValueError, match="processing_ms must be >= 0"):
        cluster.slow_poll("b", -1)
    with pytest.raises(ValueError, match="there is already a consumer named 'b'"):
        cluster.add_consumer("b")
    with pytest.raises(ValueError, match="unknown topic"):
        cluster.add_consumer("c", topics=("nope",))


def test_config_errors_are_refused_by_key():
    with pytest.raises(ValueError, match="heartbeat.interval.ms .* must be lower than "
                                         "session.timeout.ms"):
        ConsumerConfig("g", session_timeout_ms=3000, heartbeat_interval_ms=3000)
    with pytest.raises(ValueError, match="round-robin"):
        ConsumerConfig("g", partition_assignment_strategy=("round-robin",))
    with pytest.raises(ValueError, match="unknown consumer config 'session.timeout'"):
        ConsumerConfig.from_properties({"group.id": "g", "session.timeout": 1})
    cluster = new_cluster(trace_level="INFO")
    c = cluster.add_consumer("tiny", session_timeout_ms=5000, heartbeat_interval_ms=1000)
    cluster.run_for(5_000)
    assert c.fatal is Errors.INVALID_SESSION_TIMEOUT
    assert any("JoinGroup failed due to fatal error: The session timeout is not within the "
               "range allowed by the broker" in ln for ln in cluster.log_lines("ERROR"))


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(ACTIONS + ("append",)),
                          st.integers(0, 3), st.sampled_from([500, 5_000, 20_000, 60_000])),
                min_size=1, max_size=6))
def test_random_fault_schedules_keep_the_invariants(schedule):
    cluster = new_cluster(trace_level="INFO")
    for i in range(3):
        cluster.add_consumer(f"c{i}")
    cluster.run_for(8_000)
    extra = 3
    for action, who, ms in schedule:
        extra = apply_fault(cluster, action, who, ms, extra)
        cluster.run_for(ms)
    cluster.run_for(60_000)
    cluster.monitor.check()
    cluster.monitor.assert_ok()


def test_monitor_reports_a_double_owner():
    cluster = run_scenario("second-joins", trace_level="INFO")
    c1, c2 = cluster.consumer("consumer-1"), cluster.consumer("consumer-2")
    c2.owned.add(next(iter(c1.owned)))  # tamper: the monitor must notice
    monitor = InvariantMonitor(cluster)
    monitor.check()
    assert monitor.violations and monitor.violations[0].invariant == "single owner"


# -- misuse refused, the broker's limits, every assignor end to end, durability ----------------

def test_more_misuse_is_refused_with_what_to_do_instead():
    cluster = Cluster()
    cluster.add_consumer("a")
    cluster.run_for(100)
    with pytest.raises(ValueError, match=r"no partition __consumer_offsets-9; the offsets topic "
                                         r"has partitions 0\.\.2"):
        cluster.fail_next_append(9)
    with pytest.raises(ValueError, match=r"no broker 7; the cluster has brokers \[0, 1, 2\]"):
        cluster.fail_next_load(0, 7)
    with pytest.raises(ValueError, match="no broker 9"):
        cluster.stall_replica(0, 9)
    with pytest.raises(TypeError, match="a pause is a whole number of milliseconds, got 1.5"):
        cluster.pause("a", 1.5)
    with pytest.raises(ValueError, match="down_ms must be a whole number of milliseconds >= 0, "
                                         "got -1"):
        cluster.restart_consumer("a", -1)
    assert cluster.consumer("a").running  # the refused restart did not close it
    with pytest.raises(ValueError, match=r"unknown consumer setting 'session_timeout' \(did you "
                                         r"mean session_timeout_ms\?\)"):
        cluster.add_consumer("b", session_timeout=10_000)
    with pytest.raises(KeyError, match="no scenario 'nope'; known: consumer-joins"):
        run_scenario("nope")
    cluster.leave("a")
    with pytest.raises(RuntimeError, match=r"can't pause consumer a: it was closed and has left "
                                           r"the group \(cluster.restart_consumer\('a'\)"):
        cluster.pause("a", 100)
    restarted = cluster.restart_consumer("a", down_ms=500)
    with pytest.raises(RuntimeError, match="it is not running yet; it starts at 600 ms"):
        cluster.drop_heartbeats("a")
    cluster.run_for(1_000)
    assert restarted.running


def test_a_crashed_consumer_can_be_restarted():
    """restart_consumer on a crashed process starts a new one (no close of the dead one): a
    static member back within the session timeout takes its place without a rebalance."""
    cluster = new_cluster(trace_level="INFO")
    for i in (1, 2):
        cluster.add_consumer(f"c{i}", group_instance_id=f"instance-{i}")
    cluster.run_for(10_000)
    generation = cluster.group()["generation"]
    cluster.crash("c1")
    cluster.run_for(5_000)
    cluster.restart_consumer("c1", down_ms=1_000)
    cluster.run_for(10_000)
    assert cluster.group()["generation"] == generation
    assert cluster.consumer("c1").state is MemberState.STABLE and cluster.consumer("c1").owned
    assert kinds(cluster, "static_member_replaced")
    cluster.monitor.assert_ok()


def test_session_timeout_above_the_broker_maximum_is_invalid():
    """GroupCoordinatorService.joinGroup: outside [group.min.session.timeout.ms,
    group.max.session.timeout.ms] the JoinGroup gets INVALID_SESSION_TIMEOUT, fatal for the
    consumer; the bounds are the broker's configs."""
    cluster = new_cluster(trace_level="INFO",
                          group_config={"group.max.session.timeout.ms": 60_000,
                                        "offsets.topic.num.partitions": 3})
    big = cluster.add_consumer("big", session_timeout_ms=60_001)
    fits = cluster.add_consumer("fits", session_timeout_ms=60_000)
    cluster.run_for(10_000)
    assert big.fatal is Errors.INVALID_SESSION_TIMEOUT and big.state is MemberState.UNJOINED
    assert fits.fatal is None and fits.state is MemberState.STABLE
    with pytest.raises(ValueError, match=r"group.min.session.timeout.ms \(70000\) must not be "
                                         r"above group.max.session.timeout.ms \(60000\)"):
        Cluster(group_config={"group.min.session.timeout.ms": 70_000,
                              "group.max.session.timeout.ms": 60_000})
    with pytest.raises(ValueError, match="unknown group coordinator config 'group.max.session'"):
        Cluster(group_config={"group.max.session": 1})


def test_an_unknown_assignor_is_refused_listing_the_known_ones():
    with pytest.raises(ValueError) as err:
        ConsumerConfig("g", partition_assignment_strategy=("range", "round-robin"))
    for name in ("round-robin", "range", "roundrobin", "sticky", "cooperative-sticky"):
        assert name in str(err.value)


@pytest.mark.parametrize("strategy", ["range", "roundrobin", "sticky", "cooperative-sticky"])
def test_each_assignor_runs_a_group_through_joins_leaves_and_a_crash(strategy):
    """Eager and cooperative rebalancing, each assignor, end to end: every partition owned
    exactly once after each change, cooperative members never give up what stays with them."""
    cluster = new_cluster(trace_level="INFO", topics={"orders": 12})
    for i in range(3):
        cluster.add_consumer(f"c{i}", partition_assignment_strategy=(strategy,))
    cluster.run_for(15_000)
    steps = [lambda: cluster.add_consumer("c3", partition_assignment_strategy=(strategy,)),
             lambda: cluster.leave("c0"), lambda: cluster.crash("c1")]
    for step in steps:
        step()
        cluster.run_for(60_000)
        live = [c for c in cluster.consumers.values() if c.running and not c.crashed]
        owned = sorted(tp for c in live for tp in c.owned)
        assert owned == sorted(TopicPartition("orders", p) for p in range(12)), strategy
        assert max(len(c.owned) for c in live) - min(len(c.owned) for c in live) <= 1
        assert all(c.state is MemberState.STABLE for c in live)
    revoked = [x for c in cluster.consumers.values() for x in c.listener_calls
               if x.callback == "onPartitionsRevoked"]
    if strategy == "cooperative-sticky":
        assert all(len(x.partitions) < 6 for x in revoked)  # only what moves
    cluster.monitor.assert_ok()


@pytest.mark.parametrize("strategy, moved", [("sticky", 3), ("cooperative-sticky", 3),
                                             ("range", 6)])
def test_a_fourth_member_takes_only_its_share_with_the_sticky_assignors(strategy, moved):
    """The eager StickyAssignor remembers its last assignment and sends it in its subscription's
    user data (Java's StickyAssignor.subscriptionUserData): 12 partitions, 3 -> 4 members, only
    3 move; range moves 6."""
    cluster = new_cluster(trace_level="INFO", topics={"orders": 12})
    for i in range(3):
        cluster.add_consumer(f"c{i}", partition_assignment_strategy=(strategy,))
    cluster.run_for(15_000)
    before = {n: set(c.owned) for n, c in cluster.consumers.items()}
    cluster.add_consumer("c3", partition_assignment_strategy=(strategy,))
    cluster.run_for(20_000)
    after = {n: set(c.owned) for n, c in cluster.consumers.items()}
    assert sum(len(before[n] - after[n]) for n in before) == moved
    assert sorted(len(p) for p in after.values()) == [3, 3, 3, 3]
    cluster.monitor.assert_ok()


def test_sticky_user_data_is_javas_encoding():
    """StickyAssignor user data v1 (no version header) as kafka-python's StickyAssignorUserData
    encodes it; v0 (no generation) still reads."""
    from kafka.coordinator.assignors.sticky.user_data import StickyAssignorUserData as Peer

    from coordinator_kit.group.protocol import StickyAssignorUserData

    ours = StickyAssignorUserData((TopicPartition("b", 2), TopicPartition("a", 1),
                                   TopicPartition("a", 0)), 7)
    peer = Peer(previous_assignment=[("a", [0, 1]), ("b", [2])], generation=7)
    assert ours.encode() == peer.encode(header=False)
    assert StickyAssignorUserData.decode(ours.encode()) == ours
    v0 = StickyAssignorUserData.decode(ours.encode()[:-4])
    assert v0 is not None and v0.generation == -1 and v0.previous_assignment == \
        ours.previous_assignment
    assert StickyAssignorUserData.decode(b"") is None
    assert StickyAssignorUserData.decode(b"\x00\x00") is None


@settings(max_examples=10, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["move", "stall", "resume", "append", "commit", "run"]),
                          st.integers(0, 2), st.sampled_from([200, 2_000, 8_000])),
                min_size=2, max_size=8))
def test_acknowledged_offsets_survive_any_number_of_failovers(schedule):
    """An offset commit answered NONE is durable: after coordinator moves, stalled replicas and
    failed appends, the group's committed offset of that partition is never below it, and the
    monitor saw committed offsets neither lost nor moving back (commits wait for the high
    watermark; a new leader replays them)."""
    cluster = new_cluster(trace_level="INFO")
    for i in range(2):
        cluster.add_consumer(f"c{i}")
    cluster.run_for(12_000)
    acknowledged: dict[tuple[str, int], int] = {}

    def ledger(sent):
        if sent.api == "OffsetCommit" and sent.group_id == "group-1":
            for tp, error in sent.response.errors.items():
                if error is Errors.NONE:
                    offset = sent.request.offsets[tp].offset
                    acknowledged[tp] = max(offset, acknowledged.get(tp, offset))

    for broker in cluster.brokers.values():
        broker.service.add_response_listener(ledger)
    tp = cluster.partition_of("group-1")
    partition = cluster.partitions[tp]
    for action, who, ms in schedule:
        followers = [b for b in partition.replicas if b != partition.leader_id]
        if action == "move" and len([b for b in partition.isr if b != partition.leader_id]):
            cluster.move_coordinator("group-1")
        elif action == "stall":
            cluster.stall_replica(tp.partition, followers[who % len(followers)])
        elif action == "resume":
            for b in followers:
                cluster.stall_replica(tp.partition, b, False)
        elif action == "append":
            cluster.fail_next_append(tp.partition)
        elif action == "commit":
            cluster.consumer(f"c{who % 2}").commit_sync()
        cluster.run_for(ms)
    for b in partition.replicas:
        if b != partition.leader_id:
            cluster.stall_replica(tp.partition, b, False)
    cluster.run_for(30_000)
    committed = cluster.committed_offsets()
    assert acknowledged, "no commit was acknowledged"
    for key, offset in acknowledged.items():
        assert committed.get(key, -1) >= offset, (key, offset, committed.get(key))
    cluster.monitor.check()
    cluster.monitor.assert_ok()


def test_monitor_reports_offsets_lost_in_a_failover(monkeypatch):
    """Break the load: the new coordinator replays no OffsetCommit record. The monitor sees the
    committed offsets gone after the failover."""
    from coordinator_kit.group.offsets import OffsetMetadataManager

    cluster = run_scenario("second-joins", trace_level="INFO")
    cluster.run_for(6_000)
    assert cluster.committed_offsets()
    monkeypatch.setattr(OffsetMetadataManager, "replay", lambda self, offset, record: None)
    cluster.move_coordinator("group-1")
    cluster.run_for(3_000)
    lost = [v.detail for v in cluster.monitor.violations if v.invariant == "committed offsets kept"]
    assert len(lost) >= 6 and all(d.startswith("committed offset ") and " is gone from broker "
                                  in d for d in lost)


# -- running fast without changing what happens ---------------------------------------------------

def _jsonl(cluster: Cluster) -> str:
    out = io.StringIO()
    cluster.trace.write_jsonl(out)
    return out.getvalue()


def _stepped_to(cluster: Cluster, until_ms: int) -> int:
    """Run a cluster one scheduler callback at a time (what the panel's step button does)."""
    sched, steps = cluster.scheduler, 0
    while (due := sched.peek()) is not None and due <= until_ms:
        sched.step()
        steps += 1
    sched.run_until(until_ms)
    return steps


def test_run_for_takes_fewer_steps_with_the_same_trace_as_stepping():
    """`Cluster.run_for` lets each broker's event processor run its queued events back to back
    (and its scheduler skips the lock): the same events, in the same order, at the same virtual
    times, as stepping one callback at a time, in fewer scheduler steps."""
    def build() -> Cluster:
        cluster = new_cluster(seed=3, trace_level="DEBUG")
        for i in range(4):
            cluster.add_consumer(f"c{i}", processing_ms=1000)
        return cluster

    fast, stepped = build(), build()
    assert fast.scheduler._threadsafe is False
    ran = fast.run_for(8_000)
    fast.crash("c1")
    fast.move_coordinator("group-1")
    ran += fast.run_for(60_000)
    steps = _stepped_to(stepped, 8_000)
    stepped.crash("c1")
    stepped.move_coordinator("group-1")
    steps += _stepped_to(stepped, 68_000)
    assert _jsonl(fast) == _jsonl(stepped)
    assert len(fast.trace) > 500 and ran < steps
    assert [c.describe() for c in fast.consumers.values()] == \
        [c.describe() for c in stepped.consumers.values()]
    # a step still runs one coordinator event: the processors are back to one per step
    assert all(b.runtime.processor.max_events_per_step == 1 for b in fast.brokers.values())
