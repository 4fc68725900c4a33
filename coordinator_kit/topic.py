"""Topic partitions, named and printed the way Kafka prints them (`__consumer_offsets-12`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["TopicPartition", "CONSUMER_OFFSETS", "illegal_name_reason"]

CONSUMER_OFFSETS = "__consumer_offsets"

MAX_NAME_LENGTH = 249
_LEGAL = re.compile(r"[a-zA-Z0-9._-]+")


def illegal_name_reason(name: str) -> str | None:
    """Why Kafka refuses `name` as a topic name or a group.instance.id (Kafka's `Topic.validate`,
    which `JoinGroupRequest.validateGroupInstanceId` reuses), or None when it is legal."""
    if not name:
        return "it is empty"
    if name in (".", ".."):
        return "'.' and '..' are not allowed"
    if len(name) > MAX_NAME_LENGTH:
        return f"it is {len(name)} characters long, more than {MAX_NAME_LENGTH}"
    if not _LEGAL.fullmatch(name):
        return "only ASCII letters and digits, '.', '_' and '-' are allowed"
    return None


@dataclass(frozen=True, order=True)
class TopicPartition:
    # Slots by hand rather than `slots=True`, to hold the hash as well without making it a field
    # (fields(), asdict() and the generated methods see topic and partition only).
    __slots__ = ("topic", "partition", "_hash")

    topic: str
    partition: int

    def __post_init__(self) -> None:
        if not self.topic:
            raise ValueError("a topic partition needs a non-empty topic name")
        if isinstance(self.partition, bool) or not isinstance(self.partition, int) \
                or self.partition < 0:
            raise ValueError(f"partition must be an integer >= 0, got {self.partition!r}")
        # What the dataclass hash computes, computed once: a write looks its partition up in
        # several dicts and sets (contexts, event queues, partitions).
        object.__setattr__(self, "_hash", hash((self.topic, self.partition)))

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[type[TopicPartition], tuple[str, int]]:
        return TopicPartition, (self.topic, self.partition)

    @classmethod
    def offsets(cls, partition: int) -> TopicPartition:
        """A partition of `__consumer_offsets`, where the group coordinator keeps its state."""
        return cls(CONSUMER_OFFSETS, partition)

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"
