"""Both engines give the same answers: the quarantine grouped by shape (`logs.quarantine` and
`spark.quarantine`), and `logs report` whichever engine parses (the Python side alone:
tests/test_logs_engine.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from coordinator_kit.__main__ import main
from coordinator_kit.logs.parse import parse_paths
from coordinator_kit.logs.quarantine import SHAPE_WIDTH, quarantine_shapes

pytestmark = pytest.mark.spark

ROOT = Path(__file__).parents[1]
DATA = ROOT / "tests" / "data"

# Lines the parser quarantines, made to tell the engines' regex and string functions apart:
# ids, UUIDs and hex, a coordination word past SHAPE_WIDTH, characters outside the BMP (one
# code point to Python, two UTF-16 units to Java) before the cut, a tab, digits of other
# scripts (not [0-9]), upper-case words, an orphan stack frame and a cut-short record.
_ODD = [
    "[2024-05-01 10:00:00,123] INFO [GroupCoordinator 1]: Member consumer-1-3f2b6c1e-8d4a-"
    "4b7e-9c1a-0a1b2c3d4e5f did a NEW thing (kafka.coordinator.group.GroupCoordinator)",
    "[2024-05-01 10:00:01,999] INFO [GroupCoordinator 2]: Member consumer-2-00aa11bb-8d4a-"
    "4b7e-9c1a-0a1b2c3d4e5f did a NEW thing (kafka.coordinator.group.GroupCoordinator)",
    "plain text " + "\U0001F600" * 10 + " x" * (SHAPE_WIDTH // 2) + " then a HEARTBEAT",
    "plain text " + "\U0001F600" * 10 + " x" * (SHAPE_WIDTH // 2) + " then nothing",
    "\tat orphan.Frame(Orphan.java:12)",
    "tab\there 0x7F3A9C and 5fQdS0qQT2WbZ0l9ukYq4A and \u0663\u0664 digits",
    "[2024-05-01 10:00:02,000] INFO [GroupCoordinator",
    "SYNCGROUP id=42 retried",
]


def _spark_shapes(spark, paths):
    from coordinator_kit.spark.load import parse_logs
    from coordinator_kit.spark.quarantine import quarantine_shapes_spark

    return quarantine_shapes_spark(parse_logs(paths, spark).quarantine)


def test_quarantine_shapes_are_the_same_in_both_engines(spark, tmp_path):
    odd = tmp_path / "odd.log"
    odd.write_text("\n".join(_ODD) + "\n", encoding="utf-8")
    paths = [str(DATA / "logs"), str(DATA / "log-inputs"), str(odd)]
    expected = quarantine_shapes(parse_paths(paths).quarantine)
    assert _spark_shapes(spark, paths) == expected
    flagged = {s.shape for s in expected if s.coordination}
    assert any(s.startswith("plain text") for s in flagged)     # the word past the cut
    assert any(s.startswith("SYNCGROUP") for s in flagged)


def test_report_and_quarantine_print_the_same_with_either_engine(spark, capsys):
    """`logs report` on a kit dataset and the sample logs (events and quarantined lines),
    parsed by Python (rows handed to Spark) and by Spark: the same text."""
    paths = [str(ROOT / "datasets" / "one-dies"), str(DATA / "logs")]
    out = {}
    for engine in ("python", "spark"):
        assert main(["logs", "report", *paths, "--limit", "0", "--engine", engine]) == 0
        out[engine] = capsys.readouterr().out
    assert out["python"] == out["spark"]
    assert "== Quarantined lines by shape" in out["spark"]
    for engine in ("python", "spark"):
        assert main(["logs", "quarantine", *paths, "--engine", engine, "--limit", "0"]) == 0
        out[engine] = capsys.readouterr().out
    assert out["python"] == out["spark"]


def test_every_sample_line_wrapped_by_every_tool_gives_the_python_rows(spark, tmp_path):
    """logs.wrappers in Spark (one regexp_replace, a k9s border trimmed) == strip_wrapper."""
    from spark_rows import collect, naive
    from test_log_wrappers import WRAP, sample_lines

    from coordinator_kit.spark.load import parse_logs

    lines = sample_lines()
    for how, wrap in WRAP.items():
        (tmp_path / f"{how}.log").write_text("\n".join(wrap(line) for line in lines) + "\n",
                                             encoding="utf-8")
    expected = parse_paths(tmp_path)
    parsed = parse_logs(tmp_path, spark)
    assert collect(parsed.events) == naive(expected.events)
    assert collect(parsed.quarantine) == naive(expected.quarantine)
    assert parsed.counts().read == expected.counts.read


def test_joined_records_and_twelve_hour_times_are_the_python_parsers(spark, tmp_path):
    """logs.joins in Spark: a CRI chain longer than MAX_JOIN_LINES (cut into records of 8
    lines), java.util.logging times on the 12-hour clock (12 AM is 0 h; 0 and 13 o'clock are
    no time), a JUL record through docker compose with a stack trace after it, Kibana display
    times alone and before a blank line, .NET heads with and without their message line, a
    file ending without a newline: the same rows and counts as the Python parser."""
    from spark_rows import collect, naive

    from coordinator_kit.spark.load import parse_logs, write_parsed

    stamp = "2026-11-25T10:00:00.000000000Z stdout "
    text = ("[2026-11-25 10:00:00,000] INFO [GroupCoordinator 2]: Member m-1 in group g has "
            "failed, removing it from the group (kafka.coordinator.group.GroupCoordinator)")
    pieces = [text[i:i + 10] for i in range(0, len(text), 10)]
    (tmp_path / "long.log").write_text("\n".join(
        stamp + ("F " if k == len(pieces) - 1 else "P ") + p for k, p in enumerate(pieces)))
    jul = []
    for clock in ("12:30:00 AM", "12:00:00 PM", "0:10:00 AM", "13:00:00 PM", "1:02:03 PM"):
        jul += [f"Nov 25, 2026 {clock} org.apache.kafka.clients.consumer.internals."
                "ConsumerCoordinator onJoinPrepare",
                "INFO: [Consumer clientId=c-1, groupId=g] (Re-)joining group"]
    jul += ["kafka-1  | Nov 25, 2026 2:00:00 AM org.apache.kafka.clients.consumer.internals."
            "ConsumerCoordinator onJoinPrepare",
            "kafka-1  | INFO: [Consumer clientId=c-1, groupId=g] (Re-)joining group",
            "kafka-1  | \tat x.y(Z.java:1)", "Feb 30, 2026 1:00:00 AM a.B c", "INFO: x"]
    (tmp_path / "jul.log").write_text("\n".join(jul) + "\n")
    (tmp_path / "kib.log").write_text("\n".join([
        "Nov 5, 2026 @ 23:59:59.999",
        "Member m-1 in group g has failed, removing it from the group",
        "Nov 5, 2026 @ 23:59:59.999", "", "info: A.B[0]",
        '      [CGRP] rdkafka#consumer-1: Group "g": leave (in state up)', "      second line",
        "\tat foo", "info: A.B[0]"]))
    expected = parse_paths(tmp_path)
    assert expected.counts.continuation > 10 and expected.counts.untimed == 1
    parsed = parse_logs(tmp_path, spark)
    assert collect(parsed.events) == naive(expected.events)
    assert collect(parsed.quarantine) == naive(expected.quarantine)
    assert parsed.counts() == expected.counts
    counts = write_parsed(tmp_path, tmp_path / "out", spark)
    assert counts == type(expected.counts)(**{**expected.counts.__dict__, "by_problem": {}})
    events = spark.read.parquet(str(tmp_path / "out" / "events.parquet"))
    assert collect(events) == naive(expected.events)
