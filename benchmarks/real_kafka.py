"""Real Apache Kafka 4.0.2 and the kit's live server, timed with the same clients in one run.

Run from the repository root (Kafka fetched once: `python -m coordinator_kit kafka fetch`)::

    .venv/bin/python benchmarks/real_kafka.py                    # 20 members, 300 heartbeats
    .venv/bin/python benchmarks/real_kafka.py --members 10 --heartbeats 100 --rounds 2

For each target, one at a time (a `RealKafka` broker, then a `LiveServer` with one broker; both
on 127.0.0.1, both with Kafka's default `group.initial.rebalance.delay.ms` of 3000 ms and 3
offsets partitions; the broker is stopped by its PID before the next starts):

1. **Heartbeat round trip.** One raw member (`realkafka.wire`'s socket client and kafka-python's
   protocol classes) joins its own group (JoinGroup twice, SyncGroup), then sends
   `--heartbeats` Heartbeat v4 requests one after another on one connection: each is timed from
   the send to the whole response read (median, p90, p99, in microseconds). Nothing else talks
   to the broker meanwhile.
2. **A group reaching Stable.** `--members` unmodified kafka-python consumers in `--processes`
   child processes (benchmarks/live_group.py's workers: a thread per consumer, Kafka's default
   timeouts) subscribe to a topic with as many partitions as members. Timed: from starting the
   processes until every consumer's rebalance listener holds one partition and DescribeGroups
   (KafkaAdminClient) says Stable with every member. The rebalances it took are the
   generations kafka-python's members saw (the admin client does not say; the count of
   assignments heard is printed).

Printed: both targets' figures and the kit / Kafka ratios. Java consumers are left out: twenty
JVMs on the 2-core machine would time the machine, not the brokers. Each worker process has a
time limit and is stopped by its PID (SIGTERM, then SIGKILL); the broker JVM has a lifetime.
The figures measured so far are in benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for p in (ROOT, ROOT / "benchmarks"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import live_group  # noqa: E402  (its worker processes: kafka-python consumers in threads)

HB_GROUP = "bench-heartbeat"
DELAY_MS = 3000  # group.initial.rebalance.delay.ms, Kafka's default, on both


def heartbeat_rtts(bootstrap: str, n: int) -> list[float]:
    """`n` Heartbeat round trips of one member of its own group, in seconds."""
    from kafka.protocol.consumer.group import (HeartbeatRequest, JoinGroupRequest,
                                               SyncGroupRequest)

    from coordinator_kit.realkafka.wire import _Conn, _coordinator

    P = JoinGroupRequest.JoinGroupRequestProtocol

    def join(conn: Any, member_id: str) -> Any:
        return conn.ask(JoinGroupRequest(
            version=9, group_id=HB_GROUP, session_timeout_ms=30_000,
            rebalance_timeout_ms=30_000, member_id=member_id, group_instance_id=None,
            protocol_type="consumer", protocols=[P(name="range", metadata=b"\x00\x01")],
            reason=None))

    # a fresh broker creates __consumer_offsets on the first FindCoordinator and answers
    # COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE or NOT_COORDINATOR while it
    # loads it: find the coordinator again and retry, as clients do
    deadline = time.monotonic() + 60
    while True:
        host, port = _coordinator(*_split(bootstrap), HB_GROUP)
        conn = _Conn(host, port, "bench-hb")
        r = join(conn, "")
        if r.error_code not in (14, 15, 16) or time.monotonic() > deadline:
            break
        conn.close()
        time.sleep(0.2)
    try:
        member = r.member_id
        r = join(conn, member)
        if r.error_code:
            raise RuntimeError(f"JoinGroup for the heartbeat member failed: {r}")
        gen = r.generation_id
        A = SyncGroupRequest.SyncGroupRequestAssignment
        s = conn.ask(SyncGroupRequest(version=5, group_id=HB_GROUP, generation_id=gen,
                                      member_id=member, group_instance_id=None,
                                      protocol_type="consumer", protocol_name="range",
                                      assignments=[A(member_id=member, assignment=b"")]))
        if s.error_code:
            raise RuntimeError(f"SyncGroup for the heartbeat member failed: {s}")
        out = []
        for _ in range(n):
            t0 = time.perf_counter()
            h = conn.ask(HeartbeatRequest(version=4, group_id=HB_GROUP, generation_id=gen,
                                          member_id=member, group_instance_id=None))
            out.append(time.perf_counter() - t0)
            if h.error_code:
                raise RuntimeError(f"Heartbeat answered error {h.error_code}")
        return out
    finally:
        conn.close()


def _split(bootstrap: str) -> tuple[str, int]:
    host, port = bootstrap.rsplit(":", 1)
    return host, int(port)


def group_to_stable(bootstrap: str, members: int, processes: int,
                    limit_s: float) -> dict[str, Any]:
    from kafka.admin import KafkaAdminClient, NewTopic

    from coordinator_kit.realkafka.scenarios import Target, describe

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="bench-admin")
    try:
        admin.create_topics([NewTopic(live_group.TOPIC, members, 1)])
    finally:
        admin.close()
    target = Target("bench", bootstrap, lambda: "")
    wall0 = time.perf_counter()
    workers = live_group.Workers(bootstrap, members, processes, limit_s)
    try:
        deadline = time.monotonic() + limit_s
        while True:
            if workers.holding() == (members, members):
                d = describe(target, live_group.GROUP)
                if d["state"] == "Stable" and len(d["members"]) == members:
                    break
            if time.monotonic() > deadline:
                raise TimeoutError(f"not Stable in {limit_s} s; holding {workers.holding()}")
            time.sleep(0.05)
        seconds = time.perf_counter() - wall0
        assignments, revocations = workers.counts()
        return {"stable_s": seconds, "assignments": assignments, "revocations": revocations}
    finally:
        workers.stop()


def measure(name: str, members: int, processes: int, heartbeats: int,
            limit_s: float) -> dict[str, Any]:
    from coordinator_kit.realkafka.scenarios import kafka_target, kit_target

    make = kafka_target if name == "kafka" else kit_target
    config = {"group.initial.rebalance.delay.ms": DELAY_MS}
    t0 = time.perf_counter()
    with make(**config) as target:
        started = time.perf_counter() - t0
        rtts = heartbeat_rtts(target.bootstrap, heartbeats)
        group = group_to_stable(target.bootstrap, members, processes, limit_s)
    q = statistics.quantiles(rtts, n=100)
    return {"start_s": started, "hb_median_us": statistics.median(rtts) * 1e6,
            "hb_p90_us": q[89] * 1e6, "hb_p99_us": q[98] * 1e6, **group}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=20)
    parser.add_argument("--processes", type=int, default=4,
                        help="worker processes the members are spread over (default 4)")
    parser.add_argument("--heartbeats", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=1,
                        help="Kafka then the kit, this many times")
    parser.add_argument("--limit-s", type=float, default=120.0,
                        help="each worker process's time limit (default 120)")
    args = parser.parse_args()
    rows = []
    for rnd in range(args.rounds):
        for name in ("kafka", "kit"):
            m = measure(name, args.members, args.processes, args.heartbeats, args.limit_s)
            rows.append((rnd, name, m))
            print(f"round {rnd + 1} {name:5}: started in {m['start_s']:.1f} s; heartbeat "
                  f"round trip median {m['hb_median_us']:.0f} us, p90 {m['hb_p90_us']:.0f} us,"
                  f" p99 {m['hb_p99_us']:.0f} us; {args.members} members Stable after "
                  f"{m['stable_s']:.2f} s ({m['assignments']} assignments heard, "
                  f"{m['revocations']} revocations)", flush=True)
    for rnd in range(args.rounds):
        k = next(m for r, n, m in rows if r == rnd and n == "kafka")
        t = next(m for r, n, m in rows if r == rnd and n == "kit")
        print(f"round {rnd + 1} kit / Kafka: heartbeat median "
              f"{t['hb_median_us'] / k['hb_median_us']:.2f}x, p99 "
              f"{t['hb_p99_us'] / k['hb_p99_us']:.2f}x; time to Stable "
              f"{t['stable_s'] / k['stable_s']:.2f}x; server start "
              f"{t['start_s'] / k['start_s']:.3f}x")


if __name__ == "__main__":
    main()
