"""The consumer side of KIP-848 (`group.protocol=consumer`) on a simulated cluster: Java's
`AsyncKafkaConsumer` with `ConsumerMembershipManager`, `ConsumerHeartbeatRequestManager` and
`CommitRequestManager` (their Kafka tests: ConsumerMembershipManagerTest,
ConsumerHeartbeatRequestManagerTest, CommitRequestManagerTest, MemberStateTest), against the
kit's broker side (`GroupMetadataManager.consumerGroupHeartbeat`)."""

from __future__ import annotations

import pytest

from coordinator_kit.client import Consumer, ConsumerConfig
from coordinator_kit.client.async_consumer import AsyncConsumer
from coordinator_kit.client.membership import MEMBER_STATES, MemberState
from coordinator_kit.cluster import Cluster
from coordinator_kit.errors import Errors, IllegalStateTransition
from coordinator_kit.topic import TopicPartition

S = MemberState


def tps(*numbers: int, topic: str = "orders") -> set[TopicPartition]:
    return {TopicPartition(topic, n) for n in numbers}


class Recorder:
    """A transport in front of the cluster's network that keeps what one consumer sends."""

    def __init__(self, network) -> None:
        self.network = network
        self.sent: list[tuple[int, str, object]] = []

    def send(self, client, broker, api, call, on_response, **kw) -> None:
        request = getattr(call, "request", None)
        if request is None and call.__closure__:
            for cell in call.__closure__:
                if type(cell.cell_contents).__name__.endswith("Request"):
                    request = cell.cell_contents
        self.sent.append((client.scheduler.now, api, request))
        self.network.send(client, broker, api, call, on_response, **kw)

    def find_coordinator(self, *args) -> None:
        self.network.find_coordinator(*args)

    def heartbeats(self):
        return [(t, r) for t, api, r in self.sent if api == "ConsumerGroupHeartbeat"]


def cluster(**kw) -> Cluster:
    return Cluster(brokers=3, topics={"orders": 6}, trace_level=kw.pop("trace_level", "INFO"),
                   **kw)


def add(c: Cluster, name: str, record: bool = False, **config) -> AsyncConsumer:
    consumer = c.add_consumer(name, group_protocol="consumer", start=not record, **config)
    if record:
        consumer.transport = Recorder(c.network)
        consumer.start()
    return consumer


def lines(c: Cluster, client: str, level: str = "INFO") -> list[str]:
    return [line for line in c.log_lines(level) if f"clientId={client}," in line]


# -- config (ConsumerConfig.checkUnsupportedConfigs) ---------------------------------------------

def test_group_protocol_is_a_checked_config():
    assert ConsumerConfig("g").group_protocol == "classic"
    assert ConsumerConfig("g", group_protocol="CONSUMER").group_protocol == "consumer"
    with pytest.raises(ValueError, match="group.protocol: String must be one of "
                                         r"\(case insensitive\): CLASSIC, CONSUMER"):
        ConsumerConfig("g", group_protocol="kip848")
    with pytest.raises(ValueError, match="Invalid value 'sticky' for configuration "
                                         "group.remote.assignor"):
        ConsumerConfig("g", group_protocol="consumer", group_remote_assignor="sticky")
    assert ConsumerConfig.from_properties({"group.id": "g", "group.protocol": "consumer",
                                           "group.remote.assignor": "range"}
                                          ).group_remote_assignor == "range"


@pytest.mark.parametrize("given, refused", [
    ({"session_timeout_ms": 10000}, "session.timeout.ms"),
    ({"heartbeat_interval_ms": 3000}, "heartbeat.interval.ms"),  # Kafka's default, given
    ({"partition_assignment_strategy": ["range"]}, "partition.assignment.strategy"),
    ({"heartbeat_interval_ms": 1000, "session_timeout_ms": 10000,
      "partition_assignment_strategy": ["range"]},
     "partition.assignment.strategy, heartbeat.interval.ms, session.timeout.ms"),
])
def test_classic_only_settings_are_refused_with_kafkas_message(given, refused):
    with pytest.raises(ValueError, match=f"^{refused} cannot be set when "
                                         f"group.protocol=CONSUMER$"):
        ConsumerConfig.of(group_id="g", group_protocol="consumer", **given)


