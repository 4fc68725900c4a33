"""The centralised consumer coordinator drafted for Kafka 0.9 (never shipped), `eras.central`.

The behaviour checked is the draft's, from the Apache wiki pages "Central Consumer
Coordination" (coordinator side: register/confirm/reject, pings, stop-fetcher then
start-fetcher, bounded retries, ZooKeeper election and failover) and "Kafka 0.9 consumer
protocol" (consumer side: discovery, the connector's handlers, the lost-connection procedure).
Rule numbers C1-C18 and the reference run are those of docs/eras-central.md.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coordinator_kit.errors import IllegalStateTransition
from coordinator_kit.eras.api import FAULT_KINDS, Design, Fault, Scenario, end_offset
from coordinator_kit.eras.central import (CONSUMER_STATES, GROUP_PHASES, SETTINGS, CentralConfig,
                                          CentralDesign, ConsumerState, GroupPhase, build,
                                          range_assignment)
from coordinator_kit.eras.central.network import Message
from coordinator_kit.logs import TEMPLATES
from coordinator_kit.logs.parse import ParseCounts, parse_lines

G = "group-1"
P, F = GroupPhase, ConsumerState


def design(settings: dict | None = None, consumers=("consumer-1", "consumer-2", "consumer-3"),
           topics=None, **kw) -> CentralDesign:
    return build(Scenario("t", consumers={G: tuple(consumers)}, topics=topics or {"t": 6},
                          settings={"central": settings or {}}, **kw))


def events(d: CentralDesign, template_id: str) -> list:
    return [e for e in d.trace if e.template_id == template_id]


def at(d: CentralDesign, ms: int, fault: Fault | None = None) -> None:
    d.run_until(ms)
    if fault is not None:
        d.apply(fault)


def owners(d: CentralDesign) -> dict[str, list[int]]:
    g = d.group(G)
    return {c: [p for _, p in tps] for c, tps in sorted(g.target.items())}


# -- settings ----------------------------------------------------------------------------------

def test_defaults_are_the_documented_ones():
    c = CentralConfig()
    assert (c.session_timeout_ms, c.ping_interval_for(6000), c.ping_max_missed) == (6000, 2000, 3)
    assert (c.rebalance_max_retries, c.rebalance_backoff_ms, c.offsets_flush_interval_ms) == (
        4, 2000, 60000)
    assert (c.rebalance_handler_threads, c.coordinator_zk_session_timeout_ms,
            c.rediscovery_backoff_ms) == (1, 6000, 1000)
    assert (c.min_session_timeout_ms, c.max_session_timeout_ms) == (1000, 60000)
    assert c.rebalance_reply_timeout_ms is None and c.rebalance_failed_retry_ms is None
    assert (c.tag_rebalance_messages, c.close_on_fail, c.fail_fast, c.disconnect_is_failure,
            c.pause_pings_during_rebalance) == (True, True, False, True, False)
    assert set(c.to_properties()) == set(SETTINGS)


@pytest.mark.parametrize("props, message", [
    ({"rebalance.retries": 2}, "unknown central coordinator setting 'rebalance.retries'"),
    ({"session.timeout.ms": "6000"}, "session.timeout.ms"),
    ({"ping.max.missed": 0}, "ping.max.missed"),
    ({"close_on_fail": "yes"}, "close_on_fail"),
    ({"auto.offset.reset": "latest"}, "largest, smallest"),
    ({"min.session.timeout.ms": 9000, "max.session.timeout.ms": 8000}, "min.session.timeout.ms"),
    ({"rebalance.reply.timeout.ms": -1}, "rebalance.reply.timeout.ms"),
])
def test_bad_settings_are_refused_by_name(props, message):
    with pytest.raises(ValueError, match=message.replace(".", r"\.").replace("(", r"\(")):
        CentralConfig.from_properties(props)


def test_a_design_takes_its_settings_from_the_scenario():
    d = design({"rebalance.max.retries": 2, "brokers": 5})
    assert d.config.rebalance_max_retries == 2 and len(d.brokers) == 5
    with pytest.raises(ValueError, match="unknown central coordinator setting"):
        design({"zookeeper.session.timeout.ms": 6000})


# -- the state tables --------------------------------------------------------------------------

@pytest.mark.parametrize("table, allowed, refused", [
    (GROUP_PHASES, [(P.STABLE, P.STOPPING), (P.STOPPING, P.STARTING), (P.STARTING, P.STABLE),
                    (P.STOPPING, P.BACKOFF), (P.BACKOFF, P.STOPPING),
                    (P.STARTING, P.REBALANCE_FAILED), (P.REBALANCE_FAILED, P.STOPPING)],
     [(P.STABLE, P.STARTING), (P.STOPPING, P.STABLE), (P.BACKOFF, P.STARTING),
      (P.REBALANCE_FAILED, P.STARTING), (P.STABLE, P.BACKOFF)]),
    (CONSUMER_STATES, [(F.DISCOVERING, F.REGISTERING), (F.REGISTERING, F.IDLE),
                       (F.IDLE, F.STOPPED), (F.STOPPED, F.FETCHING), (F.FETCHING, F.LOST),
                       (F.LOST, F.DISCOVERING), (F.REGISTERING, F.DISCOVERING)],
     [(F.DISCOVERING, F.FETCHING), (F.LOST, F.REGISTERING), (F.DISCOVERING, F.LOST),
      (F.REGISTERING, F.FETCHING), (F.STOPPED, F.REGISTERING)]),
], ids=["group", "consumer"])
def test_state_tables_allow_and_refuse(table, allowed, refused):
    for a, b in allowed:
        table.check(a, b)
    for a, b in refused:
        with pytest.raises(IllegalStateTransition, match=f"{a.name}.*{b.name}"):
            table.check(a, b)


def test_every_move_a_run_makes_is_in_the_tables():
    """The code checks each move; the trace's moves are all edges of the tables."""
    d = design()
    at(d, 10_500, Fault(10_500, "pause", "consumer-2", 10_000))
    at(d, 40_000)
    group_edges = {(e.source.value, e.target.value) for e in GROUP_PHASES.edges()}
    moves = [e.fields for e in d.trace.of_kind("central_consumer_state")]
    assert moves and all((m["from"], m["to"]) in {(e.source.value, e.target.value)
                                                  for e in CONSUMER_STATES.edges()}
                         for m in moves)
    phases = [e.fields["phase"] for e in d.trace.of_kind("central_group_phase")]
    assert phases[:3] == ["STOPPING", "STARTING", "STABLE"]
    assert all((a, b) in group_edges for a, b in zip(["STABLE"] + phases, phases))


