"""Notebook 10, "The kit and real Kafka, side by side": the recorded yardstick, read back.

Everything here reads `datasets/real-kafka/` (written by `python -m coordinator_kit kafka
record`, `coordinator_kit.realkafka.record`): the genuine logs of Apache Kafka 4.0.2's broker
and of three real consumers, and each run's client-visible trace on Kafka and on the kit's
live server. So the lesson runs without Kafka; `rerecord()` re-runs one scenario on both when
Kafka has been fetched and Java is present.

Wall-clock times and random member ids are what the runs wrote; the tables show what is
comparable: the normalised facts of `realkafka.compare.normalise`, times relative to a group's
first line, member ids cut to their client id and first UUID group, and the broker id and UUIDs
replaced before two log lines are called the same wording.
"""

from __future__ import annotations

import difflib
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..feedback import Feedback, not_answered
from ..logs.coverage import coverage
from ..logs.parse import parse_paths
from ..realkafka.compare import TIME_TOLERANCE_S, differences
from ..realkafka.record import DATASET, load_traces
from ..realkafka.scenarios import Trace
from .heartbeats import LogView, Table, unanswered
from .spark_logs import WrapTable

__all__ = ["DATASET", "manifest", "versions_table", "runs_table", "comparison", "logs",
           "broker_events", "side_by_side", "broker_side_by_side", "wording_table",
           "client_events_table", "client_log", "coverage_table", "timing_table",
           "crash_side_by_side", "by_library", "differing_facts", "KNOWN_KINDS", "as_table",
           "kafka_missing", "rerecord", "expiry_ms",
           "check_expiry_ms", "EXERCISE_2_CHOICES", "check_what_differs", "CLIENT_NAMES"]

CLIENT_NAMES = {"java": "Kafka's Java consumer", "kafka-python": "kafka-python",
                "confluent-kafka": "confluent-kafka (librdkafka)"}
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
# the member ids of KIP-848 groups: 22 characters of base64 (a Uuid, chosen by the client)
_MEMBER_B64 = re.compile(r"(?<=Member )[A-Za-z0-9_+/-]{22}(?= )")
_PREFIX = re.compile(r"^\[GroupCoordinator id=\d+ topic=__consumer_offsets partition=\d+\] ")


@lru_cache(maxsize=None)
def manifest() -> dict[str, Any]:
    return json.loads((DATASET / "manifest.json").read_text())


@lru_cache(maxsize=None)
def _traces() -> dict[tuple[str, str], tuple[Trace, Trace]]:
    return load_traces(DATASET)


def versions_table() -> Table:
    """What took part in the recording, and when."""
    m = manifest()
    rows = [{"what": k, "version": v} for k, v in sorted(m["versions"].items())]
    return Table(rows, title=f"recorded on {m['recorded']} (UTC) by `python -m coordinator_kit "
                             f"kafka record`")


def _pair(scenario: str, client: str) -> tuple[Trace, Trace]:
    traces = _traces()
    if (scenario, client) not in traces:
        known = sorted({s for s, _ in traces})
        raise ValueError(f"no recorded run of {scenario!r} with {client!r}; scenarios: "
                         f"{', '.join(known)}; clients: {', '.join(manifest()['clients'])}")
    return traces[(scenario, client)]


def runs_table() -> Table:
    """One row per scenario: its steps, and per client library how many client-visible facts
    were compared between Kafka and the kit and how many differ."""
    rows = []
    for scenario in manifest()["scenarios"]:
        row: dict[str, Any] = {"scenario": scenario}
        steps = None
        for client in manifest()["clients"]:
            if (scenario, client) not in _traces():
                row[client] = "not run"
                continue
            kafka, kit = _pair(scenario, client)
            steps = steps or " → ".join(s.label for s in kafka.steps)
            diff = differences(kafka, kit)
            row[client] = f"{sum(not r.same for r in diff)} of {len(diff)} differ"
        row["steps"] = steps
        rows.append(row)
    return Table(rows, ["scenario", "steps", *manifest()["clients"]],
                 title="client-visible facts compared, Kafka 4.0.2 against the kit")


