"""`python -m coordinator_kit kafka record`: genuine logs and traces of the client scenarios.

Runs every scenario of `scenarios.SCENARIOS` (or those named) with each client library, first
on one real Kafka broker, then on one kit live server, one run at a time, and writes
`datasets/real-kafka/`: the broker's own `server.log` (Kafka's log4j layout), each consumer's
own log (Kafka's Java consumer through log4j, kafka-python's `logging`, librdkafka's debug
contexts `cgrp`), the kit's live server log of the same runs, and each run's client-visible
`Trace` on both, as JSON. A notebook compares them without Kafka.

The raw recording stays in a folder of the cache (printed); `write_dataset(raw, out)` turns it
into the dataset, so the trimming can be re-done without running Kafka again
(`kafka record --from RAW`). Trimming removes whole lines only, by rules written here
(`keep_broker_line`, `keep_client_line`) and counted in `manifest.json`; nothing is rewritten:
time stamps and random member ids are what the run produced.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .scenarios import SCENARIOS, Step, Trace

__all__ = ["CLIENTS", "DATASET", "record", "write_dataset", "trace_to_json", "trace_from_json",
           "load_traces", "keep_broker_line", "keep_client_line", "main_record", "versions"]

CLIENTS = ("kafka-python", "confluent-kafka", "java")
DATASET = Path(__file__).resolve().parents[2] / "datasets" / "real-kafka"


# -- traces as JSON --------------------------------------------------------------------------

def trace_to_json(trace: Trace) -> dict[str, Any]:
    """A `Trace` as plain JSON values (assignments as [topic, partition] pairs)."""
    return dataclasses.asdict(trace)


def trace_from_json(data: dict[str, Any]) -> Trace:
    steps = [Step(s["label"], s["ok"], s["seconds"],
                  {c: [(t, p) for t, p in parts] for c, parts in s["assignments"].items()},
                  {**s["group"], "members": [tuple(m) for m in s["group"]["members"]]})
             for s in data["steps"]]
    fields = {k: v for k, v in data.items() if k != "steps"}
    return Trace(steps=steps, **fields)


def load_traces(folder: str | Path = DATASET) -> dict[tuple[str, str], tuple[Trace, Trace]]:
    """(scenario, client) -> (the trace on Kafka, the trace on the kit), in file order."""
    out = {}
    for path in sorted(Path(folder, "traces").glob("*.json")):
        data = json.loads(path.read_text())
        out[(data["scenario"], data["client"])] = (trace_from_json(data["kafka"]),
                                                   trace_from_json(data["kit"]))
    return out


# -- trimming ----------------------------------------------------------------------------------

# The broker's lines kept: everything that is not about one partition's log segments and
# replicas (LogLoader, UnifiedLog, Partition, ReplicaManager and the like say a few lines per
# partition created, and every scenario creates six), which make most of the raw log.
_BROKER_DROPPED_LOGGERS = re.compile(
    r"\((kafka\.log\.|org\.apache\.kafka\.storage\.internals\.log\.|kafka\.cluster\.Partition|"
    r"kafka\.server\.ReplicaFetcher|kafka\.server\.metadata\.BrokerMetadataPublisher|"
    r"kafka\.server\.ReplicaAlterLogDirsManager|state\.change\.logger|"
    r"org\.apache\.kafka\.image\.|org\.apache\.kafka\.metadata\.|"
    r"org\.apache\.kafka\.controller\.|kafka\.server\.ReplicaManager)")
_LOG4J_HEAD = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] [A-Z]+ ")


def keep_broker_line(record: str) -> bool:
    """Whether a broker log record (its first line) stays in the dataset: all but the
    per-partition storage, replica and metadata-image lines (the group coordinator's, the
    runtime's, the server's start and stop, and every WARN or ERROR stay)."""
    if " WARN " in record[:40] or " ERROR " in record[:40]:
        return True
    return not _BROKER_DROPPED_LOGGERS.search(_logger_line(record))


# Client lines kept: the Java consumer and kafka-python keep everything but their fetch,
# metadata and metrics chatter and the Java consumer's `ConsumerConfig values:` block (the
# broker's log keeps its own); librdkafka's debug output keeps its group-membership contexts
# (`logs.coverage.RDKAFKA_GROUP_FACILITIES`), not its partition bookkeeping (ASSIGN, ASSIGNMENT,
# OFFSET, DUMP_*, ...), and every line above DEBUG.
_CLIENT_DROPPED = re.compile(
    r"\((org\.apache\.kafka\.clients\.(Metadata|NetworkClient)|org\.apache\.kafka\.common\."
    r"(utils\.AppInfoParser|metrics\..*|telemetry\..*|config\.AbstractConfig))\)$|"
    r" - kafka\.(conn|client_async|metrics|protocol\.parser|consumer\.fetcher|cluster) - ")
# confluent-kafka hands librdkafka's lines to Python logging as `<FAC> [<handle>] [thrd:..]: ..`
_RD_FACILITY = re.compile(r" - confluent_kafka - ([A-Z]+) - ([A-Z0-9_]+) \[")


def keep_client_line(record: str) -> bool:
    from ..logs.coverage import RDKAFKA_GROUP_FACILITIES
    head = record.split("\n", 1)[0]
    m = _RD_FACILITY.search(head)
    if m:
        return m.group(2) in RDKAFKA_GROUP_FACILITIES or m.group(1) != "DEBUG"
    return not _CLIENT_DROPPED.search(_logger_line(record))


def _logger_line(record: str) -> str:
    """The line of a record that names its logger: log4j writes `(logger)` after the message,
    so a multi-line message (a config block) has it on its last line."""
    return record.rstrip("\n").rsplit("\n", 1)[-1] if "\n" in record.rstrip("\n") \
        else record.rstrip("\n")


def _records(text: str) -> list[str]:
    """A log's records: a line with a layout and the continuation lines under it."""
    out: list[str] = []
    for line in text.splitlines(keepends=True):
        starts = _LOG4J_HEAD.match(line) or re.match(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} ",
                                                    line)
        if starts or not out:
            out.append(line)
        else:
            out[-1] += line
    return out


