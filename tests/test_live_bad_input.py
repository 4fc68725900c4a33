"""What the live server does with input a well-behaved client never sends, checked against what
Apache Kafka's broker does with it.

Every case either gets Kafka's answer or closes that one connection with Kafka's log line
(`kafka.network.Processor` "Closing socket for ... because of error" or the network
`Selector`'s "Unexpected error from ...; closing connection", the exception on the next line),
and a bystander connection opened before it is still answered after it. The Kafka code each
test follows is named in it: `NetworkReceive.readFrom` (the size), `RequestHeader.parse` (the
header), `SocketServer.Processor.parseRequestHeader` (enabled APIs),
`RequestContext.parseRequest` / `AbstractRequest.parseRequest` (the body),
`KafkaApis.handleApiVersionsRequest` (ApiVersions), `Selector`'s idle expiry
(`connections.max.idle.ms`).
"""

from __future__ import annotations

import contextlib
import io
import socket
import struct
import threading
import time

import pytest
from kafka.protocol.admin.groups import DescribeGroupsRequest, DescribeGroupsResponse
from kafka.protocol.consumer.group import HeartbeatRequest, JoinGroupRequest
from kafka.protocol.metadata.api_versions import ApiVersionsRequest
from kafka.protocol.metadata.metadata import MetadataRequest

from coordinator_kit.live.frames import INVALID_RECEIVE, INVALID_REQUEST
from coordinator_kit.live.server import LiveServer, is_loopback
from coordinator_kit.live.versions import ADVERTISED
from coordinator_kit.logs.parse import ParseCounts, parse_lines
from live_wire import Wire, api_versions, api_versions_request, encode, frame, header, wait_until

MAX_BYTES = 65_536
UNSUPPORTED_VERSION, INVALID_REQUEST_CODE, NOT_COORDINATOR = 35, 42, 16


@pytest.fixture(scope="module")
def server():
    log = io.StringIO()
    s = LiveServer(port=0, log=log, produce_rate_per_s=0, socket_request_max_bytes=MAX_BYTES,
                   group_config={"group.initial.rebalance.delay.ms": 0})
    s.start()
    s.log_text = log  # type: ignore[attr-defined]
    yield s
    s.stop()


@pytest.fixture(scope="module")
def bystander(server):
    """A connection opened before the bad input and used after it."""
    w = Wire(server.port_of(0))
    yield w
    w.close()


def _still_serving(server, bystander, correlation_id=900):
    bystander.send(api_versions_request(correlation_id))
    body = bystander.response()
    assert body is not None and struct.unpack_from(">i", body)[0] == correlation_id
    assert api_versions(server.port_of(1)).error_code == 0


def _closing(server, wire, timeout_s=5.0):
    """The log record that closed `wire`'s connection and the lines under it."""
    port = wire.sock.getsockname()[1]
    mark = f"-127.0.0.1:{port}-"
    found: list[list[str]] = []

    def logged():
        lines = server.log_text.getvalue().splitlines()
        for i, line in enumerate(lines):
            if mark in line and ("Closing socket for" in line or "Unexpected error from" in line):
                rest = []
                for more in lines[i + 1:]:
                    if more.startswith("["):
                        break
                    rest.append(more)
                found.append([line, *rest])
                return True
        return False
    wait_until(logged, timeout_s, f"the log line closing connection {mark}")
    return found[0]


def _refused(server, bystander, data, port=None):
    """Send `data` on a fresh connection: the server must close it and keep serving."""
    with Wire(port or server.port_of(0)) as w:
        w.send(data)
        assert w.closed_by_server(), "the server kept a connection it should have closed"
        lines = _closing(server, w)
    _still_serving(server, bystander)
    return lines


# -- the size: NetworkReceive.readFrom, logged by the Selector ------------------------------------

@pytest.mark.parametrize("size,message", [
    (MAX_BYTES + 1, f"Invalid receive (size = {MAX_BYTES + 1} larger than {MAX_BYTES})"),
    (-1, "Invalid receive (size = -1)"),
    (-2_000_000_000, "Invalid receive (size = -2000000000)"),
])
def test_a_size_kafka_refuses_closes_with_the_selectors_warning(server, bystander, size, message):
    lines = _refused(server, bystander, struct.pack(">i", size) + b"\x00" * 16)
    assert " WARN [SocketServer listenerType=BROKER, nodeId=0] Unexpected error from /127.0.0.1 " \
        "(channelId=127.0.0.1:" in lines[0]
    assert lines[0].endswith("; closing connection (org.apache.kafka.common.network.Selector)")
    assert lines[1:] == [f"{INVALID_RECEIVE}: {message}"]


