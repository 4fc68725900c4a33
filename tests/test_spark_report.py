"""`python -m coordinator_kit logs report PATH...`: the analyses as tables, and clear refusals.

A bad path, a directory with no files, files with no lines and lines with no coordinator event
each get a message on stderr that names the problem and exit code 2; the first three are
refused before a JVM starts, so those tests need no Spark.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from coordinator_kit.__main__ import main
from coordinator_kit.scenarios import run_scenario
from coordinator_kit.spark.report import format_table


def write_logs(cluster, folder: Path) -> Path:
    """The scenario's INFO lines as a broker log and a client log."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = cluster.log_lines("INFO")
    client = [line for line in lines if "[Consumer clientId=" in line]
    broker = [line for line in lines if "[Consumer clientId=" not in line]
    (folder / "server.log").write_text("\n".join(broker) + "\n")
    (folder / "consumer.log").write_text("\n".join(client) + "\n")
    return folder


@pytest.fixture(scope="module")
def one_dies():
    return run_scenario("one-dies")


@pytest.fixture(scope="module")
def one_dies_logs(tmp_path_factory, one_dies):
    return write_logs(one_dies, tmp_path_factory.mktemp("report") / "one-dies")


# -- good input ----------------------------------------------------------------------------------

@pytest.mark.spark
def test_report_prints_each_analysis_as_a_table(spark, one_dies_logs, one_dies, capsys):
    # One run (Spark is slow to start a job on a busy machine) checks the tables, --limit, and
    # that times print in UTC whatever the session's time zone, which is left as it was.
    previous = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "Asia/Tokyo")
    try:
        assert main(["logs", "report", str(one_dies_logs), "--limit", "3"]) == 0
        assert spark.conf.get("spark.sql.session.timeZone") == "Asia/Tokyo"
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous)
    out = capsys.readouterr().out
    lines = out.splitlines()
    for title in ("== Rebalance episodes per group", "== Member departures by cause",
                  "== Heartbeat gaps per member", "== Coordinator loads and unloads",
                  "== Group state timeline"):
        assert any(line.startswith(title) for line in lines), title
    dead = [e for e in one_dies.trace.events if e.kind == "member_session_expired"][0]
    departure = [line for line in lines if "session_expiry" in line]
    assert len(departure) == 1
    assert dead.fields["member"] in departure[0]
    assert departure[0].startswith("2025-03-03 09:01:03,103")   # UTC, in log4j's layout
    # The third rebalance: from 09:01:03,103 to 09:01:03,203, 100 ms, generation 2 -> 3,
    # members 2 -> 1.
    episode = [line.split() for line in lines
               if line.startswith("group-1  2025-03-03 09:01:03,103")]
    assert len(episode) == 1
    assert episode[0][:6] == ["group-1", "2025-03-03", "09:01:03,103", "2025-03-03",
                              "09:01:03,203", "100"]
    assert episode[0][-6:] == ["2", "3", "2", "1", "0", "broker"]
    # The timeline has 10 intervals (Empty, then three rebalances): --limit 3 shows three.
    assert "(showing 3 of 10 rows; --limit 0 shows all)" in lines
    # INFO logs hold no heartbeat lines: the report says what to collect instead.
    assert "No heartbeat lines in the input" in out and "DEBUG" in out


# -- bad input -----------------------------------------------------------------------------------

def test_a_missing_path_is_named_with_exit_code_2(tmp_path, capsys):
    missing = tmp_path / "no-such.log"
    assert main(["logs", "report", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("logs report: error: ")
    assert str(missing) in err and "does not exist" in err


def test_a_directory_without_files_is_refused(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["logs", "report", str(tmp_path / "empty")]) == 2
    assert "no log files under" in capsys.readouterr().err


def test_files_without_lines_are_an_empty_input(tmp_path, capsys):
    (tmp_path / "a.log").write_text("")
    (tmp_path / "b.log").write_text("")
    assert main(["logs", "report", str(tmp_path / "a.log"), str(tmp_path / "b.log")]) == 2
    err = capsys.readouterr().err
    assert "the input is empty" in err and "a.log" in err and "b.log" in err


@pytest.mark.spark
def test_lines_without_a_coordinator_event_are_refused_with_the_counts(spark, tmp_path, capsys):
    (tmp_path / "app.log").write_text("starting the app\nhello world\n")
    assert main(["logs", "report", str(tmp_path / "app.log")]) == 2
    err = capsys.readouterr().err
    assert "no coordinator events in" in err and "2 lines read" in err


def test_a_negative_limit_is_refused_by_the_argument_parser(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["logs", "report", str(tmp_path), "--limit", "-1"])
    assert exit_info.value.code == 2
    assert "expected 0 or more, got -1" in capsys.readouterr().err


# -- the table -----------------------------------------------------------------------------------

def test_tables_align_numbers_right_show_null_as_dash_and_cut_long_text():
    table = format_table(["group", "duration_ms", "reason"],
                         [["g1", "3002", "Adding new member consumer-1-2ccb1916"],
                          ["group-two", "100", None]], width=12)
    lines = table.splitlines()
    assert lines[0] == "group      duration_ms  reason"
    assert lines[1] == "---------  -----------  ------------"
    assert lines[2] == "g1                3002  Adding new …"
    assert lines[3] == "group-two          100  -"