def trim(text: str, keep: Any) -> tuple[str, int, int]:
    """The text without the records `keep` refuses, and without a multi-line record that
    repeats an earlier one after its time stamp (a KRaft broker logs its `KafkaConfig values:`
    block twice, as controller and as broker); (text, lines read, lines kept)."""
    records = _records(text)
    seen: set[str] = set()
    kept = []
    for r in records:
        body = r.split("] ", 1)[-1]
        if "\n" in r.rstrip("\n") and body in seen:
            continue
        seen.add(body)
        if keep(r):
            kept.append(r)
    return "".join(kept), text.count("\n"), sum(r.count("\n") for r in kept)


# -- recording ---------------------------------------------------------------------------------

def versions() -> dict[str, str]:
    """The versions of what took part."""
    from .fetch import KAFKA_VERSION, check_java
    out = {"kafka": KAFKA_VERSION, "kafka-clients (Java consumer)": KAFKA_VERSION}
    try:
        import kafka
        out["kafka-python"] = kafka.__version__
    except ImportError:  # pragma: no cover - a test dependency of the kit
        pass
    try:
        import confluent_kafka
        # version() is a str in confluent-kafka 2.x, libversion() a (str, int) tuple
        v, lib = confluent_kafka.version(), confluent_kafka.libversion()
        out["confluent-kafka"] = v if isinstance(v, str) else v[0]
        out["librdkafka"] = lib if isinstance(lib, str) else lib[0]
    except ImportError:  # pragma: no cover
        pass
    try:
        done = subprocess.run([check_java(), "-version"], capture_output=True, text=True,
                              timeout=30)
        out["java"] = done.stderr.splitlines()[0] if done.stderr else "?"
    except Exception:  # pragma: no cover - reported, not needed
        out["java"] = "?"
    out["python"] = sys.version.split()[0]
    return out


