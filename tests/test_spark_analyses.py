"""The log analyses (coordinator_kit.spark.analyses) against what the kit's scenarios did.

Each named scenario runs on virtual time; its Kafka log lines are written to files (broker and
client lines apart, one file per client, each scenario under its own group id) and read back
with `load_logs`, once for the whole module. The expected values come from the scenario's
trace, the record of what happened, so a test fails if an analysis misreads the lines. A few
hand-written lines in older Kafka wordings (`coordinator_kit/logs/wordings.py`) check that real
logs of other
versions give the same answers.

Kafka's side: `ClassicGroupState` (states and transitions), `classicGroupJoin`/`classicGroupSync`
(join/sync, generation), `classicGroupLeave`, `expireClassicGroupMemberHeartbeat` (session
expiry), static members (KIP-345), `CoordinatorRuntime.scheduleLoadOperation`/
`scheduleUnloadOperation`; the Java client's `Heartbeat` and `HeartbeatThread` (heartbeats,
poll timeout).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from coordinator_kit.logs.catalogue import TEMPLATES
from coordinator_kit.logs.layout import level_number
from coordinator_kit.scenarios import new_cluster, run_scenario

pytestmark = pytest.mark.spark

START = datetime(2025, 3, 3, 9, 0, 0)   # virtual 0 ms, as the log4j layout prints it (UTC)


def at(ms: int) -> datetime:
    return START + timedelta(milliseconds=ms)


# -- scenarios --------------------------------------------------------------------------------

def poll_timeout_cluster():
    """consumer-2 processes a batch for longer than its max.poll.interval.ms, twice."""
    c = new_cluster(0)
    c.add_consumer("consumer-1")
    c.add_consumer("consumer-2", max_poll_interval_ms=20_000)
    c.run_for(10_000)
    c.slow_poll("consumer-2", 30_000)
    c.run_for(60_000)
    return c


def everyone_leaves_cluster():
    """Both members close: the group rebalances to Empty (classicGroupLeave, last member
    leaving)."""
    c = run_scenario("second-joins")
    c.leave("consumer-1")
    c.leave("consumer-2")
    c.run_for(5_000)
    return c


def lost_join_cluster():
    """consumer-1 is paused through a rebalance longer than the rebalance timeout
    (max.poll.interval.ms = 10 s): the coordinator completes the join without it
    (completeClassicGroupJoin)."""
    c = new_cluster(0)
    c.add_consumer("consumer-1", max_poll_interval_ms=10_000)
    c.add_consumer("consumer-2", max_poll_interval_ms=10_000)
    c.run_for(10_000)
    c.pause("consumer-1", 30_000)
    c.add_consumer("consumer-3", max_poll_interval_ms=10_000)
    c.run_for(40_000)
    return c


def kafka_python_cluster():
    c = new_cluster(0, consumer_defaults={"client_style": "kafka-python"})
    c.add_consumer("consumer-1")
    c.add_consumer("consumer-2")
    c.run_for(10_000)
    c.crash("consumer-1")
    c.run_for(60_000)
    return c


# group id -> (cluster factory, broker log level or None for no broker lines, client level)
SCENARIOS = {
    "one-dies": (lambda: run_scenario("one-dies"), "DEBUG", "INFO"),
    "one-dies-clients": (lambda: run_scenario("one-dies"), None, "INFO"),
    "poll-timeout": (poll_timeout_cluster, "INFO", "INFO"),
    "rolling-restart": (lambda: run_scenario("rolling-restart"), "INFO", "INFO"),
    "static-restart": (lambda: run_scenario("rolling-restart-static"), "INFO", "INFO"),
    "failover": (lambda: run_scenario("coordinator-failover"), "INFO", "INFO"),
    "all-leave": (everyone_leaves_cluster, "INFO", "INFO"),
    "lost-join": (lost_join_cluster, "INFO", "INFO"),
    "kp-clients": (kafka_python_cluster, None, "INFO"),
    "gc-pause": (lambda: run_scenario("long-gc-pause"), None, "DEBUG"),
}

# Real Kafka wordings of other versions (logs/wordings.py: B-REBAL-0/2, B-STAB-0/2,
# B-ASSIGN-0/1/2, B-FAIL, B-EMPTY-0, B-LEAVE-1, B-STATIC-REPLACE, M-LOAD-0, M-LOADED-0/3,
# M-SCHED-2, M-UNLOAD-SCHED, J-POLL-TIMEOUT, J-LEAVE), one group per version.
LEGACY = {
    "broker-0.10.log": """\
