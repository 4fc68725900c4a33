"""Logs as users have them: more client shapes (Confluent.Kafka's and node-rdkafka's log
callbacks over librdkafka, kafkajs' numeric levels, more Python logging formats), lines with no
time stamp, and records spread over several lines. The samples are in tests/data/logs (see its
_README.md); the Spark engine reads them in tests/test_spark_logs_engine.py and
tests/test_spark_load.py (every sample file, row for row)."""

from __future__ import annotations

from pathlib import Path

from coordinator_kit.logs.parse import classify_line, parse_paths
from coordinator_kit.logs.patterns import normalise_level

DATA = Path(__file__).parent / "data" / "logs"


def _events(name: str) -> list[tuple]:
    r = parse_paths(DATA / name)
    r.counts.check()
    return r


# -- librdkafka through its wrappers' log callbacks ------------------------------------------

def test_confluent_kafka_dotnet_console_logger_lines_are_librdkafkas_rows():
    """Confluent.Kafka's Loggers.ConsoleLogger: `{Level}|{time}|{Name}|{Facility}| {Message}`,
    the level a SyslogLevel name; the facility is the logger, as for librdkafka's own log_cb."""
    r = _events("client-rdkafka-wrappers.log")
    assert [(e["template"], e["layout"], e["level"], e["logger"]) for e in r.events] == [
        ("RDK-CGRPSTATE-0", "DOTNET-RDK", "DEBUG", "rdkafka.CGRPSTATE"),
        ("RDK-COORD", "DOTNET-RDK", "DEBUG", "rdkafka.CGRPCOORD"),
        ("RDK-ASSIGN-INC", "DOTNET-RDK", "DEBUG", "rdkafka.ASSIGN"),
        ("RDK-LEAVE", "DOTNET-RDK", "DEBUG", "rdkafka.LEAVE"),
        ("RDK-ASSIGN-FAIL", "DOTNET-RDK", "ERROR", "rdkafka.REBALANCE")]
    assert {e["group"] for e in r.events} == {"payments"}
    assert r.events[2]["ts"].isoformat() == "2026-11-25T10:00:01.020000+00:00"
    # a METADATA line is other; an unknown CGRP wording is quarantined (a coordination logger)
    assert r.counts.other == 1
    assert [(q["line"], q["problem"]) for q in r.quarantine] == [(7, "unknown message")]


def test_node_rdkafka_event_log_objects_and_kafkajs_numeric_levels():
    r = _events("client-node-rdkafka.jsonl")
    rdk = [e for e in r.events if e["logger"] != "kafkajs"]
    assert [(e["template"], e["event"], e["logger"], e["level"]) for e in rdk] == [
        ("RDK-CGRPSTATE-0", "coordinator_state_changed", "CGRPSTATE", "DEBUG"),
        ("RDK-JOIN-0", "join_sent", "JOIN", "DEBUG"),
        ("RDK-REVOKE-INC", "partitions_revoked", "ASSIGN", "DEBUG"),
        ("RDK-CGHB-REJOIN", "heartbeat_failed", "HEARTBEAT", "DEBUG")]
    assert all(e["ts"] is None for e in rdk)          # event.log carries no time
    # kafkajs' logLevel numbers (ERROR 1, WARN 2, INFO 4, DEBUG 5), not syslog's
    kjs = [(e["template"], e["level"]) for e in r.events if e["logger"] == "kafkajs"]
    assert kjs == [("KJS-JOINED", "INFO"), ("KJS-REBAL", "WARN"), ("KJS-UNKNOWN", "ERROR")]
    assert r.counts.other == 2                        # a BROKER line, a kafkajs Connection line
    assert [(q["line"], q["problem"]) for q in r.quarantine] == [(10, "truncated")]


def test_levels_are_read_per_logger_where_their_numbers_differ():
    assert normalise_level("4", "kafkajs") == "INFO" and normalise_level("4") == "WARN"
    assert normalise_level("1", "kafkajs") == "ERROR" and normalise_level("1", "x") == "FATAL"
    assert normalise_level("Warning") == "WARN" and normalise_level("fail") == "ERROR"
    assert normalise_level("dbug") == "DEBUG" and normalise_level("Emergency") == "FATAL"


def test_more_python_logging_formats():
    r = _events("python-more-formats.log")
    assert [(e["layout"], e["template"]) for e in r.events] == [
        ("PY-BRACKET-NAME", "KP-DISCOVER"), ("PY-BRACKET-NAME", "KP-JOINED"),
        ("PY-LEVEL-BRACKET", "KP-UPDATED"), ("PY-LEVEL-BRACKET", "PY-SESSION-EXPIRED"),
        ("PY-NAME-LEVEL", "KP-LEAVE")]
    assert r.events[1]["generation"] == 3 and r.events[1]["member"] == "kafka-python-2.3-77aa"
    assert r.events[3]["level"] == "WARN"
    assert r.counts.other == 1                        # kafka.conn DEBUG
    assert [(q["line"], q["problem"]) for q in r.quarantine] == [(7, "unknown message")]
