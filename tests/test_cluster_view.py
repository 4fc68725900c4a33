"""The cluster view: a snapshot of the whole cluster at one instant, and its SVG.

Each test drives a named scenario to a moment where Kafka's group protocol shows something a
learner should see (a JoinGroup held at the barrier, a heartbeat answered REBALANCE_IN_PROGRESS,
a session timer running out, a coordinator moving, a commit waiting for the high watermark) and
checks that the snapshot, and the picture drawn from it, show it.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable

import pytest

from coordinator_kit.cluster import Cluster
from coordinator_kit.scenarios import new_cluster, second_joins
from coordinator_kit.viz import ClusterView, cluster_snapshot, cluster_svg, snapshot_changes
from coordinator_kit.viz.cluster_view import MIN_FONT_PX
from coordinator_kit.viz.snapshot import ClusterSnapshot, RequestView


def step_until(cluster: Cluster, condition: Callable[[ClusterSnapshot], bool],
               limit: int = 100_000) -> ClusterSnapshot:
    """Run one scheduler callback at a time until the snapshot satisfies `condition`."""
    for _ in range(limit):
        snap = cluster_snapshot(cluster)
        if condition(snap):
            return snap
        assert cluster.scheduler.step(), "nothing left to run"
    raise AssertionError(f"condition never held (stopped at {cluster.scheduler.now} ms)")


def requests(snap: ClusterSnapshot, **match: object) -> list[RequestView]:
    return [r for r in snap.requests
            if all(getattr(r, k) == v for k, v in match.items())]


def four_consumers(seed: int = 0) -> Cluster:
    """3 brokers and a Stable group of 4 consumers (generation 3)."""
    c = second_joins(seed)
    c.add_consumer("consumer-3")
    c.add_consumer("consumer-4")
    c.run_for(10_000)
    assert c.group()["state"] == "Stable" and len(c.group()["members"]) == 4
    return c


# -- the join barrier and REBALANCE_IN_PROGRESS ------------------------------------------------


def test_joingroup_waits_at_the_barrier_while_the_group_prepares_a_rebalance():
    """GroupMetadataManager holds a JoinGroup until every member rejoined or the rebalance
    timeout (`join-<group>`, the members' largest rebalance timeout) fires; the heartbeat of a
    member that has not rejoined yet is answered REBALANCE_IN_PROGRESS."""
    c = second_joins()
    c.add_consumer("consumer-3")
    # first queued at the coordinator (then answered MEMBER_ID_REQUIRED), then held
    snap = step_until(c, lambda s: any(r.detail.startswith("at the join barrier") for r in
                                       requests(s, client="consumer-3", api="JoinGroup",
                                                phase="at-coordinator")))
    join = requests(snap, client="consumer-3", api="JoinGroup")[0]
    group = snap.group("group-1")
    assert group.state == "PreparingRebalance"
    assert join.broker == group.broker == c.coordinator_for("group-1")
    assert join.detail.startswith("at the join barrier, 1/3 joined")
    member = next(m for m in group.members if m.client_id == "consumer-3")
    assert member.awaiting == "join"
    timer = group.rebalance
    assert timer is not None and timer.key == "join-group-1"
    assert timer.name == "rebalance.timeout.ms"
    assert timer.total_ms == c.consumer("consumer-3").config.max_poll_interval_ms
    assert 0 < timer.remaining_ms <= timer.total_ms
    # consumer-1 has not rejoined: its next heartbeat is answered REBALANCE_IN_PROGRESS
    snap = step_until(c, lambda s: bool(requests(s, client="consumer-1", api="Heartbeat",
                                                 phase="returning")))
    answer = requests(snap, client="consumer-1", api="Heartbeat")[0]
    assert answer.error == "REBALANCE_IN_PROGRESS"
    assert snap.consumer("consumer-1").state == "STABLE"  # it does not know yet
    # delivered: the answer stays readable as the consumer's last answer
    snap = step_until(c, lambda s: not requests(s, id=answer.id))
    last = snap.consumer("consumer-1").last_answer
    assert (last.api, last.error, last.at_ms) == ("Heartbeat", "REBALANCE_IN_PROGRESS",
                                                  snap.now_ms)
    svg = cluster_svg(snap)
    assert 'data-consumer="consumer-1"' in svg
    assert re.search(r'class="ck-last-answer" data-api="Heartbeat" '
                     r'data-error="REBALANCE_IN_PROGRESS"', svg)
    # the JoinGroup is drawn waiting at the coordinator
    assert re.search(r'data-request="JoinGroup" data-client="consumer-3" data-broker="\d" '
                     r'data-phase="at-coordinator"', svg)


# -- a long GC pause -------------------------------------------------------------------------


def test_long_gc_pause_expels_the_member_and_its_commit_comes_back_unknown_member_id():
    """A pause longer than session.timeout.ms: the coordinator's session timer of the paused
    member runs out (GroupMetadataManager.onExpireHeartbeat), the other member's heartbeat is
    answered REBALANCE_IN_PROGRESS, and the paused member, once awake, gets
    UNKNOWN_MEMBER_ID (here on the OffsetCommit its poll sends first)."""
    c = second_joins()
    c.pause("consumer-1", 60_000)
    snap = cluster_snapshot(c)
    paused = snap.consumer("consumer-1")
    assert paused.process == "paused" and "paused until 80,000 ms" in paused.status
    session = paused.memberships[0].session
    assert session is not None and session.total_ms == 45_000
    poll = next(t for t in paused.timers if t.name == "max.poll.interval.ms")
    c.run_for(40_000)
    snap = cluster_snapshot(c)
    later = snap.consumer("consumer-1").memberships[0].session
    assert later.remaining_ms == session.remaining_ms - 40_000
    assert later.urgency == "urgent"
    # the client's own timers do not move during the pause: its poll deadline runs down
    assert next(t for t in snap.consumer("consumer-1").timers
                if t.name == "max.poll.interval.ms").remaining_ms == poll.remaining_ms - 40_000
    snap = step_until(c, lambda s: bool(requests(s, client="consumer-2", api="Heartbeat",
                                                 error="REBALANCE_IN_PROGRESS")))
    assert snap.consumer("consumer-1").memberships == ()
    assert snap.group("group-1").state == "PreparingRebalance"
    snap = step_until(c, lambda s: bool(requests(s, client="consumer-1",
                                                 error="UNKNOWN_MEMBER_ID")))
    answer = requests(snap, client="consumer-1", error="UNKNOWN_MEMBER_ID")[0]
    assert answer.phase == "returning" and answer.api == "OffsetCommit"
    assert snap.now_ms >= 80_000
    svg = cluster_svg(snap)
    assert re.search(r'data-request="OffsetCommit" data-client="consumer-1" data-broker="\d" '
                     r'data-phase="returning" data-error="UNKNOWN_MEMBER_ID"', svg)


# -- a crash: the session timer runs out -------------------------------------------------------


def test_crashed_member_session_runs_down_to_zero_at_45_s_then_the_member_is_gone():
    """A crashed consumer sends nothing: the coordinator's `heartbeat-<group>-<member>` timer,
    pushed back by its last heartbeat, runs out session.timeout.ms (45 s) later and the member
    is removed (GroupMetadataManager.onExpireHeartbeat -> PreparingRebalance)."""
    c = four_consumers()
    c.crash("consumer-1")
    snap = cluster_snapshot(c)
    crashed = snap.consumer("consumer-1")
    assert crashed.process == "crashed" and crashed.timers == ()  # no process, no client timers
    member = crashed.memberships[0]
    deadline = snap.now_ms + member.session.remaining_ms
    last_heartbeat = deadline - 45_000
    assert snap.now_ms - 3_000 <= last_heartbeat <= snap.now_ms  # within one interval
    c.run_for(deadline - 1 - c.scheduler.now)
    bar = cluster_snapshot(c).consumer("consumer-1").memberships[0].session
    assert (bar.remaining_ms, bar.total_ms, bar.urgency) == (1, 45_000, "urgent")
    snap = step_until(c, lambda s: not s.consumer("consumer-1").memberships)
    assert snap.now_ms == deadline
    group = snap.group("group-1")
    assert group.state == "PreparingRebalance"
    assert "consumer-1" not in {m.client_id for m in group.members}
    svg = cluster_svg(snap)
    card = _group_of(svg, 'data-consumer="consumer-1"')
    assert 'data-process="crashed"' in card
    assert "not a member of the group on any coordinator" in card


# -- the coordinator moves ---------------------------------------------------------------------


def test_coordinator_move_shows_loading_then_not_coordinator_and_load_in_progress():
    """Moving `__consumer_offsets-2` to broker 0: the new leader's context is LOADING while it
    replays the log (CoordinatorRuntime.scheduleLoadOperation), the old one answers
    NOT_COORDINATOR, and the new one answers COORDINATOR_LOAD_IN_PROGRESS until ACTIVE."""
    c = second_joins()
    c.run_for(6_000)
    tp = c.partition_of("group-1")
    old = c.coordinator_for("group-1")
    new = next(b for b in sorted(c.brokers) if b != old)
    c.brokers[new].runtime.loader.slow_next_load(tp, 5_000)
    c.move_coordinator("group-1", new)
    snap = step_until(c, lambda s: any(x.state == "LOADING" for x in s.broker(new).contexts))
    ctx = next(x for x in snap.broker(new).contexts if x.partition == tp.partition)
    assert ctx.leader and ctx.epoch == 1
    assert snap.broker(new).leads == tuple(sorted({tp.partition, new}))
    assert 'data-state="LOADING"' in cluster_svg(snap)
    snap = step_until(c, lambda s: bool(requests(s, error="NOT_COORDINATOR")))
    assert requests(snap, error="NOT_COORDINATOR")[0].broker == old
    snap = step_until(c, lambda s: bool(requests(s, error="COORDINATOR_LOAD_IN_PROGRESS")))
    assert requests(snap, error="COORDINATOR_LOAD_IN_PROGRESS")[0].broker == new
    assert next(x for x in snap.broker(new).contexts
                if x.partition == tp.partition).state == "LOADING"
    snap = step_until(c, lambda s: any(g.broker == new and g.context_state == "ACTIVE"
                                       for g in s.groups))
    assert snap.group("group-1").coordinator


# -- a commit waits for the high watermark ----------------------------------------------------


def test_offset_commit_waits_for_the_high_watermark_while_a_replica_is_stalled():
    """A write is answered only once its records are committed: the high watermark is the
    smallest log end offset of the ISR, so a stalled follower holds every commit back (until
    replica.lag.time.max.ms drops it from the ISR)."""
    c = four_consumers()
    tp = c.partition_of("group-1")
    leader = c.coordinator_for("group-1")
    follower = next(b for b in sorted(c.partitions[tp].replicas) if b != leader)
    c.stall_replica(tp.partition, follower)
    snap = step_until(c, lambda s: any(r.api == "OffsetCommit" and r.phase == "at-coordinator"
                                       and "HWM" in r.detail for r in s.requests))
    p = next(p for p in snap.partitions if p.partition == tp.partition)
    assert p.high_watermark < p.log_end_offset
    assert p.waiting_for and f"broker {follower}" in p.waiting_for
    replica = next(r for r in p.replicas if r.broker_id == follower)
    assert not replica.fetching and replica.in_isr
    assert snap.broker(follower).stalled == (tp.partition,)
    commit = next(r for r in snap.requests if r.api == "OffsetCommit")
    assert commit.detail == (f"waiting for the HWM: {p.high_watermark} < LEO "
                             f"{p.log_end_offset}")
    svg = cluster_svg(snap)
    assert f'data-broker="{follower}" data-in-isr="true" data-fetching="false"' in svg


# -- lost requests ------------------------------------------------------------------------------


def test_dropped_heartbeat_and_cut_off_requests_are_drawn_lost():
    c = four_consumers()
    c.drop_heartbeats("consumer-2")
    c.cut_off("consumer-3")
    snap = step_until(c, lambda s: bool(requests(s, client="consumer-2", api="Heartbeat"))
                      and bool(requests(s, client="consumer-3")))
    dropped = requests(snap, client="consumer-2", api="Heartbeat")[0]
    assert (dropped.phase, dropped.lost_where) == ("lost", "send")
    assert dropped.detail == "heartbeat dropped on the way out"
    cut = requests(snap, client="consumer-3")[0]
    assert cut.phase == "lost" and cut.detail == "lost: the client is cut off"
    assert "cut off" in snap.consumer("consumer-3").status
    assert "dropping heartbeats" in snap.consumer("consumer-2").status
    # the client learns of it when request.timeout.ms fires
    c.run_for(dropped.timeout_at_ms - c.scheduler.now)
    last = cluster_snapshot(c).consumer("consumer-2").last_answer
    assert (last.api, last.error, last.at_ms) == ("Heartbeat", "REQUEST_TIMED_OUT",
                                                  dropped.timeout_at_ms)


def test_an_answer_lost_on_its_way_back():
    c = four_consumers()
    snap = step_until(c, lambda s: bool(requests(s, client="consumer-4", phase="returning")))
    c.cut_off("consumer-4")
    answer = requests(snap, client="consumer-4", phase="returning")[0]
    snap = step_until(c, lambda s: requests(s, id=answer.id)[0].phase == "lost")
    lost = requests(snap, id=answer.id)[0]
    assert (lost.lost_where, lost.error) == ("return", answer.error)
    assert lost.detail == "answer lost: client cut off"


def test_a_down_broker_is_drawn_down():
    c = four_consumers()
    c.brokers[1].alive = False  # no fault stops a broker yet; the view shows one anyway
    snap = cluster_snapshot(c)
    assert not snap.broker(1).alive
    assert re.search(r'class="ck-broker" data-broker="1" data-alive="false"', cluster_svg(snap))


# -- the picture ---------------------------------------------------------------------------------


def _group_of(svg: str, marker: str) -> str:
    """The <g ...> element whose opening tag holds `marker`, with its content."""
    start = svg.index(marker)
    start = svg.rindex("<g", 0, start)
    depth, i = 0, start
    while True:
        nxt = re.compile(r"<g[ >]|</g>").search(svg, i)
        assert nxt is not None
        depth += 1 if nxt.group().startswith("<g") else -1
        i = nxt.end()
        if depth == 0:
            return svg[start:i]


def _moments() -> list[ClusterSnapshot]:
    c = four_consumers()
    out = [cluster_snapshot(c)]
    c.pause("consumer-1", 60_000)
    c.drop_heartbeats("consumer-2")
    out.append(step_until(c, lambda s: bool(requests(s, error="REBALANCE_IN_PROGRESS"))))
    c.run_for(20_000)
    out.append(cluster_snapshot(c))
    return out


def test_svg_fits_one_screen_for_3_brokers_and_4_consumers():
    """At most 960 px wide (JupyterLab's output area at a 1400 px window) and 800 px tall at
    natural size, shrinking with the output area, and no text under 11 px."""
    previous = None
    for snap in _moments():
        assert len(snap.brokers) == 3 and len(snap.consumers) == 4
        svg = cluster_svg(snap, previous)
        previous = snap
        head = svg[:svg.index(">")]
        width = float(re.search(r' width="([\d.]+)"', head).group(1))
        height = float(re.search(r' height="([\d.]+)"', head).group(1))
        assert width <= 960 and height <= 800, (width, height)
        assert "max-width:100%" in head
        sizes = [float(s) for s in re.findall(r'font-size="([\d.]+)"', svg)]
        assert sizes and min(sizes) >= MIN_FONT_PX


def test_more_consumers_and_groups_grow_taller_not_smaller():
    c = new_cluster(0, brokers=5, offsets_partitions=6, topics={"orders": 6, "payments": 4})
    for i in range(1, 7):
        c.add_consumer(f"consumer-{i}")
    for i in range(1, 4):
        c.add_consumer(f"pay-{i}", group_id="payments-app", topics=("payments",))
    c.run_for(15_000)
    snap = cluster_snapshot(c)
    svg = cluster_svg(snap)
    head = svg[:svg.index(">")]
    assert float(re.search(r' width="([\d.]+)"', head).group(1)) == 960
    assert float(re.search(r' height="([\d.]+)"', head).group(1)) > 800
    assert min(float(s) for s in re.findall(r'font-size="([\d.]+)"', svg)) >= MIN_FONT_PX
    assert {g.group_id for g in snap.groups} == {"group-1", "payments-app"}
    assert svg.count('class="ck-consumer') == 9 and svg.count('class="ck-broker"') == 5


def test_same_scenario_same_bytes():
    first = [cluster_svg(s, p) for s, p in zip(_moments(), [None, *_moments()[:-1]])]
    second = [cluster_svg(s, p) for s, p in zip(_moments(), [None, *_moments()[:-1]])]
    assert first == second
    assert _moments() == _moments()  # the snapshots too


def test_a_snapshot_only_reads():
    """Taking a snapshot changes nothing: the same callbacks stay pending, the trace grows
    by nothing."""
    c = four_consumers()
    c.pause("consumer-1", 60_000)
    c.run_for(47_000)
    before = [(h.name, h.when, h.seq) for h in c.scheduler.pending()]
    events = len(c.trace)
    cluster_snapshot(c)
    cluster_svg(cluster_snapshot(c))
    assert [(h.name, h.when, h.seq) for h in c.scheduler.pending()] == before
    assert len(c.trace) == events


def test_change_marking_marks_exactly_the_crashed_consumer_after_its_expiry():
    c = four_consumers()
    before = cluster_snapshot(c)
    c.crash("consumer-1")
    after = step_until(c, lambda s: not s.consumer("consumer-1").memberships)
    changes = snapshot_changes(before, after)
    assert set(changes.consumers) == {"consumer-1"}
    assert set(changes.consumers["consumer-1"]) == {"process", "membership"}
    # consumer-1 led the group: ClassicGroup.remove hands the leadership to the next member
    assert before.group("group-1").leader_client == "consumer-1"
    assert changes.groups == {"group-1": ("state", "leader", "members")}
    svg = cluster_svg(after, before)
    marked = re.findall(r'class="ck-changed ck-changed-consumer"', svg)
    assert len(marked) == 1
    assert 'class="ck-changed ck-changed-consumer"' in _group_of(svg, 'data-consumer="consumer-1"')
    assert 'data-changed="process membership"' in svg
    assert "changed since" in svg and "ck-changed-group" in svg
    # without a previous picture nothing is marked; with the same one, nothing changed
    assert "ck-changed" not in cluster_svg(after)
    same = cluster_svg(after, after)
    assert "ck-changed" not in same and "nothing changed since" in same


def test_bad_width_is_refused():
    snap = cluster_snapshot(four_consumers())
    for width in (500, 960.5, True):
        with pytest.raises(ValueError, match="width must be"):
            cluster_svg(snap, width=width)


# -- the widget -------------------------------------------------------------------------------


def test_cluster_view_redraws_and_marks_changes_since_the_last_picture():
    c = four_consumers()
    view = ClusterView(c)
    assert "ck-cluster-view" in view.widget._dom_classes
    assert view.widget.value.startswith('<div class="ck-cluster-view"><svg')
    assert "ck-changed" not in view.widget.value
    assert repr(view).startswith(f"ClusterView(t={c.scheduler.now} ms, 3 brokers, 4 consumers")
    c.crash("consumer-2")
    view.show(c)
    assert set(view.changes.consumers) == {"consumer-2"}
    assert 'data-changed="process"' in view.widget.value
    # stored in a notebook: an <img> with the SVG as a data URI (JupyterLab's sanitizer keeps
    # it in an untrusted notebook, where it strips an inline <svg> to its text)
    bundle = view._repr_mimebundle_()
    html = bundle["text/html"]
    data = re.search(r'src="data:image/svg\+xml;base64,([^"]+)"', html).group(1)
    assert base64.b64decode(data).decode() == view.svg
    assert bundle["text/plain"] == repr(view)
    assert "application/vnd.jupyter.widget-view+json" in bundle
    # rewinding: an earlier snapshot is drawn as it was
    first = cluster_snapshot(c)
    c.run_for(5_000)
    view.show(c)
    view.reset()
    view.show_snapshot(first)
    assert view.svg == cluster_svg(first)
