"""The group coordinator's KIP-848 lines as Kafka 4.0.2 writes them, found by setting the kit's
live log beside a real broker's (datasets/real-kafka, notebook 10):

- `GroupMetadataManager.consumerGroupFenceMembers` logs `Bumped group epoch to N.` after the
  epoch record of a fenced or leaving member (4.0.2's bytecode; its 4.0 source did not);
- the fencing reasons carry no full stop of their own ("the member session expired"), so the
  line ends in one, not `expired..`;
- `Computed a new target assignment for epoch N with 'uniform' assignor in Xms.` is the INFO
  wording, chosen by `log.isDebugEnabled()`: a run whose Kafka loggers are at INFO writes it
  even when the kit's trace keeps DEBUG events (the live server: log_level INFO, trace DEBUG).
"""

from __future__ import annotations

from coordinator_kit.cluster import Cluster
from coordinator_kit.live.server import LiveServer
from coordinator_kit.logs.layout import level_number


def _group_of_two(trace_level: str) -> tuple[Cluster, str]:
    c = Cluster(brokers=1, topics={"orders": 6}, trace_level=trace_level)
    c.add_consumer("c1", group_protocol="consumer")
    c.add_consumer("c2", group_protocol="consumer")
    c.run_for(15_000)
    return c, c.consumer("c2").member_id


def _coordinator_lines(c: Cluster, level: str) -> list[str]:
    return [line for line in c.log_lines(level) if "GroupMetadataManager" in line]


def test_a_fenced_member_bumps_the_epoch_in_the_log_with_one_full_stop():
    c, member = _group_of_two("INFO")
    epoch = c.shard_for("group-1").consumer_groups.groups["group-1"].group_epoch
    c.crash("c2")
    c.run_for(60_000)
    lines = _coordinator_lines(c, "INFO")
    fenced = [i for i, line in enumerate(lines)
              if f"Member {member} fenced from the group because the member session expired. ("
              in line]
    assert len(fenced) == 1
    assert not any("expired.." in line for line in lines)
    assert f"Bumped group epoch to {epoch + 1}. (" in lines[fenced[0] + 1]


def test_the_info_wording_of_a_target_assignment_follows_kafkas_logger_level():
    # a DEBUG trace whose Kafka loggers are at DEBUG: the DEBUG wording (with the assignment)
    c, _ = _group_of_two("DEBUG")
    debug = [line for line in _coordinator_lines(c, "DEBUG")
             if "Computed a new target assignment" in line]
    assert debug and all("assignor in 0ms: {" in line for line in debug)
    assert not any("Computed a new target assignment" in line
                   for line in _coordinator_lines(c, "INFO"))
    # the same trace with Kafka's loggers at INFO (what the live server sets): the INFO wording
    c = Cluster(brokers=1, topics={"orders": 6}, trace_level="DEBUG")
    c.trace.logger_threshold = level_number("INFO")
    c.add_consumer("c1", group_protocol="consumer")
    c.run_for(15_000)
    info = [line for line in _coordinator_lines(c, "INFO")
            if "Computed a new target assignment" in line]
    assert info and all("[GroupId group-1] Computed a new target assignment for epoch " in line
                        and "with 'uniform' assignor in 0ms. (" in line for line in info)


def test_the_live_server_sets_kafkas_logger_level_to_its_log_level():
    server = LiveServer(brokers=1, port=0, produce_rate_per_s=0, log_level="INFO",
                        trace_level="DEBUG")
    assert server.cluster.trace.threshold == level_number("DEBUG")
    assert server.cluster.trace.logger_threshold == level_number("INFO")
