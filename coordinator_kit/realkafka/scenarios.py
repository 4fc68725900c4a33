"""Client scenarios that run unchanged against real Kafka or against the kit's live server.

A `Target` is something real clients connect to: `kafka_target()` (a `RealKafka` broker) or
`kit_target()` (a `LiveServer` with one broker, no self-producer). Each scenario creates its
own topic with the admin client (CreateTopics), produces records with kafka-python's producer,
starts `ConsumerProcess`es (kafka-python, confluent-kafka, or Kafka's Java consumer through
`java_driver.JavaConsumerProcess`), acts on them (join, SIGKILL,
SIGSTOP/SIGCONT, clean close and restart) and records what the clients and the admin client
see at each step: a `Trace`. `compare.py` normalises two traces and lists the differences.

What is recorded is client-visible only: each client's assignment (from its rebalance
listener), the generations it joined (kafka-python's "Successfully joined group" line,
librdkafka's "JoinGroup response" debug line, the Java consumer's "Successfully joined group
with generation"), how long a step took, DescribeGroups (state,
protocol, members by client id, their assignments) and OffsetFetch through
KafkaAdminClient, and the first offset a restarted consumer reads.
"""

from __future__ import annotations

import contextlib
import io
import re
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..live.processes import ConsumerProcess

__all__ = ["Target", "Trace", "Step", "SCENARIOS", "kafka_target", "kit_target",
           "run_scenario", "SESSION_MS", "HEARTBEAT_MS", "PARTITIONS", "REBALANCE_DELAY_MS"]

SESSION_MS = 6000  # group.min.session.timeout.ms, on both: the quickest expiry a broker allows
HEARTBEAT_MS = 500
PARTITIONS = 6
RECORDS_PER_PARTITION = 10
# Kafka's default is 3000 ms; 500 keeps the scenarios short and avoids kafka-python's
# empty-first-assignment loop seen at 0 (docs/live-mode.md, "Seen with the clients")
REBALANCE_DELAY_MS = 500


@dataclass
class Target:
    """Where the clients go: a name ("kafka" or "kit"), `bootstrap.servers`, and a way to
    read the broker's log afterwards."""

    name: str
    bootstrap: str
    log_text: Callable[[], str]
    handle: Any = None  # the RealKafka or LiveServer


@contextlib.contextmanager
def kafka_target(*, lifetime_s: float = 1800, **config: Any) -> Iterator[Target]:
    from .broker import RealKafka
    cfg = {"group.initial.rebalance.delay.ms": REBALANCE_DELAY_MS, **config}
    with RealKafka(config=cfg, lifetime_s=lifetime_s) as kafka:
        yield Target("kafka", kafka.bootstrap,
                     lambda: kafka.server_log.read_text(errors="replace"), kafka)


@contextlib.contextmanager
def kit_target(*, brokers: int = 1, **config: Any) -> Iterator[Target]:
    from ..live.server import LiveServer
    log = io.StringIO()
    cfg = {"group.initial.rebalance.delay.ms": REBALANCE_DELAY_MS, **config}
    server = LiveServer(port=0, brokers=brokers, topics={}, group_config=cfg,
                        produce_rate_per_s=0, log=log).start()
    try:
        yield Target("kit", server.bootstrap, log.getvalue, server)
    finally:
        server.stop()


@dataclass
class Step:
    """What the clients and the admin client saw after one step of a scenario."""

    label: str
    ok: bool  # the step's wait condition was met in time
    seconds: float  # from the step's action until its condition held (or the timeout)
    assignments: dict[str, list[tuple[str, int]]]
    group: dict[str, Any]  # DescribeGroups, normalised


@dataclass
class Trace:
    scenario: str
    client: str
    target: str
    steps: list[Step] = field(default_factory=list)
    generations: dict[str, list[int]] = field(default_factory=dict)  # client -> joined gens
    member_ids: dict[str, list[str]] = field(default_factory=dict)   # client -> ids by shape
    assigned_events: dict[str, int] = field(default_factory=dict)
    committed: dict[str, int] = field(default_factory=dict)  # "topic-p" -> offset
    resumed_at: dict[str, int] = field(default_factory=dict)  # first offset read after restart
    error: str = ""


# -- helpers on a target ---------------------------------------------------------------------

def _admin(target: Target) -> Any:
    from kafka.admin import KafkaAdminClient
    return KafkaAdminClient(bootstrap_servers=target.bootstrap, client_id="scenario-admin",
                            request_timeout_ms=15000)


def create_and_fill(target: Target, topic: str, partitions: int = PARTITIONS,
                    per_partition: int = RECORDS_PER_PARTITION) -> None:
    """CreateTopics, then `per_partition` records into each partition (kafka-python)."""
    from kafka.admin import NewTopic
    admin = _admin(target)
    try:
        admin.create_topics([NewTopic(topic, partitions, 1)])
    finally:
        admin.close()
    produce(target, topic, partitions, per_partition)


