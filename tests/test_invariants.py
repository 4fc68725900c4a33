"""The invariant monitor: each invariant holds in real runs, and each one can fail (so none is
vacuous). Kafka's side of each: responses wait in `CoordinatorRuntime`'s deferred queue until
the high watermark passes their records; a loaded group takes the generation of its last
`GroupMetadata` record (`GroupMetadataManager.replay`); `classicGroupSync`,
`classicGroupHeartbeat` and `ClassicGroup.validateOffsetCommit` fence a stale generation; a new
leader starts from the high watermark it learned as a follower (`Partition.makeLeader`), so its
coordinator can serve an older committed offset for a while, which Kafka allows; retention
deletes offsets with tombstones (`OffsetMetadataManager.cleanupExpiredOffsets`).

Random fault schedules over every fault kind (tests/faults.py) run with the monitor on; each
schedule that made the monitor report a violation before is kept here, shrunk, with what it
turned out to be."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from coordinator_kit.committed import GroupMetadataEntry
from coordinator_kit.errors import Errors
from coordinator_kit.group.api import (HeartbeatRequest, OffsetCommitRequest,
                                       OffsetFetchRequest, PartitionData, RequestContext,
                                       SyncGroupRequest)
from coordinator_kit.group.manager import GroupMetadataManager
from coordinator_kit.group.offsets import OffsetMetadataManager
from coordinator_kit.invariants import (GENERATIONS_GROW, KAFKA_ALLOWS_OFFSET_BEHIND,
                                        NO_RESPONSE_BEFORE_COMMIT, OFFSETS_KEPT, SINGLE_OWNER,
                                        STALE_GENERATION_FENCED, InvariantMonitor)
from coordinator_kit.runtime import runtime as runtime_module
from coordinator_kit.scenarios import SCENARIOS, new_cluster, run_scenario
from faults import ALL_FAULTS, COORDINATOR_FAULTS, apply_coordinator_fault, run_schedule


def broken(monitor: InvariantMonitor, invariant: str) -> list[str]:
    return [v.detail for v in monitor.violations if v.invariant == invariant]


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_every_scenario_checks_the_responses_it_sends(name):
    cluster = run_scenario(name, trace_level="INFO")
    cluster.monitor.assert_ok()
    assert cluster.monitor.responses_checked > 5


# -- no response before its records commit (the deferred queue) -------------------------------

def test_responses_wait_for_their_records_to_commit():
    """A stalled follower holds the high watermark back: the commits and the leader's
    SyncGroup wait, and are answered (and checked) only once the records are committed."""
    cluster = run_scenario("second-joins", trace_level="INFO")
    tp = cluster.partition_of("group-1")
    p = cluster.partitions[tp]
    follower = next(b for b in p.isr if b != p.leader_id)
    cluster.stall_replica(tp.partition, follower)
    cluster.add_consumer("consumer-3")
    cluster.run_for(12_000)  # a rebalance and commits while the ISR still waits for the follower
    assert p.high_watermark < p.log_end_offset
    cluster.stall_replica(tp.partition, follower, False)
    cluster.run_for(40_000)
    assert cluster.group()["state"] == "Stable"
    cluster.monitor.assert_ok()
    assert cluster.monitor.responses_checked > 20


def test_a_response_sent_before_its_records_commit_is_caught(monkeypatch):
    """Break the runtime: release every write's response as soon as its records are appended."""
    original = runtime_module._WriteEvent.run

    def run_and_answer_at_once(self):
        original(self)
        if self.result is not None and self.result.records and not self.future.done():
            self.complete(None)

    monkeypatch.setattr(runtime_module._WriteEvent, "run", run_and_answer_at_once)
    cluster = run_scenario("second-joins", trace_level="INFO")
    cluster.run_for(6_000)  # auto-commits
    early = broken(cluster.monitor, NO_RESPONSE_BEFORE_COMMIT)
    assert any(d.startswith("OffsetCommit response NONE for orders-") for d in early)
    assert any(d.startswith("SyncGroup response NONE") for d in early)
    assert all("is not below the high watermark" in d or "no committed GroupMetadata" in d
               for d in early)