[2017-03-01 12:00:00,000] INFO [Group Metadata Manager on Broker 2]: Loading offsets and group metadata from [__consumer_offsets,3] (kafka.coordinator.GroupMetadataManager)
[2017-03-01 12:00:00,050] INFO [Group Metadata Manager on Broker 2]: Finished loading offsets from [__consumer_offsets,3] in 50 milliseconds. (kafka.coordinator.GroupMetadataManager)
[2017-03-01 12:00:01,000] INFO [GroupCoordinator 2]: Preparing to restabilize group clicks with old generation 0 (kafka.coordinator.GroupCoordinator)
[2017-03-01 12:00:04,000] INFO [GroupCoordinator 2]: Stabilized group clicks generation 1 (kafka.coordinator.GroupCoordinator)
[2017-03-01 12:00:04,010] INFO [GroupCoordinator 2]: Assignment received from leader for group clicks for generation 1 (kafka.coordinator.GroupCoordinator)
[2017-03-01 12:05:00,000] INFO [GroupCoordinator 2]: Preparing to restabilize group clicks with old generation 1 (kafka.coordinator.GroupCoordinator)
[2017-03-01 12:05:00,020] INFO [GroupCoordinator 2]: Group clicks with generation 2 is now empty (kafka.coordinator.GroupCoordinator)
""",
    "broker-2.8.log": """\
[2021-06-01 10:00:00,130] INFO [GroupMetadataManager brokerId=1] Scheduling loading of offsets and group metadata from __consumer_offsets-12 for epoch 3 (kafka.coordinator.group.GroupMetadataManager)
[2021-06-01 10:00:00,250] INFO [GroupMetadataManager brokerId=1] Finished loading offsets and group metadata from __consumer_offsets-12 in 118 milliseconds for epoch 3, of which 5 milliseconds was spent in the scheduler. (kafka.coordinator.group.GroupMetadataManager)
[2021-06-01 10:00:05,000] INFO [GroupCoordinator 1]: Preparing to rebalance group orders in state PreparingRebalance with old generation 4 (__consumer_offsets-12) (reason: Adding new member consumer-1-aaaa with group instance id None) (kafka.coordinator.group.GroupCoordinator)
[2021-06-01 10:00:08,001] INFO [GroupCoordinator 1]: Stabilized group orders generation 5 (__consumer_offsets-12) with 2 members (kafka.coordinator.group.GroupCoordinator)
[2021-06-01 10:00:08,020] INFO [GroupCoordinator 1]: Assignment received from leader for group orders for generation 5. The group has 2 members, 0 of which are static. (kafka.coordinator.group.GroupCoordinator)
[2021-06-01 10:01:00,000] INFO [GroupCoordinator 1]: Member consumer-2-bbbb in group orders has failed, removing it from the group (kafka.coordinator.group.GroupCoordinator)
[2021-06-01 10:01:00,001] INFO [GroupCoordinator 1]: Preparing to rebalance group orders in state PreparingRebalance with old generation 5 (__consumer_offsets-12) (reason: removing member consumer-2-bbbb on heartbeat expiration) (kafka.coordinator.group.GroupCoordinator)
[2021-06-01 10:01:00,101] INFO [GroupCoordinator 1]: Stabilized group orders generation 6 (__consumer_offsets-12) with 1 members (kafka.coordinator.group.GroupCoordinator)
[2021-06-01 10:01:00,160] INFO [GroupCoordinator 1]: Assignment received from leader for group orders for generation 6. The group has 1 members, 0 of which are static. (kafka.coordinator.group.GroupCoordinator)
[2021-06-01 10:03:00,010] INFO [GroupMetadataManager brokerId=1] Scheduling unloading of offsets and group metadata from __consumer_offsets-12 (kafka.coordinator.group.GroupMetadataManager)
""",
    "broker-3.1.log": """\
