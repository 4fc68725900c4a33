"""Lesson 03: the CoordinatorRuntime lifecycle, one step at a time.

The notebook drives the kit itself (`RuntimeSandbox`, its runtimes and its partition); this
module holds only what a cell would otherwise spell out by hand, so the cells stay short and
everything here is tested (tests/test_lessons_03_04.py):

* small views that print the same text on every run: a context in one line, the partition's
  log end / high watermark / ISR, a table of steps (as in Kafka's
  `CoordinatorRuntimeTest.testScheduleWriteOp`), the records in the log, the context diagram
  with the state the context is in and its moves numbered;
* a log cursor that prints the Kafka log lines written since the previous cell;
* the seeded runs behind the lesson's surprises (a reload with an uncommitted tail, loads
  queued in the single-threaded loader, a batch whose append fails);
* what a coordinator does once the followers of its partition stop fetching, worked out from
  the configs (`stall_timeline`: parked writes, `offsets.commit.timeout.ms`, the ISR checks of
  `replica.lag.time.max.ms`) and set next to the run's own trace;
* a widely shared walkthrough's wording next to what Kafka's code does
  (docs/kafka-code-vs-common-descriptions.md);
* the exercise checks. An unanswered exercise holds `...` (Ellipsis): its check says "not
  answered yet" and does not raise, so "Run all" reaches the end of the notebook and nbval
  compares the check's output like any other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..cluster import Cluster
from ..errors import Errors, KafkaError
from ..runtime.future import CoordinatorFuture
from ..runtime.kv import KV_SERDE, kv_record
from ..runtime.partition import ReplicatedPartition
from ..runtime.records import RecordSerde
from ..runtime.runtime import CONTEXT_STATES, CoordinatorState
from ..runtime.sandbox import RuntimeSandbox
from ..runtime.shard import CoordinatorResult
from ..trace import Trace

__all__ = [
    "TextTable", "LogCursor", "Steps", "Verdict", "NOT_ANSWERED",
    "loaded_sandbox", "write", "context_line", "partition_line", "show_status",
    "log_table", "context_diagram", "last_transition", "error_of",
    "stall_followers", "resume_followers", "restart_coordinator",
    "reload_with_tail", "queued_loads", "failed_batch",
    "SeedClaim", "ClaimList", "SEED_000_DIFFERENCES", "seed_differences", "request_errors",
    "check_exercise_1", "check_exercise_2", "check_exercise_3", "check_exercise_4",
    "unanswered", "as_error", "hints", "exercise_2_snapshots", "exercise_3_outcome",
    "exercise_4_queue_ms", "IsrCheck", "isr_checks", "Moment", "StallTimeline",
    "stall_timeline",
]

NOT_ANSWERED: Any = ...  # the placeholder an exercise cell starts with


# --------------------------------------------------------------------------------------------
# Plain-text views (stable output: no object addresses, no wall clock)


class TextTable:
    """Rows printed as aligned text columns; a cell ending with it shows the table."""

    def __init__(self, headers: Sequence[str], rows: Iterable[Sequence[Any]] = (),
                 title: str | None = None) -> None:
        self.headers = [str(h) for h in headers]
        self.rows: list[list[str]] = []
        self.title = title
        for row in rows:
            self.add(row)

    def add(self, row: Sequence[Any]) -> None:
        if len(row) != len(self.headers):
            raise ValueError(f"a row needs {len(self.headers)} cells ({', '.join(self.headers)})"
                             f", got {len(row)}: {list(row)!r}")
        self.rows.append([_cell(c) for c in row])

    def __len__(self) -> int:
        return len(self.rows)

    def column(self, header: str) -> list[str]:
        try:
            i = self.headers.index(header)
        except ValueError:
            raise KeyError(f"no column {header!r}; columns are {self.headers}") from None
        return [r[i] for r in self.rows]

    def __str__(self) -> str:
        widths = [max([len(h)] + [len(r[i]) for r in self.rows])
                  for i, h in enumerate(self.headers)]
        lines = [self.title] if self.title else []
        lines.append("  ".join(h.ljust(w) for h, w in zip(self.headers, widths)).rstrip())
        lines.append("  ".join("-" * w for w in widths))
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in self.rows]
        return "\n".join(lines)

    __repr__ = __str__


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


class LogCursor:
    """Prints the Kafka log lines written since the last `show()`: one cell, its own lines."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.position = len(trace)

    def lines(self, level: str = "INFO", match: str | Sequence[str] | None = None,
              source: str | None = None, advance: bool = True) -> list[str]:
        """The new lines at or above `level`, keeping those containing any of `match`."""
        wanted = (match,) if isinstance(match, str) else tuple(match or ())
        out = [ln for ln in self.trace.lines(level=level, source=source,
                                             since_seq=self.position)
               if not wanted or any(w in ln for w in wanted)]
        if advance:
            self.position = len(self.trace)
        return out

    def show(self, level: str = "INFO", match: str | Sequence[str] | None = None,
             source: str | None = None) -> None:
        lines = self.lines(level, match, source)
        print("\n".join(lines) if lines else f"(no new {level} lines)")

    def skip(self) -> None:
        """Forget what was written so far (the next `show` starts from here)."""
        self.position = len(self.trace)