def test_a_static_rejoin_answer_before_its_record_commits_is_caught(monkeypatch):
    """The join of a replaced static member (Stable, no rebalance) waits for its GroupMetadata
    record; answering it from the handler is caught."""
    real = GroupMetadataManager._update_static_member

    def answer_at_once(self, ctx, request, group, old_id, new_id, response):
        result = real(self, ctx, request, group, old_id, new_id, response)
        if result.append_future is not None and group.state.value == "Stable":
            member = group.member(new_id)
            group.complete_join_future(member, self._join_response(
                group, new_id, leader_view=False))
        return result

    monkeypatch.setattr(GroupMetadataManager, "_update_static_member", answer_at_once)
    cluster = run_scenario("rolling-restart-static", trace_level="INFO")
    early = broken(cluster.monitor, NO_RESPONSE_BEFORE_COMMIT)
    joins = [d for d in early if d.startswith("JoinGroup response NONE to instance-")]
    assert joins and all("no committed GroupMetadata record of that generation lists the "
                         "member" in d for d in joins)
    # the member then syncs before its record commits: that answer is caught as well
    assert all(d.startswith(("JoinGroup response NONE", "SyncGroup response NONE"))
               for d in early)


# -- generations grow (committed) --------------------------------------------------------------

def test_failover_in_completing_rebalance_resumes_from_the_committed_generation():
    """The join phase bumped the generation in memory only; the new coordinator loads the last
    committed GroupMetadata record, one generation back, as Kafka's does. Not a violation;
    the members that joined into the lost generation rejoin."""
    cluster = run_scenario("second-joins", trace_level="INFO")
    committed = cluster.group()["generation"]
    cluster.add_consumer("consumer-3")
    cluster.run_until(lambda: cluster.group()["state"] == "CompletingRebalance")
    assert cluster.group()["generation"] == committed + 1
    cluster.move_coordinator("group-1")
    cluster.run_until(lambda: cluster.group()["state"] is not None, limit_ms=5_000)
    cluster.run_until(lambda: cluster.group()["generation"] is not None and
                      cluster.group()["generation"] >= 0, limit_ms=5_000)
    assert cluster.group()["generation"] == committed
    cluster.run_for(30_000)
    assert cluster.group()["state"] == "Stable" and len(cluster.group()["members"]) == 3
    cluster.monitor.assert_ok()


def test_a_committed_generation_going_back_is_caught():
    cluster = run_scenario("second-joins", trace_level="INFO")
    monitor = cluster.monitor
    records = monitor.committed_records("group-1")
    # tamper: the reader hands on a committed GroupMetadata record of generation 0
    records.on_group_metadata("group-1", GroupMetadataEntry(records.next_offset, 0, {}))
    assert broken(monitor, GENERATIONS_GROW)[0].startswith("committed generation went from")


# -- a member with a stale generation is fenced -----------------------------------------------

def stale_requests(cluster):
    """Heartbeat, SyncGroup and OffsetCommit of a live member, one generation back."""
    svc = cluster.brokers[cluster.coordinator_for("group-1")].service
    gen = cluster.group()["generation"]
    member = cluster.consumer("consumer-2").member_id
    ctx = RequestContext("zombie")
    futures = [
        svc.heartbeat(ctx, HeartbeatRequest("group-1", gen - 1, member)),
        svc.sync_group(ctx, SyncGroupRequest("group-1", gen - 1, member)),
        svc.commit_offsets(ctx, OffsetCommitRequest("group-1", gen - 1, member,
                                                    {("orders", 0): PartitionData(1)})),
    ]
    cluster.run_for(100)
    return [f.result() for f in futures]


def test_stale_generations_get_illegal_generation():
    cluster = run_scenario("long-gc-pause", trace_level="INFO")
    heartbeat, sync, commit = stale_requests(cluster)
    assert heartbeat.error is Errors.ILLEGAL_GENERATION
    assert sync.error is Errors.ILLEGAL_GENERATION
    assert commit.errors[("orders", 0)] is Errors.ILLEGAL_GENERATION
    cluster.monitor.assert_ok()


