"""The broker's classic group coordinator, request by request (Kafka's `GroupMetadataManager`,
classic paths, and `OffsetMetadataManager`)."""

from __future__ import annotations

import pytest

from coordinator_kit.cluster import Cluster
from coordinator_kit.errors import Errors, IllegalStateTransition
from coordinator_kit.group.api import (HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest,
                                       MemberIdentity, OffsetCommitRequest, OffsetFetchRequest,
                                       PartitionData, RequestContext, SyncGroupRequest)
from coordinator_kit.group.classic import CLASSIC_GROUP_STATES, ClassicGroupState, Protocol
from coordinator_kit.group.config import GroupCoordinatorConfig
from coordinator_kit.group.protocol import ConsumerProtocolSubscription
from coordinator_kit.group.service import java_string_hashcode, partition_for

G = ClassicGroupState
SUB = ConsumerProtocolSubscription(("orders",)).encode()


class Rig:
    """One broker, one offsets partition, requests sent straight to the service."""

    def __init__(self, brokers: int = 1, **config) -> None:
        props = {"offsets.topic.num.partitions": 1, **config}
        self.cluster = Cluster(brokers=brokers, group_config=props, trace_level="DEBUG")
        self.svc = self.cluster.brokers[0].service
        self.run(10)

    def run(self, ms: int) -> None:
        self.cluster.run_for(ms)

    def join(self, member_id: str = "", client: str = "c", instance: str | None = None,
             session_ms: int = 45000, rebalance_ms: int = 300000, protocols=None,
             reason: str | None = None, version: int = 9):
        req = JoinGroupRequest("g", session_ms, rebalance_ms, member_id, "consumer",
                               tuple(protocols or (Protocol("range", SUB),)), instance, reason)
        return self.svc.join_group(RequestContext(client, api_version=version), req)

    def join_member(self, client: str, instance: str | None = None) -> str:
        """The MEMBER_ID_REQUIRED round trip (dynamic) or the direct join (static)."""
        f = self.join("", client, instance)
        self.run(2)
        if instance is not None:
            return ""
        assert f.result().error is Errors.MEMBER_ID_REQUIRED
        return f.result().member_id

    def sync(self, member_id: str, generation: int, assignments=None, instance=None):
        return self.svc.sync_group(RequestContext("c"), SyncGroupRequest(
            "g", generation, member_id, instance, "consumer", "range", assignments or {}))

    def heartbeat(self, member_id: str, generation: int, instance=None):
        return self.svc.heartbeat(RequestContext("c"),
                                  HeartbeatRequest("g", generation, member_id, instance))

    def group(self):
        return self.cluster.shard_for("g").groups.groups.get("g")

    def lines(self, level="INFO"):
        return self.cluster.log_lines(level)


def stable_group(rig: Rig, clients=("a", "b")) -> dict[str, str]:
    ids = {c: rig.join_member(c) for c in clients}
    joins = {c: rig.join(ids[c], c) for c in clients}
    rig.cluster.run_until(lambda: all(f.done() for f in joins.values()), limit_ms=20_000)
    gen = joins[clients[0]].result().generation_id
    leader = joins[clients[0]].result().leader
    syncs = [rig.sync(ids[c], gen, {m: b"x" for m in ids.values()} if ids[c] == leader else {})
             for c in clients]
    rig.run(50)
    assert all(s.result().error is Errors.NONE for s in syncs)
    assert rig.group().state is G.STABLE
    return ids


# -- the state table (ClassicGroupState.validPreviousStates) ---------------------------------------

ALLOWED = {G.EMPTY: {G.PREPARING_REBALANCE},
           G.PREPARING_REBALANCE: {G.EMPTY, G.COMPLETING_REBALANCE, G.STABLE},
           G.COMPLETING_REBALANCE: {G.PREPARING_REBALANCE},
           G.STABLE: {G.COMPLETING_REBALANCE},
           G.DEAD: set(G)}


@pytest.mark.parametrize("source", list(G))
@pytest.mark.parametrize("target", list(G))
def test_classic_group_transition_table_is_spec_3_3(source, target):
    assert CLASSIC_GROUP_STATES.can_transition(source, target) == (source in ALLOWED[target])
    if source not in ALLOWED[target]:
        with pytest.raises(IllegalStateTransition, match=f"from {source.name} to {target.name}"):
            CLASSIC_GROUP_STATES.check(source, target)


# -- JoinGroup (classicGroupJoin) ------------------------------------------------------------------