# A fact that differs between Kafka and the kit, by the row of `differences` it shows in, and the
# entry of `realkafka.fidelity.KNOWN_DIFFERENCES` (its `what`, first words) that explains it.
KNOWN_KINDS = {"generations joined": "generations around a first join or a member's expiry"}


def _known(what: str) -> str | None:
    from ..realkafka.fidelity import KNOWN_DIFFERENCES
    prefix = KNOWN_KINDS.get(what)
    return next((d.what for d in KNOWN_DIFFERENCES if prefix and d.what.startswith(prefix)),
                None)


def differing_facts() -> Table:
    """Every client-visible fact that differs between Kafka and the kit, in any scenario with
    any client, and the known difference (`realkafka.fidelity.KNOWN_DIFFERENCES`) it is of:
    "-" where none explains it."""
    rows = []
    for scenario in manifest()["scenarios"]:
        for client in manifest()["clients"]:
            if (scenario, client) not in _traces():
                continue
            for r in differences(*_pair(scenario, client)):
                if not r.same:
                    rows.append({"scenario": scenario, "client": client, "what": r.what,
                                 "Kafka 4.0.2": _fmt(r.kafka), "kit": _fmt(r.kit),
                                 "known difference": _known(r.what) or "-"})
    return Table(rows, ["scenario", "client", "what", "Kafka 4.0.2", "kit", "known difference"],
                 title="the client-visible facts that differ")


def _fmt(v: Any) -> str:
    if isinstance(v, dict):
        return " ".join(f"{k}:{_fmt(x)}" for k, x in v.items()) or "-"
    if isinstance(v, list):
        return ",".join(_fmt(x) for x in v) or "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.1f} s"
    return str(v)


def comparison(scenario: str, client: str = "java") -> Table:
    """Every normalised fact of one scenario with one client library, on Kafka and on the kit
    (`realkafka.compare.differences`; durations within TIME_TOLERANCE_S count as the same)."""
    kafka, kit = _pair(scenario, client)
    rows = [{"what": r.what, "Kafka 4.0.2": _fmt(r.kafka), "kit": _fmt(r.kit),
             "same": "yes" if r.same else "NO"} for r in differences(kafka, kit)]
    return Table(rows, title=f"{scenario} with {CLIENT_NAMES.get(client, client)}")


def timing_table(*step_filters: str) -> Table:
    """Each step's duration (from its action until the clients saw the outcome) on Kafka and
    on the kit, per scenario and client: where the two run at the same pace. Only the steps
    whose label contains one of `step_filters`, when given."""
    rows = []
    for (scenario, client), (kafka, kit) in _traces().items():
        for a, b in zip(kafka.steps, kit.steps):
            if not step_filters or any(f in a.label for f in step_filters):
                rows.append({"scenario": scenario, "client": client, "step": a.label,
                             "Kafka (s)": f"{a.seconds:.1f}", "kit (s)": f"{b.seconds:.1f}",
                             "within 2.5 s": "yes" if abs(a.seconds - b.seconds)
                             <= TIME_TOLERANCE_S else "NO"})
    return Table(rows, title="step durations, wall-clock seconds")


# -- the logs -------------------------------------------------------------------------------------

def logs(which: str = "kafka") -> list[Path]:
    """The recorded logs: "kafka" (the broker's and every consumer's), "broker", "clients",
    or "kit" (the kit's live server log of the same runs)."""
    files = {"broker": [DATASET / "kafka" / "server.log"],
             "clients": sorted((DATASET / "kafka" / "clients").rglob("*.log")),
             "kit": [DATASET / "kit" / "server.log"]}
    files["kafka"] = files["broker"] + files["clients"]
    if which not in files:
        raise ValueError(f"which must be one of {', '.join(files)}, got {which!r}")
    return files[which]


@lru_cache(maxsize=None)
def _events(path: str) -> tuple[dict[str, Any], ...]:
    return tuple(parse_paths([path]).events)


def broker_events(which: str, group: str) -> list[dict[str, Any]]:
    """The parsed broker events of one group: from Kafka's log ("kafka") or the kit's ("kit")."""
    path = DATASET / which / "server.log" if which in ("kafka", "kit") else None
    if path is None:
        raise ValueError(f"which must be kafka or kit, got {which!r}")
    return [e for e in _events(str(path)) if e["group"] == group]


