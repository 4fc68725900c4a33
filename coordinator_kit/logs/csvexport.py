"""CSV exports of log viewers (Kibana Discover, Grafana, Datadog, any other): read as records.

A file is a CSV export when its first line is a header this module recognises
(`csv_header`): decided once per file, from that line alone, so plain-text parsing does no
extra work per line. Which columns are which field is data (`CSV_HEADER_MAPS`), as JSON keys
are (`patterns.JSON_KEY_MAPS`): each viewer's documented export columns, and a generic map
for any header that names a time-like and a message-like column.

Each row becomes one record. Its message (the first line of the message column: a stack
trace inside the field is kept in `raw`, as the continuation lines of a text record are) is
classified by the same catalogue and wordings as a log line's message. A message that is a
whole log line in a known layout (a log shipper that kept the raw line, e.g. Filebeat's
`message`) is parsed as that line: its own time, level and logger, its layout's id. Else the
row's own columns give the fields, and its layout is `CSV`.

Rules, the same in both engines (the Spark engine hands the rows of these files, classified
here, to Spark as Arrow: `spark.sources`; exports are small, Kibana's CSV report stops at
`xpack.reporting.csv.maxSizeBytes`, 250 MB at most, and Datadog's export at 100,000 rows, so
reading them on the driver costs little, and one reader of the quoting rules cannot disagree
with itself. Spark's own CSV reader with `multiLine` was not used: it numbers no lines, and it
reads a malformed row its own way (PERMISSIVE fills nulls) where the kit names the problem):

* Fields follow RFC 4180: separated by `,`; a field in double quotes may hold `,`, `""` (one
  quote) and line breaks (a line break inside a field becomes `\\n`). A quote inside an
  unquoted field is kept as it is (as spreadsheet programs write it).
* `line` of a row is the physical line its first field starts on; the row's other physical
  lines are counted as continuation lines (`ParseCounts.continuation`; Spark: kind `joined`),
  so read = recognised + other + quarantined still holds. The header line and blank lines
  are other lines; a row that repeats the header (two exports joined) too.
* Quarantined, never dropped: a row with another number of fields than the header, or text
  after a closing quote (`malformed CSV row`); a quote never closed (`unclosed CSV quote`: the
  row runs to the end of the file, every line of it in that one record); a row whose time cell
  is not empty but gives no time (`bad time stamp`, whatever its message: the export's time
  format is then one the kit does not read, and every row of it would be misplaced); a row
  with bytes that are not UTF-8 or control characters (`undecodable bytes`).
* Times: ISO 8601 (with or without a zone; none is UTC), Unix seconds or milliseconds (as
  JSON lines' times), nanoseconds (19 digits: Grafana's `tsNs`), and Kibana's display format
  `Feb 20, 2024 @ 10:11:12.345` (its `dateFormat` default; the export is in the browser's or
  `dateFormat:tz` zone, which the file does not say: read as UTC).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .fields import COLUMN_NAMES
from .patterns import CONTROL_RE, LAYOUT_CLASSIFIER, normalise_level
from .wrappers import strip_wrapper

__all__ = ["CSV_HEADER_MAPS", "CsvHeader", "csv_header", "csv_records", "csv_ts", "CSV_LAYOUT",
           "MALFORMED", "UNCLOSED", "split_csv_line"]

CSV_LAYOUT = "CSV"
MALFORMED = "malformed CSV row"
UNCLOSED = "unclosed CSV quote"

# exporter -> field -> column names (compared without case), the first present wins. An
# exporter is recognised when its header has one of its `ts` and one of its `msg` columns;
# the maps are tried in this order, `generic` last.
CSV_HEADER_MAPS: dict[str, dict[str, tuple[str, ...]]] = {
    # Kibana Discover, Share > CSV report: one column per selected field, named by the field
    # (Elastic Common Schema names for Filebeat / Elastic Agent / ecs-logging data)
    "kibana": {"ts": ("@timestamp",), "msg": ("message",),
               "level": ("log.level",), "logger": ("log.logger",),
               "thread": ("process.thread.name",)},
    # Grafana, Inspect > Data > Download CSV of a Loki logs panel or Explore: the data frame's
    # fields (labels, Time, Line, tsNs, id); Line is the log line as shipped
    "grafana": {"ts": ("Time", "tsNs"), "msg": ("Line",), "level": ("level", "detected_level")},
    # Datadog Log Explorer, Download as CSV: the list's columns (Date, Host, Service, Content
    # or Message, Status) and the facets added to it (@logger.name, @logger.thread_name)
    "datadog": {"ts": ("Date",), "msg": ("Message", "Content"), "level": ("Status",),
                "logger": ("@logger.name", "logger.name"),
                "thread": ("@logger.thread_name", "logger.thread_name")},
    # any other export: a time-like and a message-like column
    "generic": {"ts": ("timestamp", "time", "datetime", "date", "ts", "@timestamp"),
                "msg": ("message", "msg", "line", "log", "text", "content"),
                "level": ("level", "severity", "loglevel", "log_level", "status"),
                "logger": ("logger", "logger_name", "category", "name"),
                "thread": ("thread", "thread_name"),
                "group": ("group", "group_id", "groupid"),
                "member": ("member", "member_id", "memberid")},
}
_FIELDS = ("ts", "msg", "level", "logger", "thread", "group", "member")


@dataclass(frozen=True)
class CsvHeader:
    """A recognised header: its exporter, its number of columns, and the column index of each
    field (None: the export has no such column)."""

    exporter: str
    width: int
    cells: tuple[str, ...]
    columns: dict[str, int | None]


def split_csv_line(text: str, fields: list[str], cur: list[str], quoted: bool
                   ) -> tuple[bool, bool]:
    """Read one physical line into `fields` (finished fields) and `cur` (the field being
    read, as pieces); `quoted`: the line starts inside a quoted field. Returns (still inside a
    quoted field at the end of the line, text found after a closing quote)."""
    i, n = 0, len(text)
    while True:
        if quoted:
            j = text.find('"', i)
            if j < 0:                       # the field goes on past this line
                cur.append(text[i:])
                cur.append("\n")
                return True, False
            cur.append(text[i:j])
            if text.startswith('"', j + 1):  # "" is one quote
                cur.append('"')
                i = j + 2
                continue
            quoted = False
            i = j + 1
            if i == n:
                fields.append("".join(cur))
                cur.clear()
                return False, False
            if text[i] != ",":
                return False, True
            fields.append("".join(cur))
            cur.clear()
            i += 1
            if i == n:                       # a trailing comma: one more, empty field
                fields.append("")
                return False, False
            continue
        if text.startswith('"', i) and not cur:
            quoted = True
            i += 1
            continue
        j = text.find(",", i)
        if j < 0:
            cur.append(text[i:])
            fields.append("".join(cur))
            cur.clear()
            return False, False
        cur.append(text[i:j])
        fields.append("".join(cur))
        cur.clear()
        i = j + 1
        if i == n:
            fields.append("")
            return False, False


def _cells(text: str) -> list[str] | None:
    """The fields of a one-line row, or None when it is not one well-formed line."""
    fields: list[str] = []
    cur: list[str] = []
    open_quote, bad = split_csv_line(text, fields, cur, False)
    return None if open_quote or bad else fields


def csv_header(first_line: str | None) -> CsvHeader | None:
    """The header when `first_line` (the file's first line, decoded) is one of a CSV export
    this module reads, else None (the file is read as lines of text)."""
    if not first_line or "," not in first_line:
        return None
    cells = _cells(first_line.removeprefix("\ufeff"))
    if cells is None or len(cells) < 2:
        return None
    names = [c.strip().lower() for c in cells]
    if any(not c or len(c) > 100 for c in names):
        return None
    for exporter, fields in CSV_HEADER_MAPS.items():
        columns = {f: next((names.index(k.lower()) for k in fields.get(f, ())
                            if k.lower() in names), None) for f in _FIELDS}
        if columns["ts"] is not None and columns["msg"] is not None:
            return CsvHeader(exporter, len(cells), tuple(names), columns)
    return None


_CONTROL = re.compile(CONTROL_RE)
_ISO = re.compile(r"^([0-9]{4}-[0-9]{2}-[0-9]{2})[T ]([0-9]{2}:[0-9]{2}:[0-9]{2})"
                  r"(?:[.,]([0-9]{1,9}))?\s?(Z|UTC|[+-][0-9]{2}:?[0-9]{2})?$")
_KIBANA = re.compile(r"^([A-Z][a-z]{2}) ([0-9]{1,2}), ([0-9]{4}) @ "
                     r"([0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.([0-9]{1,9}))?$")
_NUMBER = re.compile(r"^[0-9]+(?:\.[0-9]+)?$")


def csv_ts(text: str) -> datetime | None:
    """A time cell as a UTC time (see the module docstring for the forms read), else None."""
    from .parse import EPOCH_MILLIS_FROM, epoch_ts, make_ts

    text = text.strip()
    m = _ISO.match(text)
    if m:
        tz = m.group(4)
        return make_ts(m.group(1), m.group(2), m.group(3), None if tz == "UTC" else tz, None)
    if _NUMBER.match(text):
        if "." not in text and len(text) >= 19:     # nanoseconds (Grafana tsNs), cut to µs
            return epoch_ts(text[:-3], 1)
        millis = float(text) >= EPOCH_MILLIS_FROM
        return epoch_ts(text, 1000 if millis else 1_000_000)
    m = _KIBANA.match(text)
    if m:
        return make_ts(f"{m.group(1)} {int(m.group(2)):02d}, {m.group(3)}", m.group(4),
                       m.group(5), None, None)
    return None


Record = tuple[int, str, "dict[str, Any] | None", str, int]


def _raw(data: bytes | str) -> str:
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data


def _text(data: bytes | str) -> str | None:
    if isinstance(data, bytes):
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return data


def _quarantine(problem: str) -> dict[str, Any]:
    row = dict.fromkeys(COLUMN_NAMES)
    row["layout"] = CSV_LAYOUT
    row["problem"] = problem
    return row


def csv_records(lines: Iterable[bytes | str], header: CsvHeader) -> Iterator[Record]:
    """(first line, kind, row, raw, extra lines) per record of a CSV export whose first line
    is `header` (read again here: it is an `other` line). kind is event, quarantine or other
    (row None); `extra` counts the record's physical lines after its first."""
    fields: list[str] = []
    cur: list[str] = []
    pieces: list[str] = []
    quoted = False
    first = 0
    broken = False
    number = 0
    for number, data in enumerate(lines, start=1):
        text = _text(data)
        if number == 1 and text is not None:
            text = text.removeprefix("\ufeff")
        if not quoted:
            if number == 1:
                yield 1, "other", None, _raw(data), 0
                continue
            if text is not None and not text.strip():
                yield number, "other", None, _raw(data), 0
                continue
            first, broken = number, False
            fields.clear()
            cur.clear()
            pieces.clear()
        pieces.append(_raw(data))
        if text is None or _CONTROL.search(text):
            broken = True
            text = _raw(data)
        quoted, bad = split_csv_line(text, fields, cur, quoted)
        if bad:                      # text after a closing quote: the row ends at its line
            quoted = False
            yield first, "quarantine", _quarantine(MALFORMED), "\n".join(pieces), number - first
            continue
        if quoted:
            continue
        yield _row(first, fields, "\n".join(pieces), number - first, header, broken)
    if quoted:
        yield first, "quarantine", _quarantine(UNCLOSED), "\n".join(pieces), number - first


def _row(first: int, fields: list[str], raw: str, extra: int, header: CsvHeader,
         broken: bool) -> Record:
    if broken:
        return first, "quarantine", _quarantine("undecodable bytes"), raw, extra
    if len(fields) != header.width:
        return first, "quarantine", _quarantine(MALFORMED), raw, extra
    if tuple(f.strip().lower() for f in fields) == header.cells:   # the header again
        return first, "other", None, raw, extra

    def cell(name: str) -> str | None:
        i = header.columns[name]
        return fields[i] if i is not None and fields[i] != "" else None

    msg = (cell("msg") or "").split("\n", 1)[0].rstrip("\r")
    line = strip_wrapper(msg)
    if LAYOUT_CLASSIFIER.match_values(line) is not None:  # a whole log line in the message
        from .parse import classify_text
        kind, row = classify_text(line)
        return first, kind, row, raw, extra
    from .parse import BAD_TIME, _record

    when = cell("ts")
    ts = csv_ts(when) if when is not None else None
    if when is not None and ts is None:
        row = _quarantine(BAD_TIME)
        row.update(level=normalise_level(cell("level"), cell("logger")), logger=cell("logger"),
                   thread=cell("thread"))
        return first, "quarantine", row, raw, extra
    kind, row = _record(CSV_LAYOUT, ts, cell("level"), cell("logger"), cell("thread"), msg,
                        False, cell("group"), cell("member"))
    return first, kind, row, raw, extra
