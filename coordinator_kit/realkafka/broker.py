"""One real Apache Kafka broker (KRaft, broker and controller in one JVM) on 127.0.0.1.

`RealKafka` formats a fresh storage folder with `kafka.tools.StorageTool format` (what
`kafka-storage.sh format` runs), writes a server.properties for one combined node on free
loopback ports, starts `kafka.Kafka` with a bounded heap and Kafka's own log4j layout
(`[%d] %p %m (%c)%n`, the layout of config/log4j2.yaml) writing `server.log`, and waits until
the broker answers ApiVersions and has logged `Kafka Server started`. Every start has a
lifetime: a detached watchdog (`coordinator_kit.realkafka.watchdog`) stops the JVM when it is
reached, even if the Python that started it is gone. A run is recorded in
`<cache>/runs/<pid>.json`, which `status` and `stop` read.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .fetch import KAFKA_VERSION, FetchError, cache_dir, check_java, classpath, fetch

__all__ = ["RealKafka", "Run", "runs", "stop_pid", "DEFAULT_LIFETIME_S", "LOG4J2_PROPERTIES"]

DEFAULT_LIFETIME_S = 3600.0
HOST = "127.0.0.1"

# Kafka's layout (config/log4j2.yaml: "[%d] %p %m (%c)%n") in log4j 2's properties format, so
# the broker needs no YAML parser on its classpath; server.log as in Kafka's kafkaAppender.
LOG4J2_PROPERTIES = """\
status = warn
appender.server.type = File
appender.server.name = server
appender.server.fileName = {log_dir}/server.log
appender.server.layout.type = PatternLayout
appender.server.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.server.ref = server
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.apache.name = org.apache.kafka
logger.apache.level = INFO
"""

_STARTED = "Kafka Server started"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _kafka_uuid() -> str:
    """A cluster id as Kafka writes one (Uuid.randomUuid().toString(): URL-safe base64)."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


def runs_dir() -> Path:
    return cache_dir() / "runs"


@dataclass
class Run:
    """What `status` shows of one started broker."""

    pid: int
    bootstrap: str
    controller: str
    folder: str
    log_dir: str
    started_at: float  # wall clock (time.time()) at start
    lifetime_s: float
    watchdog_pid: int | None = None
    version: str = KAFKA_VERSION

    @property
    def ends_at(self) -> float:
        return self.started_at + self.lifetime_s

    def alive(self) -> bool:
        return _is_our_kafka(self.pid, self.folder)


