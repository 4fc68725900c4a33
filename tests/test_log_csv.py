"""CSV exports of log viewers (logs.csvexport): found by their header, one record per row,
RFC 4180 quoting, malformed rows quarantined, the same rows in both engines.

The samples are hand-written from each viewer's documented export (tests/data/logs/_README.md):
Kibana Discover's CSV report, Grafana's Inspect > Data download of a Loki frame, Datadog's Log
Explorer CSV, and a generic export with every kind of damage."""

from __future__ import annotations

import gzip
from datetime import datetime, timezone
from pathlib import Path

import pytest

from coordinator_kit.logs.csvexport import (CSV_HEADER_MAPS, MALFORMED, UNCLOSED, csv_header,
                                            csv_ts, split_csv_line)
from coordinator_kit.logs.parse import BAD_TIME, parse_paths

DATA = Path(__file__).parent / "data" / "logs"
UTC = timezone.utc


def _split(*lines: str) -> tuple[list[str], bool, bool]:
    fields: list[str] = []
    cur: list[str] = []
    quoted = bad = False
    for line in lines:
        quoted, bad = split_csv_line(line, fields, cur, quoted)
    return fields, quoted, bad


# -- quoting ------------------------------------------------------------------------------------

def test_quoted_fields_hold_commas_doubled_quotes_and_line_breaks():
    assert _split('a,"b, c","say ""hi""",') == (["a", "b, c", 'say "hi"', ""], False, False)
    assert _split('1,"Exception: x', "\tat A.b(A.java:1)", '",end') == (
        ["1", "Exception: x\n\tat A.b(A.java:1)\n", "end"], False, False)
    assert _split('"open') == ([], True, False)            # still inside the quote
    assert _split('"closed"x,2')[2] is True                 # text after a closing quote
    assert _split('in"side,2') == (['in"side', "2"], False, False)   # kept as written


# -- headers ------------------------------------------------------------------------------------

@pytest.mark.parametrize("line, exporter", [
    ('"@timestamp","log.level","message"', "kibana"),
    ("labels,Time,Line,tsNs,id", "grafana"),
    ("Date,Host,Service,Status,Message", "datadog"),
    ("\ufefftimestamp,severity,msg", "generic"),
    ("TIME,LOGGER,MESSAGE", "generic"),
])
def test_each_viewers_header_is_recognised(line, exporter):
    header = csv_header(line)
    assert header is not None and header.exporter == exporter
    assert header.columns["ts"] is not None and header.columns["msg"] is not None


@pytest.mark.parametrize("line", [
    "[2021-06-01 10:00:00,123] INFO [GroupCoordinator 1]: Elected as the group coordinator "
    "for partition 12 in epoch 3 (kafka.coordinator.group.GroupCoordinator)",
    "partition,offset,ts,key",                     # no message column
    "time,level",                                  # no message column
    "message",                                     # one column
    'time,"message',                               # not one well-formed line
    "time, ,message",                              # an empty column name
])
def test_a_line_that_is_no_export_header_is_not_taken_for_one(line):
    assert csv_header(line) is None


def test_the_header_maps_are_data_every_exporter_names_a_time_and_a_message():
    for exporter, fields in CSV_HEADER_MAPS.items():
        assert fields["ts"] and fields["msg"], exporter


@pytest.mark.parametrize("text, expected", [
    ("Feb 20, 2024 @ 10:11:12.345", datetime(2024, 2, 20, 10, 11, 12, 345000, UTC)),
    ("2024-04-02T12:30:00.000Z", datetime(2024, 4, 2, 12, 30, tzinfo=UTC)),
    ("2024-04-02T14:30:00+02:00", datetime(2024, 4, 2, 12, 30, tzinfo=UTC)),
    ("2024-03-01 08:00:00.100", datetime(2024, 3, 1, 8, 0, 0, 100000, UTC)),
    ("1712061000123", datetime(2024, 4, 2, 12, 30, 0, 123000, UTC)),      # epoch millis
    ("1712061000", datetime(2024, 4, 2, 12, 30, tzinfo=UTC)),            # epoch seconds
    ("1709280000100000000", datetime(2024, 3, 1, 8, 0, 0, 100000, UTC)),  # Grafana tsNs
    ("yesterday", None), ("2024-02-30 10:00:00", None), ("Feb 30, 2024 @ 10:00:00", None),
])
def test_time_cells(text, expected):
    assert csv_ts(text) == expected


# -- the samples --------------------------------------------------------------------------------

def _rows(path: Path) -> dict[int, dict]:
    r = parse_paths(path)
    return {row["line"]: row for row in r.events + r.quarantine}


