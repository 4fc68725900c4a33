"""The known differences from Apache Kafka 4.0.2 (coordinator_kit.realkafka.fidelity) as data,
and README.md's "Fidelity" table generated from them."""

from __future__ import annotations

from pathlib import Path

import pytest

from coordinator_kit.realkafka.fidelity import (KNOWN_DIFFERENCES, README_END, README_START,
                                                Difference, differences_frame, markdown_table,
                                                readme_with_table)

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_fidelity_table_is_the_data():
    """README.md shows exactly KNOWN_DIFFERENCES; if this fails, run
    `python -m coordinator_kit kafka fidelity --write README.md`."""
    text = README.read_text()
    start, end = text.index(README_START), text.index(README_END)
    assert text[start + len(README_START):end].strip() == markdown_table()
    assert readme_with_table(text) == text


def test_every_difference_says_what_became_of_it():
    assert len(KNOWN_DIFFERENCES) >= 5
    for d in KNOWN_DIFFERENCES:
        assert isinstance(d, Difference)
        assert d.what and d.kafka and d.kit
        assert d.status.startswith(("fixed in ", "left: ")), d
    assert len({d.what for d in KNOWN_DIFFERENCES}) == len(KNOWN_DIFFERENCES)


def test_differences_frame_has_the_four_columns():
    frame = differences_frame()
    assert list(frame.columns) == ["what", "kafka", "kit", "status"]
    assert len(frame) == len(KNOWN_DIFFERENCES)
    assert frame.iloc[0]["what"] == KNOWN_DIFFERENCES[0].what


def test_a_readme_without_the_block_is_refused_with_what_to_add():
    with pytest.raises(ValueError, match="no fidelity block"):
        readme_with_table("# a README\n")
