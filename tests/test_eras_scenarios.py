"""The eleven scenarios where the designs differ, each run under the ZooKeeper consumer (0.8.2),
the centralised coordinator drafted for 0.9 and today's classic protocol.

Each test asserts the difference docs/eras-compare.md predicts for its scenario (the table
there says what each design does and why), on a like-for-like setting: today's consumer with
a 6 s session (`session.timeout.ms`, as the other two designs' 6 s), the ZooKeeper consumer
committing every second, the central coordinator flushing offsets every 10 s. Where the kit
cannot express a scenario for one design, the test asserts what the kit does and the page
says why.
"""

from __future__ import annotations

import pytest

from coordinator_kit.eras.api import Fault as F
from coordinator_kit.eras.api import Scenario
from coordinator_kit.eras.checks import LOST, NOT_OWNER
from coordinator_kit.eras.compare import DESIGNS, build, compare, measure

LIKE = {"classic": {"session.timeout.ms": 6000, "heartbeat.interval.ms": 2000,
                    "group.initial.rebalance.delay.ms": 0, "metadata.max.age.ms": 10_000},
        "zookeeper": {"auto.commit.interval.ms": 1000},
        "central": {"offsets.flush.interval.ms": 10_000}}


def _with(design: str, **keys) -> dict:
    return {**LIKE, design: {**LIKE[design], **keys}}


def _run(name: str, scenario: Scenario, before=None):
    """One design through `scenario`, `before(design)` called first; (design, measures)."""
    d = build(name, scenario)
    if before is not None:
        before(d)
    return d, measure(d, scenario)


# -- S1 / S2: a GC pause shorter, then longer, than failure detection -------------------------

def test_s1_a_pause_shorter_than_failure_detection_changes_nothing_anywhere():
    """A 3 s pause: inside the ZooKeeper session (6 s), fewer than three missed pings, inside
    the 6 s session of today's consumer (its heartbeat thread catches up on wake)."""
    c = compare(Scenario("s1", faults=(F(20_000, "pause", "consumer-2", 3000),),
                         run_ms=50_000, settings=LIKE))
    for m in c.measures:
        assert (m.rounds, m.unowned_ms, m.double_ms, m.duplicates) == (0, 0, 0, 0), m.design
        assert m.checks.overlaps == [] and m.checks.offsets == []


def test_s1_a_short_pause_that_spans_a_rebalance():
    """The central coordinator waits for the late stop reply (reply timeout = session, 6 s);
    today's member joins late within the rebalance timeout: one round each, three seconds
    late. With a reply timeout under the pause the draft fails the sleeper and retries
    without it, then it registers again: three rounds and duplicates."""
    faults = (F(20_000, "join", "consumer-4"), F(20_000, "pause", "consumer-2", 3000))
    c = compare(Scenario("s1b", faults=faults, run_ms=50_000, settings=LIKE),
                ["central", "classic"])
    for m in c.measures:
        assert m.rounds == 1 and 3000 <= m.settle_ms < 3200 and m.duplicates == 0, m.design
    short = compare(Scenario("s1c", faults=faults, run_ms=50_000,
                             settings=_with("central", **{"rebalance.reply.timeout.ms": 2000})),
                    ["central"])["central"]
    assert short.rounds == 3 and short.duplicates > 0


def test_s2_a_pause_longer_than_failure_detection():
    """ZooKeeper: the session expires, every member rebalances (herd), and again when the
    sleeper re-registers; its commit on wake is accepted (no fencing). Central: failed after
    three pings, a full round, duplicates from its buffered chunks, a second full round when
    it registers again. Classic: expelled at the session timeout, a round, it wakes and hands
    out its old partitions until UNKNOWN_MEMBER_ID, its commits are refused, it rejoins."""
    c = compare(Scenario("s2", faults=(F(20_000, "pause", "consumer-2", 20_000),),
                         run_ms=70_000, settings=LIKE))
    zk, central, classic = c["zookeeper"], c["central"], c["classic"]
    assert zk.rounds >= 2 * 3 and zk.checks.of_kind(NOT_OWNER)
    assert central.rounds == 2 and central.checks.violations and central.duplicates > 0
    assert classic.rounds == 2 and classic.checks.violations and classic.checks.refused > 0
    assert classic.checks.offsets == [] and central.checks.offsets == []


