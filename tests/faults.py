"""The fault vocabulary the random-schedule tests draw from, applied to a running cluster.

Imported by tests/test_cluster.py and tests/test_cooperative_consumption.py (pytest puts this
directory on sys.path; the file is not collected as tests)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from coordinator_kit.cluster import Cluster

ACTIONS = ("crash", "pause", "slow", "drop", "cut", "heal", "move", "add", "leave")


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
    elif action == "move":
        do("move_coordinator", "group-1")
    elif action == "leave" and len(live) > 1:
        do("leave", name)
    elif action == "append":
        do("fail_next_append", cluster.partition_of("group-1").partition)
    return extra
