"""Which scenarios become datasets, at which log level, and what a learner should look for.

Every scenario in `coordinator_kit.scenarios.SCENARIOS` gets a folder, plus `many-groups`
(defined here): three groups on two coordinators with several faults at once, the closest thing
to a real broker log among the small datasets. Each entry names lines a learner should find; a
test checks that each of them is in the file named, so the README never points at a line that a
change in behaviour has removed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..cluster import Cluster
from ..scenarios import SCENARIOS, new_cluster

__all__ = ["DatasetSpec", "DATASETS", "many_groups", "consumer_protocol_faults", "dataset",
           "CONSUMER_PROTOCOL_DATASETS"]


def many_groups(seed: int = 0, **kw: Any) -> Cluster:
    """Three groups, two coordinators, five faults.

    `billing` and `shipping` hash to `__consumer_offsets-1` (broker 1), `analytics` to
    `__consumer_offsets-0` (broker 0). At 15 s an `analytics` consumer crashes (cooperative
    rebalance after the session timeout) and a `billing` consumer starts taking 40 s per poll
    (above its 30 s max.poll.interval.ms); at 35 s partition 1 moves to broker 2, taking both of
    its groups along; at 55 s a `shipping` consumer is cut off from the network for a minute.
    """
    c = new_cluster(seed, topics={"orders": 6, "payments": 4, "clicks": 8}, **kw)
    for i in (1, 2):
        c.add_consumer(f"billing-{i}", group_id="billing", topics=("payments",),
                       max_poll_interval_ms=30_000)
    for i in (1, 2, 3):
        c.add_consumer(f"analytics-{i}", group_id="analytics", topics=("clicks",),
                       partition_assignment_strategy=("cooperative-sticky",))
    for i in (1, 2):
        c.add_consumer(f"shipping-{i}", group_id="shipping", topics=("orders",))
    c.run_for(15_000)
    c.crash("analytics-3")
    c.slow_poll("billing-2", 40_000)
    c.run_for(20_000)
    c.move_coordinator("shipping")
    c.run_for(20_000)
    c.cut_off("shipping-2")
    c.run_for(60_000)
    c.cut_off("shipping-2", False)
    c.run_for(30_000)
    return c


def consumer_protocol_faults(seed: int = 0, **kw: Any) -> Cluster:
    """A consumer group of the consumer group protocol (KIP-848, `group.protocol=consumer`)
    and two failures.

    consumer-1 and consumer-2 start at 0 s, consumer-3 joins at 10 s (the coordinator moves
    two partitions to it, one from each, without stopping the others); at 20 s consumer-1
    crashes (the coordinator fences it 45 s after its last heartbeat,
    `group.consumer.session.timeout.ms`) and consumer-2 starts taking 40 s per poll (above its
    30 s `max.poll.interval.ms`: it leaves the group by itself, and rejoins on its next poll).
    The cluster traces at INFO, as a broker logging at INFO writes: Kafka logs a target
    assignment at INFO only when DEBUG is off (`GroupMetadataManager.updateTargetAssignment`).
    """
    kw.setdefault("trace_level", "INFO")
    c = new_cluster(seed, **kw)
    for name in ("consumer-1", "consumer-2"):
        c.add_consumer(name, group_protocol="consumer", max_poll_interval_ms=30_000)
    c.run_for(10_000)
    c.add_consumer("consumer-3", group_protocol="consumer", max_poll_interval_ms=30_000)
    c.run_for(10_000)
    c.crash("consumer-1")
    c.slow_poll("consumer-2", 40_000)
    c.run_for(75_000)
    return c


@dataclass(frozen=True)
class DatasetSpec:
    """One dataset folder: the scenario that makes it and how to read it."""

    name: str
    build: Callable[..., Cluster]
    summary: str
    look_for: tuple[tuple[str, str, str], ...]  # (file, text in it, what it shows)
    seed: int = 0
    broker_level: str = "INFO"
    client_level: str = "INFO"

    def run(self) -> Cluster:
        return self.build(self.seed)


DATASETS: dict[str, DatasetSpec] = {}


def _add(spec: DatasetSpec) -> None:
    DATASETS[spec.name] = spec


def dataset(name: str) -> DatasetSpec:
    try:
        return DATASETS[name]
    except KeyError:
        raise KeyError(f"no dataset scenario {name!r}; known: {', '.join(DATASETS)}") from None


_add(DatasetSpec(
    "consumer-joins", SCENARIOS["consumer-joins"],
    "One consumer finds its coordinator (broker 2, which leads `__consumer_offsets-2`), is "
    "told to rejoin with the member id the broker made for it (`MEMBER_ID_REQUIRED`), waits "
    "out `group.initial.rebalance.delay.ms` (3 s) and gets all six partitions of `orders`.",
    (("server-broker-2.log", "Dynamic member with unknown member id joins group group-1 in "
      "Empty state", "the first JoinGroup: the broker creates the member id"),
     ("server-broker-2.log", "Stabilized group group-1 generation 1 with 1 members.",
      "3 s later: the initial delay is over"),
     ("client-consumer-1.log", "Adding newly assigned partitions: orders-0, orders-1",
      "the consumer starts fetching"))))

_add(DatasetSpec(
    "second-joins", SCENARIOS["second-joins"],
    "A second consumer joins the stable group at 10 s. The coordinator starts a rebalance; the "
    "first consumer hears of it on its next heartbeat (`REBALANCE_IN_PROGRESS`), revokes all "
    "its partitions (eager `range`) and rejoins; generation 2 splits `orders` 3/3.",
    (("server-broker-2.log", "Preparing to rebalance group group-1 in state PreparingRebalance "
      "with old generation 1", "the rebalance the new member causes"),
     ("client-consumer-1.log", "Request joining group due to: group is already rebalancing",
      "the heartbeat answer that tells consumer-1"),
     ("client-consumer-1.log", "Revoke previously assigned partitions orders-0, orders-1, "
      "orders-2, orders-3, orders-4, orders-5", "eager protocol: everything is revoked"))))

_add(DatasetSpec(
    "one-dies", SCENARIOS["one-dies"],
    "After `second-joins`, consumer-1 crashes at 20 s without a LeaveGroup. Nothing happens "
    "for 45 s (`session.timeout.ms`); then the coordinator expires the member and consumer-2 "
    "takes over all partitions. Its log simply stops: a crash leaves no last words.",
    (("server-broker-2.log", "has failed, removing it from the group.",
      "the session timeout firing, 45 s after the last heartbeat"),
     ("server-broker-2.log", "(reason: removing member consumer-1-",
      "the rebalance reason names the expired member"),
     ("client-consumer-2.log", "Finished assignment for group at generation 3",
      "consumer-2 is leader and takes everything"))))

_add(DatasetSpec(
    "long-gc-pause", SCENARIOS["long-gc-pause"],
    "After `second-joins`, consumer-1 stops the world for 60 s (a GC pause longer than the "
    "45 s session timeout). The coordinator expels it; when the pause ends its auto-commit "
    "fails with `UNKNOWN_MEMBER_ID`, it gives its partitions away as lost and joins again as "
    "a new member, which costs the group another rebalance. The client logs of this scenario "
    "are at DEBUG, so every heartbeat the consumers send is a line: the pause is the gap.",
    (("client-consumer-1.log", "Asynchronous auto-commit of offsets",
      "WARN: the first request after the pause is refused"),
     ("client-consumer-1.log", "Giving away all assigned partitions as lost",
      "onPartitionsLost, not onPartitionsRevoked: someone else may own them already"),
     ("server-broker-2.log", "Member consumer-1-",
      "the expiry while consumer-1 was paused"),
     ("client-consumer-1.log", "Sending Heartbeat request with generation",
      "DEBUG: a heartbeat every 3 s, then none for the length of the pause")),
    client_level="DEBUG"))

_add(DatasetSpec(
    "coordinator-failover", SCENARIOS["coordinator-failover"],
    "After `second-joins` and some auto-commits, leadership of `__consumer_offsets-2` moves "
    "from broker 2 to broker 0. Broker 2 unloads the group, broker 0 replays the partition "
    "(loading the committed offsets and the group) and the consumers, answered "
    "`NOT_COORDINATOR`, find the new coordinator. The broker logs of this scenario are at "
    "DEBUG, so the runtime's own lines (events, timers, high watermark) are visible too.",
    (("server-broker-2.log", "Scheduling unloading of metadata for __consumer_offsets-2 with "
      "epoch OptionalInt[1]", "the old coordinator resigns"),
     ("server-broker-0.log", "Loaded classic group group-1 with 2 members.",
      "the new coordinator rebuilt the group from the log"),
     ("server-broker-0.log", "Finished loading of metadata from __consumer_offsets-2 with "
      "epoch 1", "how many records and bytes the load replayed"),
     ("client-consumer-1.log", "Discovered group coordinator localhost:9092",
      "the consumer found broker 0")),
    broker_level="DEBUG"))

_add(DatasetSpec(
    "rolling-restart", SCENARIOS["rolling-restart"],
    "Three consumers restarted one after the other, 15 s apart, each down for 2 s. Without "
    "`group.instance.id` every restart costs a rebalance: the closing consumer's LeaveGroup "
    "starts it, and the new process joins it as a new member (a new member id) before the "
    "others have all rejoined, so the group moves through generations 2, 3 and 4, each time "
    "revoking every partition (eager `range`).",
    (("server-broker-2.log", "has left group through explicit `LeaveGroup` request; client "
      "reason: the consumer is being closed", "a clean shutdown sends LeaveGroup"),
     ("client-consumer-1.log", "sending LeaveGroup request to coordinator",
      "the client's side of it"),
     ("server-broker-2.log", "Stabilized group group-1 generation 4 with 3 members.",
      "one generation per restart"))))

_add(DatasetSpec(
    "rolling-restart-static", SCENARIOS["rolling-restart-static"],
    "The same restarts with static membership (`group.instance.id=instance-N`): a static "
    "member sends no LeaveGroup on close, and its replacement takes over the old member's "
    "place within the session timeout, so the group stays at generation 1 throughout.",
    (("server-broker-2.log", "Static member with groupInstanceId=instance-1 and unknown "
      "member id joins group group-1 in Stable state. Replacing previously mapped member",
      "the restarted process takes over its instance id"),
     ("server-broker-2.log", "Static member which joins during Stable stage and doesn't "
      "affect the selected protocol will not trigger a rebalance.", "... without a rebalance"),
     ("client-consumer-1.log", "Successfully synced group in generation Generation{"
      "generationId=1", "still generation 1 after the restart"))))

_add(DatasetSpec(
    "many-groups", many_groups,
    "Three groups on one cluster (`billing` and `shipping` on `__consumer_offsets-1`, "
    "`analytics` on `__consumer_offsets-0`) and several faults at once: an `analytics` "
    "consumer crashes (cooperative-sticky: only its partitions move), a `billing` consumer "
    "polls too slowly (40 s per batch against `max.poll.interval.ms=30000`) and leaves the "
    "group from its heartbeat thread, partition 1 moves from broker 1 to broker 2 taking two "
    "groups along, and a `shipping` consumer is cut off from the network for a minute.",
    (("client-billing-2.log", "consumer poll timeout has expired.",
      "WARN from the heartbeat thread: max.poll.interval.ms exceeded"),
     ("server-broker-1.log", "Scheduling unloading of metadata for __consumer_offsets-1",
      "one partition, two groups unloaded"),
     ("server-broker-2.log", "Loaded classic group shipping with 2 members.",
      "... and both loaded on broker 2"),
     ("server-broker-0.log", "Member analytics-3-", "the crashed consumer expires"))))

_add(DatasetSpec(
    "consumer-protocol-faults", consumer_protocol_faults,
    "The consumer group protocol of Kafka 4.0 (KIP-848, `group.protocol=consumer`): no "
    "JoinGroup/SyncGroup, the coordinator computes the assignment and each member reconciles "
    "to it on its own heartbeats. consumer-3 joins at 10 s and receives one partition from "
    "each of the others, which keep consuming the rest; at 20 s consumer-1 crashes and "
    "consumer-2 starts taking 40 s per poll (over its 30 s `max.poll.interval.ms`). consumer-2 "
    "leaves the group by itself at 50 s (a leave heartbeat, epoch -1), rejoins on its next "
    "poll with the same member id, and leaves again; the coordinator fences consumer-1 when "
    "its session runs out, 45 s after its last heartbeat. Group epochs 1 to 7.",
    (("server-broker-2.log", "joins the consumer group using the consumer protocol.",
      "a member joins: no JoinGroup barrier"),
     ("server-broker-2.log", "Computed a new target assignment for epoch 3 with 'uniform' "
      "assignor", "the coordinator assigns (the server-side uniform assignor)"),
     ("client-consumer-1.log", "Revoke previously assigned partitions orders-2",
      "consumer-1 gives up one partition and keeps the others"),
     ("client-consumer-2.log", "Consumer poll timeout has expired.",
      "WARN: max.poll.interval.ms exceeded; the member leaves"),
     ("server-broker-2.log", "fenced from the group because the member session expired.",
      "consumer-1's session expiry (Kafka's own double period)"),
     ("client-consumer-3.log", "with epoch 7 transitioned from ACKNOWLEDGING to STABLE.",
      "the survivor reconciled to the last target"))))

# The datasets of the consumer group protocol (KIP-848): lesson 05 reads the classic ones.
CONSUMER_PROTOCOL_DATASETS = frozenset({"consumer-protocol-faults"})
