"""The raw protocol check: the same group requests, byte for byte, to real Kafka and to the kit.

`run_wire(bootstrap)` opens plain sockets, finds the group's coordinator (FindCoordinator,
retried while `__consumer_offsets` is being created, as Kafka answers COORDINATOR_NOT_AVAILABLE
then), and sends a fixed sequence of JoinGroup / SyncGroup / Heartbeat / OffsetCommit /
OffsetFetch / LeaveGroup / DescribeGroups requests, encoded with kafka-python's `kafka.protocol`
classes (generated from Kafka's JSON schemas) at two sets of versions: the classic ones
(JoinGroup v5, SyncGroup v3, Heartbeat v3, LeaveGroup v3, OffsetCommit v7, OffsetFetch v7) and
the newest both serve (v9, v5, v4, v5, v8, v8). Each response is reduced to the fields two
brokers must agree on: error codes by name, generation, protocol name, whether the leader is
the member itself, member counts, member ids by shape, offsets. `compare_wire()` lines the two
up field by field.
"""

from __future__ import annotations

import re
import socket
import struct
import time
from typing import Any

from kafka.admin import KafkaAdminClient, NewTopic
from kafka.errors import for_code
from kafka.protocol.admin.groups import DescribeGroupsRequest, DescribeGroupsResponse
from kafka.protocol.consumer.group import (HeartbeatRequest, HeartbeatResponse, JoinGroupRequest,
                                           JoinGroupResponse, LeaveGroupRequest,
                                           LeaveGroupResponse, OffsetCommitRequest,
                                           OffsetCommitResponse, OffsetFetchRequest,
                                           OffsetFetchResponse, SyncGroupRequest,
                                           SyncGroupResponse)
from kafka.protocol.metadata.find_coordinator import (FindCoordinatorRequest,
                                                      FindCoordinatorResponse)

__all__ = ["run_wire", "run_rebalance_timeout", "compare_wire", "wire_table", "VERSION_SETS",
           "REBALANCE_TIMEOUT_MS"]

TOPIC = "wire-topic"
VERSION_SETS = {
    "classic": {"join": 5, "sync": 3, "heartbeat": 3, "leave": 3, "commit": 7, "fetch": 7},
    "newest": {"join": 9, "sync": 5, "heartbeat": 4, "leave": 5, "commit": 8, "fetch": 8},
}
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
# COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR: a fresh broker
# answers them while it creates and loads `__consumer_offsets` (NOT_COORDINATOR seen under load)
_RETRIABLE_COORDINATOR = (14, 15, 16)
_RESPONSES = {FindCoordinatorRequest: FindCoordinatorResponse, JoinGroupRequest: JoinGroupResponse,
              SyncGroupRequest: SyncGroupResponse, HeartbeatRequest: HeartbeatResponse,
              LeaveGroupRequest: LeaveGroupResponse, OffsetCommitRequest: OffsetCommitResponse,
              OffsetFetchRequest: OffsetFetchResponse,
              DescribeGroupsRequest: DescribeGroupsResponse}


def _err(code: int) -> str:
    return "NONE" if code == 0 else f"{for_code(code).__name__.removesuffix('Error')}({code})"


def shape(member_id: str, client_id: str) -> str:
    if member_id == "":
        return "''"
    return re.sub(_UUID, "<uuid>", member_id).replace(client_id, "<client.id>", 1)


class _Conn:
    def __init__(self, host: str, port: int, client_id: str) -> None:
        self.sock = socket.create_connection((host, port), timeout=30)
        self.client_id = client_id
        self.correlation = 0

    def ask(self, request: Any) -> Any:
        self.correlation += 1
        request.with_header(correlation_id=self.correlation, client_id=self.client_id)
        self.sock.sendall(bytes(request.encode(header=True, framed=True)))
        (size,) = struct.unpack(">i", self._exactly(4))
        body = self._exactly(size)
        response = _RESPONSES[type(request)].decode(body, version=request.version, header=True)
        return response

    def _exactly(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise ConnectionError("the broker closed the connection")
            out += chunk
        return out

    def close(self) -> None:
        self.sock.close()


def _coordinator(host: str, port: int, group: str) -> tuple[str, int]:
    conn = _Conn(host, port, "wire")
    try:
        deadline = time.monotonic() + 30
        while True:
            r = conn.ask(FindCoordinatorRequest(version=3, key=group, key_type=0))
            if r.error_code == 0:
                return r.host, r.port
            if time.monotonic() > deadline:
                raise TimeoutError(f"FindCoordinator({group}) kept answering {_err(r.error_code)}")
            time.sleep(0.2)
    finally:
        conn.close()


def _ensure_topic(bootstrap: str) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="wire-admin")
    try:
        if TOPIC not in admin.list_topics():
            admin.create_topics([NewTopic(TOPIC, 2, 1)])
    finally:
        admin.close()


