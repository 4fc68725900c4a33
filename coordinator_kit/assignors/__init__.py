"""Client-side partition assignors, after Kafka's (`org.apache.kafka.clients.consumer`).

The group leader runs one of these on every member's `Subscription` and sends each member its
`Assignment`. ``range`` and ``roundrobin`` reproduce Kafka's output exactly; ``sticky`` and
``cooperative-sticky`` reach the same goals (balance, then stickiness) with a faster algorithm,
and ``cooperative-sticky`` withholds moving partitions for one round as KIP-429 requires.

Quick tour::

    from coordinator_kit.assignors import Subscription, get_assignor
    subs = {"C0": Subscription(("t0", "t1")), "C1": Subscription(("t0", "t1"))}
    get_assignor("range").assign({"t0": 3, "t1": 3}, subs)
    # C0: t0-0, t0-1, t1-0, t1-1    C1: t0-2, t1-2
"""

from ._api import (
    Assignment,
    PartitionAssignor,
    RebalanceProtocol,
    Subscription,
    java_order,
    select_protocol,
)
from ._range import RangeAssignor
from ._registry import ASSIGNORS, UnknownAssignorError, get_assignor
from ._roundrobin import RoundRobinAssignor
from ._sticky import CooperativeStickyAssignor, StickyAssignor, StickyPlan

__all__ = [
    "ASSIGNORS",
    "Assignment",
    "CooperativeStickyAssignor",
    "PartitionAssignor",
    "RangeAssignor",
    "RebalanceProtocol",
    "RoundRobinAssignor",
    "StickyAssignor",
    "StickyPlan",
    "Subscription",
    "UnknownAssignorError",
    "get_assignor",
    "java_order",
    "select_protocol",
]
