"""The client/broker boundary (`coordinator_kit.transport`): the consumer knows only a
`ClientHost` and a `Transport`, the brokers only their `CoordinatorEndpoint`, so the same
consumer runs over any transport and the same endpoint serves any caller."""

from __future__ import annotations

import ast
from pathlib import Path

import coordinator_kit
from coordinator_kit.client.config import ConsumerConfig
from coordinator_kit.client.consumer import Consumer
from coordinator_kit.cluster import Cluster
from coordinator_kit.errors import Errors
from coordinator_kit.group.service import GroupCoordinatorService
from coordinator_kit.transport import CoordinatorEndpoint

PACKAGE = Path(coordinator_kit.__file__).parent


def _imports(folder: Path) -> set[str]:
    out = set()
    for f in folder.glob("*.py"):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                out.add(node.module)
    return out


def test_the_client_package_imports_nothing_from_the_cluster():
    modules = _imports(PACKAGE / "client")
    assert not [m for m in modules if m.endswith("cluster")], modules


def test_the_group_service_is_a_coordinator_endpoint():
    for name in ("join_group", "sync_group", "heartbeat", "leave_group", "commit_offsets",
                 "fetch_offsets"):
        assert callable(getattr(GroupCoordinatorService, name))
        assert name in CoordinatorEndpoint.__dict__


class _DirectTransport:
    """A transport with no network at all: each call reaches the broker at once, each answer
    comes back when the coordinator completes it; it counts what it carried."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.carried: list[str] = []

    def send(self, client, broker, api, call, on_response, *, timeout_ms, drop=False):
        self.carried.append(api)
        if drop or broker is None:
            self.cluster.scheduler.call_later(timeout_ms, on_response, None,
                                              Errors.REQUEST_TIMED_OUT)
            return
        future = call(self.cluster.brokers[broker].service)
        future.add_done_callback(lambda f: on_response(f.result(), None))

    def find_coordinator(self, client, group_id, on_result):
        self.carried.append("FindCoordinator")
        on_result(self.cluster.coordinator_for(group_id), None)


class _Host:
    """A ClientHost that is not a Cluster: a clock, a trace, topics and a transport."""

    def __init__(self, cluster: Cluster, transport: _DirectTransport) -> None:
        self.scheduler = cluster.scheduler
        self.trace = cluster.trace
        self.topics = cluster.topics
        self.network = transport
        self._cluster = cluster

    def end_offset(self, tp):
        return self._cluster.end_offset(tp)

    def client_index(self, consumer):
        return 1

    def broker_host(self, broker_id):
        return f"direct:{broker_id}"


def test_a_consumer_joins_over_another_transport_unchanged():
    cluster = Cluster(group_config={"group.initial.rebalance.delay.ms": 0})
    transport = _DirectTransport(cluster)
    consumer = Consumer(_Host(cluster, transport),
                        ConsumerConfig.of(group_id="g", client_id="direct-1"), ("orders",))
    consumer.start()
    cluster.run_until(lambda: consumer.owned and cluster.group("g")["state"] == "Stable",
                      limit_ms=30_000)
    assert sorted(tp.partition for tp in consumer.owned) == list(range(6))
    assert cluster.group("g")["members"] == [consumer.member_id]
    cluster.run_for(10_000)
    # the first join meets a loading coordinator (COORDINATOR_LOAD_IN_PROGRESS, at 0 ms), then
    # MEMBER_ID_REQUIRED, the join, the sync, heartbeats and auto-commits: all through it
    first_sync = transport.carried.index("SyncGroup")
    assert transport.carried[:first_sync] == ["FindCoordinator"] + ["JoinGroup"] * 3
    assert {"Heartbeat", "OffsetCommit"} <= set(transport.carried)
