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
from coordinator_kit.viz.diagrams import Diagram

G, M, S = ClassicGroupState, MemberState, CoordinatorState
TAKEN = 'color="#d84315"'


def _filled(dot: str) -> list[str]:
    return re.findall(r'^  "([^"]+)" \[style="filled,bold"', dot, flags=re.M)


def _taken(dot: str) -> list[tuple[str, str]]:
    return re.findall(r'^  "([^"]+)" -> "([^"]+)" \[label="[^"]*", ' + re.escape(TAKEN), dot,
                      flags=re.M)


def _labels(dot: str) -> dict[tuple[str, str], str]:
    """Every edge's label as written in the DOT text (lines joined by a literal \\n)."""
    return {(a, b): label for a, b, label in
            re.findall(r'^  "([^"]+)" -> "([^"]+)" \[label="([^"]*)"', dot, flags=re.M)}


def _path(dot: str) -> list[tuple[int, str, str]]:
    """The numbered path: (number, source, target) for every number on a coloured edge."""
    out = []
    for a, b in _taken(dot):
        first = _labels(dot)[(a, b)].split("\\n")[0]
        if re.fullmatch(r"\d+(, \d+)*", first):
            out += [(int(n), a, b) for n in first.split(", ")]
    return sorted(out)


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
    assert _path(dot) == []  # one edge in colour, no number


def test_live_dot_ignores_a_stale_or_illegal_last_edge():
    # The last move ended elsewhere (a restart): nothing is coloured, the state is still filled.
    dot = live.live_dot(live.MEMBER_STATES, M.UNJOINED, (M.COMPLETING_REBALANCE, M.STABLE))
    assert _filled(dot) == ["UNJOINED"] and _taken(dot) == []
    # A freshly loaded group: previous_state Empty, state Stable, not an edge of the table.
    dot = live.live_dot(live.CLASSIC_GROUP_STATES, G.STABLE, (G.EMPTY, G.STABLE))
    assert _filled(dot) == ["Stable"] and _taken(dot) == []


def test_a_path_is_numbered_in_order_and_an_edge_taken_twice_shows_both_numbers():
    moves = [(M.UNJOINED, M.PREPARING_REBALANCE), (M.PREPARING_REBALANCE,
             M.COMPLETING_REBALANCE), (M.COMPLETING_REBALANCE, M.PREPARING_REBALANCE),
             (M.PREPARING_REBALANCE, M.COMPLETING_REBALANCE),
             (M.COMPLETING_REBALANCE, M.STABLE)]
    dot = live.live_dot(live.MEMBER_STATES, M.STABLE, moves=moves)
    assert _path(dot) == [(n, str(a), str(b)) for n, (a, b) in enumerate(moves, start=1)]
    assert _labels(dot)[("PREPARING_REBALANCE", "COMPLETING_REBALANCE")].startswith("2, 4\\n")
    assert _filled(dot) == ["STABLE"]
    assert "Orange 1, 2, 3…: the transitions in this run, in order; filled: the state now." \
        in dot
    # A move the table refuses is not numbered (UNJOINED cannot go straight to STABLE).
    odd = live.live_dot(live.MEMBER_STATES, M.STABLE, moves=[(M.UNJOINED, M.STABLE)])
    assert _path(odd) == [] and "No transition in this run" in odd


def test_since_ms_keeps_the_moves_after_the_last_action_and_limit_keeps_the_latest():
    t = [live.Transition(ts, a, b) for ts, a, b in (
        (10, M.UNJOINED, M.PREPARING_REBALANCE), (20, M.PREPARING_REBALANCE,
         M.COMPLETING_REBALANCE), (30, M.COMPLETING_REBALANCE, M.STABLE),
        (40, M.STABLE, M.PREPARING_REBALANCE))]
    since = live.live_dot(live.MEMBER_STATES, M.PREPARING_REBALANCE, moves=t, since_ms=20)
    assert _path(since) == [(1, "PREPARING_REBALANCE", "COMPLETING_REBALANCE"),
                            (2, "COMPLETING_REBALANCE", "STABLE"),
                            (3, "STABLE", "PREPARING_REBALANCE")]
    assert "the transitions since 20 ms, in order" in since
    capped = live.live_dot(live.MEMBER_STATES, M.PREPARING_REBALANCE, moves=t, limit=2)
    assert _path(capped) == [(1, "COMPLETING_REBALANCE", "STABLE"),
                             (2, "STABLE", "PREPARING_REBALANCE")]
    assert "(… 2 earlier moves not numbered)" in capped
    none = live.live_dot(live.MEMBER_STATES, M.PREPARING_REBALANCE, moves=t, since_ms=41)
    assert _path(none) == [] and "No transition since 41 ms; filled: the state now." in none
    assert _filled(none) == ["PREPARING_REBALANCE"]
    with pytest.raises(ValueError, match="limit must be at least 1 .* got 0"):
        live.live_dot(live.MEMBER_STATES, None, moves=t, limit=0)