def test_kibana_export_rows_are_events_with_their_columns_and_a_kept_raw_line_is_parsed():
    r = parse_paths(DATA / "export-kibana.csv")
    # header + 5 one-line rows + one row of 4 physical lines (a stack trace in the message)
    assert (r.counts.read, r.counts.recognised, r.counts.other, r.counts.continuation,
            r.counts.quarantined) == (10, 5, 5, 3, 0)
    rows = {row["line"]: row for row in r.events}
    assert rows[2]["event"] == "rebalance_started" and rows[2]["layout"] == "CSV"
    assert rows[2]["ts"] == datetime(2024, 2, 20, 10, 11, 12, 345000, UTC)
    assert rows[2]["logger"] == "kafka.coordinator.group.GroupCoordinator"
    assert rows[2]["group"] == "orders" and rows[2]["generation"] == 4
    # Filebeat kept the whole log4j line in `message`: parsed as that line, its own time
    assert rows[6]["layout"] == "LOG4J" and rows[6]["event"] == "group_stabilized"
    assert rows[6]["ts"] == datetime(2024, 2, 20, 10, 11, 20, 500000, UTC)
    # a stack trace inside the quoted message: one record, at its first line, raw keeps all
    assert rows[7]["event"] == "offset_commit_partition_failed"
    assert rows[7]["raw"].count("\n") == 3 and rows[7]["raw"].endswith('1384)"')
    assert 5 not in rows                    # NetworkClient, with "" and commas: other


def test_grafana_loki_export_lines_are_parsed_as_the_log_lines_they_are():
    rows = _rows(DATA / "export-grafana-loki.csv")
    assert {n: (r["layout"], r["event"]) for n, r in rows.items()} == {
        2: ("LOG4J", "rebalance_started"), 3: ("LOG4J", "group_stabilized"),
        5: ("LOGBACK", "joined")}
    assert rows[5]["group"] == "payments" and rows[5]["generation"] == 3


def test_datadog_export_maps_status_and_logger_facet():
    r = parse_paths(DATA / "export-datadog.csv")
    assert (r.counts.read, r.counts.recognised, r.counts.other, r.counts.continuation) == \
        (6, 3, 3, 1)
    rows = {row["line"]: row for row in r.events}
    assert rows[3]["level"] == "WARN" and rows[3]["event"] == "rejoin_requested"
    assert rows[5]["level"] == "ERROR" and rows[5]["group"] == "billing"
    assert rows[2]["logger"] == "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator"


def test_damaged_rows_are_quarantined_by_name_and_the_totals_add_up():
    r = parse_paths(DATA / "export-generic-malformed.csv")
    c = r.counts
    assert c.read == c.recognised + c.other + c.quarantined == 10
    assert c.by_problem == {MALFORMED: 2, BAD_TIME: 1, UNCLOSED: 1}
    problems = {row["line"]: row["problem"] for row in r.quarantine}
    assert problems == {6: MALFORMED, 7: BAD_TIME, 8: MALFORMED, 9: UNCLOSED}
    bad_time = next(row for row in r.quarantine if row["line"] == 7)    # its columns kept
    assert (bad_time["level"], bad_time["thread"], bad_time["layout"]) == ("INFO", "main", "CSV")
    # the unclosed quote runs to the end of the file: its second line is in the record
    assert r.quarantine[-1]["raw"].count("\n") == 1 and c.continuation == 1
    # an empty time cell: an event without a time; the blank line and the repeated header: other
    untimed = [row for row in r.events if row["ts"] is None]
    assert [row["line"] for row in untimed] == [3] and c.untimed == 1


def test_crlf_bom_gzip_and_undecodable_bytes(tmp_path):
    text = ('\ufefftime,logger,message\r\n'
            '2024-04-02T12:30:00Z,org.apache.kafka.clients.consumer.internals.ConsumerCoordinator,'
            '"[Consumer clientId=c-1, groupId=g] Successfully joined group with generation 2\r\n'
            'second line"\r\n')
    data = text.encode() + b"2024-04-02T12:30:01Z,x,\xff\xfe\r\n"
    plain = tmp_path / "a.csv"
    plain.write_bytes(data)
    packed = tmp_path / "b.csv.gz"
    packed.write_bytes(gzip.compress(data))
    for path in (plain, packed):
        r = parse_paths(path)
        assert [(e["line"], e["event"], e["group"]) for e in r.events] == [(2, "joined", "g")]
        assert [(q["line"], q["problem"]) for q in r.quarantine] == [(4, "undecodable bytes")]
        assert r.counts.read == 4 and r.counts.continuation == 1


def test_a_file_whose_header_is_not_recognised_is_read_as_lines(tmp_path):
    path = tmp_path / "table.csv"
    path.write_text("host,cpu\nbroker-1,0.5\n")
    r = parse_paths(path)
    assert r.counts.read == 2 and r.counts.quarantined == 2
    assert {q["problem"] for q in r.quarantine} == {"unknown layout"}


# -- both engines -------------------------------------------------------------------------------

@pytest.mark.spark
def test_spark_gives_the_python_parsers_rows_and_counts_for_csv_exports(spark, tmp_path):
    from spark_rows import collect, naive

    from coordinator_kit.spark.load import parse_logs

    crlf = tmp_path / "crlf.csv"
    crlf.write_bytes(b'time,message\r\n2024-04-02T12:30:00Z,"a\r\nb"\r\n,"x"y\r\n"open\r\n')
    inputs = sorted(DATA.glob("export-*.csv")) + [crlf, DATA / "multiline.log"]
    parsed = parse_logs(inputs, spark)
    expected = parse_paths(inputs)
    assert collect(parsed.events) == naive(expected.events)
    assert collect(parsed.quarantine) == naive(expected.quarantine)
    assert parsed.counts() == expected.counts
