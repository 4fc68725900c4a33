"""Notebook 02, joining and rebalancing: seeded runs, the views its cells print, and the checks
of its exercises.

What the lesson shows (Kafka's `AbstractCoordinator`/`ConsumerCoordinator` on the client, the
classic paths of `GroupMetadataManager` on the broker; docs/kafka-classes.md):

* a member's way in: FindCoordinator, JoinGroup with an empty member id answered
  ``MEMBER_ID_REQUIRED`` (KIP-394), JoinGroup again, SyncGroup;
* the two barriers: the coordinator parks every JoinGroup until all known members have rejoined
  (or the rebalance timeout passes), and parks the followers' SyncGroup until the leader's
  assignment is written;
* generations and the leader: the leader is a consumer, and it runs the assignor;
* the assignors side by side, eager against cooperative rebalancing, and static membership in a
  rolling restart.

The runs record every request and response (`coordinator_kit.viz.sequence.record_requests`), so
tables and sequence pictures read them straight from the trace. Display pieces (`Table`,
`Feedback`, `LessonRun`...) come from lesson 01's module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from ..assignors import ASSIGNORS, Subscription, get_assignor
from ..cluster import Cluster
from ..scenarios import new_cluster
from ..topic import TopicPartition
from ..trace import TraceEvent
from .heartbeats import (GROUP, Feedback, LessonRun, Table, clock, not_answered, short_id,
                         unanswered)

__all__ = [
    "ASSIGNOR_NAMES", "group_of", "first_join", "requests_table", "join_round_trips",
    "barrier_run", "join_barrier", "membership_story", "generations_table", "assignor_table",
    "leave_moves", "third_joins", "interruptions", "cost_table", "ownership", "stop_chart",
    "rolling_restart_run",
    "rebalance_count",
    "check_join_round_trips", "check_generation", "check_range_counts",
    "check_eager_vs_cooperative", "check_rolling_restart",
]

ASSIGNOR_NAMES = ("range", "roundrobin", "sticky", "cooperative-sticky")


def _recorded(seed: int, **cluster_kw: Any) -> Cluster:
    """A fresh cluster whose network records every request and response in the trace."""
    from ..viz.sequence import record_requests

    cluster = new_cluster(seed, **cluster_kw)
    record_requests(cluster)
    return cluster


def _mark(cluster: Cluster, **notes: Any) -> LessonRun:
    return LessonRun(cluster, len(cluster.trace), cluster.scheduler.now, dict(notes))


def group_of(consumers: int = 2, *, seed: int = 0, stagger_ms: int = 10_000,
             settle_ms: int = 10_000, topics: Mapping[str, int] | None = None,
             **config: Any) -> Cluster:
    """`consumers` consumers started `stagger_ms` apart, then `settle_ms` to settle; requests
    recorded. `config` takes ConsumerConfig field names (and `processing_ms`) for every one."""
    if consumers < 1:
        raise ValueError(f"a group needs at least one consumer, got {consumers}")
    if stagger_ms < 0 or settle_ms < 0:
        raise ValueError(f"stagger_ms and settle_ms must be >= 0, got {stagger_ms}, "
                         f"{settle_ms}")
    cluster = _recorded(seed, topics=dict(topics or {"orders": 6}))
    subscribed = tuple(cluster.topics)
    for i in range(1, consumers + 1):
        cluster.add_consumer(f"consumer-{i}", topics=subscribed, **config)
        if i < consumers:
            cluster.run_for(stagger_ms)
    cluster.run_for(settle_ms)
    return cluster


# ---------------------------------------------------------------------------------------------
# Requests, from the recorded trace
# ---------------------------------------------------------------------------------------------

_NETWORK = ("request_sent", "request_received", "response_sent", "response_received")


def _requests(cluster: Cluster) -> list[dict[str, TraceEvent]]:
    """Recorded requests in the order they were sent: each a dict of its end events."""
    by_id: dict[int, dict[str, TraceEvent]] = {}
    for e in cluster.trace.events:
        if e.kind in _NETWORK:
            by_id.setdefault(e.fields["correlation_id"], {})[e.kind] = e
    return [ends for _cid, ends in sorted(by_id.items()) if "request_sent" in ends]


def requests_table(run: LessonRun, client: str | None = None, *,
                   apis: Sequence[str] = ("JoinGroup", "SyncGroup", "LeaveGroup"),
                   since_ms: int | None = None, until_ms: int | None = None) -> Table:
    """Each request (of `apis`) a consumer sent, when it was answered and with what error."""
    since = run.start_ms if since_ms is None else since_ms
    rows = []
    for ends in _requests(run.cluster):
        sent = ends["request_sent"]
        f = sent.fields
        if f["api"] not in apis or (client is not None and f["client"] != client):
            continue
        if sent.ts < since or (until_ms is not None and sent.ts > until_ms):
            continue
        got = ends.get("response_received")
        back = ends.get("response_sent")
        error = None if got is None else got.fields.get("error")
        rows.append({"sent": clock(sent.ts), "client": f["client"], "request": f["api"],
                     "answered": None if got is None else clock(got.ts),
                     "waited (ms)": None if got is None else got.ts - sent.ts,
                     "error": error,
                     "generation": None if back is None else back.fields.get("generation")})
    return Table(rows, ["sent", "client", "request", "answered", "waited (ms)", "error",
                        "generation"], title="requests and their answers")


def join_round_trips(run: LessonRun, client: str) -> dict[str, int]:
    """How many JoinGroup and SyncGroup requests `client` sent until its first Stable."""
    stable_at = next((e.ts for e in run.cluster.trace.events
                      if e.kind == "member_state" and e.fields.get("client") == client
                      and e.fields.get("new") == "STABLE"), None)
    counts = {"JoinGroup": 0, "SyncGroup": 0}
    for ends in _requests(run.cluster):
        sent = ends["request_sent"]
        if sent.fields["client"] != client or sent.fields["api"] not in counts:
            continue
        if stable_at is not None and sent.ts > stable_at:
            continue
        counts[sent.fields["api"]] += 1
    return counts


# ---------------------------------------------------------------------------------------------
# 1. Joining an empty group
# ---------------------------------------------------------------------------------------------


def first_join(*, seed: int = 0, run_ms: int = 10_000) -> LessonRun:
    """consumer-1 joins an empty group-1 at 0 s; requests recorded."""
    cluster = _recorded(seed)
    run = _mark(cluster, client="consumer-1")
    cluster.add_consumer("consumer-1")
    cluster.run_for(run_ms)
    return run


# ---------------------------------------------------------------------------------------------
# 2. The barriers
# ---------------------------------------------------------------------------------------------


def barrier_run(*, slow_ms: int = 20_000, seed: int = 0,
                strategy: Sequence[str] = ("range", "cooperative-sticky"),
                run_ms: int = 30_000) -> LessonRun:
    """consumer-1 and -2 are Stable at 20 s; then consumer-2 only polls every `slow_ms`, and at
    25 s consumer-3 joins. Everyone waits for consumer-2's JoinGroup."""
    cluster = group_of(2, seed=seed, partition_assignment_strategy=tuple(strategy))
    cluster.slow_poll("consumer-2", slow_ms)
    cluster.run_for(5_000)
    run = _mark(cluster, slow_ms=slow_ms)
    cluster.add_consumer("consumer-3", partition_assignment_strategy=tuple(strategy))
    cluster.run_for(run_ms)
    return run


