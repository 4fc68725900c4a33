"""Client log lines in kafka-python's wording (client_style="kafka-python"): kafka-python 2.x
(2.3.2) coordinator lines, Python logging's layout, the same events as the Java wording
(kafka-python's `kafka/coordinator/base.py` and `consumer.py`; its member states UNJOINED,
REBALANCING, STABLE)."""

from __future__ import annotations

import io
import logging
import re

import pytest

from coordinator_kit.client import ConsumerConfig
from coordinator_kit.client.styles import kafka_python_error, kafka_python_error_name
from coordinator_kit.cluster import Cluster
from coordinator_kit.errors import Errors
from coordinator_kit.logs import TEMPLATES, Log4jFormatter
from coordinator_kit.logs.layout import PYTHON_LAYOUT, format_log4j, format_python
from coordinator_kit.scenarios import run_scenario

KP = {"client_style": "kafka-python"}
# %(asctime)s - %(name)s - %(levelname)s - %(message)s
PY_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) - ([\w.]+) - "
                     r"(DEBUG|INFO|WARNING|ERROR|CRITICAL) - (.*)$")
PY_LEVELS = {"WARN": "WARNING", "FATAL": "CRITICAL"}


def client_events(cluster):
    return [e for e in cluster.trace if e.source.startswith("client-")]


def busy_run(style: str) -> Cluster:
    """Joins, a member expelled by a long pause, a coordinator move, a cut-off member, a leave:
    most of what a client logs."""
    cluster = run_scenario("long-gc-pause", trace_level="INFO",
                           consumer_defaults={"client_style": style})
    cluster.move_coordinator("group-1")
    cluster.run_for(15_000)
    cluster.add_consumer("consumer-3", max_poll_interval_ms=20_000)
    cluster.run_for(15_000)
    cluster.cut_off("consumer-3")
    cluster.run_for(60_000)
    cluster.cut_off("consumer-3", False)
    cluster.run_for(40_000)
    cluster.slow_poll("consumer-3", 25_000)
    cluster.run_for(30_000)
    cluster.leave("consumer-2")
    cluster.run_for(20_000)
    return cluster


@pytest.fixture(scope="module")
def both():
    return busy_run("java"), busy_run("kafka-python")


def test_the_style_changes_the_words_not_the_events(both):
    java, python = both
    assert [(e.ts, e.kind, e.source) for e in client_events(java)] == \
        [(e.ts, e.kind, e.source) for e in client_events(python)]
    broker = [(e.ts, e.kind, e.message) for e in java.trace if not e.source.startswith("client")]
    assert broker == [(e.ts, e.kind, e.message) for e in python.trace
                      if not e.source.startswith("client")]
    python.monitor.assert_ok()


def test_kafka_python_lines_use_its_templates_loggers_and_python_layout(both):
    _, python = both
    written = [e for e in client_events(python) if e.message is not None]
    assert len(written) > 40
    for e in written:
        tpl = TEMPLATES[e.template_id]
        assert e.template_id.startswith("KP-") and tpl.source == "client"
        assert tpl.logger.startswith(("kafka.coordinator", "kafka.consumer.subscription_state"))
        m = PY_LINE.match(e.line())
        assert m, e.line()
        assert m.group(2) == tpl.logger and m.group(3) == PY_LEVELS.get(tpl.level, tpl.level)
        assert m.group(4) == e.message and "[Consumer clientId=" not in e.message


def test_kafka_python_wording_for_each_happening(both):
    """The lines kafka-python 2.3.2 prints (base.py, consumer.py, subscription_state.py)."""
    _, python = both
    lines = python.log_lines("INFO", source="client-consumer-1")
    msgs = [ln.split(" - ", 3)[3] for ln in lines]
    assert msgs[0] == "Discovered coordinator coordinator-2 for group group-1"
    assert msgs[1] == "(Re-)joining group group-1"
    assert re.fullmatch(r"Received member id consumer-1-[0-9a-f-]{36} for group group-1; will "
                        r"retry join-group", msgs[2])
    assert re.fullmatch(r"Successfully joined group group-1 <Generation 1 \(member_id: "
                        r"consumer-1-[0-9a-f-]{36}, protocol: range\)>", msgs[4])
    assert msgs[5] == "Elected group leader -- performing partition assignments using range"
    assert msgs[6].startswith("Updated partition assignment: [TopicPartition(topic='orders', "
                              "partition=0), ")
    assert msgs[7].startswith("Setting newly assigned partitions {TopicPartition(topic='orders', "
                              "partition=0), ")
    assert msgs[7].endswith(" for group group-1")
    every = "\n".join(python.log_lines("INFO"))
    for expected in [
            "Revoking previously assigned partitions {TopicPartition(topic='orders', partition=0)",
            " - kafka.coordinator - WARNING - Marking the coordinator dead (node coordinator-2) "
            "for group group-1: Heartbeat session expired.",
            " - kafka.coordinator.consumer - WARNING - Auto offset commit failed for group "
            "group-1: CommitFailedError: [Error 25] UnknownMemberIdError",
            " - kafka.coordinator.heartbeat - WARNING - Heartbeat failed for group group-1 "
            "because it is rebalancing",
            " - kafka.coordinator - WARNING - Marking the coordinator dead (node coordinator-2) "
            "for group group-1: [Error 16] NotCoordinatorError.",
            " - kafka.coordinator - WARNING - Marking the coordinator dead (node coordinator-0) "
            "for group group-1: [Error 7] RequestTimedOutError: Request timed out after 30000 "
            "ms.",
            " - kafka.coordinator.heartbeat - WARNING - Consumer poll timeout has expired. This "
            "means the time between subsequent calls to poll() was longer than the configured "
            "max_poll_interval_ms",
            " - kafka.coordinator - INFO - Leaving consumer group group-1 (member consumer-"]:
        assert expected in every, expected


