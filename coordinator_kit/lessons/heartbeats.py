"""Notebook 01, heartbeats and session timeouts: seeded runs, the views its cells print, and the
checks of its exercises.

Three timers keep a classic consumer in its group (Kafka's client-side `Heartbeat`, and the
coordinator's session timer):

* ``heartbeat.interval.ms`` (client): how often the heartbeat thread sends a Heartbeat;
* ``session.timeout.ms`` (broker): the coordinator's timer ``heartbeat-<group>-<member>``; when
  it fires the member "has failed" and is removed. Heartbeats re-arm it, and so do offset commits
  while the group is Stable or PreparingRebalance (Kafka's ``OffsetMetadataManager``);
* ``max.poll.interval.ms`` (client): the longest gap between two ``poll()`` calls; when it runs
  out the heartbeat thread makes the member leave. It is also the rebalance timeout the consumer
  sends in JoinGroup, and it stretches the JoinGroup request timeout to
  ``max(request.timeout.ms, max.poll.interval.ms + 5000)``.

The first half of the module holds display pieces every lesson uses (`Table`, `LogView`,
`Feedback`, `LessonRun`); the second half is this lesson's runs and checks. Every run is a
function of its arguments and a seed, so a notebook cell prints the same thing on every machine.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from functools import lru_cache
from typing import Any

from ..client.config import ConsumerConfig
from ..client.member import MemberState
from ..cluster import Cluster
from ..errors import Errors
from ..feedback import Feedback, not_answered
from ..logs.layout import DEFAULT_START
from ..scenarios import new_cluster
from ..trace import TraceEvent

__all__ = [
    # shared display pieces
    "Table", "LogView", "Feedback", "LessonRun", "Picture", "clock", "short_id", "unanswered",
    "not_answered",
    "timeline", "rebalance_chart", "rebalance_table", "branches_table",
    "member_table", "group_table", "member_ids", "listener_table",
    # this lesson
    "GROUP", "three_timers", "timers_now", "session_timer_rearms", "session_timer_summary",
    "stable_group", "gc_pause", "join_wait",
    "crash", "dropped_heartbeats", "slow_processing", "lost_join_group", "outcome_table",
    "check_expiry_time", "check_session_config", "check_auto_commit_interval",
    "check_join_timeout",
]

GROUP = "group-1"

# ---------------------------------------------------------------------------------------------
# Display pieces shared by the lessons
# ---------------------------------------------------------------------------------------------


def clock(ms: int) -> str:
    """A virtual time as the log lines show it: ``09:01:03,103`` (HH:MM:SS,mmm)."""
    t = DEFAULT_START + timedelta(milliseconds=ms)
    return f"{t:%H:%M:%S},{t.microsecond // 1000:03d}"


_UUID_TAIL = re.compile(r"^(.*-[0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def short_id(member_id: str | None) -> str:
    """``consumer-1-2ccb1916-8855-...`` -> ``consumer-1-2ccb1916`` (tables only; logs keep it)."""
    if not member_id:
        return "-"
    m = _UUID_TAIL.match(member_id)
    return m.group(1) if m else member_id


def unanswered(answer: Any) -> bool:
    """An exercise's placeholder: ``...`` (or None) means the learner has not answered yet."""
    return answer is Ellipsis or answer is None


class Table:
    """Rows shown as a fixed-width text table (text/plain) and an HTML table (text/html).

    Both renderings depend only on the rows, so nbval can compare them.
    """

    def __init__(self, rows: Iterable[Mapping[str, Any]], columns: Sequence[str] | None = None,
                 title: str | None = None) -> None:
        self.rows = [dict(r) for r in rows]
        if columns is None:
            columns = list(dict.fromkeys(k for r in self.rows for k in r))
        self.columns = list(columns)
        self.title = title

    def column(self, name: str) -> list[Any]:
        if name not in self.columns:
            raise KeyError(f"no column {name!r}; columns: {', '.join(self.columns)}")
        return [r.get(name) for r in self.rows]

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Any:
        return iter(self.rows)

    @staticmethod
    def _cell(value: Any) -> str:
        if value is None:
            return "-"
        if isinstance(value, (list, tuple)):
            return ", ".join(str(v) for v in value) or "-"
        return str(value)

    def __repr__(self) -> str:
        cells = [[self._cell(r.get(c)) for c in self.columns] for r in self.rows]
        widths = [max([len(c)] + [len(row[i]) for row in cells])
                  for i, c in enumerate(self.columns)]
        lines = [self.title] if self.title else []
        lines.append("  ".join(c.ljust(w) for c, w in zip(self.columns, widths)).rstrip())
        lines.append("  ".join("-" * w for w in widths))
        lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in cells]
        if not self.rows:
            lines.append("(no rows)")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        head = "".join(f"<th style='text-align:left'>{html.escape(c)}</th>"
                       for c in self.columns)
        body = "".join(
            "<tr>" + "".join(f"<td style='text-align:left'>{html.escape(self._cell(r.get(c)))}"
                             f"</td>" for c in self.columns) + "</tr>" for r in self.rows)
        caption = f"<caption style='text-align:left'><b>{html.escape(self.title)}</b></caption>" \
            if self.title else ""
        return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


