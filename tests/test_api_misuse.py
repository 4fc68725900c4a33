"""Bad input to the simulation API is refused at once, by name, before anything changes.

Configs are refused as Kafka's `ConfigDef` refuses them (`ConfigException`: "Invalid value V for
configuration KEY: ..."), with the Kafka key, the value and what is allowed; the kit's own
arguments (a broker count, a duration, a flag) name the argument. A refused call leaves the
cluster as it was: no half-made consumer, no trace event, no timer.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from coordinator_kit.client.config import ConsumerConfig
from coordinator_kit.cluster import MAX_RUN_MS, Cluster
from coordinator_kit.errors import Errors
from coordinator_kit.group.config import GroupCoordinatorConfig
from coordinator_kit.recording import Recording

# -- Cluster(...) ---------------------------------------------------------------------------------

CLUSTER_CASES: list[tuple[dict[str, Any], type[Exception], tuple[str, ...]]] = [
    ({"brokers": "3"}, TypeError, ("brokers", "'3'", "whole number >= 1")),
    ({"brokers": 2.5}, TypeError, ("brokers", "2.5", "whole number >= 1")),
    ({"brokers": None}, TypeError, ("brokers", "None", "whole number >= 1")),
    ({"brokers": True}, TypeError, ("brokers", "True", "a bool")),
    ({"brokers": 0}, ValueError, ("brokers", ">= 1", "got 0")),
    ({"offsets_partitions": "3"}, TypeError, ("offsets_partitions", "'3'")),
    ({"topics": {"orders": "6"}}, TypeError, ("topic 'orders'", "'6'", ">= 1")),
    ({"topics": {"orders": 0}}, ValueError, ("topic 'orders'", ">= 1", "got 0")),
    ({"topics": {"orders": True}}, TypeError, ("topic 'orders'", "True")),
    ({"topics": ["orders"]}, TypeError, ("topics", "['orders']", "mapping", "{'orders': 6}")),
    ({"topics": "orders"}, TypeError, ("topics", "'orders'", "mapping")),
    ({"topics": {5: 3}}, TypeError, ("topic name", "5")),
    ({"topics": {"my orders": 3}}, ValueError, ("'my orders'", "illegal", "ASCII")),
    ({"topics": {"": 3}}, ValueError, ("''", "illegal", "empty")),
    ({"topics": {"__consumer_offsets": 3}}, ValueError, ("__consumer_offsets", "offsets_partitions")),
    ({"seed": "x"}, TypeError, ("seed", "'x'", "whole number")),
    ({"seed": 1.0}, TypeError, ("seed", "1.0")),
    ({"produce_rate_per_s": "fast"}, TypeError, ("produce_rate_per_s", "'fast'", ">= 0")),
    ({"produce_rate_per_s": -1}, ValueError, ("produce_rate_per_s", ">= 0", "-1")),
    ({"network_latency_ms": 1.5}, TypeError, ("network_latency_ms", "1.5", "milliseconds")),
    ({"network_latency_ms": -1}, ValueError, ("network_latency_ms", ">= 0", "-1")),
    ({"replication_latency_ms": 1.5}, TypeError, ("replication_latency_ms", "1.5")),
    ({"replication_latency_ms": "1"}, TypeError, ("replication_latency_ms", "'1'")),
    ({"trace_level": "LOUD"}, ValueError, ("trace_level", "'LOUD'", "DEBUG", "INFO")),
    ({"trace_level": 10}, ValueError, ("trace_level", "10", "DEBUG")),
    ({"group_config": [("group.max.size", 3)]}, TypeError,
     ("group_config", "list", "('group.max.size', 3)", "mapping of Kafka key")),
    ({"group_config": "group.max.size=3"}, TypeError, ("group_config", "'group.max.size=3'")),
    ({"group_config": {"group.max.size": "3"}}, ValueError, ("group.max.size", "'3'")),
    ({"consumer_defaults": [("session_timeout_ms", 10_000)]}, TypeError,
     ("consumer_defaults", "list", "mapping")),
    ({"consumer_defaults": {"retry_backoff_ms": "100"}}, ValueError, ("retry.backoff.ms", "'100'")),
    ({"consumer_defaults": {"group_id": "payments"}}, ValueError,
     ("consumer_defaults", "group_id", "'payments'", "add_consumer")),
    ({"consumer_defaults": {"client_id": "c"}}, ValueError, ("consumer_defaults", "client_id")),
]


@pytest.mark.parametrize("kwargs,error,words", CLUSTER_CASES,
                         ids=[repr(c[0])[:60] for c in CLUSTER_CASES])
def test_cluster_refuses_a_bad_argument_by_name(kwargs, error, words):
    with pytest.raises(error) as err:
        Cluster(**kwargs)
    for word in words:
        assert word in str(err.value), (word, str(err.value))


def test_an_empty_topics_mapping_is_a_cluster_without_data_topics():
    """`topics={}` asked for no data topics: the cluster has none (it used to get
    {'orders': 6} behind the learner's back), and a consumer cannot subscribe to one."""
    assert Cluster().topics == {"orders": 6}  # the default, when topics is not given
    cluster = Cluster(topics={})
    assert cluster.topics == {}
    cluster.run_for(10_000)  # the coordinator side runs without any data topic
    with pytest.raises(ValueError, match=r"unknown topic\(s\) \['orders'\]; the cluster has no "
                                         r"data topics \(Cluster\(topics=\{'orders': 6\}\)"):
        cluster.add_consumer("c1")
    assert cluster.consumers == {}


# -- ConsumerConfig: every field ------------------------------------------------------------------

# field -> (Kafka key, or the kit's name for a setting Kafka does not have; a value of the wrong
# type; a value of the right type out of range, or None when the type has no range)
CONSUMER_FIELDS: dict[str, tuple[str, Any, Any]] = {
    "group_id": ("group.id", 123, ""),
    "client_id": ("client.id", 5, None),
    "group_instance_id": ("group.instance.id", 5, "instance 1"),
    "session_timeout_ms": ("session.timeout.ms", "45000", 0),
    "heartbeat_interval_ms": ("heartbeat.interval.ms", 3000.0, 0),
    "max_poll_interval_ms": ("max.poll.interval.ms", None, 2**31),
    "max_poll_records": ("max.poll.records", True, 0),
    "retry_backoff_ms": ("retry.backoff.ms", "100", -1),
    "request_timeout_ms": ("request.timeout.ms", 1.5, 0),
    "enable_auto_commit": ("enable.auto.commit", "no", None),
    "auto_commit_interval_ms": ("auto.commit.interval.ms", [5000], 0),
    "auto_offset_reset": ("auto.offset.reset", 0, "smallest"),
    "partition_assignment_strategy": ("partition.assignment.strategy", "range", ["round-robin"]),
    "client_style": ("client_style", 5, "scala"),
    "group_protocol": ("group.protocol", 5, "kip848"),
    "group_remote_assignor": ("group.remote.assignor", 5, "sticky"),
}


def test_the_table_covers_every_consumer_config_field():
    assert set(CONSUMER_FIELDS) == {f.name for f in dataclasses.fields(ConsumerConfig)}


def _consumer_cases() -> list[tuple[str, str, Any]]:
    return [(name, key, value) for name, (key, wrong, bad) in CONSUMER_FIELDS.items()
            for value in (wrong, bad) if value is not None]


@pytest.mark.parametrize("field,key,value", _consumer_cases(),
                         ids=[f"{f}={v!r}" for f, _, v in _consumer_cases()])
def test_consumer_config_refuses_each_field_by_its_kafka_key(field, key, value):
    kwargs = {"group_id": "g", field: value}
    with pytest.raises(ValueError) as err:
        ConsumerConfig.of(**kwargs)
    message = str(err.value)
    assert key in message, message
    if field != "group_id" or value != "":  # an empty group.id: "group.id must be set"
        assert repr(value) in message, message


@pytest.mark.parametrize("field,key,value", _consumer_cases(),
                         ids=[f"{f}={v!r}" for f, _, v in _consumer_cases()])
def test_add_consumer_refuses_a_bad_setting_before_the_consumer_exists(field, key, value):
    cluster = Cluster()
    cluster.add_consumer("ok")
    cluster.run_for(1_000)
    events, pending = len(cluster.trace.events), len(cluster.scheduler.pending())
    if field == "client_id":  # the name is the client.id: passing one is refused by name too
        with pytest.raises(ValueError, match="client_id=5: a consumer's client.id is its name"):
            cluster.add_consumer("bad", client_id=value)
    else:
        with pytest.raises(ValueError, match=key.replace(".", r"\.")):
            cluster.add_consumer("bad", **{field: value})
    assert list(cluster.consumers) == ["ok"]
    assert len(cluster.trace.events) == events and len(cluster.scheduler.pending()) == pending


def test_partition_assignment_strategy_as_one_str_names_the_accepted_assignors():
    """Java's ConsumerConfig takes a list of assignor classes; a str here would be read letter
    by letter ('r', 'a', ...), so it is refused with the list form and the known names."""
    with pytest.raises(ValueError) as err:
        ConsumerConfig("g", partition_assignment_strategy="range")
    message = str(err.value)
    for word in ("partition.assignment.strategy", "'range'", "['range']", "list of assignor",
                 "cooperative-sticky", "roundrobin", "sticky", "RangeAssignor"):
        assert word in message, (word, message)
    with pytest.raises(ValueError, match="assignor 5 is not a name"):
        ConsumerConfig("g", partition_assignment_strategy=["range", 5])
    with pytest.raises(ValueError, match="needs at least one assignor; known assignors"):
        ConsumerConfig("g", partition_assignment_strategy=[])


@pytest.mark.parametrize("instance", ["", ".", "..", "a b", "a:b", "x" * 250])
def test_group_instance_id_follows_join_group_request_validate_group_instance_id(instance):
    """JoinGroupRequest.validateGroupInstanceId: non-empty, not '.' or '..', at most 249
    characters of [a-zA-Z0-9._-] (Kafka's Topic rules)."""
    with pytest.raises(ValueError, match="for configuration group.instance.id"):
        ConsumerConfig("g", group_instance_id=instance)


@pytest.mark.parametrize("instance", ["valid", "INSTANCE", "_0-9_.", "...", "x" * 249])
def test_legal_group_instance_ids_are_accepted(instance):
    assert ConsumerConfig("g", group_instance_id=instance).group_instance_id == instance


def test_a_str_number_gets_a_hint_and_a_long_setting_allows_64_bits():
    with pytest.raises(ValueError, match=r"Invalid value '100' for configuration "
                                         r"retry.backoff.ms: Expected value to be a 64-bit "
                                         r"integer at least 0, but it was a str \(write 100, "
                                         r"not '100'\)"):
        ConsumerConfig("g", retry_backoff_ms="100")
    assert ConsumerConfig("g", retry_backoff_ms=2**40).retry_backoff_ms == 2**40  # LONG
    with pytest.raises(ValueError, match=r"session.timeout.ms: Value must be at most 2147483647 "
                                         r"\(a 32-bit integer\)"):
        ConsumerConfig("g", session_timeout_ms=2**31)  # INT


# -- GroupCoordinatorConfig: every property -------------------------------------------------------

# Kafka key -> (minimum, largest allowed), from GroupCoordinatorConfig's ConfigDef (INT, a SHORT
# replication factor, a LONG retention check interval)
GROUP_KEYS: dict[str, tuple[int, int]] = {
    "group.min.session.timeout.ms": (0, 2**31 - 1),
    "group.max.session.timeout.ms": (0, 2**31 - 1),
    "group.initial.rebalance.delay.ms": (0, 2**31 - 1),
    "group.max.size": (1, 2**31 - 1),
    "offsets.commit.timeout.ms": (1, 2**31 - 1),
    "offsets.retention.minutes": (1, 2**31 - 1),
    "offsets.retention.check.interval.ms": (1, 2**63 - 1),
    "offset.metadata.max.bytes": (0, 2**31 - 1),
    "offsets.topic.num.partitions": (1, 2**31 - 1),
    "offsets.topic.replication.factor": (1, 2**15 - 1),
    "offsets.topic.segment.bytes": (1, 2**31 - 1),
    "group.coordinator.append.linger.ms": (0, 2**31 - 1),
    "group.coordinator.threads": (1, 2**31 - 1),
    "group.consumer.session.timeout.ms": (1, 2**31 - 1),
    "group.consumer.min.session.timeout.ms": (1, 2**31 - 1),
    "group.consumer.max.session.timeout.ms": (1, 2**31 - 1),
    "group.consumer.heartbeat.interval.ms": (1, 2**31 - 1),
    "group.consumer.min.heartbeat.interval.ms": (1, 2**31 - 1),
    "group.consumer.max.heartbeat.interval.ms": (1, 2**31 - 1),
    "group.consumer.max.size": (1, 2**31 - 1),
}


def test_the_table_covers_every_group_coordinator_property():
    # the integer keys here; group.consumer.migration.policy, a string, is checked below
    assert set(GROUP_KEYS) | {"group.consumer.migration.policy"} == \
        set(GroupCoordinatorConfig().to_properties())


@pytest.mark.parametrize("value,reason", [
    ("both", "String must be one of (case insensitive): bidirectional, upgrade, downgrade, "
             "disabled"),
    ("", "String must be one of (case insensitive)"),
    (1, "Expected value to be a string, but it was an int"),
    (None, "Expected value to be a string, but it was None"),
])
def test_the_migration_policy_is_refused_by_its_name(value, reason):
    # GroupCoordinatorConfig: CONSUMER_GROUP_MIGRATION_POLICY_CONFIG is validated by
    # ConfigDef.CaseInsensitiveValidString.in(ConsumerGroupMigrationPolicy's names)
    with pytest.raises(ValueError) as err:
        GroupCoordinatorConfig.from_properties({"group.consumer.migration.policy": value})
    assert f"Invalid value {value!r} for configuration group.consumer.migration.policy: " in \
        str(err.value)
    assert reason in str(err.value)


def test_the_migration_policy_names_and_default():
    # ConsumerGroupMigrationPolicy: Kafka's default is bidirectional; names are case-insensitive
    from coordinator_kit.group.config import ConsumerGroupMigrationPolicy as P
    assert GroupCoordinatorConfig().consumer_group_migration_policy is P.BIDIRECTIONAL
    assert GroupCoordinatorConfig().to_properties()["group.consumer.migration.policy"] == \
        "bidirectional"
    table = {p.config_name: (p.is_upgrade_enabled, p.is_downgrade_enabled) for p in P}
    assert table == {"bidirectional": (True, True), "upgrade": (True, False),
                     "downgrade": (False, True), "disabled": (False, False)}
    c = GroupCoordinatorConfig.from_properties({"group.consumer.migration.policy": "DownGrade"})
    assert c.consumer_group_migration_policy is P.DOWNGRADE


def _group_cases() -> list[tuple[str, Any, str]]:
    cases = []
    for key, (low, high) in GROUP_KEYS.items():
        cases += [(key, "6000", "Expected value to be"), (key, 1.5, "but it was a float"),
                  (key, True, "but it was a bool"), (key, None, "but it was None"),
                  (key, low - 1, f"Value must be at least {low}"),
                  (key, high + 1, f"Value must be at most {high}")]
    return cases


@pytest.mark.parametrize("key,value,reason", _group_cases(),
                         ids=[f"{k}={v!r}" for k, v, _ in _group_cases()])
def test_group_coordinator_config_refuses_each_property_by_its_key(key, value, reason):
    with pytest.raises(ValueError) as err:
        GroupCoordinatorConfig.from_properties({key: value})
    assert f"Invalid value {value!r} for configuration {key}: " in str(err.value)
    assert reason in str(err.value)


def test_a_cluster_names_the_group_coordinator_key():
    with pytest.raises(ValueError, match=r"Invalid value '6000' for configuration "
                                         r"group.min.session.timeout.ms"):
        Cluster(group_config={"group.min.session.timeout.ms": "6000"})
    with pytest.raises(TypeError, match="group coordinator configs are a mapping of Kafka key"):
        GroupCoordinatorConfig.from_properties([("group.max.size", 3)])


# -- hypothesis: any wrong-typed value, any field -------------------------------------------------

_ANYTHING = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                      st.text(max_size=8), st.binary(max_size=4),
                      st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=2),
                                                                           st.integers(),
                                                                           max_size=1))


