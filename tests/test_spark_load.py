"""The Spark loader gives the pure-Python parser's rows, in one pass.

One session for the run (tests/conftest.py `spark`); every test here is marked `spark`. The
inputs are the hand-written samples of every layout (tests/data/logs) plus two kit scenarios,
so these tests also prove the round trip through Spark.
"""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from spark_rows import collect as _collect, naive as _naive

from coordinator_kit.logs.parse import ParseCounts, parse_paths
from coordinator_kit.scenarios import run_scenario
from coordinator_kit.spark import schema
from coordinator_kit.logs import TEMPLATES
from coordinator_kit.spark.load import load_logs, parse_logs, write_parsed

pytestmark = pytest.mark.spark

DATA = Path(__file__).parent / "data" / "logs"


@pytest.fixture(scope="module")
def kit_log(tmp_path_factory) -> Path:
    """Lines of two kit scenarios, DEBUG and INFO."""
    path = tmp_path_factory.mktemp("kit") / "kit.log"
    lines = run_scenario("one-dies").log_lines("DEBUG") + \
        run_scenario("coordinator-failover").log_lines("INFO")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def written(spark, kit_log, tmp_path_factory):
    out = tmp_path_factory.mktemp("parsed")
    counts = write_parsed([DATA, kit_log], out, spark)
    return out, counts


def test_write_parsed_rows_equal_the_python_parsers_rows(spark, written, kit_log):
    """Every column of every event and quarantined record, in every layout and the kit's."""
    out, counts = written
    expected = parse_paths([DATA, kit_log])
    events = spark.read.parquet(str(out / "events.parquet"))
    quarantine = spark.read.parquet(str(out / "quarantine.parquet"))
    assert events.schema == schema.spark_schema() == quarantine.schema
    assert _collect(events) == _naive(expected.events)
    assert _collect(quarantine) == _naive(expected.quarantine)
    assert counts == ParseCounts(**{**expected.counts.__dict__, "by_problem": {}})
    assert counts.read == counts.recognised + counts.other + counts.quarantined


def test_write_parsed_attaches_stack_traces_and_quarantines_orphans(written):
    import pandas as pd

    out, _ = written
    events = pd.read_parquet(out / "events.parquet")
    quarantine = pd.read_parquet(out / "quarantine.parquet")
    assert list(events.columns) == list(schema.COLUMN_NAMES)
    failed = events[events.event == "load_failed"].iloc[0]
    assert failed.raw.count("\n") == 5 and failed.line == 1
    orphan = quarantine[quarantine.raw.str.startswith("\tat orphan")]
    assert list(orphan.problem) == ["truncated"]
    assert str(events.ts.dtype).startswith("datetime64")


def test_write_parsed_refuses_to_overwrite(spark, written):
    with pytest.raises(FileExistsError, match="events.parquet exists"):
        write_parsed(DATA / "multiline.log", written[0], spark)


def test_line_numbers_survive_files_split_into_many_blocks(spark, kit_log, tmp_path):
    """Spark reads a big file in blocks; each row keeps the Python parser's line number, with
    \\n, \\r\\n and lone \\r line ends falling on block boundaries (parse_logs, lazy API)."""
    mixed = tmp_path / "mixed-line-ends.log"
    lines = kit_log.read_text().splitlines()[:400]
    ends = [b"\n", b"\r\n", b"\r", b"\r\n\n"]
    mixed.write_bytes(b"".join(line.encode() + ends[i % 4] for i, line in enumerate(lines)))
    files = [mixed, DATA / "multiline.log", DATA / "garbage.log", DATA / "json-lines.jsonl"]
    conf = spark.conf
    old = conf.get("spark.sql.files.maxPartitionBytes")
    conf.set("spark.sql.files.maxPartitionBytes", "8191")
    try:
        parsed = parse_logs(files, spark)
        blocks = parsed.lines.select("file").rdd.getNumPartitions()
        events, quarantine = _collect(parsed.events), _collect(parsed.quarantine)
        counts = parsed.counts()
    finally:
        conf.set("spark.sql.files.maxPartitionBytes", old)
    assert blocks > 10
    expected = parse_paths(files)
    assert events == _naive(expected.events)
    assert quarantine == _naive(expected.quarantine)
    assert counts == expected.counts


