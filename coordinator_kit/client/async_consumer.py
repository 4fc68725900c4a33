"""A `group.protocol=consumer` (KIP-848) consumer on virtual time: Java's `AsyncKafkaConsumer`
with its `ConsumerHeartbeatRequestManager`, `CommitRequestManager` and
`CoordinatorRequestManager`, around a `ConsumerMembershipManager` (`client.membership`).

`Consumer(cluster, config, topics)` builds one of these when `config.group_protocol` is
"consumer", as Kafka's `KafkaConsumer` picks its delegate (`ConsumerDelegateCreator`), so
`Cluster.add_consumer(..., group_protocol="consumer")` and every fault of the cluster (crash,
pause, dropped heartbeats, slow poll, cut off, leave, restart, coordinator moves) work as for a
classic consumer. The classic `Consumer`'s code paths are not touched.

What runs, and where it runs in the Java client:

* the application thread (`poll()` every `processing_ms`): runs the rebalance listener's
  callbacks the background thread queued (revoke, then assign; lost), auto-commits
  asynchronously when due, and consumes the partitions it owns;
* the background thread: finds the coordinator, heartbeats (`ConsumerGroupHeartbeat`) at the
  interval the broker returns, at once when joining, acknowledging or leaving; sends all fields
  when joining (or after an error), and afterwards only what changed (`HeartbeatState`); leaves
  the group when the poll timer (`max.poll.interval.ms`) expires; commits before revoking.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from ..errors import Errors
from ..group.api import (ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse,
                         OffsetCommitRequest, OffsetCommitResponse, OffsetFetchRequest,
                         PartitionData, TopicPartitions)
from ..group.modern.topics import topic_id
from ..topic import TopicPartition
from .consumer import Consumer, ListenerCall, _join_tps
from .member import Generation
from .membership import ConsumerMembershipManager, LocalAssignment, MemberState

__all__ = ["AsyncConsumer", "HEARTBEAT_REQUEST_NAME", "RETRY_BACKOFF_MAX_MS"]

HEARTBEAT_REQUEST_NAME = "ConsumerGroupHeartbeatRequest"  # heartbeatRequestName()
# retry.backoff.max.ms (Kafka's default; the kit's ConsumerConfig does not expose it)
RETRY_BACKOFF_MAX_MS = 1000
# the OffsetCommit version the consumer group protocol needs (member epochs: v9+)
OFFSET_COMMIT_VERSION = 9

_JOINING = MemberState.JOINING
_LEAVING = MemberState.LEAVING
_RECONCILING = MemberState.RECONCILING
_FATAL = MemberState.FATAL
_STALE = MemberState.STALE
_NONE = Errors.NONE
# what ends the membership manager's part in a heartbeat (AbstractHeartbeatRequestManager)
_FATAL_HEARTBEAT = (Errors.INVALID_REQUEST, Errors.GROUP_MAX_SIZE_REACHED,
                    Errors.UNSUPPORTED_ASSIGNOR)
# CommitRequestManager: errors a commit before revocation retries (with the latest epoch)
_COMMIT_RETRIABLE = (Errors.STALE_MEMBER_EPOCH, Errors.COORDINATOR_LOAD_IN_PROGRESS,
                     Errors.NOT_COORDINATOR, Errors.COORDINATOR_NOT_AVAILABLE,
                     Errors.REQUEST_TIMED_OUT, Errors.UNKNOWN_TOPIC_OR_PARTITION)


class _SentFields:
    """`HeartbeatState.SentFields`: what the last heartbeat carried (None: send it again)."""

    __slots__ = ("rebalance_timeout_ms", "topics", "server_assignor", "local_assignment")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.rebalance_timeout_ms = -1
        self.topics: tuple[str, ...] | None = None
        self.server_assignor: str | None = None
        self.local_assignment: LocalAssignment | None = None


class AsyncConsumer(Consumer):
    """A consumer of the consumer group protocol (`group.protocol=consumer`)."""

    def __init__(self, cluster: Any, config: Any, topics: tuple[str, ...], *,
                 processing_ms: int = 100) -> None:
        super().__init__(cluster, config, topics, processing_ms=processing_ms)
        self.state = MemberState.UNSUBSCRIBED  # type: ignore[assignment]
        self.membership = ConsumerMembershipManager(
            self, config.group_id, config.group_instance_id, config.group_remote_assignor,
            config.max_poll_interval_ms, self._on_member_transition)
        self._sent = _SentFields()
        # HeartbeatRequestState: the interval the broker gave (0 until the first answer), when
        # the heartbeat timer expires, the retry backoff after failed attempts
        self.heartbeat_interval_ms = 0
        self._hb_due = 0
        self._hb_attempts = 0
        self._hb_backoff_until = 0
        self._hb_inflight = False
        # rebalance callbacks the background thread queued for the application thread:
        # (callback, continuation)
        self._callbacks: deque[tuple[Callable[[], None], Callable[[], None] | None]] = deque()
        self._callbacks_now = False
        self._names = {topic_id(name): name for name in cluster.topics}
        self.last_epoch_sent_on_commit: int | None = None
        self._find_backoff_until = 0
        self._find_attempts = 0
        self.membership.on_subscription_updated()  # subscribe(topics)

    # -- identity and views --------------------------------------------------------------------

    @property
    def member_id(self) -> str:  # type: ignore[override]
        return self.membership.member_id

    @property
    def member_epoch(self) -> int:
        return self.membership.member_epoch

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out.update(generation=self.member_epoch, member_epoch=self.member_epoch,
                   protocol="consumer")
        return out

    def _on_member_transition(self, old: MemberState, new: MemberState) -> None:
        self.state = new  # type: ignore[assignment]
        m = self.membership
        self.generation = Generation(m.member_epoch, m.member_id, None)
        for callback in self._state_listeners:
            callback(self, old, new)  # type: ignore[arg-type]

    # -- what the membership manager asks of its host ------------------------------------------

    def log_line(self, template_id: str, **fields: Any) -> None:
        self.log.log(template_id, **fields)

    def resolve(self, tid: str) -> str | None:
        return self._names.get(tid)

    def on_membership_change(self) -> None:
        """Wake the heartbeat manager now (a state that heartbeats at once, a new coordinator)."""
        self._arm_hb(self.scheduler.now)

    def run_callbacks(self, callback: Callable[[], None],
                      then: Callable[[], None] | None = None) -> None:
        """Queue a rebalance callback for the application thread (the next poll), then its
        continuation; inside close() they run at once, as close() runs them itself."""
        if self._callbacks_now:
            callback()
            if then is not None:
                then()
            return
        self._callbacks.append((callback, then))

    def revoke(self, partitions: set[TopicPartition]) -> None:
        self._revoke(partitions)

    def lose(self, partitions: set[TopicPartition]) -> None:
        if partitions:
            self._lose(partitions)

    def assign(self, added: set[TopicPartition], assigned: set[TopicPartition]) -> None:
        self.owned |= added
        self.log.log("J-ASSIGNED", partitions=_join_tps(added))
        self._listener("onPartitionsAssigned", added)
        missing = [tp for tp in sorted(added) if tp not in self.positions]
        if missing:
            self._fetch_positions(tuple(missing))

    def reset_auto_commit_timer(self) -> None:
        self.next_auto_commit = self.scheduler.now + self.config.auto_commit_interval_ms

    def _listener(self, callback: str, partitions: set[TopicPartition]) -> None:
        self.listener_calls.append(ListenerCall(self.scheduler.now, callback,
                                                tuple(sorted(partitions)), self.member_epoch))

    # -- lifecycle -----------------------------------------------------------------------------

    def close(self) -> None:
        """`AsyncKafkaConsumer.close`: commit (auto-commit), release the assignment
        (onPartitionsRevoked), send the leave heartbeat (epoch -1; a static member -2)."""
        self._require_alive("close")
        if self.config.enable_auto_commit:
            self._commit(self._consumed_offsets(), auto=True)
        self._callbacks_now = True
        try:
            self._run_callbacks()
            self.membership.leave_group()
        finally:
            self._callbacks_now = False
        if self.membership.state is _LEAVING:
            if self.coordinator is None:
                self.membership.on_heartbeat_request_skipped()
            else:
                self._send_heartbeat()
        self._stop()
        self.closed = True

    def _stop(self) -> None:
        super()._stop()
        self._callbacks.clear()

    # -- the application thread ----------------------------------------------------------------

    def _poll(self) -> None:
        self._poll_handle = None
        now = self.scheduler.now
        if self.crashed or not self.running or now < self.paused_until:
            self._deferred(self._poll)
            return
        m = self.membership
        if self.fatal is None and m.state is not _FATAL:
            expired_by = now - self.last_poll - self.config.max_poll_interval_ms
            self.last_poll = now
            m.on_consumer_poll()
            # the callbacks the background thread queued (a stale member's onPartitionsLost
            # among them: it rejoins once its assignment is released)
            self._run_callbacks()
            if m.state is _STALE or m.poll_timer_expired:
                # the heartbeat manager's resetPollTimer
                self.log.log("A-STALE-REJOIN", ms=expired_by, member_info=m.member_id)
                m.maybe_rejoin_stale_member()
            if m.state is _RECONCILING:
                m.maybe_reconcile()
            if self.coordinator is None:
                self._find_coordinator()
            else:
                self._maybe_auto_commit_async()
            self._consume()
        else:
            self.last_poll = now
        self._poll_handle = self.scheduler.call_later(self.processing_ms or 1,
                                                      self._poll_callback, name=self._poll_name)

    def _run_callbacks(self) -> None:
        callbacks = self._callbacks
        while callbacks:
            callback, then = callbacks.popleft()
            callback()
            if then is not None:
                then()

    def _consume(self) -> None:
        if not self.owned:
            return
        budget = self.config.max_poll_records
        positions = self.positions
        end_offset = self.cluster.end_offset
        for tp in sorted(self.owned):
            pos = positions.get(tp)
            if pos is None:
                continue
            take = min(end_offset(tp) - pos, budget)
            if take > 0:
                positions[tp] = pos + take
                self.consumed += take
                if self.on_records is not None:
                    self.on_records(tp, pos, pos + take)
                budget -= take
            if budget <= 0:
                break

    # -- coordinator (CoordinatorRequestManager) -----------------------------------------------

    def _find_coordinator(self) -> None:
        """FindCoordinator, unless one is in flight or its backoff has not passed since the
        last answer (`CoordinatorRequestManager.poll`: `RequestState.canSendRequest`;
        retry.backoff.ms after an answer, doubling after failures up to retry.backoff.max.ms)."""
        if self.inflight.find or self.scheduler.now < self._find_backoff_until:
            return
        self.inflight.find = True
        self.transport.find_coordinator(self, self.config.group_id, self._on_find)

    def _on_find(self, broker: int | None, error: Errors | None) -> None:
        if self._deferred(self._on_find, broker, error):
            return
        self.inflight.find = False
        self._find_attempts = 0 if error is None else self._find_attempts + 1
        self._find_backoff_until = self.scheduler.now + min(
            self.config.retry_backoff_ms * 2 ** self._find_attempts, RETRY_BACKOFF_MAX_MS)
        if error is None and broker is not None:
            self.coordinator = broker
            self.log.log("A-DISCOVER", node=self.node())
            self.on_membership_change()

    def _coordinator_poll(self) -> None:  # the classic join path; never used here
        self.on_membership_change()

    def mark_coordinator_unknown(self, cause: str, disconnected: bool = False,
                                 error: Errors | None = None) -> None:
        if self.coordinator is not None:
            self.log.log("A-COORD-LOST", node=self.node(), cause=cause)
            self.coordinator = None
            self.inflight.find = False
            self.inflight.fetch = False

    def node_optional(self) -> str:
        """`coordinatorRequestManager.coordinator()` as Java prints it (an Optional<Node>)."""
        return "Optional.empty" if self.coordinator is None else f"Optional[{self.node()}]"

    # -- the heartbeat manager (ConsumerHeartbeatRequestManager) -------------------------------

    def _arm_hb(self, due: int) -> None:
        now = self.scheduler.now
        if due < now:
            due = now
        handle = self._hb_handle
        if handle is not None and not (handle.done or handle.cancelled):
            if handle.when <= due:
                return
            handle.cancel()
        if not self.running or self.crashed:
            return
        self._hb_handle = self.scheduler.call_at(due, self._heartbeat_callback,
                                                 name=self._heartbeat_name)

    def _heartbeat_tick(self) -> None:
        """`AbstractHeartbeatRequestManager.poll`."""
        self._hb_handle = None
        now = self.scheduler.now
        if self.crashed or not self.running or now < self.paused_until:
            self._deferred(self._heartbeat_tick)
            return
        m = self.membership
        if self.coordinator is None or m.should_skip_heartbeat():
            m.on_heartbeat_request_skipped()
            if self.coordinator is None and not m.should_skip_heartbeat() \
                    and m.state is not _FATAL:
                self._find_coordinator()
                self._arm_hb(now + max(self.config.retry_backoff_ms, 1))
            return
        if now - self.last_poll > self.config.max_poll_interval_ms and not m.is_leaving_group():
            self.log.log("A-POLL-TIMEOUT")
            m.transition_to_sending_leave_group(True)
            self._send_heartbeat()
            self._hb_reset()  # heartbeatRequestState.reset(); the response is ignored
            self._sent.reset()
            return
        heartbeat_now = m.state is _LEAVING or (m.should_heartbeat_now()
                                                and not self._hb_inflight)
        if not heartbeat_now and not self._can_send(now):
            if not self._hb_inflight:
                self._arm_hb(self._next_due())
            return
        self._send_heartbeat()

    def _can_send(self, now: int) -> bool:
        return not self._hb_inflight and now >= self._hb_due and now >= self._hb_backoff_until

    def _next_due(self) -> int:
        due = max(self._hb_due, self._hb_backoff_until)
        poll_deadline = self.last_poll + self.config.max_poll_interval_ms + 1
        return min(due, poll_deadline)

    def _hb_reset(self) -> None:
        """`HeartbeatRequestState.reset`: the next heartbeat may go at once."""
        self._hb_due = self.scheduler.now
        self._hb_backoff_until = 0
        self._hb_attempts = 0

    def _hb_failed_attempt(self) -> int:
        """`onFailedAttempt`: exponential backoff from retry.backoff.ms up to
        retry.backoff.max.ms (Kafka adds 20% jitter; the kit keeps it exact: deterministic)."""
        self._hb_attempts += 1
        backoff = min(self.config.retry_backoff_ms * 2 ** (self._hb_attempts - 1),
                      RETRY_BACKOFF_MAX_MS)
        self._hb_backoff_until = self.scheduler.now + backoff
        return backoff

    def _remaining_backoff(self) -> int:
        return max(0, self._hb_backoff_until - self.scheduler.now)

    def build_heartbeat_request(self) -> ConsumerGroupHeartbeatRequest:
        """`HeartbeatState.buildRequestData`: everything when joining, then what changed."""
        m = self.membership
        config = self.config
        sent = self._sent
        send_all = m.state is _JOINING
        rebalance_timeout_ms = -1
        if send_all or sent.rebalance_timeout_ms != config.max_poll_interval_ms:
            rebalance_timeout_ms = sent.rebalance_timeout_ms = config.max_poll_interval_ms
        topics = tuple(sorted(self.topics))
        names = None
        if send_all or sent.topics != topics:
            names = sent.topics = topics
        assignor = None
        remote = config.group_remote_assignor
        if remote is not None and (send_all or sent.server_assignor != remote):
            assignor = sent.server_assignor = remote
        owned = None
        local = m.current_assignment
        if send_all or local != sent.local_assignment:
            owned = tuple(TopicPartitions(t, tuple(sorted(p)))
                          for t, p in sorted(local.partitions.items()))
            sent.local_assignment = local
        return ConsumerGroupHeartbeatRequest(
            config.group_id, m.member_id, m.member_epoch, config.group_instance_id, None,
            rebalance_timeout_ms, names, None, assignor, owned)

    def _send_heartbeat(self) -> None:
        now = self.scheduler.now
        m = self.membership
        request = self.build_heartbeat_request()
        m.on_heartbeat_request_generated()
        self._hb_inflight = True
        self.last_heartbeat_sent = now
        self._hb_due = now + self.heartbeat_interval_ms
        self.transport.send(self, self.coordinator, "ConsumerGroupHeartbeat",
                            lambda svc: svc.consumer_group_heartbeat(self.context, request),
                            lambda r, e: self._on_heartbeat_response(r, e, request),
                            timeout_ms=self.config.request_timeout_ms,
                            drop=self.drop_heartbeats)

    def _on_heartbeat_response(self, response: ConsumerGroupHeartbeatResponse | None,
                               net_error: Errors | None,
                               request: ConsumerGroupHeartbeatRequest) -> None:
        if self._deferred(self._on_heartbeat_response, response, net_error, request):
            return
        self._hb_inflight = False
        m = self.membership
        if response is None:
            # onFailure: a retriable (network) error; the kit's lost request stands for a
            # disconnect too, so the coordinator is looked up again
            self._sent.reset()
            backoff = self._hb_failed_attempt()
            self.log.log("A-HB-RETRIABLE", ms=backoff, message=str(net_error))
            m.on_heartbeat_failure()
            self.mark_coordinator_unknown(str(net_error), True, net_error)
        elif response.error is _NONE:
            now = self.scheduler.now
            self.last_heartbeat_received = now
            if self.log.trace.enabled("DEBUG"):
                self.log.log("A-HB-OK", response=_response_string(response))
            if response.heartbeat_interval_ms > 0:
                self.heartbeat_interval_ms = response.heartbeat_interval_ms
            self._hb_attempts = 0
            self._hb_backoff_until = 0
            self._hb_due = now + self.heartbeat_interval_ms  # resetTimer()
            m.on_heartbeat_success(response)
            self.generation = Generation(m.member_epoch, m.member_id, None)
        else:
            self._on_error_response(response)
        if self.running and not self.crashed:
            self._arm_hb(self._next_due() if not m.should_heartbeat_now()
                         else self.scheduler.now)

    def _on_error_response(self, response: ConsumerGroupHeartbeatResponse) -> None:
        """`AbstractHeartbeatRequestManager.onErrorResponse` and
        `ConsumerHeartbeatRequestManager.handleSpecificError`."""
        m = self.membership
        error = response.error
        message = response.error_message
        self._sent.reset()  # resetHeartbeatState: the next request carries every field
        self._hb_failed_attempt()
        m.on_heartbeat_failure()
        log = self.log
        if error is Errors.NOT_COORDINATOR or error is Errors.COORDINATOR_NOT_AVAILABLE:
            tid = "A-HB-NOT-COORD" if error is Errors.NOT_COORDINATOR else "A-HB-COORD-NA"
            log.log(tid, node=self.node_optional(), ms=self._remaining_backoff(),
                    message=message)
            self.mark_coordinator_unknown(message or error.name, error=error)
            self._hb_reset()
        elif error is Errors.COORDINATOR_LOAD_IN_PROGRESS:
            log.log("A-HB-LOADING", node=self.node_optional(), ms=self._remaining_backoff(),
                    message=message)
        elif error is Errors.GROUP_AUTHORIZATION_FAILED:
            log.log("A-HB-AUTH", message=f"Not authorized to access group: {m.group_id}")
            self._fatal(error)
        elif error in _FATAL_HEARTBEAT:
            log.log("A-HB-FATAL", error=error.name, message=message)
            self._fatal(error)
        elif error is Errors.UNSUPPORTED_VERSION:
            log.log("A-HB-FATAL", error=error.name, message=message)
            self._fatal(error)
        elif error is Errors.FENCED_MEMBER_EPOCH:
            log.log("A-HB-FENCED", member=m.member_id, epoch=m.member_epoch,
                    ms=self._remaining_backoff(), message=message)
            m.transition_to_fenced()
            self._hb_reset()
        elif error is Errors.UNKNOWN_MEMBER_ID:
            log.log("A-HB-UNKNOWN", member=m.member_id, ms=self._remaining_backoff(),
                    message=message)
            m.transition_to_fenced()
            self._hb_reset()
        elif error is Errors.UNRELEASED_INSTANCE_ID:
            log.log("A-HB-UNRELEASED", instance=self.config.group_instance_id,
                    message=message)
            self._fatal(error)
        elif error is Errors.FENCED_INSTANCE_ID:
            log.log("A-HB-FENCED-INSTANCE", instance=self.config.group_instance_id,
                    message=message)
            self._fatal(error)
        else:
            log.log("A-HB-UNEXPECTED", error=error.name, message=message)
            self._fatal(error)

    def _fatal(self, error: Errors) -> None:
        """`handleFatalFailure`: the error reaches the application; no more heartbeats."""
        self.fatal = error
        self.membership.transition_to_fatal()
        self.log.event("consumer_failed", level="ERROR", client=self.name, error=error.name)

    # -- offsets (CommitRequestManager) --------------------------------------------------------

    def _member_info(self) -> tuple[int, str]:
        """The member id and epoch an OffsetCommit carries: -1 and "" while not in the group
        (`CommitRequestManager.onMemberEpochUpdated` with an empty epoch)."""
        m = self.membership
        if m.member_epoch > 0:
            return m.member_epoch, m.member_id
        return -1, ""

    def _consumed_offsets(self) -> dict[TopicPartition, int]:
        owned = self.owned
        return {tp: pos for tp, pos in sorted(self.positions.items()) if tp in owned}

    def _maybe_auto_commit_async(self) -> None:
        """`maybeAutoCommitAsync`: when the interval has passed, and none is in flight."""
        now = self.scheduler.now
        if not self.config.enable_auto_commit or now < self.next_auto_commit \
                or self.inflight.commit:
            return
        self.next_auto_commit = now + self.config.auto_commit_interval_ms
        offsets = self._consumed_offsets()
        if offsets and offsets != {tp: o for tp, o in self.committed.items() if tp in offsets}:
            self._commit(offsets, auto=True)

    def _commit_request(self, offsets: dict[TopicPartition, int]) -> OffsetCommitRequest:
        epoch, member_id = self._member_info()
        self.last_epoch_sent_on_commit = epoch if epoch > 0 else None
        return OffsetCommitRequest(
            self.config.group_id, epoch, member_id,
            {(tp.topic, tp.partition): PartitionData(o) for tp, o in offsets.items()},
            self.config.group_instance_id, version=OFFSET_COMMIT_VERSION)

    def _commit(self, offsets: dict[TopicPartition, int], *, auto: bool) -> None:
        if not offsets or self.coordinator is None:
            return
        request = self._commit_request(offsets)
        self.inflight.commit = True
        self.transport.send(self, self.coordinator, "OffsetCommit",
                            lambda svc: svc.commit_offsets(self.context, request),
                            lambda r, e: self._on_commit(r, e, offsets),
                            timeout_ms=self.config.request_timeout_ms)

    def _commit_error(self, response: OffsetCommitResponse | None,
                      net_error: Errors | None) -> Errors:
        if response is None:
            return net_error or Errors.REQUEST_TIMED_OUT
        if response.error is not _NONE:
            return response.error
        for e in response.errors.values():
            if e is not _NONE:
                return e
        return _NONE

    def _on_commit(self, response: OffsetCommitResponse | None, net_error: Errors | None,
                   offsets: dict[TopicPartition, int]) -> None:
        if self._deferred(self._on_commit, response, net_error, offsets):
            return
        self.inflight.commit = False
        error = self._commit_error(response, net_error)
        if error is _NONE:
            self.committed.update(offsets)
            return
        self._log_commit_error(error)
        shown = "{" + ", ".join(f"{tp}=OffsetAndMetadata{{offset={o}, leaderEpoch=null, "
                                f"metadata=''}}" for tp, o in offsets.items()) + "}"
        self.log.log("A-AUTOCOMMIT-FAILED", offsets=shown, message=error.message)

    def _log_commit_error(self, error: Errors) -> None:
        """OffsetCommitRequestState.onResponse's error lines (and the coordinator's loss)."""
        if error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR,
                     Errors.REQUEST_TIMED_OUT):
            self.mark_coordinator_unknown(error.message, error=error)
        elif error is Errors.UNKNOWN_MEMBER_ID:
            self.log.log("A-COMMIT-UNKNOWN", error=error.name)
        elif error is Errors.STALE_MEMBER_EPOCH:
            last = self.last_epoch_sent_on_commit
            self.log.log("A-COMMIT-STALE", member=self.membership.member_id or "undefined",
                         epoch="undefined" if last is None else last)

    def commit_before_revocation(self, done: Callable[[str | None], None]) -> None:
        """`maybeAutoCommitSyncBeforeRevocation`: commit what was consumed, retrying retriable
        errors (STALE_MEMBER_EPOCH too, with the latest epoch) until the rebalance timeout;
        `done(None)` when committed (or nothing to commit), `done(reason)` when it failed."""
        if not self.config.enable_auto_commit:
            done(None)
            return
        deadline = self.scheduler.now + self.config.max_poll_interval_ms

        def attempt() -> None:
            if self.crashed or not self.running:
                return
            if self._deferred(attempt):
                return
            offsets = self._consumed_offsets()
            if not offsets:
                done(None)
                return
            if self.scheduler.now >= deadline:
                done("org.apache.kafka.common.errors.TimeoutException: Timeout while "
                     "committing offsets before revocation")
                return
            if self.coordinator is None:
                self._find_coordinator()
                self.scheduler.call_later(max(self.config.retry_backoff_ms, 1), attempt,
                                          name=f"commit retry {self.name}")
                return
            request = self._commit_request(offsets)

            def answered(response: OffsetCommitResponse | None, net_error: Errors | None
                         ) -> None:
                if self._deferred(answered, response, net_error):
                    return
                error = self._commit_error(response, net_error)
                if error is _NONE:
                    self.committed.update(offsets)
                    done(None)
                    return
                self._log_commit_error(error)
                if error in _COMMIT_RETRIABLE:
                    self.scheduler.call_later(max(self.config.retry_backoff_ms, 1), attempt,
                                              name=f"commit retry {self.name}")
                else:
                    done(f"{error.value.exception or 'KafkaException'}: {error.message}")
            self.transport.send(self, self.coordinator, "OffsetCommit",
                                lambda svc: svc.commit_offsets(self.context, request),
                                answered, timeout_ms=self.config.request_timeout_ms)
        attempt()

    def _fetch_positions(self, partitions: tuple[TopicPartition, ...]) -> None:
        """OffsetFetch with the member id and epoch (v9), `require_stable` as Java sets it."""
        if self.coordinator is None:
            for tp in partitions:  # fetched when the coordinator is back (next assignment)
                self.positions.pop(tp, None)
            self.scheduler.call_later(max(self.config.retry_backoff_ms, 1),
                                      self._refetch_missing, name=f"fetch retry {self.name}")
            return
        epoch, member_id = self._member_info()
        request = OffsetFetchRequest(self.config.group_id,
                                     tuple((tp.topic, tp.partition) for tp in partitions),
                                     require_stable=True, member_id=member_id or None,
                                     member_epoch=epoch)
        self.inflight.fetch = True
        self.transport.send(self, self.coordinator, "OffsetFetch",
                            lambda svc: svc.fetch_offsets(self.context, request),
                            lambda r, e: self._on_fetch_positions(r, e, partitions),
                            timeout_ms=self.config.request_timeout_ms)

    def _on_fetch_positions(self, response: Any, net_error: Errors | None,
                            partitions: tuple[TopicPartition, ...]) -> None:
        if self._deferred(self._on_fetch_positions, response, net_error, partitions):
            return
        self._on_fetch(response, net_error, partitions)
        if response is None or response.error is not _NONE:
            # retried after the backoff while the partitions are still owned
            self.scheduler.call_later(max(self.config.retry_backoff_ms, 1),
                                      self._refetch_missing, name=f"fetch retry {self.name}")

    def _refetch_missing(self) -> None:
        if self.crashed or not self.running:
            return
        if self._deferred(self._refetch_missing):
            return
        missing = tuple(tp for tp in sorted(self.owned) if tp not in self.positions)
        if missing and not self.inflight.fetch:
            self._fetch_positions(missing)

    def __repr__(self) -> str:
        return (f"AsyncConsumer({self.name!r}, {self.state.name}, "
                f"epoch={self.member_epoch}, owned={len(self.owned)})")


def _response_string(r: ConsumerGroupHeartbeatResponse) -> str:
    """ConsumerGroupHeartbeatResponseData.toString (the fields the kit has)."""
    member = "null" if r.member_id is None else f"'{r.member_id}'"
    if r.assignment is None:
        assignment = "null"
    else:
        parts = ", ".join(f"TopicPartitions(topicId={t.topic_id}, partitions=["
                          f"{', '.join(str(p) for p in t.partitions)}])"
                          for t in r.assignment.topic_partitions)
        assignment = f"Assignment(topicPartitions=[{parts}])"
    message = "null" if r.error_message is None else f"'{r.error_message}'"
    return (f"ConsumerGroupHeartbeatResponseData(throttleTimeMs={r.throttle_time_ms}, "
            f"errorCode={r.error.code}, errorMessage={message}, memberId={member}, "
            f"memberEpoch={r.member_epoch}, heartbeatIntervalMs={r.heartbeat_interval_ms}, "
            f"assignment={assignment})")

