"""The ZooKeeper-era high-level consumer (Kafka 0.8.2.2 `ZookeeperConsumerConnector`) on a
simulated ZooKeeper: the ensemble's sessions and one-shot watches, the connector's state
table, its range assignment, `syncedRebalance` with owner claims and backoff, session expiry
(`ZKSessionExpireListener.handleNewSession`), offsets in ZooKeeper without fencing, and the
`eras.api.Design` contract. docs/eras-zookeeper.md describes the behaviour checked here.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from coordinator_kit.clock import Scheduler
from coordinator_kit.errors import IllegalStateTransition
from coordinator_kit.eras.api import FAULT_KINDS, Design, Fault, Scenario
from coordinator_kit.eras.zookeeper import (CONNECTOR_STATES, ConsumerState, ZookeeperDesign,
                                            build)
from coordinator_kit.eras.zookeeper.assign import (java_string_hash, range_share,
                                                   roundrobin_share)
from coordinator_kit.eras.zookeeper.config import ZookeeperConsumerConfig
from coordinator_kit.eras.zookeeper.connector import owner_path
from coordinator_kit.eras.zookeeper.ensemble import (NodeExistsError, NoNodeError, ZkOp,
                                                     ZooKeeperEnsemble)
from coordinator_kit.logs.parse import classify_line
from coordinator_kit.trace import Trace

S = ConsumerState
G = "group-1"


def run(scenario: Scenario, until: int | None = None) -> ZookeeperDesign:
    """Build, apply the faults at their times (as eras.compare does), run to the end."""
    d = build(scenario)
    end = scenario.run_ms if until is None else until
    for f in sorted(scenario.faults, key=lambda f: f.at_ms):
        if f.at_ms > end:
            break
        d.scheduler.run_until(f.at_ms)
        d.apply(f)
    d.scheduler.run_until(end)
    return d


def owners(d: ZookeeperDesign, tp: tuple[str, int]) -> frozenset[str]:
    return d.fetching(G)[tp]


def lines_with(d: ZookeeperDesign, text: str, level: str = "INFO") -> list[str]:
    return [line for line in d.log_lines(level) if text in line]


# -- settings ----------------------------------------------------------------------------------

def test_defaults_are_kafka_082s():
    """ConsumerConfig (0.8.2.2) defaults."""
    c = ZookeeperConsumerConfig()
    assert (c.session_timeout_ms, c.rebalance_max_retries, c.rebalance_backoff_ms,
            c.auto_commit_enable, c.auto_commit_interval_ms, c.num_streams,
            c.partition_assignment_strategy, c.auto_offset_reset) == (
        6000, 4, 2000, True, 60000, 1, "range", "largest")


@pytest.mark.parametrize("props, match", [
    ({"session.timeout.ms": 6000}, "unknown ZooKeeper consumer config 'session.timeout.ms'"),
    ({"rebalance.max.retries": 0}, "rebalance.max.retries: Value must be at least 1"),
    ({"zookeeper.session.timeout.ms": "6000"}, "write 6000"),
    ({"auto.commit.enable": "yes"}, "auto.commit.enable"),
    ({"auto.offset.reset": "latest"}, "largest, smallest"),
    ({"partition.assignment.strategy": "sticky"}, "range, roundrobin"),
])
def test_bad_settings_are_refused_by_name(props, match):
    with pytest.raises(ValueError, match=match):
        ZookeeperConsumerConfig.from_properties(props)
    with pytest.raises(ValueError, match=match):
        build(Scenario("bad", settings={"zookeeper": props}))


# -- the state table -------------------------------------------------------------------------------

ALLOWED = [(a, b) for b in S for a in CONNECTOR_STATES.valid_previous[b]]
REFUSED = [(S.CREATED, S.CONSUMING), (S.CONSUMING, S.BACKING_OFF),
           (S.REBALANCING, S.REBALANCE_FAILED), (S.SHUT_DOWN, S.REBALANCING),
           (S.REBALANCE_FAILED, S.CONSUMING), (S.CREATED, S.SHUT_DOWN)]


@pytest.mark.parametrize("a, b", ALLOWED, ids=lambda s: str(s))
def test_every_allowed_transition_is_labelled(a, b):
    assert CONNECTOR_STATES.can_transition(a, b) and CONNECTOR_STATES.triggers[(a, b)]


@pytest.mark.parametrize("a, b", REFUSED, ids=lambda s: str(s))
def test_refused_transitions_raise_naming_both_states(a, b):
    with pytest.raises(IllegalStateTransition, match=f"{a.name}.*{b.name}"):
        CONNECTOR_STATES.check(a, b)


def test_a_failed_rebalance_only_follows_the_last_backoff():
    """syncedRebalance throws ConsumerRebalanceFailedException after its last sleep."""
    assert CONNECTOR_STATES.valid_previous[S.REBALANCE_FAILED] == {S.BACKING_OFF}
    assert CONNECTOR_STATES.valid_previous[S.CONSUMING] == {S.REBALANCING}


# -- assignment --------------------------------------------------------------------------------

def test_range_assignor_example_with_two_streams():
    """RangeAssignor: 7 partitions, A with 2 streams, B with 1 -> 3, 2, 2."""
    share = range_share(list(range(7)), ["A-0", "A-1", "B-0"], ["A-0", "A-1", "B-0"])
    assert share == {"A-0": [0, 1, 2], "A-1": [3, 4], "B-0": [5, 6]}


def test_range_assignor_sorts_threads_as_strings():
    """`...-10` sorts before `...-2`: consumer-10 gets the first partitions."""
    threads = ["g_consumer-2-0", "g_consumer-10-0"]
    assert range_share([0, 1, 2], threads, threads) == {"g_consumer-10-0": [0, 1],
                                                        "g_consumer-2-0": [2]}


def test_roundrobin_deals_by_hash_of_topic_and_partition():
    """RoundRobinAssignor (0.8.2): partitions ordered by `[t,p]`.hashCode, dealt in turn."""
    assert java_string_hash("hello") == 99162322                 # Java's "hello".hashCode()
    assert java_string_hash("polygenelubricants") == -2 ** 31     # wraps to Integer.MIN_VALUE
    share = roundrobin_share({"t": [0, 1, 2, 3]}, ["a-0", "b-0"], ["a-0", "b-0"])
    assert sorted(share["a-0"] + share["b-0"]) == [("t", p) for p in range(4)]
    assert len(share["a-0"]) == len(share["b-0"]) == 2


# -- the ensemble ------------------------------------------------------------------------------

class _Client:
    """A stand-in for a ZkClient: records notifications and closed sockets."""

    def __init__(self, name: str) -> None:
        self.name, self.events, self.closed = name, [], []

    def notified(self, sid, event):
        self.events.append((sid, event.type, event.path))

    def connection_closed(self, sid):
        self.closed.append(sid)


def _ensemble():
    sched = Scheduler(threadsafe=False)
    return sched, ZooKeeperEnsemble(sched, Trace(sched, python_logging=False))


def test_znodes_create_delete_versions_and_errors():
    """ZooKeeper's create (NodeExists, NoNode parent), setData versions, delete."""
    sched, ens = _ensemble()
    sid = ens.open_session(_Client("a"), 6000)
    ens.ensure_path("/consumers/g/ids")
    ens.execute(sid, ZkOp("create", "/consumers/g/ids/a", "x", ephemeral=True))
    with pytest.raises(NodeExistsError):
        ens.execute(sid, ZkOp("create", "/consumers/g/ids/a", "y"))
    with pytest.raises(NoNodeError):
        ens.execute(sid, ZkOp("create", "/nowhere/x", "y"))
    ens.execute(sid, ZkOp("create", "/p", "0"))
    assert ens.execute(sid, ZkOp("setData", "/p", "1")) == 1
    assert ens.execute(sid, ZkOp("getData", "/p")) == "1"
    ens.execute(sid, ZkOp("delete", "/p"))
    with pytest.raises(NoNodeError):
        ens.execute(sid, ZkOp("getData", "/p"))
    assert ens.execute(sid, ZkOp("getChildren", "/consumers/g/ids")) == ["a"]


