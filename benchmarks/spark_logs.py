"""The Spark log pipeline next to a single-process parse and a raw read of the same logs.

Run it from the repository root::

    .venv/bin/python benchmarks/spark_logs.py               # 1 GiB of generated logs, best of 2
    .venv/bin/python benchmarks/spark_logs.py --size 200M   # a quicker run
    .venv/bin/python benchmarks/spark_logs.py --repeat 3 --no-write
    .venv/bin/python benchmarks/spark_logs.py --many-files 2000   # many small files
    .venv/bin/python benchmarks/spark_logs.py --hostile           # lines made to backtrack

Input: broker and client logs for many groups from the kit's large generator
(`coordinator_kit.datasets.large`, the same as `python -m coordinator_kit datasets --large SIZE`),
written once into the system temp directory under a name made of the size and the seed, and
reused by later runs (`--data-dir` puts it elsewhere). Only the `.log` files are read.

What is measured, in the same run, interleaved (round 1 of every side, then round 2, ...), and
best of `--repeat` for each (the machine is shared: other programs make single runs noisy):

* **raw read** -- the ceilings. Python: read every file's bytes (4 MiB at a time, nothing
  decoded). Spark: `spark.read.text(files).count()`, which splits the lines and nothing else.
* **Python parse** -- the kit's own pure-Python parser (`coordinator_kit.logs.parse`, the
  reference the Spark loader is tested against) over the same files, one process, streaming
  (`parse_lines(iter_lines(file))`, rows are not kept): every line classified, every column
  of every event and quarantined record computed, multi-line records joined. The rows are
  counted per (kind, event, problem) and per column that is not NULL.
* **Spark parse** -- `coordinator_kit.spark.load.load_lines(files)`, the one pass that
  classifies every line and computes every column (`load_logs`, `parse_logs` and
  `write_parsed` are built on it; it includes its line-numbering pre-pass), forced by ONE
  aggregation that needs every column: per (kind, event, problem), `count(*)` and `count(c)`
  for every column `c`. Why not `.count()`: Spark prunes the columns nobody reads, and a
  `count()` reads none, so it would skip the field extraction (the second regex of each stage,
  the time stamps, ...) and measure less than the Python side does. `count(c)` needs `c`
  computed, so nothing is pruned; the aggregate is tiny, so no shuffle or write distorts it;
  and it gives the same figures as the Python side's counts, so the two sides are checked
  against each other on every line.
* **Spark write_parsed** (skip with `--no-write`) -- the complete path of `python -m
  coordinator_kit logs parse --engine spark`: one pass writing events.parquet and
  quarantine.parquet to a temp directory (continuation lines attached, counts observed on the
  way). It does more than the Python side (Parquet encoding and writing), so it is shown next
  to it, not used for the target.

Figures: seconds (best run), MB/s (MB = 10^6 bytes), lines/s, CPU seconds of the run (Python:
this process; Spark: the driver JVM, read from /proc, plus this process), and the ratios
Spark / Python and each side / its raw read. Spark's start-up (starting the JVM) is shown apart,
with the first run (cold JIT) plus start-up as the "with start-up" figure. The load average at
the start is printed: with other programs running, compare the ratios, not the seconds.

Check: Spark's and Python's figures must agree -- lines read, recognised, other, quarantined
(per problem), events per event name, and per (kind, event, problem) the number of non-NULL
values of every column. A difference is printed and the script exits with status 1 (a
benchmark whose two sides parse differently compares nothing).

Target: on this 2-core machine at 1 GiB, the Spark parse at least as fast as the
single-process Python parse (wall clock, without start-up). A missed target exits with status
0 unless `--strict` is given (then 2).

**--many-files N**: the same generated logs cut into N small files of consecutive lines (about
8 KiB each), both engines on them (Python parse, Spark parse as above), the ratio printed.
Before: Spark took about 100 s a pass over 2,000 small files where Python took 0.9 s: every
file was a Spark task of its own (the loader sets `openCostInBytes` to `maxPartitionBytes` so
that a block is a partition, for line numbers), and planning the read listed and globbed
2,000 paths. Now files under 4 MiB are read by Python and handed to Spark as one table split
over the cores (`coordinator_kit.spark.sources`).

**--hostile**: lines made to make the parser's regexes backtrack (a template's separators
repeated, a run of spaces after the level, a class name of thousands of dots), each about
11 KB, against a well-formed line of the same length, in both engines: seconds per line and
the ratio to the well-formed line. Before, one such line took minutes in either engine (the
message patterns were polynomial of high degree), and the dotted one made Java's regex engine
overflow its stack (a failed Spark task); now every pattern is linear
(`coordinator_kit.logs.redos` finds the ones that are not).

**--cluster [WORKERS]**: after the local rounds, the Spark raw read and parse again on a Spark
standalone cluster the benchmark starts itself on 127.0.0.1 (`coordinator_kit.spark.cluster`:
a master and WORKERS workers, default 2, 1 core and `--worker-memory` each), printed beside
the local figures with the ratio cluster / local, and checked against the Python parse like
the local one. One process holds one SparkContext, so the local session is stopped first and
the two sides run one after the other (not interleaved). The cluster's CPU seconds add the
executors' (the workers' process groups, from /proc) to the driver's. On one machine the
cluster does the local session's work plus what a cluster adds: the files are read by
executors in other JVMs, every task and result crosses a socket, and driver and executors
share the same 2 cores, so it measures that overhead, not a speed-up.

Where the Spark parse's time went (JFR profiles of the 200 MB input, `jcmd <pid> JFR.start`
on the driver JVM, self time by method), and what was done:

* 37% in one generated method (`hashAgg_doAggregateWithKeys_0`): whole-stage code generation
  fused the loader's wide projection into the aggregation's loop, a method beyond the JIT's
  8000-byte limit, so it ran interpreted. The kit's session now turns whole-stage codegen off
  (session.SESSION_CONF): projections are split into small compiled methods.
* The layout regex ran over every whole line (about 8 us a line in Java's regex engine for
  the kit's LOG4J lines). The loader now matches LOG4J's head (first 64 characters) and tail
  (after the last " (") with two small regexes and cuts the message out by byte offsets
  (counting characters instead, `length`/`substring` on the line, cost 18% by itself).
* Left: the message stage (the combined template regex, then the bucket's regex: two regex
  passes over the message), the control-character scan of every line (Java's regex engine
  takes ~15 ns a character; making the templates' classes exclude control characters instead
  made those regexes four times slower), and Spark's `regexp_extract`/`regexp_replace`
  comparing their (literal) pattern with the last one on every row: the combined template
  regex is 31.5 KB, so every line pays a 31.5 KB `equals` (`ByteArrayMethods.arrayEquals`,
  8% of the samples); `rlike` compiles a literal pattern once and does not.

1 GiB, `--no-write`, best of 2 (CPU seconds are the steadier figure on a shared machine):
before (load ~quiet): Python 45.16 s / 45.2 CPU s, Spark 50.45 s / 96.2 CPU s, 0.90x;
after, busy machine (load 1.7 at the start, 4-5 during): Python 58.16 s / 45.1 CPU s, Spark
78.70 s / 79.3 CPU s, 0.74x (MISS); after, calmer (load 2.5): Python 43.85 s / 43.3 CPU s,
Spark 38.03 s / 65.6 CPU s, 1.15x (MET; first cold run 44.93 s, start-up 4.5 s). Spark's CPU
per byte fell from 2.13x Python's to 1.5-1.8x; the 1.2x margin needs it nearer 1.5x, and
Spark only wins while it gets both cores.

Second round (driver CPU seconds of one expression over the 200 MB input's lines or messages,
microbenchmarks in one session, interleaved, 3 rounds; "nothing" = the same query without the
expression):

* Control characters: `rlike` of the class finds nothing on a clean line only after trying the
  class at every position (1.8-2.3 CPU s, nothing 0.6-0.9). Now the test is turned round: a
  clean line matches `^[^controls]*\\z` at position 0 in one greedy run (1.5-1.6 CPU s): about
  0.5 CPU s less per 200 MB (~3% of the parse). Same lines quarantined (exact negation).
* Template stage, measured and left: `regexp_extract(msg, combined)` costs ~2.9 CPU s, the same
  regex as an atomic `rlike` ~2.2 (so the 31.5 KB `equals` and the extraction are ~0.7-0.9 of
  it) and the bucket's `regexp_replace` ~1.5-3. An exact dispatch without the big
  `regexp_extract`: guess the bucket from a cheap key, check it with
  `rlike("(?s)^(?>" + the combined alternation + ")" + that bucket's code)` (the atomic group
  commits to the combined regex's first match, so this is true exactly when the combined regex
  would give that bucket; compiled once, no `equals`), fall back to `regexp_extract` when
  wrong. The buckets are cut in priority order and mix first words: the first word after the
  LogContext prefix guesses right on 68% of the generated messages, the first two words on
  88%, and a wrong guess costs a second pass, so it would save 0.2-0.5 CPU s per 200 MB at
  most. Worth doing only with buckets regrouped by their first words (the Classifier allows
  any membership that keeps the relative order, but `_alt_index` assumes contiguous buckets).
* 1 GiB, `--no-write`, after this round, on a very busy machine (load 17.4 at the start, 4.7
  at the end; another job's CPU-heavy benchmarks): Python 43.55 s / 43.5 CPU s, Spark 47.98
  s / 92.5 CPU s, 0.91x (MISS; first cold run; round 2 took 86.43 s). CPU seconds inflate
  under that contention too: this run says little about the change, the microbenchmarks do.
  Again at load 2.7 (4.9 at the end): Python 45.85 s / 45.4 CPU s, Spark 83.60 s / 76.6 CPU s,
  0.55x (MISS): Spark got about one core (76.6 CPU s in 83.6 s); its CPU per byte was 1.69x
  Python's (1.51x in the calm run above). The target still needs both cores free.
"""