def error_of(future: CoordinatorFuture[Any]) -> Errors | None:
    """The Kafka error a completed future failed with (None if it succeeded)."""
    if not future.done():
        raise ValueError(f"future {future.name!r} is still pending; run the scheduler first")
    exc = future.exception()
    if exc is None:
        return None
    if isinstance(exc, KafkaError):
        return exc.error
    raise TypeError(f"future {future.name!r} failed with {type(exc).__name__}, not a Kafka "
                    f"error: {exc}")


def _parked(described: Mapping[str, Any]) -> str:
    parked = described.get("parked") or []
    return "; ".join(f"@{offset}: {', '.join(names)}" for offset, names in parked) or "-"


def context_line(sb: RuntimeSandbox, broker: int | None = None, partition: int = 0) -> str:
    """One broker's context for one partition, in one line (the leader's by default)."""
    tp = sb.tp(partition)
    b = sb.partition(partition).leader_id if broker is None else broker
    if b not in sb.runtimes:
        raise ValueError(f"no broker {b}; brokers are {sorted(sb.runtimes)}")
    d = sb.runtimes[b].describe(tp)
    if d["state"] is None:
        return f"broker {b}  {tp}: no context"
    head = f"broker {b}  {tp}: {d['state']} (epoch {d['epoch']})"
    if d["last_written_offset"] is None:
        return head + ("  no shard yet" if d["state"] == "INITIAL" else "  no shard")
    timers = ", ".join(d["timers"]) or "-"
    batch = "" if d["open_batch"] is None else \
        f"  open batch [{d['open_batch'][0]}, {d['open_batch'][1]})"
    return (f"{head}  lastWritten {d['last_written_offset']}  lastCommitted "
            f"{d['last_committed_offset']}  snapshots {_cell(d['snapshots'])}  parked "
            f"{_parked(d)}{batch}  timers {timers}")


def partition_line(sb: RuntimeSandbox, partition: int = 0) -> str:
    """Leader, log end offset, high watermark and ISR of one partition."""
    p = sb.partition(partition)
    return (f"{p.tp}: leader {p.leader_id} (leader epoch {p.leader_epoch})  log end "
            f"{p.log_end_offset}  HWM {p.high_watermark}  ISR {_cell(p.isr)}")


def show_status(sb: RuntimeSandbox, partition: int = 0, brokers: Iterable[int] | None = None
                ) -> None:
    """Print the virtual time, the contexts, the partition and what holds the HWM back."""
    print(f"t = {sb.scheduler.now} ms")
    for b in (sorted(sb.runtimes) if brokers is None else brokers):
        print(context_line(sb, b, partition))
    print(partition_line(sb, partition))
    print(sb.partition(partition).why_not_committed())


def log_table(partition: ReplicatedPartition, serde: RecordSerde = KV_SERDE,
              broker: int | None = None,
              describe: Callable[[Any], tuple[str, str]] | None = None) -> TextTable:
    """The records in one replica's log (the leader's by default), decoded with `serde`.

    A row per record: offset, batch, leader epoch of the batch, whether the high watermark has
    passed it, and the key and value as `describe(record)` words them (a tombstone's value is
    "null").
    """
    b = partition.leader_id if broker is None else broker
    hwm = partition.high_watermark
    show = describe or _describe_kv
    table = TextTable(["offset", "batch", "epoch", "committed", "key", "value"],
                      title=f"{partition.tp} on broker {b}: log end "
                            f"{partition.replicas[b].log_end_offset}, high watermark {hwm}")
    for batch in partition.read(b):
        span = f"[{batch.base_offset}, {batch.next_offset})"
        for offset, key, value in batch.offset_records():
            k, v = show(serde.deserialize(key, value))
            table.add([offset, span, batch.leader_epoch, "yes" if offset < hwm else "no", k, v])
    return table


def _describe_kv(record: Any) -> tuple[str, str]:
    return record.key["key"], "null" if record.value is None else record.value["value"]


def last_transition(trace: Trace, broker: int, partition: int = 0
                    ) -> tuple[CoordinatorState, CoordinatorState] | None:
    """The last context transition of `broker` for `__consumer_offsets-<partition>`."""
    source, tp = f"broker-{broker}", f"__consumer_offsets-{partition}"
    for event in reversed(trace.events):
        if event.kind == "context_transition" and event.source == source \
                and str(event.fields.get("tp")) == tp:
            return (CoordinatorState(str(event.fields["old_state"])),
                    CoordinatorState(str(event.fields["new_state"])))
    return None


def context_diagram(sb: RuntimeSandbox, broker: int | None = None, partition: int = 0,
                    since_ms: int | None = None) -> Any:
    """The live context diagram of one broker (the leader by default): the state it is in
    filled, and the transitions its context for the partition made since `since_ms` (all of
    them by default) numbered 1, 2, 3... in order (`coordinator_kit.viz.live`).

    A context that was unloaded is gone from the runtime; the diagram then shows CLOSED, the
    state it left in.
    """
    from ..viz.live import context_transitions, live_diagram

    b = sb.partition(partition).leader_id if broker is None else broker
    if b not in sb.runtimes:
        raise ValueError(f"no broker {b}; brokers are {sorted(sb.runtimes)}")
    tp = sb.tp(partition)
    taken = last_transition(sb.trace, b, partition)
    state = sb.runtimes[b].context_state(tp)
    if state is None and taken is not None:
        state = taken[1]
    title = f"broker {b}, {tp}: {state.name if state else 'no context'}"
    return live_diagram(CONTEXT_STATES, state, title=title,
                        moves=context_transitions(sb.trace, tp, b), since_ms=since_ms)


