"""Unmodified Kafka clients against the live server (`coordinator_kit.live`).

kafka-python and confluent-kafka (librdkafka) consumers run as child processes with time limits
against a server this module starts on 127.0.0.1 and stops by itself. Each test checks the
Kafka behaviour a real broker shows the same clients: the MEMBER_ID_REQUIRED join, range
assignment by the client leader, rebalances on join, on LeaveGroup and on session expiry
(GroupMetadataManager's session timeout), committed offsets read back on restart, and
FindCoordinator again after NOT_COORDINATOR when the group's `__consumer_offsets` partition
moves. The server's own log is read back by the kit's parser.
"""

from __future__ import annotations

import io
import os
import time
from pathlib import Path

import pytest

from coordinator_kit.live.processes import ConsumerProcess
from coordinator_kit.live.server import LiveServer
from coordinator_kit.logs.parse import ParseCounts, parse_lines

ORDERS = [("orders", p) for p in range(6)]
SESSION_MS = 6000  # group.min.session.timeout.ms: the shortest a broker accepts


# group.initial.rebalance.delay.ms: Kafka's 3000 makes every first join wait 3 s; 0 lets the
# first generation complete before a kafka-python 3.0.12 leader has the topic's metadata, and
# its immediate rejoin then sometimes never finishes on the client side (it receives the
# SyncGroup answer and spins); half a second avoids both.
@pytest.fixture(scope="module")
def server():
    log = io.StringIO()
    s = LiveServer(port=0, group_config={"group.initial.rebalance.delay.ms": 500}, log=log,
                   produce_rate_per_s=5)
    s.start()
    s.log_text = log  # type: ignore[attr-defined]
    yield s
    s.stop()
    Path(os.environ.get("LIVE_TEST_LOG", "/tmp/live-test.log")).write_text(log.getvalue())


@pytest.fixture
def consumers():
    started: list[ConsumerProcess] = []
    yield started
    for c in started:
        c.close()


def _start(server, consumers, client_id, group, client="kafka-python", **kw):
    c = ConsumerProcess(server.bootstrap, client_id, group=group, client=client,
                        session_timeout_ms=SESSION_MS, heartbeat_interval_ms=500,
                        seconds=kw.pop("seconds", 60),
                        log_path=Path(os.environ.get("LIVE_TEST_LOGS", "/tmp")) /
                        f"live-{client_id}.log", **kw)
    consumers.append(c)
    return c


def _group(server, group):
    return server.call(lambda: server.cluster.group(group))


def _wait_group(server, group, condition, timeout_s=30, what="the group state"):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        g = _group(server, group)
        if condition(g):
            return g
        time.sleep(0.1)
    raise TimeoutError(f"{what} not reached in {timeout_s} s: {_group(server, group)}")


def _owns(*expected_counts):
    return lambda c: len(c.assignment) in expected_counts


def test_one_consumer_gets_every_partition_and_reads(server, consumers):
    a = _start(server, consumers, "solo-a", "g-solo")
    a.wait_until(lambda c: c.assignment == ORDERS, 30, "all six partitions assigned")
    a.wait_until(lambda c: c.records_read() > 0, 20, "records read")
    g = _group(server, "g-solo")
    assert g["state"] == "Stable" and len(g["members"]) == 1
    assert g["members"][0].startswith("solo-a-")  # Kafka's member id: client id + "-" + uuid


def test_second_member_rebalances_to_disjoint_cover_and_close_sends_leave(server, consumers):
    a = _start(server, consumers, "pair-a", "g-pair")
    a.wait_until(lambda c: c.assignment == ORDERS, 30, "a owns all")
    b = _start(server, consumers, "pair-b", "g-pair")
    a.wait_until(_owns(3), 30, "a down to three partitions")
    b.wait_until(_owns(3), 30, "b up to three partitions")
    assert set(a.assignment).isdisjoint(b.assignment)
    assert sorted(a.assignment + b.assignment) == ORDERS
    # a clean close sends LeaveGroup: the group rebalances at once, not after the session
    b.stop()
    a.wait_until(lambda c: c.assignment == ORDERS, 15, "a owns all again after b left")
    text = server.log_text.getvalue()
    assert "has left group through explicit `LeaveGroup` request" in text


