"""The lines Spark classifies: which files Spark reads itself, which Python hands it, numbered.

`spark_lines(paths, spark)` gives a DataFrame (value, file, line) of every physical line of
the input, and the notes on the input (`logs.inputs`, the same as the Python engine's). The
files come from `logs.inputs.scan_inputs`, so both engines read the same files; how each file
reaches Spark is chosen for speed and for agreement with the Python engine:

* **Small files** (under `SMALL_FILE_BYTES` each, up to a budget in all) are read by Python
  and handed to Spark as one DataFrame of lines. Spark's text source gives every file at least
  one task (the loader needs one block per partition to number lines, see below), and a task
  costs tens of milliseconds: 2,000 small files took about 100 s a pass, against 0.9 s for
  the Python engine. Handed, they are one table split over the cores, whatever their number.
  Python splits their lines exactly as the Python engine does (it is the same code).
* **Compressed files** (`.gz`, `.bz2`) are decompressed by Python first, to the end: a damaged
  one is handed with the lines read before the damage (Spark's own reader fails the whole job
  on it); a good `.gz` too big to hand is read by Spark itself (a gzip file is never split);
  a `.bz2` too big to hand is read by Spark and numbered by a counting job (Hadoop splits bzip2
  files into blocks whose line counts Python cannot know).
* **Other files** are read by Spark's text source. Their paths are given literally: Spark
  reads a path as a glob (`server[1].log` would look for `server1.log`), so `[]*?{}\\` are
  escaped; and they are read through Hadoop's RawLocalFileSystem, because the default local
  file system looks for a `.name.crc` checksum file beside each file, and a name with `:`
  (`a:b.log`) makes that name an invalid URI and the read fail.
* **Remote URIs** (hdfs://, s3a://) are Spark's alone, read and numbered as before.
* **CSV exports** of log viewers (a local file whose first line is a header of
  `logs.csvexport`) are not lines for Spark: `spark_lines` sets them aside and the loader hands
  their rows, classified by the Python engine's own reader, to Spark (`spark.load`).

Line numbers: Spark's text source splits big files into blocks read in parallel and numbers
nothing. `spark.sql.files.openCostInBytes` is set to `maxPartitionBytes` in the session, so each
block gets a partition of its own; Python counts the lines before each block (`lines_before`,
bytes only) and the main pass numbers a row from its `monotonically_increasing_id`. Files
Python cannot count (remote, bzip2) are counted by a Spark job (`_line_offsets`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from ..logs.inputs import InputNote, LogFile, damage_note, open_log, scan_inputs
from ..logs.csvexport import CsvHeader, csv_header
from ..logs.parse import SkippedFilesWarning, _line_text, iter_lines, skipped_note

__all__ = ["spark_lines", "plan_sources", "SourcePlan", "spark_path", "lines_before",
           "local_frame", "SMALL_FILE_BYTES", "handed_budget", "csv_file_header"]

PathsArg = str | os.PathLike[str] | Iterable[str | os.PathLike[str]]

# A file under this size is handed to Spark by Python (see the module docstring). At 4 MiB a
# file is ~0.3 s of parsing on one core, against a task's few tens of milliseconds.
SMALL_FILE_BYTES = 4 << 20
_GLOB = re.compile(r"([\\\[\]*?{}])")
_RAW_LOCAL = {"fs.file.impl": "org.apache.hadoop.fs.RawLocalFileSystem",
              "fs.file.impl.disable.cache": "true"}
_BYTE_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
               "g": 1 << 30, "gb": 1 << 30, "t": 1 << 40, "tb": 1 << 40}


def _F() -> Any:
    from pyspark.sql import functions as F
    return F


_ARROW_TYPES = {"string": "string", "long": "int64", "int": "int32"}


def local_frame(spark: Any, rows: list[tuple[Any, ...]], ddl: str) -> Any:
    """A small table made on the driver (`ddl`: "name type, ..." with types string, long,
    int), handed to Spark as Arrow. Not as a Python list: classic PySpark makes a list an RDD
    whose rows a Python worker unpickles on every executor, so a cluster's executors would
    need a Python of the driver's version; Arrow is read by the JVM itself (and Spark Connect
    sends it as it is), so the executors need none."""
    import pyarrow as pa

    fields = [tuple(part.split()) for part in ddl.split(",")]
    schema = pa.schema([(name, getattr(pa, _ARROW_TYPES[kind])()) for name, kind in fields])
    columns = list(zip(*rows)) if rows else [()] * len(fields)
    table = pa.table([pa.array(list(c), type=f.type) for c, f in zip(columns, schema)],
                     schema=schema)
    return spark.createDataFrame(table)


def spark_path(path: str) -> str:
    """`path` for Spark's readers, which read a path as a glob: its glob characters escaped."""
    return _GLOB.sub(r"\\\1", path)