def test_watches_fire_once_and_must_be_set_again():
    """WatchManager: a child watch fires on the first change only."""
    sched, ens = _ensemble()
    watcher = _Client("w")
    w, other = ens.open_session(watcher, 6000), ens.open_session(_Client("o"), 6000)
    ens.ensure_path("/ids")
    ens.execute(w, ZkOp("getChildren", "/ids", watch=True))
    ens.execute(other, ZkOp("create", "/ids/x", ""))
    ens.execute(other, ZkOp("create", "/ids/y", ""))
    sched.run_for(10)
    assert watcher.events == [(w, "NodeChildrenChanged", "/ids")]
    ens.execute(w, ZkOp("getChildren", "/ids", watch=True))
    ens.execute(other, ZkOp("delete", "/ids/x"))
    sched.run_for(10)
    assert len(watcher.events) == 2


def test_a_silent_session_expires_with_its_ephemerals():
    """SessionTrackerImpl: no ping for the timeout -> expired, ephemerals deleted, watchers
    told, the server logs `Expiring session`."""
    sched, ens = _ensemble()
    quiet, watcher = _Client("q"), _Client("w")
    q, w = ens.open_session(quiet, 6000), ens.open_session(watcher, 6000)
    ens.ensure_path("/ids")
    ens.execute(q, ZkOp("create", "/ids/q", "", ephemeral=True))
    ens.execute(w, ZkOp("getChildren", "/ids", watch=True))
    for t in range(2000, 12001, 2000):
        sched.run_until(t)
        ens.touch(w)
    assert "/ids/q" not in ens.nodes and ens.session_alive(w) and not ens.session_alive(q)
    assert watcher.events == [(w, "NodeChildrenChanged", "/ids")]
    assert quiet.closed == [q]
    assert any(e.template_id == "ZK-EXPIRING" for e in ens.log.trace.events)


