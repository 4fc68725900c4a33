"""The group coordinator's records and the consumer protocol bytes, checked against Kafka's layout.

Round trips cover every record kind at every version (hypothesis, derandomized); the byte-level
tests spell the expected bytes out field by field from the JSON schemas so a reader sees the
layout; the consumer-protocol bytes are compared with kafka-python 3.0.12's own encoders
(`kafka.protocol.consumer.metadata`, generated from the same JSON schemas as Kafka's).
"""

from __future__ import annotations

import struct
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

with warnings.catch_warnings():  # kafka-python loads its JSON schemas with a deprecated API
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment as KafkaPyAssignment
    from kafka.protocol.consumer.metadata import \
        ConsumerProtocolSubscription as KafkaPySubscription

from coordinator_kit.group.protocol import (ConsumerProtocolAssignment,
                                            ConsumerProtocolSubscription, deserialize_version)
from coordinator_kit.group.records import (GROUP_METADATA_VALUE, OFFSET_COMMIT_VALUE,
                                           RECORD_TYPE_NAMES, BufferUnderflowError,
                                           GroupCoordinatorRecordSerde, Message, SchemaError,
                                           UnsupportedVersionError, Versions, field,
                                           new_empty_group_metadata_record,
                                           new_group_metadata_record,
                                           new_group_metadata_tombstone,
                                           new_offset_commit_record, new_offset_commit_tombstone)
from coordinator_kit.runtime.records import CoordinatorRecord, UnknownRecordTypeError
from coordinator_kit.topic import TopicPartition

SERDE = GroupCoordinatorRecordSerde()
PROPERTY = settings(derandomize=True, max_examples=60, deadline=None)

# --- byte spelling helpers: the non-flexible and flexible (compact) encodings --------------


def i8(n: int) -> bytes:
    return struct.pack(">b", n)


def i16(n: int) -> bytes:
    return struct.pack(">h", n)


def i32(n: int) -> bytes:
    return struct.pack(">i", n)


def i64(n: int) -> bytes:
    return struct.pack(">q", n)


def string(s: str | None) -> bytes:  # int16 length (-1 = null) + UTF-8
    return i16(-1) if s is None else i16(len(s.encode())) + s.encode()


def byts(b: bytes) -> bytes:  # int32 length + bytes
    return i32(len(b)) + b


def uvarint(n: int) -> bytes:  # unsigned varint, 7 bits a byte, low bits first
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    return bytes(out + bytes([n]))


def compact_string(s: str | None) -> bytes:  # uvarint(length + 1), 0 = null
    return uvarint(0) if s is None else uvarint(len(s.encode()) + 1) + s.encode()


def compact_bytes(b: bytes) -> bytes:
    return uvarint(len(b) + 1) + b


NO_TAGGED_FIELDS = uvarint(0)

# --- strategies ----------------------------------------------------------------------------

int32s = st.integers(-2**31, 2**31 - 1)
int64s = st.integers(-2**63, 2**63 - 1)
texts = st.text(max_size=12)
names = st.text(alphabet="abcdefgh._-", min_size=1, max_size=6)

offset_keys = st.fixed_dictionaries({"group": texts, "topic": texts, "partition": int32s})
offset_values = st.fixed_dictionaries({
    "offset": int64s, "leaderEpoch": int32s, "metadata": texts, "commitTimestamp": int64s,
    "expireTimestamp": int64s})
members = st.fixed_dictionaries({
    "memberId": texts, "groupInstanceId": st.none() | texts, "clientId": texts,
    "clientHost": texts, "rebalanceTimeout": int32s, "sessionTimeout": int32s,
    "subscription": st.binary(max_size=20), "assignment": st.binary(max_size=20)})
group_values = st.fixed_dictionaries({
    "protocolType": texts, "generation": int32s, "protocol": st.none() | texts,
    "leader": st.none() | texts, "currentStateTimestamp": int64s,
    "members": st.lists(members, max_size=4)})


def round_trip(record: CoordinatorRecord) -> CoordinatorRecord:
    key, value = SERDE.serialize(record)
    back = SERDE.deserialize(key, value)
    assert SERDE.serialize(back) == (key, value), "re-encoding what was read changed the bytes"
    return back


# --- round trips -----------------------------------------------------------------------------