# -- the contract ------------------------------------------------------------------------------

def test_it_is_an_eras_design():
    d = design()
    assert isinstance(d, Design) and d.name == "central"
    at(d, 1_000)
    assert d.settled(G)
    fetching = d.fetching(G)
    assert sorted(fetching) == [("t", p) for p in range(6)]
    assert all(len(v) == 1 for v in fetching.values())
    assert d.rebalance_rounds(G) == 1 and d.coordination_messages() > 0
    assert d.log_lines("INFO") and all("DEBUG" not in line[:40] for line in d.log_lines("INFO"))


@pytest.mark.parametrize("kind", sorted(FAULT_KINDS))
def test_every_fault_kind_is_accepted_and_the_group_settles(kind):
    d = design()
    if kind == "partitions":                    # the topic grows (rule C6)
        at(d, 5_000, Fault(5_000, kind, "t", count=8))
        at(d, 60_000)
        assert d.settled(G) and len(d.fetching(G)) == 8
        return
    at(d, 5_000, Fault(5_000, kind, None if kind == "coordinator" else
                       ("consumer-4" if kind == "join" else "consumer-2"),
                       None if kind in ("crash", "leave", "join") else 3_000))
    at(d, 60_000)
    assert d.settled(G), kind


def test_range_assignment_is_kafka_08s():
    """0.8's range assignment: consumers sorted as strings (c-10 before c-2)."""
    out = range_assignment({"c-1": ("t",), "c-10": ("t",), "c-2": ("t",)}, {"t": 7})
    assert out == {"c-1": [("t", 0), ("t", 1), ("t", 2)], "c-10": [("t", 3), ("t", 4)],
                   "c-2": [("t", 5), ("t", 6)]}


# -- the reference run: one consumer's long GC pause ------------------------------------------

