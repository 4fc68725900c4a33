"""Nothing a user feeds the log pipeline breaks it: the pure-Python engine and the patterns.

Hostile lines (the parser's own separators pumped, to make a backtracking regex engine try
every way of cutting a line), folders with symlinks, damaged rotated `.gz` files, files that
cannot be read, a bad `--out`, and the inputs on which the two engines used to disagree (a
BOM-only file, a stack trace with no record above it, JSON epoch seconds with a fraction, a
year-0000 date). The Spark engine's side of each is in tests/test_spark_log_inputs.py.

No test here asserts a wall-clock time: linear work is checked by comparing a line's time with
the time for a line a quarter of its length, in the same process, a moment apart.
"""

from __future__ import annotations

import bz2
import gzip
import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coordinator_kit.logs import patterns as P
from coordinator_kit.logs.inputs import InputNote, check_out_dir, scan_inputs
from coordinator_kit.logs.parse import (BAD_TIME, LogInputWarning, ParseCounts, classify_line,
                                        iter_lines, parse_lines, parse_paths)
from coordinator_kit.logs.redos import growth, pump_cases, parser_patterns, worst_growth

DATA = Path(__file__).parent / "data" / "log-inputs"
GOOD = (DATA / "rotated.log").read_bytes()       # 10 recognised lines

# Linear work: time at 4x the length is ~4x; quadratic ~16x. The bound leaves room for noise.
LINEAR = 8.0


# -- patterns: linear in the line ---------------------------------------------------------------

def _repeated_groups(rx: str) -> list[str]:
    """Quantified groups (not single characters) anywhere in `rx`."""
    import re._constants as c
    import re._parser as sp

    out = []

    def walk(nodes):
        for op, av in nodes:
            if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
                low, high, item = av
                single = len(item) == 1 and item[0][0] in (c.LITERAL, c.NOT_LITERAL, c.IN, c.ANY)
                if high > 1 and not single:
                    out.append(str(item)[:80])
                walk(item)
            elif op is c.SUBPATTERN:
                walk(av[-1])
            elif op is c.ATOMIC_GROUP:
                walk(av)
            elif op is c.BRANCH:
                for alt in av[1]:
                    walk(alt)
            elif op in (c.ASSERT, c.ASSERT_NOT):
                walk(av[1])

    walk(sp.parse(rx))
    return out


def test_no_pattern_repeats_a_group_which_java_would_recurse_on():
    """java.util.regex.Pattern$Loop recurses once per repetition of a group: `(?:x\\.)+` on a
    line of 10,000 dots overflowed the stack (a failed Spark task). Only single characters and
    classes may repeat in a pattern the engines run on a line."""
    for name, (rx, _) in parser_patterns().items():
        assert _repeated_groups(rx) == [], name


@pytest.mark.parametrize("name", list(parser_patterns()))
def test_every_pattern_runs_in_time_linear_in_the_line(name):
    """For every repetition of every pattern (both classifiers whole: every layout, template
    and LogContext prefix, as the engine walks them), inputs `prefix + pump * n + suffix` built
    from the pattern's own text: the slowest ones grow linearly with n."""
    rx, how = parser_patterns()[name]
    compiled = re.compile(rx)
    run = compiled.match if how == "match" else compiled.search
    cases = pump_cases(rx, name)
    if not cases:
        return
    worst = worst_growth(run, cases, length=500, factor=4, top=10, repeat=5)
    assert worst[0][0] < LINEAR, [(round(g, 1), c) for g, c in worst[:3]]


def test_the_scan_finds_a_catastrophic_pattern():
    """The check above would see the patterns as they were: lazy placeholders cut freely
    (`RDK-REBALANCE` had five), spaces after the level before a greedy message."""
    lazy = r'Group "(.+?)" initiating rebalance \((.*?)\) in state (.*?) \(join-state (.*?)\)' \
           r" with (.*?) assigned partition\(s\): (.*)\Z"
    spaces = r"\[x\] INFO +(.*) \(([a-z.]+)\)\Z"
    for rx in (lazy, spaces):
        compiled = re.compile(rx)
        worst = worst_growth(compiled.match, pump_cases(rx), length=200, factor=4, top=3)
        assert worst[0][0] > 2 * LINEAR, rx