def test_remote_assignor_is_refused_with_the_classic_protocol():
    with pytest.raises(ValueError, match="^group.remote.assignor cannot be set when "
                                         "group.protocol=CLASSIC$"):
        ConsumerConfig.from_properties({"group.id": "g", "group.remote.assignor": "uniform"})
    with pytest.raises(ValueError, match="kafka-python speaks the classic protocol only"):
        ConsumerConfig("g", group_protocol="consumer", client_style="kafka-python")


def test_the_config_picks_the_consumer_class_like_kafkas_delegate_creator():
    c = cluster()
    assert type(c.add_consumer("classic")) is Consumer
    modern = add(c, "modern")
    assert type(modern) is AsyncConsumer and modern.state is S.UNSUBSCRIBED


# -- the state table (MemberState's previousValidStates) ------------------------------------------

KAFKA_PREVIOUS = {
    S.STABLE: {S.JOINING, S.ACKNOWLEDGING, S.RECONCILING},
    S.RECONCILING: {S.STABLE, S.JOINING, S.ACKNOWLEDGING, S.RECONCILING},
    S.ACKNOWLEDGING: {S.RECONCILING},
    S.FATAL: {S.JOINING, S.STABLE, S.RECONCILING, S.ACKNOWLEDGING, S.PREPARE_LEAVING,
              S.LEAVING, S.UNSUBSCRIBED},
    S.FENCED: {S.JOINING, S.STABLE, S.RECONCILING, S.ACKNOWLEDGING, S.PREPARE_LEAVING,
               S.LEAVING},
    S.JOINING: {S.FENCED, S.UNSUBSCRIBED, S.STALE},
    S.PREPARE_LEAVING: {S.JOINING, S.STABLE, S.RECONCILING, S.ACKNOWLEDGING, S.UNSUBSCRIBED},
    S.LEAVING: {S.PREPARE_LEAVING},
    S.UNSUBSCRIBED: {S.PREPARE_LEAVING, S.LEAVING, S.FENCED},
    S.STALE: {S.LEAVING},
}


@pytest.mark.parametrize("target", list(S), ids=str)
def test_member_states_are_kafkas(target):
    for source in S:
        assert MEMBER_STATES.can_transition(source, target) == (source in KAFKA_PREVIOUS[target])
    assert MEMBER_STATES.initial is S.UNSUBSCRIBED


def test_an_illegal_transition_names_both_states():
    with pytest.raises(IllegalStateTransition, match="UNSUBSCRIBED.*STABLE"):
        MEMBER_STATES.check(S.UNSUBSCRIBED, S.STABLE)


# -- joining, heartbeats -----------------------------------------------------------------------

def test_joins_with_epoch_0_then_heartbeats_at_the_brokers_interval_with_partial_requests():
    c = cluster()
    a = add(c, "a", record=True)
    c.run_for(30_000)
    assert a.state is S.STABLE and a.member_epoch == 1 and a.owned == tps(*range(6))
    hbs = a.transport.heartbeats()
    first = hbs[0][1]
    # HeartbeatState.buildRequestData: everything when joining
    assert (first.member_id, first.member_epoch, first.rebalance_timeout_ms,
            first.subscribed_topic_names, first.topic_partitions) == ("", 0, 300000,
                                                                      ("orders",), ())
    ack = hbs[1][1]  # the acknowledgement: only the owned partitions changed
    assert ack.member_epoch == 1 and ack.member_id == a.member_id
    assert ack.subscribed_topic_names is None and ack.rebalance_timeout_ms == -1
    assert [sorted(t.partitions) for t in ack.topic_partitions] == [list(range(6))]
    steady = [r for _, r in hbs[2:]]
    assert steady and all(r.topic_partitions is None and r.subscribed_topic_names is None
                          for r in steady)
    # group.consumer.heartbeat.interval.ms (5 s), the interval every response carries, from
    # the response (HeartbeatRequestState.resetTimer): 5 s plus the round trip
    times = [t for t, _ in hbs[1:]]
    assert all(5000 < b - a_ <= 5020 for a_, b in zip(times, times[1:]))
    assert a.heartbeat_interval_ms == 5000
    assert any("transitioned from UNSUBSCRIBED to JOINING" in line for line in lines(c, "a"))


