"""eras.api, eras.compare and today's coordinator as a design (eras.classic).

The classic design's figures are checked against what Kafka's classic protocol does in the
same situation: a crashed member is only noticed at the coordinator's session timeout
(`GroupMetadataManager` session timer), a paused member that wakes after it was expelled still
hands out records it holds until its next heartbeat answers UNKNOWN_MEMBER_ID
(`ConsumerCoordinator.poll`), a coordinator move keeps the generation (no rebalance: the group
is loaded from `__consumer_offsets`), a joining member triggers one rebalance.
"""

from __future__ import annotations

import pytest

from coordinator_kit.clock import Scheduler
from coordinator_kit.eras.api import Design, Fault, ProcessedLedger, Scenario
from coordinator_kit.eras.classic import ClassicDesign, build as build_classic
from coordinator_kit.eras.compare import compare, measure
from coordinator_kit.trace import Trace

FAST = {"classic": {"session.timeout.ms": 10000, "heartbeat.interval.ms": 3000,
                    "group.initial.rebalance.delay.ms": 0}}


def _one(fault: Fault, run_ms: int = 90_000, settings=FAST):
    return compare(Scenario("t", faults=(fault,), run_ms=run_ms, settings=settings),
                   ["classic"])["classic"]


# -- the ledger ------------------------------------------------------------------------------

def test_the_ledger_counts_each_record_processed_again_once_per_repeat():
    ledger = ProcessedLedger()
    assert ledger.processed("a", ("t", 0), 0, 10) == 0
    assert ledger.processed("b", ("t", 0), 5, 15) == 5
    assert ledger.processed("a", ("t", 0), 20, 30) == 0
    assert ledger.processed("c", ("t", 0), 0, 40) == 25     # 0-15 and 20-30 again
    assert ledger.processed("c", ("t", 1), 0, 40) == 0      # another partition
    assert (ledger.duplicates, ledger.records, ledger.by_consumer) == (30, 110, {"b": 5, "c": 25})
    assert ledger._done[("", ("t", 0))] == [[0, 40]]               # merged: stays small