def test_many_passes_over_one_edge_are_summed_up():
    from coordinator_kit.viz.diagrams import step_numbers

    assert step_numbers([3]) == "3" and step_numbers([2, 5, 9, 11]) == "2, 5, 9, 11"
    assert step_numbers([2, 3, 4, 5, 9]) == "2, 3 … 9 (5×)"


def test_live_diagrams_straight_from_a_cluster(second_joins):
    """The whole run by default: Kafka's join (AbstractCoordinator.joinGroupIfNeeded) twice
    for consumer-1, the second time after its heartbeat got REBALANCE_IN_PROGRESS."""
    group = live.group_dot(second_joins, "group-1")
    assert _filled(group) == ["Stable"]
    P, C, S, E = "PreparingRebalance", "CompletingRebalance", "Stable", "Empty"
    assert _path(group) == [(1, E, P), (2, P, C), (3, C, S), (4, S, P), (5, P, C), (6, C, S)]
    assert "group-1 on broker 2 (__consumer_offsets-2): Stable, generation 2, at 20,000 ms" \
        in group
    member = live.member_dot(second_joins, "consumer-1")
    assert _filled(member) == ["STABLE"]
    U, MP, MC, MS = "UNJOINED", "PREPARING_REBALANCE", "COMPLETING_REBALANCE", "STABLE"
    # KIP-394: the first JoinGroup is answered MEMBER_ID_REQUIRED and sent again (P -> P).
    assert _path(member) == [(1, U, MP), (2, MP, MP), (3, MP, MC), (4, MC, MS), (5, MS, MP),
                             (6, MP, MC), (7, MC, MS)]
    assert "consumer-1 (running): STABLE, generation 2" in member
    context = live.context_dot(second_joins, "group-1")
    assert _filled(context) == ["ACTIVE"]
    assert _path(context) == [(1, "INITIAL", "LOADING"), (2, "LOADING", "ACTIVE")]
    since = live.member_dot(second_joins, "consumer-1", since_ms=10_000)
    assert _path(since) == [(1, MS, MP), (2, MP, MC), (3, MC, MS)]
    assert "since 10,000 ms" in since


def test_live_group_diagram_during_a_rebalance():
    c = run_scenario("second-joins")
    c.add_consumer("consumer-3")
    c.run_for(10)  # the JoinGroup (with its member id) reached the coordinator
    dot = live.group_dot(c, "group-1", since_ms=20_000)
    assert _filled(dot) == ["PreparingRebalance"]
    assert _path(dot) == [(1, "Stable", "PreparingRebalance")]


def test_the_groups_own_last_move_ends_the_path_before_the_trace_shows_it():
    """The trace learns of CompletingRebalance -> Stable from the first member's SyncGroup
    answer, one network latency after the coordinator's move; the diagram does not wait."""
    c = run_scenario("second-joins")
    c.add_consumer("consumer-3")
    group = c.shard_for("group-1").groups.group("group-1")
    while group.state is G.STABLE:
        c.run_for(1)
    while group.state is not G.STABLE:
        c.run_for(1)
    assert live.group_transitions(c.trace, "group-1")[-1].new is G.COMPLETING_REBALANCE
    dot = live.group_dot(c, "group-1", since_ms=20_000)
    assert _filled(dot) == ["Stable"]
    assert _path(dot) == [(1, "Stable", "PreparingRebalance"),
                          (2, "PreparingRebalance", "CompletingRebalance"),
                          (3, "CompletingRebalance", "Stable")]