def test_a_second_member_gets_partitions_only_after_the_first_revokes_them():
    c = cluster()
    a = add(c, "a")
    c.run_for(10_000)
    got: dict[TopicPartition, list[int]] = {}
    a.on_records = lambda tp, start, end: got.setdefault(tp, []).append(c.scheduler.now)
    b = add(c, "b")
    c.run_for(20_000)
    assert a.owned | b.owned == tps(*range(6)) and not a.owned & b.owned
    revoked = [call for call in a.listener_calls if call.callback == "onPartitionsRevoked"]
    assigned = [call for call in b.listener_calls
                if call.callback == "onPartitionsAssigned" and call.partitions]
    assert len(revoked) == 1 and len(assigned) == 1
    assert set(revoked[0].partitions) == b.owned == set(assigned[0].partitions)
    assert assigned[0].ts > revoked[0].ts  # only once a has acknowledged the revocation
    # no global barrier: a consumed the partitions it keeps all along (every poll)
    for tp in a.owned:
        polls = [t for t in got[tp] if t >= b.listener_calls[0].ts]
        assert polls and max(y - x for x, y in zip(polls, polls[1:])) <= 200
    # it committed before revoking, so b starts where a stopped
    committed = c.committed_offsets()
    for tp in b.owned:
        assert committed[(tp.topic, tp.partition)] > 0


def test_reconciliation_commits_then_revokes_then_assigns():
    c = cluster()
    a = add(c, "a", record=True)
    c.run_for(10_000)
    add(c, "b")
    c.run_for(10_000)
    revoke_at = next(call.ts for call in a.listener_calls
                     if call.callback == "onPartitionsRevoked")
    commits = [t for t, api, _ in a.transport.sent if api == "OffsetCommit" and t <= revoke_at]
    reconciling = next(line for line in lines(c, "a")
                       if "Reconciling assignment with local epoch 1" in line)
    assert commits and "Revoked partitions (owned - assigned):     [orders-3, orders-4, " \
        "orders-5]" in reconciling
    sent = [r for t, api, r in a.transport.sent if api == "OffsetCommit"]
    assert all(r.generation_id_or_member_epoch == 1 and r.member_id == a.member_id
               and r.version >= 9 for r in sent[:len(commits)])


# -- faults ----------------------------------------------------------------------------------

def test_a_crashed_members_partitions_move_after_the_session_timeout():
    c = cluster()
    a, b = add(c, "a"), add(c, "b")
    c.run_for(15_000)
    mine = set(a.owned)
    last = a.last_heartbeat_sent
    c.crash("a")
    c.run_until(lambda: mine <= b.owned, limit_ms=120_000)
    gained = next(call.ts for call in b.listener_calls
                  if call.callback == "onPartitionsAssigned" and set(call.partitions) & mine)
    # group.consumer.session.timeout.ms (45 s), then b's next heartbeat (5 s) brings them
    assert last + 45_000 <= gained <= last + 45_000 + 5_000 + 200
    assert any("Member " + a.member_id + " in group group-1 has failed" in line
               or "session expired" in line for line in c.log_lines("INFO"))


def test_a_coordinator_move_keeps_the_assignment():
    c = cluster()
    a, b = add(c, "a"), add(c, "b")
    c.run_for(15_000)
    before = {x.name: (x.member_id, x.member_epoch, set(x.owned)) for x in (a, b)}
    calls = len(a.listener_calls) + len(b.listener_calls)
    c.move_coordinator("group-1")
    c.run_for(30_000)
    assert {x.name: (x.member_id, x.member_epoch, set(x.owned)) for x in (a, b)} == before
    assert len(a.listener_calls) + len(b.listener_calls) == calls
    assert a.state is S.STABLE and b.state is S.STABLE
    assert any("is incorrect. Will attempt to find the coordinator again" in line
               or "Rediscovery will be attempted" in line for line in lines(c, "a"))


def test_a_fenced_member_loses_its_partitions_and_rejoins_with_epoch_0():
    c = cluster()
    a = add(c, "a", record=True)
    b = add(c, "b")
    c.run_for(15_000)
    member, mine = a.member_id, set(a.owned)
    c.cut_off("a")
    c.run_for(60_000)  # fenced by the broker's session timeout meanwhile
    assert mine <= b.owned
    sent = len(a.transport.sent)
    c.cut_off("a", False)
    c.run_for(20_000)
    rejoin = next(r for _, api, r in a.transport.sent[sent:]
                  if api == "ConsumerGroupHeartbeat" and r.member_epoch == 0)
    assert rejoin.member_id == member and rejoin.topic_partitions == ()
    lost = [call for call in a.listener_calls if call.callback == "onPartitionsLost"]
    assert [set(call.partitions) for call in lost] == [mine]
    assert a.state is S.STABLE and a.member_epoch > 2 and not a.owned & b.owned
    text = "\n".join(lines(c, "a"))
    assert f"failed because member {member} is unknown." in text
    assert "transitioned from STABLE to FENCED" in text and \
        "transitioned from FENCED to JOINING" in text