def test_kafkas_exceptions_are_not_violations():
    """Generation -1 carries no generation (an admin commit: refused here for the non-empty
    group with UNKNOWN_MEMBER_ID); a heartbeat reaching a loading coordinator gets a blind NONE
    (`GroupCoordinatorService.heartbeat`)."""
    cluster = run_scenario("second-joins", trace_level="INFO")
    svc = cluster.brokers[cluster.coordinator_for("group-1")].service
    commit = svc.commit_offsets(RequestContext("admin"), OffsetCommitRequest(
        "group-1", -1, "", {("orders", 0): PartitionData(1)}))
    cluster.run_for(100)
    assert commit.result().errors[("orders", 0)] is Errors.UNKNOWN_MEMBER_ID
    gen = cluster.group()["generation"]
    member = cluster.consumer("consumer-1").member_id
    cluster.move_coordinator("group-1")
    broker = cluster.brokers[cluster.coordinator_for("group-1")]
    blind = broker.service.heartbeat(RequestContext("x"),
                                     HeartbeatRequest("group-1", gen - 1, member))
    cluster.scheduler.run_pending()
    assert broker.runtime.context_state(cluster.partition_of("group-1")).name == "LOADING"
    assert blind.result().error is Errors.NONE  # loading: answered without a look
    cluster.run_for(20_000)
    cluster.monitor.assert_ok()


def test_a_stale_generation_answered_none_is_caught(monkeypatch):
    """Break the coordinator: heartbeats, syncs and commits no longer look at the generation."""
    def ignore_generation(handler, field="generation_id"):
        def handle(self, ctx, request, *rest):
            groups = self.groups if isinstance(self, GroupMetadataManager) else self.groups.groups
            group = groups.get(request.group_id)
            if group is not None:
                request = dataclasses.replace(request, **{field: group.generation_id})
            return handler(self, ctx, request, *rest)
        return handle

    from coordinator_kit.group.offsets import OffsetMetadataManager
    monkeypatch.setattr(GroupMetadataManager, "classic_group_heartbeat",
                        ignore_generation(GroupMetadataManager.classic_group_heartbeat))
    monkeypatch.setattr(GroupMetadataManager, "classic_group_sync",
                        ignore_generation(GroupMetadataManager.classic_group_sync))
    monkeypatch.setattr(OffsetMetadataManager, "commit_offset",
                        ignore_generation(OffsetMetadataManager.commit_offset,
                                          "generation_id_or_member_epoch"))
    cluster = run_scenario("long-gc-pause", trace_level="INFO")
    cluster.monitor.assert_ok()  # a correct client never sends a stale generation here
    stale_requests(cluster)
    fenced = broken(cluster.monitor, STALE_GENERATION_FENCED)
    assert [d.split(" from ")[0] for d in fenced] == ["Heartbeat", "SyncGroup", "OffsetCommit"]
    assert all("answered NONE" in d for d in fenced)


def test_a_known_member_fenced_with_the_wrong_error_is_caught(monkeypatch):
    """Kafka checks the generation right after the member: a known member with a stale
    generation gets ILLEGAL_GENERATION, not another error."""
    real = GroupMetadataManager.classic_group_heartbeat

    def rebalance_instead(self, ctx, request):
        group = self.groups.get(request.group_id)
        if group is not None and request.generation_id != group.generation_id:
            raise Errors.REBALANCE_IN_PROGRESS.exception()
        return real(self, ctx, request)

    monkeypatch.setattr(GroupMetadataManager, "classic_group_heartbeat", rebalance_instead)
    cluster = run_scenario("second-joins", trace_level="INFO")
    stale_requests(cluster)
    fenced = broken(cluster.monitor, STALE_GENERATION_FENCED)
    assert len(fenced) == 1 and "answered REBALANCE_IN_PROGRESS" in fenced[0]
    assert fenced[0].endswith("a known member gets ILLEGAL_GENERATION")


def test_monitoring_does_not_change_the_run():
    """The monitor only reads: the same scenario with and without it has the same trace."""
    watched = run_scenario("coordinator-failover", trace_level="DEBUG").log_lines("DEBUG")
    import coordinator_kit.scenarios as scenarios

    plain = scenarios.Cluster(seed=0, trace_level="DEBUG")
    plain.add_consumer("consumer-1")
    plain.run_for(10_000)
    plain.add_consumer("consumer-2")
    plain.run_for(10_000)
    plain.run_for(6_000)
    plain.move_coordinator("group-1")
    plain.run_for(15_000)
    assert plain.log_lines("DEBUG") == watched


# -- committed offsets: what Kafka allows, what it deletes on purpose, what is lost ------------