def _not_int(value: Any) -> bool:
    return isinstance(value, bool) or not isinstance(value, int)


def _wrong_for(field: str) -> st.SearchStrategy[Any]:
    """Values of a type the field does not take (a bool is not an int here)."""
    kind = {"group_id": str, "client_id": str, "group_instance_id": (str, type(None)),
            "enable_auto_commit": bool, "auto_offset_reset": str, "client_style": str,
            "partition_assignment_strategy": (list, tuple), "group_protocol": str,
            "group_remote_assignor": (str, type(None))}.get(field, int)

    def wrong(value: Any) -> bool:
        if kind is int:
            return _not_int(value)
        if field == "partition_assignment_strategy" and isinstance(value, list):
            return any(not isinstance(v, str) for v in value)  # a list of non-names
        return not isinstance(value, kind)

    return _ANYTHING.filter(wrong)


@st.composite
def _consumer_field_and_wrong_value(draw: Any) -> tuple[str, Any]:
    field = draw(st.sampled_from(sorted(CONSUMER_FIELDS)))
    return field, draw(_wrong_for(field))


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(_consumer_field_and_wrong_value())
def test_any_wrong_typed_consumer_setting_is_refused_by_its_key(case):
    field, value = case
    with pytest.raises((ValueError, TypeError)) as err:
        ConsumerConfig.of(**{"group_id": "g", field: value})
    assert CONSUMER_FIELDS[field][0] in str(err.value)


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.filter_too_much])
@given(st.sampled_from(sorted(GROUP_KEYS)), _ANYTHING.filter(_not_int))
@example("group.coordinator.append.linger.ms", "\u00b9")  # '¹'.isdigit(), but int() refuses it
@example("offsets.retention.minutes", "\u0661\u0662")     # Arabic-Indic 12: int() takes it
def test_any_wrong_typed_group_coordinator_property_is_refused_by_its_key(key, value):
    with pytest.raises((ValueError, TypeError)) as err:
        GroupCoordinatorConfig.from_properties({key: value})
    assert key in str(err.value)


