"""What a member consumes while its group rebalances (eager against cooperative, KIP-429; Java's
ConsumerCoordinator.onJoinPrepare / onJoinComplete, AbstractCoordinator.joinGroupIfNeeded,
SubscriptionState.isFetchable, read at apache/kafka 4.0.0-SNAPSHOT, 1eb7644).

COOPERATIVE: onJoinPrepare revokes nothing that is still subscribed, so the owned partitions stay
assigned and fetchable while JoinGroup and SyncGroup are in flight; only what onJoinComplete
revokes stops. EAGER: onJoinPrepare revokes everything, nothing is consumed until
onPartitionsAssigned. After a cooperative revocation joinGroupIfNeeded loops (a rejoin is
needed), so the follow-up JoinGroup leaves in the same poll() as onJoinComplete."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coordinator_kit.client import MemberState
from coordinator_kit.scenarios import new_cluster
from coordinator_kit.topic import TopicPartition
from faults import ACTIONS, apply_fault

REBALANCING = (MemberState.PREPARING_REBALANCE, MemberState.COMPLETING_REBALANCE)


def tp(p: int) -> TopicPartition:
    return TopicPartition("orders", p)


def second_joins(strategy: str, **config):
    """consumer-1 Stable alone on orders-0..5 at 10 s, then consumer-2 joins; one sample per
    virtual ms of consumer-1 from 10 s to 16 s: (ms, state, rejoin needed, consumed, positions)."""
    cluster = new_cluster(0, consumer_defaults={"partition_assignment_strategy": (strategy,),
                                                **config})
    cluster.add_consumer("consumer-1")
    cluster.run_for(10_000)
    cluster.add_consumer("consumer-2")
    c1 = cluster.consumer("consumer-1")
    samples = []
    for _ in range(6_000):
        cluster.run_for(1)
        samples.append((cluster.scheduler.now, c1.state, c1.rejoin_needed, c1.consumed,
                        dict(c1.positions)))
    cluster.monitor.assert_ok()
    return cluster, samples


def test_a_cooperative_member_keeps_consuming_what_it_owns_while_the_group_rebalances():
    cluster, samples = second_joins("cooperative-sticky")
    c1 = cluster.consumer("consumer-1")
    calls = [(x.ts, x.callback, x.partitions, x.generation) for x in c1.listener_calls]
    revoked_at = next(ts for ts, cb, _, _ in calls if cb == "onPartitionsRevoked")
    assert [(cb, ps) for ts, cb, ps, _ in calls if ts == revoked_at] == [
        ("onPartitionsRevoked", (tp(3), tp(4), tp(5))), ("onPartitionsAssigned", ())]
    rebalancing = [s for s in samples if s[1] in REBALANCING or s[2]]
    # first rebalance (JoinGroup/SyncGroup in flight, nothing revoked yet): all six advance
    first = [s for s in rebalancing if s[0] < revoked_at]
    assert first, "consumer-1 polled while the first rebalance was in progress"
    before = next(s for s in reversed(samples) if s[0] < first[0][0])
    assert all(first[-1][4][tp(p)] > before[4][tp(p)] for p in range(6))
    # the follow-up rebalance: 0-2 keep advancing, 3-5 were revoked and stop
    follow_up = [s for s in rebalancing if s[0] >= revoked_at]
    assert follow_up[-1][0] - follow_up[0][0] > 2_000  # it waits for consumer-2's heartbeat
    assert set(follow_up[0][4]) == {tp(0), tp(1), tp(2)}
    for p in range(3):
        assert follow_up[-1][4][tp(p)] >= follow_up[0][4][tp(p)] + 200  # 10 per 100 ms poll
    for a, b in zip(follow_up, follow_up[1:]):  # what it consumed is what 0-2 advanced
        assert b[3] - a[3] == sum(b[4][tp(p)] - a[4][tp(p)] for p in range(3))
    assert all(tp(p) not in s[4] for s in follow_up for p in (3, 4, 5))
    assert sorted(c1.owned) == [tp(0), tp(1), tp(2)]
    assert sorted(cluster.consumer("consumer-2").owned) == [tp(3), tp(4), tp(5)]


def test_an_eager_member_consumes_nothing_between_revoked_and_assigned():
    cluster, samples = second_joins("range")
    c1 = cluster.consumer("consumer-1")
    revoked = [x for x in c1.listener_calls if x.callback == "onPartitionsRevoked"]
    assigned = [x for x in c1.listener_calls if x.callback == "onPartitionsAssigned"]
    assert len(revoked) == 1 and len(revoked[0].partitions) == 6
    back = next(x for x in assigned if x.ts >= revoked[0].ts)
    window = [s for s in samples if revoked[0].ts <= s[0] < back.ts]
    assert window and all(s[1] in REBALANCING for s in window)
    assert {s[3] for s in window} == {window[0][3]}  # not one record
    assert all(not s[4] for s in window)  # every position dropped with the revocation
    assert samples[-1][3] > window[0][3]  # and it consumes again once assigned


@pytest.mark.parametrize("auto_commit", [True, False])
def test_the_follow_up_join_group_leaves_in_the_poll_that_handled_the_sync_group(auto_commit):
    """Java: onJoinComplete revokes and requests a rejoin; joinGroupIfNeeded loops while a
    rejoin is needed, so onJoinPrepare and the follow-up JoinGroup run in that same poll(). (With
    auto-commit on, Java's onJoinPrepare first waits for its OffsetCommit's answer; the kit does
    not model that wait, for any JoinGroup.)"""
    cluster, _ = second_joins("cooperative-sticky", enable_auto_commit=auto_commit)
    events = [e for e in cluster.trace.events if e.source == "client-consumer-1"]
    synced = [e for e in events if e.kind == "synced"]
    assert [e.fields["generation"].generation_id for e in synced] == [1, 2, 3]
    at = synced[1].ts
    kinds = [e.kind for e in events if e.ts == at]
    assert kinds.index("synced") < kinds.index("partitions_revoked") \
        < kinds.index("rejoin_requested") < kinds.index("join_sent")
    broker = [e for e in cluster.trace.events if e.kind == "rebalance_started"
              and "need to revoke" in str(e.fields)]
    assert len(broker) == 1 and broker[0].ts - at <= 2  # one network hop, not a poll later


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(ACTIONS),
                          st.integers(0, 3), st.sampled_from([500, 5_000, 20_000, 60_000])),
                min_size=1, max_size=6))
def test_cooperative_members_under_random_faults_keep_the_invariants(schedule):
    """Consuming through rebalances changes nothing about ownership: no partition owned by two
    members of the group at the same time (the monitor checks it on every event), and a member
    only ever has positions for partitions it owns."""
    cluster = new_cluster(trace_level="INFO", consumer_defaults={
        "partition_assignment_strategy": ("cooperative-sticky",)})
    for i in range(3):
        cluster.add_consumer(f"c{i}")
    cluster.run_for(8_000)
    extra = 3
    for action, who, ms in schedule:
        extra = apply_fault(cluster, action, who, ms, extra)
        for _ in range(ms // 500):
            cluster.run_for(500)
            assert all(set(c.positions) <= c.owned for c in cluster.consumers.values())
    cluster.run_for(60_000)
    cluster.monitor.check()
    cluster.monitor.assert_ok()
