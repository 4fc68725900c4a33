"""Analyses of parsed coordinator logs, each a function from `load_logs`'s DataFrame to a DataFrame.

* `rebalance_episodes` - one row per rebalance: of a classic group from PreparingRebalance until
  it is Stable again (or Empty, or Dead), with Kafka's generation and member counts; of a
  KIP-848 consumer group from Assigning (a member joined, left or was fenced) until it is
  Stable (or Empty) again, with its group epochs;
* `member_departures` - who left a group and why (session expiry, LeaveGroup, poll timeout,
  fencing, rebalance timeout);
* `heartbeat_gaps` / `heartbeat_gap_summary` - time between heartbeat lines per member;
* `coordinator_loads` - load and unload of each `__consumer_offsets` partition per epoch;
* `group_state_timeline` - one row per (group, state, from_ts, to_ts), in `ClassicGroupState`'s
  or `ConsumerGroupState`'s states.

Everything is Spark's DataFrame API (filters, window functions, aggregations, joins): no Python
UDFs and nothing collected to the driver, so the same code runs on the 1 GB benchmark input.
Every result is sorted (`orderBy`) so that `show()` and `toPandas()` print the same rows in the
same order on every run; timestamps are the loader's, in UTC. Lines without a time stamp (Python's
basicConfig layout) cannot be placed in time and are left out of every analysis here.

Real broker logs say less than the kit's trace, so each analysis states which lines it reads
(see the function docstrings); where Kafka does not log a moment at INFO (the instant a group
becomes Stable is the commit of the leader's assignment, which Kafka does not log) the nearest
line that Kafka does log stands in for it and the docstring says so.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F


__all__ = ["rebalance_episodes", "member_departures", "heartbeat_gaps", "heartbeat_gap_summary",
           "coordinator_loads", "group_state_timeline", "as_pandas", "ANALYSES",
           "CLASSIC_GROUP_STATES", "DEPARTURE_CAUSES"]

# The order of lines, Kafka's group states, the causes of a departure and the event names each
# analysis reads are the pure-Python mirror's (logs.analyses): one definition, so the two engines
# cannot read different lines. `_known` checks a name against the parser's events at import.
from ..logs.analyses import (  # noqa: E402
    _ASSIGNMENT_APPLIED, _EPISODE_ENDS, _KIP848_HEARTBEAT_OK, _LOAD_OUTCOMES,
    _POLL_TIMEOUT_TEXT, _STATE_ALIASES, ASSIGNMENT_RECEIVED, CLASSIC_GROUP_STATES,
    CONSUMER_GROUP_STATES, DEPARTURE_CAUSES, GROUP_DEAD, GROUP_EMPTY, GROUP_LOADED,
    GROUP_STABILIZED, GROUP_UNLOADED, HEARTBEAT_SENT, JOIN_SENT, JOINED, LOAD_SCHEDULED, ORDER,
    REBALANCE_STARTED, REJOIN_REQUESTED, SYNCED, TIMER_REGISTERED, UNLOAD_SCHEDULED,
    UNLOAD_STARTED, _HEARTBEAT_FAILURES, _known,
)


# -- helpers ----------------------------------------------------------------------------------

def _col(name: str) -> Column:
    return F.col(name)


def _ms(c: Column | str) -> Column:
    """Milliseconds since the epoch (UTC) of a timestamp column."""
    return F.unix_millis((F.col(c) if isinstance(c, str) else c).cast("timestamp"))


def _window(*keys: str) -> Any:
    return Window.partitionBy(*keys).orderBy(*ORDER)


def _timed(logs: DataFrame) -> DataFrame:
    return logs.filter(F.col("ts").isNotNull() & F.col("event").isNotNull())


def _int_from(raw: Column, *patterns: str) -> Column:
    """The first capture group of the first pattern that matches, as int (NULL if none does).

    `regexp_extract` gives '' when nothing matches; `try_cast` turns that into NULL instead of
    failing under Spark 4's ANSI mode."""
    return F.coalesce(*[F.regexp_extract(raw, p, 1).try_cast("int") for p in patterns])


def _str_from(raw: Column, *patterns: str) -> Column:
    found = [F.regexp_extract(raw, p, 1) for p in patterns]
    return F.coalesce(*[F.when(f != "", f) for f in found])


def _members_in(raw: Column) -> Column:
    """The member count a broker line prints: "with N members" (Stabilized, 2.8+; Loaded) or
    "The group has N members" (Assignment received, 2.8+). Older wordings print none."""
    return _int_from(raw, r"(?:with|group has) (\d+) members")


def broker_id(raw: Column) -> Column:
    """The broker id from a broker line's LogContext prefix, in every wording Kafka used."""
    return _int_from(raw, r"\[GroupCoordinator (?:id=)?(\d+)", r"brokerId=(\d+)",
                     r"on Broker (\d+)\]", r"\[Broker id=(\d+)\]", r"\[KafkaApi-(\d+)\]")


def client_id(raw: Column) -> Column:
    """The client id from a Java client's `[Consumer clientId=X, groupId=Y]` prefix or a
    librdkafka handle name (`rdkafka#consumer-1`); NULL for wordings that print neither."""
    return _str_from(raw, r"clientId=([^,\]]+)", r"(rdkafka#[A-Za-z]+-\d+)")


def _state_case(mapping: dict[str, str | None], default: Column) -> Column:
    expr = None
    for event, state in mapping.items():
        value = F.lit(state) if state is not None else default
        expr = (F.when(F.col("event") == event, value) if expr is None
                else expr.when(F.col("event") == event, value))
    return expr.otherwise(default)  # type: ignore[union-attr]


