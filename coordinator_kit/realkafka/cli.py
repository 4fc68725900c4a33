"""`python -m coordinator_kit kafka fetch|start|stop|status`: real Apache Kafka beside the kit.

`fetch` downloads Kafka 4.0.2's jars from Maven Central into a cache outside the repository
(once); `start` runs one KRaft broker+controller on 127.0.0.1 with a lifetime and prints where
it listens and logs; `stop` stops started brokers by their PIDs; `status` lists them;
`compare` runs the client scenarios against real Kafka and against the kit and prints the
differences (docs/real-kafka.md); `fidelity` prints the known differences (README.md's table);
`record` writes their genuine logs and traces into
`datasets/real-kafka/`.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from ..live.cli import parse_config

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    p = sub.add_parser("kafka", help="fetch, start, stop real Apache Kafka (4.0.2) to compare "
                                     "the kit with",
                       description=__doc__.splitlines()[0])
    cmds = p.add_subparsers(dest="kafka_command", required=True)
    f = cmds.add_parser("fetch", help="download Kafka's jars from Maven Central (once)")
    f.set_defaults(func=_fetch)
    s = cmds.add_parser("start", help="start one broker+controller on 127.0.0.1")
    s.add_argument("--lifetime", type=float, default=3600.0,
                   help="seconds until a watchdog stops it (default 3600)")
    s.add_argument("--config", type=parse_config, action="append", default=[],
                   metavar="KEY=VALUE", help="a server.properties key, e.g. "
                   "group.initial.rebalance.delay.ms=0 (repeatable)")
    s.add_argument("--heap", default="512m", help="the JVM's -Xmx (default 512m)")
    s.add_argument("--offsets-partitions", type=int, default=3,
                   help="offsets.topic.num.partitions (default 3, as the kit's live server)")
    s.add_argument("--folder", default=None, help="data and logs here (default: a new temp "
                                                  "folder)")
    s.set_defaults(func=_start)
    t = cmds.add_parser("stop", help="stop started brokers (SIGTERM, SIGKILL after 20 s)")
    t.add_argument("--pid", type=int, default=None, help="only this one (default: all)")
    t.set_defaults(func=_stop)
    st = cmds.add_parser("status", help="what runs where")
    st.set_defaults(func=_status)
    c = cmds.add_parser("compare", help="run the client scenarios on real Kafka and on the kit "
                                        "and print the differences")
    c.add_argument("--client", action="append", choices=("kafka-python", "confluent-kafka", "java"),
                   default=None, help="client libraries (default: kafka-python and "
                   "confluent-kafka; java is Kafka's own consumer, needs javac)")
    c.add_argument("--scenario", action="append", default=None,
                   help="scenario names (default: all)")
    c.add_argument("--wire", action="store_true", help="also the raw protocol check")
    c.set_defaults(func=_compare)
    fd = cmds.add_parser("fidelity", help="print the known differences from Kafka 4.0.2 "
                                          "(realkafka.fidelity), or write them into README.md")
    fd.add_argument("--write", default=None, metavar="README",
                    help="rewrite the table in this README.md (e.g. README.md)")
    fd.set_defaults(func=_fidelity)
    r = cmds.add_parser("record", help="record genuine logs and traces of the scenarios on real "
                                       "Kafka and on the kit into datasets/real-kafka/")
    r.add_argument("--scenarios", nargs="+", default=None, metavar="NAME",
                   help="scenario names (default: every one of realkafka.scenarios.SCENARIOS)")
    r.add_argument("--clients", nargs="+", default=None,
                   choices=("kafka-python", "confluent-kafka", "java"),
                   help="client libraries (default: all three)")
    r.add_argument("--out", default=None, help="the dataset folder (default: datasets/real-kafka)")
    r.add_argument("--from", dest="raw_from", default=None, metavar="RAW",
                   help="re-write the dataset from a raw recording folder (no Kafka run)")
    r.set_defaults(func=_record)


def _fail(exc: Exception) -> int:
    print(f"kafka: {exc}", file=sys.stderr)
    return 2


def _fetch(args: argparse.Namespace) -> int:
    from .fetch import FetchError, cache_dir, fetch, is_fetched
    was = is_fetched()
    print(f"fetching Apache Kafka into {cache_dir()} ...", file=sys.stderr) if not was else None
    try:
        got = fetch()
    except FetchError as exc:
        return _fail(exc)
    how = "already fetched" if was else f"fetched in {got.seconds:.1f} s"
    print(f"{how}: {len(got.jars)} jars, {got.bytes / 1e6:.1f} MB in {got.folder / 'lib'}")
    return 0


def _start(args: argparse.Namespace) -> int:
    from .broker import RealKafka
    from .fetch import FetchError
    try:
        kafka = RealKafka(config=dict(args.config), lifetime_s=args.lifetime, heap=args.heap,
                          folder=args.folder, keep=True,
                          offsets_partitions=args.offsets_partitions).start()
    except (FetchError, ValueError) as exc:
        return _fail(exc)
    assert kafka.run is not None
    print(f"bootstrap.servers={kafka.bootstrap}")
    print(f"pid={kafka.run.pid}")
    print(f"log={kafka.server_log}")
    print(f"folder={kafka.folder}")
    print(f"stops by itself at {time.strftime('%H:%M:%S', time.localtime(kafka.run.ends_at))}"
          f" (--lifetime {args.lifetime:.0f} s); `python -m coordinator_kit kafka stop` "
          f"before")
    return 0


def _stop(args: argparse.Namespace) -> int:
    from .broker import runs, stop_pid
    running = runs()
    chosen = [r for r in running if args.pid is None or r.pid == args.pid]
    if args.pid is not None and not chosen:
        print(f"kafka stop: no started broker has pid {args.pid}; running: "
              f"{[r.pid for r in running] or 'none'}", file=sys.stderr)
        return 1
    for r in chosen:
        stop_pid(r.pid, r.folder)
        print(f"stopped pid {r.pid} ({r.bootstrap}); its log stays in {r.log_dir}")
    if not chosen:
        print("no started broker runs")
    return 0


def _status(args: argparse.Namespace) -> int:
    from .broker import runs
    from .fetch import KAFKA_VERSION, cache_dir, is_fetched
    print(f"Kafka {KAFKA_VERSION}: {'fetched' if is_fetched() else 'not fetched'} "
          f"({cache_dir()})")
    running = runs()
    for r in running:
        left = max(0, r.ends_at - time.time())
        print(f"pid {r.pid}: bootstrap.servers={r.bootstrap} controller={r.controller} "
              f"log={r.log_dir}/server.log, stops in {left:.0f} s")
    if not running:
        print("no started broker runs")
    return 0


def _fidelity(args: argparse.Namespace) -> int:
    from .fidelity import markdown_table, write_readme
    if args.write is None:
        print(markdown_table())
        return 0
    try:
        changed = write_readme(args.write)
    except (OSError, ValueError) as exc:
        return _fail(exc)
    print(f"{args.write}: {'table rewritten' if changed else 'already up to date'}")
    return 0
def _record(args: argparse.Namespace) -> int:
    from .record import main_record
    return main_record(scenarios=args.scenarios, clients=args.clients, out=args.out,
                       raw_from=args.raw_from)


def _compare(args: argparse.Namespace) -> int:
    from .compare import main_compare
    return main_compare(clients=args.client, scenarios=args.scenario, wire=args.wire)