class LogView:
    """Kafka-format log lines; shown one per line (long lines wrap in the notebook)."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = list(lines)

    def __len__(self) -> int:
        return len(self.lines)

    def __iter__(self) -> Any:
        return iter(self.lines)

    def __contains__(self, text: str) -> bool:
        return any(text in line for line in self.lines)

    def __repr__(self) -> str:
        return "\n".join(self.lines) if self.lines else "(no log lines)"


class Picture:
    """An SVG figure for a notebook cell, shown as `text/html` (an `<img>` holding the SVG as a
    base64 data URL) with its title as `text/plain`.

    Why an `<img>`: JupyterLab shows the `image/svg+xml` of an untrusted notebook (a stored
    output, before any cell runs) as text, but renders `text/html`, whose sanitizer keeps an
    `<img>` with a data URL (as `coordinator_kit.viz.diagrams.Diagram` does). The SVG comes from
    `coordinator_kit.viz.plots.figure_svg` (no date, fixed ids, text kept as text), so the same
    run draws the same bytes and nbval can compare them; `svg` holds it.
    """

    def __init__(self, svg: str, title: str) -> None:
        start = svg.find("<svg")
        if start < 0:
            raise ValueError("Picture needs SVG text containing an <svg> element")
        self.svg = svg[start:]
        self.title = title

    def html(self) -> str:
        """The `<img>` a notebook shows: at most the output area's width, proportions kept."""
        data = base64.b64encode(self.svg.encode("utf-8")).decode("ascii")
        title = html.escape(self.title)
        return (f'<img src="data:image/svg+xml;base64,{data}" alt="{title}" title="{title}" '
                f'style="max-width:100%;height:auto">')

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/html": self.html(), "text/plain": repr(self)}

    def __repr__(self) -> str:
        return f"<picture: {self.title}>"


def member_ids(cluster: Cluster, client: str) -> list[str]:
    """Every member id `client` has held so far, oldest first (a rejoin after a reset gets a
    new one)."""
    source = f"client-{client}"
    seen: dict[str, None] = {}
    for e in cluster.trace.events:
        if e.source == source and e.kind == "member_state" and e.fields.get("member"):
            seen[e.fields["member"]] = None
    consumer = cluster.consumers.get(client)
    if consumer is not None and consumer.member_id:
        seen[consumer.member_id] = None
    return list(seen)


def member_table(cluster: Cluster) -> Table:
    """What each consumer believes: its state, generation, member id and partitions."""
    rows = []
    for c in cluster.consumers.values():
        d = c.describe()
        status = "crashed" if c.crashed else "paused" if d["paused"] else \
            "running" if c.running else "stopped"
        rows.append({"client": d["client"], "process": status, "state": d["state"],
                     "generation": d["generation"], "member id": short_id(d["member_id"]),
                     "partitions": [p.split("-")[-1] for p in sorted(
                         d["assignment"], key=lambda s: (s.rsplit("-", 1)[0],
                                                         int(s.rsplit("-", 1)[1])))]})
    return Table(rows, ["client", "process", "state", "generation", "member id", "partitions"],
                 title="consumers (client side)")


def group_table(cluster: Cluster, group_id: str = GROUP) -> Table:
    """The group as its coordinator holds it: state, generation, protocol, leader, members."""
    g = cluster.group(group_id)
    row = {"group": group_id, "coordinator": cluster.coordinator_for(group_id),
           "state": g.get("state"), "generation": g.get("generation"),
           "protocol": g.get("protocol"), "leader": short_id(g.get("leader")),
           "members": [short_id(m) for m in g.get("members", [])]}
    return Table([row], ["group", "coordinator", "state", "generation", "protocol", "leader",
                         "members"], title="group (coordinator side)")


def listener_table(cluster: Cluster, *, since_ms: int = 0, clients: Sequence[str] | None = None
                   ) -> Table:
    """The rebalance-listener callbacks the applications saw, in time order."""
    rows = []
    for c in cluster.consumers.values():
        if clients is not None and c.name not in clients:
            continue
        for call in c.listener_calls:
            if call.ts >= since_ms:
                rows.append({"at": clock(call.ts), "_ts": call.ts, "client": c.name,
                             "callback": call.callback, "generation": call.generation,
                             "partitions": [str(tp) for tp in call.partitions]})
    rows.sort(key=lambda r: (r["_ts"], r["client"]))
    return Table(rows, ["at", "client", "callback", "generation", "partitions"],
                 title="rebalance listener callbacks")


