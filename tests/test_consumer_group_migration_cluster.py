"""Classic consumers and consumer-protocol consumers in one group, on a simulated cluster: the
online upgrade when the first `group.protocol=consumer` consumer joins a classic group
(`GroupMetadataManager.convertToConsumerGroup`), classic members served by the consumer group
(`classicGroupJoinToConsumerGroup` and friends), and the online downgrade when the last
consumer-protocol member leaves (`convertToClassicGroup`), with a coordinator move in between.

Whatever happens, one partition has one owner: every batch a consumer processes is checked
against what every other live consumer of the group holds at that moment."""

from __future__ import annotations

from typing import Any

from coordinator_kit.cluster import Cluster
from coordinator_kit.consumer_group_invariants import ConsumerGroupMonitor
from coordinator_kit.group.classic import ClassicGroupState
from coordinator_kit.group.modern.consumer_group import ConsumerGroupState
from coordinator_kit.logs.parse import parse_lines
from coordinator_kit.topic import TopicPartition

ALL = {TopicPartition("orders", p) for p in range(6)}


class OwnerCheck:
    """At each batch: nobody else alive holds the partition (one owner per partition)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.violations: list[str] = []
        self.batches = 0
        self.hooked: set[Any] = set()

    def hook(self) -> None:
        for consumer in self.cluster.consumers.values():
            if consumer in self.hooked:
                continue
            self.hooked.add(consumer)

            def watch(tp: TopicPartition, start: int, end: int, consumer: Any = consumer) -> None:
                self.batches += 1
                for other in self.cluster.consumers.values():
                    if other is not consumer and other.running and not other.crashed \
                            and tp in other.owned:
                        self.violations.append(f"{self.cluster.scheduler.now} ms: "
                                               f"{consumer.name} processed {tp} held by "
                                               f"{other.name}")
            consumer.on_records = watch


def owners(cluster: Cluster) -> dict[TopicPartition, list[str]]:
    out: dict[TopicPartition, list[str]] = {}
    for c in cluster.consumers.values():
        if c.running and not c.crashed:
            for tp in c.owned:
                out.setdefault(tp, []).append(c.name)
    return out


def test_classic_and_consumer_protocol_consumers_share_one_group() -> None:
    cluster = Cluster(brokers=3, topics={"orders": 6}, trace_level="DEBUG",
                      group_config={"offsets.topic.num.partitions": 1})
    check = OwnerCheck(cluster)
    # the kit's KIP-848 monitor watches the consumer-protocol members against the coordinator
    # (single owner, epochs only grow, no commit at a stale epoch) while the group is one
    monitor = ConsumerGroupMonitor(cluster, "group-1")
    cluster.add_consumer("classic-1", topics=("orders",))
    cluster.add_consumer("classic-2", topics=("orders",))
    check.hook()
    cluster.run_for(30_000)
    shard = cluster.shard_for("group-1")
    assert shard.groups.groups.get("group-1").state is ClassicGroupState.STABLE

    # the upgrade: a consumer of the new protocol joins the Stable classic group
    cluster.add_consumer("kip848-1", topics=("orders",), group_protocol="consumer")
    check.hook()
    cluster.run_for(60_000)
    shard = cluster.shard_for("group-1")
    group = shard.consumer_groups.groups.get("group-1")
    assert group is not None and "group-1" not in shard.groups.groups
    assert group.state is ConsumerGroupState.STABLE
    assert group.num_classic_protocol_members == 2 and len(group.members) == 3
    got = owners(cluster)
    assert set(got) == ALL and all(len(names) == 1 for names in got.values())
    assert {name for names in got.values() for name in names} == \
        {"classic-1", "classic-2", "kip848-1"}

    # a second consumer-protocol member, then a coordinator move: the group is rebuilt from
    # its records (classic members and their ClassicMemberMetadata included)
    cluster.add_consumer("kip848-2", topics=("orders",), group_protocol="consumer")
    check.hook()
    cluster.run_for(30_000)
    cluster.move_coordinator("group-1")
    cluster.run_for(60_000)
    shard = cluster.shard_for("group-1")
    group = shard.consumer_groups.groups.get("group-1")
    assert group is not None and len(group.members) == 4
    assert group.num_classic_protocol_members == 2
    assert group.state is ConsumerGroupState.STABLE
    got = owners(cluster)
    assert set(got) == ALL and all(len(names) == 1 for names in got.values())

    # the downgrade: both consumer-protocol members leave; the classic members go on in a
    # classic group, which rebalances
    cluster.consumer("kip848-2").close()
    cluster.run_for(30_000)
    cluster.consumer("kip848-1").close()
    cluster.run_for(60_000)
    shard = cluster.shard_for("group-1")
    assert "group-1" not in shard.consumer_groups.groups
    classic = shard.groups.groups.get("group-1")
    assert classic.state is ClassicGroupState.STABLE and len(classic.members) == 2
    got = owners(cluster)
    assert set(got) == ALL and all(len(names) == 1 for names in got.values())
    assert {name for names in got.values() for name in names} == {"classic-1", "classic-2"}

    lines = "\n".join(cluster.trace.lines())
    assert "joins the consumer group using the classic protocol." in lines
    assert "(reason: Downgrade group group-1 from consumer to classic.)" in lines
    # the kit's parser reads the migration's lines as Kafka's templates
    wanted = [line for line in cluster.trace.lines(level="DEBUG")
              if "using the classic protocol" in line or "Downgrade group" in line
              or "Skip downgrading" in line or "requesting the member to rejoin" in line]
    parsed = list(parse_lines(wanted, "server.log"))
    assert parsed and all(kind == "event" for kind, _ in parsed)
    assert {r["event"] for _, r in parsed} >= {"member_joined", "rebalance_started",
                                               "member_id_required"}
    assert check.batches > 100
    assert check.violations == []
    monitor.assert_ok()
    assert monitor.batches > 50 and monitor.commits_checked > 0