# -- add_consumer's own arguments ----------------------------------------------------------------

ADD_CASES: list[tuple[dict[str, Any], type[Exception], tuple[str, ...]]] = [
    ({"topics": "orders"}, TypeError,
     ("topics", "'orders'", "sequence of letters", "('orders',)", "['orders']")),
    ({"topics": 5}, TypeError, ("topics", "5", "tuple or list")),
    ({"topics": ("orders", 5)}, TypeError, ("topic name", "5")),
    ({"topics": ()}, ValueError, ("at least one topic",)),
    ({"topics": ("nope",)}, ValueError, ("unknown topic", "'nope'", "['orders']")),
    ({"processing_ms": "1"}, TypeError, ("processing_ms", "'1'", "milliseconds")),
    ({"processing_ms": 1.5}, TypeError, ("processing_ms", "1.5")),
    ({"processing_ms": True}, TypeError, ("processing_ms", "True")),
    ({"processing_ms": -1}, ValueError, ("processing_ms", ">= 0", "-1")),
    ({"start": "no"}, TypeError, ("start", "'no'", "True or False")),
    ({"session_timeout": 10_000}, ValueError, ("session_timeout", "session_timeout_ms")),
]


@pytest.mark.parametrize("kwargs,error,words", ADD_CASES, ids=[repr(c[0]) for c in ADD_CASES])
def test_add_consumer_refuses_a_bad_argument_and_keeps_nothing(kwargs, error, words):
    cluster = Cluster()
    events = len(cluster.trace.events)
    with pytest.raises(error) as err:
        cluster.add_consumer("c1", **kwargs)
    for word in words:
        assert word in str(err.value), (word, str(err.value))
    assert cluster.consumers == {} and len(cluster.trace.events) == events
    cluster.add_consumer("c1")  # the name is still free


