"""Recording: rewind, step back, fork and export a run, and get exactly the same trace.

The kit's runs are deterministic (virtual time, seeded randomness), so a recording is only a
start plus actions; checkpoints make going back cheap. Every test here compares a recorded run,
moved back and forth, with the same run made straight through without a recording: the trace
(every event, every Kafka log line) must be byte for byte the same.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coordinator_kit.cluster import Cluster
from coordinator_kit.recording import (ACTIONS, CheckpointError, Position, Recording,
                                       ReplayDiverged, important)
from coordinator_kit.scenarios import SCENARIOS, run_scenario
from faults import ACTIONS as FAULTS
from faults import apply_fault


def trace_rows(cluster: Cluster) -> list[tuple]:
    """Every trace event as comparable data (fields by repr: some hold objects)."""
    return [(e.seq, e.ts, e.kind, e.source, e.level, e.message,
             sorted((k, repr(v)) for k, v in e.fields.items()))
            for e in cluster.trace.events]


def state_digest(cluster: Cluster) -> tuple:
    """What a learner can see of a cluster at one instant, plus what will happen next."""
    sched = cluster.scheduler
    return (sched.now,
            tuple((h.when, h.name) for h in sched.pending()),
            tuple(sorted((n, tuple(sorted(c.describe().items()))) for n, c in
                         cluster.consumers.items())),
            repr(cluster.group("group-1")),
            tuple((str(tp), p.leader_id, tuple(p.isr), p.high_watermark)
                  for tp, p in sorted(cluster.partitions.items())),
            len(cluster.trace.events))


# -- byte-identical replays -----------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_scenario_recorded_with_a_checkpoint_every_move_replays_identically(name):
    """Checkpoints taken at every move (requests in flight, timers in lanes, writes parked
    until the high watermark...) restore into a cluster that continues exactly as the original:
    seeking back to every 100th move and running to the end gives the same trace."""
    straight = run_scenario(name)
    straight.run_for(20_000)
    rec = Recording.from_scenario(name, checkpoint_every=1)
    rec.run_for(20_000)
    assert trace_rows(rec.cluster) == trace_rows(straight)
    end = rec.position
    for move in range(0, end.move, max(1, end.move // 7)):
        rec.seek_move(move)
        assert rec.position.move == move
        rec.run_to(end.time)
        assert rec.position == end
        assert trace_rows(rec.cluster) == trace_rows(straight)
    assert rec.restores >= 7


def test_seek_back_and_forward_with_faults_matches_a_straight_run():
    """A crash at 25 s, then back to 22 s and forward again: the crash is replayed at its move;
    the log lines are those of the straight run."""
    straight = run_scenario("second-joins")
    straight.run_for(5_000)
    straight.crash("consumer-1")
    straight.run_for(60_000)

    rec = Recording.from_scenario("second-joins")
    rec.run_for(5_000)
    rec.act("crash", "consumer-1")
    rec.run_for(60_000)
    assert rec.cluster.log_lines("DEBUG") == straight.log_lines("DEBUG")
    for t in (22_000, 70_000, 25_000, 84_999, 20_000):
        rec.seek(t)
        assert rec.position.time == t
        assert rec.cluster.consumer("consumer-1").crashed == (t >= 25_000)
    rec.run_to(85_000)
    assert trace_rows(rec.cluster) == trace_rows(straight)
    assert state_digest(rec.cluster) == state_digest(straight)


schedules = st.lists(
    st.tuples(st.integers(200, 30_000), st.sampled_from(FAULTS), st.integers(0, 5),
              st.integers(1_000, 70_000), st.sampled_from(["seek", "back", "none", "event"]),
              st.integers(0, 10_000)),
    min_size=1, max_size=6)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schedule=schedules, interval=st.sampled_from([7, 64, 500]))
def test_random_fault_schedules_rewound_at_random_replay_byte_for_byte(schedule, interval):
    """Random faults (tests/faults.py) made through a recording that is rewound, stepped back
    and sent to the next event between them give the same trace as the same faults made
    straight through; a replay that differed would raise ReplayDiverged."""
    straight = run_scenario("second-joins")
    rec = Recording.from_scenario("second-joins", checkpoint_every=interval)
    extra_a = extra_b = 10
    for delay, fault, who, ms, wander, back_ms in schedule:
        straight.run_for(delay)
        rec.run_for(delay)
        end = rec.position
        if wander == "seek":
            rec.seek(max(rec.start.time, end.time - back_ms))
        elif wander == "back":
            rec.step_back(1 + back_ms % 40)
        elif wander == "event":
            rec.seek(max(rec.start.time, end.time - back_ms))
            rec.next_event(limit_ms=max(1, end.time - rec.position.time))
        rec.run_to(end.time)
        if rec.position != end:  # the event jump stopped at the same time but earlier
            rec.seek_position(end)
        assert rec.position == end
        extra_a = apply_fault(straight, fault, who, ms, extra_a)
        extra_b = apply_fault(rec.cluster, fault, who, ms, extra_b,
                              do=lambda method, *args: rec.act(method, *args))
    straight.run_for(30_000)
    rec.run_for(30_000)
    assert trace_rows(rec.cluster) == trace_rows(straight)
    assert state_digest(rec.cluster) == state_digest(straight)


# -- stepping -------------------------------------------------------------------------------------

def test_step_back_then_forward_returns_the_same_state():
    rec = Recording.from_scenario("second-joins")
    rec.act("pause", "consumer-2", 50_000)
    rec.run_for(50_000)
    digests = [state_digest(rec.cluster)]
    for _ in range(25):
        rec.step_back()
        digests.append(state_digest(rec.cluster))
    for expected in reversed(digests[:-1]):
        assert rec.step()
        assert state_digest(rec.cluster) == expected


def test_a_step_is_one_scheduler_callback_or_one_action():
    rec = Recording.from_scenario("second-joins")
    pending = rec.cluster.scheduler.pending()[0]
    rec.step()
    assert rec.position.move == 1 and rec.cluster.scheduler.now == pending.when
    rec.act("crash", "consumer-1")
    assert rec.position.move == 2
    rec.step_back()  # undoes the crash, same millisecond
    assert rec.position.move == 1 and not rec.cluster.consumer("consumer-1").crashed


def test_next_event_stops_right_after_the_move_that_recorded_it():
    """After a crash the next events that matter are the coordinator's session expiry (45 s
    after the member's last heartbeat, GroupMetadataManager's heartbeat timer) and the
    rebalance it starts."""
    rec = Recording.from_scenario("second-joins")
    rec.act("crash", "consumer-1")
    assert rec.cluster.trace.events[-1].kind == "consumer_crashed"  # the action's own event
    expired = rec.next_event()
    assert expired is not None and expired.kind == "member_session_expired"
    assert rec.cluster.trace.events[-1].seq >= expired.seq
    assert rec.position.time == expired.ts
    member_id = rec.cluster.consumer("consumer-1").member_id
    assert expired.fields.get("member") == member_id or member_id in (expired.message or "")
    # everything the same move recorded is behind us; the rebalance it started too
    assert any(e.kind == "rebalance_started" for e in rec.cluster.trace.events[expired.seq:])
    back = rec.previous_event()
    assert back is not None and back.seq < expired.seq and important(back)


def test_next_event_gives_up_after_its_limit():
    rec = Recording.from_scenario("second-joins")
    assert rec.next_event(lambda e: e.kind == "never", limit_ms=5_000) is None
    assert rec.position.time == 25_000


# -- branches -------------------------------------------------------------------------------------

def test_acting_in_the_past_forks_and_keeps_the_old_branch():
    """A 10 s and a 50 s GC pause from the same instant: two branches side by side. The long
    pause outlasts session.timeout.ms (45 s), so only that branch has a new generation."""
    rec = Recording.from_scenario("second-joins")
    rec.act("pause", "consumer-1", 10_000)
    rec.run_for(70_000)
    main_rows = trace_rows(rec.cluster)
    rec.seek(20_000)
    rec.step_back()  # before the pause
    assert rec.position.move == 0
    rec.act("pause", "consumer-1", 50_000)
    assert rec.branch.name == "branch 2" and rec.branch.parent == "main"
    rec.run_for(70_000)
    assert set(rec.branches) == {"main", "branch 2"}
    short = rec.cluster_at("main", 80_000)
    long = rec.cluster  # live, branch 2
    assert short.group()["generation"] == 2
    assert long.group()["generation"] > 2
    assert trace_rows(short)[:len(main_rows)] == [r for r in main_rows if r[1] <= 80_000][:len(
        trace_rows(short))]
    # the old branch is untouched: switching back shows its run
    rec.switch("main", time=90_000)
    assert trace_rows(rec.cluster) == main_rows
    assert rec.branch.frontier.time == 90_000


def test_fork_explicitly_and_name_clashes_are_refused():
    rec = Recording.from_scenario("second-joins")
    rec.run_for(1_000)
    rec.fork("what if")
    with pytest.raises(ValueError, match="already a branch named 'what if'"):
        rec.fork("what if")
    with pytest.raises(KeyError, match="no branch named 'nope'"):
        rec.switch("nope")


def test_a_refused_action_leaves_no_trace():
    rec = Recording.from_scenario("second-joins")
    rec.run_for(500)
    before = (state_digest(rec.cluster), trace_rows(rec.cluster), rec.position)
    with pytest.raises(KeyError, match="no consumer named 'ghost'"):
        rec.act("crash", "ghost")
    rec.act("crash", "consumer-1")
    with pytest.raises(RuntimeError):
        rec.act("crash", "consumer-1")  # already crashed
    rec.step_back()
    assert (state_digest(rec.cluster), trace_rows(rec.cluster), rec.position) == before
    assert [a.name for a in rec.actions] == ["crash"]


def test_unknown_actions_and_bad_arguments_are_refused_by_name():
    rec = Recording.from_scenario("consumer-joins")
    with pytest.raises(ValueError, match="unknown action 'explode'"):
        rec.act("explode")
    with pytest.raises(TypeError, match="cannot be recorded"):
        rec.act("pause", "consumer-1", 1.5)
    with pytest.raises(ValueError, match="whole number of milliseconds"):
        rec.run_for(-1)
    with pytest.raises(ValueError, match="beyond what branch 'main' has computed"):
        rec.seek_move(10**9)
    with pytest.raises(ValueError, match="before the recording's start"):
        rec.seek(0)
    assert set(ACTIONS) >= {"crash", "pause", "move_coordinator", "stall_replica"}
    assert all(spec.hint.endswith(".") for spec in ACTIONS.values())


# -- export ---------------------------------------------------------------------------------------

def test_export_and_import_rebuild_every_branch():
    rec = Recording.from_scenario("second-joins", seed=3)
    rec.act("drop_heartbeats", "consumer-2", True)
    rec.run_for(30_000)
    rec.seek(30_000)
    rec.act("move_coordinator", "group-1")
    rec.run_for(5_000)
    doc = json.loads(json.dumps(rec.export()))
    again = Recording.from_export(doc)
    assert set(again.branches) == set(rec.branches)
    assert again.position == rec.position and again.branch.name == rec.branch.name
    assert trace_rows(again.cluster) == trace_rows(rec.cluster)
    for name in rec.branches:
        a, b = rec.branches[name], again.branches[name]
        assert a.frontier == b.frontier and a.actions == b.actions


def test_a_cluster_built_in_code_records_but_cannot_export():
    cluster = Cluster(seed=1)
    cluster.add_consumer("a")
    rec = Recording(cluster)
    rec.run_for(4_000)
    assert rec.cluster is cluster
    with pytest.raises(ValueError, match="cannot be written down"):
        rec.export()
    with pytest.raises(ValueError, match="not a recording export"):
        Recording.from_export({"format": "something else"})


# -- the live object and the self-check -----------------------------------------------------------

def test_the_cluster_object_survives_every_rewind():
    rec = Recording.from_scenario("second-joins", checkpoint_every=5)
    cluster = rec.cluster
    rec.run_for(10_000)
    rec.seek(21_000)
    assert rec.cluster is cluster
    consumer = cluster.consumer("consumer-1")
    assert consumer.cluster is cluster and consumer.scheduler is cluster.scheduler


def test_a_replay_that_differs_is_caught():
    """The self-check: a replay compares every event with the recorded one."""
    rec = Recording.from_scenario("second-joins", checkpoint_every=10)
    rec.run_for(10_000)
    events = rec.branch.events
    i = rec.branch.checkpoints[0].trace_len + 50  # made after the start, so replayed
    tampered = events[i]
    events[i] = type(tampered)(tampered.seq, tampered.ts + 1, tampered.kind, tampered.source,
                                 tampered.level, tampered.fields, tampered.template_id,
                                 tampered.logger, tampered.message)
    with pytest.raises(ReplayDiverged, match=f"diverged at trace event #{i}"):
        rec.seek(rec.start.time)
        rec.run_to(rec.frontier.time)


def test_python_logging_is_not_repeated_by_a_replay(caplog):
    rec = Recording.from_scenario("second-joins")
    with caplog.at_level("INFO", logger="org.apache.kafka"):
        rec.act("crash", "consumer-1")
        rec.run_for(60_000)
        first = len(caplog.records)
        rec.seek(20_000)
        rec.run_to(80_000)
    assert first > 0 and len(caplog.records) == first


def test_positions_name_moves_and_time():
    assert str(Position(1234, 56_789)) == "move 1,234 at 56,789 ms"


def test_a_cluster_holding_what_cannot_be_copied_is_refused_by_name():
    import socket

    cluster = run_scenario("second-joins")
    with socket.socket() as sock:
        cluster.consumer("consumer-1").on_state_change(lambda *_a: sock.send(b"x"))
        with pytest.raises(CheckpointError, match=r"cannot pickle 'socket' object.*"
                                                   r"Consumer.on_state_change"):
            Recording(cluster)
