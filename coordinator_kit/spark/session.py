"""One Spark session for the kit: local by default, a cluster or Spark Connect with one setting.

`get_session()` starts (or returns) `local[*]` with the session time zone in UTC, no web UI,
no progress bars and quiet logs. Point it elsewhere with an argument or an environment
variable, and nothing else changes:

=====================================  =============================================
`get_session(master="spark://h:7077")`  or `COORDINATOR_KIT_SPARK_MASTER=spark://h:7077`
`get_session(remote="sc://h:15002")`    or `COORDINATOR_KIT_SPARK_REMOTE=sc://h:15002`
                                        (PySpark's own `SPARK_REMOTE` is honoured too)
=====================================  =============================================

An argument wins over the environment; giving both a master and a remote is an error.
"""

from __future__ import annotations

import os
import tempfile
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
"""


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
    path = Path(tempfile.gettempdir()) / "coordinator_kit_log4j2.properties"
    if not path.exists() or path.read_text() != _LOG4J2:
        path.write_text(_LOG4J2)
    return path.as_uri()


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
            if key.startswith("spark.sql."):
                spark.conf.set(key, value)
        return spark

    if target.kind == "local":
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder.master(target.url).appName(app_name)
    settings = {**_STARTUP_CONF, **SESSION_CONF,
                "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={_log4j_conf()}",
                **(config or {})}
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    for key, value in {**SESSION_CONF, **(config or {})}.items():   # an existing session too
        if key.startswith("spark.sql."):            # runtime SQL settings only
            spark.conf.set(key, value)
    return spark
