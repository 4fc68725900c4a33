"""Kafka's request framing: a 4-byte size, then the request header, then the body.

The server reads a request the way Kafka's broker does, in Kafka's order and with its errors:

1. the size (`NetworkReceive.readFrom`): negative or over `socket.request.max.bytes` and the
   connection closes (`InvalidReceiveException`, logged by the `Selector`);
2. the header (`RequestHeader.parse`): api key and version first, then, because the key says
   which header version follows, correlation id, client id and (header v2, the flexible
   versions) tagged fields. An api key `ApiKeys.forId` does not know, or a header cut short, is
   "Error parsing request header. Our best guess of the apiKey is: K";
3. whether the API and version are enabled (`SocketServer.Processor.parseRequestHeader`);
4. the body (`RequestContext.parseRequest`, `AbstractRequest.parseRequest`): a body that runs
   past the end of the frame or carries null in a non-nullable field is "Error getting request
   for apiKey: ...". Bytes left over after a complete body are not an error: Kafka reads the
   fields it expects and never checks that the buffer is used up, and neither does this.

A client id that is not UTF-8 is not an error either: Kafka decodes it as Java's `new String(bytes,
UTF_8)` does, with U+FFFD for each malformed sequence. One difference remains: a body *string*
that is not UTF-8 closes the connection here (the codec, kafka-python's, refuses it), where
Kafka would read it with replacement characters. The codec's own `decode` is not used for the
body because it lets a string or bytes field run past the end of the frame unnoticed and takes
null for any field; `decode_body` checks both.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from .versions import CODECS, kafka_api_name

__all__ = ["RequestHead", "FrameError", "parse_header", "decode_body", "frame_size",
           "SOCKET_REQUEST_MAX_BYTES", "INVALID_REQUEST", "INVALID_RECEIVE"]

# Kafka's `socket.request.max.bytes` default (100 MiB): a larger size prefix closes the
# connection (NetworkReceive: "Invalid receive (size = N larger than M)").
SOCKET_REQUEST_MAX_BYTES = 104_857_600

INVALID_REQUEST = "org.apache.kafka.common.errors.InvalidRequestException"
INVALID_RECEIVE = "org.apache.kafka.common.network.InvalidReceiveException"
_UNDERFLOW = "java.nio.BufferUnderflowException"

_NULLABLE_TYPES = ("string", "bytes", "records")
_SHORT = struct.Struct(">h")
_INT = struct.Struct(">i")


class FrameError(ValueError):
    """A frame the server cannot take: it closes that one connection and says why."""

    def __init__(self, exception: str, message: str, cause: str | None = None) -> None:
        super().__init__(message)
        self.exception = exception  # the Java exception Kafka would log
        self.cause = cause  # its cause, as Kafka's "Caused by:" line shows it

    def line(self) -> str:
        """The exception as Kafka's log shows it under the error line (cause on its own line)."""
        head = f"{self.exception}: {self}"
        return head if self.cause is None else f"{head}\nCaused by: {self.cause}"


@dataclass(frozen=True, slots=True)
class RequestHead:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str  # Kafka reads a null client id as ""
    size: int = 0  # bytes of header: the body starts here


def frame_size(prefix: bytes, max_bytes: int = SOCKET_REQUEST_MAX_BYTES) -> int:
    """The size a 4-byte prefix announces, refused as Kafka's NetworkReceive refuses it."""
    (size,) = _INT.unpack(prefix)
    if size < 0:
        raise FrameError(INVALID_RECEIVE, f"Invalid receive (size = {size})")
    if size > max_bytes:
        raise FrameError(INVALID_RECEIVE,
                         f"Invalid receive (size = {size} larger than {max_bytes})")
    return size


class _Underflow(Exception):
    """A read past the end of the frame (Java's BufferUnderflowException, or Kafka's readArray
    "Error reading byte array of N byte(s): only M byte(s) available")."""

    def __init__(self, cause: str = _UNDERFLOW) -> None:
        super().__init__(cause)
        self.cause = cause


def _read_array(frame: bytes, pos: int, n: int) -> int:
    if n > len(frame) - pos:
        raise _Underflow(f"java.lang.RuntimeException: Error reading byte array of {n} byte(s): "
                         f"only {max(0, len(frame) - pos)} byte(s) available")
    return pos + n


