"""A small key-value coordinator shard, used to show the runtime on its own.

It keeps its hard state (a map) in a `TimelineHashMap`, changes it only by replaying records, can
expire a key with a coordinator timer (a tombstone written when the timer fires) and remembers the
topics of the latest metadata image. The group coordinator shard follows the same pattern with
groups and offsets instead of keys.
"""

from __future__ import annotations

import struct
from typing import Any

from ..timeline import TimelineHashMap
from ..trace import LogContext
from .metadata import MetadataDelta, MetadataImage
from .records import CoordinatorRecord, RecordSerde, UnknownRecordTypeError
from .shard import CoordinatorResult, CoordinatorShard, CoordinatorShardBuilder, CoordinatorTimer

__all__ = ["KeyValueShard", "KeyValueShardBuilder", "KV_SERDE", "KV_BINARY_SERDE",
           "KeyValueRecordSerde", "KV_RECORD_TYPE"]

KV_RECORD_TYPE = 0
KV_SERDE = RecordSerde({KV_RECORD_TYPE: "KeyValue"})

_TYPE_AND_LENGTH = struct.Struct(">hH")  # int16 type (or version) + uint16 string length


class KeyValueRecordSerde(RecordSerde):
    """The key-value record in a compact binary struct, still in Kafka's framing.

    key = int16 record type 0 + the key struct, one string (uint16 length + UTF-8 bytes, as
    Kafka's non-flexible STRING); value = int16 value version + the value struct, one string the
    same way; a tombstone has no value. `KV_SERDE` (JSON structs) stays the sandbox's default;
    this one is what a shard with its own schemas would do, and `benchmarks/runtime.py` measures
    both.
    """

    def __init__(self) -> None:
        super().__init__({KV_RECORD_TYPE: "KeyValue"})

    def serialize_key(self, record: CoordinatorRecord) -> bytes:
        if record.record_type != KV_RECORD_TYPE:
            return super().serialize_key(record)  # refuses the unknown type
        return _framed(record.record_type, record.key["key"])

    def serialize_value(self, record: CoordinatorRecord) -> bytes | None:
        if record.value is None:
            return None
        return _framed(record.value_version, record.value["value"])

    def serialize(self, record: CoordinatorRecord) -> tuple[bytes, bytes | None]:
        return self.serialize_key(record), self.serialize_value(record)

    def deserialize(self, key: bytes, value: bytes | None) -> CoordinatorRecord:
        if len(key) < 2:
            raise ValueError(f"record key of {len(key)} bytes is too short to hold a type")
        (record_type,) = struct.unpack_from(">h", key)
        if record_type not in self.known_types:
            raise UnknownRecordTypeError(record_type)
        key_struct = {"key": _unframed(key, "key")}
        if value is None:
            return CoordinatorRecord(record_type, key_struct, None)
        (version,) = struct.unpack_from(">h", value)
        return CoordinatorRecord(record_type, key_struct, {"value": _unframed(value, "value")},
                                 version)


def _framed(head: int, text: str) -> bytes:
    data = text.encode()
    if len(data) > 0xFFFF:
        raise ValueError(f"a string of {len(data)} bytes does not fit a uint16 length")
    return _TYPE_AND_LENGTH.pack(head, len(data)) + data


def _unframed(data: bytes, what: str) -> str:
    if len(data) < 4:
        raise ValueError(f"record {what} of {len(data)} bytes is too short for its struct")
    _, n = _TYPE_AND_LENGTH.unpack_from(data)
    if len(data) != 4 + n:
        raise ValueError(f"record {what} struct says {n} bytes, {len(data) - 4} follow")
    return data[4:].decode()


KV_BINARY_SERDE = KeyValueRecordSerde()


def kv_record(key: str, value: str | None) -> CoordinatorRecord:
    return CoordinatorRecord(KV_RECORD_TYPE, {"key": key},
                             None if value is None else {"value": value})


class KeyValueShard(CoordinatorShard):
    def __init__(self, log: LogContext, store: TimelineHashMap[str, str],
                 timer: CoordinatorTimer) -> None:
        self.log = log
        self.store = store
        self.timer = timer
        self.image: MetadataImage = MetadataImage.EMPTY  # type: ignore[attr-defined]
        self.loaded = False

    # -- write handlers: compute records and a response, never mutate -------------------------

    def put(self, key: str, value: str) -> CoordinatorResult[str]:
        if not key or value is None:
            raise ValueError(f"put needs a non-empty key and a value, got {key!r}={value!r}")
        previous = self.store.get(key)
        return CoordinatorResult([kv_record(key, value)],
                                 f"{key}={value}" + ("" if previous is None else
                                                     f" (was {previous})"))

    def delete(self, key: str) -> CoordinatorResult[str]:
        if key not in self.store:
            return CoordinatorResult([], f"{key} absent")
        return CoordinatorResult([kv_record(key, None)], f"{key} deleted")

    def put_all(self, items: dict[str, str]) -> CoordinatorResult[int]:
        return CoordinatorResult([kv_record(k, v) for k, v in sorted(items.items())], len(items))

    def expire_after(self, key: str, delay_ms: int) -> CoordinatorResult[str]:
        """Arm timer `expire-<key>`: when it fires, a tombstone for the key is written."""
        def expire() -> CoordinatorResult[None]:
            if key in self.store:
                return CoordinatorResult([kv_record(key, None)])
            return CoordinatorResult([])
        self.timer.schedule(f"expire-{key}", delay_ms, False, expire)
        return CoordinatorResult([], f"expire-{key} in {delay_ms}ms")

    # -- read handlers: read at the committed offset ------------------------------------------

    def get(self, key: str, committed_offset: int) -> str | None:
        return self.store.get(key, epoch=committed_offset)

    def snapshot(self, committed_offset: int | None = None) -> dict[str, str]:
        return dict(sorted(self.store.items(epoch=committed_offset)))

    # -- replay: the only place the hard state changes ----------------------------------------

    def replay(self, offset: int, producer_id: int, producer_epoch: int, record: Any) -> None:
        key = record.key["key"]
        if record.value is None:
            self.store.remove(key)
        else:
            self.store.put(key, record.value["value"])

    def on_loaded(self, image: MetadataImage) -> None:
        self.loaded = True
        self.image = image

    def on_unloaded(self) -> None:
        self.loaded = False

    def on_new_metadata_image(self, image: MetadataImage, delta: MetadataDelta) -> None:
        self.image = image


class KeyValueShardBuilder(CoordinatorShardBuilder[KeyValueShard]):
    def build(self) -> KeyValueShard:
        self._require()
        assert self.snapshot_registry is not None and self.log is not None
        assert self.timer is not None
        return KeyValueShard(self.log, TimelineHashMap(self.snapshot_registry), self.timer)
