"""The fault vocabulary the random-schedule tests draw from, applied to a running cluster.

Imported by tests/test_cluster.py, tests/test_cooperative_consumption.py,
tests/test_recording.py and tests/test_invariants.py (pytest puts this directory on sys.path;
the file is not collected as tests)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from coordinator_kit.cluster import Cluster

ACTIONS = ("crash", "pause", "slow", "drop", "cut", "heal", "move", "add", "leave")
# every fault the cluster has: the consumers' above, plus a failed append to the group's
# `__consumer_offsets` partition, a failed load on the broker the coordinator moves to next
# (then the move), and a stalled follower of that partition ("heal" resumes stalled followers)
ALL_FAULTS = ACTIONS + ("append", "load", "stall")
# the faults of group-1's coordinator partition, which need no consumer ("resume": the stalled
# followers fetch again)
COORDINATOR_FAULTS = ("move", "append", "load", "stall", "resume")


def apply_coordinator_fault(cluster: Cluster, action: str, who: int,
                            do: Callable[..., Any] | None = None) -> None:
    """Apply one of `COORDINATOR_FAULTS` to group-1's `__consumer_offsets` partition: move its
    leadership to the next in-sync replica (if there is one), fail its next append, fail the
    next load on the `who`-th other in-sync replica and move there, stall the `who`-th follower,
    or resume every stalled follower."""
    if do is None:
        def do(method: str, *args: Any) -> Any:
            return getattr(cluster, method)(*args)
    tp = cluster.partition_of("group-1")
    p = cluster.partitions[tp]
    if action == "move":
        if len(p.isr) > 1:  # another in-sync replica can lead
            do("move_coordinator", "group-1")
    elif action == "append":
        do("fail_next_append", tp.partition)
    elif action == "load":
        others = [b for b in p.isr if b != p.leader_id]
        if others:
            target = others[who % len(others)]
            do("fail_next_load", tp.partition, target)
            do("move_coordinator", tp.partition, target)
    elif action == "stall":
        followers = [b for b in sorted(p.replicas) if b != p.leader_id]
        do("stall_replica", tp.partition, followers[who % len(followers)])
    elif action == "resume":
        for b, replica in sorted(p.replicas.items()):
            if not replica.fetching:
                do("stall_replica", tp.partition, b, False)
    else:
        raise ValueError(f"not a coordinator fault: {action!r}; one of {COORDINATOR_FAULTS}")


def apply_fault(cluster: Cluster, action: str, who: int, ms: int, extra: int,
                do: Callable[..., Any] | None = None) -> int:
    """Apply one scheduled fault to the `who`-th live consumer (any action adds a consumer
    when none is live); returns the number the next added consumer gets. `do(method, *args)`
    makes the cluster call (a `Recording.act` records it); by default the cluster's own method."""
    if do is None:
        def do(method: str, *args: Any) -> Any:
            return getattr(cluster, method)(*args)
    live = [c.name for c in cluster.consumers.values() if c.running and not c.crashed]
    name = live[who % len(live)] if live else None
    if action == "add" or name is None:
        do("add_consumer", f"c{extra}")
        return extra + 1
    if action == "crash" and len(live) > 1:
        do("crash", name)
    elif action == "pause":
        do("pause", name, ms)
    elif action == "slow":
        do("slow_poll", name, ms)
    elif action == "drop":
        do("drop_heartbeats", name, True)
    elif action == "cut":
        do("cut_off", name, True)
    elif action == "heal":
        do("cut_off", name, False)
        do("drop_heartbeats", name, False)
        do("slow_poll", name, 100)
        apply_coordinator_fault(cluster, "resume", who, do)
    elif action == "leave" and len(live) > 1:
        do("leave", name)
    elif action in COORDINATOR_FAULTS:
        apply_coordinator_fault(cluster, action, who, do)
    return extra


def run_schedule(cluster: Cluster, schedule: Any, *, consumers: int = 3,
                 settle_ms: int = 60_000) -> Cluster:
    """`consumers` consumers join (8 s), then each (action, who, ms) of `schedule` is applied
    and run for `ms`; then everything heals (stalled followers resume, no consumer is cut off
    or drops heartbeats) and the cluster runs `settle_ms`. A coordinator left without a loaded
    context (its load failed) is moved once more, as a controller would elect a new leader."""
    for i in range(consumers):
        cluster.add_consumer(f"c{i}")
    cluster.run_for(8_000)
    extra = consumers
    for action, who, ms in schedule:
        extra = apply_fault(cluster, action, who, ms, extra)
        cluster.run_for(ms)
    tp = cluster.partition_of("group-1")
    p = cluster.partitions[tp]
    apply_coordinator_fault(cluster, "resume", 0)
    for name, c in cluster.consumers.items():
        if c.running and not c.crashed:
            cluster.cut_off(name, False)
            cluster.drop_heartbeats(name, False)
    cluster.run_for(settle_ms)
    ctx = cluster.brokers[p.leader_id].runtime.context(tp)
    if (ctx is None or ctx.state.name != "ACTIVE") and len(p.isr) > 1:
        cluster.move_coordinator("group-1")
        cluster.run_for(settle_ms)
    return cluster
