"""`rebalance_episodes` and `group_state_timeline` on a KIP-848 consumer group (the
`consumer-protocol-faults` dataset: consumer-3 joins at 10 s, consumer-1 crashes at 20 s and is
fenced when its session runs out, consumer-2 leaves on its poll timeout twice and rejoins once;
group epochs 1 to 7).

Kafka derives a consumer group's state from its records (`ConsumerGroup.maybeUpdateGroupState`):
Empty without members, Assigning while the group epoch is ahead of the target assignment's,
Stable once every member is reconciled to the target, else Reconciling. What the group really
did comes from the scenario itself: its trace at DEBUG, replayed by
`viz.live.consumer_group_transitions`. With the coordinator's DEBUG "new assignment state"
lines the analyses give exactly those moves; at INFO they read the members' own "transitioned
from X to STABLE" lines, which come later (and, for a member stuck in a long poll, never).
"""

from __future__ import annotations

import warnings
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest

from coordinator_kit.datasets.catalog import DatasetSpec, consumer_protocol_faults
from coordinator_kit.datasets.writer import render_dataset
from coordinator_kit.logs import analyses as P
from coordinator_kit.logs.parse import parse_paths
from coordinator_kit.viz.live import consumer_group_transitions

DATASET = Path(__file__).resolve().parent.parent / "datasets" / "consumer-protocol-faults"
T0 = datetime(2025, 3, 3, 9, 0, 0)          # the dataset's virtual time 0
CONSUMER_1, CONSUMER_2, CONSUMER_3 = ("LMsZFohV74l0P1_mJq0deA", "h2Ifr0jqoKRR7ygp2uCKMg",
                                      "3UziHMBhbPgzbhac4N61MQ")


def _events(paths):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return parse_paths(paths).events


def _debug_run(seed: int = 0):
    return consumer_protocol_faults(seed, trace_level="DEBUG")


@pytest.fixture(scope="module")
def info_events():
    return _events(str(DATASET))


@pytest.fixture(scope="module")
def debug(tmp_path_factory):
    """The dataset's scenario with the coordinator logging at DEBUG (same run: the trace level
    changes what is written, not what happens), and its logs as a broker would write them."""
    root = tmp_path_factory.mktemp("cg-debug")
    cluster = _debug_run()
    spec = DatasetSpec("cg-debug", _debug_run, "", (), broker_level="DEBUG")
    for name, data in render_dataset(spec, cluster).items():
        if name.endswith(".log"):
            (root / name).write_bytes(data)
    return cluster, _events(str(root))


def _ms(ts) -> int:
    return round((ts.to_pydatetime() - T0).total_seconds() * 1000)


def _settled(moves):
    """(ms, state, epoch) the group is in once every line of each millisecond is applied."""
    last: dict[int, tuple[str, int]] = {}
    for ms, state, epoch in moves:
        last[ms] = (state, epoch)
    return [(ms, *v) for ms, v in sorted(last.items())]


def _truth(cluster):
    return _settled([(t.ts, t.new.value, t.generation)
                     for t in consumer_group_transitions(cluster.trace, "group-1")])


def test_with_the_coordinators_debug_lines_the_timeline_is_the_groups_own(debug):
    cluster, events = debug
    t = P.group_state_timeline(events)
    assert set(t["derived_from"]) == {"broker"}
    got = _settled([(_ms(r.from_ts), r.state, r.generation) for r in t.itertuples()])
    assert got == _truth(cluster)
    assert got == [(3, "Reconciling", 2), (5115, "Stable", 2), (10003, "Reconciling", 3),
                   (15115, "Stable", 3), (50102, "Assigning", 4), (50225, "Reconciling", 4),
                   (60101, "Reconciling", 5), (60315, "Reconciling", 6), (65115, "Stable", 6),
                   (90102, "Assigning", 7), (90523, "Stable", 7)]


def test_with_the_coordinators_debug_lines_each_rebalance_is_an_episode(debug):
    _, events = debug
    ep = P.rebalance_episodes(events)
    rows = [(_ms(r.start_ts), _ms(r.end_ts), r.reason, r.generation_before, r.generation_after,
             r.members_before, r.members_after, r.restarts) for r in ep.itertuples()]
    # consumer-1 joins and is Stable at epoch 1 in the same batch of records; consumer-2's join
    # (epoch 2) waits for consumer-1 to revoke; consumer-3 joins (epoch 3); consumer-2's
    # poll-timeout leave (epoch 4), rejoin (5) and consumer-1's fencing (6) are one
    # reconciliation that ends when consumer-2 is reconciled to epoch 6; its second leave (7).
    assert rows == [
        (3, 3, f"member_joined {CONSUMER_1}", 0, 1, 0, 1, 0),
        (3, 5115, f"member_joined {CONSUMER_2}", 1, 2, 1, 2, 0),
        (10003, 15115, f"member_joined {CONSUMER_3}", 2, 3, 2, 3, 0),
        (50102, 65115, f"member_left {CONSUMER_2}", 3, 6, 3, 2, 2),
        (90102, 90523, f"member_left {CONSUMER_2}", 6, 7, 2, 1, 0)]
    assert set(ep["end_state"]) == {"Stable"}
    assert set(ep["end_event"]) == {"member_assignment_updated"}


