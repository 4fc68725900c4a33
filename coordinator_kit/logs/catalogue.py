"""The catalogue of Kafka log-message templates the kit writes (and the parser will read).

Each template is Kafka's own wording (from the Java sources named in the comments, at the commit
named on docs/kafka-classes.md; the one exception, `_CENTRAL_ENTRIES`, is worded by the kit
because the design it logs never shipped: docs/eras-central.md), the logger Kafka uses, the level, the `LogContext` prefix shape,
and the *event* the line stands for. The same entries drive the writer (`Trace.log`) and, later,
the Spark parser, so every line the kit writes is recognised by construction.

Placeholders are `str.format` fields; the prefix is rendered separately from the message body so a
parser can match the body whatever the broker id.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

__all__ = ["LogTemplate", "TEMPLATES", "template", "LOGGERS", "PREFIXES"]

# Java logger names (a LogContext logger is named after the class it was created for).
LOGGERS = {
    "runtime": "org.apache.kafka.coordinator.common.runtime.CoordinatorRuntime",
    "timer": "org.apache.kafka.coordinator.common.runtime.CoordinatorRuntime$EventBasedCoordinatorTimer",
    "snapshottable": "org.apache.kafka.coordinator.common.runtime.SnapshottableCoordinator",
    "processor": "org.apache.kafka.coordinator.common.runtime.MultiThreadedEventProcessor",
    "processor_thread":
        "org.apache.kafka.coordinator.common.runtime.MultiThreadedEventProcessor$EventProcessorThread",
    "deferred": "org.apache.kafka.deferred.DeferredEventQueue",
    "loader": "kafka.coordinator.group.CoordinatorLoaderImpl",
    "partition": "kafka.cluster.Partition",
    "state_change": "state.change.logger",
    "group_manager": "org.apache.kafka.coordinator.group.GroupMetadataManager",
    "offset_manager": "org.apache.kafka.coordinator.group.OffsetMetadataManager",
    "group_shard": "org.apache.kafka.coordinator.group.GroupCoordinatorShard",
    "classic_group": "org.apache.kafka.coordinator.group.classic.ClassicGroup",
    "consumer_coordinator": "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator",
    "listener_invoker":
        "org.apache.kafka.clients.consumer.internals.ConsumerRebalanceListenerInvoker",
    "local_log": "kafka.log.LocalLog",
    "log_cleaner": "kafka.log.LogCleaner",
}

# LogContext prefixes, by the kind of object that logs.
PREFIXES = {
    "runtime": "[GroupCoordinator id={broker}] ",
    "context": "[GroupCoordinator id={broker} topic={topic} partition={partition}] ",
    "processor": "[GroupCoordinator id={broker}] ",
    "processor_thread": "[{thread}]: ",
    "partition": "[Partition {tp} broker={broker}] ",
    "broker": "[Broker id={broker}] ",
    "consumer": "[Consumer clientId={client}, groupId={group}] ",
    "local_log": "[LocalLog partition={topic}-{partition}, dir={dir}] ",
    "cleaner": "Cleaner {id}: ",
    "none": "",
}


@dataclass(frozen=True)
class LogTemplate:
    id: str
    event: str
    logger: str
    level: str
    prefix: str
    text: str
    source: str = "broker"
    # The lines a multi-line message goes on with (Java's "...\n\tMember: {}\n..."), written
    # under the record's line like the lines of a stack trace, so the line itself ends with
    # the logger as every log4j line does and a parser attaches them to it as continuations.
    more: str = ""

    def render(self, fields: dict[str, object]) -> str:
        """The message body (without prefix) with `fields` filled in."""
        try:
            return self.text.format(**fields)
        except KeyError as exc:
            raise KeyError(f"log template {self.id} needs field {exc.args[0]!r}; "
                           f"given {sorted(fields)}") from None


def _t(id: str, event: str, logger: str, level: str, prefix: str, text: str) -> LogTemplate:
    return LogTemplate(id, event, LOGGERS[logger], level, PREFIXES[prefix], text)


_ENTRIES = [
    # CoordinatorRuntime: load (scheduleLoadOperation / CompleteLoad).
    _t("R-SCHED-LOAD", "load_scheduled", "runtime", "INFO", "runtime",
       "Scheduling loading of metadata from {tp} with epoch {epoch}"),
    _t("R-LOAD-ALREADY-LOADING", "load_already_loading", "runtime", "INFO", "runtime",
       "The coordinator {tp} is already loading metadata."),
    _t("R-LOAD-ALREADY-ACTIVE", "load_already_active", "runtime", "INFO", "runtime",
       "The coordinator {tp} is already active."),
    _t("R-LOAD-BAD-STATE", "load_bad_state", "runtime", "ERROR", "runtime",
       "Cannot load coordinator {tp} in state {state}."),
    _t("R-LOAD-IGNORED", "load_ignored", "runtime", "INFO", "runtime",
       "Ignored loading metadata from {tp} since current epoch {current_epoch} is larger than "
       "or equals to {epoch}."),
    _t("R-LOAD-COMPLETION-IGNORED", "load_completion_ignored", "runtime", "INFO", "runtime",
       "Ignored load completion from {tp} because context is in {state} state."),
    _t("R-LOADED", "load_completed", "runtime", "INFO", "runtime",
       "Finished loading of metadata from {tp} with epoch {epoch} in {duration_ms}ms where "
       "{scheduler_ms}ms was spent in the scheduler. Loaded {records} records which total to "
       "{bytes} bytes."),
    _t("R-LOAD-FAIL", "load_failed", "runtime", "ERROR", "runtime",
       "Failed to load metadata from {tp} with epoch {epoch} due to {exception}."),
    _t("R-LOAD-GONE", "load_completion_gone", "runtime", "DEBUG", "runtime",
       "Failed to complete the loading of metadata for {tp} in epoch {epoch} since the "
       "coordinator does not exist."),
    # Unload (scheduleUnloadOperation); the epoch is a Java OptionalInt and prints as one.
    _t("R-SCHED-UNLOAD", "unload_scheduled", "runtime", "INFO", "runtime",
       "Scheduling unloading of metadata for {tp} with epoch {epoch}"),
    _t("R-UNLOAD-START", "unload_started", "runtime", "INFO", "runtime",
       "Started unloading metadata for {tp} with epoch {epoch}."),
    _t("R-UNLOAD-DONE", "unload_finished", "runtime", "INFO", "runtime",
       "Finished unloading metadata for {tp} with epoch {epoch}."),
    _t("R-UNLOAD-IGNORED", "unload_ignored", "runtime", "INFO", "runtime",
       "Ignored unloading metadata for {tp} in epoch {epoch} since current epoch is "
       "{current_epoch}."),
    _t("R-UNLOAD-NEVER-LOADED", "unload_never_loaded", "runtime", "INFO", "runtime",
       "Ignored unloading metadata for {tp} in epoch {epoch} since metadata was never loaded."),
    # Context state machine.
    _t("R-TRANSITION", "context_transition", "runtime", "DEBUG", "runtime",
       "Transition from {old_state} to {new_state}."),
    # Scheduling of operations.
    _t("R-SCHED-WRITE", "write_scheduled", "runtime", "DEBUG", "runtime",
       "Scheduled execution of write operation {name}."),
    _t("R-SCHED-READ", "read_scheduled", "runtime", "DEBUG", "runtime",
       "Scheduled execution of read operation {name}."),
    _t("R-SCHED-READ-ALL", "read_all_scheduled", "runtime", "DEBUG", "runtime",
       "Scheduled execution of read all operation {name}."),
    _t("R-SCHED-TXN-WRITE", "transactional_write_scheduled", "runtime", "DEBUG", "runtime",
       "Scheduled execution of transactional write operation {name}."),
    _t("R-SCHED-TXN-COMPLETION", "transaction_completion_scheduled", "runtime", "DEBUG",
       "runtime",
       "Scheduled execution of transaction completion for {tp} with producer id={producer_id}, "
       "producer epoch={producer_epoch}, coordinator epoch={coordinator_epoch} and transaction "
       "result={result}."),
    _t("R-SCHED-INTERNAL", "internal_scheduled", "runtime", "DEBUG", "runtime",
       "Scheduled execution of internal operation {name}."),
    _t("R-EXEC-FAILED", "event_failed", "runtime", "ERROR", "runtime",
       "Execution of {name} failed due to {error}."),
    # Writes, batches and the log.
    _t("R-APPEND-FAIL", "append_failed", "runtime", "ERROR", "runtime",
       "Writing records to {tp} failed due to: {error}."),
    _t("R-REPLAY-FAIL", "replay_failed", "runtime", "ERROR", "runtime",
       "Replaying record {record} to {tp} failed due to: {error}."),
    _t("R-OUT-OF-SYNC", "log_out_of_sync", "runtime", "ERROR", "runtime",
       "The state machine of the coordinator {tp} is out of sync with the underlying log. The "
       "last written offset returned is {offset} while the coordinator expected {expected}. The "
       "coordinator will be reloaded in order to re-synchronize the state machine."),
    _t("S-WRITTEN", "last_written_offset_updated", "snapshottable", "DEBUG", "context",
       "Updated last written offset of {tp} to {offset}."),
    _t("S-COMMITTED", "last_committed_offset_updated", "snapshottable", "DEBUG", "context",
       "Updated committed offset of {tp} to {offset}."),
    _t("S-REVERT", "last_written_offset_reverted", "snapshottable", "DEBUG", "context",
       "Revert last written offset of {tp} to {offset}."),
    # High watermark.
    _t("R-HWM-INCREMENTED", "hwm_incremented", "runtime", "DEBUG", "runtime",
       "High watermark of {tp} incremented to {offset}."),
    _t("R-HWM-UPDATING", "hwm_applied", "runtime", "DEBUG", "runtime",
       "Updating high watermark of {tp} to {offset}."),
    _t("R-HWM-IGNORED-INACTIVE", "hwm_ignored", "runtime", "DEBUG", "runtime",
       "Ignored high watermark updated for {tp} to {offset} because the coordinator is not "
       "active."),
    _t("R-HWM-IGNORED-GONE", "hwm_ignored_gone", "runtime", "DEBUG", "runtime",
       "Ignored high watermark updated for {tp} to {offset} because the coordinator does not "
       "exist."),
    # Deferred event queue (the purgatory of written-but-uncommitted responses).
    _t("D-COMPLETE", "deferred_completed", "deferred", "DEBUG", "context",
       "completeUpTo({offset}): successfully completing {event}"),
    _t("D-FAIL", "deferred_failed", "deferred", "INFO", "context",
       "failAll({exception}): failing {event}."),
    # Event-based coordinator timer.
    _t("T-REGISTER", "timer_registered", "timer", "DEBUG", "context",
       "Registering timer {key} with delay of {delay_ms}ms."),
    _t("T-FIRE", "timer_fired", "timer", "DEBUG", "context",
       "Scheduling write event {name} for timer {key}."),
    _t("T-EXEC", "timer_executed", "timer", "DEBUG", "context",
       "Executing write event {name} for timer {key}."),
    _t("T-REJECTED", "timer_rejected", "timer", "DEBUG", "context",
       "The write event {name} for the timer {key} was not executed because it was cancelled "
       "or overridden."),
    _t("T-INACTIVE", "timer_ignored_inactive", "timer", "DEBUG", "context",
       "The write event {name} for the timer {key} failed due to {error}. Ignoring it because "
       "the coordinator is not active."),
    _t("T-RETRY", "timer_retry", "timer", "INFO", "context",
       "The write event {name} for the timer {key} failed due to {error}. Rescheduling it. "),
    _t("T-DROP", "timer_failed", "timer", "ERROR", "context",
       "The write event {name} for the timer {key} failed due to {error}. Ignoring it. "),
    _t("T-CLOSED", "timer_enqueue_closed", "timer", "INFO", "context",
       "Failed to enqueue write event {name} for timer {key} because the runtime is closed. "
       "Ignoring it."),
    # Metadata image.
    _t("R-SCHED-IMAGE", "image_scheduled", "runtime", "DEBUG", "runtime",
       "Scheduling applying of a new metadata image with offset {offset}."),
    _t("R-APPLY-IMAGE", "image_applied", "runtime", "DEBUG", "runtime",
       "Applying new metadata image with offset {offset} to {tp}."),
    _t("R-IMAGE-IGNORED", "image_ignored", "runtime", "DEBUG", "runtime",
       "Ignored new metadata image with offset {offset} for {tp} because the coordinator is not "
       "active."),
    _t("R-IMAGE-GONE", "image_ignored_gone", "runtime", "DEBUG", "runtime",
       "Ignored new metadata image with offset {offset} for {tp} because the coordinator does "
       "not exist."),
    # Runtime close.
    _t("R-CLOSING", "runtime_closing", "runtime", "INFO", "runtime",
       "Closing coordinator runtime."),
    _t("R-CLOSED", "runtime_closed", "runtime", "INFO", "runtime", "Coordinator runtime closed."),
    _t("R-ALREADY-CLOSING", "runtime_already_closing", "runtime", "WARN", "runtime",
       "Coordinator runtime is already shutting down."),
    # Event processor thread.
    _t("P-EXEC", "event_executed", "processor_thread", "DEBUG", "processor_thread",
       "Executing event: {event}."),
    _t("P-DRAIN", "event_drained", "processor_thread", "DEBUG", "processor_thread",
       "Draining event: {event}."),
    # Loader.
    _t("L-UNKNOWN-TYPE", "load_unknown_record", "loader", "WARN", "none",
       "Unknown record type {type} while loading offsets and group metadata from {tp}. "
       "Ignoring it. It could be a left over from an aborted upgrade."),
    # kafka.cluster.Partition: replication.
    _t("P-HWM", "hwm_advanced", "partition", "DEBUG", "partition",
       "High watermark updated from {old} to {new}"),
    _t("P-ISR-SHRINK", "isr_shrink", "partition", "INFO", "partition",
       "Shrinking ISR from {old_isr} to {new_isr}. Leader: (highWatermark: {hwm}, endOffset: "
       "{leo}). Out of sync replicas: {out_of_sync}."),
    _t("P-ISR-UPDATED", "isr_updated", "partition", "INFO", "partition",
       "ISR updated to {isr} {under_min_isr} and version updated to {version}"),
    _t("P-LEADER", "leader_elected", "state_change", "INFO", "broker",
       "Leader {tp} with topic id {topic_id} starts at leader epoch {epoch} from offset {offset} "
       "with partition epoch {partition_epoch}, high watermark {hwm}, ISR [{isr}], adding "
       "replicas [] and removing replicas [] {under_min_isr}. Previous leader {previous} and "
       "previous leader epoch was {previous_epoch}."),
    # kafka.log.LocalLog and kafka.log.LogCleaner (Cleaner.doClean, buildOffsetMap): segments
    # and compaction of __consumer_offsets.
    _t("LL-ROLL", "segment_rolled", "local_log", "INFO", "local_log",
       "Rolled new log segment at offset {offset} in {ms} ms."),
    _t("LC-BEGIN", "log_cleaning_started", "log_cleaner", "INFO", "cleaner",
       "Beginning cleaning of log {tp}"),
    _t("LC-MAP-START", "offset_map_started", "log_cleaner", "INFO", "cleaner",
       "Building offset map for {tp}..."),
    _t("LC-MAP", "offset_map_building", "log_cleaner", "INFO", "cleaner",
       "Building offset map for log {tp} for {segments} segments in offset range "
       "[{start}, {end})."),
    _t("LC-MAP-DONE", "offset_map_completed", "log_cleaner", "INFO", "cleaner",
       "Offset map for log {tp} complete."),
    _t("LC-CLEANING", "log_cleaning", "log_cleaner", "INFO", "cleaner",
       "Cleaning log {tp} (cleaning prior to {prior}, discarding tombstones prior to upper "
       "bound deletion horizon {horizon})..."),
]


# The group coordinator shard (GroupMetadataManager and friends), classic groups.
_GROUP_ENTRIES = [
    _t("G-DYN-JOIN-REQ", "member_id_required", "group_manager", "INFO", "context",
       "Dynamic member with unknown member id joins group {group} in {state} state. Created a new "
       "member id {member} and requesting the member to rejoin with this id."),
    _t("G-DYN-JOIN-ADD", "dynamic_member_added", "group_manager", "INFO", "context",
       "Dynamic member with unknown member id joins group {group} in state {state}. Created a "
       "new member id {member} and added the member to the group."),
    _t("G-PEND-JOIN", "pending_member_joined", "group_manager", "INFO", "context",
       "Pending dynamic member with id {member} joins group {group} in {state} state. Adding to "
       "the group now."),
    _t("G-STATIC-REPLACE", "static_member_replaced", "group_manager", "INFO", "context",
       "Static member with groupInstanceId={instance} and unknown member id joins group {group} "
       "in {state} state. Replacing previously mapped member {old_member} with this "
       "groupInstanceId."),
    _t("G-STATIC-NEW", "static_member_added", "group_manager", "INFO", "context",
       "Static member with groupInstanceId={instance} and unknown member id joins group {group} "
       "in {state} state. Created a new member id {member} for this member and added to the "
       "group."),
    _t("G-STATIC-NO-REBALANCE", "static_member_rejoined", "group_manager", "INFO", "context",
       "Static member which joins during Stable stage and doesn't affect the selected protocol "
       "will not trigger a rebalance."),
    _t("G-STATIC-FENCED", "static_member_fenced", "classic_group", "INFO", "context",
       "Request memberId={member} for static member with groupInstanceId={instance} is fenced by "
       "existing memberId={existing} during operation {operation}"),
    _t("G-REBAL", "rebalance_started", "group_manager", "INFO", "context",
       "Preparing to rebalance group {group} in state {state} with old generation {generation} "
       "(reason: {reason})."),
    _t("G-REMOVED-NOT-JOINED", "members_not_rejoined_removed", "group_manager", "INFO",
       "context", "Group {group} removed dynamic members who haven't joined: {members}"),
    _t("G-NO-REJOIN", "rebalance_stuck", "group_manager", "ERROR", "context",
       "Group {group} could not complete rebalance because no members rejoined."),
    _t("G-LEADER-REELECTED", "leader_reelected", "classic_group", "INFO", "context",
       "Group leader [memberId: {old_leader}, groupInstanceId: {instance}] failed to join before "
       "the rebalance timeout. Member {member} was elected as the new leader."),
    _t("G-STAB", "group_stabilized", "group_manager", "INFO", "context",
       "Stabilized group {group} generation {generation} with {members} members."),
    _t("G-EMPTY", "group_empty", "group_manager", "INFO", "context",
       "Group {group} with generation {generation} is now empty."),
    _t("G-ASSIGN", "assignment_received", "group_manager", "INFO", "context",
       "Assignment received from leader {member} for group {group} for generation "
       "{generation}. The group has {members} members, {static} of which are static."),
    _t("G-EMPTY-ASSIGN", "empty_assignment_set", "group_manager", "WARN", "context",
       "Setting empty assignments for members {members} of {group} for generation "
       "{generation}."),
    _t("G-SYNC-EXPIRED", "sync_expired_members_removed", "group_manager", "DEBUG", "context",
       "Group {group} removed members who haven't sent their sync requests: {members}"),
    _t("G-FAIL", "member_session_expired", "group_manager", "INFO", "context",
       "Member {member} in group {group} has failed, removing it from the group."),
    _t("G-PEND-EXP", "pending_member_expired", "group_manager", "INFO", "context",
       "Pending member {member} in group {group} has been removed after session timeout "
       "expiration."),
    _t("G-LEAVE", "member_left", "group_manager", "INFO", "context",
       "[Group {group}] Member {member} has left group through explicit `LeaveGroup` request; "
       "client reason: {reason}"),
    _t("G-LEAVE-PENDING", "pending_member_left", "group_manager", "INFO", "context",
       "[Group {group}] Pending member {member} has left group through explicit `LeaveGroup` "
       "request; client reason: {reason}"),
    _t("G-EMPTY-META-FAIL", "empty_metadata_write_failed", "group_manager", "WARN", "context",
       "Failed to write empty metadata for group {group}: {error}"),
    _t("G-LOADED", "group_loaded", "group_manager", "INFO", "context",
       "Loaded classic group {group} with {members} members."),
    _t("G-UNLOADING", "group_unloaded", "group_manager", "INFO", "context",
       "[GroupId={group}] Unloading group metadata for generation {generation}."),
    _t("O-SIMPLE-GROUP", "simple_group_created", "offset_manager", "INFO", "context",
       "[GroupId {group}] Creating a simple consumer group via manual offset commit."),
    _t("O-COMMIT", "offset_committed", "offset_manager", "DEBUG", "context",
       "[GroupId {group}] Committing offsets {offset} for partition {topic}-{partition} from "
       "member {member} with leader epoch {leader_epoch}."),
    _t("O-EXPIRED", "offset_expired", "offset_manager", "DEBUG", "context",
       "[GroupId {group}] Expired offset for partition={topic}-{partition}"),
    _t("C-CLEANUP", "group_metadata_cleanup", "group_shard", "INFO", "context",
       "Generated {records} tombstone records while cleaning up group metadata in {ms} "
       "milliseconds."),
    _t("C-GROUPS-DELETED", "groups_deleted", "group_shard", "INFO", "context",
       "The following groups were deleted: {groups}. A total of {offsets} offsets were "
       "removed."),
    _t("O-TXN-COMMIT", "transactional_offset_committed", "offset_manager", "DEBUG", "context",
       "[GroupId {group}] Committing transactional offsets {offset} for partition "
       "{topic}-{partition} from member {member} with leader epoch {leader_epoch}."),
    _t("O-TXN-COMMITTED", "transactional_offsets_committed", "offset_manager", "DEBUG",
       "context", "Committed transactional offset commits for producer id {producer_id}."),
    _t("O-TXN-ABORTED", "transactional_offsets_aborted", "offset_manager", "DEBUG", "context",
       "Aborted transactional offset commits for producer id {producer_id}."),
]

# The Java consumer's classic-protocol coordinator (AbstractCoordinator / ConsumerCoordinator,
# 3.x-4.0 wording; the logger is ConsumerCoordinator because Kafka uses getClass()).
def _j(id: str, event: str, level: str, text: str, logger: str = "consumer_coordinator"
       ) -> LogTemplate:
    return LogTemplate(id, event, LOGGERS[logger], level, PREFIXES["consumer"], text, "client")


_CLIENT_ENTRIES = [
    _j("J-DISCOVER", "coordinator_discovered", "INFO", "Discovered group coordinator {node}"),
    _j("J-COORD-LOST", "coordinator_lost", "INFO",
       "Group coordinator {node} is unavailable or invalid due to cause: {cause}. "
       "isDisconnected: {disconnected}. Rediscovery will be attempted."),
    _j("J-REJOIN", "join_sent", "INFO", "(Re-)joining group"),
    _j("J-REQ-JOIN", "rejoin_requested", "INFO", "Request joining group due to: {reason}"),
    _j("J-JOINED", "joined", "INFO", "Successfully joined group with generation {generation}"),
    _j("J-JOIN-LOADING", "join_failed_loading", "INFO",
       "JoinGroup failed: Coordinator {node} is loading the group."),
    _j("J-JOIN-REJOIN", "join_failed_rejoin", "INFO",
       "JoinGroup failed: {message} Need to re-join the group. Sent generation was {generation}"),
    _j("J-JOIN-COORD", "join_failed_coordinator", "INFO",
       "JoinGroup failed: {message} Marking coordinator unknown. Sent generation was "
       "{generation}"),
    _j("J-JOIN-REBAL", "join_failed_rebalancing", "INFO",
       "JoinGroup failed due to non-fatal error: REBALANCE_IN_PROGRESS, which could indicate a "
       "replication timeout on the broker. Will retry."),
    _j("J-JOIN-FENCED", "join_failed_fenced", "ERROR",
       "JoinGroup failed: The group instance id {instance} has been fenced by another instance. "
       "Sent generation was {generation}"),
    _j("J-JOIN-FATAL", "join_failed_fatal", "ERROR",
       "JoinGroup failed due to fatal error: {message}"),
    _j("J-FINISHED", "assignment_computed", "INFO",
       "Finished assignment for group at generation {generation}: {assignments}"),
    _j("J-SYNCED", "synced", "INFO", "Successfully synced group in generation {generation}"),
    _j("J-SYNC-REBAL", "sync_failed_rebalancing", "INFO",
       "SyncGroup failed: The group began another rebalance. Need to re-join the group. Sent "
       "generation was {generation}"),
    _j("J-SYNC-REJOIN", "sync_failed_rejoin", "INFO",
       "SyncGroup failed: {message} Need to re-join the group. Sent generation was {generation}"),
    _j("J-SYNC-COORD", "sync_failed_coordinator", "INFO",
       "SyncGroup failed: {message} Marking coordinator unknown. Sent generation was "
       "{generation}"),
    _j("J-SYNC-FENCED", "sync_failed_fenced", "ERROR",
       "SyncGroup failed: The group instance id {instance} has been fenced by another instance. "
       "Sent generation was {generation}"),
    _j("J-NOTIFY", "assignment_received", "INFO",
       "Notifying assignor about the new Assignment(partitions=[{partitions}])"),
    _j("J-ASSIGNED", "partitions_assigned", "INFO",
       "Adding newly assigned partitions: {partitions}", "listener_invoker"),
    _j("J-REVOKE", "partitions_revoked", "INFO",
       "Revoke previously assigned partitions {partitions}", "listener_invoker"),
    _j("J-LOST", "partitions_lost", "INFO",
       "Lost previously assigned partitions {partitions}", "listener_invoker"),
    _j("J-GIVE-AWAY", "partitions_given_away", "INFO",
       "Giving away all assigned partitions as lost since generation/memberID has been reset,"
       "indicating that consumer is in old state or no longer part of the group"),
    _j("J-RESET", "generation_reset", "INFO", "Resetting generation {member_id}due to: {reason}"),
    _j("J-LEAVE", "leave_sent", "INFO",
       "Member {member} sending LeaveGroup request to coordinator {node} due to {reason}"),
    # DEBUG, in the heartbeat thread (AbstractCoordinator.sendHeartbeatRequest and its
    # response handler): the only trace a healthy member leaves of its heartbeats.
    _j("J-HB-SEND", "heartbeat_sent", "DEBUG",
       "Sending Heartbeat request with generation {generation} and member id {member} to "
       "coordinator {node}"),
    _j("J-HB-OK", "heartbeat_succeeded", "DEBUG", "Received successful Heartbeat response"),
    _j("J-HB-COORD", "heartbeat_failed_coordinator", "INFO",
       "Attempt to heartbeat failed since coordinator {node} is either not started or not valid"),
    _j("J-HB-RESET", "heartbeat_failed_reset", "INFO",
       "Attempt to heartbeat with {generation} and group instance id {instance} failed due to "
       "{error}, resetting generation"),
    _j("J-HB-STALE", "heartbeat_failed_stale", "INFO",
       "Attempt to heartbeat with stale {generation} and group instance id {instance} failed "
       "due to {error}, ignoring the error"),
    _j("J-POLL-TIMEOUT", "poll_timeout", "WARN",
       "consumer poll timeout has expired. This means the time between subsequent calls to "
       "poll() was longer than the configured max.poll.interval.ms, which typically implies "
       "that the poll loop is spending too much time processing messages. You can address this "
       "either by increasing max.poll.interval.ms or by reducing the maximum size of batches "
       "returned in poll() with max.poll.records."),
    _j("J-COMMIT-FAIL", "offset_commit_failed", "WARN",
       "Asynchronous auto-commit of offsets {offsets} failed: {message}"),
    _j("J-COMMIT-PART-FAIL", "offset_commit_partition_failed", "ERROR",
       "Offset commit failed on partition {tp} at offset {offset}: {message}"),
]

# kafka-python's consumer coordinator, 2.x wording (tag 2.3.2, the last 2.x release:
# kafka/coordinator/base.py, consumer.py, heartbeat.py, kafka/consumer/subscription_state.py).
# A consumer with client_style="kafka-python" writes these instead of the Java client's lines:
# one line for each line the Java client writes, with the same event, or none where
# kafka-python logs nothing (coordinator_kit.client.styles has the mapping). Python loggers,
# no LogContext prefix; they render in Python logging's layout (logs.layout.format_python).
LOGGERS.update({
    "kp_coordinator": "kafka.coordinator",
    "kp_consumer": "kafka.coordinator.consumer",
    "kp_heartbeat": "kafka.coordinator.heartbeat",
    "kp_subscription": "kafka.consumer.subscription_state",
})


def _k(id: str, event: str, logger: str, level: str, text: str) -> LogTemplate:
    return LogTemplate(id, event, LOGGERS[logger], level, PREFIXES["none"], text, "client")


_KAFKA_PYTHON_ENTRIES = [
    _k("KP-DISCOVER", "coordinator_discovered", "kp_coordinator", "INFO",
       "Discovered coordinator {node} for group {group}"),
    _k("KP-COORD-DEAD", "coordinator_lost", "kp_coordinator", "WARN",
       "Marking the coordinator dead (node {node}) for group {group}: {reason}."),
    _k("KP-REJOIN", "join_sent", "kp_coordinator", "INFO", "(Re-)joining group {group}"),
    _k("KP-MEMBER-ID", "rejoin_requested", "kp_coordinator", "INFO",
       "Received member id {member} for group {group}; will retry join-group"),
    _k("KP-JOINED", "joined", "kp_coordinator", "INFO",
       "Successfully joined group {group} {generation}"),
    _k("KP-JOIN-LOADING", "join_failed_loading", "kp_coordinator", "INFO",
       "Attempt to join group {group} rejected since coordinator {node} is loading the group."),
    _k("KP-JOIN-UNKNOWN", "join_failed_rejoin", "kp_coordinator", "INFO",
       "Attempt to join group {group} failed due to unknown member id"),
    _k("KP-JOIN-UNEXPECTED", "join_failed_rejoin", "kp_coordinator", "ERROR",
       "Unexpected error in join group response: {error}"),
    _k("KP-JOIN-COORD", "join_failed_coordinator", "kp_coordinator", "INFO",
       "Attempt to join group {group} failed due to obsolete coordinator information: "
       "{error}"),
    _k("KP-JOIN-REBAL", "join_failed_rebalancing", "kp_coordinator", "INFO",
       "Attempt to join group {group} failed due to RebalanceInProgressError, which could "
       "indicate a replication timeout on the broker. Will retry."),
    _k("KP-JOIN-FATAL", "join_failed_fatal", "kp_coordinator", "ERROR",
       "Attempt to join group {group} failed due to fatal error: {error}"),
    _k("KP-LEADER", "assignment_computed", "kp_coordinator", "INFO",
       "Elected group leader -- performing partition assignments using {assignor}"),
    _k("KP-SYNC-REBAL", "sync_failed_rebalancing", "kp_coordinator", "INFO",
       "SyncGroup for group {group} failed due to coordinator rebalance"),
    _k("KP-SYNC-FAILED", "sync_failed_rejoin", "kp_coordinator", "INFO",
       "SyncGroup for group {group} failed due to {error}"),
    _k("KP-SYNC-FENCED", "sync_failed_fenced", "kp_coordinator", "ERROR",
       "SyncGroup for group {group} failed due to fenced id error: {instance}"),
    _k("KP-UPDATED", "assignment_received", "kp_subscription", "INFO",
       "Updated partition assignment: {partitions}"),
    _k("KP-ASSIGNED", "partitions_assigned", "kp_consumer", "INFO",
       "Setting newly assigned partitions {partitions} for group {group}"),
    _k("KP-REVOKE", "partitions_revoked", "kp_consumer", "INFO",
       "Revoking previously assigned partitions {partitions} for group {group}"),
    _k("KP-LEAVE", "leave_sent", "kp_coordinator", "INFO",
       "Leaving consumer group {group} (member {member})."),
    _k("KP-HB-SEND", "heartbeat_sent", "kp_heartbeat", "DEBUG",
       "Sending HeartbeatRequest to {node}: {request}"),
    _k("KP-HB-RECEIVED", "heartbeat_succeeded", "kp_heartbeat", "DEBUG",
       "Received heartbeat response for group {group}: {response}"),
    _k("KP-HB-COORD", "heartbeat_failed_coordinator", "kp_heartbeat", "WARN",
       "Heartbeat failed for group {group}: coordinator (node {node}) is either not started or "
       "not valid"),
    _k("KP-HB-REBAL", "rejoin_requested", "kp_heartbeat", "WARN",
       "Heartbeat failed for group {group} because it is rebalancing"),
    # kafka-python's own text has the two spaces ("not " + " current.")
    _k("KP-HB-GENERATION", "heartbeat_failed_reset", "kp_heartbeat", "WARN",
       "Heartbeat failed for group {group}: generation id is not  current."),
    _k("KP-HB-UNKNOWN", "heartbeat_failed_reset", "kp_heartbeat", "WARN",
       "Heartbeat: local member_id was not recognized; this consumer needs to re-join"),
    _k("KP-HB-FENCED", "heartbeat_failed_reset", "kp_heartbeat", "ERROR",
       "Heartbeat failed for group {group} due to fenced id error: {instance}"),
    _k("KP-POLL-TIMEOUT", "poll_timeout", "kp_heartbeat", "WARN",
       "Consumer poll timeout has expired. This means the time between subsequent calls to "
       "poll() was longer than the configured max_poll_interval_ms, which typically implies "
       "that the poll loop is spending too much time processing messages. You can address this "
       "either by increasing max_poll_interval_ms or by reducing the maximum size of batches "
       "returned in poll() with max_poll_records."),
    _k("KP-AUTO-COMMIT-FAIL", "offset_commit_failed", "kp_consumer", "WARN",
       "Auto offset commit failed for group {group}: {error}"),
]

# The centralised consumer coordinator drafted for Kafka 0.9 (Apache wiki "Central Consumer
# Coordination", 2012), which never shipped: no release ever wrote these lines. The wording is
# INVENTED by the kit, in the style of Kafka 0.8's broker and consumer logs (a "[Name id]: "
# prefix as 0.8's KafkaController and 0.9's GroupCoordinator use), so that a run of
# `eras.central` reads like a log; docs/eras-central.md says so too. Loggers and prefixes are
# invented likewise.
LOGGERS.update({
    "central_coordinator": "kafka.server.ConsumerCoordinator",
    "central_consumer": "kafka.consumer.CentralConsumerConnector",
})
PREFIXES.update({
    "central_coordinator": "[ConsumerCoordinator {broker}]: ",
    "central_consumer": "[CentralConsumer clientId={client}, groupId={group}] ",
})


def _cc(id: str, event: str, level: str, text: str) -> LogTemplate:
    return LogTemplate(id, event, LOGGERS["central_coordinator"], level,
                       PREFIXES["central_coordinator"], text)


def _cx(id: str, event: str, level: str, text: str) -> LogTemplate:
    return LogTemplate(id, event, LOGGERS["central_consumer"], level,
                       PREFIXES["central_consumer"], text, "client")


_CENTRAL_ENTRIES = [
    # the coordinator (on the elected broker); rule numbers as in docs/eras-central.md
    _cc("CC-ELECTED", "central_coordinator_elected", "INFO",
        "Elected as the consumer coordinator; read {groups} groups and {topics} topics from "
        "ZooKeeper, waiting for consumers to register"),
    _cc("CC-REGISTERED", "central_consumer_registered", "INFO",
        "Registered consumer {member} of group {group} with session timeout {session_ms} ms "
        "and topics {topics}"),
    _cc("CC-REJECTED", "central_registration_rejected", "WARN",
        "Rejected registration of consumer {member} of group {group}: {reason}"),
    _cc("CC-PING", "central_ping_sent", "DEBUG",
        "Sending ping to consumer {member} of group {group}"),
    _cc("CC-PING-MISSED", "central_ping_missed", "INFO",
        "Consumer {member} of group {group} did not answer ping ({missed} of {max_missed} "
        "missed)"),
    _cc("CC-FAILED", "central_consumer_failed", "INFO",
        "Marking consumer {member} of group {group} as failed: {reason}"),
    _cc("CC-QUEUED", "central_rebalance_queued", "INFO",
        "Queued rebalance of group {group} (reason: {reason})"),
    _cc("CC-PENDING", "central_rebalance_pending", "INFO",
        "Group {group} is rebalancing in state {state}; another rebalance will follow "
        "(reason: {reason})"),
    _cc("CC-ATTEMPT", "central_rebalance_attempt", "INFO",
        "Begin rebalance attempt {attempt} of {max_attempts} for group {group}: sending "
        "stop-fetcher to {members}"),
    _cc("CC-EMPTY", "central_group_empty", "INFO",
        "Group {group} has no live consumers; nothing to assign"),
    _cc("CC-ASSIGN", "central_assignment_computed", "INFO",
        "All consumers of group {group} stopped their fetchers; sending start-fetcher with "
        "assignment {assignment}"),
    _cc("CC-STABLE", "central_rebalance_completed", "INFO",
        "Rebalance of group {group} completed with generation {generation}"),
    _cc("CC-TIMEOUT", "central_rebalance_timeout", "WARN",
        "Rebalance attempt {attempt} of group {group} timed out after {ms} ms waiting for "
        "{members}"),
    _cc("CC-BACKOFF", "central_rebalance_backoff", "INFO",
        "Retrying rebalance of group {group} after backoff; attempt {attempt} of "
        "{max_attempts}"),
    _cc("CC-REBALANCE-FAILED", "central_rebalance_failed", "ERROR",
        "Rebalance of group {group} failed after {attempts} attempts; its consumers stay "
        "stopped until the next rebalance"),
    _cc("CC-FLUSH", "central_offsets_flushed", "DEBUG",
        "Flushed {count} consumed offsets to ZooKeeper"),
    _cc("CC-TOPIC", "central_topic_changed", "INFO",
        "Partition count of topic {topic} changed to {count}; rebalancing groups {groups}"),
    # the consumer's connector
    _cx("CX-DISCOVERED", "central_coordinator_discovered", "INFO",
        "Discovered consumer coordinator {node} through broker {via}"),
    _cx("CX-NO-COORDINATOR", "central_coordinator_unknown", "INFO",
        "No consumer coordinator known to broker {via}; retrying in {ms} ms"),
    _cx("CX-CONNECT-FAILED", "central_connect_failed", "INFO",
        "Cannot reach broker {node}; rediscovering the coordinator in {ms} ms"),
    _cx("CX-CONFIRMED", "central_registration_confirmed", "INFO",
        "Registered with consumer coordinator {node}"),
    _cx("CX-REJECTED", "central_registration_refused", "WARN",
        "Registration refused by consumer coordinator {node}: {reason}"),
    _cx("CX-PING", "central_ping_answered", "DEBUG",
        "Answering ping with consumed offsets {offsets}"),
    _cx("CX-STOP", "central_fetchers_stopped", "INFO",
        "Stopped fetchers and cleared queues on request of the coordinator; consumed offsets "
        "{offsets}"),
    _cx("CX-START", "central_fetchers_started", "INFO",
        "Starting fetchers for {partitions} on request of the coordinator"),
    _cx("CX-LOST", "central_coordinator_lost", "WARN",
        "Lost the consumer coordinator {node} ({reason}); closing fetchers and "
        "rediscovering"),
    _cx("CX-REBALANCE-FAILED", "central_rebalance_failed_seen", "ERROR",
        "The consumer coordinator gave up rebalancing group {group}; no partitions until it "
        "rebalances again"),
    _cx("CX-SHUTDOWN", "central_consumer_shutdown", "INFO", "Shutting down the connector"),
]


# The ZooKeeper-era high-level consumer (Kafka 0.8.2.2: kafka.consumer.ZookeeperConsumerConnector,
# RangeAssignor, kafka.utils.ZkUtils) and the ZooKeeper client and server it ran on (I0Itec
# ZkClient 0.3, ZooKeeper 3.4 ClientCnxn / ZooKeeperServer); coordinator_kit.eras.zookeeper
# writes them. The connector's lines carry its logIdent, "[<consumerId>], ". Where Kafka logs an
# exception with its stack trace (`error("error during syncedRebalance", e)`), log4j prints the
# exception's message on the next line; the kit writes that message as a line of its own
# (ZC-REBAL-FAILED, the ConsumerRebalanceFailedException text) so each event is one line.
LOGGERS.update({
    "zk_connector": "kafka.consumer.ZookeeperConsumerConnector",
    "zk_range": "kafka.consumer.RangeAssignor",
    "zk_utils": "kafka.utils.ZkUtils$",
    "zkclient": "org.I0Itec.zkclient.ZkClient",
    "zk_cnxn": "org.apache.zookeeper.ClientCnxn",
    "zk_zookeeper": "org.apache.zookeeper.ZooKeeper",
    "zk_server": "org.apache.zookeeper.server.ZooKeeperServer",
})
PREFIXES["zk_consumer"] = "[{consumer}], "


def _z(id: str, event: str, logger: str, level: str, text: str, prefix: str = "zk_consumer",
       source: str = "client") -> LogTemplate:
    return LogTemplate(id, event, LOGGERS[logger], level, PREFIXES[prefix], text, source)


_ZOOKEEPER_ENTRIES = [
    _z("ZC-REG-BEGIN", "zk_consumer_registering", "zk_connector", "INFO",
       "begin registering consumer {member} in ZK"),
    _z("ZC-REG-END", "zk_consumer_registered", "zk_connector", "INFO",
       "end registering consumer {member} in ZK"),
    _z("ZC-WATCHER-START", "zk_watcher_executor_started", "zk_connector", "INFO",
       "starting watcher executor thread for consumer {member}"),
    _z("ZC-AUTOCOMMIT-START", "zk_auto_committer_started", "zk_connector", "INFO",
       "starting auto committer every {interval} ms"),
    _z("ZC-REBAL-BEGIN", "zk_rebalance_attempt_began", "zk_connector", "INFO",
       "begin rebalancing consumer {member} try #{attempt}"),
    _z("ZC-REBAL-END", "zk_rebalance_attempt_ended", "zk_connector", "INFO",
       "end rebalancing consumer {member} try #{attempt}"),
    _z("ZC-ATTEMPT-FAILED", "zk_rebalance_attempt_failed", "zk_connector", "INFO",
       "Rebalancing attempt failed. Clearing the cache before the next rebalancing operation "
       "is triggered"),
    _z("ZC-CLEARED-QUEUES", "zk_fetcher_queues_cleared", "zk_connector", "INFO",
       "Cleared all relevant queues for this fetcher"),
    _z("ZC-CLEARED-ITERATORS", "zk_iterators_cleared", "zk_connector", "INFO",
       "Cleared the data chunks in all the consumer message iterators"),
    _z("ZC-COMMIT-ALL", "zk_offsets_committing", "zk_connector", "INFO",
       "Committing all offsets after clearing the fetcher queues"),
    _z("ZC-RELEASING", "zk_ownership_releasing", "zk_connector", "INFO",
       "Releasing partition ownership"),
    _z("ZC-OWNED", "zk_partition_owned", "zk_connector", "INFO",
       "{thread} successfully owned partition {partition} for topic {topic}"),
    _z("ZC-WAIT-OWNER", "zk_partition_claim_conflict", "zk_connector", "INFO",
       "waiting for the partition ownership to be deleted: {partition}"),
    _z("ZC-SELECTED", "zk_partitions_selected", "zk_connector", "INFO",
       "Consumer {member} selected partitions : {partitions}"),
    _z("ZC-REBAL-ERROR", "zk_synced_rebalance_error", "zk_connector", "ERROR",
       "error during syncedRebalance"),
    _z("ZC-REBAL-FAILED", "zk_rebalance_failed", "zk_connector", "ERROR",
       "{member} can't rebalance after {retries} retries"),
    # ZKSessionExpireListener.handleNewSession (Kafka's own spelling: "parition")
    _z("ZC-EXPIRED", "zk_session_expired_consumer", "zk_connector", "INFO",
       "ZK expired; release old broker parition ownership; re-register consumer {member}"),
    _z("ZC-SHUTDOWN", "zk_consumer_shutting_down", "zk_connector", "INFO",
       "ZKConsumerConnector shutting down"),
    _z("ZC-SHUTDOWN-DONE", "zk_consumer_shut_down", "zk_connector", "INFO",
       "ZKConsumerConnector shutdown completed in {ms} ms"),
    # RangeAssignor.assign
    _z("ZC-RANGE", "zk_range_assigning", "zk_range", "INFO",
       "Consumer {member} rebalancing the following partitions: {partitions} for topic "
       "{topic} with consumers: {consumers}", "none"),
    _z("ZC-CLAIM", "zk_partition_claiming", "zk_range", "INFO",
       "{thread} attempting to claim partition {partition}", "none"),
    _z("ZC-NO-PARTITIONS", "zk_thread_without_partitions", "zk_range", "WARN",
       "No broker partitions consumed by consumer thread {thread} for topic {topic}", "none"),
    # ZkUtils.createEphemeralPathExpectConflict
    _z("ZC-CONFLICT", "zk_ephemeral_conflict", "zk_utils", "INFO",
       "conflict in {path} data: {data} stored data: {stored}", "none"),
    # ZkUtils.createEphemeralPathExpectConflictHandleZKBug (registration)
    _z("ZC-CONFLICTED-NODE", "zk_ephemeral_conflict_backoff", "zk_utils", "INFO",
       "I wrote this conflicted ephemeral node [{data}] at {path} a while back in a different "
       "session, hence I will backoff for this node to be deleted by Zookeeper and retry",
       "none"),
    # ZkClient and ZooKeeper's ClientCnxn / ZooKeeper.close
    _z("ZK-STATE", "zk_state_changed", "zkclient", "INFO", "zookeeper state changed ({state})",
       "none"),
    _z("ZK-EVENT", "zk_watch_event", "zkclient", "DEBUG",
       "Received event: WatchedEvent state:SyncConnected type:{type} path:{path}", "none"),
    _z("ZK-ESTABLISHED", "zk_session_established", "zk_cnxn", "INFO",
       "Session establishment complete on server zookeeper/127.0.0.1:2181, sessionid = "
       "0x{session}, negotiated timeout = {timeout}", "none"),
    _z("ZK-TIMED-OUT", "zk_client_timed_out", "zk_cnxn", "INFO",
       "Client session timed out, have not heard from server in {ms}ms for sessionid "
       "0x{session}, closing socket connection and attempting reconnect", "none"),
    _z("ZK-SOCKET-CLOSED", "zk_socket_closed", "zk_cnxn", "INFO",
       "Unable to read additional data from server sessionid 0x{session}, likely server has "
       "closed socket, closing socket connection and attempting reconnect", "none"),
    _z("ZK-SESSION-EXPIRED", "zk_session_expired", "zk_cnxn", "WARN",
       "Unable to reconnect to ZooKeeper service, session 0x{session} has expired", "none"),
    _z("ZK-CLOSED", "zk_session_closed", "zk_zookeeper", "INFO", "Session: 0x{session} closed",
       "none"),
    _z("ZK-EXPIRING", "zk_session_expiring", "zk_server", "INFO",
       "Expiring session 0x{session}, timeout of {timeout}ms exceeded", "none", "broker"),
]

# The broker's socket server (kafka.network.SocketServer's Processor, and the clients' network
# Selector it reads with), as the live server writes them when it closes one connection over a
# frame it cannot take. Kafka logs the exception on the next line; the live server writes that
# line after the record (the `exception` field), where a parser sees a continuation.
LOGGERS.update({
    "network_processor": "kafka.network.Processor",
    "network_selector": "org.apache.kafka.common.network.Selector",
})
PREFIXES["socket_server"] = "[SocketServer listenerType=BROKER, nodeId={broker}] "
_NETWORK_ENTRIES = [
    _t("N-CLOSE-ERROR", "connection_closed_on_error", "network_processor", "ERROR",
       "socket_server", "Closing socket for {channel} because of error"),
    _t("N-SELECTOR-ERROR", "connection_closed_on_error", "network_selector", "WARN",
       "socket_server", "Unexpected error from {desc}; closing connection"),
]

# The Java consumer of the consumer group protocol (KIP-848, group.protocol=consumer:
# AsyncKafkaConsumer's background thread), 4.x wording: ConsumerMembershipManager
# (AbstractMembershipManager's lines log under it), ConsumerHeartbeatRequestManager
# (AbstractHeartbeatRequestManager's, through getClass()), CommitRequestManager and
# CoordinatorRequestManager. `{member_info}` is memberIdInfoForLog ("<no ID>" before the first
# answer); the rebalance listener's lines are the classic J-ASSIGNED / J-REVOKE / J-LOST.
LOGGERS.update({
    "membership": "org.apache.kafka.clients.consumer.internals.ConsumerMembershipManager",
    "heartbeat_manager":
        "org.apache.kafka.clients.consumer.internals.ConsumerHeartbeatRequestManager",
    "commit_manager": "org.apache.kafka.clients.consumer.internals.CommitRequestManager",
    "coordinator_manager":
        "org.apache.kafka.clients.consumer.internals.CoordinatorRequestManager",
})


def _a(id: str, event: str, level: str, text: str, logger: str = "membership") -> LogTemplate:
    return LogTemplate(id, event, LOGGERS[logger], level, PREFIXES["consumer"], text, "client")


_HB = "ConsumerGroupHeartbeatRequest"
_ASYNC_CLIENT_ENTRIES = [
    _a("A-DISCOVER", "coordinator_discovered", "INFO", "Discovered group coordinator {node}",
       "coordinator_manager"),
    _a("A-COORD-LOST", "coordinator_lost", "INFO",
       "Group coordinator {node} is unavailable or invalid due to cause: {cause}. "
       "Rediscovery will be attempted.", "coordinator_manager"),
    _a("A-TRANSITION", "member_state_changed", "INFO",
       "Member {member_info} with epoch {epoch} transitioned from {from_state} to {to_state}."),
    dataclasses.replace(
        _a("A-RECONCILING", "reconciliation_started", "INFO",
           "Reconciling assignment with local epoch {epoch}"),
        more=("\n\tMember:                                    {member_info}"
              "\n\tAssigned partitions:                       {assigned}"
              "\n\tCurrent owned partitions:                  {owned}"
              "\n\tAdded partitions (assigned - owned):       {added}"
              "\n\tRevoked partitions (owned - assigned):     {revoked}")),
    _a("A-RECONCILE-ABORTED", "reconciliation_aborted", "INFO",
       "Interrupting reconciliation that is not relevant anymore because {reason}"),
    _a("A-COMMIT-BEFORE-FAILED", "reconciliation_commit_failed", "ERROR",
       "Auto-commit request before reconciling new assignment failed. Will proceed with the "
       "reconciliation anyway."),
    _a("A-ACK-RECONCILE", "member_reconcile_again", "DEBUG",
       "Member {member_info} with epoch {epoch} transitioned to RECONCILING after a heartbeat was "
       "sent to ack a previous reconciliation. New assignments are ready to be reconciled."),
    _a("A-ASSIGNMENT-IGNORED", "assignment_ignored", "DEBUG",
       "Ignoring new assignment {assignment} received from server because member is in {state} "
       "state."),
    _a("A-HB-IGNORED-LEAVING", "heartbeat_ignored", "DEBUG",
       "Ignoring heartbeat response received from broker. Member {member} with epoch {epoch} is "
       "already leaving the group."),
    _a("A-HB-IGNORED", "heartbeat_ignored", "DEBUG",
       "Ignoring heartbeat response received from broker. Member {member} is in {state} state "
       "so it's not a member of the group. "),
    _a("A-LEFT", "left_group", "DEBUG",
       "Member {member} with epoch {epoch} received a successful response to the heartbeat to "
       "leave the group and completed the leave operation. "),
    _a("A-LEAVE-FAILED", "left_group", "WARN",
       "Member {member_info} with epoch {epoch} received a failed response to the heartbeat to "
       "leave the group and completed the leave operation. "),
    _a("A-FENCED", "member_fenced_client", "DEBUG",
       "Member {member_info} with epoch {epoch} transitioned to {state} state. It will release "
       "its assignment and rejoin the group."),
    _a("A-FENCED-PREPARE-LEAVING", "member_fenced_client", "INFO",
       "Member {member_info} with epoch {epoch} got fenced but it is already preparing to leave "
       "the group, so it will stop sending heartbeat and won't attempt to send the leave "
       "request or rejoin."),
    _a("A-FENCED-LEAVING", "member_fenced_client", "DEBUG",
       "Member {member_info} with epoch {epoch} got fenced before sending leave group heartbeat. "
       "It will not send the leave request and won't attempt to rejoin."),
    _a("A-FENCED-LEFT", "member_fenced_client", "DEBUG",
       "Member {member_info} with epoch {epoch} got fenced but it already left the group, so it "
       "won't attempt to rejoin."),
    _a("A-FENCED-STATE-CHANGED", "member_fenced_client", "DEBUG",
       "Fenced member onPartitionsLost callback completed but the state has already changed to "
       "{state}, so the member won't rejoin the group"),
    _a("A-FATAL", "member_fatal", "ERROR",
       "Member {member_info} with epoch {epoch} transitioned to fatal state"),
    _a("A-JOIN-FATAL", "join_skipped", "WARN",
       "No action taken to join the group with the updated subscription because the member is "
       "in FATAL state"),
    _a("A-RELEASE", "leave_started", "INFO",
       "Member {member} is triggering callbacks to release assignment {partitions} and leave "
       "group"),
    _a("A-RELEASED", "leave_callbacks_done", "INFO",
       "Member {member_info} completed callback to release assignment. It will proceed to clear "
       "its assignment and send a leave group heartbeat"),
    _a("A-LEAVE-IN-PROGRESS", "leave_started", "DEBUG",
       "Leave group operation already in progress for member {member_info}"),
    _a("A-LEAVE-FATAL", "leave_skipped", "WARN",
       "Member {member_info} with epoch {epoch} won't send leave group request because it is in "
       "FATAL state"),
    _a("A-LEAVE-ALREADY-OUT", "leave_skipped", "WARN",
       "Member {member_info} won't send leave group request because it is already out of the "
       "group."),
    _a("A-LEAVE-HB", "leave_sent", "DEBUG",
       "Member {member_info} with epoch {epoch} generated the heartbeat to leave the group."),
    _a("A-LEAVE-SKIPPED", "leave_skipped", "WARN",
       "Heartbeat to leave group cannot be sent (most probably due to coordinator not "
       "known/available). Member {member_info} with epoch {epoch} will transition to {state}."),
    _a("A-STALE-LEAVE", "leave_sent", "DEBUG",
       "Member {member_info} with epoch {epoch} generated the heartbeat to leave due to expired "
       "poll timer. It will remain stale (no heartbeat) until it rejoins the group on the next "
       "consumer poll."),
    _a("A-STALE-RELEASED", "member_stale", "DEBUG",
       "Member {member_info} sent leave group heartbeat and released its assignment. It will "
       "remain in {state} state until the poll timer is reset, and it will then rejoin the "
       "group"),
    _a("A-STALE-REJOIN-DEBUG", "member_stale_rejoin", "DEBUG",
       "Expired poll timer has been reset so stale member {member_info} will rejoin the group "
       "when it completes releasing its previous assignment."),
    # ConsumerHeartbeatRequestManager (AbstractHeartbeatRequestManager's lines, and logInfo's
    # "{message} in {backoff}ms: {errorMessage}")
    _a("A-POLL-TIMEOUT", "poll_timeout", "WARN",
       "Consumer poll timeout has expired. This means the time between subsequent calls to "
       "poll() was longer than the configured max.poll.interval.ms, which typically implies "
       "that the poll loop is spending too much time processing messages. You can address "
       "this either by increasing max.poll.interval.ms or by reducing the maximum size of "
       "batches returned in poll() with max.poll.records.", "heartbeat_manager"),
    _a("A-STALE-REJOIN", "member_stale_rejoin", "WARN",
       "Time between subsequent calls to poll() was longer than the configured "
       "max.poll.interval.ms, exceeded approximately by {ms} ms. Member {member_info} will "
       "rejoin the group now.", "heartbeat_manager"),
    _a("A-HB-OK", "heartbeat_succeeded", "DEBUG", _HB + " responded successfully: {response}",
       "heartbeat_manager"),
    _a("A-HB-RETRIABLE", "heartbeat_failed", "DEBUG",
       _HB + " failed because of the retriable exception. Will retry in {ms} ms: {message}",
       "heartbeat_manager"),
    _a("A-HB-NOT-COORD", "heartbeat_failed_coordinator", "INFO",
       _HB + " failed because the group coordinator {node} is incorrect. Will attempt to find "
       "the coordinator again and retry in {ms}ms: {message}", "heartbeat_manager"),
    _a("A-HB-COORD-NA", "heartbeat_failed_coordinator", "INFO",
       _HB + " failed because the group coordinator {node} is not available. Will attempt to "
       "find the coordinator again and retry in {ms}ms: {message}", "heartbeat_manager"),
    _a("A-HB-LOADING", "heartbeat_failed_coordinator", "INFO",
       _HB + " failed because the group coordinator {node} is still loading. Will retry in "
       "{ms}ms: {message}", "heartbeat_manager"),
    _a("A-HB-AUTH", "heartbeat_failed_fatal", "ERROR",
       _HB + " failed due to group authorization failure: {message}", "heartbeat_manager"),
    _a("A-HB-FATAL", "heartbeat_failed_fatal", "ERROR",
       _HB + " failed due to {error}: {message}", "heartbeat_manager"),
    _a("A-HB-UNEXPECTED", "heartbeat_failed_fatal", "ERROR",
       _HB + " failed due to unexpected error {error}: {message}", "heartbeat_manager"),
    _a("A-HB-FENCED", "heartbeat_failed", "INFO",
       _HB + " failed for member {member} because epoch {epoch} is fenced. in {ms}ms: "
       "{message}", "heartbeat_manager"),
    _a("A-HB-UNKNOWN", "heartbeat_failed_unknown_member", "INFO",
       _HB + " failed because member {member} is unknown. in {ms}ms: {message}",
       "heartbeat_manager"),
    _a("A-HB-UNRELEASED", "heartbeat_failed_fatal", "ERROR",
       _HB + " failed due to unreleased instance id {instance}: {message}", "heartbeat_manager"),
    _a("A-HB-FENCED-INSTANCE", "heartbeat_failed_fatal", "ERROR",
       _HB + " failed due to fenced instance id {instance}: {message}. This is expected in the "
       "case that the member was removed from the group by an admin client, and another member "
       "joined using the same group instance id.", "heartbeat_manager"),
    # CommitRequestManager
    _a("A-COMMIT-STALE", "offset_commit_failed", "ERROR",
       "OffsetCommit failed for member {member} with stale member epoch error. Last epoch "
       "sent: {epoch}", "commit_manager"),
    _a("A-COMMIT-UNKNOWN", "offset_commit_failed", "ERROR", "OffsetCommit failed with {error}",
       "commit_manager"),
    _a("A-AUTOCOMMIT-FAILED", "offset_commit_failed", "DEBUG",
       "Asynchronous auto-commit of offsets {offsets} failed: {message}", "commit_manager"),
]

TEMPLATES: dict[str, LogTemplate] = {}
for _entry in (_ENTRIES + _GROUP_ENTRIES + _CLIENT_ENTRIES + _KAFKA_PYTHON_ENTRIES
               + _CENTRAL_ENTRIES + _ZOOKEEPER_ENTRIES + _NETWORK_ENTRIES
               + _ASYNC_CLIENT_ENTRIES):
    if _entry.id in TEMPLATES:
        raise ValueError(f"duplicate log template id {_entry.id}")
    TEMPLATES[_entry.id] = _entry


# ids of the templates with continuation lines (`LogTemplate.more`)
CONTINUED: frozenset[str] = frozenset(t.id for t in TEMPLATES.values() if t.more)


def template(template_id: str) -> LogTemplate:
    try:
        return TEMPLATES[template_id]
    except KeyError:
        raise KeyError(f"no log template {template_id!r}; known ids: "
                       f"{', '.join(sorted(TEMPLATES))}") from None


# KIP-848 consumer groups (GroupMetadataManager's consumerGroup* paths; "[GroupId {}]" is in the
# message, not a LogContext prefix). Kafka's own slips are kept: "is is owned", and the fence
# reason ends with a period before the template's own ("expired..").
_CONSUMER_GROUP_ENTRIES = [
    _t("CG-MEMBER-JOINS", "member_joined", "group_manager", "INFO", "context",
       "[GroupId {group}] Member {member} joins the consumer group using the {protocol} "
       "protocol."),
    _t("CG-STATIC-JOINS", "member_joined", "group_manager", "INFO", "context",
       "[GroupId {group}] Static member {member} with instance id {instance} joins the consumer "
       "group using the {protocol} protocol."),
    _t("CG-STATIC-REJOINS", "static_member_replaced", "group_manager", "INFO",
       "context",
       "[GroupId {group}] Static member with instance id {instance} re-joins the consumer group "
       "using the {protocol} protocol. Created a new member {member} to replace the existing "
       "member {old_member}."),
    _t("CG-INSTANCE-UNRELEASED", "static_member_rejected", "group_manager", "INFO",
       "context",
       "[GroupId {group}] Static member {member} with instance id {instance} cannot join the "
       "group because the instance id is is owned by member {owner}."),
    _t("CG-INSTANCE-FENCED", "static_member_fenced", "group_manager", "INFO", "context",
       "[GroupId {group}] Static member {member} with instance id {instance} is fenced by "
       "existing member {owner}."),
    _t("CG-SUBSCRIBED-TOPICS", "member_subscription_updated", "group_manager", "DEBUG",
       "context",
       "[GroupId {group}] Member {member} updated its subscribed topics to: {topics}."),
    _t("CG-SUBSCRIPTION-METADATA", "subscription_metadata_computed", "group_manager",
       "DEBUG", "context",
       "[GroupId {group}] Computed new subscription metadata: {metadata}."),
    _t("CG-EPOCH-BUMPED", "group_epoch_bumped", "group_manager", "INFO", "context",
       "[GroupId {group}] Bumped group epoch to {epoch}."),
    _t("CG-TARGET-COMPUTED", "target_assignment_computed", "group_manager", "INFO",
       "context",
       "[GroupId {group}] Computed a new target assignment for epoch {epoch} with '{assignor}' "
       "assignor in {ms}ms."),
    _t("CG-TARGET-COMPUTED-DEBUG", "target_assignment_computed", "group_manager",
       "DEBUG", "context",
       "[GroupId {group}] Computed a new target assignment for epoch {epoch} with '{assignor}' "
       "assignor in {ms}ms: {assignment}."),
    _t("CG-TARGET-FAILED", "target_assignment_failed", "group_manager", "ERROR",
       "context",
       "[GroupId {group}] Failed to compute a new target assignment for epoch {epoch}: "
       "{error}."),
    _t("CG-ASSIGNMENT-STATE", "member_assignment_updated", "group_manager", "DEBUG", "context",
       "[GroupId {group}] Member {member} new assignment state: epoch={epoch}, "
       "previousEpoch={previous_epoch}, state={state}, assignedPartitions={assigned} and "
       "revokedPartitions={revoked}."),
    _t("CG-MEMBER-LEFT", "member_left", "group_manager", "INFO", "context",
       "[GroupId {group}] Member {member} left the consumer group."),
    _t("CG-STATIC-TEMP-LEFT", "member_left", "group_manager",
       "INFO", "context",
       "[GroupId {group}] Static Member {member} with instance id {instance} temporarily left "
       "the consumer group."),
    _t("CG-STATIC-LEFT", "member_left", "group_manager", "INFO", "context",
       "[GroupId {group}] Static Member {member} with instance id {instance} left the consumer "
       "group."),
    _t("CG-FENCED", "member_fenced", "group_manager", "INFO", "context",
       "[GroupId {group}] Member {member} fenced from the group because {reason}."),
    _t("CG-FENCE-NO-GROUP", "fence_skipped", "group_manager", "DEBUG", "context",
       "[GroupId {group}] Could not fence {member} because the group does not exist."),
    _t("CG-FENCE-NO-MEMBER", "fence_skipped", "group_manager", "DEBUG", "context",
       "[GroupId {group}] Could not fence {member} because the member does not exist."),
    _t("CG-REBALANCE-TIMEOUT", "member_fenced", "group_manager", "INFO", "context",
       "[GroupId {group}] Member {member} fenced from the group because it failed to transition "
       "from epoch {epoch} within {ms}ms."),
    _t("CG-REBALANCE-TIMEOUT-IGNORED", "rebalance_timeout_ignored", "group_manager",
       "DEBUG", "context",
       "[GroupId {group}] Ignoring rebalance timeout for {member} because the member left the "
       "epoch {epoch}."),
    _t("CG-LOADED", "group_loaded", "group_manager", "INFO", "context",
       "Loaded consumer group {group} with {members} members."),
    _t("CG-LOADED-MEMBER", "member_loaded", "group_manager", "DEBUG", "context",
       "Loaded member {member} in consumer group {group}."),
    _t("CG-UNLOADED", "group_unloaded", "group_manager", "INFO", "context",
       "[GroupId={group}] Unloaded group metadata for group epoch {epoch}."),
]
# The online migration between classic and consumer groups, and classic-protocol members of a
# consumer group (GroupMetadataManager: validateOnlineUpgrade, convertToConsumerGroup,
# validateOnlineDowngrade*, classicGroupJoinToConsumerGroup, classicGroupLeaveToConsumerGroup).
# The downgrade's rebalance is G-REBAL with the reason "Downgrade group {group} from consumer to
# classic."; the classic members' join and sync timeouts are CG-FENCED with their own reasons.
_MIGRATION_ENTRIES = [
    _t("CG-UPGRADE-DISABLED", "upgrade_refused", "group_manager", "INFO", "context",
       "Cannot upgrade classic group {group} to consumer group because the online upgrade is "
       "disabled."),
    _t("CG-UPGRADE-NOT-CONSUMER", "upgrade_refused", "group_manager", "INFO", "context",
       "Cannot upgrade classic group {group} to consumer group because the group does not use "
       "the consumer embedded protocol."),
    _t("CG-UPGRADE-TOO-BIG", "upgrade_refused", "group_manager", "INFO", "context",
       "Cannot upgrade classic group {group} to consumer group because the group size exceeds "
       "the consumer group maximum size."),
    _t("CG-UPGRADE-MALFORMED", "upgrade_refused", "group_manager", "WARN", "context",
       "Cannot upgrade the classic group {group} to consumer group because the embedded "
       "consumer protocol is malformed: {error}."),
    _t("CG-DOWNGRADE-EMPTY", "downgrade_skipped", "group_manager", "DEBUG", "context",
       "Skip downgrading the consumer group {group} to classic group because it's empty."),
    _t("CG-DOWNGRADE-DISABLED", "downgrade_refused", "group_manager", "INFO", "context",
       "Cannot downgrade consumer group {group} to classic group because the online downgrade "
       "is disabled."),
    _t("CG-DOWNGRADE-TOO-BIG", "downgrade_refused", "group_manager", "INFO", "context",
       "Cannot downgrade consumer group {group} to classic group because its group size is "
       "greater than classic group max size."),
    _t("CG-CLASSIC-MEMBER-ID-REQUIRED", "member_id_required", "group_manager", "INFO",
       "context",
       "[GroupId {group}] Dynamic member with unknown member id joins the consumer group. "
       "Created a new member id {member} and requesting the member to rejoin with this id."),
    _t("CG-CLASSIC-LEFT", "member_left", "group_manager", "INFO", "context",
       "[Group {group}] Dynamic Member {member} has left group through explicit `LeaveGroup` "
       "request; client reason: {reason}"),
    _t("CG-CLASSIC-STATIC-LEFT", "member_left", "group_manager", "INFO", "context",
       "[Group {group}] Static Member {member} with instance id {instance} has left group "
       "through explicit `LeaveGroup` request; client reason: {reason}"),
    _t("CG-SUBSCRIPTION-METADATA-INFO", "subscription_metadata_computed", "group_manager",
       "INFO", "context",
       "[GroupId {group}] Computed new subscription metadata: {metadata}."),
]
for _entry in _CONSUMER_GROUP_ENTRIES + _MIGRATION_ENTRIES:
    if _entry.id in TEMPLATES:
        raise ValueError(f"duplicate log template id {_entry.id}")
    TEMPLATES[_entry.id] = _entry
