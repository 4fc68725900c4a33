"""Lessons 03 (CoordinatorRuntime lifecycle) and 04 (offsets and failover): the helpers the
notebooks call, their exercise checks, and the notebooks' shape.

The scenario helpers are checked against the Kafka behaviour they demonstrate (the method is
named in each test; docs/kafka-classes.md has them all); each exercise check must accept the
right answer in every form it advertises, reject wrong ones with a hint that points at the
mistake, and report an unanswered exercise (`...`) without raising.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from coordinator_kit.errors import Errors
from coordinator_kit.group.records import GroupCoordinatorRecordSerde
from coordinator_kit.lessons import offsets_failover as of
from coordinator_kit.lessons import runtime_lifecycle as rl
from coordinator_kit.runtime import CoordinatorState
from coordinator_kit.runtime.sandbox import RuntimeSandbox

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
NB03 = NOTEBOOKS / "03_coordinator_runtime_lifecycle.ipynb"
NB04 = NOTEBOOKS / "04_offsets_and_failover.ipynb"


# --------------------------------------------------------------------------------------------
# Lesson 03 scenario helpers, against Kafka's CoordinatorRuntime


def test_steps_table_reproduces_the_worked_example_1_15():
    """Kafka's CoordinatorRuntimeTest.testScheduleWriteOp on a live, replicated partition:
    offsets, snapshots and completions."""
    sb = rl.loaded_sandbox()
    steps = rl.Steps(sb)
    w1 = rl.write(sb, "write#1", {"r1": "a", "r2": "b"})
    sb.scheduler.run_pending()
    steps.add("write#1", w1)
    sb.run_for(1)
    w2, w3 = rl.write(sb, "write#2", {"r3": "c"}), rl.write(sb, "write#3")
    sb.scheduler.run_pending()
    steps.add("write#2, write#3", w2, w3)
    sb.run_until(lambda: sb.describe()["last_committed_offset"] == 2)
    steps.add("HWM 2")
    sb.run_until(lambda: sb.describe()["last_committed_offset"] == 3)
    steps.add("HWM 3")
    w4 = rl.write(sb, "write#4")
    sb.scheduler.run_pending()
    steps.add("write#4", w4)
    t = steps.table
    assert t.column("lastWritten") == ["2", "3", "3", "3", "3"]
    assert t.column("lastCommitted") == ["0", "0", "2", "3", "3"]
    assert t.column("snapshots") == ["[0, 2]", "[0, 2, 3]", "[2, 3]", "[3]", "[3]"]
    assert t.column("parked") == ["@2: write#1", "@2: write#1; @3: write#2, write#3",
                                  "@3: write#2, write#3", "-", "-"]
    assert t.column("completed") == ["-", "-", "write#1", "write#2, write#3", "write#4"]


def test_reload_keeps_snapshots_at_the_hwm_and_at_each_batch_end_above_it():
    """CoordinatorLoaderImpl: after a load only snapshots >= HWM exist, one per batch end."""
    sb = rl.reload_with_tail([{"a": "1"}, {"b": "2"}], [{"x": "1"}, {"y": "2", "z": "3"},
                                                        {"w": "4"}])
    d = sb.describe()
    assert (d["last_written_offset"], d["last_committed_offset"]) == (6, 2)
    assert d["snapshots"] == [2, 3, 5, 6]
    assert d["epoch"] == 1 and d["state"] == "ACTIVE"
    # the replayed tail is in the latest state, not in the committed one
    shard = sb.leader().context(sb.tp()).coordinator.shard
    assert shard.snapshot() == {"a": "1", "b": "2", "w": "4", "x": "1", "y": "2", "z": "3"}
    assert shard.snapshot(2) == {"a": "1", "b": "2"}


def test_queued_loads_report_the_time_spent_in_the_loaders_scheduler():
    """CoordinatorLoaderImpl: one loader thread; the wait shows as 'spent in the scheduler'."""
    lines = rl.queued_loads(3, 50)
    assert len(lines) == 3
    waits = [int(ln.split(" where ")[1].split("ms")[0]) for ln in lines]
    took = [int(ln.split(" in ")[1].split("ms")[0]) for ln in lines]
    assert waits == [0, 51, 102] and took == [51, 102, 153]
    with pytest.raises(ValueError, match="partitions >= 1"):
        rl.queued_loads(0, 10)


def test_failed_batch_reverts_every_write_of_the_batch():
    """CoordinatorContext.failCurrentBatch: a failed append reverts to the batch's base offset and
    fails all its writes."""
    sb, futures = rl.failed_batch(2, ["a", "b", "c"])
    assert all(rl.error_of(f) is Errors.KAFKA_STORAGE_ERROR for f in futures)
    d = sb.describe()
    assert d["last_written_offset"] == 2 and d["snapshots"] == [2] and d["open_batch"] is None
    assert sb.leader().context(sb.tp()).coordinator.shard.snapshot() == {"c1": "ok", "c2": "ok"}


def test_request_errors_follow_the_context_state_not_a_queue():
    """withActiveContextOrThrow: LOADING answers COORDINATOR_LOAD_IN_PROGRESS; FAILED and unloaded
    NOT_COORDINATOR; nothing is queued for after the load."""
    assert rl.request_errors() == {"LOADING": Errors.COORDINATOR_LOAD_IN_PROGRESS,
                                   "FAILED": Errors.NOT_COORDINATOR,
                                   "unloaded": Errors.NOT_COORDINATOR, "ACTIVE": None}


def test_context_line_names_each_situation():
    sb = RuntimeSandbox()
    assert rl.context_line(sb, 0) == "broker 0  __consumer_offsets-0: no context"
    sb.runtimes[0].schedule_load_operation(sb.tp(), 0)
    assert rl.context_line(sb, 0).endswith("INITIAL (epoch -1)  no shard yet")
    sb.run_for(10)
    assert "ACTIVE (epoch 0)  lastWritten 0  lastCommitted 0  snapshots [0]" in \
        rl.context_line(sb, 0)
    failed = RuntimeSandbox()
    failed.leader().loader.fail_next_load(failed.tp())
    failed.start()
    failed.run_for(10)
    assert rl.context_line(failed).endswith("FAILED (epoch 0)  no shard")
    with pytest.raises(ValueError, match="no broker 7"):
        rl.context_line(sb, 7)


def test_log_table_marks_committed_records_and_tombstones():
    sb = rl.loaded_sandbox()
    sb.put("a", "1")
    sb.run_for(10)
    sb.delete("a")
    sb.run_for(10)
    rl.stall_followers(sb)
    sb.put("b", "2")
    sb.run_for(10)
    t = rl.log_table(sb.partition())
    assert t.column("value") == ["1", "null", "2"]
    assert t.column("committed") == ["yes", "yes", "no"]
    assert t.title == "__consumer_offsets-0 on broker 0: log end 3, high watermark 2"


def test_log_cursor_prints_only_what_is_new(capsys):
    sb = rl.loaded_sandbox()
    cursor = rl.LogCursor(sb.trace)
    cursor.show()
    assert capsys.readouterr().out == "(no new INFO lines)\n"
    sb.move_leader(0, to_broker=1)
    sb.run_for(10)
    lines = cursor.lines("INFO", match="Finished loading", advance=False)
    assert len(lines) == 1 and "[GroupCoordinator id=1]" in lines[0]
    cursor.show("INFO", match="Finished loading")
    assert capsys.readouterr().out == lines[0] + "\n"
    assert cursor.lines() == []


def _numbered(dot: str) -> list[tuple[int, str, str]]:
    """The numbered path of a live diagram: (number, source, target), in order."""
    out = []
    for a, b, label in re.findall(r'^  "([^"]+)" -> "([^"]+)" \[label="([^"]*)", color=', dot,
                                  flags=re.M):
        first = label.split("\\n")[0]
        if re.fullmatch(r"\d+(, \d+)*", first):
            out += [(int(n), a, b) for n in first.split(", ")]
    return sorted(out)


def test_context_diagram_numbers_the_contexts_moves():
    """CoordinatorState.canTransitionFrom: the diagram numbers the moves the context made
    (INITIAL -> LOADING -> ACTIVE, then ACTIVE -> CLOSED on the unload), since `since_ms`."""
    sb = rl.loaded_sandbox()
    assert rl.last_transition(sb.trace, 0) == (CoordinatorState.LOADING, CoordinatorState.ACTIVE)
    dot = rl.context_diagram(sb, 0).source
    assert '"ACTIVE" [style="filled,bold"' in dot
    assert _numbered(dot) == [(1, "INITIAL", "LOADING"), (2, "LOADING", "ACTIVE")]
    moved_at = sb.scheduler.now
    sb.move_leader(0, to_broker=1)
    sb.run_for(10)
    gone = rl.context_diagram(sb, 0).source  # unloaded: shown in the state it left in
    assert '"CLOSED" [style="filled,bold"' in gone and "broker 0, __consumer_offsets-0: CLOSED" \
        in gone
    assert _numbered(gone)[-1] == (3, "ACTIVE", "CLOSED")
    assert _numbered(rl.context_diagram(sb, 0, since_ms=moved_at).source) == \
        [(1, "ACTIVE", "CLOSED")]
    assert _numbered(rl.context_diagram(sb, 1).source) == \
        [(1, "INITIAL", "LOADING"), (2, "LOADING", "ACTIVE")]


def test_context_diagram_of_a_retried_load_numbers_failed_loading_active():
    """scheduleLoadOperation: a FAILED context loads again only at a higher epoch."""
    sb = RuntimeSandbox(brokers=3, seed=0)
    sb.leader().loader.fail_next_load(sb.tp())
    sb.start()
    sb.run_for(10)
    assert _numbered(rl.context_diagram(sb).source) == \
        [(1, "INITIAL", "LOADING"), (2, "LOADING", "FAILED")]
    retry_at = sb.scheduler.now
    sb.leader().schedule_load_operation(sb.tp(), sb.partition().elect_leader(0))
    sb.run_for(10)
    assert _numbered(rl.context_diagram(sb, since_ms=retry_at).source) == \
        [(1, "FAILED", "LOADING"), (2, "LOADING", "ACTIVE")]


def test_isr_checks_match_the_leaders_shrink():
    """ReplicaManager runs Partition.maybeShrinkIsr every replica.lag.time.max.ms / 2 from the
    broker's start; Replica.isCaughtUp: out when more than replica.lag.time.max.ms passed since
    lastCaughtUpTimeMs. A follower last caught up at 12 ms is still in sync at 30,000 ms
    (29,988 ms), out at 45,000 ms."""
    sb = rl.loaded_sandbox()
    sb.put("a", "1")
    sb.run_for(10)
    p = sb.partition()
    with pytest.raises(ValueError, match="still fetches"):
        rl.isr_checks(p, [2], sb.scheduler.now)
    p.stall_replica(2)
    sb.put("b", "2")
    checks = rl.isr_checks(p, [2], behind_from_ms=sb.scheduler.now)
    assert [(c.at_ms, dict(c.behind_ms), c.dropped) for c in checks] == \
        [(15_000, {2: 14_988}, ()), (30_000, {2: 29_988}, ()), (45_000, {2: 44_988}, (2,))]
    assert str(checks[1]) == ("ISR check at 30,000 ms: broker 2 last caught up 29,988 ms ago "
                              "(<= 30,000: stays in the ISR)")
    sb.run_until(lambda: p.isr == [0, 1])
    assert sb.scheduler.now == checks[-1].at_ms
    with pytest.raises(ValueError, match="not a follower"):
        rl.isr_checks(p, [0], 0)


def _stalled(cluster, group_id="group-1"):
    tp = cluster.partition_of(group_id)
    p = cluster.partitions[tp]
    for b in p.replicas:
        if b != p.leader_id:
            cluster.stall_replica(tp.partition, b)
    return rl.stall_timeline(cluster, group_id)


def test_stall_timeline_forecasts_the_try_it_panel_run():
    """The Try-it run of notebook 03 ("second-joins", both followers of __consumer_offsets-2
    stalled at 20 s). CoordinatorRuntime.CoordinatorWriteEvent.run arms an OperationTimeout of
    offsets.commit.timeout.ms once the write is parked; GroupCoordinatorService.heartbeat is a
    write too; handleOperationException answers REQUEST_TIMED_OUT as COORDINATOR_NOT_AVAILABLE;
    ReplicaManager's isr-expiration (every 15 s) drops the followers 40 s after they were last
    caught up."""
    from coordinator_kit.scenarios import run_scenario

    cluster = run_scenario("second-joins")
    timeline = _stalled(cluster)
    assert (timeline.stalled_at, timeline.leader, timeline.followers) == (20_000, 2, (0, 1))
    assert timeline.at("offset_committed") == 22_201
    assert timeline.at("internal_scheduled") == 27_201
    assert timeline.at("offset_commit_failed") == 27_202
    assert timeline.at("heartbeat_failed_coordinator") == 29_104
    assert [c.at_ms for c in timeline.checks] == [30_000, 45_000, 60_000]
    assert timeline.shrink_at == timeline.at("isr_shrink") == 60_000
    assert "27,202" in repr(timeline) and "60,000" in repr(timeline)
    cluster.run_for(timeline.shrink_at + 1 - cluster.scheduler.now)
    seen = timeline.seen(cluster.trace)
    assert seen.column("forecast (ms)") == seen.column("seen in the run (ms)")
    p = cluster.partitions[cluster.partition_of("group-1")]
    assert p.isr == [2] and p.high_watermark == p.log_end_offset
    shrinks = [e for e in cluster.trace.events if e.kind == "isr_shrink"]
    assert [e.ts for e in shrinks] == [60_000]


def test_stall_timeline_holds_at_another_moment_and_leader():
    """The same forecast after a failover (another leader, other phases of the timers)."""
    cluster = of.group_cluster(consumers=2, run_ms=20_000)
    cluster.move_coordinator("group-1", to_broker=0)
    cluster.run_for(13_333)
    timeline = _stalled(cluster)
    assert timeline.leader == 0
    cluster.run_for(timeline.shrink_at + 1 - cluster.scheduler.now)
    seen = timeline.seen(cluster.trace)
    assert len(seen) == 6
    assert seen.column("forecast (ms)") == seen.column("seen in the run (ms)")


def test_stall_timeline_refuses_followers_that_still_fetch():
    cluster = of.group_cluster(consumers=1, run_ms=10_000)
    cluster.stall_replica(2, 0)
    with pytest.raises(ValueError, match=r"broker\(s\) \[1\] still fetch"):
        rl.stall_timeline(cluster)


def test_text_table_refuses_a_row_of_the_wrong_width():
    t = rl.TextTable(["a", "b"])
    with pytest.raises(ValueError, match=r"a row needs 2 cells \(a, b\), got 3"):
        t.add([1, 2, 3])
    with pytest.raises(KeyError, match="no column 'c'"):
        t.column("c")


def test_write_refuses_records_that_are_not_strings():
    sb = rl.loaded_sandbox()
    with pytest.raises(ValueError, match="non-empty string keys"):
        rl.write(sb, "bad", {"k": 1})


def test_every_seed_claim_points_at_a_section_of_notebook_03():
    """The walkthrough-vs-code table names, for every claim, where notebook 03 shows it."""
    nb = json.loads(NB03.read_text())
    headings = "\n".join("".join(c["source"]) for c in nb["cells"]
                         if c["cell_type"] == "markdown")
    for claim in rl.SEED_000_DIFFERENCES:
        for place in claim.shown_in.split(", "):
            if place.startswith("exercise"):
                assert f"**Exercise {place.split()[1]}.**" in headings, place
            elif place.startswith("Fault: "):
                assert f"### {place[len('Fault: '):].capitalize()}" in headings \
                    or place[len("Fault: "):] in headings.lower(), place
            else:
                assert f"## {place} " in headings, place
    assert len(rl.seed_differences()) == len(rl.SEED_000_DIFFERENCES)


# --------------------------------------------------------------------------------------------
# Lesson 03 exercise checks


def test_as_error_accepts_names_members_and_codes_and_explains_junk():
    assert rl.as_error("not_coordinator") is Errors.NOT_COORDINATOR
    assert rl.as_error(Errors.COORDINATOR_LOAD_IN_PROGRESS) is Errors.COORDINATOR_LOAD_IN_PROGRESS
    assert rl.as_error(16) is Errors.NOT_COORDINATOR
    assert rl.as_error("NONE") is None and rl.as_error(0) is None and rl.as_error(None) is None
    with pytest.raises(ValueError, match="not the name of a Kafka error"):
        rl.as_error("queued")
    with pytest.raises(ValueError, match="not a Kafka error code"):
        rl.as_error(9999)
    with pytest.raises(ValueError, match="is not an error"):
        rl.as_error(True)


@pytest.mark.parametrize("check", [rl.check_exercise_1, rl.check_exercise_2,
                                   rl.check_exercise_3, rl.check_exercise_4,
                                   of.check_exercise_1, of.check_exercise_2,
                                   of.check_exercise_3])
def test_an_unanswered_exercise_is_reported_not_raised(check):
    verdict = check(...)
    assert verdict.ok is None
    assert "not answered yet" in repr(verdict) and "..." in verdict.message


def test_exercise_1_placeholders_in_the_dict_count_as_unanswered():
    blank = rl.check_exercise_1({"LOADING": ..., "FAILED": ..., "unloaded": ...})
    assert blank.ok is None and "Replace each ..." in repr(blank)
    partial = rl.check_exercise_1({"LOADING": "COORDINATOR_LOAD_IN_PROGRESS", "FAILED": ...,
                                   "unloaded": ...})
    assert partial.ok is None and "'FAILED', 'unloaded'" in partial.message


@pytest.mark.parametrize("answer", [
    {"LOADING": "COORDINATOR_LOAD_IN_PROGRESS", "FAILED": "NOT_COORDINATOR",
     "unloaded": "NOT_COORDINATOR"},
    {"LOADING": Errors.COORDINATOR_LOAD_IN_PROGRESS, "FAILED": Errors.NOT_COORDINATOR,
     "unloaded": Errors.NOT_COORDINATOR},
    {"LOADING": 14, "FAILED": 16, "unloaded": 16},
])
def test_exercise_1_accepts_the_right_errors_in_every_form(answer):
    assert rl.check_exercise_1(answer).ok is True


def test_exercise_1_rejects_wrong_errors_with_a_hint_per_case():
    v = rl.check_exercise_1({"LOADING": "NOT_COORDINATOR", "FAILED": "NOT_COORDINATOR",
                             "unloaded": "NOT_LEADER_OR_FOLLOWER"})
    assert v.ok is False
    assert "nothing is queued" in v.message and "no context for the partition" in v.message
    assert "FAILED:" not in v.message
    assert rl.check_exercise_1({"LOADING": "queued", "FAILED": 16, "unloaded": 16}).message \
        .startswith("LOADING: 'queued' is not the name of a Kafka error")
    assert "exactly the keys" in rl.check_exercise_1({"LOADING": 14}).message


def test_exercise_2_accepts_the_snapshots_and_explains_wrong_lists():
    assert rl.exercise_2_snapshots() == [2, 3, 5, 6]
    assert rl.check_exercise_2([2, 3, 5, 6]).ok is True
    assert rl.check_exercise_2((2, 3, 5, 6)).ok is True
    inside = rl.check_exercise_2([2, 3, 4, 5, 6])
    assert inside.ok is False and "never inside a batch" in inside.message
    below = rl.check_exercise_2([0, 1, 2, 3, 5, 6])
    assert below.ok is False and "below the high watermark are dropped" in below.message
    assert "list of ints" in rl.check_exercise_2("2, 3, 5, 6").message
    assert "count the offsets" in rl.check_exercise_2([2, 3]).message.lower()


def test_exercise_3_accepts_all_failed_and_the_base_offset():
    assert rl.exercise_3_outcome() == (3, 4)
    assert rl.check_exercise_3((3, 4)).ok is True
    assert rl.check_exercise_3([3, 4]).ok is True
    one = rl.check_exercise_3((1, 4))
    assert one.ok is False and "fails every write of the batch" in one.message
    assert "revert goes back" not in one.message
    offset = rl.check_exercise_3((3, 7))
    assert offset.ok is False and "revert goes back to the batch's base offset" in offset.message
    assert "two ints" in rl.check_exercise_3((3,)).message


def test_exercise_4_accepts_the_queue_time_and_names_the_usual_slips():
    assert rl.exercise_4_queue_ms() == 102
    assert rl.check_exercise_4(102).ok is True
    assert "1 ms of its own" in rl.check_exercise_4(100).message
    assert "the third waits for the two" in rl.check_exercise_4(51).message
    assert "single thread" in rl.check_exercise_4(0).message
    assert rl.check_exercise_4(7).ok is False
    assert "whole number" in rl.check_exercise_4(102.0).message


# --------------------------------------------------------------------------------------------
# Lesson 04 helpers


@pytest.fixture(scope="module")
def failover():
    """group_cluster, then a move of group-1's coordinator from broker 2 to broker 0."""
    cluster = of.group_cluster(consumers=2, run_ms=21_200)
    before = of.coordinator_state(cluster, "group-1")
    cluster.move_coordinator("group-1", to_broker=0)
    of.wait_for_load(cluster, "group-1")
    after = of.coordinator_state(cluster, "group-1")
    return cluster, before, after


