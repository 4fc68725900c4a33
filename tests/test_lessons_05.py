"""Lesson 05 (reading coordinator logs with Spark): its inputs, views, runs and exercise checks.

The checks compute their answers without a JVM (the pure-Python parser, which gives the Spark
loader's rows, or the kit's trace); the tests marked `spark` show that the Spark pipeline the
notebook uses finds the same numbers. Kafka's side: the classic paths of `GroupMetadataManager`
(group states, join, sync, heartbeat, leave, session expiry), `CoordinatorRuntime`'s loads and
unloads, its timers (`EventBasedCoordinatorTimer`); `coordinator_kit/logs/wordings.py` for the
old Java client wordings.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from coordinator_kit.lessons import spark_logs as sl
from coordinator_kit.logs.parse import parse_paths
from coordinator_kit.scenarios import run_scenario

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / \
    "05_reading_coordinator_logs_with_spark.ipynb"


# -- inputs -----------------------------------------------------------------------------------

def test_dataset_logs_are_the_log_files_only():
    files = sl.dataset_logs()
    assert files and all(f.suffix == ".log" for f in files)
    assert {f.parent.name for f in files} == set(sl.dataset_runs())
    assert "many-groups" in sl.dataset_runs()
    with pytest.raises(ValueError, match="no dataset run"):
        sl.dataset_logs(["no-such-run"])


def test_the_seed_log_keeps_the_seeds_messages_in_kafkas_log4j_layout():
    lines = sl.SEED_LOG.read_text(encoding="utf-8").splitlines()
    # Kafka 0.9.0.1 logs every one of these at DEBUG (the blog post's line numbers are its
    # sources')
    layout = re.compile(r"^\[2016-05-13 07:38:\d\d,\d{3}\] DEBUG (.*) \(([\w.$]+):(\d+)\)$")
    parsed = [layout.match(line) for line in lines[:-1]]
    assert all(parsed), [line for line, m in zip(lines, parsed) if not m]
    messages = [m.group(1) for m in parsed]
    # the 0.9 consumer's join, in its order (wordings J-REVOKE, J-REJOIN, J-ASSIGNED)
    order = [messages.index("Revoking previously assigned partitions []"),
             messages.index("(Re-)joining group wfc_integration_test"),
             messages.index("Setting newly assigned partitions [basicproducer-0]")]
    assert order == sorted(order)
    # the last line is cut off mid-write, on purpose
    assert lines[-1].startswith("[2016-05-13") and not lines[-1].endswith(")")


def test_the_pipeline_recognises_the_seed_lines_it_knows_and_quarantines_the_others():
    result = parse_paths(sl.SEED_LOG)
    c = result.counts
    assert (c.read, c.recognised, c.other, c.quarantined) == (24, 7, 6, 11)
    assert c.by_problem == {"truncated": 1, "unknown message": 10}
    # three steps of the join, then 0.9's DEBUG heartbeat successes (wordings J-HB-OK-0)
    assert [e["event"] for e in result.events] == ["partitions_revoked", "join_sent",
                                                   "partitions_assigned"] + \
        ["heartbeat_succeeded"] * 4
    # before Kafka 1.0 a client line has no [Consumer clientId=.., groupId=..] prefix: only the
    # line that names the group in its text has one
    assert [e["group"] for e in result.events] == [None, "wfc_integration_test"] + [None] * 5
    # quarantined unknown messages keep their time stamps
    assert all(q["ts"] is not None for q in result.quarantine
               if q["problem"] == "unknown message")


def test_a_line_as_the_seed_prints_it_has_no_layout():
    table = sl.classify_table([sl.SEED_APPENDER_LINE])
    assert table.rows[0]["kind"] == "quarantine"
    assert table.rows[0]["event / problem"] == "unknown layout"


# -- views ------------------------------------------------------------------------------------

def test_table_prints_times_like_the_logs_and_shortens_member_ids():
    import pandas as pd

    pdf = pd.DataFrame({"ts": pd.to_datetime(["2025-03-03 09:01:03.103", None]),
                        "member": ["consumer-1-2ccb1916-8855-4f89-b43f-5fe626ad1d78", None],
                        "generation": [3.0, float("nan")]})
    t = sl.table(pdf)
    assert t.rows[0] == {"ts": "09:01:03,103", "member": "consumer-1-2ccb1916", "generation": 3}
    assert t.rows[1] == {"ts": None, "member": None, "generation": None}
    assert "09:01:03,103" in repr(t) and "<table>" in t._repr_html_()
    assert sl.table(pdf, full_ts=True).rows[0]["ts"] == "2025-03-03 09:01:03,103"
    with pytest.raises(KeyError, match="no column"):
        sl.table(pdf, ["nope"])


def _episodes_frame():
    import pandas as pd

    ts = pd.to_datetime(["2025-03-03 09:00:10.005", "2025-03-03 09:00:12.103",
                         "2025-03-03 09:01:03.103", "2025-03-03 09:01:03.203"])
    return pd.DataFrame({
        "group": ["group-1", "group-1"], "start_ts": [ts[0], ts[2]], "end_ts": [ts[1], ts[3]],
        "duration_ms": [2098, 100], "end_state": ["Stable", "Stable"],
        "generation_before": [1, 2], "generation_after": [2, 3],
        "members_before": [1, 2], "members_after": [2, 1], "restarts": [0, 0],
        "reason": ["Adding new member consumer-2-87621faf-48ea-40a4-91ef-2829dae08a32 with group "
                   "instance id null; client reason: need to re-join with the given member-id: "
                   "consumer-2-87621faf-48ea-40a4-91ef-2829dae08a32",
                   "removing member consumer-2-87621faf-48ea-40a4-91ef-2829dae08a32 on heartbeat "
                   "expiration."]})


def test_the_episode_table_shows_each_reason_in_full_under_its_episode():
    """The reason GroupMetadataManager.prepareRebalance logs is never cut: it has a line of its
    own under the episode's figures, in the text and in the HTML (member ids shortened)."""
    t = sl.episode_table(_episodes_frame())
    text, page = repr(t), t._repr_html_()
    assert "…" not in text and "…" not in page
    lines = text.splitlines()
    assert lines[-1] == "    reason: removing member consumer-2-87621faf on heartbeat expiration."
    assert "client reason: need to re-join with the given member-id: consumer-2-87621faf" in text
    assert "reason" not in lines[1], "the reason is not a column of the figures"
    assert page.count("<tr style=") == 4 and "colspan='6'" in page
    assert "white-space:nowrap" in page and "heartbeat expiration" in page


