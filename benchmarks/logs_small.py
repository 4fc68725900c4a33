"""`logs` commands on a small input: where the time goes, and the engine choice before/after;
with `--gigabyte`, `logs parse` on 1 GB by engine, and where `AUTO_SPARK_BYTES` should sit.

Run it from the repository root::

    .venv/bin/python benchmarks/logs_small.py                    # datasets/one-dies
    .venv/bin/python benchmarks/logs_small.py datasets/many-groups --repeat 2
    .venv/bin/python benchmarks/logs_small.py --no-cli           # only the in-process breakdown
    .venv/bin/python benchmarks/logs_small.py --gigabyte         # + 1 GB of logs (minutes)
    .venv/bin/python benchmarks/logs_small.py --gigabyte --size 200M --no-breakdown

Parts, in one run:

1. **End to end** (each a fresh process, as a user runs them): `logs parse --engine spark`
   (before: Spark was the only default) against `--engine auto` (after: Python below
   `spark.engine.AUTO_SPARK_BYTES`), and the same for `logs quarantine` and `logs report`
   (after: the pure-Python parse and the pure-Python analyses of `logs.analyses`, no JVM;
   before: Spark's parse and `spark.analyses`' queries); the outputs are compared (the
   Parquet files' rows, the printed text) so a faster answer is never a different one.
2. **In-process breakdown** (one Python process): the pure-Python parse of the input
   (`logs.parse.parse_paths`); the pure-Python analyses of the report
   (`spark.report.write_report` on the parser's rows: `logs.analyses`); the Spark session's
   start (`spark.session.get_session`: the driver JVM and the SparkSession); the Spark parse
   of the same input (`spark.load.parse_logs(...).events`, counted: first run with the JVM
   cold, then warm); the quarantine's shapes in both engines (`logs.quarantine`); and the
   report's Spark analyses (`write_report` on the Spark-parsed events), cold then warm.
3. **`--gigabyte`** (opt-in: it takes minutes): `--size` (default 1G) of coordinator logs from
   the kit's large generator (`coordinator_kit.datasets.large`, seed 0) written to a temp
   directory and deleted after; `logs parse` with `--engine python`, `--engine spark` and
   `--engine auto` on it (fresh processes; the lines counted must agree), and which engine
   auto picked; `logs parse` on the small input with `--engine python` and `spark` as the
   fixed costs. From the four times, a straight line per engine (fixed cost + seconds per
   byte) and the size from which Spark is faster: where `AUTO_SPARK_BYTES` should sit on
   this machine.

Figures: wall seconds (best of `--repeat`), and the ratio before/after measured in the same
run. The load average at the start is printed: on a shared machine compare ratios.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _best(fn, repeat: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _cli(args: list[str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "coordinator_kit", "logs", *args],
                          cwd=ROOT, env=env, capture_output=True, text=True)
    return time.perf_counter() - t0, done


def _parquet_rows(folder: Path) -> dict[str, list[tuple]]:
    import pyarrow.parquet as pq

    out = {}
    for name in ("events", "quarantine"):
        table = pq.read_table(folder / f"{name}.parquet")
        rows = table.to_pylist()
        out[name] = sorted(tuple(sorted((k, str(v)) for k, v in r.items())) for r in rows)
    return out


def in_process(paths: list[str], repeat: int) -> None:
    import io
    import warnings

    from coordinator_kit.logs.parse import parse_paths
    from coordinator_kit.logs.quarantine import quarantine_shapes

    from coordinator_kit.spark.report import write_report

    warnings.simplefilter("ignore")
    t_py, result = _best(lambda: parse_paths(paths), repeat)
    t_shapes_py, _ = _best(lambda: quarantine_shapes(result.quarantine), repeat)
    t_report_py, _ = _best(lambda: write_report(result.events, io.StringIO()), repeat)
    print(f"python parse                 {t_py:8.3f} s   ({result.counts.summary()})")
    print(f"python quarantine shapes     {t_shapes_py:8.3f} s")
    print(f"python report analyses       {t_report_py:8.3f} s   (logs.analyses)")

    t0 = time.perf_counter()
    from coordinator_kit.spark.session import get_session
    spark = get_session()
    t_start = time.perf_counter() - t0
    print(f"spark session start          {t_start:8.3f} s   (JVM + SparkSession)")

    from coordinator_kit.spark.load import parse_logs
    from coordinator_kit.spark.quarantine import quarantine_shapes_spark

    for label in ("cold", "warm"):
        t0 = time.perf_counter()
        parsed = parse_logs(paths, spark)
        n = parsed.events.count()
        print(f"spark parse + count ({label})   {time.perf_counter() - t0:8.3f} s   ({n} events)")
    for label in ("cold", "warm"):
        t0 = time.perf_counter()
        quarantine_shapes_spark(parsed.quarantine)
        print(f"spark quarantine shapes ({label}) {time.perf_counter() - t0:6.3f} s")
    events = parsed.events.cache()
    for label in ("cold", "warm"):
        t0 = time.perf_counter()
        write_report(events, io.StringIO())
        print(f"spark report analyses ({label}) {time.perf_counter() - t0:7.3f} s   "
              "(spark.analyses)")


def end_to_end(paths: list[str], repeat: int) -> None:
    rows = []
    with tempfile.TemporaryDirectory(prefix="kit-logs-small-") as tmp:
        outs = {}
        for engine in ("spark", "auto"):
            out = Path(tmp) / engine
            best = float("inf")
            for _ in range(repeat):
                t, done = _cli(["parse", *paths, "--out", str(out), "--overwrite",
                                "--engine", engine])
                if done.returncode:
                    raise SystemExit(f"logs parse --engine {engine} failed:\n{done.stderr}")
                best = min(best, t)
            outs[engine] = _parquet_rows(out)
            rows.append((f"logs parse --engine {engine}", best, done.stderr.count("\n")))
        same_parse = outs["spark"] == outs["auto"]
        texts = {}
        for engine in ("spark", "auto"):
            best = float("inf")
            for _ in range(repeat):
                t, done = _cli(["quarantine", *paths, "--engine", engine])
                if done.returncode:
                    raise SystemExit(f"logs quarantine --engine {engine} failed:\n{done.stderr}")
                best = min(best, t)
            texts[engine] = done.stdout
            rows.append((f"logs quarantine --engine {engine}", best, done.stderr.count("\n")))
        same_quarantine = texts["spark"] == texts["auto"]
        reports = {}
        for engine in ("spark", "auto"):
            best = float("inf")
            for _ in range(repeat):
                t, done = _cli(["report", *paths, "--engine", engine, "--limit", "0"])
                if done.returncode:
                    raise SystemExit(f"logs report --engine {engine} failed:\n{done.stderr}")
                best = min(best, t)
            reports[engine] = done.stdout
            rows.append((f"logs report --engine {engine}", best, done.stderr.count("\n")))
        same_report = reports["spark"] == reports["auto"]
    for label, t, err in rows:
        print(f"{label:34s} {t:8.2f} s   ({err} line(s) on stderr)")
    for cmd in ("parse", "quarantine", "report"):
        before = next(t for label, t, _ in rows if label == f"logs {cmd} --engine spark")
        after = next(t for label, t, _ in rows if label == f"logs {cmd} --engine auto")
        print(f"logs {cmd}: before/after = {before / after:.1f}x")
    print(f"same Parquet rows from both engines: {same_parse}; same quarantine text: "
          f"{same_quarantine}; same report text (byte for byte): {same_report}")
    if not (same_parse and same_quarantine and same_report):
        raise SystemExit(1)


def _engine_said(stderr: str) -> str:
    found = re.search(r"^logs parse: engine: (.*)$", stderr, re.M)
    return found.group(1) if found else "?"


def _rows_in(path: Path) -> int:
    import pyarrow.dataset as ds

    return ds.dataset(path, format="parquet").count_rows()


def gigabyte(size_text: str, small: list[str]) -> None:
    """`logs parse` on `size_text` of generated logs by engine, and the threshold's place."""
    from coordinator_kit.datasets.large import generate_large, parse_size
    from coordinator_kit.spark.engine import AUTO_SPARK_BYTES

    size = parse_size(size_text)
    with tempfile.TemporaryDirectory(prefix="kit-logs-gigabyte-") as tmp:
        data = Path(tmp) / "logs"
        t0 = time.perf_counter()
        generate_large(data, size, seed=0)
        nbytes = sum(f.stat().st_size for f in data.glob("*.log"))
        print(f"generated {nbytes / 1e6:,.0f} MB of logs ({len(list(data.glob('*.log')))} "
              f"files) in {time.perf_counter() - t0:.1f} s")
        times: dict[str, float] = {}
        summaries: dict[str, str] = {}
        rows: dict[str, tuple[int, int]] = {}
        for engine in ("python", "spark", "auto"):
            out = Path(tmp) / f"out-{engine}"
            t, done = _cli(["parse", str(data), "--out", str(out), "--engine", engine])
            if done.returncode:
                raise SystemExit(f"logs parse --engine {engine} failed:\n{done.stderr}")
            times[engine] = t
            summaries[engine] = done.stdout.splitlines()[0]
            rows[engine] = (_rows_in(out / "events.parquet"), _rows_in(out / "quarantine.parquet"))
            extra = f", picked {_engine_said(done.stderr)}" if engine == "auto" else ""
            print(f"logs parse --engine {engine:6s} {t:8.1f} s   {nbytes / t / 1e6:5.1f} MB/s   "
                  f"({summaries[engine]}; {rows[engine][0]:,} events, "
                  f"{rows[engine][1]:,} quarantined rows{extra})", flush=True)
            shutil.rmtree(out)
        print(f"spark / python = {times['spark'] / times['python']:.2f} (below 1: Spark faster); "
              f"auto / python = {times['auto'] / times['python']:.2f}")
        same = len(set(summaries.values())) == 1 and len(set(rows.values())) == 1
        print(f"same counts and rows from every engine: {same}")
    small_times = {}
    with tempfile.TemporaryDirectory(prefix="kit-logs-small-") as tmp:
        for engine in ("python", "spark"):
            t, done = _cli(["parse", *small, "--out", str(Path(tmp) / engine),
                            "--engine", engine])
            if done.returncode:
                raise SystemExit(f"logs parse --engine {engine} failed:\n{done.stderr}")
            small_times[engine] = t
    print(f"fixed costs (logs parse {' '.join(small)}): python {small_times['python']:.1f} s, "
          f"spark {small_times['spark']:.1f} s")
    per_byte = {e: (times[e] - small_times[e]) / nbytes for e in ("python", "spark")}
    print(f"per GB after the fixed cost: python {per_byte['python'] * 1e9:.1f} s, spark "
          f"{per_byte['spark'] * 1e9:.1f} s")
    if per_byte["python"] > per_byte["spark"]:
        cross = (small_times["spark"] - small_times["python"]) / (per_byte["python"]
                                                                  - per_byte["spark"])
        print(f"Spark is faster from ~{cross / 2**20:,.0f} MiB of input on this machine now; "
              f"AUTO_SPARK_BYTES = {AUTO_SPARK_BYTES / 2**20:,.0f} MiB")
    else:
        print(f"Spark is not faster per byte than Python on this machine now: auto would do "
              f"best with Python at any size; AUTO_SPARK_BYTES = "
              f"{AUTO_SPARK_BYTES / 2**20:,.0f} MiB")
    if not same:
        raise SystemExit(1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="*", default=["datasets/one-dies"])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--no-cli", action="store_true", help="skip the end-to-end part")
    ap.add_argument("--no-breakdown", action="store_true", help="skip the in-process part")
    ap.add_argument("--gigabyte", action="store_true",
                    help="also time `logs parse` on --size of generated logs by engine (minutes)")
    ap.add_argument("--size", default="1G", help="the --gigabyte input's size (default 1G)")
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} core(s); "
          f"input: {' '.join(args.paths)}")
    if not args.no_cli:
        end_to_end(args.paths, args.repeat)     # first: fresh processes, no JVM of ours around
    if args.gigabyte:
        gigabyte(args.size, args.paths)
    if not args.no_breakdown:
        in_process(args.paths, args.repeat)


if __name__ == "__main__":
    main()