_SOURCES = {"broker": "broker-", "brokers": "broker-", "consumers": "client-"}


@dataclass
class LessonRun:
    """A finished, seeded run: the cluster, and where in its trace the interesting part starts."""

    cluster: Cluster
    since: int
    start_ms: int
    notes: dict[str, Any] = field(default_factory=dict)

    def events(self, *kinds: str) -> list[TraceEvent]:
        """Trace events since the interesting part, optionally of some kinds only."""
        evs = self.cluster.trace.events[self.since:]
        return [e for e in evs if not kinds or e.kind in kinds]

    def log(self, level: str = "INFO", *, who: str | None = None,
            contains: str | Sequence[str] | None = None, limit: int | None = None,
            since_ms: int | None = None, until_ms: int | None = None) -> LogView:
        """Log lines since the run's mark (or from `since_ms` to `until_ms` of virtual time).

        `who`: "broker", "consumers" or a client name; `contains`: keep lines with (any of)
        these texts; `limit`: the first n lines.
        """
        source = None
        prefix = None
        if who is not None:
            if who in _SOURCES:
                prefix = _SOURCES[who]
            elif who in self.cluster.consumers:
                source = f"client-{who}"
            else:
                raise ValueError(f"who={who!r}: use 'broker', 'consumers' or one of the clients "
                                 f"{sorted(self.cluster.consumers)}")
        wanted = [contains] if isinstance(contains, str) else list(contains or [])
        threshold = _level(level)
        trace = self.cluster.trace
        events = trace.events[self.since:] if since_ms is None else trace.events
        lines = []
        for e in events:
            if since_ms is not None and e.ts < since_ms:
                continue
            if until_ms is not None and e.ts > until_ms:
                break
            if e.message is None or _level(e.level) < threshold:
                continue
            if source is not None and e.source != source:
                continue
            if prefix is not None and not e.source.startswith(prefix):
                continue
            line = e.line(trace.start) or ""
            if wanted and not any(w in line for w in wanted):
                continue
            lines.append(line)
        return LogView(lines[:limit] if limit is not None else lines)

    def members(self) -> Table:
        return member_table(self.cluster)

    def group(self) -> Table:
        return group_table(self.cluster)

    def removed_at(self, client: str) -> int | None:
        """When the coordinator removed one of `client`'s member ids after `since` (session
        expiry or LeaveGroup), or None."""
        ids = set(member_ids(self.cluster, client))
        for e in self.events("member_session_expired", "member_left"):
            if e.fields.get("member") in ids:
                return e.ts
        return None

    def expired_at(self, client: str) -> int | None:
        """When the coordinator logged "has failed" for one of `client`'s member ids."""
        ids = set(member_ids(self.cluster, client))
        for e in self.events("member_session_expired"):
            if e.fields.get("member") in ids:
                return e.ts
        return None


def _trace_of(source: Any) -> Any:
    cluster = getattr(source, "cluster", source)
    return getattr(cluster, "trace", cluster)


def timeline(source: Any, *, start_ms: int | None = None, end_ms: int | None = None,
             members: Sequence[str] | None = None, title: str | None = None) -> Picture:
    """Swimlanes of the group's and each member's state over virtual time (a run or cluster)."""
    from ..viz.plots import figure_svg, swimlanes

    title = title or "member states over virtual time"
    fig = swimlanes(_trace_of(source), members=members, start_ms=start_ms, end_ms=end_ms,
                    title=title)
    return Picture(figure_svg(fig), title)


def rebalance_chart(source: Any, *, title: str | None = None) -> Picture:
    """One bar per rebalance of group-1: PreparingRebalance to Stable, in virtual ms."""
    from ..viz.plots import figure_svg, rebalance_durations

    title = title or "rebalance durations"
    return Picture(figure_svg(rebalance_durations(_trace_of(source), GROUP, title=title)), title)


def rebalance_table(source: Any, *, since_ms: int = 0) -> Table:
    """Every rebalance of group-1 that started at or after `since_ms`, with its duration."""
    from ..viz.plots import rebalances

    rows = [{"generation": r.generation, "started": clock(r.start_ms),
             "ended": None if r.end_ms is None else clock(r.end_ms),
             "duration (ms)": r.duration_ms, "ended as": r.outcome, "members": r.members}
            for r in rebalances(_trace_of(source), GROUP) if r.start_ms >= since_ms]
    return Table(rows, ["generation", "started", "ended", "duration (ms)", "ended as",
                        "members"], title="rebalances of group-1")