def test_dropped_heartbeats_and_a_long_pause_end_in_fencing_and_a_rejoin():
    for fault in ("drop", "pause"):
        c = cluster()
        a, b = add(c, "a"), add(c, "b")
        c.run_for(15_000)
        if fault == "drop":
            c.drop_heartbeats("a")
            c.run_for(60_000)
            c.drop_heartbeats("a", False)
        else:
            c.pause("a", 60_000)
            c.run_for(60_000)
        c.run_for(30_000)
        assert a.state is S.STABLE and b.state is S.STABLE, fault
        assert a.owned and b.owned and not a.owned & b.owned, fault
        assert any(call.callback == "onPartitionsLost" for call in a.listener_calls), fault


def test_leave_sends_epoch_minus_1_and_a_static_member_minus_2():
    c = cluster()
    a = add(c, "a", record=True)
    b = add(c, "b")
    c.run_for(15_000)
    mine = set(a.owned)
    c.leave("a")
    assert a.transport.heartbeats()[-1][1].member_epoch == -1
    assert a.state is S.UNSUBSCRIBED
    assert [call.callback for call in a.listener_calls][-1] == "onPartitionsRevoked"
    c.run_for(10_000)
    assert mine <= b.owned  # at once, not after a session timeout

    c = cluster()
    s = add(c, "s", record=True, group_instance_id="instance-s")
    t = add(c, "t", group_instance_id="instance-t")
    c.run_for(15_000)
    mine = set(s.owned)
    new = c.restart_consumer("s", down_ms=2_000)
    assert s.transport.heartbeats()[-1][1].member_epoch == -2
    c.run_for(20_000)
    assert new.owned == mine and not new.owned & t.owned  # the instance keeps its partitions


def test_the_poll_timeout_leaves_then_rejoins_on_the_next_poll():
    c = cluster()
    a = add(c, "a", record=True)
    b = add(c, "b")
    c.run_for(15_000)
    c.slow_poll("a", 310_000)
    c.run_for(320_000)
    text = "\n".join(lines(c, "a", "DEBUG"))
    assert "Consumer poll timeout has expired." in text
    leave = [r for _, r in a.transport.heartbeats() if r.member_epoch == -1]
    assert len(leave) == 1
    c.slow_poll("a", 100)
    c.run_for(330_000)
    assert "exceeded approximately by" in "\n".join(lines(c, "a", "WARN"))
    assert "transitioned from STALE to JOINING" in "\n".join(lines(c, "a"))
    assert a.state is S.STABLE and a.owned and b.owned


def test_a_failed_load_is_retried_until_the_coordinator_is_loaded():
    c = cluster(trace_level="DEBUG")
    a = add(c, "a")
    c.run_for(10_000)
    tp = c.partition_of("group-1")
    target = next(x for x in c.partitions[tp].isr if x != c.partitions[tp].leader_id)
    c.fail_next_load(tp.partition, target)
    c.move_coordinator(tp.partition, target)
    c.run_for(20_000)
    # the broker whose load failed answers NOT_COORDINATOR; the member looks the coordinator
    # up again no sooner than retry.backoff.ms after the last answer (RequestState backoff)
    retries = [line for line in lines(c, "a") if "is incorrect. Will attempt to find the "
               "coordinator again and retry in" in line]
    assert 20 < len(retries) <= 20_000 // 100 + 1
    c.move_coordinator("group-1")
    c.run_for(30_000)
    assert a.state is S.STABLE and a.owned == tps(*range(6)) and a.member_epoch == 1


