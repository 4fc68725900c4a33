"""A Spark cluster of your own on 127.0.0.1: a standalone master, workers, a Spark Connect server.

Everything is started with the PySpark package's own launchers (`bin/spark-class` for
`org.apache.spark.deploy.master.Master` and `...deploy.worker.Worker`, `bin/spark-submit` for
`org.apache.spark.sql.connect.service.SparkConnectServer`), so PySpark and Java 17+ are all
it needs. It exists to run the kit's log pipeline on a real cluster (the tests, the benchmark)
and to let you try the kit's cluster settings before you point it at yours::

    from coordinator_kit.spark.cluster import LocalSparkCluster
    from coordinator_kit.spark import get_session, load_logs

    with LocalSparkCluster(workers=2) as cluster:          # 1 core, 1 GiB per worker
        spark = get_session(cluster.master_url, config=cluster.session_config())
        load_logs("datasets/one-dies", spark).count()

    with LocalSparkCluster() as cluster, cluster.connect_server() as server:
        spark = get_session(remote=server.remote_url)      # a Spark Connect client

or from a shell, which prints the URLs and runs until Ctrl-C (or its lifetime)::

    python -m coordinator_kit.spark.cluster --workers 2 --connect

Every process listens on 127.0.0.1 only, on free ports. Each daemon is started in a process
group of its own (the executors a worker launches join its group), and is stopped by its PID:
SIGTERM to its group, SIGKILL after a grace period. A detached watchdog
(`coordinator_kit.spark.watchdog`) stops them all when the lifetime ends or the Python that
started them is gone, so a crashed test or a closed notebook leaves nothing running. Logs go
to a temporary folder (`folder`), removed on `stop()` unless `keep`.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["LocalSparkCluster", "SparkConnectServer", "ClusterError", "HOST", "spark_home",
           "check_java", "connect_client_missing", "MARKER_PROPERTY", "DEFAULT_LIFETIME_S"]

HOST = "127.0.0.1"
DEFAULT_LIFETIME_S = 3600.0
# A JVM system property naming the run's folder: how a PID is recognised as one of ours.
MARKER_PROPERTY = "coordinator_kit.spark.cluster"
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
CONNECT_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
# What each daemon logs once it is ready (Master.electedLeader, Worker's registration reply,
# SparkConnectServer.main).
_MASTER_READY = re.compile(r"I have been elected leader! New state: ALIVE")
_WORKER_READY = re.compile(r"Successfully registered with master (spark://\S+)")
_CONNECT_READY = re.compile(r"Spark Connect server started at: \S*?:(\d+)")
# The Python modules a Spark Connect client imports (pyspark[connect]), by the package that
# brings each.
CONNECT_CLIENT_MODULES = {"grpc": "grpcio", "grpc_status": "grpcio-status",
                          "google.rpc": "googleapis-common-protos", "zstandard": "zstandard",
                          "pyarrow": "pyarrow", "pandas": "pandas"}


class ClusterError(RuntimeError):
    """A cluster process could not start; the message says what is missing or what it logged."""


def spark_home() -> Path:
    """The PySpark package's folder (its bin/ holds the launchers); $SPARK_HOME wins."""
    home = os.environ.get("SPARK_HOME")
    if not home:
        spec = importlib.util.find_spec("pyspark")
        if spec is None or spec.origin is None:
            raise ClusterError("PySpark is not installed in this Python "
                               f"({sys.executable}); `pip install pyspark==4.3.0`")
        home = str(Path(spec.origin).parent)
    launcher = Path(home) / "bin" / "spark-class"
    if not launcher.exists():
        raise ClusterError(f"no Spark launcher at {launcher}: SPARK_HOME={home} is not a Spark "
                           "distribution or PySpark package (unset SPARK_HOME, or reinstall "
                           "pyspark)")
    return Path(home)


