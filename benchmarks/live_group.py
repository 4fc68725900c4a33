"""A big group of real consumers on the live server, next to the same group simulated.

Run from the repository root::

    .venv/bin/python benchmarks/live_group.py                  # 100 consumers in 4 processes
    .venv/bin/python benchmarks/live_group.py --members 40 --processes 2 --steady-s 20

1. **Live.** A `LiveServer` (3 brokers, one 100-partition topic, nothing produced, Kafka's
   default group configs: `group.initial.rebalance.delay.ms` 3000) runs in this process, on its
   own thread. `--processes` child processes each run their share of `--members` unmodified
   kafka-python `KafkaConsumer`s, one thread each (kafka-python adds a heartbeat thread per
   consumer), all in one group, with Kafka's default timeouts (session 45 s, heartbeat every
   3 s, auto-commit every 5 s) as the simulated consumers have them. Measured: the wall time
   from starting the processes until the group is Stable with every member holding an
   assignment (the coordinator's view and every consumer's rebalance listener). Then two
   windows of `--steady-s` seconds of the Stable group, each measuring the server thread's CPU
   time (`time.thread_time` sampled on the server's loop through `server.call`) and the
   requests it answered, by API: (a) everything the consumers send (fetches parked for
   `fetch.max.wait.ms`, heartbeats, auto-commits, metadata); (b) after each consumer paused
   its partitions (`KafkaConsumer.pause`: no more fetches), only the group coordinator's
   traffic, heartbeats and auto-commits: CPU per coordinator request.
2. **Simulated, same run.** The same group size on virtual time with the kit's own consumers
   (`Cluster.add_consumer`, the same defaults, the trace at INFO as the live server's): the
   virtual time to Stable and the wall time the simulation took to get there; then the same
   steady window on virtual time: the process's CPU time per coordinator request (heartbeat or
   auto-commit) answered. The simulated figure covers the clients too (the kit simulates both
   sides, and its consumers fetch nothing), the live one the server only.

Printed: both sides and their ratios. Every child process has a time limit (it closes its
consumers after `--limit-s` and exits) and is stopped by its PID (SIGTERM, then SIGKILL) when
the run ends or fails. The machine's two cores are shared by the server thread, the consumer
processes and whatever else runs; the consumers' own CPU time is printed so the load is
visible. The figures measured so far are in benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

GROUP = "bench-group"
TOPIC = "events"
PARTITIONS = 100
SESSION_MS, HEARTBEAT_MS, COMMIT_MS = 45_000, 3_000, 5_000  # Kafka's consumer defaults


# -- the consumer processes --------------------------------------------------------------------

def worker(args: argparse.Namespace) -> None:
    """Run `args.count` kafka-python consumers in threads; print one JSON line per event."""
    from kafka import KafkaConsumer
    from kafka.consumer.subscription_state import ConsumerRebalanceListener

    lock = threading.Lock()
    stop = threading.Event()
    pause = threading.Event()  # SIGUSR1: every consumer pauses its partitions (no fetches)
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGUSR1, lambda *_: pause.set())

    def emit(**fields: Any) -> None:
        with lock:
            print(json.dumps(fields), flush=True)

    def run(name: str) -> None:
        class Listener(ConsumerRebalanceListener):
            def on_partitions_revoked(self, revoked: Any) -> None:
                emit(event="revoked", client=name, count=len(revoked), t=time.monotonic())

            def on_partitions_assigned(self, assigned: Any) -> None:
                emit(event="assigned", client=name, count=len(assigned), t=time.monotonic())

        consumer = KafkaConsumer(
            bootstrap_servers=args.bootstrap.split(","), group_id=GROUP, client_id=name,
            session_timeout_ms=SESSION_MS, heartbeat_interval_ms=HEARTBEAT_MS,
            enable_auto_commit=True, auto_commit_interval_ms=COMMIT_MS,
            auto_offset_reset="earliest")
        consumer.subscribe([TOPIC], listener=Listener())
        deadline = time.monotonic() + args.limit_s
        paused = False
        while not stop.is_set() and time.monotonic() < deadline:
            consumer.poll(timeout_ms=500)
            if pause.is_set() and not paused and consumer.assignment():
                consumer.pause(*consumer.assignment())
                paused = True
        consumer.close(autocommit=False)
        emit(event="closed", client=name)

    threads = [threading.Thread(target=run, args=(f"bench-{args.first + i:03d}",), daemon=True)
               for i in range(args.count)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + args.limit_s + 30
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))


class Workers:
    """The consumer processes, their events, and their end (by PID, with a time limit)."""

    def __init__(self, bootstrap: str, members: int, processes: int, limit_s: float) -> None:
        self.assigned: dict[str, int] = {}
        self.assignments_seen = 0
        self.revocations = 0
        self._lock = threading.Lock()
        self.procs: list[subprocess.Popen[str]] = []
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH",
                                                                                   ""))
        share = [members // processes + (i < members % processes) for i in range(processes)]
        first = 0
        for count in share:
            proc = subprocess.Popen(
                [sys.executable, str(Path(__file__).resolve()), "--worker", "--bootstrap",
                 bootstrap, "--first", str(first), "--count", str(count), "--limit-s",
                 str(limit_s)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                env=env)
            self.procs.append(proc)
            threading.Thread(target=self._read, args=(proc,), daemon=True).start()
            first += count
        self._killer = threading.Timer(limit_s + 60, self.stop)  # the hard limit
        self._killer.daemon = True
        self._killer.start()

    def _read(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            with self._lock:
                if e["event"] == "assigned":
                    self.assigned[e["client"]] = e["count"]
                    self.assignments_seen += 1
                elif e["event"] == "revoked":
                    self.revocations += 1

    def holding(self) -> tuple[int, int]:
        """(consumers holding at least one partition, partitions held in all)."""
        with self._lock:
            return (sum(1 for n in self.assigned.values() if n > 0), sum(self.assigned.values()))

    def counts(self) -> tuple[int, int]:
        with self._lock:
            return self.assignments_seen, self.revocations

    def pause(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGUSR1)

    def stop(self) -> None:
        """SIGTERM each process by its PID (its consumers close), SIGKILL what is left."""
        self._killer.cancel()
        for proc in self.procs:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 20
        for proc in self.procs:
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(5)


# -- counting requests ---------------------------------------------------------------------------

def count_coordinator_requests(cluster: Any) -> dict[str, int]:
    """Count the heartbeats and offset commits the group coordinator services are asked to
    answer (both sides call `GroupCoordinatorService.heartbeat` / `commit_offsets`, looked up on
    the service at each call)."""
    counts = {"heartbeat": 0, "commit_offsets": 0}
    for broker in cluster.brokers.values():
        service = broker.service
        for name in counts:
            original = getattr(service, name)

            def counted(ctx: Any, request: Any, original: Any = original,
                        name: str = name) -> Any:
                counts[name] += 1
                return original(ctx, request)
            setattr(service, name, counted)
    return counts


def count_api_requests(apis: Any) -> dict[str, int]:
    """Count the live server's requests by API (`KafkaApis.handler` looks `on_<Name>` up on
    the instance)."""
    from coordinator_kit.live.versions import CODECS
    counts: dict[str, int] = {}
    for spec in CODECS.values():
        original = getattr(apis, f"on_{spec.name}", None)
        if original is None:
            continue
        counts[spec.name] = 0

        async def counted(conn: Any, version: int, request: Any, original: Any = original,
                          name: str = spec.name) -> Any:
            counts[name] += 1
            return await original(conn, version, request)
        setattr(apis, f"on_{spec.name}", counted)
    return counts


# -- the two sides -------------------------------------------------------------------------------

def live(members: int, processes: int, steady_s: float, limit_s: float,
         idle_s: float = 10.0) -> dict[str, Any]:
    from coordinator_kit.live.server import LiveServer

    server = LiveServer(port=0, topics={TOPIC: PARTITIONS}, produce_rate_per_s=0,
                        trace_level="INFO").start()
    workers: Workers | None = None
    try:
        coordinator = server.call(lambda: count_coordinator_requests(server.cluster))
        by_api = server.call(lambda: count_api_requests(server.apis))
        # the server with no client: its loop still wakes (driver steps, the idle reaper)
        idle0 = server.call(time.thread_time)
        time.sleep(idle_s)
        idle_rate = (server.call(time.thread_time) - idle0) / idle_s
        cpu0 = server.call(time.thread_time)
        wall0 = time.perf_counter()
        virtual0 = server.call(lambda: server.cluster.scheduler.now)
        workers = Workers(server.bootstrap, members, processes, limit_s)

        def stable() -> bool:
            g = server.call(lambda: server.cluster.group(GROUP))
            return (g["state"] == "Stable" and len(g["members"]) == members
                    and workers.holding() == (min(members, PARTITIONS), PARTITIONS))
        deadline = time.monotonic() + limit_s
        while not stable():
            if time.monotonic() > deadline:
                g = server.call(lambda: server.cluster.group(GROUP))
                raise TimeoutError(f"not Stable in {limit_s} s: {g['state']}, "
                                   f"{len(g['members'])} members, {workers.holding()} held")
            time.sleep(0.05)
        join_wall = time.perf_counter() - wall0
        join_cpu = server.call(time.thread_time) - cpu0
        join_virtual = server.call(lambda: server.cluster.scheduler.now) - virtual0
        generation = server.call(lambda: server.cluster.group(GROUP))["generation"]
        seen_at_stable = workers.counts()

        def sample() -> tuple[float, dict[str, int], dict[str, int]]:
            return server.call(lambda: (time.thread_time(), dict(coordinator), dict(by_api)))

        def window() -> dict[str, Any]:
            cpu1, coord1, api1 = sample()
            time.sleep(steady_s)
            cpu2, coord2, api2 = sample()
            return {"cpu_s": cpu2 - cpu1,
                    "coordinator": {k: coord2[k] - coord1[k] for k in coord2},
                    "by_api": {k: api2[k] - api1[k] for k in api2 if api2[k] - api1[k]}}
        time.sleep(2.0)  # the consumers' first ListOffsets and connections to each leader
        everything = window()
        workers.pause()
        time.sleep(2.0)  # every consumer's next poll pauses; fetches in flight end
        coordinator_only = window()
        after = server.call(lambda: server.cluster.group(GROUP))
        return {"idle_cpu_per_s": idle_rate, "join_wall_s": join_wall,
                "join_server_cpu_s": join_cpu,
                "join_virtual_ms": join_virtual, "generation": generation,
                "steady_s": steady_s, "all": everything, "coordinator_only": coordinator_only,
                "rebalanced": after["generation"] != generation or after["state"] != "Stable"
                or workers.counts() != seen_at_stable}
    finally:
        if workers is not None:
            workers.stop()
        server.stop()


def simulated(members: int, steady_s: float) -> dict[str, Any]:
    from coordinator_kit.client.member import MemberState
    from coordinator_kit.cluster import Cluster

    wall0, cpu0 = time.perf_counter(), time.process_time()
    cluster = Cluster(topics={TOPIC: PARTITIONS}, trace_level="INFO")
    coordinator = count_coordinator_requests(cluster)
    stable = [0]

    def count(_consumer: Any, old: MemberState, new: MemberState) -> None:
        stable[0] += (new is MemberState.STABLE) - (old is MemberState.STABLE)
    for i in range(members):
        cluster.add_consumer(f"bench-{i:03d}", group_id=GROUP, topics=(TOPIC,),
                             processing_ms=500)
        cluster.consumer(f"bench-{i:03d}").on_state_change(count)
    cluster.run_until(lambda: stable[0] == members and cluster.group(GROUP)["state"] == "Stable",
                      limit_ms=3_600_000)
    join = {"join_wall_s": time.perf_counter() - wall0,
            "join_cpu_s": time.process_time() - cpu0,
            "join_virtual_ms": cluster.scheduler.now,
            "generation": cluster.group(GROUP)["generation"]}
    before, cpu1, wall1 = dict(coordinator), time.process_time(), time.perf_counter()
    cluster.run_for(int(steady_s * 1000))
    return {**join, "steady_cpu_s": time.process_time() - cpu1,
            "steady_wall_s": time.perf_counter() - wall1,
            "coordinator": {k: coordinator[k] - before[k] for k in coordinator},
            "rebalanced": cluster.group(GROUP)["generation"] != join["generation"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=100)
    parser.add_argument("--processes", type=int, default=4,
                        help="consumer processes (the members are threads in them)")
    parser.add_argument("--steady-s", type=float, default=30.0,
                        help="seconds of the Stable group measured (wall on the live side, "
                        "virtual on the simulated one)")
    parser.add_argument("--limit-s", type=float, default=180.0,
                        help="each consumer process closes and exits after this long")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--bootstrap", help=argparse.SUPPRESS)
    parser.add_argument("--first", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    if args.limit_s < args.steady_s + 60:
        parser.error(f"--limit-s ({args.limit_s}) must leave the join a minute beyond "
                     f"--steady-s ({args.steady_s})")

    print(f"{args.members} kafka-python consumers in {args.processes} processes, one group, "
          f"{PARTITIONS} partitions; {os.cpu_count()} CPUs, load "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    lv = live(args.members, args.processes, args.steady_s, args.limit_s)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    sim = simulated(args.members, args.steady_s)

    def per(cpu_s: float, n: int) -> str:
        return f"{cpu_s / n * 1e6:,.0f} us" if n else "-"

    def net(cpu_s: float) -> float:  # less what the server spends with no client at all
        return max(0.0, cpu_s - lv["idle_cpu_per_s"] * lv["steady_s"])

    def apis(window: dict[str, Any]) -> str:
        return ", ".join(f"{k} {v:,}" for k, v in sorted(window["by_api"].items(),
                                                          key=lambda kv: -kv[1]))
    a, c = lv["all"], lv["coordinator_only"]
    a_requests, c_requests = sum(a["by_api"].values()), sum(c["by_api"].values())
    c_coord = sum(c["coordinator"].values())
    s_coord = sum(sim["coordinator"].values())
    print(f"live: idle server thread {lv['idle_cpu_per_s'] * 1000:.1f} CPU ms per s (no client: "
          f"driver steps, idle reaper); below, 'net' is less that")
    print(f"live: Stable with every member assigned after {lv['join_wall_s']:.2f} wall s "
          f"(generation {lv['generation']}; server thread {lv['join_server_cpu_s']:.2f} CPU s "
          f"for the join)")
    print(f"  (a) {lv['steady_s']:.0f} s, everything: {a_requests:,} requests ({apis(a)}); "
          f"server thread {a['cpu_s']:.3f} CPU s, net {per(net(a['cpu_s']), a_requests)} per "
          f"request")
    print(f"  (b) {lv['steady_s']:.0f} s, partitions paused: {c_requests:,} requests "
          f"({apis(c)}); server thread {c['cpu_s']:.3f} CPU s, net "
          f"{per(net(c['cpu_s']), c_coord)} per coordinator request (heartbeat or commit); "
          f"gross {per(c['cpu_s'], c['coordinator']['heartbeat'])} per heartbeat")
    print(f"  {'REBALANCED during the windows' if lv['rebalanced'] else 'no rebalance'}; "
          f"consumer processes {children.ru_utime + children.ru_stime:.1f} CPU s in all")
    print(f"simulated: Stable after {sim['join_virtual_ms'] / 1000:.2f} virtual s, computed in "
          f"{sim['join_wall_s']:.3f} wall s ({sim['join_cpu_s']:.3f} CPU s; generation "
          f"{sim['generation']})")
    print(f"  {args.steady_s:.0f} virtual s: {sim['coordinator']['heartbeat']:,} heartbeats, "
          f"{sim['coordinator']['commit_offsets']:,} commits in {sim['steady_wall_s']:.3f} wall s, "
          f"{sim['steady_cpu_s']:.3f} CPU s = {per(sim['steady_cpu_s'], s_coord)} per "
          f"coordinator request (clients and brokers); "
          f"{'REBALANCED' if sim['rebalanced'] else 'no rebalance'}")
    print("ratios:")
    print(f"  time to Stable, live wall / simulated virtual: "
          f"{lv['join_wall_s'] / (sim['join_virtual_ms'] / 1000):.2f}x")
    print(f"  time to Stable, live wall / simulation wall: "
          f"{lv['join_wall_s'] / sim['join_wall_s']:,.0f}x")
    if c_coord and s_coord:
        print(f"  CPU per coordinator request, live server (b, net) / simulation (both sides): "
              f"{(net(c['cpu_s']) / c_coord) / (sim['steady_cpu_s'] / s_coord):.1f}x")


if __name__ == "__main__":
    main()
