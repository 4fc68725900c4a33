"""CoordinatorRuntime behaviour, one area of Kafka's `CoordinatorRuntime` at a time (each section
names the Kafka method; docs/kafka-classes.md lists them all)."""

from __future__ import annotations

import pytest

from coordinator_kit.errors import Errors, IllegalStateTransition, KafkaError
from coordinator_kit.runtime import (CONTEXT_STATES, CoordinatorRecord, CoordinatorResult,
                                     CoordinatorState, MetadataImage, RuntimeConfig)
from coordinator_kit.runtime.kv import kv_record
from coordinator_kit.runtime.sandbox import RuntimeSandbox

S = CoordinatorState


def error_of(future) -> Errors | None:
    exc = future.exception()
    return exc.error if isinstance(exc, KafkaError) else None


def loaded(**kwargs) -> RuntimeSandbox:
    sb = RuntimeSandbox(**kwargs)
    sb.start()
    sb.run_for(10)
    assert sb.state() is S.ACTIVE
    return sb


def stall_followers(sb: RuntimeSandbox, partition: int = 0) -> None:
    p = sb.partition(partition)
    for b in p.replicas:
        if b != p.leader_id:
            p.stall_replica(b)


def set_hwm(sb: RuntimeSandbox, offset: int) -> None:
    """Deliver a high-watermark update to the leader's runtime, as Kafka's tests do with a mock
    partition writer (`commit(tp, offset)`)."""
    ctx = sb.leader().context(sb.tp())
    ctx.hwm_listener(sb.tp(), offset)
    sb.scheduler.run_pending()


# --------------------------------------------------------------------------------------------
# context states (CoordinatorState.canTransitionFrom)


ALLOWED = {  # target: sources, exactly as CoordinatorState.canTransitionFrom
    S.INITIAL: set(),
    S.LOADING: {S.INITIAL, S.FAILED},
    S.ACTIVE: {S.LOADING, S.ACTIVE},
    S.FAILED: {S.LOADING, S.ACTIVE},
    S.CLOSED: set(S),
}


@pytest.mark.parametrize("source", list(S))
@pytest.mark.parametrize("target", list(S))
def test_context_transition_table_is_exactly_spec_1_2(source, target):
    """canTransitionFrom: a transition is legal iff the target accepts the current state."""
    assert CONTEXT_STATES.can_transition(source, target) == (source in ALLOWED[target])
    if source in ALLOWED[target]:
        CONTEXT_STATES.check(source, target)
    else:
        with pytest.raises(IllegalStateTransition) as info:
            CONTEXT_STATES.check(source, target)
        assert f"from {source.name} to {target.name}" in str(info.value)


def test_illegal_transition_on_a_live_context_names_both_states():
    sb = loaded()
    ctx = sb.leader().context(sb.tp())
    with pytest.raises(IllegalStateTransition, match="cannot transition from ACTIVE to LOADING"):
        ctx.transition_to(S.LOADING)
    assert ctx.state is S.ACTIVE


# --------------------------------------------------------------------------------------------
# Kafka's CoordinatorRuntimeTest.testScheduleWriteOp, step by step


def test_worked_example_1_15_step_by_step():
    """Kafka's CoordinatorRuntimeTest.testScheduleWriteOp (linger 0)."""
    sb = loaded(append_linger_ms=0)
    stall_followers(sb)  # the high watermark moves only when the test says so
    rt, tp = sb.leader(), sb.tp()
    ctx = rt.context(tp)
    c = ctx.coordinator

    def state():
        return (c.last_written_offset, c.last_committed_offset,
                c.snapshot_registry.epochs_list())

    assert state() == (0, 0, [0])
    w1 = rt.schedule_write_operation("write#1", tp, lambda s: s.put_all({"r1": "1", "r2": "2"}))
    sb.scheduler.run_pending()
    assert state() == (2, 0, [0, 2]) and not w1.done()
    assert c.shard.store.get("r1") == "1"  # replayed before commit
    w2 = rt.schedule_write_operation("write#2", tp, lambda s: s.put("r3", "3"))
    sb.scheduler.run_pending()
    assert state() == (3, 0, [0, 2, 3]) and not w2.done()
    w3 = rt.schedule_write_operation("write#3", tp, lambda s: s.delete("absent"))
    sb.scheduler.run_pending()
    assert state() == (3, 0, [0, 2, 3]) and not w3.done()  # parked: state not fully committed
    assert [o for o, _ in ctx.deferred.pending()] == [2, 3]
    set_hwm(sb, 2)
    assert state() == (3, 2, [2, 3])
    assert w1.result() == 2 and not w2.done() and not w3.done()
    set_hwm(sb, 3)
    assert state() == (3, 3, [3])
    assert w2.result() == "r3=3" and w3.result() == "absent absent"
    w4 = rt.schedule_write_operation("write#4", tp, lambda s: s.delete("absent"))
    sb.scheduler.run_pending()
    assert w4.done() and state() == (3, 3, [3])


