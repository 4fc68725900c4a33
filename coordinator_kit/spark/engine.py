"""Which engine a `logs` command runs on: the pure-Python parser or Spark, by input size.

Both engines give the same rows (tests/test_spark_load.py and tests/test_logs_engine.py check
it on the kit's datasets), and `logs report` the same text (its analyses run in plain Python
on the python side, `logs.analyses`; tests/test_logs_analyses_identity.py), so the choice is
only about time. Spark pays a fixed cost before its first row: starting the driver JVM and
the session, and compiling its queries on a cold JVM: 20-30 s for `logs parse` or `logs
report` on 53 lines on an idle 2-core machine, minutes when the machine is busy
(benchmarks/logs_small.py; figures in benchmarks/README.md). The Python parser starts at once
and reads ~24 MB/s on one core, streaming its rows to Parquet (memory stays flat); Spark
reads ~29 MB/s on this kind of 2-core machine once started (benchmarks/spark_logs.py). So
Spark only catches up after some GB of `logs parse`; `logs report` in Python also keeps the
rows in memory and runs its analyses on them (about as much CPU again as the parse), so it
gives up sooner. `AUTO_SPARK_BYTES` = 512 MiB serves all three commands: below it, `--engine
auto` (the default) parses in Python; above it, or when the input names remote URIs (hdfs://,
s3a://: only Spark reads them), or when a Spark master or Connect remote is given (an
argument or the kit's environment variables: the user has a cluster), it uses Spark.
`benchmarks/logs_small.py --gigabyte` times `logs parse` on 1 GB with each engine and prints
where Spark starts to win on the machine it runs on. `COORDINATOR_KIT_LOGS_SPARK_BYTES` moves
the threshold (e.g. lower on a machine with many cores).

Compressed files count by an estimate of their decompressed size (`COMPRESSED_RATIO` times
their size on disk): log text compresses about that much.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = ["ENGINES", "AUTO_SPARK_BYTES", "THRESHOLD_ENV", "COMPRESSED_RATIO", "EngineChoice",
           "input_bytes", "choose_engine"]

ENGINES = ("auto", "python", "spark")
AUTO_SPARK_BYTES = 512 * 1024 * 1024
THRESHOLD_ENV = "COORDINATOR_KIT_LOGS_SPARK_BYTES"
COMPRESSED_RATIO = 8


@dataclass(frozen=True)
class EngineChoice:
    engine: str          # "python" | "spark"
    why: str             # one line for the user

    def __str__(self) -> str:
        return f"{self.engine} ({self.why})"


def input_bytes(paths: Iterable[str]) -> int | None:
    """Estimated bytes of text under `paths` (logs.inputs.scan_inputs' files); None when a
    path is a URI with a scheme other than file:// (its size is Spark's to find out)."""
    from ..logs.inputs import scan_inputs

    paths = list(paths)
    if any("://" in p and not p.startswith("file://") for p in paths):
        return None
    files = scan_inputs([p.removeprefix("file://") for p in paths]).files
    return sum(f.size * (COMPRESSED_RATIO if f.codec else 1) for f in files)


def _threshold(env: Mapping[str, str]) -> int:
    text = env.get(THRESHOLD_ENV)
    if not text:
        return AUTO_SPARK_BYTES
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{THRESHOLD_ENV}={text!r} is not a whole number of bytes; unset it "
                         f"or give e.g. {AUTO_SPARK_BYTES}") from None
    if value < 0:
        raise ValueError(f"{THRESHOLD_ENV}={value} is negative; give 0 (always Spark) or more")
    return value


def _size(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{n} bytes"


def choose_engine(paths: Iterable[str], engine: str = "auto", *, master: str | None = None,
                  remote: str | None = None, env: Mapping[str, str] | None = None
                  ) -> EngineChoice:
    """The engine for `paths` (see the module docstring); `engine` python/spark is obeyed."""
    env = os.environ if env is None else env
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; use one of {', '.join(ENGINES)}")
    if engine != "auto":
        return EngineChoice(engine, "asked for")
    from .session import MASTER_ENV, REMOTE_ENV

    if master or remote:
        return EngineChoice("spark", "a Spark master or remote was given")
    for name in (MASTER_ENV, REMOTE_ENV, "SPARK_REMOTE"):
        if env.get(name):
            return EngineChoice("spark", f"${name} is set")
    size = input_bytes(paths)
    if size is None:
        return EngineChoice("spark", "the input names remote URIs")
    threshold = _threshold(env)
    if size < threshold:
        return EngineChoice("python", f"{_size(size)} of input, below {_size(threshold)}")
    return EngineChoice("spark", f"{_size(size)} of input, from {_size(threshold)} on")