def _read_uvarint(frame: bytes, pos: int) -> tuple[int, int]:
    """Kafka's `ByteUtils.readUnsignedVarint`: at most 5 bytes."""
    value = shift = 0
    for i in range(5):
        if pos >= len(frame):
            raise _Underflow()
        b = frame[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
    raise _Underflow("java.lang.IllegalArgumentException: Varint is too long, the most "
                     "significant bit in the 5th byte is set, converted value: "
                     f"{value:x}")


def parse_header(frame: bytes) -> RequestHead:
    """The request header, read as Kafka's `RequestHeader.parse` reads it (see the module
    docstring); raises `FrameError` with Kafka's message when it does not parse."""
    api_key = -1
    try:
        if len(frame) < 2:
            raise _Underflow()
        (api_key,) = _SHORT.unpack_from(frame, 0)
        if len(frame) < 4:
            raise _Underflow()
        (api_version,) = _SHORT.unpack_from(frame, 2)
        if kafka_api_name(api_key) is None:  # ApiKeys.forId
            raise _Underflow(f"java.lang.IllegalArgumentException: Unexpected api key: {api_key}")
        if len(frame) < 10:
            raise _Underflow()
        (correlation_id,) = _INT.unpack_from(frame, 4)
        (length,) = _SHORT.unpack_from(frame, 8)
        pos = 10
        client_id = ""
        if length >= 0:
            end = _read_array(frame, pos, length)
            client_id = frame[pos:end].decode("utf-8", errors="replace")
            pos = end
        spec = CODECS.get(api_key)
        # header v2 (tagged fields) goes with the API's flexible versions; an API the kit does
        # not speak is refused next whatever follows its client id
        if spec is not None and spec.request.flexible_version_q(api_version):
            count, pos = _read_uvarint(frame, pos)
            for _ in range(count):
                _tag, pos = _read_uvarint(frame, pos)
                size, pos = _read_uvarint(frame, pos)
                pos = _read_array(frame, pos, size)
    except _Underflow as exc:
        raise FrameError(INVALID_REQUEST, f"Error parsing request header. Our best guess of the "
                         f"apiKey is: {api_key}", exc.cause) from None
    return RequestHead(api_key, api_version, correlation_id, client_id, pos)


def _camel(field: Any) -> str:
    """Kafka's `FieldSpec.camelCaseName`: the schema's name with a lower-case first letter."""
    name: str = field._name
    return name[:1].lower() + name[1:]


def _null_field(struct_field: Any, obj: Any, version: int) -> str | None:
    """The name of a non-nullable field that decoded as null (Kafka's generated readers refuse
    it: "non-nullable field X was serialized as null"), or None."""
    for field in struct_field.untagged_fields(version):
        value = getattr(obj, field.name, None)
        if value is None:
            # only these types have a null on the wire (the codec reads a zero uuid as None)
            nullable_type = field.is_array() or field.is_struct() or \
                field.type_str in _NULLABLE_TYPES
            if nullable_type and not field.nullable_for_version_q(version):
                return _camel(field)
            continue
        if field.is_struct_array():
            for item in value:
                found = _null_field(field.array_of, item, version)
                if found is not None:
                    return found
        elif field.is_array():
            if field.array_of.type_str in ("string", "bytes") and any(v is None for v in value):
                return f"{_camel(field)} element"
        elif field.is_struct():
            found = _null_field(field, value, version)
            if found is not None:
                return found
    return None


def decode_body(head: RequestHead, frame: bytes, connection_id: str) -> Any:
    """The request body after `head`, decoded with the API's kafka-python class; raises
    `FrameError` as Kafka's `RequestContext.parseRequest` does when it does not decode."""
    spec = CODECS[head.api_key]
    cls = spec.request
    version = head.api_version
    cause: str
    try:
        flexible = cls.flexible_version_q(version)
        decode = cls._struct.compiled_decode_from(version, compact=flexible, tagged=flexible,
                                                  data_class=cls[None])
        request, end = decode(memoryview(frame), head.size)
        if end > len(frame):  # a string or bytes field ran past the end
            raise _Underflow()
        null = _null_field(cls._struct, request, version)
        if null is None:
            return request
        cause = f"java.lang.RuntimeException: non-nullable field {null} was serialized as null"
    except (_Underflow, struct.error, IndexError) as exc:
        cause = exc.cause if isinstance(exc, _Underflow) else _UNDERFLOW
    except Exception as exc:  # e.g. UnicodeDecodeError: Kafka would substitute U+FFFD
        cause = f"{type(exc).__name__}: {exc}"
    raise FrameError(INVALID_REQUEST, f"Error getting request for apiKey: "
                     f"{kafka_api_name(head.api_key)}, apiVersion: {version}, connectionId: "
                     f"{connection_id}, listenerName: ListenerName(PLAINTEXT), principal: "
                     f"User:ANONYMOUS", cause)
