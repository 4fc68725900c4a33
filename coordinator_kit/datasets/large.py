"""Gigabytes of coordinator logs for many groups, fast: replay simulated lines, renamed.

Simulating every line costs tens of microseconds per event, far too slow for a gigabyte. So the
generator runs a set of seeded single-group scenario *variants* once (a consumer joins, one
crashes, a GC pause, a coordinator move, rolling restarts, a slow poll, a network cut...), and
compiles each INFO line they logged into a template whose names are slots: the group, client
and instance ids, member ids, the topic, the `__consumer_offsets` partition, broker ids and
coordinator nodes, and leader epochs. It then plays *episodes* — a variant for a fresh group,
starting at a seeded random time — and merges the lines of the episodes running at once into one
log per broker and one per client host, in time order, until the files reach the asked size.

Each episode gets a unique group id, Kafka's default client ids (`consumer-<group>-<n>`), new
member ids, the `__consumer_offsets` partition its group id hashes to (50 partitions, Kafka's
default) and that partition's leader among 6 brokers. Every line is a line the kit wrote, in
the catalogue's wording, so the Spark parser reads the big files with the same rules.

What is approximate: episodes are independent. When an episode moves a partition's leadership
(the `coordinator-failover` variant), the partition's leader and epoch carry over to later
episodes, but groups that share the partition and run at the same moment are not unloaded with
it, and record counts in load lines are the variant's. `groups.csv` lists every episode (group,
variant, start, partition, coordinator) as the ground truth for exercises.
"""

from __future__ import annotations

import csv
import heapq
import io
import re
import shutil
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from datetime import datetime
from pathlib import Path
from random import Random
from typing import IO, Any

from ..cluster import Cluster
from ..group.service import partition_for
from ..logs.catalogue import PREFIXES, template
from ..logs.layout import DEFAULT_START, format_log4j, format_timestamp, level_number
from ..scenarios import (consumer_joins, coordinator_failover, long_gc_pause, new_cluster,
                         one_dies, rolling_restart, second_joins)

__all__ = ["parse_size", "generate_large", "LargeResult", "LargeConfig", "VARIANTS",
           "compile_variant", "CompiledVariant", "DEFAULT_LARGE_OUT"]

# --- sizes ------------------------------------------------------------------------------------

_UNITS = {"": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3, "T": 1024 ** 4}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*$", re.IGNORECASE)
MIN_LARGE_SIZE = 1024


def parse_size(text: str) -> int:
    """`1G`, `200M`, `512K`, `1.5G`, `300MB`, `2GiB` or a byte count -> bytes (K = 1024)."""
    m = _SIZE.match(str(text))
    if m is None:
        raise ValueError(f"can't read the size {text!r}: give a number with an optional unit "
                         f"K, M, G or T (powers of 1024), e.g. 200M or 1G")
    size = int(float(m.group(1)) * _UNITS[m.group(2).upper()])
    if size < MIN_LARGE_SIZE:
        raise ValueError(f"the size {text!r} is {size} bytes; the large generator needs at "
                         f"least {MIN_LARGE_SIZE} bytes (1K). The committed datasets/ are the "
                         f"small samples")
    return size


# --- variants: single-group scenarios whose lines are replayed --------------------------------

def _scale_in(seed: int) -> Cluster:
    c = second_joins(seed)
    c.leave("consumer-2")
    c.run_for(10_000)
    return c


def _scale_out_three(seed: int) -> Cluster:
    c = second_joins(seed)
    c.add_consumer("consumer-3")
    c.run_for(10_000)
    return c


def _slow_poll(seed: int) -> Cluster:
    c = new_cluster(seed)
    for i in (1, 2):
        c.add_consumer(f"consumer-{i}", max_poll_interval_ms=30_000)
    c.run_for(10_000)
    c.slow_poll("consumer-2", 40_000)
    c.run_for(50_000)
    return c


def _cut_off(seed: int) -> Cluster:
    c = second_joins(seed)
    c.cut_off("consumer-2")
    c.run_for(60_000)
    c.cut_off("consumer-2", False)
    c.run_for(20_000)
    return c


def _cooperative_crash(seed: int) -> Cluster:
    c = new_cluster(seed)
    for i in (1, 2, 3):
        c.add_consumer(f"consumer-{i}", partition_assignment_strategy=("cooperative-sticky",))
    c.run_for(10_000)
    c.crash("consumer-3")
    c.run_for(60_000)
    return c