_LOGGER = " (org.apache.kafka.coordinator.group.GroupMetadataManager)"
_HEADS = ["[2024-05-10 09:10:00,000] INFO ", "[2024-05-10 09:10:00,000] INFO [GroupCoordinator "
          "id=1] ", "2024-05-10 09:10:00,000 INFO  [main] o.a.k.c.c.i.ConsumerCoordinator - ",
          "2024-05-10T09:10:00.000Z  INFO 1 --- [ main] o.a.k.c.ConsumerCoordinator : ",
          "%7|1708423872.345|CGRP|rdkafka#consumer-1| [thrd:main]: ", "INFO:kafka.coordinator:",
          '{"ts": 1708423872, "logger": "kafka.coordinator.group.GroupCoordinator", '
          '"message": "', ""]
_TAILS = [_LOGGER, "", "!", '"}', "Exception"]
_PIECES = sorted({lit for e in P.MESSAGE_ENTRIES for lit, _, _, _ in
                  __import__("string").Formatter().parse(e.text) if lit and len(lit) < 40}
                 | {" ", "  ", ".", "a.", "(", ")", "[", "]", ", ", ": ", "=", "'", '"', "-1",
                    "Generation{generationId=1, memberId='m', protocol='range'}", "g", "0"})


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(head=st.sampled_from(_HEADS), tail=st.sampled_from(_TAILS),
       body=st.lists(st.sampled_from(_PIECES), min_size=1, max_size=4).map("".join))