def _bytes(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", text)
    if not m or m.group(2).lower() not in _BYTE_UNITS:
        raise ValueError(f"cannot read the byte size {text!r}")
    return int(m.group(1)) * _BYTE_UNITS[m.group(2).lower()]


def handed_budget(spark: Any) -> int:
    """How many bytes of small files Python may hand to Spark in one load: an eighth of the
    driver's memory (they live there as a table), between 64 MiB and 512 MiB."""
    try:
        memory = _bytes(spark.sparkContext.getConf().get("spark.driver.memory", "1g"))
    except Exception:                 # Spark Connect: no SparkContext here
        memory = 1 << 30
    return max(64 << 20, min(512 << 20, memory // 8))


@dataclass
class SourcePlan:
    """How each file reaches Spark (see the module docstring) and the notes on the input."""

    handed: list[LogFile] = field(default_factory=list)
    read: list[LogFile] = field(default_factory=list)       # Spark's text source, numbered
    counted: list[str] = field(default_factory=list)        # Spark reads, a job counts lines
    csv: list[LogFile] = field(default_factory=list)        # CSV exports, read by Python
    names: dict[str, str] = field(default_factory=dict)     # real path -> `file`
    notes: list[InputNote] = field(default_factory=list)
    decoded: dict[str, int] = field(default_factory=dict)   # compressed file -> bytes out


def _spark_can_name(path: str) -> bool:
    """A path Spark can be given: UTF-8 text (py4j), no control characters (Hadoop's URIs)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return not any(ord(c) < 32 or ord(c) == 127 for c in path)


def plan_sources(paths: PathsArg, budget: int, small: int | None = None) -> SourcePlan:
    """Decide how each file of `paths` reaches Spark; compressed files are decompressed once
    here (to find damage). Raises like `logs.inputs.scan_inputs`; no files at all ->
    FileNotFoundError."""
    small = SMALL_FILE_BYTES if small is None else small
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    local, remote = [], []
    for p in paths:
        text = os.fspath(p)
        (remote if "://" in text and not text.startswith("file://") else local).append(
            text.removeprefix("file://"))
    plan = SourcePlan(counted=list(remote))
    if local:
        inputs = scan_inputs(local)
        if inputs.kit_files:
            import warnings
            warnings.warn(skipped_note(inputs.kit_files), SkippedFilesWarning, stacklevel=4)
        plan.notes = list(inputs.notes)
        for f in inputs.files:
            size, damaged = f.size, False
            if f.codec is not None:
                size, lines, damage = _decompress(f)
                plan.decoded[f.name] = size
                if damage:
                    plan.notes.append(damage_note(f, damage, lines))
                    damaged = True
            if csv_file_header(f) is not None:
                plan.csv.append(f)
                continue
            real = os.path.realpath(f.path)
            must_hand = damaged or not _spark_can_name(real)
            if must_hand or (size < small and size <= budget):
                plan.handed.append(f)
                budget -= size
            elif f.codec == "bzip2":
                plan.counted.append(spark_path(real))
                plan.names[os.path.normpath(real)] = f.name
            else:
                plan.read.append(f)
                plan.names[os.path.normpath(real)] = f.name
    if not (plan.handed or plan.read or plan.counted or plan.csv):
        why = "".join(f"; {n}" for n in plan.notes)
        raise FileNotFoundError(f"no log files to read under "
                                f"{', '.join(map(os.fspath, paths))}{why}")
    return plan


def csv_file_header(f: LogFile) -> CsvHeader | None:
    """The header of `f` when it is a log viewer's CSV export (`logs.csvexport`): its first
    line is read (decompressed), nothing more."""
    try:
        with open_log(f) as stream:
            first = next(iter_lines(stream, 1 << 16), None)
    except OSError:
        return None
    return csv_header(_line_text(first)) if first is not None else None


def _decompress(f: LogFile) -> tuple[int, int, str | None]:
    """(bytes decompressed, lines, damage or None): the whole file read once."""
    lines = 0
    with open_log(f) as stream:
        for _ in iter_lines(stream):
            lines += 1
        return stream.bytes_out, lines, stream.damage


def _plain_path(uri: str) -> str:
    """`_metadata.file_path` (a URI) as the plain path the Python parser reports."""
    if uri.startswith("file:"):
        rest = uri[len("file:"):]
        rest = rest[2:] if rest.startswith("//") else rest
        return unquote(rest)
    return uri


def _reader(spark: Any) -> Any:
    reader = spark.read
    for key, value in _RAW_LOCAL.items():
        reader = reader.option(key, value)
    return reader


def lines_before(path: str | os.PathLike[str], starts: list[int]) -> dict[int, int]:
    """For each block start s > 0 of a file, how many of its lines belong to earlier blocks.

    Hadoop's LineReader (Spark's text source) gives a block [s, e) the lines that start in
    (s, e]: so the count is the number of line starts p <= s, that is 1 + the line
    terminators (\\n, \\r\\n, lone \\r) whose next line starts at or before s.
    """
    out: dict[int, int] = {}
    lf = cr = crlf = 0
    pos, prev = 0, b""
    with open(path, "rb") as f:
        for s in sorted(starts):
            while pos < s:
                chunk = f.read(min(1 << 24, s - pos))
                if not chunk:
                    break
                lf += chunk.count(b"\n")
                cr += chunk.count(b"\r")
                crlf += chunk.count(b"\r\n") + (prev == b"\r" and chunk[:1] == b"\n")
                pos += len(chunk)
                prev = chunk[-1:]
            peek = f.read(1)
            f.seek(pos)
            out[s] = 1 + lf + cr - crlf - (prev == b"\r" and peek == b"\n")
    return out


_OFFSETS = "o_uri string, o_block long, o_file string, first long, before long"


def _local_offsets(spark: Any, files: list[LogFile]) -> Any | None:
    """(file URI, block, `file` name, 0, lines before the block) for local files, from the
    files' bytes; None when Spark lists a file under another name (then a job counts).

    Relies on one block per partition (`spark.sql.files.openCostInBytes` >=
    `maxPartitionBytes`, which `spark_lines` sets): the row's id within its partition is then
    its line within the block, and blocks start at multiples of maxPartitionBytes. A gzip
    file is never split: one block."""
    block = _bytes(spark.conf.get("spark.sql.files.maxPartitionBytes", "128MB"))
    given = [os.path.realpath(f.path) for f in files]
    uris = _reader(spark).text([spark_path(p) for p in given]).inputFiles()
    by_path = {os.path.normpath(_plain_path(u)): u for u in uris}
    rows = []
    for f, real in zip(files, given):
        uri = by_path.get(os.path.normpath(real))
        if uri is None:
            return None
        starts = [] if f.codec else list(range(block, f.size, block))
        before = lines_before(real, starts) if starts else {}
        # `inputFiles` says file:///x where `_metadata.file_path` says file:/x: give both
        forms = {uri, re.sub("^file:///", "file:/", uri), re.sub("^file:/(?!/)", "file:///", uri)}
        rows.extend((form, s, f.name, 0, before.get(s, 0)) for form in sorted(forms)
                    for s in [0, *starts])
    return local_frame(spark, rows, _OFFSETS)


def _line_offsets(spark: Any, paths: list[str], names: dict[str, str]) -> Any:
    """(file URI, block, `file` name, first id, lines before the block) for every block.

    A counting job with no regex: Spark's text source reads big files in blocks, in parallel,
    and numbers nothing; `monotonically_increasing_id` is (partition << 33) + row in the
    partition, so with each block's first id and the line count of the blocks before it, the
    main pass turns an id back into a line number. Both jobs read the same files with the same
    settings, so they see the same blocks in the same partitions.
    """
    F = _F()
    stats = (_reader(spark).text(paths)
             .select(F.col("_metadata.file_path").alias("uri"),
                     F.col("_metadata.file_block_start").alias("block"),
                     F.monotonically_increasing_id().alias("rid"))
             .groupBy("uri", "block")
             .agg(F.min("rid").alias("first"), F.count(F.lit(1)).alias("n"))
             .collect())
    rows, before = [], {}
    for r in sorted(stats, key=lambda r: (r["uri"], r["block"])):
        offset = before.get(r["uri"], 0)
        plain = _plain_path(r["uri"])
        name = names.get(os.path.normpath(plain), plain)
        rows.append((r["uri"], int(r["block"]), name, int(r["first"]), offset))
        before[r["uri"]] = offset + int(r["n"])
    return local_frame(spark, rows, _OFFSETS)


def _handed_frame(spark: Any, files: list[LogFile]) -> Any | None:
    """The lines of `files`, read by Python, as a DataFrame (value, file, line). The value is
    the line's bytes (cast to a string in Spark, unchecked, as the text source gives them)."""
    import pyarrow as pa

    F = _F()
    values: list[bytes] = []
    ids: list[int] = []
    numbers: list[int] = []
    for k, f in enumerate(files):
        with open_log(f) as stream:
            n = 0
            for n, line in enumerate(iter_lines(stream), start=1):
                values.append(line)
            ids.extend([k] * n)
            numbers.extend(range(1, n + 1))
    if not values:
        return None
    table = pa.table({"value": pa.array(values, pa.binary()),
                      "fid": pa.array(ids, pa.int32()),
                      "line": pa.array(numbers, pa.int64())})
    # createDataFrame makes one partition per Arrow batch (maxRecordsPerBatch rows, 10,000 by
    # default): as many batches as cores instead, not hundreds of tiny tasks
    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    try:
        cores = max(1, int(spark.sparkContext.defaultParallelism))
    except Exception:                 # Spark Connect
        cores = 2
    previous = spark.conf.get(key, None)
    spark.conf.set(key, str(max(10_000, -(-len(values) // cores))))
    try:
        lines = spark.createDataFrame(table)
    finally:
        if previous is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, previous)
    names = local_frame(spark, [(k, f.name) for k, f in enumerate(files)],
                        "h_fid int, h_file string")
    joined = lines.join(F.broadcast(names), lines["fid"] == names["h_fid"])
    return joined.select(F.col("value").cast("string").alias("value"),
                         F.col("h_file").alias("file"), "line")


def _read_frame(spark: Any, plan: SourcePlan) -> Any | None:
    """The lines of the files Spark reads itself, numbered (see the module docstring)."""
    F = _F()
    if not (plan.read or plan.counted):
        return None
    paths = [spark_path(os.path.realpath(f.path)) for f in plan.read] + plan.counted
    offsets = None if plan.counted else _local_offsets(spark, plan.read)
    if offsets is None:
        offsets = _line_offsets(spark, paths, plan.names)
        row_in_block = F.col("rid") - F.col("first")
    else:
        row_in_block = F.col("rid").bitwiseAND(F.lit((1 << 33) - 1))
    raw = _reader(spark).text(paths).select(
        "value", F.col("_metadata.file_path").alias("uri"),
        F.col("_metadata.file_block_start").alias("block"),
        F.monotonically_increasing_id().alias("rid"))
    numbered = raw.join(F.broadcast(offsets), (raw["uri"] == offsets["o_uri"])
                        & (raw["block"] == offsets["o_block"]))
    return numbered.select("value", F.col("o_file").alias("file"),
                           (row_in_block + F.col("before") + 1).alias("line"))


def spark_lines(paths: PathsArg, spark: Any, *, small: int | None = None,
                csv: list[LogFile] | None = None) -> tuple[Any, list[InputNote]]:
    """(DataFrame of value, file, line for every physical line; the notes on the input).

    CSV exports (`logs.csvexport`) are left out and appended to `csv` when it is given (the
    loader classifies their rows in Python, `spark.load`); without it they are lines of text.

    Lazy for the files Spark reads; small and compressed files are read now. Sets
    `spark.sql.files.openCostInBytes` to `maxPartitionBytes` in the session (one block per
    partition, for the line numbers)."""
    block = _bytes(spark.conf.get("spark.sql.files.maxPartitionBytes", "128MB"))
    # a file of more than one block is never "small": Spark reads its blocks in parallel
    plan = plan_sources(paths, handed_budget(spark),
                        min(SMALL_FILE_BYTES if small is None else small, block))
    spark.conf.set("spark.sql.files.openCostInBytes", str(block))
    if csv is not None:
        csv.extend(plan.csv)
    else:
        plan.handed.extend(plan.csv)
    frames = [df for df in (_read_frame(spark, plan), _handed_frame(spark, plan.handed))
              if df is not None]
    if not frames:
        empty = local_frame(spark, [], "value string, file string, line long")
        return empty, plan.notes
    lines = frames[0]
    for df in frames[1:]:
        lines = lines.unionByName(df)
    return lines, plan.notes