def join_barrier(run: LessonRun) -> Table:
    """Per consumer: its last JoinGroup and SyncGroup of the first rebalance after the mark,
    when each went out and when the coordinator answered."""
    rows: dict[str, dict[str, Any]] = {}
    done: set[str] = set()
    for ends in _requests(run.cluster):
        sent = ends["request_sent"]
        f = sent.fields
        if sent.ts < run.start_ms or f["api"] not in ("JoinGroup", "SyncGroup") \
                or f["client"] in done:
            continue
        got = ends.get("response_received")
        error = None if got is None else got.fields.get("error")
        row = rows.setdefault(f["client"], {"client": f["client"]})
        if f["api"] == "JoinGroup":
            if error == "MEMBER_ID_REQUIRED":
                continue
            row.update({"JoinGroup sent": clock(sent.ts),
                        "JoinGroup answered": None if got is None else clock(got.ts),
                        "join waited (ms)": None if got is None else got.ts - sent.ts})
        else:
            row.update({"SyncGroup sent": clock(sent.ts),
                        "SyncGroup answered": None if got is None else clock(got.ts),
                        "sync waited (ms)": None if got is None else got.ts - sent.ts})
            done.add(f["client"])
    ordered = sorted(rows.values(), key=lambda r: r["client"])
    return Table(ordered, ["client", "JoinGroup sent", "JoinGroup answered", "join waited (ms)",
                           "SyncGroup sent", "SyncGroup answered", "sync waited (ms)"],
                 title="the JoinGroup and SyncGroup barriers")