def _dropped_heartbeats(seed: int) -> Cluster:
    c = second_joins(seed)
    c.drop_heartbeats("consumer-1")
    c.run_for(50_000)
    c.drop_heartbeats("consumer-1", False)
    c.run_for(20_000)
    return c


# name -> (builder, weight): how often an episode plays the variant.
VARIANTS: dict[str, tuple[Callable[[int], Cluster], int]] = {
    "consumer-joins": (consumer_joins, 2),
    "second-joins": (second_joins, 3),
    "scale-out-three": (_scale_out_three, 2),
    "scale-in": (_scale_in, 2),
    "one-dies": (one_dies, 2),
    "long-gc-pause": (long_gc_pause, 1),
    "coordinator-failover": (coordinator_failover, 1),
    "rolling-restart": (lambda s: rolling_restart(s, static=False), 1),
    "rolling-restart-static": (lambda s: rolling_restart(s, static=True), 1),
    "slow-poll": (_slow_poll, 1),
    "cut-off": (_cut_off, 1),
    "cooperative-crash": (_cooperative_crash, 1),
    "dropped-heartbeats": (_dropped_heartbeats, 1),
}

# --- compiling a variant's lines into templates with slots ------------------------------------

_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_SLOTS = re.compile("|".join([
    rf"(?P<member>(?P<mkind>consumer|instance)-(?P<mnum>\d+)-{_UUID})",
    r"(?P<instance>instance-(?P<inum>\d+))",
    r"(?P<client>consumer-(?P<cnum>\d+))",
    r"(?P<group>\bgroup-1\b)",
    r"(?P<topic>\borders(?=-\d))",
    r"(?P<otp>__consumer_offsets-(?P<otpnum>\d+))",
    r"(?P<opart>partition=(?P<opartnum>\d+)\])",
    r"(?P<gcid>\[GroupCoordinator id=(?P<gcidnum>\d+))",
    r"(?P<bid>\[Broker id=(?P<bidnum>\d+)\])",
    r"(?P<pbroker>broker=(?P<pbrokernum>\d+)\])",
    r"(?P<node>localhost:\d+ \(id: (?P<nodeid>\d+) rack: null\))",
    r"(?P<isr>ISR \[(?P<isrlist>\d+(?:,\d+)*)\])",
    r"(?P<prev>Previous leader Some\((?P<prevnum>\d+)\))",
    r"(?P<epoch>(?P<epre>with epoch |with epoch OptionalInt\[|leader epoch |partition epoch "
    r"|previous leader epoch was )(?P<epochnum>\d+))",
]))
_MAX_NODE_ID = 2147483647
# What must never be left in a template's literal text (a name the slots failed to catch).
_LEFTOVER = re.compile(rf"{_UUID}|group-1\b|consumer-\d|instance-\d|__consumer_offsets-\d|"
                       r"localhost:|id=\d|broker=\d|epoch \d|epoch OptionalInt\[\d")


@dataclass(frozen=True)
class CompiledLine:
    dt: int            # ms after the episode's first line
    role: str          # "b" (broker) or "c" (client)
    who: int           # variant broker id, or consumer number
    fmt: str           # `str.format` template: "] LEVEL message (logger)\n" with slots


@dataclass(frozen=True)
class CompiledVariant:
    name: str
    lines: tuple[CompiledLine, ...]
    partition: int                     # the group's __consumer_offsets partition in the variant
    replicas: tuple[int, ...]          # that partition's replica order in the variant
    members: tuple[tuple[str, int], ...]  # slot k -> (kind consumer/instance, number)
    member_ids: tuple[str, ...]        # slot k -> the member id the variant logged
    consumers: int
    instances: int
    max_epoch: int
    leader_moves: int                  # leadership moves of the partition during the variant
    duration_ms: int