class Steps:
    """A table of the runtime's offsets after each step, like Kafka's
    `CoordinatorRuntimeTest.testScheduleWriteOp` walks through them.

    `add(label, *futures)` records a row: virtual time, the step, lastWritten, lastCommitted,
    snapshots, the high watermark, the parked writes, and which tracked futures completed since
    the previous row.
    """

    def __init__(self, sb: RuntimeSandbox, partition: int = 0) -> None:
        self.sb = sb
        self.partition = partition
        self.table = TextTable(["t", "step", "lastWritten", "lastCommitted", "snapshots", "HWM",
                                "parked", "completed"])
        self._futures: list[CoordinatorFuture[Any]] = []
        self._reported: set[int] = set()

    def add(self, label: str, *futures: CoordinatorFuture[Any]) -> Steps:
        self._futures += futures
        d = self.sb.describe(self.partition)
        done = []
        for f in self._futures:
            if id(f) not in self._reported and f.done():
                self._reported.add(id(f))
                err = None if not f.failed() else error_of(f)
                done.append(f.name if err is None else f"{f.name} ({err.name})")
        self.table.add([f"{self.sb.scheduler.now}ms", label, d.get("last_written_offset"),
                        d.get("last_committed_offset"), d.get("snapshots"),
                        d["high_watermark"], _parked(d), ", ".join(done) or "-"])
        return self

    def __len__(self) -> int:
        return len(self.table)

    def __repr__(self) -> str:
        return str(self.table)


# --------------------------------------------------------------------------------------------
# Driving the sandbox


def loaded_sandbox(**kwargs: Any) -> RuntimeSandbox:
    """A `RuntimeSandbox` (linger 0 unless given) whose leaders have loaded: every context
    ACTIVE."""
    kwargs.setdefault("append_linger_ms", 0)
    sb = RuntimeSandbox(**kwargs)
    sb.start()
    sb.run_for(10)
    for tp, p in sorted(sb.partitions.items()):
        state = sb.runtimes[p.leader_id].context_state(tp)
        if state is not CoordinatorState.ACTIVE:
            raise RuntimeError(f"{tp} did not load on broker {p.leader_id}: it is {state}")
    return sb


def write(sb: RuntimeSandbox, name: str, records: Mapping[str, str | None] | None = None,
          partition: int = 0) -> CoordinatorFuture[str]:
    """A write on the partition's leader that produces one key-value record per item of
    `records` (None writes a tombstone) in one atomic batch, or no record at all, and answers
    with its own name once committed."""
    items = list((records or {}).items())
    for key, value in items:
        if not isinstance(key, str) or not key or not (value is None or isinstance(value, str)):
            raise ValueError(f"records map non-empty string keys to strings (or None for a "
                             f"tombstone); got {key!r}: {value!r}")
    recs = [kv_record(k, v) for k, v in items]
    return sb.leader(partition).schedule_write_operation(
        name, sb.tp(partition), lambda shard: CoordinatorResult(recs, name))


def stall_followers(sb: RuntimeSandbox, partition: int = 0) -> list[int]:
    """Every follower of the partition stops fetching; returns their broker ids."""
    p = sb.partition(partition)
    followers = [b for b in p.replicas if b != p.leader_id]
    for b in followers:
        p.stall_replica(b)
    return followers


def resume_followers(sb: RuntimeSandbox, partition: int = 0) -> None:
    p = sb.partition(partition)
    for b in p.replicas:
        if b != p.leader_id:
            p.resume_replica(b)


def restart_coordinator(sb: RuntimeSandbox, partition: int = 0) -> int:
    """The leader's coordinator restarts and is elected again at a new leader epoch: its old
    context is unloaded and a fresh one loads from the broker's own log. Returns the epoch."""
    p = sb.partition(partition)
    b = p.leader_id
    epoch = p.elect_leader(b)
    sb.runtimes[b].schedule_unload_operation(p.tp, epoch)
    sb.runtimes[b].schedule_load_operation(p.tp, epoch)
    return epoch


def reload_with_tail(committed: Sequence[Mapping[str, str]],
                     tail: Sequence[Mapping[str, str]]) -> RuntimeSandbox:
    """Writes that commit, then writes that do not (followers stalled), then a reload.

    Each mapping is one write, so one batch in the log. Returns the sandbox after the
    coordinator restarted and loaded its own log again: `describe()` shows the snapshots the
    loader kept (`CoordinatorLoaderImpl`: at the high watermark and at each batch end above it).
    """
    sb = loaded_sandbox()
    for i, records in enumerate(committed):
        write(sb, f"committed#{i + 1}", records)
        sb.run_for(10)
    stall_followers(sb)
    for i, records in enumerate(tail):
        write(sb, f"tail#{i + 1}", records)
        sb.run_for(10)
    restart_coordinator(sb)
    sb.run_for(10)
    return sb


