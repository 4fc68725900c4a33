"""The three rebalance protocols on one scenario (`coordinator_kit.protocols`), checked against
what Kafka does: eager rebalancing revokes everything (`ConsumerCoordinator.onJoinPrepare`),
cooperative-sticky revokes only what moves and hands it over in a second rebalance (KIP-429,
`ConsumerCoordinator.onJoinComplete` asking to rejoin after revoking), and the consumer group
protocol (KIP-848) moves only what moves, member by member, with no JoinGroup/SyncGroup
barrier (`ConsumerMembershipManager` reconciling on each member's own heartbeat)."""

from __future__ import annotations

import pytest

from coordinator_kit.eras.api import Fault, Scenario, build_design
from coordinator_kit.eras.classic import ClassicDesign
from coordinator_kit.eras.compare import measure
from coordinator_kit.protocols import (PROTOCOL_SCENARIOS, PROTOCOLS, EagerDesign,
                                       compare_protocols, protocol_scenario)
from coordinator_kit.protocols.compare import member_timeline

ALL = tuple(("t", p) for p in range(6))


@pytest.fixture(scope="module")
def runs():
    return {name: compare_protocols(name) for name in ("join", "crash", "leave", "coordinator")}


def _untouched(p, fault_ms):
    """Members that consumed the same partitions without a break from the fault to the end."""
    return [name for name, spans in p.timeline.items()
            if [(a <= fault_ms) for a, b, _ in spans if b > fault_ms] == [True]]


def test_join_eager_stops_every_partition_once(runs):
    eager = runs["join"]["eager"]
    assert eager.stopped == ALL                    # onJoinPrepare revoked everything
    assert eager.measures.max_unowned == 6
    assert eager.rounds == 1
    assert eager.epoch_before + 1 == eager.epoch_after
    assert eager.requests["JoinGroup"] >= 4 and eager.requests["SyncGroup"] >= 4
    assert _untouched(eager, 31_500) == []         # every member stopped, even those that keep


def test_join_cooperative_stops_only_the_moved_partition_in_two_rounds(runs):
    coop = runs["join"]["cooperative"]
    assert coop.stopped == coop.moved and len(coop.moved) == 1
    assert coop.measures.max_unowned == 1
    assert coop.rounds == 2                        # KIP-429: revoke, then a second rebalance
    assert coop.epoch_after - coop.epoch_before == 2
    # every member rejoined twice: a group-wide barrier each round
    assert coop.requests["JoinGroup"] >= 2 * 4 and coop.requests["SyncGroup"] >= 2 * 4
    assert sorted(_untouched(coop, 31_500)) == ["consumer-1", "consumer-2"]


def test_join_kip848_stops_only_the_moved_partition_without_a_barrier(runs):
    new = runs["join"]["consumer"]
    assert new.stopped == new.moved and len(new.moved) == 1
    assert new.rounds == 1                         # one new target assignment
    assert new.epoch_after == new.epoch_before + 1
    assert set(new.requests) <= {"ConsumerGroupHeartbeat", "FindCoordinator", "OffsetCommit",
                                 "OffsetFetch"}    # no JoinGroup, no SyncGroup
    assert sorted(_untouched(new, 31_500)) == ["consumer-1", "consumer-3"]
    # the revoking member gave up its partition and kept the other one throughout
    after = [s for s in new.timeline["consumer-2"] if s[1] > 31_500]
    assert len(after) == 2 and set(after[1][2]) < set(after[0][2])
    assert after[0][1] == after[1][0]              # no gap: it never stopped the one it kept
    assert min(p.round_trips for p in runs["join"].protocols) == new.round_trips


@pytest.mark.parametrize("scenario", ["crash", "leave"])
def test_a_member_gone_stops_all_under_eager_only_its_own_otherwise(runs, scenario):
    c = runs[scenario]
    assert c["eager"].stopped == ALL
    for name in ("cooperative", "consumer"):
        assert len(c[name].stopped) == 2 and set(c[name].stopped) == set(c[name].moved)
        assert c[name].measures.max_unowned == 2
        assert c[name].rounds == 1
    assert c["eager"].lost_partition_s > c["cooperative"].lost_partition_s