def test_mixed_kafka_python_and_librdkafka_group(server, consumers):
    a = _start(server, consumers, "mix-kp", "g-mix")
    a.wait_until(lambda c: c.assignment == ORDERS, 30, "kafka-python owns all")
    b = _start(server, consumers, "mix-rd", "g-mix", client="confluent-kafka")
    b.wait_until(_owns(3), 40, "librdkafka member assigned three")
    a.wait_until(_owns(3), 30, "kafka-python member down to three")
    assert sorted(a.assignment + b.assignment) == ORDERS
    b.wait_until(lambda c: c.records_read() > 0, 20, "librdkafka reads records")


def test_sigkilled_member_expires_after_session_timeout(server, consumers):
    a = _start(server, consumers, "crash-a", "g-crash")
    b = _start(server, consumers, "crash-b", "g-crash")
    _wait_group(server, "g-crash", lambda g: g["state"] == "Stable" and len(g["members"]) == 2,
                what="two members stable")
    a.wait_until(_owns(3), 30, "a owns three")
    b.wait_until(_owns(3), 30, "b owns three")
    b.crash()
    killed = time.monotonic()
    a.wait_until(lambda c: c.assignment == ORDERS, 30, "survivor takes every partition")
    took = time.monotonic() - killed
    # the coordinator waits for the session timeout (6 s) before it expels the dead member
    assert took >= SESSION_MS / 1000 - 1.5, took
    text = server.log_text.getvalue()
    assert any("Member crash-b-" in l and "has failed" in l for l in text.splitlines())


def test_restarted_consumer_resumes_at_committed_offset(server, consumers):
    a = _start(server, consumers, "resume-a", "g-resume")
    a.wait_until(lambda c: c.records_read() >= 30, 30, "thirty records read")
    a.stop()
    committed = server.call(lambda: server.cluster.committed_offsets("g-resume"))
    assert sorted(committed) == ORDERS
    a2 = _start(server, consumers, "resume-a2", "g-resume")
    a2.wait_until(lambda c: len(c.first_offsets()) == 6, 30, "reads every partition again")
    first = a2.first_offsets()
    for tp in ORDERS:
        assert first[tp] == committed[tp], (tp, first[tp], committed[tp])


def test_coordinator_move_sends_clients_to_the_new_leader(server, consumers):
    a = _start(server, consumers, "move-a", "g-move")
    b = _start(server, consumers, "move-b", "g-move", client="confluent-kafka")
    g = _wait_group(server, "g-move",
                    lambda g: g["state"] == "Stable" and len(g["members"]) == 2,
                    what="two members stable")
    old = server.call(lambda: server.cluster.coordinator_for("g-move"))
    server.call(lambda: server.cluster.move_coordinator("g-move"))
    new = server.call(lambda: server.cluster.coordinator_for("g-move"))
    assert new != old

    def heartbeats_at_new():
        rows = [c for c in server.call(lambda: list(server.connections))
                if c.broker_id == new and c.client_id in ("move-a", "move-b")
                and c.last_api in ("Heartbeat", "OffsetCommit", "JoinGroup", "SyncGroup")]
        return {c.client_id for c in rows} == {"move-a", "move-b"}
    deadline = time.monotonic() + 30
    while not heartbeats_at_new():
        assert time.monotonic() < deadline, "clients did not move to the new coordinator"
        time.sleep(0.1)
    g2 = _wait_group(server, "g-move", lambda g: g["state"] == "Stable"
                     and len(g["members"]) == 2, what="group stable at the new coordinator")
    assert sorted(g2["members"]) == sorted(g["members"])  # the same members, loaded from the log


def test_server_log_is_read_by_the_kits_parser(server):
    lines = server.log_text.getvalue().splitlines()
    coordinator = [l for l in lines if "(org.apache.kafka.coordinator" in l]
    assert len(coordinator) > 20
    counts = ParseCounts()
    rows = list(parse_lines(lines, "live.log", counts))
    counts.check()
    quarantined = [r["raw"] for kind, r in rows if kind == "quarantine"]
    assert quarantined == []
    events = {r["raw"] for kind, r in rows if kind == "event"}
    assert all(l in events for l in coordinator), [l for l in coordinator if l not in events][:3]



