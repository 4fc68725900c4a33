"""Every fault of the `Cluster` on members of the consumer group protocol (KIP-848,
`group.protocol=consumer`): what the coordinator (`GroupMetadataManager`: session timeouts,
`consumerGroupFenceMember`, `onLoaded`) and the client (`ConsumerMembershipManager`,
`ConsumerHeartbeatRequestManager`) do, as Kafka 4.0 does.

Defaults are Kafka's: `group.consumer.session.timeout.ms` 45 s and
`group.consumer.heartbeat.interval.ms` 5 s on the broker, `max.poll.interval.ms` 300 s on the
client. Two members share six partitions; the group is at epoch 2 before each fault.
"""

from __future__ import annotations

from coordinator_kit.cluster import Cluster
from coordinator_kit.errors import Errors

SESSION_MS = 45_000
HEARTBEAT_MS = 5_000


def two_members(**kw) -> Cluster:
    c = Cluster(brokers=3, topics={"orders": 6}, trace_level="INFO", **kw)
    c.add_consumer("c1", group_protocol="consumer")
    c.add_consumer("c2", group_protocol="consumer")
    c.run_for(15_000)
    assert server(c) == ("Stable", 2, {"c1": (2, "STABLE", 3), "c2": (2, "STABLE", 3)})
    return c


def server(c: Cluster, group_id: str = "group-1"):
    """The coordinator's view: group state, group epoch, and per client id the member's epoch,
    server-side MemberState and number of assigned partitions."""
    g = c.shard_for(group_id).consumer_groups.groups.get(group_id)
    return (g.state.value, g.group_epoch,
            {m.client_id: (m.member_epoch, m.state.name, sum(map(len,
                                                                 m.assigned_partitions.values())))
             for m in sorted(g.members.values(), key=lambda m: m.client_id)})


def client(c: Cluster, name: str):
    x = c.consumer(name)
    return str(x.state), x.member_epoch, len(x.owned)


def fenced_at(c: Cluster, member_id: str) -> list[int]:
    """When the coordinator logged `member_id` fenced because its session expired."""
    needle = f"Member {member_id} fenced from the group because the member session expired"
    return [e.ts for e in c.trace.events if e.message is not None and needle in e.message]


def client_lines(c: Cluster, name: str) -> list[str]:
    return [line for line in c.log_lines("INFO") if f"[Consumer clientId={name}," in line]


def stable_after_rejoin(c: Cluster) -> None:
    state, epoch, members = server(c)
    assert state == "Stable" and sorted(members) == ["c1", "c2"]
    assert all(e == epoch and s == "STABLE" and n == 3 for e, s, n in members.values())
    assert client(c, "c1") == ("STABLE", epoch, 3) and client(c, "c2") == ("STABLE", epoch, 3)


def test_crash_expires_the_session_and_the_survivor_takes_everything() -> None:
    # GroupMetadataManager.scheduleConsumerGroupSessionTimeout: no heartbeat for 45 s fences
    # the member; the group epoch bumps and the survivor gets all six partitions
    c = two_members()
    member = c.consumer("c2").member_id
    last_heartbeat = c.scheduler.now
    c.crash("c2")
    c.run_for(SESSION_MS - HEARTBEAT_MS)
    assert server(c)[1] == 2  # not before the session timeout
    c.run_for(2 * HEARTBEAT_MS)
    assert server(c) == ("Stable", 3, {"c1": (3, "STABLE", 6)})
    assert client(c, "c1") == ("STABLE", 3, 6)
    (at,) = fenced_at(c, member)
    assert last_heartbeat - HEARTBEAT_MS + SESSION_MS <= at <= last_heartbeat + SESSION_MS


def test_a_pause_shorter_than_the_session_changes_nothing() -> None:
    c = two_members()
    c.pause("c2", 30_000)
    c.run_for(60_000)
    assert server(c) == ("Stable", 2, {"c1": (2, "STABLE", 3), "c2": (2, "STABLE", 3)})
    assert client(c, "c2") == ("STABLE", 2, 3)


