"""Kafka's request framing: a 4-byte size, then the request header, then the body.

The header's first fields are the same in every version (api key, api version, correlation
id, client id), so the server reads them with a plain unpack before it knows whether it can
decode the rest; that is how it answers an ApiVersions request newer than it knows, and how it
names the request it refuses.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

__all__ = ["RequestHead", "FrameError", "peek_head", "frame_size", "SOCKET_REQUEST_MAX_BYTES"]

# Kafka's `socket.request.max.bytes` default (100 MiB): a larger size prefix closes the
# connection (NetworkReceive: "Invalid receive (size = N larger than M)").
SOCKET_REQUEST_MAX_BYTES = 104_857_600

_HEAD = struct.Struct(">hhih")  # api key, api version, correlation id, client id length


class FrameError(ValueError):
    """A frame the server cannot take: it closes that one connection and says why."""

    def __init__(self, exception: str, message: str) -> None:
        super().__init__(message)
        self.exception = exception  # the Java exception Kafka would log

    def line(self) -> str:
        return f"{self.exception}: {self}"


@dataclass(frozen=True, slots=True)
class RequestHead:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None


def frame_size(prefix: bytes, max_bytes: int = SOCKET_REQUEST_MAX_BYTES) -> int:
    """The size a 4-byte prefix announces, refused as Kafka's NetworkReceive refuses it."""
    (size,) = struct.unpack(">i", prefix)
    if size < 0:
        raise FrameError("org.apache.kafka.common.network.InvalidReceiveException",
                         f"Invalid receive (size = {size})")
    if size > max_bytes:
        raise FrameError("org.apache.kafka.common.network.InvalidReceiveException",
                         f"Invalid receive (size = {size} larger than {max_bytes})")
    return size


def peek_head(frame: bytes) -> RequestHead:
    """The version-independent start of a request header (Kafka's `RequestHeader.parse`)."""
    if len(frame) < _HEAD.size:
        raise FrameError("org.apache.kafka.common.errors.InvalidRequestException",
                         f"Error getting request header: a request of {len(frame)} bytes is "
                         f"shorter than a request header ({_HEAD.size} bytes at least)")
    api_key, api_version, correlation_id, length = _HEAD.unpack_from(frame)
    if length < 0:
        client_id = None
    else:
        end = _HEAD.size + length
        if end > len(frame):
            raise FrameError("org.apache.kafka.common.errors.InvalidRequestException",
                             f"Error getting request header: client id of {length} bytes runs "
                             f"past the end of a {len(frame)}-byte request")
        try:
            client_id = frame[_HEAD.size:end].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FrameError("org.apache.kafka.common.errors.InvalidRequestException",
                             f"Error getting request header: client id is not UTF-8 "
                             f"({exc.reason})") from None
    return RequestHead(api_key, api_version, correlation_id, client_id)
