"""The ZooKeeper-era design as an `eras.api.Design`: an ensemble, brokers' znodes, consumers.

`ZookeeperDesign.build(scenario)` (or the package's `build`) makes the ensemble, writes what
brokers and admin tools would have written (`/brokers/ids/<id>`, `/brokers/topics/<topic>`,
persistent here: the brokers' own sessions are not part of the story) and starts the scenario's
consumers at time 0. Faults, as `eras.api.FAULT_KINDS` defines them:

* crash: the process dies; its session expires `zookeeper.session.timeout.ms` later;
* pause: every thread of the consumer stops; past the session timeout the session expires
  while the consumer still holds fetched chunks, which it processes when it wakes;
* join / leave: a consumer starts / `shutdown()`s (its session closes at once);
* cut: the consumer cannot reach ZooKeeper but still fetches from the brokers;
* coordinator: ZooKeeper is unreachable for duration_ms (required here);
* slow: the application takes duration_ms per chunk from now on (a rebalance does not wait
  for it: 0.8.2 never waits for the application);
* partitions: `/brokers/topics/<topic>` is rewritten with more partitions (as
  `kafka-topics.sh --alter` did): every consumer's data watch fires and each rebalances
  (`ZKTopicPartitionChangeListener`).

Checkers for what went wrong, read by tests and notebooks: `zombie_commits` (offset writes
accepted from a consumer that did not own the partition), `collisions` (NodeExists on an owner
znode), `failed_rebalances`, `ensemble.reads()` (the herd).
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any

from ...clock import Scheduler
from ...trace import Trace
from ..api import Commit, build_design, Fault, Partition, ProcessedLedger, Scenario
from .assign import range_share, roundrobin_share
from .config import ZookeeperConsumerConfig
from .connector import ZookeeperConsumerConnector, ids_dir, owner_path
from .ensemble import ZooKeeperEnsemble
from .states import ConsumerState

__all__ = ["ZookeeperDesign", "build", "BROKERS"]

BROKERS = 3          # /brokers/ids/0..2; every partition has one replica, round robin


class ZookeeperDesign:
    """Kafka 0.8.2's high-level consumers coordinating through ZooKeeper."""

    name = "zookeeper"
    title = "ZooKeeper consumer (0.8.2)"

    def __init__(self, topics: Mapping[str, int], *, seed: int = 0,
                 produce_rate_per_s: int = 100,
                 settings: Mapping[str, Any] | None = None) -> None:
        if not topics or any(not isinstance(n, int) or isinstance(n, bool) or n < 1
                             for n in topics.values()):
            raise ValueError(f"topics maps each topic to a partition count >= 1, got "
                             f"{dict(topics)!r}")
        self.config = ZookeeperConsumerConfig.from_properties(settings or {})
        self.topics = dict(sorted(topics.items()))
        self.produce_rate_per_s = produce_rate_per_s
        self.scheduler = Scheduler(threadsafe=False)
        self.trace = Trace(self.scheduler, python_logging=False)
        self.ledger = ProcessedLedger()
        self.ensemble = ZooKeeperEnsemble(self.scheduler, self.trace,
                                          latency_ms=self.config.zookeeper_latency_ms)
        self.rng = random.Random(seed)
        self.consumers: dict[str, ZookeeperConsumerConnector] = {}
        self.groups: dict[str, list[str]] = {}
        self.zombie_commits: list[tuple[int, str, Partition, int]] = []
        self.commit_log: dict[str, list[Commit]] = {}   # group -> its commits
        self.ensemble.on_write = self._written
        for b in range(BROKERS):
            self.ensemble.ensure_path(f"/brokers/ids/{b}", json.dumps(
                {"jmx_port": -1, "timestamp": "1740992400000", "host": f"broker-{b}",
                 "version": 1, "port": 9092}, separators=(",", ":")))
        for t, n in self.topics.items():
            self.ensemble.ensure_path(f"/brokers/topics/{t}", json.dumps(
                {"version": 1, "partitions": {str(p): [p % BROKERS] for p in range(n)}},
                separators=(",", ":")))

    @classmethod
    def build(cls, scenario: Scenario) -> ZookeeperDesign:
        return build_design(cls, scenario)

    # -- the Design protocol ---------------------------------------------------------------------

    def add_consumer(self, name: str, group_id: str, topics: tuple[str, ...]) -> None:
        old = self.consumers.get(name)
        if old is not None and not old.gone:
            raise ValueError(f"consumer {name!r} is already running (state {old.state}); "
                             f"give the new one another name")
        unknown = sorted(set(topics) - set(self.topics))
        if unknown or not topics:
            raise ValueError(f"consumer {name!r} subscribes to {list(topics)!r}; the topics "
                             f"are {', '.join(self.topics)}")
        if old is not None:
            self.groups[old.group].remove(name)
        c = ZookeeperConsumerConnector(name, group_id, topics, self.config, self.ensemble,
                                       self.trace, self.ledger, self.produce_rate_per_s,
                                       random.Random(self.rng.getrandbits(64)))
        self.consumers[name] = c
        self.groups.setdefault(group_id, []).append(name)
        groups = getattr(self.ledger, "groups", None)   # a ledger that tells groups apart
        if groups is not None:
            groups[name] = group_id
        c.start()

    def apply(self, fault: Fault) -> None:
        kind, who = fault.kind, fault.target
        if kind == "coordinator":
            if fault.duration_ms is None:
                raise ValueError("a coordinator fault in the ZooKeeper design is a ZooKeeper "
                                 "outage and needs duration_ms")
            self.ensemble.outage(fault.duration_ms)
            return
        if kind == "partitions":
            self.add_partitions(who, fault.count)  # type: ignore[arg-type]
            return
        if kind == "join":
            group = next(iter(self.groups), "group-1")
            old = self.consumers.get(who)       # type: ignore[arg-type]
            if old is not None:
                group = old.group
            self.add_consumer(who, group, tuple(self.topics))  # type: ignore[arg-type]
            return
        c = self.consumers.get(who)             # type: ignore[arg-type]
        if c is None:
            raise ValueError(f"fault {kind} names consumer {who!r}; the consumers are "
                             f"{', '.join(self.consumers) or 'none'}")
        if c.gone:
            self.trace.record("zk_fault_ignored", who or "", "INFO",
                              {"fault": kind, "state": c.state.value, "dead": c.dead})
            return
        if kind == "crash":
            c.crash()
        elif kind == "pause":
            c.pause(fault.duration_ms)          # type: ignore[arg-type]
        elif kind == "leave":
            c.shutdown()
        elif kind == "cut":
            self.ensemble.cut(who, fault.duration_ms)  # type: ignore[arg-type]
        elif kind == "slow":
            c.processing_ms = fault.duration_ms  # type: ignore[assignment]
        else:  # pragma: no cover - Fault refuses other kinds
            raise ValueError(kind)

    def add_partitions(self, topic: str, count: int) -> None:
        """Grow `topic` to `count` partitions: its `/brokers/topics/<topic>` znode changes."""
        if topic not in self.topics or count <= self.topics[topic]:
            raise ValueError(f"topic {topic!r} has {self.topics.get(topic)} partitions; give "
                             f"a known topic and a larger count, got {count!r}")
        self.topics[topic] = count
        self.ensemble.set_by_admin(f"/brokers/topics/{topic}", json.dumps(
            {"version": 1, "partitions": {str(p): [p % BROKERS] for p in range(count)}},
            separators=(",", ":")))

    def fetching(self, group_id: str) -> dict[Partition, frozenset[str]]:
        out: dict[Partition, set[str]] = {tp: set() for tp in self._partitions(group_id)}
        for name in self.groups.get(group_id, ()):
            for tp in self.consumers[name].fetching():
                out.setdefault(tp, set()).add(name)
        return {tp: frozenset(who) for tp, who in sorted(out.items())}

    def settled(self, group_id: str) -> bool:
        """Every live member is CONSUMING with no rebalance running or pending (no watch
        event queued or kept for it), is registered on a live session, and owns exactly its
        share of the assignment computed from what ZooKeeper holds now; together they own
        every partition once. A ZooKeeper outage alone does not unsettle a group (nothing can
        change meanwhile). A member that exhausted its retries (REBALANCE_FAILED) is not
        settled: its share has no owner."""
        live = [self.consumers[n] for n in self.groups.get(group_id, ())
                if not self.consumers[n].gone]
        if not live:
            return False
        ens = self.ensemble
        registered = sorted(ens.nodes[ids_dir(group_id)].children) \
            if ids_dir(group_id) in ens.nodes else []
        if sorted(c.consumer_id for c in live) != registered:
            return False
        expected = self._expected(group_id, registered)
        seen: dict[Partition, str] = {}
        for c in live:
            if (c.state is not ConsumerState.CONSUMING or not c.idle
                    or not ens.session_alive(c.zk.sid) or ens.sessions[c.zk.sid].undelivered):
                return False
            mine = {tp: info.thread for tp, info in c.topic_registry.items()}
            for tp, tid in mine.items():
                if expected.get(tp) != tid or tp in seen:
                    return False
                node = ens.nodes.get(owner_path(group_id, tp))
                if node is None or node.data != tid:
                    return False
                seen[tp] = tid
        return set(seen) == set(self._partitions(group_id))

    def coordination_messages(self) -> int:
        return self.ensemble.messages

    def rebalance_rounds(self, group_id: str) -> int:
        return sum(self.consumers[n].rounds for n in self.groups.get(group_id, ()))

    def log_lines(self, level: str = "INFO") -> list[str]:
        return self.trace.lines(level=level)

    # -- what eras.checks reads (eras.api.CheckedDesign) ---------------------------------------

    def committed(self, group_id: str) -> dict[Partition, int]:
        """The offsets znodes `/consumers/<group>/offsets/<topic>/<partition>`: where a new
        owner starts (`ZookeeperConsumerConnector.fetchOffsets`)."""
        out: dict[Partition, int] = {}
        nodes = self.ensemble.nodes
        for tp in self._partitions(group_id):
            node = nodes.get(f"/consumers/{group_id}/offsets/{tp[0]}/{tp[1]}")
            if node is not None and node.data:
                out[tp] = int(node.data)
        return out

    def commits(self, group_id: str) -> list[Commit]:
        """Every offset write ZooKeeper applied for the group: all accepted (a plain
        `updatePersistentPath`, no fencing); `owner` says whether the owner znode held one of
        the writer's threads as the write was applied."""
        return self.commit_log.get(group_id, [])

    def convergence_bound_ms(self) -> int:
        """A session timeout to notice a change (plus up to 1 s for the client to reconnect),
        then two `syncedRebalance` calls with every retry: `rebalance.max.retries` x
        (`rebalance.backoff.ms` + 1 s for an attempt's ZooKeeper reads and writes)."""
        cfg = self.config
        return cfg.session_timeout_ms + 1000 \
            + 2 * cfg.rebalance_max_retries * (cfg.rebalance_backoff_ms + 1000)

    # -- checkers --------------------------------------------------------------------------------

    @property
    def collisions(self) -> int:
        """NodeExists on an owner znode (`waiting for the partition ownership to be deleted`)."""
        return sum(1 for e in self.trace.events if e.template_id == "ZC-WAIT-OWNER")

    @property
    def failed_rebalances(self) -> int:
        """syncedRebalance calls that ended in ConsumerRebalanceFailedException."""
        return sum(1 for e in self.trace.events if e.template_id == "ZC-REBAL-FAILED")

    def delay_watches(self, consumer: str, delay_ms: int) -> None:
        """Deliver `consumer`'s watch notifications `delay_ms` late from now on: a split view
        of the group (not one of the shared fault kinds; the ZooKeeper design's own)."""
        if consumer not in self.consumers:
            raise ValueError(f"no consumer {consumer!r}; the consumers are "
                             f"{', '.join(self.consumers)}")
        self.ensemble.delay_watches(consumer, delay_ms)

    def states(self) -> dict[str, str]:
        """Each consumer's phase (`DEAD` for a killed one, which keeps no phase)."""
        return {n: "DEAD" if c.dead else c.state.value for n, c in self.consumers.items()}

    def run_for(self, ms: int) -> None:
        self.scheduler.run_for(ms)

    def _partitions(self, group_id: str) -> list[Partition]:
        topics = sorted({t for n in self.groups.get(group_id, ())
                         for t in self.consumers[n].topics}) or list(self.topics)
        return [(t, p) for t in topics for p in range(self.topics[t])]

    def _expected(self, group_id: str, registered: list[str]) -> dict[Partition, str]:
        """The assignment every member should compute from ZooKeeper's current contents."""
        subs = {cid: json.loads(self.ensemble.nodes[f"{ids_dir(group_id)}/{cid}"].data)
                ["subscription"] for cid in registered}
        out: dict[Partition, str] = {}
        if self.config.partition_assignment_strategy == "roundrobin":
            threads = [f"{m}-{i}" for m, s in subs.items() for i in range(max(s.values()))]
            parts = {t: list(range(self.topics[t])) for t in self.topics
                     if any(t in s for s in subs.values())}
            for tid, tps in roundrobin_share(parts, threads, threads).items():
                out.update({tp: tid for tp in tps})
            return out
        for t in self.topics:
            threads = [f"{m}-{i}" for m, s in subs.items() for i in range(s.get(t, 0))]
            if threads:
                for tid, ps in range_share(list(range(self.topics[t])), threads,
                                           threads).items():
                    out.update({(t, p): tid for p in ps})
        return out

    def _written(self, sid: int, op: Any) -> None:
        """At the server, as an offset write is applied: does the writer own the partition?"""
        parts = op.path.split("/")      # /consumers/<g>/offsets/<t>/<p>
        if len(parts) != 6 or parts[3] != "offsets":
            return
        c = self.ensemble.sessions[sid].client.host
        tp = (parts[4], int(parts[5]))
        node = self.ensemble.nodes.get(owner_path(parts[2], tp))
        before = self.ensemble.nodes.get(op.path)
        owner = node is not None and node.data in c.threads
        self.commit_log.setdefault(parts[2], []).append(Commit(
            self.scheduler.now, parts[2], c.name, tp, int(op.data),
            int(before.data) if before is not None and before.data else None, True, owner))
        if not owner:
            self.zombie_commits.append((self.scheduler.now, c.name, tp, int(op.data)))
            self.trace.record("zk_zombie_commit", c.name, "INFO",
                              {"topic": tp[0], "partition": tp[1], "offset": int(op.data)})


def build(scenario: Scenario) -> ZookeeperDesign:
    """The ZooKeeper design for `scenario`, its consumers started at time 0."""
    return ZookeeperDesign.build(scenario)