def _group_lines(logs: DataFrame) -> DataFrame:
    """Broker lines about a classic group, with the state each line shows the group entering
    (`new_state`) and the member count it shows (`members_known`).

    State from the line's event: Preparing to rebalance -> PreparingRebalance, Stabilized ->
    CompletingRebalance, Assignment received -> Stable, is now empty -> Empty, Unloading /
    transitioned to Dead -> Dead, Loaded with N members -> Stable (N > 0) or Empty (as
    `GroupMetadataManager.replay` builds a loaded group). Other lines that print the group's
    state ("joins group g in Empty state") are observations of the state the group is in.
    """
    lines = _timed(logs).filter((F.col("source") == "broker") & F.col("group").isNotNull())
    # a KIP-848 consumer group's lines ("Loaded consumer group ...", "[GroupId=g] Unloaded
    # group metadata ...") are not a classic group's moves
    lines = lines.filter(~F.coalesce(F.col("template"), F.lit("")).startswith("CG-"))
    lines = lines.filter(F.col("event").isin(list(_EPISODE_ENDS) + [REBALANCE_STARTED,
                                                                      GROUP_STABILIZED])
                         | F.col("state").isin(list(CLASSIC_GROUP_STATES) + list(_STATE_ALIASES)))
    n = _members_in(F.col("raw"))
    observed = F.col("state")
    for alias, name in _STATE_ALIASES.items():
        observed = F.when(observed == alias, F.lit(name)).otherwise(observed)
    observed = F.when(observed.isin(list(CLASSIC_GROUP_STATES)), observed)
    loaded = F.when(n == 0, F.lit("Empty")).otherwise(F.lit("Stable"))
    new_state = _state_case({REBALANCE_STARTED: "PreparingRebalance",
                             GROUP_STABILIZED: "CompletingRebalance",
                             ASSIGNMENT_RECEIVED: "Stable", GROUP_EMPTY: "Empty",
                             GROUP_UNLOADED: "Dead", GROUP_DEAD: "Dead"}, observed)
    new_state = F.when(F.col("event") == GROUP_LOADED, loaded).otherwise(new_state)
    known = (F.when(F.col("event").isin(GROUP_STABILIZED, ASSIGNMENT_RECEIVED, GROUP_LOADED), n)
             .when(new_state == "Empty", F.lit(0)))
    return (lines.select("group", "ts", "file", "line", "event", "generation", "reason", "member",
                         "state", "raw")
            .withColumn("members_n", n)
            .withColumn("new_state", new_state)
            .withColumn("members_known", known))


def _client_lines(logs: DataFrame, events: list[str]) -> DataFrame:
    c = _timed(logs).filter((F.col("source") == "client") & F.col("group").isNotNull()
                            & F.col("event").isin(events))
    return c.withColumn("client_id", F.coalesce(client_id(F.col("raw")), F.col("file")))


def _broker_groups(logs: DataFrame) -> DataFrame:
    return _group_lines(logs).select("group").distinct()


# -- rebalance episodes -----------------------------------------------------------------------

_EPISODE_COLUMNS = ("group", "start_ts", "end_ts", "duration_ms", "reason", "end_state",
                    "end_event", "generation_before", "generation_after", "members_before",
                    "members_after", "restarts", "derived_from")


def rebalance_episodes(logs: DataFrame) -> DataFrame:
    """One row per rebalance of a classic group, ordered by group and start.

    From broker lines (`prepareRebalance`, `completeClassicGroupJoin`, `classicGroupSync`): an
    episode starts at "Preparing to rebalance group ..." (the group enters PreparingRebalance;
    `reason` and `generation_before` are that line's) and ends at the first of: "Assignment
    received from leader ... for generation n" (the leader's SyncGroup; Kafka moves the group to
    Stable once that assignment is committed and logs nothing then, so this line stands in for
    it), "Group ... is now empty" (-> Empty), "Unloading group metadata" / "transitioned to
    Dead" (-> Dead), or "Loaded classic group" on a new coordinator (the rebalance was cut short
    by a coordinator move). A second "Preparing to rebalance" before the end (a member joined or
    the sync timed out during CompletingRebalance) continues the same episode and counts in
    `restarts`.
    `members_after` is the count the ending line prints ("The group has N members", 2.8+; 0 for
    Empty; from "Stabilized ... with N members" when the ending line has none); `members_before`
    is the last count printed before the start (0 for a new or Empty group). Older wordings
    print no counts: those cells are NULL. An episode with no end in the input has NULL end
    columns.

    For groups with no broker lines at all, episodes are derived from the clients' lines
    (`derived_from` = "client"): the episode that produced generation G ends at the first
    "Successfully synced group in generation G" of any member (the group is Stable by then;
    kafka-python logs no sync line, so there its first "Updated partition assignment" /
    "Setting newly assigned partitions" after joining G), starts at the earliest "(Re-)joining
    group" / "Request joining group due to" since the previous generation's members synced, its
    reason is the first such request's, and `members_after` counts the clients that joined
    generation G. Client logs cannot see a rebalance that is still running, so only completed
    episodes appear, and `restarts` is NULL.

    A KIP-848 consumer group (its coordinator's lines are `GroupMetadataManager`'s consumer-group
    lines) has no join phase: its states are replayed from its lines (`_cg_changes`). An
    episode starts when the group moves to Assigning (`reason`: the member that joined, left or
    was fenced, "member_left <member id>"; `generation_before` is the group epoch before it)
    and ends at its last move to Stable (or Empty) before the next one starts; a further move
    to Assigning before the group was Stable again (another join, leave or fencing) counts in
    `restarts`; an episode the group leaves for Empty before it was Stable again ends there.
    `generation_after` is the group epoch the group is Stable at, the member counts
    are the group's before the line that started it and at the end. `derived_from` is "broker"
    when the coordinator logs its DEBUG "new assignment state" lines (its own view of each
    member), else "broker+client": at INFO a member counts as reconciled from its own
    "transitioned from ACKNOWLEDGING to STABLE", which comes one heartbeat response after the
    coordinator's, and never comes from a member stuck in a long poll (its callbacks do not
    run), so such an episode runs on to the next one's end.
    """
    broker = _broker_episodes(logs)
    client = _client_episodes(logs).join(_broker_groups(logs), "group", "left_anti")
    return (broker.unionByName(client.select(*_EPISODE_COLUMNS))
            .unionByName(_cg_episodes(logs).select(*_EPISODE_COLUMNS))
            .orderBy("group", "start_ts", "derived_from", "end_ts"))