[2022-02-01 10:00:00,000] INFO [GroupCoordinator 0]: Member MemberMetadata(memberId=consumer-pay-2-7e1d, groupInstanceId=None, clientId=consumer-pay-2, clientHost=/10.0.0.8, sessionTimeoutMs=45000, rebalanceTimeoutMs=300000, supportedProtocols=List(range)) has left group payments through explicit `LeaveGroup` request (kafka.coordinator.group.GroupCoordinator)
[2022-02-01 10:00:00,001] INFO [GroupCoordinator 0]: Preparing to rebalance group payments in state PreparingRebalance with old generation 3 (__consumer_offsets-7) (reason: removing member consumer-pay-2-7e1d on LeaveGroup) (kafka.coordinator.group.GroupCoordinator)
[2022-02-01 10:00:05,000] INFO [GroupCoordinator 0]: Static member with groupInstanceId=pay-1 and unknown member id joins group payments in PreparingRebalance state. Replacing previously mapped member pay-1-0a0a with this groupInstanceId. (kafka.coordinator.group.GroupCoordinator)
[2022-02-01 10:00:05,002] INFO [GroupCoordinator 0]: Stabilized group payments generation 4 (__consumer_offsets-7) with 1 members (kafka.coordinator.group.GroupCoordinator)
[2022-02-01 10:00:05,010] INFO [GroupCoordinator 0]: Assignment received from leader pay-1-1b1b for group payments for generation 4. The group has 1 members, 1 of which are static. (kafka.coordinator.group.GroupCoordinator)
""",
    "broker-3.9.log": """\
[2024-05-01 08:00:00,000] INFO [GroupCoordinator 2]: Preparing to rebalance group billing in state PreparingRebalance with old generation 7 (__consumer_offsets-40) (reason: Adding new member consumer-b-2-c0c0 with group instance id None; client reason: need to re-join with the given member-id: consumer-b-2-c0c0) (kafka.coordinator.group.GroupCoordinator)
[2024-05-01 08:00:03,000] INFO [GroupCoordinator 2]: Stabilized group billing generation 8 (__consumer_offsets-40) with 2 members (kafka.coordinator.group.GroupCoordinator)
[2024-05-01 08:00:03,004] INFO [GroupCoordinator 2]: Preparing to rebalance group billing in state PreparingRebalance with old generation 8 (__consumer_offsets-40) (reason: Adding new member consumer-b-3-d0d0 with group instance id None; client reason: need to re-join with the given member-id: consumer-b-3-d0d0) (kafka.coordinator.group.GroupCoordinator)
[2024-05-01 08:00:05,000] INFO [GroupCoordinator 2]: Stabilized group billing generation 9 (__consumer_offsets-40) with 3 members (kafka.coordinator.group.GroupCoordinator)
[2024-05-01 08:00:05,012] INFO [GroupCoordinator 2]: Assignment received from leader consumer-b-1-b0b0 for group billing for generation 9. The group has 3 members, 0 of which are static. (kafka.coordinator.group.GroupCoordinator)
""",
    "client-3.1.log": """\
