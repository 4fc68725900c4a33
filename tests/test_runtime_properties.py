"""Random fault schedules against the runtime's promises (load, writes, commit: Kafka's
`CoordinatorRuntime`).

* no write is answered before its record is committed (below the high watermark);
* a committed (acknowledged) record is never lost, across leader moves and reloads;
* the shard, read at the committed offset, equals a replay of the log up to the high watermark;
* snapshots only exist at or above the committed offset, which always has one;
* a failed append leaves exactly the state from before its batch.
"""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from coordinator_kit.errors import Errors
from coordinator_kit.runtime import CoordinatorState
from coordinator_kit.runtime.kv import KV_SERDE
from coordinator_kit.runtime.sandbox import RuntimeSandbox

KEYS = st.sampled_from(["a", "b", "c", "d"])


def committed_log_state(sb: RuntimeSandbox) -> dict[str, str]:
    """Replay the leader's log up to the high watermark into a plain dict."""
    p = sb.partition()
    state: dict[str, str] = {}
    for batch in p.leader.batches:
        if batch.next_offset > p.high_watermark:
            break
        for key, value in batch.records:
            rec = KV_SERDE.deserialize(key, value)
            if rec.value is None:
                state.pop(rec.key["key"], None)
            else:
                state[rec.key["key"]] = rec.value["value"]
    return state


class RuntimeUnderFaults(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.sb = RuntimeSandbox(brokers=3, append_linger_ms=5, write_timeout_ms=60_000)
        self.sb.start()
        self.sb.run_for(10)
        self.counter = 0
        self.acked: list[tuple[str, str, int]] = []  # key, value, offset found in the log
        self.violations: list[str] = []

    # -- operations ----------------------------------------------------------------------------

    def _active(self) -> bool:
        return self.sb.state() is CoordinatorState.ACTIVE

    @rule(key=KEYS)
    def put(self, key: str) -> None:
        self.counter += 1
        value = f"v{self.counter}"
        try:
            future = self.sb.put(key, value)
        except Exception as exc:  # pragma: no cover - the runtime is never closed here
            self.violations.append(f"put raised {exc!r}")
            return
        future.add_done_callback(lambda f, k=key, v=value: self._on_put_done(f, k, v))

    def _on_put_done(self, future, key: str, value: str) -> None:
        if future.failed():
            return
        p = self.sb.partition()
        for batch in p.leader.batches:
            if batch.next_offset > p.high_watermark:
                break
            for i, (k, v) in enumerate(batch.records):
                rec = KV_SERDE.deserialize(k, v)
                if rec.key["key"] == key and rec.value == {"value": value}:
                    self.acked.append((key, value, batch.base_offset + i))
                    return
        self.violations.append(f"put({key}={value}) answered before its record was committed "
                               f"(hwm {p.high_watermark})")

    @rule(key=KEYS)
    def delete(self, key: str) -> None:
        self.sb.delete(key)

    @rule(ms=st.sampled_from([0, 1, 3, 20, 200]))
    def run(self, ms: int) -> None:
        self.sb.run_for(ms)

    @rule(broker=st.sampled_from([0, 1, 2]))
    def stall(self, broker: int) -> None:
        if broker != self.sb.partition().leader_id:
            self.sb.partition().stall_replica(broker)

    @rule(broker=st.sampled_from([0, 1, 2]))
    def resume(self, broker: int) -> None:
        if broker != self.sb.partition().leader_id:
            self.sb.partition().resume_replica(broker)

    @rule()
    def fail_next_append(self) -> None:
        self.sb.partition().fail_next_append(Errors.KAFKA_STORAGE_ERROR)

    @rule(broker=st.sampled_from([0, 1, 2]))
    def move_leader(self, broker: int) -> None:
        p = self.sb.partition()
        if broker != p.leader_id and broker in p.isr and p.replicas[broker].fetching:
            self.sb.move_leader(0, broker)

    @precondition(lambda self: self._active())
    @rule()
    def open_batch_then_failed_append_restores_state(self) -> None:
        ctx = self.sb.leader().context(self.sb.tp())
        self.sb.scheduler.run_pending()
        if ctx.batch is not None:
            return
        before = dict(ctx.coordinator.shard.store.items())
        written = ctx.coordinator.last_written_offset
        self.sb.partition().fail_next_append(Errors.KAFKA_STORAGE_ERROR)
        f = self.sb.put("a", "doomed")
        self.sb.run_for(10)
        if ctx.state is CoordinatorState.ACTIVE and f.failed():
            assert dict(ctx.coordinator.shard.store.items()) == before
            assert ctx.coordinator.last_written_offset == written

    # -- invariants ----------------------------------------------------------------------------

    @invariant()
    def no_early_answers(self) -> None:
        assert not self.violations, self.violations

    @invariant()
    def snapshots_and_committed_state_agree_with_the_log(self) -> None:
        if not self._active():
            return
        ctx = self.sb.leader().context(self.sb.tp())
        c = ctx.coordinator
        epochs = c.snapshot_registry.epochs_list()
        assert c.last_committed_offset in epochs
        assert all(e >= c.last_committed_offset for e in epochs)
        assert c.last_committed_offset <= self.sb.partition().high_watermark
        if c.last_committed_offset == self.sb.partition().high_watermark:
            at_commit = dict(c.shard.store.items(epoch=c.last_committed_offset))
            assert at_commit == committed_log_state(self.sb)

    @invariant()
    def acknowledged_records_are_never_lost(self) -> None:
        p = self.sb.partition()
        for key, value, offset in self.acked:
            found = False
            for replica in (p.leader,):
                for batch in replica.batches:
                    if batch.base_offset <= offset < batch.next_offset:
                        k, v = batch.records[offset - batch.base_offset]
                        rec = KV_SERDE.deserialize(k, v)
                        found = rec.key["key"] == key and rec.value == {"value": value}
            assert found, f"acknowledged {key}={value} at offset {offset} is gone from the log"


RuntimeUnderFaults.TestCase.settings = settings(max_examples=60, stateful_step_count=40,
                                                derandomize=True, deadline=None)
TestRuntimeUnderFaults = RuntimeUnderFaults.TestCase
