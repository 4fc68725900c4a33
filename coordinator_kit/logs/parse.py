"""The pure-Python reference parser: the Spark loader's semantics, one line at a time.

Same patterns (`logs.patterns`), same columns (`logs.fields`), same rules, no JVM. It serves
the core tests, small inputs in notebooks, and the single-process baseline of the benchmark.

Per physical line, in this order (the Spark loader applies the same rules in one `select`):

1. bytes that are not valid UTF-8, or control characters other than TAB -> quarantine
   "undecodable bytes";
2. a blank line -> other;
3. a line starting with `{` -> JSON layout (invalid JSON -> quarantine "truncated");
4. a line in one of `patterns.LAYOUTS` -> a record; its message is matched against the
   templates: a match -> event (or other, for a known non-event wording); no match -> quarantine
   "unknown message" when the logger is a coordination logger, else other;
5. no layout, but it looks like a continuation (indented, `Caused by:`, an exception's first
   line, `... N more`) -> continuation, attached to the nearest record above it in the same
   file (no record above: quarantine "truncated");
6. no layout, but it starts like one (a time stamp, a level, `%7|`) -> quarantine "truncated";
7. anything else -> quarantine "unknown layout".

Lines are split like Hadoop's LineReader (which Spark's text source uses): `\\n`, `\\r\\n`
and `\\r` end a line; a final line without terminator counts; a leading U+FEFF is dropped.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path
from typing import IO, Any

from .fields import COLUMN_NAMES
from .patterns import (BLANK_RE, CONTINUATION_RE, CONTROL_RE, HEAD_RE, JSON_KEYS, LAYOUTS,
                       LAYOUT_CLASSIFIER, MESSAGE_CLASSIFIER, MESSAGE_ENTRIES,
                       is_coordination_logger, normalise_level, source_of)

__all__ = ["ParseCounts", "ParseResult", "classify_line", "parse_lines",
           "parse_paths", "iter_lines", "expand_paths", "make_ts", "epoch_ts", "JSON_TS_RE",
           "KIT_DATA_FILES", "kit_data_file", "skipped_note", "SkippedFilesWarning"]

_CONTROL = re.compile(CONTROL_RE)
_BLANK = re.compile(BLANK_RE)
_CONT = re.compile(CONTINUATION_RE)
_HEAD = re.compile(HEAD_RE)
# a JSON time stamp: ISO 8601 (T or space, . or , before the fraction) or a number (epoch)
JSON_TS_RE = ("^([0-9]{4}-[0-9]{2}-[0-9]{2})[T ]([0-9]{2}:[0-9]{2}:[0-9]{2})(?:[.,]([0-9]{1,9}))?"
              "(Z|[+-][0-9]{2}:?[0-9]{2})?$")
_JSON_TS = re.compile(JSON_TS_RE)
_EPOCH_NUM = re.compile(r"^[0-9]+(?:\.[0-9]+)?$")
_INT32 = (-2**31, 2**31 - 1)
_INT64 = (-2**63, 2**63 - 1)
_EPOCH0 = datetime(1970, 1, 1, tzinfo=timezone.utc)


@dataclass
class ParseCounts:
    """How many physical lines went where; `read == recognised + other + quarantined`."""

    read: int = 0
    recognised: int = 0
    other: int = 0            # other records, blank lines and continuation lines
    quarantined: int = 0
    continuation: int = 0     # of `other`: lines attached to the record above
    by_problem: dict[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        return (f"parsed {self.read} lines: {self.recognised} recognised, {self.quarantined} "
                f"quarantined, {self.other} other")

    def check(self) -> None:
        if self.read != self.recognised + self.other + self.quarantined:
            raise AssertionError(f"counts do not add up: {self}")


@dataclass
class ParseResult:
    events: list[dict[str, Any]]
    quarantine: list[dict[str, Any]]
    counts: ParseCounts

    def to_pandas(self, which: str = "events") -> Any:
        """events or quarantine as a pandas DataFrame with the schema's dtypes."""
        import pandas as pd

        from ..spark.schema import pandas_dtypes

        rows = {"events": self.events, "quarantine": self.quarantine}[which]
        df = pd.DataFrame.from_records(rows, columns=list(COLUMN_NAMES))
        dtypes = pandas_dtypes()
        df["ts"] = pd.to_datetime(df["ts"], utc=True).dt.tz_localize(None)
        for name, dtype in dtypes.items():
            if name != "ts":
                df[name] = df[name].astype(dtype)
        return df


