"""A runtime sandbox: brokers, replicated `__consumer_offsets` partitions, one runtime per broker.

This is the smallest rig that shows the whole lifecycle of a coordinator partition: load on the
leader, writes parked until the followers catch up, reads at the committed offset, a leader moving
to another broker (unload at the old one, load at a higher epoch on the new one, state rebuilt
from the log). It runs the example key-value shard; the group coordinator's cluster builds on the
same pieces.
"""

from __future__ import annotations

from typing import Any

from ..clock import Scheduler
from ..topic import TopicPartition
from ..trace import Trace
from .future import CoordinatorFuture
from .kv import KV_SERDE, KeyValueShard, KeyValueShardBuilder
from .partition import ReplicatedPartition
from .runtime import CoordinatorRuntime, CoordinatorState, RuntimeConfig

__all__ = ["RuntimeSandbox"]


class RuntimeSandbox:
    def __init__(self, *, brokers: int = 3, partitions: int = 1, append_linger_ms: int = 0,
                 write_timeout_ms: int = 5000, replication_latency_ms: int = 1,
                 trace_level: str = "DEBUG", seed: int = 0) -> None:
        if brokers < 1 or partitions < 1:
            raise ValueError(f"need at least one broker and one partition, got brokers={brokers},"
                             f" partitions={partitions}")
        self.scheduler = Scheduler()
        self.trace = Trace(self.scheduler, level=trace_level)
        broker_ids = list(range(brokers))
        self.partitions: dict[TopicPartition, ReplicatedPartition] = {}
        for p in range(partitions):
            tp = TopicPartition.offsets(p)
            # Spread leaders like Kafka's replica assignment: partition p led by broker p % n.
            replicas = broker_ids[p % brokers:] + broker_ids[:p % brokers]
            self.partitions[tp] = ReplicatedPartition(
                tp, self.scheduler, self.trace, replicas[:3],
                replication_latency_ms=replication_latency_ms)
        config = RuntimeConfig(append_linger_ms=append_linger_ms,
                               write_timeout_ms=write_timeout_ms)
        self.runtimes = {
            b: CoordinatorRuntime(broker_id=b, scheduler=self.scheduler, trace=self.trace,
                                  partitions=self.partitions,
                                  shard_builder_supplier=KeyValueShardBuilder, serde=KV_SERDE,
                                  config=config, seed=seed + b)
            for b in broker_ids}

    # -- naming --------------------------------------------------------------------------------

    def tp(self, partition: int = 0) -> TopicPartition:
        tp = TopicPartition.offsets(partition)
        if tp not in self.partitions:
            raise ValueError(f"no partition {partition}; this sandbox has "
                             f"{len(self.partitions)} (0..{len(self.partitions) - 1})")
        return tp

    def partition(self, partition: int = 0) -> ReplicatedPartition:
        return self.partitions[self.tp(partition)]

    def leader(self, partition: int = 0) -> CoordinatorRuntime[KeyValueShard]:
        return self.runtimes[self.partition(partition).leader_id]

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        """Every leader loads its partitions at the current leader epoch (broker start-up)."""
        for tp, p in sorted(self.partitions.items()):
            self.runtimes[p.leader_id].schedule_load_operation(tp, p.leader_epoch)

    def move_leader(self, partition: int, to_broker: int) -> int:
        """Leadership moves: the old leader unloads and the new one loads at the new epoch."""
        p = self.partition(partition)
        old = p.leader_id
        if to_broker == old:
            raise ValueError(f"broker {to_broker} already leads {p.tp}")
        epoch = p.elect_leader(to_broker)
        self.runtimes[old].schedule_unload_operation(p.tp, epoch)
        self.runtimes[to_broker].schedule_load_operation(p.tp, epoch)
        return epoch

    # -- operations on the current leader -------------------------------------------------------

    def put(self, key: str, value: str, partition: int = 0) -> CoordinatorFuture[str]:
        return self.leader(partition).schedule_write_operation(
            f"put({key})", self.tp(partition), lambda shard: shard.put(key, value))

    def delete(self, key: str, partition: int = 0) -> CoordinatorFuture[str]:
        return self.leader(partition).schedule_write_operation(
            f"delete({key})", self.tp(partition), lambda shard: shard.delete(key))

    def expire_after(self, key: str, delay_ms: int, partition: int = 0) -> CoordinatorFuture[str]:
        return self.leader(partition).schedule_write_operation(
            f"expire({key})", self.tp(partition), lambda shard: shard.expire_after(key, delay_ms))

    def get(self, key: str, partition: int = 0) -> CoordinatorFuture[str | None]:
        return self.leader(partition).schedule_read_operation(
            f"get({key})", self.tp(partition), lambda shard, offset: shard.get(key, offset))

    def committed(self, partition: int = 0) -> CoordinatorFuture[dict[str, str]]:
        """The whole map as of the last committed offset."""
        return self.leader(partition).schedule_read_operation(
            "snapshot", self.tp(partition), lambda shard, offset: shard.snapshot(offset))

    # -- time ----------------------------------------------------------------------------------

    def run_for(self, ms: int) -> int:
        return self.scheduler.run_for(ms)

    def run_until(self, condition: Any, limit_ms: int = 60_000) -> int:
        return self.scheduler.run_until(condition, limit_ms=limit_ms)

    def state(self, partition: int = 0, broker: int | None = None) -> CoordinatorState | None:
        b = self.partition(partition).leader_id if broker is None else broker
        return self.runtimes[b].context_state(self.tp(partition))

    def describe(self, partition: int = 0) -> dict[str, Any]:
        p = self.partition(partition)
        return {**self.runtimes[p.leader_id].describe(p.tp), "leader": p.leader_id,
                "log_end_offset": p.log_end_offset, "high_watermark": p.high_watermark,
                "isr": list(p.isr)}

    def log_lines(self, level: str = "INFO", since: int = 0) -> list[str]:
        return self.trace.lines(level=level, since_seq=since)
