"""KIP-848 consumer groups under random fault schedules (tests/faults.py's vocabulary: crash,
pause, slow poll, dropped heartbeats, cut off, heal, coordinator move, leave, failed append and
load, stalled follower) with `ConsumerGroupMonitor` on: at most one member processes a
partition at any moment, epochs only grow, no commit is accepted at a stale member epoch
(`CurrentAssignmentBuilder`'s partition epochs, `ConsumerGroup.validateOffsetCommit`). Each
invariant is also shown to fail when it is broken, so none is vacuous."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coordinator_kit.client.async_consumer import AsyncConsumer
from coordinator_kit.cluster import Cluster
from coordinator_kit.consumer_group_invariants import (CG_EPOCHS_GROW, CG_SINGLE_OWNER,
                                                       CG_STALE_COMMIT, ConsumerGroupMonitor)
from coordinator_kit.errors import Errors
from coordinator_kit.group.api import OffsetCommitRequest, PartitionData, RequestContext
from faults import ALL_FAULTS, run_schedule


def new_cluster() -> tuple[Cluster, ConsumerGroupMonitor]:
    cluster = Cluster(brokers=3, topics={"orders": 6}, trace_level="INFO",
                      consumer_defaults={"group_protocol": "consumer"})
    return cluster, ConsumerGroupMonitor(cluster)


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(ALL_FAULTS), st.integers(0, 3),
                          st.integers(1, 70_000)), max_size=6))
def test_consumer_group_invariants_hold_under_any_fault_schedule(schedule):
    cluster, monitor = new_cluster()
    run_schedule(cluster, schedule, consumers=3, settle_ms=60_000)
    monitor.check()
    monitor.assert_ok()
    assert monitor.batches > 0 and monitor.checks > 0
    live = [c for c in cluster.consumers.values() if c.running and not c.crashed]
    assert all(isinstance(c, AsyncConsumer) for c in cluster.consumers.values())
    # after the heal and the settling minute every live member is in the group, and the
    # partitions are spread over them with none held twice
    owned = [tp for c in live for tp in c.owned]
    assert len(owned) == len(set(owned))


def test_the_monitor_catches_a_partition_held_twice():
    cluster, monitor = new_cluster()
    a, b = cluster.add_consumer("a"), cluster.add_consumer("b")
    cluster.run_for(15_000)
    b.owned |= set(a.owned)  # b takes a's partitions without the coordinator...
    b.positions.update(a.positions)
    cluster.run_for(200)  # ...and processes them: caught on the batch
    assert any(v.invariant == CG_SINGLE_OWNER and "which the coordinator has not assigned"
               in v.detail for v in monitor.violations)
    monitor.check()  # and on the state
    assert any(v.invariant == CG_SINGLE_OWNER and "held by a and b" in v.detail
               for v in monitor.violations)


def test_the_monitor_catches_an_epoch_going_down():
    cluster, monitor = new_cluster()
    a = cluster.add_consumer("a")
    cluster.add_consumer("b")
    cluster.run_for(15_000)
    monitor.check()
    a.membership.epochs.append((a.member_id, 1))  # as if epoch 1 came after 2
    monitor.check()
    assert any(v.invariant == CG_EPOCHS_GROW for v in monitor.violations)


def test_the_monitor_catches_a_commit_accepted_at_a_stale_epoch(monkeypatch):
    cluster, monitor = new_cluster()
    a = cluster.add_consumer("a")
    cluster.add_consumer("b")
    cluster.run_for(15_000)
    from coordinator_kit.group.modern.consumer_group import ConsumerGroup
    monkeypatch.setattr(ConsumerGroup, "validate_offset_commit",
                        lambda self, *args, **kw: None)  # a coordinator that forgot to check
    svc = cluster.brokers[cluster.coordinator_for("group-1")].service
    f = svc.commit_offsets(RequestContext("a"), OffsetCommitRequest(
        "group-1", a.member_epoch - 1, a.member_id, {("orders", 0): PartitionData(1)},
        version=9))
    cluster.run_until(f.done, limit_ms=5_000)
    assert f.result().errors[("orders", 0)] is Errors.NONE
    assert [v.invariant for v in monitor.violations] == [CG_STALE_COMMIT]