def _slot_line(text: str, members: dict[str, int], member_keys: list[tuple[str, int]],
               partition: int) -> tuple[str, dict[str, Any]]:
    """The `str.format` template for one message, and what its slots stood for."""
    out: list[str] = []
    used: dict[str, Any] = {"clients": set(), "instances": set(), "epochs": set()}
    pos = 0
    for m in _SLOTS.finditer(text):
        out.append(text[pos:m.start()].replace("{", "{{").replace("}", "}}"))
        pos = m.end()
        kind = m.lastgroup
        if m.group("member"):
            k = members.setdefault(m.group("member"), len(members))
            if k == len(member_keys):
                member_keys.append((m.group("mkind"), int(m.group("mnum"))))
            out.append(f"{{M{k}}}")
        elif m.group("instance"):
            used["instances"].add(int(m.group("inum")))
            out.append(f"{{I{m.group('inum')}}}")
        elif m.group("client"):
            used["clients"].add(int(m.group("cnum")))
            out.append(f"{{C{m.group('cnum')}}}")
        elif m.group("group"):
            out.append("{G}")
        elif m.group("topic"):
            out.append("{T}")
        elif m.group("otp"):
            _same_partition(int(m.group("otpnum")), partition, text)
            out.append("__consumer_offsets-{P}")
        elif m.group("opart"):
            _same_partition(int(m.group("opartnum")), partition, text)
            out.append("partition={P}]")
        elif m.group("gcid"):
            out.append(f"[GroupCoordinator id={{B{m.group('gcidnum')}}}")
        elif m.group("bid"):
            out.append(f"[Broker id={{B{m.group('bidnum')}}}]")
        elif m.group("pbroker"):
            out.append(f"broker={{B{m.group('pbrokernum')}}}]")
        elif m.group("node"):
            out.append(f"{{N{_MAX_NODE_ID - int(m.group('nodeid'))}}}")
        elif m.group("isr"):
            out.append("ISR [" + ",".join(f"{{B{b}}}" for b in m.group("isrlist").split(","))
                       + "]")
        elif m.group("prev"):
            out.append(f"Previous leader Some({{B{m.group('prevnum')}}})")
        elif m.group("epoch"):
            e = int(m.group("epochnum"))
            used["epochs"].add(e)
            out.append(f"{m.group('epre')}{{E{e}}}")
        else:  # pragma: no cover - every alternative is handled above
            raise AssertionError(kind)
    out.append(text[pos:].replace("{", "{{").replace("}", "}}"))
    fmt = "".join(out)
    literal = re.sub(r"\{[A-Z]\d*\}", "", fmt)
    leftover = _LEFTOVER.search(literal)
    if leftover:
        raise ValueError(f"the large generator can't rename {leftover.group(0)!r} in the line "
                         f"{text!r}; add a slot for it in coordinator_kit/datasets/large.py")
    return fmt, used


def _same_partition(found: int, expected: int, text: str) -> None:
    if found != expected:
        raise ValueError(f"a single-group variant logged __consumer_offsets-{found}, not its "
                         f"group's partition {expected}: {text!r}")


def compile_variant(name: str, cluster: Cluster) -> CompiledVariant:
    """The INFO-and-above lines of a finished single-group scenario, as slot templates.

    The cluster's start-up (every broker loading its partitions, before any consumer logs)
    is left out: the large logs write their own start-up once.
    """
    groups = {c.config.group_id for c in cluster.consumers.values()}
    if groups != {"group-1"}:
        raise ValueError(f"variant {name!r} must use exactly one group, group-1; it has "
                         f"{sorted(groups)}")
    if set(cluster.topics) != {"orders"}:
        raise ValueError(f"variant {name!r} must use the topic orders only")
    tp = cluster.partition_of("group-1")
    threshold = level_number("INFO")
    events = [e for e in cluster.trace.events
              if e.message is not None and level_number(e.level) >= threshold]
    first = next(i for i, e in enumerate(events) if e.source.startswith("client-"))
    events = events[first:]
    t0 = events[0].ts
    members: dict[str, int] = {}
    member_keys: list[tuple[str, int]] = []
    clients: set[int] = set()
    instances: set[int] = set()
    epochs: set[int] = {0}
    lines = []
    for e in events:
        message: str = e.message  # type: ignore[assignment]
        fmt, used = _slot_line(message, members, member_keys, tp.partition)
        clients |= used["clients"]
        instances |= used["instances"]
        epochs |= used["epochs"]
        if e.source.startswith("broker-"):
            role, who = "b", int(e.source.removeprefix("broker-"))
        else:
            role, who = "c", int(e.source.removeprefix("client-consumer-"))
        lines.append(CompiledLine(e.ts - t0, role, who,
                                  f"] {e.level} {fmt} ({e.logger})\n"))
    partition = cluster.partitions[tp]
    return CompiledVariant(
        name, tuple(lines), tp.partition,
        tuple(sorted(partition.replicas, key=lambda b: (b - tp.partition) % len(cluster.brokers))),
        tuple(member_keys), tuple(members), max([len(cluster.consumers), *clients]),
        max([0, *instances]),
        max(epochs), partition.leader_epoch, lines[-1].dt)


