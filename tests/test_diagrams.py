"""Diagrams are drawn from the state tables and committed; they must not drift.

The tables are Kafka's: `CoordinatorState.canTransitionFrom`,
`ClassicGroupState.validPreviousStates` and the Java client's
`AbstractCoordinator.MemberState`.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from coordinator_kit.client import MEMBER_STATES, MemberState
from coordinator_kit.group import CLASSIC_GROUP_STATES, ClassicGroupState
from coordinator_kit.runtime import CONTEXT_STATES, CoordinatorState
from coordinator_kit.viz.diagrams import DIAGRAMS, to_dot

ROOT = Path(__file__).resolve().parent.parent
DIAGRAM_DIR = ROOT / "diagrams"
REGENERATE = "run `python -m coordinator_kit diagrams`"


def test_every_state_table_is_drawn():
    assert DIAGRAMS == {"coordinator_context": CONTEXT_STATES,
                        "classic_group": CLASSIC_GROUP_STATES,
                        "consumer_member": MEMBER_STATES}


@pytest.mark.parametrize("name", sorted(DIAGRAMS))
def test_committed_dot_files_match_the_tables(name):
    path = DIAGRAM_DIR / f"{name}.dot"
    assert path.exists(), f"{path} missing: {REGENERATE}"
    assert path.read_text() == to_dot(DIAGRAMS[name]), f"{path} is out of date; {REGENERATE}"


def test_committed_rebalance_sequence_matches_the_scenario():
    """The sequence picture is drawn from a seeded scenario's trace: same steps, same DOT."""
    from coordinator_kit.viz.cli import pictures

    engine, make = pictures()["rebalance_sequence"]
    assert engine == "neato"
    path = DIAGRAM_DIR / "rebalance_sequence.dot"
    assert path.exists(), f"{path} missing: {REGENERATE}"
    dot = make()
    assert path.read_text() == dot, f"{path} is out of date; {REGENERATE}"
    svg = (DIAGRAM_DIR / "rebalance_sequence.svg").read_text()
    labels = set(re.findall(r'label="([^"]+)"', dot))
    assert labels and labels <= _svg_texts(svg), f"{path.with_suffix('.svg')} is out of date"


def _svg_texts(svg: str) -> set[str]:
    return {html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)}


@pytest.mark.parametrize("name", sorted(DIAGRAMS))
def test_committed_svg_shows_every_state_and_trigger_of_the_table(name):
    """The SVG's layout depends on the Graphviz version, so compare what it says, not its bytes:
    every state and every trigger label of today's table, and nothing else."""
    path = DIAGRAM_DIR / f"{name}.svg"
    assert path.exists(), f"{path} missing: {REGENERATE}"
    table = DIAGRAMS[name]
    expected = ({str(s) for s in table.states} | {e.trigger for e in table.edges()}
                | {table.name})
    assert _svg_texts(path.read_text()) == expected, f"{path} is out of date; {REGENERATE}"


def test_no_stray_files_in_diagrams():
    """Every generated file belongs to a table or to a picture the CLI draws."""
    from coordinator_kit.viz.cli import generated_names

    names = set(generated_names())
    stray = [p.name for p in DIAGRAM_DIR.iterdir() if p.suffix in (".dot", ".svg")
             and p.stem not in names]
    assert not stray, f"diagrams/ holds files nothing generates: {stray}"


@pytest.mark.parametrize("table", [CONTEXT_STATES, CLASSIC_GROUP_STATES, MEMBER_STATES],
                         ids=lambda t: t.name)
def test_every_allowed_transition_is_an_edge_with_its_trigger(table):
    dot = to_dot(table)
    for edge in table.edges():
        assert f'"{edge.source}" -> "{edge.target}" [label="{edge.trigger}"' in dot
    assert dot.count(" -> ") == len(table.edges()) + 1  # plus the start arrow
    assert f'start -> "{table.initial}";' in dot


def test_refused_transitions_are_not_drawn():
    assert '"INITIAL" -> "ACTIVE"' not in to_dot(CONTEXT_STATES)
    # Kafka: Empty can only be reached from PreparingRebalance; Stable only from
    # CompletingRebalance (ClassicGroupState.validPreviousStates).
    group = to_dot(CLASSIC_GROUP_STATES)
    assert '"Stable" -> "Empty"' not in group
    assert '"PreparingRebalance" -> "Stable"' not in group
    assert '"Dead" -> "Empty"' not in group
    member = to_dot(MEMBER_STATES)
    assert '"UNJOINED" -> "STABLE"' not in member
    assert '"UNJOINED" -> "COMPLETING_REBALANCE"' not in member


def test_group_states_carry_kafkas_names():
    dot = to_dot(CLASSIC_GROUP_STATES)
    for state in ClassicGroupState:
        assert f'  "{state.value}";' in dot
    assert "PREPARING_REBALANCE" not in dot


def test_live_form_highlights_current_state_and_the_edge_taken():
    S = CoordinatorState
    dot = to_dot(CONTEXT_STATES, current=S.ACTIVE, taken=(S.LOADING, S.ACTIVE))
    assert '"ACTIVE" [style="filled,bold"' in dot
    assert '"LOADING" -> "ACTIVE" [label="loader finished", color="#d84315"' in dot
    assert '"INITIAL" -> "LOADING" [label="Load with a higher epoch"];' in dot


def test_live_form_for_a_member_and_a_group():
    M, G = MemberState, ClassicGroupState
    dot = to_dot(MEMBER_STATES, current=M.STABLE, taken=(M.COMPLETING_REBALANCE, M.STABLE))
    assert '"STABLE" [style="filled,bold"' in dot
    assert '"COMPLETING_REBALANCE" -> "STABLE" [label="SyncGroup answered: assignment", ' \
           'color="#d84315"' in dot
    dot = to_dot(CLASSIC_GROUP_STATES, current=G.PREPARING_REBALANCE,
                 taken=(G.STABLE, G.PREPARING_REBALANCE))
    assert '"PreparingRebalance" [style="filled,bold"' in dot
    assert dot.count("penwidth=2.5") == 1  # one edge taken


def test_the_command_writes_what_is_committed(tmp_path):
    """`python -m coordinator_kit diagrams --no-svg --out DIR` writes the committed DOT files."""
    from coordinator_kit.__main__ import main
    from coordinator_kit.viz.cli import generated_names

    assert main(["diagrams", "--no-svg", "--out", str(tmp_path)]) == 0
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == sorted(f"{n}.dot" for n in generated_names())
    for name in written:
        assert (tmp_path / name).read_text() == (DIAGRAM_DIR / name).read_text()