@pytest.mark.parametrize("name", [5, None, ""])
def test_a_consumer_name_is_a_non_empty_str(name):
    with pytest.raises(TypeError, match=r"a consumer's name \(its client.id\) is a non-empty str"):
        Cluster().add_consumer(name)


# -- faults ---------------------------------------------------------------------------------------

FAULT_CASES: list[tuple[str, tuple[Any, ...], type[Exception], tuple[str, ...]]] = [
    ("drop_heartbeats", ("a", "no"), TypeError, ("drop", "'no'", "True or False")),
    ("drop_heartbeats", ("a", 0), TypeError, ("drop", "0", "True or False")),
    ("cut_off", ("a", "no"), TypeError, ("cut", "'no'", "True or False")),
    ("stall_replica", (0, 1, "yes"), TypeError, ("stalled", "'yes'", "True or False")),
    ("stall_replica", (0, "1"), TypeError, ("broker", "'1'", "[0, 1, 2]")),
    ("stall_replica", (True, 1), TypeError, ("partition", "True")),
    ("move_coordinator", ("group-1", "1"), TypeError, ("broker", "'1'", "[0, 1, 2]")),
    ("move_coordinator", ("group-1", True), TypeError, ("broker", "True")),
    ("move_coordinator", ("group-1", 7), ValueError, ("no broker 7", "[0, 1, 2]")),
    ("move_coordinator", (True,), TypeError, ("group id", "partition number", "True")),
    ("move_coordinator", (2.0,), TypeError, ("group id", "2.0")),
    ("move_coordinator", (9,), ValueError, ("__consumer_offsets-9", "0..2")),
    ("move_coordinator", (-1,), ValueError, ("__consumer_offsets--1", "0..2")),
    ("fail_next_append", (0, "boom"), TypeError, ("error", "'boom'", "Errors.KAFKA_STORAGE_ERROR",
                                                  "from coordinator_kit.errors import Errors")),
    ("fail_next_append", (0, "NOT_ENOUGH_REPLICAS"), TypeError,
     ("'NOT_ENOUGH_REPLICAS'", "pass Errors.NOT_ENOUGH_REPLICAS")),
    ("fail_next_append", (0, Errors.NONE), ValueError, ("Errors.NONE", "success")),
    ("fail_next_append", ("0",), TypeError, ("partition", "'0'")),
    ("fail_next_load", (0, "1"), TypeError, ("broker", "'1'")),
    ("pause", ("a", -5), ValueError, ("pause", "-5", "more than 0 ms")),
    ("pause", ("a", 1.5), TypeError, ("pause", "1.5", "whole number of milliseconds")),
    ("pause", ("a", True), TypeError, ("pause", "True")),
    ("slow_poll", ("a", "fast"), TypeError, ("processing_ms", "'fast'", "milliseconds")),
    ("restart_consumer", ("a", "1000"), ValueError, ("down_ms", "'1000'", ">= 0")),
    ("restart_consumer", ("a", True), ValueError, ("down_ms", "True")),
    ("crash", ("ghost",), KeyError, ("ghost", "'a'")),
]