def _message(raw: str) -> str:
    """A broker line's message: without its time stamp, level, LogContext prefix and logger."""
    msg = raw.split("] ", 1)[1] if raw.startswith("[") else raw
    msg = re.sub(r"^[A-Z]+ ", "", msg)
    msg = _PREFIX.sub("", msg)
    return re.sub(r" \([a-z][\w.$]*\)$", "", msg)


def _normalised(raw: str) -> str:
    return _MEMBER_B64.sub("<uuid>", _UUID.sub("<uuid>", _message(raw)))


def _short(msg: str, width: int = 95) -> str:
    msg = re.sub(r"(" + _UUID.pattern[:23] + r")" + _UUID.pattern[23:], r"\1…", msg)
    return msg if len(msg) <= width else msg[:width - 1] + "…"


def _rows(events: Any) -> list[dict[str, Any]]:
    if hasattr(events, "to_dict"):        # a pandas frame, e.g. Spark's collect
        events = events.to_dict("records")
    return [dict(e) for e in events]


def _seconds(ts: Any, first: Any) -> float:
    if hasattr(ts, "to_pydatetime"):
        ts, first = ts.to_pydatetime(), first.to_pydatetime()
    return (ts - first).total_seconds() if isinstance(ts, datetime) else 0.0


def side_by_side(left: Any, right: Any, left_name: str, right_name: str, *,
                 title: str | None = None, width: int = 95, wrap: str = "22em") -> WrapTable:
    """Two runs' events of one group aligned by event (difflib on the event names): per row
    the event, each side's time since that side's first event, and each side's message
    (member ids cut after their first UUID group). `left`, `right`: parsed events (dicts with
    ts, event, raw) or a pandas frame of them."""
    a, b = _rows(left), _rows(right)
    ea, eb = [e["event"] for e in a], [e["event"] for e in b]
    rows: list[dict[str, Any]] = []

    def side(e: dict[str, Any] | None, first: Any) -> tuple[str, str]:
        if e is None:
            return "", "-"
        return f"{_seconds(e['ts'], first):.3f}", _short(_message(e["raw"]), width)

    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ea, eb, autojunk=False) \
            .get_opcodes():
        for k in range(max(i2 - i1, j2 - j1)):
            x = a[i1 + k] if i1 + k < i2 else None
            y = b[j1 + k] if j1 + k < j2 else None
            tx, mx = side(x, a[0]["ts"] if a else None)
            ty, my = side(y, b[0]["ts"] if b else None)
            # one event name where both sides have it or only one side has a line
            same = x is None or y is None or x["event"] == y["event"]
            rows.append({"event": (x or y)["event"] if same else
                         f"{x['event']} / {y['event']}",
                         f"{left_name} s": tx, left_name: mx, f"{right_name} s": ty,
                         right_name: my})
    return WrapTable(rows, ["event", f"{left_name} s", left_name, f"{right_name} s", right_name],
                     title=title, wrap={left_name: wrap, right_name: wrap})


def broker_side_by_side(scenario: str, client: str = "java") -> WrapTable:
    """Kafka's broker log and the kit's live server log of the same run, group by group."""
    group = f"g-{scenario}-{client}"
    return side_by_side(broker_events("kafka", group), broker_events("kit", group),
                        "Kafka 4.0.2", "kit", wrap="20em",
                        title=f"{group}: the group coordinator's lines, seconds since the "
                              f"group's first line")


def _aligned(a: Sequence[dict[str, Any]], b: Sequence[dict[str, Any]]
             ) -> Iterable[tuple[dict[str, Any], dict[str, Any]]]:
    """The pairs of lines that `side_by_side` puts in one row with one event name."""
    matcher = difflib.SequenceMatcher(None, [e["event"] for e in a], [e["event"] for e in b],
                                      autojunk=False)
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            yield a[block.a + k], b[block.b + k]