def check_java() -> str:
    """The java command (Java 17+, what Spark 4 needs), or ClusterError saying how to get one."""
    from ..realkafka.fetch import java_cmd, java_major

    java = java_cmd()
    major = java_major(java)
    if java is None or major is None:
        raise ClusterError("a Spark cluster needs Java 17 or newer, and there is no `java` on "
                           "PATH (JAVA_HOME unset). Install one, e.g. `apt-get install "
                           "openjdk-17-jre-headless`, or point JAVA_HOME at one.")
    if major < 17:
        raise ClusterError(f"Spark 4 needs Java 17 or newer; {java} is Java {major}. Install "
                           "Java 17+ or point JAVA_HOME at one.")
    return java


def connect_client_missing() -> list[str]:
    """The pip packages a Spark Connect client needs that this Python lacks (empty: none)."""
    missing = []
    for module, package in CONNECT_CLIENT_MODULES.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:        # a parent package (google) is missing
            found = False
        if not found:
            missing.append(package)
    return missing


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def is_ours(pid: int, folder: str | Path) -> bool:
    """The PID still names a JVM started for `folder` (PIDs are reused)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return f"-D{MARKER_PROPERTY}={folder}".encode() in cmdline


def stop_group(pid: int, folder: str | Path, grace_s: float = 15.0) -> bool:
    """SIGTERM to the process group led by `pid` (the daemon and the executors it launched),
    SIGKILL after `grace_s`. Only when `pid` is still ours; returns whether it was."""
    if not is_ours(pid, folder):
        return False
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(pid, sig)
        except (ProcessLookupError, PermissionError):
            return True
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not _group_alive(pid):
                return True
            time.sleep(0.1)
    return True


def _group_alive(pgid: int) -> bool:
    """Some process of group `pgid` is alive (not a zombie)."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


