"""`coordinator_kit.spark.cluster` says what is missing before it starts anything (no JVM here)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from coordinator_kit.spark import cluster as C
from coordinator_kit.spark import watchdog

REPO = Path(__file__).resolve().parent.parent


def test_without_java_the_error_names_java_17_and_how_to_get_it(monkeypatch, tmp_path):
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-jdk"))
    monkeypatch.setenv("PATH", str(tmp_path))             # no `java` on it
    with pytest.raises(C.ClusterError, match=r"Java 17 or newer.*no `java` on PATH"):
        C.LocalSparkCluster().start()


def test_a_spark_home_without_launchers_is_named(monkeypatch, tmp_path):
    monkeypatch.setenv("SPARK_HOME", str(tmp_path))
    with pytest.raises(C.ClusterError, match=f"no Spark launcher at {tmp_path}/bin/spark-class"):
        C.spark_home()


def test_the_pyspark_package_is_a_spark_home_with_the_connect_server_jar(monkeypatch):
    monkeypatch.delenv("SPARK_HOME", raising=False)
    home = C.spark_home()
    assert (home / "bin" / "spark-class").exists() and (home / "bin" / "spark-submit").exists()
    assert list((home / "jars").glob("spark-connect_2.13-*.jar"))


def test_the_connect_client_packages_are_installed():
    # pyproject.toml pins them: the kit's sessions can be Spark Connect clients
    assert C.connect_client_missing() == []


def test_a_cluster_needs_a_worker_a_core_and_a_lifetime():
    with pytest.raises(ValueError, match="at least 1 worker"):
        C.LocalSparkCluster(workers=0)
    with pytest.raises(ValueError, match="at least 1 worker with 1 core"):
        C.LocalSparkCluster(cores=0)
    with pytest.raises(ValueError, match="lifetime_s must be > 0"):
        C.SparkConnectServer(lifetime_s=0)


def test_session_config_keeps_the_driver_on_loopback_and_executors_within_a_worker():
    cluster = C.LocalSparkCluster(workers=3, cores=2, memory="768m")
    assert cluster.session_config() == {
        "spark.executor.memory": "768m", "spark.executor.cores": "2", "spark.cores.max": "6",
        "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}


def test_the_watchdog_stops_a_process_of_its_folder_when_its_parent_is_gone(tmp_path):
    """A stand-in daemon (its command line carries the folder's marker, as the JVMs' does) in a
    group of its own; the watchdog's parent is a process that ends at once."""
    marker = f"-D{C.MARKER_PROPERTY}={tmp_path}"
    daemon = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", marker],
                              start_new_session=True)
    (tmp_path / "pids").write_text(f"{daemon.pid}\n")
    parent = subprocess.Popen([sys.executable, "-c", "pass"])
    parent.wait()
    env = dict(os.environ, PYTHONPATH=str(REPO))
    dog = subprocess.Popen([sys.executable, "-m", "coordinator_kit.spark.watchdog", "--folder",
                            str(tmp_path), "--lifetime", "60", "--parent", str(parent.pid)],
                           env=env)
    try:
        assert dog.wait(30) == 0
        assert daemon.wait(10) is not None, "the daemon was not stopped"
    finally:
        for p in (daemon, dog):
            if p.poll() is None:
                p.kill()
                p.wait()


def test_the_watchdog_leaves_a_pid_that_is_not_ours(tmp_path):
    """A PID whose command line lacks the folder's marker (a reused PID) is never signalled."""
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                             start_new_session=True)
    try:
        assert not C.is_ours(other.pid, tmp_path)
        assert C.stop_group(other.pid, tmp_path) is False
        time.sleep(0.2)
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()
    assert watchdog._pids(tmp_path) == []