from __future__ import annotations

import argparse
import functools
import operator
import os
import shutil
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import coordinator_kit  # noqa: F401
except ImportError:  # run from a checkout without installing the kit
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coordinator_kit.datasets.large import generate_large, parse_size
from coordinator_kit.logs.fields import COLUMN_NAMES
from coordinator_kit.logs.parse import ParseCounts, iter_lines, parse_lines

TARGET = 1.0          # Spark parse / Python parse, wall clock, at 1 GiB on 2 cores
MB = 1_000_000
_DONE = "_complete"   # marker of a finished dataset (names starting with _ are not logs)

# -- the input --------------------------------------------------------------------------------


@dataclass
class Dataset:
    directory: Path
    files: list[Path]
    bytes: int
    generated_s: float | None     # None: reused from an earlier run


def dataset(size: int, seed: int, root: Path) -> Dataset:
    """The generated logs for (size, seed), written once under `root` and reused after."""
    directory = root / f"large-{size}-seed{seed}"
    generated = None
    if not (directory / _DONE).exists():
        root.mkdir(parents=True, exist_ok=True)
        work = root / f".partial-{uuid.uuid4().hex[:8]}"
        t0 = time.perf_counter()
        try:
            generate_large(work, size, seed=seed, progress=sys.stderr)
            (work / _DONE).write_text(f"size={size} seed={seed}\n")
            shutil.rmtree(directory, ignore_errors=True)
            work.rename(directory)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        generated = time.perf_counter() - t0
    files = sorted(directory.glob("*.log"))
    if not files:
        raise FileNotFoundError(f"no .log files in {directory}; remove it and run again")
    return Dataset(directory, files, sum(f.stat().st_size for f in files), generated)