def _sequence(conn: _Conn, group: str, v: dict[str, int]) -> list[tuple[str, dict[str, Any]]]:
    cid = conn.client_id
    out: list[tuple[str, dict[str, Any]]] = []
    P = JoinGroupRequest.JoinGroupRequestProtocol

    def join(member_id: str, session_ms: int = 10_000) -> Any:
        extra = {"reason": None} if v["join"] >= 8 else {}
        return conn.ask(JoinGroupRequest(
            version=v["join"], group_id=group, session_timeout_ms=session_ms,
            rebalance_timeout_ms=10_000, member_id=member_id, group_instance_id=None,
            protocol_type="consumer", protocols=[P(name="range", metadata=b"\x00\x01")], **extra))

    # a broker that has just created `__consumer_offsets` (on the first FindCoordinator) is
    # still loading the partition: COORDINATOR_LOAD_IN_PROGRESS, retried as clients retry it
    deadline = time.monotonic() + 30
    r = join("")
    while r.error_code in _RETRIABLE_COORDINATOR and time.monotonic() < deadline:
        time.sleep(0.2)
        r = join("")
    member = r.member_id
    out.append(("JoinGroup, no member id", {"error": _err(r.error_code),
                                             "member_id": shape(r.member_id, cid),
                                             "generation": r.generation_id}))
    r = join(member)
    gen = r.generation_id
    out.append(("JoinGroup with the given id", {
        "error": _err(r.error_code), "generation": gen, "protocol_name": r.protocol_name,
        "protocol_type": getattr(r, "protocol_type", "(not in this version)"),
        "leader_is_self": r.leader == member, "members": len(r.members),
        "member_id": shape(r.member_id, cid), "skip_assignment": getattr(
            r, "skip_assignment", "(not in this version)")}))
    A = SyncGroupRequest.SyncGroupRequestAssignment
    sync_extra = ({"protocol_type": "consumer", "protocol_name": "range"} if v["sync"] >= 5
                  else {})
    r = conn.ask(SyncGroupRequest(version=v["sync"], group_id=group, generation_id=gen,
                                  member_id=member, group_instance_id=None,
                                  assignments=[A(member_id=member, assignment=b"\x00\x01abc")],
                                  **sync_extra))
    out.append(("SyncGroup (leader)", {"error": _err(r.error_code),
                                       "assignment_returned": bytes(r.assignment) ==
                                       b"\x00\x01abc",
                                       "protocol_name": getattr(r, "protocol_name",
                                                                "(not in this version)")}))
    r = conn.ask(SyncGroupRequest(version=v["sync"], group_id=group, generation_id=gen,
                                  member_id="nobody", group_instance_id=None, assignments=[],
                                  **sync_extra))
    out.append(("SyncGroup, unknown member", {"error": _err(r.error_code)}))

    def heartbeat(generation: int, member_id: str) -> str:
        h = conn.ask(HeartbeatRequest(version=v["heartbeat"], group_id=group,
                                      generation_id=generation, member_id=member_id,
                                      group_instance_id=None))
        return _err(h.error_code)

    out.append(("Heartbeat", {"error": heartbeat(gen, member)}))
    out.append(("Heartbeat, next generation", {"error": heartbeat(gen + 1, member)}))
    out.append(("Heartbeat, unknown member", {"error": heartbeat(gen, "nobody")}))
    T = OffsetCommitRequest.OffsetCommitRequestTopic
    Part = T.OffsetCommitRequestPartition

    def commit(generation: int, member_id: str, topic: str, offsets: dict[int, int]) -> Any:
        c = conn.ask(OffsetCommitRequest(
            version=v["commit"], group_id=group, generation_id_or_member_epoch=generation,
            member_id=member_id, group_instance_id=None,
            topics=[T(name=topic, partitions=[Part(partition_index=p, committed_offset=o,
                                                   committed_leader_epoch=-1,
                                                   committed_metadata="")
                                              for p, o in sorted(offsets.items())])]))
        return {f"{t.name}-{p.partition_index}": _err(p.error_code)
                for t in c.topics for p in t.partitions}

    out.append(("OffsetCommit", commit(gen, member, TOPIC, {0: 5, 1: 7})))
    out.append(("OffsetCommit, next generation", commit(gen + 1, member, TOPIC, {0: 9})))
    out.append(("OffsetCommit, unknown member", commit(gen, "nobody", TOPIC, {0: 9})))
    out.append(("OffsetCommit, no such topic", commit(gen, member, "no-such-topic", {0: 1})))
    out.append(("OffsetCommit, partition 9 of 2", commit(gen, member, TOPIC, {1: 8, 9: 1})))

    def fetch() -> dict[str, Any]:
        if v["fetch"] >= 8:
            G = OffsetFetchRequest.OffsetFetchRequestGroup
            req = OffsetFetchRequest(version=v["fetch"], groups=[G(
                group_id=group, topics=[G.OffsetFetchRequestTopics(
                    name=TOPIC, partition_indexes=[0, 1])])], require_stable=False)
            f = conn.ask(req)
            (g,) = f.groups
            topics, error = g.topics, g.error_code
        else:
            FT = OffsetFetchRequest.OffsetFetchRequestTopic
            f = conn.ask(OffsetFetchRequest(version=v["fetch"], group_id=group,
                                            topics=[FT(name=TOPIC, partition_indexes=[0, 1])],
                                            require_stable=False))
            topics, error = f.topics, f.error_code
        got: dict[str, Any] = {"error": _err(error)}
        for t in topics:
            for p in t.partitions:
                got[f"{t.name}-{p.partition_index}"] = f"{p.committed_offset} " \
                                                        f"{_err(p.error_code)}"
        return got

    out.append(("OffsetFetch", fetch()))
    r = join(member, session_ms=1000)
    out.append(("JoinGroup, session 1 s (< group.min.session.timeout.ms)",
                {"error": _err(r.error_code)}))
    M = LeaveGroupRequest.MemberIdentity
    leave_extra = {"reason": "wire check"} if v["leave"] >= 5 else {}
    r = conn.ask(LeaveGroupRequest(version=v["leave"], group_id=group,
                                   members=[M(member_id=member, group_instance_id=None,
                                              **leave_extra)]))
    out.append(("LeaveGroup", {"error": _err(r.error_code),
                               "members": [(shape(m.member_id, cid), _err(m.error_code))
                                           for m in r.members]}))
    r = conn.ask(LeaveGroupRequest(version=v["leave"], group_id=group,
                                   members=[M(member_id="nobody", group_instance_id=None,
                                              **leave_extra)]))
    out.append(("LeaveGroup, unknown member", {
        "error": _err(r.error_code),
        "members": [(shape(m.member_id, cid), _err(m.error_code)) for m in r.members]}))
    out.append(("Heartbeat after leaving", {"error": heartbeat(gen, member)}))
    out.append(("OffsetFetch after leaving", fetch()))
    out.append(("OffsetCommit, generation -1 (admin-style) on the Empty group",
                commit(-1, "", TOPIC, {1: 11})))
    d = conn.ask(DescribeGroupsRequest(version=5, groups=[group],
                                       include_authorized_operations=False))
    (g,) = d.groups
    out.append(("DescribeGroups", {"error": _err(g.error_code), "state": g.group_state,
                                   "protocol_type": g.protocol_type,
                                   "protocol": g.protocol_data, "members": len(g.members)}))
    return out


