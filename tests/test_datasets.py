"""The committed datasets and the large generator (the trace of a scenario -> datasets/).

Checks that the committed files regenerate byte for byte, stay within the size budget, are in
Kafka's log4j layout with catalogue messages only (the parser's layout `LOG4J`), that
the `__consumer_offsets` table agrees with the coordinator's committed offsets, that the large
generator is deterministic and stops within one line of the asked size, and that bad input gets
a clear error.
"""

from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path

import pytest

from coordinator_kit.__main__ import main
from coordinator_kit.datasets import DATASETS, check, generate_large, parse_size, render_all
from coordinator_kit.datasets.large import (_MAX_NODE_ID, VARIANT_SEED, VARIANTS, _compile_all,
                                            compile_variant)
from coordinator_kit.logs.catalogue import CONTINUED, TEMPLATES
from coordinator_kit.logs.layout import level_number

ROOT = Path(__file__).resolve().parent.parent
DATASETS_DIR = ROOT / "datasets"
BUDGET_BYTES = 20 * 1024 * 1024

# [yyyy-MM-dd HH:mm:ss,SSS] LEVEL message (logger)
LOG4J = re.compile(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] "
                   r"(TRACE|DEBUG|INFO|WARN|ERROR|FATAL) (.*) \(([\w.$]+)\)")
# The LogContext prefixes the kit writes (catalogue PREFIXES), stripped before matching a body.
PREFIX = re.compile(r"\[GroupCoordinator id=\d+(?: topic=__consumer_offsets partition=\d+)?\] "
                    r"|\[Consumer clientId=[^,\]]+, groupId=[^\]]+\] |\[Partition \S+ broker=\d+\] "
                    r"|\[Broker id=\d+\] |\[[\w-]+\]: ")


def _template_regex(text: str) -> str:
    parts = re.split(r"\{\w+\}", text)
    return "(?:.*?)".join(re.escape(p) for p in parts)


_BY_LOGGER: dict[str, list[str]] = {}
for _t in TEMPLATES.values():
    _BY_LOGGER.setdefault(_t.logger, []).append(_template_regex(_t.text))
# logger -> one pattern matching the body of any of its templates
BODIES = {logger: re.compile("|".join(f"(?:{p})" for p in patterns), re.DOTALL)
          for logger, patterns in _BY_LOGGER.items()}


# the first line of every message Kafka writes over several lines (`Template.more`)
CONTINUED_TEXTS = [re.compile(_template_regex(TEMPLATES[t].text)) for t in sorted(CONTINUED)]


def message_starts(message: str, pattern: re.Pattern[str]) -> bool:
    return pattern.search(message) is not None


def assert_kafka_log(path: Path, min_level: str = "TRACE") -> int:
    """Every line is in Kafka's log4j layout (`LOG4J`) with a known logger and a catalogue message,
    in time order."""
    data = path.read_bytes()
    assert b"\r" not in data, f"{path.name}: \\r in a line ending"
    assert not data or data.endswith(b"\n"), f"{path.name}: last line not ended"
    last = ""
    lines = data.decode("utf-8").split("\n")[:-1]
    continued = False  # the last message goes on over further lines (tab-indented or blank)
    for n, line in enumerate(lines, 1):
        m = LOG4J.fullmatch(line)
        if m is None and continued and (line.startswith("\t") or line == ""):
            continue  # e.g. the Java client's "Reconciling assignment ..." and its table
        assert m, f"{path.name}:{n} is not in the log4j layout: {line!r}"
        continued = any(message_starts(m.group(3), t) for t in CONTINUED_TEXTS)
        ts, level, message, logger = m.groups()
        assert ts >= last, f"{path.name}:{n} goes back in time ({ts} after {last})"
        last = ts
        assert level_number(level) >= level_number(min_level), f"{path.name}:{n} {level}"
        assert logger in BODIES, f"{path.name}:{n} unknown logger {logger}"
        p = PREFIX.match(message)
        body = message[p.end():] if p else message
        assert BODIES[logger].fullmatch(body), \
            f"{path.name}:{n} matches no catalogue template of {logger}: {body!r}"
    return len(lines)