[2022-02-01 09:59:59,999] WARN [Consumer clientId=consumer-pay-2, groupId=payments] consumer poll timeout has expired. This means the time between subsequent calls to poll() was longer than the configured max.poll.interval.ms, which typically implies that the poll loop is spending too much time processing messages. You can address this either by increasing max.poll.interval.ms or by reducing the maximum size of batches returned in poll() with max.poll.records. (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)
[2022-02-01 09:59:59,999] INFO [Consumer clientId=consumer-pay-2, groupId=payments] Member consumer-pay-2-7e1d sending LeaveGroup request to coordinator kafka-0:9092 (id: 2147483647 rack: null) due to consumer poll timeout has expired. (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)
""",
}


def write_scenario(cluster, group: str, folder: Path, broker_level: str | None,
                   client_level: str) -> None:
    """The scenario's log lines as a broker log and one log per client, group-1 renamed."""
    files: dict[str, list[str]] = {}
    for e in cluster.trace.events:
        line = e.line(cluster.trace.start)
        if line is None:
            continue
        is_broker = TEMPLATES[e.template_id].source == "broker"
        level = broker_level if is_broker else client_level
        if level is None or level_number(e.level) < level_number(level):
            continue
        name = "server.log" if is_broker else f"{e.source}.log"
        files.setdefault(name, []).append(line.replace("group-1", group))
    folder.mkdir(parents=True)
    for name, lines in files.items():
        (folder / name).write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def clusters():
    return {group: make() for group, (make, _, _) in SCENARIOS.items()}


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory, clusters):
    root = tmp_path_factory.mktemp("analyses")
    for group, (_, broker_level, client_level) in SCENARIOS.items():
        write_scenario(clusters[group], group, root / group, broker_level, client_level)
    (root / "legacy").mkdir()
    for name, text in LEGACY.items():
        (root / "legacy" / name).write_text(text)
    return root


@pytest.fixture(scope="module")
def logs(spark, log_dir):
    from coordinator_kit.spark import load_logs

    df = load_logs(str(log_dir), spark).cache()
    yield df
    df.unpersist()


def in_folder(df, folder: str):
    from pyspark.sql import functions as F
    return df.filter(F.col("file").contains(f"/{folder}/"))


@pytest.fixture(scope="module")
def episodes(logs):
    from coordinator_kit.spark.analyses import rebalance_episodes
    return rebalance_episodes(logs).toPandas()


@pytest.fixture(scope="module")
def departures(logs):
    from coordinator_kit.spark.analyses import member_departures
    return member_departures(logs).toPandas()


@pytest.fixture(scope="module")
def timeline(logs):
    from coordinator_kit.spark.analyses import group_state_timeline
    return group_state_timeline(logs).toPandas()


def records(frame) -> list[dict]:
    """pandas rows as plain Python values: NULL as None (pandas shows a NULL int as NaN and a
    NULL time as NaT), whole floats as int, times as datetime."""
    import pandas as pd

    def plain(v):
        if v is None or (not isinstance(v, str) and pd.isna(v)):
            return None
        if isinstance(v, pd.Timestamp):
            return v.to_pydatetime()
        if isinstance(v, float) and v.is_integer():
            return int(v)
        return v

    return [{k: plain(v) for k, v in r.items()} for r in frame.to_dict("records")]


def rows(frame, group: str) -> list[dict]:
    return records(frame[frame["group"] == group])


def trace(cluster, kind: str) -> list:
    return [e for e in cluster.trace.events if e.kind == kind]


def broker_trace(cluster, kind: str) -> list:
    return [e for e in trace(cluster, kind) if e.source.startswith("broker")]


# -- rebalance episodes ------------------------------------------------------------------------

def test_one_dies_gives_three_episodes_with_kafkas_generations_and_member_counts(episodes,
                                                                                 clusters):
    c = clusters["one-dies"]
    got = rows(episodes, "one-dies")
    assert [(r["generation_before"], r["generation_after"]) for r in got] == [(0, 1), (1, 2),
                                                                                (2, 3)]
    assert [(r["members_before"], r["members_after"]) for r in got] == [(0, 1), (1, 2), (2, 1)]
    assert {r["derived_from"] for r in got} == {"broker"}
    assert all(r["end_state"] == "Stable" and r["restarts"] == 0 for r in got)
    # Each episode runs from "Preparing to rebalance" to "Assignment received" of the next
    # generation; its duration is the virtual time between those two lines.
    starts = broker_trace(c, "rebalance_started")
    ends = broker_trace(c, "assignment_received")
    assert [r["start_ts"] for r in got] == [at(e.ts) for e in starts]
    assert [r["end_ts"] for r in got] == [at(e.ts) for e in ends]
    assert [r["duration_ms"] for r in got] == [b.ts - a.ts for a, b in zip(starts, ends)]
    assert "heartbeat expiration" in got[2]["reason"]


