"""One ZooKeeper-era high-level consumer: Kafka 0.8.2.2's `ZookeeperConsumerConnector`.

The consumer coordinates itself through ZooKeeper (docs/eras-zookeeper.md tells the story):

* `createMessageStreams` registers `/consumers/<group>/ids/<consumerId>` (ephemeral), starts the
  `<consumerId>_watcher_executor`, subscribes a child listener on `/consumers/<group>/ids`, a
  data listener on each `/brokers/topics/<topic>` and a session listener, then runs
  `syncedRebalance` once.
* A listener only sets `isWatcherTriggered`; the watcher executor runs `syncedRebalance` when it
  is set, so a burst of watch events makes one rebalance per consumer (`_kick`).
* `syncedRebalance` tries `rebalance.max.retries` times: stop fetchers and clear queues, commit
  offsets (auto-commit), delete its own `/owners` znodes, read every member and partition from
  ZooKeeper, compute its own share (range or roundrobin), read the start offsets, create an
  owner znode per partition; one `NodeExists` fails the attempt: it deletes what it got and
  sleeps `rebalance.backoff.ms`. After the last try it is left owning nothing
  (`ConsumerRebalanceFailedException`) until the next ZooKeeper event.
* `ZKSessionExpireListener.handleNewSession`: forget the registry, register again, rebalance.
* Offsets go to `/consumers/<group>/offsets/<topic>/<partition>` with a plain write: nothing
  checks that the writer still owns the partition (no fencing).

Threads are generators driven by `_Task`: a thread yields a ZooKeeper request (`ZkOp`) or a
`Sleep` and is resumed with the reply, so the code reads like Kafka's sequential Scala.

Records (the kit's processing model): the fetcher asks the brokers every `fetch.wait.max.ms`
for each partition it fetches and puts a chunk of up to `kit.chunk.max.records` records on
its stream's queue while the queue holds fewer than `queued.max.message.chunks`; each stream
hands one chunk to the application every `kit.processing.ms` (the ledger records it then) and
its consumed offset moves to the chunk's end. Brokers never check ownership.
"""

from __future__ import annotations

import json
import random
from collections import deque
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

from ...logs.layout import DEFAULT_START
from ...trace import LogContext, Trace
from ..api import Partition, ProcessedLedger, end_offset
from .assign import range_share, roundrobin_share
from .client import ZkClient
from .config import ZookeeperConsumerConfig
from .ensemble import NodeExistsError, NoNodeError, ZkError, ZkOp, ZooKeeperEnsemble
from .states import CONNECTOR_STATES, ConsumerState

__all__ = ["ZookeeperConsumerConnector", "PartitionTopicInfo", "Sleep", "owner_path",
           "offset_path", "ids_dir"]

_S = ConsumerState


def ids_dir(group: str) -> str:
    return f"/consumers/{group}/ids"


def owner_path(group: str, tp: Partition) -> str:
    return f"/consumers/{group}/owners/{tp[0]}/{tp[1]}"


def offset_path(group: str, tp: Partition) -> str:
    return f"/consumers/{group}/offsets/{tp[0]}/{tp[1]}"


@dataclass(frozen=True)
class Sleep:
    """A thread sleeps (`Thread.sleep`)."""

    ms: int


@dataclass
class PartitionTopicInfo:
    """What a consumer holds for a partition it owns (Kafka's class of that name)."""

    topic: str
    partition: int
    thread: str
    consumed_offset: int
    fetched_offset: int


@dataclass
class Chunk:
    """A `FetchedDataChunk`: records [start, end) of one partition on a stream's queue."""

    info: PartitionTopicInfo
    start: int
    end: int


Thread = Generator[Any, Any, Any]


class NotRegistered(Exception):
    """This consumer's own registration is not among the group's: its session expired and
    its ephemeral ids znode went between two reads (0.8.2's RangeAssignor asserts
    `myConsumerPosition >= 0`; the AssertionError fails the attempt, "exception during
    rebalance", and syncedRebalance backs off and tries again)."""