def test_wrap_table_wraps_or_moves_below_only_the_named_columns():
    t = sl.WrapTable([{"a": "x", "reason": "a long reason", "b": None},
                      {"a": "y", "reason": "short", "b": "under"}], ["a", "reason", "b"],
                     wrap={"reason": "9em"}, below=["b"])
    page = t._repr_html_()
    assert "white-space:normal; min-width:9em'>a long reason" in page
    assert "white-space:nowrap'>x<" in page
    assert page.count("<tr style=") == 3, "a line below only where the row has a value"
    assert repr(t).splitlines()[-3:] == ["x  a long reason", "y  short", "    b: under"]


@pytest.mark.parametrize("reason, cause, member", [
    ("Adding new member consumer-2-87621faf-48ea-40a4-91ef-2829dae08a32 with group instance id "
     "null; client reason: need to re-join with the given member-id: consumer-2-87621faf-48ea-"
     "40a4-91ef-2829dae08a32", "joined", "consumer-2-87621faf-48ea-40a4-91ef-2829dae08a32"),
    ("removing member consumer-1-2ccb1916-8855-4f89-b43f-5fe626ad1d78 on heartbeat expiration.",
     "failed", "consumer-1-2ccb1916-8855-4f89-b43f-5fe626ad1d78"),
    ("explicit `LeaveGroup` request for (billing-2-92cc6bff-4a4f-48e5-a487-31328c62ee38) members.",
     "left", "billing-2-92cc6bff-4a4f-48e5-a487-31328c62ee38"),
])
def test_rebalance_reasons_name_the_member_and_the_cause(reason, cause, member):
    """The reason GroupMetadataManager.prepareRebalance logs, by trigger (join, expiry, leave)."""
    for name, pattern in sl._CAUSES:
        m = re.search(pattern, reason)
        if m:
            assert (name, m.group(1)) == (cause, member)
            return
    pytest.fail(f"no cause pattern matches {reason!r}")


# -- runs the lesson writes -------------------------------------------------------------------

def test_write_logs_writes_the_same_files_as_the_datasets(tmp_path):
    folder = sl.write_logs(run_scenario("one-dies"), tmp_path / "one-dies")
    written = {p.name: p.read_bytes() for p in folder.iterdir()}
    committed = {p.name: p.read_bytes() for p in (sl.DATASETS / "one-dies").glob("*.log")}
    assert written == committed