def test_the_first_rebalance_of_a_new_group_waits_the_initial_delay(episodes, clusters):
    first = rows(episodes, "one-dies")[0]
    # group.initial.rebalance.delay.ms = 3000 (KIP-134), plus the sync round trip.
    assert 3000 <= first["duration_ms"] < 3100
    assert first["reason"].startswith("Adding new member")


def test_everyone_leaving_ends_the_episode_in_empty_with_a_new_generation(episodes):
    last = rows(episodes, "all-leave")[-1]
    assert (last["end_state"], last["end_event"]) == ("Empty", "group_empty")
    assert (last["generation_before"], last["generation_after"]) == (2, 3)
    assert (last["members_before"], last["members_after"]) == (2, 0)


def test_a_dynamic_rolling_restart_costs_one_rebalance_per_restart(episodes):
    got = rows(episodes, "rolling-restart")
    assert len(got) == 4          # the initial join, then one per restarted consumer
    assert [r["members_after"] for r in got] == [3, 3, 3, 3]
    assert all("LeaveGroup" in r["reason"] for r in got[1:])


def test_a_static_rolling_restart_costs_no_rebalance(episodes):
    got = rows(episodes, "static-restart")
    assert len(got) == 1 and got[0]["generation_after"] == 1   # only the initial join


def test_client_lines_alone_give_the_episodes_the_clients_saw(episodes, clusters):
    c = clusters["one-dies-clients"]
    got = rows(episodes, "one-dies-clients")
    assert {r["derived_from"] for r in got} == {"client"}
    assert [r["generation_after"] for r in got] == [1, 2, 3]
    assert [r["generation_before"] for r in got] == [None, 1, 2]
    assert [r["members_after"] for r in got] == [1, 2, 1]
    # The group is Stable once the first member's SyncGroup succeeds for the new generation.
    synced = {}
    for e in trace(c, "synced"):
        synced.setdefault(e.fields["generation"].generation_id, e.ts)
    assert [r["end_ts"] for r in got] == [at(synced[g]) for g in (1, 2, 3)]
    assert got[2]["reason"] == "group is already rebalancing"


def test_kafka_python_clients_alone_give_episodes_from_their_assignment_lines(episodes):
    got = rows(episodes, "kp-clients")
    assert {r["derived_from"] for r in got} == {"client"}
    assert [(r["generation_after"], r["members_after"]) for r in got] == [(1, 2), (2, 1)]
    assert all(r["duration_ms"] > 0 for r in got)


def test_older_kafka_wordings_give_the_same_episodes(episodes):
    clicks = rows(episodes, "clicks")          # 0.10: no member counts printed
    assert [(r["generation_before"], r["generation_after"], r["end_state"]) for r in clicks] \
        == [(0, 1, "Stable"), (1, 2, "Empty")]
    assert clicks[0]["duration_ms"] == 3010
    assert clicks[0]["members_before"] == 0 and clicks[0]["members_after"] is None
    orders = rows(episodes, "orders")          # 2.8: "with N members", "The group has N"
    assert [(r["generation_before"], r["generation_after"]) for r in orders] == [(4, 5), (5, 6)]
    assert [(r["members_before"], r["members_after"]) for r in orders] == [(None, 2), (2, 1)]
    assert [r["duration_ms"] for r in orders] == [3020, 159]


def test_a_rebalance_restarted_during_completing_rebalance_is_one_episode(episodes, timeline):
    # A member joined while the group waited for the leader's SyncGroup (3.9 wording): the group
    # went back to PreparingRebalance and only became Stable at generation 9.
    got = rows(episodes, "billing")
    assert [(r["generation_before"], r["generation_after"], r["restarts"], r["members_after"],
             r["duration_ms"]) for r in got] == [(7, 9, 1, 3, 5012)]
    assert got[0]["reason"].startswith("Adding new member consumer-b-2-c0c0")
    assert [r["state"] for r in rows(timeline, "billing")] == [
        "PreparingRebalance", "CompletingRebalance", "PreparingRebalance",
        "CompletingRebalance", "Stable"]


# -- member departures -------------------------------------------------------------------------