def stall_and_move(cluster):
    """Right after an auto-commit is acknowledged (the leader's high watermark passed it, the
    followers learn it with the next fetch response), stall one follower and move leadership
    to the other: the new leader starts at the high watermark it had learned."""
    tp = cluster.partition_of("group-1")
    p = cluster.partitions[tp]
    assert p.leader_id == 2 and p.high_watermark == 27
    assert {b: r.high_watermark for b, r in p.replicas.items()} == {2: 27, 0: 21, 1: 21}
    cluster.stall_replica(tp.partition, 0)
    cluster.move_coordinator("group-1", 1)
    return p


def test_a_new_leader_behind_serves_older_offsets_which_kafka_allows():
    """`Partition.makeLeader` keeps the new leader's high watermark (21, learned as a follower,
    below the old leader's 27) and `Replica.resetReplicaState` forgets the followers' ends; a
    stalled follower in the ISR keeps `maybeIncrementLeaderHW` from moving it until it leaves
    the ISR (`replica.lag.time.max.ms` after the election). The loader replays the whole log but
    commits only up to that high watermark (`CoordinatorLoaderImpl`), and reads run at the
    committed offset (`CoordinatorReadEvent`, `OffsetMetadataManager.fetchOffsets`): offsets
    acknowledged at 2210 read back 1710 until then. Not a violation: a named regression. A
    stable read (the consumer's `require_stable`) never sees the older offset: it waits for the
    latest state to commit, and times out while the high watermark cannot move."""
    cluster = run_scenario("second-joins", trace_level="INFO")
    cluster.run_for(3_000)
    p = stall_and_move(cluster)
    cluster.run_for(10)
    assert p.high_watermark == 21 and p.isr == [2, 0, 1]
    svc, admin = cluster.brokers[1].service, RequestContext("admin")
    read = svc.fetch_offsets(admin, OffsetFetchRequest("group-1", None))
    stable = svc.fetch_offsets(admin, OffsetFetchRequest("group-1", (("orders", 0),),
                                                         require_stable=True))
    cluster.run_for(10)
    assert {tp: o.offset for tp, o in read.result().offsets.items()} == {
        ("orders", i): 1710 for i in range(6)}
    assert not stable.done()  # waits for the latest state to commit
    cluster.run_for(6_000)
    assert stable.result().error is Errors.NOT_COORDINATOR  # timed out, never the old offset
    regressions = cluster.monitor.regressions
    assert [(r.topic, r.partition, r.was, r.now, r.record_offset, r.high_watermark, r.leader,
             r.ts, r.kind) for r in regressions] == [
        ("orders", i, 2210, 1710, 21 + i, 21, 1, 23_001, KAFKA_ALLOWS_OFFSET_BEHIND)
        for i in range(6)]
    assert all(r.restored_ms is None for r in regressions)
    cluster.run_until(lambda: p.high_watermark > 21, limit_ms=60_000)
    assert cluster.scheduler.now == 60_000 and p.isr == [2, 1]  # 37 s after the election
    assert any("Shrinking ISR from 2,0,1 to 2,1. Leader: (highWatermark: 21, endOffset: 69)"
               in line for line in cluster.log_lines())
    cluster.run_for(100)
    assert all(r.restored_ms == 60_000 for r in regressions)
    assert str(regressions[0]) == ("orders-0 (group-1): 1710 instead of 2210 on broker 1, 23001 "
                                   "to 60000 ms (high watermark 21, record at 21)")
    cluster.monitor.check()
    cluster.monitor.assert_ok()
    assert cluster.monitor.summary()["regressions_kafka_allows"] == 6


def test_the_regression_ends_as_soon_as_the_stalled_follower_fetches_again():
    cluster = run_scenario("second-joins", trace_level="INFO")
    cluster.run_for(3_000)
    p = stall_and_move(cluster)
    cluster.run_for(5_000)
    cluster.stall_replica(p.tp.partition, 0, False)
    cluster.run_for(100)
    assert p.isr == [2, 0, 1] and p.high_watermark > 27
    assert [r.restored_ms for r in cluster.monitor.regressions] == [28_001] * 6
    cluster.monitor.check()
    cluster.monitor.assert_ok()