def run_wire(bootstrap: str) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """Every version set's sequence against `bootstrap`, each on a fresh group."""
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    _ensure_topic(bootstrap)
    out = {}
    for name, versions in VERSION_SETS.items():
        group = f"wire-{name}"
        c_host, c_port = _coordinator(host, int(port), group)
        conn = _Conn(c_host, c_port, f"wire-{name}")
        try:
            out[name] = _sequence(conn, group, versions)
        finally:
            conn.close()
    return out


REBALANCE_TIMEOUT_MS = 3000


def run_rebalance_timeout(bootstrap: str) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """A member that keeps heartbeating but does not rejoin a rebalance (a consumer stuck
    outside poll() whose client does not leave) is expelled by the coordinator when the
    rebalance timeout runs out: a (rebalance timeout 3 s, session 10 s) joins and syncs; b
    joins, which starts a rebalance; a only heartbeats. Recorded: a's heartbeat errors in
    order, b's JoinGroup answer (generation, members, leader) and whether it came after the
    rebalance timeout (GroupMetadataManager's join timer, `classicGroupJoin`'s
    `rebalanceTimeoutMs` deadline, then removing the members that did not rejoin)."""
    import threading

    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    _ensure_topic(bootstrap)
    group = "wire-rebalance-timeout"
    c_host, c_port = _coordinator(host, int(port), group)
    a, b = _Conn(c_host, c_port, "wire-a"), _Conn(c_host, c_port, "wire-b")
    P = JoinGroupRequest.JoinGroupRequestProtocol
    out: list[tuple[str, dict[str, Any]]] = []

    def join(conn: _Conn, member_id: str) -> Any:
        return conn.ask(JoinGroupRequest(
            version=9, group_id=group, session_timeout_ms=10_000,
            rebalance_timeout_ms=REBALANCE_TIMEOUT_MS, member_id=member_id,
            group_instance_id=None, protocol_type="consumer",
            protocols=[P(name="range", metadata=b"\x00\x01")], reason=None))

    try:
        # a fresh broker is still loading the new offsets partition: retried as clients do
        deadline = time.monotonic() + 30
        r = join(a, "")
        while r.error_code in _RETRIABLE_COORDINATOR and time.monotonic() < deadline:
            time.sleep(0.2)
            r = join(a, "")
        a_id = r.member_id
        r = join(a, a_id)
        while r.error_code in _RETRIABLE_COORDINATOR and time.monotonic() < deadline:
            time.sleep(0.2)
            r = join(a, a_id)
        gen = r.generation_id
        A = SyncGroupRequest.SyncGroupRequestAssignment
        s = a.ask(SyncGroupRequest(version=5, group_id=group, generation_id=gen, member_id=a_id,
                                   group_instance_id=None, protocol_type="consumer",
                                   protocol_name="range",
                                   assignments=[A(member_id=a_id, assignment=b"")]))
        out.append(("a joins and syncs", {"join generation": gen,
                                          "sync": _err(s.error_code)}))
        b_id = join(b, "").member_id
        answer: dict[str, Any] = {}

        def b_joins() -> None:
            t0 = time.monotonic()
            answer["response"] = join(b, b_id)
            answer["seconds"] = time.monotonic() - t0
        waiter = threading.Thread(target=b_joins, daemon=True)
        waiter.start()
        time.sleep(0.3)  # b's JoinGroup has started the rebalance
        errors: list[str] = []
        until = time.monotonic() + REBALANCE_TIMEOUT_MS / 1000 + 10
        while time.monotonic() < until and (waiter.is_alive() or len(errors) < 2):
            e = _err(a.ask(HeartbeatRequest(version=4, group_id=group, generation_id=gen,
                                            member_id=a_id, group_instance_id=None)).error_code)
            if not errors or errors[-1] != e:
                errors.append(e)
            if not waiter.is_alive() and not e.startswith("RebalanceInProgress"):
                break
            time.sleep(0.5)
        waiter.join(REBALANCE_TIMEOUT_MS / 1000 + 15)
        out.append(("a heartbeats, never rejoins", {"heartbeat errors in order": errors}))
        r = answer.get("response")
        seconds = answer.get("seconds", -1.0)
        out.append(("b's JoinGroup", {
            "error": _err(r.error_code) if r else "(no answer)",
            "generation": r.generation_id if r else None,
            "members": len(r.members) if r else None,
            "leader_is_self": r is not None and r.leader == b_id,
            "answered after the rebalance timeout": REBALANCE_TIMEOUT_MS / 1000 - 0.5
            <= seconds < REBALANCE_TIMEOUT_MS / 1000 + 3}))
    finally:
        a.close()
        b.close()
    return {"rebalance-timeout": out}


def compare_wire(kafka: dict[str, list[tuple[str, dict[str, Any]]]],
                 kit: dict[str, list[tuple[str, dict[str, Any]]]]
                 ) -> list[tuple[str, str, str, Any, Any, bool]]:
    """(version set, request, field, Kafka, kit, same) for every field of every response."""
    rows = []
    for vs in kafka:
        for (step, a), (_, b) in zip(kafka[vs], kit.get(vs, [])):
            for f in list(a) + [k for k in b if k not in a]:
                va, vb = a.get(f, "(absent)"), b.get(f, "(absent)")
                rows.append((vs, step, f, va, vb, va == vb))
    return rows


def wire_table(rows: list[tuple[str, str, str, Any, Any, bool]]) -> str:
    lines = ["| versions | request | field | Kafka 4.0.2 | kit | same |",
             "|---|---|---|---|---|---|"]
    for vs, step, f, a, b, same in rows:
        lines.append(f"| {vs} | {step} | {f} | {a} | {b} | {'yes' if same else '**no**'} |")
    return "\n".join(lines)