def test_one_dies_has_one_session_expiry_for_consumer_1(departures, clusters):
    expired = trace(clusters["one-dies"], "member_session_expired")
    got = rows(departures, "one-dies")
    assert [(r["member"], r["cause"], r["ts"]) for r in got] == \
        [(expired[0].fields["member"], "session_expiry", at(expired[0].ts))]
    assert got[0]["member"].startswith("consumer-1-")


def test_a_crash_is_invisible_in_the_clients_own_logs(departures):
    assert rows(departures, "one-dies-clients") == []


def test_leaving_after_the_poll_timeout_is_a_poll_timeout(departures, clusters):
    left = trace(clusters["poll-timeout"], "member_left")
    got = rows(departures, "poll-timeout")
    assert [(r["member"], r["cause"]) for r in got] == \
        [(e.fields["member"], "poll_timeout") for e in left]
    assert all("poll timeout" in r["detail"] for r in got)


def test_closing_consumers_leave_and_static_ones_are_fenced_by_their_successor(departures,
                                                                               clusters):
    dynamic = rows(departures, "rolling-restart")
    assert [r["cause"] for r in dynamic] == ["leave"] * 3
    assert all(r["detail"] == "the consumer is being closed" for r in dynamic)
    static = rows(departures, "static-restart")
    replaced = trace(clusters["static-restart"], "static_member_replaced")
    assert [(r["member"], r["cause"]) for r in static] == \
        [(e.fields["old_member"], "fencing") for e in replaced]


def test_a_member_that_does_not_rejoin_in_time_is_removed_by_the_rebalance_timeout(
        departures, episodes, clusters):
    removed = trace(clusters["lost-join"], "members_not_rejoined_removed")
    got = rows(departures, "lost-join")
    assert [(r["ts"], r["cause"]) for r in got] == [(at(removed[0].ts), "rebalance_timeout")]
    assert got[0]["member"] in removed[0].fields["members"]
    assert got[0]["member"].startswith("consumer-1-")
    # consumer-3 came in and consumer-1 went out in the same rebalance: 2 members -> 2.
    second = rows(episodes, "lost-join")[1]
    assert (second["members_before"], second["members_after"]) == (2, 2)


def test_older_wordings_name_the_member_and_the_cause(departures):
    assert [(r["member"], r["cause"]) for r in rows(departures, "orders")] == \
        [("consumer-2-bbbb", "session_expiry")]
    # 3.1 prints no client reason; the member's own log says it left on the poll timeout.
    assert [(r["member"], r["cause"]) for r in rows(departures, "payments")] == \
        [("consumer-pay-2-7e1d", "poll_timeout"), ("pay-1-0a0a", "fencing")]


# -- heartbeat gaps ------------------------------------------------------------------------------

def test_the_coordinator_saw_no_heartbeat_for_a_session_timeout_before_expiring(logs, clusters):
    from coordinator_kit.spark.analyses import heartbeat_gap_summary, heartbeat_gaps

    summary = heartbeat_gap_summary(heartbeat_gaps(logs, basis="broker")).toPandas()
    got = {r["member"]: r for r in rows(summary, "one-dies")}
    c = clusters["one-dies"]
    dead = trace(c, "member_session_expired")[0]
    session_timeout = c.consumer("consumer-2").config.session_timeout_ms
    interval = c.consumer("consumer-2").config.heartbeat_interval_ms
    assert got[dead.fields["member"]]["max_gap_ms"] == session_timeout
    assert got[dead.fields["member"]]["max_gap_ended"] == at(dead.ts)
    alive = [m for m in got if m != dead.fields["member"]]
    assert len(alive) == 1 and got[alive[0]]["max_gap_ms"] <= interval


def test_the_java_clients_info_logs_hold_no_heartbeat_lines(logs):
    from coordinator_kit.spark.analyses import heartbeat_gaps

    gaps = [r for r in records(heartbeat_gaps(logs, basis="client").toPandas())
            if r["group"] != "gc-pause"]                  # the one client log at DEBUG
    # A Java consumer logs a heartbeat it sends only at DEBUG; at INFO only failures appear
    # (NOT_COORDINATOR after the failover, UNKNOWN_MEMBER_ID after the lost join), and a
    # member whose heartbeats all succeed has none.
    assert {"failover", "lost-join"} <= {r["group"] for r in gaps}
    assert all(r["event"].startswith("heartbeat_failed") for r in gaps)
    assert not [r for r in gaps if r["group"] in ("one-dies", "rolling-restart")]