# --- the committed files ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def clusters():
    """Every dataset scenario, run once for the tests of this module."""
    return {name: spec.run() for name, spec in DATASETS.items()}


def test_committed_datasets_regenerate_byte_identical(clusters):
    """What `datasets --check` does, on the committed folder: same scenario, same bytes
    (the command itself is driven on a subset below)."""
    problems = check(DATASETS_DIR, None, render_all(clusters=clusters))
    assert not problems, ("datasets/ differs from a regeneration; if the change in behaviour "
                          "is intended, run `python -m coordinator_kit datasets`:\n  "
                          + "\n  ".join(problems))


def test_size_budget_and_layout_of_the_folder():
    files = [p for p in DATASETS_DIR.rglob("*") if p.is_file()]
    total = sum(p.stat().st_size for p in files)
    assert total < BUDGET_BYTES, f"datasets/ holds {total} bytes, over the 20 MB budget"
    for name in DATASETS:
        folder = DATASETS_DIR / name
        names = {p.name for p in folder.iterdir()}
        assert {"trace.jsonl", "consumer_offsets.csv"} <= names
        assert any(n.startswith("server-broker-") for n in names)
        assert any(n.startswith("client-") for n in names)


@pytest.mark.parametrize("name", list(DATASETS))
def test_every_log_line_is_kafka_log4j_with_a_catalogue_message(name):
    spec = DATASETS[name]
    for path in sorted((DATASETS_DIR / name).glob("*.log")):
        level = spec.broker_level if path.name.startswith("server-") else spec.client_level
        assert assert_kafka_log(path, level) > 0, f"{path} is empty"


