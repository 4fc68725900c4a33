"""`logs` commands on a small input: where the time goes, and the engine choice before/after.

Run it from the repository root::

    .venv/bin/python benchmarks/logs_small.py                    # datasets/one-dies
    .venv/bin/python benchmarks/logs_small.py datasets/many-groups --repeat 2
    .venv/bin/python benchmarks/logs_small.py --no-cli           # only the in-process breakdown

Two parts, in one run:

1. **In-process breakdown** (one Python process): the pure-Python parse of the input
   (`logs.parse.parse_paths`); the Spark session's start (`spark.session.get_session`: the
   driver JVM and the SparkSession); the Spark parse of the same input
   (`spark.load.parse_logs(...).events`, counted: first run with the JVM cold, then warm);
   the quarantine's shapes in both engines (`logs.quarantine`); and the report's analyses
   (`spark.report.write_report`) on the Spark-parsed events, cold then warm.
2. **End to end** (each a fresh process, as a user runs them): `logs parse --engine spark`
   (before: Spark was the only default) against `--engine auto` (after: Python below
   `spark.engine.AUTO_SPARK_BYTES`), and the same for `logs quarantine` and `logs report`
   (whose analyses stay Spark queries: auto only parses in Python); the outputs are compared
   (the Parquet files' rows, the printed text) so a faster answer is never a different one.

Figures: wall seconds (best of `--repeat`), and the ratio before/after measured in the same
run. The load average at the start is printed: on a shared machine compare ratios.
"""

from __future__ import annotations

import argparse
import os
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

    warnings.simplefilter("ignore")
    t_py, result = _best(lambda: parse_paths(paths), repeat)
    t_shapes_py, _ = _best(lambda: quarantine_shapes(result.quarantine), repeat)
    print(f"python parse                 {t_py:8.3f} s   ({result.counts.summary()})")
    print(f"python quarantine shapes     {t_shapes_py:8.3f} s")

    t0 = time.perf_counter()
    from coordinator_kit.spark.session import get_session
    spark = get_session()
    t_start = time.perf_counter() - t0
    print(f"spark session start          {t_start:8.3f} s   (JVM + SparkSession)")

    from coordinator_kit.spark.load import parse_logs
    from coordinator_kit.spark.quarantine import quarantine_shapes_spark
    from coordinator_kit.spark.report import write_report

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
        print(f"spark report analyses ({label}) {time.perf_counter() - t0:7.3f} s")


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
        same_quarantine = same_quarantine and reports["spark"] == reports["auto"]
    for label, t, err in rows:
        print(f"{label:34s} {t:8.2f} s   ({err} line(s) on stderr)")
    for cmd in ("parse", "quarantine", "report"):
        before = next(t for label, t, _ in rows if label == f"logs {cmd} --engine spark")
        after = next(t for label, t, _ in rows if label == f"logs {cmd} --engine auto")
        print(f"logs {cmd}: before/after = {before / after:.1f}x")
    print(f"same Parquet rows from both engines: {same_parse}; "
          f"same quarantine and report text: {same_quarantine}")
    if not (same_parse and same_quarantine):
        raise SystemExit(1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="*", default=["datasets/one-dies"])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--no-cli", action="store_true", help="skip the end-to-end part")
    ap.add_argument("--no-breakdown", action="store_true", help="skip the in-process part")
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} core(s); "
          f"input: {' '.join(args.paths)}")
    if not args.no_cli:
        end_to_end(args.paths, args.repeat)     # first: fresh processes, no JVM of ours around
    if not args.no_breakdown:
        in_process(args.paths, args.repeat)


if __name__ == "__main__":
    main()