def _is_our_kafka(pid: int, folder: str) -> bool:
    """The PID still names the JVM this run started (PIDs are reused)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True  # no /proc: trust the PID
    return b"kafka.Kafka" in cmdline and any(folder.encode() in a for a in cmdline)


def _is_watchdog(pid: int) -> bool:
    try:
        return b"coordinator_kit.realkafka.watchdog" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def runs() -> list[Run]:
    """Recorded runs whose JVM still runs (records of dead ones are removed)."""
    out = []
    folder = runs_dir()
    for path in sorted(folder.glob("*.json")) if folder.exists() else []:
        try:
            run = Run(**json.loads(path.read_text()))
        except (ValueError, TypeError):
            path.unlink(missing_ok=True)
            continue
        if run.alive():
            out.append(run)
        else:
            path.unlink(missing_ok=True)
    return out


def stop_pid(pid: int, folder: str, timeout_s: float = 20.0) -> bool:
    """SIGTERM (Kafka's controlled shutdown), then SIGKILL after `timeout_s`. Whether it ran."""
    if not _is_our_kafka(pid, folder):
        return False
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not _is_our_kafka(pid, folder) or _zombie(pid):
            break
        time.sleep(0.1)
    else:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    (runs_dir() / f"{pid}.json").unlink(missing_ok=True)
    return True


def _zombie(pid: int) -> bool:
    try:
        return " Z " in Path(f"/proc/{pid}/stat").read_text().split(")", 1)[1][:4]
    except (OSError, IndexError):
        return False


def _api_versions_answers(port: int) -> bool:
    """ApiVersions v0 on a fresh connection gets an answer with error 0."""
    try:
        with socket.create_connection((HOST, port), timeout=2) as s:
            body = struct.pack(">hhih", 18, 0, 1, 4) + b"wait"
            s.sendall(struct.pack(">i", len(body)) + body)
            head = s.recv(10)
            return len(head) >= 10 and struct.unpack(">ih", head[4:10])[1] == 0
    except OSError:
        return False


class RealKafka:
    """A real Kafka broker for tests and notebooks::

        with RealKafka(config={"group.initial.rebalance.delay.ms": 500}) as kafka:
            print(kafka.bootstrap, kafka.log_dir)

    `config` adds or overrides server.properties keys. `lifetime_s` bounds the JVM's life (the
    watchdog stops it then). `stop()` removes the temporary folder it made (data and logs:
    read `server_log` before), unless `keep`; a `folder` given keeps its logs."""

    def __init__(self, *, config: Mapping[str, Any] | None = None,
                 lifetime_s: float = DEFAULT_LIFETIME_S, heap: str = "512m",
                 folder: str | Path | None = None, keep: bool = False,
                 offsets_partitions: int = 3, start_timeout_s: float = 90.0) -> None:
        if not lifetime_s > 0:
            raise ValueError(f"lifetime_s must be > 0 seconds, got {lifetime_s!r}")
        self.config = dict(config or {})
        self.lifetime_s = float(lifetime_s)
        self.heap = heap
        self.keep = keep
        self.offsets_partitions = offsets_partitions
        self.start_timeout_s = start_timeout_s
        self._folder_arg = Path(folder) if folder is not None else None
        self.folder: Path | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.run: Run | None = None
        self.port = 0
        self.controller_port = 0

    # -- where ---------------------------------------------------------------------------------

    @property
    def bootstrap(self) -> str:
        return f"{HOST}:{self.port}"

    @property
    def log_dir(self) -> Path:
        assert self.folder is not None, "not started"
        return self.folder / "logs"

    @property
    def server_log(self) -> Path:
        return self.log_dir / "server.log"

    def properties(self) -> dict[str, str]:
        assert self.folder is not None
        props: dict[str, Any] = {
            "process.roles": "broker,controller",
            "node.id": 1,
            "controller.quorum.voters": f"1@{HOST}:{self.controller_port}",
            "listeners": f"PLAINTEXT://{HOST}:{self.port},CONTROLLER://{HOST}:"
                         f"{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://{HOST}:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": str(self.folder / "data"),
            "num.partitions": 1,
            "offsets.topic.replication.factor": 1,
            "offsets.topic.num.partitions": self.offsets_partitions,
            "transaction.state.log.replication.factor": 1,
            "transaction.state.log.min.isr": 1,
            "share.coordinator.state.topic.replication.factor": 1,
            "share.coordinator.state.topic.min.isr": 1,
            "auto.create.topics.enable": "true",
        }
        props.update(self.config)
        return {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in props.items()}

    # -- life ------------------------------------------------------------------------------------

    def start(self) -> RealKafka:
        java = check_java()
        fetch()
        cp = classpath()
        self.folder = self._folder_arg or Path(tempfile.mkdtemp(prefix="real-kafka-"))
        self.folder.mkdir(parents=True, exist_ok=True)
        self.log_dir.mkdir(exist_ok=True)
        self.port, self.controller_port = _free_port(), _free_port()
        while self.controller_port == self.port:
            self.controller_port = _free_port()
        config = self.folder / "server.properties"
        config.write_text("".join(f"{k}={v}\n" for k, v in self.properties().items()))
        log4j = self.folder / "log4j2.properties"
        log4j.write_text(LOG4J2_PROPERTIES.format(log_dir=self.log_dir))
        jvm = [java, f"-Xmx{self.heap}", f"-Xms{min_heap(self.heap)}", "-XX:+UseG1GC",
               "-XX:MaxGCPauseMillis=20", "-Djava.awt.headless=true",
               f"-Dlog4j2.configurationFile={log4j}", f"-Dkafka.logs.dir={self.log_dir}",
               "-cp", cp]
        fmt = subprocess.run(jvm + ["kafka.tools.StorageTool", "format", "-t", _kafka_uuid(),
                                    "-c", str(config)],
                             capture_output=True, text=True, timeout=120)
        if fmt.returncode != 0:
            raise FetchError(f"kafka.tools.StorageTool format failed (exit {fmt.returncode}):\n"
                             f"{fmt.stdout}{fmt.stderr}")
        out = open(self.log_dir / "kafka.out", "wb")
        self.proc = subprocess.Popen(jvm + ["kafka.Kafka", str(config)], stdout=out,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        out.close()
        watchdog = subprocess.Popen(
            [sys.executable, "-m", "coordinator_kit.realkafka.watchdog", "--pid",
             str(self.proc.pid), "--folder", str(self.folder), "--lifetime",
             str(self.lifetime_s)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, env=_env_with_package())
        self.run = Run(pid=self.proc.pid, bootstrap=self.bootstrap,
                       controller=f"{HOST}:{self.controller_port}", folder=str(self.folder),
                       log_dir=str(self.log_dir), started_at=time.time(),
                       lifetime_s=self.lifetime_s, watchdog_pid=watchdog.pid)
        runs_dir().mkdir(parents=True, exist_ok=True)
        (runs_dir() / f"{self.proc.pid}.json").write_text(json.dumps(asdict(self.run)))
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise FetchError(f"the Kafka broker exited with code {self.proc.returncode} "
                                 f"while starting; see {self.log_dir}/kafka.out and server.log:"
                                 f"\n{_tail(self.log_dir / 'kafka.out')}"
                                 f"{_tail(self.server_log)}")
            if self.server_log.exists() and _STARTED in self.server_log.read_text(
                    errors="replace") and _api_versions_answers(self.port):
                return
            time.sleep(0.2)
        raise FetchError(f"the Kafka broker did not start in {self.start_timeout_s:.0f} s; see "
                         f"{self.server_log}")

    def stop(self, timeout_s: float = 20.0) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if self.run is not None:
            (runs_dir() / f"{self.run.pid}.json").unlink(missing_ok=True)
            if self.run.watchdog_pid and _is_watchdog(self.run.watchdog_pid):
                try:
                    os.kill(self.run.watchdog_pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        if self.folder is not None and not self.keep:
            # a folder we made goes entirely; one we were given keeps its logs
            target = self.folder if self._folder_arg is None else self.folder / "data"
            shutil.rmtree(target, ignore_errors=True)

    def __enter__(self) -> RealKafka:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "not started" if self.proc is None else (
            f"pid {self.proc.pid}, running" if self.proc.poll() is None
            else f"exited {self.proc.returncode}")
        return f"RealKafka({KAFKA_VERSION}, {self.bootstrap}, {state}, log {self.folder})"


def min_heap(heap: str) -> str:
    """-Xms: a quarter of -Xmx, at least 64m, so a small broker starts quickly."""
    unit = heap[-1].lower()
    if unit in "mg" and heap[:-1].isdigit():
        mb = int(heap[:-1]) * (1024 if unit == "g" else 1)
        return f"{max(64, mb // 4)}m"
    return heap


def _env_with_package() -> dict[str, str]:
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) + "\n"
    except OSError:
        return ""
