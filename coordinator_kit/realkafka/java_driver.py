"""Kafka's own Java consumer as a third client for the scenarios.

`java/ConsumerMain.java` is compiled once (javac, a JDK 17+) against the fetched kafka-clients
jar into `<cache>/java-driver/`; `JavaConsumerProcess` runs it with the options and the JSON
event lines of `coordinator_kit.live.consumer_main`, so everything `ConsumerProcess` offers
(assignment, records, crash, pause, stop) works on it unchanged. Its log (log4j 2, Kafka's
layout) goes to the process's log file, where the scenarios read `Successfully joined group
with generation Generation{generationId=...}`.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from ..live.processes import ConsumerProcess
from .fetch import FetchError, cache_dir, check_java, classpath

__all__ = ["JavaConsumerProcess", "compile_driver", "javac_cmd"]

SOURCE = Path(__file__).parent / "java" / "ConsumerMain.java"

_LOG4J = """\
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
"""


def javac_cmd() -> str | None:
    java = check_java()
    beside = Path(java).resolve().parent / "javac"
    return str(beside) if beside.exists() else shutil.which("javac")


def compile_driver() -> Path:
    """The folder holding ConsumerMain.class, compiled when the source is newer."""
    out = cache_dir() / "java-driver"
    target = out / "ConsumerMain.class"
    if target.exists() and target.stat().st_mtime >= SOURCE.stat().st_mtime:
        return out
    javac = javac_cmd()
    if javac is None:
        raise FetchError("the Java consumer driver needs a JDK 17+ (`javac`); a JRE only runs "
                         "the broker. Install one, e.g. `apt-get install openjdk-17-jdk-headless`")
    out.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([javac, "-cp", classpath(), "-d", str(out), str(SOURCE)],
                          capture_output=True, text=True, timeout=180)
    if done.returncode != 0:
        raise FetchError(f"javac failed on {SOURCE}:\n{done.stdout}{done.stderr}")
    return out


class JavaConsumerProcess(ConsumerProcess):
    """A `ConsumerProcess` whose child is Kafka's Java KafkaConsumer (client "java")."""

    def __init__(self, bootstrap: str, client_id: str, *, group: str = "group-1",
                 topics: str = "orders", seconds: float = 120,
                 session_timeout_ms: int = 10_000, heartbeat_interval_ms: int = 1_000,
                 log_path: str | Path | None = None, limit_s: float | None = None,
                 heap: str = "128m", group_protocol: str = "classic",
                 instance_id: str | None = None, max_poll_interval_ms: int | None = None,
                 stall_ms: int = 0) -> None:
        java = check_java()
        driver = compile_driver()
        self.client_id = client_id
        self.client = "java"
        self.group = group
        self.events = []
        self.log_path = Path(log_path) if log_path is not None else None
        jvm = [java, f"-Xmx{heap}", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]
        if self.log_path is not None:
            config = self.log_path.with_suffix(".log4j2.properties")
            config.write_text(_LOG4J.format(log=self.log_path))
            jvm.append(f"-Dlog4j2.configurationFile={config}")
        args = jvm + ["-cp", str(driver) + ":" + classpath(), "ConsumerMain",
                      "--bootstrap", bootstrap, "--group", group, "--topics", topics,
                      "--client-id", client_id, "--seconds", str(seconds),
                      "--session-timeout-ms", str(session_timeout_ms),
                      "--heartbeat-interval-ms", str(heartbeat_interval_ms),
                      "--group-protocol", group_protocol]
        if instance_id:
            args += ["--instance-id", instance_id]
        if max_poll_interval_ms is not None:
            args += ["--max-poll-interval-ms", str(max_poll_interval_ms)]
        args += self._stall_args(stall_ms)
        self._spawn(args, limit_s if limit_s is not None else seconds + 30,
                    stderr=subprocess.DEVNULL)