# --------------------------------------------------------------------------------------------
# errors by context state (withActiveContextOrThrow)


def test_request_to_loading_context_fails_with_load_in_progress_not_queued():
    """Writes during LOADING fail at once with COORDINATOR_LOAD_IN_PROGRESS (14), not queued
    (docs/kafka-code-vs-common-descriptions.md)."""
    sb = RuntimeSandbox()
    sb.leader().loader.slow_next_load(sb.tp(), 1000)
    sb.start()
    sb.run_for(5)
    assert sb.state() is S.LOADING
    w = sb.put("a", "1")
    r = sb.get("a")
    sb.scheduler.run_pending()
    assert error_of(w) is Errors.COORDINATOR_LOAD_IN_PROGRESS and Errors.COORDINATOR_LOAD_IN_PROGRESS.code == 14
    assert error_of(r) is Errors.COORDINATOR_LOAD_IN_PROGRESS
    sb.run_for(1000)
    assert sb.state() is S.ACTIVE
    assert sb.leader().context(sb.tp()).coordinator.shard.store.get("a") is None  # not replayed


def test_unknown_initial_failed_and_closed_contexts_answer_not_coordinator():
    sb = RuntimeSandbox()
    rt, tp = sb.leader(), sb.tp()
    unknown = sb.put("a", "1")
    rt.schedule_load_operation(tp, -1)  # context created (INITIAL); the epoch -1 load is ignored
    initial = sb.put("a", "1")
    sb.scheduler.run_pending()
    assert rt.context_state(tp) is S.INITIAL
    rt.loader.fail_next_load(tp)
    rt.schedule_load_operation(tp, 0)
    sb.run_for(10)
    assert rt.context_state(tp) is S.FAILED
    failed = sb.put("a", "1")
    sb.scheduler.run_pending()
    rt.schedule_unload_operation(tp, 1)
    sb.scheduler.run_pending()
    closed = sb.put("a", "1")
    sb.scheduler.run_pending()
    for f in (unknown, initial, failed, closed):
        assert error_of(f) is Errors.NOT_COORDINATOR
    assert Errors.NOT_COORDINATOR.code == 16


# --------------------------------------------------------------------------------------------
# load and epochs (scheduleLoadOperation, CoordinatorLoaderImpl)


def test_stale_and_equal_load_epochs_are_ignored_and_active_is_not_reloaded():
    sb = loaded()
    rt, tp = sb.leader(), sb.tp()
    before = len(sb.trace.of_kind("context_transition"))
    rt.schedule_load_operation(tp, 0)  # equal
    rt.schedule_load_operation(tp, 5)  # higher while ACTIVE: epoch bumped, no reload
    rt.schedule_load_operation(tp, 3)  # stale now
    sb.run_for(10)
    assert len(sb.trace.of_kind("context_transition")) == before
    assert rt.context(tp).epoch == 5
    lines = sb.log_lines()
    assert any("Ignored loading metadata from __consumer_offsets-0 since current epoch 0 is "
               "larger than or equals to 0." in line for line in lines)
    assert any("The coordinator __consumer_offsets-0 is already active." in line for line in lines)
    assert any("since current epoch 5 is larger than or equals to 3." in line for line in lines)


def test_failed_load_is_retried_only_by_a_higher_epoch():
    sb = RuntimeSandbox()
    rt, tp = sb.leader(), sb.tp()
    rt.loader.fail_next_load(tp)
    rt.schedule_load_operation(tp, 1)
    sb.run_for(10)
    assert rt.context_state(tp) is S.FAILED
    line = [ln for ln in sb.log_lines("ERROR") if "Failed to load metadata" in ln][0]
    assert ("Failed to load metadata from __consumer_offsets-0 with epoch 1 due to "
            "org.apache.kafka.common.errors.KafkaStorageException:") in line
    rt.schedule_load_operation(tp, 1)
    sb.run_for(10)
    assert rt.context_state(tp) is S.FAILED
    rt.schedule_load_operation(tp, 2)
    sb.run_for(10)
    assert rt.context_state(tp) is S.ACTIVE


def test_load_replays_the_log_and_keeps_only_snapshots_from_the_hwm():
    """CoordinatorLoaderImpl: an uncommitted tail is replayed; a no-record write then waits for
    the HWM."""
    sb = loaded()
    for i in range(3):
        sb.put(f"k{i}", str(i))
        sb.run_for(10)
    p = sb.partition()
    stall_followers(sb)
    sb.put("tail", "x")
    sb.run_for(10)
    assert (p.high_watermark, p.log_end_offset) == (3, 4)
    # Reload on the same broker at a higher epoch: unload, then load.
    rt, tp = sb.leader(), sb.tp()
    rt.schedule_unload_operation(tp, 1)
    rt.schedule_load_operation(tp, 1)
    sb.run_for(10)
    ctx = rt.context(tp)
    c = ctx.coordinator
    assert (c.last_written_offset, c.last_committed_offset) == (4, 3)
    assert c.snapshot_registry.epochs_list() == [3, 4]  # only snapshots >= the HWM (3)
    assert c.shard.store.get("tail") == "x"
    waits = rt.schedule_write_operation("read-as-write", tp, lambda s: s.delete("absent"))
    sb.scheduler.run_pending()
    assert not waits.done()
    assert [o for o, _ in ctx.deferred.pending()] == [4]
    for b in (1, 2):
        p.resume_replica(b)
    sb.run_for(20)
    assert waits.done()
    line = [ln for ln in sb.log_lines() if "Finished loading" in ln][-1]
    assert "Loaded 4 records which total to" in line


