"""The live server: real Kafka clients on 127.0.0.1, the kit's brokers behind them.

One `Cluster` (brokers, CoordinatorRuntimes, group coordinators, replicated
`__consumer_offsets`) runs on virtual time that a `RealTimeDriver` keeps level with the wall
clock. Each simulated broker gets a listener of its own, so Metadata and FindCoordinator give
real addresses and a coordinator that moves sends clients to another port, as on a real
cluster. Everything (sockets, the driver, the cluster) runs on one asyncio loop in one thread:
the cluster is single-threaded, and nothing else touches it. Notebook cells reach it through
`call(fn)`, which runs `fn` on that loop.

Like Kafka's SocketServer, a connection handles one request at a time (Kafka mutes a channel
until its response is sent), so responses leave in request order. A frame that cannot be read
(over `socket.request.max.bytes`, truncated, an API or version not advertised, a body that does
not decode: `frames.py` says which check answers what, in Kafka's order) closes that one
connection with Kafka's log line; the server and every other connection go on. ApiVersions
newer than Kafka's newest is answered, as Kafka does, with a v0 body carrying
UNSUPPORTED_VERSION and ApiVersions' own range, so the client can retry lower. A connection
with no traffic either way for `connections.max.idle.ms` (a client that stopped reading its
responses, or that sent half a request and went quiet) is closed, as Kafka's Selector closes
idle connections; every other connection goes on meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import itertools
import socket
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import IO, Any, TypeVar

from ..cluster import Cluster
from ..errors import Errors
from ..logs.catalogue import PREFIXES
from ..logs.layout import level_number
from ..runtime.future import CoordinatorFuture
from ..trace import LogContext, TraceEvent
from .apis import KafkaApis, cluster_id, parse_records
from .datalog import DataTopics, PartitionLog
from .driver import RealTimeDriver
from .frames import (INVALID_REQUEST, SOCKET_REQUEST_MAX_BYTES, FrameError, RequestHead,
                     decode_body, frame_size, parse_header)
from .versions import ADVERTISED, API_NAMES, CODECS, kafka_api_name, supported

__all__ = ["LiveServer", "Connection", "LOOPBACK"]

T = TypeVar("T")
LOOPBACK = "127.0.0.1"
_API_VERSIONS = 18
CONNECTIONS_MAX_IDLE_MS = 600_000  # Kafka's `connections.max.idle.ms` default (10 minutes)
_READ_CHUNK = 1 << 16


def is_loopback(host: str) -> bool:
    """Whether every address `host` names is a loopback address (127.0.0.0/8, ::1): only this
    machine can reach a listener bound there."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(i[4][0].split("%")[0]).is_loopback
                               for i in infos)


@dataclass(eq=False)
class Connection:
    """One client connection to one broker's listener."""

    id: str  # Kafka's connection id: "local-remote-index"
    broker_id: int
    peer_host: str
    peer_port: int
    writer: asyncio.StreamWriter = field(repr=False)
    client_id: str | None = None
    software: tuple[str, str] | None = None  # ApiVersions v3+: client software name, version
    requests: int = 0
    last_api: str = ""
    last_request_at: float = 0.0  # virtual ms
    stalled: bool = False  # a request was withheld (a fault): nothing more is answered
    member_of: dict[str, str] = field(default_factory=dict)  # group -> member id
    assignments: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    closed: bool = False
    last_active: float = 0.0  # the loop's monotonic clock when bytes last moved either way