def produce(target: Target, topic: str, partitions: int, per_partition: int) -> None:
    from kafka import KafkaProducer
    producer = KafkaProducer(bootstrap_servers=target.bootstrap, client_id="scenario-producer",
                             linger_ms=5)
    try:
        for p in range(partitions):
            for i in range(per_partition):
                producer.send(topic, f"{topic}-{p} record {i}".encode(), partition=p)
        producer.flush(30)
    finally:
        producer.close(10)


def describe(target: Target, group: str) -> dict[str, Any]:
    """DescribeGroups through KafkaAdminClient, members named by client id."""
    admin = _admin(target)
    try:
        d = admin.describe_groups([group])[group]
    finally:
        admin.close()
    members = []
    for m in d.get("members", []):
        parts = m.get("member_assignment") or {}
        owned = sorted((t["topic"], p) for t in parts.get("assigned_partitions", [])
                       for p in t["partitions"])
        members.append((m["client_id"], len(owned)))
    return {"state": d.get("group_state"), "protocol_type": d.get("protocol_type"),
            "protocol": d.get("protocol_data"), "members": sorted(members),
            "error": d.get("error_code", 0)}


def committed_offsets(target: Target, group: str) -> dict[str, int]:
    admin = _admin(target)
    try:
        got = admin.list_group_offsets(group)[group]
    finally:
        admin.close()
    return {f"{tp.topic}-{tp.partition}": om.offset for tp, om in sorted(got.items())}


_KP_JOINED = re.compile(r"Successfully joined group (\S+) <Generation (-?\d+) "
                        r"\(member_id: ([^,]*),")
# ConsumerCoordinator / AbstractCoordinator.JoinGroupResponseHandler at INFO
_JAVA_JOINED = re.compile(r"Successfully joined group with generation Generation\{generationId="
                          r"(-?\d+), memberId='([^']*)'")
_RD_JOINED = re.compile(r"JoinGroup response: GenerationId (-?\d+), Protocol \S*, "
                        r"LeaderId [^,]*, my MemberId ([^,\s]+)")


def member_shape(member_id: str, client_id: str) -> str:
    """A member id by its shape: Kafka's `client.id + "-" + UUID` becomes `<client>-<uuid>`."""
    if re.fullmatch(re.escape(client_id) + r"-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-"
                    r"[0-9a-f]{12}", member_id):
        return "<client.id>-<uuid>"
    uuid_re = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    return "other:" + re.sub(uuid_re, "<uuid>", member_id).replace(client_id, "<client.id>", 1)


def _joined(c: ConsumerProcess) -> list[tuple[int, str]]:
    if c.log_path is None or not c.log_path.exists():
        return []
    text = c.log_path.read_text(errors="replace")
    if c.client == "kafka-python":
        found = [(int(m.group(2)), m.group(3)) for m in _KP_JOINED.finditer(text)]
    elif c.client == "java":
        found = [(int(m.group(1)), m.group(2)) for m in _JAVA_JOINED.finditer(text)]
    else:
        found = [(int(m.group(1)), m.group(2)) for m in _RD_JOINED.finditer(text)]
    # generation -1 is the MEMBER_ID_REQUIRED round (no generation joined); kafka-python
    # 3.0.12 logs each join twice
    out: list[tuple[int, str]] = []
    for g, m in found:
        if g >= 0 and (not out or out[-1] != (g, m)):
            out.append((g, m))
    return out


# -- the scenarios ---------------------------------------------------------------------------

class _Run:
    """One scenario on one target with one client library."""

    def __init__(self, target: Target, scenario: str, client: str, workdir: Path,
                 tag: str = "") -> None:
        self.target = target
        self.client = client
        self.name = f"{scenario}-{client}{tag}"
        self.topic = f"t-{self.name}"
        self.group = f"g-{self.name}"
        self.workdir = workdir
        self.consumers: dict[str, ConsumerProcess] = {}
        self.trace = Trace(scenario, client, target.name)

    def start(self, label: str) -> ConsumerProcess:
        extra: tuple[str, ...] = ()
        if self.client == "confluent-kafka":
            extra = ("--debug", "cgrp", "--log-level", "DEBUG")
        if self.client == "java":
            from .java_driver import JavaConsumerProcess
            j = JavaConsumerProcess(self.target.bootstrap, label, group=self.group,
                                    topics=self.topic, seconds=120,
                                    session_timeout_ms=SESSION_MS,
                                    heartbeat_interval_ms=HEARTBEAT_MS,
                                    log_path=self.workdir /
                                    f"{self.target.name}-{self.name}-{label}.log")
            self.consumers[label] = j
            return j
        c = ConsumerProcess(self.target.bootstrap, label, group=self.group, client=self.client,
                            topics=self.topic, seconds=120, session_timeout_ms=SESSION_MS,
                            heartbeat_interval_ms=HEARTBEAT_MS,
                            log_path=self.workdir / f"{self.target.name}-{self.name}-{label}.log",
                            extra_args=extra)
        self.consumers[label] = c
        return c

    def owns(self, label: str, n: int) -> Callable[[], bool]:
        return lambda: len(self.consumers[label].assignment) == n

    def step(self, label: str, condition: Callable[[], bool], timeout_s: float = 40,
             since: float | None = None, settle_s: float = 0.0) -> Step:
        started = time.monotonic() if since is None else since
        deadline = time.monotonic() + timeout_s
        ok = False
        while time.monotonic() < deadline:
            if condition():
                ok = True
                break
            time.sleep(0.05)
        seconds = time.monotonic() - started
        if settle_s:
            time.sleep(settle_s)
        group = self.describe_stable() if ok else describe(self.target, self.group)
        s = Step(label, ok, round(seconds, 2),
                 {k: c.assignment for k, c in sorted(self.consumers.items()) if c.alive},
                 group)
        self.trace.steps.append(s)
        return s

    def describe_stable(self, timeout_s: float = 10) -> dict[str, Any]:
        """DescribeGroups once the group settled (Stable or Empty): the clients' listeners can
        hear of an assignment a moment before the coordinator's state reads Stable."""
        deadline = time.monotonic() + timeout_s
        d = describe(self.target, self.group)
        while d["state"] not in ("Stable", "Empty", "Dead") and time.monotonic() < deadline:
            time.sleep(0.2)
            d = describe(self.target, self.group)
        return d

    def finish(self) -> Trace:
        for label, c in sorted(self.consumers.items()):
            joined = _joined(c)
            self.trace.generations[label] = [g for g, _ in joined]
            self.trace.member_ids[label] = sorted({member_shape(m, label) for _, m in joined})
            self.trace.assigned_events[label] = len(c.events_of("assigned"))
        return self.trace

    def close(self) -> None:
        for c in self.consumers.values():
            c.close()