def test_no_session_expires_during_an_outage():
    """A ZooKeeper leader renews every session when the ensemble comes back."""
    sched, ens = _ensemble()
    sid = ens.open_session(_Client("a"), 6000)
    ens.outage(20_000)
    sched.run_until(20_000)
    assert ens.session_alive(sid)
    sched.run_until(25_999)
    assert ens.session_alive(sid)
    sched.run_until(26_001)
    assert not ens.session_alive(sid)


# -- the design contract ------------------------------------------------------------------------

def test_build_makes_a_design_from_a_scenario():
    d = build(Scenario("s", topics={"t": 6, "u": 2}, seed=3, produce_rate_per_s=50,
                       settings={"zookeeper": {"rebalance.max.retries": 6}}))
    assert isinstance(d, Design) and d.name == "zookeeper"
    assert d.config.rebalance_max_retries == 6
    assert sorted(d.consumers) == ["consumer-1", "consumer-2", "consumer-3"]
    assert set(d.fetching(G)) == {("t", p) for p in range(6)} | {("u", 0), ("u", 1)}


@pytest.mark.parametrize("kind", sorted(FAULT_KINDS))
def test_every_fault_kind_is_accepted_and_the_group_settles_again(kind):
    d = build(Scenario("s"))
    d.scheduler.run_until(1000)
    target = None if kind == "coordinator" else "consumer-9" if kind == "join" \
        else "t" if kind == "partitions" else "consumer-1"
    duration = None if kind in ("crash", "leave", "join", "partitions") else 500
    d.apply(Fault(1000, kind, target, duration, 8 if kind == "partitions" else None))
    d.scheduler.run_until(30_000)
    assert d.settled(G)
    expected = {"crash": "DEAD", "leave": "SHUT_DOWN"}.get(kind, "CONSUMING")
    assert d.states()["consumer-1"] == expected


def test_bad_faults_are_refused_with_what_to_do():
    d = build(Scenario("s"))
    with pytest.raises(ValueError, match="consumer-1, consumer-2, consumer-3"):
        d.apply(Fault(0, "crash", "nobody"))
    with pytest.raises(ValueError, match="needs duration_ms"):
        d.apply(Fault(0, "coordinator"))
    with pytest.raises(ValueError, match="already running"):
        d.apply(Fault(0, "join", "consumer-1"))


# -- start-up and the rebalance ------------------------------------------------------------------