# -- S3: a consumer joins during a rebalance --------------------------------------------------

def test_s3_a_join_during_a_rebalance():
    """Two consumers start 3 ms apart. Classic: the second JoinGroup lands while the group
    is PreparingRebalance and joins the same round. Central: the second registers while the
    first attempt runs (C8, pending) and gets a second full round. ZooKeeper: every member
    rebalances on each change it sees; a newcomer that claims before the old owner has
    released (the owner first commits its offsets, one ZooKeeper write each, in
    `closeFetchersForQueues`) collides on the owner znode and retries. The ZooKeeper consumer
    keeps its 60 s auto-commit here, so the old owners have offsets to write."""
    settings = {k: v for k, v in LIKE.items() if k != "zookeeper"}
    s = Scenario("s3", faults=(F(20_000, "join", "consumer-4"), F(20_003, "join", "consumer-5")),
                 run_ms=50_000, settings=settings)
    c = compare(s)
    assert c["classic"].rounds == 1
    assert c["central"].rounds == 2
    zk, m = _run("zookeeper", s)
    assert m.rounds > 5 and zk.collisions > 0
    assert all(x.settle_ms is not None for x in c.measures)


# -- S4 / S5: the coordinator fails ----------------------------------------------------------

GROUPS = {f"group-{g}": tuple(f"g{g}-c{i}" for i in (1, 2, 3)) for g in range(1, 5)}


def test_s4_the_coordinator_fails_while_every_group_is_stable():
    """Central: one coordinator for every group, so every group stops, registers again and
    rebalances; the offsets collected since the last flush are lost and consumed again.
    Classic: the group's `__consumer_offsets` partition moves, the new coordinator loads the
    group and its offsets from the log: same generation, no rebalance, nothing lost.
    ZooKeeper (no coordinator; the fault is a ZooKeeper outage): consumption goes on, no
    rebalance."""
    c = compare(Scenario("s4", GROUPS, faults=(F(35_000, "coordinator", duration_ms=10_000),),
                         run_ms=90_000, settings=LIKE))
    central = c["central"]
    assert central.rounds == len(GROUPS) and central.duplicates > 0
    assert {(v.group, v.partition) for v in central.checks.of_kind(LOST)} == {
        (g, ("t", p)) for g in GROUPS for p in range(6)}
    for name in ("classic", "zookeeper"):
        m = c[name]
        assert (m.rounds, m.duplicates, m.unowned_ms) == (0, 0, 0), name
        assert m.checks.offsets == []


def test_s5_the_coordinator_fails_in_the_middle_of_a_rebalance():
    """Central: the attempt in flight dies with the coordinator; everything restarts from the
    registrations (a second round). Classic: only completed generations are in the log, so
    the join in progress is lost and the members join again (a second round). ZooKeeper: the
    members' rebalances wait for ZooKeeper and finish once it is back."""
    central = compare(Scenario("s5", faults=(F(20_000, "join", "consumer-4"),
                                             F(20_005, "coordinator", duration_ms=10_000)),
                               run_ms=80_000, settings=LIKE), ["central"])["central"]
    assert central.rounds == 2
    classic = compare(Scenario("s5", faults=(F(20_000, "join", "consumer-4"),
                                             F(20_030, "coordinator", duration_ms=10_000)),
                               run_ms=80_000, settings=LIKE), ["classic"])["classic"]
    assert classic.rounds == 2 and classic.checks.offsets == []
    zk = compare(Scenario("s5", faults=(F(20_000, "join", "consumer-4"),
                                        F(20_002, "coordinator", duration_ms=10_000)),
                          run_ms=80_000, settings=LIKE), ["zookeeper"])["zookeeper"]
    assert zk.settle_ms >= 10_000 - 2 and zk.checks.convergence.ok