def test_reference_run_a_10s_gc_pause():
    """Defaults, one topic of 6 partitions, three consumers; consumer-2 answers the ping
    near 10 s, freezes at 10.5 s for 10 s: three missed pings, failed at 18 s, a stop/start
    round without it, then, when it wakes and re-registers, a second round back to the first
    layout. Records it processed after its last ping, and the chunks it held, are processed
    twice (no fencing in the draft)."""
    d = design()
    at(d, 1_000)
    assert owners(d) == {"consumer-1": [0, 1], "consumer-2": [2, 3], "consumer-3": [4, 5]}
    assert d.group(G).generation == 1 and d.rebalance_rounds(G) == 1
    at(d, 10_500, Fault(10_500, "pause", "consumer-2", 10_000))
    pings_to_c2 = [e.ts for e in events(d, "CC-PING") if e.fields["member"] == "consumer-2"]
    assert pings_to_c2 == [2_003, 4_003, 6_003, 8_003, 10_003]   # every 2 s from registration
    at(d, 18_100)
    missed = [(e.ts, e.fields["missed"]) for e in events(d, "CC-PING-MISSED")]
    assert missed == [(14_003, 1), (16_003, 2), (18_003, 3)]
    failed = events(d, "CC-FAILED")
    assert [(e.ts, e.fields["member"], e.fields["reason"]) for e in failed] == [
        (18_003, "consumer-2", "3 pings unanswered")]
    assert owners(d) == {"consumer-1": [0, 1, 2], "consumer-3": [3, 4, 5]}
    assert d.group(G).generation == 2
    assert [e.ts for e in events(d, "CC-STABLE")] == [7, 18_007]
    # p2 and p3 restart from consumer-2's offsets of its 10 s ping (990 = what it had processed)
    start = [e for e in events(d, "CX-START") if e.ts > 18_000]
    assert "t-2=990" in start[0].fields["partitions"] and "t-3=990" in start[1].fields["partitions"]
    # I1 broken while consumer-2 sleeps: it still holds p2/p3 (fetchers "running", a chunk
    # buffered), and the new owners fetch them too
    assert d.fetching(G)[("t", 2)] == {"consumer-1", "consumer-2"}
    assert d.fetching(G)[("t", 3)] == {"consumer-2", "consumer-3"}
    at(d, 20_499)
    assert d.fetching(G)[("t", 2)] == {"consumer-1", "consumer-2"}
    dup_before_wake = d.ledger.duplicates
    assert d.ledger.by_consumer.get("consumer-2", 0) == 0
    at(d, 20_500)
    # on wake the application runs first: it processes the chunk it held for p2 and p3
    assert d.ledger.by_consumer["consumer-2"] == 20      # [1040, 1050) of each, already done
    lost = events(d, "CX-LOST")
    assert [(e.ts, e.source, e.fields["reason"]) for e in lost] == [
        (20_500, "consumer-2", "socket closed")]
    at(d, 21_000)
    registered = [e.ts for e in events(d, "CC-REGISTERED") if e.fields["member"] == "consumer-2"]
    assert registered[-1] == 20_503
    assert owners(d) == {"consumer-1": [0, 1], "consumer-2": [2, 3], "consumer-3": [4, 5]}
    assert d.group(G).generation == 3 and d.rebalance_rounds(G) == 3
    assert [e.ts for e in events(d, "CC-STABLE")] == [7, 18_007, 20_507]
    # two full stop/start rounds for one pause: both stop consumer-1 and consumer-3
    stops = [(e.ts, e.source) for e in events(d, "CX-STOP") if e.ts > 10_000]
    assert stops == [(18_004, "consumer-1"), (18_004, "consumer-3"), (20_504, "consumer-1"),
                     (20_504, "consumer-2"), (20_504, "consumer-3")]
    # duplicates: [990, 1040) of p2 and p3 processed again by their new owners (50 + 50),
    # plus the 2 x 10 consumer-2 processed on wake
    assert dup_before_wake == 100 and d.ledger.duplicates == 120
    assert d.settled(G) and all(len(v) == 1 for v in d.fetching(G).values())