def test_write_logs_without_a_directory_uses_a_fresh_temporary_folder():
    a = sl.write_logs(run_scenario("consumer-joins"))
    b = sl.write_logs(run_scenario("consumer-joins"))
    assert a != b and a.name == b.name == "try-it"
    assert sorted(p.name for p in a.iterdir()) == sorted(p.name for p in b.iterdir())


def test_pause_run_keeps_the_short_pause_and_expires_the_long_one():
    """expireClassicGroupMemberHeartbeat: a member is removed session.timeout.ms after its timer
    was last re-armed."""
    cluster = sl.pause_run()
    failed = [e for e in cluster.trace.events if e.kind == "member_session_expired"]
    assert len(failed) == 1 and failed[0].fields["member"].startswith("consumer-2-")
    key = f"heartbeat-group-1-{failed[0].fields['member']}"
    rearms = [e.ts for e in cluster.trace.events
              if e.kind == "timer_registered" and e.fields.get("key") == key]
    assert failed[0].ts == rearms[-1] + sl.SESSION_TIMEOUT_MS
    assert cluster.group()["state"] == "Stable" and len(cluster.group()["members"]) == 2
    # consumer-1's 30 s pause: the silence is the pause plus the time before and after it
    assert sl.PAUSES["consumer-1"][1] < sl.longest_silence() < sl.SESSION_TIMEOUT_MS


# -- exercise answers and checks --------------------------------------------------------------

CHECKS = [sl.check_heartbeat_interval, sl.check_rebalancing_time, sl.check_departure_causes,
          sl.check_longest_silence]


@pytest.mark.parametrize("check", CHECKS)
@pytest.mark.parametrize("placeholder", [..., None])
def test_placeholders_are_not_answered_yet(check, placeholder):
    feedback = check(placeholder)
    assert feedback.status == "unanswered" and "not answered yet" in repr(feedback)


def test_check_heartbeat_interval():
    assert sl.seed_heartbeat_gaps() == (3002, 3001, 3002)
    assert sl.check_heartbeat_interval(3000).correct
    assert "Close" in sl.check_heartbeat_interval(3002).message
    assert "session timeout" in sl.check_heartbeat_interval(30000).message
    assert not sl.check_heartbeat_interval("3000").correct


def test_check_rebalancing_time():
    # rolling-restart: the first join (6 002 ms) and one episode per restart
    assert sl.rebalancing_time() == 6002 + 2102 + 2202 + 2302
    assert sl.check_rebalancing_time(12608).correct
    assert "sum over all runs" in sl.check_rebalancing_time(99_999).message
    assert not sl.check_rebalancing_time(6606).correct
    assert not sl.check_rebalancing_time(12608.0).correct


def test_check_departure_causes():
    assert sl.departure_causes() == {"poll_timeout": 3, "session_expiry": 2}
    assert sl.check_departure_causes({"poll_timeout": 3, "session_expiry": 2}).correct
    assert sl.check_departure_causes({"poll_timeout": 3, "session_expiry": 2, "leave": 0}).correct
    assert not sl.check_departure_causes({"leave": 3, "session_expiry": 2}).correct
    assert "Unknown cause" in sl.check_departure_causes({"crash": 1}).message


def test_check_longest_silence():
    truth = sl.longest_silence()
    assert sl.check_longest_silence(truth).correct
    assert "is the pause" in sl.check_longest_silence(30_000).message
    assert not sl.check_longest_silence(truth + 1).correct


def test_quick_jvm_keeps_the_kits_quiet_log4j_file():
    opts = sl.quick_jvm()["spark.driver.extraJavaOptions"]
    assert opts.startswith("-Dlog4j2.configurationFile=file:") and opts.endswith(sl.QUICK_JVM_FLAGS)
    # the fast compiler alone gets a 48 MB code cache, which the notebook fills ("CodeCache is
    # full. Compiler has been disabled." on stderr): the flags give back the default 240 MB
    assert sl.QUICK_JVM_FLAGS.split() == ["-XX:TieredStopAtLevel=1",
                                          "-XX:ReservedCodeCacheSize=240m"]


def test_lesson_module_exports_what_it_names():
    missing = [n for n in sl.__all__ if not hasattr(sl, n)]
    assert not missing and len(set(sl.__all__)) == len(sl.__all__)


# -- the notebook's shape (nbval runs it; this checks what the issue asks of it) --------------

