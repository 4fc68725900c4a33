"""The pure-Python reference parser: the Spark loader's semantics, one line at a time.

Same patterns (`logs.patterns`), same columns (`logs.fields`), same rules, no JVM. It serves
the core tests, small inputs in notebooks, and the single-process baseline of the benchmark.

Per physical line, in this order (the Spark loader applies the same rules in one `select`),
after a prefix some tool put in front of the line (docker compose, the CRI format of
`kubectl logs`, a k9s pane: `logs.wrappers`) is stripped:

1. bytes that are not valid UTF-8, or control characters other than TAB -> quarantine
   "undecodable bytes";
2. a blank line -> other;
3. a line starting with `{` -> JSON layout (invalid JSON -> quarantine "truncated");
4. a line in one of `patterns.LAYOUTS` -> a record; its message is matched against the
   templates: a match -> event (or other, for a known non-event wording); no match -> quarantine
   "unknown message" when the logger is a coordination logger, else other; an event whose
   time stamp gives no time (not a real date, an offset beyond 18 hours, or outside
   TS_MIN..TS_MAX, the times pandas holds) -> quarantine "bad time stamp";
5. no layout, but it looks like a continuation (indented, `Caused by:`, an exception's first
   line, `... N more`) -> continuation, attached to the nearest record above it in the same
   file (no record above: the first such line is quarantined "truncated", the ones after it
   are attached to it);
6. no layout, but it starts like one (a time stamp, a level, `%7|`) -> quarantine "truncated";
7. no layout, but the whole line is a known wording (`patterns.BARE_OK`: one with enough
   fixed text) -> an event of layout MESSAGE with no time (a message pasted alone), or other
   for a known non-event wording; `ParseCounts.untimed` counts the events without a time;
8. anything else -> quarantine "unknown layout".

Lines are split like Hadoop's LineReader (which Spark's text source uses): `\\n`, `\\r\\n`
and `\\r` end a line; a final line without terminator counts; a leading U+FEFF is dropped (and
a file that is nothing but a UTF-8 BOM has no line, as in Hadoop's LineRecordReader).

A file whose first line is the header of a log viewer's CSV export is read by rows instead
(`parse_csv`, the rules in `logs.csvexport`): decided once per file, so the lines of every
other file take no extra step.

Which files are read, and what is said about the others (symlinks, damaged `.gz`, unreadable
files): `logs.inputs`; the notes are in `ParseCounts.notes`, the same as the Spark engine's.
"""

from __future__ import annotations

import json
import os
import re
from itertools import chain
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path
from typing import IO, Any

from .csvexport import CsvHeader, csv_header, csv_records
from .fields import COLUMN_NAMES
from .inputs import (KIT_DATA_FILES, InputNote, LogFile, damage_note, kit_data_file,
                     open_log, scan_inputs)
from .joins import ALONE_OTHER_RE, HEADS_RE, JOINS, MAX_JOIN_LINES, MONTHS
from .wrappers import strip_wrapper
from .patterns import (BARE_LAYOUT, BARE_OK, BLANK_RE, CONTINUATION_RE, CONTROL_RE, END, HEAD_RE, JSON_KEYS, LAYOUTS,
                       LAYOUT_CLASSIFIER, MESSAGE_CLASSIFIER, MESSAGE_ENTRIES,
                       is_coordination_logger, normalise_level, source_of)

__all__ = ["ParseCounts", "ParseResult", "classify_line", "parse_lines", "iter_parsed",
           "parse_paths", "parse_csv", "iter_lines", "expand_paths", "make_ts", "epoch_ts", "JSON_TS_RE",
           "JSON_EPOCH_RE", "EPOCH_MILLIS_FROM", "TS_MIN", "TS_MAX", "KIT_DATA_FILES",
           "kit_data_file", "skipped_note", "SkippedFilesWarning", "LogInputWarning",
           "notes_warning", "BAD_TIME"]