def test_fuzz_any_line_built_from_the_parsers_own_pieces_costs_linear_work(head, body, tail):
    """classify_line (both stages, every pattern) on `head + body * n + tail`: at 4x n the
    work is at most LINEAR times; the totals of parse_lines add up on any such line."""
    def line(length: int) -> str:
        return head + body * max(1, (length - len(head)) // len(body)) + tail

    from coordinator_kit.logs.redos import PumpCase

    case = PumpCase(head, body, tail)
    ratio = growth(classify_line, case, length=1000, factor=4, repeat=3)
    if ratio >= LINEAR:                       # once more: a busy machine can stall one run
        ratio = growth(classify_line, case, length=1000, factor=4, repeat=7)
    assert ratio < LINEAR, (head, body, tail, ratio)
    counts = ParseCounts()
    list(parse_lines([line(500), line(2000).encode()], "fuzz", counts))
    counts.check()


def test_an_11kb_hostile_line_is_classified_at_once_in_each_way_it_used_to_hang():
    """The lines that hung (minutes each, before the patterns were made linear): their work
    grows linearly with their length, and at 11 KB they are classified in a small multiple
    of the time of a well-formed line of the same length."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
    try:
        from spark_logs import HOSTILE, hostile_lines
    finally:
        sys.path.pop(0)
    from coordinator_kit.logs.redos import PumpCase

    for name, parts in HOSTILE.items():
        assert growth(classify_line, PumpCase(*parts), length=1000, repeat=5) < LINEAR, name
    for name, (bad, good) in hostile_lines(11_000).items():
        assert len(bad) > 10_000
        t_bad = min(_timed(classify_line, bad) for _ in range(5))
        t_good = min(_timed(classify_line, good) for _ in range(5))
        assert t_bad < 50 * t_good, (name, t_bad, t_good)


def _timed(fn, arg) -> float:
    import time
    t0 = time.perf_counter()
    fn(arg)
    return time.perf_counter() - t0


def test_atomic_template_stretches_still_find_values_that_hold_separators():
    """Each loose placeholder is committed together with the stretch up to the next loose
    one, so a group id holding the next separator (" in ") still parses, as with Kafka's
    GroupMetadataManager line for a dynamic member."""
    msg = ("Dynamic member with unknown member id joins group orders in eu in Empty state. "
           "Created a new member id consumer-1-5e1f and requesting the member to rejoin with "
           "this id.")
    i, values = P.MESSAGE_CLASSIFIER.match(msg)
    assert (values["group"], values["state"], values["member"]) == \
        ("orders in eu", "Empty", "consumer-1-5e1f")


# The patterns as they were, kept here to show the rewritten ones match the same lines.
_OLD_CONTINUATION = re.compile(
    "^(?:[ \\t]|Caused by: |Suppressed: |\\.\\.\\. [0-9]+ (?:more|common frames)"
    "|(?:[A-Za-z_$][A-Za-z0-9_$]*\\.)+[A-Za-z_$][A-Za-z0-9_$]*(?:Exception|Error|Throwable)(?::|$))")
_OLD_PY_LOGGER = re.compile(r"(?P<logger>[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*)(?::| -)? "
                            r"(?P<msg>.*)\Z", re.S)
_OLD_LOG4J = re.compile(r"\[x\] (?P<level>INFO|WARN|WARNING) +(?P<msg>.*) \((?P<logger>"
                        r"[A-Za-z_$][A-Za-z0-9_$.\-]*)(?::[0-9]+)?\)\Z", re.S)
_NEW_LOG4J = re.compile(r"\[x\] (?P<level>INFO|WARN|WARNING)" + P._SPACES_MSG_PAREN.replace(
    "(?P<msg>)", "(?P<msg2>)") + r"(?P<logger>[A-Za-z_$][A-Za-z0-9_$.\-]*)(?::[0-9]+)?\)\Z",
    re.S)


@settings(max_examples=3000, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(["a", "B", "9", ".", "$", "_", "Exception", "Error", ":", " ",
                                 "-", "(", ")", "x.", "..", "(a)", "INFO", "[x] "]),
                max_size=12).map("".join))
def test_rewritten_patterns_match_what_the_old_ones_matched(text):
    """CONTINUATION_RE and PY-ASCTIME's logger without a repeated group, and LOG4J's
    `(?> +)` with its empty-message branch: same answers as the plain forms."""
    assert bool(_OLD_CONTINUATION.match(text)) == bool(re.match(P.CONTINUATION_RE, text))
    old = _OLD_PY_LOGGER.match(text)
    new = re.match(r"(?P<logger>" + P._DOTTED_LOWER + r")(?::| -)? (?P<msg>.*)\Z", text, re.S)
    assert (old and old.groupdict()) == (new and new.groupdict())
    for line in ("[x] INFO " + text, "[x] INFO  " + text, "[x] WARNING " + text):
        old, new = _OLD_LOG4J.match(line), _NEW_LOG4J.match(line)
        assert bool(old) == bool(new), line
        if old:
            assert (old["level"], old["msg"], old["logger"]) == \
                (new["level"], new["msg"] or new["msg2"] or "", new["logger"]), line


# -- folders with symlinks ---------------------------------------------------------------------

def _tree(tmp_path: Path) -> Path:
    """logs/ with a file, a folder, a symlink to a folder outside, one to a folder inside
    (already read), a loop, a dangling link and a second name for a file."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "client.log").write_bytes(GOOD)
    root = tmp_path / "logs"
    (root / "broker").mkdir(parents=True)
    (root / "broker" / "server.log").write_bytes(GOOD)
    (root / "top.log").write_bytes(GOOD)
    os.symlink(outside, root / "client-link")          # followed: read once
    os.symlink(root / "broker", root / "again")        # the same folder: skipped
    os.symlink(root, root / "broker" / "loop")         # a loop: skipped
    os.symlink(root / "gone", root / "dangling.log")   # dangling: skipped
    os.symlink(root / "top.log", root / "same.log")    # the same file: read once
    return root


def test_symlinked_folders_are_followed_once_and_each_decision_is_named(tmp_path):
    root = _tree(tmp_path)
    with pytest.warns(LogInputWarning, match="note"):
        result = parse_paths(root)
    c = result.counts
    c.check()
    assert c.read == 30 == c.recognised                # top, broker/server, elsewhere/client
    files = sorted({Path(r["file"]).name for r in result.events})
    assert files == ["client.log", "server.log", "top.log"]
    notes = {Path(n.path).name: (n.action, n.why) for n in c.notes}
    assert notes["client-link"][0] == "followed"
    assert notes["again"][0] == "skipped" and "already read" in notes["again"][1]
    assert notes["loop"][0] == "skipped" and "loop" in notes["loop"][1]
    assert notes["dangling.log"][0] == "skipped" and "dangling" in notes["dangling.log"][1]
    assert notes["same.log"][0] == "skipped" and "the same file" in notes["same.log"][1]
    assert len(c.notes) == 5
    # a dangling symlink named on its own is an error naming it
    with pytest.raises(FileNotFoundError, match="dangling symlink"):
        parse_paths(root / "dangling.log")


# -- compressed and damaged files ------------------------------------------------------------

def test_rotated_gzip_and_bzip2_files_are_read_and_damaged_ones_read_up_to_the_damage(tmp_path):
    good = gzip.compress(GOOD)
    (tmp_path / "server.log.1.gz").write_bytes(good)
    (tmp_path / "server.log.2.gz").write_bytes(good[:-40])            # cut short
    (tmp_path / "server.log.3.gz").write_bytes(GOOD)                  # not gzip at all
    bad_crc = bytearray(good)
    bad_crc[-6] ^= 0xFF                                                 # CRC32 of the trailer
    (tmp_path / "server.log.4.gz").write_bytes(bytes(bad_crc))
    (tmp_path / "server.log.5.gz").write_bytes(gzip.compress(GOOD[:500]) + gzip.compress(
        GOOD[500:]))                                                    # two members
    (tmp_path / "server.log.6.bz2").write_bytes(bz2.compress(GOOD))
    (tmp_path / "server.log.7.bz2").write_bytes(bz2.compress(GOOD)[:-30])
    (tmp_path / "server.log.8.xz").write_bytes(b"\xfd7zXZ\x00 not read")
    (tmp_path / "empty.log.gz").write_bytes(b"")
    with pytest.warns(LogInputWarning):
        r = parse_paths(tmp_path)
    r.counts.check()
    by_file: dict[str, int] = {}
    for row in r.events + r.quarantine:
        by_file[Path(row["file"]).name] = by_file.get(Path(row["file"]).name, 0) + 1
    assert by_file["server.log.1.gz"] == by_file["server.log.5.gz"] == 10
    assert by_file["server.log.6.bz2"] == 10
    assert 0 < by_file["server.log.2.gz"] <= 10                         # what could be read
    notes = {Path(n.path).name: n for n in r.counts.notes}
    assert set(notes) == {"server.log.2.gz", "server.log.3.gz", "server.log.4.gz",
                          "server.log.7.bz2", "server.log.8.xz"}
    assert notes["server.log.2.gz"].action == "read in part"
    assert "cut short" in notes["server.log.2.gz"].why
    assert re.search(r"its first \d+ line\(s\) were read", notes["server.log.2.gz"].why)
    assert notes["server.log.3.gz"].action == "not read" and "not gzip" in notes[
        "server.log.3.gz"].why
    assert "checksum" in notes["server.log.4.gz"].why
    assert "xz" in notes["server.log.8.xz"].why and notes["server.log.8.xz"].action == "not read"
    # the partial last line of the cut file is a line like any other (here: cut, so quarantined)
    cut = [row for row in r.quarantine if Path(row["file"]).name == "server.log.2.gz"]
    assert all(row["problem"] == "truncated" for row in cut)


# -- files that cannot be read, a bad --out ----------------------------------------------------

def test_a_fifo_is_skipped_by_name_not_read_forever(tmp_path):
    (tmp_path / "ok.log").write_bytes(GOOD)
    os.mkfifo(tmp_path / "pipe.log")
    with pytest.warns(LogInputWarning, match="FIFO"):
        r = parse_paths(tmp_path)
    assert r.counts.read == 10
    assert [(Path(n.path).name, n.action) for n in r.counts.notes] == [("pipe.log", "skipped")]


_AS_NOBODY = """
import os, sys, warnings
warnings.simplefilter("ignore")
from coordinator_kit.logs.parse import parse_paths   # imported as root: then become nobody
os.setgid(65534); os.setuid(65534)
r = parse_paths(sys.argv[1])
print(r.counts.read)
for n in r.counts.notes:
    print(n)
"""


@pytest.mark.skipif(not hasattr(os, "setuid") or os.geteuid() != 0,
                    reason="needs root to run the check as another user")
def test_a_file_without_read_permission_is_named_not_a_crash():
    import tempfile

    top = Path(tempfile.mkdtemp(prefix="kit-perm-"))   # pytest's tmp_path is root's alone
    try:
        os.chmod(top, 0o755)
        folder = top / "logs"
        folder.mkdir(mode=0o755)
        (folder / "ok.log").write_bytes(GOOD)
        (folder / "secret.log").write_bytes(GOOD)
        os.chmod(folder / "ok.log", 0o644)
        os.chmod(folder / "secret.log", 0)
        done = subprocess.run([sys.executable, "-c", _AS_NOBODY, str(folder)],
                              capture_output=True, text=True, timeout=120,
                              cwd=Path(__file__).parents[1],
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert lines[0] == "10"
        assert lines[1:] == [f"{folder / 'secret.log'}: not read: cannot be opened: "
                             "Permission denied"]
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_a_read_error_in_the_middle_of_a_file_keeps_what_was_read(tmp_path, monkeypatch):
    """A file whose reading fails part way (EIO from a failing disk, a file truncated on an
    NFS mount): its lines up to the error are parsed and counted, the note says where."""
    import errno

    from coordinator_kit.logs import parse as parse_module
    from coordinator_kit.logs.inputs import open_log as real_open_log

    class Failing(io.RawIOBase):
        def __init__(self, f):
            self.inner, self.calls = real_open_log(f), 0

        def read(self, size=-1):
            self.calls += 1
            if self.calls > 1:
                raise OSError(errno.EIO, "Input/output error")
            return self.inner.read(300)                # the first two lines and a bit

        def close(self):
            self.inner.close()
            super().close()

    monkeypatch.setattr(parse_module, "open_log", Failing)
    (tmp_path / "disk.log").write_bytes(GOOD)
    with pytest.warns(LogInputWarning):
        r = parse_paths(tmp_path / "disk.log")
    r.counts.check()
    n = len(GOOD[:300].splitlines())               # the last one cut short: quarantined
    assert (r.counts.read, r.counts.recognised, r.counts.quarantined) == (n, n - 1, 1)
    (note,) = r.counts.notes
    assert note.action == "read in part" and f"after {n} line(s): Input/output error" in note.why


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "coordinator_kit", "logs", *args],
                          capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).parents[1])


