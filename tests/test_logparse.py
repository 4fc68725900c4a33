"""The log parser without a JVM: patterns from the catalogue, layouts, wordings, quarantine.

Every event the kit's scenarios log parses back to the same fields (a round trip); lines
in each layout the parser knows (log4j with and without thread, logback, Spring Boot,
Python logging, JSON lines, librdkafka) parse to the right event; lines that must be
quarantined are, with their reason; the totals add up.
"""

from __future__ import annotations

import io
import re
import string
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coordinator_kit.logs import TEMPLATES
from coordinator_kit.logs.catalogue import LogTemplate
from coordinator_kit.logs.fields import TEMPLATE_OVERRIDES
from coordinator_kit.logs.layout import DEFAULT_START
from coordinator_kit.logs.parse import (ParseCounts, classify_line, iter_lines, parse_lines,
                                        parse_paths)
from coordinator_kit.logs import patterns as P
from coordinator_kit.logs.wordings import WORDINGS
from coordinator_kit.scenarios import SCENARIOS, run_scenario
from coordinator_kit.spark import schema

DATA = Path(__file__).parent / "data" / "logs"
UTC = timezone.utc


def _ts(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


# -- round trip: the kit's own lines -----------------------------------------------------------

_CLIENT_GROUP = re.compile(r"groupId=([^\]]*)\]")
_SHARD_PARTITION = re.compile(r"^\[GroupCoordinator id=\d+ topic=\S+ partition=(\d+)\] ")


def _expected(e) -> dict:
    """The fields a trace event's line shows, from its structured fields (not from its text).

    Only the fields its template prints (a trace event may carry more, e.g. the tp of a
    context transition whose line does not name it), plus the LogContext prefix."""
    printed = {n for _, n, _, _ in string.Formatter().parse(TEMPLATES[e.template_id].text) if n}
    f = {k: v for k, v in e.fields.items() if k in printed}
    gen = f.get("generation")
    member = f.get("member")
    if gen is not None and not isinstance(gen, int):       # Java's Generation{...} object
        gen_id = getattr(gen, "generation_id", None)
        member = member if member is not None else (getattr(gen, "member_id", None) or None)
        gen = gen_id
    group = f.get("group")
    if group is None and (m := _CLIENT_GROUP.search(e.message.split("] ", 1)[0] + "]")):
        group = m.group(1) or None
    partition = f.get("partition")
    if partition is None and f.get("tp") is not None:
        tp = f["tp"]
        partition = int(tp.rsplit("-", 1)[1]) if isinstance(tp, str) else tp.partition
    if partition is None and (m := _SHARD_PARTITION.match(e.message)):
        partition = int(m.group(1))
    epoch = f.get("epoch")
    if isinstance(epoch, str):
        m = re.fullmatch(r"(?:OptionalInt\[|Some\()?(-?\d+)[\])]?", epoch)
        epoch = int(m.group(1)) if m else None
    return {"event": e.kind, "group": group, "member": member, "generation": gen,
            "partition": partition, "epoch": epoch,
            "ts": DEFAULT_START + timedelta(milliseconds=e.ts)}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_every_event_a_scenario_logs_parses_back_to_the_same_fields(name):
    """Round trip: event, group, member, generation, partition, epoch, ts."""
    cluster = run_scenario(name)
    logged = [e for e in cluster.trace if e.message is not None]
    lines = [e.line() for e in logged]
    counts = ParseCounts()
    rows = [row for _, row in parse_lines(lines, "kit.log", counts)]
    assert counts.read == len(lines) == counts.recognised and counts.quarantined == 0
    assert len(rows) == len(logged)
    keys = ("event", "group", "member", "generation", "partition", "epoch", "ts")
    for e, row in zip(logged, rows):
        assert {k: row[k] for k in keys} == _expected(e), e.line()
        assert row["template"] == e.template_id or (
            P.template_regex(row["template"], _text(row["template"]))
            == P.template_regex(e.template_id, TEMPLATES[e.template_id].text))
        assert row["source"] == TEMPLATES[e.template_id].source
        assert row["level"] == e.level and row["logger"] == e.logger


def _text(template_id: str) -> str:
    return next(x.text for x in P.MESSAGE_ENTRIES if x.id == template_id)


# -- every template and wording parses back from its own rendering -----------------------------

SAMPLES = {"group": "grp-1", "member": "mem-1", "member_id": "mem-1", "member_info": "mem-1",
           "generation": "7",
           "partition": "3", "tp": "__consumer_offsets-3", "epoch": "5", "ms": "12",
           "duration_ms": "12", "state": "Stable", "new_state": "Stable", "to_state": "Stable",
           "reason": "some reason", "cause": "some reason", "error": "some reason",
           "exception": "some reason", "message": "some reason", "static": "9", "records": "9",
           "bytes": "9", "scheduler_ms": "9", "delay_ms": "9",
           "member_metadata": "MemberMetadata(memberId=mem-1, groupInstanceId=None, clientId=c, "
                              "clientHost=/10.0.0.1, sessionTimeoutMs=45000, "
                              "rebalanceTimeoutMs=300000, supportedProtocols=List(range))"}


@pytest.mark.parametrize("entry", P.MESSAGE_ENTRIES, ids=lambda e: e.id)
def test_each_wording_is_reachable_and_fills_its_columns(entry):
    """No template or foreign wording is shadowed by a more general one (patterns priority)."""
    names = [n for _, n, _, _ in string.Formatter().parse(entry.text) if n]
    msg = entry.text.format(**{n: SAMPLES.get(n, "v1") for n in names})
    found = P.MESSAGE_CLASSIFIER.match(msg)
    assert found is not None, msg
    i, values = found
    assert P.MESSAGE_ENTRIES[i].event == entry.event, (P.MESSAGE_ENTRIES[i].id, msg)
    expect = {"group": "grp-1", "member": "mem-1", "generation": "7", "partition": "3",
              "epoch": "5", "duration_ms": "12", "state": "Stable", "reason": "some reason"}
    for name in names:
        column = TEMPLATE_OVERRIDES.get((entry.id, name), schema.PLACEHOLDER_COLUMNS.get(name))
        if column:
            assert values[column] == expect[column], (name, msg, values)


def test_a_template_added_to_the_catalogue_is_recognised_without_other_changes():
    new = LogTemplate("X-NEW", "group_stabilized", "org.apache.kafka.coordinator.group.X",
                      "INFO", "", "Frobnicated group {group} at generation {generation} in "
                      "{duration_ms}ms")
    clf = P.message_classifier(P.message_entries([*TEMPLATES.values(), new]))
    i, values = clf.match("[GroupCoordinator id=3 topic=__consumer_offsets partition=8] "
                          "Frobnicated group g-9 at generation 12 in 40ms")
    assert clf.alternatives[i].key == "X-NEW"
    assert (values["group"], values["generation"], values["duration_ms"], values["p_partition"]) \
        == ("g-9", "12", "40", "8")


def test_event_names_are_the_catalogues_plus_the_declared_extras():
    assert set(schema.EVENT_NAMES) == {t.event for t in TEMPLATES.values()} | set(
        schema.EXTRA_EVENTS)
    assert set(schema.EVENT_NAMES) == set(P.EVENT_NAMES)
    used = {w.event for w in WORDINGS if w.event}
    assert used <= set(schema.EVENT_NAMES)
    assert set(schema.EXTRA_EVENTS) <= used | {t.event for t in TEMPLATES.values()}


def test_schema_lists_the_issue_columns_first_with_their_types():
    assert schema.ISSUE_COLUMNS == ("ts", "level", "logger", "thread", "source", "event", "group",
                                    "member", "generation", "state", "reason", "partition",
                                    "epoch", "duration_ms", "raw", "file", "line")
    types = {c.name: c.type for c in schema.EVENT_COLUMNS}
    assert types["ts"] == "timestamp" and types["generation"] == "int" \
        and types["duration_ms"] == "long" and types["line"] == "long"
    arrow = schema.arrow_schema()
    assert arrow.names == list(schema.COLUMN_NAMES)
    assert str(arrow.field("ts").type) == "timestamp[us, tz=UTC]"


# -- the patterns Spark runs: Java-compatible, and the same answers ----------------------------

def _spark_patterns():
    for clf in (P.LAYOUT_CLASSIFIER, P.MESSAGE_CLASSIFIER):
        if clf.combined:
            yield clf.combined
        for rx, _ in clf.buckets:
            yield rx


def test_spark_patterns_use_only_syntax_java_and_python_share():
    for rx in _spark_patterns():
        re.compile(rx)
        assert "(?P<" not in rx and "\\Z" not in rx and "\\z" not in rx
        assert not re.search(r"(?<!\\)\\[dwsDWS]", rx), rx[:80]


def _all_sample_lines() -> list[str]:
    lines = []
    for path in sorted(DATA.iterdir()):
        for data in iter_lines(io.BytesIO(path.read_bytes())):
            try:
                lines.append(data.decode("utf-8"))
            except UnicodeDecodeError:
                pass
    cluster = run_scenario("rolling-restart-static")
    return lines + cluster.log_lines("DEBUG")


def test_sparks_two_step_route_gives_the_python_parsers_answer():
    """combined regex + code table, then the bucket's regexp_replace with `$n` references
    (what Spark runs, emulated) == the single Python match, for the layout and the message
    stage, on every sample line."""
    for line in _all_sample_lines():
        lay = P.LAYOUT_CLASSIFIER.match(line)
        assert lay == P.LAYOUT_CLASSIFIER.match_two_step(line), line
        if lay is not None:
            msg = lay[1]["msg"] or ""
            assert P.MESSAGE_CLASSIFIER.match(msg) == P.MESSAGE_CLASSIFIER.match_two_step(msg)


# -- hand-written lines in each layout ------------------------------------------------------------

def _parse(name: str):
    return parse_paths(DATA / name)


def _row(result, line: int) -> dict:
    rows = [r for r in result.events + result.quarantine if r["line"] == line]
    assert len(rows) == 1, (line, rows)
    return rows[0]


def _check(row: dict, **expected) -> None:
    assert {k: row[k] for k in expected} == expected, row["raw"]


def test_kafka_log4j_layout_classic_coordinator_2_8():
    r = _parse("broker-2.8-log4j.log")
    assert (r.counts.read, r.counts.recognised, r.counts.other, r.counts.quarantined) == \
        (13, 11, 1, 1)
    _check(_row(r, 1), event="coordinator_elected", partition=12, epoch=3, layout="LOG4J",
           ts=_ts("2021-06-01T10:00:00.123+00:00"), level="INFO", source="broker",
           logger="kafka.coordinator.group.GroupCoordinator", template="B-ELECT-0")
    _check(_row(r, 3), event="load_completed", partition=12, epoch=3, duration_ms=120)
    _check(_row(r, 4), event="rebalance_started", group="orders", generation=4, partition=12,
           state="PreparingRebalance",
           reason="Adding new member consumer-1-aaaa with group instance id None")
    _check(_row(r, 5), event="group_stabilized", group="orders", generation=5,
           template="B-STAB-2")
    _check(_row(r, 7), event="member_session_expired", group="orders", member="consumer-2-bbbb")
    _check(_row(r, 10), event="coordinator_resigned", epoch=3)      # "in epoch Some(3)"
    _check(_row(r, 13), event=None, problem="unknown message", layout="LOG4J")


def test_kafka_log4j_with_thread_names_3_6():
    r = _parse("broker-3.6-strimzi-thread.log")
    assert (r.counts.recognised, r.counts.other, r.counts.quarantined) == (7, 1, 0)
    _check(_row(r, 1), event="member_id_required", group="payments",
           member="consumer-pay-1-1f0e", state="Empty", layout="LOG4J-THREAD",
           thread="data-plane-kafka-request-handler-3")
    _check(_row(r, 5), event="member_left", group="payments", member="consumer-pay-1-1f0e",
           reason="the consumer is being closed", template="B-LEAVE-2")
    _check(_row(r, 6), event="group_empty", group="payments", generation=2, partition=7)


def test_classic_coordinator_0_10_wording():
    r = _parse("broker-0.10-log4j.log")
    assert r.counts.recognised == r.counts.read == 6
    assert [e["event"] for e in r.events] == ["load_scheduled", "load_completed",
                                              "rebalance_started", "group_stabilized",
                                              "assignment_received", "group_empty"]
    _check(_row(r, 1), partition=3, template="M-LOAD-0")
    _check(_row(r, 2), partition=3, duration_ms=50)
    _check(_row(r, 3), group="clicks", generation=0, template="B-REBAL-0")


def test_new_coordinator_3_7_kip_848_wording():
    r = _parse("broker-3.7-new-coordinator.log")
    assert r.counts.recognised == r.counts.read == 9
    _check(_row(r, 2), event="load_completed", partition=5, epoch=7, duration_ms=38)
    _check(_row(r, 3), event="member_joined", group="analytics", member="Qx9-abc", partition=5)
    _check(_row(r, 4), event="group_epoch_bumped", group="analytics", epoch=3)
    _check(_row(r, 6), event="member_assignment_updated", member="Qx9-abc", epoch=3,
           state="STABLE")
    _check(_row(r, 7), event="member_fenced", reason="the member session expired")
    _check(_row(r, 9), event="unload_scheduled", partition=5, epoch=8)   # OptionalInt[8]


def test_logback_layout_java_client_with_a_stack_trace_attached():
    r = _parse("client-logback.log")
    assert (r.counts.read, r.counts.recognised, r.counts.other, r.counts.quarantined,
            r.counts.continuation) == (13, 8, 5, 0, 4)
    _check(_row(r, 1), event="coordinator_discovered", group="web", layout="LOGBACK",
           thread="main", logger="o.a.k.c.c.i.AbstractCoordinator", source="client",
           ts=_ts("2022-02-14T16:45:01.234+00:00"))
    _check(_row(r, 3), event="joined", group="web", generation=12)
    _check(_row(r, 5), event="poll_timeout", level="WARN",
           thread="kafka-coordinator-heartbeat-thread | web")
    _check(_row(r, 6), event="leave_sent", member="consumer-web-1-5d1c")
    _check(_row(r, 7), event="offset_commit_partition_failed", partition=0, level="ERROR")
    _check(_row(r, 13), event="partitions_revoked")


def test_spring_boot_layout_with_zone_offset():
    r = _parse("client-springboot.log")
    _check(_row(r, 1), event="synced", group="orders", member="consumer-orders-1-4e2a",
           generation=15, layout="SPRINGBOOT", thread="ntainer#0-0-C-1",
           ts=_ts("2024-02-20T09:11:12.345+00:00"))
    _check(_row(r, 4), event="heartbeat_failed_rebalancing", group="g", thread="main")
    assert r.counts.other == 1        # Spring's own listener-container line


def test_python_logging_layouts_kafka_python():
    basic = _parse("kafka-python-basic.log")
    assert (basic.counts.recognised, basic.counts.other) == (6, 1)     # kafka.conn: other
    _check(_row(basic, 3), event="joined", group="orders-py", generation=3,
           member="kafka-python-3.0.12-9f2c", ts=None, layout="PY-BASIC")
    _check(_row(basic, 6), event="coordinator_lost", group="orders-py", level="WARN",
           reason="Heartbeat session expired")
    dashed = _parse("kafka-python-dashed.log")
    _check(_row(dashed, 3), event="joined", group="etl", generation=8, layout="PY-DASHED",
           ts=_ts("2020-09-15T11:22:36.600+00:00"))
    _check(_row(dashed, 6), problem="unknown message", logger="kafka.coordinator")
    other = _parse("python-other-layouts.log")
    assert [(e["layout"], e["event"]) for e in other.events] == [
        ("PY-BRACKET", "joined"), ("PY-ASCTIME", "leave_sent"),
        ("PY-COLON", "heartbeat_failed_reset")]


def test_json_lines():
    r = _parse("json-lines.jsonl")
    assert (r.counts.recognised, r.counts.other, r.counts.quarantined) == (3, 1, 2)
    _check(_row(r, 1), event="joined", group="billing", member="app-1-77aa", generation=7,
           layout="JSON", thread="main", ts=_ts("2023-04-05T04:07:08.123+00:00"))
    _check(_row(r, 2), group="billing", level="WARN", ts=_ts("2023-04-05T04:07:09+00:00"))
    _check(_row(r, 4), event="rejoin_requested")          # trailing comma of a JSON array
    _check(_row(r, 5), problem="truncated")
    _check(_row(r, 6), problem="unknown layout")


def test_librdkafka_debug_lines():
    r = _parse("librdkafka.log")
    assert (r.counts.recognised, r.counts.other) == (9, 1)        # METADATA: not coordination
    _check(_row(r, 1), event="coordinator_state_changed", group="inventory", state="query-coord",
           logger="rdkafka.CGRPSTATE", level="DEBUG", thread="main", layout="RDK-STDERR",
           ts=_ts("2023-11-14T22:13:20.123+00:00"))
    _check(_row(r, 4), event="joined", generation=4, member="rdkafka-0c1d")
    _check(_row(r, 7), event="heartbeat_failed_rebalancing")
    _check(_row(r, 9), layout="RDK-SYSLOG", state="term")
    _check(_row(r, 10), layout="RDK-PIPE", event="member_id_assigned", member="rdkafka-0c1d",
           ts=_ts("2023-11-14T22:13:27+00:00"))


def test_multi_line_records_are_attached_to_their_record():
    r = _parse("multiline.log")
    assert (r.counts.read, r.counts.recognised, r.counts.other, r.counts.continuation) == \
        (7, 2, 5, 5)
    failed = _row(r, 1)
    assert failed["event"] == "load_failed" and failed["raw"].count("\n") == 5
    assert failed["raw"].endswith("\t... 3 more") or failed["raw"].endswith("... 3 more")
    block = _parse("client-kip848-logback.log")
    first = _row(block, 1)
    assert first["event"] == "reconciliation_started" and first["raw"].count("\n\t") == 5
    assert (block.counts.continuation, block.counts.other) == (5, 6)  # + the blank line


def test_lines_that_must_be_quarantined_and_the_totals_add_up():
    r = _parse("garbage.log")
    problems = {q["line"]: q["problem"] for q in r.quarantine}
    assert problems == {1: "truncated",            # a stack frame with no record above it
                        2: "truncated",            # a log4j line cut short
                        3: "undecodable bytes",    # binary garbage
                        4: "undecodable bytes",    # latin-1 in a UTF-8 file
                        5: "unknown layout"}
    assert r.events[0]["line"] == 6 and r.events[0]["event"] == "load_scheduled"  # CRLF line
    assert r.counts.read == 6 == r.counts.recognised + r.counts.other + r.counts.quarantined
    assert "\ufffd" in _row(r, 4)["raw"]


def test_bom_and_other_encodings_never_crash(tmp_path):
    line = ("[2024-01-01 00:00:02,000] INFO [GroupCoordinator id=1] Scheduling loading of "
            "metadata from __consumer_offsets-3 with epoch 2 "
            "(org.apache.kafka.coordinator.common.runtime.CoordinatorRuntime)")
    (tmp_path / "bom.log").write_bytes(b"\xef\xbb\xbf" + line.encode() + b"\r" + line.encode())
    (tmp_path / "utf16.log").write_bytes(line.encode("utf-16"))
    r = parse_paths(tmp_path)
    by_file = {}
    for row in r.events + r.quarantine:
        by_file.setdefault(Path(row["file"]).name, []).append(row["event"] or row["problem"])
    assert by_file == {"bom.log": ["load_scheduled", "load_scheduled"],   # \r ends a line too
                       "utf16.log": ["undecodable bytes"]}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=80), max_size=8))