class _Daemons:
    """Processes started for one folder, each a group leader, watched by one watchdog."""

    def __init__(self, *, lifetime_s: float, start_timeout_s: float, folder: str | Path | None,
                 keep: bool, prefix: str) -> None:
        if not lifetime_s > 0:
            raise ValueError(f"lifetime_s must be > 0 seconds, got {lifetime_s!r}")
        self.lifetime_s = float(lifetime_s)
        self.start_timeout_s = float(start_timeout_s)
        self.keep = keep
        self._folder_arg = Path(folder) if folder is not None else None
        self._prefix = prefix
        self.folder: Path | None = None
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.watchdog: subprocess.Popen[bytes] | None = None

    @property
    def pids(self) -> dict[str, int]:
        return {name: p.pid for name, p in self.procs.items()}

    def log(self, name: str) -> Path:
        """The file the daemon `name` writes its output to."""
        assert self.folder is not None, "not started"
        return self.folder / f"{name}.log"

    def _prepare(self) -> tuple[Path, dict[str, str]]:
        check_java()
        home = spark_home()
        self.folder = (self._folder_arg or Path(tempfile.mkdtemp(prefix=self._prefix))).resolve()
        self.folder.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        env.update({
            "SPARK_HOME": str(home),
            "SPARK_CONF_DIR": str(self.folder),      # no spark-defaults.conf of the user's
            "SPARK_LOCAL_IP": HOST,
            "SPARK_LOG_DIR": str(self.folder),
        })
        for key in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "PYSPARK_GATEWAY_PORT",
                    "PYSPARK_GATEWAY_SECRET"):
            env.pop(key, None)
        return home, env

    def _start_watchdog(self) -> None:
        assert self.folder is not None
        root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.watchdog = subprocess.Popen(
            [sys.executable, "-m", "coordinator_kit.spark.watchdog", "--folder",
             str(self.folder), "--lifetime", str(self.lifetime_s), "--parent", str(os.getpid())],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, env=env)

    def _spawn(self, name: str, argv: Sequence[str], env: Mapping[str, str]) -> None:
        assert self.folder is not None
        if self.watchdog is None:
            self._start_watchdog()
        with open(self.log(name), "wb") as out:
            proc = subprocess.Popen(list(argv), stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, env=dict(env),
                                    start_new_session=True)
        self.procs[name] = proc
        with open(self.folder / "pids", "a") as pids:     # what the watchdog stops
            pids.write(f"{proc.pid}\n")

    def _wait_for(self, name: str, pattern: re.Pattern[str], what: str,
                  deadline: float) -> re.Match[str]:
        proc = self.procs[name]
        while True:
            text = self.log(name).read_text(errors="replace") if self.log(name).exists() else ""
            m = pattern.search(text)
            if m:
                return m
            if proc.poll() is not None:
                raise ClusterError(f"{what} exited with code {proc.returncode} while starting; "
                                   f"its log ({self.log(name)}) ends:\n{_tail(self.log(name))}")
            if time.monotonic() > deadline:
                raise ClusterError(f"{what} did not start in {self.start_timeout_s:.0f} s "
                                   f"(machine busy? raise start_timeout_s); its log "
                                   f"({self.log(name)}) ends:\n{_tail(self.log(name))}")
            time.sleep(0.2)

    def stop(self, grace_s: float = 15.0) -> None:
        """Stop every daemon (the last started first) by its PID and process group, then the
        watchdog; remove the folder unless `keep` or it was given."""
        for name, proc in reversed(list(self.procs.items())):
            if proc.poll() is None and self.folder is not None:
                stop_group(proc.pid, self.folder, grace_s)
            if proc.poll() is None:       # not recognisably ours any more: our child still
                proc.kill()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                pass
            if _group_alive(proc.pid):    # executors outliving their worker
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        if self.watchdog is not None and self.watchdog.poll() is None:
            self.watchdog.terminate()
            try:
                self.watchdog.wait(10)
            except subprocess.TimeoutExpired:
                self.watchdog.kill()
        if self.folder is not None and not self.keep and self._folder_arg is None:
            shutil.rmtree(self.folder, ignore_errors=True)

    def alive(self) -> bool:
        return bool(self.procs) and all(p.poll() is None for p in self.procs.values())

    def leftovers(self) -> list[str]:
        """Processes of this run still alive (a daemon, an executor in a daemon's group, the
        watchdog), as "pid command"; empty after a clean `stop()`."""
        groups = set(self.pids.values())
        if self.watchdog is not None:
            groups.add(self.watchdog.pid)
        marker = f"-D{MARKER_PROPERTY}={self.folder}".encode()
        out = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
                cmdline = (stat.parent / "cmdline").read_bytes()
            except (OSError, IndexError):
                continue
            if fields[0] == "Z":
                continue
            if int(fields[2]) in groups or (self.folder is not None and marker in cmdline):
                text = cmdline.replace(b"\0", b" ")[:160].decode(errors="replace")
                out.append(f"{stat.parent.name} {text}")
        return out


