"""A real Kafka consumer, run as its own process: `python -m coordinator_kit.live.consumer_main`.

Tests and the "Your own consumers" notebook start these against a live server: unmodified
kafka-python (`KafkaConsumer`) or confluent-kafka (`Consumer`, librdkafka) with the group and
timeouts given on the command line. The process prints one JSON object per line on stdout for
what a learner wants to see of a consumer: `assigned` and `revoked` (from the rebalance
listener), `records` (how many it read, per partition, and the last offset), `committed`, and
`closed`; the client library's own log goes to stderr (or to `--log`). A scripted stall
(`--stall-file`, `--stall-ms`) keeps the poll loop away from `poll()` while the client's own
heartbeat thread runs on: `max.poll.interval.ms` exceeded (`stalling`, `stalled` events). It
exits after
`--seconds` (closing cleanly: LeaveGroup), or at once on SIGTERM (also closing cleanly);
SIGKILL is the crash.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import time
from typing import Any

__all__ = ["main"]


def _emit(kind: str, **fields: Any) -> None:
    print(json.dumps({"event": kind, "t": round(time.monotonic(), 3), **fields},
                     sort_keys=True), flush=True)


def _maybe_stall(args: argparse.Namespace, stop: "_Stop") -> None:
    """When the parent has created `--stall-file`, stay out of poll() for `--stall-ms` (a slow
    record handler): the client's heartbeat thread goes on, its poll timer runs out. The file
    is removed, so the parent can ask for another stall."""
    if not args.stall_file:
        return
    try:
        os.unlink(args.stall_file)
    except FileNotFoundError:
        return
    _emit("stalling", ms=args.stall_ms)
    until = time.monotonic() + args.stall_ms / 1000
    while not stop.stop and time.monotonic() < until:
        time.sleep(0.05)
    _emit("stalled", ms=args.stall_ms)


class _Stop:
    def __init__(self) -> None:
        self.stop = False
        signal.signal(signal.SIGTERM, self._on_term)

    def _on_term(self, *args: Any) -> None:
        self.stop = True


def _run_kafka_python(args: argparse.Namespace, stop: _Stop) -> None:
    from kafka import KafkaConsumer
    from kafka.consumer.subscription_state import ConsumerRebalanceListener

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked: Any) -> None:
            _emit("revoked", partitions=sorted([tp.topic, tp.partition] for tp in revoked))

        def on_partitions_assigned(self, assigned: Any) -> None:
            _emit("assigned", partitions=sorted([tp.topic, tp.partition] for tp in assigned))

    extra: dict[str, Any] = {}
    if args.instance_id:
        extra["group_instance_id"] = args.instance_id
    consumer = KafkaConsumer(
        bootstrap_servers=args.bootstrap.split(","), group_id=args.group,
        client_id=args.client_id, auto_offset_reset=args.reset,
        enable_auto_commit=True, auto_commit_interval_ms=args.commit_interval_ms,
        session_timeout_ms=args.session_timeout_ms,
        heartbeat_interval_ms=args.heartbeat_interval_ms,
        max_poll_interval_ms=args.max_poll_interval_ms, request_timeout_ms=args.request_timeout_ms,
        retry_backoff_ms=200, reconnect_backoff_ms=200, reconnect_backoff_max_ms=1000,
        **extra)
    consumer.subscribe(args.topics.split(","), listener=Listener())
    deadline = time.monotonic() + args.seconds
    while not stop.stop and time.monotonic() < deadline:
        batches = consumer.poll(timeout_ms=200)
        for tp, records in sorted(batches.items()):
            if records:
                _emit("records", topic=tp.topic, partition=tp.partition, count=len(records),
                      last=records[-1].offset)
        _maybe_stall(args, stop)
        if args.sleep_ms:
            time.sleep(args.sleep_ms / 1000)
    _emit("closing")
    consumer.close()
    _emit("closed")


def _run_confluent(args: argparse.Namespace, stop: _Stop) -> None:
    from confluent_kafka import Consumer

    config: dict[str, Any] = {
        "bootstrap.servers": args.bootstrap, "group.id": args.group,
        "client.id": args.client_id, "auto.offset.reset": args.reset,
        "enable.auto.commit": True, "auto.commit.interval.ms": args.commit_interval_ms,
        "session.timeout.ms": args.session_timeout_ms,
        "heartbeat.interval.ms": args.heartbeat_interval_ms,
        "max.poll.interval.ms": args.max_poll_interval_ms,
        "socket.timeout.ms": args.request_timeout_ms,
        "retry.backoff.ms": 200, "reconnect.backoff.ms": 200,
        "reconnect.backoff.max.ms": 1000,
        "topic.metadata.refresh.interval.ms": 5000,
    }
    if args.instance_id:
        config["group.instance.id"] = args.instance_id
    if args.group_protocol == "consumer":
        # KIP-848: the coordinator sets the heartbeat interval and owns the session timeout;
        # librdkafka refuses the classic settings with this protocol
        for key in ("session.timeout.ms", "heartbeat.interval.ms"):
            del config[key]
        config["group.protocol"] = "consumer"
    if args.debug:
        config["debug"] = args.debug
    consumer = Consumer(config, logger=logging.getLogger("confluent_kafka"))

    def on_assign(c: Any, partitions: Any) -> None:
        _emit("assigned", partitions=sorted([p.topic, p.partition] for p in partitions))

    def on_revoke(c: Any, partitions: Any) -> None:
        _emit("revoked", partitions=sorted([p.topic, p.partition] for p in partitions))

    consumer.subscribe(args.topics.split(","), on_assign=on_assign, on_revoke=on_revoke)
    deadline = time.monotonic() + args.seconds
    counts: dict[tuple[str, int], list[int]] = {}
    while not stop.stop and time.monotonic() < deadline:
        msgs = consumer.consume(num_messages=500, timeout=0.2)
        counts.clear()
        for m in msgs:
            if m.error():
                _emit("error", error=str(m.error()))
                continue
            seen = counts.setdefault((m.topic(), m.partition()), [0, -1])
            seen[0] += 1
            seen[1] = max(seen[1], m.offset())
        for (topic, partition), (count, last) in sorted(counts.items()):
            _emit("records", topic=topic, partition=partition, count=count, last=last)
        _maybe_stall(args, stop)
        if args.sleep_ms:
            time.sleep(args.sleep_ms / 1000)
    _emit("closing")
    consumer.close()
    _emit("closed")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m coordinator_kit.live.consumer_main",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--client", choices=("kafka-python", "confluent-kafka"),
                        default="kafka-python")
    parser.add_argument("--bootstrap", required=True, help="host:port[,host:port...]")
    parser.add_argument("--group", required=True)
    parser.add_argument("--topics", default="orders", help="comma-separated")
    parser.add_argument("--client-id", required=True)
    parser.add_argument("--instance-id", default=None, help="group.instance.id (static)")
    parser.add_argument("--group-protocol", choices=("classic", "consumer"), default="classic",
                        help="group.protocol: consumer is KIP-848 (confluent-kafka only)")
    parser.add_argument("--seconds", type=float, default=60.0, help="then close cleanly")
    parser.add_argument("--reset", default="earliest", help="auto.offset.reset")
    parser.add_argument("--session-timeout-ms", type=int, default=10_000)
    parser.add_argument("--heartbeat-interval-ms", type=int, default=1_000)
    parser.add_argument("--max-poll-interval-ms", type=int, default=300_000)
    parser.add_argument("--commit-interval-ms", type=int, default=1_000)
    parser.add_argument("--request-timeout-ms", type=int, default=30_000)
    parser.add_argument("--sleep-ms", type=int, default=0, help="pause after each poll")
    parser.add_argument("--stall-file", default=None,
                        help="when this file appears, stay out of poll() for --stall-ms")
    parser.add_argument("--stall-ms", type=int, default=0)
    parser.add_argument("--debug", default="", help="librdkafka debug contexts (cgrp,...)")
    parser.add_argument("--log", default=None, help="write the client's log to this file")
    parser.add_argument("--log-level", default="INFO")
    args = parser.parse_args(argv)
    handler: logging.Handler = (logging.FileHandler(args.log) if args.log
                                else logging.StreamHandler(sys.stderr))
    handler.setFormatter(logging.Formatter("%(asctime)s - %(name)s - %(levelname)s - "
                                           "%(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(args.log_level)
    if args.group_protocol == "consumer" and args.client != "confluent-kafka":
        parser.error("--group-protocol consumer needs --client confluent-kafka (kafka-python "
                     "3.0 speaks only the classic protocol)")
    stop = _Stop()
    _emit("started", client=args.client, client_id=args.client_id, group=args.group)
    if args.client == "kafka-python":
        _run_kafka_python(args, stop)
    else:
        _run_confluent(args, stop)
    return 0


if __name__ == "__main__":
    sys.exit(main())