def test_where_is_does_javas_hash_arithmetic():
    cluster = of.group_cluster(consumers=0, run_ms=0)
    text = of.where_is(cluster, "group-1")
    assert text.splitlines()[0] == \
        "'group-1'.hashCode() = 293427299; abs(293427299) % 3 = 2 -> __consumer_offsets-2"
    assert "coordinator of 'group-1': localhost:9094 (broker 2)" in text


def test_records_table_decodes_kafkas_records(failover):
    cluster, _, _ = failover
    t = of.records_table(cluster, "group-1", broker=2)
    keys = t.column("key")
    assert keys[:2] == ["GroupMetadata group-1", "GroupMetadata group-1"]
    assert keys[2:8] == [f"OffsetCommit group-1 orders-{p}" for p in range(6)]
    values = t.column("value")
    assert values[1] == "v3 generation=1 protocol=range members=[consumer-1, consumer-2]"
    assert values[2] == "v3 offset=1100 commitTimestamp=11101"
    assert len(of.records_table(cluster, "group-1", last=3)) == 3
    with pytest.raises(ValueError, match="last must be >= 1"):
        of.records_table(cluster, "group-1", last=0)
    assert of.count_record_types(cluster, "group-1") == {"GroupMetadata": 2, "OffsetCommit": 18}