def test_a_request_of_exactly_the_maximum_is_read(server, bystander):
    payload = header(18, 3, correlation_id=5, flexible=True) + b"\x02a\x02b\x00"
    payload += b"\x00" * (MAX_BYTES - len(payload))  # a valid v3 body, then trailing zeros
    with Wire(server.port_of(0)) as w:
        w.send(frame(payload))
        body = w.response()
    assert body is not None and struct.unpack_from(">ih", body) == (5, 0)


# -- the header: RequestHeader.parse ------------------------------------------------------------

@pytest.mark.parametrize("payload,guess,cause", [
    (b"", -1, "java.nio.BufferUnderflowException"),
    (b"\x00", -1, "java.nio.BufferUnderflowException"),
    (b"\x00\x0c\x00", 12, "java.nio.BufferUnderflowException"),
    (struct.pack(">hhih", 12, 0, 1, 50) + b"ab", 12,
     "java.lang.RuntimeException: Error reading byte array of 50 byte(s): only 2 byte(s) "
     "available"),
    (struct.pack(">hh", 99, 0), 99, "java.lang.IllegalArgumentException: Unexpected api key: 99"),
    (struct.pack(">hhih", -7, 0, 1, 0), -7,
     "java.lang.IllegalArgumentException: Unexpected api key: -7"),
    (header(12, 4, flexible=False), 12, "java.nio.BufferUnderflowException"),  # no tagged fields
], ids=["empty", "1-byte", "no-version", "client-id-past-end", "unknown-key", "negative-key",
        "v2-header-without-tags"])
def test_a_header_that_does_not_parse_closes_with_kafkas_error(server, bystander, payload, guess,
                                                               cause):
    lines = _refused(server, bystander, frame(payload))
    assert " ERROR [SocketServer listenerType=BROKER, nodeId=0] Closing socket for 127.0.0.1:" \
        in lines[0] and lines[0].endswith(" because of error (kafka.network.Processor)")
    assert lines[1:] == [f"{INVALID_REQUEST}: Error parsing request header. Our best guess of "
                         f"the apiKey is: {guess}", f"Caused by: {cause}"]


def test_a_client_id_that_is_not_utf8_is_read_with_replacement_characters(server, bystander):
    # Kafka's Readable.readString is new String(bytes, UTF_8): malformed bytes become U+FFFD
    with Wire(server.port_of(0)) as w:
        w.send(frame(header(18, 0, correlation_id=3, client_id=b"bad\xff\xfeid")))
        body = w.response()
        assert body is not None and struct.unpack_from(">ih", body) == (3, 0)
        ids = server.call(lambda: [c.client_id for c in server.connections])
    assert "bad\ufffd\ufffdid" in ids
    _still_serving(server, bystander)


def test_a_null_client_id_is_the_empty_client_id(server, bystander):
    with Wire(server.port_of(0)) as w:
        w.send(frame(header(18, 0, correlation_id=4, client_id=None)))
        assert struct.unpack_from(">ih", w.response()) == (4, 0)
        ids = server.call(lambda: [c.client_id for c in server.connections])
    assert "" in ids


# -- enabled APIs: SocketServer.Processor.parseRequestHeader -----------------------------------

@pytest.mark.parametrize("api_key,version,name", [
    (20, 0, "DELETE_TOPICS"),   # Kafka has it; the kit does not advertise it
    (12, 9, "HEARTBEAT"),       # above the advertised 0-4
    (2, 0, "LIST_OFFSETS"),     # below the advertised 1-10
    (52, 0, "VOTE"),            # a controller API: not on a broker listener
])
def test_an_api_or_version_not_advertised_closes_the_connection(server, bystander, api_key,
                                                                version, name):
    # the header version goes with the API's flexible versions (Heartbeat 4+, Vote all)
    flexible = (api_key == 12 and version >= 4) or api_key == 52
    lines = _refused(server, bystander, frame(header(api_key, version, flexible=flexible)))
    assert lines[1:] == [f"{INVALID_REQUEST}: Received request api key {name} with version "
                         f"{version} which is not enabled"]


# -- ApiVersions: RequestContext.parseRequest, KafkaApis.handleApiVersionsRequest -------------

