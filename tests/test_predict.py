"""Predict, then reveal: questions answered from the run's own future (a copy plays it)."""

from __future__ import annotations

import pytest

from coordinator_kit.predict import (NextGeneration, NextLeader, WhenExpelled,
                                             questions_for, reveal)
from coordinator_kit.recording import Recording


@pytest.fixture()
def crashed() -> Recording:
    rec = Recording.from_scenario("second-joins")
    rec.act("crash", "consumer-1")
    return rec


def test_a_crashed_member_is_removed_session_timeout_after_its_last_heartbeat(crashed):
    """GroupMetadataManager's heartbeat timer: the member's last heartbeat reached the
    coordinator at 18,103 ms, so with session.timeout.ms = 45,000 it expires at 63,103."""
    q = WhenExpelled.of(crashed.cluster, "consumer-1")
    before = crashed.position
    feedback, truth = reveal(crashed, q, 63_103)
    assert feedback.correct and truth.ts == 63_103
    assert crashed.position == before and crashed.frontier == before  # nothing moved
    assert not reveal(crashed, q, "never")[0].correct
    wrong = reveal(crashed, q, "65,000 ms")[0]
    assert wrong.status == "wrong" and "1,897 ms before your answer" in wrong.message
    assert reveal(crashed, q, "soon")[0].status == "unanswered"


def test_a_short_pause_is_never_expelled():
    rec = Recording.from_scenario("second-joins")
    rec.act("pause", "consumer-1", 30_000)
    q = WhenExpelled.of(rec.cluster, "consumer-1")
    assert reveal(rec, q, "never")[0].correct
    assert reveal(rec, q, 50_000)[0].status == "wrong"


def test_next_generation_and_its_leader_come_from_the_run(crashed):
    """consumer-1 led generation 2; once it is removed, consumer-2 is the only member left and
    leads generation 3 (ClassicGroup.maybeElectNewJoinedLeader)."""
    gen, truth = reveal(crashed, NextGeneration.of(crashed.cluster), "3")
    assert gen.correct and truth.fields["members"] == 1
    assert reveal(crashed, NextLeader.of(crashed.cluster), "consumer-2")[0].correct
    wrong = reveal(crashed, NextLeader.of(crashed.cluster), "consumer-1")[0]
    assert wrong.status == "wrong" and "consumer-2 leads generation 3" in wrong.message


def test_questions_follow_the_trouble(crashed):
    keys = [q.key for q in questions_for(crashed.cluster)]
    assert keys == ["expel:consumer-1", "generation:group-1", "leader:group-1"]
    calm = Recording.from_scenario("second-joins")
    assert [q.key for q in questions_for(calm.cluster)] == ["generation:group-1",
                                                             "leader:group-1"]


def test_questions_use_the_branch_actions_still_ahead():
    """Asked before a recorded crash (after rewinding), the answer includes that crash."""
    rec = Recording.from_scenario("second-joins")
    rec.run_for(5_000)
    rec.act("crash", "consumer-1")
    rec.run_for(60_000)
    rec.seek(22_000)
    feedback, truth = reveal(rec, NextGeneration.of(rec.cluster), 3)
    assert feedback.correct and truth.ts > 25_000