class LocalSparkCluster(_Daemons):
    """A Spark standalone cluster on 127.0.0.1: one master and `workers` workers, each offering
    `cores` cores and `memory` to executors (the daemons themselves get `daemon_memory` of
    heap). `start()` returns when every worker has registered with the master."""

    def __init__(self, workers: int = 2, *, cores: int = 1, memory: str = "1g",
                 daemon_memory: str = "256m", lifetime_s: float = DEFAULT_LIFETIME_S,
                 start_timeout_s: float = 180.0, folder: str | Path | None = None,
                 keep: bool = False) -> None:
        super().__init__(lifetime_s=lifetime_s, start_timeout_s=start_timeout_s, folder=folder,
                         keep=keep, prefix="spark-cluster-")
        if workers < 1 or cores < 1:
            raise ValueError(f"a cluster needs at least 1 worker with 1 core; got "
                             f"workers={workers}, cores={cores}")
        self.workers, self.cores = workers, cores
        self.memory, self.daemon_memory = memory, daemon_memory
        self.master_port = 0
        self.servers: list[SparkConnectServer] = []

    @property
    def master_url(self) -> str:
        assert self.master_port, "not started"
        return f"spark://{HOST}:{self.master_port}"

    def session_config(self, executor_memory: str | None = None) -> dict[str, str]:
        """Settings for a session (a driver) using this cluster: executors as big as a worker
        offers, every core, and the driver reachable on 127.0.0.1."""
        return {"spark.executor.memory": executor_memory or self.memory,
                "spark.executor.cores": str(self.cores),
                "spark.cores.max": str(self.cores * self.workers),
                "spark.driver.host": HOST, "spark.driver.bindAddress": HOST}

    def start(self) -> LocalSparkCluster:
        home, env = self._prepare()
        assert self.folder is not None
        marker = f"-D{MARKER_PROPERTY}={self.folder}"
        env.update({"SPARK_DAEMON_MEMORY": self.daemon_memory,
                    "SPARK_DAEMON_JAVA_OPTS": marker})
        # no REST submission server (it would take the fixed port 6066)
        (self.folder / "spark-defaults.conf").write_text(
            "spark.master.rest.enabled false\nspark.ui.showConsoleProgress false\n")
        launcher = str(home / "bin" / "spark-class")
        deadline = time.monotonic() + self.start_timeout_s
        try:
            self.master_port = _free_port()
            self._spawn("master", [launcher, MASTER_CLASS, "--host", HOST, "--port",
                                   str(self.master_port), "--webui-port", "0"], env)
            self._wait_for("master", _MASTER_READY, "the Spark master", deadline)
            for i in range(1, self.workers + 1):
                work = self.folder / f"worker-{i}"
                work.mkdir(exist_ok=True)
                self._spawn(f"worker-{i}", [
                    launcher, WORKER_CLASS, "--host", HOST, "--webui-port", "0",
                    "--cores", str(self.cores), "--memory", self.memory,
                    "--work-dir", str(work), self.master_url], env)
            for i in range(1, self.workers + 1):
                self._wait_for(f"worker-{i}", _WORKER_READY, f"Spark worker {i}", deadline)
        except BaseException:
            self.stop()
            raise
        return self

    def connect_server(self, **kwargs: Any) -> SparkConnectServer:
        """A Spark Connect server whose driver runs its jobs on this cluster (started; stopped
        with the cluster at the latest)."""
        kwargs.setdefault("lifetime_s", self.lifetime_s)
        kwargs.setdefault("start_timeout_s", self.start_timeout_s)
        kwargs.setdefault("executor_memory", self.memory)
        kwargs.setdefault("cores_max", self.cores * self.workers)
        server = SparkConnectServer(master=self.master_url, **kwargs).start()
        self.servers.append(server)
        return server

    def stop(self, grace_s: float = 15.0) -> None:
        for server in self.servers:
            server.stop(grace_s)
        self.servers.clear()
        super().stop(grace_s)

    def __enter__(self) -> LocalSparkCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = self.master_url if self.master_port else "not started"
        return (f"LocalSparkCluster({where}, {self.workers} worker(s) x {self.cores} core(s), "
                f"{self.memory}, logs in {self.folder})")


