"""Broker-side group coordinator settings, by Kafka's keys and with Kafka's defaults (Kafka's
`GroupCoordinatorConfig`).

`GroupCoordinatorConfig.from_properties({"group.initial.rebalance.delay.ms": 0, ...})` takes the
keys a learner would put in `server.properties`; an unknown key, a value of the wrong type (a
str, a float, a bool) or an out-of-range value is refused by name, as the broker's config
validation (Kafka's `ConfigDef`) does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from enum import Enum
from typing import Any

from ..kafka_config import check_config_int, check_config_str, config_error, fields_from_properties

__all__ = ["GroupCoordinatorConfig", "NEW_MEMBER_JOIN_TIMEOUT_MS", "ConsumerGroupMigrationPolicy",
           "MIGRATION_POLICY_KEY"]

# Not a config in Kafka: how long a member that joined may take to complete its first join.
NEW_MEMBER_JOIN_TIMEOUT_MS = 300_000

MIGRATION_POLICY_KEY = "group.consumer.migration.policy"


class ConsumerGroupMigrationPolicy(Enum):
    """Kafka's `ConsumerGroupMigrationPolicy`: whether a non-empty classic group of the consumer
    protocol turns into a consumer group when a ConsumerGroupHeartbeat joins it (upgrade), and a
    consumer group whose members all use the classic protocol turns back when its last
    consumer-protocol member leaves (downgrade)."""

    BIDIRECTIONAL = ("bidirectional", True, True)
    UPGRADE = ("upgrade", True, False)
    DOWNGRADE = ("downgrade", False, True)
    DISABLED = ("disabled", False, False)

    def __init__(self, config_name: str, upgrade: bool, downgrade: bool) -> None:
        self.config_name = config_name
        self.is_upgrade_enabled = upgrade
        self.is_downgrade_enabled = downgrade

    def __str__(self) -> str:
        return self.config_name

    @classmethod
    def parse(cls, value: Any) -> ConsumerGroupMigrationPolicy:
        """The policy named `value`, compared case-insensitively as Kafka's
        `ConfigDef.CaseInsensitiveValidString` does; any other value is refused by name (Kafka's
        `parse` would fall back to disabled, but its config validation refuses it first)."""
        if isinstance(value, cls):
            return value
        check_config_str(MIGRATION_POLICY_KEY, value)
        for policy in cls:
            if policy.config_name == value.lower():
                return policy
        raise config_error(MIGRATION_POLICY_KEY, value,
                           "String must be one of (case insensitive): "
                           + ", ".join(p.config_name for p in cls))


# Kafka key -> (attribute, minimum, bits): Kafka defines them as INT (32 bits), except
# offsets.topic.replication.factor, a SHORT (16), and offsets.retention.check.interval.ms, a LONG
# (64).
_KEYS: dict[str, tuple[str, int, int]] = {
    "group.min.session.timeout.ms": ("group_min_session_timeout_ms", 0, 32),
    "group.max.session.timeout.ms": ("group_max_session_timeout_ms", 0, 32),
    "group.initial.rebalance.delay.ms": ("group_initial_rebalance_delay_ms", 0, 32),
    "group.max.size": ("group_max_size", 1, 32),
    "offsets.commit.timeout.ms": ("offsets_commit_timeout_ms", 1, 32),
    "offsets.retention.minutes": ("offsets_retention_minutes", 1, 32),
    "offsets.retention.check.interval.ms": ("offsets_retention_check_interval_ms", 1, 64),
    "offset.metadata.max.bytes": ("offset_metadata_max_bytes", 0, 32),
    "offsets.topic.num.partitions": ("offsets_topic_num_partitions", 1, 32),
    "offsets.topic.replication.factor": ("offsets_topic_replication_factor", 1, 16),
    "offsets.topic.segment.bytes": ("offsets_topic_segment_bytes", 1, 32),
    "group.coordinator.append.linger.ms": ("append_linger_ms", 0, 32),
    "group.coordinator.threads": ("threads", 1, 32),
    # KIP-848 consumer groups (GroupCoordinatorConfig.CONSUMER_GROUP_*)
    "group.consumer.session.timeout.ms": ("consumer_group_session_timeout_ms", 1, 32),
    "group.consumer.min.session.timeout.ms": ("consumer_group_min_session_timeout_ms", 1, 32),
    "group.consumer.max.session.timeout.ms": ("consumer_group_max_session_timeout_ms", 1, 32),
    "group.consumer.heartbeat.interval.ms": ("consumer_group_heartbeat_interval_ms", 1, 32),
    "group.consumer.min.heartbeat.interval.ms": ("consumer_group_min_heartbeat_interval_ms", 1,
                                                 32),
    "group.consumer.max.heartbeat.interval.ms": ("consumer_group_max_heartbeat_interval_ms", 1,
                                                 32),
    "group.consumer.max.size": ("consumer_group_max_size", 1, 32),
}


@dataclass(frozen=True)
class GroupCoordinatorConfig:
    group_min_session_timeout_ms: int = 6000
    group_max_session_timeout_ms: int = 1_800_000
    group_initial_rebalance_delay_ms: int = 3000
    group_max_size: int = 2**31 - 1
    offsets_commit_timeout_ms: int = 5000
    offsets_retention_minutes: int = 10080
    offsets_retention_check_interval_ms: int = 600_000
    offset_metadata_max_bytes: int = 4096
    offsets_topic_num_partitions: int = 50
    offsets_topic_replication_factor: int = 3
    # "kept relatively small in order to facilitate faster log compaction and cache loads"
    # (Kafka's documentation of the key); the log cleaner never cleans the active segment
    offsets_topic_segment_bytes: int = 100 * 1024 * 1024
    append_linger_ms: int = 10
    threads: int = 1
    consumer_group_session_timeout_ms: int = 45_000
    consumer_group_min_session_timeout_ms: int = 45_000
    consumer_group_max_session_timeout_ms: int = 60_000
    consumer_group_heartbeat_interval_ms: int = 5_000
    consumer_group_min_heartbeat_interval_ms: int = 5_000
    consumer_group_max_heartbeat_interval_ms: int = 15_000
    consumer_group_max_size: int = 2**31 - 1
    # group.consumer.migration.policy (Kafka's default: bidirectional); a name is accepted too
    consumer_group_migration_policy: ConsumerGroupMigrationPolicy = \
        ConsumerGroupMigrationPolicy.BIDIRECTIONAL

    def __post_init__(self) -> None:
        for key, (attr, at_least, bits) in _KEYS.items():
            check_config_int(key, getattr(self, attr), at_least=at_least, bits=bits)
        object.__setattr__(self, "consumer_group_migration_policy",
                           ConsumerGroupMigrationPolicy.parse(
                               self.consumer_group_migration_policy))
        _check_consumer_group_bounds(self)
        if self.group_min_session_timeout_ms > self.group_max_session_timeout_ms:
            raise ValueError(
                f"group.min.session.timeout.ms ({self.group_min_session_timeout_ms}) must not be "
                f"above group.max.session.timeout.ms ({self.group_max_session_timeout_ms})")

    @property
    def offsets_retention_ms(self) -> int:
        return self.offsets_retention_minutes * 60_000

    @classmethod
    def from_properties(cls, props: Mapping[str, Any]) -> GroupCoordinatorConfig:
        attr_of = {key: attr for key, (attr, _, _) in _KEYS.items()}
        attr_of[MIGRATION_POLICY_KEY] = "consumer_group_migration_policy"
        return cls(**fields_from_properties(props, attr_of, "group coordinator"))

    def to_properties(self) -> dict[str, Any]:
        by_attr = {attr: key for key, (attr, _, _) in _KEYS.items()}
        by_attr["consumer_group_migration_policy"] = MIGRATION_POLICY_KEY
        return {by_attr[f.name]: (str(v) if isinstance(v := getattr(self, f.name), Enum) else v)
                for f in fields(self)}


def _check_consumer_group_bounds(c: GroupCoordinatorConfig) -> None:
    """The startup checks Kafka's `GroupCoordinatorConfig` makes on the consumer group keys."""
    hb, si = "group.consumer.heartbeat.interval.ms", "group.consumer.session.timeout.ms"
    checks = [
        (c.consumer_group_max_heartbeat_interval_ms >= c.consumer_group_min_heartbeat_interval_ms,
         "group.consumer.max.heartbeat.interval.ms must be greater than or equal to "
         "group.consumer.min.heartbeat.interval.ms"),
        (c.consumer_group_heartbeat_interval_ms >= c.consumer_group_min_heartbeat_interval_ms,
         f"{hb} must be greater than or equal to group.consumer.min.heartbeat.interval.ms"),
        (c.consumer_group_heartbeat_interval_ms <= c.consumer_group_max_heartbeat_interval_ms,
         f"{hb} must be less than or equal to group.consumer.max.heartbeat.interval.ms"),
        (c.consumer_group_max_session_timeout_ms >= c.consumer_group_min_session_timeout_ms,
         "group.consumer.max.session.timeout.ms must be greater than or equal to "
         "group.consumer.min.session.timeout.ms"),
        (c.consumer_group_session_timeout_ms >= c.consumer_group_min_session_timeout_ms,
         f"{si} must be greater than or equal to group.consumer.min.session.timeout.ms"),
        (c.consumer_group_session_timeout_ms <= c.consumer_group_max_session_timeout_ms,
         f"{si} must be less than or equal to group.consumer.max.session.timeout.ms"),
        (c.consumer_group_heartbeat_interval_ms < c.consumer_group_session_timeout_ms,
         f"{hb} must be less than {si}"),
    ]
    for ok, message in checks:
        if not ok:
            raise ValueError(message)