# -- S6: one reply lost -------------------------------------------------------------------------

def test_s6_a_lost_start_fetcher_reply_fails_a_healthy_consumer_in_the_central_draft():
    """The coordinator fails the consumer whose StartFetcher reply was lost, while it fetches.
    With `close_on_fail` (the kit's default) the closed socket stops it at once: no overlap,
    but a retry round and its re-registration round. Without it, it keeps fetching until its
    `silence` timer runs out while the retry gives its partitions to another: two consumers
    hand out the same records (I1)."""
    s = Scenario("s6", faults=(F(20_000, "join", "consumer-4"),), run_ms=60_000, settings=LIKE)
    _, m = _run("central", s, lambda d: d.scheduler.call_at(19_999, d.lose_reply,
                                                             "consumer-1"))
    assert m.rounds == 3 and m.checks.overlaps == []
    s2 = Scenario("s6", faults=s.faults, run_ms=60_000,
                  settings=_with("central", close_on_fail=False))
    _, m2 = _run("central", s2, lambda d: d.scheduler.call_at(19_999, d.lose_reply,
                                                               "consumer-1"))
    assert m2.rounds == 3
    assert m2.checks.violations and all("consumer-1" in o.handed for o in m2.checks.violations)


def test_s6_today_s_member_is_not_expelled_for_lost_heartbeats():
    """Heartbeats lost for 4 s, within the 6 s session: the member stays (no rebalance)."""
    s = Scenario("s6", faults=(F(30_000, "pause", "consumer-3", 1),), run_ms=60_000,
                 settings=LIKE)

    def lose(d):
        d.scheduler.call_at(20_000, d.cluster.drop_heartbeats, "consumer-2", True)
        d.scheduler.call_at(24_000, d.cluster.drop_heartbeats, "consumer-2", False)
    _, m = _run("classic", s, lose)
    assert (m.rounds, m.double_ms, m.unowned_ms) == (0, 0, 0)


# -- S7 / S8: a slow or stalled application -----------------------------------------------------

def test_s7_a_slow_revoke():
    """A batch takes 15 s when a join starts a rebalance. Central: the stop reply waits for
    the batch, the reply timeout (6 s) fails the consumer, the attempt is retried without it,
    it registers again when it finds its socket closed: three rounds. Classic: the group
    waits for its JoinGroup (the rebalance timeout is `max.poll.interval.ms`): one round,
    about ten seconds. ZooKeeper: a rebalance never waits for the application."""
    c = compare(Scenario("s7", faults=(F(15_000, "slow", "consumer-2", 15_000),
                                       F(20_000, "join", "consumer-4")),
                         run_ms=90_000, settings=LIKE))
    assert c["central"].rounds == 3
    assert c["classic"].rounds == 1 and 9_000 < c["classic"].settle_ms < 12_000
    assert c["zookeeper"].settle_ms < 1000


def test_s8_a_stalled_application_keeps_its_partitions_only_in_the_older_designs():
    """The application stalls (1000 s per batch) while the process lives. The ZooKeeper
    session and the central connector's pings go on: nobody notices, its partitions are stuck.
    Today's consumer leaves the group when `max.poll.interval.ms` passes (KIP-62's poll
    timer) and its partitions move to the others."""
    s = Scenario("s8", faults=(F(20_000, "slow", "consumer-2", 1_000_000),), run_ms=70_000,
                 settings=_with("classic", **{"max.poll.interval.ms": 10_000}))
    for name in DESIGNS:
        d, m = _run(name, s)
        reached = min(d.ledger.processed_to(("t", p), "group-1") for p in (2, 3))
        if name == "classic":
            assert m.rounds >= 1 and reached > 6_000, name
        else:
            assert m.rounds == 0 and reached < 2_500, name