def test_explain_record_takes_an_offset_commit_apart_byte_by_byte(failover):
    cluster, _, _ = failover
    t = of.explain_record(cluster, "group-1", 14)
    assert t.column("field") == ["record type", "group", "topic", "partition", "value version",
                                 "offset", "leaderEpoch", "metadata", "commitTimestamp"]
    key = bytes.fromhex("".join(r[2] for r in t.rows[:4]).replace(" ", ""))
    value = bytes.fromhex("".join(r[2] for r in t.rows[4:]).replace(" ", ""))
    record = GroupCoordinatorRecordSerde().deserialize(key, value)  # the bytes are the record
    assert record.key == {"group": "group-1", "topic": "orders", "partition": 0}
    assert record.value["offset"] == 2100 and record.value_version == 3
    with pytest.raises(ValueError, match="holds a GroupMetadata record"):
        of.explain_record(cluster, "group-1", 0)
    with pytest.raises(ValueError, match="no record at offset 999"):
        of.explain_record(cluster, "group-1", 999)


def test_failover_rebuilds_the_same_group_and_offsets_by_replay(failover):
    """scheduleLoadOperation, GroupMetadataManager.replay: the new leader replays the log into the
    same group and offsets."""
    _, before, after = failover
    assert (before.broker, after.broker) == (2, 0)
    rows = {r[0]: r[3] for r in of.compare_states(before, after).rows}
    assert rows.pop("coordinator broker") == "NO"
    assert set(rows.values()) == {"yes"}
    assert after.offsets == {("orders", p): 2100 for p in range(6)}
    assert after.group["state"] == "Stable" and after.group["generation"] == 1