def queued_loads(partitions: int, extra_ms: int) -> list[str]:
    """One broker leads `partitions` partitions, each load slowed by `extra_ms`; returns the
    "Finished loading" lines, which say how long each load waited in the loader's queue."""
    if partitions < 1 or extra_ms < 0:
        raise ValueError(f"need partitions >= 1 and extra_ms >= 0, got {partitions}, {extra_ms}")
    sb = RuntimeSandbox(brokers=1, partitions=partitions)
    rt = sb.runtimes[0]
    for p in range(partitions):
        rt.loader.slow_next_load(sb.tp(p), extra_ms)
    sb.start()
    sb.run_for(partitions * (extra_ms + 2) + 10)
    return [ln for ln in sb.log_lines("INFO") if "Finished loading" in ln]


def failed_batch(committed: int, batched: Sequence[str], linger_ms: int = 10
                 ) -> tuple[RuntimeSandbox, list[CoordinatorFuture[str]]]:
    """`committed` writes commit; then each key of `batched` is written in the same linger
    window, and the append of that batch fails. Returns the sandbox and the batched writes."""
    sb = loaded_sandbox(append_linger_ms=linger_ms)
    for i in range(committed):
        write(sb, f"committed#{i + 1}", {f"c{i + 1}": "ok"})
        sb.run_for(linger_ms + 10)
    sb.partition().fail_next_append()
    futures = [write(sb, f"put({k})", {k: "new"}) for k in batched]
    sb.run_for(linger_ms + 10)
    return sb, futures


# --------------------------------------------------------------------------------------------
# A coordinator whose followers stall: what happens when, worked out from the configs


@dataclass(frozen=True)
class IsrCheck:
    """One run of the leader's ISR check: how long each follower had been out of step
    (now - its lastCaughtUpTimeMs), and which followers it dropped from the ISR."""

    at_ms: int
    behind_ms: Mapping[int, int]
    dropped: tuple[int, ...]
    lag_ms: int  # replica.lag.time.max.ms

    def __str__(self) -> str:
        parts = []
        for b, behind in self.behind_ms.items():
            verdict = (f"> {self.lag_ms:,}: out of the ISR" if b in self.dropped else
                       f"<= {self.lag_ms:,}: stays in the ISR")
            parts.append(f"broker {b} last caught up {behind:,} ms ago ({verdict})")
        return f"ISR check at {self.at_ms:,} ms: " + "; ".join(parts)