# --- the large cluster and its episodes -------------------------------------------------------

DEFAULT_LARGE_OUT = "coordinator_kit-datasets-large"  # under the system's temp directory

_APPS = (("billing", "payments"), ("shipping", "orders"), ("analytics", "clicks"),
         ("search-indexer", "catalog"), ("fraud-check", "payments"), ("emails", "notifications"),
         ("audit", "orders"), ("recommendations", "clicks"), ("inventory", "stock"),
         ("ledger", "payments"), ("returns", "orders"), ("pricing", "catalog"))


@dataclass(frozen=True)
class LargeConfig:
    brokers: int = 6
    offsets_partitions: int = 50      # offsets.topic.num.partitions default
    replication_factor: int = 3       # offsets.topic.replication.factor default
    client_hosts: int = 12
    mean_gap_ms: int = 1_500          # mean time between two episodes' starts
    first_episode_ms: int = 5_000


@dataclass
class LargeResult:
    out_dir: Path
    files: dict[str, int] = field(default_factory=dict)  # file -> bytes written
    episodes: int = 0
    lines: int = 0

    @property
    def total_bytes(self) -> int:
        return sum(self.files.values())


@dataclass
class _Episode:
    seq: int
    variant: CompiledVariant
    start: int
    values: dict[str, str]
    targets: tuple[int, ...]          # per line: output file index
    row: dict[str, Any]


class _Timestamps:
    """`[yyyy-MM-dd HH:mm:ss,SSS` for virtual ms, with the part up to the second cached."""

    def __init__(self, start: datetime) -> None:
        self.start = start
        self._second = -1
        self._prefix = ""

    def __call__(self, ms: int) -> str:
        second, milli = divmod(ms, 1000)
        if second != self._second:
            self._second = second
            self._prefix = "[" + format_timestamp(second * 1000, self.start)[:-3]
        return f"{self._prefix}{milli:03d}"


VARIANT_SEED = 0


@lru_cache(maxsize=1)
def _compile_all() -> list[tuple[CompiledVariant, int]]:
    """Every variant, run with `VARIANT_SEED` and compiled, once per process.

    The variants' own randomness (member ids) is replaced by each episode's anyway; the
    generator's seed chooses the episodes: variants, groups, start times, hosts.
    """
    return [(compile_variant(name, build(VARIANT_SEED)), weight)
            for name, (build, weight) in VARIANTS.items()]


def _startup_lines(config: LargeConfig, start: datetime) -> list[tuple[int, str]]:
    """Each broker loads the `__consumer_offsets` partitions it leads, as after a restart."""
    out = []
    sched, loaded = template("R-SCHED-LOAD"), template("R-LOADED")
    for phase, tpl in ((0, sched), (1, loaded)):
        for p in range(config.offsets_partitions):
            b = p % config.brokers
            fields = {"tp": f"__consumer_offsets-{p}", "epoch": 0, "duration_ms": 1,
                      "scheduler_ms": 0, "records": 0, "bytes": 0}
            message = PREFIXES["runtime"].format(broker=b) + tpl.render(fields)
            out.append((b, format_log4j(phase, tpl.level, message, tpl.logger, start) + "\n"))
    return out


