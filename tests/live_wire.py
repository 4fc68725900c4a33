"""Raw Kafka wire I/O for the live server's tests: frames built byte by byte or with
kafka-python's `kafka.protocol` classes, sent over a plain socket.

Imported by tests/test_live_bad_input.py and tests/test_live_fuzz.py (pytest puts this
directory on sys.path; the file is not collected as tests).
"""

from __future__ import annotations

import socket
import struct
import time
from typing import Any

from kafka.protocol.metadata.api_versions import ApiVersionsRequest, ApiVersionsResponse

HOST = "127.0.0.1"


def frame(payload: bytes) -> bytes:
    """A size prefix, then `payload`."""
    return struct.pack(">i", len(payload)) + payload


def header(api_key: int, version: int, correlation_id: int = 1, client_id: bytes | None = b"raw",
           flexible: bool = False) -> bytes:
    """Request header v1 (v2 when `flexible`: an empty tagged-field section follows)."""
    cid = struct.pack(">h", -1) if client_id is None else \
        struct.pack(">h", len(client_id)) + client_id
    return struct.pack(">hhi", api_key, version, correlation_id) + cid + \
        (b"\x00" if flexible else b"")


def encode(request: Any, correlation_id: int = 1, client_id: str = "raw") -> bytes:
    """A kafka-python request object, framed with its header."""
    request.with_header(correlation_id=correlation_id, client_id=client_id)
    return bytes(request.encode(header=True, framed=True))


def api_versions_request(correlation_id: int = 1, client_id: str = "raw",
                         version: int = 3) -> bytes:
    fields = {} if version < 3 else {"client_software_name": "raw-wire",
                                     "client_software_version": "1.0"}
    return encode(ApiVersionsRequest(version=version, **fields), correlation_id, client_id)


class Wire:
    """One client connection: send bytes, read whole responses, see whether the server closed."""

    def __init__(self, port: int, timeout_s: float = 5.0, rcvbuf: int | None = None) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf is not None:  # before connect: the window the server may fill
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(timeout_s)
        self.sock.connect((HOST, port))

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def _exactly(self, n: int) -> bytes | None:
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                return None
            out += chunk
        return out

    def response(self) -> bytes | None:
        """The next response's bytes (without the size prefix), or None if the server closed
        the connection first. Raises socket.timeout when nothing comes."""
        prefix = self._exactly(4)
        if prefix is None:
            return None
        (size,) = struct.unpack(">i", prefix)
        return self._exactly(size)

    def closed_by_server(self, timeout_s: float = 5.0) -> bool:
        """Whether the server closes this connection (EOF or reset) within `timeout_s`,
        without sending anything more."""
        self.sock.settimeout(timeout_s)
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True
        except socket.timeout:
            return False

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Wire:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def api_versions(port: int, correlation_id: int = 77, timeout_s: float = 5.0) -> Any:
    """Ask a fresh connection for ApiVersions v3; the decoded response."""
    with Wire(port, timeout_s) as w:
        w.send(api_versions_request(correlation_id))
        body = w.response()
    assert body is not None, "the server closed a fresh ApiVersions connection"
    (corr,) = struct.unpack_from(">i", body)
    assert corr == correlation_id
    return ApiVersionsResponse.decode(body[4:], version=3)


def wait_until(condition: Any, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not happen in {timeout_s} s")
        time.sleep(0.05)