def test_loader_skips_unknown_record_types_with_kafkas_warning():
    sb = RuntimeSandbox()
    p = sb.partition()
    p.append(0, [(b"\x00\x07{}", b"\x00\x00{}"), sb.leader().serde.serialize(kv_record("a", "1"))])
    sb.run_for(10)
    sb.start()
    sb.run_for(10)
    assert sb.state() is S.ACTIVE
    assert sb.leader().context(sb.tp()).coordinator.shard.store.get("a") == "1"
    warn = sb.log_lines("WARN")
    assert any("Unknown record type 7 while loading offsets and group metadata from "
               "__consumer_offsets-0. Ignoring it. It could be a left over from an aborted "
               "upgrade." in line for line in warn)


# --------------------------------------------------------------------------------------------
# unload (scheduleUnloadOperation, CoordinatorContext.unload)


def test_unload_fails_parked_writes_cancels_timers_and_tells_the_shard():
    sb = loaded()
    stall_followers(sb)
    rt, tp = sb.leader(), sb.tp()
    shard = rt.context(tp).coordinator.shard
    w = sb.put("a", "1")
    sb.expire_after("a", 60_000)
    sb.run_for(10)
    ctx = rt.context(tp)
    assert not w.done() and ctx.timer.is_scheduled("expire-a")
    rt.schedule_unload_operation(tp, 0)  # equal epoch: ignored (strictly less is required)
    sb.scheduler.run_pending()
    assert rt.context_state(tp) is S.ACTIVE
    rt.schedule_unload_operation(tp, 1)
    sb.scheduler.run_pending()
    assert error_of(w) is Errors.NOT_COORDINATOR
    assert rt.context(tp) is None and not shard.loaded
    assert not ctx.timer.tasks
    sb.run_for(120_000)  # the cancelled timer never fires
    assert not sb.trace.of_kind("timer_fired")
    lines = sb.log_lines()
    assert any("Ignored unloading metadata for __consumer_offsets-0 in epoch OptionalInt[0] since "
               "current epoch is 0." in ln for ln in lines)
    assert any("failAll(NotCoordinatorException): failing CoordinatorWriteEvent(name=put(a))."
               in ln for ln in lines)


def test_unload_without_epoch_means_topic_deleted_and_unknown_unload_is_logged():
    sb = loaded()
    rt, tp = sb.leader(), sb.tp()
    rt.schedule_unload_operation(tp, None)
    sb.scheduler.run_pending()
    assert rt.context(tp) is None
    rt.schedule_unload_operation(tp, 3)
    sb.scheduler.run_pending()
    assert any("Ignored unloading metadata for __consumer_offsets-0 in epoch OptionalInt[3] since "
               "metadata was never loaded." in ln for ln in sb.log_lines())


# --------------------------------------------------------------------------------------------
# writes (scheduleWriteOperation, CoordinatorContext.append)


def test_failed_append_reverts_the_whole_batch_and_fails_all_its_operations():
    sb = loaded(append_linger_ms=10)
    rt, tp = sb.leader(), sb.tp()
    sb.put("keep", "0")
    sb.run_for(20)
    c = rt.context(tp).coordinator
    base = c.last_written_offset
    sb.partition().fail_next_append(Errors.KAFKA_STORAGE_ERROR)
    futures = [sb.put("a", "1"), sb.put("b", "2"), sb.put("keep", "changed")]
    sb.scheduler.run_pending()
    assert c.shard.store.get("a") == "1"  # replayed while the batch is open
    sb.run_for(20)
    assert all(error_of(f) is Errors.KAFKA_STORAGE_ERROR for f in futures)
    assert c.last_written_offset == base
    assert dict(c.shard.store.items()) == {"keep": "0"}
    assert any("Writing records to __consumer_offsets-0 failed due to:" in ln
               for ln in sb.log_lines("ERROR"))
    ok = sb.put("a", "again")
    sb.run_for(20)
    assert ok.result() == "a=again"


def test_write_times_out_after_offsets_commit_timeout_but_records_stay():
    """OperationTimeout: REQUEST_TIMED_OUT after offsets.commit.timeout.ms; no rollback."""
    sb = loaded(write_timeout_ms=5000)
    stall_followers(sb)
    w = sb.put("a", "1")
    sb.run_for(4999)
    assert not w.done()
    sb.run_for(1)
    assert error_of(w) is Errors.REQUEST_TIMED_OUT
    assert "timed out after 5000ms" in str(w.exception())
    c = sb.leader().context(sb.tp()).coordinator
    assert c.shard.store.get("a") == "1" and c.last_written_offset == 1