def test_coordinator_state_reports_the_error_a_client_would_get():
    cluster = of.group_cluster(consumers=1, run_ms=10_000)
    cluster.fail_next_load(2, broker=1)
    cluster.move_coordinator("group-1", to_broker=1)
    cluster.run_for(10)
    served = of.coordinator_state(cluster, "group-1")
    assert served.context == "FAILED" and served.error == "NOT_COORDINATOR"
    assert repr(served).endswith("requests fail with NOT_COORDINATOR")


def test_a_parked_commit_is_lost_only_unacknowledged():
    """The kit's invariant: no acknowledged offset is lost across failover, even when a commit was
    in flight (it fails NOT_COORDINATOR and the consumer commits again)."""
    cluster = of.group_cluster(consumers=2, run_ms=20_000)
    of.stall_followers(cluster, "group-1")
    cluster.run_for(5_000)
    cluster.move_coordinator("group-1", to_broker=1)
    of.resume_followers(cluster, "group-1")
    of.wait_for_load(cluster, "group-1")
    failed = [e for e in cluster.trace.events if e.kind == "offset_commit_failed"]
    assert len(failed) == 2 and all("not the correct coordinator" in e.fields["message"]
                                    for e in failed)
    table = of.offsets_table(cluster, "group-1")
    assert set(table.column("acknowledged <= coordinator")) == {"yes"}
    cluster.run_for(15_000)
    table = of.offsets_table(cluster, "group-1")
    assert set(table.column("acknowledged <= coordinator")) == {"yes"}
    assert table.column("coordinator") == table.column("acknowledged")
    assert cluster.monitor.violations == []


