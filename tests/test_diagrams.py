"""Diagrams are drawn from the state tables and committed; they must not drift."""

from __future__ import annotations

from pathlib import Path

from coordinator_kit.runtime import CONTEXT_STATES, CoordinatorState
from coordinator_kit.viz.diagrams import DIAGRAMS, to_dot

ROOT = Path(__file__).resolve().parent.parent


def test_committed_dot_files_match_the_tables():
    for name, table in DIAGRAMS.items():
        path = ROOT / "diagrams" / f"{name}.dot"
        assert path.exists(), f"{path} missing: run `python -m coordinator_kit diagrams`"
        assert path.read_text() == to_dot(table), (
            f"{path} is out of date with the table; run `python -m coordinator_kit diagrams`")
        assert (ROOT / "diagrams" / f"{name}.svg").exists()


def test_every_allowed_transition_is_an_edge_with_its_trigger():
    dot = to_dot(CONTEXT_STATES)
    for edge in CONTEXT_STATES.edges():
        assert f'"{edge.source.name}" -> "{edge.target.name}" [label="{edge.trigger}"' in dot
    assert dot.count(" -> ") == len(CONTEXT_STATES.edges()) + 1  # plus the start arrow
    assert '"INITIAL" -> "ACTIVE"' not in dot


def test_live_form_highlights_current_state_and_the_edge_taken():
    S = CoordinatorState
    dot = to_dot(CONTEXT_STATES, current=S.ACTIVE, taken=(S.LOADING, S.ACTIVE))
    assert '"ACTIVE" [style="filled,bold"' in dot
    assert '"LOADING" -> "ACTIVE" [label="loader finished", color="#d84315"' in dot
    assert '"INITIAL" -> "LOADING" [label="Load with a higher epoch"];' in dot
