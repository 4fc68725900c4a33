"""Live diagrams, the rebalance sequence picture and the timelines, all read off the trace.

Kafka's side: `CoordinatorState` (context states), `ClassicGroupState` and
`group.initial.rebalance.delay.ms` (classic group states, the initial rebalance delay), and the
Java client's `AbstractCoordinator.MemberState` (member states, heartbeats during a rebalance).
"""

from __future__ import annotations

import html
import re
import shutil

import pytest

from coordinator_kit.client import MemberState
from coordinator_kit.group import ClassicGroupState
from coordinator_kit.runtime import CoordinatorState
from coordinator_kit.scenarios import new_cluster, run_scenario
from coordinator_kit.viz import live, plots, sequence

G, M, S = ClassicGroupState, MemberState, CoordinatorState
TAKEN = 'color="#d84315"'


def _filled(dot: str) -> list[str]:
    return re.findall(r'^  "([^"]+)" \[style="filled,bold"', dot, flags=re.M)


def _taken(dot: str) -> list[tuple[str, str]]:
    return re.findall(r'^  "([^"]+)" -> "([^"]+)" \[label="[^"]*", ' + re.escape(TAKEN), dot,
                      flags=re.M)


@pytest.fixture(scope="module")
def second_joins():
    """consumer-1 joins at 0 s, consumer-2 at 10 s; requests recorded (same steps as the
    "second-joins" scenario)."""
    c = new_cluster(0)
    sequence.record_requests(c)
    c.add_consumer("consumer-1")
    c.run_for(10_000)
    c.add_consumer("consumer-2")
    c.run_for(10_000)
    return c


# -- transitions from the trace ------------------------------------------------------------------

def test_member_transitions_follow_the_join_then_sync_path(second_joins):
    moves = [(t.old, t.new) for t in live.member_transitions(second_joins.trace, "consumer-2")]
    # MEMBER_ID_REQUIRED makes the first JoinGroup go out twice (P -> P), then join, then sync.
    assert moves == [(M.UNJOINED, M.PREPARING_REBALANCE),
                     (M.PREPARING_REBALANCE, M.PREPARING_REBALANCE),
                     (M.PREPARING_REBALANCE, M.COMPLETING_REBALANCE),
                     (M.COMPLETING_REBALANCE, M.STABLE)]


def test_group_transitions_rebuilt_from_the_coordinator_log(second_joins):
    """ClassicGroupState: Empty -> PreparingRebalance -> CompletingRebalance (generation + 1) ->
    Stable; a new member sends the Stable group back to PreparingRebalance."""
    moves = live.group_transitions(second_joins.trace, "group-1")
    assert [(t.new, t.generation) for t in moves] == [
        (G.EMPTY, None), (G.PREPARING_REBALANCE, 0), (G.COMPLETING_REBALANCE, 1),
        (G.STABLE, 1), (G.PREPARING_REBALANCE, 1), (G.COMPLETING_REBALANCE, 2), (G.STABLE, 2)]
    for t in moves[1:]:
        assert t.old is not None and t.edge in {(e.source, e.target) for e in
                                                 live.CLASSIC_GROUP_STATES.edges()}
    # The trace has no event for CompletingRebalance -> Stable: it is taken from the first
    # member's SyncGroup response and says so.
    assert [t.derived for t in moves if t.new is G.STABLE] == [True, True]
    assert moves[-1].new.value == second_joins.group("group-1")["state"]


def test_group_history_from_a_kafka_python_client_too():
    """kafka-python's log lines carry the group as a field, not in a `groupId=` prefix, and
    print the generation as `<Generation 1 (...)>`: the same history comes out."""
    c = new_cluster(0)
    c.add_consumer("consumer-1", client_style="kafka-python")
    c.add_consumer("other", group_id="group-2")
    c.run_for(10_000)
    assert [t.new for t in live.group_transitions(c.trace, "group-1")][-2:] == [
        G.COMPLETING_REBALANCE, G.STABLE]
    assert [(r.generation, r.outcome) for r in plots.rebalances(c.trace, "group-1")] == [
        (1, "Stable")]
    dot = sequence.sequence_dot(c, group_id="group-1")
    assert 'label="consumer-1"' in dot and 'label="other"' not in dot
    assert 'label="JoinGroup response (generation 1)"' in dot


def test_context_transitions_per_broker_after_a_move():
    c = run_scenario("coordinator-failover")
    tp = c.partition_of("group-1")
    new = c.coordinator_for("group-1")
    assert [(t.old, t.new) for t in live.context_transitions(c.trace, tp, new)] == [
        (S.INITIAL, S.LOADING), (S.LOADING, S.ACTIVE)]
    old = [t for t in live.context_transitions(c.trace, tp) if t.source != f"broker-{new}"]
    assert (old[-1].old, old[-1].new) == (S.ACTIVE, S.CLOSED)


# -- live diagrams -------------------------------------------------------------------------------