def test_a_new_leader_behind_serves_an_older_offset_then_the_newer_one():
    """Section 8 of notebook 04: followers know the high watermark a round late; broker 0
    leads with 14 (`Partition.makeLeader`), broker 1 stalled in the ISR holds it there until
    the ISR check drops it at 60 s; a read at the committed offset serves 1600, then 5600."""
    behind = of.group_cluster(consumers=2, run_ms=21_200, seed=0)
    table = of.replicas_table(behind, "group-1")
    assert table.column("high watermark") == ["14", "14", "20"]
    assert table.column("role") == ["follower", "follower", "leader"]
    behind.stall_replica(2, 1)
    behind.move_coordinator("group-1", to_broker=0)
    of.wait_for_load(behind, "group-1")
    table = of.replicas_table(behind, "group-1")
    assert table.column("high watermark") == ["14", "14", "20"]
    assert table.column("fetching") == ["-", "NO (stalled)", "yes"]
    over = of.offset_over_time(behind, "group-1", ("orders", 0),
                               [21_300, 59_999, 60_000, 60_100])
    assert over.column("served") == ["1600", "1600", "5600", "5600"]
    assert over.column("acknowledged") == ["2100", "2100", "2100", "5600"]
    assert over.column("ISR") == ["2,0,1", "2,0,1", "2,0", "2,0"]
    assert [(r.was, r.now, r.ts, r.restored_ms) for r in behind.monitor.regressions] == [
        (2100, 1600, 21_201, 60_000)] * 6
    regressions = of.regressions_table(behind)
    assert regressions.column("partition") == [f"orders-{i}" for i in range(6)]
    assert set(regressions.column("served")) == {"1600"}
    assert regressions.column("record at") == [str(14 + i) for i in range(6)]
    assert behind.monitor.violations == []


