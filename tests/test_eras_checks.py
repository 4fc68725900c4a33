"""eras.checks: the checker hooks I1-I4 find what each design lets happen.

The older designs' known failures are found where the sources put them: two ZooKeeper
consumers on one partition after a session expiry, with the zombie's offset write accepted by a
plain `updatePersistentPath` and moving the offset back (`ZookeeperConsumerConnector
.commitOffsets`); the central draft's duplicate-delivery window when a failed consumer wakes
with buffered records, and its offsets lost on coordinator failover (flushed periodically).
Today's coordinator has I1 windows too (an expelled consumer processes what it holds until its
heartbeat answers UNKNOWN_MEMBER_ID, `ConsumerCoordinator.poll`) but never accepts a commit
from a member whose generation is gone (`ClassicGroup.validateOffsetCommit`), so I2 holds for
it under every fault schedule.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coordinator_kit.clock import Scheduler
from coordinator_kit.eras.api import (FAULT_KINDS, CheckedDesign, Commit, Design, Fault,
                                      ProcessedLedger, Scenario)
from coordinator_kit.eras.checks import (BACKWARDS, LOST, NOT_OWNER, Convergence, check,
                                         fault_end_ms)
from coordinator_kit.eras.compare import DESIGNS, build, compare, measure
from coordinator_kit.trace import Trace

# like for like: every design notices a dead consumer within a few seconds; the ZooKeeper
# consumer commits every second (so a zombie's commit lands), the central coordinator
# flushes every 10 s
LIKE = {"classic": {"session.timeout.ms": 6000, "heartbeat.interval.ms": 2000,
                    "group.initial.rebalance.delay.ms": 0, "metadata.max.age.ms": 10_000},
        "zookeeper": {"auto.commit.interval.ms": 1000},
        "central": {"offsets.flush.interval.ms": 10_000}}

LONG_PAUSE = Scenario("long pause", faults=(Fault(20_000, "pause", "consumer-2", 20_000),),
                      run_ms=70_000, settings=LIKE)


@pytest.fixture(scope="module")
def long_pause():
    return check(LONG_PAUSE)


# -- the checker on a design whose answers the test sets ----------------------------------------

class _Scripted:
    """Two partitions; who holds them, what is committed and settled change at set times."""

    name, title = "scripted", "Scripted"

    def __init__(self, script: dict[int, dict]) -> None:
        self.scheduler = Scheduler(threadsafe=False)
        self.trace = Trace(self.scheduler)
        self.ledger = ProcessedLedger()
        self.now = {("t", 0): frozenset({"a"}), ("t", 1): frozenset({"b"})}
        self.offsets = {("t", 0): 10, ("t", 1): 10}
        self.log: list[Commit] = []
        self.is_settled = True
        for at, change in script.items():
            self.scheduler.call_at(at, self._apply, change)

    def _apply(self, change: dict) -> None:
        for key, value in change.items():
            if key == "hand":
                self.ledger.processed(*value)
            elif key == "commit":
                self.log.append(value)
                if value.accepted:
                    self.offsets[value.partition] = value.offset
            elif key == "offsets":
                self.offsets.update(value)
            elif key == "settled":
                self.is_settled = value
            else:
                self.now[key] = value

    def add_consumer(self, name, group_id, topics): ...
    def apply(self, fault): ...
    def fetching(self, group_id): return dict(self.now)
    def settled(self, group_id): return self.is_settled
    def coordination_messages(self): return 0
    def rebalance_rounds(self, group_id): return 0
    def log_lines(self, level="INFO"): return []
    def committed(self, group_id): return dict(self.offsets)
    def commits(self, group_id): return self.log
    def convergence_bound_ms(self): return 1000


def _scripted(script, faults=(Fault(500, "crash", "b"),), run_ms=10_000):
    d = _Scripted(script)
    assert isinstance(d, Design) and isinstance(d, CheckedDesign)
    return measure(d, Scenario("t", {"group-1": ("a", "b")}, faults=faults,
                               run_ms=run_ms)).checks


def test_an_overlap_is_a_window_with_who_held_and_who_handed_records_over():
    both = frozenset({"a", "b"})
    r = _scripted({
        1000: {("t", 1): both, "settled": False},
        1500: {"hand": ("a", ("t", 1), 0, 5)},
        2000: {"hand": ("b", ("t", 1), 0, 5), ("t", 1): frozenset({"a"})},  # the last instant
        3000: {("t", 0): both},                                  # nobody hands: no violation
        4000: {("t", 0): frozenset({"a"}), "settled": True}})
    assert [(o.partition, o.start_ms, o.end_ms, o.holders, o.handed, o.violation)
            for o in r.overlaps] == [
        (("t", 1), 1000, 2000, ("a", "b"), ("a", "b"), True),
        (("t", 0), 3000, 4000, ("a", "b"), (), False)]
    assert r.violations == [r.overlaps[0]]


def test_an_overlap_still_open_at_the_end_has_no_end():
    r = _scripted({1000: {("t", 1): frozenset({"a", "b"}), "settled": False}})
    assert [(o.start_ms, o.end_ms) for o in r.overlaps] == [(1000, None)]


def test_i2_finds_a_commit_from_a_non_owner_one_that_moves_back_and_an_offset_lost():
    r = _scripted({
        1000: {"commit": Commit(1000, "group-1", "a", ("t", 0), 20, 10)},
        2000: {"commit": Commit(2000, "group-1", "b", ("t", 0), 15, 20, owner=False)},
        3000: {"commit": Commit(3000, "group-1", "b", ("t", 1), 5, 10, accepted=False,
                                owner=False, reason="ILLEGAL_GENERATION")},
        4000: {"offsets": {("t", 1): 3}}})
    assert [(v.at_ms, v.kind, v.consumer, v.offset, v.previous) for v in r.offsets] == [
        (2000, NOT_OWNER, "b", 15, 20), (2000, BACKWARDS, "b", 15, 20),
        (4000, LOST, None, 3, 10)]
    assert (r.commits, r.refused) == (3, 1)
    row = r.row()
    assert (row["I2 not owner"], row["I2 backwards"], row["I2 lost"],
            row["commits refused"]) == (1, 1, 1, 1)


def test_i4_a_settled_group_with_a_partition_held_twice_or_by_nobody_is_a_gap():
    r = _scripted({1000: {("t", 1): frozenset()}, 2000: {("t", 1): frozenset({"b"})},
                   3000: {("t", 0): frozenset({"a", "b"}), "settled": False}})
    assert [(g.at_ms, g.partition, g.holders) for g in r.coverage] == [(1000, ("t", 1), ())]


@pytest.mark.parametrize("settled_at, run_ms, ok", [
    (1200, 10_000, True),          # 700 ms after the crash at 500: within the bound of 1000
    (3000, 10_000, False),         # 2500 ms: too late
    (None, 10_000, False),         # never: a liveness failure
    (None, 1200, None)])           # the run ended before the bound passed: undecided
def test_i3_convergence_is_judged_against_the_design_s_own_bound(settled_at, run_ms, ok):
    script = {600: {"settled": False}}
    if settled_at is not None:
        script[settled_at] = {"settled": True}
    conv = _scripted(script, run_ms=run_ms).convergence
    assert conv.bound_ms == 1000 and conv.fault_end_ms == 500 and conv.ok is ok


def test_a_fault_ends_when_its_pause_cut_or_outage_ends():
    s = Scenario("t", faults=(Fault(1000, "pause", "c", 5000), Fault(2000, "crash", "c"),
                              Fault(3000, "slow", "c", 100_000)))
    assert fault_end_ms(s) == 6000
    assert Convergence(6000, 100, 6050, 9000).ms == 50
    assert Convergence(6000, 100, 5000, 9000).ms == 0


def test_a_design_without_offsets_is_checked_for_the_rest():
    class Plain(_Scripted):
        committed = commits = convergence_bound_ms = None  # type: ignore[assignment]
    d = Plain({1000: {("t", 1): frozenset({"a", "b"})}})
    r = measure(d, Scenario("t", {"group-1": ("a", "b")}, run_ms=2000)).checks
    assert not r.offsets_checked and r.offsets == [] and r.convergence.bound_ms is None
    assert len(r.overlaps) == 1


# -- what each design lets happen, under one GC pause longer than every session ----------------

def test_every_design_offers_what_the_checks_read():
    for name in DESIGNS:
        d = build(name, LONG_PAUSE)
        assert isinstance(d, CheckedDesign), name
        assert d.convergence_bound_ms() > 0


def test_zookeeper_two_owners_after_a_gc_pause_and_the_zombie_s_commit_is_accepted(long_pause):
    """The frozen consumer's session expires (6 s): its owner znodes vanish and the others
    claim its partitions, while it still holds fetched chunks. On wake it processes them and
    its auto-commit writes the offsets znodes with a plain write (no fencing in
    `ZookeeperConsumerConnector.commitOffsets`): accepted, and behind the new owner's."""
    r = long_pause["zookeeper"]
    assert {o.partition for o in r.violations} == {("t", 2), ("t", 3)}
    for o in r.violations:
        assert "consumer-2" in o.handed and o.end_ms > 40_000 > o.start_ms > 20_000 + 6000
    zombie = r.of_kind(NOT_OWNER)
    assert zombie and {v.consumer for v in zombie} == {"consumer-2"}
    assert all(v.at_ms >= 40_000 for v in zombie)       # written after it woke
    back = r.of_kind(BACKWARDS)
    assert back and all(v.offset < v.previous for v in back)
    assert r.refused == 0                                 # ZooKeeper refuses no write