# ---------------------------------------------------------------------------------------------
# 3. Generations and the leader
# ---------------------------------------------------------------------------------------------


def membership_story(steps: Sequence[tuple[int, str, str]] = (
        (0, "join", "consumer-1"), (10_000, "join", "consumer-2"),
        (20_000, "join", "consumer-3"), (30_000, "leave", "consumer-1")),
        *, seed: int = 0, end_ms: int = 40_000) -> LessonRun:
    """Consumers join and leave group-1 at the given virtual times ("join"/"leave"/"crash")."""
    cluster = _recorded(seed)
    run = _mark(cluster, steps=tuple(steps))
    for at, action, name in sorted(steps, key=lambda s: s[0]):
        if at < cluster.scheduler.now:
            raise ValueError(f"step {(at, action, name)} is in the past")
        cluster.run_for(at - cluster.scheduler.now)
        if action == "join":
            cluster.add_consumer(name)
        elif action == "leave":
            cluster.leave(name)
        elif action == "crash":
            cluster.crash(name)
        else:
            raise ValueError(f"unknown action {action!r}: use join, leave or crash")
    if end_ms < cluster.scheduler.now:
        raise ValueError(f"end_ms={end_ms} is before the last step")
    cluster.run_for(end_ms - cluster.scheduler.now)
    return run


def generations_table(run: LessonRun) -> Table:
    """Each generation: when the join phase completed, its members and its leader (the member
    whose consumer ran the assignor)."""
    gens: dict[int, dict[str, Any]] = {}
    for e in run.cluster.trace.events:
        if e.kind == "group_stabilized" and e.fields.get("group") == GROUP:
            gens.setdefault(e.fields["generation"], {"generation": e.fields["generation"],
                                                     "stabilized": clock(e.ts),
                                                     "members": [], "leader": None})
        elif e.kind == "group_empty" and e.fields.get("group") == GROUP:
            gens.setdefault(e.fields["generation"], {"generation": e.fields["generation"],
                                                     "stabilized": clock(e.ts),
                                                     "members": [], "leader": None})
        elif e.kind == "joined":
            g = e.fields.get("generation")
            row = gens.get(getattr(g, "generation_id", None))
            if row is not None:
                row["members"].append(short_id(g.member_id))
        elif e.kind == "assignment_computed" and e.source.startswith("client-"):
            row = gens.get(e.fields.get("generation"))
            if row is not None:
                row["leader"] = e.source[len("client-"):]
    return Table([gens[k] for k in sorted(gens)], ["generation", "stabilized", "members",
                                                   "leader"], title="generations of group-1")


# ---------------------------------------------------------------------------------------------
# 4. Assignors side by side
# ---------------------------------------------------------------------------------------------


def _compact(partitions: Sequence[TopicPartition]) -> str:
    by: dict[str, list[int]] = {}
    for tp in sorted(partitions):
        by.setdefault(tp.topic, []).append(tp.partition)
    return "  ".join(f"{t} {','.join(map(str, ps))}" for t, ps in by.items()) or "-"


def _subscriptions(topics: Mapping[str, int], members: Sequence[str],
                   owned: Mapping[str, Sequence[TopicPartition]] | None = None,
                   generation: int = -1) -> dict[str, Subscription]:
    return {m: Subscription(tuple(topics), tuple((owned or {}).get(m, ())),
                            generation if owned else -1) for m in members}


def assignor_table(topics: Mapping[str, int], members: Sequence[str],
                   assignors: Sequence[str] = ASSIGNOR_NAMES) -> Table:
    """What each assignor gives each member, every member subscribing to every topic."""
    results = {n: get_assignor(n).assign(dict(topics), _subscriptions(topics, members))
               for n in assignors}
    rows = []
    for m in members:
        row: dict[str, Any] = {"member": m}
        for n in assignors:
            parts = results[n][m].partitions
            row[n] = f"{_compact(parts)}  ({len(parts)})"
        rows.append(row)
    return Table(rows, ["member", *assignors], title="assignments, side by side "
                 f"({', '.join(f'{t}: {p} partitions' for t, p in topics.items())})")