@pytest.mark.parametrize("version", range(5))
@pytest.mark.parametrize("key_type", [0, 1])
@PROPERTY
@given(key=offset_keys, value=offset_values)
def test_offset_commit_round_trips_at_every_version(key_type, version, key, value):
    back = round_trip(CoordinatorRecord(key_type, key, value, version))
    # Fields a version lacks are ignorable: dropped on write, read back as their defaults.
    assert back == CoordinatorRecord(key_type, key, OFFSET_COMMIT_VALUE.at_version(value, version),
                                     version)
    assert back.value["leaderEpoch"] == (value["leaderEpoch"] if version >= 3 else -1)
    assert back.value["expireTimestamp"] == (value["expireTimestamp"] if version == 1 else -1)


@pytest.mark.parametrize("version", range(5))
@PROPERTY
@given(group=texts, value=group_values)
def test_group_metadata_round_trips_at_every_version(version, group, value):
    back = round_trip(CoordinatorRecord(2, {"group": group}, value, version))
    assert back == CoordinatorRecord(2, {"group": group},
                                     GROUP_METADATA_VALUE.at_version(value, version), version)
    if version >= 3:
        assert back.value == value


@pytest.mark.parametrize("record_type", [0, 1, 2])
def test_tombstones_have_no_value_bytes_and_round_trip(record_type):
    key = {"group": "g"} if record_type == 2 else {"group": "g", "topic": "t", "partition": 7}
    record = CoordinatorRecord(record_type, key, None)
    key_bytes, value_bytes = SERDE.serialize(record)
    assert value_bytes is None
    assert SERDE.deserialize(key_bytes, None) == record
    assert SERDE.deserialize(key_bytes, None).is_tombstone


@PROPERTY
@given(group=texts, topic=texts, partition=int32s, offset=int64s,
       leader_epoch=st.none() | int32s, metadata=texts, commit=int64s,
       expire=st.none() | int64s)
def test_offset_commit_helper_picks_kafkas_value_version(group, topic, partition, offset,
                                                         leader_epoch, metadata, commit, expire):
    record = new_offset_commit_record(group, topic, partition, offset, leader_epoch, metadata,
                                      commit, expire)
    assert record.record_type == 1
    assert record.value_version == (3 if expire is None else 1)
    assert record.value["leaderEpoch"] == (-1 if leader_epoch is None else leader_epoch)
    back = round_trip(record)
    assert back == CoordinatorRecord(1, record.key, OFFSET_COMMIT_VALUE.at_version(
        record.value, record.value_version), record.value_version)
    if expire is None:
        assert back == record  # v3 carries every field the helper sets


def test_offset_commit_with_expire_timestamp_loses_its_leader_epoch_on_reload():
    """Kafka's own behaviour: v1 has no leaderEpoch, so replay-at-write sees 5, reload sees -1."""
    record = new_offset_commit_record("g", "t", 0, 10, 5, "", 100, expire_timestamp=200)
    back = round_trip(record)
    assert record.value["leaderEpoch"] == 5
    assert back.value["leaderEpoch"] == -1
    assert back.value["expireTimestamp"] == 200


@PROPERTY
@given(group=texts, protocol_type=st.none() | texts, generation=int32s,
       protocol=st.none() | texts, leader=st.none() | texts, timestamp=st.none() | int64s,
       group_members=st.lists(members, max_size=3))
def test_group_metadata_helpers_round_trip(group, protocol_type, generation, protocol, leader,
                                           timestamp, group_members):
    record = new_group_metadata_record(group, protocol_type, generation, protocol, leader,
                                       timestamp, group_members)
    assert (record.record_type, record.value_version) == (2, 3)
    assert record.value["protocolType"] == (protocol_type or "")
    assert record.value["currentStateTimestamp"] == (-1 if timestamp is None else timestamp)
    assert round_trip(record) == record
    empty = new_empty_group_metadata_record(group, timestamp)
    assert round_trip(empty) == empty