def test_first_join_gets_member_id_required_and_a_client_prefixed_id():
    rig = Rig()
    f = rig.join("", "client-7")
    rig.run(2)
    r = f.result()
    assert r.error is Errors.MEMBER_ID_REQUIRED and r.member_id.startswith("client-7-")
    assert rig.group().state is G.EMPTY and r.member_id in rig.group().pending_join_members
    assert any("Created a new member id " + r.member_id + " and requesting the member to "
               "rejoin with this id." in ln for ln in rig.lines())


def test_old_join_version_adds_the_member_directly():
    rig = Rig()
    f = rig.join("", "old", version=3)
    rig.run(3100)
    assert f.result().error is Errors.NONE and f.result().generation_id == 1


def test_initial_rebalance_delay_is_extended_while_members_arrive_and_capped():
    """group.initial.rebalance.delay.ms (KIP-134): 3 s initial delay, extended in 3 s steps, capped
    by the rebalance timeout (`tryCompleteInitialRebalanceElseSchedule`)."""
    rig = Rig()
    a = rig.join_member("a")
    fa = rig.join(a, "a", rebalance_ms=8000)
    start = rig.cluster.scheduler.now
    for i in range(5):  # a new member every 2 s keeps extending the delay
        rig.run(2000)
        m = rig.join_member(f"n{i}")
        rig.join(m, f"n{i}", rebalance_ms=8000)
    rig.run(20000)
    done_at = [e.ts for e in rig.cluster.trace.of_kind("group_stabilized")][0]
    assert done_at - start == 8000  # 3000 + 3000 + 2000 (remaining), not 3 s after the last one
    assert fa.result().generation_id == 1


def test_join_with_unknown_member_id_on_missing_group_is_unknown_member():
    rig = Rig()
    f = rig.join("ghost-1")
    rig.run(2)
    assert f.result().error is Errors.UNKNOWN_MEMBER_ID


def test_session_timeout_out_of_bounds_is_invalid_session_timeout():
    rig = Rig()
    for timeout in (5999, 1_800_001):
        f = rig.join("", session_ms=timeout)
        assert f.result().error is Errors.INVALID_SESSION_TIMEOUT
    assert Errors.INVALID_SESSION_TIMEOUT.code == 26


def test_protocol_selection_by_vote_and_inconsistent_protocol():
    rig = Rig()
    rr, rng = Protocol("roundrobin", SUB), Protocol("range", SUB)
    a = rig.join_member("a")
    b = rig.join_member("b")
    c = rig.join_member("c")
    fa = rig.join(a, "a", protocols=(rr, rng))
    rig.join(b, "b", protocols=(rng, rr))
    rig.join(c, "c", protocols=(rr, rng))
    rig.run(6100)  # the initial delay was extended once: members kept arriving
    assert fa.result().protocol_name == "roundrobin"  # two votes to one
    bad = rig.join("", "d", protocols=(Protocol("sticky", SUB),))
    rig.run(2)
    assert bad.result().error is Errors.INCONSISTENT_GROUP_PROTOCOL


def test_join_completion_drops_dynamic_members_that_did_not_rejoin():
    rig = Rig()
    ids = {c: rig.join_member(c) for c in ("a", "b")}
    joins = [rig.join(ids[c], c, rebalance_ms=10_000) for c in ("a", "b")]
    rig.cluster.run_until(lambda: all(f.done() for f in joins))
    leader = joins[0].result().leader
    other = ids["b"] if leader == ids["a"] else ids["a"]
    rig.sync(leader, 1, {ids["a"]: b"", ids["b"]: b""})
    rig.sync(other, 1)
    rig.run(20)
    rejoin = rig.join(leader, "a", rebalance_ms=10_000, reason="test")  # leader rejoins
    rig.run(10_100)  # the other never rejoins: the rebalance timeout (10 s) ends the phase
    assert rejoin.result().error is Errors.NONE and rejoin.result().generation_id == 2
    assert list(rig.group().members) == [leader]
    assert any(f"Group g removed dynamic members who haven't joined: [{other}]" in ln
               for ln in rig.lines())


def test_group_max_size_refuses_the_extra_member():
    rig = Rig(**{"group.max.size": 1})
    stable_group(rig, ("a",))
    f = rig.join("", "b")  # refused before the MEMBER_ID_REQUIRED round trip
    rig.run(10)
    assert f.result().error is Errors.GROUP_MAX_SIZE_REACHED and f.result().member_id == ""


# -- SyncGroup (classicGroupSync) ------------------------------------------------------------------

