"""The cluster metadata a coordinator shard sees (a minimal `MetadataImage` / `MetadataDelta`).

In KRaft the broker hands every coordinator the latest metadata image and the delta that produced
it; the group coordinator uses topic names and partition counts to compute assignments and to
notice deleted topics. The kit keeps exactly that part: topics and their partition counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = ["MetadataImage", "MetadataDelta"]


@dataclass(frozen=True)
class MetadataImage:
    offset: int
    topics: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name, n in self.topics.items():
            if not isinstance(n, int) or n < 1:
                raise ValueError(f"topic {name!r} needs at least one partition, got {n!r}")
        object.__setattr__(self, "topics", MappingProxyType(dict(sorted(self.topics.items()))))

    def with_topics(self, offset: int, topics: Mapping[str, int]) -> tuple[MetadataImage,
                                                                            MetadataDelta]:
        """A newer image with `topics` set (0 partitions deletes a topic), and its delta."""
        if offset <= self.offset:
            raise ValueError(f"a new metadata image needs an offset above {self.offset}, "
                             f"got {offset}")
        new = dict(self.topics)
        changed, deleted = [], []
        for name, n in sorted(topics.items()):
            if n == 0:
                if name in new:
                    del new[name]
                    deleted.append(name)
            elif new.get(name) != n:
                new[name] = n
                changed.append(name)
        return MetadataImage(offset, new), MetadataDelta(tuple(changed), tuple(deleted))

    def __repr__(self) -> str:
        return f"MetadataImage(offset={self.offset}, topics={dict(self.topics)})"


MetadataImage.EMPTY = MetadataImage(-1)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class MetadataDelta:
    changed_topics: tuple[str, ...] = ()
    deleted_topics: tuple[str, ...] = ()
