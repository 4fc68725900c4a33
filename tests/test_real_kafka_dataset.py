"""datasets/real-kafka: genuine logs of Kafka 4.0.2 and three real consumers, and the kit's
parser on them (no Kafka needed: the recording is committed).

The coverage test is the yardstick for `coordinator_kit.logs`: of the coordinator lines
(`logs.coverage.coordinator_line`: the broker's GroupMetadataManager, GroupCoordinatorService
and CoordinatorRuntime, the Java consumer's ConsumerCoordinator, kafka-python's
`kafka.coordinator`, librdkafka's cgrp contexts) in logs Kafka and its clients really wrote,
the parser must recognise at least 99 %.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coordinator_kit.logs.coverage import RDKAFKA_GROUP_FACILITIES, coordinator_line, coverage
from coordinator_kit.logs.parse import classify_line, parse_paths
from coordinator_kit.realkafka import record
from coordinator_kit.realkafka.compare import differences, normalise
from coordinator_kit.realkafka.scenarios import SCENARIOS, Step, Trace

DATASET = Path(__file__).resolve().parents[1] / "datasets" / "real-kafka"
LOGS = [DATASET / "kafka" / "server.log", *sorted((DATASET / "kafka" / "clients").rglob("*.log"))]


def test_the_parser_recognises_99_percent_of_the_coordinator_lines_kafka_and_its_clients_wrote():
    c = coverage(LOGS)
    c.counts.check()
    assert c.counts.read == c.counts.recognised + c.counts.other + c.counts.quarantined
    assert c.coordinator > 1000, c.summary()  # broker, Java, kafka-python and librdkafka lines
    assert c.ratio >= 0.99, (c.summary(), c.unrecognised.most_common(10))
    # every log file has coordinator lines: each client library's wording is measured
    assert all(coord > 0 for coord, _ in c.by_file.values()), c.by_file


def test_each_source_is_covered_on_its_own():
    """Per source, so one library's 100 % cannot hide another's gap."""
    clients = DATASET / "kafka" / "clients"
    for name, paths in (("broker", [DATASET / "kafka" / "server.log"]),
                        ("java", sorted(clients.rglob("java-*.log"))),
                        ("kafka-python", sorted(clients.rglob("kafka-python-*.log"))),
                        ("librdkafka", sorted(clients.rglob("confluent-kafka-*.log")))):
        c = coverage(paths)
        assert c.coordinator > 50 and c.ratio >= 0.99, (name, c.summary(),
                                                         c.unrecognised.most_common(5))


def test_the_broker_log_has_no_quarantined_line():
    """Kafka's `KafkaConfig values:` block (AbstractConfig.logAll: the logger comes after the
    last line) is a record with its continuation, and GroupCoordinatorService's start lines
    are known wordings."""
    r = parse_paths([DATASET / "kafka" / "server.log"])
    assert r.counts.quarantined == 0, r.quarantine[:3]
    assert "KafkaConfig values:" in (DATASET / "kafka" / "server.log").read_text()
    assert classify_line("[2026-11-26 00:31:29,932] INFO KafkaConfig values: ") == ("other", None)
    kinds = [classify_line(line)[0] for line in (
        "[2026-11-26 00:31:36,903] INFO [GroupCoordinator id=1] Starting up. "
        "(org.apache.kafka.coordinator.group.GroupCoordinatorService)",
        "[2026-11-26 00:31:36,903] INFO [GroupCoordinator id=1] Startup complete. "
        "(org.apache.kafka.coordinator.group.GroupCoordinatorService)")]
    assert kinds == ["other", "other"]


def test_what_a_coordinator_line_is():
    assert coordinator_line("org.apache.kafka.coordinator.group.GroupMetadataManager", "x")
    assert coordinator_line("org.apache.kafka.coordinator.common.runtime.CoordinatorRuntime", "")
    assert coordinator_line("org.apache.kafka.clients.consumer.internals.ConsumerCoordinator", "")
    assert coordinator_line("org.apache.kafka.clients.consumer.internals.AbstractCoordinator"
                            "$HeartbeatThread", "")
    assert coordinator_line("kafka.coordinator", "") and coordinator_line(
        "kafka.coordinator.consumer", "")
    assert coordinator_line("rdkafka.CGRPSTATE", "")
    assert coordinator_line("confluent_kafka", "HEARTBEAT [a#consumer-1] [thrd:main]: x")
    # not the transaction coordinator, not a client's fetcher, not librdkafka's bookkeeping
    assert not coordinator_line("kafka.coordinator.transaction.TransactionCoordinator", "")
    assert not coordinator_line("org.apache.kafka.clients.consumer.internals.SubscriptionState",
                                "")
    assert not coordinator_line("kafka.consumer.fetcher", "")
    assert not coordinator_line("confluent_kafka", "ASSIGNMENT [a#consumer-1] [thrd:main]: x")
    assert not coordinator_line("rdkafka.DUMP_ALL", "")
    assert not coordinator_line(None, "")
    assert {"CGRPSTATE", "HEARTBEAT", "JOINGROUP", "SYNCGROUP"} <= RDKAFKA_GROUP_FACILITIES


def test_librdkafka_lines_about_one_broker_connection_are_read():
    """librdkafka 2.x puts `<host:port>/<id>: ` or `GroupCoordinator/<id>: ` after the thread
    (rd_rkb_dbg); the parser reads the message behind it."""
    kind, row = classify_line(
        "2026-11-26 00:31:37,712 - confluent_kafka - DEBUG - HEARTBEAT [a#consumer-1] "
        "[thrd:main]: GroupCoordinator/1: Heartbeat for group \"g-1\" generation id 2")
    assert kind == "event" and row["event"] == "heartbeat_sent"
    assert (row["group"], row["generation"]) == ("g-1", 2)
    kind, row = classify_line(
        "2026-11-26 00:31:37,712 - confluent_kafka - DEBUG - CGRPCOORD [a#consumer-1] "
        "[thrd:main]: 127.0.0.1:47471/1: Group \"g-1\" coordinator is 127.0.0.1:47471 id 1")
    assert kind == "event" and row["event"] == "coordinator_discovered"


def test_the_dataset_is_documented_and_complete():
    manifest = json.loads((DATASET / "manifest.json").read_text())
    readme = (DATASET / "README.md").read_text()
    assert "kafka record" in readme and manifest["versions"]["kafka"] == "4.0.2"
    on_disk = {str(p.relative_to(DATASET)) for p in DATASET.rglob("*.log")}
    assert on_disk == set(manifest["files"])
    for rel, f in manifest["files"].items():
        assert f"`{rel}`" in readme
        assert (DATASET / rel).stat().st_size == f["bytes"]
        assert f["lines kept"] <= f["lines recorded"]
    total = sum(p.stat().st_size for p in DATASET.rglob("*") if p.is_file())
    assert total < 1_200_000, f"datasets/real-kafka holds {total} bytes"  # 11 scenarios x 3 clients
    assert set(manifest["scenarios"]) <= set(SCENARIOS)
    top = (DATASET.parent / "README.md").read_text()
    assert "`real-kafka/`" in top and "kafka record" in top


def test_every_recorded_run_has_both_traces_and_they_agree_on_what_clients_see():
    traces = record.load_traces(DATASET)
    manifest = json.loads((DATASET / "manifest.json").read_text())
    assert set(traces) == {(s, c) for s in manifest["scenarios"] for c in manifest["clients"]
                           if f"{s} {c}" not in manifest["skipped"]}
    for (scenario, client), (kafka, kit) in traces.items():
        assert (kafka.target, kit.target) == ("kafka", "kit")
        assert not kafka.error and not kit.error, (scenario, client, kafka.error, kit.error)
        rows = differences(kafka, kit)
        # generations, listener counts and durations are client timing (docs/real-kafka.md);
        # what the scenario's steps reach, and DescribeGroups, must be the same
        for r in rows:
            if r.what.endswith((": reached", ": owned per client", ": DescribeGroups")) or \
                    r.what in ("member id shape", "committed offsets",
                               "restart resumes at committed"):
                assert r.same, (scenario, client, r)


def test_traces_round_trip_through_json():
    t = Trace("s", "kafka-python", "kafka",
              [Step("a joins", True, 1.5, {"a": [("t", 0), ("t", 1)]},
                    {"state": "Stable", "protocol_type": "consumer", "protocol": "range",
                     "members": [("a", 2)], "error": 0})],
              generations={"a": [1]}, member_ids={"a": ["<client.id>-<uuid>"]},
              assigned_events={"a": 1})
    back = record.trace_from_json(json.loads(json.dumps(record.trace_to_json(t))))
    assert back == t
    assert normalise(back) == normalise(t)


def test_trimming_keeps_the_coordinator_and_drops_partition_bookkeeping():
    gmm = ("[2026-11-26 00:31:40,001] INFO [GroupCoordinator id=1 topic=__consumer_offsets "
           "partition=0] Stabilized group g generation 1 with 1 member(s). "
           "(org.apache.kafka.coordinator.group.GroupMetadataManager)\n")
    part = ("[2026-11-26 00:31:40,002] INFO [Partition t-0 broker=1] Log loaded for partition "
            "t-0 with initial high watermark 0 (kafka.cluster.Partition)\n")
    warn = part.replace(" INFO ", " WARN ")
    config = ("[2026-11-26 00:31:29,932] INFO KafkaConfig values: \n\ta = 1\n\tb = 2\n"
              " (kafka.server.KafkaConfig)\n")
    again = config.replace("00:31:29,932", "00:31:36,555")
    text, read, kept = record.trim(config + gmm + part + warn + again, record.keep_broker_line)
    assert text == config + gmm + warn
    assert (read, kept) == (11, 6)
    hb = ("2026-11-26 00:31:37,712 - confluent_kafka - DEBUG - HEARTBEAT [a#consumer-1] "
          "[thrd:main]: GroupCoordinator/1: Heartbeat for group \"g\" generation id 2\n")
    dump = ("2026-11-26 00:31:37,712 - confluent_kafka - DEBUG - DUMP_ALL [a#consumer-1] "
            "[thrd:main]: List with 0 partition(s):\n")
    consumer_config = config.replace("KafkaConfig", "ConsumerConfig").replace(
        "kafka.server.ConsumerConfig", "org.apache.kafka.common.config.AbstractConfig")
    text, _, _ = record.trim(hb + dump + consumer_config, record.keep_client_line)
    assert text == hb


def test_record_refuses_an_unknown_scenario(tmp_path):
    with pytest.raises(ValueError, match="unknown scenario.*known: one-joins"):
        record.record(tmp_path, ["no-such-scenario"])


def test_write_dataset_from_a_raw_recording_is_deterministic(tmp_path):
    """The dataset's structure depends on the raw recording only: two writes give the same
    bytes, and the files are named by scenario, client and consumer."""
    raw = tmp_path / "raw"
    (raw / "kafka" / "clients").mkdir(parents=True)
    (raw / "kit").mkdir()
    (raw / "kafka" / "server.log").write_text(
        "[2026-11-26 00:31:40,001] INFO [GroupCoordinator id=1] Starting up. "
        "(org.apache.kafka.coordinator.group.GroupCoordinatorService)\n")
    (raw / "kit" / "server.log").write_text("")
    (raw / "kafka" / "clients" / "kafka-one-joins-java-a.log").write_text(
        "[2026-11-26 00:31:41,001] INFO [Consumer clientId=a, groupId=g] (Re-)joining group "
        "(org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)\n")
    t = record.trace_to_json(Trace("one-joins", "java", "kafka"))
    (raw / "traces.json").write_text(json.dumps({
        "versions": {"kafka": "4.0.2"}, "scenarios": ["one-joins"], "clients": ["java"],
        "recorded": "2026-11-26", "traces": {"one-joins java": {"kafka": t, "kit": t}}}))
    first = record.write_dataset(raw, tmp_path / "a")
    second = record.write_dataset(raw, tmp_path / "b")
    assert first == second
    names = sorted(str(p.relative_to(tmp_path / "a")) for p in (tmp_path / "a").rglob("*")
                   if p.is_file())
    assert names == ["README.md", "kafka/clients/one-joins/java-a.log", "kafka/server.log",
                     "kit/server.log", "manifest.json", "traces/one-joins.java.json"]
    for n in names:
        assert (tmp_path / "a" / n).read_bytes() == (tmp_path / "b" / n).read_bytes()


def test_the_record_command_rewrites_a_dataset_from_a_raw_recording(tmp_path, capsys):
    """`python -m coordinator_kit kafka record --from RAW --out DIR` (no Kafka run); a raw
    folder without its traces.json is refused by name."""
    from coordinator_kit.__main__ import main

    raw = tmp_path / "raw"
    (raw / "kafka" / "clients").mkdir(parents=True)
    (raw / "kit").mkdir()
    (raw / "kafka" / "server.log").write_text("")
    (raw / "kit" / "server.log").write_text("")
    (raw / "traces.json").write_text(json.dumps({
        "versions": {"kafka": "4.0.2"}, "scenarios": [], "clients": [], "recorded": "x",
        "traces": {}}))
    assert main(["kafka", "record", "--from", str(raw), "--out", str(tmp_path / "out")]) == 0
    assert "wrote" in capsys.readouterr().out
    assert (tmp_path / "out" / "README.md").exists()
    assert main(["kafka", "record", "--from", str(tmp_path / "none"), "--out",
                 str(tmp_path / "o2")]) == 2
    assert "traces.json" in capsys.readouterr().err
