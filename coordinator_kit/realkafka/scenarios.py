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
           "run_scenario", "unsupported", "SESSION_MS", "HEARTBEAT_MS", "PARTITIONS",
           "REBALANCE_DELAY_MS", "MAX_POLL_MS", "STATIC_SESSION_MS", "CONSUMER_GROUP_CONFIG"]

SESSION_MS = 6000  # group.min.session.timeout.ms, on both: the quickest expiry a broker allows
HEARTBEAT_MS = 500
PARTITIONS = 6
RECORDS_PER_PARTITION = 10
# Kafka's default is 3000 ms; 500 keeps the scenarios short and avoids kafka-python's
# empty-first-assignment loop seen at 0 (docs/live-mode.md, "Seen with the clients")
REBALANCE_DELAY_MS = 500
# max-poll: the poll interval a stalled consumer exceeds (longer than the session, so the
# session cannot be what removes it) and how long it stays out of poll()
MAX_POLL_MS = 8000
STALL_MS = 12000
# static-restart: a longer session, so that a JVM's restart fits inside it on a busy machine
STATIC_SESSION_MS = 10000
JAVA_WAIT_FACTOR = 2.5  # step timeouts for the Java consumer (a JVM per member)
# KIP-848 groups (group.protocol=consumer): the coordinator owns the session and the heartbeat
# interval; Kafka's defaults (45 s, 5 s, and minimums as large) would make a crash take 45 s.
# Classic groups do not read these keys.
CONSUMER_GROUP_CONFIG = {
    "group.consumer.session.timeout.ms": SESSION_MS,
    "group.consumer.min.session.timeout.ms": SESSION_MS,
    "group.consumer.heartbeat.interval.ms": HEARTBEAT_MS,
    "group.consumer.min.heartbeat.interval.ms": HEARTBEAT_MS,
}


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
    cfg = {"group.initial.rebalance.delay.ms": REBALANCE_DELAY_MS, **CONSUMER_GROUP_CONFIG,
           **config}
    with RealKafka(config=cfg, lifetime_s=lifetime_s) as kafka:
        yield Target("kafka", kafka.bootstrap,
                     lambda: kafka.server_log.read_text(errors="replace"), kafka)


@contextlib.contextmanager
def kit_target(*, brokers: int = 1, **config: Any) -> Iterator[Target]:
    from ..live.server import LiveServer
    log = io.StringIO()
    cfg = {"group.initial.rebalance.delay.ms": REBALANCE_DELAY_MS, **CONSUMER_GROUP_CONFIG,
           **config}
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
    # what a scenario checks beyond the above (e.g. "a rejoined during b's restart": False)
    facts: dict[str, Any] = field(default_factory=dict)
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


def member_shape(member_id: str, client_id: str, instance_id: str | None = None) -> str:
    """A member id by its shape: Kafka's `client.id + "-" + UUID` becomes
    `<client.id>-<uuid>`, a static member's `group.instance.id + "-" + UUID`
    (ClassicGroup.generateMemberId) `<group.instance.id>-<uuid>`."""
    if instance_id and re.fullmatch(re.escape(instance_id) + r"-[0-9a-f]{8}-[0-9a-f]{4}-"
                                    r"[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", member_id):
        return "<group.instance.id>-<uuid>"
    if re.fullmatch(re.escape(client_id) + r"-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-"
                    r"[0-9a-f]{12}", member_id):
        return "<client.id>-<uuid>"
    if re.fullmatch(r"[A-Za-z0-9_+/-]{22}", member_id):
        # KIP-848: the client makes its own id, a Uuid in Kafka's printed form (base64)
        return "<Uuid.toString> (client-made)"
    uuid_re = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    return "other:" + re.sub(uuid_re, "<uuid>", member_id).replace(client_id, "<client.id>", 1)


# KIP-848 (group.protocol=consumer) has member epochs, not generations: the Java consumer's
# ConsumerMembershipManager logs each state move with the epoch, librdkafka each heartbeat's
_JAVA_EPOCH = re.compile(r"Member (\S+) with epoch ([1-9]\d*) transitioned from \w+ to \w+")
_RD_EPOCH = re.compile(r'ConsumerGroupHeartbeat response received for member id "([^"]*)" '
                       r"with epoch ([1-9]\d*)")