def test_group_status_says_where_a_group_is_served_and_why_not():
    """CoordinatorRuntime.withActiveContextOrThrow: a FAILED context answers NOT_COORDINATOR and
    stays FAILED until a load with a higher epoch (scheduleLoadOperation); FindCoordinator still
    names the partition's leader; a LOADING one answers COORDINATOR_LOAD_IN_PROGRESS."""
    cluster = of.group_cluster(consumers=2, run_ms=10_000)
    ok = of.group_status(cluster, "group-1")
    assert ok.loaded and ok.group["state"] == "Stable" and ok.error is None
    assert str(ok).startswith("group-1: Stable, generation 1, 2 members; served by broker 2")
    cluster.fail_next_load(2, broker=0)
    cluster.move_coordinator("group-1", to_broker=0)
    cluster.run_for(3_000)
    failed = of.group_status(cluster, "group-1")
    assert (failed.broker, failed.context, failed.error) == (0, "FAILED", Errors.NOT_COORDINATOR)
    assert failed.failure == "KafkaStorageException" and not failed.loaded
    text = " ".join(str(failed).split())
    assert "group-1 is not loaded on any broker" in text and "None" not in text
    assert "gets NOT_COORDINATOR" in text and "higher leader epoch" in text
    assert "Discovered group coordinator localhost:9092" in "\n".join(cluster.log_lines())
    assert failed.short() == ("group-1: not loaded (context FAILED on broker 0, requests get "
                              "NOT_COORDINATOR)")
    assert ok.short() == "group-1: Stable (generation 1, 2 members)"
    slow = cluster.partition_of("group-1")
    cluster.brokers[1].runtime.loader.slow_next_load(slow, 500)
    cluster.move_coordinator("group-1", to_broker=1)
    cluster.run_for(100)
    loading = of.group_status(cluster, "group-1")
    assert (loading.context, loading.error) == ("LOADING", Errors.COORDINATOR_LOAD_IN_PROGRESS)
    assert loading.short() == ("group-1: loading (context LOADING on broker 1, requests get "
                               "COORDINATOR_LOAD_IN_PROGRESS)")
    cluster.run_for(3_000)
    back = of.group_status(cluster, "group-1")
    assert back.loaded and back.broker == 1 and back.group["generation"] == 1
    assert len(back.group["members"]) == 2


