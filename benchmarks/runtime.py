"""Committed writes per second through the CoordinatorRuntime, next to a floor from the same run.

Run it from the repository root::

    .venv/bin/python benchmarks/runtime.py            # 200,000 writes per configuration
    .venv/bin/python benchmarks/runtime.py --quick    # 20,000 writes, a few seconds
    .venv/bin/python benchmarks/runtime.py --gc freeze   # gc.freeze() after setup (see below)
    .venv/bin/python benchmarks/runtime.py --profile linger=0,per_step=all,serde=binary
    .venv/bin/python benchmarks/runtime.py --quick --count   # + calls and bytecodes per write

What is measured
----------------
One `__consumer_offsets` partition with three replicas (`ReplicatedPartition`, 1 ms replication
latency), the deterministic event processor, the example key-value shard (`KeyValueShard`) and
`RuntimeConfig(append_linger_ms=0)` or `(append_linger_ms=10)`. N `put` writes over K distinct
keys are submitted in waves of W: the wave's W writes are scheduled, then the scheduler runs
until every future of the wave is done, so virtual time advances, the linger timer fires, the
followers fetch, the high watermark moves and the parked responses are released. A write counts
only if its future completed successfully (its records committed). The time is wall-clock
(`time.perf_counter`) from the first submission to the last completion; loading the partition is
not timed. The benchmark may read the wall clock; the kit's core never does.

Each linger runs in four configurations (INFO rows):

* `per_step=all`: `DeterministicEventProcessor(max_events_per_step=None)`, one scheduler step
  runs events back to back while nothing else is due (same events, same order, same virtual
  times and trace; fewer scheduler round trips). **The targets are judged on these rows.**
  `per_step=1`: the processor's default, one coordinator event per scheduler step (what
  learners step through in the notebooks), shown for comparison;
* `serde=json`: `KV_SERDE`, the sandbox's default (Kafka's framing, JSON structs);
  `serde=binary`: `KV_BINARY_SERDE` (Kafka's framing, int16 type/version + uint16-length UTF-8
  strings). The floor of a row uses the row's serde, so its ratio compares like with like.

The floor
---------
The floor is the same per-write shard work with no runtime around it, timed in the same process
right before the runtime run of that configuration:

* build the record and response exactly as the runtime does, by calling `KeyValueShard.put`
  on a real shard (its `CoordinatorResult`, `kv_record`, response string, `store.get`);
* serialise every record with the row's serde (the runtime serialises before appending);
* replay it into the shard's `TimelineHashMap` under a `SnapshotRegistry` (`KeyValueShard.replay`);
* take a snapshot per batch at the batch's end offset, as the runtime does when the batch is
  appended (one write per batch at linger 0, one wave per batch at linger 10 ms), and drop the
  snapshots below the end of each wave, as the runtime does when the high watermark passes them.

It has no events, accumulator, futures, log, size estimates, replication, high-watermark
listener, deferred queue, timers or trace. So "floor writes/s" is an upper bound for this shard
in this interpreter, and "ratio" (runtime / floor) says how much of the time the runtime's own
machinery takes. Targets: at least 100,000 committed writes/s and at least 25% of the floor.
Making the shard's own work cheaper (a faster serde) raises both rates and lowers the ratio.

Garbage collection
------------------
`--gc default` (the default): Python's cyclic garbage collector runs with its default settings
in both floor and runtime, and the table says so. The runtime keeps more alive than the floor:
every in-flight write (its event and future, and what its completion needs: the response and
append future) until it commits, and at linger 0 a snapshot per write; each collection that
finds them walks them, and the more survive, the more often collections run. The partition log
is stored as plain tuples in tuple chunks (`BatchLog`) and a map's elements are plain tuples
(`timeline`), which the collector stops tracking, so a long log or a large map does not make
full collections expensive; the workload's keys and values are tuples for the same reason.
`--gc freeze`: `gc.freeze()` after the setup (imports, load, workload built) and before timing,
in both floor and runtime, so collections skip what the process had before the run; everything
created during the run is collected as usual. The header line names the setting; figures for
the targets are quoted with `--gc default`. At DEBUG the trace keeps every event, with the
objects its fields name (each write's event among them), so collections there walk a trace
that grows with the run.

Wall-clock figures move with the machine's load; `--repeat 3` keeps the fastest of three runs of
each side, and `--cpu` times with the process's CPU time instead (steadier on a shared machine;
still not immune to a busy neighbour on the same core). `--count` prints Python calls and
bytecodes per committed write, which do not depend on the machine at all. The trace runs at
INFO (as a production broker logs); the DEBUG rows (per_step=1, JSON), where learners' notebooks
run and every event is recorded and rendered as a Kafka log line, are for comparison only and
are not held to the targets. After every run the result is checked: the shard's map equals the
expected final dict (at the latest and at the committed epoch), decoding the leader's log with
the serde and applying it gives the same dict, last_committed_offset == last_written_offset ==
the partition's high watermark, and every write committed. A failed check exits with status 1;
a missed target exits with status 0 unless `--strict` is given.

Where the time goes (Python 3.11.7 on the 2-core development VM)
----------------------------------------------------------------
Work per committed write that does not depend on the machine's speed, JSON serde,
per_step=all (instructions: `valgrind --tool=callgrind`, the difference between runs of 15,000
and 5,000 writes, timed part only; bytecodes and calls: `--count`):

    ====================  ===============  ================  ===========  ===========
    per committed write   floor linger 0   runtime linger 0  floor l. 10  runtime l.10
    ====================  ===============  ================  ===========  ===========
    instructions          45,300           93,500            38,500       82,100
    instructions, no GC   44,400           86,200            38,500       79,300
    bytecodes             510              1,396             390          1,272
    Python calls          19               37                14           34
    ====================  ===============  ================  ===========  ===========

Bytecodes per write by component (runtime, per_step=all; linger 0 / linger 10 ms):

    ============================================================  =====  =====
    shard work: put, record, serde, replay (the floor's work)      422    402
    the write event: run the operation, measure and replay its
      records; at linger 0 also append its own batch and park the
      write (`_WriteEvent.run`, `_append_own_batch`; at linger 10
      `append`, the batch flushed once per wave)                   288    374
    the log append (`ReplicatedPartition.append`)                   97      0
    submit: event, future, accumulator (`schedule_write_...`)      133    133
    completion at the high watermark (deferred queue, futures)     105    105
    write timeout (`TimerLane.arm` and its clean-up)               101    101
    processor + accumulator (take, run, finish)                    100    100
    snapshot per batch (the floor does the same at linger 0)        92      0
    the benchmark's own client loop                                 43     43
    `TopicPartition.__hash__` (3 calls), other                      15     12
    ============================================================  =====  =====

The runtime's machinery (runtime minus floor) costs about 890 bytecodes and 18 calls per write
at linger 0 and about 880 and 20 at linger 10 ms: a linger-0 write no longer pays for a batch
around it (it was about 1,160 and 31 at linger 0). At linger 0 a write whose context has no
batch open goes from its event straight to the partition (`_append_own_batch`): its records
are measured, replayed and appended as one batch, the last written offset, the snapshot and
the parked entry set in place, with no `_Batch` object, no batch lists, no flush call and no
writer lookups; anything unusual (a record that fails to serialise or replay, records larger
than a batch, a failed or out-of-sync append, DEBUG lines on) sets up the `_Batch` the general
path would hold at that point and carries on as it does, so the trace is the same
(`tests/test_runtime.py` runs every such path at INFO and DEBUG and compares them). The
garbage collector is the part instruction counts understate: the runtime keeps each in-flight
write's objects alive until the high watermark passes it (a wave of 1,000 writes is in flight
at once), and walking them costs cache misses more than instructions; with the collector off
the runtime runs about 8% fewer instructions at linger 0 and 3% fewer at linger 10, the floor
2% and 0%. gen0 collections per 1,000 writes are 9.9 at linger 0 and 4.9 at linger 10 (11.1
and 5.0 before the linger-0 work below).

CPU time, the code before the linger-0 work (4e3b223) and now, side by side in the same
session (three rounds alternating the two trees, each `--writes 40000 --repeat 5 --cpu`, best
round shown; the machine ran two other jobs, load average 4-6 on 2 cores):

    =================================  ================  ================
    per_step=all, CPU time              before            now
    =================================  ================  ================
    linger 0, JSON: runtime (ratio)       94,500/s (29%)  123,600/s (38%)
    linger 0, binary                     104,900/s (29%)  141,600/s (34%)
    linger 10, JSON                      164,400/s (42%)  161,000/s (42%)
    linger 10, binary                    164,700/s (36%)  172,400/s (36%)
    =================================  ================  ================

Linger 0 gained about 30% in CPU time (mean of the rounds: JSON 91,800 -> 120,000/s, binary
104,400 -> 133,500/s), more than its 14% fewer instructions (fewer objects per write to
allocate, free and walk); linger 10 is unchanged within the noise (one to two percent fewer
instructions). In the same session the code before this work ran linger 0 at about the rate it
ran on a quiet machine this morning (wall clock: JSON 94,761/s, binary 98,926/s), so linger 0
should land near 120,000/s on a quiet machine, above both targets with room; a run on a quiet
machine decides.

After 6fb0dfe (work for the simulation benchmark that runs through the runtime): a future keeps
a single done callback without a list, and `schedule_write_operation(..., on_error=...)` lets
the group service answer a failure from the write's own future. On an idle machine,
`--repeat 3 --no-debug`, per_step=all: linger 0 138,777/s (39.3%) JSON and 148,225/s (35.7%)
binary, linger 10 156,632/s (40.4%) and 176,606/s (35.7%).

What is left, and where it is: the write timeout is armed in `clock.TimerLane` (about 100
bytecodes and a lock per write; a cheaper `arm`, or a bulk arm for the writes of one step,
would help every write); `TopicPartition.__hash__` is a Python method, called three times per
write (the accumulator's queue of the partition, twice, and the runtime's context lookup).
Making TopicPartition a tuple subclass would run hash and equality in C, but the trace keeps
TopicPartition objects in its fields, and `json.dumps` writes a tuple subclass as a list: every
`tp` field of trace.jsonl (and the datasets made from it) would change from
"__consumer_offsets-0" to ["__consumer_offsets", 0] unless the trace wrote `str(tp)` for it.
A write's future and event are still two objects (one object would save an allocation per
write, but Kafka's `CoordinatorEvent.complete(exception)` and the future's `complete(value)`
share a name, and an event's repr is its log-line form). The snapshot per batch at linger 0 is
Kafka's, and the floor takes it too.

History
-------
* Before this work (see the commits up to 13d75b4): the floor and the configurations as above;
  2,330 (linger 0) and 1,649 (linger 10) bytecodes per write with the default processor;
  per_step=1 reached 68-81k/s at linger 10 and 44-52k/s at linger 0, per_step=all 100-109k/s
  and 58-63k/s on a quiet machine.
* This work (valgrind instructions per write, linger 0 / linger 10, per_step=all, JSON):
  140,355 / 98,598 at the start. Partition: an append recomputes the high watermark only
  without ISR followers, waiting fetches are counted, followers copy a response in one extend
  (131,283 / -). Processor: finishing an event and taking the next is one accumulator call
  with the same random draws (127,031 / -). One `append` path for one record and many (the
  single-record copy is gone), parked writes in two deques, flatter futures, a C-level
  liveness check for the timeout lane (123,752 / 90,603). Slots on `CoordinatorResult` and
  `CoordinatorRecord` (122,736 / 89,693). Timeline: elements as plain tuples (untracked by
  the collector), direct latest reads, cheaper snapshot creation (116,940 / 85,627); a
  snapshot's first delta in its own slots; a tier's single stashed element without a dict
  (109,227 / ~84,500). A completed write lets go of its result; a parked write keeps only
  what its completion needs (109,288 / 84,095, and half the garbage collections). Every step
  kept the DEBUG trace of the runtime and cluster scenarios identical byte for byte.
  CPU time per write then (best of 5, nice -19, 20,000 writes, loaded machine), before that
  work and after it: floor linger 0 5.5 -> 3.5 us; runtime linger 0 per_step=all 23.3 -> 12.4
  us, per_step=1 29.6 -> 14.9 us; floor linger 10 3.3 -> 2.8 us; runtime linger 10 per_step=all
  13.7 -> 7.9 us, per_step=1 14.2 -> 10.2 us. On a quiet machine it then measured (wall clock,
  `--repeat 3`) linger 0 per_step=all JSON 94,761/s (30.1% of the floor), binary 98,926/s
  (26.6%); linger 10 JSON 126,053/s (36.3%), binary 146,299/s (32.6%): linger 0 short of
  100,000/s.
* Linger 0 (from 4e3b223; valgrind instructions per write, linger 0 / linger 10,
  per_step=all, JSON: 108,300 / 83,700 at the start). A linger-0 write with no batch open
  appends its own batch from its event: no `_Batch`, flush call, writer lookups or
  deferred-queue list; one record measured in one call
  (`first_record_size`), the last written offset, snapshot and parked entry set in place,
  the partition's log entry appended in place (94,500 / 82,200). A write keeps its response,
  append future and record count in its own slots instead of an `_Appended` object; the
  context keeps the partition its own batches go to (93,500 / 82,100). Bytecodes per write
  1,672 -> 1,396 and calls 50 -> 37 at linger 0 (1,272 and 36 -> 34 at linger 10). Tried and
  dropped: `_Appended` as a tuple subclass made in C (fewer bytecodes, more time: two
  allocations and slower attribute reads). Every step kept the DEBUG trace of the runtime
  and cluster scenarios identical byte for byte, and the INFO trace of the benchmark and the
  cluster scenarios too (/work/notes/runtime_baseline.py).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import pstats
import sys
import time
from dataclasses import dataclass
from operator import methodcaller
from pathlib import Path
from typing import Any, Protocol

try:
    import coordinator_kit  # noqa: F401
except ImportError:  # run from a checkout without installing the kit
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coordinator_kit.clock import Scheduler
from coordinator_kit.runtime import (CoordinatorRuntime, CoordinatorState,
                                     DeterministicEventProcessor, RecordSerde,
                                     ReplicatedPartition, RuntimeConfig)
from coordinator_kit.runtime.kv import (KV_BINARY_SERDE, KV_SERDE, KeyValueShard,
                                        KeyValueShardBuilder)
from coordinator_kit.timeline import SnapshotRegistry, TimelineHashMap
from coordinator_kit.topic import TopicPartition
from coordinator_kit.trace import LogContext, Trace

# What the runs are timed with: the wall clock (the default), or this process's CPU time
# (`--cpu`: steadier on a shared machine, since time spent descheduled does not count).
CLOCK = time.perf_counter

TARGET_WRITES_PER_S = 100_000
TARGET_RATIO = 0.25

TP = TopicPartition.offsets(0)


@dataclass(frozen=True)
class Workload:
    writes: int
    keys: int
    wave: int

    def items(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Keys and values of the writes, in submission order (built before timing).

        Tuples, not lists: a tuple of strings is untracked by the cyclic garbage collector, so
        the benchmark's own input (two entries per write) is not walked by every full
        collection during the run, which would bill the runtime for the benchmark's data."""
        names = [f"key-{i:05d}" for i in range(self.keys)]
        return (tuple([names[i % self.keys] for i in range(self.writes)]),
                tuple([f"value-{i}" for i in range(self.writes)]))

    def expected(self) -> dict[str, str]:
        keys, values = self.items()
        return dict(zip(keys, values))