def test_the_central_draft_delivers_twice_while_the_failed_consumer_sleeps(long_pause):
    """Failed after three unanswered pings, its partitions restarted elsewhere; on wake the
    application processes its buffered chunks before the connector sees the closed socket
    (the design's duplicate-delivery window). Its offsets are not taken any more: the
    coordinator only takes offsets from a consumer it started on the partition."""
    r = long_pause["central"]
    assert {o.partition for o in r.violations} == {("t", 2), ("t", 3)}
    assert all(o.end_ms == 40_000 and "consumer-2" in o.handed for o in r.violations)
    assert r.offsets == []


def test_today_s_consumer_has_the_window_but_its_commits_are_fenced(long_pause):
    """Expelled at its session timeout while frozen, it wakes still STABLE in its own eyes and
    hands out records of its old partitions (I1 window) until its heartbeat answers
    UNKNOWN_MEMBER_ID; its auto-commit with the dead generation is refused."""
    r = long_pause["classic"]
    assert r.violations and all("consumer-2" in o.handed for o in r.violations)
    assert r.offsets == []
    d = build("classic", LONG_PAUSE)
    measure(d, LONG_PAUSE)
    refused = [c for c in d.commits("group-1") if not c.accepted]
    assert refused and {c.consumer for c in refused} == {"consumer-2"}
    assert {c.reason for c in refused} <= {"UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION"}
    assert all(c.at_ms >= 40_000 for c in refused)