def test_members_register_watch_and_claim_their_range_share():
    """createMessageStreams -> registerConsumerInZK, syncedRebalance: each owns its share."""
    d = run(Scenario("start", run_ms=2000))
    assert d.settled(G)
    assert [sorted(owners(d, ("t", p))) for p in range(6)] == [
        ["consumer-1"], ["consumer-1"], ["consumer-2"], ["consumer-2"], ["consumer-3"],
        ["consumer-3"]]
    c1 = d.consumers["consumer-1"]
    assert c1.consumer_id.startswith("group-1_consumer-1-1740992400000-")
    assert len(c1.consumer_id.rsplit("-", 1)[1]) == 8
    assert d.ensemble.nodes[owner_path(G, ("t", 0))].data == c1.consumer_id + "-0"
    assert d.ensemble.nodes[f"/consumers/{G}/ids/{c1.consumer_id}"].ephemeral_owner
    assert lines_with(d, f"begin rebalancing consumer {c1.consumer_id} try #0")
    assert lines_with(d, f"Consumer {c1.consumer_id} selected partitions : [t,0],[t,1]")


def test_a_join_makes_every_member_rebalance_and_the_newcomer_collide():
    """The child watch on /consumers/<g>/ids fires in every member; the newcomer claims a
    partition whose owner has not released it yet: NodeExists -> `waiting for the partition
    ownership to be deleted`, back off rebalance.backoff.ms, try #1 succeeds."""
    d = run(Scenario("join", faults=(Fault(5000, "join", "consumer-4"),), run_ms=12_000))
    assert d.settled(G)
    new = d.consumers["consumer-4"].consumer_id
    assert d.rebalance_rounds(G) >= 3 + 3 + 1
    assert d.collisions >= 1
    assert lines_with(d, "waiting for the partition ownership to be deleted: ")
    tries = [e.ts for e in d.trace.events if e.template_id == "ZC-REBAL-BEGIN"
             and e.fields["member"] == new]
    assert len(tries) == 2 and tries[1] - tries[0] >= 2000


def test_a_burst_of_watch_events_collapses_into_one_rebalance():
    """The watcher executor runs syncedRebalance once for however many events set the flag
    while a rebalance was running (ZKRebalancerListener.rebalanceEventTriggered)."""
    joins = tuple(Fault(5000, "join", f"consumer-{n}") for n in range(4, 9))
    d = run(Scenario("burst", faults=joins, run_ms=30_000))
    c1 = d.consumers["consumer-1"]
    after = [e for e in d.trace.events if e.template_id == "ZC-REBAL-BEGIN" and e.ts >= 5000
             and e.source == "consumer-1" and e.fields["attempt"] == 0]
    assert 1 <= len(after) <= 2 < 5          # five events, at most two rebalances
    assert c1.state is S.CONSUMING and d.settled(G)


def test_herd_effect_reads_grow_with_the_square_of_the_group():
    """One membership change makes every member re-read every member's registration
    (AssignmentContext -> getConsumersPerTopic): (N+1)^2 reads of /consumers/<g>/ids/* for a
    join to N members, on top of reads that grow with N (brokers, offsets, the re-watch)."""
    def reads_for_one_join(n: int) -> tuple[int, int]:
        names = tuple(f"consumer-{i}" for i in range(1, n + 1))
        sc = Scenario("herd", consumers={G: names}, topics={"t": 64},
                      faults=(Fault(10_000, "join", "consumer-new"),), run_ms=30_000)
        d = build(sc)
        d.scheduler.run_until(10_000)
        ens = d.ensemble
        ids, total = ens.reads_under.get(f"/consumers/{G}/ids", 0), ens.reads()
        d.apply(sc.faults[0])
        d.scheduler.run_until(30_000)
        assert d.settled(G)
        return ens.reads_under[f"/consumers/{G}/ids"] - ids, ens.reads() - total
    (ids4, all4), (ids16, all16) = reads_for_one_join(4), reads_for_one_join(16)
    assert ids4 >= 5 * 5 and ids16 >= 17 * 17
    assert ids16 / ids4 > 8                   # 4x the members, ~11x the member reads
    assert all16 > 3 * all4