def _broker_episodes(logs: DataFrame) -> DataFrame:
    g = _group_lines(logs)
    w = _window("group")
    before = w.rowsBetween(Window.unboundedPreceding, -1)
    is_start = F.col("event") == REBALANCE_STARTED
    is_end = F.col("event").isin(list(_EPISODE_ENDS))
    g = (g.withColumn("seg", F.coalesce(F.sum(is_end.cast("int")).over(before), F.lit(0)))
         .withColumn("members_known_before",
                     F.last("members_known", ignorenulls=True).over(before)))
    agg = g.groupBy("group", "seg").agg(
        F.sum(is_start.cast("int")).alias("n_starts"),
        F.min(F.when(is_start, F.struct("ts", "file", "line", "reason", "generation",
                                        "members_known_before"))).alias("s"),
        F.max(F.when(is_end, F.struct("ts", "file", "line", "event", "generation", "members_n",
                                      "new_state"))).alias("e"),
        F.max(F.when(F.col("event") == GROUP_STABILIZED,
                     F.struct("ts", "file", "line", "generation", "members_n"))).alias("st"),
    ).filter(F.col("n_starts") > 0)
    end_event = F.col("e.event")
    members_after = (F.when(end_event == GROUP_EMPTY, F.lit(0))
                     .when(end_event.isin(GROUP_UNLOADED, GROUP_DEAD), F.lit(None))
                     .when(end_event == GROUP_LOADED, F.col("e.members_n"))
                     .when(end_event.isNotNull(),
                           F.coalesce(F.col("e.members_n"), F.col("st.members_n"))))
    generation_before = F.col("s.generation")
    members_before = F.coalesce(F.col("s.members_known_before"),
                                F.when(generation_before == 0, F.lit(0)))
    return agg.select(
        F.col("group"),
        F.col("s.ts").alias("start_ts"),
        F.col("e.ts").alias("end_ts"),
        (_ms("e.ts") - _ms("s.ts")).alias("duration_ms"),
        F.col("s.reason").alias("reason"),
        F.col("e.new_state").alias("end_state"),
        end_event.alias("end_event"),
        generation_before.alias("generation_before"),
        F.when(end_event.isNotNull(), F.coalesce(F.col("e.generation"), F.col("st.generation"))
               ).alias("generation_after"),
        members_before.cast("int").alias("members_before"),
        members_after.cast("int").alias("members_after"),
        (F.col("n_starts") - 1).cast("int").alias("restarts"),
        F.lit("broker").alias("derived_from"),
    )


def _client_episodes(logs: DataFrame) -> DataFrame:
    """Episodes from the clients' join/sync lines (see `rebalance_episodes`); also carries
    `joined_ts` (first JoinGroup response of the new generation) for the state timeline."""
    c = _client_lines(logs, [REJOIN_REQUESTED, JOIN_SENT, JOINED, SYNCED] + _ASSIGNMENT_APPLIED)
    ev = F.col("event")
    # The generation a client's assignment belongs to: the one its SyncGroup line names (Java
    # 2.6+), else the one it joined last (kafka-python logs no sync line, only the assignment).
    wc = _window("group", "client_id")
    joined_gen = F.last(F.when(ev == JOINED, F.col("generation")), ignorenulls=True).over(
        wc.rowsBetween(Window.unboundedPreceding, 0))
    done_gen = (F.when(ev == SYNCED, F.coalesce(F.col("generation"), joined_gen))
                .when(ev.isin(_ASSIGNMENT_APPLIED), joined_gen))
    c = c.withColumn("done_gen", done_gen)
    ends = (c.filter(F.col("done_gen").isNotNull())
            .groupBy("group", F.col("done_gen").alias("generation"))
            .agg(F.min("ts").alias("end_ts")))
    # Every completed SyncGroup closes whatever joins came before it: a start line belongs to the
    # generation of the next sync of any member of the group.
    w = _window("group")
    c = c.withColumn("next_sync_generation", F.first("done_gen", ignorenulls=True).over(
        w.rowsBetween(0, Window.unboundedFollowing)))
    # A join request after the generation's first sync (a static member restarting into the same
    # generation) did not lead to that generation: leave it out.
    is_start = ev.isin(REJOIN_REQUESTED, JOIN_SENT)
    starts = (c.filter(is_start & F.col("next_sync_generation").isNotNull())
              .withColumn("generation", F.col("next_sync_generation"))
              .join(ends, ["group", "generation"])
              .filter(F.col("ts") <= F.col("end_ts"))
              .groupBy("group", "generation")
              .agg(F.min(F.struct("ts", "file", "line")).alias("s"),
                   F.min(F.when(ev == REJOIN_REQUESTED,
                                F.struct("ts", "file", "line", "reason"))).alias("r")))
    joined = (c.filter((ev == JOINED) & F.col("generation").isNotNull())
              .join(ends, ["group", "generation"])
              .filter(F.col("ts") <= F.col("end_ts"))
              .groupBy("group", "generation")
              .agg(F.countDistinct("client_id").alias("members_after"),
                   F.min("ts").alias("joined_ts")))
    ep = ends.join(starts, ["group", "generation"], "left").join(joined, ["group", "generation"],
                                                                  "left")
    wg = Window.partitionBy("group").orderBy("generation")
    return ep.select(
        F.col("group"),
        F.col("s.ts").alias("start_ts"),
        F.col("joined_ts"),
        F.col("end_ts"),
        (_ms("end_ts") - _ms("s.ts")).alias("duration_ms"),
        F.col("r.reason").alias("reason"),
        F.lit("Stable").alias("end_state"),
        F.lit(SYNCED).alias("end_event"),
        F.lag("generation").over(wg).alias("generation_before"),
        F.col("generation").alias("generation_after"),
        F.lag("members_after").over(wg).cast("int").alias("members_before"),
        F.col("members_after").cast("int").alias("members_after"),
        F.lit(None).cast("int").alias("restarts"),
        F.lit("client").alias("derived_from"),
    )


# -- consumer groups (KIP-848) ----------------------------------------------------------------

# The lines a consumer group's state is derived from: the coordinator's (GroupMetadataManager)
# member joined / left / fenced, "Bumped group epoch", "Computed a new target assignment for
# epoch", its DEBUG "new assignment state", and the clients' "transitioned from X to Y".
_CG_EVENTS = _known("member_joined", "group_epoch_bumped", "target_assignment_computed",
                    "member_assignment_updated", "member_left", "member_fenced",
                    "member_state_changed")


def _cg_lines(logs: DataFrame) -> DataFrame:
    """The lines of groups whose coordinator logs consumer-group (CG-) lines: those broker
    lines, and the clients' "transitioned from X to Y" lines of the same groups unless the
    coordinator logs its own view of the members (DEBUG "new assignment state": a member is
    STABLE to the coordinator once nothing remains for it to revoke or wait for,
    `CurrentAssignmentBuilder`, while its client logs STABLE only when its own reconciliation
    and the acknowledging heartbeat are done)."""
    t = _timed(logs).filter(F.col("group").isNotNull() & F.col("event").isin(_CG_EVENTS))
    cg = F.coalesce(F.col("template"), F.lit("")).startswith("CG-")
    broker = (F.col("source") == "broker") & cg
    t = t.filter(broker | ((F.col("source") == "client")
                           & (F.col("event") == "member_state_changed")))
    groups = t.filter(broker).select("group").distinct()
    debug = t.filter(broker & (F.col("event") == "member_assignment_updated")
                     ).select("group").distinct()
    t = t.join(groups, "group", "left_semi")
    t = (t.filter(broker)
         .unionByName(t.filter(~broker).join(debug, "group", "left_anti").select(*t.columns)))
    return (t.join(debug.withColumn("debug", F.lit(True)), "group", "left")
            .withColumn("derived_from", F.when(F.col("debug"), F.lit("broker"))
                        .otherwise(F.lit("broker+client"))).drop("debug"))