def test_live_dot_fills_current_and_colours_the_last_edge():
    dot = live.live_dot(live.MEMBER_STATES, M.STABLE, (M.COMPLETING_REBALANCE, M.STABLE))
    assert _filled(dot) == ["STABLE"]
    assert _taken(dot) == [("COMPLETING_REBALANCE", "STABLE")]


def test_live_dot_ignores_a_stale_or_illegal_last_edge():
    # The last move ended elsewhere (a restart): nothing is coloured, the state is still filled.
    dot = live.live_dot(live.MEMBER_STATES, M.UNJOINED, (M.COMPLETING_REBALANCE, M.STABLE))
    assert _filled(dot) == ["UNJOINED"] and _taken(dot) == []
    # A freshly loaded group: previous_state Empty, state Stable, not an edge of the table.
    dot = live.live_dot(live.CLASSIC_GROUP_STATES, G.STABLE, (G.EMPTY, G.STABLE))
    assert _filled(dot) == ["Stable"] and _taken(dot) == []


def test_live_diagrams_straight_from_a_cluster(second_joins):
    group = live.group_dot(second_joins, "group-1")
    assert _filled(group) == ["Stable"]
    assert _taken(group) == [("CompletingRebalance", "Stable")]
    assert "group-1 on broker 2 (__consumer_offsets-2): Stable, generation 2" in group
    member = live.member_dot(second_joins, "consumer-1")
    assert _filled(member) == ["STABLE"]
    assert _taken(member) == [("COMPLETING_REBALANCE", "STABLE")]
    assert "consumer-1 (running): STABLE, generation 2" in member
    context = live.context_dot(second_joins, "group-1")
    assert _filled(context) == ["ACTIVE"] and _taken(context) == [("LOADING", "ACTIVE")]


def test_live_group_diagram_during_a_rebalance():
    c = run_scenario("second-joins")
    c.add_consumer("consumer-3")
    c.run_for(10)  # the JoinGroup (with its member id) reached the coordinator
    dot = live.group_dot(c, "group-1")
    assert _filled(dot) == ["PreparingRebalance"]
    assert _taken(dot) == [("Stable", "PreparingRebalance")]


def test_a_failed_load_shows_in_the_context_diagram():
    """CoordinatorState: LOADING -> FAILED when the loader fails."""
    c = run_scenario("second-joins")
    tp = c.partition_of("group-1")
    target = next(b for b in c.partitions[tp].isr if b != c.coordinator_for("group-1"))
    c.fail_next_load(tp.partition, target)
    c.move_coordinator("group-1", target)
    c.run_for(50)
    dot = live.context_dot(c, "group-1")
    assert _filled(dot) == ["FAILED"] and _taken(dot) == [("LOADING", "FAILED")]
    assert live.group_dot(c, "group-1").count("not loaded") == 1


def test_live_diagram_is_a_graphviz_source():
    src = live.live_diagram(live.CONTEXT_STATES, S.ACTIVE, (S.LOADING, S.ACTIVE))
    assert src.source == live.live_dot(live.CONTEXT_STATES, S.ACTIVE, (S.LOADING, S.ACTIVE))


# -- the sequence picture ------------------------------------------------------------------------

def test_recorded_messages_pair_requests_with_responses(second_joins):
    found, derived = sequence.messages(second_joins.trace)
    assert not derived
    joins = [m for m in found if m.client == "consumer-2" and m.api == "JoinGroup"]
    # KIP-394: the first JoinGroup of a new member is answered MEMBER_ID_REQUIRED.
    assert [(m.kind, m.error) for m in joins[:4]] == [
        ("request", None), ("response", "MEMBER_ID_REQUIRED"), ("request", None),
        ("response", "NONE")]
    assert joins[3].generation == 2
    for m in found:
        assert m.end is not None and m.end[0] - m.start[0] == second_joins.network.latency_ms


def test_a_stable_member_learns_of_the_rebalance_from_its_heartbeat(second_joins):
    found, _ = sequence.messages(second_joins.trace)
    hb = [m for m in found if m.client == "consumer-1" and m.api == "Heartbeat"
          and m.kind == "response" and 10_000 <= m.start[0] <= 12_200]
    assert [m.error for m in hb] == ["REBALANCE_IN_PROGRESS"]


def test_sequence_dot_is_deterministic_and_windowed(second_joins):
    dot = sequence.sequence_dot(second_joins, start_ms=10_000, end_ms=12_200)
    assert dot == sequence.sequence_dot(second_joins, start_ms=10_000, end_ms=12_200)
    lanes = re.findall(r'^  "h\d+" \[.*label="([^"]+)"', dot, flags=re.M)
    assert lanes == ["consumer-1", "consumer-2", "broker 2"]
    assert dot.count('label="JoinGroup"') == 3
    assert dot.count('label="SyncGroup"') == 2
    assert 'label="JoinGroup response: MEMBER_ID_REQUIRED"' in dot
    assert 'label="Heartbeat response: REBALANCE_IN_PROGRESS"' in dot
    assert "LeaveGroup" not in dot
    times = [int(t) for t in re.findall(r'label="(\d+) ms"', dot)]
    assert times == sorted(times) and times[0] >= 10_000 and times[-1] <= 12_200 + 1
    only = sequence.sequence_dot(second_joins, start_ms=10_000, end_ms=12_200,
                                 members=["consumer-2"], apis=("JoinGroup",))
    assert re.findall(r'^  "h\d+" \[.*label="([^"]+)"', only, flags=re.M) == [
        "consumer-2", "broker 2"]
    assert "SyncGroup" not in only and "Heartbeat" not in only