def test_any_bytes_are_classified_and_counted(chunks):
    data = b"\n".join(chunks)
    counts = ParseCounts()
    list(parse_lines(iter_lines(io.BytesIO(data)), "fuzz", counts))
    counts.check()
    # a file that is nothing but a UTF-8 BOM has no line (Hadoop's LineRecordReader drops it)
    assert counts.read == (0 if data == b"\xef\xbb\xbf" else len(data.splitlines()))


def test_lines_split_like_hadoops_line_reader_across_chunks():
    data = b"a\r\nb\rc\n\nd\r"
    for size in (1, 2, 3, 64):
        assert list(iter_lines(io.BytesIO(data), chunk_size=size)) == [b"a", b"b", b"c", b"", b"d"]
    assert list(iter_lines(io.BytesIO(b"x"))) == [b"x"]


def test_classify_line_accepts_text_and_bytes():
    line = "INFO:kafka.coordinator:(Re-)joining group g"
    assert classify_line(line)[0] == classify_line(line.encode())[0] == "event"


# -- command line (pure-Python engine; the Spark engine is in test_spark_load.py) --------------

def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "coordinator_kit", "logs", *args],
                          capture_output=True, text=True, timeout=120)


def test_cli_parse_with_the_python_engine_writes_parquet(tmp_path):
    import pyarrow.parquet as pq

    out = tmp_path / "out"
    done = _cli("parse", str(DATA), "--out", str(out), "--engine", "python")
    assert done.returncode == 0, done.stderr
    expected = parse_paths(DATA).counts
    summary, wrote = done.stdout.splitlines()
    assert summary == expected.summary()
    assert re.fullmatch(r"parsed (\d+) lines: (\d+) recognised, (\d+) quarantined, \d+ other"
                        r"(?:; \d+ of the events have no time stamp \(.*\))?", summary)
    assert wrote.startswith(f"wrote {out / 'events.parquet'} ")
    events = pq.read_table(out / "events.parquet")
    assert events.schema.equals(schema.arrow_schema())
    assert events.num_rows == expected.recognised
    assert pq.read_table(out / "quarantine.parquet").num_rows == expected.quarantined