# The type of one change `_cg_changes` records.
_cg_change_type = ("struct<ts:timestamp,file:string,line:bigint,state:string,event:string,"
                   "epoch_before:int,epoch:int,members_before:int,members:int,cause:string>")


def _cg_step() -> str:
    """One line applied to the replay's accumulator (a SQL lambda body over `acc`, `x`): the
    state `ConsumerGroup.maybeUpdateGroupState` would derive after it (see `_cg_changes`)."""
    ev, m = "x.event", "coalesce(x.member, '')"
    present = f"map_contains_key(acc.members, {m})"
    others = f"map_filter(acc.members, (k, v) -> k != {m})"
    mine = ("CASE WHEN x.event = 'member_assignment_updated' THEN "
            "coalesce(x.state = 'STABLE' AND x.epoch = acc.te, false) "
            "ELSE coalesce(x.state = 'STABLE', false) END")
    members = (f"CASE WHEN {ev} = 'member_joined' THEN map_concat({others}, map({m}, false)) "
               f"WHEN {ev} = 'target_assignment_computed' "
               f"THEN transform_values(acc.members, (k, v) -> false) "
               f"WHEN {ev} IN ('member_left', 'member_fenced') THEN {others} "
               f"WHEN {ev} IN ('member_assignment_updated', 'member_state_changed') AND {present}"
               f" THEN map_concat({others}, map({m}, {mine})) ELSE acc.members END")
    ge = (f"CASE WHEN {ev} = 'group_epoch_bumped' THEN coalesce(x.epoch, acc.ge) "
          f"WHEN {ev} IN ('member_left', 'member_fenced') THEN acc.ge + 1 ELSE acc.ge END")
    te = f"CASE WHEN {ev} = 'target_assignment_computed' THEN coalesce(x.epoch, acc.te) " \
         f"ELSE acc.te END"
    cause = (f"CASE WHEN {ev} IN ('member_joined', 'member_left', 'member_fenced') "
             f"THEN concat({ev}, ' ', {m}) ELSE acc.cause END")
    n_cause = (f"CASE WHEN {ev} IN ('member_joined', 'member_left', 'member_fenced') "
               f"THEN size(acc.members) ELSE acc.n END")
    derive = (f"NOT ({ev} = 'member_joined' OR ({ev} IN ('member_assignment_updated', "
              f"'member_state_changed') AND NOT {present}))")
    new = (f"CASE WHEN size({members}) = 0 THEN 'Empty' WHEN ({ge}) > ({te}) THEN 'Assigning' "
           f"WHEN forall(map_values({members}), v -> v) THEN 'Stable' ELSE 'Reconciling' END")
    moved = f"({derive}) AND (acc.st IS NULL OR acc.st != ({new}))"
    row = (f"named_struct('ts', x.ts, 'file', x.file, 'line', cast(x.line AS bigint), "
           f"'state', {new}, 'event', {ev}, 'epoch_before', acc.ge, 'epoch', {ge}, "
           f"'members_before', {n_cause}, 'members', size({members}), "
           f"'cause', {cause})")
    return (f"named_struct('members', {members}, 'ge', {ge}, 'te', {te}, "
            f"'st', CASE WHEN {derive} THEN {new} ELSE acc.st END, 'cause', {cause}, "
            f"'n', {n_cause}, "
            f"'out', CASE WHEN {moved} THEN concat(acc.out, array({row})) ELSE acc.out END)")


def _cg_changes(logs: DataFrame) -> DataFrame:
    """Each consumer group's state changes, one row per line that moves it: Kafka derives a
    consumer group's state from its records (`ConsumerGroup.maybeUpdateGroupState`: Empty
    without members, Assigning while the group epoch is ahead of the target assignment's,
    Stable when every member is reconciled to the target, else Reconciling), and so does this
    replay of each group's lines in order (Spark's `aggregate` over the group's lines, as
    `viz.live.consumer_group_transitions` replays the trace): a member joins (its epoch bump
    is written with it), "Bumped group epoch to N", "Computed a new target assignment for
    epoch N" (no member is reconciled to it yet), a member left or fenced (the group epoch is
    bumped, `consumerGroupFenceMember`), and a member's reconciliation: the coordinator's DEBUG
    "new assignment state" (STABLE at the target epoch) or, at INFO, the member's own
    "transitioned from X to STABLE" (and out of STABLE). `epoch` is the group epoch after the
    line; `cause` is the last membership line ("member_left <member id>")."""
    x = F.struct("ts", "file", F.col("line").cast("bigint").alias("line"), "event", "member",
                 F.col("epoch").cast("int").alias("epoch"), "state")
    lines = _cg_lines(logs).select("group", "derived_from", x.alias("x"))
    init = (f"named_struct('members', cast(map() AS map<string,boolean>), 'ge', 0, 'te', 0, "
            f"'st', cast(NULL AS string), 'cause', cast(NULL AS string), 'n', 0, "
            f"'out', cast(array() AS array<{_cg_change_type}>))")
    replay = (lines.groupBy("group", "derived_from")
              .agg(F.array_sort(F.collect_list("x")).alias("xs"))
              .select("group", "derived_from",
                      F.expr(f"aggregate(xs, {init}, (acc, x) -> {_cg_step()})").alias("acc")))
    return (replay.select("group", "derived_from", F.explode("acc.out").alias("c"))
            .select("group", "derived_from", "c.*"))