class _Planner:
    """Draws episodes: which variant, when, for which group, on which hosts and brokers."""

    def __init__(self, variants: list[tuple[CompiledVariant, int]], config: LargeConfig,
                 seed: int) -> None:
        self.variants = [v for v, _ in variants]
        self.weights = [w for _, w in variants]
        self.config = config
        self.rng = Random(seed)
        self.next_start = config.first_episode_ms
        self.seq = 0
        self.shift = [0] * config.offsets_partitions   # leadership moves so far, per partition
        self.epoch = [0] * config.offsets_partitions   # leader epoch so far, per partition

    def next(self) -> _Episode:
        cfg, rng = self.config, self.rng
        v = rng.choices(self.variants, self.weights)[0]
        seq = self.seq
        self.seq += 1
        start = self.next_start
        self.next_start += 1 + int(rng.expovariate(1 / cfg.mean_gap_ms))
        app, topic = _APPS[rng.randrange(len(_APPS))]
        group = f"{app}-{seq}"
        p = partition_for(group, cfg.offsets_partitions)
        rf = min(cfg.replication_factor, cfg.brokers)
        replicas = [(p + i) % cfg.brokers for i in range(rf)]
        shift = self.shift[p]
        values: dict[str, str] = {"G": group, "T": topic, "P": str(p)}
        for k, b in enumerate(v.replicas):
            real = replicas[(k + shift) % rf]
            values[f"B{b}"] = str(real)
            values[f"N{b}"] = f"localhost:{9092 + real} (id: {_MAX_NODE_ID - real} rack: null)"
        for e in range(v.max_epoch + 1):
            values[f"E{e}"] = str(self.epoch[p] + e)
        for n in range(1, v.consumers + 1):
            values[f"C{n}"] = f"consumer-{group}-{n}"
        for n in range(1, v.instances + 1):
            values[f"I{n}"] = f"{group}-instance-{n}"
        for k, (kind, n) in enumerate(v.members):
            owner = values[f"C{n}"] if kind == "consumer" else values[f"I{n}"]
            values[f"M{k}"] = f"{owner}-{uuid.UUID(int=rng.getrandbits(128), version=4)}"
        host0 = rng.randrange(cfg.client_hosts)
        coordinator = values[f"B{v.replicas[0]}"]
        self.shift[p] += v.leader_moves
        self.epoch[p] += v.leader_moves
        targets = tuple(int(values[f"B{line.who}"]) if line.role == "b"
                        else cfg.brokers + (host0 + line.who - 1) % cfg.client_hosts
                        for line in v.lines)
        row = {"group": group, "variant": v.name, "topic": topic, "partition": p,
               "coordinator": coordinator, "consumers": v.consumers,
               "first_host": f"client-app-{host0 + 1:02d}", "start_ms": start}
        return _Episode(seq, v, start, values, targets, row)


def _episode_lines(ep: _Episode) -> Iterator[tuple[int, int, str]]:
    values = ep.values
    for line, target in zip(ep.variant.lines, ep.targets):
        yield ep.start + line.dt, target, line.fmt.format_map(values)


def generate_large(out_dir: Path, size: int, *, seed: int = 0,
                   config: LargeConfig = LargeConfig(), start: datetime = DEFAULT_START,
                   progress: IO[str] | None = None) -> LargeResult:
    """Write broker and client logs totalling `size` bytes (at most; within one line).

    Same seed, same bytes; a smaller size writes a prefix of each file a larger one writes.
    `progress` (a stream such as sys.stderr) shows a tqdm bar. Also writes `groups.csv`, one row
    per group (not counted in `size`). Memory stays small whatever the size: only the groups
    running at the same moment are held.
    """
    if size < MIN_LARGE_SIZE:
        raise ValueError(f"size must be at least {MIN_LARGE_SIZE} bytes, got {size}")
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        free = shutil.disk_usage(out_dir).free
    except OSError as exc:
        raise OSError(f"can't write to {out_dir}: {exc.strerror or exc}; choose another "
                      f"directory with --out") from exc
    if free < size + (1 << 20):
        raise OSError(f"{out_dir} has {free} bytes free, not enough for {size} bytes of logs; "
                      f"free some space or choose another --out")
    names = [f"server-broker-{b}.log" for b in range(config.brokers)] + \
            [f"client-app-{h + 1:02d}.log" for h in range(config.client_hosts)]
    planner = _Planner(_compile_all(), config, seed)
    result = LargeResult(out_dir)
    bar = _progress_bar(size, progress)
    handles: list[IO[bytes]] = []
    try:
        try:
            handles = [open(out_dir / n, "wb") for n in [*names, "groups.csv"]]  # noqa: SIM115
        except OSError as exc:
            raise OSError(f"can't write to {out_dir}: {exc.strerror or exc}; choose another "
                          f"directory with --out") from exc
        _Writer(handles, names, size, start, result, bar).run(planner, config)
    finally:
        for h in handles:
            h.close()
        if bar is not None:
            bar.close()
    return result


_ROW_FIELDS = ("group", "variant", "topic", "partition", "coordinator", "consumers",
               "first_host", "start_ms", "start", "lines", "complete")
_FLUSH_BYTES = 1 << 20