def test_producers_append_and_a_new_topic_is_auto_created(server):
    """kafka-python's producer (idempotent by default: InitProducerId first) and librdkafka's
    write to a topic Metadata creates on first use (Kafka answers LEADER_NOT_AVAILABLE, then
    the topic: AutoTopicCreationManager); a consumer reads every record back in order."""
    from confluent_kafka import Producer
    from kafka import KafkaConsumer, KafkaProducer

    p = KafkaProducer(bootstrap_servers=server.bootstrap, client_id="kp-producer")
    for i in range(10):
        p.send("fresh", f"kp-{i}".encode())
    p.flush(10)
    p.close(5)
    c = Producer({"bootstrap.servers": server.bootstrap, "client.id": "rd-producer"})
    for i in range(5):
        c.produce("fresh", f"rd-{i}".encode())
    assert c.flush(10) == 0
    assert server.call(lambda: [log.high_watermark for log in server.data.topics["fresh"]]) \
        == [15]
    consumer = KafkaConsumer("fresh", bootstrap_servers=server.bootstrap, group_id="g-fresh",
                             auto_offset_reset="earliest", consumer_timeout_ms=3000)
    values = [m.value.decode() for m in consumer]
    consumer.close()
    assert values == [f"kp-{i}" for i in range(10)] + [f"rd-{i}" for i in range(5)]


def test_admin_client_lists_describes_and_deletes_groups(server, consumers):
    """kafka-python's KafkaAdminClient, as `kafka-consumer-groups` uses the same APIs:
    ListGroups on every broker (GroupCoordinatorService.listGroups), DescribeGroups and
    OffsetFetch at the coordinator, DeleteGroups refused for a live group (NON_EMPTY_GROUP),
    OffsetDelete refused for a topic the group consumes (GROUP_SUBSCRIBED_TO_TOPIC)."""
    from kafka import TopicPartition as KafkaTopicPartition
    from kafka.admin import KafkaAdminClient

    a = _start(server, consumers, "admin-a", "g-admin")
    a.wait_until(lambda c: c.assignment == ORDERS, 30, "a owns all")
    _wait_group(server, "g-admin", lambda g: bool(
        server.call(lambda: server.cluster.committed_offsets("g-admin"))), what="a commit")
    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap, client_id="admin")
    try:
        listed = {g["group_id"]: g for g in admin.list_groups()}
        assert listed["g-admin"]["group_state"] == "Stable"
        assert listed["g-admin"]["protocol_type"] == "consumer"
        described = admin.describe_groups(["g-admin"])["g-admin"]
        assert described["group_state"] == "Stable" and described["protocol_data"] == "range"
        (member,) = described["members"]
        assert member["client_id"] == "admin-a"
        assert member["member_assignment"]["assigned_partitions"] == [
            {"topic": "orders", "partitions": [0, 1, 2, 3, 4, 5]}]
        offsets = admin.list_group_offsets("g-admin")["g-admin"]
        assert sorted((tp.topic, tp.partition) for tp in offsets) == ORDERS
        assert admin.delete_groups(["g-admin"]) == {"g-admin": "NonEmptyGroupError"}
        refused = admin.delete_group_offsets("g-admin", [KafkaTopicPartition("orders", 0)])
        assert refused[KafkaTopicPartition("orders", 0)].__name__ == "GroupSubscribedToTopicError"
        a.stop()
        _wait_group(server, "g-admin", lambda g: g["state"] == "Empty", what="empty")
        deleted = admin.delete_group_offsets("g-admin", [KafkaTopicPartition("orders", 0)])
        assert deleted[KafkaTopicPartition("orders", 0)].__name__ == "NoError"
        assert admin.delete_groups(["g-admin"]) == {"g-admin": "OK"}
        assert "g-admin" not in {g["group_id"] for g in admin.list_groups()}
    finally:
        admin.close()


@pytest.mark.spark
def test_spark_reads_the_live_log_as_the_python_parser_does(server, spark, tmp_path):
    """The Spark lesson's pipeline (`spark.load.load_logs`) reads a live session's broker log
    with the same events as the single-process parser."""
    from coordinator_kit.spark.load import load_logs

    log = tmp_path / "live-broker.log"
    log.write_text(server.log_text.getvalue())
    rows = list(parse_lines(log.read_text().splitlines(), str(log)))
    python_events = sorted(r["line"] for kind, r in rows if kind == "event")
    spark_events = sorted(r["line"] for r in load_logs(str(log), spark).collect())
    assert spark_events == python_events and len(spark_events) > 20