def test_handler_error_fails_at_once_without_records():
    sb = loaded()
    rt, tp = sb.leader(), sb.tp()

    def boom(shard):
        raise Errors.ILLEGAL_GENERATION.exception()

    f = rt.schedule_write_operation("boom", tp, boom)
    sb.scheduler.run_pending()
    assert error_of(f) is Errors.ILLEGAL_GENERATION
    assert rt.context(tp).coordinator.last_written_offset == 0


def test_on_error_answers_a_failed_write_instead_of_failing_its_future():
    """GroupCoordinatorService chains `.exceptionally(...)` on a write to turn a failure into an
    error response; `on_error` does that on the write's own future. A handler error, a timeout
    (OperationTimeout) and an unload all complete the future with the mapped value, at the moment
    the plain write fails; a write that succeeds is not touched."""
    sb = loaded(write_timeout_ms=5000)
    rt, tp = sb.leader(), sb.tp()

    def boom(shard):
        raise Errors.ILLEGAL_GENERATION.exception()

    def answer(exc):
        return f"answered {exc.error.name}"

    plain = rt.schedule_write_operation("boom", tp, boom)
    mapped = rt.schedule_write_operation("boom", tp, boom, on_error=answer)
    ok = rt.schedule_write_operation("ok", tp, lambda shard: shard.put("k", "v"),
                                     on_error=answer)
    sb.run_for(20)
    assert error_of(plain) is Errors.ILLEGAL_GENERATION
    assert mapped.exception() is None and mapped.result() == "answered ILLEGAL_GENERATION"
    assert ok.result() == "k=v"

    stall_followers(sb)
    timed_out = rt.schedule_write_operation("slow", tp, lambda shard: shard.put("a", "1"),
                                            on_error=answer)
    sb.run_for(4999)
    assert not timed_out.done()
    sb.run_for(1)
    assert timed_out.result() == "answered REQUEST_TIMED_OUT"

    parked = rt.schedule_write_operation("parked", tp, lambda shard: shard.put("b", "2"),
                                         on_error=answer)
    sb.run_for(1)
    rt.schedule_unload_operation(tp, rt.context(tp).epoch + 1)
    sb.run_for(1)
    assert parked.result() == "answered NOT_COORDINATOR"


def test_operation_returning_no_coordinator_result_fails_its_write_with_a_clear_error():
    """A write operation must return a CoordinatorResult (`CoordinatorWriteOperation
    .generateRecordsAndResult`): anything else fails
    that write's future with a TypeError naming the write, and the runtime goes on."""
    sb = loaded()
    rt, tp = sb.leader(), sb.tp()
    f = rt.schedule_write_operation("bad", tp, lambda shard: "not a result")
    ok = sb.put("a", "1")
    sb.run_for(10)
    assert isinstance(f.exception(), TypeError)
    assert "write operation 'bad' must return a CoordinatorResult, got str" in str(f.exception())
    assert ok.result() == "a=1"


def test_atomic_result_larger_than_a_batch_is_message_too_large():
    sb = loaded()
    sb.partition().max_message_bytes = 200
    f = sb.put("big", "x" * 500)
    sb.scheduler.run_pending()
    assert error_of(f) is Errors.MESSAGE_TOO_LARGE
    from coordinator_kit.errors import handle_operation_exception
    assert handle_operation_exception(f.exception()) is Errors.UNKNOWN_SERVER_ERROR


def test_records_are_replayed_at_their_log_offsets():
    seen = []
    sb = loaded()
    shard = sb.leader().context(sb.tp()).coordinator.shard
    original = shard.replay
    shard.replay = lambda offset, pid, pe, rec: (seen.append((offset, rec.key["key"])),
                                                 original(offset, pid, pe, rec))
    sb.put("a", "1")
    sb.leader().schedule_write_operation("two", sb.tp(), lambda s: s.put_all({"b": "2", "c": "3"}))
    sb.run_for(10)
    assert seen == [(0, "a"), (1, "b"), (2, "c")]
    assert [b.base_offset for b in sb.partition().leader.batches] == [0, 1]