def test_reference_run_without_close_on_fail_learns_from_silence():
    """With the socket left open, consumer-2 learns on wake from its `silence` timer (it last
    heard the coordinator at its 10 s ping): the same two rounds."""
    d = design({"close_on_fail": False})
    at(d, 10_500, Fault(10_500, "pause", "consumer-2", 10_000))
    at(d, 21_000)
    (lost,) = events(d, "CX-LOST")
    assert lost.ts == 20_500 and lost.fields["reason"].startswith(
        "no request from the coordinator for 104")
    assert d.group(G).generation == 3 and d.rebalance_rounds(G) == 3 and d.settled(G)


# -- the coordinator's rules -------------------------------------------------------------------

def test_c1_registration_confirms_arms_pings_and_queues_a_rebalance():
    d = design(consumers=("consumer-1",))
    at(d, 10)
    (reg,) = events(d, "CC-REGISTERED")
    assert reg.fields["session_ms"] == 6000 and reg.ts == 3
    assert [e.ts for e in events(d, "CC-QUEUED")] == [3]
    assert d.consumers["consumer-1"].state is F.FETCHING
    at(d, 6_100)
    assert [e.ts for e in events(d, "CC-PING")] == [2_003, 4_003, 6_003]


def test_c2_invalid_registration_is_rejected_and_the_consumer_retries():
    d = design({"session.timeout.ms": 500})
    at(d, 2_500)
    rejected = events(d, "CC-REJECTED")
    assert rejected and "session timeout 500 ms outside [1000, 60000]" in rejected[0].fields[
        "reason"]
    assert {e.source for e in events(d, "CX-REJECTED")} == set(d.consumers)
    assert all(c.state in (F.DISCOVERING, F.REGISTERING) for c in d.consumers.values())
    assert d.group(G) is None                          # nothing recorded
    assert len(events(d, "CC-REJECTED")) >= 6          # retried after rediscovery.backoff.ms


def test_c2_an_id_held_by_a_live_member_is_rejected():
    d = design()
    at(d, 1_000)
    c2 = d.consumers["consumer-2"]
    d.network.connect(c2, 0, Message("RegisterConsumer", {
        "group": G, "consumer": "consumer-2", "topics": ("t",), "session_timeout_ms": 6000,
        "auto_commit": True}))
    at(d, 1_010)
    (e,) = events(d, "CC-REJECTED")
    assert e.fields["reason"] == "consumer id consumer-2 is held by a live member"
    assert d.settled(G)


def test_c5_ping_replies_fill_the_offset_cache_for_owned_partitions_only():
    d = design()
    at(d, 2_100)
    coordinator = d.coordinator
    assert coordinator.offsets_cache[(G, ("t", 0))] == 190      # consumer-1's 2 s ping
    m = coordinator.groups[G].members["consumer-1"]
    coordinator.receive(m.conn, Message("PingResponse", {"offsets": {("t", 5): 7}}))
    assert coordinator.offsets_cache[(G, ("t", 5))] != 7
    assert m.missed == 0 and not m.outstanding


def test_c6_more_partitions_rebalance_every_group_on_the_topic():
    d = design()
    at(d, 1_000)
    d.add_partitions("t", 9)
    at(d, 1_100)
    (e,) = events(d, "CC-TOPIC")
    assert e.fields["count"] == 9 and e.fields["groups"] == G
    assert owners(d) == {"consumer-1": [0, 1, 2], "consumer-2": [3, 4, 5],
                         "consumer-3": [6, 7, 8]}
    assert d.rebalance_rounds(G) == 2 and d.settled(G)


def test_c7_c8_a_registration_during_a_rebalance_waits_and_causes_a_second_round():
    """A consumer that registers while a round runs is confirmed but idle; the pending flag
    gives a second full round after the first (no joining a running round)."""
    d = design()
    at(d, 1_000, Fault(1_000, "slow", "consumer-1", 5_000))
    at(d, 10_000, Fault(10_000, "join", "consumer-4"))    # round 2 (slow stop of consumer-1)
    at(d, 10_500, Fault(10_500, "join", "consumer-5"))    # registers during round 2
    at(d, 10_600)
    assert d.group(G).phase is P.STOPPING and d.group(G).pending
    assert d.consumers["consumer-5"].state is F.IDLE
    assert [e.fields["reason"] for e in events(d, "CC-PENDING")] == [
        "consumer consumer-5 registered"]
    at(d, 30_000)
    assert d.rebalance_rounds(G) == 3 and d.settled(G)
    assert sorted(owners(d)) == ["consumer-1", "consumer-2", "consumer-3", "consumer-4",
                                 "consumer-5"]