def test_a_failed_load_shows_in_the_context_diagram():
    """CoordinatorState: LOADING -> FAILED when the loader fails."""
    c = run_scenario("second-joins")
    tp = c.partition_of("group-1")
    target = next(b for b in c.partitions[tp].isr if b != c.coordinator_for("group-1"))
    c.fail_next_load(tp.partition, target)
    c.move_coordinator("group-1", target)
    c.run_for(50)
    dot = live.context_dot(c, "group-1")
    assert _filled(dot) == ["FAILED"]
    assert _path(dot) == [(1, "INITIAL", "LOADING"), (2, "LOADING", "FAILED")]
    assert live.group_dot(c, "group-1").count("not loaded") == 1


def test_live_diagram_is_a_diagram_of_the_dot_text():
    src = live.live_diagram(live.CONTEXT_STATES, S.ACTIVE, (S.LOADING, S.ACTIVE))
    assert isinstance(src, Diagram)
    assert src.source == live.live_dot(live.CONTEXT_STATES, S.ACTIVE, (S.LOADING, S.ACTIVE))
    c = run_scenario("second-joins")
    assert live.member_diagram(c, "consumer-2", since_ms=10_000).source == \
        live.member_dot(c, "consumer-2", since_ms=10_000)
    assert live.group_diagram(c).source == live.group_dot(c)
    assert live.context_diagram(c).source == live.context_dot(c)


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


# -- sizes and the notebook picture ----------------------------------------------------------------

def _fits(svg: str, what: str) -> None:
    """Drawn at its natural size, the picture fits a notebook's output area (~968 px) and no
    label is smaller than 11 px (Graphviz sizes are in pt: 1 pt = 4/3 px)."""
    from coordinator_kit.viz.diagrams import MAX_WIDTH_PX, MIN_FONT_PX, PX_PER_PT, svg_size

    width, _ = svg_size(svg)
    assert width <= MAX_WIDTH_PX, f"{what}: {width:.0f} px wide"
    fonts = [float(f) * PX_PER_PT for f in re.findall(r'font-size="([\d.]+)"', svg)]
    assert fonts and min(fonts) >= MIN_FONT_PX, f"{what}: labels down to {min(fonts):.1f} px"


def _pictures() -> dict[str, tuple[str, str]]:
    """name -> (engine, DOT): every table, the live forms in busy states, the sequences."""
    from coordinator_kit.viz.cli import pictures

    out = {name: (engine, make()) for name, (engine, make) in pictures().items()}
    gc = run_scenario("long-gc-pause")
    out["member after a long GC pause"] = ("dot", live.member_dot(gc, "consumer-1"))
    out["group after a long GC pause"] = ("dot", live.group_dot(gc))
    failover = run_scenario("coordinator-failover")
    out["context after a failover"] = ("dot", live.context_dot(failover))
    out["group after a failover"] = ("dot", live.group_dot(failover))
    out["group not loaded"] = ("dot", live.live_dot(live.CLASSIC_GROUP_STATES, None, title=(
        "group-1 on broker 0 (__consumer_offsets-2): not loaded, at 1,000,000 ms"), moves=[]))
    every_edge = [(e.source, e.target) for e in live.CONTEXT_STATES.edges()] * 2
    out["context, every edge taken twice"] = ("dot", live.live_dot(
        live.CONTEXT_STATES, S.CLOSED, moves=every_edge, limit=None))
    c = new_cluster(0)
    sequence.record_requests(c)
    for i in range(1, 9):
        c.add_consumer(f"consumer-{i}")
    c.run_for(6_000)
    out["eight consumers join"] = ("neato", sequence.sequence_dot(
        c, end_ms=4_000, title="eight consumers join an empty group at once: a long title "
                               "that has to wrap onto a second line to fit the output area"))
    return out


@pytest.mark.skipif(shutil.which("dot") is None or shutil.which("neato") is None,
                    reason="needs Graphviz dot and neato")
def test_every_diagram_fits_the_output_area_with_readable_labels():
    from coordinator_kit.viz.diagrams import svg_of

    for name, (engine, dot) in _pictures().items():
        _fits(svg_of(dot, engine), name)


@pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz dot")
def test_a_diagram_renders_in_an_untrusted_notebook_and_its_text_is_stable(second_joins):
    """JupyterLab shows an untrusted notebook's image/svg+xml as text, but renders text/html
    (sanitised) with an <img> whose source is a data URL: that is what a stored output holds."""
    import urllib.parse

    from coordinator_kit.viz.diagrams import state_diagram

    d = live.member_diagram(second_joins, "consumer-2")
    bundle = d._repr_mimebundle_()
    assert set(bundle) == {"text/html", "text/plain"}
    assert bundle == live.member_diagram(second_joins, "consumer-2")._repr_mimebundle_()
    assert bundle["text/plain"] == ("<diagram: consumer-2 (running): STABLE, generation 2, at "
                                    "20,000 ms Orange 1, 2, 3…: the transitions in this run, in "
                                    "order; filled: the state now.>")
    assert "0x" not in bundle["text/plain"]
    m = re.fullmatch(r'<img src="data:image/svg\+xml,([^"]*)" alt="([^"]*)" title="[^"]*">',
                     bundle["text/html"])
    assert m is not None
    svg = urllib.parse.unquote(m.group(1))
    assert svg.startswith("<svg") and svg == d.svg
    assert "Generated by graphviz version" not in svg
    assert "consumer-2 (running): STABLE, generation 2" in html.unescape(m.group(2))
    assert repr(state_diagram(live.CONTEXT_STATES)) == "<diagram: CoordinatorContext>"
    seq = sequence.sequence_diagram(second_joins, start_ms=10_000, end_ms=12_200,
                                    title="a second consumer joins")
    assert seq.engine == "neato" and repr(seq) == "<diagram: a second consumer joins>"


def test_without_graphviz_a_diagram_shows_its_dot_text(monkeypatch):
    from coordinator_kit.viz import diagrams

    monkeypatch.setattr(diagrams.shutil, "which", lambda _name: None)
    diagrams.svg_of.cache_clear()
    d = diagrams.Diagram("digraph x { graph [label=\"nothing drawn\"]; a -> b; }\n")
    bundle = d._repr_mimebundle_()
    assert set(bundle) == {"text/plain"}
    assert "the Graphviz 'dot' binary is not installed" in bundle["text/plain"]
    assert "a -> b" in bundle["text/plain"]
    diagrams.svg_of.cache_clear()


@pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz dot")
def test_svg_of_fits_a_narrow_box_for_the_panel():
    from coordinator_kit.viz.diagrams import svg_of

    dot = live.live_dot(live.MEMBER_STATES, M.STABLE)
    fitted = svg_of(dot, fit=True)
    tag = fitted[:fitted.find(">")]
    assert tag.startswith("<svg") and 'width="100%"' in tag and "max-width:" in tag
    assert "height=" not in tag.split("viewBox")[0]
    assert svg_of(dot) is svg_of(dot)  # cached


# -- swimlanes: short episodes stay visible -------------------------------------------------------

def _svg_fonts_px(svg: str) -> list[float]:
    """matplotlib's SVG is in pt (72 per inch): a `font-size: 9px` is 9 pt, 12 px on screen."""
    return [float(f) * 4 / 3 for f in re.findall(r"font-size: ([\d.]+)px", svg)]


def test_a_short_rebalance_is_a_bar_with_its_length_written_above():
    """A member expelled after session.timeout.ms (GroupCoordinator's heartbeat expiry) costs
    the group a rebalance of about a hundred ms in a 100 s run: drawn at least MIN_WIDTH wide."""
    c = run_scenario("long-gc-pause")
    short = [r for r in plots.rebalances(c.trace) if r.duration_ms < 100_000 * plots.MIN_WIDTH]
    assert short, "the expiry's rebalance is short"
    fig = plots.swimlanes(c.trace)
    bars = [(p.vertices[:, 0].min(), p.vertices[:, 0].max()) for coll in fig.axes[0].collections
            if coll.get_zorder() == 3 for p in coll.get_paths()]  # the widened episodes
    wide = 100 * plots.MIN_WIDTH  # seconds
    for r in short:
        at = r.start_ms / 1000
        drawn = max(b for a, b in bars if at - 1e-9 <= a < at + wide) - at
        assert drawn >= wide - 1e-9 > r.duration_ms / 1000
    texts = _svg_texts(plots.figure_svg(fig))
    assert [f"{r.duration_ms:,} ms" for r in short] == [t for t in texts if t.endswith(" ms")]