def test_cli_parse_with_spark(spark, tmp_path, capsys):
    """`python -m coordinator_kit logs parse` (in this process, so on the test session)."""
    from coordinator_kit.__main__ import main

    conf = spark.conf
    saved = {k: conf.get(k) for k in ("spark.sql.shuffle.partitions",)}
    try:
        code = main(["logs", "parse", str(DATA / "broker-2.8-log4j.log"),
                     str(DATA / "garbage.log"), "--out", str(tmp_path / "out"),
                     "--engine", "spark"])
    finally:
        for k, v in saved.items():
            conf.set(k, v)
    assert code == 0
    assert capsys.readouterr().out.splitlines()[0] == \
        "parsed 19 lines: 12 recognised, 6 quarantined, 1 other"
    assert (tmp_path / "out" / "events.parquet").is_dir()


def test_log4j_fast_path_gives_the_layout_regexs_rows(spark, tmp_path):
    """The loader matches LOG4J's head and tail apart and cuts the message out by byte offsets
    (spark.load._classify); on edge lines it must agree with the whole layout regex that the
    Python parser runs: several " (" in a message, an empty message, the spaces after the level
    running into " (", a head longer than its 64-character window, non-ASCII text, a
    `:line` logger, 9-digit fractions, junk after the logger, lines that only look like LOG4J.
    """
    head = "[2025-03-03 09:00:00,001] INFO "
    group = ("[GroupCoordinator id=1] Preparing to rebalance group g (state Stable) in state "
             "PreparingRebalance with old generation 3 (__consumer_offsets-7) (reason: x (y))")
    lines = [
        head + group + " (org.apache.kafka.coordinator.group.GroupMetadataManager)",
        head + group + " (kafka.coordinator.group.GroupCoordinator:123)",
        "[2025-03-03 09:00:00.123456789] WARNING " + group + " (a.B$C)",
        head + " (org.apache.kafka.coordinator.group.GroupMetadataManager)",
        head + "  (org.apache.kafka.coordinator.group.GroupMetadataManager)",
        head + "(org.apache.kafka.coordinator.group.GroupMetadataManager)",
        "[2025-03-03 09:00:00,001] ERROR" + " " * 60 + "msg (a.B)",
        head + "Gruppe ünïcødé 組 (x) 🙂 (org.apache.kafka.coordinator.group.GroupCoordinator)",
        head + group + " (org.apache.kafka.coordinator.group.GroupCoordinator) trailing",
        head + group + " (org.apache.kafka.coordinator.group.GroupCoordinator",
        head + group + " (9bad.Logger)",
        "[2025-03-03 09:00:00,] INFO " + group + " (a.B)",
        "[2025-03-03 09:00:00,001] [INFO] [main] " + group,
        "[2025-03-03 09:00:00,001] INFO",
    ]
    path = tmp_path / "log4j-edges.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    parsed = parse_logs([path], spark)
    expected = parse_paths([path])
    assert _collect(parsed.events) == _naive(expected.events)
    assert _collect(parsed.quarantine) == _naive(expected.quarantine)
    assert parsed.counts() == expected.counts
    assert expected.counts.recognised >= 3


