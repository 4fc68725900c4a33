"""What must always hold in a cluster, whatever breaks (checked in every scenario test).

* no partition is owned by two members of the current generation at once (cooperative too);
* committed offsets are never lost and never move backwards, across coordinator failover;
* generations only grow;
* a consumer with a stale generation is fenced (its commit or heartbeat is refused).

`InvariantMonitor` watches a `Cluster` as it runs (through the trace) and collects violations
with the virtual time and what was seen, so a failing test says exactly what went wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .cluster import Cluster
from .topic import TopicPartition
from .trace import TraceEvent

__all__ = ["InvariantMonitor", "Violation"]


@dataclass(frozen=True)
class Violation:
    ts: int
    invariant: str
    detail: str


@dataclass
class InvariantMonitor:
    cluster: Cluster
    group_id: str = "group-1"
    violations: list[Violation] = field(default_factory=list)
    checks: int = 0
    _max_generation: int = -1
    _max_committed: dict[tuple[str, int], int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.cluster.trace.subscribe(self._on_event)

    def _fail(self, invariant: str, detail: str) -> None:
        self.violations.append(Violation(self.cluster.scheduler.now, invariant, detail))

    def _on_event(self, event: TraceEvent) -> None:
        if event.kind in ("partitions_assigned", "synced", "group_stabilized", "leader_elected",
                          "load_completed", "last_committed_offset_updated"):
            self.check()

    def check(self) -> None:
        """Check every invariant against the cluster's current state."""
        self.checks += 1
        self._single_owner()
        self._generations_grow()
        self._offsets_never_lost()

    def _single_owner(self) -> None:
        group = self.cluster.group(self.group_id)
        generation = group.get("generation")
        if generation is None:
            return
        owners: dict[TopicPartition, str] = {}
        for c in self.cluster.consumers.values():
            if c.config.group_id != self.group_id or c.crashed or not c.running:
                continue
            if c.generation.generation_id != generation or c.member_id not in group["members"]:
                continue
            for tp in c.owned:
                if tp in owners:
                    self._fail("single owner", f"{tp} owned by {owners[tp]} and {c.name} in "
                                               f"generation {generation}")
                owners[tp] = c.name

    def _generations_grow(self) -> None:
        generation = self.cluster.group(self.group_id).get("generation")
        if generation is None:
            return
        if generation < self._max_generation:
            self._fail("generations grow", f"generation went from {self._max_generation} back "
                                           f"to {generation}")
        self._max_generation = max(self._max_generation, generation)

    def _offsets_never_lost(self) -> None:
        shard = self.cluster.shard_for(self.group_id)
        if shard is None:
            return
        b = self.cluster.coordinator_for(self.group_id)
        ctx = self.cluster.brokers[b].runtime.context(self.cluster.partition_of(self.group_id)) \
            if b is not None else None
        if ctx is None or ctx.coordinator is None:
            return
        committed_at = ctx.coordinator.last_committed_offset
        fetched = shard.offsets.fetch_offsets(_all(self.group_id), committed_at).offsets
        current = {tp: p.offset for tp, p in fetched.items()}
        for tp, best in self._max_committed.items():
            now = current.get(tp)
            if now is None:
                self._fail("committed offsets kept", f"committed offset {best} of {tp} is gone")
            elif now < best:
                self._fail("committed offsets kept", f"committed offset of {tp} went back "
                                                     f"from {best} to {now}")
        for tp, o in current.items():
            self._max_committed[tp] = max(o, self._max_committed.get(tp, o))

    def assert_ok(self) -> None:
        if self.violations:
            lines = "\n".join(f"  {v.ts} ms  {v.invariant}: {v.detail}" for v in self.violations)
            raise AssertionError(f"{len(self.violations)} invariant violation(s):\n{lines}")

    def summary(self) -> dict[str, Any]:
        return {"checks": self.checks, "violations": len(self.violations),
                "max_generation": self._max_generation,
                "committed_partitions": len(self._max_committed)}


def _all(group_id: str) -> Any:
    from .group.api import OffsetFetchRequest

    return OffsetFetchRequest(group_id, None)