def branches_table(source: Any, at_ms: int, client: str = "consumer-1",
                   group_id: str = GROUP) -> Table:
    """Every branch of a recording (a `Recording`, or a control panel's) at virtual time
    `at_ms`: what was done in it, the group as its coordinator holds it, and what `client`
    believes. The text form of the panel's Compare tab, for all branches at once.

    Each branch is rebuilt on a copy (`Recording.cluster_at`): the live cluster does not move.
    """
    recording = getattr(source, "recording", source)
    if not hasattr(recording, "branches") or not hasattr(recording, "cluster_at"):
        raise TypeError(f"branches_table needs a Recording or a ControlPanel, got "
                        f"{type(source).__name__}")
    rows = []
    for name, branch in recording.branches.items():
        if at_ms > branch.frontier.time:
            raise ValueError(f"branch {name!r} is computed to {branch.frontier.time:,} ms, not "
                             f"{at_ms:,}: advance it first")
        cluster = recording.cluster_at(name, at_ms)
        group = cluster.group(group_id)
        c = cluster.consumer(client)
        process = "crashed" if c.crashed else "paused" if c.describe()["paused"] else \
            "running" if c.running else "stopped"
        rows.append({"branch": name,
                     "actions": [f"{clock(a.position.time)} {a.name}"
                                 f"({', '.join(map(str, a.args))})" for a in branch.actions],
                     "group state": group.get("state"), "generation": group.get("generation"),
                     "members": len(group.get("members", [])),
                     f"{client}": f"{c.state.name} ({process})",
                     f"{client} generation": c.generation.generation_id})
    return Table(rows, ["branch", "actions", "group state", "generation", "members", client,
                        f"{client} generation"],
                 title=f"every branch at {clock(at_ms)} ({at_ms:,} ms)")


def _level(name: str) -> int:
    from ..logs.layout import level_number

    return level_number(name)


# ---------------------------------------------------------------------------------------------
# Lesson 01: the three timers
# ---------------------------------------------------------------------------------------------


def three_timers(config: ConsumerConfig | None = None) -> Table:
    """The three timers of a classic consumer, with the values `config` gives them."""
    cfg = config or ConsumerConfig(group_id=GROUP)
    join_timeout = max(cfg.request_timeout_ms, cfg.max_poll_interval_ms + 5000)
    rows = [
        {"config": "heartbeat.interval.ms", "value (ms)": cfg.heartbeat_interval_ms,
         "who runs it": "consumer: heartbeat thread",
         "when it runs out": "send a Heartbeat to the coordinator"},
        {"config": "session.timeout.ms", "value (ms)": cfg.session_timeout_ms,
         "who runs it": "coordinator: timer heartbeat-<group>-<member>",
         "when it runs out": "\"has failed, removing it from the group\" -> rebalance"},
        {"config": "session.timeout.ms", "value (ms)": cfg.session_timeout_ms,
         "who runs it": "consumer: heartbeat thread",
         "when it runs out": "no heartbeat answer: mark the coordinator unknown, rediscover"},
        {"config": "max.poll.interval.ms", "value (ms)": cfg.max_poll_interval_ms,
         "who runs it": "consumer: heartbeat thread watches poll()",
         "when it runs out": "\"consumer poll timeout has expired\" -> LeaveGroup"},
        {"config": "max.poll.interval.ms", "value (ms)": cfg.max_poll_interval_ms,
         "who runs it": "coordinator: timer join-<group> (rebalance timeout)",
         "when it runs out": "members that did not rejoin are removed"},
        {"config": "max(request.timeout.ms, max.poll.interval.ms + 5000)",
         "value (ms)": join_timeout, "who runs it": "consumer: JoinGroup request",
         "when it runs out": "REQUEST_TIMED_OUT: mark the coordinator unknown, retry"},
    ]
    return Table(rows, ["config", "value (ms)", "who runs it", "when it runs out"],
                 title="the timers of a classic consumer")


def _broker_session_deadline(cluster: Cluster, member_id: str,
                             group_id: str = GROUP) -> int | None:
    b = cluster.coordinator_for(group_id)
    if b is None:
        return None
    ctx = cluster.brokers[b].runtime.context(cluster.partition_of(group_id))
    if ctx is None:
        return None
    return ctx.timer.deadline(f"heartbeat-{group_id}-{member_id}")


def timers_now(cluster: Cluster, client: str) -> Table:
    """Where each of `client`'s timers stands right now, on both sides."""
    c = cluster.consumer(client)
    cfg = c.config
    now = cluster.scheduler.now
    broker = _broker_session_deadline(cluster, c.member_id, cfg.group_id) \
        if c.member_id else None
    rows = [
        {"timer": "next heartbeat (client)", "started": clock(c.last_heartbeat_sent),
         "runs out": clock(c.last_heartbeat_sent + cfg.heartbeat_interval_ms)},
        {"timer": "session (client: last heartbeat answer)",
         "started": clock(c.last_heartbeat_received),
         "runs out": clock(c.last_heartbeat_received + cfg.session_timeout_ms)},
        {"timer": "poll (client: last poll())", "started": clock(c.last_poll),
         "runs out": clock(c.last_poll + cfg.max_poll_interval_ms)},
        {"timer": f"heartbeat-{cfg.group_id}-{short_id(c.member_id)} (coordinator)",
         "started": None if broker is None else clock(broker - cfg.session_timeout_ms),
         "runs out": None if broker is None else clock(broker)},
    ]
    return Table(rows, ["timer", "started", "runs out"],
                 title=f"{client} at {clock(now)}")