def test_a_stale_member_epoch_commit_is_refused_and_retried_before_revocation():
    c = cluster(trace_level="DEBUG")
    a = add(c, "a")
    c.run_for(5_000)
    add(c, "b")
    c.run_for(15_000)
    epoch = a.member_epoch
    assert epoch == 2
    committed = dict(a.committed)
    a.membership.member_epoch = epoch - 1  # as if the epoch had moved on meanwhile
    a._commit(a._consumed_offsets(), auto=True)
    c.run_for(100)
    assert a.committed == committed  # refused: STALE_MEMBER_EPOCH
    assert any("with stale member epoch error. Last epoch sent: 1" in line
               for line in lines(c, "a", "ERROR"))
    results = []
    a.commit_before_revocation(results.append)  # retries STALE_MEMBER_EPOCH...
    a.membership.member_epoch = epoch  # ...with the latest epoch
    c.run_for(1_000)
    assert results == [None] and a.committed != committed


def test_a_fatal_heartbeat_error_stops_the_member():
    c = cluster(group_config={"group.consumer.max.size": 1})
    a = add(c, "a")
    c.run_for(5_000)
    b = add(c, "b", record=True)
    c.run_for(20_000)
    assert b.state is S.FATAL and b.fatal is Errors.GROUP_MAX_SIZE_REACHED
    assert len(b.transport.heartbeats()) == 1
    assert any("ConsumerGroupHeartbeatRequest failed due to GROUP_MAX_SIZE_REACHED" in line
               for line in lines(c, "b", "ERROR"))
    assert a.state is S.STABLE


def test_the_same_scenario_gives_the_same_log():
    def run() -> list[str]:
        c = cluster(trace_level="DEBUG")
        add(c, "a")
        add(c, "b")
        c.run_for(10_000)
        c.crash("a")
        c.run_for(60_000)
        return c.log_lines("DEBUG")
    assert run() == run()


def test_the_parser_recognises_every_line_the_consumer_writes():
    """The Java client's 4.x lines (logs.catalogue A-*), the multi-line "Reconciling
    assignment" record included, read back by the kit's log parser with their columns."""
    from coordinator_kit.logs.parse import parse_lines
    c = cluster(trace_level="DEBUG")
    a, b = add(c, "a"), add(c, "b")
    c.run_for(15_000)
    c.cut_off("a")
    c.run_for(60_000)
    c.cut_off("a", False)
    c.slow_poll("b", 310_000)
    c.run_for(320_000)
    c.slow_poll("b", 100)
    c.run_for(10_000)
    c.leave("a")
    c.run_for(5_000)
    written = [line for line in c.log_lines("DEBUG") if "[Consumer clientId=" in line]
    ids = {e.template_id for e in c.trace if e.source.startswith("client-") and e.message}
    assert {"A-TRANSITION", "A-RECONCILING", "A-HB-UNKNOWN", "A-POLL-TIMEOUT",
            "A-STALE-REJOIN", "A-RELEASE", "A-LEAVE-HB"} <= ids
    rows = list(parse_lines("\n".join(written).split("\n"), "kit.log"))
    assert [r["raw"] for kind, r in rows if kind != "event"] == []
    events = [r for _, r in rows]
    assert len(events) == len(written)
    reconcile = next(r for r in events if r["event"] == "reconciliation_started")
    assert reconcile["epoch"] == 0 and reconcile["raw"].count("\n\t") == 5
    assert f"\tMember:                                    {a.member_id}" in reconcile["raw"]
    joining = next(r for r in events if r["event"] == "member_state_changed")
    assert (joining["member"], joining["state"], joining["epoch"]) == ("<no ID>", "JOINING", 0)
    assert any(r["event"] == "heartbeat_failed_unknown_member" and r["member"] == a.member_id
               for r in events)


def test_the_live_member_diagram_draws_the_consumer_protocols_table():
    from coordinator_kit.viz import live
    c = cluster()
    add(c, "a")
    add(c, "b")
    c.run_for(15_000)
    c.cut_off("a")
    c.run_for(60_000)
    c.cut_off("a", False)
    c.run_for(10_000)
    dot = live.member_dot(c, "a", limit=None)
    assert 'digraph "ConsumerMembershipManager"' in dot
    assert "a (running): STABLE, epoch " in dot
    moves = live.member_transitions(c.trace, "a")
    assert [(m.old, m.new) for m in moves][:2] == [(S.UNSUBSCRIBED, S.JOINING),
                                                    (S.JOINING, S.RECONCILING)]
    assert (S.STABLE, S.FENCED) in [(m.old, m.new) for m in moves]
