"""Notebook 08, your own consumers (`coordinator_kit.lessons.live`): the exercises' checks, and
the notebook's run against a live server with two kafka-python consumers and one
confluent-kafka (librdkafka) consumer.

The run checks what the notebook compares under nbval, which must hold on every run although
real clients keep their own time: the range assignment (Kafka's `RangeAssignor`, which every
client here uses, sorts members by member id), a SIGKILLed member removed by the coordinator's
session timer (GroupMetadataManager: "has failed, removing it from the group") within the
window the session and heartbeat settings allow, the coordinator's events after the crash in
order, and the group described through kafka-python's `KafkaAdminClient` (DescribeGroups,
OffsetFetch, ListOffsets) as `kafka-consumer-groups --describe` shows it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coordinator_kit.lessons import live

ROOT = Path(__file__).resolve().parents[1]
NAME = "08_your_own_consumers.ipynb"


def test_range_assignment_is_kafkas_range():
    assert live.range_assignment(["kp-1", "kp-2", "rd-1"]) == {
        "kp-1": [0, 1], "kp-2": [2, 3], "rd-1": [4, 5]}
    assert live.range_assignment(["rd-1", "kp-1"]) == {"kp-1": [0, 1, 2], "rd-1": [3, 4, 5]}
    assert live.range_assignment(["a", "b", "c", "d"]) == {
        "a": [0, 1], "b": [2, 3], "c": [4], "d": [5]}


def test_check_survivors():
    assert live.check_survivors(...).status == "unanswered"
    assert live.check_survivors({"kp-1": [0, 1, 2], "kp-2": [3, 4, 5]}).correct
    assert live.check_survivors({"kp-1": (2, 1, 0), "kp-2": [5, 4, 3]}).correct  # any order
    kept = live.check_survivors({"kp-1": [0, 1, 2], "kp-2": [2, 3]})
    assert not kept and "exactly one owner" in kept.message
    swapped = live.check_survivors({"kp-1": [3, 4, 5], "kp-2": [0, 1, 2]})
    assert not swapped and "sorts the members by member id" in swapped.message
    assert "one entry per survivor" in live.check_survivors({"kp-1": [0]}).message
    assert "partition numbers" in live.check_survivors({"kp-1": ["x"], "kp-2": []}).message


def test_check_removal_window():
    assert live.check_removal_window(None).status == "unanswered"
    assert live.check_removal_window({"earliest_ms": 5000, "latest_ms": 6000}).correct
    late = live.check_removal_window({"earliest_ms": 5000, "latest_ms": 7000})
    assert not late and "How long does that timer run" in late.message
    early = live.check_removal_window({"earliest_ms": 6000, "latest_ms": 6000})
    assert not early and "just before its next heartbeat" in early.message
    assert "Answer with" in live.check_removal_window([5000, 6000]).message


def test_the_notebooks_run_against_real_clients():
    session = live.start_session(lifetime_s=120)
    try:
        started = session.start_consumers()
        assert [r["library"] for r in started] == ["kafka-python", "kafka-python",
                                                   "confluent-kafka"]
        table = session.wait_stable(3)
        assert table.title == "group-1: Stable, 3 members"
        assert {r["client id"]: r["partitions"] for r in table} == \
            live.range_assignment(["kp-1", "kp-2", "rd-1"])
        said = session.crash("kp-2")
        assert said.startswith("kp-2 killed (SIGKILL, exit code -9)")
        assert said.endswith("still counts 3 members")  # no LeaveGroup: still a member
        removal = session.removal("kp-2")
        assert removal.within_window, removal
        after = session.assignment_table()
        assert after.title == "group-1: Stable, 2 members"
        assert {r["client id"]: r["partitions"] for r in after} == \
            live.range_assignment(["kp-1", "rd-1"])
        events = session.events_after_crash("kp-2")
        assert [(r["event"], r["member"]) for r in events] == [
            ("member_session_expired", "kp-2"), ("rebalance_started", None),
            ("group_stabilized", None), ("assignment_received", "(the leader)")]
        failed = session.log_lines("has failed, removing it from the group")
        assert len(failed) == 1 and "Member kp-2-" in failed[0]
        session.wait_committed()
        described = live.describe_group(session.bootstrap)
        assert (described.state, described.protocol) == ("Stable", "range")
        summary = described.summary()
        assert summary.title == "group-1: Stable, 2 members, protocol range"
        assert [(r["PARTITION"], r["CLIENT-ID"]) for r in summary] == [
            (0, "kp-1"), (1, "kp-1"), (2, "kp-1"), (3, "rd-1"), (4, "rd-1"), (5, "rd-1")]
        assert all(r["committed"] and r["0 <= LAG"] for r in summary)
        assert all(r["CONSUMER-ID"].startswith(r["CLIENT-ID"] + "-") for r in described.rows)
    finally:
        said = session.close()
    assert said == "stopped 2 running consumer processes (3 started) and the server"
    assert not session.server.running
    assert not any(p.alive for p in session.consumers.values())
    assert not session.folder.exists()
    assert session.close() == "already stopped"


def test_a_session_has_a_time_limit():
    session = live.start_session(lifetime_s=0.5)
    session._limit.join(5)
    assert session.closed and not session.server.running
    with pytest.raises(ValueError, match="lifetime_s must be > 0"):
        live.start_session(lifetime_s=0)


@pytest.mark.parametrize("folder", ["notebooks", "teachers"])
def test_the_notebook_stops_everything_in_its_last_code_cell(folder):
    nb = json.loads((ROOT / folder / NAME).read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert "session.close()" in "".join(code[-1]["source"])