def leave_moves(topics: Mapping[str, int], members: Sequence[str], leaving: str,
                assignors: Sequence[str] = ASSIGNOR_NAMES) -> Table:
    """When `leaving` leaves, how many of the *other* members' partitions change owner."""
    if leaving not in members:
        raise ValueError(f"{leaving!r} is not one of the members {list(members)}")
    rest = [m for m in members if m != leaving]
    rows = []
    for n in assignors:
        a = get_assignor(n)
        before = a.assign(dict(topics), _subscriptions(topics, members))
        owned = {m: before[m].partitions for m in rest}
        after = a.assign(dict(topics), _subscriptions(topics, rest, owned, generation=1))
        if n == "cooperative-sticky":  # the follow-up round hands over what was withheld
            owned2 = {m: after[m].partitions for m in rest}
            after = a.assign(dict(topics), _subscriptions(topics, rest, owned2, generation=2))
        kept_owner = {tp: m for m in rest for tp in before[m].partitions}
        moved = sum(1 for m in rest for tp in after[m].partitions
                    if tp in kept_owner and kept_owner[tp] != m)
        counts = [len(after[m].partitions) for m in rest]
        rows.append({"assignor": n, "partitions of the leaver": len(before[leaving].partitions),
                     "others' partitions moved": moved,
                     "counts after": ", ".join(map(str, counts))})
    return Table(rows, ["assignor", "partitions of the leaver", "others' partitions moved",
                        "counts after"], title=f"{leaving} leaves")


# ---------------------------------------------------------------------------------------------
# 5. Eager versus cooperative
# ---------------------------------------------------------------------------------------------


def third_joins(strategy: str | Sequence[str] = "range", *, seed: int = 0,
                run_ms: int = 20_000, **config: Any) -> LessonRun:
    """consumer-1 and -2 Stable at 20 s with `strategy`; consumer-3 joins at 20 s."""
    strategy = (strategy,) if isinstance(strategy, str) else tuple(strategy)
    cluster = group_of(2, seed=seed, partition_assignment_strategy=strategy, **config)
    run = _mark(cluster, strategy=strategy)
    cluster.add_consumer("consumer-3", partition_assignment_strategy=strategy, **config)
    cluster.run_for(run_ms)
    return run


def _interruptions(run: LessonRun) -> list[dict[str, Any]]:
    calls = sorted(((call.ts, 0 if call.callback != "onPartitionsAssigned" else 1, c.name, call)
                    for c in run.cluster.consumers.values() for call in c.listener_calls),
                   key=lambda x: (x[0], x[1], x[2]))
    down: dict[TopicPartition, tuple[int, str]] = {}
    out = []
    for ts, _, name, call in calls:
        for tp in call.partitions:
            if call.callback in ("onPartitionsRevoked", "onPartitionsLost"):
                down[tp] = (ts, name)
            elif tp in down:
                since, old = down.pop(tp)
                if since >= run.start_ms:
                    out.append({"partition": str(tp), "_tp": tp, "from": old, "to": name,
                                "stopped": clock(since), "resumed": clock(ts),
                                "stopped for (ms)": ts - since, "_since": since})
    out.sort(key=lambda r: (r["_since"], r["_tp"]))
    return out


def interruptions(run: LessonRun) -> Table:
    """Each partition that stopped being consumed after the mark: revoked (or lost) by one
    member, resumed when a member got it in onPartitionsAssigned."""
    return Table(_interruptions(run), ["partition", "from", "to", "stopped", "resumed",
                                       "stopped for (ms)"], title="partitions that stopped")


def rebalance_count(run: LessonRun) -> int:
    """How many rebalances group-1 went through after the mark ("Preparing to rebalance")."""
    return sum(1 for e in run.events("rebalance_started") if e.fields.get("group") == GROUP)


def cost_table(runs: Mapping[str, LessonRun]) -> Table:
    """Side by side: rebalances, partitions that stopped, and for how long."""
    rows = []
    for label, run in runs.items():
        gaps = _interruptions(run)
        total = sum(run.cluster.topics.values())
        rows.append({"run": label, "rebalances": rebalance_count(run),
                     "partitions stopped": f"{len({g['_tp'] for g in gaps})} of {total}",
                     "longest stop (ms)": max((g["stopped for (ms)"] for g in gaps), default=0),
                     "partition-ms without a consumer": sum(g["stopped for (ms)"]
                                                            for g in gaps)})
    return Table(rows, ["run", "rebalances", "partitions stopped", "longest stop (ms)",
                        "partition-ms without a consumer"], title="what the rebalance cost")