_OPS = {"classic-group-heartbeat": "Heartbeat", "commit-offset": "OffsetCommit",
        "classic-group-join": "JoinGroup", "classic-group-sync": "SyncGroup",
        "classic-group-leave": "LeaveGroup",
        # the leader's assignment record committed: the group turns Stable, timers re-armed
        "HighWatermarkUpdate": "SyncGroup (assignment committed)"}


_TIMEOUT_KEY = re.compile(r"key=([^)]+)\)")


def _operation(event_name: str) -> str:
    """A coordinator event's name as a learner knows it: the request, or the timer that fired."""
    if event_name.startswith("Timeout("):
        m = _TIMEOUT_KEY.search(event_name)
        return f"timer {m.group(1) if m else event_name} fired"
    return _OPS.get(event_name, event_name)


def session_timer_rearms(run: LessonRun, client: str, *, since_ms: int | None = None,
                         until_ms: int | None = None) -> Table:
    """Each time the coordinator (re)armed `client`'s session timer between `since_ms` (default:
    the run's mark) and `until_ms`, and the request that did it (Heartbeat, OffsetCommit...)."""
    since_ms = run.start_ms if since_ms is None else since_ms
    keys = {f"heartbeat-{GROUP}-{m}": m for m in member_ids(run.cluster, client)}
    last_op: dict[str, str] = {}
    rows = []
    for e in run.cluster.trace.events:
        if until_ms is not None and e.ts > until_ms:
            break
        if e.kind == "event_executed":
            last_op[e.source] = _operation(getattr(e.fields.get("event"), "name", ""))
        elif e.kind == "timer_registered" and e.ts >= since_ms:
            member = keys.get(str(e.fields.get("key", "")))
            if member is not None:
                delay = int(e.fields["delay_ms"])
                rows.append({"at": clock(e.ts), "request": last_op.get(e.source, "?"),
                             "member id": short_id(member), "delay (ms)": delay,
                             "expires at": clock(e.ts + delay)})
    return Table(rows, ["at", "request", "member id", "delay (ms)", "expires at"],
                 title=f"the coordinator (re)arms the session timer of {client}")


def session_timer_summary(run: LessonRun, client: str, *, since_ms: int | None = None,
                          until_ms: int | None = None) -> Table:
    """`session_timer_rearms`, counted by request: how often each kind of request re-armed it."""
    rearms = session_timer_rearms(run, client, since_ms=since_ms, until_ms=until_ms)
    by: dict[str, dict[str, Any]] = {}
    for r in rearms.rows:
        row = by.setdefault(r["request"], {"request": r["request"], "times": 0,
                                           "first": r["at"], "last": r["at"]})
        row["times"] += 1
        row["last"] = r["at"]
    return Table(list(by.values()), ["request", "times", "first", "last"],
                 title=f"what re-armed the session timer of {client}, "
                       f"{clock(run.start_ms if since_ms is None else since_ms)} to "
                       f"{clock(run.cluster.scheduler.now if until_ms is None else until_ms)}")


# ---------------------------------------------------------------------------------------------
# Lesson 01: seeded runs
# ---------------------------------------------------------------------------------------------


def stable_group(consumers: int = 2, *, seed: int = 0, **config: Any) -> Cluster:
    """`consumers` consumers joining one after the other, 10 s apart, then 10 s to settle.

    With the defaults this is the kit's ``second-joins`` scenario: a Stable group at 20 s.
    `config` takes ConsumerConfig field names and applies to every consumer.
    """
    if consumers < 1:
        raise ValueError(f"a group needs at least one consumer, got {consumers}")
    cluster = new_cluster(seed)
    for i in range(1, consumers + 1):
        cluster.add_consumer(f"consumer-{i}", **config)
        cluster.run_for(10_000)
    return cluster


def _mark(cluster: Cluster, **notes: Any) -> LessonRun:
    return LessonRun(cluster, len(cluster.trace), cluster.scheduler.now, dict(notes))


def gc_pause(pause_ms: int, *, seed: int = 0, after_ms: int = 20_000,
             until_ms: int | None = None, **config: Any) -> LessonRun:
    """consumer-1 stops the world for `pause_ms` (no poll, no heartbeat) at 20 s; the run goes on
    `after_ms` past the pause, or stops at virtual time `until_ms` (to look at a moment)."""
    cluster = stable_group(seed=seed, **config)
    run = _mark(cluster, client="consumer-1", pause_ms=pause_ms)
    cluster.pause("consumer-1", pause_ms)
    if until_ms is None:
        cluster.run_for(pause_ms + after_ms)
    else:
        if until_ms < cluster.scheduler.now:
            raise ValueError(f"until_ms={until_ms} is before the pause starts at "
                             f"{cluster.scheduler.now} ms")
        cluster.run_for(until_ms - cluster.scheduler.now)
    return run