class SparkConnectServer(_Daemons):
    """A Spark Connect server on 127.0.0.1 (`remote_url`: sc://127.0.0.1:PORT): a driver that
    runs the clients' plans on `master` (local[1] by default, or a cluster's master URL).
    `conf` adds Spark settings (--conf)."""

    def __init__(self, master: str = "local[1]", *, driver_memory: str = "1g",
                 executor_memory: str = "1g", cores_max: int | None = None,
                 conf: Mapping[str, str] | None = None, lifetime_s: float = DEFAULT_LIFETIME_S,
                 start_timeout_s: float = 180.0, folder: str | Path | None = None,
                 keep: bool = False) -> None:
        super().__init__(lifetime_s=lifetime_s, start_timeout_s=start_timeout_s, folder=folder,
                         keep=keep, prefix="spark-connect-")
        self.master = master
        self.driver_memory, self.executor_memory = driver_memory, executor_memory
        self.cores_max = cores_max
        self.conf = dict(conf or {})
        self.port = 0

    @property
    def remote_url(self) -> str:
        assert self.port, "not started"
        return f"sc://{HOST}:{self.port}"

    def start(self) -> SparkConnectServer:
        home, env = self._prepare()
        assert self.folder is not None
        jar = home / "jars" / "spark-connect_2.13-4.3.0.jar"
        if not any((home / "jars").glob("spark-connect_*.jar")):
            raise ClusterError(f"no Spark Connect server jar in {home / 'jars'} (expected e.g. "
                               f"{jar.name}); PySpark 4 ships it: reinstall pyspark==4.3.0")
        self.port = _free_port()
        conf = {"spark.connect.grpc.binding.address": HOST,
                "spark.connect.grpc.binding.port": str(self.port),
                "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
                "spark.driver.host": HOST, "spark.driver.bindAddress": HOST,
                "spark.executor.memory": self.executor_memory,
                **({"spark.cores.max": str(self.cores_max)} if self.cores_max else {}),
                **self.conf}
        argv = [str(home / "bin" / "spark-submit"), "--class", CONNECT_CLASS,
                "--name", "Spark Connect server", "--master", self.master,
                "--driver-memory", self.driver_memory,
                "--driver-java-options", f"-D{MARKER_PROPERTY}={self.folder}"]
        for key, value in conf.items():
            argv += ["--conf", f"{key}={value}"]
        argv.append("spark-internal")
        try:
            self._spawn("connect", argv, env)
            self._wait_for("connect", _CONNECT_READY, "the Spark Connect server",
                           time.monotonic() + self.start_timeout_s)
        except BaseException:
            self.stop()
            raise
        return self

    def __enter__(self) -> SparkConnectServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = self.remote_url if self.port else "not started"
        return f"SparkConnectServer({where}, master {self.master}, logs in {self.folder})"


def main(argv: list[str] | None = None) -> int:
    """Start a cluster (and a Connect server), print the URLs and wait until Ctrl-C."""
    p = argparse.ArgumentParser(prog="python -m coordinator_kit.spark.cluster",
                                description="Start a Spark standalone cluster (and a Spark "
                                "Connect server) on 127.0.0.1 and keep it until Ctrl-C or its "
                                "lifetime.")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--cores", type=int, default=1, help="cores per worker (default 1)")
    p.add_argument("--memory", default="1g", help="memory per worker for executors (1g)")
    p.add_argument("--connect", action="store_true", help="also a Spark Connect server "
                   "running its jobs on the cluster")
    p.add_argument("--lifetime", type=float, default=DEFAULT_LIFETIME_S, metavar="SECONDS",
                   help=f"stop after this long (default {DEFAULT_LIFETIME_S:.0f})")
    args = p.parse_args(argv)

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    # Ctrl-C and `kill PID` both stop the cluster here (a shell's `&` may have ignored SIGINT);
    # if this process dies otherwise, the watchdog stops it
    signal.signal(signal.SIGINT, interrupt)
    signal.signal(signal.SIGTERM, interrupt)
    cluster = LocalSparkCluster(args.workers, cores=args.cores, memory=args.memory,
                                lifetime_s=args.lifetime)
    try:
        cluster.start()
        print(f"master: {cluster.master_url}  ({args.workers} worker(s) x {args.cores} "
              f"core(s), {args.memory}; logs in {cluster.folder})", flush=True)
        if args.connect:
            # half the cores (at least one) for the Connect server, the rest for --master apps
            total = args.workers * args.cores
            server = cluster.connect_server(cores_max=max(1, total // 2))
            print(f"Spark Connect: {server.remote_url}  (logs in {server.folder})", flush=True)
        print(f"running for at most {args.lifetime:.0f} s; Ctrl-C stops it", flush=True)
        deadline = time.monotonic() + args.lifetime
        while time.monotonic() < deadline and cluster.alive():
            time.sleep(1)
        if not cluster.alive():
            print("a cluster process exited; stopping the others", file=sys.stderr)
            return 1
    except KeyboardInterrupt:
        pass
    except ClusterError as exc:
        print(f"spark cluster: error: {exc}", file=sys.stderr)
        return 2
    finally:
        cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