# -- S9 / S10 ---------------------------------------------------------------------------------

def test_s9_a_rolling_restart_of_three_consumers():
    """Each consumer leaves and a new one starts a second later. Central and eager classic:
    two full rounds per restart (2N). ZooKeeper: every member rebalances on each change (the
    herd): several times more. (Static membership, where today's restart inside the session
    costs no round, needs a restart under the same `group.instance.id`, which the shared
    faults do not express.)"""
    faults = tuple(f for i, at in enumerate((20_000, 30_000, 40_000)) for f in (
        F(at, "leave", f"consumer-{i + 1}"), F(at + 1000, "join", f"consumer-{i + 4}")))
    c = compare(Scenario("s9", faults=faults, run_ms=80_000, settings=LIKE))
    assert c["central"].rounds == 6 and c["classic"].rounds == 6
    assert c["zookeeper"].rounds > 2 * 6
    assert all(m.settle_ms is not None for m in c.measures)


def test_s10_partitions_added_to_the_topic():
    """Three partitions added. ZooKeeper: the data watch on `/brokers/topics/t` fires in every
    member (a herd round each). Central: the coordinator's watch, one full round (C6).
    Classic: nothing until the leader's next metadata refresh (`metadata.max.age.ms`, 10 s
    here), then one round: the new partitions have no consumer until then."""
    c = compare(Scenario("s10", faults=(F(20_000, "partitions", "t", count=9),),
                         run_ms=60_000, settings=LIKE))
    zk, central, classic = c["zookeeper"], c["central"], c["classic"]
    assert zk.rounds == 3 and central.rounds == 1 and classic.rounds == 1
    assert zk.settle_ms < 1000 and central.settle_ms < 1000
    assert 10_000 <= classic.settle_ms < 11_000
    assert classic.unowned_ms >= 3 * 10_000 > zk.unowned_ms
    for m in c.measures:
        assert {tp for _, _, tp, who in m.changes if who} >= {("t", 8)}, m.design


# -- S11: cut off from the coordinator only ----------------------------------------------------

def test_s11_a_consumer_cut_off_from_the_coordinator_only():
    """Still reaching the brokers. Central: failed after `ping.max.missed` pings, it stops by
    itself when `silence` (its session) runs out: the overlap is the difference of the two
    timers, none with the defaults (6 s of silence < 3 missed pings of 2 s), two seconds
    with one missed ping (failed about 4 s after its last answer). Classic: evicted after
    the session timeout, it fetches on until it reaches the coordinator again and hears it
    was evicted; its commits are refused.
    ZooKeeper: its session expires, the others take its partitions, it fetches on and its
    commit on reconnect is accepted."""
    s = Scenario("s11", faults=(F(20_000, "cut", "consumer-2", 30_000),), run_ms=80_000,
                 settings=LIKE)
    c = compare(s)
    assert c["central"].checks.overlaps == []
    one = compare(Scenario("s11", faults=s.faults, run_ms=80_000,
                           settings=_with("central", **{"ping.max.missed": 1})),
                  ["central"])["central"]
    assert one.checks.violations and 1_500 <= one.double_ms / 2 <= 2_500
    classic = c["classic"].checks
    assert classic.violations and classic.refused > 0 and classic.offsets == []
    assert c["zookeeper"].checks.violations and c["zookeeper"].checks.of_kind(NOT_OWNER)


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_every_design_settles_after_each_scenario_s_faults_where_it_can(name):
    """I3 across the scenarios with an end: within the design's own bound."""
    s = Scenario("s2", faults=(F(20_000, "pause", "consumer-2", 20_000),), run_ms=70_000,
                 settings=LIKE)
    assert compare(s, [name])[name].checks.convergence.ok
