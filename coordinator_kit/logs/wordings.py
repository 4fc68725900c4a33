"""Foreign wordings: what other Kafka versions and clients print for the kit's events.

The kit's own catalogue (`catalogue.py`) holds the wording the kit writes (Kafka 4.x broker,
Java client 3.x/4.x). Real logs also come from the classic Scala coordinator (0.9 to 3.9), the
new coordinator's KIP-848 consumer groups (3.7+), older Java clients, kafka-python and
librdkafka. Each row below maps one such wording onto the same event names, so an analysis
reads a 2.8 broker log and a kit log alike. Sources: Kafka's log calls at the release tags of
each row's version range (0.9.0.1 to 3.9, and the 4.0 development line), kafka-python's (1.x,
2.x, and 3.0.12 for its 3.x wording) and librdkafka's. The ids are the kit's own: B- the classic
broker `GroupCoordinator`, M- its `GroupMetadataManager`, N-/NC- the new group coordinator,
J- the Java client, PY- kafka-python, RDK- librdkafka, KJS- kafkajs, AIO- aiokafka, KGO- kafka-go;
a number tells wordings of one line apart.

Texts use the catalogue's `str.format` placeholders (literal braces doubled); `patterns.py`
turns them into regexes. A row whose wording equals a catalogue template is dropped there (the
catalogue wins). `event=None` marks a wording that is known but is no event: it counts as an
"other" line instead of being quarantined as an unknown message of a coordination logger.
"""

from __future__ import annotations

from dataclasses import dataclass

from .catalogue import TEMPLATES

__all__ = ["Wording", "WORDINGS", "SAME_AS"]


@dataclass(frozen=True)
class Wording:
    id: str
    event: str | None
    source: str          # broker | client
    origin: str          # who prints it: kafka-classic, kafka-new, java-client, kafka-python,
    #                      librdkafka, kafkajs, aiokafka, kafka-go, kafka-connect
    versions: str        # version range of that origin
    text: str


def _b(id: str, event: str | None, versions: str, text: str, origin: str = "kafka-classic"
       ) -> Wording:
    return Wording(id, event, "broker", origin, versions, text)


def _c(id: str, event: str | None, origin: str, versions: str, text: str) -> Wording:
    return Wording(id, event, "client", origin, versions, text)


# A foreign wording of a happening the kit itself logs -> the catalogue template of it. The
# wording takes that template's event name, so a learner who loads a kit-written log and a real
# one gets the same names (tests/test_logparse.py checks every kafka-python row is listed here
# or in NO_KIT_COUNTERPART).
SAME_AS: dict[str, str] = {}


def _py(id: str, same_as: str, versions: str, text: str, origin: str = "kafka-python"
        ) -> Wording:
    """A kafka-python (or older Java) wording of the happening `same_as` (a catalogue id)."""
    SAME_AS[id] = same_as
    return Wording(id, TEMPLATES[same_as].event, "client", origin, versions, text)


# kafka-python rows with no catalogue counterpart (the kit writes no such line)
NO_KIT_COUNTERPART = ("PY-SESSION-EXPIRED", "PY-HB-THREAD",
                      # kafka-python 3.0.12 lines seen in datasets/real-kafka
                      "PY-LEAVE-OK", "PY-COMMIT-FAILED", "PY-LOST", "PY-PRE-REBAL-COMMIT")


_P = "(__consumer_offsets-{partition})"

