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


# -- messages with no time stamp -------------------------------------------------------------

def test_a_message_pasted_alone_is_an_event_with_no_time_in_line_order():
    r = _events("messages-alone.log")
    assert [(e["line"], e["template"], e["layout"], e["group"]) for e in r.events] == [
        (1, "B-FAIL", "MESSAGE", "orders"), (2, "B-REBAL-2", "MESSAGE", "orders"),
        (3, "B-STAB-2", "MESSAGE", "orders"), (4, "J-JOINED", "MESSAGE", "orders")]
    assert all(e["ts"] is None and e["level"] is None and e["logger"] is None
               for e in r.events)
    assert r.events[0]["member"] == "consumer-orders-1-3f2b6c1e"
    assert (r.events[3]["member"], r.events[3]["generation"]) == ("consumer-orders-2-9c1a", 5)
    # a known non-event wording is other; a wording with little fixed text ("Rebalance
    # started"), prose that mentions a group, and other text stay quarantined
    assert r.counts.other == 1
    assert [(q["line"], q["problem"]) for q in r.quarantine] == [
        (6, "unknown layout"), (7, "unknown layout"), (8, "unknown layout")]
    assert r.counts.untimed == 4
    assert "4 of the events have no time stamp" in r.counts.summary()


def test_only_wordings_with_enough_fixed_text_are_read_alone():
    from coordinator_kit.logs.patterns import BARE_MIN_FIXED, BARE_OK, MESSAGE_ENTRIES

    short = [e.id for e, ok in zip(MESSAGE_ENTRIES, BARE_OK) if not ok]
    assert "CONNECT-REBAL" in short and "R-TRANSITION" in short
    assert classify_line("Transition from LOADING to ACTIVE.")[0] == "quarantine"
    assert classify_line("Heartbeat failed: whatever")[0] == "quarantine"
    assert BARE_MIN_FIXED >= 20


def test_no_other_sample_text_becomes_a_message_alone():
    """The garbage, the input edge cases and every other sample: no line outside
    messages-alone.log is read as a message alone (each holds a layout, or is no event)."""
    r = parse_paths([DATA, DATA.parent / "log-inputs"])
    bare = {(e["file"].rsplit("/", 1)[-1], e["line"]) for e in r.events
            if e["layout"] == "MESSAGE"}
    assert {f for f, _ in bare} == {"messages-alone.log"}
    garbage = [e for e in r.events if e["file"].endswith("garbage.log")]
    assert [e["layout"] for e in garbage] == ["LOG4J"]       # its one real record


# -- records over several lines (logs.joins) ---------------------------------------------------

def test_java_util_logging_two_line_records_are_joined():
    """SimpleFormatter's default: time and source, then `LEVEL: message`; a stack trace after
    it attaches to the record; a head with no message line after it stays alone."""
    r = _events("multiline-jul.log")
    assert [(e["line"], e["template"], e["level"], e["ts"].isoformat()) for e in r.events] == [
        (1, "J-REJOIN", "INFO", "2026-11-25T10:00:00+00:00"),
        (3, "J-JOINED", "INFO", "2026-11-25T10:00:03+00:00"),
        (5, "J-COMMIT-PART-FAIL", "WARN", "2026-11-25T12:15:40+00:00")]
    assert all(e["layout"] == "JUL" for e in r.events)
    assert r.events[0]["logger"] == "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator"
    assert r.events[2]["raw"].count("\n") == 3              # its two lines and a stack trace
    assert [(q["line"], q["problem"]) for q in r.quarantine] == [
        (11, "unknown layout"), (12, "unknown message"), (14, "unknown layout")]
    assert r.counts.other == 8 and r.counts.continuation == 7


def test_dotnet_console_two_line_records_are_joined():
    r = _events("multiline-dotnet.log")
    assert [(e["line"], e["template"], e["level"], e["logger"]) for e in r.events] == [
        (1, "RDK-CGRPSTATE-0", "INFO", "Confluent.Kafka.Consumer"),
        (3, "RDK-JOIN-0", "DEBUG", "Confluent.Kafka.Consumer"),
        (5, "RDK-HB-REBAL", "WARN", "Ledger.Worker")]
    assert [e["ts"] for e in r.events][:2] == [None, None] and r.counts.untimed == 2
    assert r.events[2]["ts"].isoformat() == "2026-11-25T10:00:05.120000+00:00"
    assert r.events[2]["raw"].count("\n") == 2              # a message of two lines
    assert [(q["line"], q["problem"]) for q in r.quarantine] == [(10, "unknown layout")]


def test_a_kibana_copy_takes_its_display_time_for_a_bare_message():
    r = _events("multiline-kibana.log")
    assert [(e["line"], e["template"], e["layout"], e["ts"].isoformat()) for e in r.events] == [
        (1, "B-FAIL", "KIBANA", "2026-11-25T10:00:00.120000+00:00"),
        (3, "B-REBAL-2", "KIBANA", "2026-11-25T10:00:00.250000+00:00"),
        (6, "B-STAB-2", "LOG4J", "2026-11-25T10:00:01+00:00")]     # a record of its own
    assert r.counts.quarantined == 0 and r.counts.other == 5      # display time alone: other


def test_cri_partial_lines_and_k9s_wrapped_rows_are_joined():
    r = _events("wrapped-multiline.log")
    assert [(e["line"], e["template"], e["raw"].count("\n")) for e in r.events] == [
        (1, "B-REBAL-2", 2), (5, "RDK-JOIN-0", 0), (7, "B-FAIL", 1)]
    assert r.events[0]["reason"] == \
        "Adding new member consumer-1-bbbb with group instance id None"
    assert r.events[2]["member"] == "consumer-orders-2-9c1a"
    # a P line whose rest follows another stream's entry stays cut (only the next entry
    # joins); a k9s row cut at the border before a record's start stays cut
    assert [(q["line"], q["problem"]) for q in r.quarantine] == [
        (4, "truncated"), (6, "unknown layout"), (9, "truncated"), (10, "truncated")]


def test_a_join_reaches_at_most_max_join_lines(tmp_path):
    from coordinator_kit.logs.joins import MAX_JOIN_LINES

    stamp = "2026-11-25T10:00:00.000000000Z stdout "
    text = "[2026-11-25 10:00:00,000] INFO [GroupCoordinator 2]: Member m-1 in group g has " \
        "failed, removing it from the group (kafka.coordinator.group.GroupCoordinator)"
    pieces = [text[i:i + 10] for i in range(0, len(text), 10)]
    assert len(pieces) > MAX_JOIN_LINES
    lines = [stamp + ("F " if k == len(pieces) - 1 else "P ") + p for k, p in enumerate(pieces)]
    (tmp_path / "long.log").write_text("\n".join(lines) + "\n")
    r = parse_paths(tmp_path / "long.log")
    r.counts.check()
    assert r.counts.recognised == 0
    assert [q["line"] for q in r.quarantine][:2] == [1, 1 + MAX_JOIN_LINES]
    assert r.quarantine[0]["raw"].count("\n") == MAX_JOIN_LINES - 1
    short = [stamp + ("F " if k == 2 else "P ") + p for k, p in
             enumerate([text[:60], text[60:120], text[120:]])]
    (tmp_path / "long.log").write_text("\n".join(short) + "\n")
    assert [e["event"] for e in parse_paths(tmp_path / "long.log").events] == \
        ["member_session_expired"]