_OWNER_COLOURS = ("#42a5f5", "#ab47bc", "#26a69a", "#8d6e63", "#ffa726", "#78909c")
_STOPPED = "#e53935"
_REBALANCE, _REBALANCE_SHADE = "#ffb74d", "#fff3e0"


def ownership(run: LessonRun) -> dict[TopicPartition, list[tuple[int, int, str | None]]]:
    """Per partition, who consumed it from the run's mark to now: (from, to, consumer), None
    while no one did (revoked or lost, not yet assigned), read off the rebalance listener calls
    (onPartitionsRevoked/Lost stop a partition, onPartitionsAssigned starts it again)."""
    calls = sorted(((call.ts, 0 if call.callback != "onPartitionsAssigned" else 1, c.name, call)
                    for c in run.cluster.consumers.values() for call in c.listener_calls),
                   key=lambda x: (x[0], x[1], x[2]))
    now = run.cluster.scheduler.now
    owner: dict[TopicPartition, tuple[int, str | None]] = {}
    out: dict[TopicPartition, list[tuple[int, int, str | None]]] = {}

    def close(tp: TopicPartition, ts: int) -> None:
        if tp in owner:
            since, who = owner[tp]
            a = max(since, run.start_ms)
            if ts > a:
                out.setdefault(tp, []).append((a, ts, who))

    for ts, _, name, call in calls:
        for tp in call.partitions:
            new = name if call.callback == "onPartitionsAssigned" else None
            if tp in owner and owner[tp][1] == new:
                continue
            close(tp, ts)
            owner[tp] = (ts, new)
    for tp in owner:
        close(tp, now)
    return dict(sorted(out.items()))


def stop_chart(runs: Mapping[str, LessonRun], *, end_ms: int | None = None,
               title: str | None = None) -> Any:
    """Per partition and per run, who consumed it and when it stood still (red, hatched: no
    one consumed it), on one time axis with each rebalance of the group shaded: why eager
    stops every partition at once, briefly, and cooperative stops only the partitions that move,
    until a second rebalance hands them over.

    A stop too short to see at this scale is drawn a few pixels wide, its length written
    beside it; each panel's title gives the totals of `cost_table`.
    """
    from matplotlib.patches import Patch

    from ..viz.plots import _figure, figure_svg, rebalances
    from .heartbeats import Picture

    if not runs:
        raise ValueError("stop_chart needs at least one run, e.g. {'eager': third_joins('range')}")
    starts = {run.start_ms for run in runs.values()}
    start = min(starts)
    owners = {label: ownership(run) for label, run in runs.items()}
    stops = {label: _interruptions(run) for label, run in runs.items()}
    last = max([g["_since"] + g["stopped for (ms)"] for gaps in stops.values() for g in gaps]
               + [start + 1_000])
    end = end_ms if end_ms is not None else last + 600
    min_ms = (end - start) * 0.006
    names = sorted({who for parts in owners.values() for segs in parts.values()
                    for _, _, who in segs if who is not None})
    colour = {n: _OWNER_COLOURS[i % len(_OWNER_COLOURS)] for i, n in enumerate(names)}
    rows = max(len(parts) for parts in owners.values())
    fig = _figure(9, 1.0 + len(runs) * (0.85 + 0.26 * rows))
    axes = fig.subplots(len(runs), 1, sharex=True, squeeze=False)[:, 0]
    for ax, (label, run) in zip(axes, runs.items()):
        parts = owners[label]
        tps = list(parts)
        for r in rebalances(run.cluster.trace, GROUP):
            if r.start_ms >= run.start_ms and r.start_ms <= end:
                a, b = r.start_ms, min(r.end_ms or end, end)
                ax.axvspan(a / 1000, b / 1000, color=_REBALANCE_SHADE, zorder=0)
                ax.broken_barh([(a / 1000, (b - a) / 1000)], (-1.05, 0.5),
                               facecolors=_REBALANCE, edgecolors="white", linewidth=0.5)
                ax.text(a / 1000, -0.8, f" rebalance → generation {r.generation}", fontsize=9,
                        va="center", ha="left", color="#263238", zorder=4)
        for y, tp in enumerate(tps):
            for a, b, who in parts[tp]:
                a, b = max(a, start), min(b, end)
                if b <= a and who is not None:
                    continue
                if who is not None:
                    ax.broken_barh([(a / 1000, (b - a) / 1000)], (y - 0.32, 0.64),
                                   facecolors=colour[who], edgecolors="white", linewidth=0.5,
                                   zorder=2)
        for g in stops[label]:
            y = tps.index(g["_tp"])
            a, d = g["_since"], g["stopped for (ms)"]
            ax.broken_barh([(a / 1000, max(d, min_ms) / 1000)], (y - 0.32, 0.64),
                           facecolors=_STOPPED, edgecolors="#b71c1c", hatch="///",
                           linewidth=0.6, zorder=3)
            ax.text((a + max(d, min_ms)) / 1000, y, f" {d:,} ms", fontsize=9, va="center",
                    ha="left", color="#b71c1c", zorder=4,
                    bbox=dict(facecolor="white", edgecolor="none", pad=0.5))
        total = sum(g["stopped for (ms)"] for g in stops[label])
        stopped = len({g["_tp"] for g in stops[label]})
        longest = max((g["stopped for (ms)"] for g in stops[label]), default=0)
        ax.set_title(f"{label}: {stopped} of {len(tps)} partitions stop, the longest for "
                     f"{longest:,} ms; {total:,} partition-ms in all", fontsize=10, loc="left")
        ax.set_yticks(range(len(tps)), [str(tp) for tp in tps], fontsize=9)
        ax.set_ylim(len(tps) - 0.5, -1.2)
        ax.grid(axis="x", color="#e0e0e0", linewidth=0.6)
        ax.set_axisbelow(True)
        ax.tick_params(axis="x", labelsize=9)
    axes[-1].set_xlim(start / 1000, end / 1000)
    axes[-1].set_xlabel("virtual time (s)", fontsize=10)
    fig.suptitle(title or "who consumes each partition, and when it stands still", fontsize=11)
    handles = [Patch(facecolor=colour[n], label=f"consumed by {n}") for n in names]
    handles.append(Patch(facecolor=_STOPPED, edgecolor="#b71c1c", hatch="///",
                         label="stopped: no one consumes it"))
    handles.append(Patch(facecolor=_REBALANCE, label="a rebalance of group-1"))
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=9, frameon=False)
    return Picture(figure_svg(fig), title or "who consumes each partition, and when it stands "
                                             "still")