# -- what each side reports -------------------------------------------------------------------

Key = tuple[str, str | None, str | None]           # (kind, event, problem)


@dataclass
class Summary:
    """What a parse found: lines per kind, and per (kind, event, problem) the rows and the
    non-NULL values of every column (the same figures from both sides)."""

    read: int = 0
    recognised: int = 0
    other: int = 0
    quarantined: int = 0
    columns: dict[Key, list[int]] = field(default_factory=dict)   # [rows, non-NULL per column]

    def events(self) -> Counter[str]:
        return Counter({k[1]: v[0] for k, v in self.columns.items() if k[0] == "event"})

    def problems(self) -> Counter[str]:
        return Counter({k[2]: v[0] for k, v in self.columns.items() if k[0] == "quarantine"})


def differences(python: Summary, spark: Summary) -> list[str]:
    """Where the two summaries disagree (empty: they agree)."""
    out = []
    for name in ("read", "recognised", "other", "quarantined"):
        a, b = getattr(python, name), getattr(spark, name)
        if a != b:
            out.append(f"{name}: Python {a:,}, Spark {b:,}")
    for key in sorted(set(python.columns) | set(spark.columns), key=str):
        a, b = python.columns.get(key), spark.columns.get(key)
        if a is None or b is None:
            out.append(f"{key}: Python {a and a[0]} rows, Spark {b and b[0]} rows")
            continue
        if a[0] != b[0]:
            out.append(f"{key}: Python {a[0]:,} rows, Spark {b[0]:,} rows")
        for name, x, y in zip(COLUMN_NAMES, a[1:], b[1:]):
            if x != y:
                out.append(f"{key} {name}: Python {x:,} non-NULL, Spark {y:,}")
    return out