@pytest.mark.parametrize("kwargs, message", [
    ({"at_ms": 0, "kind": "explode", "target": "c"}, "not one of crash"),
    ({"at_ms": -1, "kind": "crash", "target": "c"}, "at_ms is a whole number"),
    ({"at_ms": 0, "kind": "crash"}, "names its consumer"),
    ({"at_ms": 0, "kind": "pause", "target": "c"}, "needs duration_ms > 0"),
])
def test_a_bad_fault_is_refused_by_name(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Fault(**kwargs)


def test_settings_for_an_unknown_design_or_key_are_refused():
    with pytest.raises(ValueError, match="unknown design"):
        compare(Scenario("t"), ["zk"])
    with pytest.raises(ValueError, match="settings for unknown design"):
        compare(Scenario("t", settings={"classc": {}}), ["classic"])
    with pytest.raises(ValueError, match="unknown setting 'session.timeout'"):
        build_classic(Scenario("t", settings={"classic": {"session.timeout": 1}}))


# -- measuring, on a design whose answers the test sets ---------------------------------------

class _Scripted:
    """A design whose consumers of t-0 and t-1 change at scripted times."""

    name, title = "scripted", "Scripted"

    def __init__(self, script: dict[int, dict]) -> None:
        self.scheduler = Scheduler(threadsafe=False)
        self.trace = Trace(self.scheduler)
        self.ledger = ProcessedLedger()
        self.now = {("t", 0): frozenset({"a"}), ("t", 1): frozenset({"b"})}
        self.messages = 0
        for at, change in script.items():
            self.scheduler.call_at(at, self.now.update, change)

    def add_consumer(self, name, group_id, topics): ...
    def apply(self, fault): self.messages += 10
    def fetching(self, group_id): return dict(self.now)
    def settled(self, group_id): return all(len(v) == 1 for v in self.now.values())
    def coordination_messages(self): return self.messages
    def rebalance_rounds(self, group_id): return 0
    def log_lines(self, level="INFO"): return []


def test_measure_integrates_each_sample_until_the_next_from_the_first_fault_on():
    d = _Scripted({1000: {("t", 1): frozenset()},                    # t-1 orphaned 1000-3000
                   3000: {("t", 1): frozenset({"a", "b"})},          # doubled 3000-3500
                   3500: {("t", 1): frozenset({"a"})}})
    assert isinstance(d, Design)
    m = measure(d, Scenario("t", faults=(Fault(500, "crash", "b"),), run_ms=10_000))
    assert (m.unowned_ms, m.max_unowned, m.double_ms, m.max_double) == (2000, 1, 500, 1)
    assert m.settle_ms == 3000            # settled from 3500 on, 3000 after the fault at 500
    assert m.messages == 10
    assert [(t, tp, sorted(who)) for t, _, tp, who in m.changes] == [
        (0, ("t", 0), ["a"]), (0, ("t", 1), ["b"]), (1000, ("t", 1), []),
        (3000, ("t", 1), ["a", "b"]), (3500, ("t", 1), ["a"])]


def test_what_happens_before_the_first_fault_is_not_counted():
    d = _Scripted({100: {("t", 1): frozenset()}, 2000: {("t", 1): frozenset({"b"})}})
    m = measure(d, Scenario("t", faults=(Fault(1500, "crash", "b"),), run_ms=5000))
    assert m.unowned_ms == 500            # 1500-2000 only


def test_a_design_that_never_settles_after_the_fault_has_no_settle_time():
    d = _Scripted({1000: {("t", 1): frozenset()}})
    assert measure(d, Scenario("t", faults=(Fault(500, "crash", "b"),), run_ms=5000)
                   ).settle_ms is None


# -- today's coordinator as a design ----------------------------------------------------------

def test_the_classic_design_is_a_design_and_settles_with_every_partition_consumed_once():
    d = build_classic(Scenario("t", settings=FAST))
    assert isinstance(d, Design) and isinstance(d, ClassicDesign)
    d.scheduler.run_for(5000)
    assert d.settled("group-1")
    owners = d.fetching("group-1")
    assert sorted(owners) == [("t", p) for p in range(6)]
    assert all(len(who) == 1 for who in owners.values())
    assert d.rebalance_rounds("group-1") == 1 and d.coordination_messages() > 0
    assert d.ledger.records > 0 and d.ledger.duplicates == 0


def test_a_crash_is_noticed_at_the_session_timeout_with_one_rebalance_and_no_double_owner():
    m = _one(Fault(20_000, "crash", "consumer-2"))
    assert 10_000 - 3_000 <= m.settle_ms <= 10_000 + 2_000   # the last heartbeat + session
    assert m.rounds == 1 and m.double_ms == 0
    assert m.unowned_ms >= 2 * 7_000                         # its two partitions wait


def test_a_pause_longer_than_the_session_leaves_a_zombie_window_and_two_rebalances():
    """Expelled while frozen, the member wakes still STABLE in its own eyes: it hands out its
    old partitions' records until its heartbeat comes back UNKNOWN_MEMBER_ID, then rejoins."""
    m = _one(Fault(20_000, "pause", "consumer-2", 20_000))
    assert m.rounds == 2
    assert m.double_ms > 0 and m.max_double == 2
    assert m.duplicates > 0


def test_a_pause_shorter_than_the_session_changes_nothing():
    m = _one(Fault(20_000, "pause", "consumer-2", 5_000))
    assert (m.rounds, m.unowned_ms, m.double_ms, m.duplicates) == (0, 0, 0, 0)


def test_a_coordinator_failure_moves_the_group_without_a_rebalance():
    m = _one(Fault(20_000, "coordinator"))
    assert (m.rounds, m.unowned_ms, m.double_ms) == (0, 0, 0)
    assert m.settle_ms is not None and m.settle_ms < 1000


def test_a_join_is_one_rebalance():
    m = _one(Fault(20_000, "join", "consumer-4"))
    assert m.rounds == 1 and m.double_ms == 0 and m.settle_ms < 5000


def test_a_cut_consumer_keeps_consuming_after_it_was_expelled_until_it_hears_back():
    m = _one(Fault(20_000, "cut", "consumer-2", 30_000))
    assert m.rounds == 2 and m.double_ms > 10_000


def test_the_same_scenario_gives_the_same_measures_twice():
    s = Scenario("t", faults=(Fault(20_000, "pause", "consumer-2", 20_000),
                              Fault(30_000, "join", "consumer-4")), run_ms=60_000, settings=FAST)
    a, b = compare(s, ["classic"])["classic"], compare(s, ["classic"])["classic"]
    assert a == b


def test_two_groups_reading_the_same_partition_are_not_duplicates():
    ledger = ProcessedLedger()
    ledger.groups.update({"a": "g1", "b": "g2", "c": "g1"})
    assert ledger.processed("a", ("t", 0), 0, 10) == 0
    assert ledger.processed("b", ("t", 0), 0, 10) == 0
    assert ledger.processed("c", ("t", 0), 5, 10) == 5


def test_every_named_scenario_runs_under_the_classic_design():
    from coordinator_kit.eras.scenarios import SCENARIOS, scenario
    for name in SCENARIOS:
        m = compare(scenario(name), ["classic"])["classic"]
        assert m.settle_ms is not None, name
    assert compare(scenario("many-groups"), ["classic"])["classic"].duplicates == 0
    with pytest.raises(ValueError, match="no scenario 'gc'"):
        scenario("gc")


def test_the_ownership_lanes_draw_what_the_table_counts_and_the_same_bytes_twice():
    from coordinator_kit.eras.scenarios import scenario
    from coordinator_kit.viz.ownership import owner_segments, ownership_lanes
    from coordinator_kit.viz.plots import figure_svg

    c = compare(scenario("long-pause"), ["classic"])
    m = c["classic"]
    spans = owner_segments(m, "group-1", c.scenario.run_ms)
    doubled = sum(min(b, c.scenario.run_ms) - max(a, 30_000)
                  for segs in spans.values() for a, b, who in segs if len(who) > 1)
    assert doubled == m.double_ms > 0
    svg = figure_svg(ownership_lanes(c))
    assert "consumer-2 pauses" in svg and "t-5" in svg and "two or more" in svg
    assert svg == figure_svg(ownership_lanes(compare(scenario("long-pause"), ["classic"])))


def test_the_ledger_counts_the_records_a_new_owner_jumped_over():
    ledger = ProcessedLedger()
    ledger.processed("a", ("t", 0), 0, 10)
    ledger.processed("b", ("t", 0), 15, 20)       # 10-15: nobody
    ledger.processed("b", ("t", 0), 30, 40)       # 20-30: nobody
    ledger.processed("a", ("t", 0), 25, 30)       # 25-30 after all
    assert ledger.skipped() == 10


def test_after_a_crash_the_zookeeper_consumer_skips_what_the_others_repeat():
    """0.8.2 commits every 60 s and a new owner with no committed offset starts at
    auto.offset.reset=largest: consumer-2's partitions lose what came in between (notebook 07,
    section 2.6, quotes these figures); the coordinators' consumers repeat records instead."""
    from coordinator_kit.eras.compare import build, measure
    from coordinator_kit.eras.scenarios import scenario

    figures = {}
    for name in ("zookeeper", "central", "classic"):
        s = scenario("crash")
        d = build(name, s)
        m = measure(d, s)
        figures[name] = (m.duplicates, d.ledger.skipped())
    assert figures == {"zookeeper": (0, 1244), "central": (400, 0), "classic": (800, 0)}
