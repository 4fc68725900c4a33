"""The member side of KIP-848's consumer group protocol (`group.protocol=consumer`): Kafka's
`MemberState`, `AbstractMembershipManager` and `ConsumerMembershipManager`.

The broker computes every member's target assignment; the member only reconciles towards it:
it revokes what it must give up (committing first when auto-commit is on, then
`onPartitionsRevoked`), takes what it is given (`onPartitionsAssigned`), and acknowledges with
its next heartbeat, which carries the partitions it now owns. There is no group-wide barrier:
a partition moves once its old owner has acknowledged the revocation, while every member keeps
consuming everything else.

The manager holds the state and the assignments and decides; it never sends anything itself.
Its `host` (the `AsyncConsumer`) sends heartbeats and commits, runs the rebalance listener's
callbacks on the application thread (the next `poll()`), and tells the manager when they are
done, as Java's `AsyncKafkaConsumer` does through its background and application event queues.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from ..states import StateTable
from ..topic import TopicPartition

if TYPE_CHECKING:
    from ..group.api import ConsumerGroupHeartbeatResponse

__all__ = ["MemberState", "MEMBER_STATES", "LocalAssignment", "ConsumerMembershipManager",
           "LEAVE_GROUP_MEMBER_EPOCH", "LEAVE_GROUP_STATIC_MEMBER_EPOCH",
           "tp_list"]

# ConsumerGroupHeartbeatRequest.LEAVE_GROUP_MEMBER_EPOCH / LEAVE_GROUP_STATIC_MEMBER_EPOCH
LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2


class MemberState(Enum):
    """Java's `consumer.internals.MemberState` (the consumer group protocol's member)."""

    UNSUBSCRIBED = "UNSUBSCRIBED"
    JOINING = "JOINING"
    RECONCILING = "RECONCILING"
    ACKNOWLEDGING = "ACKNOWLEDGING"
    STABLE = "STABLE"
    FENCED = "FENCED"
    PREPARE_LEAVING = "PREPARE_LEAVING"
    LEAVING = "LEAVING"
    FATAL = "FATAL"
    STALE = "STALE"

    def __str__(self) -> str:
        return self.name


_UNSUB, _JOIN, _REC, _ACK, _STABLE, _FENCED, _PREP, _LEAVING, _FATAL, _STALE = MemberState

# MemberState's static block: each state's previousValidStates. "fenced": a heartbeat answered
# FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID; "fatal error": one the member cannot recover from
# (GROUP_MAX_SIZE_REACHED, UNSUPPORTED_ASSIGNOR, ...); "close()": close() or unsubscribe().
MEMBER_STATES: StateTable[MemberState] = StateTable(
    "ConsumerMembershipManager",
    MemberState,
    valid_previous={
        _STABLE: (_JOIN, _ACK, _REC),
        _REC: (_STABLE, _JOIN, _ACK, _REC),
        _ACK: (_REC,),
        _FATAL: (_JOIN, _STABLE, _REC, _ACK, _PREP, _LEAVING, _UNSUB),
        _FENCED: (_JOIN, _STABLE, _REC, _ACK, _PREP, _LEAVING),
        _JOIN: (_FENCED, _UNSUB, _STALE),
        _PREP: (_JOIN, _STABLE, _REC, _ACK, _UNSUB),
        _LEAVING: (_PREP,),
        _UNSUB: (_PREP, _LEAVING, _FENCED),
        _STALE: (_LEAVING,),
    },
    triggers={
        (_JOIN, _STABLE): "joined with an empty assignment",
        (_ACK, _STABLE): "acknowledging heartbeat sent, nothing more to reconcile",
        (_REC, _STABLE): "target assignment equals the current one again",
        (_STABLE, _REC): "new target assignment received",
        (_JOIN, _REC): "first assignment received",
        (_ACK, _REC): "heartbeat sent, a newer assignment is waiting",
        (_REC, _REC): "newer target assignment received",
        (_REC, _ACK): "revoke and assign callbacks done",
        (_JOIN, _FATAL): "fatal error",
        (_STABLE, _FATAL): "fatal error",
        (_REC, _FATAL): "fatal error",
        (_ACK, _FATAL): "fatal error",
        (_PREP, _FATAL): "fatal error",
        (_LEAVING, _FATAL): "fatal error",
        (_UNSUB, _FATAL): "fatal error",
        (_JOIN, _FENCED): "fenced",
        (_STABLE, _FENCED): "fenced",
        (_REC, _FENCED): "fenced",
        (_ACK, _FENCED): "fenced",
        (_PREP, _FENCED): "fenced",
        (_LEAVING, _FENCED): "fenced",
        (_FENCED, _JOIN): "onPartitionsLost done: rejoin with epoch 0",
        (_UNSUB, _JOIN): "subscribe(): join with epoch 0",
        (_STALE, _JOIN): "poll() again after the poll timeout",
        (_JOIN, _PREP): "close()",
        (_STABLE, _PREP): "close()",
        (_REC, _PREP): "close()",
        (_ACK, _PREP): "close()",
        (_UNSUB, _PREP): "close()",
        (_PREP, _LEAVING): "callbacks done: next heartbeat leaves (epoch -1 or -2)",
        (_PREP, _UNSUB): "fenced while preparing to leave",
        (_LEAVING, _UNSUB): "leave heartbeat sent (or no coordinator to send it to)",
        (_FENCED, _UNSUB): "close() while fenced",
        (_LEAVING, _STALE): "leave heartbeat sent after the poll timeout",
    },
    initial=_UNSUB,
)

# MemberState.canHandleNewAssignment: the states RECONCILING may be entered from
_CAN_HANDLE_ASSIGNMENT = frozenset(MEMBER_STATES.valid_previous[_REC])
_NOT_IN_GROUP = frozenset((_UNSUB, _FENCED, _FATAL, _STALE))
_SKIP_HEARTBEAT = _NOT_IN_GROUP
_HEARTBEAT_NOW = frozenset((_ACK, _LEAVING, _JOIN))

Assignment = Mapping[str, frozenset[int]]  # topic id -> partitions


@dataclass(frozen=True)
class LocalAssignment:
    """`AbstractMembershipManager.LocalAssignment`: an assignment by topic id with a local epoch
    that grows each time the target changes (so an acknowledgement is resent even when the
    partitions are the same). `NONE` (epoch -1) before any."""

    local_epoch: int
    partitions: Assignment = field(default_factory=dict)

    def is_none(self) -> bool:
        return self.local_epoch == -1

    def update_with(self, assignment: Assignment) -> LocalAssignment | None:
        """A new LocalAssignment when `assignment` differs (`LocalAssignment.updateWith`)."""
        if not self.is_none() and dict(self.partitions) == dict(assignment):
            return None
        return LocalAssignment(self.local_epoch + 1, dict(assignment))


NONE_ASSIGNMENT = LocalAssignment(-1)


def tp_list(tps: Any) -> str:
    """A Java `SortedSet<TopicPartition>`'s toString: [t-0, t-1]."""
    return "[" + ", ".join(str(tp) for tp in sorted(tps)) + "]"