def test_out_below_a_regular_file_is_a_clear_error(tmp_path):
    (tmp_path / "a.log").write_bytes(GOOD)
    (tmp_path / "file").write_text("x")
    for out, says in ((tmp_path / "file" / "parsed", "is a file, so no directory can be made"),
                      (tmp_path / "file", "is a file, not a directory")):
        done = _cli("parse", str(tmp_path / "a.log"), "--out", str(out), "--engine", "python")
        assert done.returncode == 2, done.stderr
        assert says in done.stderr and str(tmp_path / "file") in done.stderr
        assert "Traceback" not in done.stderr
        with pytest.raises(ValueError, match=re.escape(says)):
            check_out_dir(out)


def test_the_cli_prints_every_note_and_the_totals(tmp_path):
    root = _tree(tmp_path)
    (root / "rotated.log.1.gz").write_bytes(gzip.compress(GOOD)[:-40])
    done = _cli("parse", str(root), "--out", str(tmp_path / "out"), "--engine", "python")
    assert done.returncode == 0, done.stderr
    notes = [ln for ln in done.stderr.splitlines() if ln.startswith("logs parse: note: ")]
    assert len(notes) == 6
    assert any("rotated.log.1.gz: read in part" in ln for ln in notes)
    assert any("client-link: followed" in ln for ln in notes)
    assert done.stdout.startswith("parsed ")