def isr_checks(partition: ReplicatedPartition, followers: Iterable[int], behind_from_ms: int,
               start_ms: int = 0) -> list[IsrCheck]:
    """The leader's ISR checks from now until every one of `followers` (stopped fetching,
    their lastCaughtUpTimeMs known) is out of the ISR, their log ends falling behind the
    leader's from `behind_from_ms` (the first append after they stopped).

    Kafka's `ReplicaManager` runs `maybeShrinkIsr` every `replica.lag.time.max.ms / 2`
    from the broker's start (`start_ms`; the kit's partitions start at 0).
    `Partition.maybeShrinkIsr` drops a follower that is not caught up
    (`Replica.isCaughtUp`: its log end is not the leader's and more than
    `replica.lag.time.max.ms` passed since its lastCaughtUpTimeMs). So a follower leaves the
    ISR between 30 and 45 s after it was last caught up with Kafka's default of 30 s.
    """
    lag = partition.replica_lag_time_max_ms
    period = lag // 2
    now = partition.scheduler.now
    caught_up = {}
    for b in followers:
        r = partition.replicas.get(b)
        if r is None or b == partition.leader_id:
            raise ValueError(f"broker {b} is not a follower of {partition.tp}; its followers "
                             f"are {[f for f in sorted(partition.replicas) if f != partition.leader_id]}")
        if r.fetching:
            raise ValueError(f"broker {b} still fetches {partition.tp}: a fetching follower "
                             f"keeps catching up. Stall it first (stall_replica({b}))")
        if b in partition.isr:
            caught_up[b] = r.last_caught_up_ms
    checks: list[IsrCheck] = []
    at = start_ms + ((now - start_ms) // period + 1) * period
    while caught_up:
        behind = {b: at - t for b, t in sorted(caught_up.items())}
        dropped = tuple(b for b, d in behind.items() if at >= behind_from_ms and d > lag)
        checks.append(IsrCheck(at, behind, dropped, lag))
        for b in dropped:
            del caught_up[b]
        at += period
    return checks


@dataclass(frozen=True)
class Moment:
    """Something a learner sees happen at `at_ms`, why it happens then (the config and the
    Kafka code that decide it), and the trace event that shows it (`kind`, plus a text the
    event's line contains), for checking the forecast against the run."""

    at_ms: int
    what: str
    decided_by: str
    kind: str | None = None
    contains: str = ""
    source: str | None = None
    not_before: int | None = None


@dataclass(frozen=True)
class StallTimeline:
    """What a group's coordinator does after every follower of its partition stopped fetching,
    worked out from the configs and the state at that instant (`stall_timeline`)."""

    group_id: str
    partition: str
    leader: int
    followers: tuple[int, ...]
    stalled_at: int
    moments: tuple[Moment, ...]
    checks: tuple[IsrCheck, ...]
    request_timeout_ms: int
    commit_timeout_ms: int

    @property
    def shrink_at(self) -> int:
        """When the last follower leaves the ISR, and the high watermark moves again."""
        return self.checks[-1].at_ms

    def at(self, kind: str) -> int:
        """The time of the first moment shown by trace events of `kind`."""
        for m in self.moments:
            if m.kind == kind:
                return m.at_ms
        raise KeyError(f"no moment of kind {kind!r}; kinds: "
                       f"{[m.kind for m in self.moments if m.kind]}")

    def table(self) -> TextTable:
        t = TextTable(["t (ms)", "what happens", "decided by"],
                      title=f"{self.group_id}: the followers {list(self.followers)} of "
                            f"{self.partition} (leader broker {self.leader}) stop fetching at "
                            f"{self.stalled_at:,} ms")
        for m in self.moments:
            t.add([f"{m.at_ms:,}", m.what, m.decided_by])
        return t

    def seen(self, trace: Trace) -> TextTable:
        """Each forecast moment next to the first trace event that shows it, at or after the
        stall (run the cluster past `shrink_at` first)."""
        t = TextTable(["forecast (ms)", "seen in the run (ms)", "what happens"])
        for m in self.moments:
            if m.kind is None:
                continue
            start = max(self.stalled_at, m.not_before or 0)
            ts = next((e.ts for e in trace.events
                       if e.kind == m.kind and e.ts >= start
                       and (m.source is None or e.source == m.source)
                       and m.contains in (e.message or "")), None)
            t.add([f"{m.at_ms:,}", "-" if ts is None else f"{ts:,}", m.what])
        return t

    def __repr__(self) -> str:
        note = (f"The consumers' request.timeout.ms ({self.request_timeout_ms:,} ms) never "
                f"runs out: the coordinator answers\nevery parked request after "
                f"offsets.commit.timeout.ms ({self.commit_timeout_ms:,} ms). From "
                f"{self.at('offset_commit_failed'):,} ms on, each\nauto-commit round and each "
                f"heartbeat fails the same way until the ISR shrinks at {self.shrink_at:,} ms.")
        return f"{self.table()}\n{note}"

    __str__ = __repr__


def _first_at_or_after(last: int, step: int, due: int) -> int:
    """The first of last + k * step (k >= 1) at or after `due`."""
    if due <= last + step:
        return last + step
    return last + -(-(due - last) // step) * step


def stall_timeline(cluster: Cluster, group_id: str = "group-1") -> StallTimeline:
    """When each thing happens once every follower of the group's `__consumer_offsets`
    partition has stopped fetching (call it right after stalling them: the panel's **Stall
    replica** on each follower, or `Cluster.stall_replica`).

    Worked out from the configs and the state at this instant:

    * the next auto-commit leaves at the first poll at or after its deadline
      (`auto.commit.interval.ms`, `ConsumerCoordinator.maybeAutoCommitOffsetsAsync`) and is
      written one network latency later; its records go to the leader's log and its response
      is parked until the high watermark passes them (`CoordinatorRuntime`, deferred queue);
    * a classic Heartbeat is a write too (`GroupCoordinatorService.heartbeat` schedules
      `classic-group-heartbeat` with `offsets.commit.timeout.ms`): with records uncommitted
      before it, its response is parked as well;
    * a parked write times out `offsets.commit.timeout.ms` after it ran
      (`CoordinatorWriteEvent.run` adds an `OperationTimeout`): REQUEST_TIMED_OUT, which
      `handleOperationException` answers as COORDINATOR_NOT_AVAILABLE; its records stay;
    * the followers leave the ISR at the first `isr_checks` check that finds them out of step
      for more than `replica.lag.time.max.ms`; the high watermark then jumps to the log end.
    """
    tp = cluster.partition_of(group_id)
    p = cluster.partitions[tp]
    leader = p.leader_id
    followers = tuple(b for b in p.replicas if b != leader)
    fetching = [b for b in followers if p.replicas[b].fetching]
    if fetching:
        raise ValueError(f"broker(s) {fetching} still fetch {tp}: stall every follower of the "
                         f"partition first (the panel's Stall replica on each, or "
                         f"cluster.stall_replica({tp.partition}, broker))")
    now = cluster.scheduler.now
    latency = cluster.network.latency_ms
    timeout = cluster.config.offsets_commit_timeout_ms
    members = [c for c in cluster.consumers.values()
               if c.config.group_id == group_id and c.running and not c.crashed
               and c.coordinator == leader and c.owned]
    if not members:
        raise ValueError(f"no running consumer of {group_id!r} owns partitions and talks to "
                         f"broker {leader}: nothing would be written")
    caught_up = {b: p.replicas[b].last_caught_up_ms for b in followers}
    names = ", ".join(sorted(c.name for c in members))
    last = ", ".join(f"{t:,}" for t in sorted(set(caught_up.values())))
    moments = [Moment(now, f"brokers {', '.join(map(str, followers))} stop fetching (last caught "
                           f"up at {last})", "Replica.lastCaughtUpTimeMs")]
    sent = min(_first_at_or_after(c.last_poll, c.processing_ms or 1,
                                  max(c.next_auto_commit, now)) for c in members)
    written = sent + latency
    interval = members[0].config.auto_commit_interval_ms
    moments.append(Moment(sent, f"{names} send their auto-commits",
                          f"auto.commit.interval.ms {interval:,}"))
    moments.append(Moment(written, f"broker {leader} writes them; answers wait for the HWM "
                                   f"({p.high_watermark})",
                          "CoordinatorRuntime, deferred queue", "offset_committed",
                          source=f"broker-{leader}"))
    hb_written = min(_first_at_or_after(c.last_heartbeat_sent,
                                        c.config.heartbeat_interval_ms,
                                        written - latency + 1) + latency for c in members)
    moments.append(Moment(hb_written, "the next heartbeats, writes too, wait behind them",
                          "classic-group-heartbeat is a write", "write_scheduled",
                          "classic-group-heartbeat", f"broker-{leader}", not_before=written + 1))
    moments.append(Moment(written + timeout, "the commits time out (REQUEST_TIMED_OUT); their "
                                             "records stay",
                          f"offsets.commit.timeout.ms {timeout:,}", "internal_scheduled",
                          "OperationTimeout(name=CoordinatorWriteEvent(name=commit-offset)",
                          f"broker-{leader}"))
    moments.append(Moment(written + timeout + latency, "consumers: auto-commit failed, "
                                                       "COORDINATOR_NOT_AVAILABLE",
                          "handleOperationException", "offset_commit_failed"))
    moments.append(Moment(hb_written + timeout + latency, "consumers: heartbeat failed, "
                                                          "COORDINATOR_NOT_AVAILABLE",
                          f"offsets.commit.timeout.ms {timeout:,}",
                          "heartbeat_failed_coordinator"))
    checks = isr_checks(p, followers, written)
    lag = p.replica_lag_time_max_ms
    for check in checks:
        longest = max(check.behind_ms.values())
        if check.dropped:
            moments.append(Moment(check.at_ms, f"ISR check: behind {longest:,} ms > {lag:,}: "
                                               f"ISR [{leader}], HWM to the log end",
                                  "Partition.maybeShrinkIsr", "isr_shrink"))
        else:
            moments.append(Moment(check.at_ms, f"ISR check: behind {longest:,} ms <= {lag:,}: "
                                               f"still in sync",
                                  f"replica.lag.time.max.ms / 2 = {lag // 2:,}"))
    moments.sort(key=lambda m: m.at_ms)
    return StallTimeline(group_id, str(tp), leader, followers, now, tuple(moments),
                         tuple(checks), members[0].config.request_timeout_ms, timeout)


def request_errors() -> dict[str, Errors | None]:
    """What a write gets from a broker whose context is LOADING, FAILED, unloaded, ACTIVE."""
    out: dict[str, Errors | None] = {}
    sb = RuntimeSandbox()
    sb.leader().loader.slow_next_load(sb.tp(), 500)
    sb.start()
    sb.run_for(10)
    f = write(sb, "during-load", {"k": "v"})
    sb.scheduler.run_pending()
    out["LOADING"] = error_of(f)

    sb = RuntimeSandbox()
    sb.leader().loader.fail_next_load(sb.tp())
    sb.start()
    sb.run_for(10)
    f = write(sb, "after-failed-load", {"k": "v"})
    sb.scheduler.run_pending()
    out["FAILED"] = error_of(f)

    sb = loaded_sandbox()
    old = sb.leader()
    sb.move_leader(0, to_broker=1)
    sb.run_for(10)
    f = old.schedule_write_operation("to-old-leader", sb.tp(),
                                     lambda shard: CoordinatorResult([kv_record("k", "v")], ""))
    sb.scheduler.run_pending()
    out["unloaded"] = error_of(f)
    f = write(sb, "to-new-leader", {"k": "v"})
    sb.run_for(10)
    out["ACTIVE"] = error_of(f)
    return out


# --------------------------------------------------------------------------------------------
# A common walkthrough next to Kafka's code. The walkthrough tells the runtime's lifecycle in
# seven steps; its source and the reasons are on docs/kafka-code-vs-common-descriptions.md.
# (The names with "seed" are kept for the notebook that imports them.)


@dataclass(frozen=True)
class SeedClaim:
    step: str
    seed_says: str
    code_does: str
    shown_in: str


SEED_000_DIFFERENCES: tuple[SeedClaim, ...] = (
    SeedClaim("1", "\"A CoordinatorShardBuilder is obtained ... and used to construct the "
                   "shard\" (when the context is created)",
              "the context starts INITIAL with no shard; shard and SnapshotRegistry are built "
              "when it enters LOADING", "Step 1, Step 2"),
    SeedClaim("2", "\"During loading, the shard transitions from INITIAL to LOADING state.\"",
              "the context does, when its Load event runs, before the loader reads a record",
              "Step 2"),
    SeedClaim("2", "\"Write operations received during loading are queued in a "
                   "DeferredEventCollection and replayed after loading completes.\"",
              "they fail at once with COORDINATOR_LOAD_IN_PROGRESS (14) and the client "
              "retries; no such collection exists", "Step 2, exercise 1"),
    SeedClaim("2", "\"If loading fails, the partition transitions to FAILED state.\"",
              "the context stays FAILED (NOT_COORDINATOR) until a Load with a higher epoch; a "
              "Load with the same epoch is ignored", "Fault: the load fails"),
    SeedClaim("3", "\"Failed writes trigger revert on the SnapshotRegistry.\"",
              "a handler that throws fails alone, with no records; a failed append reverts the "
              "whole batch and fails every write in it", "Fault: the append fails, exercise 3"),
    SeedClaim("3", "\"Responses are delivered only after the produced records are committed.\"",
              "a write with no records waits too, while anything before it is uncommitted",
              "Step 3"),
    SeedClaim("4", "\"Multiple reads can be processed concurrently for the same partition.\"",
              "reads are events in the partition's queue: one event per partition at a time, "
              "in order", "Step 4"),
    SeedClaim("7", "\"All pending write operations receive a NotLeaderOrFollower error.\"",
              "they fail with NOT_COORDINATOR (16): deferredEventQueue.failAll(NOT_COORDINATOR)",
              "Step 7"),
    SeedClaim("7", "\"When the broker loses leadership ... the runtime unloads the shard.\"",
              "only an unload with a higher epoch than the context's does; an older or equal "
              "one is ignored", "Step 7"),
)


class ClaimList:
    """The walkthrough's claims, one block each: what it says, what the code does, where the
    notebook shows it (printed wrapped, for a narrow cell)."""

    def __init__(self, claims: Sequence[SeedClaim], width: int = 96) -> None:
        self.claims = list(claims)
        self.width = width

    def __len__(self) -> int:
        return len(self.claims)

    def __str__(self) -> str:
        import textwrap

        blocks = []
        for c in self.claims:
            lines = []
            for label, text in ((f"walkthrough step {c.step}:", c.seed_says),
                                ("Kafka's code:", c.code_does), ("shown in:", c.shown_in)):
                label = label.ljust(20)
                lines += textwrap.wrap(text, self.width, initial_indent=label,
                                       subsequent_indent=" " * len(label))
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks)

    __repr__ = __str__


def seed_differences() -> ClaimList:
    return ClaimList(SEED_000_DIFFERENCES)


# --------------------------------------------------------------------------------------------
# Exercise checks


@dataclass(frozen=True)
class Verdict:
    """What a check says: `ok` is True (right), False (wrong, with a hint) or None (no answer
    yet). Shown as one line of text, the same on every run."""

    exercise: str
    ok: bool | None
    message: str

    def __repr__(self) -> str:
        mark = {True: "correct", False: "not yet", None: "not answered yet"}[self.ok]
        return f"{self.exercise}: {mark}. {_sentence(self.message)}"

    __str__ = __repr__


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def hints(*parts: str) -> str:
    """Several hints as one message, each a sentence."""
    return " ".join(_sentence(p) for p in parts)


def unanswered(exercise: str, answer: Any, shape: str) -> Verdict | None:
    if answer is NOT_ANSWERED:
        return Verdict(exercise, None, f"replace ... with {shape} and run this cell again.")
    return None


def as_error(value: Any) -> Errors | None:
    """An error given as `Errors.X`, its name ("X") or its code (an int); None for "no error"
    (None, "NONE" or 0). Anything else raises ValueError saying what is accepted."""
    if value is None:
        return None
    if isinstance(value, Errors):
        return None if value is Errors.NONE else value
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not an error; give Errors.X, its name or its code")
    if isinstance(value, int):
        try:
            e = Errors.for_code(value)
        except (KeyError, ValueError):
            raise ValueError(f"{value} is not a Kafka error code the kit knows") from None
        return None if e is Errors.NONE else e
    if isinstance(value, str):
        name = value.strip().upper()
        if name in Errors.__members__:
            e = Errors[name]
            return None if e is Errors.NONE else e
        raise ValueError(f"{value!r} is not the name of a Kafka error; names look like "
                         f"'NOT_COORDINATOR'")
    raise ValueError(f"{value!r} is not an error; give Errors.X, its name or its code")


EXERCISE_1_CASES = ("LOADING", "FAILED", "unloaded")


def check_exercise_1(answer: Any) -> Verdict:
    """Exercise 1: the error a write gets from a context that is LOADING, FAILED, unloaded.

    `answer` maps each of "LOADING", "FAILED", "unloaded" to an error (Errors.X, name or code).
    The check runs the three cases in the kit and compares.
    """
    ex = "Exercise 1"
    missing = unanswered(ex, answer, 'a dict {"LOADING": ..., "FAILED": ..., "unloaded": ...} '
                                      "of error names")
    if missing:
        return missing
    if not isinstance(answer, Mapping) or set(answer) != set(EXERCISE_1_CASES):
        return Verdict(ex, False, f"give a dict with exactly the keys {list(EXERCISE_1_CASES)}")
    blank = [case for case in EXERCISE_1_CASES if answer[case] is NOT_ANSWERED]
    if len(blank) == len(EXERCISE_1_CASES):
        return Verdict(ex, None, "replace each ... with an error name and run this cell again.")
    if blank:
        return Verdict(ex, None, f"fill in the error for {', '.join(map(repr, blank))} too.")
    observed = request_errors()
    wrong = []
    for case in EXERCISE_1_CASES:
        given = answer[case]
        try:
            error = as_error(given)
        except ValueError as exc:
            return Verdict(ex, False, f"{case}: {exc}")
        if error is not observed[case]:
            wrong.append(case)
    if not wrong:
        return Verdict(ex, True, "a LOADING context answers COORDINATOR_LOAD_IN_PROGRESS (the "
                                 "client retries the same broker); FAILED and unloaded answer "
                                 "NOT_COORDINATOR (the client looks for the coordinator again).")
    why = {
        "LOADING": "the context exists and is loading: nothing is queued for after the load; the "
                   "error says 'try again soon, here'.",
        "FAILED": "a failed context stays in the runtime but serves nothing; the error sends "
                  "the client to look for the coordinator again.",
        "unloaded": "after the unload the old leader has no context for the partition at all.",
    }
    return Verdict(ex, False, " ".join(f"{c}: {why[c]}" for c in wrong))


EXERCISE_2_COMMITTED: tuple[dict[str, str], ...] = ({"a": "1"}, {"b": "2"})
EXERCISE_2_TAIL: tuple[dict[str, str], ...] = ({"x": "1"}, {"y": "2", "z": "3"}, {"w": "4"})


def exercise_2_snapshots() -> list[int]:
    sb = reload_with_tail(EXERCISE_2_COMMITTED, EXERCISE_2_TAIL)
    return list(sb.describe()["snapshots"])


def check_exercise_2(answer: Any) -> Verdict:
    """Exercise 2: the snapshots a reload keeps for the log of EXERCISE_2_COMMITTED (committed)
    followed by EXERCISE_2_TAIL (not committed), one batch per write."""
    ex = "Exercise 2"
    missing = unanswered(ex, answer, "a list of snapshot offsets, e.g. [0, 1]")
    if missing:
        return missing
    if not isinstance(answer, (list, tuple)) or \
            not all(isinstance(o, int) and not isinstance(o, bool) for o in answer):
        return Verdict(ex, False, "give the snapshot offsets as a list of ints, e.g. [0, 1]")
    expected = exercise_2_snapshots()
    given = list(answer)
    if given == expected:
        return Verdict(ex, True, "the loader takes a snapshot once it has passed the high "
                                 "watermark (2) and then at the end of every batch above it "
                                 "(3, 5, 6); none inside the two-record batch.")
    if given and given[0] < expected[0]:
        hint = ("snapshots below the high watermark are dropped: the first one is at the "
                "committed offset.")
    elif sorted(set(given)) != given:
        hint = "list each offset once, in increasing order."
    elif len(given) > len(expected):
        hint = ("a snapshot sits at a batch end, never inside a batch: {'y', 'z'} is one "
                "write, so one batch of two records.")
    else:
        hint = ("count the offsets: two committed batches end at offset 2; each tail batch "
                "ends where the next one starts; one more snapshot per tail batch.")
    return Verdict(ex, False, hint)


EXERCISE_3_COMMITTED = 4
EXERCISE_3_BATCHED = ("a", "b", "c")


def exercise_3_outcome() -> tuple[int, int]:
    sb, futures = failed_batch(EXERCISE_3_COMMITTED, EXERCISE_3_BATCHED)
    failed = sum(1 for f in futures if f.failed())
    return failed, sb.describe()["last_written_offset"]


def check_exercise_3(answer: Any) -> Verdict:
    """Exercise 3: (how many of the batched writes fail, lastWrittenOffset just after)."""
    ex = "Exercise 3"
    missing = unanswered(ex, answer, "a pair (failed writes, lastWrittenOffset)")
    if missing:
        return missing
    if not isinstance(answer, (list, tuple)) or len(answer) != 2 or \
            not all(isinstance(v, int) and not isinstance(v, bool) for v in answer):
        return Verdict(ex, False, "give two ints: (failed writes, lastWrittenOffset)")
    failed, last_written = exercise_3_outcome()
    n, offset = answer
    if (n, offset) == (failed, last_written):
        return Verdict(ex, True, f"all {failed} writes shared the batch, so all {failed} fail; "
                                 f"the registry reverts to the batch's base offset "
                                 f"{last_written}, where it was before.")
    parts = []
    if n != failed:
        parts.append("the three writes arrived within one linger window, so they sit in one "
                     "batch, and a failed append fails every write of the batch.")
    if offset != last_written:
        parts.append("the revert goes back to the batch's base offset, the lastWrittenOffset "
                     "before the batch was opened (nothing of the batch reached the log).")
    return Verdict(ex, False, hints(*parts))


EXERCISE_4_PARTITIONS = 3
EXERCISE_4_EXTRA_MS = 50


def exercise_4_queue_ms() -> int:
    line = queued_loads(EXERCISE_4_PARTITIONS, EXERCISE_4_EXTRA_MS)[-1]
    return int(line.split(" where ")[1].split("ms")[0])


def check_exercise_4(answer: Any) -> Verdict:
    """Exercise 4: ms the last of the queued loads spent in the loader's scheduler."""
    ex = "Exercise 4"
    missing = unanswered(ex, answer, "a number of milliseconds")
    if missing:
        return missing
    if not isinstance(answer, int) or isinstance(answer, bool):
        return Verdict(ex, False, "give a whole number of milliseconds")
    expected = exercise_4_queue_ms()
    if answer == expected:
        return Verdict(ex, True, f"each load takes {EXERCISE_4_EXTRA_MS + 1} ms (1 ms plus the "
                                 f"slowdown) and the loader runs one at a time, so the third "
                                 f"waits for two: {expected} ms.")
    if answer == 2 * EXERCISE_4_EXTRA_MS:
        hint = "close: a load takes 1 ms of its own on top of the slowdown."
    elif answer == EXERCISE_4_EXTRA_MS + 1:
        hint = "that is what the second load waits; the third waits for the two before it."
    elif answer == 0:
        hint = "the loads do not run side by side: the loader has a single thread."
    else:
        hint = ("the time spent in the scheduler is the time a load waited behind the loads "
                "queued before it.")
    return Verdict(ex, False, hint)