def test_notebook_shape():
    nb = json.loads(NOTEBOOK.read_text())
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    assert "widgets" not in nb["metadata"], "save notebooks without widget state"
    cells = nb["cells"]
    assert "you will be able to" in "".join(cells[0]["source"])
    markdown = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    assert "Try it" in markdown and "## Exercises" in markdown
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    # the session starts silently: its cell's output is checked (none), no stderr anywhere
    assert "get_session(" in code[0] and "NBVAL_IGNORE_OUTPUT" not in code[0]
    assert not [o for o in cells[[c["cell_type"] for c in cells].index("code")]["outputs"]]
    panel_at = next(i for i, c in enumerate(code) if "ControlPanel(" in c)
    # the Try-it panel stays fresh after Run All: no cell drives it, the demo has a run of its
    # own, and the cell after the panel describes the learner's run
    assert not any(".click()" in c or "panel.recording.act" in c for c in code)
    assert not any(re.search(r"\bpanel\s*[.=]", c) for c in code[:panel_at])
    assert "write_logs(panel.cluster" in code[panel_at + 1]
    assert "describe_run(yours.events" in code[panel_at + 1]
    assert any("describe_run(crashed.events" in c for c in code[:panel_at])
    assert "describes **your** run" in markdown
    assert "<details>" not in markdown, "worked answers live in the teacher copy"
    for name in ("rebalance_episodes", "member_departures", "heartbeat_gaps",
                 "coordinator_loads", "group_state_timeline"):
        assert any(name + "(" in c for c in code), name
    assert not any(c.lstrip().startswith(("def ", "class ")) or "\ndef " in c for c in code), \
        "logic belongs in coordinator_kit.lessons, not in the notebook"
    answers = [i for i, c in enumerate(code) if c.startswith("answer_")]
    assert len(answers) == len(CHECKS)
    for i in answers:
        assert "= ..." in code[i], "the committed notebook leaves the answers open"
        assert ".check_" in code[i + 1], "each answer cell is followed by its check"
    shown = []
    for c in cells:
        ignored = "".join(c.get("source", "")).startswith("# NBVAL_IGNORE_OUTPUT")
        for out in c.get("outputs", []):
            assert out["output_type"] != "error", "".join(c["source"])
            if not ignored:
                assert out.get("name") != "stderr", "".join(c["source"])
            shown.append("".join(out.get("data", {}).get("text/plain", "")))
            assert "/tmp/" not in "".join(out.get("text", "")) + shown[-1], \
                "no temporary path in the output (it differs on every run)"
    assert sum("not answered yet" in s for s in shown) == len(CHECKS)
    # pictures are stored as an <img> holding the SVG (they render in an untrusted notebook)
    svgs = [o for c in cells for o in c.get("outputs", [])
            if "data:image/svg+xml;base64" in "".join(o.get("data", {}).get("text/html", ""))]
    assert len(svgs) >= 3, "episode, state and heartbeat-gap pictures"


def test_section_11_prose_matches_the_real_kafka_recording():
    """What section 11 says of datasets/real-kafka, read with the pure-Python parser (the Spark
    loader gives the same rows): the quarantined lines are the Java consumer's multi-line
    `Reconciling assignment` records of its KIP-848 runs, and the broker's two kinds of event
    the kit never writes are CoordinatorRuntime's load and GroupMetadataManager's KIP-848
    target assignment."""
    from coordinator_kit.lessons import real_kafka as rk

    parsed = parse_paths(rk.logs("kafka") + rk.logs("kit"))
    quarantined = parsed.counts.quarantined
    assert quarantined == 10
    assert all("Reconciling assignment with local epoch" in q["raw"]
               and "groupId=g-kip848-" in q["raw"] for q in parsed.quarantine)
    broker = {e["event"] for e in parse_paths(rk.logs("broker")).events}
    kit = {e["event"] for e in parse_paths(rk.logs("kit")).events}
    assert broker - kit == {"load_scheduled", "target_assignment_computed"} and kit <= broker
    markdown = "\n".join("".join(c["source"]) for c in json.loads(NOTEBOOK.read_text())["cells"]
                         if c["cell_type"] == "markdown")
    assert "Ten lines are quarantined" in markdown
    assert "`load_scheduled`" in markdown and "`target_assignment_computed`" in markdown
    assert "eleven client scenarios" in markdown and len(rk.manifest()["scenarios"]) == 11


# -- the Spark pipeline finds what the checks say ----------------------------------------------

@pytest.fixture(scope="module")
def session(spark):
    """The shared session of tests/conftest.py."""
    return spark