@pytest.mark.parametrize("method,args,error,words", FAULT_CASES,
                         ids=[f"{m}{a!r}" for m, a, _, _ in FAULT_CASES])
def test_a_fault_with_a_bad_argument_is_refused_before_anything_changes(method, args, error,
                                                                       words):
    cluster = Cluster()
    cluster.add_consumer("a")
    cluster.run_for(5_000)
    a = cluster.consumer("a")
    before = (len(cluster.trace.events), len(cluster.scheduler.pending()), a.drop_heartbeats,
              set(cluster.network.cut), a.paused_until, a.processing_ms, a.running,
              {tp: (p.leader_id, p.leader_epoch, len(p._append_failures))
               for tp, p in cluster.partitions.items()})
    with pytest.raises(error) as err:
        getattr(cluster, method)(*args)
    for word in words:
        assert word in str(err.value), (word, str(err.value))
    assert cluster.consumer("a") is a
    assert before == (len(cluster.trace.events), len(cluster.scheduler.pending()),
                      a.drop_heartbeats, set(cluster.network.cut), a.paused_until,
                      a.processing_ms, a.running,
                      {tp: (p.leader_id, p.leader_epoch, len(p._append_failures))
                       for tp, p in cluster.partitions.items()})


def test_bools_and_errors_that_are_right_are_still_taken():
    cluster = Cluster()
    cluster.add_consumer("a")
    cluster.drop_heartbeats("a", False)
    cluster.cut_off("a", False)
    cluster.stall_replica(0, 1, False)
    cluster.fail_next_append(0, Errors.NOT_ENOUGH_REPLICAS)
    leader = cluster.coordinator_for("group-1")
    cluster.move_coordinator("group-1")
    assert cluster.coordinator_for("group-1") != leader