def test_exhausted_retries_leave_partitions_orphaned_until_the_next_event():
    """A member paused under the session timeout keeps its owner znodes: the newcomer
    collides on every try, and after rebalance.max.retries it owns nothing
    (ConsumerRebalanceFailedException). The paused member's own rebalance changes nothing in
    /consumers/<g>/ids, so no watch fires: its partition stays without a consumer until
    another membership change."""
    sc = Scenario("orphan", faults=(Fault(10_000, "pause", "consumer-3", 5000),
                                    Fault(10_100, "join", "consumer-4"),
                                    Fault(40_000, "join", "consumer-5")),
                  settings={"zookeeper": {"rebalance.max.retries": 2}}, run_ms=50_000)
    d = run(sc, until=39_000)
    new = d.consumers["consumer-4"]
    assert new.state is S.REBALANCE_FAILED and not new.topic_registry
    assert lines_with(d, f"{new.consumer_id} can't rebalance after 2 retries", "ERROR")
    assert lines_with(d, "error during syncedRebalance", "ERROR")
    assert owners(d, ("t", 5)) == frozenset() and not d.settled(G)
    assert d.failed_rebalances == 1
    for f in sc.faults[2:]:
        d.scheduler.run_until(f.at_ms)
        d.apply(f)
    d.scheduler.run_until(50_000)
    assert new.state is S.CONSUMING and d.settled(G)
    assert all(who for who in d.fetching(G).values())


def test_a_member_with_a_late_view_makes_the_newcomer_give_up():
    """Split view: consumer-3 learns of the join 9 s late (longer than 4 tries x 2 s), keeps
    partition 5, and the newcomer collides on every try, then owns nothing: the others
    cannot tell that the group as a whole is inconsistent."""
    d = build(Scenario("split"))
    d.scheduler.run_until(5000)
    d.delay_watches("consumer-3", 9000)
    d.apply(Fault(5000, "join", "consumer-4"))
    d.scheduler.run_until(30_000)
    assert d.consumers["consumer-4"].state is S.REBALANCE_FAILED
    assert d.collisions == 4 and d.failed_rebalances == 1
    assert owners(d, ("t", 5)) == frozenset() and not d.settled(G)
    with pytest.raises(ValueError, match="no consumer 'nobody'"):
        d.delay_watches("nobody", 1)


def test_an_outage_alone_leaves_the_group_settled():
    d = run(Scenario("outage only", faults=(Fault(5000, "coordinator", None, 10_000),)),
            until=14_000)
    assert d.settled(G) and d.rebalance_rounds(G) == 3
    assert all(c.zk.state == "Disconnected" for c in d.consumers.values())


# -- session expiry, zombies and duplicates -----------------------------------------------------

def test_gc_pause_past_the_session_makes_two_owners_duplicates_and_zombie_commits():
    """A pause > zookeeper.session.timeout.ms: the session expires, the others take its
    partitions while it still holds fetched chunks; on waking it processes them (and fetches
    more: brokers do not check ownership), its auto-commit is written (no fencing), then
    handleNewSession re-registers it and the group rebalances again."""
    sc = Scenario("gc", faults=(Fault(5000, "pause", "consumer-1", 10_000),), run_ms=30_000,
                  settings={"zookeeper": {"auto.commit.interval.ms": 1000}})
    d = run(sc, until=12_000)
    assert owners(d, ("t", 0)) == {"consumer-1", "consumer-2"}       # two would-be owners
    d.scheduler.run_until(30_000)
    assert d.ledger.by_consumer.get("consumer-1", 0) > 0              # the zombie's records
    assert [z for z in d.zombie_commits if z[1] == "consumer-1"]
    c1 = d.consumers["consumer-1"].consumer_id
    assert lines_with(d, "ZK expired; release old broker parition ownership; re-register "
                         f"consumer {c1}")
    assert lines_with(d, "Expiring session 0x")
    assert d.settled(G)
    assert owners(d, ("t", 0)) == {"consumer-1"}


def test_gc_pause_within_the_session_changes_nothing():
    d = run(Scenario("short gc", faults=(Fault(5000, "pause", "consumer-1", 3000),),
                     run_ms=20_000))
    assert d.rebalance_rounds(G) == 3 and d.ledger.duplicates == 0 and d.settled(G)


