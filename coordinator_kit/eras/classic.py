"""Today's group coordinator (the kit's `Cluster`, classic protocol) seen as an `eras.api.Design`.

Nothing here changes how the cluster behaves: the adapter only reads it. What it reads:

- who consumes a partition: a live consumer hands a partition's records to the application
  when it owns it and `Consumer._consume` would take from it (eager: only while STABLE and no
  rejoin is asked for; cooperative: what it still owns during a rebalance, until UNJOINED).
  A paused consumer counts: it holds its assignment and consumes on waking until the
  coordinator tells it otherwise, as a Java consumer does (`ConsumerCoordinator.poll`);
- processed records: `Consumer.on_records` feeds the ledger;
- messages: every request the consumers send to a coordinator (`Network.send`, and
  FindCoordinator), counted with its answer (two messages per answered request);
- rebalance rounds: the coordinator's `rebalance_started` events for the group
  (`ClassicGroup` entering PreparingRebalance);
- commits (for `eras.checks`): every OffsetCommit response the coordinator sends, read by a
  broker response listener: accepted when answered NONE, and owned when the member's SyncGroup
  assignment of that generation held the partition. Kafka fences by generation and member id,
  not by partition (`ClassicGroup.validateOffsetCommit`: ILLEGAL_GENERATION,
  UNKNOWN_MEMBER_ID), which is what keeps an expelled member's commits out; the expelled
  member itself may still hand records to the application until its next heartbeat tells it
  (`ConsumerCoordinator.poll`), so exclusive consumption is not guaranteed, only exclusive
  commits.

Faults map onto the cluster's own: crash, pause, leave, slow (`Cluster.slow_poll`), cut
(`Cluster.cut_off`, healed after `duration_ms`), join (`Cluster.add_consumer`), and
coordinator: every `__consumer_offsets` partition the group's coordinator leads moves to another
in-sync replica (`Cluster.move_coordinator`), as when its broker dies; the broker itself stays
up in the kit (its dropped connections are not modelled).

partitions: the topic grows in the cluster at once; the kit's consumers keep no metadata of
their own, so the adapter plays the consumers' periodic metadata refresh (`metadata.max.age.ms`,
300000 by default, refreshes at its multiples from time 0): at the first refresh after the
change the group's leader finds that its assignment snapshot no longer matches the metadata
and rejoins (`ConsumerCoordinator.rejoinNeededOrPending`: "cached metadata has changed").

Settings (`Scenario.settings["classic"]`) are Kafka's keys: consumer keys
(`session.timeout.ms`, `partition.assignment.strategy`, ...) go to every consumer, group
coordinator keys (`group.initial.rebalance.delay.ms`, ...) to the brokers, and
`metadata.max.age.ms` to the metadata refresh above.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..client.config import _KEYS as CONSUMER_KEYS
from ..client.consumer import Consumer
from ..client.member import MemberState
from ..cluster import Cluster
from ..errors import Errors
from ..group.config import _KEYS as GROUP_KEYS
from ..group.protocol import ConsumerProtocolAssignment
from ..group.service import BrokerResponse
from ..kafka_config import fields_from_properties
from ..trace import TraceEvent
from .api import Commit, build_design, Fault, Partition, ProcessedLedger, Scenario

__all__ = ["ClassicDesign", "build"]

_STABLE, _UNJOINED = MemberState.STABLE, MemberState.UNJOINED


def _split_settings(settings: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Kafka keys -> (ConsumerConfig fields, group coordinator properties); others refused."""
    if not isinstance(settings, Mapping):
        raise TypeError(f"the classic design's settings are a mapping of Kafka key to value, "
                        f"e.g. {{'session.timeout.ms': 6000}}, got {settings!r}")
    consumer, group = {}, {}
    for key, value in settings.items():
        if key in GROUP_KEYS:
            group[key] = value
        elif key in CONSUMER_KEYS and key not in ("group.id", "client.id"):
            consumer[key] = value
        else:
            known = sorted(set(CONSUMER_KEYS) - {"group.id", "client.id"} | set(GROUP_KEYS))
            raise ValueError(f"unknown setting {key!r} for the classic design; known: "
                             f"{', '.join(known)}")
    fields = fields_from_properties(consumer, CONSUMER_KEYS, "consumer")
    return fields, group