class LiveServer:
    """A Kafka-protocol server in front of a kit `Cluster` (see the module docstring)."""

    def __init__(self, *, brokers: int = 3, topics: Mapping[str, int] | None = None,
                 host: str = LOOPBACK, port: int = 9092, offsets_partitions: int = 3,
                 group_config: Mapping[str, Any] | None = None, seed: int = 0,
                 produce_rate_per_s: float = 1.0, log: IO[str] | None = None,
                 log_level: str = "INFO", trace_level: str = "DEBUG",
                 socket_request_max_bytes: int = SOCKET_REQUEST_MAX_BYTES,
                 auto_create_topics: bool = True, default_partitions: int = 1,
                 max_records_per_partition: int = 100_000,
                 connections_max_idle_ms: int = CONNECTIONS_MAX_IDLE_MS,
                 warn: Callable[[str], None] | None = None,
                 advertised_host: str | None = None) -> None:
        """`port` is the first broker's listener (broker b listens on port + b); 0 takes free
        ports. `produce_rate_per_s` records per second per data partition are appended by the
        server itself (0: only what producers send). `group_config` takes the group
        coordinator's Kafka keys (e.g. `group.initial.rebalance.delay.ms`, Kafka's default
        3000). `log` receives the brokers' log lines (Kafka's log4j layout) at `log_level`
        and above as they happen. `socket_request_max_bytes` and `connections_max_idle_ms` are
        Kafka's `socket.request.max.bytes` and `connections.max.idle.ms`. `warn` receives the
        warning given when `host` is not a loopback address (default: Python's `warnings`)."""
        if not isinstance(host, str) or not host:
            raise ValueError(f"host must be an address to bind, got {host!r}")
        if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535 - brokers:
            raise ValueError(f"port must be 0 (free ports) or a port from 1 to "
                             f"{65535 - brokers} (broker b listens on port + b), got {port!r}")
        for name, value in (("socket_request_max_bytes", socket_request_max_bytes),
                            ("connections_max_idle_ms", connections_max_idle_ms)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive whole number, got {value!r}")
        if produce_rate_per_s < 0:
            raise ValueError(f"produce_rate_per_s must be >= 0, got {produce_rate_per_s}")
        topics = {"orders": 6} if topics is None else dict(topics)
        self.cluster = Cluster(brokers=brokers, offsets_partitions=offsets_partitions,
                               topics=topics, seed=seed, group_config=dict(group_config or {}),
                               trace_level=trace_level, network_latency_ms=0)
        self.bind_host = host
        # what Metadata and FindCoordinator tell clients (Kafka's advertised.listeners): a
        # wildcard bind address is no address to connect to
        self.host = advertised_host or (LOOPBACK if host in ("0.0.0.0", "::", "") else host)
        self.base_port = port
        self.warn = warn
        self.started_at = datetime.now(timezone.utc)
        self.cluster.trace.start = self.started_at
        self.epoch_ms = int(self.started_at.timestamp() * 1000)
        self.cluster_id = cluster_id(f"{host}:{port}:{seed}")
        self.data = DataTopics(brokers, max_records_per_partition)
        for name, partitions in topics.items():
            self.data.create(name, partitions)
        self.produce_rate_per_s = produce_rate_per_s
        self._produced_topics = sorted(topics)
        self.socket_request_max_bytes = socket_request_max_bytes
        self.connections_max_idle_ms = connections_max_idle_ms
        self.loopback = is_loopback(host)
        self.auto_create_topics = auto_create_topics
        self.default_partitions = default_partitions
        self.apis = KafkaApis(self)
        self.log = LogContext(self.cluster.trace, "live")
        # the socket server's lines carry Kafka's "[SocketServer listenerType=BROKER, nodeId=b] "
        self._socket_logs = {b: LogContext(self.cluster.trace, f"broker-{b}",
                                           PREFIXES["socket_server"].format(broker=b))
                             for b in self.cluster.brokers}
        self.connections: list[Connection] = []
        self.cut: set[str] = set()  # client ids whose requests are lost
        self.dropping_heartbeats: set[str] = set()
        self.requests_handled = 0
        self.frames_refused = 0
        self.idle_closed = 0
        self.tick_errors = 0
        self._ports: dict[int, int] = {}
        self._servers: list[asyncio.base_events.Server] = []
        self._conn_index = itertools.count()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._driver: RealTimeDriver | None = None
        self._kick: asyncio.Event | None = None
        self._data_waiters: dict[PartitionLog, list[asyncio.Event]] = {}
        self._stopping: asyncio.Event | None = None
        self._log_out = log
        self._log_threshold = level_number(log_level)
        # Kafka's loggers are at log_level: where it picks a wording by isDebugEnabled(), the
        # live log must show the one a broker with that level writes
        self.cluster.trace.logger_threshold = self._log_threshold
        self._unsubscribe: Callable[[], None] | None = None
        self._produce_handle: Any = None
        self.data.add_listener(self._on_append)

    # -- addresses ------------------------------------------------------------------------------

    def port_of(self, broker_id: int) -> int:
        return self._ports[broker_id]

    @property
    def bootstrap(self) -> str:
        """`bootstrap.servers` for a client: every broker's listener."""
        return ",".join(f"{self.host}:{self._ports[b]}" for b in sorted(self._ports))

    def replicas_of(self, log: PartitionLog) -> list[int]:
        n = len(self.cluster.brokers)
        rf = min(3, n)
        return [(log.leader + i) % n for i in range(rf)]

    def api_versions(self) -> list[Any]:
        R = CODECS[_API_VERSIONS].response
        return [R.ApiVersion(api_key=k, min_version=lo, max_version=hi)
                for k, lo, hi in ADVERTISED]

    # -- lifecycle ------------------------------------------------------------------------------

    async def _start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._kick = asyncio.Event()
        self._stopping = asyncio.Event()
        self._driver = RealTimeDriver(self.cluster.scheduler)
        for b in sorted(self.cluster.brokers):
            port = 0 if self.base_port == 0 else self.base_port + b
            server = await asyncio.start_server(
                lambda r, w, b=b: self._serve(b, r, w), self.bind_host, port,
                reuse_address=True)
            self._servers.append(server)
            self._ports[b] = server.sockets[0].getsockname()[1]
        if self._log_out is not None:
            self._unsubscribe = self.cluster.trace.subscribe(self._write_line)
        self.log.event("live_started", level="INFO", bootstrap=self.bootstrap)
        if not self.loopback:
            self.log.event("live_not_loopback", level="WARN", host=self.bind_host,
                           bootstrap=self.bootstrap)
        if self.produce_rate_per_s > 0:
            self._schedule_produce()
        self._ticker = asyncio.ensure_future(self._tick())
        self._reaper = asyncio.ensure_future(self._reap_idle())

    def _warn_not_loopback(self) -> None:
        """Said in the caller's thread (start, serve_forever), where a notebook shows it."""
        if self.loopback:
            return
        message = (f"WARNING: the live server binds {self.bind_host}, which is not a loopback "
                   f"address: anyone who can reach this machine can join, leave and read its "
                   f"groups and topics, for it has no authentication. Use host={LOOPBACK!r} "
                   f"unless other machines must connect. Clients are told to connect to "
                   f"{self.host} (advertised_host, --advertised-host).")
        if self.warn is not None:
            self.warn(message)
        else:
            warnings.warn(message, RuntimeWarning, stacklevel=3)

    async def _tick(self) -> None:
        assert self._driver is not None and self._kick is not None
        assert self._stopping is not None
        while not self._stopping.is_set():
            self._advance()
            self._kick.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._kick.wait(), self._driver.seconds_to_next(0.02))

    async def _reap_idle(self) -> None:
        """Close connections with no traffic for `connections.max.idle.ms` (Kafka's Selector
        closes the least recently active one past that age on each poll)."""
        assert self._loop is not None and self._stopping is not None
        idle_s = self.connections_max_idle_ms / 1000
        period = min(1.0, idle_s / 4)
        while not self._stopping.is_set():
            await asyncio.sleep(period)
            now = self._loop.time()
            for conn in [c for c in self.connections if now - c.last_active > idle_s]:
                self.idle_closed += 1
                self.log.event("live_connection_closed", level="INFO", connection=conn.id,
                               client=conn.client_id,
                               why=f"idle for {round((now - conn.last_active) * 1000)} ms "
                                   f"(connections.max.idle.ms={self.connections_max_idle_ms})")
                self._close(conn, "idle")

    def kick(self) -> None:
        """Run the cluster now (a request arrived, or a future waits on it)."""
        if self._kick is not None:
            self._kick.set()

    async def _stop(self) -> None:
        if self._stopping is not None:
            self._stopping.set()
        for server in self._servers:
            server.close()
        for conn in list(self.connections):
            self._close(conn, None)
        for server in self._servers:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 2)
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        # the ticker, the reaper, and requests still parked (a Fetch waiting for data, a join
        # waiting for its rebalance): ended here, not destroyed pending when the loop closes
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)

    def start(self, timeout_s: float = 10.0) -> LiveServer:
        """Start in a background thread (for notebooks and tests); returns once listening."""
        if self._thread is not None:
            raise RuntimeError("this live server is already running; stop() it first")
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            try:
                loop.run_until_complete(self._start())
            except BaseException as exc:  # e.g. the port is taken
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_until_complete(self._stopping.wait())  # type: ignore[union-attr]
                loop.run_until_complete(self._stop())
            finally:
                loop.close()
        self._thread = threading.Thread(target=run, name="coordinator-kit-live", daemon=True)
        self._thread.start()
        if not ready.wait(timeout_s):
            raise TimeoutError(f"the live server did not start listening in {timeout_s} s")
        if failure:
            self._thread = None
            raise failure[0]
        self._warn_not_loopback()
        return self

    def stop(self, timeout_s: float = 10.0) -> None:
        """Close every listener and connection and end the server's thread."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if loop.is_running() and self._stopping is not None:
            loop.call_soon_threadsafe(self._stopping.set)
        thread.join(timeout_s)
        self._thread = None

    def serve_forever(self, lifetime_s: float | None = None,
                      on_ready: Callable[[LiveServer], None] | None = None) -> None:
        """Run in this thread until `lifetime_s` passes or the process is interrupted."""
        async def main() -> None:
            await self._start()
            self._warn_not_loopback()
            if on_ready is not None:
                on_ready(self)
            try:
                assert self._stopping is not None
                await asyncio.wait_for(self._stopping.wait(), lifetime_s)
            except asyncio.TimeoutError:
                pass
            finally:
                await self._stop()
        asyncio.run(main())

    def __enter__(self) -> LiveServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def call(self, fn: Callable[..., T], *args: Any, timeout_s: float = 10.0) -> T:
        """Run `fn(*args)` on the server's loop (where the cluster lives) and return its
        result: the way a notebook cell reads or changes a running server."""
        loop = self._loop
        if loop is None or self._thread is None:
            return fn(*args)  # not running: nothing else touches the cluster
        if threading.current_thread() is self._thread:
            return fn(*args)

        async def run() -> T:
            self._advance()
            result = fn(*args)
            self.kick()
            return result
        return asyncio.run_coroutine_threadsafe(run(), loop).result(timeout_s)

    # -- futures and data waits -----------------------------------------------------------------

    def wait_for(self, future: CoordinatorFuture[T]) -> asyncio.Future[T]:
        """An asyncio future completed with the coordinator future's result (it completes on
        virtual time, inside a driver step)."""
        assert self._loop is not None
        out: asyncio.Future[T] = self._loop.create_future()

        def done(f: CoordinatorFuture[T]) -> None:
            if out.done():
                return
            exc = f.exception()
            if exc is None:
                out.set_result(f.result())
            else:
                out.set_exception(exc)
        future.add_done_callback(done)
        self.kick()
        return out

    async def wait_for_data(self, logs: list[PartitionLog], timeout_s: float) -> None:
        event = asyncio.Event()
        for log in logs:
            self._data_waiters.setdefault(log, []).append(event)
        try:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(event.wait(), timeout_s)
        finally:
            for log in logs:
                waiters = self._data_waiters.get(log)
                if waiters is not None and event in waiters:
                    waiters.remove(event)
                    if not waiters:
                        del self._data_waiters[log]

    def _on_append(self, log: PartitionLog) -> None:
        for event in self._data_waiters.get(log, ()):
            event.set()

    # -- data -----------------------------------------------------------------------------------

    def create_topic(self, name: str, partitions: int, why: str = "") -> list[PartitionLog]:
        logs = self.data.create(name, partitions)
        self.cluster.create_topic(name, partitions)
        self.log.event("topic_created", level="INFO", topic=name, partitions=partitions,
                       why=why)
        return logs

    def append_records(self, log: PartitionLog, data: bytes) -> int:
        """Append produced batches to `log`; returns the first offset. A corrupt batch raises
        before anything is appended."""
        records = parse_records(data)
        now = self.epoch_ms + self.cluster.scheduler.now
        base = log.high_watermark
        for timestamp, key, value, headers in records:
            self.data.append(log, timestamp if timestamp is not None and timestamp >= 0 else now,
                             key, value, headers)
        return base

    def _schedule_produce(self) -> None:
        """The server's own producer: `produce_rate_per_s` records per partition per second of
        virtual time to the topics it started with (not to topics created later, which hold
        only what clients produce), so consumers have something to read with no producer."""
        period = max(1, round(1000 / self.produce_rate_per_s))
        sched = self.cluster.scheduler

        def produce() -> None:
            now = self.epoch_ms + sched.now
            for name in self._produced_topics:
                for log in self.data.topics[name]:
                    offset = log.high_watermark
                    self.data.append(log, now, None,
                                     f"{name}-{log.partition} record {offset}".encode())
            self._produce_handle = sched.call_later(period, produce, name="live produce")
        self._produce_handle = sched.call_later(period, produce, name="live produce")

    # -- faults on real clients -----------------------------------------------------------------

    def cut_off(self, client_id: str, cut: bool = True) -> None:
        """Lose every request of `client_id` (and answer none) until restored, as a network
        partition would; on restore its connections are closed, so the client reconnects and
        finds out what happened to its group meanwhile."""
        if cut:
            self.cut.add(client_id)
        else:
            self.cut.discard(client_id)
            for conn in [c for c in self.connections if c.client_id == client_id]:
                self._close(conn, None)
        self.log.event("network_cut" if cut else "network_restored", level="INFO",
                       client=client_id)

    def drop_heartbeats(self, client_id: str, drop: bool = True) -> None:
        """Withhold `client_id`'s heartbeats at the server: the coordinator never sees them
        and the client gets no answer (its connection stalls behind the unanswered request, as
        a muted Kafka channel would); on restore the stalled connections are closed."""
        if drop:
            self.dropping_heartbeats.add(client_id)
        else:
            self.dropping_heartbeats.discard(client_id)
            for conn in [c for c in self.connections if c.client_id == client_id and c.stalled]:
                self._close(conn, None)
        self.log.event("drop_heartbeats", level="INFO", client=client_id, drop=drop)

    def clients(self) -> list[dict[str, Any]]:
        """Who is connected: one row per client id (its connections, software, groups)."""
        rows: dict[str, dict[str, Any]] = {}
        for conn in self.connections:
            cid = conn.client_id or "?"
            row = rows.setdefault(cid, {"client_id": cid, "software": None, "connections": 0,
                                        "brokers": [], "requests": 0, "members": {},
                                        "assignment": {}, "cut": cid in self.cut,
                                        "dropping_heartbeats": cid in self.dropping_heartbeats})
            row["connections"] += 1
            row["brokers"].append(conn.broker_id)
            row["requests"] += conn.requests
            if conn.software is not None:
                row["software"] = " ".join(conn.software)
            row["members"].update(conn.member_of)
            row["assignment"].update(conn.assignments)
        return [rows[k] for k in sorted(rows)]

    # -- connections ----------------------------------------------------------------------------

    async def _serve(self, broker_id: int, reader: asyncio.StreamReader,
                     writer: asyncio.StreamWriter) -> None:
        assert self._loop is not None
        peer = writer.get_extra_info("peername") or ("?", 0)
        local = writer.get_extra_info("sockname") or (self.host, 0)
        conn = Connection(f"{local[0]}:{local[1]}-{peer[0]}:{peer[1]}-{next(self._conn_index)}",
                          broker_id, str(peer[0]), int(peer[1]), writer,
                          last_active=self._loop.time())
        # drain() returns once the response has left for the kernel, not merely dropped below
        # 64 KiB: like Kafka's muted channel, the next request is read after the response is
        # sent, so a client that never reads holds only its own connection back
        writer.transport.set_write_buffer_limits(high=0)
        self.connections.append(conn)
        try:
            while not conn.closed:
                try:
                    frame = await self._read_frame(conn, reader)
                except FrameError as exc:
                    self._refuse(conn, exc, selector=True)
                    break
                if frame is None:
                    break  # the client closed (perhaps mid-request): nothing to answer
                try:
                    out = await self._handle(conn, frame)
                except FrameError as exc:
                    self._refuse(conn, exc)
                    break
                if out is None or conn.closed:
                    continue
                await self._send(conn, out)
        except (ConnectionError, OSError):
            pass  # Kafka's Selector: "Connection with ... disconnected" (DEBUG), nothing more
        except asyncio.CancelledError:
            # stop() ends a connection whose request is still parked; ending quietly keeps
            # asyncio's stream callback (it reads task.exception()) from logging an error
            pass
        except Exception as exc:  # a bug in a handler: this connection closes, not the server
            self.log.event("live_handler_failed", level="ERROR", connection=conn.id,
                           client=conn.client_id, api=conn.last_api,
                           traceback="".join(traceback.format_exception(exc)))
            # a dotted name ending in Error, as a Java exception's first line reads
            self._refuse(conn, FrameError("coordinator_kit.live.HandlerError",
                                          f"{type(exc).__name__}: {exc} (a bug in the kit's "
                                          f"{conn.last_api} handler: please report it)"))
        finally:
            self._close(conn, None)

    async def _read_frame(self, conn: Connection, reader: asyncio.StreamReader) -> bytes | None:
        """One request's bytes (Kafka's NetworkReceive), or None when the client closed;
        raises `FrameError` for a size Kafka refuses. Every chunk read is activity."""
        assert self._loop is not None
        try:
            prefix = await reader.readexactly(4)
        except asyncio.IncompleteReadError:
            return None
        conn.last_active = self._loop.time()
        left = frame_size(prefix, self.socket_request_max_bytes)
        if left <= _READ_CHUNK:
            try:
                frame = await reader.readexactly(left)
            except asyncio.IncompleteReadError:
                return None
            conn.last_active = self._loop.time()
            return frame
        parts = []
        while left:
            chunk = await reader.read(min(left, _READ_CHUNK))
            if not chunk:
                return None
            conn.last_active = self._loop.time()
            parts.append(chunk)
            left -= len(chunk)
        return b"".join(parts)

    async def _send(self, conn: Connection, out: bytes) -> None:
        """Write a response and wait until it has left. A client that does not read leaves it
        waiting: its connection makes no progress and the idle reaper closes it after
        `connections.max.idle.ms`; any progress counts as activity."""
        assert self._loop is not None
        writer = conn.writer
        writer.write(out)
        conn.last_active = self._loop.time()
        transport = writer.transport
        pending = transport.get_write_buffer_size()
        poll_s = min(1.0, self.connections_max_idle_ms / 4000)
        while pending and not conn.closed:
            try:
                await asyncio.wait_for(writer.drain(), poll_s)
                return
            except asyncio.TimeoutError:
                now_pending = transport.get_write_buffer_size()
                if now_pending < pending:
                    conn.last_active = self._loop.time()
                pending = now_pending

    def _close(self, conn: Connection, why: str | None) -> None:
        if conn.closed:
            return
        conn.closed = True
        with contextlib.suppress(Exception):
            transport = conn.writer.transport
            if transport.get_write_buffer_size():
                transport.abort()  # close() would wait for a client that does not read
            else:
                conn.writer.close()
        if conn in self.connections:
            self.connections.remove(conn)

    def _refuse(self, conn: Connection, exc: FrameError, selector: bool = False) -> None:
        """Close one connection over a frame it cannot take, with Kafka's log line."""
        self.frames_refused += 1
        log = self._socket_logs[conn.broker_id]
        if selector:  # refused while reading the size: org.apache.kafka.common.network.Selector
            log.log("N-SELECTOR-ERROR", desc=f"/{conn.peer_host} (channelId={conn.id})",
                    exception=exc.line())
        else:
            log.log("N-CLOSE-ERROR", channel=conn.id, exception=exc.line())
        self._close(conn, str(exc))

    def _advance(self) -> None:
        """Run the cluster up to the wall clock; a timer that raises is recorded, and the
        cluster, the server and every connection go on."""
        assert self._driver is not None
        try:
            self._driver.advance()
        except Exception as exc:
            self.tick_errors += 1
            self.log.event("live_timer_failed", level="ERROR",
                           error=f"{type(exc).__name__}: {exc}")

    async def _handle(self, conn: Connection, frame: bytes) -> bytes | None:
        """One request in Kafka's order of checks (`frames.py`); its framed response, or None
        when nothing is answered."""
        head = parse_header(frame)
        self._advance()
        conn.client_id = head.client_id if conn.client_id is None else conn.client_id
        conn.requests += 1
        conn.last_request_at = self.cluster.scheduler.now
        kafka_name = kafka_api_name(head.api_key)
        conn.last_api = API_NAMES.get(head.api_key, kafka_name or "")
        if head.api_key == _API_VERSIONS and not supported(head.api_key, head.api_version):
            return self._api_versions_fallback(head)
        if not supported(head.api_key, head.api_version):
            raise FrameError(INVALID_REQUEST, f"Received request api key {kafka_name} with "
                             f"version {head.api_version} which is not enabled")
        request = decode_body(head, frame, conn.id)
        client = conn.client_id or ""
        if client in self.cut or conn.stalled:
            conn.stalled = True
            return None  # lost: the client hears nothing
        if head.api_key == 12 and client in self.dropping_heartbeats:
            conn.stalled = True  # withheld; everything after it waits behind it
            self.log.event("request_dropped", api="Heartbeat", client=client,
                           broker=conn.broker_id)
            return None
        response = await self.apis.handler(head.api_key)(conn, head.api_version, request)
        self.requests_handled += 1
        self.kick()
        if response is None or conn.stalled or client in self.cut:
            return None
        response.with_header(correlation_id=head.correlation_id)
        return response.encode(header=True, framed=True)

    def _api_versions_fallback(self, head: RequestHead) -> bytes:
        """Kafka answers an ApiVersions request newer than it knows without parsing its body
        (`RequestContext.parseRequest`): a v0 response with UNSUPPORTED_VERSION and one entry,
        ApiVersions' own range (`ApiVersionsRequest.getErrorResponse`); the client retries
        with the highest version both know."""
        R = CODECS[_API_VERSIONS].response
        spec = CODECS[_API_VERSIONS]
        response = R(version=0, error_code=Errors.UNSUPPORTED_VERSION.code,
                     api_keys=[R.ApiVersion(api_key=_API_VERSIONS, min_version=spec.min_version,
                                            max_version=spec.max_version)])
        response.with_header(correlation_id=head.correlation_id)
        return response.encode(header=True, framed=True)

    def note(self, conn: Connection, api: str, **fields: Any) -> None:
        self.log.event("live_request", api=api, client=conn.client_id,
                       broker=conn.broker_id, **fields)

    # -- the log --------------------------------------------------------------------------------

    def _write_line(self, event: TraceEvent) -> None:
        out = self._log_out
        if out is None or event.message is None:
            return
        if level_number(event.level) < self._log_threshold:
            return
        line = event.line(self.cluster.trace.start)
        exception = event.fields.get("exception")
        out.write(line + "\n" + (f"{exception}\n" if exception else ""))
        out.flush()
