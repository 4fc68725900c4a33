"""Nothing a user feeds the log pipeline breaks it: the Spark engine, next to the Python one.

The inputs of tests/test_log_inputs.py (hostile lines, glob characters and colons in names,
symlinked folders, damaged `.gz` files, a FIFO, a BOM-only file, an orphan stack trace, JSON
epoch fractions, dates no time can hold, thousands of small files) through `parse_logs` and
`write_parsed`: no hang, no crash, and the same counts, notes and rows as `parse_paths`.
Every file is read both ways Spark can get it (`spark.sources`): handed by Python (small
files) and by Spark's own text source (forced with `SMALL_FILE_BYTES = 0`).

Java's regex engine is checked on its own too: every pattern Spark runs, on inputs pumped
from the pattern's syntax tree (`logs.redos`), through java.util.regex in the session's JVM.
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import sys
from pathlib import Path

import pytest
from spark_rows import collect as _collect, naive as _naive

from coordinator_kit.logs import patterns as P
from coordinator_kit.logs.parse import BAD_TIME, LogInputWarning, parse_paths
from coordinator_kit.logs.redos import PumpCase, pump_cases, worst_growth
from coordinator_kit.spark import sources
from coordinator_kit.spark.load import CLEAN_LINE_RE, parse_logs, write_parsed

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings("ignore::UserWarning")]

DATA = Path(__file__).parent / "data" / "log-inputs"
GOOD = (DATA / "rotated.log").read_bytes()
LINEAR = 8.0


@pytest.fixture(params=["handed", "spark-reader"])
def reader(request, monkeypatch):
    """Both ways a local file reaches Spark: read by Python and handed over (small files), or
    read by Spark's text source (forced here for every file)."""
    if request.param == "spark-reader":
        monkeypatch.setattr(sources, "SMALL_FILE_BYTES", 0)
    return request.param


def _same_in_both(spark, paths):
    """parse_logs == parse_paths: counts (with the notes), events and quarantine rows."""
    expected = parse_paths(paths)
    parsed = parse_logs(paths, spark, checkpoint=True)
    counts = parsed.counts()
    assert counts == expected.counts
    assert _collect(parsed.events) == _naive(expected.events)
    assert _collect(parsed.quarantine) == _naive(expected.quarantine)
    counts.check()
    return expected, parsed


# -- hostile lines -------------------------------------------------------------------------------

def _hostile():
    sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
    try:
        from spark_logs import HOSTILE, hostile_lines
    finally:
        sys.path.pop(0)
    return HOSTILE, hostile_lines


def test_hostile_lines_parse_in_spark_as_in_python(spark, tmp_path):
    """The 11 KB lines that stalled both engines, and a 200 KB class name of dots that made
    Java's regex engine overflow its stack (StackOverflowError: the Spark task failed)."""
    _, hostile_lines = _hostile()
    lines = [bad for bad, _ in hostile_lines(11_000).values()]
    lines.append("a." * 100_000 + "aException: deep")
    lines.append("2024-05-10 09:10:00,000 INFO " + "a." * 50_000 + "b: x")      # PY-ASCTIME
    path = tmp_path / "hostile.log"
    path.write_text("\n".join(lines) + "\n")
    expected, _ = _same_in_both(spark, path)
    assert expected.counts.read == len(lines)


def _java_patterns() -> dict[str, tuple[str, str]]:
    """name -> (the pattern as Spark gives it to Java, the text appended to an input)."""
    L, M = P.LAYOUT_CLASSIFIER, P.MESSAGE_CLASSIFIER
    out = {"layouts": (L.buckets[0][0], L.suffix), "messages (combined)": (M.combined, M.suffix)}
    for b, (rx, _) in enumerate(M.buckets):
        out[f"messages (bucket {b})"] = (rx, "")
    for name in ("BLANK_RE", "CONTINUATION_RE", "HEAD_RE", "COORDINATION_LOGGER_RE",
                 "CLIENT_LOGGER_RE", "LOG4J_HEAD_RE", "LOG4J_TAIL_RE"):
        out[name] = (getattr(P, name), "")
    out["CLEAN_LINE_RE"] = (CLEAN_LINE_RE, "")
    from coordinator_kit.logs.parse import JSON_EPOCH_RE, JSON_TS_RE
    out["JSON_TS_RE"] = (JSON_TS_RE, "")
    out["JSON_EPOCH_RE"] = (JSON_EPOCH_RE, "")
    return out


@pytest.mark.parametrize("name", list(_java_patterns()))
def test_every_pattern_spark_runs_grows_linearly_in_javas_engine(spark, name):
    """java.util.regex.Pattern (what rlike, regexp_extract and regexp_replace run), called
    through the session's JVM on `prefix + pump * n + suffix` inputs built from the pattern
    itself: the slowest grow linearly, and none throws (a StackOverflowError would)."""
    rx, suffix = _java_patterns()[name]
    pattern = spark._jvm.java.util.regex.Pattern.compile(rx)

    def run(text: str) -> bool:
        return pattern.matcher(text + suffix).find()

    cases = pump_cases(rx.replace("\\z", "\\Z"), name)
    if not cases:
        return
    worst = worst_growth(run, cases, length=1000, factor=4, top=4, repeat=3)
    assert worst[0][0] < LINEAR, [(round(g, 1), c) for g, c in worst[:2]]