def test_group_timeline_is_an_img_that_renders_untrusted():
    cluster = of.group_cluster(consumers=2, run_ms=5_000)
    picture = of.group_timeline(cluster, "group-1")
    bundle = picture._repr_mimebundle_()
    assert set(bundle) == {"text/html", "text/plain"}
    assert bundle["text/html"].startswith('<img src="data:image/svg+xml,')
    assert bundle["text/plain"] == "<picture: group-1 and its members, 0 to 5,000 ms>"
    assert of.group_timeline(cluster, "group-1").svg == picture.svg  # same run, same bytes
    with pytest.raises(ValueError, match="<svg>"):
        of.SvgImage("not svg", "x")


def test_group_cluster_refuses_negative_sizes():
    with pytest.raises(ValueError, match="consumers >= 0"):
        of.group_cluster(consumers=-1)


# --------------------------------------------------------------------------------------------
# Lesson 04 exercise checks


def test_offsets_exercise_1_accepts_the_partition_and_hints_at_slips():
    assert of.check_exercise_1(13).ok is True
    three = of.check_exercise_1(2)
    assert three.ok is False and "default of 50" in three.message
    assert "numbered 0..49" in of.check_exercise_1(50).message
    assert "java_string_hashcode" in of.check_exercise_1(7).message
    assert "as an int" in of.check_exercise_1("13").message