def test_c9_one_handler_thread_rebalances_one_group_at_a_time():
    d = CentralDesign({"t": 4, "u": 4})
    d.add_consumer("a-1", "a", ("t",))
    d.add_consumer("b-1", "b", ("u",))
    at(d, 1_000, Fault(1_000, "slow", "a-1", 5_000))
    at(d, 2_000)
    d.add_consumer("a-2", "a", ("t",))
    at(d, 2_010)
    d.add_consumer("b-2", "b", ("u",))
    at(d, 2_100)
    assert d.group("a").phase is P.STOPPING                 # waiting for a-1's batch
    assert d.group("b").phase is P.STABLE and d.group("b").queued
    at(d, 20_000)
    assert d.settled("a") and d.settled("b")
    a_done = [e.ts for e in events(d, "CC-STABLE") if e.fields["group"] == "a"][-1]
    b_start = [e.ts for e in events(d, "CC-ATTEMPT") if e.fields["group"] == "b"][-1]
    assert b_start >= a_done


def test_c10_a_group_whose_consumers_all_left_has_nothing_to_assign():
    d = design(consumers=("consumer-1",))
    at(d, 1_000, Fault(1_000, "leave", "consumer-1"))
    at(d, 1_100)
    assert [e.ts for e in events(d, "CC-EMPTY")] == [1_001]
    assert d.group(G).phase is P.STABLE and d.group(G).target == {}
    assert d.settled(G)


def test_c13_c18_bounded_retries_end_in_rebalance_failed_and_the_consumers_hear_of_it():
    """A stop that takes longer than the reply timeout fails that member; with one attempt
    allowed the coordinator gives up (ERROR), the others stay stopped and learn it from the
    next ping; the failed member's re-registration is the next trigger (C18)."""
    d = design({"rebalance.max.retries": 1, "close_on_fail": False,
                "disconnect_is_failure": False})
    at(d, 1_000, Fault(1_000, "slow", "consumer-2", 10_000))
    at(d, 5_000, Fault(5_000, "join", "consumer-4"))
    at(d, 11_100)
    (timeout,) = events(d, "CC-TIMEOUT")
    assert timeout.ts == 11_003 and timeout.fields["members"] == "consumer-2"
    (gave_up,) = events(d, "CC-REBALANCE-FAILED")
    assert gave_up.level == "ERROR" and gave_up.fields["attempts"] == 1
    assert d.group(G).phase is P.REBALANCE_FAILED and not d.settled(G)
    assert all(d.consumers[c].state is F.STOPPED for c in ("consumer-1", "consumer-3",
                                                          "consumer-4"))
    assert all(not v for v in d.fetching(G).values())       # nobody consumes anything
    at(d, 14_000)
    heard = {e.source for e in events(d, "CX-REBALANCE-FAILED")}
    assert heard == {"consumer-1", "consumer-3", "consumer-4"}
    assert all(d.consumers[c].error == "REBALANCE_FAILED" for c in heard)
    at(d, 40_000)
    # consumer-2 learns from its silence, re-registers, and that is the next trigger
    assert d.settled(G) and d.group(G).generation == 2
    assert all(d.consumers[c].error is None for c in heard)


def test_c13_a_reply_timeout_with_retries_left_backs_off_and_retries_without_the_member():
    d = design()
    at(d, 1_000, Fault(1_000, "slow", "consumer-2", 10_000))
    at(d, 5_000, Fault(5_000, "join", "consumer-4"))
    at(d, 13_100)
    phases = [e.fields["phase"] for e in d.trace.of_kind("central_group_phase") if e.ts > 5_000]
    assert phases[:2] == ["STOPPING", "BACKOFF"]
    attempts = [(e.ts, e.fields["attempt"]) for e in events(d, "CC-ATTEMPT")]
    assert (13_003, 2) in attempts
    at(d, 40_000)
    assert d.settled(G)


def test_c18_rebalance_failed_retry_timer_when_configured():
    d = design({"rebalance.max.retries": 1, "rebalance.failed.retry.ms": 1_000,
                "close_on_fail": False, "disconnect_is_failure": False,
                "ping.max.missed": 100})
    at(d, 1_000, Fault(1_000, "slow", "consumer-2", 10_000))
    at(d, 5_000, Fault(5_000, "join", "consumer-4"))
    at(d, 12_100)
    assert [e.fields["reason"] for e in events(d, "CC-QUEUED")][-1] == \
        "rebalance.failed.retry.ms passed"