def test_followers_wait_for_the_leader_and_stable_only_after_the_record_commits():
    rig = Rig()
    ids = {c: rig.join_member(c) for c in ("a", "b")}
    ja, jb = rig.join(ids["a"], "a"), rig.join(ids["b"], "b")
    rig.cluster.run_until(lambda: ja.done() and jb.done())
    gen, leader = ja.result().generation_id, ja.result().leader
    follower = ids["b"] if leader == ids["a"] else ids["a"]
    assert ja.result().members if leader == ids["a"] else jb.result().members
    fs = rig.sync(follower, gen)
    rig.run(50)
    assert not fs.done() and rig.group().state is G.COMPLETING_REBALANCE
    p = rig.cluster.partitions[rig.cluster.partition_of("g")]
    for b in (1, 2):
        if b in p.replicas:
            p.stall_replica(b)
    ls = rig.sync(leader, gen, {ids["a"]: b"A", ids["b"]: b"B"})
    rig.run(50)
    assert rig.group().state is G.COMPLETING_REBALANCE or len(p.replicas) == 1
    rig.run(100)
    assert rig.group().state is G.STABLE
    assert {fs.result().assignment, ls.result().assignment} == {b"A", b"B"}


def test_sync_errors():
    rig = Rig()
    ids = stable_group(rig, ("a", "b"))
    gen = rig.group().generation_id
    assert_err = lambda f, e: (rig.run(5), f.result().error is e)[1]  # noqa: E731
    assert assert_err(rig.sync(ids["a"], 99), Errors.ILLEGAL_GENERATION)
    assert assert_err(rig.sync("nobody", gen), Errors.UNKNOWN_MEMBER_ID)
    rig.join(ids["a"], "a")  # a rejoins; the group waits for b in PreparingRebalance
    assert assert_err(rig.sync(ids["b"], gen), Errors.REBALANCE_IN_PROGRESS)


# -- Heartbeat (classicGroupHeartbeat) -------------------------------------------------------------

def test_heartbeat_answers_per_state():
    rig = Rig()
    ids = {c: rig.join_member(c) for c in ("a", "b")}
    ja = rig.join(ids["a"], "a")
    rig.join(ids["b"], "b")
    rig.cluster.run_until(ja.done)
    gen = ja.result().generation_id
    hb = rig.heartbeat(ids["a"], gen)
    rig.run(5)
    assert rig.group().state is G.COMPLETING_REBALANCE and hb.result().error is Errors.NONE
    stale = rig.heartbeat(ids["a"], gen - 1)
    unknown = rig.heartbeat("x", gen)
    rig.run(5)
    assert stale.result().error is Errors.ILLEGAL_GENERATION
    assert unknown.result().error is Errors.UNKNOWN_MEMBER_ID
    rig.join(ids["a"], "a", protocols=(Protocol("range", SUB), Protocol("roundrobin", SUB)))
    rig.run(5)
    hb = rig.heartbeat(ids["b"], gen)
    rig.run(5)
    assert rig.group().state is G.PREPARING_REBALANCE
    assert hb.result().error is Errors.REBALANCE_IN_PROGRESS


def test_heartbeat_to_a_loading_coordinator_is_answered_none():
    rig = Rig()
    ids = stable_group(rig, ("a",))
    rt = rig.cluster.brokers[0].runtime
    tp = rig.cluster.partition_of("g")
    rt.loader.slow_next_load(tp, 1000)
    rt.schedule_unload_operation(tp, 1)
    rt.schedule_load_operation(tp, 2)
    rig.run(5)
    hb = rig.heartbeat(ids["a"], 1)
    join = rig.join("", "z")
    rig.run(5)
    assert hb.result().error is Errors.NONE
    assert join.result().error is Errors.COORDINATOR_LOAD_IN_PROGRESS


# -- LeaveGroup and session expiry (classicGroupLeave, expireClassicGroupMemberHeartbeat) ----------

def test_last_member_leaving_makes_the_group_empty_with_a_new_generation():
    rig = Rig()
    ids = stable_group(rig, ("a",))
    f = rig.svc.leave_group(RequestContext("c"),
                            LeaveGroupRequest("g", (MemberIdentity(ids["a"], None, "bye"),)))
    rig.run(20)
    assert f.result().members[0].error is Errors.NONE
    assert rig.group().state is G.EMPTY and rig.group().generation_id == 2
    assert any(f"[Group g] Member {ids['a']} has left group through explicit `LeaveGroup` "
               f"request; client reason: bye" in ln for ln in rig.lines())