def test_the_info_dataset_reads_the_members_stable_lines(info_events):
    cluster = _debug_run()
    truth = _truth(cluster)
    ep = P.rebalance_episodes(info_events)
    rows = [(_ms(r.start_ts), _ms(r.end_ts), r.reason, r.generation_before, r.generation_after,
             r.members_before, r.members_after, r.restarts, r.end_state) for r in ep.itertuples()]
    assert rows == [
        (3, 5200, f"member_joined {CONSUMER_1}", 0, 2, 0, 2, 1, "Stable"),
        (10003, 15200, f"member_joined {CONSUMER_3}", 2, 3, 2, 3, 0, "Stable"),
        (50102, 90600, f"member_left {CONSUMER_2}", 3, 7, 3, 1, 3, "Stable")]
    assert set(ep["derived_from"]) == {"broker+client"}
    # Starts are the coordinator's own lines, so they are the group's moves to Assigning...
    assert {(3, 1), (10003, 3), (50102, 4)} <= {
        (t.ts, t.generation) for t in consumer_group_transitions(cluster.trace, "group-1")
        if t.new.value == "Assigning"}
    # ...the ends are a member's "ACKNOWLEDGING to STABLE", logged when the response to the
    # heartbeat that reconciled it arrives: 85 ms after the coordinator's Stable.
    assert (5115, "Stable", 2) in truth and (15115, "Stable", 3) in truth
    # consumer-2 is reconciled to epoch 6 for the coordinator at 65.1 s, but its client, in a
    # 40 s poll, never runs its callbacks and never logs STABLE: at INFO the episode goes on
    # through its second leave (epoch 7) until consumer-3 logs STABLE at 90.6 s.
    assert (65115, "Stable", 6) in truth and (90523, "Stable", 7) in truth


def test_the_info_timeline_follows_the_epochs(info_events):
    t = P.group_state_timeline(info_events)
    got = _settled([(_ms(r.from_ts), r.state, r.generation) for r in t.itertuples()])
    # At 100 ms both members log STABLE, consumer-2 with nothing yet (its partitions are
    # still consumer-1's: UNRELEASED_PARTITIONS to the coordinator), and consumer-1 at its old
    # epoch before it revokes: the clients' lines show the group Stable twice before the
    # coordinator does (5115 ms, see the DEBUG test); the episode ends at the last of them.
    assert got == [
        (3, "Reconciling", 2), (100, "Stable", 2), (114, "Reconciling", 2), (200, "Stable", 2),
        (5128, "Reconciling", 2), (5200, "Stable", 2),
        (10003, "Reconciling", 3), (10300, "Stable", 3), (15128, "Reconciling", 3),
        (15200, "Stable", 3), (50101, "Reconciling", 3), (50102, "Assigning", 4),
        (50225, "Reconciling", 4), (60101, "Reconciling", 5), (60315, "Reconciling", 6),
        (90102, "Assigning", 7), (90523, "Reconciling", 7), (90600, "Stable", 7)]
    epochs = [r.generation for r in t.itertuples()]
    assert epochs == sorted(epochs) and max(epochs) == 7
    last = t.iloc[-1]
    assert last.state == "Stable" and pd.isna(last.to_ts) and pd.isna(last.duration_ms)


def test_classic_groups_get_no_consumer_group_rows():
    events = _events(str(DATASET.parent / "one-dies"))
    assert set(P.rebalance_episodes(events)["derived_from"]) <= {"broker", "client"}
    states = set(P.group_state_timeline(events)["state"])
    assert states <= set(P.CLASSIC_GROUP_STATES)


@pytest.mark.spark
def test_spark_reads_debug_lines_and_real_kafka_as_logs_analyses_does(spark, debug):
    """The identity test covers the datasets (INFO); this covers the coordinator's DEBUG lines,
    which only a DEBUG run has, and real Kafka 4.0.2's consumer groups (datasets/real-kafka,
    whose logs sit in sub-folders the identity test does not walk)."""
    import pyarrow as pa

    from coordinator_kit.spark import analyses as S
    from coordinator_kit.spark.schema import arrow_schema, spark_schema

    real = _events(str(DATASET.parent / "real-kafka" / "kafka"))
    zone = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    try:
        for label, events in (("debug run", debug[1]), ("real-kafka", real)):
            frame = spark.createDataFrame(pa.Table.from_pylist(events, schema=arrow_schema()),
                                          spark_schema())
            for name in ("rebalance_episodes", "group_state_timeline"):
                want = [tuple(r) for r in getattr(S, name)(frame).collect()]
                df = getattr(P, name)(events)
                got = [tuple(None if pd.isna(v) else v.to_pydatetime()
                             if isinstance(v, pd.Timestamp) else v.item() if hasattr(v, "item")
                             else v for v in row)
                       for row in df.itertuples(index=False, name=None)]
                assert got == want, (label, name)
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)


def test_real_kafka_4_a_lone_member_fenced_leaves_the_group_empty_without_a_rebalance():
    """Apache Kafka 4.0.2's own log and its Java consumer's (datasets/real-kafka): the member
    joins (epoch 1) and is Stable 26 ms later by its own line; when it is fenced the group has
    no member left and goes Empty (`maybeUpdateGroupState`), which is no rebalance."""
    real = DATASET.parent / "real-kafka" / "kafka"
    events = _events([str(real / "server.log"),
                      str(real / "clients" / "kip848-one-joins" / "java-a.log")])
    group = "g-kip848-one-joins-java"
    ep = P.rebalance_episodes(events)
    ep = ep[ep["group"] == group]
    assert [(r.duration_ms, r.end_state, r.generation_before, r.generation_after,
             r.members_before, r.members_after, r.restarts) for r in ep.itertuples()] == [
        (26, "Stable", 0, 1, 0, 1, 0)]
    t = P.group_state_timeline(events)
    assert list(t[t["group"] == group]["state"]) == ["Assigning", "Reconciling", "Stable",
                                                     "Empty"]
