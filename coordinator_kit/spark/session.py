"""One Spark session for the kit: local by default, a cluster or Spark Connect with one setting.

`get_session()` starts (or returns) `local[*]` with the session time zone in UTC, no web UI,
no progress bars and quiet logs (nothing on stderr when it starts; errors still get there).
Point it elsewhere with an argument or an environment variable, and nothing else changes:

=====================================  =============================================
`get_session(master="spark://h:7077")`  or `COORDINATOR_KIT_SPARK_MASTER=spark://h:7077`
`get_session(remote="sc://h:15002")`    or `COORDINATOR_KIT_SPARK_REMOTE=sc://h:15002`
                                        (PySpark's own `SPARK_REMOTE` is honoured too)
=====================================  =============================================

An argument wins over the environment; giving both a master and a remote is an error.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

__all__ = ["get_session", "resolve_target", "Target", "SESSION_CONF", "MASTER_ENV", "REMOTE_ENV"]

MASTER_ENV = "COORDINATOR_KIT_SPARK_MASTER"
REMOTE_ENV = "COORDINATOR_KIT_SPARK_REMOTE"

# Runtime settings every kit session gets (also set on a remote session: they are SQL confs).
SESSION_CONF: dict[str, str] = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    # The log loader is one wide projection of many string functions. Whole-stage code
    # generation fuses it into one method per stage, too big for the JVM's JIT compiler
    # (HugeMethodLimit: 8000 bytes of bytecode), which then interprets it on every row (a JFR
    # profile of benchmarks/spark_logs.py: 37% of the time in that method). Without it, each
    # operator runs projections split into small, compiled methods: about a fifth less CPU on
    # the loader; the kit's other queries are small.
    "spark.sql.codegen.wholeStage": "false",
}
# Settings for a session this process starts itself (local or a cluster master).
_STARTUP_CONF: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.memory": "2g",
}

_LOG4J2 = """\
# written by coordinator_kit.spark.session: only errors reach the console
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n
# A driver started from Python (PythonGatewayServer) or a shell (repl.Main) counts as a shell:
# unless its logger has a level of its own, Spark sets the console to WARN and prints "Setting
# default log level to WARN" on stderr (org.apache.spark.internal.Logging.initializeLogging).
logger.pygateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.pygateway.level = error
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = error
"""

# What the driver JVM prints on stderr at every start and is no error: Spark's launcher always
# adds --add-modules=jdk.incubator.vector (org.apache.spark.launcher.JavaModuleOptions), and the
# JVM's module system then warns that an incubator module is in use. No JVM flag turns it off,
# so the kit reads the JVM's stderr and passes on every other line.
_JVM_NOTICES = ("WARNING: Using incubator modules: ",)


@dataclass(frozen=True)
class Target:
    kind: str      # "local" | "master" | "remote"
    url: str


def resolve_target(master: str | None = None, remote: str | None = None,
                   env: Mapping[str, str] | None = None) -> Target:
    """Where the session goes: argument, then COORDINATOR_KIT_* variables, then SPARK_REMOTE,
    then `local[*]`."""
    env = os.environ if env is None else env
    if master and remote:
        raise ValueError(f"give a master ({master!r}) or a Spark Connect remote ({remote!r}), "
                         "not both")
    if master:
        return Target("master", master)
    if remote:
        return Target("remote", remote)
    env_master, env_remote = env.get(MASTER_ENV), env.get(REMOTE_ENV) or env.get("SPARK_REMOTE")
    if env_master and env_remote:
        raise ValueError(f"both {MASTER_ENV}={env_master!r} and a Spark Connect remote "
                         f"({env_remote!r}) are set; unset one of them")
    if env_master:
        return Target("master", env_master)
    if env_remote:
        return Target("remote", env_remote)
    return Target("local", "local[*]")


def _log4j_conf() -> str:
    """A file URI of `_LOG4J2`, named by its content (so that kits of other versions on the
    machine, sharing the temp folder, never overwrite the file this one points to)."""
    digest = hashlib.sha256(_LOG4J2.encode()).hexdigest()[:12]
    path = Path(tempfile.gettempdir()) / f"coordinator_kit_log4j2-{digest}.properties"
    if not path.exists() or path.read_text() != _LOG4J2:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        with os.fdopen(fd, "w") as out:
            out.write(_LOG4J2)
        os.replace(tmp, path)
    return path.as_uri()


def _forward_stderr(read_fd: int, seen: deque[bytes]) -> None:
    """Copy the JVM's stderr to this process's stderr (fd 2: in Jupyter, the cell), line by
    line, except `_JVM_NOTICES`; keep the last lines in `seen`. Reads until the JVM closes it,
    so the JVM never blocks on a full pipe."""
    with os.fdopen(read_fd, "rb") as stream:
        for line in iter(stream.readline, b""):
            seen.append(line)
            if line.decode("utf-8", "replace").startswith(_JVM_NOTICES):
                continue
            try:
                view = memoryview(line)
                while view:
                    view = view[os.write(2, view):]
            except OSError:
                pass       # no stderr to write to: keep draining


def _start_jvm(settings: Mapping[str, str]) -> None:
    """Start the driver JVM as PySpark does (`launch_gateway` runs spark-submit with the
    settings as --conf), with its stderr going through `_forward_stderr`.

    Does nothing when PySpark already has a JVM (a session started before, or this Python was
    started by spark-submit). When the JVM does not start, the error says what it printed.
    """
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None or "PYSPARK_GATEWAY_PORT" in os.environ:
        return
    conf = SparkConf(loadDefaults=False).setAll(list(settings.items()))
    seen: deque[bytes] = deque(maxlen=40)
    read_fd, write_fd = os.pipe()
    reader = threading.Thread(target=_forward_stderr, args=(read_fd, seen), daemon=True,
                              name="coordinator-kit-jvm-stderr")
    reader.start()
    try:
        gateway = launch_gateway(conf, popen_kwargs={"stderr": write_fd})
    except Exception as exc:
        os.close(write_fd)
        reader.join(timeout=5)
        said = b"".join(seen).decode("utf-8", "replace").strip() or "(nothing)"
        raise RuntimeError(f"the Spark driver JVM did not start ({exc}). Spark 4 needs Java 17 "
                           f"or newer (`java -version`, JAVA_HOME). The JVM printed on stderr:"
                           f"\n{said}") from exc
    os.close(write_fd)            # the JVM holds its own copy
    SparkContext._ensure_initialized(gateway=gateway)


def get_session(master: str | None = None, *, remote: str | None = None,
                app_name: str = "coordinator-kit", config: Mapping[str, str] | None = None
                ) -> Any:
    """The kit's SparkSession (created once per process; later calls return the same one).

    `config` adds or overrides settings (e.g. {"spark.driver.memory": "1g"} on Binder); JVM
    settings only take effect when this call starts the JVM.
    """
    target = resolve_target(master, remote)
    from pyspark.sql import SparkSession

    if target.kind == "remote":
        try:
            builder = SparkSession.builder.remote(target.url)
            for key, value in {**SESSION_CONF, **(config or {})}.items():
                builder = builder.config(key, value)
            spark = builder.getOrCreate()
        except ImportError as exc:
            raise ImportError(f"Spark Connect ({target.url}) needs PySpark's connect extras "
                              f"(pip install 'pyspark[connect]'): {exc}") from exc
        for key, value in {**SESSION_CONF, **(config or {})}.items():
            if key.startswith("spark.sql.") and spark.conf.isModifiable(key):
                spark.conf.set(key, value)
        return spark

    if target.kind == "local":
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder.master(target.url).appName(app_name)
    settings = {**_STARTUP_CONF, **SESSION_CONF,
                "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={_log4j_conf()}",
                **(config or {})}
    _start_jvm({"spark.master": target.url, "spark.app.name": app_name, **settings})
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    for key, value in {**SESSION_CONF, **(config or {})}.items():   # an existing session too
        # runtime SQL settings only (static ones, e.g. spark.sql.ui.retainedExecutions, were
        # given to the builder and cannot change once the session exists)
        if key.startswith("spark.sql.") and spark.conf.isModifiable(key):
            spark.conf.set(key, value)
    return spark