_CONTROL = re.compile(CONTROL_RE)
_BLANK = re.compile(BLANK_RE)
_CONT = re.compile(CONTINUATION_RE)
_HEAD = re.compile(HEAD_RE)
_JOIN_HEADS = re.compile(HEADS_RE)
_ALONE_OTHER = re.compile(ALONE_OTHER_RE)
# a JSON time stamp: ISO 8601 (T or space, . or , before the fraction) or a number (epoch)
JSON_TS_RE = ("^([0-9]{4}-[0-9]{2}-[0-9]{2})[T ]([0-9]{2}:[0-9]{2}:[0-9]{2})(?:[.,]([0-9]{1,9}))?"
              "(Z|[+-][0-9]{2}:?[0-9]{2})?" + END)
_JSON_TS = re.compile(JSON_TS_RE)
# A JSON time stamp that is a number (or a string of one) is Unix time: seconds, or
# milliseconds from 10^11 on (pino's and logstash's epoch millis; 10^11 s is the year 5138).
# Exponents are allowed: Spark renders a JSON number such as 1708423872.345 as
# "1.708423872345E9", Python as "1708423872.345"; both are read as the same decimal.
JSON_EPOCH_RE = "^[0-9]+(?:\\.[0-9]+)?(?:[Ee][-+]?[0-9]+)?" + END
EPOCH_MILLIS_FROM = 10 ** 11
_EPOCH_NUM = re.compile(JSON_EPOCH_RE)
_INT32 = (-2**31, 2**31 - 1)
_INT64 = (-2**63, 2**63 - 1)
_EPOCH0 = datetime(1970, 1, 1, tzinfo=timezone.utc)
# The times a time stamp may give: those pandas holds (datetime64[ns], what Spark's toPandas
# and ParseResult.to_pandas convert to). A record dated outside (year 0000, 9999 and an
# offset, epoch 10^15 s) is quarantined "bad time stamp" (BAD_TIME) in both engines: kept
# as an event, it made collect(), toPandas() and `logs report` fail.
TS_MIN = datetime(1677, 9, 22, tzinfo=timezone.utc)
TS_MAX = datetime(2262, 4, 11, tzinfo=timezone.utc)     # exclusive
BAD_TIME = "bad time stamp"


@dataclass
class ParseCounts:
    """How many physical lines went where; `read == recognised + other + quarantined`."""

    read: int = 0
    recognised: int = 0
    other: int = 0            # other records, blank lines and continuation lines
    quarantined: int = 0
    continuation: int = 0     # of `other`: lines attached to the record above
    untimed: int = 0          # of `recognised`: events whose line gives no time (ts NULL)
    by_problem: dict[str, int] = field(default_factory=dict)
    # what was decided about the input, by name (logs.inputs): folders followed, files
    # skipped, not read or read in part; the same in both engines
    notes: list[InputNote] = field(default_factory=list)

    def summary(self) -> str:
        text = (f"parsed {self.read} lines: {self.recognised} recognised, {self.quarantined} "
                f"quarantined, {self.other} other")
        if self.untimed:
            text += (f"; {self.untimed} of the events have no time stamp (their lines give "
                     "none; they keep their file and line order)")
        return text

    def notes_text(self) -> list[str]:
        """One line per note (empty when every file was read whole)."""
        return [str(n) for n in self.notes]

    def count_record(self, kind: str, row: dict[str, Any]) -> None:
        """One record kept: an event (untimed when its line gives no time) or a quarantined
        line, by its problem."""
        if kind == "event":
            self.recognised += 1
            if row["ts"] is None:
                self.untimed += 1
        else:
            self.quarantined += 1
            self.by_problem[row["problem"]] = self.by_problem.get(row["problem"], 0) + 1

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
    # by position: `2024-05-01` and Go's `2024/05/01` alike (the Spark loader translates / to -)
    if date[:1].isalpha() or time.endswith("M"):
        return _named_ts(date, time)
    try:
        return datetime(int(date[0:4]), int(date[5:7]), int(date[8:10]), int(time[0:2]),
                        int(time[3:5]), int(time[6:8]), tzinfo=timezone.utc)
    except ValueError:
        return None


