"""The invariant monitor: each invariant holds in real runs, and each one can fail (so none is
vacuous). Kafka's side of each: responses wait in `CoordinatorRuntime`'s deferred queue until
the high watermark passes their records; a loaded group takes the generation of its last
`GroupMetadata` record (`GroupMetadataManager.replay`); `classicGroupSync`,
`classicGroupHeartbeat` and `ClassicGroup.validateOffsetCommit` fence a stale generation."""

from __future__ import annotations

import dataclasses

import pytest

from coordinator_kit.errors import Errors
from coordinator_kit.group.api import (HeartbeatRequest, OffsetCommitRequest, PartitionData,
                                       RequestContext, SyncGroupRequest)
from coordinator_kit.group.manager import GroupMetadataManager
from coordinator_kit.invariants import (NO_RESPONSE_BEFORE_COMMIT, STALE_GENERATION_FENCED,
                                        InvariantMonitor)
from coordinator_kit.runtime import runtime as runtime_module
from coordinator_kit.scenarios import SCENARIOS, new_cluster, run_scenario


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
    entries = records.group_metadata["group-1"]
    entries.append(type(entries[-1])(entries[-1].log_offset + 1, 0, {}))  # tamper
    monitor.check()
    assert broken(monitor, "generations grow")[0].startswith("committed generation went from")


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
