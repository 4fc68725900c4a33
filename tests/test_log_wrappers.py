"""Prefixes tools put in front of log lines (`logs.wrappers`): docker compose, the CRI format
of `kubectl logs`, a k9s pane. Stripped before the layout is matched, they compose with every
layout: a line wrapped in any of them is read as the line alone. (The Spark engine on the same
lines: tests/test_spark_logs_engine.py.)"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from coordinator_kit.logs.parse import classify_line, iter_lines, parse_paths
from coordinator_kit.logs.wrappers import WRAPPERS, strip_wrapper

DATA = Path(__file__).parent / "data" / "logs"

# one way each wrapper writes a line (see WRAPPERS' docs)
WRAP = {
    "CRI": lambda line: "2024-05-01T10:00:00.123456789Z stdout F " + line,
    "CRI-offset": lambda line: "2024-05-01T12:00:00.5+02:00 stderr F " + line,
    "COMPOSE": lambda line: "kafka-1     | " + line,
    "COMPOSE-v1": lambda line: "project_kafka_1  | " + line,
    "COMPOSE-timestamps": lambda line: "web-1  | 2024-05-01T10:00:00.000000000Z " + line,
    "K9S": lambda line: "│ " + line + "      │",
}


def sample_lines() -> list[str]:
    """Every decodable line of the hand-written samples that are not themselves wrapped."""
    out = []
    for path in sorted(DATA.glob("*")):
        if path.name.startswith(("wrapped-", "_")):
            continue
        for data in iter_lines(io.BytesIO(path.read_bytes())):
            try:
                out.append(data.decode("utf-8"))
            except UnicodeDecodeError:
                pass
    return out


def test_every_wrapper_is_documented_and_its_table_is_the_regex():
    assert [w.name for w in WRAPPERS] == ["CRI", "COMPOSE", "K9S"]
    assert all(len(w.doc) > 40 for w in WRAPPERS)


@pytest.mark.parametrize("how", list(WRAP))
def test_a_wrapped_line_is_read_as_the_line_alone(how):
    """Every layout (log4j, logback, Spring Boot, Python, librdkafka, JSON), blank lines,
    stack frames: the same kind and row as unwrapped."""
    lines = sample_lines()
    assert len(lines) > 80
    for line in lines:
        if how == "K9S" and line.rstrip(" │") != line:
            continue                     # a line ending in spaces loses them in a k9s pane
        assert classify_line(WRAP[how](line)) == classify_line(line), line


def test_what_the_wrappers_strip_and_leave():
    assert strip_wrapper("kafka-1  | x") == "x"
    assert strip_wrapper("│ x  │") == "x"
    assert strip_wrapper("│") == ""
    # not wrappers: a date with a space, a name without the replica number, one space before |
    for line in ("2024-05-01 10:00:00.000000000Z stdout F x", "kafka  | x",
                 "2024-05-01T10:00:00Z stdin F x", "INFO | x"):
        assert strip_wrapper(line) == line


def test_the_wrapped_sample_files():
    compose = parse_paths(DATA / "wrapped-compose.log")
    assert compose.counts.recognised == 8 and compose.counts.continuation == 2
    assert [r["layout"] for r in compose.events] == ["LOG4J", "LOG4J", "LOGBACK", "LOGBACK",
                                                      "JSON", "LOGBACK", "LOG4J", "LOG4J"]
    assert compose.events[5]["raw"].count("\n") == 2      # the stack trace, through compose
    assert [(r["line"], r["problem"]) for r in compose.quarantine] == \
        [(12, "unknown layout"), (13, "unknown message")]
    cri = parse_paths(DATA / "wrapped-cri.log")
    assert [r["layout"] for r in cri.events] == ["LOG4J", "SPRINGBOOT", "RDK-STDERR", "JSON",
                                                  "LOG4J"]
    # a partial (P) line is joined with the rest of its record (logs.joins CRI-PARTIAL)
    joined = cri.events[4]
    assert (joined["line"], joined["event"], joined["reason"]) == (
        6, "rebalance_started", "Adding new member consumer-1-bbbb with group instance id None")
    assert joined["raw"].count("\n") == 1 and cri.counts.continuation == 1
    assert [(r["line"], r["problem"]) for r in cri.quarantine] == [(8, "truncated")]
    k9s = parse_paths(DATA / "wrapped-k9s.log")
    assert [r["layout"] for r in k9s.events] == ["LOG4J", "LOGBACK", "PY-DASHED"]
    assert k9s.counts.other == 1 and k9s.counts.quarantined == 0


# -- other clients' wordings and JSON key maps (logs.wordings, patterns.JSON_KEY_MAPS) ----------

def test_kafkajs_json_lines_give_events_with_the_group_and_member_of_their_extras():
    r = parse_paths(DATA / "client-kafkajs.jsonl")
    assert [(e["template"], e["event"], e["group"]) for e in r.events] == [
        ("KJS-JOINED", "joined", "orders"), ("KJS-REBAL", "rejoin_requested", "orders"),
        ("KJS-UNKNOWN", "heartbeat_failed_reset", "orders")]
    assert {e["member"] for e in r.events} == {"orders-app-6c1f2b7e-3d0a-4c55-9a1e-2f6b8d0c4e11"}
    assert all(e["source"] == "client" and e["layout"] == "JSON" for e in r.events)
    assert r.counts.other == 3 and r.counts.quarantined == 0   # Starting, Stopped, a debug line


def test_aiokafka_lines_read_with_kafka_pythons_rows_and_its_own():
    r = parse_paths(DATA / "client-aiokafka.log")
    assert r.counts.recognised == 11 and r.counts.quarantined == 0
    own = [e["template"] for e in r.events if e["template"].startswith("AIO-")]
    assert own == ["AIO-HB-UNKNOWN", "AIO-SESSION", "AIO-COORD-DEAD"]
    joined = [e for e in r.events if e["event"] == "joined"][0]
    assert (joined["group"], joined["generation"]) == ("billing", 4)


def test_kafka_go_lines_in_gos_log_layout_and_in_json_loggers():
    r = parse_paths(DATA / "client-kafka-go.log")
    assert r.counts.recognised == 9 and r.counts.quarantined == 0
    assert {e["layout"] for e in r.events} == {"GO-STD", "JSON"}
    joined = [e for e in r.events if e["event"] == "joined"]
    assert joined[0]["member"] == "main@host (github.com/segmentio/kafka-go)-3a1c"
    assert joined[0]["ts"].isoformat() == "2024-05-01T10:00:00+00:00"
    assert [e["ts"].microsecond for e in r.events if e["template"] == "KGO-SYNCED"] == [123456]


def test_kafka_connect_workers_and_slf4j_simple():
    r = parse_paths(DATA / "connect-and-slf4j.log")
    assert r.counts.recognised == 7 and r.counts.other == 1 and r.counts.quarantined == 0
    assert [e["template"] for e in r.events][:5] == ["CONNECT-REBAL", "J-REJOIN", "J-JOINED",
                                                     "CONNECT-JOINED-1", "CONNECT-JOINED-0"]
    assert [e["group"] for e in r.events][:5] == ["connect-cluster"] * 4 + ["old-cluster"]
    simple = [e for e in r.events if e["layout"] == "SLF4J-SIMPLE"]
    assert [(e["thread"], e["ts"], e["group"]) for e in simple] == [
        ("main", None, "demo"), ("kafka-coordinator-heartbeat-thread | demo", None, "demo")]