# -- how long one run may be ----------------------------------------------------------------------

def test_a_run_longer_than_a_virtual_week_is_refused_and_nothing_runs():
    """run_for(10**12) neither refused nor finished: heartbeats and replica fetches keep the
    scheduler busy for ever. More than MAX_RUN_MS (a week) is refused; run_until is offered."""
    assert MAX_RUN_MS == 7 * 24 * 3600 * 1000
    cluster = Cluster()
    cluster.add_consumer("a")
    cluster.run_for(1_000)
    events = len(cluster.trace.events)
    for call in (lambda: cluster.run_for(10**12), lambda: cluster.run_for(MAX_RUN_MS + 1),
                 lambda: cluster.run_until(lambda: False, limit_ms=10**12),
                 lambda: cluster.run_until(1_000 + MAX_RUN_MS + 1)):
        with pytest.raises(ValueError) as err:
            call()
        for word in ("virtual week", "604,800,000 ms", "run_until", "mistake"):
            assert word in str(err.value), (word, str(err.value))
    assert cluster.scheduler.now == 1_000 and len(cluster.trace.events) == events
    with pytest.raises(TypeError, match="ms is a whole number of milliseconds >= 0, got True"):
        cluster.run_for(True)
    with pytest.raises(TypeError, match="limit_ms is a whole number of milliseconds >= 0, got "
                                        "None"):
        cluster.run_until(lambda: False, limit_ms=None)


