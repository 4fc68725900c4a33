"""Lesson 07, how Kafka learned to coordinate: the runs behind each view, the checks on right and
wrong answers, and the two notebooks (the generator itself: tests/test_teaching.py).

The behaviour each view shows is the designs' own (tests/test_era_zookeeper.py,
tests/test_era_central.py, tests/test_eras_compare.py test it); here we check that the lesson's
views read it correctly and that the prose's claims hold for the runs the notebook shows.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coordinator_kit.eras.api import Fault, Scenario
from coordinator_kit.eras.scenarios import SCENARIOS
from coordinator_kit.lessons import eras as er
from teacher_copies import solution_answers

ROOT = Path(__file__).resolve().parent.parent
NAME = "07_how_kafka_learned_to_coordinate.ipynb"
STUDENT = ROOT / "notebooks" / NAME
TEACHER = ROOT / "teachers" / NAME
CHECKS = {"answer_1": er.check_two_owners, "answer_2": er.check_why_generations,
          "answer_3": er.check_join_rounds, "answer_4": er.check_give_up}


# -- runs and views --------------------------------------------------------------------------


def test_story_and_diagrams_cover_the_three_designs():
    assert [r["design"] for r in er.story()] == [
        "ZooKeeper consumer", "central coordinator (0.9 draft)", "group coordinator (classic)"]
    titles = [d.title for d in er.state_diagrams()]
    assert titles == list(er.DESIGN_DIAGRAMS.values())


def test_run_is_cached_by_name_and_deterministic():
    a = er.run("short-pause")
    assert er.run("short-pause") is a
    fresh = er.run(SCENARIOS["short-pause"])          # a Scenario is run afresh
    assert fresh is not a and fresh.comparison.rows() == a.comparison.rows()
    assert list(a.designs) == ["zookeeper", "central", "classic"]


def test_run_refuses_unknown_names_and_types():
    with pytest.raises(ValueError, match="no scenario 'nope'"):
        er.run("nope")
    with pytest.raises(TypeError, match="scenario name or an eras.api.Scenario"):
        er.run(42)  # type: ignore[arg-type]


def test_long_pause_zombie_commits_accepted_in_zookeeper_refused_today():
    """ZookeeperConsumerConnector.commitOffsets writes without an ownership check; today's
    GroupCoordinator answers a stale member's OffsetCommit with UNKNOWN_MEMBER_ID."""
    rows = {r["design"]: r for r in er.zombie_table(er.run("long-pause"))}
    commits = "offset commits of consumer-2 after it was replaced"
    assert rows["ZooKeeper (0.8.2)"][commits].endswith("accepted (a plain ZooKeeper write)")
    assert not rows["ZooKeeper (0.8.2)"][commits].startswith("0 ")
    assert rows["group coordinator (0.9+)"][commits] == "1 refused (UNKNOWN_MEMBER_ID)"
    for r in rows.values():                 # a zombie in every design
        assert r["two consumers (partition-ms)"] > 0 and r["records processed twice"] > 0
    assert er.run("long-pause")["central"].rounds == 2    # two stop/start rounds for one pause


def test_many_groups_one_coordinator_stops_every_group_partitioned_ones_none():
    rows = {r["design"]: r for r in er.groups_table(er.run("many-groups"))}
    assert rows["central (0.9 draft)"]["groups that stopped"] == 10
    assert rows["group coordinator (0.9+)"]["groups that stopped"] == 0
    assert rows["group coordinator (0.9+)"]["rebalance rounds"] == 0


def test_join_large_herd_reads_grow_with_the_square_of_the_group():
    rows = {r["design"]: r for r in er.herd_table(er.run("join-large"))}
    zk = rows["ZooKeeper (0.8.2)"]
    assert zk["rebalance rounds"] == 21
    assert 21 * 21 <= zk["ZooKeeper reads of registrations"] < 2 * 21 * 21
    assert rows["central (0.9 draft)"]["ZooKeeper reads of registrations"] is None
    assert zk["coordination messages"] > 1.5 * rows["group coordinator (0.9+)"][
        "coordination messages"]


def test_like_for_like_makes_todays_crash_detection_as_quick_as_zookeepers():
    default = er.run("crash")["classic"].settle_ms
    alike = er.run("crash", like_for_like=True)["classic"].settle_ms
    assert default > 40_000 and alike < 6_000 + 500
    assert er.like_for_like("crash").settings == er.LIKE_FOR_LIKE


def test_log_excerpt_filters_by_time_and_text():
    lines = er.log_excerpt(er.run("long-pause"), "classic", "failed", since_ms=30_000)
    assert len(lines) == 2 and all(ln[12:24] >= "09:00:30,000" for ln in lines)
    assert "The coordinator is not aware of this member" in lines
    with pytest.raises(ValueError, match="no design 'x'"):
        er.log_excerpt(er.run("long-pause"), "x")


def test_lanes_are_a_deterministic_picture():
    a = er.lanes(er.run("short-pause"), start_ms=25_000, end_ms=40_000)
    b = er.lanes(er.run("short-pause"), start_ms=25_000, end_ms=40_000)
    assert a.svg == b.svg and "<svg" in a.svg
    assert repr(a) == "<picture: who consumes each partition of group-1: short-pause>"


