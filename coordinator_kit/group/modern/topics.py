"""Topic ids for the consumer group protocol (KIP-848 speaks topic ids, not names).

In Kafka every topic gets a random `Uuid` when it is created and the metadata image maps names to
ids (`TopicsImage`). The kit's `MetadataImage` holds names and partition counts only, so a topic's
id here is derived from its name: the first 16 bytes of SHA-256("topic:" + name), printed as Kafka
prints a `Uuid` (`Uuid.toString`: URL-safe base64 without padding). The same name always gives the
same id, on every broker and in every run, as an id read back from the log must.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache

from ...runtime.metadata import MetadataImage
from ..records import uuid_string

__all__ = ["topic_id", "TopicMetadata", "TopicsView"]


@lru_cache(maxsize=4096)
def topic_id(name: str) -> str:
    """The kit's id of topic `name` (stable: derived from the name)."""
    return uuid_string(hashlib.sha256(f"topic:{name}".encode()).digest()[:16])


@dataclass(frozen=True)
class TopicMetadata:
    """Kafka's `modern.TopicMetadata`: what the group's subscription metadata keeps per topic."""

    id: str
    name: str
    num_partitions: int


class TopicsView:
    """The part of Kafka's `TopicsImage` the coordinator reads: by name and by id."""

    def __init__(self, image: MetadataImage) -> None:
        self.image = image
        self.by_name = {name: TopicMetadata(topic_id(name), name, n)
                        for name, n in image.topics.items()}
        self.by_id = {t.id: t for t in self.by_name.values()}

    def name_of(self, tid: str) -> str | None:
        t = self.by_id.get(tid)
        return None if t is None else t.name