@pytest.fixture(scope="module")
def datasets(session):
    return sl.load(sl.dataset_logs(), session)


@pytest.mark.spark
def test_spark_load_of_the_seed_log_matches_the_python_parser(session):
    seed = sl.load(sl.SEED_LOG, session)
    python = parse_paths(sl.SEED_LOG)
    assert seed.counts == python.counts
    spark_events = [(r["line"], r["event"], r["group"]) for r in
                    seed.events.orderBy("line").select("line", "event", "group").collect()]
    assert spark_events == [(e["line"], e["event"], e["group"]) for e in python.events]
    # exercise 1 with Spark: the heartbeat responses, events of their own since 0.9's wording
    # is known (J-HB-OK-0)
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    hb = seed.events.where(F.col("event") == "heartbeat_succeeded")
    gaps = hb.select((F.unix_millis("ts") - F.unix_millis(F.lag("ts").over(
        Window.orderBy("ts")))).alias("gap")).where(F.col("gap").isNotNull())
    assert tuple(r["gap"] for r in gaps.collect()) == sl.seed_heartbeat_gaps()


@pytest.mark.spark
def test_spark_totals_add_up_per_run(datasets):
    t = sl.totals(datasets)
    assert [r["run"] for r in t.rows] == sl.dataset_runs() + ["all"]
    assert all(r["adds up"] == "yes" for r in t.rows)
    assert t.rows[-1]["read"] == sum(r["read"] for r in t.rows[:-1])


@pytest.mark.spark
def test_qualified_groups_keep_the_runs_apart(datasets):
    """Every run's group-1 starts at 09:00:00; unqualified, their episodes would merge."""
    from coordinator_kit.spark.analyses import rebalance_episodes

    episodes = sl.collect(rebalance_episodes(sl.qualify_groups(datasets.events)))
    assert (episodes["restarts"].fillna(0) == 0).all()
    one_dies = episodes[episodes["group"] == "one-dies/group-1"]
    assert list(one_dies["generation_after"]) == [1, 2, 3]
    # exercise 2: the analysis's episodes of rolling-restart/group-1 sum to the checked answer
    rolling = episodes[episodes["group"] == "rolling-restart/group-1"]
    assert int(rolling["duration_ms"].sum()) == sl.rebalancing_time()


@pytest.mark.spark
def test_spark_departures_and_causes_of_many_groups(datasets):
    from coordinator_kit.spark.analyses import member_departures, rebalance_episodes

    events = sl.qualify_groups(datasets.events)
    counts = {r["cause"]: r["count"] for r in
              member_departures(sl.in_run(events, "many-groups")).groupBy("cause").count()
              .collect()}
    assert counts == sl.departure_causes()                      # exercise 3
    causes = sl.collect(sl.generation_causes(rebalance_episodes(events), run="many-groups"))
    assert set(causes["group"]) == {"many-groups/analytics", "many-groups/billing",
                                    "many-groups/shipping"}
    shipping = causes[causes["group"] == "many-groups/shipping"]
    assert list(shipping["cause"]) == ["joined", "failed", "joined"]
    assert shipping["caused_by"].iloc[1].startswith("shipping-2-")


@pytest.mark.spark
def test_spark_heartbeat_gaps_of_the_pause_run(session):
    from pyspark.sql import functions as F

    from coordinator_kit.spark.analyses import heartbeat_gaps, member_departures

    paused = sl.load(sl.write_logs(sl.pause_run(), broker_level="DEBUG", name="pause-run"),
                     session)
    gaps = heartbeat_gaps(paused.events, basis="broker")
    longest = (gaps.where(F.col("member").startswith("consumer-1-"))
               .agg(F.max("gap_ms")).collect()[0][0])
    assert longest == sl.longest_silence()                      # exercise 4
    left = sl.collect(member_departures(paused.events))
    assert list(left["cause"]) == ["session_expiry"]
    # the expired member's last gap is closed by its removal, session.timeout.ms after the
    # last re-arm (expireClassicGroupMemberHeartbeat)
    pdf = sl.collect(gaps)
    closing = pdf[pdf["event"] == "member_session_expired"]
    assert list(closing["gap_ms"]) == [sl.SESSION_TIMEOUT_MS]
    svg = sl.gap_chart(pdf).svg
    assert "session.timeout.ms" in svg and "removed: session expired after 45,000 ms" in svg


# -- a run, in words (describe_run) -----------------------------------------------------------