# -- Python side ------------------------------------------------------------------------------

def python_read(files: list[Path]) -> int:
    """Raw read: every byte of every file, nothing decoded."""
    buffer = bytearray(1 << 22)
    view = memoryview(buffer)
    total = 0
    for path in files:
        with open(path, "rb", buffering=0) as f:
            while n := f.readinto(view):
                total += n
    return total


_IS_NONE = functools.partial(operator.is_, None)


def python_parse(files: list[Path]) -> Summary:
    """The kit's pure-Python parser over `files`, streaming, rows counted (not kept)."""
    counts = ParseCounts()
    masks: Counter[tuple[Key, tuple[bool, ...]]] = Counter()
    for path in files:
        with open(path, "rb") as stream:
            for kind, row in parse_lines(iter_lines(stream), str(path.resolve()), counts):
                masks[((kind, row["event"], row["problem"]),
                       tuple(map(_IS_NONE, row.values())))] += 1
    counts.check()
    summary = Summary(counts.read, counts.recognised, counts.other, counts.quarantined)
    for (key, mask), n in masks.items():
        figures = summary.columns.setdefault(key, [0] * (len(COLUMN_NAMES) + 1))
        figures[0] += n
        for i, is_none in enumerate(mask, 1):
            if not is_none:
                figures[i] += n
    return summary


# -- Spark side -------------------------------------------------------------------------------

def spark_read(spark: Any, files: list[Path]) -> int:
    """Raw read: Spark's text source splits the lines; nothing else is done."""
    return spark.read.text([str(f) for f in files]).count()


def spark_parse(spark: Any, files: list[Path]) -> Summary:
    """load_lines + one aggregation that needs every column (see the module docstring)."""
    from pyspark.sql import functions as F

    from coordinator_kit.spark.load import load_lines

    lines = load_lines([str(f) for f in files], spark)
    rows = (lines.groupBy("kind", "event", "problem")
            .agg(F.count(F.lit(1)).alias("_rows"), *[F.count(c).alias(f"_n_{c}") for c in COLUMN_NAMES])
            .collect())
    summary = Summary()
    for r in rows:
        kind, n = r["kind"], r["_rows"]
        summary.read += n
        if kind == "event":
            summary.recognised += n
        elif kind == "quarantine":
            summary.quarantined += n
        else:                                     # other, continuation
            summary.other += n
        if kind in ("event", "quarantine"):
            summary.columns[(kind, r["event"], r["problem"])] = [n] + [r[f"_n_{c}"] for c in COLUMN_NAMES]
    return summary


def spark_write(spark: Any, files: list[Path], out: Path) -> Summary:
    """write_parsed to Parquet (the CLI's Spark path); only its line counts are returned."""
    from coordinator_kit.spark.load import write_parsed

    counts = write_parsed([str(f) for f in files], out, spark, overwrite=True)
    return Summary(counts.read, counts.recognised, counts.other, counts.quarantined)


class JvmCpu:
    """CPU seconds of the driver JVM (local mode runs every task there), from /proc."""

    def __init__(self, spark: Any) -> None:
        self.path: Path | None = None
        try:
            pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
            path = Path(f"/proc/{pid}/stat")
            if path.exists():
                self.path = path
        except Exception:       # not local, or no /proc: CPU figures are left out
            self.path = None
        self.tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    def __call__(self) -> float:
        if self.path is None:
            return float("nan")
        fields = self.path.read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / self.tick


# -- measuring --------------------------------------------------------------------------------

@dataclass
class Side:
    name: str
    run: Callable[[], Any]
    cpu: Callable[[], float]
    raw: Side | None = None         # the raw read this side is compared with
    seconds: list[float] = field(default_factory=list)
    cpu_s: list[float] = field(default_factory=list)
    result: Any = None

    def measure(self) -> None:
        c0, t0 = self.cpu(), time.perf_counter()
        self.result = self.run()
        self.seconds.append(time.perf_counter() - t0)
        self.cpu_s.append(self.cpu() - c0)

    @property
    def best(self) -> float:
        return min(self.seconds)

    @property
    def best_cpu(self) -> float:
        return self.cpu_s[self.seconds.index(self.best)]


def _fmt(x: float, digits: int = 0) -> str:
    return "-" if x != x else f"{x:,.{digits}f}"