class _Task:
    """Drives one thread (a generator) through ZooKeeper replies and sleeps."""

    def __init__(self, owner: ZookeeperConsumerConnector, gen: Thread,
                 done: Callable[[], None] | None = None, *, shutdown: bool = False) -> None:
        self.owner, self.gen, self.done, self.shutdown = owner, gen, done, shutdown
        self.step(None, None)

    def step(self, value: Any, error: ZkError | None) -> None:
        owner = self.owner
        if owner.gone or (owner.shutting_down and not self.shutdown):
            return
        try:
            item = self.gen.send(value) if error is None else self.gen.throw(error)
        except StopIteration:
            if self.done is not None:
                self.done()
            return
        except ZkError as exc:     # a thread that dies of a ZooKeeper error (Kafka logs it)
            owner.plain.event("zk_thread_failed", "WARN", error=str(exc))
            if self.done is not None:
                self.done()
            return
        if isinstance(item, Sleep):
            owner.later(item.ms, self.step, None, None)
        else:
            owner.zk.call(item, self.step)


class ZookeeperConsumerConnector:
    """A consumer process of the ZooKeeper era; `name` is its host, as in its consumer id."""

    def __init__(self, name: str, group: str, topics: tuple[str, ...],
                 config: ZookeeperConsumerConfig, ensemble: ZooKeeperEnsemble, trace: Trace,
                 ledger: ProcessedLedger, produce_rate_per_s: int, rng: random.Random) -> None:
        self.name = name
        self.group = group
        self.topics = tuple(sorted(topics))
        self.config = config
        self.ensemble = ensemble
        self.scheduler = ensemble.scheduler
        self.ledger = ledger
        self.produce_rate_per_s = produce_rate_per_s
        start_ms = int(DEFAULT_START.timestamp() * 1000) + self.scheduler.now
        # ZookeeperConsumerConnector: <group>_<hostname>-<startMillis>-<8 hex of a UUID>
        self.consumer_id = f"{group}_{name}-{start_ms}-{rng.getrandbits(32):08x}"
        self.threads = [f"{self.consumer_id}-{i}" for i in range(config.num_streams)]
        self.log = LogContext(trace, name, f"[{self.consumer_id}], ")
        self.plain = LogContext(trace, name)
        self.zk = ZkClient(ensemble, self, config.session_timeout_ms, rng, self.plain)
        self.state = _S.CREATED
        self.dead = False                       # killed: nothing of it runs again
        self.processing_ms = config.processing_ms
        self.topic_registry: dict[Partition, PartitionTopicInfo] = {}
        self.fetcher: dict[Partition, PartitionTopicInfo] | None = None  # None: never started
        self.queues: dict[tuple[str, int], deque[Chunk]] = {
            (t, i): deque() for t in self.topics for i in range(config.num_streams)}
        self.checkpointed: dict[Partition, int] = {}
        self._fetch_turn = 0                    # which partition fetches first (_fetch_tick)
        self.rounds = 0
        self.watcher_triggered = False
        self.shutting_down = False
        self._busy = False                      # rebalanceLock held
        self._jobs: deque[Callable[[], Thread]] = deque()
        self._committing = False
        self._paused_until: int | None = None
        self._held: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []

    # -- the process: run, hold while paused, nothing once dead ------------------------------------

    @property
    def gone(self) -> bool:
        """Killed, or shut down: it takes no further part."""
        return self.dead or self.state is _S.SHUT_DOWN

    @property
    def idle(self) -> bool:
        """No rebalance running, queued or triggered, no watch event waiting in its client."""
        return not (self._busy or self._jobs or self.watcher_triggered or self.shutting_down
                    or self.zk.events_waiting)

    @property
    def paused(self) -> bool:
        return self._paused_until is not None

    def run(self, fn: Callable[..., Any], *args: Any) -> None:
        if self.dead:
            return
        if self._paused_until is not None:
            self._held.append((fn, args))
            return
        fn(*args)

    def later(self, delay_ms: int, fn: Callable[..., Any], *args: Any) -> None:
        self.scheduler.call_later(delay_ms, self.run, fn, *args, name=f"{self.name} thread")

    def pause(self, duration_ms: int) -> None:
        """Every thread stops (a GC pause) until `duration_ms` from now."""
        until = self.scheduler.now + duration_ms
        self._paused_until = max(until, self._paused_until or 0)
        self.plain.event("zk_consumer_paused", "INFO", until=self._paused_until)
        self.scheduler.call_later(duration_ms, self._wake, name=f"{self.name} wakes")

    def _wake(self) -> None:
        if self._paused_until is None or self.scheduler.now < self._paused_until:
            return
        self._paused_until = None
        self.plain.event("zk_consumer_woke", "INFO")
        held, self._held = self._held, []
        for fn, args in held:
            self.run(fn, *args)

    def crash(self) -> None:
        """kill -9: nothing of this process runs again; its session expires on the server."""
        self.dead = True
        self._held = []
        self.plain.event("zk_consumer_killed", "INFO", consumer=self.consumer_id)

    def _enter(self, state: ConsumerState) -> None:
        if state is self.state:
            return
        CONNECTOR_STATES.check(self.state, state)
        self.plain.event("zk_consumer_state", "DEBUG", consumer=self.consumer_id,
                         old_state=self.state.value, new_state=state.value)
        self.state = state

    # -- start: createMessageStreams / reinitializeConsumer -----------------------------------------

    def start(self) -> None:
        cfg = self.config
        self.zk.subscribe_new_session(self._handle_new_session)
        self.zk.start()
        if cfg.auto_commit_enable:
            self.log.log("ZC-AUTOCOMMIT-START", interval=cfg.auto_commit_interval_ms)
            self.later(cfg.auto_commit_interval_ms, self._auto_commit_tick)
        self.later(cfg.fetch_wait_max_ms, self._fetch_tick)
        self.later(self.processing_ms, self._process_tick)
        self._enter(_S.REGISTERING)
        self._submit(self._create_message_streams)

    def _create_message_streams(self) -> Thread:
        yield from self._register()
        self.log.log("ZC-WATCHER-START", member=self.consumer_id)
        self.zk.subscribe_child_changes(ids_dir(self.group), self._rebalance_event)
        for t in self.topics:
            self.zk.subscribe_data_changes(f"/brokers/topics/{t}", self._rebalance_event)
        yield from self._synced_rebalance()

    def _register(self) -> Thread:
        """registerConsumerInZK: the ephemeral ids znode with this consumer's subscription."""
        self._enter(_S.REGISTERING)
        self.log.log("ZC-REG-BEGIN", member=self.consumer_id)
        data = json.dumps({"version": 1, "subscription": {t: self.config.num_streams
                                                          for t in self.topics},
                           "pattern": "static",
                           "timestamp": str(int(DEFAULT_START.timestamp() * 1000)
                                            + self.scheduler.now)}, separators=(",", ":"))
        path = f"{ids_dir(self.group)}/{self.consumer_id}"
        while True:          # createEphemeralPathExpectConflictHandleZKBug
            try:
                try:
                    yield ZkOp("create", path, data, ephemeral=True)
                except NoNodeError:
                    yield from self._make_parents(path)
                    yield ZkOp("create", path, data, ephemeral=True)
                break
            except NodeExistsError:
                try:
                    stored = yield ZkOp("getData", path)
                except NoNodeError:
                    continue
                if stored == data:
                    break
                self.plain.log("ZC-CONFLICTED-NODE", path=path, data=stored)
                # Kafka backs off until the old session's node is gone. When the node is this
                # session's own (written by a request that waited out a reconnect), 0.8.2
                # would wait forever; the kit takes it as registered (docs/eras-zookeeper.md).
                node = self.ensemble.nodes.get(path)
                if node is not None and node.ephemeral_owner == self.zk.sid:
                    break
                yield Sleep(self.config.session_timeout_ms)
        self.log.log("ZC-REG-END", member=self.consumer_id)

    def _make_parents(self, path: str) -> Thread:
        parts = path.strip("/").split("/")[:-1]
        for i in range(1, len(parts) + 1):
            try:
                yield ZkOp("create", "/" + "/".join(parts[:i]))
            except NodeExistsError:
                pass

    # -- the watcher executor and the rebalance lock -------------------------------------------------

    def _rebalance_event(self, path: str, value: Any) -> None:
        """ZKRebalancerListener.handleChildChange / ZKTopicPartitionChangeListener: set the
        flag and wake the watcher executor."""
        self.watcher_triggered = True
        self._kick()

    def _submit(self, job: Callable[[], Thread], *, first: bool = False) -> None:
        if first:
            self._jobs.appendleft(job)
        else:
            self._jobs.append(job)
        self._kick()

    def _kick(self) -> None:
        """Run the next job under the rebalance lock: a queued one, else a triggered rebalance
        (however many watch events set the flag, one `syncedRebalance`)."""
        if self._busy or self.gone or self.shutting_down:
            return
        if self._jobs:
            job = self._jobs.popleft()
        elif self.watcher_triggered:
            self.watcher_triggered = False
            job = self._synced_rebalance
        else:
            return
        self._busy = True
        _Task(self, job(), self._job_done)

    def _job_done(self) -> None:
        self._busy = False
        self._kick()

    def _handle_new_session(self) -> None:
        """ZKSessionExpireListener.handleNewSession: the old session's ephemerals are gone."""
        self.log.log("ZC-EXPIRED", member=self.consumer_id)
        self.topic_registry = {}                 # loadBalancerListener.resetState()

        def reregister() -> Thread:
            yield from self._register()
            yield from self._synced_rebalance()
        self._submit(reregister, first=True)

    # -- syncedRebalance / rebalance -----------------------------------------------------------

    def _synced_rebalance(self) -> Thread:
        cfg, cid = self.config, self.consumer_id
        for attempt in range(cfg.rebalance_max_retries):
            self._enter(_S.REBALANCING)
            self.rounds += 1
            self.log.log("ZC-REBAL-BEGIN", member=cid, attempt=attempt)
            try:
                done = yield from self._rebalance()
            except (ZkError, NotRegistered) as exc:  # "exception during rebalance"
                self.plain.event("zk_rebalance_exception", "INFO", error=str(exc))
                done = False
            self.log.log("ZC-REBAL-END", member=cid, attempt=attempt)
            if done:
                self._enter(_S.CONSUMING)
                return
            self.log.log("ZC-ATTEMPT-FAILED")
            yield from self._close_fetchers(self.topics)
            self._enter(_S.BACKING_OFF)
            yield Sleep(cfg.rebalance_backoff_ms)
        self._enter(_S.REBALANCE_FAILED)
        self.log.log("ZC-REBAL-ERROR")
        self.log.log("ZC-REBAL-FAILED", member=cid, retries=cfg.rebalance_max_retries)

    def _rebalance(self) -> Thread:
        yield from self._read_cluster()                              # getCluster
        yield ZkOp("getData", f"{ids_dir(self.group)}/{self.consumer_id}")  # own TopicCount
        yield from self._read_cluster()                              # getAllBrokersInCluster
        yield from self._close_fetchers(self.topics)
        yield from self._release_partition_ownership()
        decision = yield from self._assign()
        offsets: dict[Partition, int] = {}
        for tp in sorted(decision):                                  # fetchOffsets
            try:
                offsets[tp] = int((yield ZkOp("getData", offset_path(self.group, tp))))
            except NoNodeError:
                offsets[tp] = -1
        if not (yield from self._reflect_ownership(decision)):
            return False
        self.topic_registry = {tp: PartitionTopicInfo(tp[0], tp[1], decision[tp], offsets[tp],
                                                      offsets[tp]) for tp in sorted(decision)}
        self.log.log("ZC-SELECTED", member=self.consumer_id,
                     partitions=",".join(f"[{t},{p}]" for t, p in sorted(decision)))
        self._update_fetcher()
        return True

    def _read_cluster(self) -> Thread:
        ids = yield ZkOp("getChildren", "/brokers/ids")
        for b in ids:
            yield ZkOp("getData", f"/brokers/ids/{b}")

    def _close_fetchers(self, topics: tuple[str, ...]) -> Thread:
        """closeFetchersForQueues: stop fetching, clear the queues, commit (auto-commit)."""
        if self.fetcher is None:
            return
        self.fetcher = {}                                            # stopConnections
        for (t, _), q in self.queues.items():
            if t in topics:
                q.clear()
        self.log.log("ZC-CLEARED-QUEUES")
        self.log.log("ZC-CLEARED-ITERATORS")
        self.log.log("ZC-COMMIT-ALL")
        if self.config.auto_commit_enable:
            yield from self._commit_offsets()

    def _release_partition_ownership(self) -> Thread:
        self.log.log("ZC-RELEASING")
        for tp in sorted(self.topic_registry):
            try:
                yield ZkOp("delete", owner_path(self.group, tp))
            except NoNodeError:
                pass
        self.topic_registry = {}

    def _assign(self) -> Thread:
        """AssignmentContext + the assignor: every member and partition read from ZooKeeper."""
        yield ZkOp("getData", f"{ids_dir(self.group)}/{self.consumer_id}")
        members = yield ZkOp("getChildren", ids_dir(self.group))
        subscriptions: dict[str, dict[str, int]] = {}
        for m in members:
            data = yield ZkOp("getData", f"{ids_dir(self.group)}/{m}")
            subscriptions[m] = json.loads(data)["subscription"]
        partitions: dict[str, list[int]] = {}
        for t in self.topics:
            data = yield ZkOp("getData", f"/brokers/topics/{t}")
            partitions[t] = sorted(int(p) for p in json.loads(data)["partitions"])
        return self._share(partitions, subscriptions)

    def _share(self, partitions: dict[str, list[int]], subscriptions: dict[str, dict[str, int]]
               ) -> dict[Partition, str]:
        decision: dict[Partition, str] = {}
        mine = self.threads
        if self.config.partition_assignment_strategy == "roundrobin":
            threads = [f"{m}-{i}" for m, sub in subscriptions.items()
                       for i in range(max(sub.values(), default=0))]
            if not set(mine) <= set(threads):
                raise NotRegistered(f"{self.consumer_id} is not among the registered consumers")
            for tid, tps in roundrobin_share(partitions, threads, mine).items():
                for tp in tps:
                    self.plain.log("ZC-CLAIM", thread=tid, partition=tp[1])
                    decision[tp] = tid
            return decision
        for t in self.topics:
            threads = sorted(f"{m}-{i}" for m, sub in subscriptions.items()
                             for i in range(sub.get(t, 0)))
            if not set(mine) <= set(threads):
                raise NotRegistered(f"{self.consumer_id} is not among the consumers of {t} "
                                    f"registered in ZooKeeper")
            self.plain.log("ZC-RANGE", member=self.consumer_id,
                           partitions=f"ArrayBuffer({', '.join(map(str, partitions[t]))})",
                           topic=t, consumers=f"List({', '.join(threads)})")
            for tid, parts in range_share(partitions[t], threads, mine).items():
                if not parts:
                    self.plain.log("ZC-NO-PARTITIONS", thread=tid, topic=t)
                for p in parts:
                    self.plain.log("ZC-CLAIM", thread=tid, partition=p)
                    decision[(t, p)] = tid
        return decision

    def _reflect_ownership(self, decision: dict[Partition, str]) -> Thread:
        """reflectPartitionOwnershipDecision: claim every owner znode; any conflict fails it."""
        owned: list[Partition] = []
        ok = True
        for tp, tid in sorted(decision.items()):
            path = owner_path(self.group, tp)
            try:
                try:
                    yield ZkOp("create", path, tid, ephemeral=True)
                except NoNodeError:
                    yield from self._make_parents(path)
                    yield ZkOp("create", path, tid, ephemeral=True)
                self.log.log("ZC-OWNED", thread=tid, partition=tp[1], topic=tp[0])
                owned.append(tp)
            except NodeExistsError:                      # createEphemeralPathExpectConflict
                try:
                    stored = yield ZkOp("getData", path)
                except NoNodeError:
                    stored = None
                if stored == tid:                        # our own, from a lost reply
                    owned.append(tp)
                    continue
                self.plain.log("ZC-CONFLICT", path=path, data=tid, stored=stored)
                self.log.log("ZC-WAIT-OWNER", partition=tp[1])
                ok = False
        if not ok:
            for tp in owned:
                try:
                    yield ZkOp("delete", owner_path(self.group, tp))
                except NoNodeError:
                    pass
        return ok

    # -- offsets ---------------------------------------------------------------------------------

    def _commit_offsets(self) -> Thread:
        """commitOffsets to ZooKeeper: each owned partition whose offset moved, one write each,
        `updatePersistentPath` (no check that this consumer still owns it)."""
        for tp, info in sorted(self.topic_registry.items()):
            offset = info.consumed_offset
            if offset < 0 or self.checkpointed.get(tp) == offset:
                continue
            path = offset_path(self.group, tp)
            try:
                yield ZkOp("setData", path, str(offset))
            except NoNodeError:
                yield from self._make_parents(path)
                try:
                    yield ZkOp("create", path, str(offset))
                except NodeExistsError:
                    yield ZkOp("setData", path, str(offset))
            self.checkpointed[tp] = offset

    def _auto_commit_tick(self) -> None:
        if self.gone or self.shutting_down:
            return
        if not self._committing:
            self._committing = True
            _Task(self, self._commit_offsets(), self._commit_done)
        self.later(self.config.auto_commit_interval_ms, self._auto_commit_tick)

    def _commit_done(self) -> None:
        self._committing = False

    # -- fetchers and streams --------------------------------------------------------------------

    def _update_fetcher(self) -> None:
        end = end_offset(self.scheduler.now, self.produce_rate_per_s)
        for info in self.topic_registry.values():
            if info.consumed_offset < 0:                 # no offset yet: auto.offset.reset
                info.consumed_offset = end if self.config.auto_offset_reset == "largest" else 0
            info.fetched_offset = info.consumed_offset
        self.fetcher = dict(self.topic_registry)

    def _stream(self, info: PartitionTopicInfo) -> tuple[str, int]:
        return (info.topic, int(info.thread.rsplit("-", 1)[1]))

    def _fetch_tick(self) -> None:
        if self.gone:
            return
        if self.fetcher:
            cfg = self.config
            end = end_offset(self.scheduler.now, self.produce_rate_per_s)
            # The partitions take turns: 0.8.2's fetcher thread puts one chunk per partition of
            # a fetch response into the stream's blocking queue (ConsumerFetcherThread
            # .processPartitionData -> PartitionTopicInfo.enqueue), waiting while it is full,
            # so no partition can keep the queue to itself. Starting each tick one partition
            # further round does the same: in sorted order every tick, the first partition
            # refilled the queue before the others were looked at.
            items = sorted(self.fetcher.items())
            turn = self._fetch_turn % len(items)
            self._fetch_turn += 1
            for tp, info in items[turn:] + items[:turn]:
                q = self.queues[self._stream(info)]
                if len(q) < cfg.queued_max_message_chunks and info.fetched_offset < end:
                    hi = min(end, info.fetched_offset + cfg.chunk_max_records)
                    q.append(Chunk(info, info.fetched_offset, hi))
                    info.fetched_offset = hi
        self.later(self.config.fetch_wait_max_ms, self._fetch_tick)

    def _process_tick(self) -> None:
        if self.gone:
            return
        for key in sorted(self.queues):
            q = self.queues[key]
            if q:
                chunk = q.popleft()
                info = chunk.info
                self.ledger.processed(self.name, (info.topic, info.partition), chunk.start,
                                      chunk.end)
                info.consumed_offset = chunk.end
        self.later(self.processing_ms, self._process_tick)

    def fetching(self) -> set[Partition]:
        """Partitions this process would hand to the application: fetched or buffered."""
        if self.gone:
            return set()
        out = set(self.fetcher or ())
        for q in self.queues.values():
            out.update((c.info.topic, c.info.partition) for c in q)
        return out

    # -- shutdown ----------------------------------------------------------------------------------

    def shutdown(self) -> None:
        """ZookeeperConsumerConnector.shutdown: stop fetchers, commit, close the session."""
        self.run(self._shutdown)

    def _shutdown(self) -> None:
        if self.gone or self.shutting_down:
            return
        self.shutting_down = True
        began = self.scheduler.now
        self.log.log("ZC-SHUTDOWN")
        self.fetcher = {} if self.fetcher is not None else None
        for q in self.queues.values():
            q.clear()

        def close() -> Thread:
            if self.config.auto_commit_enable:
                yield from self._commit_offsets()

        def closed() -> None:
            self.zk.close()
            self._enter(_S.SHUT_DOWN)
            self.log.log("ZC-SHUTDOWN-DONE", ms=self.scheduler.now - began)
        _Task(self, close(), closed, shutdown=True)

    def __repr__(self) -> str:
        return f"ZookeeperConsumerConnector({self.consumer_id!r}, {self.state})"