def test_api_versions_newer_than_kafkas_gets_a_v0_unsupported_version_answer(server, bystander):
    # Kafka does not parse the body of an ApiVersions version it does not know; it answers v0
    # with UNSUPPORTED_VERSION and only ApiVersions' own range (getErrorResponse), and the
    # connection stays open for the client's retry
    lo, hi = next((lo, hi) for k, lo, hi in ADVERTISED if k == 18)
    with Wire(server.port_of(0)) as w:
        w.send(frame(header(18, 9, correlation_id=41, flexible=True) + b"anything at all"))
        body = w.response()
        assert body == struct.pack(">ihihhh", 41, UNSUPPORTED_VERSION, 1, 18, lo, hi)
        w.send(api_versions_request(42))  # the retry at a version both know
        retry = w.response()
    assert struct.unpack_from(">ih", retry) == (42, 0)
    _still_serving(server, bystander)


def test_api_versions_with_a_malformed_software_name_gets_invalid_request(server, bystander):
    # ApiVersionsRequest.isValid (KIP-511's pattern): INVALID_REQUEST, an empty api key list,
    # throttle time, and the client's software is not recorded
    request = ApiVersionsRequest(version=3, client_software_name="-not valid-",
                                 client_software_version="1.0")
    with Wire(server.port_of(0)) as w:
        w.send(encode(request, correlation_id=43, client_id="bad-software"))
        body = w.response()
        assert body == struct.pack(">ihbib", 43, INVALID_REQUEST_CODE, 1, 0, 0)
        software = server.call(lambda: [c.software for c in server.connections
                                        if c.client_id == "bad-software"])
    assert software == [None]
    _still_serving(server, bystander)


def test_api_versions_v3_records_the_clients_software(server):
    with Wire(server.port_of(0)) as w:
        w.send(api_versions_request(44, client_id="good-software"))
        assert w.response() is not None
        software = server.call(lambda: [c.software for c in server.connections
                                        if c.client_id == "good-software"])
    assert software == [("raw-wire", "1.0")]


# -- the body: RequestContext.parseRequest -------------------------------------------------------

def _heartbeat(version=4, **fields):
    values = {"group_id": "g-raw", "generation_id": 1, "member_id": "m-1"}
    if version >= 3:
        values["group_instance_id"] = None
    values.update(fields)
    return encode(HeartbeatRequest(version=version, **values), correlation_id=50)


def _body_error(server, conn_line, api, version, cause):
    channel = conn_line[0].split("Closing socket for ")[1].split(" because")[0]
    return conn_line[1:] == [
        f"{INVALID_REQUEST}: Error getting request for apiKey: {api}, apiVersion: {version}, "
        f"connectionId: {channel}, listenerName: ListenerName(PLAINTEXT), principal: "
        f"User:ANONYMOUS", f"Caused by: {cause}"]


@pytest.mark.parametrize("cut", [1, 4, 9])
def test_a_truncated_body_closes_with_kafkas_parse_error(server, bystander, cut):
    whole = _heartbeat(4)
    truncated = frame(whole[4:-cut])
    lines = _refused(server, bystander, truncated)
    assert _body_error(server, lines, "HEARTBEAT", 4, "java.nio.BufferUnderflowException"), lines


def test_an_api_versions_body_that_does_not_parse_closes_the_connection(server, bystander):
    # only a version Kafka does not know skips the body (RequestContext.parseRequest); a known
    # version must parse like any other request
    whole = api_versions_request(61)
    lines = _refused(server, bystander, frame(whole[4:-3]))
    assert _body_error(server, lines, "API_VERSIONS", 3, "java.nio.BufferUnderflowException")


def test_a_string_running_past_the_end_closes_the_connection(server, bystander):
    # kafka-python's decode would cut the string short and carry on; Kafka's readArray refuses
    payload = header(12, 0) + struct.pack(">h", 1) + b"g" + struct.pack(">i", 1) + \
        struct.pack(">h", 100) + b"m-1"
    lines = _refused(server, bystander, frame(payload))
    assert _body_error(server, lines, "HEARTBEAT", 0, "java.nio.BufferUnderflowException"), lines


def test_null_in_a_non_nullable_field_closes_the_connection(server, bystander):
    payload = header(12, 0) + struct.pack(">h", -1) + struct.pack(">i", 1) + \
        struct.pack(">h", 3) + b"m-1"
    lines = _refused(server, bystander, frame(payload))
    assert _body_error(server, lines, "HEARTBEAT", 0, "java.lang.RuntimeException: "
                       "non-nullable field groupId was serialized as null"), lines