def _named_ts(date: str, time: str) -> datetime | None:
    """`Nov 25, 2026` and `10:00:00 AM` (java.util.logging, Kibana): month names and the
    12-hour clock, read as spark.load._ts reads them (1 to 12 o'clock, 12 AM is 0 h)."""
    try:
        if date[:1].isalpha():
            at = MONTHS.find(date[:3])
            if at < 0 or at % 3:
                return None
            day, year = date[4:].split(", ")
            y, m, d = int(year), at // 3 + 1, int(day)
        else:
            y, m, d = int(date[0:4]), int(date[5:7]), int(date[8:10])
        clock = time.split(" ")[0]
        hour = int(clock.split(":")[0])
        if time.endswith(("AM", "PM")):
            if not 1 <= hour <= 12:
                return None
            hour = hour % 12 + (12 if time.endswith("PM") else 0)
        return datetime(y, m, d, hour, int(clock[-5:-3]), int(clock[-2:]), tzinfo=timezone.utc)
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
    try:
        ts = base.replace(microsecond=micro) - offset
    except OverflowError:                    # 0001-01-01 with a positive offset, ...
        return None
    return ts if TS_MIN <= ts < TS_MAX else None


def epoch_ts(number: str, micros_per_unit: int) -> datetime | None:
    """A Unix time (seconds or milliseconds) rounded half-up to microseconds, as Spark does."""
    try:
        micros = int((Decimal(number) * micros_per_unit).quantize(Decimal(1), ROUND_HALF_UP))
        ts = _EPOCH0 + timedelta(microseconds=micros)
    except (InvalidOperation, OverflowError):
        return None
    return ts if TS_MIN <= ts < TS_MAX else None


def _json_ts(value: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        text = json.dumps(value)
    else:
        text = value if isinstance(value, str) else repr(value)
    if _EPOCH_NUM.match(text):
        try:
            millis = Decimal(text) >= EPOCH_MILLIS_FROM        # pino, logstash epoch millis
        except InvalidOperation:
            return None
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
            thread: str | None, msg: str, dated: bool = False, group0: str | None = None,
            member0: str | None = None, found: Any = None) -> tuple[str, dict[str, Any] | None]:
    """Classify a record's message; returns (kind, row); no row for an `other` line.

    `dated`: the record carries a time stamp; when it gives no time (not a real date, or out
    of TS_MIN..TS_MAX), an event is quarantined as BAD_TIME instead. `group0`, `member0`: the
    record's own fields for them (a JSON line's groupId, memberId), used when the message
    names none."""
    logger = logger or None
    found = found or _MESSAGE_MATCH(msg)
    if found is None:
        if not is_coordination_logger(logger):
            return "other", None
        row = _ROW_TEMPLATE.copy()
        row.update(ts=ts, level=normalise_level(level, logger), logger=logger, thread=thread or None,
                   layout=layout, source=source_of(logger, layout), problem="unknown message")
        return "quarantine", row
    i, (group, member, generation, state, reason, partition, epoch, duration_ms, p_group,
        p_partition) = found
    entry = MESSAGE_ENTRIES[i]
    if entry.event is None:
        return "other", None
    if dated and ts is None:
        row = _ROW_TEMPLATE.copy()
        row.update(level=normalise_level(level, logger), logger=logger, thread=thread or None,
                   layout=layout, source=entry.source, problem=BAD_TIME)
        return "quarantine", row
    row = _ROW_TEMPLATE.copy()
    row.update(ts=ts, level=normalise_level(level, logger), logger=logger, thread=thread or None,
               layout=layout, source=entry.source, event=entry.event, template=entry.id,
               group=group or p_group or group0 or None, member=member or member0 or None,
               generation=_int(generation),
               state=state, reason=reason, partition=_int(partition or p_partition),
               epoch=_int(epoch), duration_ms=_int(duration_ms, _INT64))
    return "event", row


_MESSAGE_MATCH = MESSAGE_CLASSIFIER.match_values
_LAYOUT_MATCH = LAYOUT_CLASSIFIER.match_values
_LOGGER_PREFIX = [lay.logger_prefix for lay in LAYOUTS]
_LAYOUT_ID = [lay.id for lay in LAYOUTS]


def _empty_row() -> dict[str, Any]:
    return dict.fromkeys(COLUMN_NAMES)


