"""Lessons 01 (heartbeats) and 02 (rebalancing): the seeded runs show what the notebooks say they
show, and every exercise check accepts a right answer, rejects wrong ones with a hint, and
reports a placeholder as "not answered yet".

Kafka's side: the Java client's `AbstractCoordinator`, `Heartbeat` and `ConsumerCoordinator`
(join/sync, timers, eager vs cooperative), and the classic paths of `GroupMetadataManager`
(group states, JoinGroup, heartbeat, session expiry, static membership) and
`OffsetMetadataManager.commitOffset` (offset commits re-arming the session).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coordinator_kit.client import ConsumerConfig
from coordinator_kit.lessons import heartbeats as hb
from coordinator_kit.lessons import rebalancing as rb

# -- display pieces ---------------------------------------------------------------------------


def test_clock_matches_the_log_layout():
    assert hb.clock(0) == "09:00:00,000"
    assert hb.clock(63_103) == "09:01:03,103"


def test_short_id_keeps_the_first_uuid_group_only():
    assert hb.short_id("consumer-1-2ccb1916-8855-4f89-b43f-5fe626ad1d78") == "consumer-1-2ccb1916"
    assert hb.short_id("not-a-member-id") == "not-a-member-id"
    assert hb.short_id("") == "-"


def test_table_renders_text_and_html_from_rows_only():
    t = hb.Table([{"a": 1, "b": ["x", "y"]}, {"a": None, "b": "<z>"}], title="t")
    assert repr(t).splitlines() == ["t", "a  b", "-  ----", "1  x, y", "-  <z>"]
    assert "&lt;z&gt;" in t._repr_html_()
    assert t.column("a") == [1, None]
    with pytest.raises(KeyError, match="columns: a, b"):
        t.column("c")


def test_feedback_refuses_an_unknown_status():
    with pytest.raises(ValueError, match="correct, wrong or unanswered"):
        hb.Feedback("Exercise 9", "maybe", "")


def test_log_view_refuses_an_unknown_source():
    run = hb.gc_pause(30_000)
    with pytest.raises(ValueError, match="consumer-1"):
        run.log(who="consumer-9")


def test_a_picture_renders_in_an_untrusted_notebook_and_its_text_is_stable():
    """JupyterLab shows an untrusted notebook's image/svg+xml as text (the stored output of a
    timeline, before Run All) but renders text/html with an <img> whose source is a data URL.
    The bundle holds only those two, both the same on every run."""
    import base64
    import html as html_lib
    import re

    from IPython.core.formatters import DisplayFormatter

    run = hb.gc_pause(30_000, after_ms=5_000)
    pic = hb.timeline(run, start_ms=15_000, title="a <30 s> pause")
    data, _meta = DisplayFormatter().format(pic)
    assert set(data) == {"text/html", "text/plain"}, "no image/svg+xml: it shows as text"
    assert data["text/plain"] == "<picture: a <30 s> pause>"
    assert data == DisplayFormatter().format(hb.timeline(run, start_ms=15_000,
                                                         title="a <30 s> pause"))[0]
    m = re.fullmatch(r'<img src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)" alt="([^"]*)" '
                     r'title="[^"]*" style="max-width:100%;height:auto">', data["text/html"])
    assert m is not None, data["text/html"][:200]
    svg = base64.b64decode(m.group(1)).decode("utf-8")
    assert svg == pic.svg and svg.startswith("<svg") and "a &lt;30 s&gt; pause" in svg
    assert html_lib.unescape(m.group(2)) == "a <30 s> pause"
    with pytest.raises(ValueError, match="<svg>"):
        hb.Picture("not a picture", "x")


# -- lesson 01: what the runs show (heartbeats, session expiry, commits re-arming) ---------------


def test_three_timers_follow_the_config():
    t = hb.three_timers(ConsumerConfig(group_id="g", max_poll_interval_ms=120_000))
    assert t.column("value (ms)")[-1] == 125_000  # max(request.timeout.ms, rebalance + 5 s)


def test_heartbeats_and_commits_rearm_the_broker_session_timer():
    run = hb.gc_pause(60_000)
    rearms = hb.session_timer_rearms(run, "consumer-1", since_ms=12_500, until_ms=20_000)
    assert set(rearms.column("request")) == {"Heartbeat", "OffsetCommit"}
    assert set(rearms.column("delay (ms)")) == {45_000}


def test_a_pause_shorter_than_the_session_changes_nothing():
    run = hb.gc_pause(30_000)
    assert run.removed_at("consumer-1") is None
    assert len(run.log()) == 0
    assert run.cluster.group()["generation"] == 2


def test_a_pause_longer_than_the_session_expels_at_last_rearm_plus_session():
    run = hb.gc_pause(60_000)
    before = hb.session_timer_rearms(run, "consumer-1", since_ms=0, until_ms=run.start_ms)
    last = before.rows[-1]["expires at"]
    assert hb.clock(run.expired_at("consumer-1")) == last
    assert "has failed, removing it from the group" in run.log(who="broker")
    calls = hb.listener_table(run.cluster, since_ms=run.start_ms, clients=["consumer-1"])
    assert calls.column("callback")[0] == "onPartitionsLost"


def test_branches_table_compares_two_pauses_forked_from_one_instant():
    """Notebook 01's Try it: a 60 s and a 30 s pause from the same instant, on two branches of
    one recording. Only the 60 s one outlasts session.timeout.ms, so only there does the
    coordinator's heartbeat-<group>-<member> timer expire (GroupMetadataManager) and the group
    move to generation 3 without consumer-1, which still believes it is STABLE."""
    from coordinator_kit.recording import Recording

    rec = Recording(hb.stable_group())
    rec.run_for(4_500)
    rec.act("pause", "consumer-1", 60_000)
    rec.run_for(50_000)
    rec.seek(24_500)
    rec.step_back()  # before the pause: acting here forks
    rec.act("pause", "consumer-1", 30_000)
    rec.run_for(50_000)
    table = hb.branches_table(rec, 74_500)
    assert table.title == "every branch at 09:01:14,500 (74,500 ms)"
    rows = {r["branch"]: r for r in table.rows}
    assert rows["main"]["actions"] == ["09:00:24,500 pause(consumer-1, 60000)"]
    assert (rows["main"]["generation"], rows["main"]["members"]) == (3, 1)
    assert rows["main"]["consumer-1"] == "STABLE (paused)"
    assert rows["branch 2"]["actions"] == ["09:00:24,500 pause(consumer-1, 30000)"]
    assert (rows["branch 2"]["generation"], rows["branch 2"]["members"]) == (2, 2)
    assert rows["branch 2"]["consumer-1"] == "STABLE (running)"
    assert rec.position.time == 74_500 and rec.branch.name == "branch 2", "nothing moved"
    with pytest.raises(ValueError, match="computed to"):
        hb.branches_table(rec, 200_000)
    with pytest.raises(TypeError, match="Recording or a ControlPanel"):
        hb.branches_table(rec.cluster, 74_500)


def test_auto_commit_keeps_a_member_without_heartbeats_alive():
    kept = hb.dropped_heartbeats(auto_commit=True)
    lost = hb.dropped_heartbeats(auto_commit=False)
    assert kept.removed_at("consumer-1") is None
    assert set(hb.session_timer_summary(kept, "consumer-1").column("request")) == {
        "OffsetCommit"}
    assert lost.expired_at("consumer-1") is not None


def test_slow_processing_leaves_through_the_poll_timer_not_the_session():
    run = hb.slow_processing()
    assert "consumer poll timeout has expired" in run.log(who="consumer-1")
    assert "has left group through explicit `LeaveGroup` request" in run.log(who="broker")
    assert run.expired_at("consumer-1") is None


def test_a_lost_join_group_waits_rebalance_timeout_plus_five_seconds():
    for max_poll in (120_000, 300_000):
        sent, gave_up = hb.join_wait(hb.lost_join_group(max_poll_interval_ms=max_poll))
        assert gave_up - sent == max_poll + 5_000


# -- lesson 01: exercise checks ---------------------------------------------------------------


@pytest.mark.parametrize("check", [hb.check_expiry_time, hb.check_session_config,
                                   hb.check_auto_commit_interval, hb.check_join_timeout])
@pytest.mark.parametrize("placeholder", [..., None])
def test_placeholders_are_not_answered_yet(check, placeholder):
    fb = check(placeholder)
    assert fb.status == "unanswered" and not fb
    assert "not answered yet" in repr(fb)


def test_check_expiry_time():
    assert hb.check_expiry_time(63_103)
    assert hb.check_expiry_time("09:01:03,103")
    assert "start of the pause" in hb.check_expiry_time(65_000).message
    assert "pause ends" in hb.check_expiry_time(80_000).message
    assert "close" in hb.check_expiry_time(63_000).message.lower()
    assert "not a time" in hb.check_expiry_time("soon").message


def test_check_session_config():
    assert hb.check_session_config({"session.timeout.ms": 29_000,
                                    "heartbeat.interval.ms": 3_000})
    too_long = hb.check_session_config({"session.timeout.ms": 45_000,
                                        "heartbeat.interval.ms": 3_000})
    assert not too_long and "within 30 000 ms" in too_long.message
    too_short = hb.check_session_config({"session.timeout.ms": 20_000,
                                         "heartbeat.interval.ms": 3_000})
    assert not too_short and "25 s pause" in too_short.message
    below_min = hb.check_session_config({"session.timeout.ms": 3_000,
                                         "heartbeat.interval.ms": 1_000})
    assert "INVALID_SESSION_TIMEOUT" in below_min.message
    bad_pair = hb.check_session_config({"session.timeout.ms": 10_000,
                                        "heartbeat.interval.ms": 10_000})
    assert "must be lower than session.timeout.ms" in bad_pair.message
    assert "missing" in hb.check_session_config({"session.timeout.ms": 1}).message
    assert "dict" in hb.check_session_config(29_000).message


def test_check_auto_commit_interval():
    assert hb.check_auto_commit_interval(50_000)
    assert not hb.check_auto_commit_interval(5_000)
    assert "re-arms the session" in hb.check_auto_commit_interval(5_000).message
    assert "at least 1" in hb.check_auto_commit_interval(0).message


def test_check_join_timeout():
    assert hb.check_join_timeout(125_000)
    assert "stretches" in hb.check_join_timeout(30_000).message
    assert "lapse" in hb.check_join_timeout(120_000).message
    assert "whole number" in hb.check_join_timeout("125 s").message


# -- lesson 02: what the runs show (join/sync, assignors, static membership) ---------------------


def test_first_join_takes_member_id_required_then_join_then_sync():
    run = rb.first_join()
    t = rb.requests_table(run, "consumer-1")
    assert t.column("request") == ["JoinGroup", "JoinGroup", "SyncGroup"]
    assert t.column("error") == ["MEMBER_ID_REQUIRED", "NONE", "NONE"]
    # the join phase of an empty group waits group.initial.rebalance.delay.ms (3 s)
    assert t.rows[1]["waited (ms)"] >= 3_000
    assert rb.join_round_trips(run, "consumer-1") == {"JoinGroup": 2, "SyncGroup": 1}


def test_the_join_barrier_waits_for_the_slowest_member():
    run = rb.barrier_run(slow_ms=20_000)
    t = rb.join_barrier(run)
    answered = set(t.column("JoinGroup answered"))
    assert len(answered) == 1  # every JoinGroup is answered at the same moment
    waits = dict(zip(t.column("client"), t.column("join waited (ms)")))
    assert waits["consumer-3"] > 10_000 and waits["consumer-2"] < 100


def test_the_leader_is_a_consumer_and_a_new_one_is_chosen_when_it_leaves():
    run = rb.membership_story()
    gens = rb.generations_table(run)
    assert gens.column("generation") == [1, 2, 3, 4]
    assert gens.column("leader") == ["consumer-1"] * 3 + ["consumer-2"]
    assert "Finished assignment for group at generation 4" in run.log(who="consumer-2")
    assert "Finished assignment" not in run.log(who="broker")


def test_assignors_side_by_side_and_stickiness_on_leave():
    t = rb.assignor_table({"orders": 4, "payments": 4}, ["consumer-1", "consumer-2",
                                                         "consumer-3"])
    assert [r["range"].endswith("(4)") for r in t.rows] == [True, False, False]
    moves = rb.leave_moves({"orders": 12}, [f"consumer-{i}" for i in range(1, 5)], "consumer-1")
    moved = dict(zip(moves.column("assignor"), moves.column("others' partitions moved")))
    assert moved["sticky"] == moved["cooperative-sticky"] == 0
    assert moved["range"] > 0 and moved["roundrobin"] > 0
    with pytest.raises(ValueError, match="not one of the members"):
        rb.leave_moves({"orders": 3}, ["a", "b"], "c")


def test_eager_stops_everything_cooperative_only_what_moves():
    eager, coop = rb.third_joins("range"), rb.third_joins("cooperative-sticky")
    assert rb.rebalance_count(eager) == 1 and rb.rebalance_count(coop) == 2
    assert len(rb.interruptions(eager)) == 6
    moved = rb.interruptions(coop)
    assert len(moved) == 2 and all(r["to"] == "consumer-3" for r in moved.rows)


def test_static_members_restart_without_rebalancing_within_the_session():
    assert rb.rebalance_count(rb.rolling_restart_run(static=False)) >= 3
    assert rb.rebalance_count(rb.rolling_restart_run(static=True)) == 0
    late = rb.rolling_restart_run(static=True, down_ms=50_000)
    assert rb.rebalance_count(late) > 0  # down longer than session.timeout.ms: expelled


# -- lesson 02: exercise checks ---------------------------------------------------------------


@pytest.mark.parametrize("check", [rb.check_join_round_trips, rb.check_generation,
                                   rb.check_range_counts, rb.check_eager_vs_cooperative,
                                   rb.check_rolling_restart])
def test_lesson_02_placeholders_are_not_answered_yet(check):
    assert check(...).status == "unanswered"


def test_check_join_round_trips():
    assert rb.check_join_round_trips({"JoinGroup": 2, "SyncGroup": 1})
    assert "empty member id" in rb.check_join_round_trips({"JoinGroup": 1, "SyncGroup": 1}).message
    assert "keys" in rb.check_join_round_trips({"JoinGroup": 2}).message


def test_check_generation():
    assert rb.check_generation(5)
    assert "session expires" in rb.check_generation(4).message
    assert "whole number" in rb.check_generation("five").message


def test_check_range_counts():
    assert rb.check_range_counts({"consumer-1": 3, "consumer-2": 3, "consumer-3": 1})
    even = rb.check_range_counts({"consumer-1": 3, "consumer-2": 2, "consumer-3": 2})
    assert not even and "topic" in even.message
    assert "add up" in rb.check_range_counts({"consumer-1": 3, "consumer-2": 3,
                                              "consumer-3": 3}).message


def test_check_eager_vs_cooperative():
    assert rb.check_eager_vs_cooperative({"eager": (1, 6), "cooperative": (2, 2)})
    wrong = rb.check_eager_vs_cooperative({"eager": (1, 6), "cooperative": (1, 6)})
    assert not wrong and "follow-up" in wrong.message and "eager revokes" not in wrong.message
    assert "pair" in rb.check_eager_vs_cooperative({"eager": 1, "cooperative": 2}).message


def test_check_rolling_restart():
    assert rb.check_rolling_restart({"dynamic": 6, "static": 0})
    assert "second rebalance" in rb.check_rolling_restart({"dynamic": 3, "static": 0}).message
    assert "no LeaveGroup" in rb.check_rolling_restart({"dynamic": 6, "static": 3}).message


# -- the notebooks' shape (nbval runs them; this checks what the issue asks of them) ------------

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
NB01 = NOTEBOOKS / "01_heartbeats_and_session_timeouts.ipynb"
NB02 = NOTEBOOKS / "02_joining_and_rebalancing.ipynb"


@pytest.mark.parametrize("path, checks", [(NB01, 4), (NB02, 5)], ids=["01", "02"])
def test_notebook_shape(path, checks):
    nb = json.loads(path.read_text())
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    assert "widgets" not in nb["metadata"], "save notebooks without widget state"
    cells = nb["cells"]
    assert "you will be able to" in "".join(cells[0]["source"])
    markdown = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    assert "Try it" in markdown and "## Exercises" in markdown
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    assert any("ControlPanel(" in c for c in code)
    assert any("timeline(" in c for c in code), "a swimlane plot"
    assert not any(c.lstrip().startswith(("def ", "class ")) or "\ndef " in c for c in code), \
        "logic belongs in coordinator_kit.lessons, not in the notebook"
    answers = [i for i, c in enumerate(code) if c.startswith("answer_")]
    assert len(answers) == checks
    for i in answers:
        assert "= ..." in code[i], "the committed notebook leaves the answers open"
        assert ".check_" in code[i + 1], "each answer cell is followed by its check"
    shown = []
    for c in cells:
        for out in c.get("outputs", []):
            assert out["output_type"] != "error", "".join(c["source"])
            assert out.get("name") != "stderr", "".join(c["source"])
            shown.append("".join(out.get("data", {}).get("text/plain", "")))
    assert sum("not answered yet" in s for s in shown) == checks


@pytest.mark.parametrize("module", [hb, rb], ids=["heartbeats", "rebalancing"])
def test_lesson_modules_export_what_they_name(module):
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert not missing and len(set(module.__all__)) == len(module.__all__)