# ---------------------------------------------------------------------------------------------
# 6. Static membership
# ---------------------------------------------------------------------------------------------


def rolling_restart_run(*, static: bool, down_ms: int = 2_000, gap_ms: int = 15_000,
                        seed: int = 0, consumers: int = 3, **config: Any) -> LessonRun:
    """`consumers` consumers (with group.instance.id when `static`) Stable at 10 s, then
    restarted one after the other, each down for `down_ms`, `gap_ms` apart."""
    if down_ms < 0:
        raise ValueError(f"down_ms must be >= 0, got {down_ms}")
    cluster = _recorded(seed)
    for i in range(1, consumers + 1):
        extra = {"group_instance_id": f"instance-{i}"} if static else {}
        cluster.add_consumer(f"consumer-{i}", **extra, **config)
    cluster.run_for(10_000)
    run = _mark(cluster, static=static, down_ms=down_ms)
    for i in range(1, consumers + 1):
        cluster.restart_consumer(f"consumer-{i}", down_ms=down_ms)
        cluster.run_for(max(gap_ms, down_ms + 10_000))
    return run


# ---------------------------------------------------------------------------------------------
# Exercise checks
# ---------------------------------------------------------------------------------------------


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _dict_of_ints(ex: str, answer: Any, keys: Sequence[str]) -> tuple[dict[str, int] | None,
                                                                       Feedback | None]:
    if not isinstance(answer, Mapping):
        return None, Feedback(ex, "wrong", f"Give a dict with the keys {list(keys)}, got "
                                           f"{type(answer).__name__}.")
    missing = [k for k in keys if k not in answer]
    unknown = [k for k in answer if k not in keys]
    if missing or unknown:
        return None, Feedback(ex, "wrong", f"The dict needs exactly the keys {list(keys)} "
                                           f"(missing: {missing or 'none'}, unknown: "
                                           f"{unknown or 'none'}).")
    bad = {k: v for k, v in answer.items() if _int_or_none(v) is None}
    if bad:
        return None, Feedback(ex, "wrong", f"Each value must be a whole number; got {bad}.")
    return dict(answer), None


@lru_cache(maxsize=None)
def _first_join_counts() -> tuple[tuple[str, int], ...]:
    return tuple(join_round_trips(first_join(), "consumer-1").items())


