"""The scenarios the three designs are compared on, by name.

Each uses every design's own defaults (a ZooKeeper session of 6 s, three missed 2 s pings for
the central coordinator, a 45 s session for today's consumer), because those are what each
design's users lived with; `Scenario.settings` changes them for a like-for-like comparison.
"""

from __future__ import annotations

from .api import Fault, Scenario

__all__ = ["SCENARIOS", "scenario"]

_T = {"t": 6}
_THREE = {"group-1": ("consumer-1", "consumer-2", "consumer-3")}

SCENARIOS: dict[str, Scenario] = {s.name: s for s in (
    Scenario("crash", _THREE, _T, (Fault(30_000, "crash", "consumer-2"),), run_ms=120_000,
             description="consumer-2 dies at 30 s (kill -9) and never comes back"),
    Scenario("short-pause", _THREE, _T, (Fault(30_000, "pause", "consumer-2", 3_000),),
             run_ms=90_000, description="consumer-2 freezes for 3 s (a GC pause) at 30 s"),
    Scenario("long-pause", _THREE, _T, (Fault(30_000, "pause", "consumer-2", 50_000),),
             run_ms=150_000, description="consumer-2 freezes for 50 s (a long GC pause) at "
                                         "30 s, longer than every design's failure detection"),
    Scenario("coordinator", _THREE, _T, (Fault(30_000, "coordinator", duration_ms=10_000),),
             run_ms=120_000, description="the coordinator fails at 30 s (ZooKeeper: "
                                         "unreachable for 10 s)"),
    Scenario("join-large", {"group-1": tuple(f"consumer-{i}" for i in range(1, 21))},
             {"t": 40}, (Fault(30_000, "join", "consumer-21"),), run_ms=120_000,
             description="a 21st consumer joins a group of 20 at 30 s"),
    Scenario("many-groups", {f"group-{g}": tuple(f"g{g}-consumer-{i}" for i in (1, 2, 3))
                             for g in range(1, 11)}, _T,
             (Fault(30_000, "coordinator", duration_ms=10_000),), run_ms=120_000,
             description="ten groups of three; the coordinator fails at 30 s"),
    Scenario("cut", _THREE, _T, (Fault(30_000, "cut", "consumer-2", 60_000),), run_ms=150_000,
             description="consumer-2 loses its way to the coordinator (or ZooKeeper) for 60 s "
                         "but still reaches the brokers"),
)}


def scenario(name: str) -> Scenario:
    """The scenario called `name` (see SCENARIOS)."""
    try:
        return SCENARIOS[name]
    except KeyError:
        raise ValueError(f"no scenario {name!r}; the scenarios are "
                         f"{', '.join(SCENARIOS)}") from None
