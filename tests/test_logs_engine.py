"""`logs` commands without a JVM: the engine choice by input size, the quarantine grouped by
shape, and `logs parse` saying where it wrote (the Spark side: tests/test_spark_logs_engine.py).
"""

from __future__ import annotations

import gzip
import re
import subprocess
import sys
from pathlib import Path

import pytest

from coordinator_kit.logs.parse import parse_paths
from coordinator_kit.logs.quarantine import (COORDINATION_WORDS, SHAPE_WIDTH, line_shape,
                                             looks_like_coordination, quarantine_shapes)
from coordinator_kit.spark.engine import (AUTO_SPARK_BYTES, COMPRESSED_RATIO, THRESHOLD_ENV,
                                          choose_engine, input_bytes)
from coordinator_kit.spark.quarantine import format_shapes

DATA = Path(__file__).parent / "data" / "logs"


# -- shapes ------------------------------------------------------------------------------------

def test_a_shape_masks_numbers_ids_uuids_and_hex():
    raw = ("[2024-05-01 10:00:00,123] INFO [GroupCoordinator 1]: Member consumer-1-"
           "3f2b6c1e-8d4a-4b7e-9c1a-0a1b2c3d4e5f in group g-7 has failed, removing it from "
           "the group (kafka.coordinator.group.GroupCoordinator)")
    other = raw.replace("10:00:00,123", "11:59:02,999").replace("3f2b6c1e", "00aa11bb") \
        .replace("g-7", "g-12").replace("Coordinator 1", "Coordinator 3")
    assert line_shape(raw) == line_shape(other)
    assert "<uuid>" in line_shape(raw) and "0-0-0 0:0:0,0" in line_shape(raw)
    # a KIP-848 member id (22 characters of base64) and a hash code
    assert line_shape("Member 5fQdS0qQT2WbZ0l9ukYq4A joined 0x7f3a9c") == "Member <id> joined <hex>"
    # a long word without a digit is no id
    assert line_shape("GroupCoordinatorShardLoader") == "GroupCoordinatorShardLoader"
    assert len(line_shape("x" * 1000)) == SHAPE_WIDTH
    assert line_shape("first 1\n\tat second 2") == "first 0"


@pytest.mark.parametrize("word", COORDINATION_WORDS)
def test_coordination_words_are_found_in_either_case(word):
    assert looks_like_coordination(f"x {word.upper()} y")
    assert looks_like_coordination(f"x {word} y")


def test_a_word_inside_an_id_does_not_count_and_plain_lines_are_not_flagged():
    assert not looks_like_coordination("GET /index.html 200")
    assert not looks_like_coordination("id abcmember0123456789xyz")    # masked as <id>


def test_shapes_group_count_and_order_the_quarantine():
    rows = [
        {"raw": "INFO GroupCoordinator: Member m-1 did something new in generation 4",
         "problem": "unknown message", "file": "b.log", "line": 9},
        {"raw": "INFO GroupCoordinator: Member m-2 did something new in generation 5",
         "problem": "unknown message", "file": "a.log", "line": 3},
        {"raw": "GET /x 200", "problem": "unknown layout", "file": "a.log", "line": 1},
        {"raw": "GET /y 404", "problem": "unknown layout", "file": "a.log", "line": 2},
        {"raw": "GET /y 500", "problem": "unknown layout", "file": "c.log", "line": 2},
    ]
    shapes = quarantine_shapes(rows)
    assert [(s.count, s.coordination, s.files) for s in shapes] == [(2, True, 2), (2, False, 2),
                                                                      (1, False, 1)]
    first = shapes[0]
    assert (first.example_file, first.example_line) == ("a.log", 3)     # the first by file, line
    assert first.example.endswith("generation 5")
    text = format_shapes(shapes)
    assert text.startswith("5 quarantined record(s) in 3 shape(s)")
    assert "1 shape(s) marked kafka" in text


def test_the_sample_logs_unknown_coordinator_lines_are_flagged():
    """tests/data/logs holds six coordinator lines of wordings nobody knows (one of them
    behind docker compose's prefix, one from Confluent.Kafka's console logger, one from
    kafka-python in another format, one a java.util.logging record of two lines): all
    flagged."""
    shapes = quarantine_shapes(parse_paths(DATA).quarantine)
    flagged = [s for s in shapes if s.coordination and s.problem == "unknown message"]
    assert len(flagged) == 6
    assert sum(s.count for s in shapes) == parse_paths(DATA).counts.quarantined


# -- engine choice -------------------------------------------------------------------------------

def test_auto_picks_python_below_the_threshold_and_spark_above(tmp_path):
    small = tmp_path / "a.log"
    small.write_text("x\n" * 10)
    assert choose_engine([str(small)], env={}).engine == "python"
    assert choose_engine([str(small)], env={THRESHOLD_ENV: "5"}).engine == "spark"
    assert choose_engine([str(small)], env={THRESHOLD_ENV: "0"}).engine == "spark"
    assert choose_engine([str(small)], "spark", env={}).engine == "spark"
    assert choose_engine([str(small)], "python", env={THRESHOLD_ENV: "0"}).engine == "python"
    assert choose_engine([str(small)], master="local[2]", env={}).engine == "spark"
    assert choose_engine([str(small)], env={"COORDINATOR_KIT_SPARK_REMOTE": "sc://h"}).engine \
        == "spark"
    assert choose_engine(["hdfs://nn/logs"], env={}).engine == "spark"
    assert AUTO_SPARK_BYTES > 100 * 2**20