def _int(value: str | None, bounds: tuple[int, int] = _INT32) -> int | None:
    if value is None:
        return None
    try:
        n = int(value)
    except ValueError:
        return None
    return n if bounds[0] <= n <= bounds[1] else None


@lru_cache(maxsize=4096)
def _base_ts(date: str, time: str) -> datetime | None:
    try:
        return datetime(int(date[0:4]), int(date[5:7]), int(date[8:10]), int(time[0:2]),
                        int(time[3:5]), int(time[6:8]), tzinfo=timezone.utc)
    except ValueError:
        return None


def make_ts(date: str | None, time: str | None, frac: str | None, tz: str | None,
            epoch: str | None) -> datetime | None:
    """UTC time stamp from a layout's pieces, exactly as the Spark loader computes it."""
    if epoch:
        return epoch_ts(epoch, 1_000_000)
    if not date or not time:
        return None
    base = _base_ts(date, time)
    if base is None:
        return None
    micro = int((frac or "")[:6].ljust(6, "0"))
    offset = timedelta(0)
    if tz and tz != "Z":
        sign = -1 if tz[0] == "-" else 1
        digits = tz[1:].replace(":", "")
        offset = sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
        if abs(offset) > timedelta(hours=18):
            return None
    return base.replace(microsecond=micro) - offset if offset else base.replace(microsecond=micro)


def epoch_ts(number: str, micros_per_unit: int) -> datetime | None:
    """A Unix time (seconds or milliseconds) rounded half-up to microseconds, as Spark does."""
    try:
        micros = int((Decimal(number) * micros_per_unit).quantize(Decimal(1), ROUND_HALF_UP))
        return _EPOCH0 + timedelta(microseconds=micros)
    except (InvalidOperation, OverflowError):
        return None


def _json_ts(value: Any) -> datetime | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value)
    if _EPOCH_NUM.match(text):
        millis = len(text.split(".")[0]) > 11    # pino, logstash epoch millis
        return epoch_ts(text, 1000 if millis else 1_000_000)
    m = _JSON_TS.match(text)
    if not m:
        return None
    return make_ts(m.group(1), m.group(2), m.group(3), m.group(4), None)