def _cg_episodes(logs: DataFrame) -> DataFrame:
    """Consumer-group episodes: a move to Assigning opens one when the group was Stable or
    Empty since the previous move to Assigning (else it restarts the open one, `restarts`);
    it ends at its last move to Stable before the next one opens or the group goes Empty (the
    members' own STABLE lines can flap before the coordinator's Stable: the last one counts),
    or at that move to Empty when it was never Stable (the last member left mid-rebalance)."""
    c = _cg_changes(logs)
    w = _window("group")
    upto = w.rowsBetween(Window.unboundedPreceding, 0)
    before = w.rowsBetween(Window.unboundedPreceding, -1)
    is_assign = F.col("state") == "Assigning"
    is_end = F.col("state").isin("Stable", "Empty")
    c = c.withColumn("settled", F.sum(is_end.cast("int")).over(upto))
    settled_at_last_assign = F.last(F.when(is_assign, F.col("settled")), ignorenulls=True
                                    ).over(before)
    opens = is_assign & (settled_at_last_assign.isNull()
                         | (F.col("settled") > settled_at_last_assign))
    c = c.withColumn("ep", F.sum(opens.cast("int")).over(upto)).filter(F.col("ep") > 0)
    # a move to Empty closes the episode: later moves until the next one opens are in none
    we = Window.partitionBy("group", "ep").orderBy(*ORDER).rowsBetween(
        Window.unboundedPreceding, -1)
    is_empty = F.col("state") == "Empty"
    c = (c.withColumn("emptied", F.coalesce(F.sum(is_empty.cast("int")).over(we), F.lit(0)))
         .filter(F.col("emptied") == 0))
    end = F.struct("ts", "file", "line", "state", "event", "epoch", "members")
    agg = c.groupBy("group", "ep").agg(
        F.min(F.struct("ts", "file", "line", "cause", "epoch_before", "members_before")
              ).alias("s"),
        F.coalesce(F.max(F.when(F.col("state") == "Stable", end)),
                   F.min(F.when(is_empty, end))).alias("e"),
        F.sum(is_assign.cast("int")).alias("n_assign"),
        F.first("derived_from").alias("derived_from"))
    return agg.select(
        "group", F.col("s.ts").alias("start_ts"), F.col("e.ts").alias("end_ts"),
        (_ms("e.ts") - _ms("s.ts")).alias("duration_ms"), F.col("s.cause").alias("reason"),
        F.col("e.state").alias("end_state"), F.col("e.event").alias("end_event"),
        F.col("s.epoch_before").alias("generation_before"),
        F.col("e.epoch").alias("generation_after"),
        F.col("s.members_before").cast("int").alias("members_before"),
        F.col("e.members").cast("int").alias("members_after"),
        (F.col("n_assign") - 1).cast("int").alias("restarts"), "derived_from")


# -- member departures ------------------------------------------------------------------------

_DEPARTURE_COLUMNS = ("ts", "group", "member", "cause", "detail", "event", "source")


def member_departures(logs: DataFrame) -> DataFrame:
    """One row per member that left a group, with the cause, ordered by time.

    Broker lines (`classicGroupLeave`, `expireClassicGroupMemberHeartbeat`, static member
    replacement, and the KIP-848 consumer groups' wording): "Member m in group g has failed,
    removing it" and "Pending member ... has been removed after session timeout expiration" ->
    session_expiry;
    "... has left group through explicit `LeaveGroup`" -> leave, or poll_timeout when the
    client's reason (KIP-800, 3.2+) or the member's own "sending LeaveGroup ... due to consumer
    poll timeout has expired." line says so; "Replacing previously mapped member m" (a static
    member's instance id taken over) -> fencing of the old member id; "removed dynamic members
    who haven't joined" / "... haven't sent their sync requests" -> rebalance_timeout, one row
    per member; KIP-848 "fenced from the group because the member session expired" ->
    session_expiry, "failed to transition from epoch" -> rebalance_timeout, other fencings ->
    fencing.

    Groups with no broker lines get the clients' view: "sending LeaveGroup request ... due to R"
    -> leave or poll_timeout; JoinGroup/SyncGroup/Heartbeat failing with FENCED_INSTANCE_ID ->
    fencing; "Resetting generation and member id due to: encountered UNKNOWN_MEMBER_ID" ->
    unknown_member (the coordinator had removed it; only its lines say why).
    """
    broker = _broker_departures(logs)
    client = _client_departures(logs).join(_broker_groups(logs), "group", "left_anti")
    # file and line last: two departures of one member at one millisecond with one cause
    # (two coordinators' logs, a client's and its broker's) keep the order of their lines
    return (broker.unionByName(client.select(*_DEPARTURE_COLUMNS, "file", "line"))
            .orderBy("ts", "group", "member", "cause", "file", "line")
            .select(*_DEPARTURE_COLUMNS))