def crash(*, seed: int = 0, after_ms: int = 60_000, **config: Any) -> LessonRun:
    """consumer-1's process dies at 20 s (no LeaveGroup)."""
    cluster = stable_group(seed=seed, **config)
    run = _mark(cluster, client="consumer-1")
    cluster.crash("consumer-1")
    cluster.run_for(after_ms)
    return run


def dropped_heartbeats(*, auto_commit: bool = True, duration_ms: int = 90_000, seed: int = 0,
                       **config: Any) -> LessonRun:
    """Every Heartbeat of consumer-1 is lost from 20 s on; everything else gets through."""
    cluster = stable_group(seed=seed, enable_auto_commit=auto_commit, **config)
    run = _mark(cluster, client="consumer-1", auto_commit=auto_commit)
    cluster.drop_heartbeats("consumer-1")
    cluster.run_for(duration_ms)
    return run


def slow_processing(processing_ms: int = 400_000, *, seed: int = 0,
                    duration_ms: int = 480_000, **config: Any) -> LessonRun:
    """From 20 s on, consumer-1 spends `processing_ms` on each batch between two poll() calls;
    its heartbeat thread keeps running."""
    cluster = stable_group(seed=seed, **config)
    run = _mark(cluster, client="consumer-1", processing_ms=processing_ms)
    cluster.slow_poll("consumer-1", processing_ms)
    cluster.run_for(duration_ms)
    return run


def lost_join_group(*, cut_ms: int = 20_000, seed: int = 0, **config: Any) -> LessonRun:
    """consumer-2 joins a group where consumer-1 is alone; consumer-1 learns of the rebalance from
    a heartbeat, and the network drops everything it sends for `cut_ms` from just before its
    JoinGroup goes out. The run ends once consumer-1 is Stable again."""
    from ..viz.sequence import record_requests

    cluster = new_cluster(seed)
    record_requests(cluster)  # for the sequence picture of the lost request
    c1 = cluster.add_consumer("consumer-1", **config)
    cluster.run_for(10_000)
    cluster.add_consumer("consumer-2", **config)
    cluster.run_until(lambda: c1.rejoin_needed and c1.state is MemberState.STABLE,
                      limit_ms=60_000)
    run = _mark(cluster, client="consumer-1", cut_ms=cut_ms)
    cluster.cut_off("consumer-1")
    cluster.run_for(cut_ms)
    cluster.cut_off("consumer-1", False)
    cluster.run_until(lambda: c1.state is MemberState.STABLE, limit_ms=3_600_000)
    cluster.run_for(2_000)
    return run


def outcome_table(runs: Mapping[str, LessonRun], client: str = "consumer-1") -> Table:
    """Side by side: what the coordinator did to `client` in each run, and what `client` believes
    at the end."""
    rows = []
    for label, run in runs.items():
        c = run.cluster.consumer(client)
        group = run.cluster.group()
        removed = run.removed_at(client)
        rows.append({"run": label,
                     "coordinator removed it at": None if removed is None else clock(removed),
                     "group generation": group.get("generation"),
                     f"{client} state": c.state.name,
                     f"{client} generation": c.generation.generation_id,
                     f"{client} partitions": [str(tp.partition) for tp in sorted(c.owned)]})
    return Table(rows, title=f"what happened to {client}")


def join_wait(run: LessonRun, client: str = "consumer-1") -> tuple[int, int] | None:
    """(sent, gave up) for the first JoinGroup of `client` that the network dropped, or None."""
    source = f"client-{client}"
    sent = None
    for e in run.events():
        if e.source != source:
            continue
        if e.kind == "request_dropped" and e.fields.get("api") == "JoinGroup" and sent is None:
            sent = e.ts
        elif sent is not None and e.kind == "coordinator_lost" \
                and str(Errors.REQUEST_TIMED_OUT) in str(e.fields.get("cause")):
            return sent, e.ts
    return None


# ---------------------------------------------------------------------------------------------
# Lesson 01: exercise checks
# ---------------------------------------------------------------------------------------------

_CLOCK = re.compile(r"^(?:\d{4}-\d\d-\d\d )?(\d\d):(\d\d):(\d\d)[,.](\d{3})$")


def _as_ms(answer: Any) -> int | None:
    """An int of virtual ms, or a log timestamp such as "09:01:03,103"."""
    if isinstance(answer, bool):
        return None
    if isinstance(answer, int):
        return answer
    if isinstance(answer, float) and answer.is_integer():
        return int(answer)
    if isinstance(answer, str):
        text = answer.strip().strip("[]")
        if text.isdecimal():
            return int(text)
        m = _CLOCK.match(text)
        if m:
            h, mi, s, ms = (int(x) for x in m.groups())
            start = DEFAULT_START
            return ((h - start.hour) * 3600 + (mi - start.minute) * 60
                    + (s - start.second)) * 1000 + ms
    return None