def test_c14_fail_fast_restarts_the_attempt_at_once():
    """A member the running attempt waits for fails (here: it crashes mid-stop). By default
    the attempt still waits for its reply timer, then backs off; `fail_fast` restarts it at
    once."""
    def run(fail_fast: bool) -> list[tuple[int, int]]:
        d = design({"fail_fast": fail_fast})
        at(d, 1_000, Fault(1_000, "slow", "consumer-2", 5_000))
        at(d, 5_000, Fault(5_000, "join", "consumer-4"))     # stop waits for consumer-2's batch
        at(d, 5_500, Fault(5_500, "crash", "consumer-2"))
        at(d, 20_000)
        assert d.settled(G) and "consumer-2" not in owners(d)
        return [(e.ts, e.fields["attempt"]) for e in events(d, "CC-ATTEMPT") if e.ts > 5_000]

    assert run(False) == [(5_003, 1), (13_003, 2)]          # reply timer + backoff
    assert run(True) == [(5_003, 1), (5_501, 2)]


def test_c15_a_clean_shutdown_fails_the_member_at_once_or_after_three_pings():
    d = design()
    at(d, 5_000, Fault(5_000, "leave", "consumer-3"))
    at(d, 5_100)
    (f,) = events(d, "CC-FAILED")
    assert (f.ts, f.fields["reason"]) == (5_001, "socket closed")
    assert owners(d) == {"consumer-1": [0, 1, 2], "consumer-2": [3, 4, 5]}
    d = design({"disconnect_is_failure": False})
    at(d, 5_000, Fault(5_000, "leave", "consumer-3"))
    at(d, 12_100)
    (f,) = events(d, "CC-FAILED")
    assert f.fields["reason"] == "3 pings unanswered" and f.ts == 12_003


def test_c16_offsets_are_flushed_and_a_failover_reconsumes_what_came_after():
    """Consumed offsets reach ZooKeeper every offsets.flush.interval.ms (and at each
    rebalance); a failover restarts every partition there: 4.7's re-consumption."""
    d = design()
    at(d, 60_100)
    (flush,) = events(d, "CC-FLUSH")
    assert flush.ts == 60_000 and flush.fields["count"] == 6
    assert d.zk.get(f"/consumers/{G}/offsets/t/0") == 5_790      # the 58 s ping
    at(d, 90_000, Fault(90_000, "coordinator"))
    at(d, 120_000)
    # every partition: from 5790 again, up to what had been processed at 90 s (8990)
    assert d.ledger.duplicates == 6 * (8_990 - 5_790)
    assert d.settled(G)


def test_c17_failover_election_waits_for_the_dead_coordinators_session():
    d = design()
    at(d, 30_000, Fault(30_000, "coordinator"))
    at(d, 35_000)
    assert d.coordinator is None and d.zk.get("/consumers/coordinator") == 0
    assert all(c.state is F.DISCOVERING for c in d.consumers.values())
    assert all(not v for v in d.fetching(G).values())       # everyone stopped
    at(d, 40_000)
    (elected,) = [e for e in events(d, "CC-ELECTED") if e.ts > 0]
    assert elected.ts == 36_001 and elected.source == "coordinator-1"
    assert elected.fields["groups"] == 1                     # read from ZooKeeper
    assert d.group(G).generation == 2 and d.rebalance_rounds(G) == 2 and d.settled(G)


def test_failover_stops_every_group_and_every_consumer_registers_again():
    """One coordinator for all groups: its broker's death stops both groups at once."""
    d = CentralDesign({"t": 4, "u": 2})
    for name, group, topics in (("a-1", "a", ("t",)), ("a-2", "a", ("t",)),
                                ("b-1", "b", ("t", "u"))):
        d.add_consumer(name, group, topics)
    at(d, 20_000, Fault(20_000, "coordinator"))
    at(d, 20_010)
    assert all(not v for g in ("a", "b") for v in d.fetching(g).values())
    at(d, 40_000)
    again = {e.fields["member"] for e in events(d, "CC-REGISTERED") if e.ts > 20_000}
    assert again == {"a-1", "a-2", "b-1"}
    assert d.settled("a") and d.settled("b") and d.coordinator.broker_id == 1