def _broker_departures(logs: DataFrame) -> DataFrame:
    b = _timed(logs).filter((F.col("source") == "broker") & F.col("group").isNotNull())
    raw = F.col("raw")
    ev = F.col("event")
    reason = F.coalesce(F.col("reason"), F.lit(""))
    # Leaves whose member said (in its own log) it was leaving because of the poll timeout: for
    # brokers before 3.2, which print no client reason.
    client_poll_leaves = (_timed(logs)
                          .filter((F.col("source") == "client") & (ev == "leave_sent")
                                  & F.col("member").isNotNull()
                                  & F.col("reason").rlike(_POLL_TIMEOUT_TEXT))
                          .select("group", "member", F.lit(True).alias("client_poll_timeout"))
                          .distinct())
    # KIP-848 (AsyncKafkaConsumer): the client's WARN "Consumer poll timeout has expired" names
    # no member; its member id is the last one its lines printed. The broker's "left the
    # consumer group" line for that member, at most request.timeout.ms (30 s) later, was
    # that leave.
    c_all = _timed(logs).filter((F.col("source") == "client") & F.col("group").isNotNull())
    c_all = c_all.withColumn("client_id", F.coalesce(client_id(F.col("raw")), F.col("file")))
    c_all = c_all.withColumn("member_now", F.last("member", ignorenulls=True).over(
        _window("group", "client_id").rowsBetween(Window.unboundedPreceding, 0)))
    async_poll_timeouts = (c_all.filter((ev == "poll_timeout") & F.col("member_now").isNotNull())
                           .select(F.col("group").alias("pt_group"),
                                   F.col("member_now").alias("pt_member"),
                                   F.col("ts").alias("pt_ts")))
    single = b.filter(ev.isin("member_session_expired", "pending_member_expired", "member_left",
                              "pending_member_left", "static_member_replaced", "member_fenced"))
    after_poll_timeout = (single.filter(ev == "member_left")
                          .join(async_poll_timeouts,
                                (F.col("group") == F.col("pt_group"))
                                & (F.col("member") == F.col("pt_member"))
                                & (_ms("ts") >= _ms("pt_ts"))
                                & (_ms("ts") - _ms("pt_ts") <= 30_000))
                          .select("file", "line", F.lit(True).alias("async_poll_timeout"))
                          .distinct())
    old_member = _str_from(raw, r"previously mapped member (\S+?)(?: with|,|\.?\s*$)",
                           r"old member (?:id )?(\S+?) will be removed")
    single = (single
              .withColumn("member", F.when(ev == "static_member_replaced", old_member)
                          .otherwise(F.col("member")))
              .join(client_poll_leaves, ["group", "member"], "left")
              .join(after_poll_timeout, ["file", "line"], "left"))
    cause = (F.when(ev.isin("member_session_expired", "pending_member_expired"),
                    F.lit("session_expiry"))
             .when(ev.isin("member_left", "pending_member_left")
                   & (reason.rlike(_POLL_TIMEOUT_TEXT)
                      | F.coalesce(F.col("client_poll_timeout"), F.lit(False))
                      | F.coalesce(F.col("async_poll_timeout"), F.lit(False))),
                   F.lit("poll_timeout"))
             .when(ev.isin("member_left", "pending_member_left"), F.lit("leave"))
             .when(ev == "static_member_replaced", F.lit("fencing"))
             .when(raw.rlike(r"(?i)session (expired|timeout)"), F.lit("session_expiry"))
             .when(raw.rlike(r"(?i)failed to transition|rebalance timeout"),
                   F.lit("rebalance_timeout"))
             .otherwise(F.lit("fencing")))
    detail = (F.when(ev == "static_member_replaced",
                     F.concat(F.lit("replaced by a new member with "),
                              F.coalesce(_str_from(raw, r"(groupInstanceId=[^\s,]+)"),
                                         F.lit("the same instance id"))))
              .when(ev.isin("pending_member_expired", "pending_member_left"),
                    F.concat(F.lit("pending member"),
                             F.when(F.col("reason").isNotNull(),
                                    F.concat(F.lit("; "), F.col("reason"))).otherwise(F.lit(""))))
              .otherwise(F.col("reason")))
    singles = single.select("ts", "group", "member", cause.alias("cause"), detail.alias("detail"),
                            "event", "source", "file", "line")
    # One line naming several members: explode the list ("[a, b]").
    listed = b.filter(ev.isin("members_not_rejoined_removed", "sync_expired_members_removed"))
    names = F.regexp_extract(raw, r"(?:joined|requests):\s*\[([^\]]*)\]", 1)
    many = (listed.withColumn("member", F.explode(F.split(names, r",\s*")))
            .filter(F.col("member") != "")
            .select("ts", "group", "member", F.lit("rebalance_timeout").alias("cause"),
                    F.when(ev == "members_not_rejoined_removed",
                           F.lit("did not rejoin before the rebalance timeout"))
                    .otherwise(F.lit("did not send SyncGroup before the rebalance timeout"))
                    .alias("detail"),
                    "event", "source", "file", "line"))
    return singles.unionByName(many).select(*_DEPARTURE_COLUMNS, "file", "line")


def _client_departures(logs: DataFrame) -> DataFrame:
    events = ["leave_sent", "join_failed_fenced", "sync_failed_fenced", "heartbeat_failed_reset",
              "generation_reset", JOINED, SYNCED]
    c = _client_lines(logs, events)
    ev = F.col("event")
    # The member id a client had at each line: the last one it printed.
    w = _window("group", "client_id")
    c = c.withColumn("member_now", F.last("member", ignorenulls=True).over(
        w.rowsBetween(Window.unboundedPreceding, 0)))
    reason = F.coalesce(F.col("reason"), F.lit(""))
    fenced = (ev.isin("join_failed_fenced", "sync_failed_fenced")
              | ((ev == "heartbeat_failed_reset") & reason.contains("FENCED_INSTANCE_ID")))
    unknown = (ev == "generation_reset") & reason.contains("UNKNOWN_MEMBER_ID")
    c = c.filter((ev == "leave_sent") | fenced | unknown)
    cause = (F.when(fenced, F.lit("fencing"))
             .when(unknown, F.lit("unknown_member"))
             .when(reason.rlike(_POLL_TIMEOUT_TEXT), F.lit("poll_timeout"))
             .otherwise(F.lit("leave")))
    return c.select("ts", "group", F.coalesce(F.col("member"), F.col("member_now")).alias("member"),
                    cause.alias("cause"), F.col("reason").alias("detail"), "event", "source",
                    "file", "line")


# -- heartbeat gaps ---------------------------------------------------------------------------

_GAP_COLUMNS = ("group", "member", "client_id", "ts", "prev_ts", "gap_ms", "event", "basis")


def heartbeat_gaps(logs: DataFrame, basis: str = "client") -> DataFrame:
    """Time between consecutive heartbeats of each member, ordered by group, member, time.

    basis="client": the time between two heartbeat *sends* of the client (`heartbeat_sent`: the
    Java client's DEBUG "Sending Heartbeat request ...", kafka-python's "Sending
    HeartbeatRequest ..." / 1.x "Heartbeat: g[gen] member"), which is what the heartbeat
    interval and a stalled heartbeat thread (a GC pause) show in; the responses
    (`heartbeat_succeeded`) are left out, so a gap never runs from a request to its answer.
    A client whose log holds no send line (INFO: a Java client logs its heartbeats at DEBUG
    only) is read from its heartbeat failures instead (events named `heartbeat_failed...`,
    each one the answer to a heartbeat that was sent): the gaps between failures, coarser, but
    the only heartbeat trace such a log has. Failures are not mixed into a log with sends.
    The gaps run per client (`client_id`, its heartbeat thread), and `member` is the member id
    the client had at the later line: a consumer expelled during a pause and back under a new
    member id shows the pause as the gap before its first heartbeat under the new id.
    basis="broker": the coordinator's session timer for the member, re-armed on every heartbeat
    it accepts (and on JoinGroup/SyncGroup/OffsetCommit): DEBUG "Registering timer
    heartbeat-<group>-<member> with delay of Nms". The gap is then the time the coordinator went
    without proof that the member is alive. The line that removed the member ("has failed,
    removing it", "has left group") closes its last gap, so an expiry shows as a gap of about
    session.timeout.ms.
    """
    if basis == "client":
        gaps = _client_heartbeats(logs)
    elif basis == "broker":
        gaps = _broker_heartbeats(logs)
    else:
        raise ValueError(f"heartbeat_gaps: basis must be 'client' or 'broker', got {basis!r}")
    # client: one series per client (its heartbeat thread), so a member that rejoins under a
    # new member id (after a long pause) keeps the gap that cost it the old one; broker: per
    # member, the coordinator's timer of that member id
    w = _window("group", "client_id") if basis == "client" else \
        _window("group", "member", "client_id")
    return (gaps.withColumn("prev_ts", F.lag("ts").over(w))
            .withColumn("gap_ms", _ms("ts") - _ms("prev_ts"))
            .withColumn("basis", F.lit(basis))
            .orderBy("group", "member", "client_id", "ts", "file", "line")
            .select(*_GAP_COLUMNS))