def test_crash_is_noticed_after_the_session_timeout_and_leave_at_once():
    """kill -9: ephemerals stay until the session expires (6 s); shutdown() closes the
    session, so the others rebalance within milliseconds."""
    crash = run(Scenario("crash", faults=(Fault(5000, "crash", "consumer-1"),)), until=9000)
    assert crash.rebalance_rounds(G) == 3 and not crash.settled(G)
    assert owners(crash, ("t", 0)) == frozenset()
    crash.scheduler.run_until(12_000)
    expired = [e.ts for e in crash.trace.events if e.template_id == "ZK-EXPIRING"]
    assert len(expired) == 1 and 5000 + 6000 - 2000 <= expired[0] <= 5000 + 6000  # last ping
    assert crash.rebalance_rounds(G) == 5 and crash.settled(G)
    leave = run(Scenario("leave", faults=(Fault(5000, "leave", "consumer-1"),)), until=5100)
    assert leave.rebalance_rounds(G) == 5 and leave.settled(G)
    assert leave.states()["consumer-1"] == "SHUT_DOWN" and crash.states()["consumer-1"] == "DEAD"


def test_cut_from_zookeeper_keeps_fetching_while_others_take_over():
    """Partitioned from ZooKeeper only: the server expires the session, the others claim its
    partitions, it goes on fetching from the brokers until it learns Expired on reconnect."""
    d = run(Scenario("cut", faults=(Fault(5000, "cut", "consumer-1", 10_000),)), until=12_000)
    assert owners(d, ("t", 0)) == {"consumer-1", "consumer-2"}
    assert d.consumers["consumer-1"].zk.state == "Disconnected"
    d.scheduler.run_until(30_000)
    assert d.settled(G) and owners(d, ("t", 0)) == {"consumer-1"}
    assert lines_with(d, "Unable to reconnect to ZooKeeper service, session 0x", "WARN")


def test_a_zookeeper_outage_stops_coordination_not_consumption():
    """No session expires while ZooKeeper is down; consumers keep fetching; a member that
    dies during the outage is noticed only a session timeout after it ends."""
    sc = Scenario("outage", faults=(Fault(5000, "coordinator", None, 20_000),
                                    Fault(6000, "crash", "consumer-3")), run_ms=40_000)
    d = run(sc, until=25_000)
    assert d.rebalance_rounds(G) == 3
    assert owners(d, ("t", 0)) == {"consumer-1"}
    assert lines_with(d, "zookeeper state changed (Disconnected)")
    d.scheduler.run_until(30_900)
    assert d.rebalance_rounds(G) == 3
    d.scheduler.run_until(40_000)
    assert d.rebalance_rounds(G) == 5 and d.settled(G)


def test_slow_processing_does_not_hold_a_rebalance():
    """0.8.2 never waits for the application: a slow consumer releases as fast as any."""
    d = run(Scenario("slow", faults=(Fault(1000, "slow", "consumer-1", 5000),
                                     Fault(5000, "join", "consumer-4")), run_ms=15_000))
    assert d.settled(G) and d.consumers["consumer-1"].processing_ms == 5000


def test_registration_that_waited_out_an_expired_session_is_taken_as_its_own():
    """Cut off from its first moment: the registration waits for a connection
    (retryUntilConnected) and is written on the new session; handleNewSession's own
    registration then finds it (createEphemeralPathExpectConflictHandleZKBug's message) and
    the kit takes the node as registered instead of backing off for ever."""
    d = run(Scenario("cut at start", faults=(Fault(0, "cut", "consumer-1", 7000),),
                     run_ms=30_000))
    assert lines_with(d, "I wrote this conflicted ephemeral node [")
    assert d.settled(G)


def test_streams_and_roundrobin():
    """createMessageStreams(Map(t -> 2)) gives threads <id>-0 and <id>-1; roundrobin deals
    partitions to all threads of the group."""
    d = run(Scenario("streams", settings={"zookeeper": {"num.streams": 2}}, run_ms=3000))
    c1 = d.consumers["consumer-1"]
    assert sorted({i.thread for i in c1.topic_registry.values()}) == [
        c1.consumer_id + "-0", c1.consumer_id + "-1"] and d.settled(G)
    rr = run(Scenario("rr", settings={"zookeeper": {"partition.assignment.strategy":
                                                    "roundrobin"}}, run_ms=3000))
    assert rr.settled(G) and all(len(w) == 1 for w in rr.fetching(G).values())


# -- determinism and logs -----------------------------------------------------------------------

FAULTY = Scenario("faulty", faults=(Fault(3000, "pause", "consumer-1", 9000),
                                    Fault(4000, "join", "consumer-4"),
                                    Fault(8000, "cut", "consumer-2", 7000),
                                    Fault(20_000, "coordinator", None, 3000),
                                    Fault(25_000, "leave", "consumer-3")), run_ms=40_000)