def record(raw: str | Path, scenarios: Iterable[str] | None = None,
           clients: Iterable[str] = CLIENTS, progress: Any = print) -> Path:
    """Run the scenarios with the clients on real Kafka, then on the kit, one at a time, into
    the folder `raw`: `kafka/server.log`, `kafka/clients/*.log`, `kit/server.log`,
    `kit/clients/*.log`, `traces.json`. Returns `raw`."""
    from .scenarios import kafka_target, kit_target, run_scenario
    chosen = list(scenarios) if scenarios else list(SCENARIOS)
    unknown = [s for s in chosen if s not in SCENARIOS]
    if unknown:
        raise ValueError(f"unknown scenario(s) {unknown}; known: {', '.join(SCENARIOS)}")
    clients = list(clients)
    raw = Path(raw)
    traces: dict[str, dict[str, Any]] = {}
    skipped = {f"{s} {c}": why for s in chosen for c in clients
               if (why := _unsupported(s, c))}
    started = time.time()
    for name, make in (("kafka", kafka_target), ("kit", kit_target)):
        folder = raw / name / "clients"
        folder.mkdir(parents=True, exist_ok=True)
        with make() as target:
            for s in chosen:
                for c in clients:
                    if f"{s} {c}" in skipped:
                        continue
                    t0 = time.monotonic()
                    trace = run_scenario(target, s, c, folder)
                    traces.setdefault(f"{s} {c}", {})[name] = trace_to_json(trace)
                    progress(f"{name}: {s} with {c}: {len(trace.steps)} steps in "
                             f"{time.monotonic() - t0:.0f} s"
                             + (f" ({trace.error})" if trace.error else ""))
            (raw / name / "server.log").write_text(target.log_text())
    meta = {"versions": versions(), "scenarios": chosen, "clients": clients,
            "recorded": time.strftime("%Y-%m-%d", time.gmtime(started)),
            "skipped": skipped, "traces": traces}
    (raw / "traces.json").write_text(json.dumps(meta, indent=1, sort_keys=True))
    return raw


def _unsupported(scenario: str, client: str) -> str | None:
    """Why `client` cannot run `scenario` (a KIP-848 scenario with kafka-python), when the
    scenarios module says so."""
    from . import scenarios
    check = getattr(scenarios, "unsupported", None)
    return check(scenario, client) if check is not None else None


def _label_of(path: Path, target: str, scenario: str, client: str) -> str:
    # scenarios.py names a consumer's log `<target>-<scenario>-<client>-<label>.log`
    return path.name[len(f"{target}-{scenario}-{client}-"):-len(".log")]


def write_dataset(raw: str | Path, out: str | Path = DATASET) -> dict[str, Any]:
    """The dataset from a raw recording: trimmed logs, one trace file per scenario and client,
    `manifest.json` and `README.md`. Returns the manifest."""
    raw, out = Path(raw), Path(out)
    meta = json.loads((raw / "traces.json").read_text())
    if out.exists():
        shutil.rmtree(out)
    (out / "traces").mkdir(parents=True)
    files: dict[str, dict[str, int]] = {}

    def put(rel: str, text: str, keep: Any) -> None:
        kept, read, n = trim(text, keep)
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(kept)
        files[rel] = {"lines recorded": read, "lines kept": n, "bytes": len(kept.encode())}

    put("kafka/server.log", (raw / "kafka" / "server.log").read_text(errors="replace"),
        keep_broker_line)
    put("kit/server.log", (raw / "kit" / "server.log").read_text(errors="replace"),
        lambda r: True)
    for s in meta["scenarios"]:
        for c in meta["clients"]:
            for log in sorted((raw / "kafka" / "clients").glob(f"kafka-{s}-{c}-*.log")):
                label = _label_of(log, "kafka", s, c)
                put(f"kafka/clients/{s}/{c}-{label}.log", log.read_text(errors="replace"),
                    keep_client_line)
            both = meta["traces"].get(f"{s} {c}")
            if both:
                (out / "traces" / f"{s}.{c}.json").write_text(json.dumps(
                    {"scenario": s, "client": c, **both}, indent=1, sort_keys=True) + "\n")
    manifest = {k: meta[k] for k in ("versions", "scenarios", "clients", "recorded")}
    manifest["skipped"] = meta.get("skipped", {})
    manifest["files"] = files
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    (out / "README.md").write_text(readme(manifest))
    return manifest