def check_join_round_trips(answer: Any) -> Feedback:
    """Exercise 1: {"JoinGroup": n, "SyncGroup": m}, the requests a brand-new consumer sends to
    join an empty group until it is Stable."""
    ex = "Exercise 1"
    if unanswered(answer):
        return not_answered(ex, 'a dict such as {"JoinGroup": 1, "SyncGroup": 1}')
    got, error = _dict_of_ints(ex, answer, ("JoinGroup", "SyncGroup"))
    if error is not None:
        return error
    want = dict(_first_join_counts())
    if got == want:
        return Feedback(ex, "correct", f"{want['JoinGroup']} JoinGroups (the first is answered "
                                       f"MEMBER_ID_REQUIRED) and {want['SyncGroup']} SyncGroup.")
    if got["JoinGroup"] == want["JoinGroup"] - 1:
        hint = ("One JoinGroup is missing: what does the coordinator answer to a JoinGroup "
                "with an empty member id (JoinGroup v4+)?")
    elif got["SyncGroup"] != want["SyncGroup"]:
        hint = ("Each successful JoinGroup is followed by exactly one SyncGroup; the answer "
                "MEMBER_ID_REQUIRED is not a success.")
    else:
        hint = "Count the requests in the table of section 1."
    return Feedback(ex, "wrong", f"{got} is not it. {hint}")


EXERCISE_2_STEPS = ((0, "join", "consumer-1"), (10_000, "join", "consumer-2"),
                    (20_000, "join", "consumer-3"), (30_000, "leave", "consumer-2"),
                    (40_000, "crash", "consumer-3"))


@lru_cache(maxsize=None)
def _exercise_2_generation() -> int:
    run = membership_story(EXERCISE_2_STEPS, end_ms=120_000)
    return int(run.cluster.group()["generation"])


def check_generation(answer: Any) -> Feedback:
    """Exercise 2: the generation of group-1 at 120 s after EXERCISE_2_STEPS (joins at 0, 10
    and 20 s, consumer-2 leaves at 30 s, consumer-3 crashes at 40 s)."""
    ex = "Exercise 2"
    if unanswered(answer):
        return not_answered(ex, "a generation number")
    value = _int_or_none(answer)
    if value is None:
        return Feedback(ex, "wrong", f"A generation is a whole number, got {answer!r}.")
    want = _exercise_2_generation()
    if value == want:
        return Feedback(ex, "correct", f"Generation {want}: one per completed join phase (three "
                                       f"joins, one leave, one session expiry after the crash).")
    if value == want - 1:
        hint = ("One short. A crash sends no LeaveGroup, but the coordinator still removes the "
                "member when its session expires, and that is a rebalance too.")
    elif value == want - 2:
        hint = "Leaving and crashing each end in a new generation, not only joining."
    elif value > want:
        hint = ("Too many. A new consumer joining costs one generation here: its "
                "MEMBER_ID_REQUIRED round trip happens before it is a member.")
    else:
        hint = "Count the completed join phases, one per membership change."
    return Feedback(ex, "wrong", f"Generation {value} is not it. {hint}")


EXERCISE_3_TOPICS = {"orders": 5, "payments": 2}
EXERCISE_3_MEMBERS = ("consumer-1", "consumer-2", "consumer-3")


def check_range_counts(answer: Any) -> Feedback:
    """Exercise 3: {"consumer-1": n1, "consumer-2": n2, "consumer-3": n3}, how many partitions
    each member gets from the range assignor for EXERCISE_3_TOPICS."""
    ex = "Exercise 3"
    if unanswered(answer):
        return not_answered(ex, 'a dict such as {"consumer-1": 3, "consumer-2": 3, '
                               '"consumer-3": 2}')
    got, error = _dict_of_ints(ex, answer, EXERCISE_3_MEMBERS)
    if error is not None:
        return error
    result = ASSIGNORS["range"].assign(dict(EXERCISE_3_TOPICS), _subscriptions(
        EXERCISE_3_TOPICS, EXERCISE_3_MEMBERS))
    want = {m: len(result[m].partitions) for m in EXERCISE_3_MEMBERS}
    if got == want:
        split = ", ".join(
            f"{t} {p} = " + "+".join(str(p // len(EXERCISE_3_MEMBERS) + (i < p % len(
                EXERCISE_3_MEMBERS))) for i in range(len(EXERCISE_3_MEMBERS)))
            for t, p in EXERCISE_3_TOPICS.items())
        return Feedback(ex, "correct", f"Range works topic by topic ({split}), and the same "
                                       f"first members get the extras of every topic.")
    if sum(got.values()) != sum(EXERCISE_3_TOPICS.values()):
        hint = f"The counts must add up to all {sum(EXERCISE_3_TOPICS.values())} partitions."
    elif max(got.values()) - min(got.values()) <= 1:
        hint = ("That is a perfectly even spread, as roundrobin or sticky would give. Range "
                "splits each topic separately: which members get the extra partitions?")
    else:
        hint = "Split each topic on its own: P // N each, and the first P % N members one more."
    return Feedback(ex, "wrong", f"{got} is not it. {hint}")