def test_a_coordinator_move_is_a_line_across_the_lanes():
    """Moving the `__consumer_offsets` leader: the old coordinator unloads the group
    (GroupMetadataManager "Unloading group metadata"), the new one loads it."""
    c = run_scenario("coordinator-failover")
    moves = plots.coordinator_moves(c.trace, "group-1")
    assert [(m.broker, m.ts >= 26_000) for m in moves] == [(c.coordinator_for("group-1"), True)]
    svg = plots.figure_svg(plots.swimlanes(c.trace))
    assert f"coordinator → broker {moves[0].broker}" in _svg_texts(svg)
    assert plots.coordinator_moves(run_scenario("second-joins").trace) == []


@pytest.mark.parametrize("scenario", ["long-gc-pause", "coordinator-failover", "one-dies"])
def test_swimlanes_fit_the_output_area_with_readable_labels(scenario):
    svg = plots.figure_svg(plots.swimlanes(run_scenario(scenario).trace))
    width = float(re.search(r'<svg [^>]*width="([\d.]+)pt"', svg).group(1)) * 4 / 3
    assert width <= 940
    assert min(_svg_fonts_px(svg)) >= 11


# -- notebook 02: what eager and cooperative rebalancing cost -------------------------------------

@pytest.fixture(scope="module")
def eager_and_cooperative():
    from coordinator_kit.lessons import rebalancing as rb

    return {"eager": rb.third_joins("range"), "cooperative": rb.third_joins("cooperative-sticky")}


def test_ownership_per_partition_from_the_listener_calls(eager_and_cooperative):
    """KIP-429: the cooperative members keep what they keep; only the two partitions that move
    to consumer-3 stand still, from their revocation until the follow-up rebalance assigns
    them. Eager revokes all six (ConsumerCoordinator.onJoinPrepare) and reassigns all six."""
    from coordinator_kit.lessons import rebalancing as rb

    coop = rb.ownership(eager_and_cooperative["cooperative"])
    gaps = {str(tp): [(a, b) for a, b, who in segs if who is None] for tp, segs in coop.items()}
    assert [tp for tp, g in gaps.items() if g] == ["orders-2", "orders-5"]
    assert {tp: [b - a for a, b in g] for tp, g in gaps.items() if g} == {
        "orders-2": [3102], "orders-5": [3102]}
    assert [who for _, _, who in coop[next(tp for tp in coop if str(tp) == "orders-2")]] == [
        "consumer-1", None, "consumer-3"]
    eager = rb.ownership(eager_and_cooperative["eager"])
    assert all(sum(1 for _, _, who in segs if who is None) == 1 for segs in eager.values())
    for segs in list(coop.values()) + list(eager.values()):
        assert all(a[1] == b[0] for a, b in zip(segs, segs[1:]))


def test_the_stop_chart_says_what_the_cost_table_says(eager_and_cooperative):
    from coordinator_kit.lessons import rebalancing as rb

    pic = rb.stop_chart(eager_and_cooperative)
    texts = _svg_texts(pic.svg)
    table = rb.cost_table(eager_and_cooperative)
    for row in table.rows:
        total = row["partition-ms without a consumer"]
        longest = row["longest stop (ms)"]
        stopped = row["partitions stopped"].split(" of ")[0]
        assert (f"{row['run']}: {stopped} of 6 partitions stop, the longest for {longest:,} ms; "
                f"{total:,} partition-ms in all") in texts
    assert texts.count(" 14 ms") == 6 and texts.count(" 3,102 ms") == 2
    assert {"rebalance → generation 3", "rebalance → generation 4",
            "rebalance → generation 5"} <= {t.strip() for t in texts}
    width = float(re.search(r'<svg [^>]*width="([\d.]+)pt"', pic.svg).group(1)) * 4 / 3
    assert width <= 940 and min(_svg_fonts_px(pic.svg)) >= 11
    with pytest.raises(ValueError, match="at least one run"):
        rb.stop_chart({})