def test_a_pause_longer_than_the_session_fences_then_the_member_rejoins() -> None:
    # after the pause its heartbeat (old epoch, old member id) gets UNKNOWN_MEMBER_ID: the
    # client goes FENCED, drops its partitions (onPartitionsLost) and joins again at epoch 0
    c = two_members()
    c.pause("c2", 60_000)
    c.run_for(50_000)
    assert server(c) == ("Stable", 3, {"c1": (3, "STABLE", 6)})
    assert client(c, "c2") == ("STABLE", 2, 3)  # it has not heard yet: a zombie
    states = []
    c.consumer("c2").on_state_change(lambda consumer, old, new: states.append(str(new)))
    c.run_for(30_000)
    assert states[:2] == ["FENCED", "JOINING"]
    assert any("UNKNOWN_MEMBER_ID" in line for line in client_lines(c, "c2"))
    stable_after_rejoin(c)
    assert server(c)[1] == 4


def test_dropped_heartbeats_fence_the_member_but_it_keeps_consuming_until_it_hears() -> None:
    c = two_members()
    c.drop_heartbeats("c2")
    c.run_for(50_000)
    assert server(c) == ("Stable", 3, {"c1": (3, "STABLE", 6)})
    assert client(c, "c2") == ("STABLE", 2, 3)
    # its auto-commits carry the old member id and epoch: UNKNOWN_MEMBER_ID
    # (ConsumerGroup.validateOffsetCommit)
    assert any("OffsetCommit failed with UNKNOWN_MEMBER_ID" in line
               for line in client_lines(c, "c2"))
    c.drop_heartbeats("c2", False)
    c.run_for(20_000)
    stable_after_rejoin(c)


def test_a_member_cut_off_is_fenced_and_rejoins_when_the_network_is_back() -> None:
    c = two_members()
    c.cut_off("c2")
    c.run_for(50_000)
    assert server(c) == ("Stable", 3, {"c1": (3, "STABLE", 6)})
    c.cut_off("c2", False)
    c.run_for(20_000)
    stable_after_rejoin(c)


def test_a_slow_poll_past_max_poll_interval_leaves_the_group() -> None:
    # the poll timer expires: the client sends a leave heartbeat (epoch -1) and becomes STALE
    # (ConsumerMembershipManager.transitionToSendingLeaveGroup(true)); the coordinator removes
    # it at once ("left the consumer group"), without waiting for the session timeout
    c = Cluster(brokers=3, topics={"orders": 6}, trace_level="INFO")
    c.add_consumer("c1", group_protocol="consumer")
    c.add_consumer("c2", group_protocol="consumer", max_poll_interval_ms=20_000)
    c.run_for(15_000)
    member = c.consumer("c2").member_id
    c.slow_poll("c2", 60_000)
    c.run_for(40_000)
    assert server(c) == ("Stable", 3, {"c1": (3, "STABLE", 6)})
    assert client(c, "c2")[:2] == ("STALE", -1)
    lines = c.log_lines("INFO")
    assert any(f"Member {member} left the consumer group." in line for line in lines)
    assert any("Consumer poll timeout has expired" in line for line in lines)
    c.slow_poll("c2", 100)
    c.run_for(40_000)
    stable_after_rejoin(c)


def test_leave_removes_the_member_at_once() -> None:
    # close(): callbacks release the partitions, then a heartbeat with epoch -1
    c = two_members()
    member = c.consumer("c2").member_id
    c.leave("c2")
    c.run_for(1_000)
    assert server(c) == ("Stable", 3, {"c1": (3, "STABLE", 6)})
    assert client(c, "c2") == ("UNSUBSCRIBED", -1, 0)
    assert any(f"Member {member} left the consumer group." in line
               for line in c.log_lines("INFO"))


def test_a_restarted_consumer_is_a_new_member() -> None:
    c = two_members()
    old = c.consumer("c2").member_id
    c.restart_consumer("c2")
    c.run_for(15_000)
    assert c.consumer("c2").member_id != old
    stable_after_rejoin(c)
    assert server(c)[1] == 4  # one bump for the leave, one for the join