@lru_cache(maxsize=None)
def _expiry_facts() -> dict[str, int]:
    run = gc_pause(60_000)
    rearms = session_timer_rearms(run, "consumer-1", since_ms=0, until_ms=run.start_ms)
    expired = run.expired_at("consumer-1")
    assert expired is not None, "the 60 s pause must get consumer-1 expelled"
    last = _as_ms(rearms.rows[-1]["at"]) if rearms.rows else None
    return {"expired": expired, "pause_start": run.start_ms, "pause_end": run.start_ms + 60_000,
            "last_rearm": last if last is not None else -1}


def check_expiry_time(answer: Any) -> Feedback:
    """Exercise 1: the virtual time at which the coordinator logs consumer-1 "has failed" during
    the 60 s GC pause that starts at 09:00:20,000 (default configs, seed 0)."""
    ex = "Exercise 1"
    if unanswered(answer):
        return not_answered(ex, "a time: virtual ms such as 61234, or a log time such as "
                               "\"09:01:01,234\"")
    ms = _as_ms(answer)
    if ms is None:
        return Feedback(ex, "wrong", f"{answer!r} is not a time. Give virtual ms (an int) or "
                                     f"a log timestamp such as \"09:01:01,234\".")
    f = _expiry_facts()
    if ms == f["expired"]:
        return Feedback(ex, "correct", f"The session timer was last re-armed at "
                                       f"{clock(f['last_rearm'])}; 45 000 ms later, at "
                                       f"{clock(ms)}, it fires. The pause itself is invisible "
                                       f"to the broker.")
    if ms == f["pause_start"] + 45_000:
        hint = ("That counts 45 s from the start of the pause. The broker does not know when "
                "the pause began: its timer runs from the last request that re-armed it.")
    elif ms == f["pause_end"]:
        hint = ("That is when the pause ends. The broker does not wait for the consumer; its "
                "own timer fires while the consumer is still frozen.")
    elif abs(ms - f["expired"]) <= 1_000:
        hint = ("Very close. Take the exact time of the last re-arm in the table above and add "
                "session.timeout.ms.")
    else:
        hint = ("Find the last time the coordinator re-armed consumer-1's session timer before "
                "the pause (session_timer_rearms), then add session.timeout.ms.")
    return Feedback(ex, "wrong", f"{clock(ms)} is not it. {hint}")


_SESSION_KEYS = {"session.timeout.ms": "session_timeout_ms",
                 "heartbeat.interval.ms": "heartbeat_interval_ms"}


@lru_cache(maxsize=None)
def _session_trial(session_ms: int, heartbeat_ms: int) -> tuple[int | None, int | None, int]:
    """(expelled during the 25 s pause at, expelled after the crash at, crash time)."""
    cfg = {"session_timeout_ms": session_ms, "heartbeat_interval_ms": heartbeat_ms}
    paused = gc_pause(25_000, after_ms=10_000, **cfg)
    crashed = crash(after_ms=max(60_000, session_ms + 10_000), **cfg)
    return paused.expired_at("consumer-1"), crashed.expired_at("consumer-1"), crashed.start_ms