def wording_table() -> Table:
    """Per scenario: the group coordinator's lines in both broker logs, whether their events
    come in the same order, and how many of Kafka's lines have a line of the same event on the
    kit (aligned as in `side_by_side`) that reads the same once member ids and the broker id
    are replaced."""
    kafka, kit = defaultdict(list), defaultdict(list)
    for which, out in (("kafka", kafka), ("kit", kit)):
        for e in _events(str(DATASET / which / "server.log")):
            if e["group"] and e["group"].startswith("g-"):
                out[e["group"]].append(e)
    rows = []
    for scenario in manifest()["scenarios"]:
        groups = sorted(g for g in kafka if g.startswith(f"g-{scenario}-")
                        and g[len(f"g-{scenario}-"):] in manifest()["clients"])
        lines = same = same_order = 0
        for g in groups:
            a, b = kafka[g], kit.get(g, [])
            lines += len(a)
            same_order += [e["event"] for e in a] == [e["event"] for e in b]
            same += sum(_normalised(x["raw"]) == _normalised(y["raw"])
                        for x, y in _aligned(a, b))
        rows.append({"scenario": scenario, "groups": len(groups), "Kafka's lines": lines,
                     "events in the same order": f"{same_order} of {len(groups)} groups",
                     "same wording": f"{same} of {lines}"})
    return Table(rows, title="the group coordinator's lines: Kafka 4.0.2 against the kit")


def client_events_table(scenario: str, consumer: str = "a") -> Table:
    """The events the kit's parser reads in one consumer's own log, per client library: the
    same happenings in three wordings."""
    counts: dict[str, Counter[str]] = {}
    for client in manifest()["clients"]:
        path = DATASET / "kafka" / "clients" / scenario / f"{client}-{consumer}.log"
        if path.exists():
            counts[client] = Counter(e["event"] for e in parse_paths([path]).events)
    order = ["coordinator_discovered", "join_sent", "member_id_assigned", "joined",
             "assignment_computed", "synced", "assignment_received", "partitions_assigned",
             "heartbeat_sent", "rejoin_requested", "partitions_revoked", "leave_sent"]
    events = [e for e in order if any(c[e] for c in counts.values())]
    events += sorted({e for c in counts.values() for e in c} - set(events))
    rows = [{"event": e, **{CLIENT_NAMES[c]: n[e] or "-" for c, n in counts.items()}}
            for e in events]
    return Table(rows, title=f"{scenario}, consumer {consumer}: events in its own log")


def client_log(scenario: str, client: str, consumer: str = "a", *contains: str,
               limit: int = 10) -> LogView:
    """Up to `limit` lines of one consumer's own log that contain every one of `contains`."""
    path = DATASET / "kafka" / "clients" / scenario / f"{client}-{consumer}.log"
    if not path.exists():
        raise ValueError(f"no log {path.relative_to(DATASET)}; the logs are in "
                         f"{DATASET / 'kafka' / 'clients'}")
    lines = [ln for ln in path.read_text().splitlines()
             if ln[:1] in "[2" and all(c in ln for c in contains)]
    return LogView(lines[:limit])


def coverage_table() -> Table:
    """The kit's parser on the recorded logs, per source: lines read, coordinator lines
    (`logs.coverage`), how many of those it recognised."""
    clients = DATASET / "kafka" / "clients"
    sources = (("Kafka 4.0.2 broker", logs("broker")),
               ("Kafka's Java consumer", sorted(clients.rglob("java-*.log"))),
               ("kafka-python", sorted(clients.rglob("kafka-python-*.log"))),
               ("librdkafka (debug=cgrp)", sorted(clients.rglob("confluent-kafka-*.log"))),
               ("the kit's live server", logs("kit")))
    rows = []
    for name, paths in sources:
        c = coverage(paths)
        rows.append({"source": name, "files": len(paths), "lines read": c.counts.read,
                     "quarantined": c.counts.quarantined, "coordinator lines": c.coordinator,
                     "recognised": c.recognised, "%": f"{100 * c.ratio:.1f}"})
    return Table(rows, title="the kit's log parser on genuine logs")