def _told(session, *actions, run_ms=60_000):
    """describe_run of a fresh stable_group with `actions` applied through a Recording (what the
    Try-it panel's buttons call), broker logs at DEBUG as the notebook writes them."""
    from coordinator_kit.lessons import heartbeats as hb
    from coordinator_kit.recording import Recording

    rec = Recording(hb.stable_group())
    for action in actions:
        rec.act(*action)
    if run_ms:
        rec.run_for(run_ms)
    logs = sl.load(sl.write_logs(rec.cluster, broker_level="DEBUG", name="told"), session)
    return sl.describe_run(logs.events, now_ms=rec.cluster.scheduler.now)


@pytest.mark.spark
def test_describe_run_of_a_crash_names_the_expiry_and_the_last_heartbeat(session):
    """expireClassicGroupMemberHeartbeat: the member is removed session.timeout.ms after the
    coordinator last re-armed its timer (18.1 s here), not after the crash (20 s)."""
    told = _told(session, ("crash", "consumer-2"))
    assert len(told) == 4
    assert told.sentences[0].startswith("Generation 1 of group-1 started at 0.0 s "
                                        "(09:00:00,005) when consumer-1-2ccb1916 joined the "
                                        "empty group; the group was Stable with 1 member")
    third = told.sentences[2]
    assert third.startswith("Generation 3 of group-1 started at 63.1 s (09:01:03,103) because "
                            "consumer-2-87621faf's session expired (heartbeat expiration): the "
                            "coordinator had last heard from it at 18.1 s (09:00:18,103), "
                            "45 000 ms earlier")
    assert "Stable again with 1 member at 63.2 s (09:01:03,203), 100 ms later." in third
    assert told.sentences[-1] == "The account ends at 80.0 s, where the run stands now."
    assert "heartbeat expiration" in told._repr_html_() and "<ol" in told._repr_html_()


@pytest.mark.spark
def test_describe_run_of_an_untouched_panel_says_nothing_happened(session):
    told = _told(session, run_ms=0)
    assert len(told) == 3
    assert told.sentences[-1] == ("Nothing else happened up to 20.0 s, where the run stands "
                                  "now: no member left or failed, and the coordinator did not "
                                  "move.")


@pytest.mark.spark
def test_describe_run_tells_silences_moves_and_second_expiries(session):
    # a 30 s pause: under session.timeout.ms, the member stays; only DEBUG re-arms show it
    paused = _told(session, ("pause", "consumer-1", 30_000))
    assert "The coordinator went 31 898 ms without hearing from consumer-1-2ccb1916, from " \
           "18.1 s (09:00:18,103) to 50.0 s (09:00:50,001): less than session.timeout.ms" in paused
    assert not any(s.startswith("Generation 3") for s in paused)
    # a coordinator move (CoordinatorRuntime.scheduleUnloadOperation, scheduleLoadOperation):
    # the old leader's unload is told before the new leader's load at the same instant
    moved = _told(session, ("move_coordinator", 2, 0))
    assert [s.split(":")[0][:30] for s in moved.sentences[2:4]] == \
        ["At 20.0 s (09", "At 20.0 s (09"]
    assert "broker 2 unloaded __consumer_offsets-2" in moved.sentences[2]
    assert "broker 0 loaded __consumer_offsets-2 (leader epoch 1)" in moved.sentences[3]
    # both consumers crash: one expiry starts the rebalance, the other is told on its own
    both = _told(session, ("crash", "consumer-1"), ("crash", "consumer-2"))
    assert "the group was Empty at 63.1 s (09:01:03,103)" in both.sentences[2]
    assert both.sentences[3].startswith("At 63.1 s (09:01:03,103) consumer-2-87621faf of "
                                        "group-1 was removed because its session expired as "
                                        "well: the coordinator had last heard from it at 18.1 s")


@pytest.mark.spark
def test_describe_run_tells_a_silence_still_open_and_when_it_would_expire(session):
    """A crashed member stays in the group until its session expires: 20 s after the crash the
    logs hold no removal yet, only a session timer not re-armed since 18.1 s."""
    told = _told(session, ("crash", "consumer-2"), run_ms=20_000)
    assert told.sentences[2] == (
        "The coordinator has not heard from consumer-2-87621faf of group-1 since 18.1 s "
        "(09:00:18,103): 21 897 ms by 40.0 s. If it stays silent, its session expires at 63.1 s "
        "(09:01:03,103), session.timeout.ms after that.")
    assert told.sentences[-1] == "The account ends at 40.0 s, where the run stands now."