def test_kafka_python_logs_nothing_where_it_has_no_line(both):
    """A successful SyncGroup and a generation reset are events without a line."""
    _, python = both
    synced = [e for e in client_events(python) if e.kind == "synced"]
    resets = [e for e in client_events(python) if e.kind == "generation_reset"]
    assert synced and resets
    assert all(e.message is None and e.template_id is None for e in synced + resets)


def test_the_lines_go_to_kafka_pythons_python_loggers():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(Log4jFormatter())
    logger = logging.getLogger("kafka.coordinator")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        cluster = Cluster(trace_level="INFO")
        cluster.add_consumer("c1", client_style="kafka-python")
        cluster.run_for(10_000)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(logging.NOTSET)
    first = stream.getvalue().splitlines()[0]
    assert first == ("2025-03-03 09:00:00,002 - kafka.coordinator - INFO - Discovered "
                     "coordinator coordinator-2 for group group-1")


def test_python_layout_and_the_log4j_layout_side_by_side():
    assert PYTHON_LAYOUT == "%(asctime)s - %(name)s - %(levelname)s - %(message)s"
    assert format_python(1_234, "WARN", "hi", "kafka.coordinator") == \
        "2025-03-03 09:00:01,234 - kafka.coordinator - WARNING - hi"
    assert format_log4j(1_234, "WARN", "hi", "kafka.coordinator.heartbeat") == \
        "2025-03-03 09:00:01,234 - kafka.coordinator.heartbeat - WARNING - hi"
    # every other logger keeps Kafka's log4j layout, byte for byte
    assert format_log4j(1_234, "WARN", "hi", "kafka.coordinator.group.CoordinatorLoaderImpl") \
        == "[2025-03-03 09:00:01,234] WARN hi (kafka.coordinator.group.CoordinatorLoaderImpl)"
    # and Python's own formatter gives the same line for the same record
    record = logging.LogRecord("kafka.coordinator", logging.WARNING, __file__, 1, "hi", None, None)
    formatter = logging.Formatter(PYTHON_LAYOUT)
    formatter.converter = lambda *_: __import__("time").gmtime(0)
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - kafka.coordinator - WARNING - hi",
                        formatter.format(record))


def test_kafka_python_error_names():
    """kafka-python 2.3.2's exception classes (kafka/errors.py)."""
    assert kafka_python_error(Errors.UNKNOWN_MEMBER_ID) == "[Error 25] UnknownMemberIdError"
    assert kafka_python_error(Errors.NOT_COORDINATOR, "g") == "[Error 16] NotCoordinatorError: g"
    assert [kafka_python_error_name(e) for e in (
        Errors.REBALANCE_IN_PROGRESS, Errors.COORDINATOR_LOAD_IN_PROGRESS,
        Errors.INVALID_SESSION_TIMEOUT, Errors.FENCED_INSTANCE_ID, Errors.UNKNOWN_SERVER_ERROR,
        Errors.NOT_LEADER_OR_FOLLOWER, Errors.KAFKA_STORAGE_ERROR)] == [
        "RebalanceInProgressError", "CoordinatorLoadInProgressError",
        "InvalidSessionTimeoutError", "FencedInstanceIdError", "UnknownError",
        "NotLeaderForPartitionError", "KafkaStorageError"]


def test_a_fatal_join_error_in_kafka_python_words():
    cluster = Cluster(trace_level="INFO")
    c = cluster.add_consumer("tiny", session_timeout_ms=5000, heartbeat_interval_ms=1000,
                             client_style="kafka-python")
    cluster.run_for(5_000)
    assert c.fatal is Errors.INVALID_SESSION_TIMEOUT
    assert cluster.log_lines("ERROR")[-1].endswith(
        " - kafka.coordinator - ERROR - Attempt to join group group-1 failed due to fatal "
        "error: InvalidSessionTimeoutError")