def crash_side_by_side(kit: Any = None, kafka: Any = None, client: str = "java") -> WrapTable:
    """The kit's simulated `datasets/one-dies` (group-1 on broker 2) beside Kafka's broker log
    of crash-expires: the same story, told by both coordinators. `kit`, `kafka`: their events
    (a pandas frame from Spark, or None to parse the files here)."""
    if kit is None:
        one_dies = DATASET.parent / "one-dies" / "server-broker-2.log"
        kit = [e for e in parse_paths([one_dies]).events if e["group"] == "group-1"]
    if kafka is None:
        kafka = broker_events("kafka", f"g-crash-expires-{client}")
    return side_by_side(kit, kafka, "kit: one-dies", "Kafka: crash-expires", wrap="15em",
                        title="a consumer dies: the kit's simulated broker log beside Kafka's")


def as_table(frame: Any, title: str | None = None) -> WrapTable:
    """A small pandas frame (e.g. `realkafka.fidelity.differences_frame()`) with its texts in
    full, wrapped, instead of pandas' cut columns."""
    columns = [str(c) for c in frame.columns]
    rows = [{c: "-" if v is None else str(v) for c, v in zip(columns, rec)}
            for rec in frame.itertuples(index=False)]
    return WrapTable(rows, columns, title=title, wrap={c: "12em" for c in columns},
                     break_anywhere=True)


def by_library(events: Any) -> Table:
    """Parsed events of the recorded logs (a Spark DataFrame) counted per writer: the broker,
    or the client library named in the log's file name."""
    from pyspark.sql import functions as F
    lib = F.regexp_extract("file", r"/(java|kafka-python|confluent-kafka)-[^/]+[.]log$", 1)
    writer = F.when(F.col("file").endswith("/kit/server.log"), "the kit's live server") \
        .when(lib == "", "Kafka 4.0.2 broker").otherwise(lib)
    rows = (events.withColumn("writer", writer).groupBy("writer")
            .agg(F.count(F.lit(1)).alias("events"), F.countDistinct("event").alias("kinds"),
                 F.countDistinct("group").alias("groups"))
            .orderBy("writer").collect())
    return Table([{"written by": CLIENT_NAMES.get(r["writer"], r["writer"]),
                   "events": r["events"], "kinds of event": r["kinds"],
                   "groups": r["groups"]} for r in rows],
                 title="events per writer, read by Spark")


# -- re-recording -------------------------------------------------------------------------------

def kafka_missing() -> str | None:
    """Why Kafka cannot run here (one line), or None when it can."""
    from ..realkafka.fetch import FetchError, KAFKA_VERSION, check_java, is_fetched
    try:
        check_java()
    except FetchError as exc:
        return f"Kafka {KAFKA_VERSION} needs Java 17+: {str(exc).splitlines()[0]}"
    if not is_fetched():
        return (f"Kafka {KAFKA_VERSION} is not fetched: run `python -m coordinator_kit kafka "
                f"fetch` once (about 64 MB from Maven Central)")
    return None


class _Note(str):
    """One line of text that a notebook shows as it is, without quotes."""

    def __repr__(self) -> str:
        return str(self)


def rerecord(scenario: str = "second-joins", client: str = "kafka-python", *,
             run: bool = True) -> Any:
    """Run `scenario` with `client` consumers on a fresh Kafka broker and on the kit, and
    compare (about 30 s). With `run=False`, or without Kafka, one line saying how to run it or
    what is missing."""
    why = kafka_missing()
    if not run:
        first = f" It needs Kafka first: {why}." if why is not None else ""
        return _Note(f"Not re-recorded: set RERECORD = True and run this cell to run "
                     f"{scenario} with {client} on Kafka and on the kit (about 45 s).{first}")
    if why is not None:
        return _Note(f"Not re-recorded: {why}. The tables above are the recorded runs.")
    from ..realkafka.scenarios import kafka_target, kit_target, run_scenario
    traces = {}
    for name, make in (("kafka", kafka_target), ("kit", kit_target)):
        with make(lifetime_s=300) if name == "kafka" else make() as target:
            traces[name] = run_scenario(target, scenario, client)
    rows = differences(traces["kafka"], traces["kit"])
    table = Table([{"what": r.what, "Kafka 4.0.2": _fmt(r.kafka), "kit": _fmt(r.kit),
                    "same": "yes" if r.same else "NO"} for r in rows],
                  title=f"{scenario} with {client}, just now: {len(rows)} facts, "
                        f"{sum(not r.same for r in rows)} differ")
    return table