def _joined(c: ConsumerProcess) -> list[tuple[int, str]]:
    """(generation, member id) of each group the consumer joined, in order; for a KIP-848
    member (member epoch, member id) of each epoch above 0 it had (Java: logged with a state
    move; librdkafka: a heartbeat response carried)."""
    if c.log_path is None or not c.log_path.exists():
        return []
    text = c.log_path.read_text(errors="replace")
    if c.client == "kafka-python":
        found = [(int(m.group(2)), m.group(3)) for m in _KP_JOINED.finditer(text)]
    elif c.client == "java":
        found = [(int(m.group(1)), m.group(2)) for m in _JAVA_JOINED.finditer(text)] or \
            [(int(m.group(2)), m.group(1)) for m in _JAVA_EPOCH.finditer(text)]
    else:
        found = [(int(m.group(1)), m.group(2)) for m in _RD_JOINED.finditer(text)] or \
            [(int(m.group(2)), m.group(1)) for m in _RD_EPOCH.finditer(text)]
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
        self.group_protocol = "consumer" if scenario.startswith("kip848-") else "classic"
        self.target = target
        self.client = client
        self.name = f"{scenario}-{client}{tag}"
        self.topic = f"t-{self.name}"
        self.group = f"g-{self.name}"
        self.workdir = workdir
        self.consumers: dict[str, ConsumerProcess] = {}
        self.instance_ids: dict[str, str] = {}
        self.trace = Trace(scenario, client, target.name)

    def start(self, label: str, *, client_id: str | None = None,
              instance_id: str | None = None, session_ms: int = SESSION_MS,
              max_poll_ms: int | None = None, stall_ms: int = 0) -> ConsumerProcess:
        """Start consumer `label` (its client.id is `client_id`, the label unless given: a
        restarted static member keeps its client id)."""
        extra: tuple[str, ...] = ()
        if self.client == "confluent-kafka":
            extra = ("--debug", "cgrp", "--log-level", "DEBUG")
        log = self.workdir / f"{self.target.name}-{self.name}-{label}.log"
        options: dict[str, Any] = dict(
            group=self.group, topics=self.topic, seconds=120, session_timeout_ms=session_ms,
            heartbeat_interval_ms=HEARTBEAT_MS, log_path=log, instance_id=instance_id,
            max_poll_interval_ms=max_poll_ms, stall_ms=stall_ms,
            group_protocol=self.group_protocol)
        c: ConsumerProcess
        if self.client == "java":
            from .java_driver import JavaConsumerProcess
            c = JavaConsumerProcess(self.target.bootstrap, client_id or label, **options)
        else:
            c = ConsumerProcess(self.target.bootstrap, client_id or label, client=self.client,
                                extra_args=extra, **options)
        self.consumers[label] = c
        if instance_id:
            self.instance_ids[label] = instance_id
        return c

    def owns(self, label: str, n: int) -> Callable[[], bool]:
        return lambda: len(self.consumers[label].assignment) == n

    def joined(self, label: str) -> list[int]:
        """The generations consumer `label` joined so far (from its log)."""
        return [g for g, _ in _joined(self.consumers[label])]

    def step(self, label: str, condition: Callable[[], bool], timeout_s: float = 40,
             since: float | None = None, settle_s: float = 0.0) -> Step:
        started = time.monotonic() if since is None else since
        if self.client == "java":
            # a JVM's start-up on a busy 2-core machine has taken 25-30 s: waiting longer costs
            # nothing when the condition holds sooner
            timeout_s *= JAVA_WAIT_FACTOR
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
                 {c.client_id: c.assignment for _, c in sorted(self.consumers.items()) if c.alive},
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
            self.trace.member_ids[label] = sorted({
                member_shape(m, c.client_id, self.instance_ids.get(label)) for _, m in joined})
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


_POLL_EXPIRED = {  # each client's own line when its poll timer runs out and it leaves
    "java": "consumer poll timeout has expired",  # AbstractCoordinator.HeartbeatThread
    "kafka-python": "Consumer poll timeout has expired",
    "confluent-kafka": "max.poll.interval.ms",  # librdkafka: "Application maximum poll ..."
}