def test_offsets_exercise_2_counts_the_records_in_the_log():
    assert of.count_record_types(of.exercise_2_cluster(), "group-1") == \
        {"GroupMetadata": 2, "OffsetCommit": 30}
    assert of.check_exercise_2({"OffsetCommit": 30, "GroupMetadata": 2}).ok is True
    wrong = of.check_exercise_2({"OffsetCommit": 36, "GroupMetadata": 2})
    assert wrong.ok is False and "one OffsetCommit record per partition" in wrong.message
    assert "GroupMetadata record is written" not in wrong.message
    assert "keys" in of.check_exercise_2({"commits": 30}).message
    blank = of.check_exercise_2({"OffsetCommit": ..., "GroupMetadata": ...})
    assert blank.ok is None and "Replace each ..." in repr(blank)
    half = of.check_exercise_2({"OffsetCommit": 30, "GroupMetadata": ...})
    assert half.ok is None and "GroupMetadata" in half.message


def test_offsets_exercise_3_a_timed_out_commit_still_commits():
    """OperationTimeout (a timeout rolls nothing back) and handleOperationException
    (REQUEST_TIMED_OUT is answered as COORDINATOR_NOT_AVAILABLE)."""
    assert of.exercise_3_outcome() == (Errors.COORDINATOR_NOT_AVAILABLE, True)
    assert of.check_exercise_3(("COORDINATOR_NOT_AVAILABLE", True)).ok is True
    assert of.check_exercise_3((15, True)).ok is True
    raw = of.check_exercise_3(("REQUEST_TIMED_OUT", True))
    assert raw.ok is False and "maps the runtime's error" in raw.message
    none = of.check_exercise_3(("NONE", False))
    assert none.ok is False and "does not wait 6 s" in none.message
    assert "is not reverted" in none.message
    assert "True or False" in of.check_exercise_3(("NONE", "yes")).message


# --------------------------------------------------------------------------------------------
# The notebooks' shape (nbval runs them; this checks what a reviewer would look for)


@pytest.mark.parametrize("path", [NB03, NB04], ids=["03", "04"])
def test_notebook_shape(path):
    nb = json.loads(path.read_text())
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    cells = nb["cells"]
    first = "".join(cells[0]["source"])
    assert "you will be able to" in first
    markdown = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    assert "## Try it" in markdown and "## Exercises" in markdown
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    assert any("ControlPanel(" in c for c in code)
    assert not any(c.lstrip().startswith(("def ", "class ")) or "\ndef " in c for c in code), \
        "logic belongs in coordinator_kit.lessons, not in the notebook"
    answers = [i for i, c in enumerate(code) if c.startswith("answer_")]
    assert answers, "no exercise answer cells"
    for i in answers:
        assert "..." in code[i], "the committed notebook must leave the answers open"
        assert code[i + 1].startswith("check_exercise_"), "each answer is followed by its check"
    for c in cells:
        for out in c.get("outputs", []):
            assert out["output_type"] != "error", "".join(c["source"])
            assert out.get("name") != "stderr", "".join(c["source"])
    assert "widgets" not in nb["metadata"], "save notebooks without widget state"
    # The Try-it panel is still as the prose describes it after Run All: no cell below it
    # drives the panel or the cluster it shows (demonstrations use runs of their own).
    at = next(i for i, c in enumerate(code) if "ControlPanel(" in c)
    source = re.search(r"ControlPanel\((\w+)", code[at]).group(1)
    for later in code[at + 1:]:
        assert not re.search(rf"(?<![.\w])(panel|{source})\b", later), later


@pytest.mark.parametrize("module", [rl, of], ids=["runtime_lifecycle", "offsets_failover"])
def test_lesson_modules_export_what_they_name(module):
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert not missing and len(set(module.__all__)) == len(module.__all__)