def test_compressed_files_count_by_their_estimated_text(tmp_path):
    packed = tmp_path / "a.log.gz"
    packed.write_bytes(gzip.compress(b"line\n" * 1000))
    assert input_bytes([str(tmp_path)]) == packed.stat().st_size * COMPRESSED_RATIO


def test_a_bad_threshold_is_refused_with_what_to_do(tmp_path):
    (tmp_path / "a.log").write_text("x\n")
    with pytest.raises(ValueError, match=f"{THRESHOLD_ENV}='lots' is not a whole number"):
        choose_engine([str(tmp_path)], env={THRESHOLD_ENV: "lots"})
    with pytest.raises(ValueError, match="unknown engine 'jvm'"):
        choose_engine([str(tmp_path)], "jvm")


# -- the commands, in a fresh process (no JVM may start) -------------------------------------------

def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    import os
    return subprocess.run([sys.executable, "-m", "coordinator_kit", "logs", *args],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def test_parse_auto_uses_python_on_a_small_input_and_says_where_it_wrote(tmp_path):
    out = tmp_path / "out"
    done = _cli("parse", str(DATA), "--out", str(out))
    assert done.returncode == 0, done.stderr
    counts = parse_paths(DATA).counts
    lines = done.stdout.splitlines()
    assert lines[0] == counts.summary()
    assert lines[1] == (f"wrote {out / 'events.parquet'} ({counts.recognised} events) and "
                        f"{out / 'quarantine.parquet'} ({counts.quarantined} quarantined "
                        "records)")
    assert re.search(r"^logs parse: engine: python \([0-9.]+ KiB of input, below ",
                     done.stderr, re.M)
    assert (out / "events.parquet").is_file()         # pyarrow's single file: no Spark ran


def test_quarantine_command_prints_the_shapes(tmp_path):
    done = _cli("quarantine", str(DATA), "--engine", "python", "--width", "0")
    assert done.returncode == 0, done.stderr
    expected = format_shapes(quarantine_shapes(parse_paths(DATA).quarantine), width=0)
    assert done.stdout == parse_paths(DATA).counts.summary() + "\n" + expected + "\n"
    assert "engine:" not in done.stderr            # asked for: nothing to explain
    missing = _cli("quarantine", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def _without_spark(tmp_path: Path) -> dict[str, str]:
    """An environment in which `import pyspark` (and py4j, its bridge to the JVM) fails: a
    command that reaches for Spark dies with that ImportError instead of starting a JVM."""
    import os
    for name in ("pyspark", "py4j"):
        package = tmp_path / "no-spark" / name
        package.mkdir(parents=True, exist_ok=True)
        (package / "__init__.py").write_text(
            f"raise ImportError('{name} is blocked: this command must not start Spark')\n")
    return {"PYTHONPATH": os.pathsep.join([str(tmp_path / "no-spark"),
                                           str(Path(__file__).resolve().parents[1])])}


def test_report_auto_on_a_small_input_starts_no_jvm_and_prints_the_python_analyses(tmp_path):
    """`logs report` below AUTO_SPARK_BYTES: the pure-Python parser and logs.analyses, with
    pyspark unimportable; the text is write_report's on the parser's rows (the Spark engine
    prints the same bytes: tests/test_logs_analyses_identity.py)."""
    import io

    from coordinator_kit.spark.report import write_report

    done = _cli("report", str(DATA), env=_without_spark(tmp_path))
    assert done.returncode == 0, done.stderr
    result = parse_paths(DATA)
    expected = io.StringIO()
    write_report(result.events, expected, shapes=quarantine_shapes(result.quarantine))
    assert done.stdout == expected.getvalue()
    assert "== Rebalance episodes per group" in done.stdout
    # Only the kit's own lines on stderr: which engine ran and why, the notes on the input.
    assert re.search(r"^logs report: engine: python \(", done.stderr, re.M)
    assert all(line.startswith(("logs report: ", "logs: ")) for line in
               done.stderr.splitlines()), done.stderr
    # The same with --engine python, and quarantine and parse: none of them needs Spark.
    assert _cli("report", str(DATA), "--engine", "python",
                env=_without_spark(tmp_path)).stdout == done.stdout
    assert _cli("quarantine", str(DATA), env=_without_spark(tmp_path)).returncode == 0
    parsed = _cli("parse", str(DATA), "--out", str(tmp_path / "out"),
                  env=_without_spark(tmp_path))
    assert parsed.returncode == 0, parsed.stderr


def test_report_spark_engine_needs_spark(tmp_path):
    """--engine spark keeps the Spark path: without pyspark it fails, it does not fall back."""
    done = _cli("report", str(DATA), "--engine", "spark", env=_without_spark(tmp_path))
    assert done.returncode != 0
    assert "pyspark is blocked" in done.stderr


def test_parse_streams_large_inputs_to_parquet_in_batches(tmp_path):
    """write_parsed_python writes row groups of `batch_rows` as it reads (memory stays flat)
    and gives the same rows as parse_paths, in the same order."""
    import pyarrow.parquet as pq

    from coordinator_kit.spark.cli import write_parsed_python

    counts = write_parsed_python([str(DATA)], tmp_path / "out", batch_rows=7)
    result = parse_paths(DATA)
    assert counts.summary() == result.counts.summary()
    events = pq.ParquetFile(tmp_path / "out" / "events.parquet")
    assert events.metadata.num_row_groups > 1
    assert events.read().to_pylist() == result.events
    assert pq.read_table(tmp_path / "out" / "quarantine.parquet").to_pylist() == \
        result.quarantine
    assert not list((tmp_path / "out").glob(".*partial"))