def test_a_body_string_that_is_not_utf8_closes_the_connection(server, bystander):
    # The one place the kit differs from Kafka: Kafka would read the group id with U+FFFD;
    # kafka-python's codec refuses it, so the connection closes with the codec's reason
    payload = header(12, 0) + struct.pack(">h", 2) + b"\xff\xfe" + struct.pack(">i", 1) + \
        struct.pack(">h", 3) + b"m-1"
    lines = _refused(server, bystander, frame(payload))
    assert lines[2].startswith("Caused by: UnicodeDecodeError: 'utf-8' codec can't decode")


def test_bytes_after_a_complete_body_are_ignored_as_kafka_ignores_them(server, bystander):
    # AbstractRequest.parseRequest reads the fields it expects and never checks that the
    # buffer is used up: the request is answered as if the extra bytes were not there
    with Wire(server.port_of(0)) as w:
        w.send(frame(api_versions_request(60)[4:] + b"\xde\xad\xbe\xef" * 8))
        body = w.response()
        assert body is not None and struct.unpack_from(">ih", body) == (60, 0)
        w.send(frame(_heartbeat(4)[4:] + b"\x00" * 40))
        body = w.response()
    assert body is not None and struct.unpack_from(">i", body)[0] == 50
    _still_serving(server, bystander)


# -- connections that go away or stop -------------------------------------------------------------

def test_a_client_that_vanishes_mid_request_is_forgotten_without_a_word(server, bystander):
    # the Selector sees EOF (an IOException): DEBUG "Connection with ... disconnected", nothing
    # at INFO or above, and nothing is answered or refused
    before_refused = server.frames_refused
    before_text = server.log_text.getvalue()
    whole = _heartbeat(4)
    for cut in (2, 6, len(whole) - 3):
        w = Wire(server.port_of(0))
        port = w.sock.getsockname()[1]
        w.send(whole[:cut])
        w.close()
        wait_until(lambda: not any(c.peer_port == port for c in
                                   server.call(lambda: list(server.connections))),
                   5, "the half-sent connection is dropped")
    assert server.frames_refused == before_refused
    assert "Closing socket" not in server.log_text.getvalue()[len(before_text):]
    _still_serving(server, bystander)


def test_a_client_that_leaves_while_its_join_is_pending_does_not_disturb_the_server(server,
                                                                                     bystander):
    # its JoinGroup completes after it left; the response goes nowhere (Kafka:
    # "Attempting to send response via channel for which there is no open connection")
    # JoinGroup v3: no MEMBER_ID_REQUIRED round, the member joins at once
    join = JoinGroupRequest(version=3, group_id="g-leaver", session_timeout_ms=6000,
                            rebalance_timeout_ms=6000, member_id="", protocol_type="consumer",
                            protocols=[("range", b"")])
    coordinator = server.call(lambda: server.cluster.coordinator_for("g-leaver"))
    with Wire(server.port_of(coordinator)) as w:
        w.send(encode(join, correlation_id=70, client_id="leaver"))
    wait_until(lambda: server.call(lambda: server.cluster.group("g-leaver"))["members"], 5,
               "the member that left joined")
    _still_serving(server, bystander)


def test_a_group_request_to_a_broker_that_does_not_lead_the_group_gets_not_coordinator(
        server, bystander):
    group = "g-elsewhere"
    coordinator = server.call(lambda: server.cluster.coordinator_for(group))
    other = next(b for b in sorted(server.cluster.brokers) if b != coordinator)
    join = JoinGroupRequest(version=5, group_id=group, session_timeout_ms=6000,
                            rebalance_timeout_ms=6000, member_id="", group_instance_id=None,
                            protocol_type="consumer", protocols=[("range", b"")])
    # Heartbeat v4 answers with header v1 (correlation id, tagged fields), JoinGroup v5 with
    # header v0; both bodies start with throttle time, then the error code
    heartbeat = HeartbeatRequest(version=4, group_id=group, generation_id=1, member_id="m",
                                 group_instance_id=None)
    for request, offset in ((heartbeat, 4 + 1 + 4), (join, 4 + 4)):
        with Wire(server.port_of(other)) as w:
            w.send(encode(request, correlation_id=80))
            body = w.response()
        assert struct.unpack_from(">h", body, offset)[0] == NOT_COORDINATOR, body
    assert server.call(lambda: server.cluster.group(group))["state"] in (None, "Dead", "Empty")
    _still_serving(server, bystander)


