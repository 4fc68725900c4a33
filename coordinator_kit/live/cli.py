"""`python -m coordinator_kit serve`: the live server on the command line.

Real clients connect to the address it prints (`bootstrap.servers`); the brokers' log goes to
standard output (or `--log FILE`) in Kafka's log4j layout, so `logs parse` reads it. It stops
after `--lifetime` seconds (an hour unless told) or on Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_parser", "parse_topic", "parse_config"]


def parse_topic(text: str) -> tuple[str, int]:
    """`orders:6` -> ("orders", 6); `orders` -> ("orders", 1)."""
    name, sep, count = text.rpartition(":")
    if not sep:
        name, count = text, "1"
    if not name:
        raise argparse.ArgumentTypeError(f"--topic {text!r}: give NAME or NAME:PARTITIONS, e.g. "
                                         f"orders:6")
    if not count.isdigit() or int(count) < 1:
        raise argparse.ArgumentTypeError(f"--topic {text!r}: the partition count {count!r} must "
                                         f"be a whole number >= 1, e.g. orders:6")
    return name, int(count)


def parse_config(text: str) -> tuple[str, Any]:
    """`group.initial.rebalance.delay.ms=0` -> (key, 0): a value is read as a properties file
    is, whole numbers as ints, true/false as flags, anything else as text."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"--config {text!r}: give KEY=VALUE with a group "
                                         f"coordinator key, e.g. "
                                         f"group.initial.rebalance.delay.ms=0")
    value = value.strip()
    typed: Any = value
    if value.lstrip("-").isdigit() and value.isascii():
        typed = int(value)
    elif value.lower() in ("true", "false"):
        typed = value.lower() == "true"
    return key.strip(), typed


def add_parser(sub: Any) -> None:
    p = sub.add_parser("serve", help="run the kit's brokers behind Kafka's protocol, for real "
                                     "Kafka clients",
                       description=__doc__.splitlines()[0] + " Clients connect to the "
                       "printed bootstrap address.")
    p.add_argument("--brokers", type=int, default=3, help="simulated brokers, one listener each")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default loopback; anything else is reachable from "
                        "other machines and has no authentication)")
    p.add_argument("--advertised-host", default=None,
                   help="the host clients are told to connect to (Kafka's advertised.listeners;"
                        " default: --host, or 127.0.0.1 when --host is a wildcard)")
    p.add_argument("--port", type=int, default=9092,
                   help="first broker's port; broker b listens on PORT+b (0: free ports)")
    p.add_argument("--topic", type=parse_topic, action="append", metavar="NAME:PARTITIONS",
                   help="a data topic (repeat for more; default orders:6)")
    p.add_argument("--offsets-partitions", type=int, default=3,
                   help="__consumer_offsets partitions (offsets.topic.num.partitions)")
    p.add_argument("--config", type=parse_config, action="append", default=[],
                   metavar="KEY=VALUE", help="a group coordinator config, Kafka's key "
                   "(repeat for more), e.g. group.initial.rebalance.delay.ms=0")
    p.add_argument("--produce-rate", type=float, default=1.0,
                   help="records per second the server appends to each partition itself "
                        "(0: only what producers send)")
    p.add_argument("--log", default="-", help="where the brokers' log goes (default stdout)")
    p.add_argument("--log-level", default="INFO", choices=("TRACE", "DEBUG", "INFO", "WARN",
                                                           "ERROR"))
    p.add_argument("--lifetime", type=float, default=3600.0,
                   help="stop after this many seconds (default one hour)")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_serve)


def _serve(args: argparse.Namespace) -> int:
    from ..group.config import GroupCoordinatorConfig
    from .server import LiveServer

    if args.lifetime <= 0:
        print(f"--lifetime must be > 0 seconds, got {args.lifetime}", file=sys.stderr)
        return 2
    config = dict(args.config)
    try:
        GroupCoordinatorConfig.from_properties(config)
    except (ValueError, TypeError, KeyError) as exc:
        print(f"--config: {exc}", file=sys.stderr)
        return 2
    topics = dict(args.topic) if args.topic else {"orders": 6}
    out = sys.stdout if args.log == "-" else open(args.log, "a", encoding="utf-8")

    def warn(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    try:
        server = LiveServer(brokers=args.brokers, topics=topics, host=args.host, port=args.port,
                            advertised_host=args.advertised_host,
                            offsets_partitions=args.offsets_partitions, group_config=config,
                            seed=args.seed, produce_rate_per_s=args.produce_rate, log=out,
                            log_level=args.log_level, warn=warn,
                            # the trace keeps every event in memory: at the log's level, an
                            # hour with a hundred clients stays small (DEBUG keeps far more)
                            trace_level=args.log_level)
    except (ValueError, TypeError) as exc:
        print(f"serve: {exc}", file=sys.stderr)
        return 2

    def ready(s: LiveServer) -> None:
        print(f"coordinator_kit live server: bootstrap.servers={s.bootstrap} "
              f"({len(s.cluster.brokers)} brokers, topics "
              f"{', '.join(f'{t}:{n}' for t, n in sorted(topics.items()))}); stops in "
              f"{args.lifetime:g} s or on Ctrl-C", file=sys.stderr, flush=True)
    try:
        server.serve_forever(args.lifetime, on_ready=ready)
    except OSError as exc:
        print(f"serve: cannot listen on {args.host}:{args.port}: {exc.strerror or exc} (another "
              f"server there? try --port 0 for free ports)", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    finally:
        if out is not sys.stdout:
            out.close()
    return 0