def test_offsets_lost_from_the_new_leaders_log_are_a_violation(monkeypatch):
    """The same move, but the new coordinator does not replay the OffsetCommit records of the
    last committed batch: below its high watermark that is a loss, not a regression."""
    cluster = run_scenario("second-joins", trace_level="INFO")
    cluster.run_for(3_000)
    real = OffsetMetadataManager.replay

    def replay_but_forget(self, offset, record):
        if offset < 21 or offset >= 27:
            real(self, offset, record)

    with monkeypatch.context() as patched:
        patched.setattr(OffsetMetadataManager, "replay", replay_but_forget)
        p = stall_and_move(cluster)
        cluster.stall_replica(p.tp.partition, 0, False)
        cluster.run_for(100)
    lost = broken(cluster.monitor, OFFSETS_KEPT)
    assert lost and all("went back from 2210 to 1710" in d for d in lost)


def retention_cluster():
    """Two consumers commit, then leave; with `offsets.retention.minutes` = 1 the empty group's
    offsets expire at the first cleanup (`offsets.retention.check.interval.ms`, 10 min)."""
    cluster = new_cluster(trace_level="INFO", group_config={"offsets.retention.minutes": 1})
    cluster.add_consumer("consumer-1")
    cluster.add_consumer("consumer-2")
    cluster.run_for(20_000)
    cluster.leave("consumer-1")
    cluster.leave("consumer-2")
    cluster.run_for(12 * 60_000)
    return cluster


def test_offsets_expired_by_retention_are_deletions_not_losses():
    """`GroupCoordinatorShard.cleanupGroupMetadata` runs `cleanupExpiredOffsets`: a tombstone per
    expired offset, then one for the empty group. The monitor reads the tombstones the
    coordinator wrote: those offsets are gone on purpose."""
    cluster = retention_cluster()
    assert cluster.committed_offsets() == {}
    assert any("Generated 7 tombstone records while cleaning up group metadata" in line
               for line in cluster.log_lines())
    cluster.monitor.check()
    cluster.monitor.assert_ok()
    summary = cluster.monitor.summary()
    assert summary["offsets_deleted"] == 6 and summary["committed_partitions"] == 0


def test_offsets_dropped_without_a_tombstone_are_lost(monkeypatch):
    """A coordinator that forgets expired offsets when it loads the log, without writing a
    tombstone for them, loses them: the monitor tells that from an expiry."""
    cluster = new_cluster(trace_level="INFO", group_config={"offsets.retention.minutes": 1})
    cluster.add_consumer("consumer-1")
    cluster.run_for(20_000)
    cluster.leave("consumer-1")
    cluster.run_for(2 * 60_000)  # expired by the rule, but no cleanup has run yet
    real = OffsetMetadataManager.replay

    def replay_expiring(self, offset, record):
        if record.value is not None and self.time.now - record.value["commitTimestamp"] \
                >= self.config.offsets_retention_ms:
            return  # dropped in memory, no tombstone in the log
        real(self, offset, record)

    with monkeypatch.context() as patched:
        patched.setattr(OffsetMetadataManager, "replay", replay_expiring)
        cluster.move_coordinator("group-1")
        cluster.run_for(100)
    cluster.monitor.check()
    lost = broken(cluster.monitor, OFFSETS_KEPT)
    assert len(lost) == 6 and all(" is gone from broker 0's coordinator" in d for d in lost)
    assert cluster.monitor.summary()["offsets_deleted"] == 0


def test_a_group_deleted_and_joined_again_before_its_tombstone_commits():
    """Shrunk from random schedules after the group's members left, with retention at one
    minute: the cleanup's tombstones wait for a stalled follower, and a consumer joins. The
    shard's latest state lost the group when it replayed the tombstone
    (`GroupMetadataManager.replay`), so the JoinGroup creates it anew at generation 0, below the
    committed generation 2. Kafka does the same: not a violation while the tombstone is in the
    log above the high watermark. (The monitor reported "the coordinator is at generation 0,
    below the committed generation 2".)"""
    cluster = new_cluster(trace_level="DEBUG", group_config={
        "offsets.retention.minutes": 1, "offsets.retention.check.interval.ms": 20_000})
    for i in range(2):
        cluster.add_consumer(f"c{i}")
    cluster.run_for(20_000)
    for i in range(2):
        cluster.leave(f"c{i}")
    tp = cluster.partition_of("group-1")
    p = cluster.partitions[tp]
    cluster.run_for(40_000)
    cluster.fail_next_append(tp.partition)  # the first cleanup's tombstones fail to append
    cluster.run_for(40_000)
    cluster.stall_replica(tp.partition, 0)  # the second cleanup's wait for the follower
    cluster.run_for(100)
    cluster.add_consumer("late")
    cluster.run_for(100)
    assert cluster.group()["generation"] == 0 and p.high_watermark < p.log_end_offset
    cluster.leave("late")
    cluster.run_for(100)
    cluster.monitor.assert_ok()
    cluster.stall_replica(tp.partition, 0, False)
    cluster.run_for(60_000)
    cluster.monitor.check()
    cluster.monitor.assert_ok()
    assert cluster.monitor.summary()["offsets_deleted"] == 6


