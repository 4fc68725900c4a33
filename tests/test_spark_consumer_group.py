"""The log analyses (`coordinator_kit.spark.analyses`) on the consumer group protocol's lines
(KIP-848, `group.protocol=consumer`): the coordinator's "fenced from the group because the
member session expired" and "left the consumer group" lines (`GroupMetadataManager`), the
`session-timeout-<group>-<member>` timer (`consumerGroupSessionTimeoutKey`), and the Java
AsyncKafkaConsumer's lines (`ConsumerHeartbeatRequestManager`, `ConsumerMembershipManager`).
The expected values come from the scenario's own state, so an analysis that misreads the lines
fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from coordinator_kit.datasets.catalog import DatasetSpec, consumer_protocol_faults
from coordinator_kit.datasets.writer import render_dataset
from coordinator_kit.scenarios import new_cluster

pytestmark = pytest.mark.spark

DATASET = Path(__file__).resolve().parent.parent / "datasets" / "consumer-protocol-faults"


def pauses_and_crash():
    """Two consumer-protocol members; consumer-2 stops the world for 30 s (under the 45 s
    session), then consumer-1 crashes and is fenced when its session runs out."""
    c = new_cluster(0)
    c.add_consumer("consumer-1", group_protocol="consumer")
    c.add_consumer("consumer-2", group_protocol="consumer")
    c.run_for(20_000)
    c.pause("consumer-2", 30_000)
    c.run_for(40_000)
    c.crash("consumer-1")
    c.run_for(60_000)
    return c


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The dataset scenario (its INFO files, as committed) and a DEBUG run of
    `pauses_and_crash` written as a broker and its clients would log."""
    root = tmp_path_factory.mktemp("kip848")
    cluster = pauses_and_crash()
    spec = DatasetSpec("kip848-debug", pauses_and_crash, "", (), broker_level="DEBUG",
                       client_level="DEBUG")
    for name, data in render_dataset(spec, cluster).items():
        if name.endswith(".log"):
            (root / name).write_bytes(data)
    return {"dataset": consumer_protocol_faults(), "debug": cluster, "debug_dir": root}


@pytest.fixture(scope="module")
def dataset_logs(spark):
    from coordinator_kit.logs.parse import SkippedFilesWarning
    from coordinator_kit.spark import load_logs
    # a dataset's folder holds its trace and offsets table beside the logs: said, and skipped
    with pytest.warns(SkippedFilesWarning, match="not logs"):
        return load_logs(str(DATASET), spark).cache()


@pytest.fixture(scope="module")
def debug_logs(spark, runs):
    from coordinator_kit.spark import load_logs
    return load_logs(str(runs["debug_dir"]), spark).cache()


def _member(cluster, name: str) -> str:
    return cluster.consumer(name).member_id


def test_departures_of_a_consumer_group_session_expiry_and_poll_timeouts(dataset_logs, runs):
    # consumer-1 crashed: fenced when its session ran out (session_expiry); consumer-2 left
    # twice by itself after its poll timer expired: the broker's "left the consumer group"
    # lines carry no reason, its own WARN "Consumer poll timeout has expired" does
    from coordinator_kit.spark.analyses import member_departures
    c = runs["dataset"]
    rows = [(r.member, r.cause, r.event) for r in member_departures(dataset_logs).collect()]
    assert rows == [(_member(c, "consumer-2"), "poll_timeout", "member_left"),
                    (_member(c, "consumer-1"), "session_expiry", "member_fenced"),
                    (_member(c, "consumer-2"), "poll_timeout", "member_left")]


def test_client_heartbeat_gaps_of_the_async_consumer_show_its_pause(debug_logs, runs):
    # the AsyncKafkaConsumer logs no send line, only each answer at DEBUG: one per
    # group.consumer.heartbeat.interval.ms (5 s), and one gap as long as the 30 s pause
    from coordinator_kit.spark.analyses import heartbeat_gap_summary, heartbeat_gaps
    c = runs["debug"]
    summary = {r.client_id: r for r in heartbeat_gap_summary(heartbeat_gaps(debug_logs))
               .collect()}
    assert set(summary) == {"consumer-1", "consumer-2"}
    assert 5_000 <= summary["consumer-1"].max_gap_ms <= 5_100  # an answer: + its latency
    assert 30_000 <= summary["consumer-2"].max_gap_ms <= 35_000
    assert summary["consumer-2"].member == _member(c, "consumer-2")


def test_broker_heartbeat_gaps_read_the_consumer_group_session_timer(debug_logs, runs):
    # the coordinator re-arms session-timeout-<group>-<member> on every heartbeat; consumer-1's
    # last gap ends at its fencing, a session timeout (45 s) after its last heartbeat
    from coordinator_kit.spark.analyses import heartbeat_gap_summary, heartbeat_gaps
    c = runs["debug"]
    gaps = heartbeat_gaps(debug_logs, basis="broker")
    summary = {r.member: r for r in heartbeat_gap_summary(gaps).collect()}
    one, two = _member(c, "consumer-1"), _member(c, "consumer-2")
    assert set(summary) == {one, two}
    assert 45_000 <= summary[one].max_gap_ms <= 45_000 + 5_000
    assert 30_000 <= summary[two].max_gap_ms <= 35_000
    last = gaps.filter(gaps.member == one).collect()[-1]
    assert last.event == "member_fenced"
