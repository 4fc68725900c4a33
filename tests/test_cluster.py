"""Consumers and brokers together: scenarios, faults and invariants (issue 3; client-coordinator.md
§2-§5, kafka-coordinator-spec.md §3)."""

from __future__ import annotations

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
    """client-coordinator.md §2 steps 1-7, in the Java client's words."""
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
@given(st.lists(st.tuples(st.sampled_from(["crash", "pause", "slow", "drop", "cut", "heal",
                                           "move", "add", "leave", "append"]),
                          st.integers(0, 3), st.sampled_from([500, 5_000, 20_000, 60_000])),
                min_size=1, max_size=6))
def test_random_fault_schedules_keep_the_invariants(schedule):
    cluster = new_cluster(trace_level="INFO")
    for i in range(3):
        cluster.add_consumer(f"c{i}")
    cluster.run_for(8_000)
    extra = 3
    for action, who, ms in schedule:
        live = [c.name for c in cluster.consumers.values() if c.running and not c.crashed]
        name = live[who % len(live)] if live else None
        if action == "add" or name is None:
            cluster.add_consumer(f"c{extra}")
            extra += 1
        elif action == "crash" and len(live) > 1:
            cluster.crash(name)
        elif action == "pause":
            cluster.pause(name, ms)
        elif action == "slow":
            cluster.slow_poll(name, ms)
        elif action == "drop":
            cluster.drop_heartbeats(name, True)
        elif action == "cut":
            cluster.cut_off(name, True)
        elif action == "heal":
            cluster.cut_off(name, False)
            cluster.drop_heartbeats(name, False)
            cluster.slow_poll(name, 100)
        elif action == "move":
            cluster.move_coordinator("group-1")
        elif action == "leave" and len(live) > 1:
            cluster.leave(name)
        elif action == "append":
            cluster.fail_next_append(cluster.partition_of("group-1").partition)
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
