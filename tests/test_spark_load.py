"""The Spark loader gives the pure-Python parser's rows, in one pass (issue 4).

One session for the run (tests/conftest.py `spark`); every test here is marked `spark`.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from coordinator_kit.logs.parse import parse_paths
from coordinator_kit.scenarios import run_scenario
from coordinator_kit.spark import schema
from coordinator_kit.spark.load import load_logs, load_lines, parse_logs, write_parsed

pytestmark = pytest.mark.spark

DATA = Path(__file__).parent / "data" / "logs"


def _key(row: dict) -> tuple:
    return (row["file"], row["line"])


def _rows(df) -> list[dict]:
    out = []
    for r in df.collect():
        d = r.asDict()
        if d["ts"] is not None:      # Spark gives naive UTC datetimes (session time zone UTC)
            d["ts"] = d["ts"].replace(tzinfo=None)
        out.append(d)
    return sorted(out, key=_key)


def _python_rows(rows: list[dict]) -> list[dict]:
    out = []
    for r in rows:
        d = dict(r)
        if d["ts"] is not None:
            d["ts"] = d["ts"].astimezone(tz=None).replace(tzinfo=None) if False else \
                d["ts"].replace(tzinfo=None)
        out.append(d)
    return sorted(out, key=_key)


@pytest.fixture(scope="module")
def kit_log(tmp_path_factory) -> Path:
    """Lines of two scenarios (log4j and, for kafka-python consumers, Python's layout)."""
    path = tmp_path_factory.mktemp("kit") / "kit.log"
    lines = run_scenario("one-dies").log_lines("DEBUG") + \
        run_scenario("coordinator-failover").log_lines("INFO")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_spark_rows_equal_the_python_parsers_rows_on_every_sample(spark, kit_log):
    """Every column of every event and quarantined record, samples of each layout + the kit."""
    parsed = parse_logs([DATA, kit_log], spark)
    expected = parse_paths([DATA, kit_log])
    assert parsed.events.schema == schema.spark_schema()
    assert _rows(parsed.events) == _python_rows(expected.events)
    assert _rows(parsed.quarantine) == _python_rows(expected.quarantine)
    assert parsed.counts() == expected.counts


def test_line_numbers_survive_files_split_into_many_blocks(spark, kit_log, tmp_path):
    """Spark reads a big file in blocks; each row's line number still matches the Python
    parser's, with \\n, \\r\\n and lone \\r line ends falling on block boundaries."""
    mixed = tmp_path / "mixed-line-ends.log"
    lines = kit_log.read_text().splitlines()[:400]
    ends = [b"\n", b"\r\n", b"\r", b"\r\n\n"]
    mixed.write_bytes(b"".join(line.encode() + ends[i % 4] for i, line in enumerate(lines)))
    conf = spark.conf
    old = conf.get("spark.sql.files.maxPartitionBytes")
    conf.set("spark.sql.files.maxPartitionBytes", "8191")
    try:
        files = [kit_log, mixed, DATA / "multiline.log", DATA / "garbage.log"]
        parsed = parse_logs(files, spark)
        blocks = parsed.lines.select("file").rdd.getNumPartitions()
        got = [(r["file"], r["line"], "event") for r in parsed.events.collect()] + \
            [(r["file"], r["line"], "quarantine") for r in parsed.quarantine.collect()]
    finally:
        conf.set("spark.sql.files.maxPartitionBytes", old)
    assert blocks > 20
    expected = parse_paths(files)
    want = [(e["file"], e["line"], "event") for e in expected.events] + \
        [(q["file"], q["line"], "quarantine") for q in expected.quarantine]
    assert sorted(got) == sorted(want)


def test_write_parsed_writes_both_files_in_one_pass_and_counts_add_up(spark, tmp_path):
    import pandas as pd

    counts = write_parsed(DATA, tmp_path / "out", spark)
    expected = parse_paths(DATA)
    assert counts == expected.counts.__class__(**{**expected.counts.__dict__, "by_problem": {}})
    events = pd.read_parquet(tmp_path / "out" / "events.parquet")
    quarantine = pd.read_parquet(tmp_path / "out" / "quarantine.parquet")
    assert list(events.columns) == list(schema.COLUMN_NAMES)
    assert len(events) == counts.recognised and len(quarantine) == counts.quarantined
    failed = events[(events.event == "load_failed")].iloc[0]
    assert failed.raw.count("\n") == 5                     # its stack trace, attached
    orphan = quarantine[quarantine.raw.str.startswith("\tat orphan")]
    assert list(orphan.problem) == ["truncated"]
    with pytest.raises(FileExistsError):
        write_parsed(DATA, tmp_path / "out", spark)


def test_cli_parse_with_spark(tmp_path):
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "coordinator_kit", "logs", "parse",
                           str(DATA / "broker-2.8-log4j.log"), str(DATA / "garbage.log"),
                           "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "parsed 19 lines: 12 recognised, 6 quarantined, 1 other"
    assert (out / "events.parquet").is_dir() and (out / "quarantine.parquet").is_dir()