def _one_joins(r: _Run) -> None:
    r.start("a")
    r.step("a joins", r.owns("a", PARTITIONS))


def _second_joins(r: _Run) -> None:
    r.start("a")
    r.step("a joins", r.owns("a", PARTITIONS))
    t = time.monotonic()
    r.start("b")
    r.step("b joins", lambda: r.owns("a", 3)() and r.owns("b", 3)(), since=t)


def _two_stable(r: _Run) -> None:
    r.start("a")
    r.step("a joins", r.owns("a", PARTITIONS))
    r.start("b")
    r.step("b joins", lambda: r.owns("a", 3)() and r.owns("b", 3)())


def _crash_expires(r: _Run) -> None:
    _two_stable(r)
    r.consumers["b"].crash()
    t = time.monotonic()
    r.step("b SIGKILLed; a takes all", r.owns("a", PARTITIONS), since=t)


def _short_pause(r: _Run) -> None:
    _two_stable(r)
    r.consumers["b"].pause()
    time.sleep(SESSION_MS / 2000)  # half the session: no heartbeat missed long enough
    r.consumers["b"].resume()
    t = time.monotonic()
    time.sleep(SESSION_MS / 1000)  # a full session after: nothing may have changed
    r.step("b paused for half a session", lambda: r.owns("a", 3)() and r.owns("b", 3)(),
           since=t)


def _long_pause(r: _Run) -> None:
    _two_stable(r)
    r.consumers["b"].pause()
    t = time.monotonic()
    r.step("b paused past the session; a takes all", r.owns("a", PARTITIONS), since=t)
    r.consumers["b"].resume()
    t = time.monotonic()
    r.step("b resumed; rejoins", lambda: r.owns("a", 3)() and r.owns("b", 3)(), since=t)


def _commit_resume(r: _Run) -> None:
    a = r.start("a")
    total = PARTITIONS * RECORDS_PER_PARTITION
    r.step("a reads everything", lambda: a.records_read() >= total)
    time.sleep(1.5)  # an auto-commit interval (1 s) passes
    a.stop()
    r.trace.committed = committed_offsets(r.target, r.group)
    r.step("a closed", lambda: True)
    produce(r.target, r.topic, PARTITIONS, 1)
    a2 = r.start("a2")
    r.step("a2 resumes", lambda: len(a2.first_offsets()) == PARTITIONS)
    r.trace.resumed_at = {f"{t}-{p}": o for (t, p), o in sorted(a2.first_offsets().items())}


SCENARIOS: dict[str, Callable[[_Run], None]] = {
    "one-joins": _one_joins,
    "second-joins": _second_joins,
    "crash-expires": _crash_expires,
    "short-pause": _short_pause,
    "long-pause": _long_pause,
    "commit-resume": _commit_resume,
}


def run_scenario(target: Target, scenario: str, client: str = "kafka-python",
                 workdir: str | Path | None = None, tag: str = "") -> Trace:
    """Run one scenario with `client` consumers on `target`; its `Trace` (with `error` set
    when a step raised). Its topic and group are named after the scenario, the client and
    `tag`: a second run on the same target needs another tag."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
    folder = Path(workdir) if workdir is not None else Path(tempfile.mkdtemp(prefix="scenario-"))
    folder.mkdir(parents=True, exist_ok=True)
    r = _Run(target, scenario, client, folder, tag)
    try:
        create_and_fill(target, r.topic)
        SCENARIOS[scenario](r)
    except Exception as exc:  # recorded: the comparison shows it as a difference
        r.trace.error = f"{type(exc).__name__}: {exc}"
    finally:
        r.close()
    return r.finish()
