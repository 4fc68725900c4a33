"""Settings of the ZooKeeper-era consumer by Kafka 0.8.2's keys and defaults (`ConsumerConfig`).

Kafka's keys keep Kafka's defaults (0.8.2.2 `ConsumerConfig`): a session of 6 s, 4 rebalance
attempts 2 s apart, auto-commit every 60 s, range assignment. Keys starting `kit.` are the
kit's own: what Kafka leaves to the network, the JVM or the application (ZooKeeper's request
latency, how long the application takes per chunk, how big a chunk is). `num.streams` is the
value of the `topicCountMap` a program passes to `createMessageStreams` (streams per topic),
not a `ConsumerConfig` key. docs/eras-zookeeper.md lists every key.

An unknown key or a bad value is refused by name, as `client/config.py` refuses them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...kafka_config import (check_config_bool, check_config_int, config_error,
                             fields_from_properties)

__all__ = ["ZookeeperConsumerConfig", "KEYS"]

# Kafka key -> field name
KEYS: dict[str, str] = {
    "zookeeper.session.timeout.ms": "session_timeout_ms",
    "rebalance.max.retries": "rebalance_max_retries",
    "rebalance.backoff.ms": "rebalance_backoff_ms",
    "auto.commit.enable": "auto_commit_enable",
    "auto.commit.interval.ms": "auto_commit_interval_ms",
    "auto.offset.reset": "auto_offset_reset",
    "partition.assignment.strategy": "partition_assignment_strategy",
    "queued.max.message.chunks": "queued_max_message_chunks",
    "fetch.wait.max.ms": "fetch_wait_max_ms",
    "num.streams": "num_streams",
    "kit.zookeeper.latency.ms": "zookeeper_latency_ms",
    "kit.processing.ms": "processing_ms",
    "kit.chunk.max.records": "chunk_max_records",
}

# key -> minimum (all are 32-bit ints)
_NUMBERS: dict[str, int] = {
    "zookeeper.session.timeout.ms": 3,
    "rebalance.max.retries": 1,
    "rebalance.backoff.ms": 0,
    "auto.commit.interval.ms": 1,
    "queued.max.message.chunks": 1,
    "fetch.wait.max.ms": 1,
    "num.streams": 1,
    "kit.zookeeper.latency.ms": 1,
    "kit.processing.ms": 1,
    "kit.chunk.max.records": 1,
}


@dataclass(frozen=True)
class ZookeeperConsumerConfig:
    """One consumer's settings (Kafka 0.8.2.2 `kafka.consumer.ConsumerConfig` plus kit keys)."""

    session_timeout_ms: int = 6000          # zookeeper.session.timeout.ms
    rebalance_max_retries: int = 4          # attempts per syncedRebalance
    rebalance_backoff_ms: int = 2000        # = zookeeper.sync.time.ms by default
    auto_commit_enable: bool = True
    auto_commit_interval_ms: int = 60000
    auto_offset_reset: str = "largest"      # 0.8 names: largest / smallest
    partition_assignment_strategy: str = "range"   # or "roundrobin" (0.8.2)
    queued_max_message_chunks: int = 2      # chunks a stream's queue holds
    fetch_wait_max_ms: int = 100            # how often the fetcher asks a broker for more
    num_streams: int = 1                    # createMessageStreams(Map(topic -> n))
    zookeeper_latency_ms: int = 2           # kit: a ZooKeeper request's round trip
    processing_ms: int = 100                # kit: the application's time per chunk
    chunk_max_records: int = 500            # kit: records per fetched chunk at most

    def __post_init__(self) -> None:
        for key, at_least in _NUMBERS.items():
            check_config_int(key, getattr(self, KEYS[key]), at_least=at_least)
        check_config_bool("auto.commit.enable", self.auto_commit_enable)
        if self.auto_offset_reset not in ("largest", "smallest"):
            raise config_error("auto.offset.reset", self.auto_offset_reset,
                               "String must be one of: largest, smallest (Kafka 0.8's names)")
        if self.partition_assignment_strategy not in ("range", "roundrobin"):
            raise config_error("partition.assignment.strategy",
                               self.partition_assignment_strategy,
                               "String must be one of: range, roundrobin")

    @classmethod
    def from_properties(cls, props: Mapping[str, Any]) -> ZookeeperConsumerConfig:
        """From Kafka's dotted keys, e.g. {"zookeeper.session.timeout.ms": 6000}."""
        return cls(**fields_from_properties(props, KEYS, "ZooKeeper consumer"))
