"""Every result of the Spark log pipeline as JSON: `load_logs`/`parse_logs` and each analysis.

    python tests/spark_dump.py PATH... --master spark://127.0.0.1:PORT --out results.json
    python tests/spark_dump.py PATH... --remote sc://127.0.0.1:PORT --out results.json

Run in a process of its own (a process holds one Spark session), so that a test can compare
a cluster's or a Spark Connect server's results with its own local session's (`results`, the
same function in both). Tables keep their column names, types and row order (every analysis
sorts its rows); times are ISO strings in the session's zone (UTC), so equal JSON means equal
collected rows.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import decimal
import json
import sys
import warnings
from pathlib import Path
from typing import Any

ANALYSES = ("rebalance_episodes", "member_departures", "heartbeat_gaps_client",
            "heartbeat_gaps_broker", "heartbeat_gap_summary_client",
            "heartbeat_gap_summary_broker", "coordinator_loads", "group_state_timeline")


def plain(value: Any) -> Any:
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if hasattr(value, "asDict"):                    # a struct
        return plain(value.asDict())
    return value


def table(df: Any) -> dict[str, Any]:
    return {"columns": [f"{f.name} {f.dataType.simpleString()}" for f in df.schema.fields],
            "rows": [plain(list(r)) for r in df.collect()]}


def results(paths: list[str], spark: Any) -> dict[str, Any]:
    """{name: table} for the parse (events and quarantine in file/line order, the counts) and
    every analysis of `coordinator_kit.spark.analyses` on the events."""
    from coordinator_kit.spark import analyses as A
    from coordinator_kit.logs.parse import SkippedFilesWarning
    from coordinator_kit.spark.load import parse_logs

    # the lines classified once and kept (localCheckpoint): every later query starts from them
    # instead of planning and running the loader's wide projection again
    with warnings.catch_warnings():   # datasets' traces and offset tables, skipped as expected
        warnings.simplefilter("ignore", SkippedFilesWarning)
        parsed = parse_logs(paths, spark, checkpoint=True)
    counts = dataclasses.asdict(parsed.counts())
    counts.pop("notes", None)
    # the events kept too, so that the analyses below plan from these rows, not from the
    # parse plan above them (multi-line records, continuations)
    events = parsed.events.localCheckpoint(eager=True)
    gaps = {basis: A.heartbeat_gaps(events, basis=basis) for basis in ("client", "broker")}
    frames = {
        "events": events.orderBy("file", "line"),
        "quarantine": parsed.quarantine.orderBy("file", "line"),
        "rebalance_episodes": A.rebalance_episodes(events),
        "member_departures": A.member_departures(events),
        "heartbeat_gaps_client": gaps["client"],
        "heartbeat_gaps_broker": gaps["broker"],
        "heartbeat_gap_summary_client": A.heartbeat_gap_summary(gaps["client"]),
        "heartbeat_gap_summary_broker": A.heartbeat_gap_summary(gaps["broker"]),
        "coordinator_loads": A.coordinator_loads(events),
        "group_state_timeline": A.group_state_timeline(events),
    }
    out: dict[str, Any] = {"counts": plain(counts)}
    out.update({name: table(df) for name, df in frames.items()})
    return json.loads(json.dumps(out))           # the form a JSON file gives back


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="spark_dump.py")
    p.add_argument("paths", nargs="+")
    p.add_argument("--master")
    p.add_argument("--remote")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                   help="a session setting (repeatable)")
    p.add_argument("--sql-conf", action="append", default=[], metavar="KEY=VALUE",
                   help="a runtime SQL setting, set after the session starts (repeatable)")
    p.add_argument("--out", required=True, type=Path)
    args = p.parse_args(argv)
    from coordinator_kit.spark.session import get_session

    config = dict(kv.split("=", 1) for kv in args.conf)
    spark = get_session(args.master, remote=args.remote, config=config,
                        app_name="coordinator-kit-dump")
    for kv in args.sql_conf:
        key, value = kv.split("=", 1)
        spark.conf.set(key, value)
    out = results(args.paths, spark)
    out["_session"] = {"master": spark.conf.get("spark.master", None) if args.remote is None
                       else None, "remote": args.remote,
                       "maxPartitionBytes": spark.conf.get("spark.sql.files.maxPartitionBytes")}
    args.out.write_text(json.dumps(out, indent=1, sort_keys=True))
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