# -- names, folders, compressed files ------------------------------------------------------------

def test_names_spark_would_read_as_globs_are_read_literally(spark, tmp_path, monkeypatch):
    """Spark's text source reads a path as a glob, and Hadoop's checksummed local file system
    fails on a `:` in a name; the paths are escaped and read through RawLocalFileSystem.
    (Handed files never reach Spark by name.)"""
    monkeypatch.setattr(sources, "SMALL_FILE_BYTES", 0)
    names = ["server[1].log", "a:b.log", "q?.log", "st*r.log", "br{a,b}.log", "x}y.log",
             "back\\slash.log", "pct%41.log", "sp ace.log", "é.log", "[!a].log"]
    for n in names:
        (tmp_path / n).write_bytes(GOOD)
    (tmp_path / "*").mkdir()
    (tmp_path / "*" / "in-star.log").write_bytes(GOOD)
    (tmp_path / "server1.log").write_bytes(GOOD[:200])     # what server[1].log globs to
    expected, parsed = _same_in_both(spark, tmp_path)
    assert expected.counts.read == 10 * (len(names) + 1) + len(GOOD[:200].splitlines())
    # the folder named `*` given on its own: its one file, not every folder's
    assert parse_logs(tmp_path / "*", spark).counts().read == 10


def _inputs_tree(tmp_path: Path) -> Path:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "client.log").write_bytes(GOOD)
    root = tmp_path / "logs"
    (root / "broker").mkdir(parents=True)
    (root / "broker" / "server.log").write_bytes(GOOD)
    os.symlink(outside, root / "client-link")
    os.symlink(root / "broker", root / "again")
    os.symlink(root, root / "broker" / "loop")
    os.symlink(root / "gone", root / "dangling.log")
    good = gzip.compress(GOOD)
    (root / "server.log.1.gz").write_bytes(good)
    (root / "server.log.2.gz").write_bytes(good[:-40])
    (root / "server.log.3.gz").write_bytes(GOOD)
    os.mkfifo(root / "pipe.log")
    (root / "trace.xz").write_bytes(b"\xfd7zXZ\x00")
    return root


def test_symlinks_damaged_gzip_and_fifos_give_the_same_counts_and_notes(spark, reader,
                                                                         tmp_path):
    root = _inputs_tree(tmp_path)
    expected, parsed = _same_in_both(spark, root)
    actions = sorted((Path(n.path).name, n.action) for n in expected.counts.notes)
    assert actions == [("again", "skipped"), ("client-link", "followed"),
                       ("dangling.log", "skipped"), ("loop", "skipped"),
                       ("pipe.log", "skipped"), ("server.log.2.gz", "read in part"),
                       ("server.log.3.gz", "not read"), ("trace.xz", "not read")]
    assert parsed.notes == expected.counts.notes
    # write_parsed (the CLI's Spark path) reports the same
    counts = write_parsed(root, tmp_path / "out", spark)
    assert counts.notes == expected.counts.notes
    assert (counts.read, counts.recognised, counts.quarantined) == \
        (expected.counts.read, expected.counts.recognised, expected.counts.quarantined)


# -- inputs the engines disagreed on -----------------------------------------------------------

def test_inputs_the_engines_disagreed_on_now_agree(spark, reader, tmp_path):
    """A BOM-only file (Hadoop's reader returns no line), a stack trace with no record above,
    JSON epoch seconds with a fraction (Spark renders them 1.708423872345E9), dates no time
    can hold (Spark held year 0000, which collect() and toPandas() then failed on)."""
    for name in ("bom-only.log", "orphan-stack-trace.log", "json-epoch.jsonl",
                 "bad-dates.log"):
        shutil.copy(DATA / name, tmp_path / name)
    expected, parsed = _same_in_both(spark, tmp_path)
    parsed.events.toPandas()                              # no ArrowInvalid, no year 0
    parsed.quarantine.toPandas()
    assert parsed.counts().by_problem == {BAD_TIME: 7, "truncated": 1}


