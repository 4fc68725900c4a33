"""A Kafka cluster you can break: brokers, `__consumer_offsets`, consumers, a network.

Everything runs on one virtual clock from one seed. Each broker has a `CoordinatorRuntime` with
the group coordinator shard and a `GroupCoordinatorService`; the `__consumer_offsets` partitions
are replicated with leaders spread over the brokers; consumers talk to brokers through a network
with a fixed latency. Faults combine freely with any scenario: crash, pause (GC), dropped
heartbeats, slow poll, a consumer cut off, a coordinator moved, a failed load or append, a
stalled replica. Misuse (an unknown consumer, a fault on a stopped one, a negative duration, an
argument or a config of the wrong type, a run longer than `MAX_RUN_MS`) is refused at once,
before anything changes, with a message that names the argument or Kafka's config key, the
value given and what is allowed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from operator import attrgetter
from dataclasses import dataclass
from typing import Any

from .client.config import ConsumerConfig
from .client.consumer import Consumer, HeartbeatWakeups
from .clock import Scheduler, TimerLane
from .errors import Errors
from .group.config import GroupCoordinatorConfig
from .group.records import GroupCoordinatorRecordSerde
from .group.service import GroupCoordinatorService, partition_for
from .group.shard import GroupCoordinatorShard, group_shard_supplier
from .kafka_config import check_flag, check_whole
from .logs.layout import LOG4J_LEVELS
from .runtime.cleaner import CleanerConfig, LogCleaner
from .runtime.future import _DONE, CoordinatorFuture
from .runtime.metadata import MetadataImage
from .runtime.partition import ReplicatedPartition
from .runtime.runtime import CoordinatorRuntime, RuntimeConfig
from .topic import CONSUMER_OFFSETS, TopicPartition, illegal_name_reason
from .trace import LogContext, Trace

__all__ = ["Cluster", "Broker", "Network", "Lost", "CoordinatorAnswer", "MAX_RUN_MS",
           "check_run_ms", "OFFSETS_SEGMENT_BYTES"]

# The longest run one call may ask for: a virtual week. Kafka's longest default timer,
# offsets.retention.minutes, is exactly a week; everything else a lesson watches (sessions,
# rebalances, poll intervals, failovers) takes seconds to minutes. A busy cluster at DEBUG runs
# a virtual hour in about a second of wall time and keeps about 18 MB of trace per hour with two
# consumers, so a week already costs minutes and gigabytes; more is almost surely a unit mistake
# (microseconds, or seconds multiplied by 1000 twice). Periodic timers (heartbeats, replica
# fetches) are always due, so such a run does not stop early: run_for(10**12), 32 virtual years,
# would take days and run out of memory long before.
MAX_RUN_MS = 7 * 24 * 60 * 60 * 1000

# A Cluster's `offsets.topic.segment.bytes` unless its group_config sets one. Kafka's default,
# 100 MiB, sits on a broker's disk; the kit keeps its logs in memory (about three times their
# size in bytes), and the log cleaner only compacts segments that have rolled. At 1 MiB a
# busy cluster's log stays within a few MiB whatever the run's length, while every lesson and
# named scenario (tens of KiB at most) stays within its first segment, as it would in Kafka.
OFFSETS_SEGMENT_BYTES = 1024 * 1024


def check_run_ms(name: str, ms: int, *, now: int = 0) -> None:
    """Refuse a run of `ms` (or to time `ms` when `now` is given) longer than `MAX_RUN_MS`."""
    if ms - now > MAX_RUN_MS:
        span = f"{name}={ms:,} ms" if not now else f"{name}={ms:,} ms ({ms - now:,} ms from now)"
        raise ValueError(f"{span} is more than a virtual week ({MAX_RUN_MS:,} ms), almost surely "
                         f"a mistake: with heartbeats and replica fetches always due it would "
                         f"run for hours or days and fill the memory with trace. To wait for something, run until it "
                         f"happens (Cluster.run_until(condition), Recording.next_event()); to "
                         f"see a long Kafka timer fire, shorten it (e.g. "
                         f"offsets.retention.minutes) or run in steps of at most a week")


@dataclass
class Broker:
    broker_id: int
    runtime: CoordinatorRuntime[GroupCoordinatorShard]
    service: GroupCoordinatorService
    alive: bool = True
    log_cleaner: LogCleaner | None = None  # compacts the broker's __consumer_offsets replicas


class _Exchange:
    """One request on the network and its answer (or its timeout): the state `send` keeps.

    Views read where a request is from this state alone (`coordinator_kit.viz.snapshot`):
    `call` is the request until it arrives, then `_arrived`, or a `Lost` saying where and why
    it was lost; `response` holds the answer from when the coordinator has it; `answered` is
    set once the client has it (or gave up: `response` None, REQUEST_TIMED_OUT), at
    `answered_at` (set only then), and the client's `last_answer` is this exchange.
    """

    __slots__ = ("network", "client", "broker", "api", "call", "on_response", "answered",
                 "timeout", "response_name", "response", "answered_at")

    def __init__(self, network: Network, client: Consumer, broker: int | None, api: str,
                 call: Callable[[GroupCoordinatorService], CoordinatorFuture[Any]],
                 on_response: Callable[[Any, Errors | None], None]) -> None:
        self.network = network
        self.client = client
        self.broker = broker
        self.api = api
        self.call = call
        self.on_response = on_response
        self.answered = False
        self.timeout: Any = None  # _IN_LANE, or a TimerHandle when the lane refused it
        self.response_name = ""
        self.response: Any = None  # the answer, from when the coordinator has it to delivery

    def __call__(self, future: CoordinatorFuture[Any] | None = None) -> None:
        """The exchange is its own callback, so a request makes no bound method per step
        (each one more object for the garbage collector): the scheduler calls it when the
        request arrives and when its answer reaches the client, the coordinator's future
        when the answer is ready."""
        network = self.network
        if future is not None:  # the answer is ready: on its way back
            self.response = future._value if future._state is _DONE else future.result()
            network.scheduler.call_later(network.latency_ms, self, name=self.response_name)
            return
        broker = self.broker
        call = self.call
        if call is not _arrived:  # the request arrives
            self.call = _arrived  # a request arrives once (or is lost)
            # network._up(client, broker), written out: every request and response comes here
            if self.client.name in network.cut or broker is None:
                self.call = _lost(network, self.client, broker, "arrival")
                return
            broker_ = network.cluster.brokers[broker]
            if not broker_.alive:
                self.call = _lost(network, self.client, broker, "arrival")
                return
            call(broker_.service).add_done_callback(self)  # -> the answer is ready
            return
        self.deliver()  # the answer reaches the client

    # An exchange lets go of its request (`call`) once it arrived and of its callback once it
    # answered: its timeout keeps the exchange itself in a lane for `request.timeout.ms`, and
    # the request and callback objects would otherwise live (and be walked by every garbage
    # collection) as long.

    def timed_out(self) -> None:
        if not self.answered:
            self.answered = True
            self.response = None
            self.answered_at = self.network.scheduler._now
            self.client.last_answer = self
            on_response, self.on_response = self.on_response, _answered
            on_response(None, Errors.REQUEST_TIMED_OUT)

    def deliver(self) -> None:
        response = self.response
        if self.answered:  # it timed out first: the late answer is dropped
            self.response = None
            return
        network = self.network
        broker = self.broker
        if self.client.name in network.cut or broker is None \
                or not network.cluster.brokers[broker].alive:
            self.call = _lost(network, self.client, broker, "return")  # the timeout will fire
            return
        self.answered = True
        # the client's last answer, kept with its answer (most are the service's shared ones)
        self.answered_at = network.scheduler._now
        self.client.last_answer = self
        timeout = self.timeout
        if timeout is not _IN_LANE and timeout is not None:  # None: cancelled via pending()
            timeout.cancel()
        self.timeout = None  # a timeout in a lane is dead from now on (see _timeout_live)
        on_response, self.on_response = self.on_response, _answered
        on_response(response, None)


def _arrived(service: GroupCoordinatorService) -> CoordinatorFuture[Any]:  # pragma: no cover
    raise AssertionError("a request arrived twice")


def _answered(response: Any, error: Errors | None) -> None:  # pragma: no cover
    raise AssertionError("an exchange was answered twice")


class Lost:
    """What a lost request's `call` becomes: where it was lost ("send", "arrival", "return")
    and why ("cut off", "broker down", "no coordinator", "dropped": the client drops its
    heartbeats). Its timeout still stands: the client learns of the loss when it fires."""

    __slots__ = ("where", "why")

    def __init__(self, where: str, why: str) -> None:
        self.where = where
        self.why = why

    def __call__(self, service: GroupCoordinatorService) -> CoordinatorFuture[Any]:
        raise AssertionError(f"a request lost on {self.where} ({self.why}) arrived")

    def __repr__(self) -> str:
        return f"Lost({self.where!r}, {self.why!r})"


_LOSSES = {(where, why): Lost(where, why) for where in ("send", "arrival", "return")
           for why in ("cut off", "broker down", "no coordinator", "dropped")}


def _lost(network: Network, client: Consumer, broker: int | None, where: str,
          drop: bool = False) -> Lost:
    """Why a message of `client` to or from `broker` is lost (only called when it is)."""
    why = ("cut off" if client.name in network.cut else "dropped" if drop
           else "no coordinator" if broker is None else "broker down")
    return _LOSSES[(where, why)]


class CoordinatorAnswer:
    """A FindCoordinator answer as the client got it (its `last_answer`): the coordinator's
    broker, or the error (COORDINATOR_NOT_AVAILABLE, REQUEST_TIMED_OUT when cut off)."""

    __slots__ = ("api", "broker", "error", "answered_at")

    def __init__(self, broker: int | None, error: Errors | None, answered_at: int) -> None:
        self.api = "FindCoordinator"
        self.broker = broker
        self.error = error
        self.answered_at = answered_at

    def __repr__(self) -> str:
        return (f"CoordinatorAnswer(broker={self.broker}, error={self.error}, "
                f"at={self.answered_at}ms)")


_IN_LANE: Any = object()  # an exchange's `timeout` while it waits in one of the network's lanes


# `live(exchange)` of the network's timeout lanes: an exchange's timeout stands while its
# `timeout` is `_IN_LANE` (truthy). An answer sets it to None (`deliver`), and so does the lane
# when the timeout fires (`_timeout_disarm`), so it is never `_IN_LANE` once answered. An
# attrgetter runs in C, where a Python function would add a frame per look.
_timeout_live = attrgetter("timeout")


def _timeout_disarm(exchange: _Exchange) -> None:
    exchange.timeout = None


def _timeout_fire(exchange: _Exchange) -> None:
    exchange.timed_out()


def _timeout_name(exchange: _Exchange) -> str:
    return f"{exchange.api} timeout {exchange.client.name}"


class Network:
    """Request/response delivery with latency; a cut-off client's messages are lost.

    The simulation's `transport.Transport`: a consumer hands it calls on a broker's
    `transport.CoordinatorEndpoint` (the broker's GroupCoordinatorService), as the live server
    hands a real client's decoded requests to the same endpoint.

    Each request waits for its answer with a timeout. Nearly every answer comes long before its
    timeout, so the timeouts of one length share a `TimerLane` (one place in the scheduler's
    heap, same firing order as a `call_later` made at the same moment) instead of adding and
    cancelling a heap entry per request.
    """

    def __init__(self, cluster: Cluster, latency_ms: int) -> None:
        if latency_ms < 0:
            raise ValueError(f"network latency must be >= 0 ms, got {latency_ms}")
        self.cluster = cluster
        self.scheduler = cluster.scheduler
        self.latency_ms = latency_ms
        self.cut: set[str] = set()
        self._lanes: dict[int, TimerLane] = {}
        # (api, client, broker) -> names of the request's and the response's scheduler entries
        self._names: dict[tuple[str, str, int | None], tuple[str, str]] = {}

    def _up(self, client: Consumer, broker: int | None) -> bool:
        return (client.name not in self.cut and broker is not None
                and self.cluster.brokers[broker].alive)

    def send(self, client: Consumer, broker: int | None, api: str,
             call: Callable[[GroupCoordinatorService], CoordinatorFuture[Any]],
             on_response: Callable[[Any, Errors | None], None], *, timeout_ms: int,
             drop: bool = False) -> None:
        sched = self.scheduler
        exchange = _Exchange(self, client, broker, api, call, on_response)
        lane = self._lanes.get(timeout_ms)
        if lane is None and timeout_ms.__class__ is int and timeout_ms >= 0:
            lane = self._lanes[timeout_ms] = TimerLane(sched, _timeout_fire, _timeout_live,
                                                       _timeout_disarm, _timeout_name)
        exchange.timeout = _IN_LANE
        if lane is None or not lane.arm(timeout_ms, exchange):
            exchange.timeout = sched.call_later(timeout_ms, exchange.timed_out,
                                                name=f"{api} timeout {client.name}")
        if drop or client.name in self.cut or broker is None \
                or not self.cluster.brokers[broker].alive:  # not self._up(client, broker)
            exchange.call = _lost(self, client, broker, "send", drop)
            client.log.event("request_dropped", api=api, client=client.name, broker=broker)
            return
        names = self._names.get((api, client.name, broker))
        if names is None:
            names = self._names[(api, client.name, broker)] = (
                f"{api} {client.name}->{broker}", f"{api} response {client.name}")
        exchange.response_name = names[1]
        sched.call_later(self.latency_ms, exchange, name=names[0])  # -> arrive

    def find_coordinator(self, client: Consumer, group_id: str,
                         on_result: Callable[[int | None, Errors | None], None]) -> None:
        sched = self.cluster.scheduler

        def answer() -> None:
            if client.name in self.cut:
                client.last_answer = CoordinatorAnswer(None, Errors.REQUEST_TIMED_OUT, sched.now)
                on_result(None, Errors.REQUEST_TIMED_OUT)
                return
            leader = self.cluster.coordinator_for(group_id)
            if leader is None or not self.cluster.brokers[leader].alive:
                client.last_answer = CoordinatorAnswer(None, Errors.COORDINATOR_NOT_AVAILABLE,
                                                       sched.now)
                on_result(None, Errors.COORDINATOR_NOT_AVAILABLE)
            else:
                client.last_answer = CoordinatorAnswer(leader, None, sched.now)
                on_result(leader, None)

        sched.call_later(2 * self.latency_ms, answer, name=f"FindCoordinator {client.name}")


def _check_topics(topics: Any) -> dict[str, int]:
    """`Cluster(topics=...)`: a mapping of legal topic name (Kafka's `Topic.validate`) to a
    partition count >= 1, copied."""
    if not isinstance(topics, Mapping):
        raise TypeError(f"topics is a mapping of topic name to partition count, e.g. "
                        f"{{'orders': 6}}, got {type(topics).__name__} {topics!r}")
    checked: dict[str, int] = {}
    for name, partitions in topics.items():
        if not isinstance(name, str):
            raise TypeError(f"a topic name is a str, got {name!r} (a {type(name).__name__}) in "
                            f"topics={dict(topics)!r}")
        why = illegal_name_reason(name)
        if why:
            raise ValueError(f"topic name {name!r} is illegal: {why}")
        if name == CONSUMER_OFFSETS:
            raise ValueError(f"{CONSUMER_OFFSETS} is Kafka's internal offsets topic, not a data "
                             f"topic: set its partitions with offsets_partitions")
        check_whole(f"the partition count of topic {name!r}", partitions, at_least=1)
        checked[name] = partitions
    return checked


class Cluster:
    """Brokers, replicated `__consumer_offsets`, data topics and consumers on one clock."""

    def __init__(self, *, brokers: int = 3, offsets_partitions: int = 3,
                 topics: Mapping[str, int] | None = None, seed: int = 0,
                 group_config: GroupCoordinatorConfig | Mapping[str, Any] | None = None,
                 network_latency_ms: int = 1, replication_latency_ms: int = 1,
                 produce_rate_per_s: int = 100, trace_level: str = "DEBUG",
                 consumer_defaults: Mapping[str, Any] | None = None,
                 cleaner_config: CleanerConfig | Mapping[str, Any] | None = None) -> None:
        """`topics` maps each data topic to its partition count (default `{"orders": 6}`; `{}`
        is a cluster with no data topics, where no consumer can subscribe yet).
        `consumer_defaults` are ConsumerConfig fields every `add_consumer` starts from
        (e.g. `{"client_style": "kafka-python"}`); its own keyword arguments win.
        `group_config` takes the group coordinator's keys (`offsets.topic.segment.bytes` is
        `OFFSETS_SEGMENT_BYTES` unless given), `cleaner_config` the log cleaner's
        (`log.cleaner.*`, Kafka's defaults)."""
        check_whole("brokers", brokers, at_least=1)
        check_whole("offsets_partitions", offsets_partitions, at_least=1)
        check_whole("seed", seed, at_least=None)
        check_whole("network_latency_ms", network_latency_ms, at_least=0, ms=True)
        check_whole("replication_latency_ms", replication_latency_ms, at_least=0, ms=True)
        check_whole("produce_rate_per_s", produce_rate_per_s, at_least=0)
        if not isinstance(trace_level, str) or trace_level not in LOG4J_LEVELS:
            raise ValueError(f"trace_level must be one of {', '.join(LOG4J_LEVELS)}, got "
                             f"{trace_level!r}")
        topics = _check_topics({"orders": 6} if topics is None else topics)
        if group_config is not None and not isinstance(group_config,
                                                       (GroupCoordinatorConfig, Mapping)):
            raise TypeError(f"group_config is a GroupCoordinatorConfig or a mapping of Kafka key "
                            f"to value, e.g. {{'group.initial.rebalance.delay.ms': 0}}, got "
                            f"{type(group_config).__name__} {group_config!r}")
        if cleaner_config is not None and not isinstance(cleaner_config,
                                                         (CleanerConfig, Mapping)):
            raise TypeError(f"cleaner_config is a CleanerConfig or a mapping of Kafka key to "
                            f"value, e.g. {{'log.cleaner.delete.retention.ms': 60000}}, got "
                            f"{type(cleaner_config).__name__} {cleaner_config!r}")
        cleaner = cleaner_config if isinstance(cleaner_config, CleanerConfig) else \
            CleanerConfig.from_properties(cleaner_config or {})
        if consumer_defaults is not None and not isinstance(consumer_defaults, Mapping):
            raise TypeError(f"consumer_defaults is a mapping of ConsumerConfig field to value, "
                            f"e.g. {{'session_timeout_ms': 10000}}, got "
                            f"{type(consumer_defaults).__name__} {consumer_defaults!r}")
        if isinstance(group_config, GroupCoordinatorConfig):
            config = group_config
        else:
            props = dict(group_config or {})
            props.setdefault("offsets.topic.num.partitions", offsets_partitions)
            props.setdefault("offsets.topic.segment.bytes", OFFSETS_SEGMENT_BYTES)
            config = GroupCoordinatorConfig.from_properties(props)
        defaults = dict(consumer_defaults or {})
        for fixed, where in (("group_id", "add_consumer(name, group_id=...)"),
                             ("client_id", "add_consumer's name")):
            if fixed in defaults:
                raise ValueError(f"consumer_defaults may not set {fixed} (got "
                                 f"{defaults[fixed]!r}): each consumer's comes from {where}")
        ConsumerConfig.of(group_id="check", **defaults)  # refuses a bad one now
        self.config = config
        self.seed = seed
        # One thread drives a cluster (its processors are deterministic): no scheduler lock.
        self.scheduler = Scheduler(threadsafe=False)
        self.trace = Trace(self.scheduler, level=trace_level)
        self.log = LogContext(self.trace, "cluster")
        self.topics: dict[str, int] = topics
        self.produce_rate_per_s = produce_rate_per_s
        ids = list(range(brokers))
        rf = min(config.offsets_topic_replication_factor, brokers)
        self.partitions: dict[TopicPartition, ReplicatedPartition] = {}
        for p in range(config.offsets_topic_num_partitions):
            tp = TopicPartition.offsets(p)
            replicas = [ids[(p + i) % brokers] for i in range(rf)]
            self.partitions[tp] = ReplicatedPartition(
                tp, self.scheduler, self.trace, replicas,
                replication_latency_ms=replication_latency_ms,
                segment_bytes=config.offsets_topic_segment_bytes)
        self.cleaner_config = cleaner
        cleaners = {b: LogCleaner(b, self.scheduler, self.trace, cleaner) for b in ids}
        for tp, p in sorted(self.partitions.items()):
            for b in p.replicas:
                cleaners[b].add_log(p)
        runtime_config = RuntimeConfig(append_linger_ms=config.append_linger_ms,
                                       write_timeout_ms=config.offsets_commit_timeout_ms)
        serde = GroupCoordinatorRecordSerde()
        self.brokers: dict[int, Broker] = {}
        for b in ids:
            runtime: CoordinatorRuntime[GroupCoordinatorShard] = CoordinatorRuntime(
                broker_id=b, scheduler=self.scheduler, trace=self.trace,
                partitions=self.partitions, shard_builder_supplier=group_shard_supplier(
                    config, seed, b), serde=serde, config=runtime_config, seed=seed + b)
            # the topics every broker's coordinators see (KIP-848 groups assign from them);
            # set before any load, so no image event is scheduled or traced
            runtime.metadata_image = MetadataImage(0, topics)
            self.brokers[b] = Broker(b, runtime, GroupCoordinatorService(b, runtime, config),
                                     log_cleaner=cleaners[b])
        self.network = Network(self, network_latency_ms)
        # where consumers arm the heartbeat thread's wake-up while a heartbeat is in flight
        self.heartbeat_wakeups = HeartbeatWakeups(self.scheduler)
        self.consumer_defaults = defaults
        self._group_partitions: dict[str, TopicPartition] = {}  # the hash walks the whole id
        self.consumers: dict[str, Consumer] = {}
        for tp, p in sorted(self.partitions.items()):
            self.brokers[p.leader_id].service.on_elected(tp, p.leader_epoch)

    # -- naming --------------------------------------------------------------------------------

    def broker_host(self, broker_id: int) -> str:
        return f"localhost:{9092 + broker_id}"

    def client_index(self, consumer: Consumer) -> int:
        return list(self.consumers).index(consumer.name) + 1 if consumer.name in self.consumers \
            else 0

    def partition_of(self, group_id: str) -> TopicPartition:
        tp = self._group_partitions.get(group_id)
        if tp is None:
            tp = TopicPartition.offsets(partition_for(group_id,
                                                      self.config.offsets_topic_num_partitions))
            tp = next((known for known in self.partitions if known == tp), tp)
            self._group_partitions[group_id] = tp
        return tp

    def coordinator_for(self, group_id: str) -> int | None:
        return self.partitions[self.partition_of(group_id)].leader_id

    def end_offset(self, tp: TopicPartition) -> int:
        """Data topics grow at `produce_rate_per_s` records per partition (virtual time)."""
        return self.scheduler._now * self.produce_rate_per_s // 1000

    def create_topic(self, name: str, partitions: int) -> None:
        """A new data topic, published to every broker's coordinators as a new metadata image
        (the controller's metadata reaching `GroupCoordinatorService.onNewMetadataImage`), so
        consumer groups can assign it; classic groups learn of it from their clients."""
        checked = _check_topics({name: partitions})
        if name in self.topics:
            raise ValueError(f"topic {name!r} already exists")
        self.topics[name] = checked[name]
        for broker in self.brokers.values():
            runtime = broker.runtime
            image, delta = runtime.metadata_image.with_topics(
                runtime.metadata_image.offset + 1, {name: partitions})
            runtime.on_new_metadata_image(image, delta)

    # -- consumers -----------------------------------------------------------------------------

    def add_consumer(self, name: str, group_id: str = "group-1",
                     topics: tuple[str, ...] = ("orders",), *, processing_ms: int = 100,
                     start: bool = True, **config: Any) -> Consumer:
        """Create (and start) a consumer; `config` takes ConsumerConfig field names.

        Everything is checked before the consumer exists: a refused one leaves no trace."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"a consumer's name (its client.id) is a non-empty str, got {name!r}")
        if name in self.consumers:
            raise ValueError(f"there is already a consumer named {name!r}")
        if isinstance(topics, str) or not isinstance(topics, (list, tuple)):
            hint = (f": a str is a sequence of letters, so pass ({topics!r},) or [{topics!r}]"
                    if isinstance(topics, str) else "")
            raise TypeError(f"topics is a tuple or list of topic names, e.g. ('orders',), got "
                            f"{topics!r}{hint}")
        for topic in topics:
            if not isinstance(topic, str):
                raise TypeError(f"a topic name is a str, got {topic!r} in topics={topics!r}")
        if "client_id" in config:
            raise ValueError(f"client_id={config['client_id']!r}: a consumer's client.id is its "
                             f"name here, add_consumer({config['client_id']!r}, ...)")
        check_flag("start", start)
        consumer = Consumer(self, ConsumerConfig.of(**{**self.consumer_defaults,
                                                       "group_id": group_id, "client_id": name,
                                                       **config}),
                            tuple(topics), processing_ms=processing_ms)
        self.consumers[name] = consumer
        if start:
            consumer.start()
        return consumer

    def restart_consumer(self, name: str, down_ms: int = 1000) -> Consumer:
        """Close a consumer and start a new process with the same configuration `down_ms` later.

        A static member (group.instance.id) sends no LeaveGroup on close and rejoins under the
        same instance id; a dynamic one leaves, then joins as a new member. A crashed (or
        already closed) consumer is not closed again: its new process just starts.
        """
        old = self.consumer(name)
        if isinstance(down_ms, bool) or not isinstance(down_ms, int) or down_ms < 0:
            raise ValueError(f"down_ms must be a whole number of milliseconds >= 0, got "
                             f"{down_ms!r}")
        if not old.crashed and not old.closed:
            old.close()  # a crashed or closed process is simply started again
        new = Consumer(self, old.config, old.topics, processing_ms=old.processing_ms)
        self.consumers[name] = new
        new.starts_at = self.scheduler.now + down_ms
        self.scheduler.call_later(down_ms, new.start, name=f"restart {name}")
        return new

    def consumer(self, name: str) -> Consumer:
        try:
            return self.consumers[name]
        except KeyError:
            raise KeyError(f"no consumer named {name!r}; known consumers: "
                           f"{sorted(self.consumers) or 'none'}") from None

    # -- faults --------------------------------------------------------------------------------

    def crash(self, name: str) -> None:
        self.consumer(name).crash()

    def pause(self, name: str, duration_ms: int) -> None:
        self.consumer(name).pause(duration_ms)

    def resume(self, name: str) -> None:
        """End `name`'s pause now (see `Consumer.resume`)."""
        self.consumer(name).resume()

    def drop_heartbeats(self, name: str, drop: bool = True) -> None:
        self.consumer(name).set_drop_heartbeats(drop)

    def slow_poll(self, name: str, processing_ms: int) -> None:
        self.consumer(name).set_processing_ms(processing_ms)

    def cut_off(self, name: str, cut: bool = True) -> None:
        consumer = self.consumer(name)
        consumer._require_alive("cut off")
        check_flag("cut", cut)
        (self.network.cut.add if cut else self.network.cut.discard)(name)
        self.log.event("network_cut" if cut else "network_restored", level="INFO", client=name)

    def leave(self, name: str) -> None:
        self.consumer(name).close()

    def move_coordinator(self, group_or_partition: str | int,
                         to_broker: int | None = None) -> int:
        """Move leadership of a group's `__consumer_offsets` partition (a group id, a str, or a
        partition number) to `to_broker` (by default the first other in-sync replica); returns
        the new leader epoch."""
        if isinstance(group_or_partition, str):
            tp = self.partition_of(group_or_partition)
        elif isinstance(group_or_partition, int) and not isinstance(group_or_partition, bool):
            tp = TopicPartition.offsets(group_or_partition) if group_or_partition >= 0 else None
            if tp not in self.partitions:
                raise ValueError(f"no partition __consumer_offsets-{group_or_partition}; offsets "
                                 f"partitions are 0..{len(self.partitions) - 1}")
        else:
            raise TypeError(f"move_coordinator takes a group id (a str) or a __consumer_offsets "
                            f"partition number (an int), got {group_or_partition!r}")
        if to_broker is not None:
            self._broker(to_broker)
        p = self.partitions[tp]
        old = p.leader_id
        if to_broker is None:
            candidates = [b for b in p.isr if b != old]
            if not candidates:
                raise ValueError(f"no other in-sync replica can lead {tp} (ISR {p.isr})")
            to_broker = candidates[0]
        if to_broker == old:
            raise ValueError(f"broker {to_broker} already leads {tp}")
        epoch = p.elect_leader(to_broker)
        self.brokers[old].service.on_resigned(tp, epoch)
        self.brokers[to_broker].service.on_elected(tp, epoch)
        return epoch

    def _offsets_partition(self, partition: int) -> TopicPartition:
        if isinstance(partition, bool) or not isinstance(partition, int):
            raise TypeError(f"partition is a __consumer_offsets partition number (an int), got "
                            f"{partition!r}; cluster.partition_of(group_id).partition names a "
                            f"group's")
        tp = next((t for t in self.partitions if t.partition == partition), None)
        if tp is None:
            raise ValueError(f"no partition __consumer_offsets-{partition!r}; the offsets topic "
                             f"has partitions 0..{len(self.partitions) - 1} "
                             f"(cluster.partition_of(group_id) names a group's)")
        return tp

    def _broker(self, broker: int) -> Broker:
        if isinstance(broker, bool) or not isinstance(broker, int):
            raise TypeError(f"a broker is named by its id, an int, got {broker!r}; the cluster "
                            f"has brokers {sorted(self.brokers)}")
        if broker not in self.brokers:
            raise ValueError(f"no broker {broker!r}; the cluster has brokers "
                             f"{sorted(self.brokers)}")
        return self.brokers[broker]

    def fail_next_load(self, partition: int, broker: int) -> None:
        tp = self._offsets_partition(partition)
        self._broker(broker).runtime.loader.fail_next_load(tp)

    def fail_next_append(self, partition: int, error: Errors = Errors.KAFKA_STORAGE_ERROR
                         ) -> None:
        self.partitions[self._offsets_partition(partition)].fail_next_append(error)

    def stall_replica(self, partition: int, broker: int, stalled: bool = True) -> None:
        check_flag("stalled", stalled)
        p = self.partitions[self._offsets_partition(partition)]
        self._broker(broker)
        (p.stall_replica if stalled else p.resume_replica)(broker)

    # -- time ----------------------------------------------------------------------------------

    def run_for(self, ms: int) -> int:
        """Run everything due in the next `ms` (at most `MAX_RUN_MS`, a virtual week); returns
        how many scheduler callbacks ran.

        Within a run to a time each broker's event processor takes its queued coordinator
        events back to back while no other callback is due (`max_events_per_step=None`): the
        same events in the same order at the same virtual times, so the same trace, in fewer
        scheduler steps (about 18% fewer with 100 heartbeating consumers). Outside it
        (`scheduler.step()`, `run_until(condition)`) a step still runs one event, as learners
        step through it and as a condition is checked."""
        check_whole("ms", ms, at_least=0, ms=True)
        check_run_ms("ms", ms)
        processors = [b.runtime.processor for b in self.brokers.values()]
        limits = [getattr(p, "max_events_per_step", 1) for p in processors]
        for p in processors:
            if hasattr(p, "max_events_per_step"):
                p.max_events_per_step = None
        try:
            return self.scheduler.run_for(ms)
        finally:
            for p, limit in zip(processors, limits):
                if hasattr(p, "max_events_per_step"):
                    p.max_events_per_step = limit

    def run_until(self, condition: Callable[[], bool] | int, limit_ms: int = 600_000) -> int:
        """Run until `condition()` is true, giving up (`SchedulerLimitExceeded`) after
        `limit_ms` of virtual time (at most `MAX_RUN_MS`); an int is a virtual time to run to."""
        if callable(condition):
            check_whole("limit_ms", limit_ms, at_least=0, ms=True)
            check_run_ms("limit_ms", limit_ms)
        else:
            check_whole("time", condition, at_least=0, ms=True)
            check_run_ms("time", condition, now=self.scheduler.now)
        return self.scheduler.run_until(condition, limit_ms=limit_ms)

    # -- views ---------------------------------------------------------------------------------

    def shard_for(self, group_id: str) -> GroupCoordinatorShard | None:
        b = self.coordinator_for(group_id)
        ctx = self.brokers[b].runtime.context(self.partition_of(group_id)) if b is not None \
            else None
        return None if ctx is None or ctx.coordinator is None else ctx.coordinator.shard

    def group(self, group_id: str = "group-1") -> dict[str, Any]:
        """The group as the coordinator holds it right now (latest, uncommitted included)."""
        shard = self.shard_for(group_id)
        if shard is None:
            return {"group_id": group_id, "state": None, "generation": None, "members": []}
        return shard.describe_group(group_id, None)

    def committed_offsets(self, group_id: str = "group-1") -> dict[tuple[str, int], int]:
        shard = self.shard_for(group_id)
        return {} if shard is None else shard.offsets.committed(group_id)

    def members_table(self) -> list[dict[str, Any]]:
        return [c.describe() for c in self.consumers.values()]

    def log_lines(self, level: str = "INFO", source: str | None = None,
                  since: int = 0) -> list[str]:
        return self.trace.lines(level=level, source=source, since_seq=since)

    def __repr__(self) -> str:
        return (f"Cluster(brokers={len(self.brokers)}, offsets_partitions={len(self.partitions)}, "
                f"consumers={len(self.consumers)}, now={self.scheduler.now}ms)")