def test_a_coordinator_move_rebuilds_the_group_and_no_epoch_changes() -> None:
    # the new coordinator replays the group's records (GroupMetadataManager.replay) and starts
    # a session timer per member (onLoaded); members answer NOT_COORDINATOR find it again and
    # go on with the same member epochs: no rebalance
    c = two_members()
    old = c.coordinator_for("group-1")
    c.move_coordinator("group-1")
    assert c.coordinator_for("group-1") != old
    c.run_for(60_000)
    assert server(c) == ("Stable", 2, {"c1": (2, "STABLE", 3), "c2": (2, "STABLE", 3)})
    assert any("Loaded consumer group group-1 with 2 members." in line
               for line in c.log_lines("INFO"))
    assert client(c, "c1") == ("STABLE", 2, 3)


def test_a_crash_after_a_coordinator_move_is_timed_by_the_new_coordinator() -> None:
    c = two_members()
    c.move_coordinator("group-1")
    c.run_for(1_000)
    c.crash("c2")
    c.run_for(SESSION_MS + 2 * HEARTBEAT_MS)
    assert server(c) == ("Stable", 3, {"c1": (3, "STABLE", 6)})


def test_a_failed_load_leaves_the_group_unserved_until_leadership_moves_again() -> None:
    # CoordinatorRuntime: a failed load leaves the partition FAILED on that broker, which
    # answers NOT_COORDINATOR; members keep their partitions (no coordinator runs their session
    # timers) and rediscover it every retry.backoff.ms. The next leader loads the group.
    c = two_members()
    tp = c.partition_of("group-1")
    p = c.partitions[tp]
    first, second = [b for b in p.isr if b != p.leader_id][:2]
    c.fail_next_load(tp.partition, first)
    c.move_coordinator("group-1", first)
    c.run_for(60_000)
    assert c.shard_for("group-1") is None
    assert client(c, "c1") == ("STABLE", 2, 3) and client(c, "c2") == ("STABLE", 2, 3)
    assert any("Failed to load metadata from" in line for line in c.log_lines("INFO"))
    assert any("ConsumerGroupHeartbeatRequest failed because the group coordinator" in line
               for line in client_lines(c, "c1"))
    c.move_coordinator("group-1", second)
    c.run_for(30_000)
    assert server(c) == ("Stable", 2, {"c1": (2, "STABLE", 3), "c2": (2, "STABLE", 3)})


def test_a_failed_append_rolls_the_heartbeat_back_and_the_member_retries() -> None:
    # a join whose records fail to append: the write fails (KAFKA_STORAGE_ERROR becomes
    # NOT_COORDINATOR, handleOperationException), the state goes back to before it, and the
    # new member joins on its next attempt
    c = two_members()
    c.fail_next_append(c.partition_of("group-1").partition)
    c.add_consumer("c3", group_protocol="consumer")
    c.run_for(15_000)
    state, epoch, members = server(c)
    assert (state, epoch) == ("Stable", 3)
    assert {k: v[2] for k, v in members.items()} == {"c1": 2, "c2": 2, "c3": 2}
    assert any("Writing records to __consumer_offsets" in line and "failed" in line
               for line in c.log_lines("INFO"))


def test_stalled_replicas_hold_heartbeat_answers_until_the_isr_shrinks() -> None:
    # acks=all: a heartbeat's records are answered only when committed; with both followers
    # stalled nothing commits until replica.lag.time.max.ms (30 s) drops them from the ISR.
    # A join waiting that long times out (offsets.commit.timeout.ms), so the group settles
    # only after the shrink.
    c = two_members()
    tp = c.partition_of("group-1")
    p = c.partitions[tp]
    for b in [b for b in p.isr if b != p.leader_id]:
        c.stall_replica(tp.partition, b)
    c.add_consumer("c3", group_protocol="consumer")
    c.run_for(20_000)
    assert client(c, "c3")[0] == "JOINING"
    c.run_for(60_000)
    assert len(p.isr) == 1
    assert client(c, "c3")[0] == "STABLE"
    state, epoch, members = server(c)
    assert sorted(members) == ["c1", "c2", "c3"]
    assert sum(v[2] for v in members.values()) == 6