def test_the_central_coordinator_s_failover_loses_what_it_had_not_flushed():
    """The offsets it collected from pings since its last flush to ZooKeeper die with it: the
    new coordinator starts from the flushed ones, and those records are consumed again."""
    s = Scenario("failover", faults=(Fault(35_000, "coordinator", duration_ms=10_000),),
                 run_ms=90_000, settings=LIKE)
    c = compare(s)
    lost = c["central"].checks.of_kind(LOST)
    assert {v.partition for v in lost} == {("t", p) for p in range(6)}
    assert all(v.at_ms == 35_000 and v.offset < v.previous for v in lost)
    assert c["central"].duplicates > 0
    for name in ("zookeeper", "classic"):           # a ZooKeeper outage; a coordinator move
        assert c[name].checks.offsets == [] and c[name].duplicates == 0, name


def test_a_consumer_cut_off_from_zookeeper_keeps_consuming_what_others_now_own():
    """Cut from ZooKeeper but not from the brokers, its session expires and the others take
    its partitions; its fetchers never stop (0.8.2 stops them only in a rebalance)."""
    s = Scenario("cut", faults=(Fault(20_000, "cut", "consumer-2", 30_000),), run_ms=80_000,
                 settings=LIKE)
    r = check(s, ["zookeeper", "classic"])
    assert {o.partition for o in r["zookeeper"].violations} == {("t", 2), ("t", 3)}
    assert r["zookeeper"].of_kind(NOT_OWNER)
    assert r["classic"].offsets == []