def test_kits_debug_client_lines_round_trip_through_spark(spark, tmp_path):
    """Round trip through Spark, for the client's DEBUG heartbeat lines too: the
    Java client's J-HB-SEND / J-HB-OK (long-gc-pause) and kafka-python's KP-HB-SEND /
    KP-HB-RECEIVED. Every logged trace event comes back with its event, group, member,
    generation and time stamp (the fields its line prints)."""
    from datetime import timedelta

    from coordinator_kit.logs.layout import DEFAULT_START
    from coordinator_kit.scenarios import new_cluster

    kp = new_cluster(0, consumer_defaults={"client_style": "kafka-python"})
    kp.add_consumer("consumer-1")
    kp.run_for(12_000)
    logged = []
    for name, cluster in (("java", run_scenario("long-gc-pause")), ("kp", kp)):
        events = [e for e in cluster.trace.events
                  if e.message is not None and e.source.startswith("client")]
        (tmp_path / f"{name}.log").write_text("\n".join(e.line() for e in events) + "\n")
        logged += [(f"{name}.log", i + 1, e) for i, e in enumerate(events)]
    rows = {(Path(r["file"]).name, r["line"]): r for r in _collect(load_logs(tmp_path, spark))}
    assert len(rows) == len(logged)
    templates = set()
    for file, line, e in logged:
        r = rows[(file, line)]
        templates.add(r["template"])
        assert (r["event"], r["source"], r["level"]) == (e.kind, "client", e.level), e.line()
        assert r["ts"] == (DEFAULT_START + timedelta(milliseconds=e.ts)).replace(tzinfo=None)
        printed = {n for _, n, _, _ in string.Formatter().parse(TEMPLATES[e.template_id].text)}
        for k, kind in (("member", str), ("generation", int), ("group", str)):
            v = e.fields.get(k)
            if k in printed and type(v) is kind:        # not a Generation{...} object
                assert r[k] == v, (k, e.line())
    assert {"J-HB-SEND", "J-HB-OK", "KP-HB-SEND", "KP-HB-RECEIVED"} <= templates


def _java_two_step(clf, jpatterns, text):
    """What Spark does with one text, in Java's own regex engine: the combined regex picks the
    bucket, the bucket's replaceAll writes the fields, the matched alternative's segment holds
    its slots (`Classifier.slot_index`)."""
    from coordinator_kit.logs.patterns import SEP

    combined, buckets = jpatterns
    full = text + clf.suffix
    b = 0
    if combined is not None:
        m = combined.matcher(full)
        if not m.find():
            return None
        b = clf.code_index(m.group(1))
    out = buckets[b].matcher(full).replaceAll(clf.buckets[b][1]).split(SEP)
    j = clf.code_index(out[0])
    if j is None:
        return None
    return b * clf.bucket_size + j, {s: out[clf.slot_index(j, s)] or None for s in clf.slots}


def test_javas_engine_gives_every_sample_line_the_python_parsers_slots(spark):
    """java.util.regex keeps what a group captured inside an atomic group after backtracking
    out of it (Python's re does not): an alternative that failed after its atomic part (the
    longer of two wordings sharing a start, 'Computed a new target assignment ... in {ms}ms:
    {assignment}.' before '... in {ms}ms.') left its group and epoch in the fields, and Spark
    read 'analyticsanalytics' and epoch 33. Each alternative now writes its own segment."""
    from test_logparse import _all_sample_lines

    from coordinator_kit.logs import patterns as P

    J = spark._jvm.java.util.regex.Pattern
    compiled = {id(c): (J.compile(c.combined) if c.combined else None,
                        [J.compile(rx) for rx, _ in c.buckets])
                for c in (P.LAYOUT_CLASSIFIER, P.MESSAGE_CLASSIFIER)}
    checked = 0
    for line in _all_sample_lines():
        lay = P.LAYOUT_CLASSIFIER.match(line)
        assert lay == _java_two_step(P.LAYOUT_CLASSIFIER, compiled[id(P.LAYOUT_CLASSIFIER)],
                                     line), line
        if lay is not None:
            msg = lay[1]["msg"] or ""
            assert P.MESSAGE_CLASSIFIER.match(msg) == _java_two_step(
                P.MESSAGE_CLASSIFIER, compiled[id(P.MESSAGE_CLASSIFIER)], msg), msg
            checked += 1
    assert checked > 300
