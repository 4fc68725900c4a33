"""Reading Kafka-style `key=value` settings into a config dataclass's fields.

Runtime, group coordinator and consumer configs all accept Kafka's dotted keys; this is the one
place that maps them to field names and refuses an unknown key by name, listing the known ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["fields_from_properties"]


def fields_from_properties(props: Mapping[str, Any], attr_of: Mapping[str, str],
                           what: str) -> dict[str, Any]:
    """`{field name: value}` for `props`; `attr_of` maps each Kafka key to its field."""
    kwargs = {}
    for key, value in props.items():
        if key not in attr_of:
            raise ValueError(f"unknown {what} config {key!r}; known keys: "
                             f"{', '.join(sorted(attr_of))}")
        kwargs[attr_of[key]] = value
    return kwargs