def _max_poll(r: _Run) -> None:
    """b stays out of poll() longer than max.poll.interval.ms while its heartbeat thread goes
    on: the client leaves the group itself (LeaveGroup; Java: AbstractCoordinator's
    HeartbeatThread, "consumer poll timeout has expired"), a takes all; back in poll(), b
    rejoins and the group splits again."""
    r.start("a", max_poll_ms=MAX_POLL_MS)
    r.step("a joins", r.owns("a", PARTITIONS))
    b = r.start("b", max_poll_ms=MAX_POLL_MS, stall_ms=STALL_MS)
    r.step("b joins", lambda: r.owns("a", 3)() and r.owns("b", 3)())
    b.stall()
    r.step("b stalls", lambda: bool(b.events_of("stalling")), timeout_s=10)
    t = time.monotonic()
    r.step("b out of poll() past max.poll.interval.ms; a takes all", r.owns("a", PARTITIONS),
           since=t)
    r.step("b back in poll(); rejoins", lambda: r.owns("a", 3)() and r.owns("b", 3)(),
           timeout_s=STALL_MS / 1000 + 40)
    text = b.log_path.read_text(errors="replace") if b.log_path else ""
    r.trace.facts["b's client logged its poll timeout"] = _POLL_EXPIRED[r.client] in text
    r.trace.facts["b heard its partitions revoked or lost"] = bool(b.events_of("revoked"))


def _static_restart(r: _Run) -> None:
    """Static members (group.instance.id): b restarts within the session and gets its
    partitions back with no rebalance (a is not asked to rejoin, the generation stays:
    GroupMetadataManager's static member replacement in a Stable group); then b stops for
    longer than the session, is removed (a takes all), and its restart is a rebalance."""
    static = dict(session_ms=STATIC_SESSION_MS)
    r.start("a", instance_id="static-a", **static)
    r.step("a joins", r.owns("a", PARTITIONS))
    r.start("b", instance_id="static-b", **static)
    r.step("b joins", lambda: r.owns("a", 3)() and r.owns("b", 3)())
    a_joins, b_gens = r.joined("a"), r.joined("b")
    r.consumers["b"].stop()  # a static member sends no LeaveGroup on close
    t = time.monotonic()
    b2 = r.start("b2", client_id="b", instance_id="static-b", **static)
    r.step("b restarts within the session", r.owns("b2", 3), since=t)
    time.sleep(1.5)  # a would rejoin now if the restart had started a rebalance
    r.trace.facts["a rejoined during b's restart"] = r.joined("a") != a_joins
    r.trace.facts["b's restart joined b's generation"] = (
        bool(b_gens) and r.joined("b2")[-1:] == b_gens[-1:])
    b2.stop()
    t = time.monotonic()
    r.step("b stopped past the session; a takes all", r.owns("a", PARTITIONS), since=t,
           timeout_s=STATIC_SESSION_MS / 1000 + 30)
    gens = r.joined("a")
    r.start("b3", client_id="b", instance_id="static-b", **static)
    r.step("b restarts after it was removed", lambda: r.owns("a", 3)() and r.owns("b3", 3)())
    r.trace.facts["a rejoined for b's late restart"] = r.joined("a") != gens


def _kip848_crash_expires(r: _Run) -> None:
    """As crash-expires, with group.protocol=consumer: the coordinator's session timer
    (group.consumer.session.timeout.ms) fences the killed member."""
    _crash_expires(r)


SCENARIOS: dict[str, Callable[[_Run], None]] = {
    "one-joins": _one_joins,
    "second-joins": _second_joins,
    "crash-expires": _crash_expires,
    "short-pause": _short_pause,
    "long-pause": _long_pause,
    "commit-resume": _commit_resume,
    "max-poll": _max_poll,
    "static-restart": _static_restart,
    # the same steps with group.protocol=consumer (KIP-848, ConsumerGroupHeartbeat)
    "kip848-one-joins": _one_joins,
    "kip848-second-joins": _second_joins,
    "kip848-crash-expires": _kip848_crash_expires,
}

# (scenario prefix, client) -> why that client cannot run it
_CANNOT = {
    ("kip848-", "kafka-python"): "kafka-python 3.0 speaks only the classic group protocol "
                                 "(no ConsumerGroupHeartbeat)",
}


def unsupported(scenario: str, client: str) -> str | None:
    """Why `client` cannot run `scenario`, or None when it can."""
    for (prefix, c), why in _CANNOT.items():
        if scenario.startswith(prefix) and client == c:
            return why
    return None


def run_scenario(target: Target, scenario: str, client: str = "kafka-python",
                 workdir: str | Path | None = None, tag: str = "") -> Trace:
    """Run one scenario with `client` consumers on `target`; its `Trace` (with `error` set
    when a step raised). Its topic and group are named after the scenario, the client and
    `tag`: a second run on the same target needs another tag."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
    why = unsupported(scenario, client)
    if why:
        raise ValueError(f"{client} cannot run {scenario}: {why}")
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