WORDINGS: tuple[Wording, ...] = (
    # -- classic group coordinator (kafka.coordinator.group.GroupCoordinator), 0.9-3.9 ----------
    _b("B-REBAL-0", "rebalance_started", "0.9-0.10.2",
       "Preparing to restabilize group {group} with old generation {generation}"),
    _b("B-REBAL-1", "rebalance_started", "0.11-2.0",
       "Preparing to rebalance group {group} with old generation {generation} " + _P),
    _b("B-REBAL-2", "rebalance_started", "2.1-3.9",
       "Preparing to rebalance group {group} in state {state} with old generation {generation} "
       + _P + " (reason: {reason})"),
    _b("B-STAB-0", "group_stabilized", "0.9-0.10.2",
       "Stabilized group {group} generation {generation}"),
    _b("B-STAB-1", "group_stabilized", "0.11-2.7",
       "Stabilized group {group} generation {generation} " + _P),
    _b("B-STAB-2", "group_stabilized", "2.8-3.9",
       "Stabilized group {group} generation {generation} " + _P + " with {members} members"),
    _b("B-ASSIGN-0", "assignment_received", "0.9-2.7",
       "Assignment received from leader for group {group} for generation {generation}"),
    _b("B-ASSIGN-1", "assignment_received", "2.8",
       "Assignment received from leader for group {group} for generation {generation}. "
       "The group has {members} members, {static} of which are static."),
    _b("B-ASSIGN-2", "assignment_received", "3.0-3.9",
       "Assignment received from leader {member} for group {group} for generation "
       "{generation}. The group has {members} members, {static} of which are static."),
    _b("B-FAIL", "member_session_expired", "1.0-3.9",
       "Member {member} in group {group} has failed, removing it from the group"),
    _b("B-PEND-EXP", "pending_member_expired", "2.2-3.9",
       "Pending member {member} in group {group} has been removed after session timeout "
       "expiration."),
    _b("B-EMPTY-0", "group_empty", "0.10.1-0.10.2",
       "Group {group} with generation {generation} is now empty"),
    _b("B-EMPTY-1", "group_empty", "0.11-3.9",
       "Group {group} with generation {generation} is now empty " + _P),
    _b("B-DYN-JOIN-REQ", "member_id_required", "3.0-3.9",
       "Dynamic member with unknown member id joins group {group} in {state} state. Created a "
       "new member id {member} and request the member to rejoin with this id."),
    _b("B-DYN-REJOIN-REQ", "member_id_required", "2.3",
       "Dynamic member with unknown member id rejoins group {group} in {state} state. Created "
       "a new member id {member} and request the member to rejoin with this id."),
    _b("B-DYN-JOIN-ADD", "dynamic_member_added", "3.0-3.9",
       "Dynamic Member with unknown member id joins group {group} in {state} state. Created a "
       "new member id {member} for this member and add to the group."),
    _b("B-PEND-JOIN", "pending_member_joined", "3.x",
       "Pending dynamic member with id {member} joins group {group} in {state} state. Adding "
       "to the group now."),
    _b("B-STATIC-NEW", "static_member_added", "3.0-3.9",
       "Static member with groupInstanceId={instance} and unknown member id joins group "
       "{group} in {state} state. Created a new member id {member} for this member and add to "
       "the group."),
    _b("B-STATIC-REPLACE", "static_member_replaced", "3.0-3.9",
       "Static member with groupInstanceId={instance} and unknown member id joins group "
       "{group} in {state} state. Replacing previously mapped member {old_member} with this "
       "groupInstanceId."),
    _b("B-STATIC-STABLE", "static_member_rejoined", "3.0-3.9",
       "Static member which joins during Stable stage and doesn't affect selectProtocol will "
       "not trigger rebalance."),
    _b("B-LEAVE-0", "member_left", "2.2-2.3",
       "Member {member} in group {group} has left, removing it from the group"),
    _b("B-LEAVE-1", "member_left", "3.0-3.1",
       "Member {member_metadata} has left group {group} through explicit `LeaveGroup` request"),
    _b("B-LEAVE-2", "member_left", "3.2-3.9",
       "Member {member_metadata} has left group {group} through explicit `LeaveGroup`; client "
       "reason: {reason}"),
    _b("B-PEND-LEAVE-0", "pending_member_left", "2.5-2.8",
       "Pending member {member} is leaving group {group}."),
    _b("B-PEND-LEAVE-1", "pending_member_left", "3.0-3.9",
       "Pending member with memberId={member} has left group {group} through explicit "
       "`LeaveGroup` request"),
    _b("B-ELECT-0", "coordinator_elected", "2.8-3.9",
       "Elected as the group coordinator for partition {partition} in epoch {epoch}"),
    _b("B-ELECT-1", "coordinator_elected", "2.8 (trunk build)",
       "Elected as the group coordinator for partition {partition}"),
    _b("B-RESIGN", "coordinator_resigned", "2.8-3.9",
       "Resigned as the group coordinator for partition {partition} in epoch {epoch}"),
    _b("B-LOAD-G", "group_loaded", "0.9-3.9",
       "Loading group metadata for {group} with generation {generation}"),
    _b("B-UNLOAD-G", "group_unloaded", "0.9-3.9",
       "Unloading group metadata for {group} with generation {generation}"),
    # -- classic GroupMetadataManager ------------------------------------------------------------
    _b("M-LOAD-0", "load_scheduled", "<=0.10.2",
       "Loading offsets and group metadata from [__consumer_offsets,{partition}]"),
    _b("M-LOADED-0", "load_completed", "<=0.10.2",
       "Finished loading offsets from [__consumer_offsets,{partition}] in {ms} milliseconds."),
    _b("M-SCHED-1", "load_scheduled", "0.11-2.7",
       "Scheduling loading of offsets and group metadata from __consumer_offsets-{partition}"),
    _b("M-SCHED-2", "load_scheduled", "2.8-3.9",
       "Scheduling loading of offsets and group metadata from __consumer_offsets-{partition} "
       "for epoch {epoch}"),
    _b("M-LOADED-1", "load_completed", "0.11-2.6",
       "Finished loading offsets and group metadata from __consumer_offsets-{partition} in "
       "{ms} milliseconds."),
    _b("M-LOADED-2", "load_completed", "2.7",
       "Finished loading offsets and group metadata from __consumer_offsets-{partition} in "
       "{ms} milliseconds, of which {scheduler_ms} milliseconds was spent in the scheduler."),
    _b("M-LOADED-3", "load_completed", "2.8-3.9",
       "Finished loading offsets and group metadata from __consumer_offsets-{partition} in "
       "{ms} milliseconds for epoch {epoch}, of which {scheduler_ms} milliseconds was spent in "
       "the scheduler."),
    _b("M-DEAD", "group_dead", "0.11-3.9",
       "Group {group} transitioned to Dead in generation {generation}"),
    _b("M-UNLOAD-SCHED", "unload_scheduled", "0.11-3.9",
       "Scheduling unloading of offsets and group metadata from __consumer_offsets-{partition}"),
    _b("M-UNLOAD-DONE-0", "unload_finished", "0.11-2.8",
       "Finished unloading __consumer_offsets-{partition}. Removed {offsets} cached offsets and "
       "{groups} cached groups."),
    _b("M-UNLOAD-DONE-1", "unload_finished", "2.8-3.9",
       "Finished unloading __consumer_offsets-{partition} for coordinator epoch {epoch}. "
       "Removed {offsets} cached offsets and {groups} cached groups."),
    _b("M-EXPIRE", "offsets_removed", "0.10-3.9",
       "Removed {offsets} expired offsets in {ms} milliseconds."),
    _b("M-ALREADY", "load_already_loading", "2.x-3.9",
       "Already loading offsets and group metadata from __consumer_offsets-{partition}"),
    # -- new coordinator, KIP-848 consumer groups (3.7+) ------------------------------------------
    _b("N-JOIN", "member_joined", "3.7+",
       "[GroupId {group}] Member {member} joins the consumer group using the {protocol} "
       "protocol.", "kafka-new"),
    _b("N-EPOCH", "group_epoch_bumped", "3.7+",
       "[GroupId {group}] Bumped group epoch to {epoch}.", "kafka-new"),
    _b("N-TARGET-0", "target_assignment_computed", "3.7+",
       "[GroupId {group}] Computed a new target assignment for epoch {epoch} with '{assignor}' "
       "assignor in {ms}ms: {assignment}.", "kafka-new"),
    _b("N-TARGET-1", "target_assignment_computed", "3.7+",
       "[GroupId {group}] Computed a new target assignment for epoch {epoch} with '{assignor}' "
       "assignor in {ms}ms.", "kafka-new"),
    _b("N-MSTATE", "member_assignment_updated", "3.7+",
       "[GroupId {group}] Member {member} new assignment state: epoch={epoch}, "
       "previousEpoch={previous_epoch}, state={state}, assignedPartitions={assigned}.",
       "kafka-new"),
    _b("N-FENCED", "member_fenced", "3.7+",
       "[GroupId {group}] Member {member} fenced from the group because {reason}.", "kafka-new"),
    _b("N-LEFT", "member_left", "3.7+",
       "[GroupId {group}] Member {member} left the consumer group.", "kafka-new"),
    _b("N-STATIC-LEFT", "member_left", "3.7+",
       "[GroupId {group}] Static Member {member} with instance id {instance} temporarily left "
       "the consumer group.", "kafka-new"),
    _b("N-STATIC-REJECT", "static_member_rejected", "3.7+",
       "[GroupId {group}] Static member {member} with instance id {instance} cannot join the "
       "group because the instance id is is owned by member {owner}.", "kafka-new"),
    _b("N-CONVERT-0", "group_converted", "3.7+",
       "[GroupId {group}] Converted the classic group to a consumer group.", "kafka-new"),
    _b("N-CONVERT-1", "group_converted", "3.7+",
       "[GroupId {group}] Converted the consumer group to a classic group.", "kafka-new"),
    _b("N-LOADED", "group_loaded", "3.7+",
       "Loaded consumer group {group} with {members} members.", "kafka-new"),
    _b("N-UNLOADED", "group_unloaded", "3.7+",
       "[GroupId={group}] Unloaded group metadata for group epoch {epoch}.", "kafka-new"),
    _b("NC-LEAVE-DYN", "member_left", "3.7+",
       "[Group {group}] Dynamic Member {member} has left group through explicit `LeaveGroup` "
       "request; client reason: {reason}", "kafka-new"),
    _b("NC-LEAVE-STATIC", "member_left", "3.7+",
       "[Group {group}] Static Member {member} with instance id {instance} has left group "
       "through explicit `LeaveGroup` request; client reason: {reason}", "kafka-new"),
    # -- Java consumer, older wordings and the KIP-848 AsyncKafkaConsumer --------------------------
    _c("J-DISCOVER-0", "coordinator_discovered", "java-client", "0.10",
       "Discovered coordinator {node} for group {group}."),
    _c("J-REJOIN-0", "join_sent", "java-client", "0.10", "(Re-)joining group {group}"),
    _c("J-JOINED-0", "joined", "java-client", "0.10 (and kafka-python 1.1-2.2)",
       "Successfully joined group {group} with generation {generation}"),
    _c("J-ASSIGNED-0", "partitions_assigned", "java-client", "0.10",
       "Setting newly assigned partitions {partitions} for group {group}"),
    _c("J-ASSIGNED-1", "partitions_assigned", "java-client", "1.0-2.3",
       "Setting newly assigned partitions {partitions}"),
    _c("J-REVOKE-0", "partitions_revoked", "java-client", "<=2.3, KIP-848 3.7+",
       "Revoking previously assigned partitions {partitions}"),
    _c("J-HB-REBAL", "heartbeat_failed_rebalancing", "java-client", "2.x-3.0",
       "Attempt to heartbeat failed since group is rebalancing"),
    # DEBUG heartbeat lines of older Java clients (AbstractCoordinator): the send and the
    # success, same events as the catalogue's J-HB-SEND / J-HB-OK
    _py("J-HB-SEND-0", "J-HB-SEND", "0.10.1-2.2",
        "Sending Heartbeat request for group {group} to coordinator {node}", "java-client"),
    _py("J-HB-OK-0", "J-HB-OK", "0.9.0", "Received successful heartbeat response.",
        "java-client"),
    _py("J-HB-OK-1", "J-HB-OK", "1.1-2.2",
        "Received successful Heartbeat response for group {group}", "java-client"),
    _c("J-COORD-LOST-0", "coordinator_lost", "java-client", "0.10",
       "Marking the coordinator {node} dead for group {group}"),
    _c("J-COORD-LOST-1", "coordinator_lost", "java-client", "1.x-2.x",
       "Group coordinator {node} is unavailable or invalid, will attempt rediscovery"),
    _c("J-COORD-LOST-2", "coordinator_lost", "java-client", "2.x-3.x",
       "Group coordinator {node} is unavailable or invalid due to cause: {cause}. "
       "isDisconnected: {disconnected}, will attempt rediscovery"),
    _c("J-COORD-DISCONNECT", None, "java-client", "2.x+",
       "Requesting disconnect from last known coordinator {node}"),
    _c("J-MEMBER-STATE", "member_state_changed", "java-client", "3.7+ (KIP-848)",
       "Member {member} with epoch {epoch} transitioned from {from_state} to {to_state}."),
    _c("J-RECONCILE", "reconciliation_started", "java-client", "3.7+ (KIP-848)",
       "Reconciling assignment with local epoch {epoch}"),
    _c("J-HB-UNKNOWN", "heartbeat_failed_unknown_member", "java-client", "3.7+ (KIP-848)",
       "{request} failed because member {member} is unknown."),
    _c("J-HB-FENCED", "heartbeat_failed", "java-client", "3.7+ (KIP-848)",
       "{request} failed because epoch {epoch} is fenced."),
    # -- kafka-python (loggers kafka.coordinator, .consumer, .heartbeat) ----------------------------
    # Event names from the catalogue's KP-* templates (the kafka-python 2.3 wording the kit
    # writes), so every version's line of one happening gets one name.
    _py("PY-JOINED-0", "KP-JOINED", "1.0",
        "Joined group '{group}' (generation {generation}) with member_id {member}"),
    _py("PY-JOINED-1", "KP-JOINED", "2.3+", "Successfully joined group {group} {generation}"),
    _py("PY-LEADER", "KP-LEADER", "all",
        "Elected group leader -- performing partition assignments using {assignor}"),
    _py("PY-REVOKE", "KP-REVOKE", "1.3+",
        "Revoking previously assigned partitions {partitions} for group {group}"),
    _py("PY-UPDATED", "KP-UPDATED", "all", "Updated partition assignment: {partitions}"),
    _py("PY-DISCOVER", "KP-DISCOVER", "all", "Discovered coordinator {node} for group {group}"),
    _c("PY-SESSION-EXPIRED", "heartbeat_session_expired", "kafka-python", "1.4+",
       "Heartbeat session expired, marking coordinator dead"),
    _py("PY-COORD-DEAD", "KP-COORD-DEAD", "all",
        "Marking the coordinator dead (node {node}) for group {group}: {reason}."),
    _py("PY-HB-UNKNOWN", "KP-HB-UNKNOWN", "all",
        "Heartbeat: local member_id was not recognized; this consumer needs to re-join"),
    _py("PY-HB-REBAL-0", "KP-HB-REBAL", "<=2.x",
        "Heartbeat failed for group {group} because it is rebalancing"),
    _py("PY-HB-REBAL-1", "KP-HB-REBAL", "3.x", "Group {group} is rebalancing; rejoining."),
    _py("PY-HB-COORD", "KP-HB-COORD", "3.x",
        "Heartbeat failed for group {group}: coordinator (node {node}) is either not started or "
        "not valid"),
    # DEBUG heartbeat lines of kafka-python 1.x (base.py: `log.debug("Heartbeat: %s[%s] %s",
    # group, generation, member)` before the request, then the success line; the success
    # wording is also the Java client's of 0.10.1-0.11, same event)
    _py("PY-HB-SEND-0", "KP-HB-SEND", "1.x", "Heartbeat: {group}[{generation}] {member}"),
    _py("PY-HB-OK-0", "KP-HB-RECEIVED", "1.x (and the Java client 0.10.1-0.11)",
        "Received successful heartbeat response for group {group}"),
    _py("PY-POLL-0", "KP-POLL-TIMEOUT", "<=2.2", "Heartbeat poll expired, leaving group"),
    _py("PY-POLL-1", "KP-POLL-TIMEOUT", "2.3+", "Consumer poll timeout has expired. {details}"),
    _py("PY-LEAVE-0", "KP-LEAVE", "<=2.2", "Leaving consumer group ({group})."),
    _py("PY-LEAVE-1", "KP-LEAVE", "2.3+", "Leaving consumer group {group} (member {member})."),
    _py("PY-MEMBER-ID", "KP-MEMBER-ID", "3.x",
        "Received member id {member} for group {group}; will retry join-group"),
    _py("PY-JOIN-LOADING", "KP-JOIN-LOADING", "all",
        "Attempt to join group {group} rejected since coordinator {node} is loading the group."),
    _c("PY-HB-THREAD", None, "kafka-python", "1.4-2.3", "Starting new heartbeat thread"),
    # -- librdkafka (debug=cgrp; the facility is the logger: rdkafka.<FAC>) --------------------------
    _c("RDK-CGRPSTATE-0", "coordinator_state_changed", "librdkafka", "1.x+",
       "Group \"{group}\" changed state {from_state} -> {to_state} (join-state {join_state})"),
    _c("RDK-CGRPSTATE-1", "coordinator_state_changed", "librdkafka", "<1.0",
       "Group \"{group}\" changed state {from_state} -> {to_state} (v{version}, join-state "
       "{join_state})"),
    _c("RDK-CGRPSTATE-2", "coordinator_state_changed", "librdkafka", "0.9",
       "Group \"{group}\" changed state {from_state} -> {to_state}"),
    _c("RDK-JOINSTATE-0", "member_state_changed", "librdkafka", "1.x+",
       "Group \"{group}\" changed join state {from_state} -> {to_state} (state {cgrp_state})"),
    _c("RDK-JOINSTATE-1", "member_state_changed", "librdkafka", "<1.0",
       "Group \"{group}\" changed join state {from_state} -> {to_state} (v{version}, state "
       "{cgrp_state})"),
    _c("RDK-COORD", "coordinator_discovered", "librdkafka", "all",
       "Group \"{group}\" coordinator is {node} id {node_id}"),
    _c("RDK-COORD-CHANGE", "coordinator_discovered", "librdkafka", "all",
       "Group \"{group}\" changing coordinator {old_node} -> {node}"),
    _c("RDK-QUERY", "coordinator_lookup", "librdkafka", "all",
       "Group \"{group}\": querying for coordinator: {reason}"),
    _c("RDK-JOIN-0", "join_sent", "librdkafka", "all",
       "Group \"{group}\": join with {count} subscribed topic(s)"),
    _c("RDK-JOIN-1", "join_sent", "librdkafka", "all",
       "Joining group \"{group}\" with {count} subscribed topic(s)"),
    _c("RDK-JOINGROUP-OK", "joined", "librdkafka", "all",
       "JoinGroup response: GenerationId {generation}, Protocol {protocol}, LeaderId {leader}, "
       "my MemberId {member}, {details}: Success"),
    _c("RDK-JOINGROUP-ERR", "join_failed", "librdkafka", "all",
       "JoinGroup response: GenerationId {generation}, Protocol {protocol}, LeaderId {leader}, "
       "my MemberId {member}, {details}: {error}"),
    _c("RDK-LEADER-0", "assignment_computed", "librdkafka", "all",
       "I am elected leader for group \"{group}\" with {count} member(s)"),
    _c("RDK-LEADER-1", None, "librdkafka", "all",
       "Elected leader for group \"{group}\" with {count} member(s)"),
    _c("RDK-MEMBERID", "member_id_assigned", "librdkafka", "all",
       "Group \"{group}\": updating member id \"{old_member}\" -> \"{member}\""),
    _c("RDK-SYNC-OK", "synced", "librdkafka", "all",
       "SyncGroup response: Success ({count} bytes of MemberState data)"),
    _c("RDK-SYNC-ERR", "sync_failed", "librdkafka", "all",
       "SyncGroup response: {error} ({count} bytes of MemberState data)"),
    _c("RDK-ASSIGN", "partitions_assigned", "librdkafka", "all",
       "Group \"{group}\": delegating assign of {count} partition(s) to application on queue "
       "{queue}: {reason}"),
    _c("RDK-REVOKE", "partitions_revoked", "librdkafka", "all",
       "Group \"{group}\": delegating revoke of {count} partition(s) to application on queue "
       "{queue}: {reason}"),
    _c("RDK-REBALANCE", "rejoin_requested", "librdkafka", "1.6+",
       "Group \"{group}\" initiating rebalance ({protocol}) in state {cgrp_state} (join-state "
       "{join_state}) with {count} assigned partition(s): {reason}"),
    _c("RDK-REJOIN", "rejoin_requested", "librdkafka", "all",
       "Group \"{group}\": Rejoining group without an assignment: {reason}"),
    _c("RDK-HB-REBAL", "heartbeat_failed_rebalancing", "librdkafka", "all",
       "Heartbeat failed: REBALANCE_IN_PROGRESS: {reason}"),
    _c("RDK-HB-ERR-0", "heartbeat_failed", "librdkafka", "all", "Heartbeat failed: {reason}"),
    _c("RDK-HB-ERR-1", "heartbeat_failed", "librdkafka", "all",
       "Group \"{group}\" heartbeat error response in state {cgrp_state} (join-state "
       "{join_state}, {count} partition(s) assigned): {reason}"),
    # -- more librdkafka lines (src/rdkafka_cgrp.c at v2.x), as every wrapper prints them:
    # confluent-kafka-python, Confluent.Kafka (.NET), node-rdkafka pass librdkafka's facility
    # (the debug context: CGRP, ASSIGN, LEAVE, HEARTBEAT, REBALANCE) and message through their
    # log callbacks (their layouts: patterns.LAYOUTS RDK-*, DOTNET-RDK; JSON_KEY_MAPS
    # node-rdkafka; the `[FAC] name: ` prefix of a .NET logger) -----------------------------------
    _c("RDK-ASSIGN-INC", "partitions_assigned", "librdkafka", "1.6+",
       "Group \"{group}\": delegating incremental assign of {count} partition(s) to "
       "application on queue {queue}: {reason}"),
    _c("RDK-REVOKE-INC", "partitions_revoked", "librdkafka", "1.6+",
       "Group \"{group}\": delegating incremental revoke of {count} partition(s) to "
       "application on queue {queue}: {reason}"),
    _c("RDK-LEAVE", "leave_sent", "librdkafka", "1.x+",
       "Group \"{group}\": leave (in state {cgrp_state})"),
    _c("RDK-ASSIGN-FAIL", "rejoin_requested", "librdkafka", "1.6+",
       "Group \"{group}\": internal {operation} of {count} partition(s) failed: {error}: "
       "unassigning all partitions and rejoining"),
    _c("RDK-CGHB-REJOIN", "heartbeat_failed", "librdkafka", "2.4+ (KIP-848)",
       "ConsumerGroupHeartbeat failed due to: {reason}: will rejoin the group"),
    # librdkafka's KIP-848 debug lines (HEARTBEAT context, rdkafka_cgrp.c of 2.16), as its
    # group.protocol=consumer members wrote them on Kafka 4.0.2 (datasets/real-kafka)
    _c("RDK-CGHB-SEND", "heartbeat_sent", "librdkafka", "2.4+ (KIP-848)",
       "GroupCoordinator/{node}: ConsumerGroupHeartbeat of member id \"{member}\", group id "
       "\"{group}\", generation id {generation}, {request}"),
    _c("RDK-CGHB-RESPONSE", "heartbeat_succeeded", "librdkafka", "2.4+ (KIP-848)",
       "ConsumerGroupHeartbeat response received for member id \"{member}\" with epoch "
       "{generation}"),
    _c("RDK-CGHB-TARGET", None, "librdkafka", "2.4+ (KIP-848)",
       "ConsumerGroupHeartbeat received target assignment \"{partitions}\""),
    _c("RDK-CGHB-NO-METADATA", None, "librdkafka", "2.4+ (KIP-848)",
       "Metadata not found for the assigned topic id: {topic_id}. Continuing without it"),
    _c("RDK-CGHB-METADATA", None, "librdkafka", "2.4+ (KIP-848)",
       "Metadata available for {count}/{total} of next target assignment,  which is: "
       "\"{partitions}\""),
    _c("RDK-CGHB-RECONCILE", None, "librdkafka", "2.4+ (KIP-848)",
       "Reconciliation starts with new target assignment \"{partitions}\". Next assignment "
       "cleared"),
    _c("RDK-CGHB-EXPEDITE", None, "librdkafka", "2.4+ (KIP-848)",
       "Expediting next heartbeat, with backoff {backoff}: {why}"),
    _c("RDK-CGHB-ACK", None, "librdkafka", "2.4+ (KIP-848)",
       "Acknowledging target assignment \"{partitions}\""),
    _c("RDK-CGHB-ACKED", None, "librdkafka", "2.4+ (KIP-848)",
       "Target assignment acked, new current assignment  \"{partitions}\""),
    _c("RDK-CGHB-SUBSCRIBE", None, "librdkafka", "2.4+ (KIP-848)",
       "Sending new subscription \"{topics}\""),
    _c("RDK-MAXPOLL", "poll_timeout", "librdkafka", "1.x+",
       "Application maximum poll interval ({interval}ms) exceeded by {excess}ms (adjust "
       "max.poll.interval.ms for long-running message processing): {reason}"),
    # -- kafkajs (2.x; src/consumer/consumerGroup.js, runner.js, index.js). Its default
    # logCreator (src/loggers/console.js) writes JSON lines whose message is
    # `[<namespace>] <message>` and whose extras carry groupId and memberId (patterns'
    # JSON_KEY_MAPS read them into the group and member columns) --------------------------------
    _c("KJS-JOINED", "joined", "kafkajs", "1.x-2.x",
       "[ConsumerGroup] Consumer has joined the group"),
    _c("KJS-REBAL", "rejoin_requested", "kafkajs", "1.x-2.x",
       "[Runner] The group is rebalancing, re-joining"),
    _c("KJS-UNKNOWN", "heartbeat_failed_reset", "kafkajs", "1.x-2.x",
       "[Runner] The coordinator is not aware of this member, re-joining the group"),
    _c("KJS-START", None, "kafkajs", "1.x-2.x", "[Consumer] Starting"),
    _c("KJS-STOPPED", None, "kafkajs", "1.x-2.x", "[Consumer] Stopped"),
    # -- aiokafka (0.x; aiokafka/consumer/group_coordinator.py, logger
    # aiokafka.consumer.group_coordinator). Forked from kafka-python 1.x: most of its lines are
    # kafka-python's rows above; these are its own (the missing space and the double space
    # are aiokafka's) ----------------------------------------------------------------------------
    _c("AIO-COORD-DEAD", "coordinator_lost", "aiokafka", "0.x",
       "Marking the coordinator dead (node {node})for group {group}."),
    _c("AIO-SESSION", "heartbeat_session_expired", "aiokafka", "0.x",
       "Heartbeat session expired - marking coordinator dead"),
    _c("AIO-HB-UNKNOWN", "heartbeat_failed_reset", "aiokafka", "0.x",
       "Heartbeat failed: local member_id was not recognized; resetting and re-joining group"),
    _c("AIO-HB-STALE", "heartbeat_failed_stale", "aiokafka", "0.x",
       "Heartbeat failed for group {group}: generation id is not  current."),
    _c("AIO-LEAVE-OK", None, "aiokafka", "0.x", "LeaveGroup request succeeded"),
    # -- kafka-go (0.4.x; consumergroup.go, through the Logger the user gives the reader). Its
    # member ids hold spaces (the default client id is `<program>@<host>
    # (github.com/segmentio/kafka-go)`), hence {member_id} (any text) ---------------------------
    _c("KGO-JOINED-0", "joined", "kafka-go", "0.4.x",
       "Joined group {group} as member {member_id} in generation {generation}"),
    _c("KGO-JOINED-1", "joined", "kafka-go", "0.4.x",
       "joined group {group} as member {member_id} in generation {generation}"),
    _c("KGO-JOIN-FAIL", "join_failed", "kafka-go", "0.4.x", "Failed to join group {group}: {error}"),
    _c("KGO-SYNC-FAIL", "sync_failed", "kafka-go", "0.4.x", "Failed to sync group {group}: {error}"),
    _c("KGO-SYNCED", "synced", "kafka-go", "0.4.x", "sync group finished for group, {group}"),
    _c("KGO-LEADER", "assignment_computed", "kafka-go", "0.4.x",
       "selected as leader for group, {group}"),
    _c("KGO-LEAVE", "leave_sent", "kafka-go", "0.4.x", "Leaving group {group}, member {member_id}"),
    _c("KGO-REBAL", "rejoin_requested", "kafka-go", "0.4.x",
       "Partition changes found, rebalancing group: {group}."),
    _c("KGO-HB-START", None, "kafka-go", "0.4.x",
       "started heartbeat for group, {group} [{interval}]"),
    # -- Kafka Connect's distributed workers (WorkerCoordinator.onJoinPrepare, DistributedHerder's
    # rebalance listener), behind their LogContext `[Worker clientId=.., groupId=..] `; the
    # worker's group joins through AbstractCoordinator, whose Java client rows apply (its
    # `Successfully joined group` is the join; the herder's `Joined group at generation ..
    # and got assignment` comes after the sync: the assignment received) ------------------------
    _c("CONNECT-REBAL", "rejoin_requested", "kafka-connect", "all", "Rebalance started"),
    _c("CONNECT-JOINED-0", "assignment_received", "kafka-connect", "<=2.2",
       "Joined group at generation {generation} and got assignment: {assignment}"),
    _c("CONNECT-JOINED-1", "assignment_received", "kafka-connect", "2.3+",
       "Joined group at generation {generation} with protocol version {version} and got "
       "assignment: {assignment} with rebalance delay: {delay_ms}"),
    # -- Kafka 4.0.2 and the clients of 2025 (kafka-clients 4.0.2, kafka-python 3.0.12,
    # librdkafka 2.16 with debug=cgrp), as their genuine logs in datasets/real-kafka say it
    # (`python -m coordinator_kit kafka record`): lines the rows above do not cover ----------
    _b("N-SERVICE-STARTING", None, "4.x", "Starting up.", origin="kafka-new"),
    _b("N-SERVICE-STARTED", None, "4.x", "Startup complete.", origin="kafka-new"),
    # ShutdownableThread's start line, from CoordinatorRuntime's event processor threads
    _b("N-PROCESSOR-START", None, "4.x", "[{thread_name}]: Starting", origin="kafka-new"),
    _c("J-NO-COMMITTED", None, "java-client", "2.x+",
       "Found no committed offset for partition {tp}"),
    _c("J-COMMIT-NO-GROUP", None, "java-client", "2.x+",
       "Failing OffsetCommit request since the consumer is not part of an active group"),
    _c("J-AUTOCOMMIT-FAILED", "offset_commit_failed", "java-client", "2.x+",
       "Asynchronous auto-commit of offsets failed: {reason}"),
    _c("PY-LEAVE-OK", None, "kafka-python", "3.x",
       "LeaveGroup request for group {group} returned successfully"),
    _c("PY-COMMIT-FAILED", "offset_commit_failed", "kafka-python", "3.x",
       "OffsetCommit for group {group} failed: {reason}"),
    _c("PY-LOST", "partitions_lost", "kafka-python", "3.x",
       "Group {group} lost membership; forcibly revoking {partitions}"),
    _c("PY-PRE-REBAL-COMMIT", None, "kafka-python", "3.x",
       "Pre-rebalance offset commit failed: {reason}"),
    _c("RDK-HB-SEND", "heartbeat_sent", "librdkafka", "2.x",
       "Heartbeat for group \"{group}\" generation id {generation}"),
    _c("RDK-JOIN-REQUEST", None, "librdkafka", "2.x",
       "Joining group \"{group}\" with {count} subscribed topic(s) and member id \"{member_id}\""),
    _c("RDK-JOIN-POSTPONED", None, "librdkafka", "2.x",
       "Group \"{group}\": postponing join until up-to-date metadata {condition}"),
    _c("RDK-LEADER-RESET", None, "librdkafka", "2.x",
       "Group \"{group}\": resetting group leader info: {reason}"),
    _c("RDK-ASSIGNOR-RUN", None, "librdkafka", "2.x",
       "Group \"{group}\": \"{assignor}\" assignor run for {count} member(s)"),
    _c("RDK-MEMBERID-RESET", None, "librdkafka", "2.x",
       "Group \"{group}\": updating member id \"{old_member}\" -> \"\""),
    _c("RDK-COORD-ERR", None, "librdkafka", "2.x",
       "Group \"{group}\" FindCoordinator response error: {error}"),
    _c("RDK-REBALANCE-HB", "rejoin_requested", "librdkafka", "2.x",
       "Group \"{group}\" is rebalancing ({protocol}) in state {cgrp_state} (join-state "
       "{join_state}) with {count} assigned partition(s): {reason}"),
    _c("RDK-REBALANCE-LOST", "rejoin_requested", "librdkafka", "2.x",
       "Group \"{group}\" initiating rebalance ({protocol}) in state {cgrp_state} (join-state "
       "{join_state}) with {count} assigned partition(s) (lost): {reason}"),
    _c("RDK-REBALANCE-SKIP", None, "librdkafka", "2.x",
       "Group \"{group}\": rebalance ({protocol}) already in progress, skipping in state "
       "{cgrp_state} (join-state {join_state}) with {count} assigned partition(s){lost}: "
       "{reason}"),
    _c("RDK-REJOIN-METADATA", None, "librdkafka", "2.x",
       "Group \"{group}\": subscription updated from metadata change: rejoining group in state "
       "{cgrp_state}"),
    _c("RDK-REJOINING", None, "librdkafka", "2.x",
       "Group \"{group}\" (re)joining in join-state {join_state} with {count} assigned "
       "partition(s): {reason}"),
    _c("RDK-COMMIT-SEND", None, "librdkafka", "2.x",
       "Committing offsets for {count} partition(s) with generation-id {generation} in "
       "join-state {join_state}: {reason}"),
    _c("RDK-COMMIT-OK", "offset_committed", "librdkafka", "2.x",
       "OffsetCommit for {count} partition(s) in join-state {join_state}: {details}: returned: "
       "Success"),
    _c("RDK-COMMIT-ERR", "offset_commit_failed", "librdkafka", "2.x",
       "OffsetCommit for {count} partition(s) in join-state {join_state}: {details}: returned: "
       "{error}"),
    _c("RDK-LEAVE-RESPONSE", None, "librdkafka", "2.x",
       "LeaveGroup response received in state {cgrp_state}"),
    _c("RDK-SESSION-TIMEOUT", "heartbeat_session_expired", "librdkafka", "2.x",
       "Consumer group session timed out (in join-state {join_state}) after {ms} ms without a "
       "successful response from the group coordinator (broker {node}, last error was "
       "{error}): {reason}"),
)
