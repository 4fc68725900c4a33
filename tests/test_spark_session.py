"""The kit's Spark session starts without noise on stderr, and real errors still get there.

Two lines used to appear under the first cell that starts Spark in a notebook: the JVM's
"WARNING: Using incubator modules: jdk.incubator.vector" (Spark's launcher,
`org.apache.spark.launcher.JavaModuleOptions`, always adds that module) and Spark's "Setting
default log level to ..." (`org.apache.spark.internal.Logging.initializeLogging`, for a driver
started from Python). Both are tested in a fresh process: only the first start of a JVM prints
them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections import deque
from pathlib import Path

import pytest

from coordinator_kit.spark import session

REPO = Path(__file__).resolve().parent.parent

NOISE = ("Using incubator modules", "Setting default log level", "To adjust logging level",
         "Using Spark's default log4j profile")


def test_the_log4j_file_gives_the_python_driver_its_own_level():
    """Without a level of its own for PythonGatewayServer, Spark treats the driver as a shell,
    sets the console to WARN and says so on stderr."""
    text = Path(session._log4j_conf().removeprefix("file://")).read_text()
    assert "rootLogger.level = error" in text
    assert "logger.pygateway.name = org.apache.spark.api.python.PythonGatewayServer" in text
    assert "logger.pygateway.level = error" in text
    # named by its content: another version of the kit cannot overwrite it
    assert session._log4j_conf() == session._log4j_conf()
    assert Path(session._log4j_conf()).name.startswith("coordinator_kit_log4j2-")


def test_the_jvm_stderr_is_forwarded_without_its_start_up_notice(capfd):
    read_fd, write_fd = os.pipe()
    seen: deque[bytes] = deque(maxlen=40)
    reader = threading.Thread(target=session._forward_stderr, args=(read_fd, seen))
    reader.start()
    os.write(write_fd, b"WARNING: Using incubator modules: jdk.incubator.vector\n"
                       b"26/11/25 16:25:40 ERROR Executor: Exception in task 0.0\n"
                       b"WARNING: something else the JVM says\n")
    os.close(write_fd)
    reader.join(timeout=10)
    err = capfd.readouterr().err
    assert "incubator" not in err
    assert "ERROR Executor: Exception in task 0.0" in err
    assert "WARNING: something else the JVM says" in err
    assert len(seen) == 3, "kept for the error message when the JVM does not start"


@pytest.mark.spark
def test_a_fresh_session_writes_nothing_on_stderr_but_errors():
    if not os.environ.get("JAVA_HOME") and not any(
            (Path(d) / "java").exists() for d in os.environ.get("PATH", "").split(os.pathsep)):
        pytest.skip("needs Java 17+")
    script = (
        "from coordinator_kit.spark import get_session\n"
        "spark = get_session('local[1]', config={'spark.driver.memory': '1g'})\n"
        "assert spark.range(3).count() == 3\n"
        "spark.sparkContext._jvm.org.apache.log4j.LogManager.getLogger('kit.test')"
        ".error('a real error')\n"
        "spark.stop()\n")
    env = {**os.environ, "PYTHONPATH": str(REPO), "SPARK_LOCAL_IP": "127.0.0.1"}
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    for noise in NOISE:
        assert noise not in done.stderr, done.stderr
    # a real error still reaches stderr, in the kit's log4j layout
    assert "ERROR test: a real error" in done.stderr, done.stderr


def test_a_jvm_that_does_not_start_is_named_with_what_it_printed():
    """In a fresh process (this one may already have a JVM): with no Java where JAVA_HOME
    points, the error says so, with what spark-submit printed."""
    pytest.importorskip("pyspark")
    script = (
        "from coordinator_kit.spark import session\n"
        "from pyspark import SparkContext\n"
        "try:\n"
        "    session._start_jvm({'spark.master': 'local[1]', 'spark.app.name': 't'})\n"
        "except RuntimeError as e:\n"
        "    assert SparkContext._gateway is None\n"
        "    print(e)\n")
    env = {k: v for k, v in os.environ.items() if k != "PYSPARK_GATEWAY_PORT"}
    env.update(PYTHONPATH=str(REPO), JAVA_HOME="/nonexistent-java-home")
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "the Spark driver JVM did not start" in done.stdout
    assert "Java 17" in done.stdout and "/nonexistent-java-home" in done.stdout