def breakdown(spark: Any, files: list[Path], repeat: int, size: int) -> None:
    """Where the Spark parse spends its time: the same pass with less asked of it (Spark
    computes only what the query needs), best of `repeat`, next to the full pass."""
    from pyspark.sql import functions as F

    from coordinator_kit.spark.load import load_lines

    names = [str(f) for f in files]

    def agg(columns: list[str]) -> Callable[[], Any]:
        def run() -> Any:
            lines = load_lines(names, spark)
            return lines.agg(*[F.count(c) for c in columns]).collect()
        return run

    steps = [
        ("read the lines (count)", lambda: spark.read.text(names).count()),
        ("+ line strings (sum of lengths)",
         lambda: spark.read.text(names).agg(F.sum(F.length("value"))).collect()),
        ("+ classify: kind only", agg(["kind"])),
        ("+ layout fields (ts level logger)", agg(["kind", "ts", "level", "logger", "thread"])),
        ("+ message fields (event group member ...)",
         agg(["kind", "event", "group", "member", "generation", "state", "reason", "partition",
              "epoch", "duration_ms", "template"])),
        ("everything (every column)", agg(list(COLUMN_NAMES) + ["kind"])),
    ]
    print("breakdown of the Spark parse (each step asks for more columns; best of "
          f"{repeat}):")
    for label, run in steps:
        best = min(_timed(run) for _ in range(repeat))
        print(f"  {label:44} {best:7.2f} s {size / MB / best:8,.1f} MB/s")