def test_librdkafka_with_the_consumer_protocol_kip848(server, consumers):
    """librdkafka with `group.protocol=consumer` speaks ConsumerGroupHeartbeat (API 68) to the
    kit's consumer groups: the coordinator assigns (uniform by default), a second member gets
    partitions only after the first revokes them, and the first keeps the others the whole
    time, with no JoinGroup/SyncGroup barrier (GroupMetadataManager.consumerGroupHeartbeat,
    CurrentAssignmentBuilder)."""
    a = _start(server, consumers, "kip848-a", "g-kip848", client="confluent-kafka",
               group_protocol="consumer")
    a.wait_until(lambda c: c.assignment == ORDERS, 30, "a owns all six")
    b = _start(server, consumers, "kip848-b", "g-kip848", client="confluent-kafka",
               group_protocol="consumer")
    b.wait_until(_owns(3), 30, "b gets three")
    a.wait_until(_owns(3), 30, "a down to three")
    assert sorted(a.assignment + b.assignment) == ORDERS
    # incremental: a was told only what it lost, and never gave up the partitions it kept
    revoked = [tuple(p) for e in a.events_of("revoked") for p in e["partitions"]]
    assert set(revoked).isdisjoint(a.assignment) and len(revoked) == 3
    assert not b.events_of("revoked")
    text = server.log_text.getvalue()
    assert "[GroupId g-kip848] Member" in text
    assert "joins the consumer group using the consumer protocol" in text
    assert server.call(lambda: server.cluster.committed_offsets("g-kip848")) != {}


def test_librdkafka_admin_describes_a_consumer_group_with_consumer_group_describe(
        server, consumers):
    """confluent-kafka's `AdminClient.describe_consumer_groups` (librdkafka 2.16) sends
    ConsumerGroupDescribe (API 69) first; for a group that answers GROUP_ID_NOT_FOUND (a classic
    group, a missing one) it falls back to DescribeGroups. Kafka 4.0.2 gives the same answers:
    the consumer group with its type and assignor, the classic one through DescribeGroups, a
    missing one Dead (`GroupMetadataManager.consumerGroupDescribe` / `describeGroups`)."""
    from confluent_kafka.admin import AdminClient

    a = _start(server, consumers, "cgd-a", "g-cgd", client="confluent-kafka",
               group_protocol="consumer")
    k = _start(server, consumers, "cgd-k", "g-cgd-classic")
    a.wait_until(lambda c: c.assignment == ORDERS, 30, "a owns all six")
    k.wait_until(lambda c: c.assignment == ORDERS, 30, "k owns all six")
    seen: list[tuple[str, int, tuple[str, ...]]] = []
    apis = server.apis

    def spy(name, field):
        handler = getattr(apis, name)

        async def recorded(conn, version, request):
            seen.append((name.removeprefix("on_"), version, tuple(getattr(request, field))))
            return await handler(conn, version, request)
        return recorded
    apis.on_ConsumerGroupDescribe = spy("on_ConsumerGroupDescribe", "group_ids")
    apis.on_DescribeGroups = spy("on_DescribeGroups", "groups")
    admin = AdminClient({"bootstrap.servers": server.bootstrap})
    try:
        described = {}
        for group, future in admin.describe_consumer_groups(
                ["g-cgd", "g-cgd-classic", "g-missing"], request_timeout=20).items():
            described[group] = future.result(timeout=30)
    finally:
        del apis.on_ConsumerGroupDescribe, apis.on_DescribeGroups
    cg, classic, missing = (described[g] for g in ("g-cgd", "g-cgd-classic", "g-missing"))
    assert (cg.type.name, cg.state.name, cg.partition_assignor) == ("CONSUMER", "STABLE",
                                                                    "uniform")
    (member,) = cg.members
    assert member.client_id == "cgd-a"
    assert sorted((tp.topic, tp.partition) for tp in member.assignment.topic_partitions) \
        == ORDERS
    assert sorted((tp.topic, tp.partition)
                  for tp in member.target_assignment.topic_partitions) == ORDERS
    assert (classic.type.name, classic.state.name, classic.partition_assignor) == (
        "CLASSIC", "STABLE", "range")
    assert (missing.type.name, missing.state.name, missing.members) == ("CLASSIC", "DEAD", [])
    # librdkafka 2.16: ConsumerGroupDescribe v0 for each group; DescribeGroups v5 only for
    # those answered GROUP_ID_NOT_FOUND
    assert sorted(seen) == sorted([
        ("ConsumerGroupDescribe", 0, ("g-cgd",)),
        ("ConsumerGroupDescribe", 0, ("g-cgd-classic",)), ("DescribeGroups", 5, ("g-cgd-classic",)),
        ("ConsumerGroupDescribe", 0, ("g-missing",)), ("DescribeGroups", 5, ("g-missing",))])