def test_batches_fill_up_to_max_message_bytes_atomic_whole_non_atomic_split():
    """CoordinatorContext.append: an atomic write that does not fit the open batch goes whole into a
    new one; a non-atomic write's records are split across batches. Every batch's size is its
    v2 size, record by record at its offset delta."""
    from coordinator_kit.runtime.partition import LogBatch
    sb = loaded(append_linger_ms=10)
    p = sb.partition()
    p.max_message_bytes = 400
    rt, tp = sb.leader(), sb.tp()

    def many(prefix, n, atomic):
        records = [kv_record(f"{prefix}{i}", "v" * 30) for i in range(n)]
        return rt.schedule_write_operation(
            prefix, tp, lambda s: CoordinatorResult(records, prefix, is_atomic=atomic))

    first = sb.put("a", "1")
    atomic = many("at", 4, True)  # fits after "a"
    whole = many("wh", 5, True)  # does not fit after the 5 records: a new batch
    split = many("sp", 12, False)  # larger than a batch: spread over batches
    sb.run_for(30)
    assert all(f.done() and not f.failed() for f in (first, atomic, whole, split))
    batches = list(p.leader.batches)
    assert [len(b.records) for b in batches[:2]] == [5, 5]
    assert sum(len(b.records) for b in batches) == 1 + 4 + 5 + 12 and len(batches) >= 4
    for b in batches:
        assert b.size_in_bytes == LogBatch.measure(b.records) <= 400


def _linger_zero_paths(trace_level: str) -> tuple:
    """Writes at linger 0 through every way out of a write's own batch
    (CoordinatorContext.append, maybeFlushCurrentBatch): plain and multi-record writes, a record
    that fails to serialise (its batch stays open, as in Kafka), one that fails to replay,
    atomic and non-atomic writes larger than a batch, a failed append and an append that lands
    at an unexpected offset."""
    from coordinator_kit.runtime import CoordinatorRecord
    sb = loaded(append_linger_ms=0, trace_level=trace_level)
    rt, tp, p = sb.leader(), sb.tp(), sb.partition()
    shard = rt.context(tp).coordinator.shard
    original = shard.replay

    def replay(offset, pid, pe, rec):
        if rec.key["key"] == "bad-replay":
            raise ValueError("cannot replay bad-replay")
        original(offset, pid, pe, rec)

    shard.replay = replay

    def write(name, records, atomic=True):
        return rt.schedule_write_operation(
            name, tp, lambda s: CoordinatorResult(records, name, is_atomic=atomic))

    futures = [sb.put("a", "1"), write("two", [kv_record("b", "2"), kv_record("c", "3")])]
    sb.run_for(5)
    futures.append(write("unserialisable", [CoordinatorRecord(999, {"key": "x"}, {"v": 1})]))
    futures.append(sb.put("after-open-batch", "1"))
    sb.run_for(5)
    futures.append(write("replay", [kv_record("ok", "1"), kv_record("bad-replay", "1")]))
    futures.append(sb.put("d", "4"))
    sb.run_for(5)
    p.max_message_bytes = 400
    futures.append(write("atomic-big", [kv_record(f"at{i}", "v" * 30) for i in range(12)]))
    futures.append(write("split", [kv_record(f"sp{i}", "v" * 30) for i in range(12)], False))
    sb.run_for(5)
    p.fail_next_append(Errors.KAFKA_STORAGE_ERROR)
    futures.append(sb.put("e", "5"))
    futures.append(sb.put("f", "6"))
    sb.run_for(5)
    from coordinator_kit.runtime.kv import KV_SERDE
    p.append(p.leader_id, [KV_SERDE.serialize(kv_record("foreign", "x"))])  # not the runtime
    futures.append(sb.put("g", "7"))
    sb.run_for(50)
    futures.append(sb.put("h", "8"))
    sb.run_for(50)
    outcomes = [(f.done(), (error_of(f) or type(f.exception()).__name__) if f.failed()
                 else f.result()) for f in futures]
    batches = [(b.base_offset, len(b.records), b.size_in_bytes) for b in p.leader.batches]
    return outcomes, batches, sb.describe(), sb.log_lines("INFO")


def test_linger_zero_writes_take_the_same_steps_with_debug_lines_on_or_off():
    """At INFO a linger-0 write's own batch is appended without a `_Batch`; every path out of
    it must behave as the general path does (which DEBUG uses): same outcomes, log, state."""
    debug, info = _linger_zero_paths("DEBUG"), _linger_zero_paths("INFO")
    assert info == debug
    outcomes, batches, described, lines = info
    assert [o for _, o in outcomes] == [
        "a=1", "two", "ValueError", "after-open-batch=1", "ValueError", "d=4",
        Errors.MESSAGE_TOO_LARGE, "split", Errors.KAFKA_STORAGE_ERROR, "f=6",
        Errors.NOT_COORDINATOR, "h=8"]
    # one write, one batch; the non-atomic 12 records spread over batches of at most 400 bytes
    assert [n for _, n, _ in batches] == [1, 2, 1, 1, 5, 5, 2, 1, 1, 1, 1]
    assert described["state"] == "ACTIVE" and described["last_written_offset"] == 21
    assert any("is out of sync with the underlying log" in ln for ln in lines)
    assert any("failed due to: cannot replay bad-replay." in ln for ln in lines)


# --------------------------------------------------------------------------------------------
# linger (group.coordinator.append.linger.ms, maybeFlushCurrentBatch)