def test_session_expiry_removes_the_member_and_rebalances():
    rig = Rig()
    ids = stable_group(rig, ("a", "b"))
    t0 = rig.cluster.scheduler.now
    for _ in range(20):  # a keeps heartbeating every 3 s, b is silent
        rig.heartbeat(ids["a"], rig.group().generation_id)
        rig.run(3000)
    expired = [e for e in rig.cluster.trace.of_kind("member_session_expired")]
    assert expired and expired[0].fields["member"] == ids["b"]
    assert 44_900 <= expired[0].ts - t0 <= 45_100


def test_pending_member_that_never_rejoins_expires():
    rig = Rig()
    m = rig.join_member("a")
    rig.run(45_010)
    assert m not in rig.group().pending_join_members
    assert any(f"Pending member {m} in group g has been removed after session timeout "
               f"expiration." in ln for ln in rig.lines())


# -- static membership (KIP-345) -------------------------------------------------------------------

def test_static_member_replacement_fences_the_old_id_without_a_rebalance():
    rig = Rig()
    f = rig.join("", "s", instance="i-1")
    rig.run(3100)
    old = f.result().member_id
    assert old.startswith("i-1-")
    rig.sync(old, 1, {old: b"A"}, instance="i-1")
    rig.run(50)
    again = rig.join("", "s", instance="i-1")  # restart with the same group.instance.id
    rig.run(50)
    new = again.result()
    assert new.error is Errors.NONE and new.member_id != old and new.generation_id == 1
    assert rig.group().state is G.STABLE and rig.group().members[new.member_id].assignment == b"A"
    stale = rig.heartbeat(old, 1, instance="i-1")
    rig.run(5)
    assert stale.result().error is Errors.FENCED_INSTANCE_ID
    assert any("Static member which joins during Stable stage and doesn't affect the selected "
               "protocol will not trigger a rebalance." in ln for ln in rig.lines())


# -- offsets (OffsetMetadataManager.commitOffset, fetchOffsets) ------------------------------------

def commit(rig, gen, member, offsets, instance=None, version=8):
    return rig.svc.commit_offsets(RequestContext("c"), OffsetCommitRequest(
        "g", gen, member, {k: PartitionData(v) for k, v in offsets.items()}, instance,
        version=version))


def test_offset_commit_validation():
    rig = Rig()
    f = commit(rig, 1, "m", {("t", 0): 1})
    rig.run(20)
    assert f.result().errors[("t", 0)] is Errors.ILLEGAL_GENERATION
    f = commit(rig, 1, "m", {("t", 0): 1}, version=9)
    rig.run(20)
    assert f.result().errors[("t", 0)] is Errors.GROUP_ID_NOT_FOUND
    f = commit(rig, -1, "", {("t", 0): 5})  # admin/simple commit creates a simple group
    rig.run(20)
    assert f.result().all_ok() and rig.group().protocol_type is None
    ids = {c: rig.join_member(c) for c in ("a",)}
    ja = rig.join(ids["a"], "a")
    rig.run(3100)
    f = commit(rig, 1, ids["a"], {("t", 0): 6})
    rig.run(20)
    assert f.result().errors[("t", 0)] is Errors.REBALANCE_IN_PROGRESS  # CompletingRebalance
    rig.sync(ids["a"], ja.result().generation_id, {ids["a"]: b""})
    rig.run(20)
    f = commit(rig, 0, ids["a"], {("t", 0): 7})
    rig.run(20)
    assert f.result().errors[("t", 0)] is Errors.ILLEGAL_GENERATION
    big = rig.svc.commit_offsets(RequestContext("c"), OffsetCommitRequest(
        "g", 1, ids["a"], {("t", 0): PartitionData(8, metadata="x" * 5000),
                           ("t", 1): PartitionData(9)}))
    rig.run(20)
    assert big.result().errors == {("t", 0): Errors.OFFSET_METADATA_TOO_LARGE,
                                   ("t", 1): Errors.NONE}


def test_offset_fetch_reads_at_the_committed_offset():
    rig = Rig(brokers=3)
    commit(rig, -1, "", {("t", 0): 5})
    rig.run(20)
    p = rig.cluster.partitions[rig.cluster.partition_of("g")]
    for b in p.replicas:
        if b != p.leader_id:
            p.stall_replica(b)
    pending = commit(rig, -1, "", {("t", 0): 6})
    rig.run(20)
    f = rig.svc.fetch_offsets(RequestContext("c"), OffsetFetchRequest("g", (("t", 0), ("t", 1))))
    rig.run(2)
    assert not pending.done()
    assert f.result().offsets[("t", 0)].offset == 5 and f.result().offsets[("t", 1)].offset == -1