def test_a_restarted_broker_joins_the_election_again():
    d = design({"brokers": 1})
    at(d, 10_000, Fault(10_000, "coordinator", duration_ms=2_000))
    at(d, 30_000)
    # the old session expires at 16 s; the restarted broker's watch fires one delay later
    assert [e.ts for e in events(d, "CC-ELECTED")] == [0, 16_001]
    assert d.settled(G)


def test_pause_pings_during_rebalance_switch():
    """Pings go on during a rebalance by default; the switch stops them (the 2014 draft's
    "pause failure detection while a join is pending")."""
    def pings_while_stopping(pause: bool) -> int:
        d = design({"pause_pings_during_rebalance": pause})
        at(d, 1_000, Fault(1_000, "slow", "consumer-2", 5_000))
        at(d, 5_000, Fault(5_000, "join", "consumer-4"))   # STOPPING until consumer-2's batch ends
        at(d, 12_000)
        assert d.settled(G)
        return len([e for e in events(d, "CC-PING") if 5_003 < e.ts < 6_100])

    assert pings_while_stopping(False) == 3 and pings_while_stopping(True) == 0


def test_untagged_replies_count_for_the_running_attempt():
    d = design({"tag_rebalance_messages": False})
    at(d, 1_000)
    coordinator = d.coordinator
    group = coordinator.groups[G]
    coordinator.request_rebalance(G, "test")
    at(d, 1_001)
    assert group.phase is P.STOPPING
    m = group.members["consumer-1"]
    coordinator.receive(m.conn, Message("StopFetcherResponse", {
        "rebalance_id": 1, "attempt": 1, "offsets": {("t", 4): 3}}))
    assert "consumer-1" not in group.awaiting and group.collected_offsets[("t", 4)] == 3
    d2 = design()
    at(d2, 1_000)
    d2.coordinator.request_rebalance(G, "test")
    at(d2, 1_001)
    g2 = d2.coordinator.groups[G]
    d2.coordinator.receive(g2.members["consumer-1"].conn, Message("StopFetcherResponse", {
        "rebalance_id": 1, "attempt": 1, "offsets": {}}))
    assert "consumer-1" in g2.awaiting                     # an older attempt's reply: dropped


# -- consumers ---------------------------------------------------------------------------------

def test_cut_from_the_coordinator_only_silence_then_missed_pings():
    """S11: cut off from the coordinator, the consumer stops when `silence` expires (6 s after
    its last ping), the coordinator fails it after three missed pings."""
    d = design()
    at(d, 10_000, Fault(10_000, "cut", "consumer-2", 15_000))
    at(d, 17_000)
    (lost,) = events(d, "CX-LOST")
    assert lost.ts == 14_004 and lost.source == "consumer-2"
    (failed,) = events(d, "CC-FAILED")
    assert failed.ts == 16_003
    assert ("t", 2) in d.fetching(G) and d.fetching(G)[("t", 2)] == {"consumer-1"}
    at(d, 30_000)
    assert d.settled(G) and d.group(G).generation == 3


def test_a_crash_closes_the_socket_and_its_partitions_move():
    d = design()
    at(d, 5_000, Fault(5_000, "crash", "consumer-1"))
    at(d, 5_100)
    assert owners(d) == {"consumer-2": [0, 1, 2], "consumer-3": [3, 4, 5]}
    assert d.settled(G)


def test_processing_model_one_poll_of_records_buffered():
    d = design(consumers=("consumer-1",))
    at(d, 10_000)
    c = d.consumers["consumer-1"]
    buffered = sum(e - s for _, s, e in c.buffer)
    assert buffered == 6 * 10                       # one chunk of 100 ms per partition
    assert d.ledger.records == c.processed == 6 * end_offset(9_900, 100) - 6 * 0
    assert d.ledger.duplicates == 0


# -- logs --------------------------------------------------------------------------------------