def test_linger_zero_flushes_every_write():
    sb = loaded(append_linger_ms=0)
    for i in range(3):
        sb.put(f"k{i}", "v")
    sb.run_for(10)
    assert [len(b.records) for b in sb.partition().leader.batches] == [1, 1, 1]


def test_linger_groups_writes_and_later_writes_see_earlier_uncommitted_ones():
    sb = loaded(append_linger_ms=10)
    f1 = sb.put("a", "1")
    f2 = sb.put("a", "2")
    sb.scheduler.run_pending()
    assert sb.partition().log_end_offset == 0  # nothing appended yet
    assert sb.leader().describe(sb.tp())["open_batch"] == (0, 2)
    sb.run_for(9)
    assert sb.partition().log_end_offset == 0
    sb.run_for(1)
    assert [len(b.records) for b in sb.partition().leader.batches] == [2]
    sb.run_for(10)
    assert f1.result() == "a=1" and f2.result() == "a=2 (was 1)"


# --------------------------------------------------------------------------------------------
# reads (scheduleReadOperation)


def test_reads_run_at_the_committed_offset_and_complete_at_once():
    sb = loaded()
    sb.put("a", "1")
    sb.run_for(10)
    stall_followers(sb)
    w = sb.put("a", "2")
    r = sb.get("a")
    sb.scheduler.run_pending()
    assert not w.done() and r.result() == "1"


# --------------------------------------------------------------------------------------------
# timers (EventBasedCoordinatorTimer)


def test_timer_fires_as_a_write_event_in_the_partition_queue():
    sb = loaded()
    sb.put("a", "1")
    sb.expire_after("a", 1000)
    sb.run_for(999)
    assert sb.committed().result() if False else True
    r = sb.get("a")
    sb.scheduler.run_pending()
    assert r.result() == "1"
    sb.run_for(10)
    r = sb.get("a")
    sb.scheduler.run_pending()
    assert r.result() is None
    lines = sb.log_lines("DEBUG")
    assert any("Executing event: CoordinatorWriteEvent(name=Timeout(tp=__consumer_offsets-0, "
               "key=expire-a))." in ln for ln in lines)
    assert any("Registering timer expire-a with delay of 1000ms." in ln for ln in lines)


def test_rescheduling_a_key_replaces_the_timer_and_cancel_stops_it():
    sb = loaded()
    sb.put("a", "1")
    sb.put("b", "1")
    sb.expire_after("a", 1000)
    sb.run_for(500)
    sb.expire_after("a", 1000)  # replaces: fires at 1500 + 10, not 1010
    sb.expire_after("b", 100)
    sb.scheduler.run_pending()
    sb.leader().context(sb.tp()).timer.cancel("expire-b")
    sb.run_for(700)
    assert sb.leader().context(sb.tp()).coordinator.shard.store.get("a") == "1"
    assert sb.leader().context(sb.tp()).coordinator.shard.store.get("b") == "1"
    sb.run_for(400)
    assert sb.leader().context(sb.tp()).coordinator.shard.store.get("a") is None
    assert len(sb.trace.of_kind("timer_fired")) == 1


def test_rescheduling_later_moves_the_pending_timer_and_runs_the_latest_operation():
    """EventBasedCoordinatorTimer.schedule: scheduling a key again replaces its timer. A later
    deadline moves the pending handle (one heap entry per key, `Scheduler.defer`); `reschedule`
    keeps the operation; an earlier deadline, or a timer that already fired, gets a new
    handle."""
    sb = loaded()
    rt, tp = sb.leader(), sb.tp()
    timer = rt.context(tp).timer
    ran = []
    timer.schedule("k", 100, False, lambda: ran.append("first") or CoordinatorResult([]))
    handle = timer.tasks["k"].handle
    sb.run_for(50)
    timer.schedule("k", 100, False, lambda: ran.append("second") or CoordinatorResult([]))
    assert timer.tasks["k"].handle is handle and timer.deadline("k") == sb.scheduler.now + 100
    sb.run_for(60)  # past the first deadline: the stale entry moves on, nothing runs
    assert ran == [] and timer.is_scheduled("k")
    assert timer.reschedule("k", 100) and timer.tasks["k"].handle is handle
    assert not timer.reschedule("missing", 100)
    assert not timer.reschedule("k", 10)  # earlier: changes nothing, the caller schedules
    assert timer.deadline("k") == sb.scheduler.now + 100
    sb.run_for(99)
    assert ran == []
    sb.run_for(20)
    assert ran == ["second"] and not timer.is_scheduled("k") and handle.done
    timer.schedule("k", 100, False, lambda: ran.append("third") or CoordinatorResult([]))
    assert timer.tasks["k"].handle is not handle  # it fired: a new handle
    timer.schedule("k", 10, False, lambda: ran.append("fourth") or CoordinatorResult([]))
    sb.run_for(200)
    assert ran == ["second", "fourth"]
    assert sum("Registering timer k with delay of 100ms." in ln
               for ln in sb.log_lines("DEBUG")) == 4


