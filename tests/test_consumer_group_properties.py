"""Invariants of KIP-848 groups under random joins, leaves, heartbeats (in any order, some
stale, some that do not revoke in time), timeouts and offset commits, on the shard driven by hand:

* at most one member owns (assigned or pending revocation) each partition at any time
  (`ConsumerGroup` partition epochs; `CurrentAssignmentBuilder` never hands out a partition
  its previous owner has not released);
* a member's epoch never decreases while it is in the group;
* an offset commit is accepted only with the member's current epoch
  (`ConsumerGroup.validateOffsetCommit`).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from consumer_group_context import ConsumerGroupContext
from coordinator_kit.errors import KafkaError
from coordinator_kit.group.api import (ConsumerGroupHeartbeatRequest, OffsetCommitRequest,
                                       PartitionData, TopicPartitions)

CLIENTS = 4
OPS = st.lists(st.one_of(
    st.tuples(st.just("join"), st.integers(0, CLIENTS - 1), st.sampled_from(["range", None])),
    st.tuples(st.just("hb"), st.integers(0, CLIENTS - 1), st.just(0)),
    st.tuples(st.just("hb_slow"), st.integers(0, CLIENTS - 1), st.just(0)),
    st.tuples(st.just("hb_stale"), st.integers(0, CLIENTS - 1), st.integers(1, 3)),
    st.tuples(st.just("leave"), st.integers(0, CLIENTS - 1), st.just(0)),
    st.tuples(st.just("sleep"), st.just(0), st.sampled_from([1000, 6000, 30000])),
    st.tuples(st.just("commit"), st.integers(0, CLIENTS - 1), st.integers(-2, 1)),
), min_size=1, max_size=40)


class Client:
    def __init__(self, index: int) -> None:
        self.index = index
        self.generation = 0
        self.member_id: str | None = None
        self.epoch = 0
        self.owned: dict[str, tuple[int, ...]] = {}
        self.previous_owned: dict[str, tuple[int, ...]] = {}

    def new_id(self) -> str:
        self.generation += 1
        return f"c{self.index}-{self.generation}"

    def owned_list(self, owned) -> tuple[TopicPartitions, ...]:
        return tuple(TopicPartitions(t, p) for t, p in sorted(owned.items()) if p)

    def apply(self, response) -> None:
        self.epoch = response.member_epoch
        if response.assignment is not None:
            self.previous_owned = self.owned
            self.owned = {tp.topic_id: tp.partitions for tp in response.assignment.topic_partitions}

    def reset(self) -> None:
        self.member_id, self.epoch, self.owned, self.previous_owned = None, 0, {}, {}


def check_invariants(c: ConsumerGroupContext, epochs: dict[str, int]) -> None:
    group = c.group()
    if group is None:
        epochs.clear()
        return
    owners: dict[tuple[str, int], str] = {}
    for m in group.members.values():
        for assignment in (m.assigned_partitions, m.partitions_pending_revocation):
            for t, parts in assignment.items():
                for p in parts:
                    assert (t, p) not in owners, f"{t}-{p} owned by {owners[(t, p)]} and " \
                                                 f"{m.member_id}"
                    owners[(t, p)] = m.member_id
                    assert group.current_partition_epoch(t, p) == m.member_epoch
    for member_id in list(epochs):
        if not group.has_member(member_id):
            del epochs[member_id]
    for m in group.members.values():
        if m.member_epoch >= 0:
            assert m.member_epoch >= epochs.get(m.member_id, 0), m.member_id
            epochs[m.member_id] = m.member_epoch


@settings(max_examples=150, deadline=None)
@given(OPS)
def test_random_schedules_keep_the_invariants(ops) -> None:
    c = ConsumerGroupContext({"foo": 6, "bar": 3})
    clients = [Client(i) for i in range(CLIENTS)]
    epochs: dict[str, int] = {}
    for op, k, arg in ops:
        client = clients[k]
        try:
            if op == "join":
                if client.member_id is None:
                    client.member_id = client.new_id()
                    client.apply(c.heartbeat(ConsumerGroupHeartbeatRequest(
                        "g", client.member_id, 0, rebalance_timeout_ms=10_000,
                        subscribed_topic_names=("foo", "bar"), server_assignor=arg,
                        topic_partitions=())).response)
            elif op in ("hb", "hb_slow") and client.member_id is not None:
                # hb_slow: the client has not finished revoking (it reports what it had)
                owned = client.owned if op == "hb" else {**client.previous_owned,
                                                         **client.owned}
                client.apply(c.heartbeat(ConsumerGroupHeartbeatRequest(
                    "g", client.member_id, client.epoch,
                    topic_partitions=client.owned_list(owned))).response)
            elif op == "hb_stale" and client.member_id is not None:
                c.heartbeat(ConsumerGroupHeartbeatRequest(
                    "g", client.member_id, client.epoch - arg,
                    topic_partitions=client.owned_list(client.owned)))
            elif op == "leave" and client.member_id is not None:
                c.heartbeat(ConsumerGroupHeartbeatRequest("g", client.member_id, -1))
                client.reset()
            elif op == "sleep":
                c.sleep(arg)
            elif op == "commit" and client.member_id is not None:
                group = c.group()
                member = None if group is None else group.members.get(client.member_id)
                epoch = client.epoch + arg
                try:
                    c.commit(OffsetCommitRequest("g", epoch, client.member_id,
                                                 {("foo", 0): PartitionData(1)}, version=9))
                    accepted = True
                except KafkaError:
                    accepted = False
                empty = group is None or group.members.is_empty()
                assert accepted == ((member is not None and epoch == member.member_epoch)
                                    or (epoch < 0 and empty))
        except KafkaError:
            # fenced, unknown (expired) or stale: this client starts over with a new id
            client.reset()
        check_invariants(c, epochs)