def test_group_metadata_helper_fills_member_defaults_and_refuses_missing_bytes():
    record = new_group_metadata_record("g", "consumer", 1, "range", "m", 5, [
        {"memberId": "m", "clientId": "c", "clientHost": "/h", "sessionTimeout": 10,
         "subscription": b"s", "assignment": b"a"}])
    member = record.value["members"][0]
    assert member["groupInstanceId"] is None and member["rebalanceTimeout"] == -1
    with pytest.raises(RuntimeError, match="no defined protocol"):
        new_group_metadata_record("g", "consumer", 1, "range", "m", 5, [
            {"memberId": "m", "subscription": None, "assignment": b""}])
    with pytest.raises(RuntimeError, match="Attempted to write member m of group g with no "
                                           "assignment"):
        new_group_metadata_record("g", "consumer", 1, "range", "m", 5, [
            {"memberId": "m", "subscription": b"", "assignment": None}])
    with pytest.raises(SchemaError, match="unknown field"):
        new_group_metadata_record("g", "consumer", 1, "range", "m", 5, [
            {"member_id": "m", "subscription": b"", "assignment": b""}])


def test_empty_group_metadata_record_and_tombstones_match_kafkas_helpers():
    assert new_empty_group_metadata_record("g").value == {
        "protocolType": "", "generation": 0, "protocol": None, "leader": None,
        "currentStateTimestamp": -1, "members": []}
    assert new_group_metadata_tombstone("g") == CoordinatorRecord(2, {"group": "g"}, None)
    assert new_offset_commit_tombstone("g", "t", 3) == CoordinatorRecord(
        1, {"group": "g", "topic": "t", "partition": 3}, None)


# --- the bytes, field by field ----------------------------------------------------------------

def test_offset_commit_bytes_v3():
    record = new_offset_commit_record("grp", "orders", 4, offset=1234, leader_epoch=7,
                                      metadata="meta", commit_timestamp=1_700_000_000_000)
    expected_key = (i16(1)                       # record type (= key version) 1
                    + string("grp")              # group
                    + string("orders")           # topic
                    + i32(4))                    # partition
    expected_value = (i16(3)                     # value version 3
                      + i64(1234)                # offset
                      + i32(7)                   # leaderEpoch (v3+)
                      + string("meta")           # metadata
                      + i64(1_700_000_000_000))  # commitTimestamp; no expireTimestamp (v1 only)
    assert SERDE.serialize(record) == (expected_key, expected_value)
    assert expected_key.hex() == "0001000367727000066f726465727300000004"


def test_offset_commit_bytes_v1_carry_the_expire_timestamp():
    record = new_offset_commit_record("g", "t", 0, 5, None, "", 100, expire_timestamp=200)
    assert SERDE.serialize_value(record) == (i16(1) + i64(5) + string("") + i64(100) + i64(200))


def test_offset_commit_bytes_v4_are_flexible():
    record = CoordinatorRecord(1, {"group": "g", "topic": "t", "partition": 0}, {
        "offset": 9, "leaderEpoch": -1, "metadata": "m", "commitTimestamp": 3,
        "expireTimestamp": -1}, 4)
    assert SERDE.serialize_value(record) == (
        i16(4) + i64(9) + i32(-1) + compact_string("m") + i64(3) + NO_TAGGED_FIELDS)


MEMBERS = [
    {"memberId": "m-1", "groupInstanceId": "static-1", "clientId": "app", "clientHost": "/10.0.0.1",
     "rebalanceTimeout": 300000, "sessionTimeout": 45000, "subscription": b"\x00\x01",
     "assignment": b"\x00\x02\x03"},
    {"memberId": "m-2", "groupInstanceId": None, "clientId": "app", "clientHost": "/10.0.0.2",
     "rebalanceTimeout": 60000, "sessionTimeout": 10000, "subscription": b"",
     "assignment": b""},
]


def test_group_metadata_bytes_v3():
    record = new_group_metadata_record("grp", "consumer", 5, "range", "m-1", 1234, MEMBERS)
    expected_key = i16(2) + string("grp")       # record type 2 (= key version), group
    expected_value = (
        i16(3)                                  # value version 3
        + string("consumer")                    # protocolType
        + i32(5)                                # generation
        + string("range")                       # protocol (nullable)
        + string("m-1")                         # leader (nullable)
        + i64(1234)                             # currentStateTimestamp (v2+)
        + i32(2)                                # members: int32 count
        + string("m-1") + string("static-1")    #   memberId, groupInstanceId (v3+, nullable)
        + string("app") + string("/10.0.0.1")   #   clientId, clientHost
        + i32(300000) + i32(45000)              #   rebalanceTimeout (v1+), sessionTimeout
        + byts(b"\x00\x01") + byts(b"\x00\x02\x03")  # subscription, assignment
        + string("m-2") + string(None)          #   second member: null groupInstanceId = -1
        + string("app") + string("/10.0.0.2")
        + i32(60000) + i32(10000)
        + byts(b"") + byts(b""))
    assert SERDE.serialize(record) == (expected_key, expected_value)


