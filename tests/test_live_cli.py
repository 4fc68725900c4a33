"""`python -m coordinator_kit serve`: starts, answers Kafka's protocol, stops by itself, and
refuses bad arguments by name."""

from __future__ import annotations

import re
import socket
import subprocess
import sys

import pytest
from kafka.protocol.metadata.api_versions import ApiVersionsRequest, ApiVersionsResponse

from coordinator_kit.live.cli import parse_config, parse_topic
from coordinator_kit.live.versions import ADVERTISED


def _api_versions(host: str, port: int) -> ApiVersionsResponse:
    request = ApiVersionsRequest(version=3, client_software_name="test",
                                 client_software_version="1")
    request.with_header(correlation_id=7, client_id="cli-test")
    with socket.create_connection((host, port), timeout=5) as s:
        s.sendall(request.encode(header=True, framed=True))
        size = int.from_bytes(s.recv(4, socket.MSG_WAITALL), "big")
        body = s.recv(size, socket.MSG_WAITALL)
    return ApiVersionsResponse.decode(body, version=3, header=True)


def test_serve_prints_its_address_answers_and_stops_at_its_lifetime(tmp_path):
    log = tmp_path / "broker.log"
    proc = subprocess.Popen([sys.executable, "-m", "coordinator_kit", "serve", "--port", "0",
                             "--lifetime", "4", "--topic", "orders:2", "--topic", "audit:1",
                             "--config", "group.initial.rebalance.delay.ms=0",
                             "--log", str(log)],
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        m = re.search(r"bootstrap.servers=([\d.]+):(\d+),", line)
        assert m, line
        assert "topics audit:1, orders:2" in line
        response = _api_versions(m.group(1), int(m.group(2)))
        assert response.error_code == 0
        assert response.header.correlation_id == 7
        assert sorted((k.api_key, k.min_version, k.max_version)
                      for k in response.api_keys) == sorted(ADVERTISED)
        assert proc.wait(20) == 0  # its lifetime ends it
    finally:
        if proc.poll() is None:
            proc.kill()
    text = log.read_text()
    assert "Finished loading of metadata from __consumer_offsets-0" in text


@pytest.mark.parametrize("args, message", [
    (["--config", "foo=1"], "unknown group coordinator config 'foo'"),
    (["--lifetime", "0"], "--lifetime must be > 0"),
    (["--topic", "orders:0"], "must be a whole number >= 1"),
    (["--topic", "bad name:2"], "topic name 'bad name' is illegal"),
])
def test_serve_refuses_bad_arguments_by_name(args, message):
    proc = subprocess.run([sys.executable, "-m", "coordinator_kit", "serve", "--port", "0",
                           *args], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2, proc
    assert message in proc.stderr, proc.stderr


def test_topic_and_config_arguments_parse():
    assert parse_topic("orders:6") == ("orders", 6)
    assert parse_topic("orders") == ("orders", 1)
    assert parse_config("group.initial.rebalance.delay.ms=0") == (
        "group.initial.rebalance.delay.ms", 0)
    assert parse_config("a=true") == ("a", True)