def test_timer_cancelled_after_it_fired_is_rejected_when_its_event_runs():
    sb = loaded()
    rt, tp = sb.leader(), sb.tp()
    timer = rt.context(tp).timer
    ran = []
    timer.schedule("k", 10, False, lambda: ran.append(1) or CoordinatorResult([]))
    # Fire the timer, but cancel it before the processor runs the event it enqueued.
    handle = timer.tasks["k"].handle
    sb.scheduler.run_until(lambda: handle.done)
    timer.cancel("k")
    sb.scheduler.run_pending()
    assert ran == []
    assert any("was not executed because it was cancelled or overridden" in ln
               for ln in sb.log_lines("DEBUG"))


def test_failing_timer_is_retried_with_backoff_only_when_asked():
    sb = loaded()
    rt, tp = sb.leader(), sb.tp()
    timer = rt.context(tp).timer
    attempts = []

    def flaky():
        attempts.append(sb.scheduler.now)
        if len(attempts) < 3:
            raise Errors.UNKNOWN_SERVER_ERROR.exception("boom")
        return CoordinatorResult([])

    timer.schedule("retry-me", 100, True, flaky, retry_backoff_ms=500)
    timer.schedule("once", 100, False, lambda: (_ for _ in ()).throw(ValueError("bad")))
    sb.run_for(2000)
    start = attempts[0]
    assert [t - start for t in attempts] == [0, 500, 1000]
    assert sum("Rescheduling it." in ln for ln in sb.log_lines("INFO")) == 2
    assert any("for the timer once failed due to bad. Ignoring it." in ln
               for ln in sb.log_lines("ERROR"))


def test_timers_are_ignored_when_the_context_is_not_active():
    sb = loaded()
    rt, tp = sb.leader(), sb.tp()
    timer = rt.context(tp).timer
    ran = []
    timer.schedule("k", 10, True, lambda: ran.append(1) or CoordinatorResult([]))
    handle = timer.tasks["k"].handle
    sb.scheduler.run_until(lambda: handle.done)
    rt.context(tp).state = S.FAILED  # as if the load failed meanwhile
    sb.scheduler.run_pending()
    # NOT_COORDINATOR is ignored, not retried. The task stays registered: Kafka removes it inside
    # the operation, which never ran; unloading (cancelAll) clears it.
    assert ran == [] and len(sb.trace.of_kind("timer_fired")) == 1
    sb.run_for(5000)
    assert ran == [] and len(sb.trace.of_kind("timer_fired")) == 1
    assert any("Ignoring it because the coordinator is not active." in ln
               for ln in sb.log_lines("DEBUG"))


# --------------------------------------------------------------------------------------------
# metadata (onNewMetadataImage)


def test_metadata_image_reaches_active_shards_through_the_queue():
    sb = RuntimeSandbox(partitions=2, brokers=1)
    rt = sb.runtimes[0]
    rt.loader.fail_next_load(sb.tp(1))
    sb.start()
    sb.run_for(10)
    assert rt.context_state(sb.tp(1)) is S.FAILED
    image, delta = MetadataImage.EMPTY.with_topics(7, {"orders": 6})
    rt.on_new_metadata_image(image, delta)
    shard0 = rt.context(sb.tp(0)).coordinator.shard
    assert shard0.image.offset == -1  # not applied synchronously
    sb.scheduler.run_pending()
    assert shard0.image is image
    assert any("Ignored new metadata image with offset 7 for __consumer_offsets-1 because the "
               "coordinator is not active." in ln for ln in sb.log_lines("DEBUG"))
    rt.schedule_load_operation(sb.tp(1), 1)
    sb.run_for(10)
    assert rt.context(sb.tp(1)).coordinator.shard.image is image  # given to on_loaded


def test_loads_queue_behind_each_other_in_the_single_threaded_loader():
    """CoordinatorLoaderImpl: the loader has one thread; waiting shows as time spent in the
    scheduler."""
    sb = RuntimeSandbox(partitions=2, brokers=1)
    rt = sb.runtimes[0]
    rt.loader.slow_next_load(sb.tp(0), 100)
    rt.loader.slow_next_load(sb.tp(1), 100)
    sb.start()
    sb.run_for(300)
    done = [ln for ln in sb.log_lines() if "Finished loading" in ln]
    assert len(done) == 2
    assert "in 101ms where 0ms was spent in the scheduler" in done[0]
    assert "in 202ms where 101ms was spent in the scheduler" in done[1]


# --------------------------------------------------------------------------------------------
# the whole lifecycle, end to end