class _Writer:
    """Buffered output files, the size budget, and `groups.csv` in group order."""

    def __init__(self, handles: list[IO[bytes]], names: list[str], size: int, start: datetime,
                 result: LargeResult, bar: Any) -> None:
        self.handles = handles
        self.names = names
        self.size = size
        self.start = start
        self.result = result
        self.bar = bar
        self.buffers: list[list[bytes]] = [[] for _ in handles]
        self.buffered = [0] * len(handles)
        self.written = [0] * len(names)
        self.total = 0
        self.reported = 0
        self.rows = io.StringIO()
        self.csv = csv.DictWriter(self.rows, fieldnames=_ROW_FIELDS, lineterminator="\n")
        self.csv.writeheader()
        self.finished: dict[int, dict[str, Any] | None] = {}  # seq -> row, waiting for its turn
        self.next_row = 0

    def put(self, target: int, data: bytes) -> bool:
        """Append one line to a log file; False (nothing written) when it would pass the size."""
        n = len(data)
        if self.total + n > self.size:
            return False
        self.buffers[target].append(data)
        self.buffered[target] += n
        self.written[target] += n
        self.total += n
        self.result.lines += 1
        if self.buffered[target] >= _FLUSH_BYTES:
            self.flush(target)
        if self.bar is not None and self.total - self.reported >= _FLUSH_BYTES:
            self.bar.update(self.total - self.reported)
            self.reported = self.total
        return True

    def flush(self, i: int) -> None:
        self.handles[i].write(b"".join(self.buffers[i]))
        self.buffers[i].clear()
        self.buffered[i] = 0

    def episode_done(self, ep: _Episode, count: int) -> None:
        """Record a group's row; rows are written in start order as soon as all earlier
        groups are done (`None` stands for a group that wrote no line)."""
        row = None
        if count:
            self.result.episodes += 1
            row = {**ep.row, "start": format_timestamp(ep.start, self.start), "lines": count,
                   "complete": str(count == len(ep.variant.lines)).lower()}
        self.finished[ep.seq] = row
        while self.next_row in self.finished:
            done = self.finished.pop(self.next_row)
            self.next_row += 1
            if done is not None:
                self.csv.writerow(done)
        if self.rows.tell() >= _FLUSH_BYTES:
            self._flush_rows()

    def _flush_rows(self) -> None:
        self.buffers[-1].append(self.rows.getvalue().encode("utf-8"))
        self.rows.seek(0)
        self.rows.truncate()
        self.flush(len(self.handles) - 1)

    def run(self, planner: _Planner, config: LargeConfig) -> None:
        # Start-up lines first, then episodes merged by (time, episode, line).
        for b, line in _startup_lines(config, self.start):
            if not self.put(b, line.encode("ascii")):
                return self.close({})
        stamp = _Timestamps(self.start)
        heap: list[tuple[int, int, int, str, Iterator[tuple[int, int, str]]]] = []
        active: dict[int, list[Any]] = {}  # seq -> [episode, lines written]
        pending = planner.next()
        while True:
            # Admit every episode that starts before the earliest pending line.
            while not heap or pending.start <= heap[0][0]:
                it = _episode_lines(pending)
                ts, target, text = next(it)
                heapq.heappush(heap, (ts, pending.seq, target, text, it))
                active[pending.seq] = [pending, 0]
                pending = planner.next()
            ts, seq, target, text, it = heap[0]
            if not self.put(target, (stamp(ts) + text).encode("ascii")):
                return self.close(active)
            state = active[seq]
            state[1] += 1
            nxt = next(it, None)
            if nxt is None:
                heapq.heappop(heap)
                del active[seq]
                self.episode_done(state[0], state[1])
            else:
                heapq.heapreplace(heap, (nxt[0], seq, nxt[1], nxt[2], it))

    def close(self, active: dict[int, list[Any]]) -> None:
        for seq in sorted(active):
            ep, count = active[seq]
            self.episode_done(ep, count)
        self._flush_rows()
        for i in range(len(self.handles)):
            self.flush(i)
        if self.bar is not None:
            self.bar.update(self.total - self.reported)
        self.result.files = dict(zip(self.names, self.written))


def _progress_bar(size: int, stream: IO[str] | None) -> Any:
    if stream is None:
        return None
    from tqdm import tqdm

    return tqdm(total=size, unit="B", unit_scale=True, unit_divisor=1024, file=stream,
                desc="writing logs", dynamic_ncols=True)
