"""The Spark log pipeline on a real cluster gives exactly the rows local mode gives.

A Spark standalone cluster (a master and two workers, `org.apache.spark.deploy.master.Master`
and `...deploy.worker.Worker`, 1 core and 1 GiB each) and a Spark Connect server
(`org.apache.spark.sql.connect.service.SparkConnectServer`, running its jobs on that cluster)
are started on 127.0.0.1 by `coordinator_kit.spark.cluster`. On each, a process of its own
(one Spark session per process: `tests/spark_dump.py`) runs `parse_logs`/`load_logs`, every
analysis of `coordinator_kit.spark.analyses` on three of the kit's datasets and a file with a
stack trace and an unreadable line, and its JSON is compared with the same function run by
this process's local session: same counts, same columns and types, same rows in the same
order.

On the cluster the files go through Spark's own text source in 16 KiB blocks
(`spark.sql.files.maxPartitionBytes`), numbered on the executors from the driver's count of
lines before each block (`spark.sources`), where the local session hands the same small files
from Python: two different routes that must give the same line numbers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from coordinator_kit.spark.cluster import (ClusterError, LocalSparkCluster, check_java,
                                           connect_client_missing, spark_home)

# Its cost is fixed cost: three Spark applications (local, standalone, Connect) starting and
# planning ~40 small queries each on cold JVMs, side by side (the input's size hardly counts:
# without many-groups, 1.7 MB of its 2.4 MB, the fixture took as long). It took 17.5 min on this 2-core
# machine under a load of 30-45 from other jobs (about 6x slower than idle for every Spark
# figure measured that day); the limits leave room for such a machine.
pytestmark = [pytest.mark.spark, pytest.mark.timeout(1800)]

REPO = Path(__file__).resolve().parent.parent
DATASETS = [str(REPO / "datasets" / name) for name in
            ("coordinator-failover", "long-gc-pause", "many-groups")]
# a record with a stack trace under it (continuation lines, attached to its `raw`) and a line
# of no known layout (quarantined)
EXTRA_LOG = """\
[2025-03-03 09:00:05,000] INFO [GroupCoordinator id=0]: Member consumer-9-1 in group extra \
has failed, removing it from the group (kafka.coordinator.group.GroupCoordinator)
java.lang.IllegalStateException: the coordinator is loading
\tat org.apache.kafka.coordinator.group.GroupMetadataManager.load(GroupMetadataManager.java:1)
<<< not a log line of any layout >>>
"""
# files over 16 KiB are read by Spark's text source, in blocks of 16 KiB, on the executors
BLOCKS = ["--sql-conf", "spark.sql.files.maxPartitionBytes=16k"]
DUMP_TIMEOUT_S = 1500
NO_PYTHON = "/nonexistent/python-for-executors"


def skip_reason() -> str | None:
    """Why the cluster tests cannot run here (None: they can)."""
    try:
        check_java()
        spark_home()
    except ClusterError as exc:
        return str(exc)
    return None


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> list[str]:
    extra = tmp_path_factory.mktemp("cluster-inputs") / "server-extra.log"
    extra.write_text(EXTRA_LOG)
    return [*DATASETS, str(extra)]


class Dump:
    """tests/spark_dump.py running in a process of its own (one Spark session per process)."""

    def __init__(self, inputs: list[str], args: list[str], out: Path, **env_vars: str) -> None:
        env = dict(os.environ, PYTHONHASHSEED="0",
                   PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   **env_vars)
        for key in ("SPARK_REMOTE", "COORDINATOR_KIT_SPARK_MASTER",
                    "COORDINATOR_KIT_SPARK_REMOTE"):
            env.pop(key, None)
        self.args, self.out = args, out
        self.proc = subprocess.Popen(
            [sys.executable, str(REPO / "tests" / "spark_dump.py"), *inputs, *args, "--out",
             str(out)], env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)

    def result(self) -> dict:
        try:
            _, err = self.proc.communicate(timeout=DUMP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
            pytest.fail(f"spark_dump.py {' '.join(self.args)} took over {DUMP_TIMEOUT_S} s:"
                        f"\n{err[-4000:]}")
        assert self.proc.returncode == 0, \
            f"spark_dump.py {' '.join(self.args)} failed:\n{err[-4000:]}"
        return json.loads(self.out.read_text())

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


@pytest.fixture(scope="module")
def runs(spark, inputs, tmp_path_factory):
    """The cluster, a Connect server on it, a dump through each and the local session's
    results, all at once: {"local", "standalone", "connect", "cluster", "server"}.

    Each worker offers 2 cores (1 GiB: two 512 MiB executors), and each application takes 2,
    one executor per worker, so the standalone application and the Connect server's run side
    by side."""
    reason = skip_reason()
    if reason:
        pytest.skip(f"Spark cluster tests skipped: {reason}")
    folder = tmp_path_factory.mktemp("cluster-results")
    cluster = LocalSparkCluster(workers=2, cores=2, memory="1g", lifetime_s=1200,
                                start_timeout_s=300)
    dumps: list[Dump] = []
    server = None
    # the cluster's JVMs (master, workers, executors, the dumps' drivers, the Connect server)
    # live for one short run: C1 alone compiles what they run soon enough and leaves the two
    # cores to the work (this fixture: 170 s -> 91 s on an idle 2-core machine). The local
    # session is already running, with both compilers.
    env = pytest.MonkeyPatch()
    env.setenv("JAVA_TOOL_OPTIONS", "-XX:TieredStopAtLevel=1", prepend=" ")
    try:
        cluster.start()
        config = {**cluster.session_config(executor_memory="512m"), "spark.cores.max": "2",
                  "spark.executor.cores": "1", "spark.driver.memory": "1g"}
        conf = [a for k, v in config.items() for a in ("--conf", f"{k}={v}")]
        # executors need no Python: the pipeline is DataFrame expressions and Arrow tables, so
        # a Python worker (PYSPARK_PYTHON) that cannot start fails nothing
        dumps.append(Dump(inputs, ["--master", cluster.master_url, *conf, *BLOCKS],
                          folder / "standalone.json", PYSPARK_PYTHON=NO_PYTHON))
        missing = connect_client_missing()
        if not missing:
            server = cluster.connect_server(driver_memory="1g", executor_memory="512m",
                                            cores_max=2, conf={"spark.executor.cores": "1"})
            dumps.append(Dump(inputs, ["--remote", server.remote_url, *BLOCKS],
                              folder / "connect.json"))
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from spark_dump import results

        out = {"local": results(inputs, spark), "cluster": cluster, "server": server,
               "missing": missing, "standalone": dumps[0].result(),
               "connect": dumps[1].result() if server else None}
        yield out
    finally:
        env.undo()
        for d in dumps:
            d.stop()
        cluster.stop()
        left = cluster.leftovers() + (server.leftovers() if server else [])
        assert not left, f"processes left behind by the cluster: {left}"


def assert_same(got: dict, want: dict) -> None:
    """Every table equal; on a difference, which table and the first rows that differ."""
    assert set(got) - {"_session"} == set(want)
    assert got["counts"] == want["counts"]
    for name in sorted(set(want) - {"counts"}):
        g, w = got[name], want[name]
        assert g["columns"] == w["columns"], name
        if g["rows"] != w["rows"]:
            diff = [(i, a, b) for i, (a, b) in enumerate(zip(g["rows"], w["rows"])) if a != b]
            pytest.fail(f"{name}: {len(g['rows'])} rows against local {len(w['rows'])}; first "
                        f"differences (row, cluster, local): {diff[:3]}")


def test_the_inputs_hold_every_kind_of_result(runs):
    # so that equality below means something: no analysis compared on zero rows
    local = runs["local"]
    for name in ("events", "quarantine", "rebalance_episodes", "member_departures",
                 "heartbeat_gaps_client", "heartbeat_gaps_broker",
                 "heartbeat_gap_summary_client", "heartbeat_gap_summary_broker",
                 "coordinator_loads", "group_state_timeline"):
        assert local[name]["rows"], f"{name} is empty on the test inputs"
    raw = [c.split()[0] for c in local["events"]["columns"]].index("raw")
    assert any("\tat org.apache.kafka" in r[raw] for r in local["events"]["rows"]), \
        "the stack trace is not attached to its record"


def test_a_standalone_cluster_gives_the_rows_of_local_mode(runs):
    cluster = runs["cluster"]
    got = runs["standalone"]
    assert got["_session"]["master"] == cluster.master_url
    assert got["_session"]["maxPartitionBytes"] == "16k"
    assert_same(got, runs["local"])
    # the work ran in executors on both workers (a worker keeps an executor's stderr in
    # work-dir/<app id>/<executor id>/), not in the driver
    for i in (1, 2):
        logs = list((cluster.folder / f"worker-{i}").glob("app-*/*/stderr"))
        assert logs, f"worker {i} ran no executor"
        assert any("Running task" in p.read_text(errors="replace") for p in logs), \
            f"worker {i}'s executors ran no task"


def test_spark_connect_on_the_cluster_gives_the_rows_of_local_mode(runs):
    if runs["missing"]:
        pytest.skip(f"the Spark Connect client needs {', '.join(runs['missing'])} (pip install "
                    "'pyspark[connect]==4.3.0')")
    got, server = runs["connect"], runs["server"]
    assert got["_session"]["remote"] == server.remote_url
    assert_same(got, runs["local"])
    log = server.log("connect").read_text(errors="replace")
    assert "Spark Connect server started at" in log
    assert "Starting task" in log and "executor" in log, "no task ran on the cluster"