class ConsumerMembershipManager:
    """Kafka's `ConsumerMembershipManager`: the member's state, epoch and assignments.

    `host` provides what the manager asks of the consumer (see `AsyncConsumer`):
    `log_line(id, **fields)`, `owned` (the partitions the application has), `resolve(topic id)` ->
    topic name or None, `commit_before_revocation(done)`, `run_callbacks(fn)` (on the
    application thread), `revoke(tps)`, `assign(tps)`, `lose(tps)`, `on_membership_change()`
    (wake the heartbeat manager) and `group_instance_id`."""

    def __init__(self, host: Any, group_id: str, group_instance_id: str | None,
                 server_assignor: str | None, rebalance_timeout_ms: int,
                 on_transition: Callable[[MemberState, MemberState], None] | None = None
                 ) -> None:
        self.host = host
        self._log = host.log_line
        self.group_id = group_id
        self.group_instance_id = group_instance_id
        self.server_assignor = server_assignor
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.state = MemberState.UNSUBSCRIBED
        self.member_id = ""
        self.member_epoch = 0
        self.current_assignment = NONE_ASSIGNMENT
        self.target_assignment = NONE_ASSIGNMENT
        self.reconciliation_in_progress = False
        self.rejoined_while_reconciling = False
        self.poll_timer_expired = False
        self.leave_in_progress = False
        self.subscription_updated = False
        self.stale_release_done = True
        self._on_transition = on_transition
        # every (member id, epoch) this member took, in order (for views and invariants)
        self.epochs: list[tuple[str, int]] = []

    # -- state -------------------------------------------------------------------------------

    def member_id_for_log(self) -> str:
        """`memberIdInfoForLog`."""
        return self.member_id or "<no ID>"

    def transition_to(self, new: MemberState) -> None:
        """`transitionTo`: Kafka's table, one INFO line per transition."""
        old = self.state
        if new is not old:
            MEMBER_STATES.check(old, new)
        self._log("A-TRANSITION", member_info=self.member_id_for_log(), epoch=self.member_epoch,
                      from_state=old.name, to_state=new.name)
        self.state = new
        if self._on_transition is not None:
            self._on_transition(old, new)

    def update_member_epoch(self, epoch: int) -> None:
        if epoch != self.member_epoch:
            self.member_epoch = epoch
            if epoch > 0:
                self.epochs.append((self.member_id, epoch))

    def reset_epoch(self) -> None:
        self.update_member_epoch(0)

    def is_not_in_group(self) -> bool:
        return self.state in _NOT_IN_GROUP

    def should_skip_heartbeat(self) -> bool:
        return self.state in _SKIP_HEARTBEAT

    def should_heartbeat_now(self) -> bool:
        return self.state in _HEARTBEAT_NOW

    def is_leaving_group(self) -> bool:
        return self.state is _PREP or self.state is _LEAVING

    def leave_group_epoch(self) -> int:
        """`leaveGroupEpoch`: a static member leaves for a while (-2), a dynamic one for good."""
        return (LEAVE_GROUP_STATIC_MEMBER_EPOCH if self.group_instance_id is not None
                else LEAVE_GROUP_MEMBER_EPOCH)

    # -- subscribe, poll -----------------------------------------------------------------------

    def on_subscription_updated(self) -> None:
        self.subscription_updated = True

    def on_consumer_poll(self) -> None:
        """`onConsumerPoll`: a new subscription joins on the first poll after it."""
        if self.subscription_updated and self.state is _UNSUB:
            self.subscription_updated = False
            self.transition_to_joining()
        elif self.subscription_updated:
            self.subscription_updated = False

    def transition_to_joining(self) -> None:
        if self.state is _FATAL:
            self._log("A-JOIN-FATAL")
            return
        if self.reconciliation_in_progress:
            self.rejoined_while_reconciling = True
        self.reset_epoch()
        self.transition_to(_JOIN)
        self.host.on_membership_change()

    # -- heartbeat results ---------------------------------------------------------------------

    def on_heartbeat_success(self, response: ConsumerGroupHeartbeatResponse) -> None:
        """`ConsumerMembershipManager.onHeartbeatSuccess`."""
        state = self.state
        if state is _LEAVING:
            self._log("A-HB-IGNORED-LEAVING", member=self.member_id,
                          epoch=self.member_epoch)
            return
        if state is _UNSUB and self._maybe_complete_leave():
            self._log("A-LEFT", member=self.member_id, epoch=self.member_epoch)
            return
        if self.is_not_in_group():
            self._log("A-HB-IGNORED", member=self.member_id, state=state.name)
            return
        if response.member_id is not None:
            self.member_id = response.member_id
        self.update_member_epoch(response.member_epoch)
        assignment = response.assignment
        if assignment is None:
            return
        if state not in _CAN_HANDLE_ASSIGNMENT:
            self._log("A-ASSIGNMENT-IGNORED", assignment=assignment, state=state.name)
            return
        self.process_assignment_received(
            {t.topic_id: frozenset(t.partitions) for t in assignment.topic_partitions})

    def on_heartbeat_failure(self) -> None:
        """`onHeartbeatFailure`: a leave heartbeat is sent once; its failure ends the leave."""
        if self.state is _UNSUB and self._maybe_complete_leave():
            self._log("A-LEAVE-FAILED", member_info=self.member_id_for_log(),
                          epoch=self.member_epoch)

    def _maybe_complete_leave(self) -> bool:
        if self.leave_in_progress:
            self.leave_in_progress = False
            return True
        return False

    def process_assignment_received(self, assignment: Assignment) -> None:
        updated = self.target_assignment.update_with(assignment)
        if updated is not None:
            self.target_assignment = updated
        if not self.target_reconciled():
            self.transition_to(_REC)
            self.maybe_reconcile()
        elif self.state is _REC or self.state is _JOIN:
            self.transition_to(_STABLE)

    def target_reconciled(self) -> bool:
        return self.current_assignment == self.target_assignment

    def on_heartbeat_request_generated(self) -> None:
        """`onHeartbeatRequestGenerated`: an acknowledgement went out; a leave heartbeat too."""
        state = self.state
        if state is _ACK:
            if self.target_reconciled():
                self.transition_to(_STABLE)
            else:
                self._log("A-ACK-RECONCILE", member_info=self.member_id_for_log(),
                              epoch=self.member_epoch)
                self.transition_to(_REC)
                self.maybe_reconcile()
        elif state is _LEAVING:
            if self.poll_timer_expired:
                self._log("A-STALE-LEAVE", member_info=self.member_id_for_log(),
                              epoch=self.member_epoch)
                self._transition_to_stale()
            else:
                self._log("A-LEAVE-HB", member_info=self.member_id_for_log(),
                              epoch=self.member_epoch)
                self.transition_to(_UNSUB)

    def on_heartbeat_request_skipped(self) -> None:
        if self.state is _LEAVING:
            self._log("A-LEAVE-SKIPPED", member_info=self.member_id_for_log(),
                          epoch=self.member_epoch, state=_UNSUB.name)
            self.transition_to(_UNSUB)
            self._maybe_complete_leave()

    # -- fenced, fatal ------------------------------------------------------------------------

    def transition_to_fenced(self) -> None:
        state = self.state
        if state is _PREP:
            self._log("A-FENCED-PREPARE-LEAVING", member_info=self.member_id_for_log(),
                          epoch=self.member_epoch)
            self.transition_to_sending_leave_group(False)
            self.transition_to(_UNSUB)
            self._maybe_complete_leave()
            return
        if state is _LEAVING:
            self._log("A-FENCED-LEAVING", member_info=self.member_id_for_log(),
                          epoch=self.member_epoch)
            self.transition_to(_UNSUB)
            self._maybe_complete_leave()
            return
        if state is _UNSUB:
            self._log("A-FENCED-LEFT", member_info=self.member_id_for_log(),
                          epoch=self.member_epoch)
            return
        self.transition_to(_FENCED)
        self.reset_epoch()
        self._log("A-FENCED", member_info=self.member_id_for_log(), epoch=self.member_epoch,
                      state=_FENCED.name)

        def released() -> None:
            self.clear_assignment()
            if self.state is _FENCED:
                self.transition_to_joining()
            else:
                self._log("A-FENCED-STATE-CHANGED", state=self.state.name)
        self.host.run_callbacks(lambda: self.host.lose(set(self.host.owned)), released)

    def transition_to_fatal(self) -> None:
        previous = self.state
        self.transition_to(_FATAL)
        self._log("A-FATAL", member_info=self.member_id_for_log(), epoch=self.member_epoch)
        if previous is _UNSUB:
            return
        if previous is _LEAVING or previous is _PREP:
            self._maybe_complete_leave()
            return
        self.host.run_callbacks(lambda: self.host.lose(set(self.host.owned)),
                                self.clear_assignment)

    def clear_assignment(self) -> None:
        self.current_assignment = NONE_ASSIGNMENT
        self.target_assignment = NONE_ASSIGNMENT

    # -- leave -------------------------------------------------------------------------------

    def leave_group(self) -> None:
        """`leaveGroup`: release the assignment (onPartitionsRevoked, or onPartitionsLost when
        not in the group), then send the leave heartbeat."""
        if self.is_not_in_group():
            if self.state is _FENCED:
                self.clear_assignment()
                self.transition_to(_UNSUB)
            return
        if self.is_leaving_group():
            self._log("A-LEAVE-IN-PROGRESS", member_info=self.member_id_for_log())
            return
        self.transition_to(_PREP)
        self.leave_in_progress = True
        dropped = set(self.host.owned)
        self._log("A-RELEASE", member=self.member_id, partitions=tp_list(dropped))

        def release() -> None:
            if dropped:
                if self.member_epoch > 0:
                    self.host.revoke(dropped)
                else:
                    self.host.lose(dropped)

        def released() -> None:
            self._log("A-RELEASED", member_info=self.member_id_for_log())
            self.clear_assignment()
            self.transition_to_sending_leave_group(False)
        self.host.run_callbacks(release, released)

    def transition_to_sending_leave_group(self, due_to_expired_poll_timer: bool) -> None:
        if self.state is _FATAL:
            self._log("A-LEAVE-FATAL", member_info=self.member_id_for_log(),
                          epoch=self.member_epoch)
            return
        if self.state is _UNSUB:
            self._log("A-LEAVE-ALREADY-OUT", member_info=self.member_id_for_log())
            return
        if due_to_expired_poll_timer:
            self.poll_timer_expired = True
            self.transition_to(_PREP)
        self.member_epoch = self.leave_group_epoch()
        self.current_assignment = NONE_ASSIGNMENT
        self.transition_to(_LEAVING)
        self.host.on_membership_change()

    def _transition_to_stale(self) -> None:
        self.transition_to(_STALE)
        self.stale_release_done = False

        def released() -> None:
            self.clear_assignment()
            self.stale_release_done = True
            self._log("A-STALE-RELEASED", member_info=self.member_id_for_log(),
                          state=_STALE.name)
        self.host.run_callbacks(lambda: self.host.lose(set(self.host.owned)), released)

    def maybe_rejoin_stale_member(self) -> None:
        """`maybeRejoinStaleMember`: poll() again after the poll timer expired."""
        self.poll_timer_expired = False
        if self.state is _STALE:
            self._log("A-STALE-REJOIN-DEBUG", member_info=self.member_id_for_log())
            self.transition_to_joining()

    # -- reconciliation ------------------------------------------------------------------------

    def maybe_reconcile(self) -> None:
        """`maybeReconcile`: commit (auto-commit), then revoke, then assign; acknowledge."""
        if self.target_reconciled() or self.reconciliation_in_progress:
            return
        resolved: dict[str, frozenset[int]] = {}
        for tid, parts in self.target_assignment.partitions.items():
            if self.host.resolve(tid) is not None:
                resolved[tid] = parts
        target = LocalAssignment(self.target_assignment.local_epoch, resolved)
        if not self.current_assignment.is_none() and \
                dict(resolved) == dict(self.current_assignment.partitions):
            self.current_assignment = target
            self.transition_to(_ACK)
            self.host.on_membership_change()
            return
        self.reconciliation_in_progress = True
        self.rejoined_while_reconciling = False
        assigned = {TopicPartition(self.host.resolve(t), p)
                    for t, parts in resolved.items() for p in parts}
        owned = set(self.host.owned)
        added = assigned - owned
        revoked = owned - assigned
        self._log("A-RECONCILING", epoch=target.local_epoch,
                      member_info=self.member_id_for_log(), assigned=tp_list(assigned),
                      owned=tp_list(owned), added=tp_list(added), revoked=tp_list(revoked))

        def committed(error: str | None) -> None:
            if error is not None:
                self._log("A-COMMIT-BEFORE-FAILED")
            if self._maybe_abort():
                return

            def callbacks() -> None:
                if self._maybe_abort():
                    return
                if revoked:
                    self.host.revoke(revoked)
                if self._maybe_abort():
                    return
                self.host.assign(added, assigned)

            def done() -> None:
                if self.reconciliation_in_progress and not self._maybe_abort():
                    self.current_assignment = target
                    self.host.reset_auto_commit_timer()  # signalReconciliationCompleting
                    self.transition_to(_ACK)
                    self.reconciliation_in_progress = False
                    self.rejoined_while_reconciling = False
                    self.host.on_membership_change()
            self.host.run_callbacks(callbacks, done)
        self.host.commit_before_revocation(committed)

    def _maybe_abort(self) -> bool:
        """`maybeAbortReconciliation`."""
        if self.state is not _REC or self.rejoined_while_reconciling:
            reason = ("the member has re-joined the group" if self.rejoined_while_reconciling
                      else f"the member already transitioned out of the reconciling state into "
                           f"{self.state.name}")
            if self.reconciliation_in_progress:
                self._log("A-RECONCILE-ABORTED", reason=reason)
            self.reconciliation_in_progress = False
            self.rejoined_while_reconciling = False
            return True
        return False
