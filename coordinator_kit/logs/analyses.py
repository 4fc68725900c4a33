"""The analyses of `coordinator_kit.spark.analyses`, in plain Python, for inputs too small to be
worth a JVM.

`logs report --engine auto` reads a small input with the pure-Python parser (`logs.parse`);
starting Spark only to run a few dozen small queries on its rows cost ~30 s (the JVM's start
and, above all, compiling the queries on a cold JVM: benchmarks/logs_small.py), where these
functions take well under a second. They give the SAME results as the Spark versions: the same
columns in the same order, the same rows in the same order, the same NULLs, timestamps in UTC,
so `logs report` prints the same bytes from either engine.

THE TWO MODULES MUST MOVE TOGETHER. This one mirrors `spark/analyses.py` function for function
(`_group_lines`, `_broker_episodes`, `_client_episodes`, `_cg_changes`, `_broker_departures`,
... keep the Spark names and the order of their steps; `_cg_changes` walks a consumer group's
lines where Spark folds them with `aggregate`), so a change to a Spark analysis is ported by
reading the two side by side. tests/test_logs_analyses_identity.py runs both on every dataset under
`datasets/` and on the sample logs in tests/data/logs and fails on any difference.

How the Spark operations map to Python here: a window `partitionBy(k).orderBy(ts, file, line)`
is a sort by (k, ts, file, line) and a walk over each partition (`_partitions`); `F.last(c,
ignorenulls=True)` over the rows before is a running value; `min`/`max` of a struct is Python's
tuple comparison with NULL first (`_key`); `regexp_extract`/`rlike` are `re` searches with
`re.ASCII` (Java's `\\d`, `\\s` and `(?i)` are ASCII-only too); every `orderBy` sorts NULL
first (Spark's default for ascending) unless the Spark code says `asc_nulls_last`. Where
Spark's `orderBy` leaves a tie, the rows are given in (file, line) order of the line they come
from; the identity test would show a case where Spark orders them otherwise.

Each function takes the events as `logs.parse.parse_paths(...).events` (a list of row dicts),
or as a pandas DataFrame of them (`ParseResult.to_pandas()`), and returns a pandas DataFrame
with the dtypes of the Spark result's `toPandas()` except that integer columns keep their
integer type when they hold NULLs (pandas' nullable Int32/Int64). Nothing here imports pyspark.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime, timezone
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from .catalogue import TEMPLATES
from .fields import EXTRA_EVENTS

__all__ = ["rebalance_episodes", "member_departures", "heartbeat_gaps", "heartbeat_gap_summary",
           "coordinator_loads", "group_state_timeline", "prepare", "ANALYSES", "COLUMN_TYPES",
           "CLASSIC_GROUP_STATES", "DEPARTURE_CAUSES", "EVENT_NAMES", "java_double_string"]

# The event names the parser produces (as spark.schema.EVENT_NAMES, computed here so that this
# module does not import from the spark package above it).
EVENT_NAMES: tuple[str, ...] = tuple(sorted({t.event for t in TEMPLATES.values()}
                                            | set(EXTRA_EVENTS)))

CLASSIC_GROUP_STATES = ("Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead")
_STATE_ALIASES = {"AwaitingSync": "CompletingRebalance"}

DEPARTURE_CAUSES = {
    "session_expiry": "the coordinator's session timer for the member expired (no heartbeat "
                      "within session.timeout.ms)",
    "leave": "the member sent LeaveGroup (close, unsubscribe)",
    "poll_timeout": "the member left because max.poll.interval.ms passed between two poll() "
                    "calls",
    "fencing": "a static member's instance id was taken over by a new member id, or the member "
               "got FENCED_INSTANCE_ID / was fenced from a consumer group",
    "rebalance_timeout": "the member did not rejoin (JoinGroup) or sync (SyncGroup) within the "
                         "rebalance timeout",
    "unknown_member": "client side only: the coordinator no longer knew the member "
                      "(UNKNOWN_MEMBER_ID); the broker lines would say why",
}


def _known(*events: str) -> list[str]:
    """Event names, checked against the catalogue so a typo fails at import."""
    unknown = [e for e in events if e not in EVENT_NAMES]
    if unknown:
        raise ValueError(f"analyses refer to events the parser does not produce: {unknown}")
    return list(events)


# -- broker events that move a classic group between states -----------------------------------
REBALANCE_STARTED = "rebalance_started"
GROUP_STABILIZED = "group_stabilized"
ASSIGNMENT_RECEIVED = "assignment_received"
GROUP_EMPTY = "group_empty"
GROUP_UNLOADED = "group_unloaded"
GROUP_DEAD = "group_dead"
GROUP_LOADED = "group_loaded"
_known(REBALANCE_STARTED, GROUP_STABILIZED, ASSIGNMENT_RECEIVED, GROUP_EMPTY, GROUP_UNLOADED,
       GROUP_DEAD, GROUP_LOADED)

_EPISODE_ENDS = {ASSIGNMENT_RECEIVED: "Stable", GROUP_EMPTY: "Empty", GROUP_UNLOADED: "Dead",
                 GROUP_DEAD: "Dead", GROUP_LOADED: None}

# -- client events of the join/sync cycle -----------------------------------------------------
REJOIN_REQUESTED, JOIN_SENT, JOINED, SYNCED = _known(
    "rejoin_requested", "join_sent", "joined", "synced")
_ASSIGNMENT_APPLIED = _known("assignment_received", "partitions_assigned")

# -- departures -------------------------------------------------------------------------------
_known("member_session_expired", "pending_member_expired", "member_left", "pending_member_left",
       "static_member_replaced", "members_not_rejoined_removed", "sync_expired_members_removed",
       "member_fenced", "leave_sent", "poll_timeout", "join_failed_fenced", "sync_failed_fenced",
       "heartbeat_failed_reset", "generation_reset")

# -- coordinator loads and unloads ------------------------------------------------------------
LOAD_SCHEDULED, UNLOAD_SCHEDULED = _known("load_scheduled", "unload_scheduled")
_LOAD_OUTCOMES = {
    "load_completed": "completed", "load_failed": "failed", "load_ignored": "ignored",
    "load_already_loading": "ignored", "load_already_active": "ignored",
    "load_bad_state": "failed", "load_completion_ignored": "ignored",
    "load_completion_gone": "ignored",
    "unload_finished": "completed", "unload_ignored": "ignored",
    "unload_never_loaded": "ignored",
}
_known(*_LOAD_OUTCOMES)
UNLOAD_STARTED = _known("unload_started")[0]
TIMER_REGISTERED = _known("timer_registered")[0]

Row = dict[str, Any]


# -- helpers ----------------------------------------------------------------------------------

_INT32 = (-2**31, 2**31 - 1)
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_INPUT_COLUMNS = ("ts", "source", "event", "group", "member", "generation", "state", "reason",
                  "partition", "epoch", "duration_ms", "raw", "file", "line", "thread",
                  "template")


class Prepared(list):
    """Timed events (ts and event not NULL) as row dicts with `ts` in microseconds since the
    epoch (UTC): what every analysis reads. `prepare` builds it once; the analyses accept it
    as it is, so `logs report` converts the events once for all of them, and the helpers that
    several analyses share (`_group_lines`, `_client_episodes`) run once per Prepared."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.cache: dict[str, Any] = {}


