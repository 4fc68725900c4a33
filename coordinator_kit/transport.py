"""The boundary between clients and brokers: what each side may know of the other.

A consumer sends a request as a *call* on the broker's group coordinator endpoint
(`CoordinatorEndpoint`: Kafka's `GroupCoordinator` interface, one method per API taking the
request context and the request, returning a future of the response) and hands it to a
`Transport`, which delivers it to a broker and the answer back. The consumer never learns what
carries it: the simulated network (`cluster.Network`, latency, cuts, lost messages, timeouts on
virtual time) is one transport. The broker side never learns who calls it either: the same
endpoint (`group.service.GroupCoordinatorService`) serves the simulated network's deliveries and
the live server's decoded Kafka requests from real clients (`live.apis.KafkaApis`).

`ClientHost` is what a consumer needs from wherever it runs (a clock, a trace, the topics, the
transport); `Cluster` is one. With these three protocols the client package imports nothing
from `cluster`, and `cluster` alone wires the two sides together.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .clock import Scheduler
    from .errors import Errors
    from .group.api import (HeartbeatRequest, HeartbeatResponse, JoinGroupRequest,
                            JoinGroupResponse, LeaveGroupRequest, LeaveGroupResponse,
                            OffsetCommitRequest, OffsetCommitResponse, OffsetFetchRequest,
                            OffsetFetchResponse, RequestContext, SyncGroupRequest,
                            SyncGroupResponse)
    from .runtime.future import CoordinatorFuture
    from .topic import TopicPartition
    from .trace import Trace

__all__ = ["CoordinatorEndpoint", "Transport", "ClientHost", "Call"]


class CoordinatorEndpoint(Protocol):
    """A broker's group coordinator as a client reaches it (Kafka's `GroupCoordinator`)."""

    def join_group(self, ctx: RequestContext, request: JoinGroupRequest
                   ) -> CoordinatorFuture[JoinGroupResponse]: ...

    def sync_group(self, ctx: RequestContext, request: SyncGroupRequest
                   ) -> CoordinatorFuture[SyncGroupResponse]: ...

    def heartbeat(self, ctx: RequestContext, request: HeartbeatRequest
                  ) -> CoordinatorFuture[HeartbeatResponse]: ...

    def leave_group(self, ctx: RequestContext, request: LeaveGroupRequest
                    ) -> CoordinatorFuture[LeaveGroupResponse]: ...

    def commit_offsets(self, ctx: RequestContext, request: OffsetCommitRequest
                       ) -> CoordinatorFuture[OffsetCommitResponse]: ...

    def fetch_offsets(self, ctx: RequestContext, request: OffsetFetchRequest
                      ) -> CoordinatorFuture[OffsetFetchResponse]: ...


# A request as the client hands it over: what to call on the broker's endpoint when it arrives.
Call = Callable[[CoordinatorEndpoint], "CoordinatorFuture[Any]"]


class Transport(Protocol):
    """Carries a client's calls to a broker and the answers back (or loses them)."""

    def send(self, client: Any, broker: int | None, api: str, call: Call,
             on_response: Callable[[Any, Errors | None], None], *, timeout_ms: int,
             drop: bool = False) -> None:
        """Deliver `call` to `broker`; `on_response(response, None)` with its answer, or
        `on_response(None, REQUEST_TIMED_OUT)` when none comes within `timeout_ms`. `drop`:
        the client loses it on the way out (a fault)."""

    def find_coordinator(self, client: Any, group_id: str,
                         on_result: Callable[[int | None, Errors | None], None]) -> None:
        """FindCoordinator: `on_result(broker, None)` or `on_result(None, error)`."""


class ClientHost(Protocol):
    """What a consumer needs from the place it runs in."""

    scheduler: Scheduler
    trace: Trace
    topics: Mapping[str, int]
    network: Transport

    def end_offset(self, tp: TopicPartition) -> int: ...

    def client_index(self, consumer: Any) -> int: ...

    def broker_host(self, broker_id: int) -> str: ...