def test_seed_000_lifecycle_end_to_end_with_failover_to_another_broker():
    """The lifecycle in seven steps (context, load, writes, reads, timers, metadata, unload) as
    Kafka's code does them, then a reload elsewhere."""
    sb = RuntimeSandbox(brokers=3, append_linger_ms=0)
    tp = sb.tp()
    # 1. assignment: the leader creates a context (INITIAL) and schedules the load.
    sb.runtimes[0].schedule_load_operation(tp, 0)
    assert sb.runtimes[0].context_state(tp) is S.INITIAL
    # 2. loading from the (empty) log.
    sb.run_for(10)
    assert sb.state() is S.ACTIVE
    # 3. writes: applied at once, answered when committed.
    futures = [sb.put(f"member-{i}", f"gen-{i}") for i in range(5)]
    sb.scheduler.run_pending()
    assert not any(f.done() for f in futures)
    sb.run_for(5)
    assert all(f.done() and not f.failed() for f in futures)
    # 4. reads at the committed offset.
    snap = sb.committed()
    sb.scheduler.run_pending()
    assert snap.result() == {f"member-{i}": f"gen-{i}" for i in range(5)}
    # 5. a timer writes a tombstone.
    sb.expire_after("member-0", 3000)
    sb.run_for(3100)
    # 6. a metadata update reaches the shard.
    image, delta = MetadataImage.EMPTY.with_topics(1, {"payments": 3})
    for rt in sb.runtimes.values():
        rt.on_new_metadata_image(image, delta)
    sb.run_for(1)
    assert sb.leader().context(tp).coordinator.shard.image is image
    before = sb.committed()
    sb.scheduler.run_pending()
    expected = {f"member-{i}": f"gen-{i}" for i in range(1, 5)}
    assert before.result() == expected
    # 7. unload on leadership loss, and reload at a higher epoch on broker 1.
    epoch = sb.move_leader(0, 1)
    sb.run_for(20)
    assert epoch == 1
    assert sb.runtimes[0].context(tp) is None
    assert sb.state() is S.ACTIVE and sb.partition().leader_id == 1
    after = sb.committed()
    sb.scheduler.run_pending()
    assert after.result() == expected  # rebuilt from the log
    assert sb.runtimes[1].context(tp).coordinator.shard.image is image
    w = sb.put("member-9", "gen-9")
    sb.run_for(10)
    assert w.result() == "member-9=gen-9"
    info = sb.log_lines("INFO")
    assert any("[GroupCoordinator id=1] Finished loading of metadata from __consumer_offsets-0 "
               "with epoch 1 in" in ln for ln in info)
    assert any("[GroupCoordinator id=0] Started unloading metadata for __consumer_offsets-0 with "
               "epoch OptionalInt[1]." in ln for ln in info)


def test_runtime_config_refuses_bad_values_by_kafka_key():
    with pytest.raises(ValueError, match="group.coordinator.append.linger.ms"):
        RuntimeConfig(append_linger_ms=-1)
    with pytest.raises(ValueError, match="offsets.commit.timeout.ms"):
        RuntimeConfig.from_properties({"offsets.commit.timeout.ms": 0})
    with pytest.raises(ValueError, match="unknown runtime config 'linger'"):
        RuntimeConfig.from_properties({"linger": 3})
    assert RuntimeConfig.from_properties(
        {"group.coordinator.append.linger.ms": 0}).append_linger_ms == 0


def test_closed_runtime_rejects_requests_and_unloads_everything():
    sb = loaded()
    stall_followers(sb)
    w = sb.put("a", "1")
    sb.scheduler.run_pending()
    rt = sb.leader()
    rt.close()
    assert error_of(w) is Errors.NOT_COORDINATOR
    with pytest.raises(KafkaError) as info:
        sb.put("b", "2")
    assert info.value.error is Errors.NOT_COORDINATOR
    assert rt.context(sb.tp()) is None
    rt.close()
    assert any("Coordinator runtime is already shutting down." in ln for ln in sb.log_lines("WARN"))


def test_same_scenario_gives_the_same_trace():
    def run():
        sb = RuntimeSandbox(append_linger_ms=10)
        sb.start()
        for i in range(20):
            sb.put(f"k{i % 7}", str(i))
            sb.run_for(3)
        sb.move_leader(0, 2)
        sb.run_for(50)
        return sb.log_lines("DEBUG")
    assert run() == run()


def test_future_runs_its_callbacks_once_in_the_order_added():
    """CoordinatorWriteEvent.complete: a write's future releases its response to whoever waits;
    one callback, several, and one added after completion all run once, in the order added, with
    the future."""
    from coordinator_kit.runtime import CoordinatorFuture
    for n in (1, 2, 3):
        seen: list = []
        f = CoordinatorFuture("f")
        for i in range(n):
            f.add_done_callback(lambda fut, i=i: seen.append((i, fut.result())))
        assert seen == []
        assert f.complete("v") and not f.complete("again")
        f.add_done_callback(lambda fut: seen.append(("late", fut.result())))
        assert seen == [(i, "v") for i in range(n)] + [("late", "v")]
    failed: list = []
    g = CoordinatorFuture("g")
    g.add_done_callback(lambda fut: failed.append(fut.exception()))
    boom = RuntimeError("boom")
    assert g.complete_exceptionally(boom) and failed == [boom]