# -- random fault schedules, and what each one the monitor once reported turned out to be -------

@pytest.mark.parametrize("schedule, level, static, regressions", [
    # a move, a stalled follower, a move to the other follower: offsets read back older
    # ("committed offset went back from 1600 to 1100"): Kafka allows it
    ([("move", 0, 10_000), ("stall", 0, 100), ("move", 0, 100)], "DEBUG", False, 6),
    # the same with nothing committed before for two partitions ("committed offset 1100 is
    # gone"): the new coordinator serves no offset for them until its high watermark moves
    ([("crash", 0, 4_000), ("stall", 1, 50), ("move", 0, 50)], "DEBUG", True, 4),
    # a stall and a move while the coordinator loads: the monitor looked at the half-replayed
    # group ("the coordinator is at generation 0, below the committed generation 1"); a loading
    # coordinator serves nobody (COORDINATOR_LOAD_IN_PROGRESS), the monitor now waits for it
    ([("stall", 1, 100), ("move", 0, 100)], "DEBUG", False, 0),
])
def test_shrunk_fault_schedules_keep_the_invariants(schedule, level, static, regressions):
    cluster = new_cluster(trace_level=level)
    if static:
        for i in range(3):
            cluster.add_consumer(f"c{i}", group_instance_id=f"i{i}")
        run_schedule(cluster, schedule, consumers=0)
    else:
        run_schedule(cluster, schedule)
    cluster.monitor.check()
    cluster.monitor.assert_ok()
    assert len(cluster.monitor.regressions) == regressions
    assert all(r.restored_ms is not None for r in cluster.monitor.regressions)


def violations_of(monitor):
    return sorted((v.invariant, v.detail) for v in monitor.violations)


EVERY_FAULT = [("add", 0, 500), ("pause", 1, 5_000), ("slow", 2, 500), ("drop", 0, 500),
               ("cut", 1, 5_000), ("heal", 0, 500), ("append", 0, 500), ("stall", 1, 500),
               ("move", 0, 5_000), ("heal", 1, 500), ("load", 0, 5_000), ("move", 0, 500),
               ("crash", 2, 5_000), ("leave", 1, 20_000)]


@settings(max_examples=200, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(ALL_FAULTS), st.integers(0, 3),
                          st.sampled_from([50, 500, 5_000, 20_000])), min_size=1, max_size=8),
       st.sampled_from(["range", "cooperative-sticky"]))
@example(EVERY_FAULT, "range")
@example(EVERY_FAULT, "cooperative-sticky")
def test_fault_schedules_of_every_kind_keep_the_invariants(schedule, strategy):
    """Every fault kind, the monitor looking at every DEBUG event: no violation, and the
    incremental checks agree with a monitor that rescans every member and every committed
    offset at each look."""
    cluster = new_cluster(trace_level="DEBUG", consumer_defaults={
        "partition_assignment_strategy": (strategy,)})
    rescanning = InvariantMonitor(cluster, thorough=True)
    run_schedule(cluster, schedule)
    cluster.monitor.check()
    rescanning.check()
    assert violations_of(cluster.monitor) == violations_of(rescanning)
    assert cluster.monitor.regressions == rescanning.regressions
    cluster.monitor.assert_ok()


@settings(max_examples=100, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(COORDINATOR_FAULTS + ("join",)), st.integers(0, 3),
                          st.sampled_from([100, 2_000, 15_000, 40_000])), min_size=1, max_size=8))