def check_session_config(answer: Any) -> Feedback:
    """Exercise 2: a {"session.timeout.ms": ..., "heartbeat.interval.ms": ...} with which
    consumer-1 survives a 25 s GC pause, yet a crashed consumer-1 is removed within 30 s.

    The check runs both trials on the simulated cluster with your values.
    """
    ex = "Exercise 2"
    if unanswered(answer):
        return not_answered(ex, 'a dict such as {"session.timeout.ms": 10000, '
                               '"heartbeat.interval.ms": 3000}')
    if not isinstance(answer, Mapping):
        return Feedback(ex, "wrong", f"Give a dict with the keys {sorted(_SESSION_KEYS)}, "
                                     f"got {type(answer).__name__}.")
    unknown = sorted(set(answer) - set(_SESSION_KEYS))
    missing = sorted(set(_SESSION_KEYS) - set(answer))
    if unknown or missing:
        return Feedback(ex, "wrong", f"The dict needs exactly the keys {sorted(_SESSION_KEYS)}"
                                     f" (unknown: {unknown or 'none'}, missing: "
                                     f"{missing or 'none'}).")
    session, heartbeat = answer["session.timeout.ms"], answer["heartbeat.interval.ms"]
    for key, value in (("session.timeout.ms", session), ("heartbeat.interval.ms", heartbeat)):
        if isinstance(value, bool) or not isinstance(value, int):
            return Feedback(ex, "wrong", f"{key} must be an int of milliseconds, got "
                                         f"{value!r}.")
    try:
        ConsumerConfig(group_id=GROUP, session_timeout_ms=session,
                       heartbeat_interval_ms=heartbeat)
    except ValueError as e:
        return Feedback(ex, "wrong", f"The consumer refuses this config: {e}.")
    if not 6_000 <= session <= 1_800_000:
        return Feedback(ex, "wrong", f"The broker would answer JoinGroup with "
                                     f"INVALID_SESSION_TIMEOUT: session.timeout.ms must lie "
                                     f"within group.min.session.timeout.ms (6000) and "
                                     f"group.max.session.timeout.ms (1800000), got {session}.")
    paused_out, crashed_out, crashed_at = _session_trial(session, heartbeat)
    if paused_out is not None:
        return Feedback(ex, "wrong", f"With these values the 25 s pause gets consumer-1 removed "
                                     f"at {clock(paused_out)}. The session must outlast the "
                                     f"pause plus the time since the last heartbeat.")
    if crashed_out is None or crashed_out - crashed_at > 30_000:
        took = "never" if crashed_out is None else f"after {crashed_out - crashed_at} ms"
        return Feedback(ex, "wrong", f"The crashed consumer-1 is removed {took}, not within "
                                     f"30 000 ms. A shorter session finds a crash sooner.")
    note = ""
    if heartbeat * 3 > session:
        note = (f" It works, but Kafka's advice is heartbeat.interval.ms <= "
                f"session.timeout.ms / 3 (here {session // 3}), so that one lost heartbeat is "
                f"not fatal.")
    return Feedback(ex, "correct", f"The pause is survived, and the crash is detected after "
                                   f"{crashed_out - crashed_at} ms.{note}")


@lru_cache(maxsize=None)
def _commit_trial(interval_ms: int) -> int | None:
    run = dropped_heartbeats(auto_commit=True, auto_commit_interval_ms=interval_ms,
                             duration_ms=150_000)
    return run.expired_at("consumer-1")


def check_auto_commit_interval(answer: Any) -> Feedback:
    """Exercise 3: an auto.commit.interval.ms with which consumer-1, whose heartbeats are all
    lost, is removed anyway (default session.timeout.ms of 45 s). The check runs it."""
    ex = "Exercise 3"
    if unanswered(answer):
        return not_answered(ex, "an auto.commit.interval.ms in ms, such as 5000")
    if isinstance(answer, bool) or not isinstance(answer, int) or answer < 1:
        return Feedback(ex, "wrong", f"auto.commit.interval.ms must be an int of at least 1 ms, "
                                     f"got {answer!r}.")
    expired = _commit_trial(answer)
    if expired is not None:
        return Feedback(ex, "correct", f"With commits only every {answer} ms, nothing re-arms "
                                       f"the session timer for 45 s: the coordinator logs "
                                       f"\"has failed\" at {clock(expired)}.")
    return Feedback(ex, "wrong", f"With auto.commit.interval.ms={answer} consumer-1 is still a "
                                 f"member after 150 s. Each OffsetCommit re-arms the session "
                                 f"timer for session.timeout.ms; what interval leaves a gap "
                                 f"longer than that?")


@lru_cache(maxsize=None)
def _join_wait_facts(max_poll_interval_ms: int) -> tuple[int, int] | None:
    return join_wait(lost_join_group(max_poll_interval_ms=max_poll_interval_ms))


def check_join_timeout(answer: Any) -> Feedback:
    """Exercise 4: with max.poll.interval.ms=120000 (request.timeout.ms 30000), how many ms does
    consumer-1 wait for an answer to a JoinGroup that the network lost?"""
    ex = "Exercise 4"
    if unanswered(answer):
        return not_answered(ex, "a number of milliseconds")
    if isinstance(answer, bool) or not isinstance(answer, int):
        return Feedback(ex, "wrong", f"Give a whole number of milliseconds, got {answer!r}.")
    facts = _join_wait_facts(120_000)
    assert facts is not None, "the lost JoinGroup must time out"
    waited = facts[1] - facts[0]
    if answer == waited:
        return Feedback(ex, "correct", f"The JoinGroup was sent at {clock(facts[0])} and timed "
                                       f"out at {clock(facts[1])}: max(request.timeout.ms, "
                                       f"max.poll.interval.ms + 5000) = {waited} ms.")
    hints = {30_000: "request.timeout.ms is what other requests wait; the consumer stretches "
                     "the JoinGroup timeout because the broker may hold a JoinGroup for up to "
                     "the rebalance timeout.",
             120_000: "Close: the consumer adds a lapse on top of the rebalance timeout.",
             45_000: "session.timeout.ms is the broker's timer for heartbeats, not a request "
                     "timeout."}
    hint = hints.get(answer, "Look at the table of timers at the top of the notebook.")
    return Feedback(ex, "wrong", f"{answer} ms is not it. {hint}")