def test_cli_parse_rejects_a_bad_path_and_an_empty_input(tmp_path):
    missing = _cli("parse", str(tmp_path / "nope.log"), "--out", str(tmp_path / "o"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    (tmp_path / "empty.log").write_bytes(b"")
    empty = _cli("parse", str(tmp_path / "empty.log"), "--out", str(tmp_path / "o"))
    assert empty.returncode == 2 and "empty" in empty.stderr


def test_session_target_argument_beats_environment():
    from coordinator_kit.spark.session import resolve_target

    assert resolve_target(env={}).url == "local[*]"
    env = {"COORDINATOR_KIT_SPARK_MASTER": "spark://h:7077"}
    assert resolve_target(env=env) == resolve_target("spark://h:7077", env={})
    assert resolve_target(remote="sc://x:15002", env=env).kind == "remote"
    assert resolve_target(env={"SPARK_REMOTE": "sc://y"}).url == "sc://y"
    with pytest.raises(ValueError, match="not both"):
        resolve_target("local[2]", "sc://x")
    with pytest.raises(ValueError, match="unset one"):
        resolve_target(env={**env, "COORDINATOR_KIT_SPARK_REMOTE": "sc://x"})


def test_kafka_python_wordings_carry_the_catalogues_event_names():
    """A kit-written kafka-python log and a real one give the same event names
    (`coordinator_kit/logs/wordings.py`): every kafka-python wording either names the
    catalogue template of the same happening (wordings.SAME_AS, whose event it takes) or is
    listed as having none; a wording equal to a KP-* template's text is that template's."""
    from coordinator_kit.logs.wordings import NO_KIT_COUNTERPART, SAME_AS

    kp_by_text = {t.text: t.id for t in TEMPLATES.values() if t.id.startswith("KP-")}
    for w in WORDINGS:
        if w.origin != "kafka-python":
            continue
        assert w.id in SAME_AS or w.id in NO_KIT_COUNTERPART, \
            f"{w.id}: name its catalogue counterpart in SAME_AS, or list it in NO_KIT_COUNTERPART"
        if w.text in kp_by_text:
            assert SAME_AS.get(w.id) == kp_by_text[w.text], w.id
    for wid, tid in SAME_AS.items():
        w = next(x for x in WORDINGS if x.id == wid)
        assert w.event == TEMPLATES[tid].event, (wid, tid)
    # and through the parser: a line in each wording, next to the kit's line of its happening
    by_id = {e.id: e for e in P.MESSAGE_ENTRIES}
    samples = {"PY-HB-REBAL-1": "Group g1 is rebalancing; rejoining.",
               "PY-HB-SEND-0": "Heartbeat: g1[3] kafka-python-2.0.2-5e1f",
               "PY-HB-OK-0": "Received successful heartbeat response for group g1",
               "PY-MEMBER-ID": "Received member id m-1 for group g1; will retry join-group",
               "PY-HB-UNKNOWN": "Heartbeat: local member_id was not recognized; this consumer "
                                "needs to re-join",
               "J-HB-SEND-0": "Sending Heartbeat request for group g1 to coordinator h:9092 "
                              "(id: 2147483647 rack: null)",
               "J-HB-OK-0": "Received successful heartbeat response.",
               "J-HB-OK-1": "Received successful Heartbeat response for group g1"}
    for wid, text in samples.items():
        found = P.MESSAGE_CLASSIFIER.match(text)
        assert found is not None, wid
        entry = P.MESSAGE_ENTRIES[found[0]]
        assert entry.event == TEMPLATES[SAME_AS[wid]].event, (wid, entry.id)
        assert entry.id in (wid, SAME_AS[wid]) and entry.id in by_id


# -- a dataset folder: its trace and tables are not logs ------------------------------------------

def test_a_dataset_folder_reads_its_logs_and_skips_the_trace_and_tables_aloud():
    """datasets/one-dies/ holds trace.jsonl (ts = virtual ms since the run's start) and
    consumer_offsets.csv next to its logs: read as lines they gave 1970 time stamps and
    quarantined CSV rows. A folder walk leaves them out and names them; every time stamp is
    then the run's (from 2025-03-03 09:00 UTC, layout.DEFAULT_START)."""
    import warnings

    from coordinator_kit.logs.parse import SkippedFilesWarning, expand_paths

    folder = Path(__file__).parents[1] / "datasets" / "one-dies"
    with pytest.warns(SkippedFilesWarning, match=r"skipped 2 file\(s\).*consumer_offsets\.csv"
                      r".*trace\.jsonl: the kit's trace"):
        result = parse_paths(folder)
    assert result.counts.quarantined == 0 and result.counts.recognised > 0
    times = [r["ts"] for r in result.events]
    assert min(times) >= DEFAULT_START and max(times) < DEFAULT_START + timedelta(minutes=10)
    skipped: list[Path] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")                 # told through `skipped`, no warning
        files = expand_paths([folder], skipped)
    assert sorted(f.name for f in skipped) == ["consumer_offsets.csv", "trace.jsonl"]
    assert all(f.suffix == ".log" for f in files)
    with pytest.raises(ValueError, match="trace.jsonl is not a log: it is the kit's trace"):
        expand_paths(folder / "trace.jsonl")
    # a file merely named like one, with other content, is read as it is
    other = Path(__file__).parent / "data" / "logs"
    assert all(f.name not in ("trace.jsonl",) for f in expand_paths(other))


def test_cli_parse_of_a_dataset_folder_says_what_it_skipped(tmp_path):
    import pyarrow.parquet as pq

    folder = Path(__file__).parents[1] / "datasets" / "one-dies"
    done = _cli("parse", str(folder), "--out", str(tmp_path / "out"), "--engine", "python")
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().startswith("logs parse: skipped 2 file(s) of the kit's datasets")
    assert "Warning" not in done.stderr                          # said once, plainly
    with pytest.warns(Warning):
        expected = parse_paths(folder).counts
    assert done.stdout.splitlines()[0] == expected.summary()
    ts = pq.read_table(tmp_path / "out" / "events.parquet").column("ts").to_pylist()
    assert min(t.replace(tzinfo=None) for t in ts) >= DEFAULT_START.replace(tzinfo=None)
    bad = _cli("parse", str(folder / "trace.jsonl"), "--out", str(tmp_path / "o2"))
    assert bad.returncode == 2 and "is not a log" in bad.stderr