def test_group_metadata_bytes_v0_drop_the_newer_fields():
    value = GROUP_METADATA_VALUE.at_version(
        new_group_metadata_record("g", "consumer", 1, None, None, 99, MEMBERS[:1]).value, 0)
    record = CoordinatorRecord(2, {"group": "g"}, value, 0)
    assert SERDE.serialize_value(record) == (
        i16(0) + string("consumer") + i32(1) + string(None) + string(None)
        + i32(1) + string("m-1") + string("app") + string("/10.0.0.1") + i32(45000)
        + byts(b"\x00\x01") + byts(b"\x00\x02\x03"))


def test_group_metadata_bytes_v4_are_flexible():
    value = new_group_metadata_record("g", "consumer", 1, None, "m-1", 7, MEMBERS).value
    expected = (
        i16(4) + compact_string("consumer") + i32(1) + compact_string(None)
        + compact_string("m-1") + i64(7)
        + uvarint(2 + 1)                        # compact array: count + 1
        + compact_string("m-1") + compact_string("static-1") + compact_string("app")
        + compact_string("/10.0.0.1") + i32(300000) + i32(45000)
        + compact_bytes(b"\x00\x01") + compact_bytes(b"\x00\x02\x03")
        + NO_TAGGED_FIELDS                      # every struct ends with its tagged fields
        + compact_string("m-2") + compact_string(None) + compact_string("app")
        + compact_string("/10.0.0.2") + i32(60000) + i32(10000)
        + compact_bytes(b"") + compact_bytes(b"") + NO_TAGGED_FIELDS
        + NO_TAGGED_FIELDS)                     # ... and so does the top-level struct
    record = CoordinatorRecord(2, {"group": "g"}, value, 4)
    assert SERDE.serialize_value(record) == expected
    assert SERDE.deserialize(SERDE.serialize_key(record), expected) == record


def test_unknown_tagged_fields_are_skipped_when_reading():
    body = i64(9) + i32(-1) + compact_string("m") + i64(3)
    tagged = uvarint(2) + uvarint(0) + uvarint(3) + b"abc" + uvarint(7) + uvarint(0)
    key = i16(1) + string("g") + string("t") + i32(0)
    record = SERDE.deserialize(key, i16(4) + body + tagged)
    assert record.value == {"offset": 9, "leaderEpoch": -1, "metadata": "m",
                            "commitTimestamp": 3, "expireTimestamp": -1}


def test_a_long_string_uses_a_multi_byte_varint():
    record = CoordinatorRecord(1, {"group": "g", "topic": "t", "partition": 0}, {
        "offset": 0, "leaderEpoch": 0, "metadata": "x" * 200, "commitTimestamp": 0,
        "expireTimestamp": -1}, 4)
    value = SERDE.serialize_value(record)
    assert value[2 + 8 + 4:2 + 8 + 4 + 2] == bytes([0xC9, 0x01])  # 201 = 0b1_1001001
    assert round_trip(record) == record


# --- unknown types and malformed input -------------------------------------------------------

@pytest.mark.parametrize("record_type", [*range(9, 16), 16, 99, -1])
def test_types_beyond_consumer_groups_are_unknown_to_the_kit(record_type):
    # share groups (types 9-15) are not modelled
    key = i16(record_type) + string("g")
    with pytest.raises(UnknownRecordTypeError) as caught:
        SERDE.deserialize(key, i16(0) + i32(1))
    assert caught.value.unknown_type == record_type
    with pytest.raises(UnknownRecordTypeError):
        SERDE.deserialize(key, None)
    with pytest.raises(ValueError, match=f"can't write record type {record_type}"):
        SERDE.serialize(CoordinatorRecord(record_type, {"group": "g"}, {"epoch": 1}))


def test_kafka_names_every_type_its_serde_reads():
    assert sorted(RECORD_TYPE_NAMES) == list(range(16))
    assert SERDE.known_types == {t: RECORD_TYPE_NAMES[t] for t in range(9)}


