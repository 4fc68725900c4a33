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
not decode) closes that one connection with Kafka's log line; the server and every other
connection go on. ApiVersions newer than advertised is answered, as Kafka does, with a v0 body
carrying UNSUPPORTED_VERSION and the advertised ranges, so the client can retry lower.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import IO, Any, TypeVar

from ..cluster import Cluster
from ..errors import Errors
from ..logs.catalogue import PREFIXES
from ..runtime.future import CoordinatorFuture
from ..trace import LogContext, TraceEvent
from .apis import KafkaApis, cluster_id, parse_records
from .datalog import DataTopics, PartitionLog
from .driver import RealTimeDriver
from .frames import SOCKET_REQUEST_MAX_BYTES, FrameError, RequestHead, frame_size, peek_head
from .versions import ADVERTISED, API_NAMES, CODECS, supported

__all__ = ["LiveServer", "Connection", "LOOPBACK"]

T = TypeVar("T")
LOOPBACK = "127.0.0.1"
_API_VERSIONS = 18


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
                 warn: Callable[[str], None] | None = None,
                 advertised_host: str | None = None) -> None:
        """`port` is the first broker's listener (broker b listens on port + b); 0 takes free
        ports. `produce_rate_per_s` records per second per data partition are appended by the
        server itself (0: only what producers send). `group_config` takes the group
        coordinator's Kafka keys (e.g. `group.initial.rebalance.delay.ms`, Kafka's default
        3000). `log` receives the brokers' log lines (Kafka's log4j layout) at `log_level`
        and above as they happen."""
        if not isinstance(host, str) or not host:
            raise ValueError(f"host must be an address to bind, got {host!r}")
        if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535 - brokers:
            raise ValueError(f"port must be 0 (free ports) or a port from 1 to "
                             f"{65535 - brokers} (broker b listens on port + b), got {port!r}")
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
        self._log_threshold = log_level
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
        if self.bind_host not in (LOOPBACK, "localhost", "::1") and self.warn is not None:
            self.warn(f"WARNING: the live server binds {self.bind_host}, not loopback: anyone "
                      f"who can reach this machine can join its groups and read and write its "
                      f"topics. It has no authentication. Clients are told to connect to "
                      f"{self.host} (--advertised-host).")
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
        if self.produce_rate_per_s > 0:
            self._schedule_produce()
        self._ticker = asyncio.ensure_future(self._tick())

    async def _tick(self) -> None:
        assert self._driver is not None and self._kick is not None
        assert self._stopping is not None
        while not self._stopping.is_set():
            self._driver.advance()
            self._kick.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._kick.wait(), self._driver.seconds_to_next(0.02))

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
        if getattr(self, "_ticker", None) is not None:
            self._ticker.cancel()
            with contextlib.suppress(BaseException):
                await self._ticker

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
            assert self._driver is not None
            self._driver.advance()
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
        self.cluster.topics[name] = partitions
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
        peer = writer.get_extra_info("peername") or ("?", 0)
        local = writer.get_extra_info("sockname") or (self.host, 0)
        conn = Connection(f"{local[0]}:{local[1]}-{peer[0]}:{peer[1]}-{next(self._conn_index)}",
                          broker_id, str(peer[0]), int(peer[1]), writer)
        self.connections.append(conn)
        try:
            while not conn.closed:
                try:
                    prefix = await reader.readexactly(4)
                    size = frame_size(prefix, self.socket_request_max_bytes)
                    frame = await reader.readexactly(size)
                except asyncio.IncompleteReadError:
                    break  # the client closed (perhaps mid-request): nothing to answer
                except FrameError as exc:
                    self._refuse(conn, exc, selector=True)
                    break
                try:
                    out = await self._handle(conn, frame)
                except FrameError as exc:
                    self._refuse(conn, exc)
                    break
                if out is None or conn.closed:
                    continue
                writer.write(out)
                try:
                    # a client that never reads its responses fills its socket buffer: only
                    # its own connection waits, and after request.timeout.ms it is closed
                    await asyncio.wait_for(writer.drain(), 30)
                except (asyncio.TimeoutError, ConnectionError):
                    self.log.event("live_connection_closed", level="INFO", connection=conn.id,
                                   why="the client does not read its responses")
                    break
        except (ConnectionError, OSError):
            pass
        except Exception as exc:  # a bug in a handler: this connection closes, not the server
            self._refuse(conn, FrameError(type(exc).__name__, str(exc)))
        finally:
            self._close(conn, None)

    def _close(self, conn: Connection, why: str | None) -> None:
        if conn.closed:
            return
        conn.closed = True
        with contextlib.suppress(Exception):
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

    async def _handle(self, conn: Connection, frame: bytes) -> bytes | None:
        head = peek_head(frame)
        assert self._driver is not None
        self._driver.advance()
        conn.client_id = head.client_id if conn.client_id is None else conn.client_id
        conn.requests += 1
        conn.last_request_at = self.cluster.scheduler.now
        name = API_NAMES.get(head.api_key, f"api key {head.api_key}")
        conn.last_api = name
        if head.api_key == _API_VERSIONS and not supported(head.api_key, head.api_version):
            return self._api_versions_fallback(head)
        if not supported(head.api_key, head.api_version):
            what = (f"api key {name.upper() if head.api_key in API_NAMES else head.api_key}"
                    f" with version {head.api_version}")
            raise FrameError("org.apache.kafka.common.errors.InvalidRequestException",
                             f"Received request {what} which is not enabled")
        spec = CODECS[head.api_key]
        try:
            request = spec.request.decode(frame, version=head.api_version, header=True)
        except Exception as exc:
            raise FrameError(
                "org.apache.kafka.common.errors.InvalidRequestException",
                f"Error getting request for apiKey: {name.upper()}, apiVersion: "
                f"{head.api_version}, connectionId: {conn.id}, listenerName: "
                f"ListenerName(PLAINTEXT), principal: User:ANONYMOUS "
                f"({type(exc).__name__}: {exc})") from None
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
        """Kafka answers an ApiVersions request it cannot parse with a v0 response carrying
        UNSUPPORTED_VERSION and its ranges; the client retries with a version it knows."""
        R = CODECS[_API_VERSIONS].response
        response = R(version=0, error_code=Errors.UNSUPPORTED_VERSION.code,
                     api_keys=self.api_versions())
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
        from ..logs.layout import level_number
        if level_number(event.level) < level_number(self._log_threshold):
            return
        line = event.line(self.cluster.trace.start)
        exception = event.fields.get("exception")
        out.write(line + "\n" + (f"{exception}\n" if exception else ""))
        out.flush()