def test_a_whole_virtual_week_still_runs():
    cluster = Cluster(topics={})  # no consumers: a week of the brokers alone is quick
    cluster.run_for(MAX_RUN_MS)
    assert cluster.scheduler.now == MAX_RUN_MS


def test_the_recording_refuses_the_same_runs():
    """The panel's Advance goes through Recording.run_for: the bound holds there too."""
    cluster = Cluster()
    cluster.add_consumer("a")
    recording = Recording(cluster)
    recording.run_for(1_000)
    for call in (lambda: recording.run_for(10**12), lambda: recording.run_to(10**12),
                 lambda: recording.run_to(1_000 + MAX_RUN_MS + 1),
                 lambda: recording.next_event(limit_ms=MAX_RUN_MS + 1)):
        with pytest.raises(ValueError, match="more than a virtual week"):
            call()
    assert cluster.scheduler.now == 1_000
    with pytest.raises(ValueError, match="whole number of milliseconds"):
        recording.run_for("5")


# -- the panel stays usable -----------------------------------------------------------------------

def test_a_refused_consumer_leaves_the_panel_and_the_cluster_as_they_were():
    from coordinator_kit.viz import ControlPanel

    cluster = Cluster(topics={"payments": 3})  # no "orders": the Add button's consumer fails
    panel = ControlPanel(cluster)
    assert panel.add_consumer() is False
    assert "unknown topic(s) ['orders']; the cluster has ['payments']" in str(panel.last_error)
    assert cluster.consumers == {} and panel.recording.branch.actions == []
    # a bad setting through the recording (what the panel records) is undone the same way
    with pytest.raises(ValueError, match="retry.backoff.ms"):
        panel.recording.act("add_consumer", "c1", "group-1", topics=["payments"],
                            retry_backoff_ms="100")
    assert cluster.consumers == {} and panel.recording.branch.actions == []
    assert panel.recording.act("add_consumer", "c1", "group-1", topics=["payments"]).name == "c1"
    assert panel.advance(5_000) and cluster.consumer("c1").owned
    assert panel.add_consumer("c1") is False  # a taken name: refused, the panel goes on
    assert "there is already a consumer named 'c1'" in str(panel.last_error)
    assert panel.step() and panel.step_back()


def test_a_failed_append_pending_in_a_checkpoint_can_be_restored():
    """KafkaError pickles by its Errors member: a checkpoint taken while a fail_next_append
    waits is restored when the next action is refused (it raised AttributeError)."""
    recording = Recording(Cluster())
    recording.act("fail_next_append", 0, Errors.NOT_ENOUGH_REPLICAS)
    with pytest.raises(TypeError, match="error is an Errors member"):
        recording.act("fail_next_append", 0, "boom")
    failures = recording.cluster.partitions[recording.cluster._offsets_partition(0)]._append_failures
    assert [f.error for f in failures] == [Errors.NOT_ENOUGH_REPLICAS]


@pytest.mark.parametrize("group_id", [123, "", ["group-1"]])
def test_the_panel_refuses_a_bad_group_id_by_name(group_id):
    from coordinator_kit.viz import ControlPanel

    with pytest.raises(TypeError, match=r"group_id is a group id \(a non-empty str\)"):
        ControlPanel(Cluster(), group_id=group_id)



def test_consumer_group_timeouts_are_checked_against_each_other():
    # GroupCoordinatorConfig's startup checks on the group.consumer.* keys
    with pytest.raises(ValueError, match="group.consumer.heartbeat.interval.ms must be less "
                                         "than group.consumer.session.timeout.ms"):
        GroupCoordinatorConfig.from_properties({
            "group.consumer.min.session.timeout.ms": 5000,
            "group.consumer.session.timeout.ms": 5000})
    with pytest.raises(ValueError, match="group.consumer.session.timeout.ms must be less than or "
                                         "equal to group.consumer.max.session.timeout.ms"):
        GroupCoordinatorConfig.from_properties({"group.consumer.session.timeout.ms": 60001})