def _json_str(obj: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for k in keys:
        if k in obj and obj[k] is not None:
            v = obj[k]
            return v if isinstance(v, str) else json.dumps(v, separators=(",", ":"))
    return None


_ROW_TEMPLATE = dict.fromkeys(COLUMN_NAMES)


def _record(layout: str, ts: datetime | None, level: str | None, logger: str | None,
            thread: str | None, msg: str) -> tuple[str, dict[str, Any] | None]:
    """Classify a record's message; returns (kind, row); no row for an `other` line."""
    logger = logger or None
    found = _MESSAGE_MATCH(msg)
    if found is None:
        if not is_coordination_logger(logger):
            return "other", None
        row = _ROW_TEMPLATE.copy()
        row.update(ts=ts, level=normalise_level(level), logger=logger, thread=thread or None,
                   layout=layout, source=source_of(logger, layout), problem="unknown message")
        return "quarantine", row
    i, (group, member, generation, state, reason, partition, epoch, duration_ms, p_group,
        p_partition) = found
    entry = MESSAGE_ENTRIES[i]
    if entry.event is None:
        return "other", None
    row = _ROW_TEMPLATE.copy()
    row.update(ts=ts, level=normalise_level(level), logger=logger, thread=thread or None,
               layout=layout, source=entry.source, event=entry.event, template=entry.id,
               group=group or p_group, member=member, generation=_int(generation),
               state=state, reason=reason, partition=_int(partition or p_partition),
               epoch=_int(epoch), duration_ms=_int(duration_ms, _INT64))
    return "event", row


_MESSAGE_MATCH = MESSAGE_CLASSIFIER.match_values
_LAYOUT_MATCH = LAYOUT_CLASSIFIER.match_values
_LOGGER_PREFIX = [lay.logger_prefix for lay in LAYOUTS]
_LAYOUT_ID = [lay.id for lay in LAYOUTS]


def _empty_row() -> dict[str, Any]:
    return dict.fromkeys(COLUMN_NAMES)


def classify_line(data: bytes | str) -> tuple[str, dict[str, Any] | None]:
    """(kind, row) for one physical line; the row lacks raw/file/line (the caller adds them),
    and is None for other and continuation lines (they keep no columns)."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            row = _empty_row()
            row["problem"] = "undecodable bytes"
            return "quarantine", row
    else:
        text = data
    if text.startswith("\ufeff"):
        text = text[1:]
    if _CONTROL.search(text):
        row = _empty_row()
        row["problem"] = "undecodable bytes"
        return "quarantine", row
    if _BLANK.match(text):
        return "other", None
    if text.startswith("{"):
        try:
            obj = json.loads(text[:-1] if text.endswith(",") else text)
        except ValueError:
            obj = None
        if not isinstance(obj, dict):
            row = _empty_row()
            row["problem"] = "truncated"
            return "quarantine", row
        msg = _json_str(obj, JSON_KEYS["msg"])
        if msg is None:
            row = _empty_row()
            row["problem"] = "unknown layout"
            return "quarantine", row
        ts_value = next((obj[k] for k in JSON_KEYS["ts"] if obj.get(k) is not None), None)
        return _record("JSON", _json_ts(ts_value), _json_str(obj, JSON_KEYS["level"]),
                       _json_str(obj, JSON_KEYS["logger"]), _json_str(obj, JSON_KEYS["thread"]),
                       msg)
    found = _LAYOUT_MATCH(text)
    if found is not None:
        i, (date, time, frac, tz, epoch, level, logger, thread, msg) = found
        if logger and _LOGGER_PREFIX[i]:
            logger = _LOGGER_PREFIX[i] + logger
        return _record(_LAYOUT_ID[i], make_ts(date, time, frac, tz, epoch), level, logger,
                       thread, msg or "")
    if _CONT.match(text):
        return "continuation", None
    row = _empty_row()
    row["problem"] = "truncated" if _HEAD.match(text) else "unknown layout"
    return "quarantine", row


def _raw(data: bytes | str) -> str:
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data


def parse_lines(lines: Iterable[bytes | str], file: str, counts: ParseCounts | None = None
                ) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield (kind, row) for the events and quarantined records of one file, in line order.

    Continuation lines are appended to the raw text of the record above them; a record is
    yielded once its continuation lines are known.
    """
    counts = counts if counts is not None else ParseCounts()
    seen_record = False                    # a record above (continuations attach to it)
    pending: tuple[str, dict[str, Any]] | None = None     # the last event/quarantine record
    number = 0
    for number, data in enumerate(lines, start=1):
        kind, row = classify_line(data)
        if kind == "continuation":
            if seen_record:
                counts.other += 1
                counts.continuation += 1
                if pending is not None:
                    pending[1]["raw"] += "\n" + _raw(data)
                continue
            kind, row = "quarantine", _empty_row()
            row["problem"] = "truncated"
        seen_record = True
        if pending is not None:
            yield pending
            pending = None
        if kind == "other":
            counts.other += 1
            continue
        assert row is not None
        row["raw"], row["file"], row["line"] = _raw(data), file, number
        if kind == "event":
            counts.recognised += 1
        else:
            counts.quarantined += 1
            counts.by_problem[row["problem"]] = counts.by_problem.get(row["problem"], 0) + 1
        pending = (kind, row)
    counts.read += number
    if pending is not None:
        yield pending


def iter_lines(stream: IO[bytes], chunk_size: int = 1 << 22) -> Iterator[bytes]:
    """Lines of a binary stream, split on \\n, \\r\\n or \\r (without the terminator)."""
    tail = b""
    while True:
        block = stream.read(chunk_size)
        if not block:
            break
        pieces = (tail + block).splitlines(keepends=True)
        tail = pieces.pop()
        if tail.endswith(b"\n"):            # complete (also \r\n): nothing can follow it
            pieces.append(tail)
            tail = b""
        for piece in pieces:
            yield piece[:-2] if piece.endswith(b"\r\n") else piece[:-1]
    if tail:
        yield tail[:-1] if tail.endswith(b"\r") else tail


class SkippedFilesWarning(UserWarning):
    """Files under a walked directory that were left out (the kit's own non-log files)."""


# Files the kit writes next to its logs (datasets/<run>/, the large generator) that are not
# logs: name -> (how the first line starts, what it is). Read as log lines they would come out
# wrong (trace.jsonl's `ts` is virtual milliseconds since the run's start, not epoch seconds,
# and every one of its logged events is also a line of the .log files), so a directory walk
# leaves them out, and says so.
KIT_DATA_FILES: dict[str, tuple[str, str]] = {
    "trace.jsonl": ('{"f_', "the kit's trace (virtual ms since the run's start; its logged "
                    "events are the .log files' lines)"),
    "consumer_offsets.csv": ("partition,offset,ts,", "the __consumer_offsets records as a table"),
    "groups.csv": ("group,variant,", "the large generator's table of groups"),
}


def kit_data_file(path: Path) -> str | None:
    """What `path` is when it is one of the kit's non-log dataset files, else None."""
    known = KIT_DATA_FILES.get(path.name)
    if known is None:
        return None
    try:
        with open(path, "rb") as f:
            head = f.read(len(known[0])).decode("utf-8", "replace")
    except OSError:
        return None
    if path.name == "trace.jsonl":      # keys are sorted: f_<field>..., or "kind" first
        return known[1] if head.startswith(('{"f_', '{"kind"')) else None
    return known[1] if head == known[0] else None


def expand_paths(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
                 skipped: list[Path] | None = None) -> list[Path]:
    """Files named by `paths` (directories are walked, hidden and `_`-prefixed names skipped,
    as Spark does). Raises FileNotFoundError naming the first missing path.

    A walked directory's kit data files that are not logs (`KIT_DATA_FILES`: trace.jsonl,
    consumer_offsets.csv, groups.csv) are left out: appended to `skipped` when given (the
    caller reports them), else named in a SkippedFilesWarning. Named on their own, they are
    refused with a ValueError."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files: list[Path] = []
    left_out: list[Path] = []
    for p in map(Path, paths):
        if not p.exists():
            raise FileNotFoundError(f"log path {str(p)!r} does not exist; give a file or a "
                                    "directory of log files")
        if p.is_dir():
            for root, dirs, names in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
                for n in sorted(names):
                    if n.startswith((".", "_")):
                        continue
                    f = Path(root) / n
                    (left_out if kit_data_file(f) else files).append(f)
        else:
            what = kit_data_file(p)
            if what is not None:
                raise ValueError(f"{p} is not a log: it is {what}. Give the run's .log files, "
                                 f"or its folder (where {p.name} is skipped)")
            files.append(p)
    if left_out:
        if skipped is not None:
            skipped.extend(left_out)
        else:
            import warnings
            warnings.warn(skipped_note(left_out), SkippedFilesWarning, stacklevel=2)
    return files


def skipped_note(files: list[Path]) -> str:
    """One line naming the kit data files a directory walk left out, and why."""
    names = sorted({f.name for f in files})
    why = "; ".join(f"{n}: {KIT_DATA_FILES[n][1]}" for n in names)
    return (f"skipped {len(files)} file(s) of the kit's datasets that are not logs ({why}); "
            f"read their runs' .log files")


def _open(path: Path) -> IO[bytes]:
    if path.suffix == ".gz":
        return gzip.open(path, "rb")
    return io.open(path, "rb")


def parse_paths(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]
                ) -> ParseResult:
    """Parse every file under `paths`; events and quarantine in (file, line) order."""
    counts = ParseCounts()
    events: list[dict[str, Any]] = []
    quarantine: list[dict[str, Any]] = []
    for path in expand_paths(paths):
        with _open(path) as stream:
            for kind, row in parse_lines(iter_lines(stream), str(path.resolve()), counts):
                (events if kind == "event" else quarantine).append(row)
    counts.check()
    return ParseResult(events, quarantine, counts)