def test_crash_waits_for_the_session_timeout_in_every_protocol(runs):
    for p in runs["crash"].protocols:
        # session.timeout.ms (classic) and group.consumer.session.timeout.ms are both 45 s,
        # counted from the dead member's last heartbeat (at most one interval before it died)
        assert 40_000 <= p.settle_ms <= 50_000, p.title


def test_a_coordinator_move_is_not_a_rebalance_in_any_protocol(runs):
    for p in runs["coordinator"].protocols:
        assert p.stopped == () and p.rounds == 0 and p.epoch_before == p.epoch_after


def test_the_figures_are_deterministic(runs):
    again = compare_protocols("join")
    assert again.table() == runs["join"].table()
    assert again.timelines() == runs["join"].timelines()
    assert again.request_rows() == runs["join"].request_rows()


def test_the_table_shows_one_row_per_protocol_in_order(runs):
    lines = runs["join"].table().splitlines()
    assert lines[0].split()[:3] == ["protocol", "settle_ms", "lost_partition_s"]
    assert [ln.split("  ")[0].strip() for ln in lines[2:]] == [
        cls.title for cls in PROTOCOLS.values()]


def test_member_timeline_reads_the_sampled_changes():
    sc = protocol_scenario("leave")
    design = build_design(EagerDesign, sc)
    m = measure(design, sc, checks=False)
    spans = member_timeline(m, "group-1", sc.run_ms)
    assert set(spans) == {"consumer-1", "consumer-2", "consumer-3"}
    assert spans["consumer-2"][-1][1] == 31_500     # it left: nothing after the fault
    owned_at_end = sorted(tp for name in spans for tp in spans[name][-1][2]
                          if spans[name][-1][1] == sc.run_ms)
    assert owned_at_end == list(ALL)


def test_the_eager_adapter_only_reads_the_cluster():
    """The same classic run, with or without the protocol adapter, writes the same log."""
    sc = protocol_scenario("join")
    plain = build_design(ClassicDesign, Scenario(
        sc.name, sc.consumers, sc.topics, sc.faults, sc.run_ms,
        settings={"classic": {"partition.assignment.strategy": ["range"]}}))
    ours = build_design(EagerDesign, sc)
    measure(plain, sc, checks=False)
    measure(ours, sc, checks=False)
    assert ours.log_lines("DEBUG") == plain.log_lines("DEBUG")


def test_bad_input_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="the protocols are eager, cooperative, consumer"):
        compare_protocols("join", ["sticky"])
    with pytest.raises(ValueError, match="the scenarios are join"):
        compare_protocols("nope")
    with pytest.raises(ValueError, match="no group 'g'"):
        compare_protocols("join", group="g")
    sc = Scenario("x", faults=(Fault(1_000, "crash", "consumer-1"),),
                  settings={"eager": {"partition.assignment.strategy": ["cooperative-sticky"]}})
    with pytest.raises(ValueError, match="fixes partition.assignment.strategy"):
        compare_protocols(sc, ["eager"])


def test_every_scenario_runs_and_settles():
    for name in PROTOCOL_SCENARIOS:
        c = compare_protocols(name)
        assert all(p.settle_ms is not None for p in c.protocols), name


def test_the_picture_has_a_panel_per_protocol(runs):
    pytest.importorskip("matplotlib")
    from coordinator_kit.protocols.picture import protocol_lanes
    fig = protocol_lanes(runs["join"])
    titles = [ax.get_title(loc="left") for ax in fig.axes]
    assert titles == [cls.title for cls in PROTOCOLS.values()]
    with pytest.raises(ValueError, match="margin_ms"):
        protocol_lanes(runs["join"], margin_ms=-1)


def test_the_benchmark_measures_a_small_group_alike():
    """benchmarks/consumer_groups.py on 10 members: the same shapes as the table above."""
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "consumer_groups.py"
    spec = importlib.util.spec_from_file_location("consumer_groups_benchmark", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    eager, coop, new = (bench.run(p, 10, 2, "leave") for p in PROTOCOLS)
    assert eager["stopped"] == eager["max_stopped"] == 20
    assert coop["stopped"] == new["stopped"] == 2
    assert new["requests"] < coop["requests"] < eager["requests"]
    assert all(r["settle_ms"] is not None for r in (eager, coop, new))
    assert new["epoch"] == "10 -> 11"