# -- replay after a coordinator move (GroupMetadataManager.replay) ---------------------------------

def test_groups_and_offsets_survive_a_coordinator_move():
    cluster = Cluster(brokers=3, offsets_partitions=1)
    svc = cluster.brokers[0].service
    cluster.run_for(10)
    rig = Rig.__new__(Rig)
    rig.cluster, rig.svc = cluster, svc
    ids = stable_group(rig, ("a", "b"))
    ok = commit(rig, rig.group().generation_id, ids["a"], {("orders", 0): 11, ("orders", 1): 12})
    cluster.run_for(50)
    assert ok.result().all_ok()
    before = rig.group()
    epoch = cluster.move_coordinator(0, to_broker=1)
    cluster.run_for(50)
    after = cluster.shard_for("g").groups.groups.get("g")
    assert epoch == 1 and cluster.coordinator_for("g") == 1
    assert (after.state, after.generation_id, list(after.members), after.leader_id,
            after.protocol_name) == (G.STABLE, before.generation_id, list(before.members),
                                     before.leader_id, before.protocol_name)
    assert cluster.committed_offsets("g") == {("orders", 0): 11, ("orders", 1): 12}
    assert any("Loaded classic group g with 2 members." in ln for ln in cluster.log_lines())


def test_group_to_partition_uses_javas_string_hashcode():
    assert java_string_hashcode("hello") == 99162322
    assert java_string_hashcode("polygenelubricants") == -(2**31)
    assert partition_for("polygenelubricants", 50) == 0  # Utils.abs(MIN_VALUE) is 0
    assert partition_for("my-group", 50) == abs(java_string_hashcode("my-group")) % 50


def test_group_config_refuses_bad_values_by_key():
    with pytest.raises(ValueError, match="group.min.session.timeout.ms"):
        GroupCoordinatorConfig.from_properties({"group.min.session.timeout.ms": 10,
                                                "group.max.session.timeout.ms": 5})
    with pytest.raises(ValueError, match="unknown group coordinator config 'group.size'"):
        GroupCoordinatorConfig.from_properties({"group.size": 3})


# -- offset retention (cleanupGroupMetadata, OffsetExpirationConditionImpl) ------------------------

def test_offsets_of_an_empty_group_expire_and_the_group_is_deleted():
    """OffsetExpirationConditionImpl: an Empty consumer group's offsets expire
    offsets.retention.ms after it became Empty; when none is left the group itself is deleted
    (tombstones)."""
    rig = Rig(**{"offsets.retention.minutes": 1, "offsets.retention.check.interval.ms": 10_000})
    ids = stable_group(rig, ("a",))
    gen = rig.group().generation_id
    committed = commit(rig, gen, ids["a"], {("t", 0): 3})
    rig.run(20)
    assert committed.result().all_ok()
    rig.svc.leave_group(RequestContext("c"), LeaveGroupRequest(
        "g", (MemberIdentity(ids["a"]),)))
    rig.run(20)
    assert rig.group().state is G.EMPTY
    empty_at = rig.cluster.scheduler.now
    rig.run(50_000)
    assert rig.cluster.committed_offsets("g") == {("t", 0): 3}  # not yet: 60 s from Empty
    rig.run(30_000)
    assert rig.cluster.committed_offsets("g") == {}
    assert rig.group() is None
    cleanup = [e for e in rig.cluster.trace.of_kind("group_metadata_cleanup")
               if e.fields["records"] > 0]
    assert cleanup and cleanup[0].ts - empty_at >= 60_000
    assert cleanup[0].fields["records"] == 2  # one offset tombstone + the group tombstone


def test_offsets_of_a_stable_group_do_not_expire_for_subscribed_topics():
    rig = Rig(**{"offsets.retention.minutes": 1, "offsets.retention.check.interval.ms": 10_000})
    ids = stable_group(rig, ("a",))
    gen = rig.group().generation_id
    commit(rig, gen, ids["a"], {("orders", 0): 3, ("other", 0): 4})
    for _ in range(40):  # stay alive: heartbeat every 3 s for two minutes
        rig.heartbeat(ids["a"], gen)
        rig.run(3000)
    assert rig.cluster.committed_offsets("g") == {("orders", 0): 3}  # 'other' is not subscribed