def test_client_style_is_checked_and_kept_across_a_restart():
    with pytest.raises(ValueError, match="client_style must be one of java, kafka-python, got "
                                         "'kafka_python'"):
        ConsumerConfig("g", client_style="kafka_python")
    cluster = Cluster(trace_level="INFO")
    cluster.add_consumer("c1", **KP)
    cluster.run_for(10_000)
    restarted = cluster.restart_consumer("c1")
    cluster.run_for(10_000)
    assert restarted.config.client_style == "kafka-python"
    assert all(" - kafka." in ln for ln in cluster.log_lines(source="client-c1"))


# -- each error, in both wordings: same events, kafka-python's words --------------------------

def _respond(style: str, api: str, error: Errors) -> Cluster:
    from coordinator_kit.group.api import HeartbeatResponse, JoinGroupResponse, SyncGroupResponse

    cluster = Cluster(trace_level="INFO", consumer_defaults={"client_style": style})
    c = cluster.add_consumer("c1", group_instance_id="inst-1")
    cluster.run_for(10_000)
    start = len(cluster.trace)
    sent = c.generation
    if api == "Heartbeat":
        c._handle_heartbeat_response(HeartbeatResponse(error), None, sent)
    elif api == "JoinGroup":
        c._transition(c.state.__class__.PREPARING_REBALANCE)
        c._on_join(JoinGroupResponse(error, member_id=sent.member_id), None, sent)
    else:
        c._on_sync(SyncGroupResponse(error), None, sent)
    cluster.new_events = [e for e in cluster.trace.events[start:] if e.source == "client-c1"]
    return cluster


@pytest.mark.parametrize("api, error, line", [
    ("Heartbeat", Errors.ILLEGAL_GENERATION,
     "kafka.coordinator.heartbeat - WARNING - Heartbeat failed for group group-1: generation id "
     "is not  current."),
    ("Heartbeat", Errors.UNKNOWN_MEMBER_ID,
     "kafka.coordinator.heartbeat - WARNING - Heartbeat: local member_id was not recognized; "
     "this consumer needs to re-join"),
    ("Heartbeat", Errors.FENCED_INSTANCE_ID,
     "kafka.coordinator.heartbeat - ERROR - Heartbeat failed for group group-1 due to fenced id "
     "error: inst-1"),
    ("Heartbeat", Errors.NOT_COORDINATOR,
     "kafka.coordinator.heartbeat - WARNING - Heartbeat failed for group group-1: coordinator "
     "(node coordinator-2) is either not started or not valid"),
    ("JoinGroup", Errors.COORDINATOR_LOAD_IN_PROGRESS,
     "kafka.coordinator - INFO - Attempt to join group group-1 rejected since coordinator "
     "coordinator-2 is loading the group."),
    ("JoinGroup", Errors.REBALANCE_IN_PROGRESS,
     "kafka.coordinator - INFO - Attempt to join group group-1 failed due to "
     "RebalanceInProgressError, which could indicate a replication timeout on the broker. Will "
     "retry."),
    ("JoinGroup", Errors.UNKNOWN_MEMBER_ID,
     "kafka.coordinator - INFO - Attempt to join group group-1 failed due to unknown member id"),
    ("JoinGroup", Errors.NOT_COORDINATOR,
     "kafka.coordinator - INFO - Attempt to join group group-1 failed due to obsolete coordinator "
     "information: NotCoordinatorError"),
    ("JoinGroup", Errors.GROUP_MAX_SIZE_REACHED,
     "kafka.coordinator - ERROR - Attempt to join group group-1 failed due to fatal error: "
     "GroupMaxSizeReachedError"),
    ("JoinGroup", Errors.FENCED_INSTANCE_ID,
     "kafka.coordinator - ERROR - Attempt to join group group-1 failed due to fatal error: "
     "FencedInstanceIdError"),
    ("JoinGroup", Errors.ILLEGAL_GENERATION,
     "kafka.coordinator - ERROR - Unexpected error in join group response: [Error 22] "
     "IllegalGenerationError"),
    ("SyncGroup", Errors.REBALANCE_IN_PROGRESS,
     "kafka.coordinator - INFO - SyncGroup for group group-1 failed due to coordinator "
     "rebalance"),
    ("SyncGroup", Errors.ILLEGAL_GENERATION,
     "kafka.coordinator - INFO - SyncGroup for group group-1 failed due to [Error 22] "
     "IllegalGenerationError"),
    ("SyncGroup", Errors.COORDINATOR_NOT_AVAILABLE,
     "kafka.coordinator - INFO - SyncGroup for group group-1 failed due to [Error 15] "
     "CoordinatorNotAvailableError"),
    ("SyncGroup", Errors.FENCED_INSTANCE_ID,
     "kafka.coordinator - ERROR - SyncGroup for group group-1 failed due to fenced id error: "
     "inst-1"),
])
def test_each_error_in_both_wordings(api, error, line):
    java, python = _respond("java", api, error), _respond("kafka-python", api, error)
    assert [e.kind for e in java.new_events] == [e.kind for e in python.new_events]
    written = [e.line() for e in python.new_events if e.message is not None]
    assert any(w.endswith(" - " + line) for w in written), written