def test_logs_report_reads_a_log_with_impossible_dates(spark, tmp_path, capsys):
    """`logs report` failed with `year 0 is out of range`: such lines are now quarantined."""
    from coordinator_kit.__main__ import main

    for name in ("bad-dates.log", "rotated.log"):
        shutil.copy(DATA / name, tmp_path / name)
    assert main(["logs", "report", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "coordinator events from 2 file(s)" in out


# -- many small files --------------------------------------------------------------------------

def test_many_small_files_are_one_table_not_one_task_each(spark, tmp_path):
    """2,000 small files took ~100 s a pass: a Spark task per file. They are handed to Spark
    by Python as one table, split over the cores."""
    lines = GOOD.splitlines(keepends=True)
    for i in range(200):
        (tmp_path / f"app-{i:03d}.log").write_bytes(b"".join(lines[i % 10:] + lines[:i % 10]))
    expected, parsed = _same_in_both(spark, tmp_path)
    assert expected.counts.read == 2000
    cores = spark.sparkContext.defaultParallelism
    assert parsed.lines.rdd.getNumPartitions() <= cores


def test_cli_parse_with_spark_prints_the_python_engines_notes(spark, tmp_path, capsys):
    from coordinator_kit.__main__ import main

    root = _inputs_tree(tmp_path)
    notes = {}
    conf = spark.conf
    saved = {k: conf.get(k) for k in ("spark.sql.shuffle.partitions",)}
    try:
        for engine in ("python", "spark"):
            assert main(["logs", "parse", str(root), "--out", str(tmp_path / engine),
                         "--engine", engine]) == 0
            err = capsys.readouterr().err
            notes[engine] = [ln for ln in err.splitlines()
                             if ln.startswith("logs parse: note:")]
    finally:
        for k, v in saved.items():
            conf.set(k, v)
    assert notes["spark"] == notes["python"] and len(notes["python"]) == 8
    (tmp_path / "file").write_text("x")
    assert main(["logs", "parse", str(root), "--out", str(tmp_path / "file" / "o")]) == 2
    assert "is a file, so no directory can be made below it" in capsys.readouterr().err


# -- the same answer from Java's engine as from Python's -----------------------------------------

_TRICKY = ["\u2028", "\u2029", "\x85", "\ufeff", "\U0001F600", "\t", " ", "  ", "\\", "$", "é"]


def _text_pieces() -> list[str]:
    import string as _s

    lits = {lit for e in P.MESSAGE_ENTRIES[:60] for lit, _, _, _ in _s.Formatter().parse(e.text)
            if lit}
    return sorted(lits | {"[2024-05-10 09:10:00,000] INFO ", "a.bException", ":", "(x)",
                          "kafka.coordinator", "org.apache.kafka.clients.consumer.", "7", "g",
                          "2024-01-01T00:00:00Z", "1708423872.5", "E9", "m-1"} | set(_TRICKY))


_JAVA_CHECKS: list | None = None


@pytest.fixture
def java_checks(spark):
    """(name, Java pattern, Python pattern, what is compared) for every pattern Spark runs."""
    global _JAVA_CHECKS
    if _JAVA_CHECKS is None:
        from coordinator_kit.logs.parse import JSON_EPOCH_RE, JSON_TS_RE

        J = spark._jvm.java.util.regex.Pattern
        L, M = P.LAYOUT_CLASSIFIER, P.MESSAGE_CLASSIFIER
        found = [(name, rx) for name, rx in (
            ("BLANK_RE", P.BLANK_RE), ("CONTINUATION_RE", P.CONTINUATION_RE),
            ("HEAD_RE", P.HEAD_RE), ("COORDINATION_LOGGER_RE", P.COORDINATION_LOGGER_RE),
            ("CLIENT_LOGGER_RE", P.CLIENT_LOGGER_RE), ("CLEAN_LINE_RE", CLEAN_LINE_RE),
            ("JSON_TS_RE", JSON_TS_RE), ("JSON_EPOCH_RE", JSON_EPOCH_RE),
            ("LOG4J_TAIL_RE", P.LOG4J_TAIL_RE))]
        _JAVA_CHECKS = [(n, J.compile(rx), re.compile(rx.replace("\\z", "\\Z")), "", "find")
                        for n, rx in found]
        _JAVA_CHECKS.append(("messages (combined)", J.compile(M.combined), re.compile(M.combined),
                             M.suffix, "group1"))
        rx, repl = L.buckets[0]
        _JAVA_CHECKS.append(("layouts", J.compile(rx), re.compile(rx), L.suffix,
                             re.sub(r"\$(\d+)", r"\\g<\1>", repl)))
    return _JAVA_CHECKS


def test_java_and_python_give_every_pattern_the_same_answer(java_checks):
    """Spark runs the patterns in Java, the Python engine in Python: on text made of the
    patterns' own pieces and of characters the two treat differently at a line's end (Java's
    `$` matched before U+2028, U+2029 and U+0085), every pattern answers the same in both."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    pieces = _text_pieces()
    common = ["", " ", "  ", "a.bException", "kafka.coordinator", "2024-01-01T00:00:00Z",
              "1708423872.5", "org.apache.kafka.clients.consumer."]

    @settings(max_examples=400, deadline=None, derandomize=True)
    @given(st.lists(st.sampled_from(pieces), max_size=5).map("".join),
           st.sampled_from(common), st.sampled_from(_TRICKY + [""]))
    def check(body, last, end):
        text = (body if len(body) % 2 else "") + last + end
        for name, java, python, suffix, how in java_checks:
            t = text + suffix
            m = java.matcher(t)
            if how == "find":
                assert m.find() == bool(python.search(t)), (name, text)
            elif how == "group1":
                got = m.group(1) if m.find() else ""
                want = python.search(t)
                assert got == (want.group(1) if want else ""), (name, text)
            else:
                assert m.replaceAll(java_repl(m, how)) == python.sub(how, t, count=1), (name, text)

    def java_repl(m, how):
        return re.sub(r"\\g<(\d+)>", r"$\1", how)

    check()