SERDES: dict[str, RecordSerde] = {"json": KV_SERDE, "binary": KV_BINARY_SERDE}
PER_STEP = {"1": 1, "all": None}  # DeterministicEventProcessor(max_events_per_step=...)


@dataclass(frozen=True)
class Config:
    linger_ms: int
    level: str
    per_step: str = "1"
    serde: str = "json"

    @property
    def label(self) -> str:
        return (f"linger={self.linger_ms},level={self.level},per_step={self.per_step},"
                f"serde={self.serde}")


@dataclass
class Result:
    config: Config
    committed: int
    seconds: float
    floor_writes: int
    floor_seconds: float
    problems: list[str]

    @property
    def rate(self) -> float:
        return self.committed / self.seconds

    @property
    def floor_rate(self) -> float:
        return self.floor_writes / self.floor_seconds

    @property
    def ratio(self) -> float:
        return self.rate / self.floor_rate


class _NoTimer:
    """The floor's shard never arms a timer (`put` does not use one)."""

    def schedule(self, *args: Any, **kwargs: Any) -> None:
        raise AssertionError("the floor does not run timers")


# -- the floor ----------------------------------------------------------------------------------


def _prepare_gc(gc_mode: str) -> None:
    """Collect what setup left behind; with `freeze`, move everything alive to the permanent
    generation so the run's collections skip it (undone by `_release_gc`)."""
    gc.collect()
    if gc_mode == "freeze":
        gc.freeze()