def _client_heartbeats(logs: DataFrame) -> DataFrame:
    c = _timed(logs).filter((F.col("source") == "client") & F.col("group").isNotNull())
    is_send = (F.col("event") == HEARTBEAT_SENT) | (
        (F.col("event") == "heartbeat_succeeded")
        & (F.coalesce(F.col("template"), F.lit("")) == _KIP848_HEARTBEAT_OK))
    is_failure = F.col("event").isin(sorted(_HEARTBEAT_FAILURES))   # one order, one plan
    c = c.filter(is_send | is_failure | F.col("member").isNotNull())
    c = c.withColumn("client_id", F.coalesce(client_id(F.col("raw")), F.col("thread"),
                                             F.col("file")))
    w = _window("group", "client_id")
    c = (c.withColumn("member_now", F.last("member", ignorenulls=True).over(
            w.rowsBetween(Window.unboundedPreceding, 0)))
         .withColumn("has_sends", F.max(is_send.cast("int")).over(
            Window.partitionBy("group", "client_id"))))
    keep = is_send | (is_failure & (F.col("has_sends") == 0))
    return c.filter(keep).select("group", F.col("member_now").alias("member"), "client_id",
                                 "ts", "file", "line", "event")


_SESSION_ENDS = _known("member_session_expired", "pending_member_expired", "member_left",
                       "pending_member_left", "member_fenced")


def _broker_heartbeats(logs: DataFrame) -> DataFrame:
    t = _timed(logs).filter((F.col("source") == "broker") & (F.col("event") == TIMER_REGISTERED))
    # a classic group's session timer is heartbeat-<group>-<member>; a consumer group's
    # (KIP-848) session-timeout-<group>-<member> (consumerGroupSessionTimeoutKey)
    t = (t.withColumn("key", F.regexp_extract(
            "raw", r"timer ((?:heartbeat|session-timeout)-\S+) with delay", 1))
         .filter(F.col("key") != "")
         .select("key", "ts", "file", "line", "event"))
    # The key is <prefix>-<group>-<member>; both may contain '-', so match it against the
    # (group, member) pairs the logs name elsewhere rather than splitting it.
    named = (_timed(logs).filter(F.col("group").isNotNull() & F.col("member").isNotNull())
             .select("group", "member").distinct())
    prefixes = F.explode(F.array(F.lit("heartbeat-"), F.lit("session-timeout-")))
    pairs = (named.withColumn("prefix", prefixes)
             .withColumn("key", F.concat(F.col("prefix"), F.col("group"), F.lit("-"),
                                         F.col("member")))
             .drop("prefix"))
    resets = t.join(pairs, "key").select("group", "member", "ts", "file", "line", "event")
    # The line that removed the member closes its last gap: for an expiry, that gap is the
    # silence that cost the member its place.
    removals = (_timed(logs)
                .filter((F.col("source") == "broker") & F.col("event").isin(_SESSION_ENDS)
                        & F.col("group").isNotNull() & F.col("member").isNotNull())
                .select("group", "member", "ts", "file", "line", "event"))
    return (resets.unionByName(removals)
            .withColumn("client_id", F.lit(None).cast("string")))


def heartbeat_gap_summary(gaps: DataFrame) -> DataFrame:
    """Per member: number of gaps, longest and mean gap (ms), and when the longest ended."""
    g = gaps.filter(F.col("gap_ms").isNotNull())
    return (g.groupBy("group", "member", "client_id", "basis")
            .agg(F.count("*").alias("gaps"),
                 F.max("gap_ms").alias("max_gap_ms"),
                 F.round(F.avg("gap_ms"), 1).alias("mean_gap_ms"),
                 F.max(F.struct("gap_ms", "ts")).getField("ts").alias("max_gap_ended"))
            .orderBy("group", "member", "client_id"))


# -- coordinator loads and unloads ------------------------------------------------------------

_LOAD_COLUMNS = ("partition", "broker", "operation", "epoch", "scheduled_ts", "started_ts",
                 "finished_ts", "outcome", "end_event", "duration_ms", "elapsed_ms", "detail")


