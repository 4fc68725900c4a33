"""Classic eager, classic cooperative and KIP-848 consumers on the kit's `Cluster`, each read as
an `eras.api.Design`, so `eras.compare.measure` samples all three the same way.

Nothing here changes how the cluster behaves; the adapters only read it (and count requests).
The classic two are `eras.classic.ClassicDesign` with the assignment strategy fixed. The
KIP-848 one builds `AsyncConsumer`s (`group.protocol=consumer`, `group.remote.assignor`) and
reads them as the Java client behaves:

- who consumes: a live member hands records of every partition it owns to the application in
  every state (`AsyncKafkaConsumer` keeps fetching what it owns while it reconciles; it stops
  only what the rebalance listener's onPartitionsRevoked has given up). A paused member counts,
  as for the classic adapter: it consumes on waking until told otherwise;
- settled: the group is Stable (`ConsumerGroup` state: every member reconciled to the target
  assignment), its members are exactly the live consumers, each in MemberState.STABLE at the
  group epoch, and their partitions cover the topic once;
- rebalance rounds: new target assignments (`GroupMetadataManager` bumps the group epoch when
  the members or their subscriptions change, then computes a target assignment for it: its
  "Computed a new target assignment for epoch N" line).

Each adapter also keeps every request it sent to a coordinator as (virtual time, API), so a
comparison can count the round trips of one rebalance, and the group's generation (classic) or
group epoch (KIP-848) just before the first fault.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..client.membership import MemberState
from ..eras.api import Fault, Partition
from ..eras.classic import ClassicDesign

__all__ = ["EagerDesign", "CooperativeDesign", "ConsumerProtocolDesign", "RequestLog"]

_MEMBER_STABLE = MemberState.STABLE


class RequestLog:
    """Every request a design's consumers sent to a coordinator: (virtual ms, API name).
    FindCoordinator is logged as "FindCoordinator"."""

    def __init__(self, design: ClassicDesign) -> None:
        self.sent: list[tuple[int, str]] = []
        sched = design.scheduler
        network = design.cluster.network
        send, find = network.send, network.find_coordinator
        sent = self.sent

        def logged_send(client: Any, broker: int | None, api: str, call: Any,
                        on_response: Any, **kwargs: Any) -> None:
            sent.append((sched.now, api))
            send(client, broker, api, call, on_response, **kwargs)

        def logged_find(client: Any, group_id: str, on_result: Any) -> None:
            sent.append((sched.now, "FindCoordinator"))
            find(client, group_id, on_result)

        network.send = logged_send             # type: ignore[method-assign]
        network.find_coordinator = logged_find  # type: ignore[method-assign]

    def between(self, start_ms: int, end_ms: int) -> dict[str, int]:
        """Requests sent in [start_ms, end_ms], per API (sorted by name)."""
        counts: dict[str, int] = {}
        for at, api in self.sent:
            if start_ms <= at <= end_ms:
                counts[api] = counts.get(api, 0) + 1
        return dict(sorted(counts.items()))


class _Measured(ClassicDesign):
    """A `ClassicDesign` with fixed consumer settings, a request log and the epoch at the first
    fault."""

    fixed: Mapping[str, Any] = {}

    def __init__(self, topics: Mapping[str, int], *, seed: int = 0, produce_rate_per_s: int = 100,
                 settings: Mapping[str, Any] | None = None, trace_level: str = "DEBUG") -> None:
        if settings is not None and not isinstance(settings, Mapping):
            raise TypeError(f"the {self.name} design's settings are a mapping of Kafka key to "
                            f"value, e.g. {{'session.timeout.ms': 10000}}, got {settings!r}")
        clash = sorted(set(settings or {}) & set(self.fixed))
        if clash:
            raise ValueError(f"the {self.name} design fixes {', '.join(clash)} "
                             f"({', '.join(f'{k}={self.fixed[k]!r}' for k in clash)}); pick "
                             f"another design instead of overriding it")
        super().__init__(topics, seed=seed, produce_rate_per_s=produce_rate_per_s,
                         settings={**(settings or {}), **self.fixed}, trace_level=trace_level)
        self.requests = RequestLog(self)
        self.epoch_at_fault: dict[str, int | None] = {}

    def epoch(self, group_id: str = "group-1") -> int | None:
        """The group's generation (classic) as its coordinator holds it now."""
        return self.cluster.group(group_id).get("generation")

    def apply(self, fault: Fault) -> None:
        for group in self._groups:
            self.epoch_at_fault.setdefault(group, self.epoch(group))
        super().apply(fault)


class EagerDesign(_Measured):
    """Classic protocol, eager rebalancing: `partition.assignment.strategy=range`."""

    name = "eager"
    title = "classic eager (range)"
    fixed = {"partition.assignment.strategy": ["range"]}


class CooperativeDesign(_Measured):
    """Classic protocol, incremental cooperative rebalancing (KIP-429): `cooperative-sticky`."""

    name = "cooperative"
    title = "classic cooperative (cooperative-sticky)"
    fixed = {"partition.assignment.strategy": ["cooperative-sticky"]}


class ConsumerProtocolDesign(_Measured):
    """The consumer group protocol (KIP-848): `group.protocol=consumer`, server assignor
    `uniform`."""

    name = "consumer"
    title = "KIP-848 consumer (uniform)"
    fixed = {"group.protocol": "consumer", "group.remote.assignor": "uniform"}

    def __init__(self, topics: Mapping[str, int], *, seed: int = 0, produce_rate_per_s: int = 100,
                 settings: Mapping[str, Any] | None = None, trace_level: str = "DEBUG") -> None:
        super().__init__(topics, seed=seed, produce_rate_per_s=produce_rate_per_s,
                         settings=settings, trace_level=trace_level)
        self._epoch_bumps: dict[str, int] = {}

    def _on_event(self, event: Any) -> None:
        if event.kind == "target_assignment_computed":
            group = event.fields.get("group")
            self._epoch_bumps[group] = self._epoch_bumps.get(group, 0) + 1
        else:
            super()._on_event(event)

    def epoch(self, group_id: str = "group-1") -> int | None:
        """The group epoch as the coordinator holds it now."""
        return self.cluster.group(group_id).get("group_epoch")

    def fetching(self, group_id: str = "group-1") -> dict[Partition, frozenset[str]]:
        holders: dict[Partition, set[str]] = {tp: set() for tp in self._partitions(group_id)}
        for consumer in self._members(group_id):
            for tp in consumer.owned:
                holders.setdefault((tp.topic, tp.partition), set()).add(consumer.name)
        return {tp: frozenset(names) for tp, names in sorted(holders.items())}

    def settled(self, group_id: str = "group-1") -> bool:
        members = self._members(group_id)
        group = self.cluster.group(group_id)
        if group["state"] != "Stable" or not members:
            return False
        if sorted(m["member_id"] for m in group["members"]) != sorted(
                c.member_id for c in members):
            return False
        epoch = group["group_epoch"]
        owned: list[Partition] = []
        for c in members:
            if c.membership.state is not _MEMBER_STABLE or c.member_epoch != epoch:
                return False
            owned += [(tp.topic, tp.partition) for tp in c.owned]
        return sorted(owned) == sorted(self._partitions(group_id))

    def rebalance_rounds(self, group_id: str = "group-1") -> int:
        return self._epoch_bumps.get(group_id, 0)