def test_describe_groups_is_answered_per_group(server, bystander):
    # (its response once failed to encode: authorized_operations took an int, the codec a set)
    group = "g-described"
    coordinator = server.call(lambda: server.cluster.coordinator_for(group))
    unknown = next(g for g in (f"g-never-seen-{i}" for i in range(1000))
                   if server.call(lambda: server.cluster.coordinator_for(g)) == coordinator)
    elsewhere = next(g for g in (f"g-elsewhere-{i}" for i in range(1000))
                     if server.call(lambda: server.cluster.coordinator_for(g)) != coordinator)
    join = JoinGroupRequest(version=5, group_id=group, session_timeout_ms=6000,
                            rebalance_timeout_ms=6000, member_id="", group_instance_id=None,
                            protocol_type="consumer", protocols=[("range", b"")])
    describe = DescribeGroupsRequest(version=5, groups=[group, unknown, elsewhere],
                                     include_authorized_operations=False)
    with Wire(server.port_of(coordinator)) as w:
        w.send(encode(join, correlation_id=90))  # MEMBER_ID_REQUIRED: a pending member only
        assert w.response() is not None
        w.send(encode(describe, correlation_id=91))
        body = w.response()
    assert body is not None
    answer = DescribeGroupsResponse.decode(body[5:], version=5)  # after header v1
    # GroupMetadataManager.describeGroups reads at the committed offset: a group with only a
    # pending member has written nothing, so it reads as Dead, like one never seen; a group
    # another broker coordinates gets NOT_COORDINATOR, per group
    assert [(g.group_id, g.error_code, g.group_state) for g in answer.groups] == [
        (group, 0, "Dead"), (unknown, 0, "Dead"), (elsewhere, NOT_COORDINATOR, "")]
    assert all(g.authorized_operations is None for g in answer.groups)
    _still_serving(server, bystander)


def test_a_handler_bug_closes_only_that_connection(server, bystander, monkeypatch):
    async def broken(conn, version, request):
        raise KeyError("boom")
    monkeypatch.setattr(server.apis, "on_Heartbeat", broken)
    lines = _refused(server, bystander, _heartbeat(4))
    assert lines[1].startswith("coordinator_kit.live.HandlerError: KeyError: 'boom' (a bug in "
                               "the kit's Heartbeat handler")


def test_a_timer_that_raises_does_not_stop_the_cluster(server, bystander):
    def boom():
        raise RuntimeError("a timer's bug")
    before = server.tick_errors
    at = server.call(lambda: server.cluster.scheduler.now)
    server.call(lambda: server.cluster.scheduler.call_later(1, boom, name="boom"))
    wait_until(lambda: server.tick_errors == before + 1, 5, "the failing timer ran")
    # virtual time still follows the wall clock
    wait_until(lambda: server.call(lambda: server.cluster.scheduler.now) > at + 200, 5,
               "virtual time moves on")
    _still_serving(server, bystander)