def coordinator_loads(logs: DataFrame) -> DataFrame:
    """One row per load or unload of a `__consumer_offsets` partition by a broker
    (`CoordinatorRuntime.scheduleLoadOperation`, `scheduleUnloadOperation`), ordered by
    partition, scheduling time, broker.

    An attempt opens with "Scheduling loading of metadata from tp with epoch e" (or the
    pre-4.0 "Scheduling loading of offsets and group metadata from ...") / "Scheduling
    unloading ..." and closes with the next finishing line for the same broker and partition:
    "Finished loading ... in Nms" (completed), "Failed to load ..." (failed), "Finished
    unloading ..." (completed), or one of the lines that say the request was ignored.
    `duration_ms` is the broker's own figure when the line prints one (loads), else the time
    between the scheduling and finishing lines, which `elapsed_ms` always holds. A line that
    finishes an attempt whose scheduling line is not in the input has no `scheduled_ts`; an
    attempt with no finishing line has no `outcome`.
    """
    events = [LOAD_SCHEDULED, UNLOAD_SCHEDULED, UNLOAD_STARTED] + list(_LOAD_OUTCOMES)
    ev = F.col("event")
    x = (_timed(logs).filter((F.col("source") == "broker") & ev.isin(events))
         .withColumn("broker", broker_id(F.col("raw")))
         .withColumn("operation", F.when(ev.startswith("unload"), F.lit("unload"))
                     .otherwise(F.lit("load"))))
    is_sched = ev.isin(LOAD_SCHEDULED, UNLOAD_SCHEDULED)
    is_end = ev.isin(list(_LOAD_OUTCOMES))
    w = _window("broker", "partition", "operation")
    x = x.withColumn("attempt", F.sum(is_sched.cast("int")).over(
        w.rowsBetween(Window.unboundedPreceding, 0)))
    outcome = F.lit(None).cast("string")
    for event, label in _LOAD_OUTCOMES.items():
        outcome = F.when(ev == event, F.lit(label)).otherwise(outcome)
    x = x.withColumn("outcome", outcome)
    agg = x.groupBy("broker", "partition", "operation", "attempt").agg(
        F.min(F.when(is_sched, F.struct("ts", "file", "line", "epoch"))).alias("s"),
        F.min(F.when(ev == UNLOAD_STARTED, F.col("ts"))).alias("started_ts"),
        F.min(F.when(is_end, F.struct("ts", "file", "line", "event", "outcome", "epoch",
                                      "duration_ms", "reason"))).alias("e"),
    )
    # An attempt is one scheduling line and the first end after it; further ends with no
    # scheduling line of their own (a log that starts mid-way) would be folded in here, so
    # keep those as attempts of their own.
    orphans = (x.filter(is_end & (F.col("attempt") == 0))
               .select("broker", "partition", "operation",
                       F.lit(None).cast(agg.schema["s"].dataType).alias("s"),
                       F.lit(None).cast("timestamp").alias("started_ts"),
                       F.struct("ts", "file", "line", "event", "outcome", "epoch", "duration_ms",
                                "reason").alias("e")))
    attempts = agg.filter(F.col("attempt") > 0).drop("attempt").unionByName(orphans)
    elapsed = _ms("e.ts") - _ms("s.ts")
    return (attempts.select(
        F.col("partition"), F.col("broker"), F.col("operation"),
        F.coalesce(F.col("s.epoch"), F.col("e.epoch")).alias("epoch"),
        F.col("s.ts").alias("scheduled_ts"),
        F.col("started_ts"),
        F.col("e.ts").alias("finished_ts"),
        F.col("e.outcome").alias("outcome"),
        F.col("e.event").alias("end_event"),
        F.coalesce(F.col("e.duration_ms"), elapsed).alias("duration_ms"),
        elapsed.alias("elapsed_ms"),
        F.col("e.reason").alias("detail"),
    ).orderBy(F.col("partition").asc_nulls_last(),
              F.coalesce(F.col("scheduled_ts"), F.col("finished_ts")),
              F.col("broker").asc_nulls_last(), F.col("operation")))


# -- group-state timeline ---------------------------------------------------------------------

_TIMELINE_COLUMNS = ("group", "state", "from_ts", "to_ts", "duration_ms", "generation",
                     "derived_from")


def group_state_timeline(logs: DataFrame) -> DataFrame:
    """One row per (group, state, from_ts, to_ts): how long each classic group stayed in each
    state (`ClassicGroupState`), ordered by group and time; `to_ts` is NULL for the state the
    group is still in at the end of the input.

    The state each broker line shows the group entering is as in `rebalance_episodes`
    (Stable is entered at "Assignment received from leader", standing in for the commit of the
    assignment). `generation` is the group's generation during the interval, where known.
    Groups with only client lines get PreparingRebalance from the first join request,
    CompletingRebalance from the first JoinGroup response of the new generation, and Stable from
    the first SyncGroup response (`derived_from` = "client").

    A KIP-848 consumer group's states are `ConsumerGroupState`'s (Empty, Assigning,
    Reconciling, Stable), replayed from its lines as in `rebalance_episodes` (`_cg_changes`);
    `generation` is the group epoch. Several moves in the same millisecond (a member joins:
    Assigning, then Reconciling once the target assignment is computed) are all listed, in
    the order of their lines.
    """
    g = _group_lines(logs).filter(F.col("new_state").isNotNull())
    w = _window("group")
    # Generation while in the state: the old one until the join phase completes.
    gen_now = F.last("generation", ignorenulls=True).over(
        w.rowsBetween(Window.unboundedPreceding, 0))
    broker = g.select("group", "ts", "file", "line", F.col("new_state").alias("state"),
                      gen_now.alias("generation"), F.lit("broker").alias("derived_from"))
    ep = _client_episodes(logs).join(_broker_groups(logs), "group", "left_anti")
    client = None
    for step, (ts_col, state, gen) in enumerate((
            ("start_ts", "PreparingRebalance", "generation_before"),
            ("joined_ts", "CompletingRebalance", "generation_after"),
            ("end_ts", "Stable", "generation_after"))):
        part = ep.filter(F.col(ts_col).isNotNull()).select(
            "group", F.col(ts_col).alias("ts"), F.lit(None).cast("string").alias("file"),
            F.lit(step).cast("long").alias("line"), F.lit(state).alias("state"),
            F.col(gen).alias("generation"), F.lit("client").alias("derived_from"))
        client = part if client is None else client.unionByName(part)
    consumer = _cg_changes(logs).select(
        "group", "ts", "file", "line", "state", F.col("epoch").alias("generation"),
        "derived_from")
    obs = broker.unionByName(client).unionByName(consumer)  # type: ignore[arg-type]
    w = _window("group")
    changes = (obs.withColumn("prev_state", F.lag("state").over(w))
               .filter(F.col("prev_state").isNull() | (F.col("prev_state") != F.col("state"))))
    # Several states can begin in the same millisecond (PreparingRebalance and Empty when the
    # last member leaves): the order of the lines breaks the tie.
    return (changes.withColumn("to_ts", F.lead("ts").over(w))
            .orderBy("group", "ts", "file", "line")
            .select("group", "state", F.col("ts").alias("from_ts"), "to_ts",
                    (_ms("to_ts") - _ms("ts")).alias("duration_ms"), "generation",
                    "derived_from"))


# -- small results to pandas ------------------------------------------------------------------

def as_pandas(df: DataFrame, max_rows: int = 100_000) -> Any:
    """`df.toPandas()` for a result small enough to plot; refuses more than `max_rows` rows
    (aggregate or filter first) instead of pulling a large result onto the driver."""
    n = df.limit(max_rows + 1).count()
    if n > max_rows:
        raise ValueError(f"as_pandas: the result has more than {max_rows} rows; aggregate or "
                         f"filter it first (or raise max_rows)")
    return df.toPandas()


# name -> (function, what it answers), in the order `logs report` prints them.
ANALYSES = {
    "rebalance_episodes": (rebalance_episodes, "Rebalance episodes per group"),
    "member_departures": (member_departures, "Member departures by cause"),
    "heartbeat_gaps": (heartbeat_gaps, "Heartbeat gaps per member"),
    "coordinator_loads": (coordinator_loads, "Coordinator loads and unloads per partition"),
    "group_state_timeline": (group_state_timeline, "Group state timeline"),
}