def test_lost_heartbeats_are_drawn_as_lost():
    c = run_scenario("second-joins")
    sequence.record_requests(c)
    sequence.record_requests(c)  # idempotent: one set of events per message
    c.drop_heartbeats("consumer-1")
    c.run_for(4_000)
    found, _ = sequence.messages(c.trace)
    lost = [m for m in found if m.client == "consumer-1" and m.api == "Heartbeat"]
    assert lost and all(m.end is None and m.label == "Heartbeat (lost)" for m in lost)
    assert len([e for e in c.trace if e.kind == "request_sent"]) == len(
        [m for m in found if m.kind == "request"])
    dot = sequence.sequence_dot(c, start_ms=20_000, members=["consumer-1"])
    assert 'label="✕"' in dot and 'label="Heartbeat (lost)"' in dot


def test_without_recorded_requests_the_picture_is_derived_and_says_so():
    c = run_scenario("second-joins")
    found, derived = sequence.messages(c.trace)
    assert derived
    assert {m.api for m in found} == {"JoinGroup", "SyncGroup"}
    dot = sequence.sequence_dot(c, start_ms=10_000, end_ms=12_200)
    assert "derived from the consumers' log lines" in dot
    assert 'label="JoinGroup response (generation 2)"' in dot


def test_sequence_window_errors_are_clear(second_joins):
    with pytest.raises(ValueError, match="ends before it starts: start_ms=5, end_ms=1"):
        sequence.sequence_dot(second_joins, start_ms=5, end_ms=1)
    with pytest.raises(ValueError, match=r"unknown api\(s\) \['Hearbeat'\]"):
        sequence.sequence_dot(second_joins, apis=("Hearbeat",))


@pytest.mark.skipif(shutil.which("neato") is None, reason="needs Graphviz neato")
def test_sequence_svg_shows_every_arrow_label(second_joins):
    from coordinator_kit.viz.cli import render_svg

    dot = sequence.sequence_dot(second_joins, start_ms=10_000, end_ms=12_200)
    svg = render_svg(dot, "neato")
    texts = {html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)}
    labels = {lab for lab in re.findall(r'label="([^"]+)"', dot)}
    assert labels <= texts


# -- timelines -----------------------------------------------------------------------------------

def test_rebalances_per_generation(second_joins):
    found = plots.rebalances(second_joins.trace, "group-1")
    assert [(r.generation, r.outcome, r.members) for r in found] == [
        (1, "Stable", 1), (2, "Stable", 2)]
    first, second = found
    # A group that starts Empty waits group.initial.rebalance.delay.ms (3 s).
    assert 3_000 <= first.duration_ms < 3_100
    # The stable member hears of the rebalance from its next heartbeat (every 3 s).
    assert 0 < second.duration_ms < 3_000 + 200


def test_an_unfinished_rebalance_has_no_end():
    c = run_scenario("second-joins")
    c.add_consumer("consumer-3")
    c.run_for(10)
    last = plots.rebalances(c.trace, "group-1")[-1]
    assert last.end_ms is None and last.duration_ms is None and last.outcome is None


def test_member_segments_end_at_a_crash():
    c = run_scenario("one-dies")
    segs = plots.member_segments(c.trace, end_ms=c.scheduler.now)
    crashed = [e.ts for e in c.trace if e.kind == "consumer_crashed"]
    assert segs["consumer-1"][-1].state is None and segs["consumer-1"][-1].start == crashed[0]
    assert segs["consumer-2"][-1].state is M.STABLE
    assert segs["consumer-2"][-1].end == c.scheduler.now
    for lane in segs.values():
        assert all(a.end == b.start for a, b in zip(lane, lane[1:]))


def _svg_texts(svg: str) -> list[str]:
    return [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


def test_swimlanes_svg_is_deterministic_with_lane_labels():
    c = run_scenario("one-dies")
    svg = plots.figure_svg(plots.swimlanes(c.trace))
    assert svg == plots.figure_svg(plots.swimlanes(c.trace))
    assert "<dc:date>" not in svg
    texts = _svg_texts(svg)
    for label in ("group-1 (coordinator)", "consumer-1", "consumer-2", "virtual time (s)",
                  "STABLE", "crashed"):
        assert label in texts


def test_rebalance_durations_figure_labels_each_generation(second_joins):
    found = plots.rebalances(second_joins.trace, "group-1")
    texts = _svg_texts(plots.figure_svg(plots.rebalance_durations(second_joins.trace)))
    for r in found:
        assert f"gen {r.generation}" in texts and f"{r.duration_ms} ms" in texts
    empty = _svg_texts(plots.figure_svg(plots.rebalance_durations([], "group-9")))
    assert "no rebalance yet" in empty
