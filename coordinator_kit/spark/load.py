"""Load Kafka logs into Spark: one pass, one combined regex per stage, no Python UDF.

    events = load_logs("logs/")                      # DataFrame, schema.EVENT_COLUMNS
    parsed = parse_logs("logs/")                     # events, quarantine, counts()
    counts = write_parsed("logs/", "out/")           # events.parquet + quarantine.parquet

Per physical line, in one `select` (the rules of `coordinator_kit.logs.parse`, which gives the
same rows without a JVM): invalid UTF-8 / control characters -> quarantine; blank -> other;
`{` -> `from_json`; else the layout stage: `regexp_extract` of the combined layout regex gives
the layout, one `regexp_replace` of that layout's own regex gives its fields; then the message
stage does the same with the combined template regex. See `logs.patterns` for the code-table
trick that lets one regex say which of 220 alternatives matched.

Which files, and how they reach Spark (small and compressed ones handed by Python, the others
read by Spark's text source with their paths escaped, every line numbered): `spark.sources`.

Continuation lines (stack traces, indented blocks) are classified on their own in the pass and
attached afterwards to the record above them: runs of consecutive continuation lines are found
among the continuation rows only (small), so the big data is never shuffled.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..logs.fields import COLUMN_NAMES
from ..logs.inputs import InputNote
from ..logs.parse import (BAD_TIME, EPOCH_MILLIS_FROM, JSON_EPOCH_RE, JSON_TS_RE, TS_MAX,
                          TS_MIN, ParseCounts, notes_warning)
from ..logs.patterns import (BARE_LAYOUT, BARE_OK, BLANK_RE, CLIENT_LAYOUTS, CLIENT_LOGGER_RE, CONTINUATION_RE,
                             CONTROL_RE, COORDINATION_LOGGER_RE, HEAD_RE, JSON_KEYS, LAYOUTS,
                             LAYOUT_CLASSIFIER, LEVEL_ALIASES, LOGGER_LEVELS, LOG4J_HEAD_RE, LOG4J_TAIL_RE, MESSAGE_CLASSIFIER,
                             MESSAGE_ENTRIES, SEP, Classifier)
from ..logs.joins import ALONE_OTHER_RE, HEADS_RE, JOINS, MAX_JOIN_LINES, MONTHS
from ..logs.wrappers import K9S_BORDER, K9S_TRIM_RE, WRAPPER_RE
from ..logs.inputs import LogFile, open_log
from ..logs.parse import iter_lines
from .sources import lines_before, spark_lines

__all__ = ["load_logs", "load_lines", "parse_logs", "write_parsed", "ParsedLogs", "resolve_files",
           "attach_continuations", "lines_before"]

PathsArg = str | os.PathLike[str] | Iterable[str | os.PathLike[str]]


def _F() -> Any:
    from pyspark.sql import functions as F
    return F


def resolve_files(paths: PathsArg) -> list[str]:
    """The files to read (`logs.inputs.scan_inputs`: directories walked, hidden and `_` names
    skipped, symlinked folders followed once, each file once), as the names the `file` column
    gives; URIs with a scheme (hdfs://, s3a://) are passed to Spark as they are."""
    from ..logs.inputs import scan_inputs

    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    texts = [os.fspath(p) for p in paths]
    remote = [t for t in texts if "://" in t and not t.startswith("file://")]
    local = [t.removeprefix("file://") for t in texts if t not in remote]
    files = [f.name for f in scan_inputs(local).files] if local else []
    if not files and not remote:
        raise FileNotFoundError(f"no log files under {', '.join(texts)}")
    return files + remote


def _session(spark: Any) -> Any:
    if spark is not None:
        return spark
    from .session import get_session
    return get_session()


def _bucket_case(F: Any, clf: Classifier, text: Any, bucket: Any) -> Any:
    """split(CASE bucket WHEN b THEN regexp_replace(text, bucket regex b, its replacement)
    END, SEP): parts[0] is the code of the alternative inside the bucket, parts[1:] its
    slots (see logs.patterns.Classifier)."""
    expr = None
    for b, (rx, repl) in enumerate(clf.buckets):
        branch = F.regexp_replace(text, rx, repl)
        expr = F.when(bucket == b, branch) if expr is None else expr.when(bucket == b, branch)
    return F.split(expr, SEP)


def _slot(F: Any, clf: Classifier, parts: Any, name: str) -> Any:
    """The value of slot `name` for the alternative that matched (its segment of the fields
    a bucket's regexp_replace wrote, `Classifier.slot_index`), '' when it has none."""
    j = F.position(F.get(parts, 0), F.lit(clf.table)) - 1
    return F.get(parts, j * len(clf.slots) + clf.slot_index(0, name))


def _alt_index(F: Any, clf: Classifier, bucket: Any, parts: Any) -> Any:
    code = F.get(parts, 0)
    return F.when(F.length(code) == 2,
                  bucket * clf.bucket_size + F.position(code, F.lit(clf.table)) - 1)


_BAD, _BLANK, _JSON, _TEXT = 0, 1, 2, 3
# CONTROL_RE with every character listed: Java makes those a 256-bit table lookup, where
# ranges would be a chain of predicates per character.
CONTROL_BYTES_RE = "[" + "".join(f"\\x{c:02x}" for c in [*range(0, 9), 11, 12, *range(14, 32), 127]) \
    + "\\ufffd]"
# The same test turned round: a line WITHOUT control characters matches at position 0 in one
# greedy run of the negated class (a tight loop in Java's engine), where `find` of the class
# itself tries the class at every position through the engine's generic loop (~3x slower).
# `\z` (not `$`, which also stops before a final line terminator). Only lines with a control
# character (rare) backtrack.
CLEAN_LINE_RE = "^[^" + CONTROL_BYTES_RE[1:] + "*\\z"


def _array(F: Any, values: list[str | None]) -> Any:
    return F.array(*[F.lit(v).cast("string") for v in values])


def _ts(F: Any, date: Any, time: Any, frac: Any, tz: Any, epoch: Any, epoch_unit: Any) -> Any:
    """UTC timestamp from layout pieces (same arithmetic as logs.parse.make_ts/epoch_ts)."""
    tz_norm = F.coalesce(F.when(F.length(tz) == 5, F.concat(F.substring(tz, 1, 3), F.lit(":"),
                                                            F.substring(tz, 4, 2))).otherwise(tz),
                         F.lit("Z"))
    # `Nov 25, 2026` and `10:00:00 AM` (JUL, KIBANA), as logs.parse._named_ts
    at = F.instr(F.lit(MONTHS), F.substring(date, 1, 3))
    month = F.when((at > 0) & ((at - 1) % 3 == 0), ((at - 1) / 3 + 1).cast("int"))
    named = F.format_string("%s-%02d-%02d", F.regexp_extract(date, ", ([0-9]{4})$", 1), month,
                            F.regexp_extract(date, "^[A-Za-z]{3} ([0-9]{1,2}),", 1).cast("int"))
    date = F.when(date.rlike("^[A-Za-z]"), named) \
        .otherwise(F.translate(date, "/", "-"))   # Go's 2009/11/10 (GO-STD), as _base_ts
    hour = F.substring_index(time, ":", 1).cast("int")
    clock = F.substring_index(time, " ", 1)
    h24 = F.when(hour.between(1, 12), hour % 12 + F.when(time.endswith("PM"), 12).otherwise(0))
    time = F.when(time.endswith("AM") | time.endswith("PM"),
                  F.format_string("%02d:%s", h24, F.substring(clock, -5, 5))).otherwise(time)
    iso = F.concat(date, F.lit("T"), time, F.lit("."), F.rpad(F.coalesce(frac, F.lit("")), 6, "0"),
                   tz_norm)
    micros = F.round(epoch.try_cast("decimal(20,6)") * epoch_unit, 0).try_cast("long")
    ts = F.when(epoch.isNotNull(), F.timestamp_micros(micros)) \
        .when(date.isNotNull() & time.isNotNull(), iso.try_cast("timestamp"))
    # only times pandas can hold (logs.parse.TS_MIN/TS_MAX): Spark holds year 0000 and
    # 294247, which collect() and toPandas() then fail on
    return F.when((ts >= F.lit(TS_MIN)) & (ts < F.lit(TS_MAX)), ts)


def _texts(df: Any) -> Any:
    """Lines (value, file, line) -> (file, line, raw, text0, text): text0 the line decoded
    without a leading BOM (NULL when its bytes are not UTF-8), text the same without the
    tool's prefix (logs.wrappers), as the Python parser's _line_text and strip_wrapper."""
    F = _F()
    v = F.col("value")
    valid = F.is_valid_utf8(v)
    s0 = df.select("file", "line", F.when(valid, v).otherwise(F.make_valid_utf8(v)).alias("raw"),
                   F.when(valid, F.when(v.startswith("\ufeff"), F.expr("substr(value, 2)"))
                          .otherwise(v)).alias("text0"))
    t0 = F.col("text0")
    unwrapped = F.regexp_replace(t0, WRAPPER_RE, "")
    return s0.select("file", "line", "raw", "text0", F.when(t0.startswith(K9S_BORDER),
                     F.regexp_replace(unwrapped, K9S_TRIM_RE, "")).otherwise(unwrapped)
                     .alias("text"))


def _classify(df: Any) -> Any:
    """Lines (value, file, line) -> lines with COLUMN_NAMES and `kind` (no joins)."""
    return _classify_texts(_texts(df))


def _classify_texts(s1: Any) -> Any:
    """`_texts` rows (file, line, raw, text) -> rows with COLUMN_NAMES and `kind`.

    A chain of narrow selects: every regex result is a column of its own (so it is computed
    once), and arrays and structs are unpacked into plain columns at once (so the generated
    code stays small enough for the JIT compiler and nothing nested is copied from step to
    step).
    """
    F = _F()
    L, M = LAYOUT_CLASSIFIER, MESSAGE_CLASSIFIER
    col = F.col

    def nz(c: Any) -> Any:
        return F.nullif(c, F.lit(""))

    s1 = s1.select("file", "line", "raw", "text")
    t = col("text")
    # line class as a small int (comparing ints, not strings, on every row); a blank line is
    # empty or starts with a space or TAB (tested on bytes before any regex runs)
    maybe_blank = (F.octet_length(t) == 0) | t.startswith(" ") | t.startswith("\t")
    c0 = (F.when(t.isNull() | ~t.rlike(CLEAN_LINE_RE), _BAD)
          .when(maybe_blank & t.rlike(BLANK_RE), _BLANK).when(t.startswith("{"), _JSON)
          .otherwise(_TEXT))
    s2 = s1.select("file", "line", "raw", "text", c0.alias("c0"))
    c0 = col("c0")

    # LOG4J fast path (the kit's layout, and Kafka's): the head regex on the first 64
    # characters, the tail regex on what follows the last " (", and the message cut out by
    # byte offsets (head and tail are ASCII), so the message never goes through the layout
    # regex. `lfast` is true only where the whole LOG4J regex matches, with the same fields;
    # other lines take the combined layout regex below. (LOG4J is the first layout, so it
    # wins wherever it matches.) Only byte counts are used: counting characters walks the line.
    log4j = (c0 == _TEXT) & t.startswith("[")
    head_win = F.substring(t, 1, 64)
    s2 = s2.select("*", F.when(log4j, F.split(F.regexp_replace(
        head_win, LOG4J_HEAD_RE, "$1" + SEP + "$2" + SEP + "$3" + SEP + "$4" + SEP), SEP))
        .alias("fh"), F.when(log4j, F.substring_index(t, " (", -1)).alias("ftail"))
    fh, ftail = col("fh"), col("ftail")
    s2 = s2.select("*", F.when(F.size(fh) == 5, F.octet_length(head_win)
                               - F.octet_length(F.get(fh, 4))).alias("fhead"),
                   F.when(F.size(fh) == 5, F.regexp_replace(ftail, LOG4J_TAIL_RE, "$1"))
                   .alias("flogger"))
    fhead, flogger = col("fhead"), col("flogger")
    s2 = s2.select("*", (F.octet_length(t) - fhead - F.octet_length(ftail) - 2).alias("fmsg_len"))
    fmsg_len = col("fmsg_len")
    lfast = F.coalesce((F.octet_length(F.get(fh, 4)) > 0)
                       & (F.octet_length(flogger) < F.octet_length(ftail)) & (fmsg_len >= 0),
                       F.lit(False))
    s2 = s2.select("file", "line", "raw", "text", "c0", lfast.alias("lfast"),
                   *[F.when(col("lfast"), F.get(fh, k)).alias(f"f_{name}")
                     for k, name in enumerate(("date", "time", "frac", "level"))],
                   F.when(col("lfast"), flogger).alias("f_logger"),
                   F.when(col("lfast") & (fmsg_len > 0), F.substring(
                       t.cast("binary"), fhead + 1, fmsg_len).cast("string")).alias("f_msg"))
    lfast = col("lfast")

    # stage 1: the layout (one bucket: one regexp_replace); JSON lines: from_json
    keys = sorted({k for ks in JSON_KEYS.values() for k in ks})
    json_schema = ", ".join(f"`{k}` STRING" for k in keys) + ", `_corrupt_record` STRING"
    json_text = F.when(t.endswith(","), F.expr("substr(text, 1, length(text) - 1)")).otherwise(t)
    j = F.when(c0 == _JSON, F.from_json(json_text, json_schema, {
        "mode": "PERMISSIVE", "columnNameOfCorruptRecord": "_corrupt_record"}))
    s3 = s2.select("file", "line", "raw", "text", "c0", "lfast",
                   *[f"f_{name}" for name in ("date", "time", "frac", "level", "logger", "msg")],
                   j.alias("j"),
                   F.when((c0 == _TEXT) & ~lfast,
                          _bucket_case(F, L, F.concat(t, F.lit(L.suffix)), F.lit(0)))
                   .alias("lp"))

    def jget(name: str) -> Any:
        return F.coalesce(*[col("j").getField(k) for k in JSON_KEYS[name]])

    lp = col("lp")
    lidx = F.when(lfast, F.lit(0)).otherwise(_alt_index(F, L, F.lit(0), lp))
    fast_fields = ("date", "time", "frac", "level", "logger", "msg")

    def lslot(name: str) -> Any:
        slow = nz(_slot(F, L, lp, name))
        if name in fast_fields:
            return F.when(lfast, col(f"f_{name}")).otherwise(slow)
        return F.when(~lfast, slow)

    s4 = s3.select(
        "file", "line", "raw", "text", "c0", lidx.alias("lidx"),
        F.when(c0 == _JSON, jget("ts")).alias("jts"),
        col("j._corrupt_record").alias("jcorrupt"),
        F.when(c0 == _JSON, jget("msg")).otherwise(lslot("msg")).alias("msg"),
        F.when(c0 == _JSON, jget("level")).otherwise(lslot("level")).alias("level0"),
        F.when(c0 == _JSON, jget("logger")).otherwise(lslot("logger")).alias("logger1"),
        F.when(c0 == _JSON, jget("thread")).otherwise(lslot("thread")).alias("thread0"),
        F.when(c0 == _JSON, nz(jget("group"))).alias("jgroup"),
        F.when(c0 == _JSON, nz(jget("member"))).alias("jmember"),
        *[lslot(name).alias(f"l_{name}") for name in ("date", "time", "frac", "tz", "epoch")])
    lidx, jts = col("lidx"), col("jts")
    layout_ids = _array(F, [lay.id for lay in LAYOUTS])
    logger_prefixes = _array(F, [lay.logger_prefix for lay in LAYOUTS])   # "rdkafka." or ""
    jnum = jts.rlike(JSON_EPOCH_RE)
    jiso = jts.rlike(JSON_TS_RE)

    def jpart(k: int) -> Any:
        return F.when(jiso, nz(F.regexp_extract(jts, JSON_TS_RE, k)))

    is_json = c0 == _JSON
    # no layout: a continuation line, or perhaps a message alone (BARE_OK, logs.parse rule 6)
    no_layout = (c0 == _TEXT) & lidx.isNull()
    # a display time alone (logs.joins ALONE_OTHER_RE) is other, before the continuation test
    s4 = s4.select("*", F.when(no_layout, t.rlike(ALONE_OTHER_RE)).alias("alone"))
    s4 = s4.select("*", F.when(no_layout & ~col("alone"), t.rlike(CONTINUATION_RE))
                   .alias("cont"))
    s4 = s4.select("*", F.when(no_layout & ~col("alone") & ~col("cont"), t.rlike(HEAD_RE))
                   .alias("headlike"))
    bare = no_layout & ~col("alone") & ~col("cont") & ~col("headlike")
    s5 = s4.select(
        "file", "line", "raw", "text", "c0", "lidx", "level0", "thread0", "jgroup",
        "jmember", "cont", "alone", "headlike", bare.alias("bare"),
        F.when(bare, t).otherwise(col("msg")).alias("msg"),
        F.when(is_json, col("jcorrupt").isNull() & col("msg").isNotNull())
        .otherwise(lidx.isNotNull()).alias("is_record"),
        F.when(is_json, F.lit("JSON")).when(bare, F.lit(BARE_LAYOUT))
        .otherwise(F.try_element_at(layout_ids, lidx + 1)).alias("layout"),
        F.when(is_json, col("logger1"))
        .otherwise(F.concat(F.try_element_at(logger_prefixes, lidx + 1), col("logger1")))
        .alias("logger0"),
        F.when(is_json, jpart(1)).otherwise(col("l_date")).alias("date"),
        F.when(is_json, jpart(2)).otherwise(col("l_time")).alias("time"),
        F.when(is_json, jpart(3)).otherwise(col("l_frac")).alias("frac"),
        F.when(is_json, jpart(4)).otherwise(col("l_tz")).alias("tz"),
        F.when(is_json, F.when(jnum, jts)).otherwise(col("l_epoch")).alias("epoch"),
        F.when(is_json & (jts.try_cast("decimal(38,9)") >= F.lit(EPOCH_MILLIS_FROM)),
               F.lit(1000)).otherwise(F.lit(1_000_000)).alias("unit"),
        F.when(is_json, jts.isNotNull())
        .otherwise(col("l_epoch").isNotNull() | (col("l_date").isNotNull()
                                                & col("l_time").isNotNull())).alias("dated"),
        F.when(is_json & col("jcorrupt").isNotNull(), "truncated")
        .when(is_json, "unknown layout").alias("json_problem"))

    # stage 2: the message (regexp_extract for the bucket, one regexp_replace in it)
    rec = col("is_record")
    t2 = F.concat(col("msg"), F.lit(M.suffix))
    s6 = s5.select(
        "file", "line", "raw", "text", "c0", "is_record", "layout", "msg", "level0", "logger0",
        "thread0", "json_problem", "dated", "jgroup", "jmember", "cont", "alone", "headlike",
        "bare",
        _ts(F, col("date"), col("time"), col("frac"), col("tz"), col("epoch"), col("unit"))
        .alias("ts0"),
        F.when(rec | col("bare"), F.regexp_extract(t2, M.combined, 1)).alias("mcode"))
    mcode = col("mcode")
    s7 = s6.select("*", F.when(mcode != "", F.position(mcode, F.lit(M.table)) - 1)
                   .alias("mbucket"))
    s8 = s7.select("file", "line", "raw", "text", "c0", "is_record", "layout", "level0",
                   "logger0", "thread0", "json_problem", "dated", "ts0", "mbucket", "jgroup",
                   "jmember", "cont", "alone", "headlike", "bare",
                   F.when(col("mbucket").isNotNull(),
                          _bucket_case(F, M, t2, col("mbucket"))).alias("mp"))
    mp = col("mp")

    def slot(name: str) -> Any:
        return nz(_slot(F, M, mp, name))

    s9 = s8.select(
        "file", "line", "raw", "text", "c0", "is_record", "layout", "level0", "logger0",
        "thread0", "json_problem", "dated", "ts0", "cont", "alone", "headlike", "bare",
        _alt_index(F, M, col("mbucket"), mp).alias("midx"),
        F.coalesce(slot("group"), slot("p_group"), col("jgroup")).alias("m_group"),
        F.coalesce(slot("member"), col("jmember")).alias("m_member"), slot("generation").alias("m_generation"),
        slot("state").alias("m_state"), slot("reason").alias("m_reason"),
        F.coalesce(slot("partition"), slot("p_partition")).alias("m_partition"),
        slot("epoch").alias("m_epoch"), slot("duration_ms").alias("m_duration"))
    midx = col("midx")

    events = _array(F, [e.event for e in MESSAGE_ENTRIES])
    ids = _array(F, [e.id for e in MESSAGE_ENTRIES])
    sources = _array(F, [e.source for e in MESSAGE_ENTRIES])
    bare_ok = F.array(*[F.lit(ok) for ok in BARE_OK])
    level_map = F.create_map(*[F.lit(x) for kv in LEVEL_ALIASES.items() for x in kv])
    level = F.upper(col("level0"))
    # a logger's own numbers first (LOGGER_LEVELS: kafkajs), as logs.patterns.normalise_level
    own_levels = [F.when(col("logger0") == name, F.try_element_at(
        F.create_map(*[F.lit(x) for kv in table.items() for x in kv]), col("level0")))
        for name, table in LOGGER_LEVELS.items()]
    logger = col("logger0")
    coord = F.coalesce(logger.rlike(COORDINATION_LOGGER_RE), F.lit(False))
    matched = midx.isNotNull()
    event = F.try_element_at(events, midx + 1)
    cont = col("cont")
    # a message alone: an event (no time), or other for a known non-event wording
    bare_known = col("bare") & matched & F.try_element_at(bare_ok, midx + 1)
    # an event whose time stamp gives no time (not a date, or out of TS_MIN..TS_MAX)
    bad_time = matched & event.isNotNull() & col("dated") & col("ts0").isNull()
    # kind as a small int: 0 event, 1 other, 2 continuation, 3 quarantine
    kind = (F.when(c0 == _BAD, 3).when(c0 == _BLANK, 1)
            .when(rec, F.when(matched, F.when(event.isNull(), 1).when(bad_time, 3).otherwise(0))
                  .when(coord, 3).otherwise(1))
            .when(c0 == _JSON, 3).when(col("alone"), 1).when(cont, 2)
            .when(bare_known, F.when(event.isNull(), 1).otherwise(0)).otherwise(3))
    problem = (F.when(c0 == _BAD, "undecodable bytes")
               .when(rec, F.when(~matched & coord, "unknown message").when(bad_time, BAD_TIME))
               .when(c0 == _JSON, col("json_problem"))
               .when(col("alone") | cont | bare_known, F.lit(None))
               .when(F.coalesce(col("headlike"), t.rlike(HEAD_RE)), "truncated")
               .otherwise("unknown layout"))
    client = (col("layout").isin(*CLIENT_LAYOUTS)
              | F.coalesce(logger.rlike(CLIENT_LOGGER_RE), F.lit(False)))
    s10 = s9.select("*", kind.alias("kc"), problem.alias("problem"), event.alias("event0"),
                    (rec & bad_time).alias("bad_time"))
    kc = col("kc")
    is_event = kc == 0
    keep_record = rec & (is_event | (kc == 3))       # an event, or an unknown message or time

    def ev(c: Any) -> Any:
        return F.when(is_event, c)

    columns = {
        "ts": F.when(keep_record, col("ts0")),
        "level": F.when(keep_record, F.coalesce(*own_levels, F.try_element_at(level_map, level),
                                                level)),
        "logger": F.when(keep_record, logger),
        "thread": F.when(keep_record, col("thread0")),
        "source": F.when(is_event | col("bad_time"), F.try_element_at(sources, midx + 1))
        .when(keep_record, F.when(client, "client").otherwise("broker")),
        "event": ev(col("event0")),
        "group": ev(col("m_group")),
        "member": ev(col("m_member")),
        "generation": ev(col("m_generation").try_cast("int")),
        "state": ev(col("m_state")),
        "reason": ev(col("m_reason")),
        "partition": ev(col("m_partition").try_cast("int")),
        "epoch": ev(col("m_epoch").try_cast("int")),
        "duration_ms": ev(col("m_duration").try_cast("long")),
        "raw": col("raw"),
        "file": col("file"),
        "line": col("line"),
        "template": ev(F.try_element_at(ids, midx + 1)),
        "layout": F.when(keep_record | is_event, col("layout")),
        "problem": col("problem"),
    }
    assert tuple(columns) == COLUMN_NAMES
    kinds = _array(F, ["event", "other", "continuation", "quarantine"])
    return s10.select(*[c.alias(name) for name, c in columns.items()],
                      F.try_element_at(kinds, kc + 1).alias("kind"))


def _load(paths: PathsArg, spark: Any) -> tuple[Any, list[InputNote]]:
    spark = _session(spark)
    csv: list[LogFile] = []
    lines, notes = spark_lines(paths, spark, csv=csv)
    texts = _texts(lines)
    classified = _join_records(texts, _classify_texts(texts))
    if csv:
        classified = classified.unionByName(_csv_frame(spark, csv))
    return classified, notes


def _csv_frame(spark: Any, files: list[LogFile]) -> Any:
    """The classified lines of CSV exports (`logs.csvexport`), made by the Python engine's own
    code (`csv_records`) and handed to Spark as Arrow: a row's first line has the row's kind,
    its other physical lines are `joined` (continuation lines that add no text), as for the
    records of `logs.joins`. Exports are small (see logs.csvexport), and one reader of the
    quoting rules gives both engines the same rows by construction."""
    import pyarrow as pa

    from ..logs.csvexport import csv_header, csv_records
    from ..logs.parse import _line_text
    from .schema import arrow_schema

    rows: list[dict[str, Any]] = []
    for f in files:
        with open_log(f) as stream:
            it = iter_lines(stream)
            head = next(it, None)
            header = csv_header(_line_text(head)) if head is not None else None
            if header is None:               # changed since it was planned: nothing read
                continue
            for first, kind, row, raw, extra in csv_records(itertools.chain([head], it), header):
                row = dict(row) if row is not None else dict.fromkeys(COLUMN_NAMES)
                row.update(raw=raw, file=f.name, line=first, kind=kind)
                rows.append(row)
                rows.extend({**dict.fromkeys(COLUMN_NAMES), "file": f.name, "line": first + k,
                             "kind": "joined"} for k in range(1, extra + 1))
    schema = arrow_schema().append(pa.field("kind", pa.string()))
    table = pa.Table.from_pylist(rows, schema=schema)
    return spark.createDataFrame(table).select(*COLUMN_NAMES, "kind")


def _on(F: Any, join_on: str) -> Any:
    return F.col("text0") if join_on == "line" else F.col("text")


def _join_records(texts: Any, classified: Any) -> Any:
    """`classified` with the records of `logs.joins` (several physical lines) classified as
    one: the rule of logs.parse.parse_lines, on the few lines that take part.

    One quick pass looks for heads (HEADS_RE on every line, a test that fails on the first
    character of most lines); without any, `classified` is returned as it is. Otherwise the
    heads (few), the line after each (found with a broadcast join on the line number: the big
    data is not shuffled) and their links make chains, cut every MAX_JOIN_LINES lines; a
    record of several lines is classified as one text (`_classify_texts`) and replaces its
    lines: its first line's row becomes the record's, the others are rows of kind `joined`
    (other lines, attached to the record above)."""
    F = _F()
    col = F.col
    t0, t = col("text0"), col("text")
    maybe = t0.rlike(HEADS_RE) | ((t != t0) & t.rlike(HEADS_RE))
    head = None
    key = None
    for i, j in enumerate(JOINS):
        on = _on(F, j.on)
        hit = on.rlike(j.head)
        head = F.when(hit, i) if head is None else head.when(hit, i)
        key = (F.when(hit, F.regexp_extract(on, j.head, 1)) if key is None
               else key.when(hit, F.regexp_extract(on, j.head, 1)))
    heads = (texts.where(maybe).select("file", "line", head.alias("jhead"), key.alias("jkey"))
             .where(col("jhead").isNotNull()))
    if not heads.limit(1).collect():
        return classified
    # computed once (one pass over the lines), not again inside every plan that reads it:
    # the broadcasts below are built from it, and rebuilding it there ran past Spark's
    # broadcast timeout on a busy driver
    heads = heads.localCheckpoint()
    nxt = heads.select(col("file").alias("n_file"), (col("line") + 1).alias("n_line"),
                       col("jhead").alias("pjoin"), col("jkey").alias("pkey"))
    after = texts.join(F.broadcast(nxt), (texts["file"] == nxt["n_file"])
                       & (texts["line"] == nxt["n_line"]))
    linked = None
    for i, j in enumerate(JOINS):
        on = _on(F, j.on)
        ok = F.coalesce(on.rlike(j.tail) & (F.regexp_extract(on, j.tail, 1) == col("pkey")),
                        F.lit(False))
        linked = F.when(col("pjoin") == i, ok) if linked is None \
            else linked.when(col("pjoin") == i, ok)
    links = after.where(linked).select("file", "line")
    # the lines of chains: heads and linked lines (small), with the raw text and texts
    members = (heads.select("file", "line", "jhead")
               .join(links.withColumn("linked", F.lit(True)), ["file", "line"], "full")
               .select("file", "line", "jhead", F.coalesce("linked", F.lit(False))
                       .alias("linked")))
    from pyspark.sql import Window

    w = Window.partitionBy("file").orderBy("line") \
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    chains = (members.withColumn("start", F.max(F.when(~col("linked"), col("line"))).over(w))
              .withColumn("gstart", col("start") + F.floor((col("line") - col("start"))
                                                           / MAX_JOIN_LINES) * MAX_JOIN_LINES))
    starts = chains.where(col("line") == col("start")).select(
        col("file").alias("s_file"), col("start").alias("s_start"), col("jhead").alias("join"))
    pieces = (chains.join(starts, (chains["file"] == starts["s_file"])
                          & (chains["start"] == starts["s_start"]))
              .select("file", "line", "gstart", "join"))
    sizes = pieces.groupBy("file", "gstart").agg(F.count(F.lit(1)).alias("n"))
    multi = pieces.join(sizes.where(col("n") >= 2), ["file", "gstart"]).localCheckpoint()
    parts = (texts.join(F.broadcast(multi), ["file", "line"])
             .select("file", "line", "gstart", "join", "raw", "text"))
    grouped = (parts.groupBy("file", "gstart", "join")
               .agg(F.sort_array(F.collect_list(F.struct("line", "raw", "text"))).alias("p")))
    text = None
    for i, j in enumerate(JOINS):
        joined = F.concat_ws(j.sep, F.transform("p", lambda x: x["text"]))
        text = F.when(col("join") == i, joined) if text is None \
            else text.when(col("join") == i, joined)
    records = grouped.select("file", col("gstart").alias("line"),
                             F.concat_ws("\n", F.transform("p", lambda x: x["raw"])).alias("raw"),
                             text.alias("text"))
    consumed = multi.select("file", "line")
    rest = classified.join(F.broadcast(consumed), ["file", "line"], "left_anti")
    others = (parts.where(col("line") != col("gstart")).select(
        *[col(c) if c in ("file", "line", "raw") else F.lit(None).cast(_type(c)).alias(c)
          for c in COLUMN_NAMES], F.lit("joined").alias("kind")))
    cols = list(COLUMN_NAMES) + ["kind"]
    return (rest.select(*cols).unionByName(_classify_texts(records).select(*cols))
            .unionByName(others.select(*cols)))


def load_lines(paths: PathsArg, spark: Any = None) -> Any:
    """Every physical line of `paths`, classified: the schema's columns plus `kind` (event,
    other, continuation, quarantine, or joined: a later line of a record of `logs.joins`,
    whose row is its first line's). Lazy for the files Spark reads itself (small and
    compressed files are read by Python now: `spark.sources`). Notes on the input (symlinks,
    damaged or unreadable files) are said once as a LogInputWarning; `parse_logs` and
    `write_parsed` return them in their counts."""
    lines, notes = _load(paths, spark)
    notes_warning(notes)
    return lines


def attach_continuations(records: Any, continuations: Any) -> tuple[Any, Any]:
    """(records with their continuation lines appended to `raw`, orphan continuation lines as
    quarantine rows "truncated"). `continuations` needs file, line, raw; it is small, and it
    is the only thing shuffled."""
    F = _F()
    from pyspark.sql import Window

    w = Window.partitionBy("file").orderBy("line")
    # rows of kind `joined` (the later lines of a record of logs.joins) extend a run, so the
    # continuation lines after a joined record attach to it, but add no text
    piece = (F.col("kind") == "joined") if "kind" in continuations.columns else F.lit(False)
    runs = (continuations.select("file", "line", "raw", piece.alias("piece"))
            .withColumn("run", F.col("line") - F.row_number().over(w))
            .withColumn("record_line",
                        F.min("line").over(Window.partitionBy("file", "run")) - 1))
    attach = (runs.where(F.col("record_line") > 0)
              .groupBy(F.col("file").alias("a_file"), F.col("record_line"))
              .agg(F.sort_array(F.collect_list(F.when(~F.col("piece"), F.struct("line", "raw"))))
                   .alias("parts"))
              .where(F.size("parts") > 0)
              .select("a_file", "record_line",
                      F.concat_ws("\n", F.transform("parts", lambda p: p["raw"])).alias("extra")))
    joined = records.join(F.broadcast(attach), (records["file"] == attach["a_file"])
                          & (records["line"] == attach["record_line"]), "left")
    out = joined.select(*[F.when(F.col("extra").isNotNull(),
                                 F.concat(F.col("raw"), F.lit("\n"), F.col("extra")))
                          .otherwise(F.col("raw")).alias("raw") if c == "raw" else records[c]
                          for c in records.columns])
    # A run of continuation lines at the top of a file has no record above it: its first line
    # is quarantined "truncated" and the others are attached to it (as logs.parse does).
    orphan_runs = (runs.where(F.col("record_line") == 0)
                   .groupBy(F.col("file").alias("o_file"))
                   .agg(F.sort_array(F.collect_list(F.struct("line", "raw"))).alias("parts"))
                   .select("o_file", F.concat_ws("\n", F.transform("parts", lambda p: p["raw"]))
                           .alias("o_raw"), F.get(F.col("parts"), 0)["line"].alias("o_line")))
    orphans = orphan_runs.select(
        *[F.col({"file": "o_file", "line": "o_line", "raw": "o_raw"}[c]).alias(c)
          if c in ("file", "line", "raw") else
          (F.lit("truncated") if c == "problem" else F.lit(None)).cast(_type(c)).alias(c)
          for c in COLUMN_NAMES])
    return out, orphans


def _type(column: str) -> str:
    from ..logs.fields import EVENT_COLUMNS
    return {c.name: c.type for c in EVENT_COLUMNS}[column].replace("long", "bigint")


@dataclass
class ParsedLogs:
    """The outputs of `parse_logs` (lazy DataFrames) and a way to count them."""

    lines: Any
    events: Any
    quarantine: Any
    notes: list[InputNote] = field(default_factory=list)

    def counts(self) -> ParseCounts:
        """One aggregation over the lines (an action): read = recognised + other + quarantined."""
        F = _F()
        by_kind: dict[str, int] = {}
        untimed = 0
        for r in (self.lines.groupBy("kind", (F.col("kind") == "event") & F.col("ts").isNull())
                  .agg(F.count(F.lit(1)).alias("n")).collect()):
            by_kind[r["kind"]] = by_kind.get(r["kind"], 0) + r["n"]
            untimed += r["n"] if r[1] else 0
        problems = {r["problem"]: r["n"] for r in
                    self.quarantine.groupBy("problem").agg(F.count(F.lit(1)).alias("n")).collect()}
        quarantined = sum(problems.values())
        cont = by_kind.get("continuation", 0) + by_kind.get("joined", 0)
        orphans = quarantined - by_kind.get("quarantine", 0)
        counts = ParseCounts(read=sum(by_kind.values()), recognised=by_kind.get("event", 0),
                             other=by_kind.get("other", 0) + cont - orphans,
                             quarantined=quarantined, continuation=cont - orphans,
                             untimed=untimed,
                             by_problem=dict(sorted(problems.items())), notes=list(self.notes))
        counts.check()
        return counts


def parse_logs(paths: PathsArg, spark: Any = None, *, multiline: bool = True,
               checkpoint: bool = False) -> ParsedLogs:
    """Events and quarantine of `paths` as DataFrames (schema.EVENT_COLUMNS each).

    With `multiline` (the default) continuation lines are attached to their record's `raw`;
    that reads the input a second time for the (few) continuation lines. Without it, they are
    only counted (as other lines). `write_parsed` needs one pass either way.

    With `checkpoint`, the lines are classified once, now, and kept in the executors'
    memory (`localCheckpoint`): for several actions on an input small enough to keep.
    """
    lines, notes = _load(paths, spark)
    if checkpoint:
        lines = lines.localCheckpoint(eager=True)
    notes_warning(notes)
    F = _F()
    records = lines.where(F.col("kind").isin("event", "quarantine"))
    if multiline:
        records, orphans = attach_continuations(
            records, lines.where(F.col("kind").isin("continuation", "joined")))
        quarantine = records.where(F.col("kind") == "quarantine").drop("kind").unionByName(orphans)
    else:
        quarantine = records.where(F.col("kind") == "quarantine").drop("kind")
    events = records.where(F.col("kind") == "event").drop("kind")
    return ParsedLogs(lines, events, quarantine, notes)


def load_logs(paths: PathsArg, spark: Any = None, *, multiline: bool = True) -> Any:
    """The coordinator events of `paths` as a DataFrame with typed columns (schema.py)."""
    return parse_logs(paths, spark, multiline=multiline).events


def write_parsed(paths: PathsArg, out: str | os.PathLike[str], spark: Any = None, *,
                 overwrite: bool = False) -> ParseCounts:
    """Parse `paths` in one pass and write out/events.parquet and out/quarantine.parquet.

    The pass writes events, quarantined lines and continuation lines at once (partitioned by
    kind) and counts every kind on the way (`DataFrame.observe`); only when continuation lines
    exist, a second, small step attaches them to their records and rewrites the two files.
    `out` must be a local directory (the files are moved into place).
    """
    spark = _session(spark)
    F = _F()
    from pyspark.sql import Observation

    from ..logs.inputs import check_out_dir

    out = check_out_dir(out)
    targets = {"event": out / "events.parquet", "quarantine": out / "quarantine.parquet"}
    for target in targets.values():
        if target.exists():
            if not overwrite:
                raise FileExistsError(f"{target} exists; remove it or pass overwrite=True")
            shutil.rmtree(target) if target.is_dir() else target.unlink()
    out.mkdir(parents=True, exist_ok=True)
    lines, notes = _load(paths, spark)
    obs = Observation("kit_log_counts")
    kinds = ("event", "other", "continuation", "quarantine", "joined")
    observed = lines.observe(obs, F.count(F.lit(1)).alias("read"),
                             *[F.sum(F.when(F.col("kind") == k, 1).otherwise(0)).alias(k)
                               for k in kinds],
                             F.sum(F.when((F.col("kind") == "event") & F.col("ts").isNull(), 1)
                                   .otherwise(0)).alias("untimed"))
    tmp = out / f"_parse-{uuid.uuid4().hex[:8]}"
    conf = spark.conf
    previous = conf.get("spark.sql.parquet.outputTimestampType", None)
    conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
    try:
        (observed.where(F.col("kind") != "other")
         .write.partitionBy("kind").parquet(str(tmp)))
        metrics = obs.get
        n = {k: int(metrics.get(k) or 0) for k in ("read", "untimed") + kinds}
        if n["read"] == 0:
            raise ValueError(f"no lines read from {paths}: the input is empty"
                             + "".join(f"; {note}" for note in notes))
        schema = lines.drop("kind").schema
        parts = {k: tmp / f"kind={k}" for k in ("event", "quarantine", "continuation",
                                                 "joined")}
        # an empty frame of the same schema: `limit(0)` is planned as an empty local relation
        # (no scan), and needs no Python on a cluster's executors, which a Python list would
        empty = lines.drop("kind").limit(0)
        frames = {k: (spark.read.schema(schema).parquet(str(p)) if p.exists() else empty)
                  for k, p in parts.items()}
        orphans_n = 0
        if n["continuation"]:
            cont = frames["continuation"].withColumn("kind", F.lit("continuation")) \
                .unionByName(frames["joined"].withColumn("kind", F.lit("joined")))
            events, _ = attach_continuations(frames["event"], cont)
            quarantine, orphans = attach_continuations(frames["quarantine"], cont)
            orphans_n = orphans.count()
            quarantine = quarantine.unionByName(orphans)
            events.write.parquet(str(targets["event"]))
            quarantine.write.parquet(str(targets["quarantine"]))
        else:
            for k, target in targets.items():
                if parts[k].exists():
                    shutil.move(str(parts[k]), str(target))
                else:
                    frames[k].write.parquet(str(target))
    finally:
        if previous is None:
            conf.unset("spark.sql.parquet.outputTimestampType")
        else:
            conf.set("spark.sql.parquet.outputTimestampType", previous)
        shutil.rmtree(tmp, ignore_errors=True)
    counts = ParseCounts(read=n["read"], recognised=n["event"],
                         other=n["other"] + n["continuation"] + n["joined"] - orphans_n,
                         quarantined=n["quarantine"] + orphans_n,
                         continuation=n["continuation"] + n["joined"] - orphans_n,
                         untimed=n["untimed"],
                         notes=list(notes))
    counts.check()
    return counts