@lru_cache(maxsize=None)
def _exercise_4_facts() -> tuple[tuple[str, tuple[int, int]], ...]:
    out = []
    for label, strategy in (("eager", "range"), ("cooperative", "cooperative-sticky")):
        run = third_joins(strategy)
        gaps = _interruptions(run)
        out.append((label, (rebalance_count(run), len({g["_tp"] for g in gaps}))))
    return tuple(out)


def check_eager_vs_cooperative(answer: Any) -> Feedback:
    """Exercise 4: {"eager": (rebalances, partitions stopped), "cooperative": (...)} when
    consumer-3 joins the group of consumer-1 and -2 (6 partitions), as in section 5."""
    ex = "Exercise 4"
    if unanswered(answer):
        return not_answered(ex, 'a dict such as {"eager": (1, 6), "cooperative": (1, 6)}')
    if not isinstance(answer, Mapping) or set(answer) != {"eager", "cooperative"}:
        return Feedback(ex, "wrong", 'Give a dict with the keys "eager" and "cooperative", each '
                                     'a pair (rebalances, partitions stopped).')
    pairs = {}
    for k, v in answer.items():
        if not isinstance(v, (tuple, list)) or len(v) != 2 or any(
                _int_or_none(x) is None for x in v):
            return Feedback(ex, "wrong", f"{k!r} must be a pair of whole numbers (rebalances, "
                                         f"partitions stopped), got {v!r}.")
        pairs[k] = tuple(v)
    want = dict(_exercise_4_facts())
    if pairs == want:
        return Feedback(ex, "correct", f"Eager: {want['eager'][0]} rebalance, every one of the "
                                       f"{want['eager'][1]} partitions stops. Cooperative: "
                                       f"{want['cooperative'][0]} rebalances, only the "
                                       f"{want['cooperative'][1]} partitions that move stop.")
    hints = []
    if pairs["eager"] != want["eager"]:
        hints.append("eager revokes every partition of every member before rejoining, in a "
                     "single rebalance")
    if pairs["cooperative"] != want["cooperative"]:
        hints.append("cooperative revokes only the partitions that change owner, and hands "
                     "them over in a follow-up rebalance")
    return Feedback(ex, "wrong", f"{pairs} is not it: " + "; ".join(hints) + ".")


@lru_cache(maxsize=None)
def _exercise_5_facts(down_ms: int) -> tuple[int, int]:
    return (rebalance_count(rolling_restart_run(static=False, down_ms=down_ms)),
            rebalance_count(rolling_restart_run(static=True, down_ms=down_ms)))


def check_rolling_restart(answer: Any) -> Feedback:
    """Exercise 5: {"dynamic": n, "static": m}, the rebalances of a rolling restart of three
    consumers when each restart keeps the process down for 10 s (session.timeout.ms 45 s)."""
    ex = "Exercise 5"
    if unanswered(answer):
        return not_answered(ex, 'a dict such as {"dynamic": 3, "static": 3}')
    got, error = _dict_of_ints(ex, answer, ("dynamic", "static"))
    if error is not None:
        return error
    dynamic, static = _exercise_5_facts(10_000)
    if got == {"dynamic": dynamic, "static": static}:
        return Feedback(ex, "correct", f"Dynamic: {dynamic} rebalances, {dynamic // 3} per "
                                       f"restart (the LeaveGroup, then the new member). Static: "
                                       f"{static}; no "
                                       f"LeaveGroup, and the same group.instance.id comes back "
                                       f"within the session timeout.")
    hints = []
    if got["dynamic"] != dynamic:
        hints.append("with 10 s down, the rebalance caused by the LeaveGroup is over before the "
                     "new process joins, so the join is a second rebalance")
    if got["static"] != static:
        hints.append("a static member sends no LeaveGroup, and its instance id comes back before "
                     "session.timeout.ms runs out")
    return Feedback(ex, "wrong", f"{got} is not it: " + "; ".join(hints) + ".")