def test_a_flood_of_connections_is_served(server, bystander):
    # Kafka's max.connections and max.connections.per.ip default to unlimited: every
    # connection is accepted and answered
    idle = [Wire(server.port_of(b % 3)) for b in range(250)]
    answered = []

    def ask(i):
        answered.append(api_versions(server.port_of(i % 3), correlation_id=1000 + i).error_code)
    threads = [threading.Thread(target=ask, args=(i,)) for i in range(250)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert answered == [0] * 250
    for w in idle:
        w.close()
    wait_until(lambda: len(server.call(lambda: list(server.connections))) < 10, 10,
               "the flood's connections are closed")
    _still_serving(server, bystander)


# -- idle connections: Selector, connections.max.idle.ms ------------------------------------------

@pytest.fixture
def idle_server():
    s = LiveServer(port=0, produce_rate_per_s=0, connections_max_idle_ms=1000, brokers=1)
    s.start()
    yield s
    s.stop()


def test_a_client_that_never_reads_is_closed_after_the_idle_time(idle_server):
    s = idle_server
    port = s.port_of(0)
    stuck = Wire(port, timeout_s=30, rcvbuf=4096)
    stuck.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    peer = stuck.sock.getsockname()[1]
    metadata = encode(MetadataRequest(version=12, topics=None, allow_auto_topic_creation=False,
                                      include_topic_authorized_operations=False),
                      correlation_id=1, client_id="never-reads")

    def send_without_reading():
        with contextlib.suppress(OSError):  # it ends when the server closes the connection
            stuck.sock.sendall(metadata * 40_000)
    sender = threading.Thread(target=send_without_reading, daemon=True)
    sender.start()

    def waiting_to_write():
        return any(c.peer_port == peer and c.writer.transport.get_write_buffer_size() > 0
                   for c in s.call(lambda: list(s.connections)))
    wait_until(waiting_to_write, 20, "the server's responses fill the socket")
    # only that connection waits: another client is answered meanwhile
    assert api_versions(port).error_code == 0
    wait_until(lambda: not any(c.peer_port == peer for c in s.call(lambda: list(s.connections))),
               10, "the server closes the connection that does not read")
    events = s.call(lambda: [e.fields for e in s.cluster.trace.of_kind("live_connection_closed")])
    assert any(e["client"] == "never-reads" and "connections.max.idle.ms=1000" in e["why"]
               for e in events), events
    sender.join(10)
    stuck.close()
    assert api_versions(port).error_code == 0


def test_half_a_request_then_silence_is_closed_after_the_idle_time(idle_server):
    s = idle_server
    with Wire(s.port_of(0)) as w:
        w.send(struct.pack(">i", 100) + b"\x00\x12")
        assert not w.closed_by_server(timeout_s=0.3)  # not at once: it may still come
        assert w.closed_by_server(timeout_s=5)
    assert s.idle_closed >= 1
    assert api_versions(s.port_of(0)).error_code == 0


def test_a_busy_connection_is_not_idle(idle_server):
    s = idle_server
    with Wire(s.port_of(0)) as w:
        for i in range(8):  # one request every 0.4 s for 3 s: never idle for 1 s
            w.send(api_versions_request(i))
            assert w.response() is not None
            time.sleep(0.4)


# -- where the server listens ---------------------------------------------------------------------

def test_loopback_addresses_are_recognised():
    assert is_loopback("127.0.0.1") and is_loopback("127.0.0.2") and is_loopback("::1")
    assert is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("::")
    assert not is_loopback("10.1.2.3") and not is_loopback("192.168.0.1")


def test_a_server_on_a_non_loopback_address_warns():
    said: list[str] = []
    s = LiveServer(port=0, host="0.0.0.0", brokers=1, produce_rate_per_s=0, warn=said.append)
    s.start()
    try:
        assert len(said) == 1
        assert "binds 0.0.0.0, which is not a loopback address" in said[0]
        assert "no authentication" in said[0]
        # a wildcard is no address to connect to: clients are told loopback (advertised_host)
        assert s.bootstrap.startswith("127.0.0.1:") and "connect to 127.0.0.1" in said[0]
        kinds = s.call(lambda: [e.level for e in s.cluster.trace.of_kind("live_not_loopback")])
        assert kinds == ["WARN"]
    finally:
        s.stop()


def test_without_warn_the_warning_is_a_python_warning():
    s = LiveServer(port=0, host="0.0.0.0", brokers=1, produce_rate_per_s=0)
    with pytest.warns(RuntimeWarning, match="not a loopback address"):
        s.start()
    s.stop()


def test_a_loopback_server_says_nothing(recwarn):
    said: list[str] = []
    s = LiveServer(port=0, brokers=1, produce_rate_per_s=0, warn=said.append)
    s.start()
    s.stop()
    assert said == [] and not [w for w in recwarn if "loopback" in str(w.message)]


@pytest.mark.parametrize("kw", [{"socket_request_max_bytes": 0},
                                {"connections_max_idle_ms": -5},
                                {"socket_request_max_bytes": 1.5}])
def test_limits_must_be_positive_whole_numbers(kw):
    with pytest.raises(ValueError, match=next(iter(kw))):
        LiveServer(port=0, **kw)


# -- the log ------------------------------------------------------------------------------------

def test_the_closing_lines_read_back_as_events_with_their_exception(server):
    """Kafka writes the exception (and its cause) under the error line; the kit's log parser
    takes them as continuation lines of that record, so nothing is quarantined."""
    lines = server.log_text.getvalue().splitlines()
    closing = [l for l in lines if "(kafka.network.Processor)" in l
               or "(org.apache.kafka.common.network.Selector)" in l]
    assert len(closing) > 20
    counts = ParseCounts()
    rows = list(parse_lines(lines, "live.log", counts))
    counts.check()
    assert [r["raw"] for kind, r in rows if kind == "quarantine"] == []
    events = [r for kind, r in rows if kind == "event"
              and r["event"] == "connection_closed_on_error"]
    assert len(events) == len(closing)
    assert all("\n" in r["raw"] for r in events)  # the exception line rides with its record
    assert any("\nCaused by: java.nio.BufferUnderflowException" in r["raw"] for r in events)