def _release_gc(gc_mode: str) -> None:
    if gc_mode == "freeze":
        gc.unfreeze()


class Instrument(Protocol):
    """What runs around the timed part of a run: cProfile.Profile, or an OpCounter."""

    def enable(self) -> None: ...

    def disable(self) -> None: ...


class OpCounter:
    """Counts Python-level calls and bytecodes (sys.settrace opcode events) while enabled.

    A measure of work that does not move with the machine's speed or load, unlike the wall
    clock (it leaves out what runs in C: the JSON encoder, dict and tuple operations, the
    garbage collector). Tracing makes the run some 30 times slower; the counts do not change.
    Only frames entered while enabled are counted (the benchmark's own loop is not).
    """

    def __init__(self) -> None:
        self.calls = 0
        self.opcodes = 0

    def _global(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "call":
            self.calls += 1
            frame.f_trace_lines = False
            frame.f_trace_opcodes = True
            return self._local
        return None

    def _local(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "opcode":
            self.opcodes += 1
        return self._local

    def enable(self) -> None:
        sys.settrace(self._global)

    def disable(self) -> None:
        sys.settrace(None)


def run_floor(work: Workload, linger_ms: int, serde: RecordSerde = KV_SERDE,
              gc_mode: str = "default", instrument: Instrument | None = None
              ) -> tuple[int, float, list[str]]:
    """The same shard work as the runtime does per write, with nothing around it."""
    keys, values = work.items()
    scheduler = Scheduler()
    registry = SnapshotRegistry()
    log = LogContext(Trace(scheduler, level="INFO"), "floor")
    shard: KeyValueShard = KeyValueShard(log, TimelineHashMap(registry), _NoTimer())
    serialize = serde.serialize
    replay = shard.replay
    put = shard.put
    snapshot = registry.idempotent_create_snapshot
    registry.get_or_create_snapshot(0)
    batch_per_write = linger_ms == 0
    offset = 0
    done = 0
    _prepare_gc(gc_mode)
    if instrument is not None:
        instrument.enable()
    start = CLOCK()
    for first in range(0, work.writes, work.wave):
        for i in range(first, min(first + work.wave, work.writes)):
            result = put(keys[i], values[i])
            for record in result.records:
                serialize(record)
                replay(offset, -1, -1, record)
                offset += 1
            if batch_per_write:
                snapshot(offset)
            done += 1
        if not batch_per_write:
            snapshot(offset)
        registry.delete_snapshots_up_to(offset)
    seconds = CLOCK() - start
    if instrument is not None:
        instrument.disable()
    _release_gc(gc_mode)
    problems = []
    if dict(shard.store.items()) != work.expected():
        problems.append("floor: final map differs from the expected dict")
    return done, seconds, problems


# -- the runtime --------------------------------------------------------------------------------


def run_runtime(work: Workload, config: Config, instrument: Instrument | None = None,
                gc_mode: str = "default") -> tuple[int, float, list[str]]:
    keys, values = work.items()
    scheduler = Scheduler()
    trace = Trace(scheduler, level=config.level)
    partition = ReplicatedPartition(TP, scheduler, trace)
    serde = SERDES[config.serde]
    runtime: CoordinatorRuntime[KeyValueShard] = CoordinatorRuntime(
        broker_id=0, scheduler=scheduler, trace=trace, partitions={TP: partition},
        shard_builder_supplier=KeyValueShardBuilder, serde=serde,
        config=RuntimeConfig(append_linger_ms=config.linger_ms),
        processor=DeterministicEventProcessor(  # the runtime's own default but for per_step
            scheduler, seed=0, max_events_per_step=PER_STEP[config.per_step]))
    runtime.schedule_load_operation(TP, 0)
    scheduler.run_until(lambda: runtime.context_state(TP) is CoordinatorState.ACTIVE)
    write = runtime.schedule_write_operation
    committed = 0
    failures: list[BaseException] = []

    _prepare_gc(gc_mode)
    if instrument is not None:
        instrument.enable()
    start = CLOCK()
    for first in range(0, work.writes, work.wave):
        last = min(first + work.wave, work.writes)
        # The client: one `shard.put(key, value)` write per item, futures kept for the wave.
        wave = [write("put", TP, methodcaller("put", keys[i], values[i]))
                for i in range(first, last)]
        pending = iter(wave)
        head = next(pending)

        def wave_done() -> bool:
            nonlocal head
            while head is not None and head.done():
                head = next(pending, None)
            return head is None

        scheduler.run_until(wave_done)
        for future in wave:
            if future.failed():
                failures.append(future.exception())
            else:
                committed += 1
    seconds = CLOCK() - start
    if instrument is not None:
        instrument.disable()
    _release_gc(gc_mode)

    problems = []
    if failures:
        problems.append(f"{len(failures)} writes failed, first: {failures[0]!r}")
    ctx = runtime.context(TP)
    coordinator = None if ctx is None else ctx.coordinator
    if coordinator is None:
        problems.append("the coordinator is not loaded after the run")
    else:
        expected = work.expected()
        store = coordinator.shard.store  # type: ignore[attr-defined]
        if dict(store.items()) != expected:
            problems.append("the shard's map differs from the expected dict")
        if dict(store.items(epoch=coordinator.last_committed_offset)) != expected:
            problems.append("the committed view of the map differs from the expected dict")
        if coordinator.last_committed_offset != coordinator.last_written_offset:
            problems.append(f"last_committed_offset {coordinator.last_committed_offset} != "
                            f"last_written_offset {coordinator.last_written_offset}")
        if coordinator.last_written_offset != work.writes:
            problems.append(f"last_written_offset {coordinator.last_written_offset} != "
                            f"{work.writes} records written")
        if partition.high_watermark != coordinator.last_committed_offset:
            problems.append(f"high watermark {partition.high_watermark} != "
                            f"last_committed_offset {coordinator.last_committed_offset}")
        decoded: dict[str, str] = {}
        for batch in partition.read(0):
            for key, value in batch.records:
                record = serde.deserialize(key, value)
                if record.value is None:
                    decoded.pop(record.key["key"], None)
                else:
                    decoded[record.key["key"]] = record.value["value"]
        if decoded != expected:
            problems.append("the leader's log, decoded with the serde, differs from the "
                            "expected dict")
    runtime.close()
    return committed, seconds, [f"{config.label}: {p}" for p in problems]


def measure(work: Workload, config: Config, repeat: int = 1, gc_mode: str = "default") -> Result:
    """Floor then runtime, `repeat` times each; the fastest run of each counts (as timeit)."""
    problems: list[str] = []
    floor = runtime = None
    for _ in range(repeat):
        writes, seconds, more = run_floor(work, config.linger_ms, SERDES[config.serde], gc_mode)
        problems += more
        if floor is None or seconds < floor[1]:
            floor = (writes, seconds)
        committed, seconds, more = run_runtime(work, config, gc_mode=gc_mode)
        problems += more
        if runtime is None or seconds < runtime[1]:
            runtime = (committed, seconds)
    assert floor is not None and runtime is not None
    return Result(config, runtime[0], runtime[1], floor[0], floor[1], problems)


# -- output -------------------------------------------------------------------------------------


def is_target_row(config: Config) -> bool:
    """The rows held to the targets: trace at INFO, events run back to back (per_step=all)."""
    return config.level == "INFO" and config.per_step == "all"


def _verdict(result: Result) -> str:
    rate = "PASS" if result.rate >= TARGET_WRITES_PER_S else "MISS"
    ratio = "PASS" if result.ratio >= TARGET_RATIO else "MISS"
    return f"{rate:<6} {ratio}"


GC_NOTES = {
    "default": "GC: default settings " + str(gc.get_threshold()),
    "freeze": "GC: gc.freeze() after setup, default thresholds " + str(gc.get_threshold()),
}


def print_table(work: Workload, results: list[Result], gc_mode: str = "default") -> None:
    print(f"{work.writes:,} puts over {work.keys:,} keys in waves of {work.wave:,}; "
          f"Python {sys.version.split()[0]}; {GC_NOTES[gc_mode]}; "
          f"{'CPU time' if CLOCK is time.process_time else 'wall clock'}; targets: "
          f">= {TARGET_WRITES_PER_S:,} committed writes/s and >= {TARGET_RATIO:.0%} of the floor "
          f"(INFO, per_step=all rows)")
    header = (f"{'configuration':<46} {'writes':>9} {'seconds':>8} {'committed/s':>12} "
              f"{'floor/s':>10} {'ratio':>6}  {'>=100k >=25%':<12}")
    print(header)
    print("-" * len(header))
    for r in results:
        note = ("" if is_target_row(r.config) else "  (default processor: comparison)"
                if r.config.level == "INFO" else "  (comparison only)")
        print(f"{r.config.label:<46} {r.committed:>9,} {r.seconds:>8.2f} {r.rate:>12,.0f} "
              f"{r.floor_rate:>10,.0f} {r.ratio:>6.1%}  {_verdict(r):<12}{note}")


def count_work(work: Workload, configs: list[Config], gc_mode: str = "default") -> None:
    """Calls and bytecodes per committed write, floor and runtime, for each configuration."""
    print(f"Machine-independent work ({work.writes:,} puts, sys.settrace opcode counts; C-level "
          f"work such as JSON encoding, dict operations and garbage collection not included):")
    header = (f"{'configuration':<46} {'floor calls':>11} {'floor ops':>10} {'calls':>7} "
              f"{'ops':>7} {'ops vs floor':>12}")
    print(header)
    print("-" * len(header))
    for config in configs:
        floor, runtime = OpCounter(), OpCounter()
        writes, _, _ = run_floor(work, config.linger_ms, SERDES[config.serde], gc_mode, floor)
        committed, _, _ = run_runtime(work, config, runtime, gc_mode)
        print(f"{config.label:<46} {floor.calls / writes:>11.1f} {floor.opcodes / writes:>10,.0f} "
              f"{runtime.calls / committed:>7.1f} {runtime.opcodes / committed:>7,.0f} "
              f"{runtime.opcodes / committed / (floor.opcodes / writes):>11.2f}x")


def profile_one(work: Workload, config: Config, top: int, gc_mode: str = "default") -> None:
    profiler = cProfile.Profile()
    committed, seconds, problems = run_runtime(work, config, profiler, gc_mode)
    print(f"{config.label}: {committed:,} committed in {seconds:.2f} s under cProfile")
    for problem in problems:
        print("PROBLEM:", problem)
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    print(out.getvalue())


def _parse_config(text: str) -> Config:
    fields = dict(part.split("=", 1) for part in text.split(","))
    unknown = set(fields) - {"linger", "level", "per_step", "serde"}
    if unknown:
        raise SystemExit(f"unknown configuration field(s) {sorted(unknown)}: use linger, level, "
                         f"per_step (1 or all) and serde (json or binary)")
    config = Config(int(fields.get("linger", "0")), fields.get("level", "INFO").upper(),
                    fields.get("per_step", "1"), fields.get("serde", "json"))
    if config.per_step not in PER_STEP or config.serde not in SERDES:
        raise SystemExit(f"per_step must be one of {list(PER_STEP)} and serde one of "
                         f"{list(SERDES)}, got {text!r}")
    return config


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="20,000 writes instead of 200,000")
    parser.add_argument("--writes", type=int, help="number of puts (overrides --quick)")
    parser.add_argument("--keys", type=int, default=5_000, help="distinct keys (default 5,000)")
    parser.add_argument("--wave", type=int, default=1_000,
                        help="writes submitted before running the scheduler (default 1,000)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run floor and runtime this many times, keep the fastest of each")
    parser.add_argument("--no-debug", action="store_true", help="skip the DEBUG comparison rows")
    parser.add_argument("--strict", action="store_true",
                        help="exit with status 2 when an INFO row misses a target")
    parser.add_argument("--gc", choices=sorted(GC_NOTES), default="default",
                        help="garbage collector setting for floor and runtime (default: Python's "
                             "defaults; freeze: gc.freeze() after setup)")
    parser.add_argument("--profile", metavar="linger=N,level=L,per_step=1|all,serde=json|binary",
                        help="run one configuration under cProfile and print the hot spots")
    parser.add_argument("--top", type=int, default=30, help="rows of profile output")
    parser.add_argument("--cpu", action="store_true",
                        help="time runs with this process's CPU time instead of the wall clock "
                             "(steadier on a shared machine)")
    parser.add_argument("--count", action="store_true",
                        help="also count Python calls and bytecodes per write (machine-"
                             "independent; a traced run of --count-writes puts per configuration)")
    parser.add_argument("--count-writes", type=int, default=4_000,
                        help="puts per configuration for --count (default 4,000)")
    args = parser.parse_args(argv)

    global CLOCK
    CLOCK = time.process_time if args.cpu else time.perf_counter
    writes = args.writes or (20_000 if args.quick else 200_000)
    work = Workload(writes, min(args.keys, writes), args.wave)
    if args.profile:
        profile_one(work, _parse_config(args.profile), args.top, args.gc)
        return 0

    configs = [Config(linger, "INFO", per_step, serde) for linger in (0, 10)
               for per_step in PER_STEP for serde in SERDES]
    if not args.no_debug:
        configs += [Config(0, "DEBUG"), Config(10, "DEBUG")]
    results = [measure(work, c, args.repeat, args.gc) for c in configs]
    print_table(work, results, args.gc)
    problems = [p for r in results for p in r.problems]
    for problem in problems:
        print("CHECK FAILED:", problem)
    if problems:
        return 1
    print("checks: every write committed; final map (latest and committed) and the leader's log "
          "decoded with the serde equal the expected dict; last_committed_offset == "
          "last_written_offset == high watermark")
    if args.count:
        print()
        count_work(Workload(args.count_writes, min(args.keys, args.count_writes), args.wave),
                   [c for c in configs if c.level == "INFO"], args.gc)
    missed = [r for r in results if is_target_row(r.config) and "MISS" in _verdict(r)]
    return 2 if missed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