def test_client_gaps_run_between_heartbeat_sends_and_show_a_gc_pause(logs, clusters):
    """At DEBUG a Java client logs every heartbeat it sends and every success; the client-side
    gap is the time between two sends (heartbeat.interval.ms while healthy), per client,
    across the new member id it rejoins with, so a 60 s pause is one gap."""
    from coordinator_kit.spark.analyses import heartbeat_gaps

    gaps = rows(heartbeat_gaps(logs, basis="client").toPandas(), "gc-pause")
    assert {r["event"] for r in gaps} == {"heartbeat_sent"}       # no responses, no failures
    c = clusters["gc-pause"]
    for client in ("consumer-1", "consumer-2"):
        sends = [e for e in trace(c, "heartbeat_sent") if e.source == f"client-{client}"]
        expected = [b.ts - a.ts for a, b in zip(sends, sends[1:])]
        got = [r["gap_ms"] for r in gaps if r["client_id"] == client and r["gap_ms"] is not None]
        assert got == expected
        assert [r["member"] for r in gaps if r["client_id"] == client] == \
            [e.fields["member"] for e in sends]
    interval = c.consumer("consumer-2").config.heartbeat_interval_ms
    paused = [r for r in gaps if r["client_id"] == "consumer-1" and (r["gap_ms"] or 0) > interval + 200]
    assert len(paused) == 1 and paused[0]["gap_ms"] > 60_000       # the GC pause
    assert paused[0]["member"] != gaps[0]["member"]                 # rejoined under a new id


def test_heartbeat_gaps_refuses_an_unknown_basis(logs):
    from coordinator_kit.spark.analyses import heartbeat_gaps

    with pytest.raises(ValueError, match="basis must be 'client' or 'broker', got 'server'"):
        heartbeat_gaps(logs, basis="server")


# -- coordinator loads and unloads --------------------------------------------------------------

def test_a_coordinator_move_unloads_on_the_old_leader_and_loads_on_the_new(logs, clusters):
    from coordinator_kit.spark.analyses import coordinator_loads

    c = clusters["failover"]
    got = records(coordinator_loads(in_folder(logs, "failover")).toPandas())
    moved = c.partition_of("group-1").partition
    loaded = [e for e in trace(c, "load_completed") if e.fields["tp"].partition == moved][-1]
    load = [r for r in got if r["operation"] == "load" and r["epoch"] == 1]
    unload = [r for r in got if r["operation"] == "unload"]
    assert [(r["partition"], r["broker"], r["outcome"]) for r in load] == \
        [(moved, int(loaded.source.split("-")[1]), "completed")]
    assert load[0]["duration_ms"] == loaded.fields["duration_ms"]
    assert load[0]["finished_ts"] == at(loaded.ts)
    assert [(r["partition"], r["epoch"], r["outcome"]) for r in unload] == \
        [(moved, 1, "completed")]
    assert unload[0]["started_ts"] is not None
    # Every partition was loaded once at start-up, in epoch 0.
    assert sorted(r["partition"] for r in got if r["epoch"] == 0) == list(range(3))


def test_older_load_lines_give_the_brokers_own_durations(logs):
    from coordinator_kit.spark.analyses import coordinator_loads

    got = records(coordinator_loads(in_folder(logs, "legacy")).toPandas())
    summary = [(r["partition"], r["broker"], r["operation"], r["epoch"], r["outcome"],
                r["duration_ms"], r["elapsed_ms"]) for r in got]
    assert (3, 2, "load", None, "completed", 50, 50) in summary          # 0.10
    assert (12, 1, "load", 3, "completed", 118, 120) in summary          # 2.8: logged 118 ms
    unload = [r for r in got if r["operation"] == "unload"]
    assert len(unload) == 1 and unload[0]["outcome"] is None             # not finished in log


