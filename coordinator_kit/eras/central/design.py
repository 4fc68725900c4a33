"""`CentralDesign`: the centralised consumer coordinator drafted for Kafka 0.9, behind
`eras.api.Design`, so one scenario runs under it and under the other designs.

Wiring: a `ZooKeeper` (election node, group directories, ownership, offsets, topic partition
counts), `brokers` brokers that all run the election (the winner becomes the `Coordinator` for
every group, the losers watch the node), a `Network` that delivers every message one
`network.latency.ms` later, and the consumers. Faults (`eras.api.FAULT_KINDS`) map onto this
world as docs/eras-central.md describes; `coordinator` kills the coordinator's broker (back
after `duration_ms` when one is given, else for good).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from typing import Any

from ...clock import Scheduler
from ...trace import Trace
from ..api import FAULT_KINDS, Commit, build_design, Fault, Partition, ProcessedLedger, Scenario
from .consumer import CentralConsumer
from .coordinator import Coordinator, Group
from .network import ELECTION_PATH, Broker, Network
from .settings import CentralConfig
from .states import ConsumerState, GroupPhase
from .zk import NodeExists, Session, ZooKeeper

__all__ = ["CentralDesign", "build"]


class CentralDesign:
    """One run of the draft design on its own virtual clock."""

    name = "central"
    title = "Centralised coordinator (0.9 draft, never shipped)"

    def __init__(self, topics: Mapping[str, int], *, seed: int = 0,
                 produce_rate_per_s: int = 100,
                 settings: Mapping[str, Any] | CentralConfig | None = None) -> None:
        if not topics:
            raise ValueError("a central design needs at least one topic, e.g. {'t': 6}")
        for t, n in topics.items():
            if not isinstance(n, int) or isinstance(n, bool) or n < 1:
                raise ValueError(f"topic {t!r} needs a partition count >= 1, got {n!r}")
        self.config = settings if isinstance(settings, CentralConfig) \
            else CentralConfig.from_properties(settings)
        self.scheduler = Scheduler(threadsafe=False)
        self.trace = Trace(self.scheduler)
        self.ledger = ProcessedLedger()
        self.rng = random.Random(seed)
        self.produce_rate_per_s = produce_rate_per_s
        self.topics: dict[str, int] = dict(topics)
        self.zk = ZooKeeper(self.scheduler, self.config.network_latency_ms)
        for t, n in sorted(self.topics.items()):
            self.zk.set(f"/brokers/topics/{t}", n)
        self.brokers = {i: Broker(i) for i in range(self.config.brokers)}
        self.network = Network(self.scheduler, self.config.network_latency_ms, self.brokers,
                               self.zk)
        self.consumers: dict[str, CentralConsumer] = {}
        self.members_of: dict[str, list[str]] = {}
        self._rounds: Counter[str] = Counter()
        self.processed_by: Counter[str] = Counter()     # records handed over, per consumer name
        self.commit_log: dict[str, list[Commit]] = {}   # group -> its commits
        for b in self.brokers.values():
            self._start_broker(b)

    # -- brokers and the election --------------------------------------------------------------

    def _start_broker(self, b: Broker) -> None:
        b.alive = True
        b.session = self.zk.open_session(f"broker-{b.id}",
                                         self.config.coordinator_zk_session_timeout_ms)
        self._elect(b, b.session)

    def _elect(self, b: Broker, session: Session) -> None:
        """Race for the ephemeral election node; the loser watches it."""
        if not b.alive or b.session is not session:
            return
        try:
            self.zk.create(ELECTION_PATH, b.id, session)
        except NodeExists:
            if self.zk.get(ELECTION_PATH, watch=lambda p, e: self._elect(b, session)) is None:
                self._elect(b, session)
            return
        b.coordinator = Coordinator(self, b.id)
        b.coordinator.start()

    @property
    def coordinator(self) -> Coordinator | None:
        """The active coordinator, if a live broker holds the election."""
        for b in self.brokers.values():
            if b.alive and b.coordinator is not None:
                return b.coordinator
        return None

    def kill_coordinator(self, restart_after_ms: int | None = None) -> int | None:
        """The coordinator's broker dies (its ZooKeeper session expires later)."""
        coordinator = self.coordinator
        if coordinator is None:
            self.trace.record("central_no_coordinator_to_kill", "design", "INFO", {})
            return None
        b = self.brokers[coordinator.broker_id]
        coordinator.stop()
        b.coordinator = None
        b.alive = False
        self.network.broker_died(b.id)
        if b.session is not None:
            self.zk.client_died(b.session)
        self.trace.record("central_broker_died", "design", "INFO", {"broker": b.id})
        if restart_after_ms is not None:
            self.scheduler.call_later(restart_after_ms, self._start_broker, b,
                                      name=f"central-broker-restart {b.id}")
        return b.id

    def add_partitions(self, topic: str, count: int) -> None:
        """Grow a topic (the coordinator's ZooKeeper watch then rebalances its groups, C6)."""
        if topic not in self.topics or count <= self.topics[topic]:
            raise ValueError(f"topic {topic!r} has {self.topics.get(topic)} partitions; "
                             f"give a known topic and a larger count")
        self.topics[topic] = count
        self.zk.set(f"/brokers/topics/{topic}", count)

    def lose_reply(self, consumer: str, kind: str = "StartFetcherResponse") -> None:
        """The next `kind` message `consumer` sends the coordinator is lost on the way, the
        socket staying up (not one of the shared fault kinds: a lost reply means something
        else in each design)."""
        kinds = ("PingResponse", "StopFetcherResponse", "StartFetcherResponse")
        if consumer not in self.consumers or kind not in kinds:
            raise ValueError(f"lose_reply takes a consumer of this design "
                             f"({', '.join(sorted(self.consumers))}) and one of "
                             f"{', '.join(kinds)}; got {consumer!r}, {kind!r}")
        self.network.lose_next.setdefault(consumer, set()).add(kind)

    def count_round(self, group_id: str) -> None:
        self._rounds[group_id] += 1

    # -- eras.api.Design -----------------------------------------------------------------------

    def add_consumer(self, name: str, group_id: str, topics: tuple[str, ...]) -> None:
        old = self.consumers.get(name)
        if old is not None and not old.closed:
            raise ValueError(f"consumer {name!r} is already running; stop it first or pick "
                             f"another name")
        unknown = [t for t in topics if t not in self.topics]
        if unknown or not topics:
            raise ValueError(f"consumer {name!r} subscribes to unknown topics {unknown} "
                             f"(known: {sorted(self.topics)})")
        c = self.consumers[name] = CentralConsumer(self, name, group_id, tuple(topics))
        if name not in self.members_of.setdefault(group_id, []):
            self.members_of[group_id].append(name)
        c.start()

    def apply(self, fault: Fault) -> None:
        kind = fault.kind
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}")
        self.trace.record("fault", "design", "INFO",
                          {"kind": kind, "target": fault.target, "duration_ms": fault.duration_ms})
        if kind == "coordinator":
            self.kill_coordinator(fault.duration_ms)
            return
        if kind == "partitions":
            self.add_partitions(fault.target, fault.count)  # type: ignore[arg-type]
            return
        name = fault.target
        if kind == "join":
            old = self.consumers.get(name)  # type: ignore[arg-type]
            if old is not None:
                self.add_consumer(old.name, old.group, old.topics)
            else:
                group = next(iter(self.members_of), "group-1")
                self.add_consumer(name, group, tuple(sorted(self.topics)))  # type: ignore
            return
        c = self.consumers.get(name)  # type: ignore[arg-type]
        if c is None:
            raise ValueError(f"fault {kind} names consumer {name!r}, which this design does "
                             f"not run; known: {sorted(self.consumers)}")
        if c.closed:
            return                       # a dead process feels nothing
        if kind == "crash":
            c.shutdown("crash")
        elif kind == "leave":
            c.shutdown("shutdown")
        elif kind == "pause":
            c.pause(fault.duration_ms)  # type: ignore[arg-type]
        elif kind == "cut":
            self.network.cut_until[c.name] = self.scheduler.now + fault.duration_ms  # type: ignore
        elif kind == "slow":
            c.slow_ms = fault.duration_ms  # type: ignore[assignment]

    def partitions(self, group_id: str) -> list[Partition]:
        topics = sorted({t for n in self.members_of.get(group_id, ())
                         for t in self.consumers[n].topics})
        return [(t, p) for t in topics for p in range(self.topics[t])]

    def fetching(self, group_id: str) -> dict[Partition, frozenset[str]]:
        holders: dict[Partition, set[str]] = {tp: set() for tp in self.partitions(group_id)}
        for n in self.members_of.get(group_id, ()):
            for tp in self.consumers[n].holds():
                holders.setdefault(tp, set()).add(n)
        return {tp: frozenset(s) for tp, s in holders.items()}

    def group(self, group_id: str) -> Group | None:
        """The active coordinator's state of the group (None without a coordinator)."""
        coordinator = self.coordinator
        return None if coordinator is None else coordinator.groups.get(group_id)

    def settled(self, group_id: str) -> bool:
        live = [self.consumers[n] for n in self.members_of.get(group_id, ())
                if not self.consumers[n].closed]
        coordinator = self.coordinator
        group = self.group(group_id)
        at_rest = group is not None and group.phase is GroupPhase.STABLE \
            and not group.queued and not group.pending \
            and group_id not in coordinator.handling  # type: ignore[union-attr]
        if not live:
            return group is None or at_rest
        if not at_rest:
            return False
        assert group is not None
        if set(group.members) != {c.name for c in live}:
            return False
        covered: list[Partition] = []
        for c in live:
            m = group.members[c.name]
            target = set(group.target.get(c.name, ()))
            if c.state not in (ConsumerState.IDLE, ConsumerState.FETCHING) or c.conn is not m.conn \
                    or set(c.assigned) != target or m.owned != target \
                    or c.fetchers_running != bool(target):
                return False
            covered.extend(target)
        return sorted(covered) == self.partitions(group_id)

    def coordination_messages(self) -> int:
        return self.network.messages

    def rebalance_rounds(self, group_id: str) -> int:
        return self._rounds[group_id]

    def log_lines(self, level: str = "INFO") -> list[str]:
        return self.trace.lines(level=level)

    # -- what eras.checks reads (eras.api.CheckedDesign) ---------------------------------------

    def committed(self, group_id: str) -> dict[Partition, int]:
        """Where a new owner would start now, the coordinator's rule C11 without the offsets of
        a running rebalance: the live coordinator's offsets cache (ping and stop replies, its
        auto-commit), else what was flushed to ZooKeeper. With the coordinator dead, only the
        flushed offsets are left: whatever it collected since its last flush is lost."""
        out: dict[Partition, int] = {}
        for tp in self.partitions(group_id):
            offset = self.committed_one(group_id, tp)
            if offset is not None:
                out[tp] = offset
        return out

    def commits(self, group_id: str) -> list[Commit]:
        """Offsets the coordinator received in ping and stop-fetcher replies: accepted when it
        had started the sender on the partition (C5; C11 takes any partition when
        `tag_rebalance_messages` is off, the draft's ambiguity)."""
        return self.commit_log.get(group_id, [])

    def offset_reported(self, group_id: str, consumer: str, tp: Partition, offset: int,
                        accepted: bool, owner: bool) -> None:
        """The coordinator got `offset` for `tp` from `consumer` (called by the coordinator)."""
        before = self.committed_one(group_id, tp)
        self.commit_log.setdefault(group_id, []).append(Commit(
            self.scheduler.now, group_id, consumer, tp, offset, before, accepted, owner,
            "" if accepted else "not started on it"))

    def committed_one(self, group_id: str, tp: Partition) -> int | None:
        coordinator = self.coordinator
        if coordinator is not None and (group_id, tp) in coordinator.offsets_cache:
            return coordinator.offsets_cache[(group_id, tp)]
        stored = self.zk.nodes.get(f"/consumers/{group_id}/offsets/{tp[0]}/{tp[1]}")
        return None if stored is None else int(stored)  # type: ignore[call-overload]

    def convergence_bound_ms(self) -> int:
        """Failure detection (`ping.max.missed` + 1 ping intervals), a coordinator failover
        (its ZooKeeper session, then a consumer's `silence` and `rediscovery.backoff.ms`), then
        two full rebalances with every retry, each attempt two reply timeouts and a backoff
        (a failed consumer that comes back asks for the second one)."""
        cfg = self.config
        session = cfg.session_timeout_ms
        reply = cfg.rebalance_reply_timeout_ms or session
        detect = cfg.ping_interval_for(session) * (cfg.ping_max_missed + 1)
        failover = cfg.coordinator_zk_session_timeout_ms + session + cfg.rediscovery_backoff_ms
        return detect + failover + 2 * cfg.rebalance_max_retries * (2 * reply
                                                                    + cfg.rebalance_backoff_ms)

    # -- runs ----------------------------------------------------------------------------------

    def run_until(self, when_ms: int) -> None:
        """Run the clock to `when_ms` (a convenience for tests and notebooks)."""
        self.scheduler.run_until(when_ms)

    @classmethod
    def build(cls, scenario: Scenario) -> CentralDesign:
        return build_design(cls, scenario, tuple(sorted(scenario.topics)))


def build(scenario: Scenario) -> CentralDesign:
    """`CentralDesign.build`, as a function (what eras.compare looks for)."""
    return CentralDesign.build(scenario)
