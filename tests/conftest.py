"""Shared pytest configuration for the kit's tests.

The session-scoped Spark fixture (local[1], UTC, UI off, one shuffle partition) will live
here. Keep this module free of pyspark imports at import time: the pure-Python model tests
must run without a JVM; import pyspark inside the fixture instead.
"""

import os
import shutil

import pytest


@pytest.fixture(scope="session")
def spark():
    """One local Spark session for the whole test run (tests using it carry @pytest.mark.spark).

    local[1], one shuffle partition, no UI, no adaptive execution, 3 GB driver, UTC: what keeps a
    small test session fast to start and its results stable. Skips when there is no Java to run
    it.
    """
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark tests need Java 17+ (no `java` on PATH, JAVA_HOME unset)")
    from coordinator_kit.spark.session import get_session

    session = get_session("local[1]", app_name="coordinator-kit-tests", config={
        "spark.sql.shuffle.partitions": "1",
        "spark.default.parallelism": "1",
        "spark.sql.adaptive.enabled": "false",
        # the suite runs some thousand queries with wide plans (every analysis on every
        # dataset, in both engines): 1 GB ran out of heap in a full run, 2 GB came within a
        # few hundred MB of it (a parse plan is ~0.8 MB of text, and every DataFrame still
        # referenced from Python keeps its analysed copy), and the SQL listener keeps each
        # execution's plan unless told to keep only a few
        "spark.driver.memory": "3g",
        "spark.sql.ui.retainedExecutions": "20",
        "spark.ui.retainedJobs": "50",
        "spark.ui.retainedStages": "50",
    })
    yield session
    session.stop()


def pytest_report_header(config):
    """Say at the top of the run whether tests/test_real_kafka.py will start a real broker and
    tests/test_spark_cluster.py a Spark cluster, or why not."""
    lines = []
    try:
        from test_real_kafka import skip_reason
    except Exception:  # the module or its imports are not there: nothing to say
        pass
    else:
        from coordinator_kit.realkafka.fetch import KAFKA_VERSION, cache_dir, is_fetched
        reason = skip_reason()
        if reason:
            lines.append(f"real Kafka tests: SKIPPED, {reason}")
        else:
            how = "cached" if is_fetched() else "fetched once from Maven Central (about 55 MB)"
            lines.append(f"real Kafka tests: run against Apache Kafka {KAFKA_VERSION} ({how}, "
                         f"{cache_dir()})")
    try:
        from test_spark_cluster import skip_reason as cluster_skip_reason
    except Exception:
        pass
    else:
        reason = cluster_skip_reason()
        lines.append(f"Spark cluster tests: SKIPPED, {reason}" if reason else
                     "Spark cluster tests: a standalone master, 2 workers and a Spark Connect "
                     "server on 127.0.0.1, from the PySpark package")
    return lines or None