def test_a_log_of_group_records_reloads_to_the_same_records():
    """What the loader does: deserialize every (key, value) and skip unknown types."""
    written = [
        new_offset_commit_record("g", "t", 0, 10, 3, "", 1000),
        new_offset_commit_record("g", "t", 1, 20, None, "x", 1001, expire_timestamp=5000),
        new_group_metadata_record("g", "consumer", 1, "range", "m-1", 1000, MEMBERS),
        new_offset_commit_tombstone("g", "t", 0),
        new_empty_group_metadata_record("g", 2000),
        new_group_metadata_tombstone("g"),
    ]
    log = [SERDE.serialize(r) for r in written]
    log.insert(2, (i16(11) + string("g"), i16(0) + i32(1)))  # a ShareGroupMetadata record
    loaded, skipped = [], []
    for key, value in log:
        try:
            loaded.append(SERDE.deserialize(key, value))
        except UnknownRecordTypeError as exc:
            skipped.append(exc.unknown_type)
    assert skipped == [11]
    expected = [CoordinatorRecord(r.record_type, r.key, None if r.value is None else
                                  OFFSET_COMMIT_VALUE.at_version(r.value, r.value_version)
                                  if r.record_type == 1 else r.value, r.value_version)
                for r in written]
    assert loaded == expected
    assert loaded[0] == written[0] and loaded[2] == written[2]


def test_malformed_records_fail_with_kafkas_messages():
    key, value = SERDE.serialize(new_group_metadata_record("g", "c", 1, "p", "m", 1, MEMBERS))
    with pytest.raises(RuntimeError, match=r"^Could not read version from key's buffer\.$"):
        SERDE.deserialize(b"\x00", value)
    with pytest.raises(RuntimeError, match=r"^Could not read version from value's buffer\.$"):
        SERDE.deserialize(key, b"")
    with pytest.raises(RuntimeError, match=r"^Could not read record with version 5 from value's "
                                           r"buffer due to: Can't read version 5 of "
                                           r"GroupMetadataValue\.$"):
        SERDE.deserialize(key, i16(5) + value[2:])
    with pytest.raises(RuntimeError, match="from value's buffer due to: buffer underflow"):
        SERDE.deserialize(key, value[:-1])
    with pytest.raises(RuntimeError, match="from key's buffer due to: buffer underflow"):
        SERDE.deserialize(key[:-1], value)


def test_writing_checks_the_schema():
    good = new_offset_commit_record("g", "t", 0, 1, 1, "", 1).value
    write = OFFSET_COMMIT_VALUE.encode
    with pytest.raises(SchemaError, match="non-nullable field metadata"):
        write({**good, "metadata": None}, 3)
    with pytest.raises(SchemaError, match=r"unknown field\(s\) \['leader_epoch'\]"):
        write({**good, "leader_epoch": 1}, 3)
    with pytest.raises(SchemaError, match="does not fit an int32"):
        write({**good, "leaderEpoch": 2**31}, 3)
    with pytest.raises(SchemaError, match="must be an int32"):
        write({**good, "leaderEpoch": True}, 3)
    with pytest.raises(SchemaError, match="'metadata' field is too long to be serialized"):
        write({**good, "metadata": "x" * 0x8000}, 3)
    with pytest.raises(UnsupportedVersionError, match="Can't write version 5 of OffsetCommitValue"):
        write(good, 5)
    with pytest.raises(SchemaError, match="non-nullable field metadata was serialized as null"):
        OFFSET_COMMIT_VALUE.decode(i64(1) + i32(1) + string(None) + i64(1), 3)
    # A field that is not ignorable may not carry a non-default value at a version lacking it.
    strict = Message.of("Strict", "0-1", "none", field("a", "int32", "0+"),
                        field("b", "int32", "1+", default=-1))
    assert strict.encode({"a": 1, "b": -1}, 0) == i32(1)
    with pytest.raises(UnsupportedVersionError, match="non-default b at version 0"):
        strict.encode({"a": 1, "b": 2}, 0)


def test_versions_parse_kafkas_notation():
    assert Versions.parse("0+") == Versions(0, 0x7FFF)
    assert Versions.parse("0-1") == Versions(0, 1)
    assert 2 in Versions.parse("2") and 3 not in Versions.parse("2")
    assert 0 not in Versions.parse("none")


# --- the consumer protocol, against kafka-python's encoders ------------------------------------

topic_lists = st.lists(names, unique=True, max_size=4)
partition_lists = st.lists(st.builds(TopicPartition, names, st.integers(0, 50)), unique=True,
                           max_size=6)
