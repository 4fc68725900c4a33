"""The pure-Python analyses (coordinator_kit.logs.analyses) give what the Spark ones
(coordinator_kit.spark.analyses) give: same columns, types, rows, order and NULLs, on every
dataset under datasets/ and on the sample logs of tests/data/logs; and `logs report` prints the
same text from either. The two modules must move together: a change to one that is not made
to the other fails here.

The Spark side reads the same parsed rows as the Python side (the python parser's events
handed to Spark as one table, as `logs report --engine python` did before): the parsers are
compared with each other in tests/test_spark_load.py, the analyses here.
"""

from __future__ import annotations

import io
import math
from pathlib import Path

import pytest

from coordinator_kit.logs import analyses as P
from coordinator_kit.logs.parse import parse_paths
from coordinator_kit.logs.quarantine import quarantine_shapes
from coordinator_kit.spark.report import write_report

pytestmark = [pytest.mark.spark,
              pytest.mark.filterwarnings("ignore::coordinator_kit.logs.parse.SkippedFilesWarning")]

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "logs"
DATASETS = sorted(d for d in (ROOT / "datasets").iterdir() if d.is_dir() and any(d.glob("*.log")))
CLIENT_LOGS = sorted((ROOT / "datasets").glob("*/client-*.log"))

# name -> paths: every dataset; the sample logs (every layout and wording the parser reads);
# the datasets' client logs alone (no broker lines: every analysis falls back to the clients'
# view, `derived_from` = "client").
INPUTS = {**{f"datasets/{d.name}": [str(d)] for d in DATASETS},
          "tests/data/logs": [str(DATA)],
          "datasets/*/client-*.log": [str(p) for p in CLIENT_LOGS]}

# Spark type -> the pandas dtypes logs.analyses gives it (nullable integers keep their type).
_DTYPES = {"string": {"object"}, "timestamp": {"datetime64[ns]"}, "int": {"Int32"},
           "bigint": {"Int64"}, "double": {"float64"}}


def test_every_dataset_is_covered():
    assert len(DATASETS) >= 8 and CLIENT_LOGS
    assert {"one-dies", "many-groups", "coordinator-failover"} <= {d.name for d in DATASETS}


def _spark_events(spark, events):
    import pyarrow as pa

    from coordinator_kit.spark.schema import arrow_schema, spark_schema

    table = pa.Table.from_pylist(events, schema=arrow_schema())
    return spark.createDataFrame(table, spark_schema())


def _plain(v):
    """A cell as a plain Python value: None for every kind of NULL, datetime for timestamps."""
    import pandas as pd

    if v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, pd.Timestamp):
        return v.to_pydatetime()
    return v.item() if hasattr(v, "item") else v


def _results(A, events):
    gaps_client = A.heartbeat_gaps(events, basis="client")
    gaps_broker = A.heartbeat_gaps(events, basis="broker")
    return {"rebalance_episodes": A.rebalance_episodes(events),
            "member_departures": A.member_departures(events),
            "heartbeat_gaps client": gaps_client, "heartbeat_gaps broker": gaps_broker,
            "heartbeat_gap_summary client": A.heartbeat_gap_summary(gaps_client),
            "heartbeat_gap_summary broker": A.heartbeat_gap_summary(gaps_broker),
            "coordinator_loads": A.coordinator_loads(events),
            "group_state_timeline": A.group_state_timeline(events)}


@pytest.fixture(scope="module")
def utc(spark):
    zone = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    yield spark
    spark.conf.set("spark.sql.session.timeZone", zone)


@pytest.mark.parametrize("name", list(INPUTS))
def test_python_analyses_equal_spark_analyses(utc, name):
    from coordinator_kit.spark import analyses as S

    events = parse_paths(INPUTS[name]).events
    frames = _spark_events(utc, events).cache()
    try:
        spark_results = {k: (df.schema, df.collect()) for k, df in _results(S, frames).items()}
    finally:
        frames.unpersist()
    python_results = _results(P, events)
    for key, (schema, rows) in spark_results.items():
        df = python_results[key]
        assert list(df.columns) == [f.name for f in schema.fields], key
        for field in schema.fields:
            assert str(df[field.name].dtype) in _DTYPES[field.dataType.simpleString()], \
                (key, field.name, df[field.name].dtype)
        got = [tuple(_plain(v) for v in row) for row in df.itertuples(index=False, name=None)]
        want = [tuple(row) for row in rows]
        assert got == want, f"{name}: {key} differs between logs.analyses and spark.analyses"


@pytest.mark.parametrize("name", ["datasets/one-dies", "datasets/long-gc-pause",
                                  "datasets/coordinator-failover", "tests/data/logs",
                                  "datasets/*/client-*.log"])
def test_the_report_text_is_the_same_from_either_engine(utc, name):
    result = parse_paths(INPUTS[name])
    shapes = quarantine_shapes(result.quarantine)
    texts = {}
    for engine, events in (("python", result.events),
                           ("spark", _spark_events(utc, result.events))):
        out = io.StringIO()
        write_report(events, out, limit=0, width=0, shapes=shapes)
        texts[engine] = out.getvalue()
    assert texts["python"] == texts["spark"]
    assert "== Group state timeline" in texts["python"]


def test_the_python_analyses_read_a_pandas_frame_like_the_rows():
    """ParseResult.to_pandas() (what a notebook holds) gives the same results as the rows."""
    result = parse_paths(INPUTS["datasets/long-gc-pause"])
    frame = result.to_pandas()
    for key, df in _results(P, result.events).items():
        assert df.equals(_results(P, frame)[key]), key


def test_the_two_modules_share_their_constants():
    """Every constant of spark.analyses (event names, states, causes, columns, patterns) is in
    logs.analyses with the same value: a constant added or changed on one side only (new log
    events to read, say) fails here before it can make the results differ."""
    from coordinator_kit.spark import analyses as S

    def constants(module):
        return {n: v for n, v in vars(module).items()
                if n.lstrip("_").isupper() and not n.startswith("__")
                and isinstance(v, (str, tuple, list, dict, set, frozenset))}

    python = constants(P)
    for name, value in constants(S).items():
        assert name in python, f"spark.analyses.{name} has no counterpart in logs.analyses"
        mine = python[name]
        if name == "ANALYSES":                  # name -> (function, title): same names, titles
            assert {k: (f.__name__, t) for k, (f, t) in mine.items()} == \
                {k: (f.__name__, t) for k, (f, t) in value.items()}
        elif isinstance(value, (list, set, frozenset)):
            assert set(mine) == set(value), name
        else:
            assert mine == value, name