# -- exercises ------------------------------------------------------------------------------------

def expiry_ms(client: str = "java") -> int:
    """In Kafka's broker log of crash-expires: ms from generation 2's `Stabilized group` line
    to the coordinator's `has failed, removing it` of member b."""
    events = broker_events("kafka", f"g-crash-expires-{client}")
    stable = next(e for e in events if e["event"] == "group_stabilized" and e["generation"] == 2)
    gone = next(e for e in events if e["event"] == "member_session_expired"
                and (e["member"] or "").startswith("b-"))
    return round(_seconds(gone["ts"], stable["ts"]) * 1000)


def check_expiry_ms(answer: Any) -> Feedback:
    """Exercise 1: how long after generation 2 settled did Kafka remove the killed member?"""
    ex = "Exercise 1"
    if unanswered(answer):
        return not_answered(ex, "a number of milliseconds, read from two time stamps")
    if isinstance(answer, bool) or not isinstance(answer, (int, float)):
        return Feedback(ex, "wrong", f"Answer with a number of milliseconds, got {answer!r}.")
    truth = expiry_ms()
    if abs(answer - truth) <= 5:   # two time stamps, to the millisecond
        return Feedback(ex, "correct",
                        f"{truth} ms: session.timeout.ms (6 000 ms) counted from b's last "
                        f"request (its SyncGroup or a heartbeat), which reached the "
                        f"coordinator {truth - 6000} ms after the group settled, shortly "
                        f"before the SIGKILL.")
    if abs(answer - 6000) <= 5:
        return Feedback(ex, "wrong", "That is session.timeout.ms, the rule. The log says "
                                     "what happened: subtract the two time stamps.")
    if abs(answer - 45000) <= 1000:
        return Feedback(ex, "wrong", "45 000 ms is Kafka's default session.timeout.ms (the "
                                     "kit's one-dies run); these consumers asked for 6 000.")
    return Feedback(ex, "wrong", "Find generation 2's `Stabilized group` line and member b's "
                                 "`has failed, removing it from the group` in "
                                 "`rk.broker_side_by_side(\"crash-expires\")`, and subtract.")


EXERCISE_2_CHOICES = {
    "a": "the wording of the join lines",
    "b": "only what the clients' timing decides: which of two members expires first at the "
         "end of a run, and one extra rejoin of kafka-python's leader",
    "c": "the reasons the coordinator gives for a rebalance",
    "d": "the __consumer_offsets partition each group lives in",
}


def check_what_differs(answer: Any) -> Feedback:
    """Exercise 2: after member ids and the broker id are replaced, what differs between
    Kafka's lines for its classic groups and the kit's?"""
    ex = "Exercise 2"
    if unanswered(answer):
        return not_answered(ex, 'one letter: "a", "b", "c" or "d"')
    if not isinstance(answer, str) or answer.strip().lower() not in EXERCISE_2_CHOICES:
        return Feedback(ex, "wrong", f"Answer with one letter of {list(EXERCISE_2_CHOICES)}, "
                                     f"got {answer!r}.")
    letter = answer.strip().lower()
    if letter == "b":
        return Feedback(ex, "correct",
                        "The lines that differ are the expirations after a scenario ends (it "
                        "stops both consumers at once; which session runs out first is a "
                        "race) and, in max-poll with kafka-python, the generation the kit's "
                        "run joined once more (a's extra rejoin: every later line counts one "
                        "generation higher).")
    why = {"a": "look at the `same wording` column: the join lines read the same",
           "c": "the `reason:` is part of the `Preparing to rebalance` lines, and those read "
                "the same in the side-by-side tables",
           "d": "both hash the group id onto the same 3 partitions: look at the prefixes"}
    return Feedback(ex, "wrong", f"Not {letter}: {why[letter]}.")