def test_the_same_run_gives_the_same_checks():
    assert check(LONG_PAUSE) == check(LONG_PAUSE)


# -- any fault schedule: today's protocol never breaks I2 ------------------------------------

_TARGETS = ("consumer-1", "consumer-2", "consumer-3")


@st.composite
def _faults(draw):
    out = []
    partitions = 6
    for i in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(sorted(FAULT_KINDS)))
        at = draw(st.integers(5, 25)) * 1000
        duration = draw(st.integers(1, 15)) * 1000
        if kind == "partitions":
            partitions += draw(st.integers(1, 3))
            out.append(Fault(at, kind, "t", count=partitions))
            continue
        target = f"consumer-{4 + i}" if kind == "join" else draw(st.sampled_from(_TARGETS))
        out.append(Fault(at, kind, None if kind == "coordinator" else target,
                         duration if kind in ("pause", "cut", "coordinator", "slow") else None))
    out.sort(key=lambda f: (f.at_ms, f.count or 0))
    return tuple(out)


@settings(max_examples=8, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(_faults())
def test_under_any_fault_schedule_today_s_protocol_keeps_its_offsets(faults):
    """Every fault kind under all three designs: the checks run and are well formed; the
    classic coordinator accepts no commit from a non-owner, never moves an offset back and
    loses none (generation fencing, replicated offsets); a settled group covers every
    partition once in every design (I4)."""
    s = Scenario("random", faults=faults, run_ms=45_000, settings=LIKE)
    reports = check(s)
    assert set(reports) == set(DESIGNS)
    assert reports["classic"].offsets == [], reports["classic"].offsets
    for name, r in reports.items():
        assert r.coverage == [], (name, r.coverage)
        for o in r.overlaps:
            assert len(o.holders) > 1 and set(o.handed) <= set(o.holders)
            assert o.end_ms is None or o.end_ms > o.start_ms
        assert r.refused <= r.commits
        for v in r.offsets:
            assert v.kind in (NOT_OWNER, BACKWARDS, LOST)


@pytest.mark.parametrize("kind", sorted(FAULT_KINDS))
def test_each_fault_kind_alone_under_every_design(kind):
    """Each kind once, at 15 s, for 10 s where it lasts: classic keeps I2; I4 holds for all."""
    fault = Fault(15_000, kind, None if kind == "coordinator" else "t" if kind == "partitions"
                  else "consumer-4" if kind == "join" else "consumer-2",
                  10_000 if kind in ("pause", "cut", "coordinator", "slow") else None,
                  8 if kind == "partitions" else None)
    reports = check(Scenario(kind, faults=(fault,), run_ms=50_000, settings=LIKE))
    assert reports["classic"].offsets == []
    assert all(r.coverage == [] for r in reports.values())
    assert all(r.convergence is not None for r in reports.values())


def test_the_comparison_keeps_its_table_and_adds_the_checks_beside_it():
    c = compare(Scenario("t", faults=(Fault(5_000, "crash", "consumer-2"),), run_ms=20_000,
                         settings=LIKE), ["central", "classic"])
    assert list(c.rows()[0]) == ["design", "settle_ms", "unowned_ms", "max_unowned",
                                 "double_ms", "max_double", "messages", "rounds", "duplicates"]
    rows = c.check_rows()
    assert [r["design"] for r in rows] == [m.title for m in c.measures]
    assert {"I1 windows", "I1 violations", "I2 not owner", "I2 backwards", "I2 lost",
            "commits refused", "I3 settle_ms", "I3 bound_ms", "I3 ok", "I4 gaps"} < set(rows[0])
    assert measure(build("classic", c.scenario), c.scenario, checks=False).checks is None
