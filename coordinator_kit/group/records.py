"""The group coordinator's records in `__consumer_offsets`, byte for byte as Kafka writes them.

Two layers (Kafka's `CoordinatorRecordSerde` frames a record: the key is the 2-byte record type
and the key struct, the value the 2-byte version and the value struct, a tombstone has none):

* a small schema-driven codec for Kafka's message format. A `Message` is a table of `Field`s
  transcribed from Kafka's JSON schema (name, type, versions, nullable versions, default,
  ignorable) and encodes/decodes a plain dict keyed by the JSON field names. It covers what the
  group records and the consumer protocol use: int8-int64, (nullable) string and bytes, arrays
  of those and of structs, and flexible versions (compact lengths as unsigned varints, an empty
  tagged-fields section after every struct; tagged fields found while reading are skipped);
* `GroupCoordinatorRecordSerde`, Kafka's framing: key = int16 record type + key struct at the
  key version (= the record type), value = int16 value version + value struct, tombstone = None.

Like Kafka's generated `read`, decoding ignores trailing bytes and fills every field a version
lacks with its default, so a decoded dict always holds every field of the schema.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from coordinator_kit.runtime.records import CoordinatorRecord, RecordSerde, UnknownRecordTypeError

__all__ = [
    "Versions", "Field", "Message", "SchemaError", "BufferUnderflowError",
    "UnsupportedVersionError", "field",
    "OFFSET_COMMIT_KEY", "OFFSET_COMMIT_VALUE", "GROUP_METADATA_KEY", "GROUP_METADATA_VALUE",
    "MEMBER_METADATA", "RECORD_TYPE_NAMES", "OFFSET_COMMIT_RECORD_TYPE",
    "GROUP_METADATA_RECORD_TYPE", "GroupCoordinatorRecordSerde", "new_offset_commit_record",
    "new_offset_commit_tombstone", "new_group_metadata_record", "new_empty_group_metadata_record",
    "new_group_metadata_tombstone",
]

_MAX_VERSION = 0x7FFF
_MAX_STRING = 0x7FFF  # Kafka refuses longer strings even where the length is a varint
_INTS = {"int8": struct.Struct(">b"), "int16": struct.Struct(">h"),
         "int32": struct.Struct(">i"), "int64": struct.Struct(">q")}
_I16, _I32 = _INTS["int16"], _INTS["int32"]


class SchemaError(ValueError):
    """Data that does not fit the schema, or bytes that do not parse (Kafka's SchemaException)."""


class BufferUnderflowError(SchemaError):
    """The bytes ended before the schema did (Java's BufferUnderflowException)."""


class UnsupportedVersionError(SchemaError):
    """A version the message lacks, or a field it cannot carry (UnsupportedVersionException)."""


@dataclass(frozen=True)
class Versions:
    """An inclusive version range, parsed from Kafka's notation: "2", "0-1", "3+", "none"."""

    low: int
    high: int

    @classmethod
    def parse(cls, text: str) -> Versions:
        if text == "none":
            return cls(0, -1)
        if text.endswith("+"):
            return cls(int(text[:-1]), _MAX_VERSION)
        low, _, high = text.partition("-")
        return cls(int(low), int(high or low))

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.low <= version <= self.high


@dataclass(frozen=True)
class Field:
    """One field of a schema. `type` is Kafka's: "int32", "string", "bytes", "[]int32",
    "[]string", or "[]Name" for an array of structs whose fields are `fields`."""

    name: str
    type: str
    versions: Versions
    nullable_versions: Versions
    default: Any
    ignorable: bool = False
    fields: tuple[Field, ...] = ()
    tag: int | None = None  # a tagged field (written only when not its default)

    def default_value(self) -> Any:
        return list(self.default) if isinstance(self.default, list) else self.default


_NO_DEFAULT: Any = object()


def field(name: str, type: str, versions: str, *, nullable: str = "none",
          default: Any = _NO_DEFAULT, ignorable: bool = False,
          fields: tuple[Field, ...] = (), tag: int | None = None) -> Field:
    """A `Field` written the way the JSON schema spells it; the default follows Kafka's rules
    (0 for ints, "" for strings, b"" for bytes, [] for arrays unless the schema says otherwise;
    the schema's "null" is None here)."""
    if default is _NO_DEFAULT:
        default = ([] if type.startswith("[]") else "" if type == "string"
                   else b"" if type == "bytes" else 0)
    if type.startswith("[]") and type[2:] not in _INTS and type[2:] != "string" and not fields:
        raise ValueError(f"struct array {name} needs its fields")
    if fields and not type.startswith("[]") and tag is None:
        raise ValueError(f"struct field {name}: the codec reads plain structs only as tagged "
                         f"fields")
    return Field(name, type, Versions.parse(versions), Versions.parse(nullable), default,
                 ignorable, fields, tag)


class _Reader:
    def __init__(self, data: bytes, pos: int = 0) -> None:
        self.data, self.pos = data, pos

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise BufferUnderflowError(f"buffer underflow: wanted {n} bytes at position "
                                       f"{self.pos} of {len(self.data)}")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def int(self, codec: struct.Struct) -> int:
        return codec.unpack(self.take(codec.size))[0]

    def uvarint(self) -> int:
        value = 0
        for shift in range(0, 35, 7):
            byte = self.take(1)[0]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
        raise SchemaError("varint is too long: the most significant bit in the 5th byte is set")


def _uvarint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


@dataclass(frozen=True)
class Message:
    """A top-level schema (`"type": "data"`): its valid versions, flexible versions and fields."""

    name: str
    valid_versions: Versions
    flexible_versions: Versions
    fields: tuple[Field, ...]

    @classmethod
    def of(cls, name: str, valid: str, flexible: str, *fields: Field) -> Message:
        return cls(name, Versions.parse(valid), Versions.parse(flexible), tuple(fields))

    def _check(self, version: int, verb: str) -> bool:
        if version not in self.valid_versions:
            raise UnsupportedVersionError(f"Can't {verb} version {version} of {self.name}")
        return version in self.flexible_versions

    def encode(self, data: Mapping[str, Any], version: int) -> bytes:
        out: list[bytes] = []
        _write_struct(out, self.fields, data, version, self._check(version, "write"))
        return b"".join(out)

    def decode(self, data: bytes, version: int, offset: int = 0) -> dict[str, Any]:
        return self.decode_prefix(data, version, offset)[0]

    def decode_prefix(self, data: bytes, version: int,
                      offset: int = 0) -> tuple[dict[str, Any], int]:
        """The struct at `offset` and the position just after it (the rest is not read)."""
        flexible = self._check(version, "read")
        reader = _Reader(bytes(data), offset)
        return _read_struct(reader, self.fields, version, flexible), reader.pos

    def at_version(self, data: Mapping[str, Any], version: int) -> dict[str, Any]:
        """What a reader sees after `data` was written at `version`: every field the version
        lacks (dropped silently when ignorable) comes back as its default."""
        self._check(version, "write")
        return _project(self.fields, data, version)


def _project(fields: Sequence[Field], data: Mapping[str, Any], version: int) -> dict[str, Any]:
    _check_names(fields, data)
    out: dict[str, Any] = {}
    for f in fields:
        value = data.get(f.name, f.default_value()) if version in f.versions else f.default_value()
        if f.fields and value is not None and not f.type.startswith("[]"):
            value = _project(f.fields, value, version)
        elif f.fields and value is not None:
            value = [_project(f.fields, element, version) for element in value]
        elif isinstance(value, (bytearray, memoryview)):
            value = bytes(value)
        elif isinstance(value, (list, tuple)):
            value = list(value)
        out[f.name] = value
    return out


def _check_names(fields: Sequence[Field], data: Mapping[str, Any]) -> None:
    if not isinstance(data, Mapping):
        raise SchemaError(f"a struct must be a mapping, got {type(data).__name__}")
    unknown = set(data) - {f.name for f in fields}
    if unknown:
        raise SchemaError(f"unknown field(s) {sorted(unknown)}; the schema has "
                          f"{[f.name for f in fields]}")


def _write_struct(out: list[bytes], fields: Sequence[Field], data: Mapping[str, Any],
                  version: int, flexible: bool) -> None:
    _check_names(fields, data)
    tagged: list[tuple[Field, Any]] = []
    for f in fields:
        value = data.get(f.name, f.default_value())
        if f.tag is not None:
            if flexible and version in f.versions and value != f.default:
                tagged.append((f, value))
            continue
        if version not in f.versions:
            if not f.ignorable and value != f.default:
                raise UnsupportedVersionError(
                    f"Attempted to write a non-default {f.name} at version {version}")
            continue
        if value is None:
            if version not in f.nullable_versions:
                raise SchemaError(f"non-nullable field {f.name} was given null at version "
                                  f"{version}")
            out.append(b"\x00" if flexible else (_I16 if f.type == "string" else _I32).pack(-1))
        elif f.type.startswith("[]"):
            if not isinstance(value, (list, tuple)):
                raise SchemaError(f"field {f.name} must be a list, got {type(value).__name__}")
            out.append(_uvarint(len(value) + 1) if flexible else _I32.pack(len(value)))
            for element in value:
                if f.fields:
                    _write_struct(out, f.fields, element, version, flexible)
                else:
                    _write_scalar(out, f.name, f.type[2:], element, flexible)
        else:
            _write_scalar(out, f.name, f.type, value, flexible)
    if flexible:
        out.append(_uvarint(len(tagged)))
        for f, value in sorted(tagged, key=lambda t: t[0].tag or 0):
            out.append(_uvarint(f.tag or 0))
            body = _tagged_body(f, value, version)
            out.append(_uvarint(len(body)))
            out.append(body)


def _tagged_body(f: Field, value: Any, version: int) -> bytes:
    """A tagged field's bytes: a struct (preceded by its presence byte, 1, when nullable, as
    Kafka's generated `write` does), or a scalar."""
    part: list[bytes] = []
    if f.fields and not f.type.startswith("[]"):
        if version in f.nullable_versions:
            part.append(b"\x01")
        _write_struct(part, f.fields, value, version, True)
    else:
        _write_scalar(part, f.name, f.type, value, True)
    return b"".join(part)


def _write_scalar(out: list[bytes], name: str, kind: str, value: Any, flexible: bool) -> None:
    if kind in _INTS:
        if not isinstance(value, int) or isinstance(value, bool):
            raise SchemaError(f"field {name} must be an {kind}, got {value!r}")
        try:
            out.append(_INTS[kind].pack(value))
        except struct.error:
            raise SchemaError(f"field {name} = {value} does not fit an {kind}") from None
        return
    if kind == "uuid":  # 16 bytes; the kit holds Kafka's printed form (`Uuid.toString`)
        out.append(uuid_bytes(name, value))
        return
    if kind == "string":
        if not isinstance(value, str):
            raise SchemaError(f"field {name} must be a string, got {value!r}")
        raw = value.encode("utf-8")
        if len(raw) > _MAX_STRING:
            raise SchemaError(f"'{name}' field is too long to be serialized")
        out.append(_uvarint(len(raw) + 1) if flexible else _I16.pack(len(raw)))
    elif kind == "bytes":
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise SchemaError(f"field {name} must be bytes, got {type(value).__name__}")
        raw = bytes(value)
        out.append(_uvarint(len(raw) + 1) if flexible else _I32.pack(len(raw)))
    else:
        raise SchemaError(f"field {name} has a type this codec does not know: {kind}")
    out.append(raw)


def _read_struct(reader: _Reader, fields: Sequence[Field], version: int,
                 flexible: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields:
        if version not in f.versions or f.tag is not None:
            out[f.name] = f.default_value()
        elif f.type.startswith("[]"):
            count = reader.uvarint() - 1 if flexible else reader.int(_I32)
            if count < 0:
                out[f.name] = _null(f, version)
            elif count > len(reader.data) - reader.pos:
                raise SchemaError(f"Tried to allocate a collection of size {count}, but there "
                                  f"are only {len(reader.data) - reader.pos} bytes remaining.")
            elif f.fields:
                out[f.name] = [_read_struct(reader, f.fields, version, flexible)
                               for _ in range(count)]
            else:
                out[f.name] = [_read_scalar(reader, f, f.type[2:], version, flexible, False)
                               for _ in range(count)]
        else:
            out[f.name] = _read_scalar(reader, f, f.type, version, flexible, True)
    if flexible:
        known = {f.tag: f for f in fields if f.tag is not None and version in f.versions}
        for _ in range(reader.uvarint()):  # tagged fields: the known ones read, others skipped
            tag = reader.uvarint()
            body = reader.take(reader.uvarint())
            f = known.get(tag)
            if f is not None:
                out[f.name] = _read_tagged(f, body, version)
    return out


def _read_tagged(f: Field, body: bytes, version: int) -> Any:
    reader = _Reader(body)
    if f.fields and not f.type.startswith("[]"):
        if version in f.nullable_versions and reader.uvarint() == 0:
            return None
        return _read_struct(reader, f.fields, version, True)
    return _read_scalar(reader, f, f.type, version, True, True)


def _null(f: Field, version: int) -> None:
    if version not in f.nullable_versions:
        raise SchemaError(f"non-nullable field {f.name} was serialized as null")
    return None


def _read_scalar(reader: _Reader, f: Field, kind: str, version: int, flexible: bool,
                 may_be_null: bool) -> Any:
    if kind in _INTS:
        return reader.int(_INTS[kind])
    if kind == "uuid":
        return uuid_string(reader.take(16))
    if flexible:
        length = reader.uvarint() - 1
    else:
        length = reader.int(_I16 if kind == "string" else _I32)
    if length < 0:
        return _null(f, version) if may_be_null else _null_element(f)
    if kind == "string":
        if length > _MAX_STRING:
            raise SchemaError(f"string field {f.name} had invalid length {length}")
        try:
            return reader.take(length).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SchemaError(f"string field {f.name} is not valid UTF-8: {exc}") from None
    return reader.take(length)


def _null_element(f: Field) -> None:
    raise SchemaError(f"an element of {f.name} was serialized as null")


# --- Schemas, transcribed from group-coordinator/src/main/resources/common/message/ ----------

OFFSET_COMMIT_KEY = Message.of(
    "OffsetCommitKey", "0-1", "none",
    field("group", "string", "0-1"),
    field("topic", "string", "0-1"),
    field("partition", "int32", "0-1"))

OFFSET_COMMIT_VALUE = Message.of(
    "OffsetCommitValue", "0-4", "4+",
    field("offset", "int64", "0+"),
    field("leaderEpoch", "int32", "3+", default=-1, ignorable=True),
    field("metadata", "string", "0+"),
    field("commitTimestamp", "int64", "0+"),
    field("expireTimestamp", "int64", "1", default=-1, ignorable=True))

GROUP_METADATA_KEY = Message.of(
    "GroupMetadataKey", "2", "none",
    field("group", "string", "2"))

MEMBER_METADATA: tuple[Field, ...] = (
    field("memberId", "string", "0+"),
    field("groupInstanceId", "string", "3+", nullable="3+", default=None, ignorable=True),
    field("clientId", "string", "0+"),
    field("clientHost", "string", "0+"),
    field("rebalanceTimeout", "int32", "1+", default=-1, ignorable=True),
    field("sessionTimeout", "int32", "0+"),
    field("subscription", "bytes", "0+"),
    field("assignment", "bytes", "0+"),
)

GROUP_METADATA_VALUE = Message.of(
    "GroupMetadataValue", "0-4", "4+",
    field("protocolType", "string", "0+"),
    field("generation", "int32", "0+"),
    field("protocol", "string", "0+", nullable="0+"),
    field("leader", "string", "0+", nullable="0+"),
    field("currentStateTimestamp", "int64", "2+", default=-1, ignorable=True),
    field("members", "[]MemberMetadata", "0+", fields=MEMBER_METADATA))

# --- Framing (CoordinatorRecordSerde + GroupCoordinatorRecordSerde) ---------------------------

OFFSET_COMMIT_RECORD_TYPE = 1  # type 0 is the same key at version 0; new code writes 1
GROUP_METADATA_RECORD_TYPE = 2

# Every type Kafka's GroupCoordinatorRecordSerde knows (the key schema's only valid version).
RECORD_TYPE_NAMES: dict[int, str] = {
    0: "OffsetCommit", 1: "OffsetCommit", 2: "GroupMetadata",
    3: "ConsumerGroupMetadata", 4: "ConsumerGroupPartitionMetadata",
    5: "ConsumerGroupMemberMetadata", 6: "ConsumerGroupTargetAssignmentMetadata",
    7: "ConsumerGroupTargetAssignmentMember", 8: "ConsumerGroupCurrentMemberAssignment",
    9: "ShareGroupPartitionMetadata", 10: "ShareGroupMemberMetadata", 11: "ShareGroupMetadata",
    12: "ShareGroupTargetAssignmentMetadata", 13: "ShareGroupTargetAssignmentMember",
    14: "ShareGroupCurrentMemberAssignment", 15: "ShareGroupStatePartitionMetadata",
}

_SCHEMAS: dict[int, tuple[Message, Message]] = {
    0: (OFFSET_COMMIT_KEY, OFFSET_COMMIT_VALUE),
    1: (OFFSET_COMMIT_KEY, OFFSET_COMMIT_VALUE),
    2: (GROUP_METADATA_KEY, GROUP_METADATA_VALUE),
}


class GroupCoordinatorRecordSerde(RecordSerde):
    """Kafka's framing with the classic group records (types 0-2).

    Types 3-8 are the KIP-848 consumer group records (schemas at the end of this module).
    Kafka's serde also reads types 9-15 (share groups); the kit does not model them, so here
    they raise `UnknownRecordTypeError` and the loader skips them with Kafka's warning, as a
    broker would skip a type it has never heard of.
    """

    def __init__(self) -> None:
        super().__init__({t: RECORD_TYPE_NAMES[t] for t in _SCHEMAS})

    def _schemas(self, record_type: int) -> tuple[Message, Message]:
        if record_type not in _SCHEMAS:
            raise ValueError(f"can't write record type {record_type}: this coordinator "
                             f"knows {self.known_types}")
        return _SCHEMAS[record_type]

    def serialize_key(self, record: CoordinatorRecord) -> bytes:
        key_schema, _ = self._schemas(record.record_type)
        return _I16.pack(record.record_type) + key_schema.encode(record.key, record.record_type)

    def serialize_value(self, record: CoordinatorRecord) -> bytes | None:
        if record.value is None:
            return None
        _, value_schema = self._schemas(record.record_type)
        return _I16.pack(record.value_version) + value_schema.encode(record.value,
                                                                     record.value_version)

    def serialize(self, record: CoordinatorRecord) -> tuple[bytes, bytes | None]:
        """Key and value bytes. An offset commit (the record a busy group writes most) takes a
        direct path giving the same bytes as the schema codec; anything it does not recognise
        goes through the codec, which also raises the codec's errors."""
        if record.record_type == OFFSET_COMMIT_RECORD_TYPE:
            fast = _offset_commit_bytes(record)
            if fast is not None:
                return fast
        return self.serialize_key(record), self.serialize_value(record)

    def deserialize(self, key: bytes, value: bytes | None) -> CoordinatorRecord:
        record_type = _read_version(key, "key")
        if record_type not in _SCHEMAS:
            raise UnknownRecordTypeError(record_type)
        key_schema, value_schema = _SCHEMAS[record_type]
        key_struct = _read_message(key_schema, key, record_type, "key")
        if value is None:
            return CoordinatorRecord(record_type, key_struct, None)
        version = _read_version(value, "value")
        return CoordinatorRecord(record_type, key_struct,
                                 _read_message(value_schema, value, version, "value"), version)


_KEY_CACHE: dict[tuple[str, str, int], bytes] = {}
_V3_HEAD = struct.Struct(">hqih")  # value version 3, offset, leaderEpoch, metadata length
_V1_HEAD = struct.Struct(">hqh")  # value version 1, offset, metadata length
_I64 = _INTS["int64"]
_I64X2 = struct.Struct(">qq")


def _offset_commit_bytes(record: CoordinatorRecord) -> tuple[bytes, bytes | None] | None:
    """OffsetCommit key (type 1) and value (v3, v1 or a tombstone) packed directly, or None when
    the record is not one of the plain shapes `new_offset_commit_record` makes."""
    key = record.key
    if type(key) is not dict or len(key) != 3:
        return None
    group, topic, partition = key.get("group"), key.get("topic"), key.get("partition")
    if type(group) is not str or type(topic) is not str or type(partition) is not int:
        return None
    cache_key = (group, topic, partition)
    key_bytes = _KEY_CACHE.get(cache_key)
    if key_bytes is None:
        g, t = group.encode("utf-8"), topic.encode("utf-8")
        if len(g) > _MAX_STRING or len(t) > _MAX_STRING or not -2**31 <= partition < 2**31:
            return None
        key_bytes = (_I16.pack(OFFSET_COMMIT_RECORD_TYPE) + _I16.pack(len(g)) + g
                     + _I16.pack(len(t)) + t + _I32.pack(partition))
        if len(_KEY_CACHE) >= 100_000:
            _KEY_CACHE.clear()
        _KEY_CACHE[cache_key] = key_bytes
    value = record.value
    if value is None:
        return key_bytes, None
    if type(value) is not dict or len(value) != 5:
        return None
    offset, epoch, metadata = value.get("offset"), value.get("leaderEpoch"), value.get("metadata")
    ts, expire = value.get("commitTimestamp"), value.get("expireTimestamp")
    if type(offset) is not int or type(epoch) is not int or type(metadata) is not str \
            or type(ts) is not int or type(expire) is not int:
        return None
    meta = metadata.encode("utf-8")
    if len(meta) > _MAX_STRING:
        return None
    try:
        if record.value_version == 3 and expire == -1:
            return key_bytes, _V3_HEAD.pack(3, offset, epoch, len(meta)) + meta + _I64.pack(ts)
        if record.value_version == 1:  # v1 has no leaderEpoch (ignorable: dropped)
            return key_bytes, _V1_HEAD.pack(1, offset, len(meta)) + meta + _I64X2.pack(ts, expire)
    except struct.error:
        return None  # out of range: the codec raises its error
    return None


def _read_version(buffer: bytes, name: str) -> int:
    if len(buffer) < 2:
        raise RuntimeError(f"Could not read version from {name}'s buffer.")
    return _I16.unpack_from(buffer)[0]


def _read_message(schema: Message, buffer: bytes, version: int, name: str) -> dict[str, Any]:
    try:
        return schema.decode(buffer, version, offset=2)
    except SchemaError as exc:
        raise RuntimeError(f"Could not read record with version {version} from {name}'s buffer "
                           f"due to: {exc}.") from exc


# --- GroupCoordinatorRecordHelpers ------------------------------------------------------------

def new_offset_commit_record(group_id: str, topic: str, partition: int, offset: int,
                             leader_epoch: int | None, metadata: str, commit_timestamp: int,
                             expire_timestamp: int | None = None) -> CoordinatorRecord:
    """Key type 1; value v1 when an expire timestamp is given (which drops the leader epoch
    from the bytes: a reload sees -1), else v3, as Kafka writes today
    (`GroupCoordinatorRecordHelpers.newOffsetCommitRecord`)."""
    value = {"offset": offset, "leaderEpoch": -1 if leader_epoch is None else leader_epoch,
             "metadata": metadata, "commitTimestamp": commit_timestamp,
             "expireTimestamp": -1 if expire_timestamp is None else expire_timestamp}
    return CoordinatorRecord(OFFSET_COMMIT_RECORD_TYPE, _offset_key(group_id, topic, partition),
                             value, 1 if expire_timestamp is not None else 3)


def new_offset_commit_tombstone(group_id: str, topic: str, partition: int) -> CoordinatorRecord:
    return CoordinatorRecord(OFFSET_COMMIT_RECORD_TYPE, _offset_key(group_id, topic, partition),
                             None)


def _offset_key(group_id: str, topic: str, partition: int) -> dict[str, Any]:
    return {"group": group_id, "topic": topic, "partition": partition}


def new_group_metadata_record(group_id: str, protocol_type: str | None, generation: int,
                              protocol: str | None, leader: str | None,
                              current_state_timestamp: int | None,
                              members: Sequence[Mapping[str, Any]]) -> CoordinatorRecord:
    """A classic group's GroupMetadata record, value v3 (the highest non-flexible version).

    `members` are dicts with MemberMetadata's field names; `groupInstanceId` (None) and
    `rebalanceTimeout` (-1) may be left out. Like Kafka, a member without subscription or
    assignment bytes is refused (RuntimeError: IllegalStateException).
    """
    rows = []
    for member in members:
        if member.get("subscription") is None:
            raise RuntimeError("Attempted to write non-empty group metadata with no defined "
                               "protocol.")
        if member.get("assignment") is None:
            raise RuntimeError(f"Attempted to write member {member.get('memberId')} of group "
                               f"{group_id} with no assignment.")
        rows.append(_project(MEMBER_METADATA, member, 3))
    return _group_metadata(group_id, "" if protocol_type is None else protocol_type, generation,
                           protocol, leader, current_state_timestamp, rows)


def new_empty_group_metadata_record(group_id: str,
                                    current_state_timestamp: int | None = None
                                    ) -> CoordinatorRecord:
    """The record an emptied classic group writes: no protocol, generation 0, no members."""
    return _group_metadata(group_id, "", 0, None, None, current_state_timestamp, [])


def _group_metadata(group_id: str, protocol_type: str, generation: int, protocol: str | None,
                    leader: str | None, current_state_timestamp: int | None,
                    members: list[dict[str, Any]]) -> CoordinatorRecord:
    value = {"protocolType": protocol_type, "generation": generation, "protocol": protocol,
             "leader": leader,
             "currentStateTimestamp": (-1 if current_state_timestamp is None
                                       else current_state_timestamp),
             "members": members}
    return CoordinatorRecord(GROUP_METADATA_RECORD_TYPE, {"group": group_id}, value, 3)


def new_group_metadata_tombstone(group_id: str) -> CoordinatorRecord:
    return CoordinatorRecord(GROUP_METADATA_RECORD_TYPE, {"group": group_id}, None)


# --- KIP-848 consumer group records (types 3-8) ------------------------------------------------
# Transcribed from group-coordinator/src/main/resources/common/message/ConsumerGroup*.json; the
# helpers follow GroupCoordinatorRecordHelpers.newConsumerGroup*Record. Topic ids are Kafka's
# `Uuid` in its printed form (22 characters of URL-safe base64); on the wire a `uuid` is 16 bytes.
# Kafka writes the topics of an assignment in HashMap order; the kit sorts them (by topic id, then
# partition) so the same state always gives the same bytes.

import base64 as _base64  # noqa: E402  (kept with the section that needs it)


def uuid_string(raw: bytes) -> str:
    """Kafka's `Uuid.toString()`: URL-safe base64 of the 16 bytes, without padding."""
    return _base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def uuid_bytes(name: str, value: Any) -> bytes:
    """The 16 bytes of a `Uuid` given in its printed form (`Uuid.fromString`)."""
    if not isinstance(value, str):
        raise SchemaError(f"field {name} must be a Uuid string, got {value!r}")
    try:
        raw = _base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except ValueError:
        raw = b""
    if len(raw) != 16:
        raise SchemaError(f"field {name} = {value!r} is not a Uuid (22 characters of URL-safe "
                          f"base64 for 16 bytes)")
    return raw


CONSUMER_GROUP_METADATA_RECORD_TYPE = 3
CONSUMER_GROUP_PARTITION_METADATA_RECORD_TYPE = 4
CONSUMER_GROUP_MEMBER_METADATA_RECORD_TYPE = 5
CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_RECORD_TYPE = 6
CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_RECORD_TYPE = 7
CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_RECORD_TYPE = 8

_TOPIC_PARTITIONS: tuple[Field, ...] = (
    field("TopicId", "uuid", "0+", default="AAAAAAAAAAAAAAAAAAAAAA"),
    field("Partitions", "[]int32", "0+"))


def _group_key(name: str, version: int) -> Message:
    return Message.of(name, str(version), "none", field("GroupId", "string", str(version)))


def _member_key(name: str, version: int) -> Message:
    return Message.of(name, str(version), "none", field("GroupId", "string", str(version)),
                      field("MemberId", "string", str(version)))


CONSUMER_GROUP_METADATA_KEY = _group_key("ConsumerGroupMetadataKey", 3)
CONSUMER_GROUP_METADATA_VALUE = Message.of(
    "ConsumerGroupMetadataValue", "0", "0+", field("Epoch", "int32", "0+"))

CONSUMER_GROUP_PARTITION_METADATA_KEY = _group_key("ConsumerGroupPartitionMetadataKey", 4)
CONSUMER_GROUP_PARTITION_METADATA_VALUE = Message.of(
    "ConsumerGroupPartitionMetadataValue", "0", "0+",
    field("Topics", "[]TopicMetadata", "0+", fields=(
        field("TopicId", "uuid", "0+", default="AAAAAAAAAAAAAAAAAAAAAA"),
        field("TopicName", "string", "0+"),
        field("NumPartitions", "int32", "0+"),
        field("PartitionMetadata", "[]PartitionMetadata", "0+", fields=(
            field("Partition", "int32", "0+"),
            field("Racks", "[]string", "0+"))))))

CONSUMER_GROUP_MEMBER_METADATA_KEY = _member_key("ConsumerGroupMemberMetadataKey", 5)
# ClassicMemberMetadata (tag 0) is a tagged field, written only for members that use the classic
# protocol inside a consumer group (null for ConsumerGroupHeartbeat members).
CONSUMER_GROUP_MEMBER_METADATA_VALUE = Message.of(
    "ConsumerGroupMemberMetadataValue", "0", "0+",
    field("InstanceId", "string", "0+", nullable="0+"),
    field("RackId", "string", "0+", nullable="0+"),
    field("ClientId", "string", "0+"),
    field("ClientHost", "string", "0+"),
    field("SubscribedTopicNames", "[]string", "0+"),
    field("SubscribedTopicRegex", "string", "0+", nullable="0+"),
    field("RebalanceTimeoutMs", "int32", "0+", default=-1),
    field("ServerAssignor", "string", "0+", nullable="0+"),
    field("ClassicMemberMetadata", "ClassicMemberMetadata", "0+", nullable="0+", default=None,
          tag=0, fields=(
              field("SessionTimeoutMs", "int32", "0+"),
              field("SupportedProtocols", "[]ClassicProtocol", "0+", fields=(
                  field("Name", "string", "0+"),
                  field("Metadata", "bytes", "0+"))))))

CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY = _group_key(
    "ConsumerGroupTargetAssignmentMetadataKey", 6)
CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = Message.of(
    "ConsumerGroupTargetAssignmentMetadataValue", "0", "0+",
    field("AssignmentEpoch", "int32", "0+"))

CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY = _member_key(
    "ConsumerGroupTargetAssignmentMemberKey", 7)
CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = Message.of(
    "ConsumerGroupTargetAssignmentMemberValue", "0", "0+",
    field("TopicPartitions", "[]TopicPartition", "0+", fields=_TOPIC_PARTITIONS))

CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY = _member_key(
    "ConsumerGroupCurrentMemberAssignmentKey", 8)
CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = Message.of(
    "ConsumerGroupCurrentMemberAssignmentValue", "0", "0+",
    field("MemberEpoch", "int32", "0+"),
    field("PreviousMemberEpoch", "int32", "0+"),
    field("State", "int8", "0+"),
    field("AssignedPartitions", "[]TopicPartitions", "0+", fields=_TOPIC_PARTITIONS),
    field("PartitionsPendingRevocation", "[]TopicPartitions", "0+", fields=_TOPIC_PARTITIONS))

_SCHEMAS.update({
    3: (CONSUMER_GROUP_METADATA_KEY, CONSUMER_GROUP_METADATA_VALUE),
    4: (CONSUMER_GROUP_PARTITION_METADATA_KEY, CONSUMER_GROUP_PARTITION_METADATA_VALUE),
    5: (CONSUMER_GROUP_MEMBER_METADATA_KEY, CONSUMER_GROUP_MEMBER_METADATA_VALUE),
    6: (CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
        CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE),
    7: (CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY, CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE),
    8: (CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
        CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE),
})


def topic_partitions_value(assignment: Mapping[str, Any]) -> list[dict[str, Any]]:
    """An assignment (topic id -> partitions) as the records' TopicPartitions list, sorted."""
    return [{"TopicId": topic_id, "Partitions": sorted(parts)}
            for topic_id, parts in sorted(assignment.items()) if parts]


def assignment_from_value(rows: Sequence[Mapping[str, Any]] | None) -> dict[str, frozenset[int]]:
    """Kafka's `Utils.assignmentFromTopicPartitions`: the records' list back to a mapping."""
    return {row["TopicId"]: frozenset(row["Partitions"]) for row in rows or ()}


def new_consumer_group_member_subscription_record(
        group_id: str, member_id: str, instance_id: str | None, rack_id: str | None,
        client_id: str, client_host: str, subscribed_topic_names: Sequence[str],
        subscribed_topic_regex: str | None, rebalance_timeout_ms: int,
        server_assignor: str | None,
        classic_member_metadata: tuple[int, Sequence[tuple[str, bytes]]] | None = None
        ) -> CoordinatorRecord:
    """ConsumerGroupMemberMetadata (type 5, value v0); topic names sorted as Kafka sorts them.
    `classic_member_metadata` is (session timeout, [(protocol name, metadata), ...]) for a
    member that uses the classic protocol."""
    value: dict[str, Any] = {
        "InstanceId": instance_id, "RackId": rack_id, "ClientId": client_id,
        "ClientHost": client_host, "SubscribedTopicNames": sorted(subscribed_topic_names),
        "SubscribedTopicRegex": subscribed_topic_regex,
        "RebalanceTimeoutMs": rebalance_timeout_ms, "ServerAssignor": server_assignor,
        "ClassicMemberMetadata": None}
    if classic_member_metadata is not None:
        session, protocols = classic_member_metadata
        value["ClassicMemberMetadata"] = {
            "SessionTimeoutMs": session,
            "SupportedProtocols": [{"Name": n, "Metadata": m} for n, m in protocols]}
    return CoordinatorRecord(
        CONSUMER_GROUP_MEMBER_METADATA_RECORD_TYPE, {"GroupId": group_id, "MemberId": member_id},
        value, 0)


def new_consumer_group_member_subscription_tombstone(group_id: str,
                                                     member_id: str) -> CoordinatorRecord:
    return CoordinatorRecord(CONSUMER_GROUP_MEMBER_METADATA_RECORD_TYPE,
                             {"GroupId": group_id, "MemberId": member_id}, None)


def new_consumer_group_subscription_metadata_record(
        group_id: str, topics: Mapping[str, tuple[str, int]]) -> CoordinatorRecord:
    """ConsumerGroupPartitionMetadata (type 4): `topics` maps a topic name to (topic id,
    partitions). Kafka 4.0 writes no rack information (PartitionMetadata stays empty)."""
    rows = [{"TopicId": topic_id, "TopicName": name, "NumPartitions": n, "PartitionMetadata": []}
            for name, (topic_id, n) in sorted(topics.items())]
    return CoordinatorRecord(CONSUMER_GROUP_PARTITION_METADATA_RECORD_TYPE, {"GroupId": group_id},
                             {"Topics": rows}, 0)


def new_consumer_group_subscription_metadata_tombstone(group_id: str) -> CoordinatorRecord:
    return CoordinatorRecord(CONSUMER_GROUP_PARTITION_METADATA_RECORD_TYPE, {"GroupId": group_id},
                             None)


def new_consumer_group_epoch_record(group_id: str, epoch: int) -> CoordinatorRecord:
    return CoordinatorRecord(CONSUMER_GROUP_METADATA_RECORD_TYPE, {"GroupId": group_id},
                             {"Epoch": epoch}, 0)


def new_consumer_group_epoch_tombstone(group_id: str) -> CoordinatorRecord:
    return CoordinatorRecord(CONSUMER_GROUP_METADATA_RECORD_TYPE, {"GroupId": group_id}, None)


def new_consumer_group_target_assignment_record(
        group_id: str, member_id: str, partitions: Mapping[str, Any]) -> CoordinatorRecord:
    return CoordinatorRecord(CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_RECORD_TYPE,
                             {"GroupId": group_id, "MemberId": member_id},
                             {"TopicPartitions": topic_partitions_value(partitions)}, 0)


def new_consumer_group_target_assignment_tombstone(group_id: str,
                                                   member_id: str) -> CoordinatorRecord:
    return CoordinatorRecord(CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_RECORD_TYPE,
                             {"GroupId": group_id, "MemberId": member_id}, None)


def new_consumer_group_target_assignment_epoch_record(group_id: str,
                                                      assignment_epoch: int) -> CoordinatorRecord:
    return CoordinatorRecord(CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_RECORD_TYPE,
                             {"GroupId": group_id}, {"AssignmentEpoch": assignment_epoch}, 0)


def new_consumer_group_target_assignment_epoch_tombstone(group_id: str) -> CoordinatorRecord:
    return CoordinatorRecord(CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_RECORD_TYPE,
                             {"GroupId": group_id}, None)


def new_consumer_group_current_assignment_record(
        group_id: str, member_id: str, member_epoch: int, previous_member_epoch: int,
        state: int, assigned: Mapping[str, Any], pending_revocation: Mapping[str, Any]
        ) -> CoordinatorRecord:
    return CoordinatorRecord(
        CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_RECORD_TYPE,
        {"GroupId": group_id, "MemberId": member_id},
        {"MemberEpoch": member_epoch, "PreviousMemberEpoch": previous_member_epoch,
         "State": state, "AssignedPartitions": topic_partitions_value(assigned),
         "PartitionsPendingRevocation": topic_partitions_value(pending_revocation)}, 0)


def new_consumer_group_current_assignment_tombstone(group_id: str,
                                                    member_id: str) -> CoordinatorRecord:
    return CoordinatorRecord(CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_RECORD_TYPE,
                             {"GroupId": group_id, "MemberId": member_id}, None)
