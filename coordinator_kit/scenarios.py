"""Named, seeded scenarios that the notebooks and tests share.

Each returns the `Cluster` after running it, with an `InvariantMonitor` attached
(`cluster.monitor`), so a lesson can show what happened and a test can check that nothing that
must hold was broken. Same name and seed, same trace.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .cluster import Cluster
from .invariants import InvariantMonitor

__all__ = ["SCENARIOS", "run_scenario", "new_cluster"]


def new_cluster(seed: int = 0, **kwargs: Any) -> Cluster:
    cluster = Cluster(seed=seed, **kwargs)
    cluster.monitor = InvariantMonitor(cluster)  # type: ignore[attr-defined]
    return cluster


def consumer_joins(seed: int = 0, **kw: Any) -> Cluster:
    """One consumer finds the coordinator, gets a member id, waits out the initial delay."""
    c = new_cluster(seed, **kw)
    c.add_consumer("consumer-1")
    c.run_for(10_000)
    return c


def second_joins(seed: int = 0, **kw: Any) -> Cluster:
    """A second consumer joins a stable group: everyone rejoins, partitions are split."""
    c = consumer_joins(seed, **kw)
    c.add_consumer("consumer-2")
    c.run_for(10_000)
    return c


def one_dies(seed: int = 0, **kw: Any) -> Cluster:
    """A consumer crashes; the coordinator notices only when its session times out (45 s)."""
    c = second_joins(seed, **kw)
    c.crash("consumer-1")
    c.run_for(60_000)
    return c


def long_gc_pause(seed: int = 0, pause_ms: int = 60_000, **kw: Any) -> Cluster:
    """A stop-the-world pause longer than session.timeout.ms: the member is expelled, then finds
    out on its next heartbeat (UNKNOWN_MEMBER_ID), loses its partitions and rejoins."""
    c = second_joins(seed, **kw)
    c.pause("consumer-1", pause_ms)
    c.run_for(pause_ms + 20_000)
    return c


def coordinator_failover(seed: int = 0, **kw: Any) -> Cluster:
    """The group's `__consumer_offsets` partition moves to another broker; consumers get
    NOT_COORDINATOR, rediscover the coordinator, and the state is rebuilt from the log."""
    c = second_joins(seed, **kw)
    c.run_for(6_000)  # let auto-commit write some offsets
    c.move_coordinator("group-1")
    c.run_for(15_000)
    return c


def rolling_restart(seed: int = 0, static: bool = False, **kw: Any) -> Cluster:
    """Three consumers restarted one after the other (2 s down, 15 s apart). With
    group.instance.id there is no rebalance at all. Without it each restart here costs one:
    the LeaveGroup starts it, and the successor, back 2 s later, joins it while the others
    are still rejoining (generation 1 -> 4). With other timings a restart can cost two, one
    for the leave and one for the join."""
    c = new_cluster(seed, **kw)
    for i in range(1, 4):
        extra = {"group_instance_id": f"instance-{i}"} if static else {}
        c.add_consumer(f"consumer-{i}", **extra)
    c.run_for(10_000)
    for i in range(1, 4):
        c.restart_consumer(f"consumer-{i}", down_ms=2_000)
        c.run_for(15_000)
    return c


SCENARIOS: dict[str, Callable[..., Cluster]] = {
    "consumer-joins": consumer_joins,
    "second-joins": second_joins,
    "one-dies": one_dies,
    "long-gc-pause": long_gc_pause,
    "coordinator-failover": coordinator_failover,
    "rolling-restart": lambda seed=0, **kw: rolling_restart(seed, static=False, **kw),
    "rolling-restart-static": lambda seed=0, **kw: rolling_restart(seed, static=True, **kw),
}


def run_scenario(name: str, seed: int = 0, **kwargs: Any) -> Cluster:
    try:
        scenario = SCENARIOS[name]
    except KeyError:
        raise KeyError(f"no scenario {name!r}; known: {', '.join(SCENARIOS)}") from None
    return scenario(seed, **kwargs)