@pytest.mark.parametrize("name", list(DATASETS))
def test_offsets_table_matches_the_committed_offsets_of_the_cluster(name, clusters):
    """Replaying the OffsetCommit rows in offset order (a tombstone deletes) gives what the
    coordinator reports as committed for every group (the log is the state: a new leader
    rebuilds it with `OffsetMetadataManager.replay`)."""
    cluster = clusters[name]
    with open(DATASETS_DIR / name / "consumer_offsets.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows, "no __consumer_offsets records"
    assert {r["key_type"] for r in rows} <= {"OffsetCommit", "GroupMetadata"} | KIP848_RECORDS
    committed: dict[tuple[str, tuple[str, int]], int] = {}
    for r in rows:
        if r["key_type"] != "OffsetCommit":
            continue
        topic, _, partition = r["topic_partition"].rpartition("-")
        key = (r["group"], (topic, int(partition)))
        if r["tombstone"] == "true":
            committed.pop(key, None)
        else:
            committed[key] = int(r["committed_offset"])
    groups = {c.config.group_id for c in cluster.consumers.values()}
    for group in groups:
        expected = cluster.committed_offsets(group)
        assert expected, f"{group} committed nothing; the scenario should auto-commit"
        assert {tp: o for (g, tp), o in committed.items() if g == group} == expected
    modern = {r["group"] for r in rows if r["key_type"] in KIP848_RECORDS}
    generations = [r for r in rows if r["key_type"] == "GroupMetadata" and r["members"]]
    if groups - modern:
        assert generations and all(r["leader"] in r["members"].split(";") for r in generations)
    for group in modern:
        # a consumer group (KIP-848): its last epoch record is the group's epoch, and the last
        # current assignment of each member is what the coordinator holds
        # (GroupMetadataManager.replay of ConsumerGroupMetadata / CurrentMemberAssignment)
        g = cluster.shard_for(group).consumer_groups.groups.get(group)
        epochs = [r for r in rows if r["group"] == group and r["key_type"] ==
                  "ConsumerGroupMetadata" and r["tombstone"] == "false"]
        assert int(epochs[-1]["generation"]) == g.group_epoch
        current: dict[str, str | None] = {}
        for r in rows:
            if r["group"] == group and r["key_type"] == "ConsumerGroupCurrentMemberAssignment":
                current[r["members"]] = None if r["tombstone"] == "true" else r["assignment"]
        assert {m for m, a in current.items() if a is not None} == set(g.members.keys())
        for m in g.members.values():
            owned = sorted(f"orders-{p}" for parts in m.assigned_partitions.values()
                           for p in parts)
            assert current[m.member_id] == f"{m.member_id}=" + ",".join(
                sorted(owned, key=lambda tp: int(tp.rsplit("-", 1)[1])))


KIP848_RECORDS = {"ConsumerGroupMemberMetadata", "ConsumerGroupPartitionMetadata",
                  "ConsumerGroupMetadata", "ConsumerGroupTargetAssignmentMember",
                  "ConsumerGroupTargetAssignmentMetadata", "ConsumerGroupCurrentMemberAssignment"}


@pytest.mark.parametrize("name", list(DATASETS))
def test_readme_points_at_lines_that_exist(name):
    readme = (DATASETS_DIR / "README.md").read_text()
    for file, text, _ in DATASETS[name].look_for:
        assert text in (DATASETS_DIR / name / file).read_text(), f"{name}/{file}: {text!r}"
        assert f"`{text}`" in readme


def test_check_names_every_drifted_file(tmp_path, capsys):
    """A changed, a missing and an unexpected file are each named; the exit code is 1."""
    shutil.copytree(DATASETS_DIR / "one-dies", tmp_path / "one-dies")
    (tmp_path / "one-dies" / "trace.jsonl").write_text("{}\n")
    (tmp_path / "one-dies" / "client-consumer-2.log").unlink()
    (tmp_path / "one-dies" / "notes.log").write_text("x\n")
    assert check(tmp_path, ["one-dies"]) == ["differs: one-dies/trace.jsonl",
                                             "missing: one-dies/client-consumer-2.log",
                                             "unexpected: one-dies/notes.log"]
    assert main(["datasets", "--check", "--scenario", "one-dies", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "differs: one-dies/trace.jsonl" in err and "missing: one-dies/client-consumer-2.log" \
        in err


def test_write_then_check_a_subset_round_trips(tmp_path, capsys):
    assert main(["datasets", "--scenario", "consumer-joins", "--out", str(tmp_path)]) == 0
    assert sorted(p.name for p in (tmp_path / "consumer-joins").iterdir()) == sorted(
        rel.split("/")[1] for rel in render_all(["consumer-joins"]))
    assert not (tmp_path / "README.md").exists()  # the README describes the full set only
    assert main(["datasets", "--check", "--scenario", "consumer-joins", "--out",
                 str(tmp_path)]) == 0
    assert main(["datasets", "--scenario", "consumer-joins", "--out", str(tmp_path)]) == 0
    assert "up to date" in capsys.readouterr().out


# --- the large generator ----------------------------------------------------------------------

def test_large_generator_is_deterministic_and_reaches_the_size(tmp_path):
    size = 3 * 1024 * 1024
    a = generate_large(tmp_path / "a", size, seed=3)
    b = generate_large(tmp_path / "b", size, seed=3)
    longest = 0
    for name in a.files:
        data = (tmp_path / "a" / name).read_bytes()
        assert data == (tmp_path / "b" / name).read_bytes(), f"{name} differs between runs"
        longest = max([longest, *map(len, data.split(b"\n"))])
    assert (tmp_path / "a" / "groups.csv").read_bytes() == (tmp_path / "b" / "groups.csv") \
        .read_bytes()
    total = sum(p.stat().st_size for p in (tmp_path / "a").glob("*.log"))
    assert total == a.total_bytes and size - (longest + 1) < total <= size
    assert a.episodes > 50


def test_large_files_parse_like_the_small_ones_and_a_smaller_size_is_a_prefix(tmp_path):
    big = generate_large(tmp_path / "big", 2 * 1024 * 1024, seed=1)
    small = generate_large(tmp_path / "small", 512 * 1024, seed=1)
    other = generate_large(tmp_path / "other", 512 * 1024, seed=2)
    for name in big.files:
        assert (tmp_path / "big" / name).read_bytes().startswith(
            (tmp_path / "small" / name).read_bytes())
        assert_kafka_log(tmp_path / "big" / name, "INFO")
    assert any((tmp_path / "small" / n).read_bytes() != (tmp_path / "other" / n).read_bytes()
               for n in small.files)
    with open(tmp_path / "big" / "groups.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == big.episodes and {r["variant"] for r in rows} <= set(VARIANTS)
    # every group id in the ground truth shows up in the logs, with the coordinator it names
    broker_logs = {n: (tmp_path / "big" / n).read_text() for n in big.files
                   if n.startswith("server-")}
    row = next(r for r in rows if r["complete"] == "true")
    assert f"group {row['group']} " in broker_logs[f"server-broker-{row['coordinator']}.log"]


def test_compiled_variants_render_back_to_the_lines_the_kit_wrote():
    """A variant's templates, filled with the variant's own names, give its lines back: the
    slots catch every name (nothing of the variant's group leaks into another group)."""
    for (variant, _), (name, (build, _)) in zip(_compile_all(), VARIANTS.items()):
        cluster = build(VARIANT_SEED)
        assert compile_variant(name, cluster) == variant
        values = {"G": "group-1", "T": "orders", "P": str(variant.partition)}
        for b in cluster.brokers:
            values[f"B{b}"] = str(b)
            values[f"N{b}"] = f"localhost:{9092 + b} (id: {_MAX_NODE_ID - b} rack: null)"
        values |= {f"E{e}": str(e) for e in range(variant.max_epoch + 1)}
        values |= {f"C{n}": f"consumer-{n}" for n in range(1, variant.consumers + 1)}
        values |= {f"I{n}": f"instance-{n}" for n in range(1, variant.instances + 1)}
        values |= {f"M{k}": m for k, m in enumerate(variant.member_ids)}
        lines = [e.line(cluster.trace.start) for e in cluster.trace.events
                 if e.message is not None and level_number(e.level) >= level_number("INFO")]
        rendered = [line.fmt.format_map(values) for line in variant.lines]
        tail = lines[len(lines) - len(rendered):]
        assert [r.rstrip("\n") for r in rendered] == [t[t.index("]"):] for t in tail], name


# --- bad input --------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [("1G", 1 << 30), ("200M", 200 << 20),
                                            ("1.5K", 1536), ("300MB", 300 << 20),
                                            ("2GiB", 2 << 30), ("4096", 4096)])
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text, words", [("ten", "can't read the size 'ten'"),
                                         ("-5M", "can't read the size"),
                                         ("1X", "can't read the size"),
                                         ("12", "at least 1024 bytes")])
def test_bad_sizes_are_refused_clearly(text, words, capsys):
    with pytest.raises(ValueError, match=re.escape(words)):
        parse_size(text)
    assert main(["datasets", f"--large={text}", "--out", "/nonexistent-never-written"]) == 2
    assert words in capsys.readouterr().err


def test_unknown_scenario_is_refused_with_the_known_ones(capsys):
    assert main(["datasets", "--scenario", "no-such-thing", "--check"]) == 2
    err = capsys.readouterr().err
    assert "no dataset scenario 'no-such-thing'" in err and "one-dies" in err


def test_unwritable_out_is_refused_clearly(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    assert main(["datasets", "--scenario", "consumer-joins", "--out", str(blocker / "x")]) == 2
    assert "can't write the datasets to" in capsys.readouterr().err
    assert main(["datasets", "--large", "2M", "--out", str(blocker / "x")]) == 2
    assert "can't write to" in capsys.readouterr().err
    assert main(["datasets", "--check", "--out", str(tmp_path / "missing")]) == 2
    assert "is not a directory" in capsys.readouterr().err
    assert main(["datasets", "--large", "2M", "--check"]) == 2
    assert "--check and --scenario apply to the committed datasets" in capsys.readouterr().err
