"""Coordinator records and their framing in the log (Kafka's `CoordinatorRecordSerde`).

Kafka frames a coordinator record as: key = int16 record type followed by the key struct; value =
int16 value version followed by the value struct, or no value at all (a tombstone). The framing
here is Kafka's; the struct bytes are canonical JSON, a stand-in until a shard brings its own
schemas. The loader skips a record type it does not know, with Kafka's warning.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["CoordinatorRecord", "RecordSerde", "UnknownRecordTypeError"]


@dataclass(frozen=True, slots=True)
class CoordinatorRecord:
    record_type: int
    key: Mapping[str, Any]
    value: Mapping[str, Any] | None  # None is a tombstone
    value_version: int = 0

    @property
    def is_tombstone(self) -> bool:
        return self.value is None

    def __repr__(self) -> str:
        value = "null" if self.value is None else dict(self.value)
        return (f"CoordinatorRecord(type={self.record_type}, key={dict(self.key)}, "
                f"value={value})")


class UnknownRecordTypeError(Exception):
    def __init__(self, unknown_type: int) -> None:
        self.unknown_type = unknown_type
        super().__init__(f"Unknown record type {unknown_type}")


# What `json.dumps(data, sort_keys=True, separators=(",", ":"))` uses, built once instead of
# once per call (the serde runs for every record written).
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"))
# The encoder's own string escaping (ensure_ascii), for the one-string-field struct below.
_ESCAPE = json.encoder.encode_basestring_ascii
_INT16 = struct.Struct(">h").pack


def _struct_bytes(data: Mapping[str, Any]) -> bytes:
    if type(data) is dict and len(data) == 1:
        # One string field (the key-value shard's structs): the same bytes as the encoder,
        # '{"name":"value"}' escaped the same way, without its general machinery.
        for name, value in data.items():
            if type(name) is str and type(value) is str:
                return ("{" + _ESCAPE(name) + ":" + _ESCAPE(value) + "}").encode()
    return _ENCODER.encode(data).encode()


class RecordSerde:
    """Serialises `CoordinatorRecord`s whose type is in `known_types` (type -> name)."""

    def __init__(self, known_types: Mapping[int, str]) -> None:
        self.known_types = dict(known_types)

    def serialize_key(self, record: CoordinatorRecord) -> bytes:
        if record.record_type not in self.known_types:
            raise ValueError(f"can't write record type {record.record_type}: this coordinator "
                             f"knows {self.known_types}")
        return _INT16(record.record_type) + _struct_bytes(record.key)

    def serialize_value(self, record: CoordinatorRecord) -> bytes | None:
        if record.value is None:
            return None
        return _INT16(record.value_version) + _struct_bytes(record.value)

    def serialize(self, record: CoordinatorRecord) -> tuple[bytes, bytes | None]:
        return self.serialize_key(record), self.serialize_value(record)

    def deserialize(self, key: bytes, value: bytes | None) -> CoordinatorRecord:
        if len(key) < 2:
            raise ValueError(f"record key of {len(key)} bytes is too short to hold a type")
        (record_type,) = struct.unpack(">h", key[:2])
        if record_type not in self.known_types:
            raise UnknownRecordTypeError(record_type)
        key_struct = json.loads(key[2:])
        if value is None:
            return CoordinatorRecord(record_type, key_struct, None)
        (version,) = struct.unpack(">h", value[:2])
        return CoordinatorRecord(record_type, key_struct, json.loads(value[2:]), version)
