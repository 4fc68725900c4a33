"""Consumer settings by the Java client's keys and defaults (Kafka's `ConsumerConfig`, 3.x/4.0).

Refused by name, like `ConsumerConfig`: an unknown key, a value of the wrong type or out of
range (`retry.backoff.ms="100"`, `enable.auto.commit="no"`, a `group.instance.id` that Kafka's
`JoinGroupRequest.validateGroupInstanceId` refuses), a heartbeat interval that is not below
the session timeout, an unknown assignor, or assignors with no common rebalance protocol.
With `group.protocol=consumer` (KIP-848) the classic-only settings Kafka 4's `ConsumerConfig`
refuses (`CONSUMER_PROTOCOL_UNSUPPORTED_CONFIGS`: partition.assignment.strategy,
heartbeat.interval.ms, session.timeout.ms) are refused with its message, and
`group.remote.assignor` is refused with `group.protocol=classic`.
The broker's own check (session timeout within group.min/max.session.timeout.ms ->
INVALID_SESSION_TIMEOUT) happens when the consumer joins, as in Kafka.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..assignors import ASSIGNORS, UnknownAssignorError, get_assignor, select_protocol
from ..kafka_config import (check_config_bool, check_config_int, check_config_str, config_error,
                            fields_from_properties)
from ..topic import illegal_name_reason
from .styles import CLIENT_STYLES

__all__ = ["ConsumerConfig", "CONSUMER_PROTOCOL_UNSUPPORTED_CONFIGS",
           "CLASSIC_PROTOCOL_UNSUPPORTED_CONFIGS", "GROUP_PROTOCOLS"]

_KEYS = {
    "group.id": "group_id",
    "client.id": "client_id",
    "group.instance.id": "group_instance_id",
    "session.timeout.ms": "session_timeout_ms",
    "heartbeat.interval.ms": "heartbeat_interval_ms",
    "max.poll.interval.ms": "max_poll_interval_ms",
    "max.poll.records": "max_poll_records",
    "retry.backoff.ms": "retry_backoff_ms",
    "request.timeout.ms": "request_timeout_ms",
    "enable.auto.commit": "enable_auto_commit",
    "auto.commit.interval.ms": "auto_commit_interval_ms",
    "auto.offset.reset": "auto_offset_reset",
    "partition.assignment.strategy": "partition_assignment_strategy",
    "group.protocol": "group_protocol",
    "group.remote.assignor": "group_remote_assignor",
}

# Kafka's ConsumerConfig.CONSUMER_PROTOCOL_UNSUPPORTED_CONFIGS (in its order) and
# CLASSIC_PROTOCOL_UNSUPPORTED_CONFIGS: keys that may not be set with the other protocol.
CONSUMER_PROTOCOL_UNSUPPORTED_CONFIGS = ("partition.assignment.strategy",
                                         "heartbeat.interval.ms", "session.timeout.ms")
CLASSIC_PROTOCOL_UNSUPPORTED_CONFIGS = ("group.remote.assignor",)
GROUP_PROTOCOLS = ("classic", "consumer")
# group.consumer.assignors on the broker (its default list): what group.remote.assignor names
SERVER_ASSIGNOR_NAMES = ("uniform", "range")
_DEFAULT_STRATEGY = ("range", "cooperative-sticky")

# Kafka key -> (minimum, bits) of the numeric settings: INT is 32 bits, LONG 64, as in Kafka's
# ConsumerConfig. The kit asks for at least 1 where Kafka allows 0 (a zero interval would spin).
_NUMBERS: dict[str, tuple[int, int]] = {
    "session.timeout.ms": (1, 32),
    "heartbeat.interval.ms": (1, 32),
    "max.poll.interval.ms": (1, 32),
    "max.poll.records": (1, 32),
    "retry.backoff.ms": (0, 64),
    "request.timeout.ms": (1, 32),
    "auto.commit.interval.ms": (1, 32),
}


@dataclass(frozen=True)
class ConsumerConfig:
    group_id: str
    client_id: str = "consumer"
    group_instance_id: str | None = None
    session_timeout_ms: int = 45000
    heartbeat_interval_ms: int = 3000
    max_poll_interval_ms: int = 300000
    max_poll_records: int = 500
    retry_backoff_ms: int = 100
    request_timeout_ms: int = 30000
    enable_auto_commit: bool = True
    auto_commit_interval_ms: int = 5000
    auto_offset_reset: str = "latest"
    partition_assignment_strategy: Sequence[str] = field(
        default_factory=lambda: _DEFAULT_STRATEGY)
    # Not a Kafka config: whose log lines the consumer writes, the Java client's ("java") or
    # kafka-python 2.x's ("kafka-python"); the behaviour is the Java client's either way
    # (coordinator_kit.client.styles).
    client_style: str = "java"
    # group.protocol: "classic" (JoinGroup/SyncGroup, the default in Kafka 4.0) or "consumer"
    # (KIP-848's ConsumerGroupHeartbeat, Java's AsyncKafkaConsumer); group.remote.assignor: the
    # server-side assignor a "consumer" member asks for (None: the broker's default)
    group_protocol: str = "classic"
    group_remote_assignor: str | None = None

    def __post_init__(self) -> None:
        self._check_types()
        object.__setattr__(self, "partition_assignment_strategy",
                           tuple(self.partition_assignment_strategy))
        object.__setattr__(self, "group_protocol", self.group_protocol.lower())
        self._check_protocol_configs(self._set_keys())
        if self.heartbeat_interval_ms >= self.session_timeout_ms:
            raise ValueError(f"heartbeat.interval.ms ({self.heartbeat_interval_ms}) must be "
                             f"lower than session.timeout.ms ({self.session_timeout_ms})")
        for name in self.partition_assignment_strategy:
            try:
                get_assignor(name)
            except UnknownAssignorError as exc:  # it lists the known names
                raise UnknownAssignorError(
                    f"Invalid value {list(self.partition_assignment_strategy)!r} for "
                    f"configuration partition.assignment.strategy: {exc}") from None
        select_protocol(self.assignors())

    def _check_types(self) -> None:
        """Every field's type and range, by Kafka's key, before any of them is used."""
        if self.group_id is None or self.group_id == "":
            raise ValueError("group.id must be set for a consumer in a group")
        check_config_str("group.id", self.group_id)
        check_config_str("client.id", self.client_id)
        instance = self.group_instance_id
        check_config_str("group.instance.id", instance, nullable=True)
        if instance is not None and (why := illegal_name_reason(instance)):
            raise config_error("group.instance.id", instance,
                               f"{why} (JoinGroupRequest.validateGroupInstanceId); leave it None "
                               f"for a dynamic member")
        for key, (at_least, bits) in _NUMBERS.items():
            check_config_int(key, getattr(self, _KEYS[key]), at_least=at_least, bits=bits)
        check_config_bool("enable.auto.commit", self.enable_auto_commit)
        if not isinstance(self.auto_offset_reset, str) \
                or self.auto_offset_reset not in ("latest", "earliest", "none"):
            raise config_error("auto.offset.reset", self.auto_offset_reset,
                               "String must be one of: latest, earliest, none")
        strategy = self.partition_assignment_strategy
        known = (f"known assignors: {', '.join(sorted(ASSIGNORS))} (or their Java class names, "
                 f"e.g. org.apache.kafka.clients.consumer.RangeAssignor)")
        if isinstance(strategy, str) or not isinstance(strategy, (list, tuple)):
            what = "one str" if isinstance(strategy, str) else f"a {type(strategy).__name__}"
            raise config_error("partition.assignment.strategy", strategy,
                               f"Expected a list or tuple of assignor names, e.g. ['range'] or "
                               f"['range', 'cooperative-sticky'], not {what} (Java's "
                               f"ConsumerConfig takes a list of assignor classes); {known}")
        if not strategy:
            raise ValueError("partition.assignment.strategy needs at least one assignor; "
                             + known)
        for name in strategy:
            if not isinstance(name, str):
                raise config_error("partition.assignment.strategy", strategy,
                                   f"assignor {name!r} is not a name; {known}")
        if not isinstance(self.group_protocol, str) \
                or self.group_protocol.lower() not in GROUP_PROTOCOLS:
            raise config_error("group.protocol", self.group_protocol,
                               "String must be one of (case insensitive): CLASSIC, CONSUMER")
        check_config_str("group.remote.assignor", self.group_remote_assignor, nullable=True)
        remote = self.group_remote_assignor
        if remote is not None and remote not in SERVER_ASSIGNOR_NAMES:
            # the broker would answer UNSUPPORTED_ASSIGNOR (a fatal heartbeat error); the kit's
            # brokers know Kafka's default group.consumer.assignors, so say it here
            raise config_error("group.remote.assignor", remote,
                               f"the brokers' server assignors (group.consumer.assignors) are "
                               f"{', '.join(SERVER_ASSIGNOR_NAMES)}")
        if not isinstance(self.client_style, str) or self.client_style not in CLIENT_STYLES:
            raise ValueError(f"client_style must be one of {', '.join(CLIENT_STYLES)}, got "
                             f"{self.client_style!r}")
        if self.group_protocol.lower() == "consumer" and self.client_style != "java":
            raise ValueError(f"client_style={self.client_style!r} has no group.protocol="
                             f"consumer: kafka-python speaks the classic protocol only; use "
                             f"client_style='java' (the Java client's AsyncKafkaConsumer)")

    def _set_keys(self) -> set[str]:
        """The protocol-specific keys whose value is not Kafka's default (a dataclass cannot tell
        a default passed explicitly from one left out; `of` and `from_properties` can)."""
        out = set()
        if tuple(self.partition_assignment_strategy) != _DEFAULT_STRATEGY:
            out.add("partition.assignment.strategy")
        if self.heartbeat_interval_ms != 3000:
            out.add("heartbeat.interval.ms")
        if self.session_timeout_ms != 45000:
            out.add("session.timeout.ms")
        if self.group_remote_assignor:
            out.add("group.remote.assignor")
        return out

    def _check_protocol_configs(self, given: set[str]) -> None:
        """`ConsumerConfig.checkUnsupportedConfigs`: Kafka's ConfigException message."""
        if self.group_protocol == "consumer":
            unsupported = CONSUMER_PROTOCOL_UNSUPPORTED_CONFIGS
        else:
            unsupported = CLASSIC_PROTOCOL_UNSUPPORTED_CONFIGS
        invalid = [key for key in unsupported if key in given]
        if invalid:
            raise ValueError(f"{', '.join(invalid)} cannot be set when group.protocol="
                             f"{self.group_protocol.upper()}")

    @property
    def consumer_protocol(self) -> bool:
        """True for `group.protocol=consumer` (KIP-848)."""
        return self.group_protocol == "consumer"

    def assignors(self) -> list[Any]:
        return [get_assignor(n) for n in self.partition_assignment_strategy]

    @classmethod
    def of(cls, **kwargs: Any) -> ConsumerConfig:
        """Like the constructor, but an unknown field name is refused with the known names
        (and Kafka's dotted key when the name is one, e.g. `session.timeout.ms`)."""
        known = {f.name for f in dataclasses.fields(cls)}
        for name in kwargs:
            if name in known:
                continue
            if name in _KEYS:
                hint = f" ({name} is Kafka's key: pass {_KEYS[name]}=... here)"
            else:
                close = difflib.get_close_matches(name, sorted(known), n=1)
                hint = f" (did you mean {close[0]}?)" if close else ""
            raise ValueError(f"unknown consumer setting {name!r}{hint}; known settings: "
                             f"{', '.join(sorted(known))}")
        return cls._checked(kwargs)

    @classmethod
    def _checked(cls, kwargs: dict[str, Any]) -> ConsumerConfig:
        """Build, then refuse a protocol-specific key that was given at all (Kafka looks at the
        originals: a default value passed explicitly is refused too)."""
        config = cls(**kwargs)
        by_attr = {attr: key for key, attr in _KEYS.items()}
        config._check_protocol_configs({by_attr[k] for k, v in kwargs.items()
                                        if k in by_attr and v is not None and v != ""})
        return config

    @classmethod
    def from_properties(cls, props: Mapping[str, Any]) -> ConsumerConfig:
        kwargs = fields_from_properties(props, _KEYS, "consumer")
        if "group_id" not in kwargs:
            raise ValueError("group.id must be set for a consumer in a group")
        return cls._checked(kwargs)