def test_my_scenario_builds_and_refuses_with_the_value_named():
    sc = er.my_scenario([(20_000, "pause", "consumer-1", 8_000), (40_000, "join", "consumer-4")])
    assert sc.faults[0] == Fault(20_000, "pause", "consumer-1", 8_000)
    assert sc.run_ms == 100_000 and sc.topics == {"t": 6}
    with pytest.raises(ValueError, match="names 'consumer-9'"):
        er.my_scenario([(1_000, "crash", "consumer-9")])
    with pytest.raises(ValueError, match="a fault is"):
        er.my_scenario(["crash"])
    with pytest.raises(ValueError, match="not one of"):
        er.my_scenario([(1_000, "explode", "consumer-1")])
    with pytest.raises(ValueError, match="consumers is a whole number"):
        er.my_scenario([], consumers=0)


# -- checks ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(CHECKS))
def test_every_check_reports_an_unanswered_exercise(name):
    assert CHECKS[name](...).status == "unanswered"
    assert CHECKS[name](None).status == "unanswered"


def test_the_teacher_solutions_pass_their_checks():
    answers = solution_answers(TEACHER)
    assert set(answers) == set(CHECKS)
    for name, check in CHECKS.items():
        assert check(answers[name]).correct, (name, check(answers[name]))


def test_exercise_1_runs_the_schedule_under_the_draft():
    """The draft fails a consumer after ping.max.missed pings and gives its partitions away
    while the consumer still holds fetched chunks (no fencing)."""
    assert er.check_two_owners([(30_000, "pause", "consumer-2", 10_000)]).correct
    short = er.check_two_owners([(30_000, "pause", "consumer-2", 3_000)])
    assert short.status == "wrong" and "3 unanswered pings" in short.message
    crash = er.check_two_owners([(30_000, "crash", "consumer-2")])
    assert crash.status == "wrong" and "closes the socket" in crash.message
    assert er.check_two_owners("pause").status == "wrong"
    assert "consumer-1, -2 and -3" in er.check_two_owners([(1, "crash", "consumer-7")]).message


@pytest.mark.parametrize("letter", ["a", "b", "d", "x"])
def test_exercise_2_wrong_choices_say_why(letter):
    fb = er.check_why_generations(letter)
    assert fb.status == "wrong" and fb.message
    assert er.check_why_generations(" C ").correct


def test_exercise_3_hints_name_what_was_missed():
    fb = er.check_join_rounds({"zookeeper": 1, "central": 1, "classic": 1})
    assert fb.status == "wrong" and "each consumer does for itself" in fb.message
    assert er.check_join_rounds({"zookeeper": 21}).status == "wrong"
    assert er.check_join_rounds({"zookeeper": 21, "central": True, "classic": 1}).status == \
        "wrong"


def test_exercise_4_gives_up_only_when_the_tries_end_before_the_owner_wakes():
    """ZookeeperConsumerConnector.syncedRebalance: rebalance.max.retries attempts,
    rebalance.backoff.ms apart, then ConsumerRebalanceFailedException."""
    assert er.check_give_up({"rebalance.max.retries": 2, "rebalance.backoff.ms": 2000}).correct
    fb = er.check_give_up({"rebalance.max.retries": 4, "rebalance.backoff.ms": 2000})
    assert fb.status == "wrong" and "settled" in fb.message
    gave_up = er.give_up_run(4, 1000)
    assert gave_up.designs["zookeeper"].failed_rebalances == 1
    assert er.log_excerpt(gave_up, "zookeeper", "can't rebalance after 4 retries")
    assert er.check_give_up({"rebalance.max.retries": 0, "rebalance.backoff.ms": 10}).status \
        == "wrong"
    assert er.check_give_up({"retries": 2}).status == "wrong"


# -- the notebooks ---------------------------------------------------------------------------


def test_the_student_notebook_has_every_exercise_and_no_solution():
    text = STUDENT.read_text()
    for name in CHECKS:
        assert f"{name} = ..." in text
    for value in solution_answers(TEACHER).values():
        assert repr(value) not in text
    assert "Worked answer" not in text
    assert "### BEGIN SOLUTION" not in text


def test_the_notebook_lists_every_choice_of_exercise_2():
    text = "".join("".join(c["source"]) for c in json.loads(TEACHER.read_text())["cells"])
    for letter, choice in er.EXERCISE_2_CHOICES.items():
        assert f"**{letter}.** {choice}" in text.replace("\n", " ") or \
            f"**{letter}.** {choice}" in text


def test_exercise_4_scenario_is_what_the_prose_says():
    sc = er.EXERCISE_4_SCENARIO
    assert isinstance(sc, Scenario)
    assert [(f.at_ms, f.kind, f.target, f.duration_ms) for f in sc.faults] == [
        (30_000, "pause", "consumer-3", 5_000), (30_000, "join", "consumer-4", None)]


def test_claim_collisions_show_in_the_zookeeper_log_until_the_frozen_owner_wakes():
    """ZkUtils.createEphemeralPathExpectConflict: NodeExists while consumer-3's owner znode of
    t-5 lives; ZookeeperConsumerConnector.reflectPartitionOwnershipDecision then fails the try."""
    collide = er.give_up_run()
    lines = er.log_excerpt(collide, "zookeeper", "consumer-4", since_ms=30_000, limit=50,
                           any_of=("conflict in", "selected partitions"))
    assert [ln[12:24] for ln in lines if "conflict in" in ln] == [
        "09:00:30,042", "09:00:32,080", "09:00:34,118"]
    assert "selected partitions : [t,5]" in lines.lines[-1]
    assert collide.designs["zookeeper"].failed_rebalances == 0