# -- group-state timeline ------------------------------------------------------------------------

def intervals(timeline, group):
    return [(r["state"], r["from_ts"], r["to_ts"]) for r in rows(timeline, group)]


def test_the_timeline_follows_kafkas_state_table_without_gaps(timeline):
    legal = {("Empty", "PreparingRebalance"), ("PreparingRebalance", "CompletingRebalance"),
             ("PreparingRebalance", "Empty"), ("CompletingRebalance", "Stable"),
             ("CompletingRebalance", "PreparingRebalance"), ("Stable", "PreparingRebalance")}
    for group in ("one-dies", "poll-timeout", "rolling-restart", "all-leave", "orders"):
        got = intervals(timeline, group)
        for (s1, _, to), (s2, start, _) in zip(got, got[1:]):
            assert (s1, s2) in legal, (group, s1, s2)
            assert to == start
        assert got[-1][2] is None      # still in that state when the log ends


def test_one_dies_timeline_matches_the_trace(timeline, clusters):
    c = clusters["one-dies"]
    got = intervals(timeline, "one-dies")
    assert [s for s, _, _ in got] == ["Empty"] + ["PreparingRebalance", "CompletingRebalance",
                                                 "Stable"] * 3
    stable_since = [at(e.ts) for e in broker_trace(c, "assignment_received")]
    assert [f for s, f, _ in got if s == "Stable"] == stable_since
    last = rows(timeline, "one-dies")[-1]
    assert last["generation"] == 3


def test_a_coordinator_move_shows_the_group_dead_on_the_old_coordinator(timeline, clusters):
    c = clusters["failover"]
    got = intervals(timeline, "failover")
    unloaded = at(trace(c, "group_unloaded")[0].ts)
    loaded = at(trace(c, "group_loaded")[0].ts)
    assert ("Dead", unloaded, loaded) in got
    assert got[-1][0] == "Stable" and got[-1][1] == loaded


def test_client_lines_alone_give_a_timeline_too(timeline):
    got = rows(timeline, "one-dies-clients")
    assert {r["derived_from"] for r in got} == {"client"}
    assert [r["state"] for r in got] == ["PreparingRebalance", "CompletingRebalance",
                                         "Stable"] * 3


# -- determinism, time zone, pandas --------------------------------------------------------------

def test_results_are_sorted_and_the_same_on_a_second_run(logs, episodes):
    from coordinator_kit.spark.analyses import rebalance_episodes

    again = rebalance_episodes(logs).toPandas()
    assert again.equals(episodes)
    keys = list(zip(episodes["group"], episodes["start_ts"]))
    assert keys == sorted(keys)


def test_durations_do_not_depend_on_the_session_time_zone(spark, logs, episodes):
    from coordinator_kit.spark.analyses import rebalance_episodes

    previous = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        again = rebalance_episodes(logs).select("group", "duration_ms").toPandas()
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous)
    assert again.equals(episodes[["group", "duration_ms"]])


def test_no_analysis_runs_python_code_on_the_executors(logs):
    # DataFrame API only, so the plans scale to the 1 GB benchmark: no Python UDF
    # (BatchEvalPython / ArrowEvalPython) and no pandas UDF in any physical plan.
    from coordinator_kit.spark import analyses as A

    plans = [A.rebalance_episodes(logs), A.member_departures(logs),
             A.heartbeat_gaps(logs, basis="client"), A.heartbeat_gaps(logs, basis="broker"),
             A.heartbeat_gap_summary(A.heartbeat_gaps(logs)), A.coordinator_loads(logs),
             A.group_state_timeline(logs)]
    for df in plans:
        plan = df._jdf.queryExecution().executedPlan().toString()
        assert "EvalPython" not in plan and "PythonUDF" not in plan


def test_as_pandas_refuses_a_large_result(logs):
    from coordinator_kit.spark.analyses import as_pandas, member_departures

    small = as_pandas(member_departures(logs))
    assert len(small) > 3
    with pytest.raises(ValueError, match="more than 2 rows"):
        as_pandas(member_departures(logs), max_rows=2)