def test_the_same_scenario_gives_the_same_trace_and_lines():
    a, b = run(FAULTY), run(FAULTY)
    assert a.log_lines("DEBUG") == b.log_lines("DEBUG")
    assert a.trace.to_records() == b.trace.to_records()
    assert (a.coordination_messages(), a.ledger.duplicates) == (
        b.coordination_messages(), b.ledger.duplicates)


def test_every_line_is_recognised_by_the_parser():
    """The catalogue's ZooKeeper section serves the writer and the parser alike."""
    d = run(FAULTY)
    events = [e for e in d.trace.events if e.message is not None]
    assert {e.template_id for e in events} >= {"ZC-REBAL-BEGIN", "ZC-WAIT-OWNER", "ZC-EXPIRED",
                                               "ZK-EXPIRING", "ZC-SELECTED"}
    for e in events:
        kind, row = classify_line(e.line())
        assert kind == "event" and row["template"] == e.template_id, e.line()


# -- any fault schedule --------------------------------------------------------------------------

NAMES = ("consumer-1", "consumer-2", "consumer-3", "consumer-4")


@st.composite
def schedules(draw):
    faults = []
    joined = set()
    partitions = 6
    for at in sorted(draw(st.lists(st.integers(0, 30_000), min_size=1, max_size=6))):
        kind = draw(st.sampled_from(sorted(FAULT_KINDS)))
        if kind == "partitions":                 # topic t grows (the data watch fires)
            partitions += 1
            faults.append(Fault(at, kind, "t", count=partitions))
            continue
        if kind == "join":
            name = f"joiner-{len(joined)}"
            joined.add(name)
        elif kind == "coordinator":
            name = None
        else:
            name = draw(st.sampled_from(NAMES[:3] + tuple(sorted(joined))))
        dur = draw(st.sampled_from([300, 3000, 7000, 15_000])) \
            if kind in ("pause", "cut", "slow", "coordinator") else None
        faults.append(Fault(at, kind, name, dur))
    return tuple(faults)


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(schedules(), st.integers(1, 4))
@example((Fault(2, "pause", "consumer-1", 7000), Fault(3, "coordinator", None, 300),
          Fault(3, "coordinator", None, 300), Fault(3304, "cut", "consumer-1", 3000)), 1)
def test_any_fault_schedule_runs_and_ends_at_rest(faults, retries):
    """Never crashes; the ledger adds up; once the faults are over (plus the session timeout,
    the retries and their backoff) every group is settled, unless a member exhausted its
    retries: then it owns nothing and its share has no consumer until the next ZK event."""
    sc = Scenario("any", faults=faults, run_ms=120_000,
                  settings={"zookeeper": {"rebalance.max.retries": retries}})
    d = run(sc)
    led = d.ledger
    assert sum(led.by_consumer.values()) == led.duplicates <= led.records
    live = [c for c in d.consumers.values() if not c.gone]
    if not live:
        assert not any(d.fetching(G).values())
        return
    failed = [c for c in live if c.state is S.REBALANCE_FAILED]
    if failed:
        assert all(not c.topic_registry and not c.fetching() for c in failed)
        assert not d.settled(G)
    else:
        assert d.settled(G), d.states()
        assert all(len(who) == 1 for who in d.fetching(G).values())


def test_the_partitions_of_one_stream_take_turns_in_its_queue():
    """0.8.2's fetcher puts one chunk per partition of a fetch response into the stream's
    blocking queue (PartitionTopicInfo.enqueue), so two partitions of one stream are consumed
    alike; in sorted order every tick, the first one kept the queue to itself."""
    from coordinator_kit.eras.api import Scenario
    from coordinator_kit.eras.zookeeper import design as zk_design

    d = zk_design.ZookeeperDesign.build(Scenario("turns", run_ms=30_000))
    d.scheduler.run_until(30_000)
    done = {tp: ranges for (g, tp), ranges in d.ledger._done.items()}
    ends = {tp: max(hi for _, hi in ranges) for tp, ranges in done.items()}
    assert set(ends) == {("t", p) for p in range(6)}
    assert max(ends.values()) - min(ends.values()) <= 2 * 500, ends