def _timed(run: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    run()
    return time.perf_counter() - t0


# -- on a standalone cluster ----------------------------------------------------------------------

def group_cpu(pgids: set[int]) -> float:
    """CPU seconds so far of every live process in the process groups `pgids` (a worker and
    the executors it launched), from /proc."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) in pgids:
            total += int(fields[11]) + int(fields[12])
    return total / tick


def run_on_cluster(spark: Any, data: Dataset, local: dict[str, Side], python: Side,
                   workers: int, memory: str, repeat: int) -> int:
    """The raw read and the Spark parse again, on a standalone cluster of `workers` workers
    (1 core, `memory` each) started here (`coordinator_kit.spark.cluster`), printed beside
    the local rows. The local session is stopped first: a process has one SparkContext."""
    from coordinator_kit.spark.cluster import LocalSparkCluster
    from coordinator_kit.spark.session import get_session

    spark.stop()
    t0 = time.perf_counter()
    with LocalSparkCluster(workers, cores=1, memory=memory, lifetime_s=7200) as cluster:
        started = time.perf_counter() - t0
        t1 = time.perf_counter()
        cs = get_session(cluster.master_url, config=cluster.session_config())
        session = time.perf_counter() - t1
        jvm = JvmCpu(cs)
        workers_pgids = {pid for name, pid in cluster.pids.items() if name.startswith("worker")}

        def cpu() -> float:         # driver JVM + executors + this process
            return jvm() + group_cpu(workers_pgids) + time.process_time()

        raw = Side("raw read, Spark (read.text count)", lambda: spark_read(cs, data.files), cpu)
        parse = Side("parse, Spark load_lines + agg", lambda: spark_parse(cs, data.files), cpu,
                     raw=raw)
        try:
            for r in range(repeat):
                for side in (raw, parse):
                    side.measure()
                    print(f"  cluster round {r + 1}: {side.name}: {side.seconds[-1]:.2f} s",
                          file=sys.stderr, flush=True)
        finally:
            cs.stop()
    print(f"standalone cluster: {workers} worker(s) x 1 core, {memory} each, master and "
          f"workers started in {started:.1f} s, the session (driver + executors) in "
          f"{session:.1f} s")
    print(f"{'':38} {'local s':>8} {'cluster s':>9} {'cl/local':>8} {'local CPU':>9} "
          f"{'cl CPU':>7} {'cl MB/s':>8}")
    for side in (raw, parse):
        mine = local[side.name]
        print(f"{side.name:38} {mine.best:8.2f} {side.best:9.2f} "
              f"{side.best / mine.best:7.2f}x {_fmt(mine.best_cpu, 1):>9} "
              f"{_fmt(side.best_cpu, 1):>7} {data.bytes / MB / side.best:8,.1f}")
    print(f"cl/local: the cluster's seconds over local mode's (above 1: the cluster is slower); "
          f"cluster CPU: driver JVM + executors + this process; the cluster parse is "
          f"{python.best / parse.best:.2f}x the Python parse")
    problems = differences(python.result, parse.result)
    if problems:
        print("CHECK FAILED: the cluster's Spark parse and Python's differ:")
        for line in problems[:20]:
            print(f"  {line}")
        return 1
    print(f"check: the cluster's parse agrees with Python's and local Spark's: "
          f"{parse.result.read:,} lines, non-NULL values of every column per (kind, event, "
          f"problem)")
    return 0


# -- many small files ---------------------------------------------------------------------------

def many_files(n: int, seed: int, root: Path) -> Dataset:
    """`n` files of about 8 KiB each: the generated logs' lines, cut in order into `n` files."""
    directory = root / f"many-{n}-seed{seed}"
    if not (directory / _DONE).exists():
        source = dataset(max(2**20, n * 8192), seed, root)
        lines = [line for f in source.files for line in f.read_bytes().splitlines(keepends=True)]
        work = root / f".partial-{uuid.uuid4().hex[:8]}"
        work.mkdir(parents=True)
        try:
            per = -(-len(lines) // n)
            for i in range(n):
                (work / f"app-{i:05d}.log").write_bytes(b"".join(lines[i * per:(i + 1) * per]))
            (work / _DONE).write_text(f"files={n} seed={seed}\n")
            shutil.rmtree(directory, ignore_errors=True)
            work.rename(directory)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    files = sorted(directory.glob("*.log"))
    return Dataset(directory, files, sum(f.stat().st_size for f in files), None)


def run_many_files(spark: Any, n: int, seed: int, root: Path, repeat: int) -> int:
    data = many_files(n, seed, root)
    print(f"input: {len(data.files):,} files, {data.bytes / MB:,.1f} MB, in {data.directory}",
          flush=True)
    python = Side("parse, Python, one process", lambda: python_parse(data.files),
                  time.process_time)
    spark_side = Side("parse, Spark load_lines + agg", lambda: spark_parse(spark, data.files),
                      time.process_time)
    for r in range(repeat):
        for side in (python, spark_side):
            side.measure()
            print(f"  round {r + 1}: {side.name}: {side.seconds[-1]:.2f} s", file=sys.stderr,
                  flush=True)
    print(f"{'':38} {'seconds':>8} {'files/s':>9}")
    for side in (python, spark_side):
        print(f"{side.name:38} {side.best:8.2f} {len(data.files) / side.best:9,.0f}")
    print(f"Spark / Python (seconds): {spark_side.best / python.best:.1f}x "
          f"({python.best / spark_side.best:.2f}x Python's speed)")
    problems = differences(python.result, spark_side.result)
    if problems:
        print("CHECK FAILED: Spark and Python parse differently:")
        for line in problems[:20]:
            print(f"  {line}")
        return 1
    print(f"check: Spark and Python agree: {python.result.read:,} lines")
    return 0


# -- hostile lines ------------------------------------------------------------------------------

_LOGGER = " (kafka.coordinator.group.GroupCoordinator)"
_HEAD = "[2024-05-10 09:10:00,000] INFO "


# name -> (prefix, pump, suffix): the line is prefix + pump * n + suffix
HOSTILE: dict[str, tuple[str, str, str]] = {
    "template separators (librdkafka rebalance)": (
        _HEAD + 'Group "g" initiating rebalance (', ") in state  (join-state ) with ", _LOGGER),
    "template separators (ISR shrink)": (
        _HEAD + "Shrinking ISR from ", " to . Leader: (highWatermark: , endOffset: ). "
        "Out of sync replicas: ", _LOGGER),
    "template separators (coordinator dead)": (
        _HEAD + "Marking the coordinator dead (node ", "a) for group a: .", "!" + _LOGGER),
    "spaces after the level": (_HEAD, " ", "x"),
    "a class name of dots": ("", "a.", "aException"),
}
_NORMAL = (_HEAD + "[GroupCoordinator id=1] Member m in group ", "g",
           " has failed, removing it from the group." + _LOGGER)


def _fill(prefix: str, pump: str, suffix: str, length: int) -> str:
    return prefix + pump * max(1, (length - len(prefix) - len(suffix)) // len(pump)) + suffix


def hostile_lines(length: int = 11_000) -> dict[str, tuple[str, str]]:
    """name -> (hostile line, a well-formed line of the same length)."""
    normal = _fill(*_NORMAL, length)
    return {name: (_fill(*parts, length), normal) for name, parts in HOSTILE.items()}


def run_hostile(spark: Any, length: int) -> int:
    """Seconds per hostile line in each engine, and the ratio to a well-formed line."""
    from coordinator_kit.logs.parse import classify_line, parse_paths
    from coordinator_kit.spark.load import parse_logs

    def best(run: Callable[[], Any], k: int = 3) -> float:
        return min(_timed(run) for _ in range(k))

    work = Path(tempfile.mkdtemp(prefix="spark_logs-hostile-"))
    failed = 0
    try:
        print(f"{'line (' + format(length, ',') + ' chars)':44} {'Python s':>9} {'x normal':>9} "
              f"{'Spark s':>8} {'x normal':>9}")
        for name, (bad, good) in hostile_lines(length).items():
            files = {}
            for label, text in (("bad", bad), ("good", good)):
                files[label] = work / f"{label}-{len(files)}-{abs(hash(name)) % 10**6}.log"
                files[label].write_text(text + "\n")
            py = {k: best(lambda t=t: classify_line(t)) for k, t in (("bad", bad), ("good", good))}
            sp = {k: best(lambda f=f: parse_logs(f, spark).counts(), 2) for k, f in files.items()}
            agree = parse_paths(files["bad"]).counts == parse_logs(files["bad"], spark).counts()
            failed += not agree
            print(f"{name:44} {py['bad']:9.5f} {py['bad'] / py['good']:9.1f} {sp['bad']:8.2f} "
                  f"{sp['bad'] / sp['good']:9.1f}" + ("" if agree else "  ENGINES DISAGREE"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("x normal: the hostile line's time over a well-formed line's of the same length, in "
          "the same engine (Spark: a whole parse_logs + counts of a one-line file, mostly job "
          "overhead)")
    return 1 if failed else 0


def main(argv: list[str] | None = None, spark: Any = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1G", help="size of the generated logs (1G, 200M, "
                        "...; K/M/G are powers of 1024). Default 1G")
    parser.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each side; the best "
                        "counts (default 2)")
    parser.add_argument("--data-dir", type=Path,
                        default=Path(tempfile.gettempdir()) / "coordinator_kit-bench-spark-logs",
                        help="where generated inputs are kept between runs")
    parser.add_argument("--master", default=None, help="Spark master (default: the kit's "
                        "get_session default, local[*])")
    parser.add_argument("--no-write", action="store_true", help="skip the write_parsed row")
    parser.add_argument("--cluster", type=int, nargs="?", const=2, metavar="WORKERS",
                        help="then the raw read and the Spark parse again on a standalone "
                        "cluster the benchmark starts on 127.0.0.1 (default 2 workers, 1 core "
                        "each), beside the local figures")
    parser.add_argument("--worker-memory", default="1g", help="memory per --cluster worker "
                        "for its executor (default 1g)")
    parser.add_argument("--breakdown", action="store_true", help="then time the Spark parse "
                        "asked for fewer columns: where its time goes")
    parser.add_argument("--strict", action="store_true", help="exit with status 2 when the "
                        "target is missed")
    parser.add_argument("--many-files", type=int, metavar="N", help="instead: both engines on "
                        "the generated logs cut into N small files (e.g. 2000)")
    parser.add_argument("--hostile", action="store_true", help="instead: both engines on "
                        "lines made to make regexes backtrack, against well-formed lines")
    parser.add_argument("--hostile-length", type=int, default=11_000, metavar="CHARS",
                        help="length of the --hostile lines (default 11,000)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    try:
        size = parse_size(args.size)
    except ValueError as exc:
        parser.error(str(exc))

    load = " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    print(f"spark_logs: load average {load} at the start, {os.cpu_count()} cores; best of "
          f"{args.repeat}, sides interleaved", flush=True)
    if args.many_files or args.hostile:
        if spark is None:
            from coordinator_kit.spark.session import get_session
            spark = get_session(args.master)
        if args.hostile:
            return run_hostile(spark, args.hostile_length)
        return run_many_files(spark, args.many_files, args.seed, args.data_dir, args.repeat)
    data = dataset(size, args.seed, args.data_dir)
    print(f"input: {len(data.files)} files, {data.bytes / MB:,.1f} MB "
          f"({data.bytes / 2**30:.2f} GiB), seed {args.seed}, in {data.directory} "
          + (f"(generated in {data.generated_s:.1f} s)" if data.generated_s is not None
             else "(reused)"), flush=True)

    t0 = time.perf_counter()
    if spark is None:
        from coordinator_kit.spark.session import get_session
        spark = get_session(args.master)
    startup = time.perf_counter() - t0
    print(f"Spark {spark.version}: start-up {startup:.1f} s, {spark.sparkContext.master}, "
          f"{spark.sparkContext.defaultParallelism} cores", flush=True)

    jvm = JvmCpu(spark)

    def spark_cpu() -> float:
        return jvm() + time.process_time()

    out = Path(tempfile.mkdtemp(prefix="spark_logs-write-"))
    py_raw = Side("raw read, Python (bytes)", lambda: python_read(data.files), time.process_time)
    spark_raw = Side("raw read, Spark (read.text count)", lambda: spark_read(spark, data.files),
                     spark_cpu)
    python = Side("parse, Python, one process", lambda: python_parse(data.files),
                  time.process_time, raw=py_raw)
    spark_side = Side("parse, Spark load_lines + agg", lambda: spark_parse(spark, data.files),
                      spark_cpu, raw=spark_raw)
    sides = [py_raw, spark_raw, python, spark_side]
    writer = None
    if not args.no_write:
        writer = Side("parse, Spark write_parsed (Parquet)",
                      lambda: spark_write(spark, data.files, out), spark_cpu, raw=spark_raw)
        sides.append(writer)
    try:
        for r in range(args.repeat):
            for side in sides:
                side.measure()
                print(f"  round {r + 1}: {side.name}: {side.seconds[-1]:.2f} s", file=sys.stderr,
                      flush=True)
    finally:
        shutil.rmtree(out, ignore_errors=True)

    lines = python.result.read
    print(f"{'':38} {'seconds':>8} {'MB/s':>8} {'lines/s':>11} {'CPU s':>7} "
          f"{'Spark/Py':>9} {'of raw':>7}")
    for side in sides:
        vs_python = python.best / side.best if side in (spark_side, writer) else None
        of_raw = side.raw.best / side.best if side.raw else None
        print(f"{side.name:38} {side.best:8.2f} {data.bytes / MB / side.best:8,.1f} "
              f"{lines / side.best:11,.0f} {_fmt(side.best_cpu, 1):>7} "
              f"{(f'{vs_python:.2f}x' if vs_python else ''):>9} "
              f"{(f'{of_raw:.0%}' if of_raw else ''):>7}")
    first = spark_side.seconds[0]
    print(f"with start-up: {startup:.1f} s + the first (cold) Spark parse {first:.2f} s = "
          f"{startup + first:.2f} s: {data.bytes / MB / (startup + first):,.1f} MB/s, "
          f"{python.best / (startup + first):.2f}x Python")
    print(f"Spark/Py: Python's seconds / Spark's (above 1: Spark is faster); of raw: the raw "
          f"read's seconds / the row's (the share of the ceiling reached)")

    if args.breakdown:
        breakdown(spark, data.files, args.repeat, data.bytes)

    p = python.result
    problems = differences(p, spark_side.result)
    if writer is not None:
        for name in ("read", "recognised", "other", "quarantined"):
            a, b = getattr(p, name), getattr(writer.result, name)
            if a != b:
                problems.append(f"write_parsed {name}: Python {a:,}, Spark {b:,}")
    if problems:
        print("CHECK FAILED: Spark and Python parse differently:")
        for line in problems[:20]:
            print(f"  {line}")
        return 1
    print(f"check: Spark and Python agree: {p.read:,} lines, {p.recognised:,} recognised "
          f"({len(p.events())} event names), {p.other:,} other, {p.quarantined:,} quarantined; "
          f"non-NULL values of all {len(COLUMN_NAMES)} columns per (kind, event, problem)")

    ratio = python.best / spark_side.best
    if args.cluster:
        status = run_on_cluster(spark, data, {side.name: side for side in sides}, python,
                                args.cluster, args.worker_memory, args.repeat)
        if status:
            return status
    verdict = "MET" if ratio >= TARGET else "MISS"
    note = "" if size >= 2**30 else f" (this run: {data.bytes / 2**30:.2f} GiB)"
    print(f"target: Spark parse >= Python parse at 1 GiB on 2 cores (wall, no start-up): "
          f"{ratio:.2f}x -> {verdict}{note}")
    return 2 if args.strict and verdict == "MISS" else 0

if __name__ == "__main__":
    sys.exit(main())