def readme(manifest: dict[str, Any]) -> str:
    v = manifest["versions"]
    kb = sum(f["bytes"] for f in manifest["files"].values()) / 1024
    lines = [
        "# real-kafka: genuine logs of real Apache Kafka and real clients",
        "",
        "Written by `python -m coordinator_kit kafka record` "
        "(`coordinator_kit/realkafka/record.py`); do not edit by hand. Recorded on "
        f"{manifest['recorded']} (UTC) with:",
        "",
        "| what | version |", "|---|---|",
        *[f"| {k} | {v[k]} |" for k in sorted(v)],
        "",
        "Every scenario of `coordinator_kit.realkafka.scenarios.SCENARIOS` "
        "(docs/real-kafka.md, \"The scenarios\") ran with each client library, one run at a "
        "time, on ONE Kafka broker (KRaft, broker and controller in one process, "
        "`group.initial.rebalance.delay.ms=500`, `offsets.topic.num.partitions=3`), then the "
        "same on ONE kit live server (`coordinator_kit.live`). Consumers use "
        "`session.timeout.ms=6000` and `heartbeat.interval.ms=500`. Each run has its own topic "
        "`t-<scenario>-<client>` and group `g-<scenario>-<client>`.",
        "",
        "Time stamps are the machine's wall clock and member ids are random UUIDs: they are "
        "data, kept as the run wrote them. Compare runs through "
        "`coordinator_kit.realkafka.compare.normalise`, which maps them away.",
        "",
        "| file | what it is |", "|---|---|",
        "| `kafka/server.log` | the broker's own log, Kafka's layout `[%d] %p %m (%c)%n`, all "
        "scenarios in the order they ran; per-partition storage, replica and metadata-image "
        "lines removed (`record.keep_broker_line`), and the second, identical `KafkaConfig "
        "values:` block (a KRaft broker logs it as controller and as broker) |",
        "| `kafka/clients/<scenario>/<client>-<consumer>.log` | each consumer's own log on Kafka: "
        "`java`: Kafka's KafkaConsumer 4.0.2 through log4j 2 in the broker's layout (INFO); "
        "`kafka-python`: Python `logging` (`%(asctime)s - %(name)s - %(levelname)s - "
        "%(message)s`, INFO); `confluent-kafka`: librdkafka's debug context `cgrp` through "
        "Python `logging` (DEBUG); fetch, metadata and connection chatter removed "
        "(`record.keep_client_line`) |",
        "| `kit/server.log` | the kit's live server log of the same runs, in Kafka's layout |",
        "| `traces/<scenario>.<client>.json` | the run's client-visible trace on both, "
        "`{\"kafka\": Trace, \"kit\": Trace}` (`scenarios.Trace`: steps with each client's "
        "assignment and DescribeGroups, generations joined, member id shapes, listener "
        "counts, committed offsets); `record.load_traces()` reads them back |",
        "| `manifest.json` | versions, scenarios, clients, and per file the lines recorded, the "
        "lines kept and its size |",
        "",
        "| file | lines recorded | lines kept | KB |", "|---|---|---|---|",
        *[f"| `{k}` | {f['lines recorded']} | {f['lines kept']} | {f['bytes'] / 1024:.1f} |"
          for k, f in sorted(manifest["files"].items())],
        "",
        f"In all {kb:.0f} KB of logs. Scenarios: {', '.join(manifest['scenarios'])}; clients: "
        f"{', '.join(manifest['clients'])}.",
        "",
        *[f"Not run: {pair} ({why})." for pair, why in sorted(manifest["skipped"].items())],
    ]
    return "\n".join(lines)


def main_record(scenarios: list[str] | None = None, clients: list[str] | None = None,
                out: str | None = None, raw_from: str | None = None) -> int:
    from .fetch import FetchError, cache_dir
    target = Path(out) if out else DATASET
    try:
        if raw_from is None:
            raw = cache_dir() / "recordings" / time.strftime("%Y%m%d-%H%M%S", time.gmtime())
            print(f"raw recording in {raw}", file=sys.stderr)
            record(raw, scenarios, clients or CLIENTS,
                   progress=lambda m: print(m, file=sys.stderr, flush=True))
        else:
            raw = Path(raw_from)
        manifest = write_dataset(raw, target)
    except (FetchError, ValueError, FileNotFoundError) as exc:
        print(f"kafka record: {exc}", file=sys.stderr)
        return 2
    kb = sum(f["bytes"] for f in manifest["files"].values()) / 1024
    print(f"wrote {target}: {len(manifest['files'])} logs, {kb:.0f} KB, "
          f"{len(list((target / 'traces').glob('*.json')))} traces")
    return 0
