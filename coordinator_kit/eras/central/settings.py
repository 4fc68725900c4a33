"""Settings of the centralised consumer coordinator drafted for Kafka 0.9 (never shipped).

The draft (Apache wiki "Central Consumer Coordination", with its sibling pages "Kafka 0.9
consumer protocol" and "Kafka Detailed Consumer Coordinator Design") names its timers and
limits only in words ("a configurable number of times", "the timeout value", "a number of
rebalance retries"). The kit gives each one a key in the style of Kafka 0.8's configs, with a
default taken from the 0.8 consumer where the draft is silent; every gap the kit had to fill
is a documented switch (docs/eras-central.md lists them all, with why each default).

Unknown keys and bad values are refused by name, as `client.config.ConsumerConfig` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...kafka_config import check_config_bool, check_config_int, config_error

__all__ = ["CentralConfig", "SETTINGS"]

# key -> (field, what it is). Order: the draft's settings, then the kit's switches, then the
# simulation's own (network, processing model).
SETTINGS: dict[str, tuple[str, str]] = {
    "session.timeout.ms": ("session_timeout_ms",
                           "consumer session timeout sent in RegisterConsumer; also its "
                           "`silence` timer"),
    "ping.interval.ms": ("ping_interval_ms",
                         "coordinator's ping period per consumer; None = session timeout / 3"),
    "ping.max.missed": ("ping_max_missed", "unanswered pings before a consumer is failed"),
    "rebalance.reply.timeout.ms": ("rebalance_reply_timeout_ms",
                                   "wait for stop/start replies; None = the largest session "
                                   "timeout of the attempt's members"),
    "rebalance.max.retries": ("rebalance_max_retries",
                              "attempts of one rebalance before REBALANCE_FAILED"),
    "rebalance.backoff.ms": ("rebalance_backoff_ms", "pause between two attempts"),
    "offsets.flush.interval.ms": ("offsets_flush_interval_ms",
                                  "coordinator writes the offsets it collected to ZooKeeper"),
    "rebalance.handler.threads": ("rebalance_handler_threads",
                                  "groups rebalanced at the same time"),
    "coordinator.zookeeper.session.timeout.ms": (
        "coordinator_zk_session_timeout_ms",
        "how long a dead coordinator's election node lingers in ZooKeeper"),
    "rediscovery.backoff.ms": ("rediscovery_backoff_ms",
                               "consumer's pause before it asks the brokers again"),
    "min.session.timeout.ms": ("min_session_timeout_ms", "smallest session timeout accepted"),
    "max.session.timeout.ms": ("max_session_timeout_ms", "largest session timeout accepted"),
    "auto.commit.enable": ("auto_commit_enable",
                           "consumer reports consumed offsets in ping and stop replies"),
    "auto.offset.reset": ("auto_offset_reset",
                          "where a partition with no offset starts: largest or smallest"),
    # [kit choice] switches the draft leaves open
    "tag_rebalance_messages": ("tag_rebalance_messages",
                               "stop/start carry rebalance id and attempt; older replies "
                               "dropped"),
    "close_on_fail": ("close_on_fail", "the coordinator closes a failed consumer's socket"),
    "fail_fast": ("fail_fast",
                  "a member failed mid-attempt restarts the attempt at once (no waiting for "
                  "the reply timer, no backoff)"),
    "disconnect_is_failure": ("disconnect_is_failure",
                              "a closed socket fails the consumer at once (C15)"),
    "pause_pings_during_rebalance": ("pause_pings_during_rebalance",
                                     "no pings (and no missed pings) while a rebalance runs"),
    "rebalance.failed.retry.ms": ("rebalance_failed_retry_ms",
                                  "REBALANCE_FAILED retries by itself after this; None = waits "
                                  "for the next trigger"),
    # the simulation
    "brokers": ("brokers", "brokers in the cluster, all candidates for coordinator"),
    "network.latency.ms": ("network_latency_ms", "one-way delay of every message"),
    "processing.ms": ("processing_ms",
                      "consumer poll period: the application takes the buffered chunks, the "
                      "fetchers fetch the next ones"),
}
_FIELDS = {key: fld for key, (fld, _) in SETTINGS.items()}
_OPTIONAL = {"ping.interval.ms", "rebalance.reply.timeout.ms", "rebalance.failed.retry.ms"}
_BOOLS = {"auto.commit.enable", "tag_rebalance_messages", "close_on_fail", "fail_fast",
          "disconnect_is_failure", "pause_pings_during_rebalance"}
_MINIMUM = {"ping.max.missed": 1, "rebalance.max.retries": 1, "rebalance.backoff.ms": 0,
            "rediscovery.backoff.ms": 0, "rebalance.handler.threads": 1, "brokers": 1,
            "network.latency.ms": 1}


@dataclass(frozen=True)
class CentralConfig:
    """One run's settings, with the kit's defaults (docs/eras-central.md, "Settings")."""

    session_timeout_ms: int = 6000
    ping_interval_ms: int | None = None
    ping_max_missed: int = 3
    rebalance_reply_timeout_ms: int | None = None
    rebalance_max_retries: int = 4
    rebalance_backoff_ms: int = 2000
    offsets_flush_interval_ms: int = 60000
    rebalance_handler_threads: int = 1
    coordinator_zk_session_timeout_ms: int = 6000
    rediscovery_backoff_ms: int = 1000
    min_session_timeout_ms: int = 1000
    max_session_timeout_ms: int = 60000
    auto_commit_enable: bool = True
    auto_offset_reset: str = "largest"
    tag_rebalance_messages: bool = True
    close_on_fail: bool = True
    fail_fast: bool = False
    disconnect_is_failure: bool = True
    pause_pings_during_rebalance: bool = False
    rebalance_failed_retry_ms: int | None = None
    brokers: int = 3
    network_latency_ms: int = 1
    processing_ms: int = 100

    def __post_init__(self) -> None:
        for key, fld in _FIELDS.items():
            value = getattr(self, fld)
            if key in _BOOLS:
                check_config_bool(key, value)
            elif key == "auto.offset.reset":
                if value not in ("largest", "smallest"):
                    raise config_error(key, value, "must be one of: largest, smallest "
                                                   "(Kafka 0.8's names)")
            elif key in _OPTIONAL and value is None:
                continue
            else:
                check_config_int(key, value, at_least=_MINIMUM.get(key, 1))
        if self.min_session_timeout_ms > self.max_session_timeout_ms:
            raise config_error("min.session.timeout.ms", self.min_session_timeout_ms,
                               f"must not exceed max.session.timeout.ms "
                               f"({self.max_session_timeout_ms})")

    def ping_interval_for(self, session_timeout_ms: int) -> int:
        """A member's ping period: the setting, or a third of its session timeout."""
        if self.ping_interval_ms is not None:
            return self.ping_interval_ms
        return max(1, session_timeout_ms // 3)

    @classmethod
    def from_properties(cls, props: Mapping[str, Any] | None = None) -> CentralConfig:
        """Build from the keys above (`{"rebalance.max.retries": 2}`); unknown keys refused."""
        props = {} if props is None else props
        if not isinstance(props, Mapping):
            raise TypeError(f"central settings are a mapping of key to value, e.g. "
                            f"{{'rebalance.max.retries': 4}}, got {type(props).__name__}")
        kwargs = {}
        for key, value in props.items():
            if key not in _FIELDS:
                raise ValueError(f"unknown central coordinator setting {key!r}; known keys: "
                                 f"{', '.join(sorted(_FIELDS))}")
            kwargs[_FIELDS[key]] = value
        return cls(**kwargs)

    def to_properties(self) -> dict[str, Any]:
        return {key: getattr(self, fld) for key, fld in _FIELDS.items()}

    def replace(self, **props: Any) -> CentralConfig:
        """A copy with some keys changed, by key (`**{"close_on_fail": False}`)."""
        merged = self.to_properties()
        merged.update(props)
        return CentralConfig.from_properties(merged)