def test_coordinator_faults_while_an_empty_groups_offsets_expire(schedule):
    """The group's members leave; with `offsets.retention.minutes` = 1 and a cleanup every
    20 s its offsets expire and the group is deleted while its coordinator moves, fails appends
    and loads, and loses followers, and consumers come and go ("join": one joins and leaves).
    The deletions are tombstones the coordinator wrote: never a loss."""
    cluster = new_cluster(trace_level="DEBUG", group_config={
        "offsets.retention.minutes": 1, "offsets.retention.check.interval.ms": 20_000})
    rescanning = InvariantMonitor(cluster, thorough=True)
    for i in range(2):
        cluster.add_consumer(f"c{i}")
    cluster.run_for(20_000)
    for i in range(2):
        cluster.leave(f"c{i}")
    for n, (action, who, ms) in enumerate(schedule):
        if action == "join":
            cluster.add_consumer(f"late-{n}")
            cluster.run_for(ms)
            cluster.leave(f"late-{n}")
        else:
            apply_coordinator_fault(cluster, action, who)
        cluster.run_for(ms)
    apply_coordinator_fault(cluster, "resume", 0)
    cluster.run_for(1_000)
    p = cluster.partitions[cluster.partition_of("group-1")]
    if cluster.brokers[p.leader_id].runtime.context_state(p.tp).name != "ACTIVE":
        apply_coordinator_fault(cluster, "move", 0)  # after a failed load
    # a LeaveGroup lost in a move leaves its member to expire (session.timeout.ms, 45 s) before
    # the group is empty, then retention (60 s) and a cleanup (every 20 s) whose tombstones get
    # appended (failed appends make it wait for the next one)

    def deleted() -> bool:  # committed: gone from what the active coordinator serves
        ctx = cluster.brokers[p.leader_id].runtime.context(p.tp)
        if ctx is None or ctx.state.name != "ACTIVE":
            return False
        coordinator = ctx.coordinator
        return coordinator.shard.offsets.offsets.get(
            "group-1", epoch=coordinator.last_committed_offset) is None
    cluster.run_until(deleted, limit_ms=600_000)
    cluster.run_for(1_000)
    cluster.monitor.check()
    rescanning.check()
    assert violations_of(cluster.monitor) == violations_of(rescanning)
    cluster.monitor.assert_ok()
    assert cluster.monitor.summary()["offsets_deleted"] >= 6


def test_every_fault_kind_is_in_the_schedules():
    from faults import ACTIONS
    assert set(ALL_FAULTS) == set(ACTIONS) | {"append", "load", "stall"}
    assert {action for action, _, _ in EVERY_FAULT} == set(ALL_FAULTS)


# -- the monitor's cost does not grow with the group ---------------------------------------------

def test_a_double_owner_is_caught_at_the_consumers_look():
    """The per-event look checks the consumer whose event it is against who owns each of its
    partitions (and whether that owner still does), without a rescan of the group."""
    cluster = run_scenario("second-joins", trace_level="INFO")
    c1, c2 = cluster.consumer("consumer-1"), cluster.consumer("consumer-2")
    monitor = InvariantMonitor(cluster)
    monitor.check()  # learns who owns what
    stolen = min(c1.owned)
    c2.owned.add(stolen)  # tamper
    monitor._check_owner(c2)
    assert broken(monitor, SINGLE_OWNER) == [
        f"{stolen} owned by consumer-1 and consumer-2 in generation 2"]
    c1.owned.discard(stolen)  # consumer-1 lets go: the index moves on without a violation
    monitor._check_owner(c2)
    assert len(monitor.violations) == 1


@pytest.mark.parametrize("members", [30, 300])
def test_each_look_examines_what_changed_not_the_group(members, monkeypatch):
    """A join of `members` consumers: the consumers the monitor examines per look stay a few,
    whatever the size (it rescanned every member at each look before: O(members^2))."""
    examined = [0]
    real = InvariantMonitor._valid

    def counting(self, consumer, generation, members_):
        examined[0] += 1
        return real(self, consumer, generation, members_)

    monkeypatch.setattr(InvariantMonitor, "_valid", counting)
    cluster = new_cluster(trace_level="INFO", topics={"orders": members})
    for i in range(members):
        cluster.add_consumer(f"c{i}")
    cluster.run_until(lambda: cluster.group()["state"] == "Stable"
                      and len(cluster.group()["members"]) == members, limit_ms=60_000)
    cluster.run_for(10_000)
    monitor = cluster.monitor
    assert monitor.checks > 3 * members
    assert examined[0] <= 2 * monitor.checks
    monitor.assert_ok()