# -- inputs the engines disagreed on -------------------------------------------------------------

def test_a_file_holding_only_a_bom_has_no_line():
    """Hadoop's LineRecordReader drops a UTF-8 BOM at the start of a file and, when nothing
    follows, returns no line; the Python engine now counts the same."""
    assert parse_paths(DATA / "bom-only.log").counts == ParseCounts()
    assert list(iter_lines(io.BytesIO(b"\xef\xbb\xbf\n"))) == [b"\xef\xbb\xbf"]


def test_a_stack_trace_with_no_record_above_is_one_quarantined_record():
    r = parse_paths(DATA / "orphan-stack-trace.log")
    assert (r.counts.read, r.counts.recognised, r.counts.quarantined, r.counts.continuation) \
        == (4, 1, 1, 2)
    (orphan,) = r.quarantine
    assert orphan["line"] == 1 and orphan["problem"] == "truncated"
    assert orphan["raw"].count("\n") == 2 and orphan["raw"].endswith("Thread.java:840)")


def test_json_epoch_seconds_with_a_fraction_give_the_time():
    rows = parse_paths(DATA / "json-epoch.jsonl").events
    micros = [r["ts"].timestamp() for r in rows]
    assert micros == pytest.approx([1708423872.345, 1708423872, 1708423872.3455,
                                    1708423872.25, 1708423872.345], abs=1e-7)