def test_admin_client_creates_topics_and_describes_the_cluster(server):
    """CreateTopics with Kafka's per-topic errors (TOPIC_ALREADY_EXISTS, INVALID_TOPIC_EXCEPTION,
    INVALID_REPLICATION_FACTOR: ReplicationControlManager.createTopic) and DescribeCluster
    (every broker's real listener); a created topic is a topic of the kit's cluster too."""
    from kafka.admin import KafkaAdminClient, NewTopic
    from kafka.errors import (InvalidReplicationFactorError, InvalidTopicError,
                              TopicAlreadyExistsError)

    admin = KafkaAdminClient(bootstrap_servers=server.bootstrap, client_id="admin-topics")
    try:
        cluster = admin.describe_cluster()
        assert [(b["broker_id"], b["port"]) for b in cluster["brokers"]] == \
            [(b, server.port_of(b)) for b in range(3)]
        created = admin.create_topics([NewTopic("audit", 3, 1)])
        assert [(t["name"], t["error_code"], t["num_partitions"]) for t in created["topics"]] \
            == [("audit", 0, 3)]
        for topic, error in ((NewTopic("audit", 3, 1), TopicAlreadyExistsError),
                             (NewTopic("bad name", 1, 1), InvalidTopicError),
                             (NewTopic("wide", 1, 5), InvalidReplicationFactorError)):
            with pytest.raises(error):
                admin.create_topics([topic])
    finally:
        admin.close()
    assert server.call(lambda: server.cluster.topics.get("audit")) == 3
    assert server.call(lambda: "wide" in server.data.topics) is False


def test_librdkafka_classic_and_consumer_protocol_members_share_a_group(server, consumers):
    """A librdkafka classic consumer and a librdkafka `group.protocol=consumer` consumer in one
    group over the wire: the second one's ConsumerGroupHeartbeat converts the classic group
    (GroupMetadataManager.convertToConsumerGroup); the classic member is told
    REBALANCE_IN_PROGRESS, rejoins with JoinGroup and gets the server's assignment in SyncGroup
    (classicGroupJoinToConsumerGroup, classicGroupSyncToConsumerGroup); when the
    consumer-protocol member leaves, the group turns classic again and rebalances
    (convertToClassicGroup)."""
    a = _start(server, consumers, "migrate-classic", "g-migrate", client="confluent-kafka")
    a.wait_until(lambda c: c.assignment == ORDERS, 30, "the classic member owns all six")
    b = _start(server, consumers, "migrate-kip848", "g-migrate", client="confluent-kafka",
               group_protocol="consumer")
    b.wait_until(_owns(3), 40, "the consumer-protocol member gets three")
    a.wait_until(_owns(3), 40, "the classic member down to three")
    assert sorted(a.assignment + b.assignment) == ORDERS
    g = _group(server, "g-migrate")
    assert "group_epoch" in g and len(g["members"]) == 2  # a consumer group now
    text = server.log_text.getvalue()
    assert "[GroupId g-migrate] Member" in text
    assert "joins the consumer group using the classic protocol." in text
    b.stop()
    a.wait_until(lambda c: c.assignment == ORDERS, 40, "the classic member owns all again")
    g = _group(server, "g-migrate")
    assert "group_epoch" not in g and g["state"] == "Stable"  # a classic group again
    assert "(reason: Downgrade group g-migrate from consumer to classic.)" in \
        server.log_text.getvalue()