def test_central_templates_are_marked_as_invented_and_parse_back():
    ids = [t for t in TEMPLATES if t.startswith(("CC-", "CX-"))]
    assert len(ids) == 28
    d = design()
    at(d, 10_500, Fault(10_500, "pause", "consumer-2", 10_000))
    at(d, 90_000, Fault(90_000, "coordinator"))
    at(d, 120_000)
    logged = [e for e in d.trace if e.message is not None]
    counts = ParseCounts()
    rows = [row for _, row in parse_lines([e.line() for e in logged], "central.log", counts)]
    assert counts.recognised == len(logged) and counts.quarantined == 0
    for e, row in zip(logged, rows):
        assert row["template"] == e.template_id, e.line()
        assert row["event"] == e.kind and row["level"] == e.level
        if "group" in e.fields:
            assert row["group"] == e.fields["group"]
        if e.source.startswith("consumer"):
            assert row["source"] == "client"
    assert {e.template_id for e in logged} >= {"CC-ELECTED", "CC-REGISTERED", "CC-FAILED",
                                               "CC-STABLE", "CX-LOST", "CX-START", "CC-FLUSH"}


# -- determinism and fault schedules ---------------------------------------------------------

def test_the_same_scenario_gives_the_same_trace_and_lines():
    faults = [Fault(3_000, "pause", "consumer-1", 9_000), Fault(7_000, "cut", "consumer-3", 8_000),
              Fault(20_000, "coordinator", duration_ms=1_000), Fault(25_000, "join", "consumer-4")]

    def run():
        d = design(seed=7)
        for f in faults:
            at(d, f.at_ms, f)
        at(d, 60_000)
        return [(e.ts, e.kind, e.source, repr(e.fields)) for e in d.trace], d.log_lines("DEBUG")

    assert run() == run()


CONSUMERS = ("consumer-1", "consumer-2", "consumer-3")
_fault = st.one_of(
    st.builds(lambda at_ms, target, kind: Fault(at_ms, kind, target),
              st.integers(1, 40_000), st.sampled_from(CONSUMERS + ("consumer-4", "consumer-5")),
              st.sampled_from(["crash", "leave", "join"])),
    st.builds(lambda at_ms, target, kind, d: Fault(at_ms, kind, target, d),
              st.integers(1, 40_000), st.sampled_from(CONSUMERS),
              st.sampled_from(["pause", "cut"]), st.integers(1, 20_000)),
    st.builds(lambda at_ms, target, d: Fault(at_ms, "slow", target, d),
              st.integers(1, 40_000), st.sampled_from(CONSUMERS), st.integers(1, 2_000)),
    st.builds(lambda at_ms, d: Fault(at_ms, "coordinator", None, d),
              st.integers(1, 40_000), st.integers(1, 15_000)),
)


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_fault, max_size=6), st.integers(0, 3))
def test_fault_schedules_never_crash_and_end_settled_or_failed(faults, seed):
    """Any schedule of every fault kind: no exception, the ledger adds up, nothing is ever
    processed beyond the log end, and after the faults the group is settled, or the
    coordinator gave up (REBALANCE_FAILED, which the draft leaves until the next trigger)
    and every live member heard of it."""
    d = design(seed=seed)
    last = 0
    for f in sorted(faults, key=lambda f: f.at_ms):
        at(d, f.at_ms)
        if f.kind == "join" and f.target in d.consumers and not d.consumers[f.target].closed:
            continue                              # a running consumer cannot start twice
        if f.kind not in ("join", "coordinator") and f.target not in d.consumers:
            continue                              # never started: refused by name
        d.apply(f)
        last = max(last, f.at_ms + (f.duration_ms or 0))
    at(d, last + 120_000)
    assert d.ledger.records == sum(d.processed_by.values())      # restarts included
    assert 0 <= d.ledger.duplicates <= d.ledger.records
    assert sum(d.ledger.by_consumer.values()) == d.ledger.duplicates
    end = end_offset(d.scheduler.now, d.produce_rate_per_s)
    assert all(r[1] <= end for ranges in d.ledger._done.values() for r in ranges)
    group = d.group(G)
    if group is not None and group.phase is P.REBALANCE_FAILED:
        live = [c for c in d.consumers.values() if not c.closed and c.name in group.members]
        assert all(c.error == "REBALANCE_FAILED" for c in live)
    else:
        assert d.settled(G), [(c.name, c.state, c.closed) for c in d.consumers.values()]
        live = [c for c in d.consumers.values() if not c.closed]
        assert not live or all(len(v) == 1 for v in d.fetching(G).values())   # I1 and I4