def _cached(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """`fn(logs)` computed once per Prepared (its result is shared: callers do not change
    it)."""
    def wrapper(logs: Any) -> Any:
        logs = prepare(logs)
        if fn.__name__ not in logs.cache:
            logs.cache[fn.__name__] = fn(logs)
        return logs.cache[fn.__name__]
    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def _micros(ts: Any) -> int | None:
    if ts is None:
        return None
    if isinstance(ts, datetime):
        if ts.tzinfo is None:
            ts = ts.replace(tzinfo=timezone.utc)
        delta = ts - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    import pandas as pd

    if ts is pd.NaT:
        return None
    stamp = pd.Timestamp(ts)
    if stamp.tzinfo is not None:
        stamp = stamp.tz_convert("UTC").tz_localize(None)
    return int(stamp.value // 1000)


def _none(v: Any) -> Any:
    """pandas' missing values (NaN, NA, NaT) as None; numpy scalars as Python's."""
    if v is None:
        return None
    try:
        if v != v:                      # NaN, NaT
            return None
    except TypeError:                   # pd.NA
        return None
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        return v.item()
    return v


def prepare(logs: Any) -> Prepared:
    """The timed events of `logs` (parse_paths' rows, or a DataFrame of them), converted once."""
    if isinstance(logs, Prepared):
        return logs
    if hasattr(logs, "to_dict") and hasattr(logs, "columns"):          # pandas
        cols = [c for c in _INPUT_COLUMNS if c in logs.columns]
        records: Iterable[Row] = ({c: _none(v) for c, v in zip(cols, values)}
                                  for values in logs[cols].itertuples(index=False, name=None))
    else:
        records = logs
    out = Prepared()
    for r in records:
        if r.get("ts") is None or r.get("event") is None:
            continue
        row = {c: r.get(c) for c in _INPUT_COLUMNS}
        row["ts"] = _micros(r["ts"])
        row["_order"] = (row["ts"], _nf(row["file"]), _nf(row["line"]))
        out.append(row)
    return out


def _nf(v: Any) -> tuple:
    """A sort key that puts NULL first (Spark's ascending order)."""
    return (0,) if v is None else (1, v)


def _nl(v: Any) -> tuple:
    """A sort key that puts NULL last (`asc_nulls_last`)."""
    return (1,) if v is None else (0, v)


def _key(*values: Any) -> tuple:
    """A tuple ordered like a Spark struct of `values` (NULL fields first)."""
    return tuple(_nf(v) for v in values)


# The order of lines: by time, then where they were read (file, line).
ORDER = ("ts", "file", "line")


def _order(r: Row) -> tuple:
    """ORDER: the order of lines within a window (ts is never NULL here: `prepare` keeps
    timed lines only; a row made here without `_order` gets it from its columns)."""
    found = r.get("_order")
    return found if found is not None else (r["ts"], _nf(r["file"]), _nf(r["line"]))


def _partitions(rows: Iterable[Row], *keys: str) -> Iterator[list[Row]]:
    """`Window.partitionBy(*keys).orderBy(*ORDER)`: each partition's rows in order."""
    parts: dict[Any, list[Row]] = defaultdict(list)
    if len(keys) == 1:
        key = keys[0]
        for r in sorted(rows, key=_order):
            parts[r[key]].append(r)
    else:
        for r in sorted(rows, key=_order):
            parts[tuple(r[k] for k in keys)].append(r)
    yield from parts.values()


def _ms(micros: int | None) -> int | None:
    """`unix_millis`: milliseconds since the epoch (floor)."""
    return None if micros is None else micros // 1000


def _minus(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a - b


def _timed(logs: Any) -> Prepared:
    return prepare(logs)


def _re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.ASCII)


def _extract(raw: str | None, pattern: re.Pattern[str]) -> str | None:
    """`regexp_extract(raw, pattern, 1)`: '' when nothing matches, NULL for a NULL input."""
    if raw is None:
        return None
    m = pattern.search(raw)
    return (m.group(1) or "") if m else ""


def _try_int(text: str | None) -> int | None:
    """`try_cast(text as int)` for the digits the patterns capture."""
    if not text:
        return None
    try:
        value = int(text.strip())
    except ValueError:
        return None
    return value if _INT32[0] <= value <= _INT32[1] else None


def _int_from(raw: str | None, *patterns: re.Pattern[str]) -> int | None:
    for p in patterns:
        v = _try_int(_extract(raw, p))
        if v is not None:
            return v
    return None


def _str_from(raw: str | None, *patterns: re.Pattern[str]) -> str | None:
    for p in patterns:
        v = _extract(raw, p)
        if v:
            return v
    return None


def _rlike(text: str | None, pattern: re.Pattern[str]) -> bool:
    return text is not None and pattern.search(text) is not None


_MEMBERS = _re(r"(?:with|group has) (\d+) members")
_BROKER_ID = [_re(p) for p in (r"\[GroupCoordinator (?:id=)?(\d+)", r"brokerId=(\d+)",
                               r"on Broker (\d+)\]", r"\[Broker id=(\d+)\]",
                               r"\[KafkaApi-(\d+)\]")]
_CLIENT_ID = [_re(p) for p in (r"clientId=([^,\]]+)", r"(rdkafka#[A-Za-z]+-\d+)")]


def _members_in(raw: str | None) -> int | None:
    return _int_from(raw, _MEMBERS)


def broker_id(raw: str | None) -> int | None:
    """The broker id from a broker line's LogContext prefix (spark.analyses.broker_id)."""
    return _int_from(raw, *_BROKER_ID)


def client_id(raw: str | None) -> str | None:
    """The client id of a client line (spark.analyses.client_id)."""
    return _str_from(raw, *_CLIENT_ID)


_NEW_STATE = {REBALANCE_STARTED: "PreparingRebalance", GROUP_STABILIZED: "CompletingRebalance",
              ASSIGNMENT_RECEIVED: "Stable", GROUP_EMPTY: "Empty", GROUP_UNLOADED: "Dead",
              GROUP_DEAD: "Dead"}
_GROUP_EVENTS = set(_EPISODE_ENDS) | {REBALANCE_STARTED, GROUP_STABILIZED}
_STATES_SEEN = set(CLASSIC_GROUP_STATES) | set(_STATE_ALIASES)


@_cached
def _group_lines(logs: Any) -> list[Row]:
    """Broker lines about a classic group with `new_state`, `members_n`, `members_known`
    (spark.analyses._group_lines)."""
    out = []
    for r in _timed(logs):
        if r["source"] != "broker" or r["group"] is None:
            continue
        # a KIP-848 consumer group's lines ("Loaded consumer group ...", "[GroupId=g] Unloaded
        # group metadata ...") are not a classic group's moves
        if (r["template"] or "").startswith("CG-"):
            continue
        if not (r["event"] in _GROUP_EVENTS or r["state"] in _STATES_SEEN):
            continue
        n = _members_in(r["raw"])
        observed = _STATE_ALIASES.get(r["state"], r["state"])
        if observed not in CLASSIC_GROUP_STATES:
            observed = None
        event = r["event"]
        if event == GROUP_LOADED:
            new_state = "Empty" if n == 0 else "Stable"
        else:
            new_state = _NEW_STATE.get(event, observed)
        if event in (GROUP_STABILIZED, ASSIGNMENT_RECEIVED, GROUP_LOADED):
            known = n
        elif new_state == "Empty":
            known = 0
        else:
            known = None
        out.append({"group": r["group"], "ts": r["ts"], "file": r["file"], "line": r["line"],
                    "event": event, "generation": r["generation"], "reason": r["reason"],
                    "member": r["member"], "state": r["state"], "raw": r["raw"],
                    "members_n": n, "new_state": new_state, "members_known": known})
    return out


def _client_lines(logs: Any, events: Sequence[str]) -> list[Row]:
    wanted = set(events)
    out = []
    for r in _timed(logs):
        if r["source"] == "client" and r["group"] is not None and r["event"] in wanted:
            row = dict(r)
            cid = client_id(r["raw"])
            row["client_id"] = cid if cid is not None else r["file"]
            out.append(row)
    return out


@_cached
def _broker_groups(logs: Any) -> set[str]:
    return {r["group"] for r in _group_lines(logs)}


# -- results as DataFrames --------------------------------------------------------------------

# Each result's columns and their Spark types: "string", "timestamp", "int" (Spark int),
# "long" (bigint), "double".
COLUMN_TYPES: dict[str, dict[str, str]] = {
    "rebalance_episodes": {
        "group": "string", "start_ts": "timestamp", "end_ts": "timestamp",
        "duration_ms": "long", "reason": "string", "end_state": "string",
        "end_event": "string", "generation_before": "int", "generation_after": "int",
        "members_before": "int", "members_after": "int", "restarts": "int",
        "derived_from": "string"},
    "member_departures": {
        "ts": "timestamp", "group": "string", "member": "string", "cause": "string",
        "detail": "string", "event": "string", "source": "string"},
    "heartbeat_gaps": {
        "group": "string", "member": "string", "client_id": "string", "ts": "timestamp",
        "prev_ts": "timestamp", "gap_ms": "long", "event": "string", "basis": "string"},
    "heartbeat_gap_summary": {
        "group": "string", "member": "string", "client_id": "string", "basis": "string",
        "gaps": "long", "max_gap_ms": "long", "mean_gap_ms": "double",
        "max_gap_ended": "timestamp"},
    "coordinator_loads": {
        "partition": "int", "broker": "int", "operation": "string", "epoch": "int",
        "scheduled_ts": "timestamp", "started_ts": "timestamp", "finished_ts": "timestamp",
        "outcome": "string", "end_event": "string", "duration_ms": "long",
        "elapsed_ms": "long", "detail": "string"},
    "group_state_timeline": {
        "group": "string", "state": "string", "from_ts": "timestamp", "to_ts": "timestamp",
        "duration_ms": "long", "generation": "int", "derived_from": "string"},
}
_DTYPES = {"string": "object", "int": "Int32", "long": "Int64", "double": "float64"}


def _frame(rows: list[Row], name: str) -> Any:
    """Rows (timestamps in microseconds) as a DataFrame with the result's columns and dtypes;
    timestamps as datetime64[ns], naive UTC (what toPandas gives in a UTC session)."""
    import numpy as np
    import pandas as pd

    types = COLUMN_TYPES[name]
    data: dict[str, Any] = {}
    for col, kind in types.items():
        values = [r[col] for r in rows]
        if kind == "timestamp":
            data[col] = pd.Series(np.array([v * 1000 if v is not None else np.iinfo("int64").min
                                            for v in values], dtype="int64")
                                  .view("datetime64[ns]"))
        elif kind == "double":
            data[col] = pd.Series([np.nan if v is None else float(v) for v in values],
                                  dtype="float64")
        else:
            data[col] = pd.Series(values, dtype=_DTYPES[kind])
    return pd.DataFrame(data, columns=list(types))


# -- rebalance episodes -----------------------------------------------------------------------

_EPISODE_COLUMNS = tuple(COLUMN_TYPES["rebalance_episodes"])


def rebalance_episodes(logs: Any) -> Any:
    """One row per rebalance of a classic or a KIP-848 consumer group, ordered by group and
    start: see `spark.analyses.rebalance_episodes`, which this reproduces row for row."""
    return _frame(_rebalance_episode_rows(prepare(logs)), "rebalance_episodes")


def _rebalance_episode_rows(logs: Prepared) -> list[Row]:
    broker = _broker_episodes(logs)
    groups = _broker_groups(logs)
    client = [r for r in _client_episodes(logs) if r["group"] not in groups]
    rows = broker + client + _cg_episode_rows(logs)
    rows.sort(key=lambda r: (_nf(r["group"]), _nf(r["start_ts"]), _nf(r["derived_from"]),
                             _nf(r["end_ts"])))
    return rows


def _broker_episodes(logs: Any) -> list[Row]:
    out = []
    for part in _partitions(_group_lines(logs), "group"):
        segs: dict[int, list[Row]] = {}
        ends_before = 0
        known_before = None
        for r in part:
            segs.setdefault(ends_before, []).append({**r, "members_known_before": known_before})
            if r["event"] in _EPISODE_ENDS:
                ends_before += 1
            if r["members_known"] is not None:
                known_before = r["members_known"]
        for rows in segs.values():
            starts = [r for r in rows if r["event"] == REBALANCE_STARTED]
            if not starts:
                continue
            s = min(starts, key=lambda r: _key(r["ts"], r["file"], r["line"], r["reason"],
                                               r["generation"], r["members_known_before"]))
            ends = [r for r in rows if r["event"] in _EPISODE_ENDS]
            e = max(ends, key=lambda r: _key(r["ts"], r["file"], r["line"], r["event"],
                                             r["generation"], r["members_n"], r["new_state"]),
                    default=None)
            stab = [r for r in rows if r["event"] == GROUP_STABILIZED]
            st = max(stab, key=lambda r: _key(r["ts"], r["file"], r["line"], r["generation"],
                                              r["members_n"]), default=None)
            end_event = e["event"] if e else None
            if end_event == GROUP_EMPTY:
                members_after = 0
            elif end_event in (GROUP_UNLOADED, GROUP_DEAD):
                members_after = None
            elif end_event == GROUP_LOADED:
                members_after = e["members_n"]                              # type: ignore[index]
            elif end_event is not None:
                members_after = _coalesce(e["members_n"],                   # type: ignore[index]
                                          st["members_n"] if st else None)
            else:
                members_after = None
            generation_before = s["generation"]
            members_before = _coalesce(s["members_known_before"],
                                       0 if generation_before == 0 else None)
            out.append({
                "group": s["group"], "start_ts": s["ts"], "end_ts": e["ts"] if e else None,
                "duration_ms": _minus(_ms(e["ts"] if e else None), _ms(s["ts"])),
                "reason": s["reason"], "end_state": e["new_state"] if e else None,
                "end_event": end_event, "generation_before": generation_before,
                "generation_after": (_coalesce(e["generation"], st["generation"] if st else None)
                                     if end_event is not None else None),
                "members_before": members_before, "members_after": members_after,
                "restarts": len(starts) - 1, "derived_from": "broker"})
    return out


def _coalesce(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


@_cached
def _client_episodes(logs: Any) -> list[Row]:
    """Episodes from the clients' join/sync lines, with `joined_ts`
    (spark.analyses._client_episodes)."""
    c = _client_lines(logs, [REJOIN_REQUESTED, JOIN_SENT, JOINED, SYNCED] + _ASSIGNMENT_APPLIED)
    applied = set(_ASSIGNMENT_APPLIED)
    for part in _partitions(c, "group", "client_id"):
        joined_gen = None
        for r in part:
            if r["event"] == JOINED and r["generation"] is not None:
                joined_gen = r["generation"]
            if r["event"] == SYNCED:
                r["done_gen"] = _coalesce(r["generation"], joined_gen)
            elif r["event"] in applied:
                r["done_gen"] = joined_gen
            else:
                r["done_gen"] = None
    ends: dict[tuple, int] = {}
    for r in c:
        if r["done_gen"] is not None:
            k = (r["group"], r["done_gen"])
            ends[k] = r["ts"] if k not in ends else min(ends[k], r["ts"])
    for part in _partitions(c, "group"):
        following = None
        for r in reversed(part):
            if r["done_gen"] is not None:
                following = r["done_gen"]
            r["next_sync_generation"] = following
    starts: dict[tuple, tuple[Row, Row | None]] = {}
    s_key = lambda r: _key(r["ts"], r["file"], r["line"])                     # noqa: E731
    r_key = lambda r: _key(r["ts"], r["file"], r["line"], r["reason"])          # noqa: E731
    for r in c:
        if r["event"] not in (REJOIN_REQUESTED, JOIN_SENT) or r["next_sync_generation"] is None:
            continue
        k = (r["group"], r["next_sync_generation"])
        if k not in ends or r["ts"] > ends[k]:
            continue
        s, rj = starts.get(k, (r, None))
        if s_key(r) < s_key(s):
            s = r
        if r["event"] == REJOIN_REQUESTED and (rj is None or r_key(r) < r_key(rj)):
            rj = r
        starts[k] = (s, rj)
    joined: dict[tuple, tuple[set, int]] = {}
    for r in c:
        if r["event"] != JOINED or r["generation"] is None:
            continue
        k = (r["group"], r["generation"])
        if k not in ends or r["ts"] > ends[k]:
            continue
        clients, first = joined.get(k, (set(), r["ts"]))
        clients.add(r["client_id"])
        joined[k] = (clients, min(first, r["ts"]))
    out = []
    by_group: dict[str, list[tuple]] = defaultdict(list)
    for k in ends:
        by_group[k[0]].append(k)
    for group, keys in by_group.items():
        prev_gen, prev_members = None, None
        for k in sorted(keys, key=lambda k: _nf(k[1])):
            s, rj = starts.get(k, (None, None))
            members = len(joined[k][0]) if k in joined else None
            start_ts = s["ts"] if s else None
            out.append({
                "group": group, "start_ts": start_ts,
                "joined_ts": joined[k][1] if k in joined else None, "end_ts": ends[k],
                "duration_ms": _minus(_ms(ends[k]), _ms(start_ts)),
                "reason": rj["reason"] if rj else None, "end_state": "Stable",
                "end_event": SYNCED, "generation_before": prev_gen, "generation_after": k[1],
                "members_before": prev_members, "members_after": members, "restarts": None,
                "derived_from": "client"})
            prev_gen, prev_members = k[1], members
    return out


# -- member departures ------------------------------------------------------------------------

_DEPARTURE_COLUMNS = tuple(COLUMN_TYPES["member_departures"])

_POLL_TIMEOUT_TEXT = r"(?i)poll timeout|poll interval|max\.poll|poll expired"
_POLL_TIMEOUT = _re(_POLL_TIMEOUT_TEXT)
_OLD_MEMBER = [_re(r"previously mapped member (\S+?)(?: with|,|\.?\s*$)"),
               _re(r"old member (?:id )?(\S+?) will be removed")]
_INSTANCE_ID = _re(r"(groupInstanceId=[^\s,]+)")
_SESSION_TEXT = _re(r"(?i)session (expired|timeout)")
_REBALANCE_TEXT = _re(r"(?i)failed to transition|rebalance timeout")
_LISTED = _re(r"(?:joined|requests):\s*\[([^\]]*)\]")
_LIST_SEP = _re(r",\s*")


def member_departures(logs: Any) -> Any:
    """One row per member that left a group, with the cause, ordered by time: see
    `spark.analyses.member_departures`."""
    logs = prepare(logs)
    broker = _broker_departures(logs)
    groups = _broker_groups(logs)
    client = [r for r in _client_departures(logs) if r["group"] not in groups]
    rows = broker + client
    rows.sort(key=lambda r: (_nf(r["ts"]), _nf(r["group"]), _nf(r["member"]), _nf(r["cause"]),
                             _nf(r["file"]), _nf(r["line"])))
    return _frame(rows, "member_departures")


_SINGLE_DEPARTURES = {"member_session_expired", "pending_member_expired", "member_left",
                      "pending_member_left", "static_member_replaced", "member_fenced"}


def _broker_departures(logs: Any) -> list[Row]:
    timed = _timed(logs)
    client_poll_leaves = {(r["group"], r["member"]) for r in timed
                          if r["source"] == "client" and r["event"] == "leave_sent"
                          and r["member"] is not None and _rlike(r["reason"], _POLL_TIMEOUT)}
    # KIP-848 (AsyncKafkaConsumer): the client's WARN "Consumer poll timeout has expired" names
    # no member; its member id is the last one its lines printed. The broker's "left the
    # consumer group" line for that member, at most request.timeout.ms (30 s) later, was
    # that leave (spark.analyses._broker_departures: async_poll_timeouts).
    async_poll_timeouts: dict[tuple[str, str], list[int]] = defaultdict(list)
    c_all = []
    for r in timed:
        if r["source"] == "client" and r["group"] is not None:
            row = dict(r)
            row["client_id"] = _coalesce(client_id(r["raw"]), r["file"])
            c_all.append(row)
    for part in _partitions(c_all, "group", "client_id"):
        member_now = None
        for r in part:
            if r["member"] is not None:
                member_now = r["member"]
            if r["event"] == "poll_timeout" and member_now is not None:
                async_poll_timeouts[(r["group"], member_now)].append(_ms(r["ts"]))
    out = []
    for r in timed:
        if r["source"] != "broker" or r["group"] is None:
            continue
        ev, raw = r["event"], r["raw"]
        reason = r["reason"] or ""
        if ev in _SINGLE_DEPARTURES:
            member = _str_from(raw, *_OLD_MEMBER) if ev == "static_member_replaced" \
                else r["member"]
            client_poll = member is not None and (r["group"], member) in client_poll_leaves
            if ev == "member_left" and not client_poll and r["member"] is not None:
                now = _ms(r["ts"])
                client_poll = any(0 <= now - t <= 30_000
                                  for t in async_poll_timeouts.get((r["group"], r["member"]), ()))
            leaving = ev in ("member_left", "pending_member_left")
            if ev in ("member_session_expired", "pending_member_expired"):
                cause = "session_expiry"
            elif leaving and (_rlike(reason, _POLL_TIMEOUT) or client_poll):
                cause = "poll_timeout"
            elif leaving:
                cause = "leave"
            elif ev == "static_member_replaced":
                cause = "fencing"
            elif _rlike(raw, _SESSION_TEXT):
                cause = "session_expiry"
            elif _rlike(raw, _REBALANCE_TEXT):
                cause = "rebalance_timeout"
            else:
                cause = "fencing"
            if ev == "static_member_replaced":
                detail = "replaced by a new member with " + _coalesce(
                    _str_from(raw, _INSTANCE_ID), "the same instance id")
            elif ev in ("pending_member_expired", "pending_member_left"):
                detail = "pending member" + (f"; {r['reason']}" if r["reason"] is not None
                                             else "")
            else:
                detail = r["reason"]
            out.append({"ts": r["ts"], "group": r["group"], "member": member, "cause": cause,
                        "detail": detail, "event": ev, "source": r["source"],
                        "file": r["file"], "line": r["line"]})
        elif ev in ("members_not_rejoined_removed", "sync_expired_members_removed"):
            names = _extract(raw, _LISTED)
            if names is None:
                continue
            detail = ("did not rejoin before the rebalance timeout"
                      if ev == "members_not_rejoined_removed"
                      else "did not send SyncGroup before the rebalance timeout")
            for member in _LIST_SEP.split(names):
                if member != "":
                    out.append({"ts": r["ts"], "group": r["group"], "member": member,
                                "cause": "rebalance_timeout", "detail": detail, "event": ev,
                                "source": r["source"], "file": r["file"], "line": r["line"]})
    return out


def _client_departures(logs: Any) -> list[Row]:
    events = ["leave_sent", "join_failed_fenced", "sync_failed_fenced", "heartbeat_failed_reset",
              "generation_reset", JOINED, SYNCED]
    c = _client_lines(logs, events)
    out = []
    for part in _partitions(c, "group", "client_id"):
        member_now = None
        for r in part:
            if r["member"] is not None:
                member_now = r["member"]
            ev = r["event"]
            reason = r["reason"] or ""
            fenced = (ev in ("join_failed_fenced", "sync_failed_fenced")
                      or (ev == "heartbeat_failed_reset" and "FENCED_INSTANCE_ID" in reason))
            unknown = ev == "generation_reset" and "UNKNOWN_MEMBER_ID" in reason
            if not (ev == "leave_sent" or fenced or unknown):
                continue
            cause = ("fencing" if fenced else "unknown_member" if unknown
                     else "poll_timeout" if _rlike(reason, _POLL_TIMEOUT) else "leave")
            out.append({"ts": r["ts"], "group": r["group"],
                        "member": _coalesce(r["member"], member_now), "cause": cause,
                        "detail": r["reason"], "event": ev, "source": r["source"],
                        "file": r["file"], "line": r["line"]})
    return out


# -- heartbeat gaps ---------------------------------------------------------------------------

_GAP_COLUMNS = tuple(COLUMN_TYPES["heartbeat_gaps"])


def heartbeat_gaps(logs: Any, basis: str = "client") -> Any:
    """Time between consecutive heartbeats of each member: see `spark.analyses.heartbeat_gaps`
    (basis "client" or "broker")."""
    return _frame(_heartbeat_gap_rows(prepare(logs), basis), "heartbeat_gaps")


def _heartbeat_gap_rows(logs: Prepared, basis: str) -> list[Row]:
    if basis == "client":
        gaps = _client_heartbeats(logs)
        keys: tuple[str, ...] = ("group", "client_id")
    elif basis == "broker":
        gaps = _broker_heartbeats(logs)
        keys = ("group", "member", "client_id")
    else:
        raise ValueError(f"heartbeat_gaps: basis must be 'client' or 'broker', got {basis!r}")
    out = []
    for part in _partitions(gaps, *keys):
        prev = None
        for r in part:
            out.append({"group": r["group"], "member": r["member"], "client_id": r["client_id"],
                        "ts": r["ts"], "prev_ts": prev, "gap_ms": _minus(_ms(r["ts"]), _ms(prev)),
                        "event": r["event"], "basis": basis, "file": r["file"],
                        "line": r["line"]})
            prev = r["ts"]
    out.sort(key=lambda r: (_nf(r["group"]), _nf(r["member"]), _nf(r["client_id"]),
                            _nf(r["ts"]), _nf(r["file"]), _nf(r["line"])))
    return out


HEARTBEAT_SENT = _known("heartbeat_sent")[0]
_HEARTBEAT_FAILURES = {e for e in EVENT_NAMES if e.startswith("heartbeat_failed")}
# The Java consumer of the consumer group protocol (KIP-848, AsyncKafkaConsumer) logs no line
# when it sends a ConsumerGroupHeartbeat, only its answer at DEBUG: that line is its heartbeat
# trace, one per heartbeat ("ConsumerGroupHeartbeatRequest responded successfully: ...").
_KIP848_HEARTBEAT_OK = "A-HB-OK"


def _is_send(r: Row) -> bool:
    return r["event"] == HEARTBEAT_SENT or (r["event"] == "heartbeat_succeeded"
                                             and r["template"] == _KIP848_HEARTBEAT_OK)


def _client_heartbeats(logs: Any) -> list[Row]:
    c = []
    for r in _timed(logs):
        if r["source"] != "client" or r["group"] is None:
            continue
        if not (_is_send(r) or r["event"] in _HEARTBEAT_FAILURES
                or r["member"] is not None):
            continue
        row = dict(r)
        row["client_id"] = _coalesce(client_id(r["raw"]), r["thread"], r["file"])
        c.append(row)
    out = []
    for part in _partitions(c, "group", "client_id"):
        has_sends = any(_is_send(r) for r in part)
        member_now = None
        for r in part:
            if r["member"] is not None:
                member_now = r["member"]
            is_send = _is_send(r)
            if is_send or (r["event"] in _HEARTBEAT_FAILURES and not has_sends):
                out.append({"group": r["group"], "member": member_now,
                            "client_id": r["client_id"], "ts": r["ts"], "file": r["file"],
                            "line": r["line"], "event": r["event"]})
    return out


_SESSION_ENDS = set(_known("member_session_expired", "pending_member_expired", "member_left",
                           "pending_member_left", "member_fenced"))
# a classic group's session timer is heartbeat-<group>-<member>; a consumer group's (KIP-848)
# session-timeout-<group>-<member> (consumerGroupSessionTimeoutKey)
_TIMER_KEY = _re(r"timer ((?:heartbeat|session-timeout)-\S+) with delay")


def _broker_heartbeats(logs: Any) -> list[Row]:
    timed = _timed(logs)
    pairs: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for group, member in dict.fromkeys((r["group"], r["member"]) for r in timed
                                       if r["group"] is not None and r["member"] is not None):
        for prefix in ("heartbeat-", "session-timeout-"):
            pairs[f"{prefix}{group}-{member}"].append((group, member))
    out = []
    for r in timed:
        if r["source"] != "broker":
            continue
        if r["event"] == TIMER_REGISTERED:
            key = _extract(r["raw"], _TIMER_KEY)
            for group, member in pairs.get(key or "", ()):
                out.append({"group": group, "member": member, "ts": r["ts"], "file": r["file"],
                            "line": r["line"], "event": r["event"], "client_id": None})
        elif (r["event"] in _SESSION_ENDS and r["group"] is not None
              and r["member"] is not None):
            out.append({"group": r["group"], "member": r["member"], "ts": r["ts"],
                        "file": r["file"], "line": r["line"], "event": r["event"],
                        "client_id": None})
    return out


def heartbeat_gap_summary(gaps: Any) -> Any:
    """Per member: number of gaps, longest and mean gap (ms), and when the longest ended
    (`spark.analyses.heartbeat_gap_summary`); `gaps` is `heartbeat_gaps`' DataFrame."""
    cols = [c for c in _GAP_COLUMNS if c != "ts"]
    stamps = gaps["ts"].to_numpy(dtype="datetime64[ns]")
    ts = [None if missing else int(t) // 1000
          for t, missing in zip(stamps.view("int64"), gaps["ts"].isna())]
    rows = [{**{c: _none(v) for c, v in zip(cols, values)}, "ts": t}
            for values, t in zip(gaps[cols].itertuples(index=False, name=None), ts)]
    return _frame(_gap_summary_rows(rows), "heartbeat_gap_summary")


def _gap_summary_rows(gaps: list[Row]) -> list[Row]:
    agg: dict[tuple, list[Row]] = defaultdict(list)
    for r in gaps:
        if r["gap_ms"] is not None:
            agg[(r["group"], r["member"], r["client_id"], r["basis"])].append(r)
    out = []
    for (group, member, cid, basis), rows in agg.items():
        values = [r["gap_ms"] for r in rows]
        ts = [r["ts"] for r in rows]
        longest = max(range(len(rows)), key=lambda i: _key(values[i], ts[i]))
        out.append({"group": group, "member": member, "client_id": cid, "basis": basis,
                    "gaps": len(rows), "max_gap_ms": max(values),
                    "mean_gap_ms": _round_half_up(sum(values) / len(values), 1),
                    "max_gap_ended": ts[longest]})
    out.sort(key=lambda r: (_nf(r["group"]), _nf(r["member"]), _nf(r["client_id"])))
    return out


def _round_half_up(x: float, digits: int) -> float:
    """Spark's `round` of a double: HALF_UP on the double's shortest decimal form."""
    if x != x or x in (float("inf"), float("-inf")):
        return x
    return float(Decimal(repr(x)).quantize(Decimal(1).scaleb(-digits), ROUND_HALF_UP))


# -- coordinator loads and unloads ------------------------------------------------------------

_LOAD_COLUMNS = tuple(COLUMN_TYPES["coordinator_loads"])


def coordinator_loads(logs: Any) -> Any:
    """One row per load or unload of a `__consumer_offsets` partition by a broker: see
    `spark.analyses.coordinator_loads`."""
    return _frame(_coordinator_load_rows(prepare(logs)), "coordinator_loads")


def _coordinator_load_rows(logs: Prepared) -> list[Row]:
    events = {LOAD_SCHEDULED, UNLOAD_SCHEDULED, UNLOAD_STARTED} | set(_LOAD_OUTCOMES)
    x = []
    for r in _timed(logs):
        if r["source"] == "broker" and r["event"] in events:
            row = dict(r)
            row["broker"] = broker_id(r["raw"])
            row["operation"] = "unload" if r["event"].startswith("unload") else "load"
            row["outcome"] = _LOAD_OUTCOMES.get(r["event"])
            x.append(row)
    e_key = lambda r: _key(r["ts"], r["file"], r["line"], r["event"], r["outcome"],   # noqa
                           r["epoch"], r["duration_ms"], r["reason"])
    attempts = []
    for part in _partitions(x, "broker", "partition", "operation"):
        current: dict[str, Any] | None = None
        for r in part:
            is_sched = r["event"] in (LOAD_SCHEDULED, UNLOAD_SCHEDULED)
            is_end = r["event"] in _LOAD_OUTCOMES
            if is_sched:
                current = {"row": r, "s": r, "started_ts": None, "e": None}
                attempts.append(current)
            elif current is None:           # attempt 0: before any scheduling line
                if is_end:
                    attempts.append({"row": r, "s": None, "started_ts": None, "e": r})
                continue
            if r["event"] == UNLOAD_STARTED:
                current["started_ts"] = (r["ts"] if current["started_ts"] is None
                                         else min(current["started_ts"], r["ts"]))
            if is_end and (current["e"] is None or e_key(r) < e_key(current["e"])):
                current["e"] = r
    out = []
    for a in attempts:
        s, e, first = a["s"], a["e"], a["row"]
        elapsed = _minus(_ms(e["ts"] if e else None), _ms(s["ts"] if s else None))
        out.append({
            "partition": first["partition"], "broker": first["broker"],
            "operation": first["operation"],
            "epoch": _coalesce(s["epoch"] if s else None, e["epoch"] if e else None),
            "scheduled_ts": s["ts"] if s else None, "started_ts": a["started_ts"],
            "finished_ts": e["ts"] if e else None, "outcome": e["outcome"] if e else None,
            "end_event": e["event"] if e else None,
            "duration_ms": _coalesce(e["duration_ms"] if e else None, elapsed),
            "elapsed_ms": elapsed, "detail": e["reason"] if e else None,
            "_file": first["file"], "_line": first["line"]})
    out.sort(key=lambda r: (_nl(r["partition"]), _nf(_coalesce(r["scheduled_ts"],
                                                                r["finished_ts"])),
                            _nl(r["broker"]), _nf(r["operation"]), _nf(r["_file"]),
                            _nf(r["_line"])))
    return out


# -- group-state timeline ---------------------------------------------------------------------

_TIMELINE_COLUMNS = tuple(COLUMN_TYPES["group_state_timeline"])


def group_state_timeline(logs: Any) -> Any:
    """One row per (group, state, from_ts, to_ts): see `spark.analyses.group_state_timeline`."""
    return _frame(_timeline_rows(prepare(logs)), "group_state_timeline")


def _timeline_rows(logs: Prepared) -> list[Row]:
    g = [r for r in _group_lines(logs) if r["new_state"] is not None]
    obs = []
    for part in _partitions(g, "group"):
        gen_now = None
        for r in part:
            if r["generation"] is not None:
                gen_now = r["generation"]
            obs.append({"group": r["group"], "ts": r["ts"], "file": r["file"], "line": r["line"],
                        "state": r["new_state"], "generation": gen_now,
                        "derived_from": "broker"})
    groups = _broker_groups(logs)
    ep = [r for r in _client_episodes(logs) if r["group"] not in groups]
    for step, (ts_col, state, gen) in enumerate((
            ("start_ts", "PreparingRebalance", "generation_before"),
            ("joined_ts", "CompletingRebalance", "generation_after"),
            ("end_ts", "Stable", "generation_after"))):
        for r in ep:
            if r[ts_col] is not None:
                obs.append({"group": r["group"], "ts": r[ts_col], "file": None, "line": step,
                            "state": state, "generation": r[gen], "derived_from": "client"})
    for r in _cg_changes(logs):
        obs.append({"group": r["group"], "ts": r["ts"], "file": r["file"], "line": r["line"],
                    "state": r["state"], "generation": r["epoch"],
                    "derived_from": r["derived_from"]})
    out = []
    for part in _partitions(obs, "group"):
        prev_state = None
        changes = []
        for i, r in enumerate(part):
            if i == 0 or prev_state != r["state"]:
                changes.append(r)
            prev_state = r["state"]
        for i, r in enumerate(changes):
            to_ts = changes[i + 1]["ts"] if i + 1 < len(changes) else None
            out.append({"group": r["group"], "state": r["state"], "from_ts": r["ts"],
                        "to_ts": to_ts, "duration_ms": _minus(_ms(to_ts), _ms(r["ts"])),
                        "generation": r["generation"], "derived_from": r["derived_from"],
                        "_file": r["file"], "_line": r["line"]})
    out.sort(key=lambda r: (_nf(r["group"]), _nf(r["from_ts"]), _nf(r["_file"]),
                            _nf(r["_line"])))
    return out


# -- consumer groups (KIP-848) ----------------------------------------------------------------

# Kafka's consumer group states (ConsumerGroup.ConsumerGroupState, as it prints them).
CONSUMER_GROUP_STATES = ("Empty", "Assigning", "Reconciling", "Stable", "Dead")
# The lines a consumer group's state is derived from (spark.analyses._CG_EVENTS).
_CG_EVENTS = ("member_joined", "group_epoch_bumped", "target_assignment_computed",
              "member_assignment_updated", "member_left", "member_fenced",
              "member_state_changed")


def _cg_lines(logs: Any) -> list[Row]:
    """The lines of groups whose coordinator logs consumer-group (CG-) lines: those broker
    lines, and the clients' "transitioned from X to Y" lines of the same groups unless the
    coordinator logs its own view of the members (DEBUG "new assignment state")
    (spark.analyses._cg_lines)."""
    rows = [r for r in _timed(logs) if r["group"] is not None and r["event"] in _CG_EVENTS]
    groups = {r["group"] for r in rows
              if r["source"] == "broker" and (r["template"] or "").startswith("CG-")}
    debug = {r["group"] for r in rows if r["source"] == "broker"
             and r["event"] == "member_assignment_updated"
             and (r["template"] or "").startswith("CG-")}
    return [{**r, "derived_from": "broker" if r["group"] in debug else "broker+client"}
            for r in rows if r["group"] in groups
            and ((r["source"] == "broker" and (r["template"] or "").startswith("CG-"))
                 or (r["source"] == "client" and r["event"] == "member_state_changed"
                     and r["group"] not in debug))]


@_cached
def _cg_changes(logs: Any) -> list[Row]:
    """Each consumer group's state changes (spark.analyses._cg_changes): one row per line
    that moves the group, with the group epoch before and after, the member count and the
    membership line that caused the move."""
    out = []
    for part in _partitions(_cg_lines(logs), "group"):
        members: dict[str, bool] = {}   # member id -> reconciled to the current target
        group_epoch = target_epoch = 0
        state = None
        cause = None
        n_before = 0    # the member count before the last membership line
        for r in part:
            event, member = r["event"], r["member"]
            epoch_before = group_epoch
            derive = True
            if event == "member_joined":
                n_before = len(members)
                members[member] = False
                cause = f"member_joined {member}"
                derive = False      # its epoch bump is written with it
            elif event == "group_epoch_bumped":
                group_epoch = r["epoch"] if r["epoch"] is not None else group_epoch
            elif event == "target_assignment_computed":
                target_epoch = r["epoch"] if r["epoch"] is not None else target_epoch
                members = {m: False for m in members}
            elif event in ("member_left", "member_fenced"):
                n_before = len(members)
                members.pop(member, None)
                group_epoch += 1
                cause = f"{event} {member}"
            elif member not in members:     # a member's line before it joined or after it left
                continue
            elif event == "member_assignment_updated":      # the coordinator's DEBUG line
                members[member] = r["state"] == "STABLE" and r["epoch"] == target_epoch
            else:                                           # a client's transition
                members[member] = r["state"] == "STABLE"
            if not derive:
                continue
            if not members:
                new = "Empty"
            elif group_epoch > target_epoch:
                new = "Assigning"
            elif all(members.values()):
                new = "Stable"
            else:
                new = "Reconciling"
            if new != state:
                out.append({"group": r["group"], "ts": r["ts"], "file": r["file"],
                            "line": r["line"], "state": new, "event": event,
                            "epoch_before": epoch_before, "epoch": group_epoch,
                            "members_before": n_before, "members": len(members),
                            "cause": cause, "derived_from": r["derived_from"]})
                state = new
    return out


def _cg_episode_rows(logs: Any) -> list[Row]:
    """Consumer-group episodes (spark.analyses._cg_episodes): a move to Assigning opens one
    when the group was Stable or Empty since the previous move to Assigning (else it restarts
    the open one); it ends at its last move to Stable before the next one opens or the group
    goes Empty, or at that move to Empty when it was never Stable."""
    out = []
    for part in _partitions(_cg_changes(logs), "group"):
        episodes: list[list[Row]] = []
        settled_since_assign = True
        closed = True
        for r in part:
            if r["state"] == "Assigning":
                if settled_since_assign:
                    episodes.append([])
                    closed = False
                settled_since_assign = False
            elif r["state"] in ("Stable", "Empty"):
                settled_since_assign = True
            if not closed:
                episodes[-1].append(r)
                closed = r["state"] == "Empty"
        for ep in episodes:
            s = ep[0]
            stable = [r for r in ep if r["state"] == "Stable"]
            empty = [r for r in ep if r["state"] == "Empty"]
            e = stable[-1] if stable else empty[0] if empty else None
            out.append({
                "group": s["group"], "start_ts": s["ts"], "end_ts": e and e["ts"],
                "duration_ms": _minus(_ms(e and e["ts"]), _ms(s["ts"])),
                "reason": s["cause"], "end_state": e and e["state"],
                "end_event": e and e["event"], "generation_before": s["epoch_before"],
                "generation_after": e and e["epoch"], "members_before": s["members_before"],
                "members_after": e and e["members"],
                "restarts": sum(r["state"] == "Assigning" for r in ep) - 1,
                "derived_from": s["derived_from"]})
    return out


# -- text as Spark casts it -------------------------------------------------------------------

def java_double_string(x: float) -> str:
    """A double as Spark's `cast(... as string)` prints it (Java's Double.toString):
    "3000.0", "0.5", "1.0E7", "1.25E-4", "NaN", "Infinity"."""
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if str(x).startswith("-") else "0.0"
    if 1e-3 <= abs(x) < 1e7:
        text = repr(x)
        return text if "e" not in text else format(Decimal(text), "f")
    sign, digits, exp = Decimal(repr(x)).normalize().as_tuple()
    ds = "".join(map(str, digits))
    power = len(ds) - 1 + int(exp)
    mantissa = ds[0] + "." + (ds[1:] or "0")
    return ("-" if sign else "") + f"{mantissa}E{power}"


# name -> (function, what it answers), in the order `logs report` prints them (as
# spark.analyses.ANALYSES).
ANALYSES: dict[str, tuple[Callable[..., Any], str]] = {
    "rebalance_episodes": (rebalance_episodes, "Rebalance episodes per group"),
    "member_departures": (member_departures, "Member departures by cause"),
    "heartbeat_gaps": (heartbeat_gaps, "Heartbeat gaps per member"),
    "coordinator_loads": (coordinator_loads, "Coordinator loads and unloads per partition"),
    "group_state_timeline": (group_state_timeline, "Group state timeline"),
}