def _line_text(data: bytes | str) -> str | None:
    """The line as text, without a leading BOM; None when its bytes are not UTF-8."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    else:
        text = data
    return text[1:] if text.startswith("\ufeff") else text


def classify_line(data: bytes | str) -> tuple[str, dict[str, Any] | None]:
    """(kind, row) for one physical line; the row lacks raw/file/line (the caller adds them),
    and is None for other and continuation lines (they keep no columns)."""
    line = _line_text(data)
    if line is None:
        row = _empty_row()
        row["problem"] = "undecodable bytes"
        return "quarantine", row
    return classify_text(strip_wrapper(line))


def classify_text(text: str) -> tuple[str, dict[str, Any] | None]:
    """classify_line for a decoded text whose tool prefix is stripped (a joined record's
    text: logs.joins)."""
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
                       msg, ts_value is not None, _json_str(obj, JSON_KEYS["group"]),
                       _json_str(obj, JSON_KEYS["member"]))
    found = _LAYOUT_MATCH(text)
    if found is not None:
        i, (date, time, frac, tz, epoch, level, logger, thread, msg) = found
        if logger and _LOGGER_PREFIX[i]:
            logger = _LOGGER_PREFIX[i] + logger
        return _record(_LAYOUT_ID[i], make_ts(date, time, frac, tz, epoch), level, logger,
                       thread, msg or "", bool(epoch or (date and time)))
    if _ALONE_OTHER.match(text):                        # a display time, nothing after it
        return "other", None
    if _CONT.match(text):
        return "continuation", None
    row = _empty_row()
    if _HEAD.match(text):                 # starts like a record: cut short, no bare message
        row["problem"] = "truncated"
        return "quarantine", row
    found = _MESSAGE_MATCH(text)
    if found is not None and BARE_OK[found[0]]:         # a message alone, no layout
        return _record(BARE_LAYOUT, None, None, None, None, text, found=found)
    row["problem"] = "unknown layout"
    return "quarantine", row


def _raw(data: bytes | str) -> str:
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data


def _join_head(line: str, text: str) -> tuple[int, str] | None:
    """(join index, key) when the line is a head of a `logs.joins` row (`line` as read,
    `text` without its tool's prefix)."""
    if _JOIN_HEADS.match(line) is None and (text is line or _JOIN_HEADS.match(text) is None):
        return None
    for i, j in enumerate(JOINS):
        m = j.head_re.match(line if j.on == "line" else text)
        if m is not None:
            return i, m.group(1)
    return None


def _join_tail(head: tuple[int, str], line: str, text: str) -> bool:
    """Whether the line is a tail of the head's join, with the same key."""
    j = JOINS[head[0]]
    m = j.tail_re.match(line if j.on == "line" else text)
    return m is not None and m.group(1) == head[1]


def parse_lines(lines: Iterable[bytes | str], file: str, counts: ParseCounts | None = None
                ) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield (kind, row) for the events and quarantined records of one file, in line order.

    Records spread over several lines (`logs.joins`) are joined first; continuation lines
    are appended to the raw text of the record above them; a record is yielded once its
    continuation lines are known.
    """
    counts = counts if counts is not None else ParseCounts()
    seen_record = False                    # a record above (continuations attach to it)
    pending: tuple[str, dict[str, Any]] | None = None     # the last event/quarantine record
    number = 0
    group: list[tuple[int, bytes | str]] = []     # the lines of one join record, so far
    group_join = 0
    head: tuple[int, str, str, str] | None = None  # the previous line's join head
    chain = 0                              # the line's place in its chain of linked lines

    def records() -> Iterator[tuple[int, str, dict[str, Any] | None, bytes | str, int]]:
        """(first line, kind, row, data, extra lines) per record, joins applied."""
        nonlocal group, group_join, head, chain, number
        for number, data in enumerate(lines, start=1):
            line = _line_text(data)
            text = strip_wrapper(line) if line is not None else None
            linked = head is not None and text is not None and _join_tail(head, line, text)
            chain = chain + 1 if linked else 0
            if group and (not linked or chain % MAX_JOIN_LINES == 0):
                yield _flush(group, group_join)
                group = []
            head_now = _join_head(line, text) if line else None
            if linked:
                group.append((number, data))
            elif head_now is not None:
                group, group_join = [(number, data)], head_now[0]
            elif text is None:
                row = _empty_row()
                row["problem"] = "undecodable bytes"
                yield number, "quarantine", row, data, 0
            else:
                kind, row = classify_text(text)
                yield number, kind, row, data, 0
            head = head_now
        if group:
            yield _flush(group, group_join)

    for first, kind, row, data, extra in records():
        counts.other += extra
        counts.continuation += extra
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
        row["raw"], row["file"], row["line"] = _raw(data), file, first
        counts.count_record(kind, row)
        pending = (kind, row)
    counts.read += number
    if pending is not None:
        yield pending


def parse_csv(lines: Iterable[bytes | str], file: str, header: CsvHeader,
              counts: ParseCounts | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """parse_lines for a CSV export whose first line is `header` (logs.csvexport): one record
    per row, at the row's first physical line; its other lines count as continuation lines."""
    counts = counts if counts is not None else ParseCounts()
    for first, kind, row, raw, extra in csv_records(lines, header):
        counts.read += 1 + extra
        counts.other += extra
        counts.continuation += extra
        if kind == "other":
            counts.other += 1
            continue
        assert row is not None
        row["raw"], row["file"], row["line"] = raw, file, first
        counts.count_record(kind, row)
        yield kind, row


def _flush(group: list[tuple[int, bytes | str]], join: int
           ) -> tuple[int, str, dict[str, Any] | None, bytes | str, int]:
    """One record of a join's lines (one line: classified alone)."""
    if len(group) == 1:
        number, data = group[0]
        kind, row = classify_line(data)
        return number, kind, row, data, 0
    texts = [strip_wrapper(_line_text(d) or "") for _, d in group]
    kind, row = classify_text(JOINS[join].sep.join(texts))
    raw = "\n".join(_raw(d) for _, d in group)
    return group[0][0], kind, row, raw, len(group) - 1


def iter_lines(stream: IO[bytes], chunk_size: int = 1 << 22) -> Iterator[bytes]:
    """Lines of a binary stream, split on \\n, \\r\\n or \\r (without the terminator). A read
    error is raised after the line it cut short has been given."""
    tail = b""
    first = True
    while True:
        try:
            block = stream.read(chunk_size)
        except OSError:                     # a read error ends the file: keep the cut line
            if tail:
                yield tail[:-1] if tail.endswith(b"\r") else tail
            raise
        if not block:
            break
        pieces = (tail + block).splitlines(keepends=True)
        tail = pieces.pop()
        if tail.endswith(b"\n"):            # complete (also \r\n): nothing can follow it
            pieces.append(tail)
            tail = b""
        for piece in pieces:
            first = False
            yield piece[:-2] if piece.endswith(b"\r\n") else piece[:-1]
    # Hadoop's LineRecordReader drops a UTF-8 BOM at the start of a file; a file that is
    # nothing but the BOM has no line at all there (no empty one)
    if tail and not (first and tail == b"\xef\xbb\xbf"):
        yield tail[:-1] if tail.endswith(b"\r") else tail


class SkippedFilesWarning(UserWarning):
    """Files under a walked directory that were left out (the kit's own non-log files)."""


def expand_paths(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
                 skipped: list[Path] | None = None) -> list[Path]:
    """Files named by `paths`, as `logs.inputs.scan_inputs` decides (directories walked,
    hidden and `_`-prefixed names skipped as Spark does, symlinked folders followed once,
    each file read once). Raises FileNotFoundError naming the first missing path.

    A walked directory's kit data files that are not logs (`KIT_DATA_FILES`: trace.jsonl,
    consumer_offsets.csv, groups.csv) are left out: appended to `skipped` when given (the
    caller reports them), else named in a SkippedFilesWarning. Named on their own, they are
    refused with a ValueError. The other notes (scan_inputs) are not returned here: read
    them from `scan_inputs` or from the parse's counts."""
    inputs = scan_inputs(paths)
    _report_kit_files(inputs.kit_files, skipped)
    return [f.path for f in inputs.files]


def _report_kit_files(left_out: list[Path], skipped: list[Path] | None,
                      stacklevel: int = 3) -> None:
    if left_out:
        if skipped is not None:
            skipped.extend(left_out)
        else:
            import warnings
            warnings.warn(skipped_note(left_out), SkippedFilesWarning, stacklevel=stacklevel)


class LogInputWarning(UserWarning):
    """Files or folders of the input that were followed, skipped, not read or read in part
    (`ParseCounts.notes`)."""


def notes_warning(notes: list[InputNote], stacklevel: int = 3) -> None:
    """Say the notes once, as a LogInputWarning (notebooks show it; the CLI prints them)."""
    if notes:
        import warnings
        warnings.warn("\n".join([f"{len(notes)} note(s) on the input:"]
                                 + [f"  {n}" for n in notes]), LogInputWarning,
                      stacklevel=stacklevel)


def skipped_note(files: list[Path]) -> str:
    """One line naming the kit data files a directory walk left out, and why."""
    names = sorted({f.name for f in files})
    why = "; ".join(f"{n}: {KIT_DATA_FILES[n][1]}" for n in names)
    return (f"skipped {len(files)} file(s) of the kit's datasets that are not logs ({why}); "
            f"read their runs' .log files")


def read_file_lines(f: LogFile, counts: ParseCounts | None = None
                    ) -> Iterator[tuple[str, dict[str, Any]]]:
    """parse_lines over one file of `scan_inputs`, decompressed as needed; a damaged
    compressed file is read up to the damage and a file that fails to open or read is left
    with what was read, each with a note in `counts.notes`."""
    counts = counts if counts is not None else ParseCounts()
    before = counts.read
    try:
        stream = open_log(f)
    except OSError as exc:
        counts.notes.append(InputNote(f.name, "not read", f"cannot be opened: {exc.strerror}"))
        return
    failed: list[OSError] = []

    def lines() -> Iterator[bytes]:          # a read error ends the file, like damage
        try:
            yield from iter_lines(stream)
        except OSError as exc:
            failed.append(exc)

    with stream:
        it = lines()
        head = next(it, None)
        header = csv_header(_line_text(head)) if head is not None else None
        if header is not None:                  # a log viewer's CSV export (logs.csvexport)
            yield from parse_csv(chain([head], it), f.name, header, counts)
        else:
            yield from parse_lines(() if head is None else chain([head], it), f.name, counts)
        if failed:
            counts.notes.append(InputNote(f.name, "read in part", f"reading failed after "
                                          f"{counts.read - before:,} line(s): "
                                          f"{failed[0].strerror or failed[0]}"))
        elif stream.damage:
            counts.notes.append(damage_note(f, stream.damage, counts.read - before))


def iter_parsed(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
                counts: ParseCounts, *, _depth: int = 0) -> Iterator[tuple[str, dict[str, Any]]]:
    """("event" | "quarantine", row) for every file under `paths`, in (file, line) order,
    one row at a time (memory stays flat whatever the input's size); `counts` is filled as
    the rows go by, its notes first. `parse_paths` keeps the rows; `logs parse` streams them
    to Parquet."""
    inputs = scan_inputs(paths)
    _report_kit_files(inputs.kit_files, None, stacklevel=3 + _depth)
    counts.notes.extend(inputs.notes)
    for f in inputs.files:
        yield from read_file_lines(f, counts)
    counts.check()
    notes_warning(counts.notes, stacklevel=3 + _depth)


def parse_paths(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]
                ) -> ParseResult:
    """Parse every file under `paths`; events and quarantine in (file, line) order.

    What was decided about the input (logs.inputs: symlinks, damaged or unreadable files) is
    in `counts.notes`, and said once as a LogInputWarning."""
    counts = ParseCounts()
    events: list[dict[str, Any]] = []
    quarantine: list[dict[str, Any]] = []
    for kind, row in iter_parsed(paths, counts, _depth=1):    # warnings name our caller
        (events if kind == "event" else quarantine).append(row)
    return ParseResult(events, quarantine, counts)