def test_dates_no_time_can_hold_are_quarantined_not_crashes():
    r = parse_paths(DATA / "bad-dates.log")
    assert r.counts.by_problem == {BAD_TIME: 7} and r.counts.recognised == 1
    assert all(row["ts"] is None and row["raw"] for row in r.quarantine)
    df = r.to_pandas("events")                        # toPandas-like conversion works
    assert str(df.ts.iloc[0]) == "2024-05-10 09:10:01"
    r.to_pandas("quarantine")


def test_names_spark_would_read_as_globs_are_plain_names_here(tmp_path):
    names = ["server[1].log", "a:b.log", "q?.log", "st*r.log", "br{a,b}.log", "back\\slash.log"]
    for n in names:
        (tmp_path / n).write_bytes(GOOD)
    (tmp_path / "*").mkdir()
    (tmp_path / "*" / "in-star.log").write_bytes(GOOD)
    r = parse_paths(tmp_path)
    assert r.counts.read == 10 * (len(names) + 1)
    assert sorted({Path(row["file"]).name for row in r.events}) == sorted(names + ["in-star.log"])


def test_scan_inputs_names_each_file_once_in_walk_order(tmp_path):
    root = _tree(tmp_path)
    inputs = scan_inputs([root, root / "top.log"])
    names = [Path(f.name).relative_to(tmp_path).as_posix() for f in inputs.files]
    assert names == ["logs/top.log", "logs/broker/server.log", "elsewhere/client.log"]
    assert InputNote(str(root / "top.log"), "skipped",
                     f"the same file as {root / 'top.log'}, read once") in inputs.notes
