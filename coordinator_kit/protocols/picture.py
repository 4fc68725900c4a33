"""Who consumed each partition around the fault, one panel per protocol.

The lanes are `viz.ownership.ownership_lanes` (one lane per partition, a bar in the consumer's
colour, grey while nobody consumes it), drawn from the same samples the comparison table counts,
zoomed on the rebalance: from a little before the first fault to a little after the slowest
protocol settled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .compare import ProtocolComparison

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["protocol_lanes"]


def protocol_lanes(comparison: ProtocolComparison, *, margin_ms: int = 2_000,
                   start_ms: int | None = None, end_ms: int | None = None) -> Figure:
    """The ownership lanes of every protocol in `comparison`, zoomed on the rebalance
    (`start_ms`/`end_ms` override the zoom)."""
    from ..viz.ownership import ownership_lanes

    if isinstance(margin_ms, bool) or not isinstance(margin_ms, int) or margin_ms < 0:
        raise ValueError(f"margin_ms is a whole number of milliseconds >= 0, got {margin_ms!r}")
    scenario = comparison.scenario
    faults = sorted(f.at_ms for f in scenario.faults)
    first, last = (faults[0], faults[-1]) if faults else (0, 0)
    settle = max((p.settle_ms for p in comparison.protocols if p.settle_ms is not None),
                 default=scenario.run_ms - last)
    start = max(0, first - margin_ms) if start_ms is None else start_ms
    end = min(scenario.run_ms, last + settle + margin_ms) if end_ms is None else end_ms
    if end <= start:
        raise ValueError(f"end_ms ({end}) must be after start_ms ({start})")
    return ownership_lanes(comparison.as_eras_comparison(), comparison.group,
                           start_ms=start, end_ms=end,
                           title=f"Who consumes each partition: {scenario.description or scenario.name}")