user_datas = st.none() | st.binary(max_size=10)


def java_grouping(partitions):
    grouped: dict[str, list[int]] = {}
    for tp in partitions:
        grouped.setdefault(tp.topic, []).append(tp.partition)
    return list(grouped.items())


@pytest.mark.parametrize("version", range(4))
@PROPERTY
@given(topics=topic_lists, user_data=user_datas, owned=partition_lists,
       generation=st.integers(-1, 2**31 - 1), rack=st.none() | names)
def test_subscription_bytes_match_kafka_python(version, topics, user_data, owned, generation,
                                               rack):
    ours = ConsumerProtocolSubscription(topics, user_data, owned, generation, rack)
    # The Java consumer sorts topics and owned partitions; kafka-python writes what it is given.
    theirs = KafkaPySubscription(
        version=version, topics=sorted(topics), user_data=user_data,
        owned_partitions=[KafkaPySubscription.TopicPartition(topic=t, partitions=ps)
                          for t, ps in java_grouping(sorted(owned))],
        generation_id=generation, rack_id=rack)
    encoded = ours.encode(version)
    assert encoded == theirs.encode()
    assert deserialize_version(encoded) == version
    back = ConsumerProtocolSubscription.decode(theirs.encode())
    assert back.topics == tuple(sorted(topics)) and back.user_data == user_data
    assert back.owned_partitions == (tuple(sorted(owned)) if version >= 1 else ())
    assert back.generation_id == (generation if version >= 2 else -1)
    assert back.rack_id == (rack if version >= 3 else None)
    decoded = KafkaPySubscription.decode(encoded)
    assert decoded.topics == sorted(topics) and decoded.user_data == user_data


@pytest.mark.parametrize("version", range(4))
@PROPERTY
@given(assigned=partition_lists, user_data=user_datas)
def test_assignment_bytes_match_kafka_python(version, assigned, user_data):
    ours = ConsumerProtocolAssignment(assigned, user_data)
    theirs = KafkaPyAssignment(
        version=version, user_data=user_data,
        assigned_partitions=[KafkaPyAssignment.TopicPartition(topic=t, partitions=ps)
                             for t, ps in java_grouping(assigned)])
    encoded = ours.encode(version)
    assert encoded == theirs.encode()
    back = ConsumerProtocolAssignment.decode(theirs.encode())
    assert sorted(back.assigned_partitions) == sorted(assigned)
    assert back.user_data == user_data
    assert sorted(KafkaPyAssignment.decode(encoded).partitions()) == sorted(
        (tp.topic, tp.partition) for tp in assigned)


def test_subscription_bytes_by_hand_v3():
    sub = ConsumerProtocolSubscription(["b", "a"], b"ud", [TopicPartition("b", 1),
                                                           TopicPartition("a", 2),
                                                           TopicPartition("a", 0)], 4, "rack-1")
    assert sub.encode(3) == (
        i16(3)                                         # version header
        + i32(2) + string("a") + string("b")           # Topics, sorted
        + byts(b"ud")                                  # UserData (nullable)
        + i32(2)                                       # OwnedPartitions (v1+), grouped by topic
        + string("a") + i32(2) + i32(0) + i32(2)
        + string("b") + i32(1) + i32(1)
        + i32(4)                                       # GenerationId (v2+)
        + string("rack-1"))                            # RackId (v3+, nullable)


def test_assignment_groups_a_topic_wherever_it_reappears():
    assignment = ConsumerProtocolAssignment([TopicPartition("a", 0), TopicPartition("b", 0),
                                             TopicPartition("a", 1)])
    assert assignment.encode(0) == (i16(0) + i32(2) + string("a") + i32(2) + i32(0) + i32(1)
                                    + string("b") + i32(1) + i32(0) + i32(-1))
    assert ConsumerProtocolAssignment.decode(assignment.encode()).assigned_partitions == (
        TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0))