class ClassicDesign:
    """A `Cluster` with one or more groups of classic consumers, read as an `eras.api.Design`."""

    name = "classic"
    title = "Group coordinator (0.9+, classic)"

    def __init__(self, topics: Mapping[str, int], *, seed: int = 0, produce_rate_per_s: int = 100,
                 settings: Mapping[str, Any] | None = None, trace_level: str = "DEBUG") -> None:
        """`trace_level` is the cluster's (`Cluster(trace_level=...)`): INFO for big groups
        whose per-heartbeat DEBUG events nobody reads (benchmarks/consumer_groups.py)."""
        settings = dict(settings or {}) if isinstance(settings, Mapping) else settings
        self.metadata_max_age_ms = 300_000
        if isinstance(settings, dict) and "metadata.max.age.ms" in settings:
            age = settings.pop("metadata.max.age.ms")
            if isinstance(age, bool) or not isinstance(age, int) or age < 1:
                raise ValueError(f"metadata.max.age.ms is a whole number of milliseconds >= 1, "
                                 f"got {age!r}")
            self.metadata_max_age_ms = age
        consumer_fields, group_props = _split_settings(settings)
        self.cluster = Cluster(topics=dict(topics), seed=seed, produce_rate_per_s=produce_rate_per_s,
                               group_config=group_props or None,
                               consumer_defaults=consumer_fields, trace_level=trace_level)
        self.scheduler = self.cluster.scheduler
        self.trace = self.cluster.trace
        self.ledger = ProcessedLedger()
        self._groups: dict[str, list[str]] = {}
        self._topics: dict[str, tuple[str, ...]] = {}
        self._messages = 0
        self._rounds: dict[str, int] = {}
        self.trace.subscribe(self._on_event)
        network = self.cluster.network
        send, find = network.send, network.find_coordinator

        def counted_send(client: Consumer, broker: int | None, api: str, call: Any,
                         on_response: Any, **kwargs: Any) -> None:
            self._messages += 1

            def answered(response: Any, error: Any) -> None:
                if error is None:
                    self._messages += 1
                on_response(response, error)
            send(client, broker, api, call, answered, **kwargs)

        def counted_find(client: Consumer, group_id: str, on_result: Any) -> None:
            self._messages += 1

            def answered(broker: int | None, error: Any) -> None:
                if error is None:
                    self._messages += 1
                on_result(broker, error)
            find(client, group_id, answered)

        network.send = counted_send            # type: ignore[method-assign]
        network.find_coordinator = counted_find  # type: ignore[method-assign]
        self.commit_log: dict[str, list[Commit]] = {}   # group -> its commits
        # (group, generation, member id) -> partitions its SyncGroup response assigned
        self._assigned: dict[tuple[str, int, str], frozenset[Partition]] = {}
        self._last_commit: dict[tuple[str, Partition], int] = {}
        for broker in self.cluster.brokers.values():
            broker.service.add_response_listener(self._on_response)

    def _on_event(self, event: TraceEvent) -> None:
        if event.kind == "rebalance_started":
            group = event.fields.get("group")
            self._rounds[group] = self._rounds.get(group, 0) + 1

    def _on_response(self, sent: BrokerResponse) -> None:
        """Read SyncGroup and OffsetCommit responses as the coordinator sends them."""
        if sent.api == "SyncGroup" and sent.response.error is Errors.NONE:
            r = sent.request
            parts = ConsumerProtocolAssignment.decode(sent.response.assignment)
            self._assigned[(sent.group_id, r.generation_id, r.member_id)] = frozenset(
                (tp.topic, tp.partition) for tp in parts.assigned_partitions)
        elif sent.api == "OffsetCommit":
            r = sent.request
            gen = r.generation_id_or_member_epoch
            mine = self._assigned.get((sent.group_id, gen, r.member_id), frozenset())
            who = next((c.name for c in self.cluster.consumers.values()
                        if c.member_id == r.member_id), r.member_id)
            for tp in sorted(r.offsets):
                error = sent.response.errors.get(tp, sent.response.error)
                key = (sent.group_id, tp)
                accepted = error is Errors.NONE
                self.commit_log.setdefault(sent.group_id, []).append(Commit(
                    sent.sent_ms, sent.group_id, who, tp, r.offsets[tp].offset,
                    self._last_commit.get(key), accepted,
                    tp in mine and sent.generation == gen, "" if accepted else error.name))
                if accepted:
                    self._last_commit[key] = r.offsets[tp].offset

    # -- what eras.checks reads (eras.api.CheckedDesign) ---------------------------------------

    def committed(self, group_id: str) -> dict[Partition, int]:
        """The group's offsets as its coordinator holds them (latest, what an OffsetFetch with
        `require_stable` returns: `Cluster.committed_offsets`)."""
        return dict(self.cluster.committed_offsets(group_id))

    def commits(self, group_id: str) -> list[Commit]:
        """Every OffsetCommit the coordinator answered, accepted (NONE) or refused."""
        return self.commit_log.get(group_id, [])

    def convergence_bound_ms(self) -> int:
        """A session timeout to notice a dead member (plus a heartbeat interval), then two
        rebalances, each bounded by the JoinGroup rebalance timeout (`max.poll.interval.ms`,
        KIP-62) and the group's initial delay (the member that comes back asks for the
        second one)."""
        cfg = next(iter(self.cluster.consumers.values())).config \
            if self.cluster.consumers else None
        session = cfg.session_timeout_ms if cfg else 45_000
        heartbeat = cfg.heartbeat_interval_ms if cfg else 3_000
        poll = cfg.max_poll_interval_ms if cfg else 300_000
        delay = next(iter(self.cluster.brokers.values())).service.config \
            .group_initial_rebalance_delay_ms
        return session + heartbeat + 2 * (poll + delay)

    # -- the Design contract -------------------------------------------------------------------

    def add_consumer(self, name: str, group_id: str = "group-1",
                     topics: tuple[str, ...] = ("t",)) -> None:
        consumer = self.cluster.add_consumer(name, group_id, tuple(topics))
        ledger = self.ledger

        def on_records(tp: Any, start: int, end: int) -> None:
            ledger.processed(name, (tp.topic, tp.partition), start, end)
        consumer.on_records = on_records
        self._groups.setdefault(group_id, []).append(name)
        self._topics[group_id] = tuple(sorted(set(self._topics.get(group_id, ())) | set(topics)))

    def apply(self, fault: Fault) -> None:
        c, who = self.cluster, fault.target
        target = c.consumers.get(who) if fault.kind not in ("join", "partitions",  # type: ignore
                                                             "coordinator") else None
        if target is not None and (target.crashed or target.closed):
            # a dead process feels nothing (as in the other designs); the cluster would refuse
            self.trace.record("classic_fault_ignored", who or "", "INFO", {"fault": fault.kind})
            return
        if fault.kind == "crash":
            c.crash(who)
        elif fault.kind == "pause":
            c.pause(who, fault.duration_ms)
        elif fault.kind == "leave":
            c.leave(who)
        elif fault.kind == "slow":
            c.slow_poll(who, fault.duration_ms)
        elif fault.kind == "join":
            group = next((g for g, names in self._groups.items()), "group-1")
            self.add_consumer(who, group, self._topics.get(group, tuple(c.topics)))
        elif fault.kind == "cut":
            c.cut_off(who, True)
            self.scheduler.call_later(fault.duration_ms, self._heal, who, name=f"heal {who}")
        elif fault.kind == "partitions":
            self.add_partitions(who, fault.count)  # type: ignore[arg-type]
        elif fault.kind == "coordinator":
            group = next(iter(self._groups), "group-1")
            dead = c.coordinator_for(group)
            for tp, p in sorted(c.partitions.items()):
                if p.leader_id == dead and len(p.isr) > 1:
                    c.move_coordinator(tp.partition)
        else:  # pragma: no cover - Fault refuses other kinds
            raise ValueError(fault.kind)

    def add_partitions(self, topic: str, count: int) -> None:
        """Grow `topic` to `count` partitions now; each group's leader notices at the next
        metadata refresh (a multiple of `metadata.max.age.ms`) and rejoins."""
        before = self.cluster.topics.get(topic)
        if before is None or count <= before:
            raise ValueError(f"topic {topic!r} has {before} partitions; give a known topic and "
                             f"a larger count, got {count!r}")
        self.cluster.topics[topic] = count
        age = self.metadata_max_age_ms
        refresh = (self.scheduler.now // age + 1) * age
        self.scheduler.call_at(refresh, self._metadata_refreshed, topic, before, count,
                               name=f"metadata refresh {topic}")

    def _metadata_refreshed(self, topic: str, before: int, count: int) -> None:
        for group_id in self._groups:
            if topic not in self._topics.get(group_id, ()):
                continue
            leader = self.cluster.group(group_id).get("leader")
            for consumer in self._members(group_id):
                if consumer.member_id == leader and consumer.member_id:
                    consumer.request_rejoin(
                        "cached metadata has changed",
                        f"cached metadata has changed from {{{topic}={before}}} at the "
                        f"beginning of the rebalance to {{{topic}={count}}}")

    def _heal(self, name: str) -> None:
        consumer = self.cluster.consumers[name]
        if not consumer.crashed and not consumer.closed:
            self.cluster.cut_off(name, False)

    def _members(self, group_id: str) -> list[Consumer]:
        return [self.cluster.consumers[n] for n in self._groups.get(group_id, ())
                if not self.cluster.consumers[n].crashed and not self.cluster.consumers[n].closed]

    def _partitions(self, group_id: str) -> list[Partition]:
        return [(t, p) for t in self._topics.get(group_id, ()) for p in range(self.cluster.topics[t])]

    def fetching(self, group_id: str = "group-1") -> dict[Partition, frozenset[str]]:
        holders: dict[Partition, set[str]] = {tp: set() for tp in self._partitions(group_id)}
        for consumer in self._members(group_id):
            state = consumer.state
            if (state is not _STABLE or consumer.rejoin_needed) and (
                    consumer.protocol.name != "COOPERATIVE" or state is _UNJOINED):
                continue  # Consumer._consume takes nothing now
            for tp in consumer.owned:
                holders.setdefault((tp.topic, tp.partition), set()).add(consumer.name)
        return {tp: frozenset(names) for tp, names in sorted(holders.items())}

    def settled(self, group_id: str = "group-1") -> bool:
        members = self._members(group_id)
        group = self.cluster.group(group_id)
        if group["state"] != "Stable" or not members:
            return False
        if sorted(group["members"]) != sorted(m.member_id for m in members):
            return False
        owned: list[Partition] = []
        for m in members:
            if m.state is not _STABLE or m.rejoin_needed or m.generation.generation_id != \
                    group["generation"]:
                return False
            owned += [(tp.topic, tp.partition) for tp in m.owned]
        return sorted(owned) == sorted(self._partitions(group_id))

    def coordination_messages(self) -> int:
        return self._messages

    def rebalance_rounds(self, group_id: str = "group-1") -> int:
        return self._rounds.get(group_id, 0)

    def log_lines(self, level: str = "INFO") -> list[str]:
        return self.cluster.log_lines(level)


def build(scenario: Scenario) -> ClassicDesign:
    """The classic design for `scenario`, its consumers started at time 0."""
    return build_design(ClassicDesign, scenario)