def test_consumer_protocol_versions_like_javas_consumer_protocol():
    sub = ConsumerProtocolSubscription(["t"], rack_id="r")
    assert sub.encode(7) == sub.encode(3)  # above the highest: written as the highest
    newer = i16(4) + sub.encode(3)[2:] + b"fields a v4 appends"
    assert ConsumerProtocolSubscription.decode(newer) == sub  # read with the v3 layout
    with pytest.raises(SchemaError, match="Unsupported subscription version: -1"):
        sub.encode(-1)
    with pytest.raises(SchemaError, match="Unsupported assignment version: -1"):
        ConsumerProtocolAssignment.decode(i16(-1) + i32(0) + i32(-1))
    with pytest.raises(BufferUnderflowError, match="parsing consumer protocol's header"):
        ConsumerProtocolAssignment.decode(b"\x00")
    with pytest.raises(BufferUnderflowError, match="parsing consumer protocol's subscription"):
        ConsumerProtocolSubscription.decode(sub.encode(3)[:-1])
    # Java reads an empty rack id as no rack, and keeps no negative generation.
    assert ConsumerProtocolSubscription.decode(
        ConsumerProtocolSubscription(["t"], rack_id="").encode()).rack_id is None
    assert ConsumerProtocolSubscription(["t"], generation_id=-7).generation_id == -1


def test_offset_commit_fast_path_gives_the_codecs_bytes_and_errors():
    """The serde packs OffsetCommit key/value directly (the record a busy group writes most);
    the bytes equal the schema codec's for every shape, and whatever the direct path does not
    take still gets the codec's error (`CoordinatorRecordSerde` framing)."""
    import random

    from coordinator_kit.group import records as rec

    serde = rec.GroupCoordinatorRecordSerde()
    rng = random.Random(7)
    for _ in range(2_000):
        r = rec.new_offset_commit_record(
            rng.choice(["g", "grüppe", "x" * 300]), rng.choice(["t", "orders", "é"]),
            rng.randint(0, 2**31 - 1), rng.choice([-1, 0, 2**63 - 1, rng.randint(0, 10**12)]),
            rng.choice([None, 0, 2**31 - 1]), rng.choice(["", "meta", "ü" * 50]),
            rng.randint(0, 2**45), rng.choice([None, rng.randint(0, 2**40)]))
        if rng.random() < 0.1:
            r = rec.new_offset_commit_tombstone("g", "t", rng.randint(0, 100))
        assert serde.serialize(r) == (serde.serialize_key(r), serde.serialize_value(r))
    too_big = rec.new_offset_commit_record("g", "t", 0, 2**63, None, "", 0)
    with pytest.raises(rec.SchemaError, match="does not fit an int64"):
        serde.serialize(too_big)
    long_metadata = rec.new_offset_commit_record("g", "t", 0, 1, None, "m" * 40_000, 0)
    with pytest.raises(rec.SchemaError, match="too long"):
        serde.serialize(long_metadata)


# --- KIP-848 consumer group records (types 3-8) -----------------------------------------------

def test_consumer_group_records_round_trip_through_their_bytes():
    """Every consumer group record and its tombstone reads back as written (GroupCoordinator-
    RecordSerde with the ConsumerGroup*Key/Value schemas); a topic id is 16 bytes on the wire."""
    from coordinator_kit.group import records as rec
    tid = "pcuL0yNZ9t5MjfmnGxWEOQ"
    written = [
        rec.new_consumer_group_member_subscription_record(
            "g", "m", "i", None, "client", "/127.0.0.1", ["foo", "bar"], "", 5000, "range"),
        rec.new_consumer_group_subscription_metadata_record("g", {"foo": (tid, 6)}),
        rec.new_consumer_group_epoch_record("g", 7),
        rec.new_consumer_group_target_assignment_record("g", "m", {tid: {0, 2}}),
        rec.new_consumer_group_target_assignment_epoch_record("g", 7),
        rec.new_consumer_group_current_assignment_record("g", "m", 7, 6, 1, {tid: {0}},
                                                         {tid: {2}}),
    ]
    for r in written:
        key, value = SERDE.serialize(r)
        assert key[:2] == i16(r.record_type)
        assert SERDE.deserialize(key, value) == r
        tomb = CoordinatorRecord(r.record_type, r.key, None)
        assert SERDE.deserialize(*SERDE.serialize(tomb)) == tomb
    # ConsumerGroupMetadataValue v0 is flexible: version, Epoch, no tagged fields
    assert SERDE.serialize(written[2])[1] == i16(0) + i32(7) + b"\x00"
    # a Uuid that is not 16 bytes of base64 is refused by name
    with pytest.raises(Exception, match="is not a Uuid"):
        SERDE.serialize(rec.new_consumer_group_target_assignment_record("g", "m", {"x": {0}}))
