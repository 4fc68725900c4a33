"""Where the kit is known to differ from Apache Kafka 4.0.2, as data.

Each `Difference` was found by running the same clients or the same raw requests on real Kafka
and on the kit's live server (`realkafka.compare`, `realkafka.wire`, docs/real-kafka.md) and says
what Kafka does, what the kit does, and what became of it: fixed (where) or left (why).
README.md's "Fidelity" section is this table (`markdown_table()`), checked by
tests/test_fidelity.py; `python -m coordinator_kit kafka fidelity --write` rewrites it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas is only needed by differences_frame()
    import pandas

__all__ = ["Difference", "KNOWN_DIFFERENCES", "differences_frame", "markdown_table",
           "README_START", "README_END", "readme_with_table"]


@dataclass(frozen=True)
class Difference:
    """One behaviour where the kit and Kafka 4.0.2 were seen to differ."""

    what: str
    kafka: str
    kit: str
    status: str  # "fixed in <where>" or "left: <why>"


KNOWN_DIFFERENCES: tuple[Difference, ...] = (
    Difference(
        what="OffsetCommit for a topic or partition the broker does not know",
        kafka="UNKNOWN_TOPIC_OR_PARTITION for those partitions, from "
              "KafkaApis.handleOffsetCommitRequest before the group coordinator sees them",
        kit="stored the offset and answered NONE",
        status="fixed in live/apis.py (on_OffsetCommit)"),
    Difference(
        what="the first group request on a fresh broker",
        kafka="__consumer_offsets is created on the first FindCoordinator; the coordinator "
              "answers COORDINATOR_LOAD_IN_PROGRESS while it loads the new partition (on a "
              "busy machine NOT_COORDINATOR too), and clients retry",
        kit="the offsets partitions exist and are loaded from the start",
        status="left: the kit's cluster is built with its offsets topic; the wire check "
               "retries as clients do"),
    Difference(
        what="member ids",
        kafka="client.id + '-' + a random UUID",
        kit="client.id + '-' + a UUID from the cluster's seeded generator: two fresh servers "
            "with the same seed hand out the same ids",
        status="left: determinism is the kit's rule; same shape"),
    Difference(
        what="the broker's own log read by the kit's parser (logs.parse)",
        kafka="-",
        kit="every GroupMetadataManager line is an event; the multi-line 'KafkaConfig "
            "values:' block and GroupCoordinatorService's 'Starting up.' / 'Startup "
            "complete.' were quarantined",
        status="fixed in logs/patterns.py (LOG4J-CONFIG) and logs/wordings.py; "
               "tests/test_real_kafka_dataset.py"),
    Difference(
        what="generations around a first join or a member's expiry (seen once each, not "
             "reproducible)",
        kafka="kafka-python's leader sometimes joins one generation more when fresh metadata "
              "lands during a join (static-restart: a:1,2,3,4,5 against the kit's a:1,2,3,4, "
              "the extra rejoin 12 ms after the expiry's)",
        kit="the same effect, on other runs (long-pause a:1,2,3,4,5, commit-resume a2:3,4; "
            "in datasets/real-kafka max-poll a:1,2,3,4,5 against Kafka's a:1,2,3,4)",
        status="left: client timing, not a broker difference; the tests print it, not "
               "compare it"),
    Difference(
        what="the group coordinator's log when a KIP-848 member is fenced or leaves",
        kafka="'Bumped group epoch to N.' after the epoch record "
              "(GroupMetadataManager.consumerGroupFenceMembers in 4.0.2's jar), and 'fenced "
              "from the group because the member session expired.' with one full stop",
        kit="no epoch line, and 'session expired..' (the reasons as 4.0's source wrote them)",
        status="fixed in group/modern/manager.py and migration.py (tests/test_live_kip848_log.py); "
               "found side by side in datasets/real-kafka (notebook 10)"),
    Difference(
        what="'Computed a new target assignment for epoch N' in the live server's log",
        kafka="the INFO wording whenever the logger is at INFO (the DEBUG wording, with the "
              "assignment, only when log.isDebugEnabled())",
        kit="chose by the trace's level (DEBUG), so the live log at INFO had neither wording",
        status="fixed in trace.py (Trace.logger_threshold, LogContext.logger_enabled) and "
               "live/server.py (tests/test_live_kip848_log.py)"),
    Difference(
        what="Metadata asking for topics by id (v10+), as librdkafka does for a KIP-848 "
             "assignment, which carries topic ids only",
        kafka="known ids answered with their topic, unknown ones with UNKNOWN_TOPIC_ID and no "
              "name (KafkaApis.handleTopicMetadataRequest): librdkafka's first KIP-848 "
              "assignment took 0.4 s",
        kit="dropped id-only entries: librdkafka waited for its periodic metadata refresh, "
            "5.3-6.0 s to its first assignment",
        status="fixed in live/apis.py (on_Metadata), tests/test_live_metadata.py"),
    Difference(
        what="DescribeGroups on a KIP-848 (group.protocol=consumer) group",
        kafka="GroupMetadataManager.describeGroups looks for a classic group only: Dead, no "
              "members, error NONE below v6, GROUP_ID_NOT_FOUND from v6 (Kafka 4.0 serves "
              "v0-6)",
        kit="Dead, no members, error NONE up to v5 (the kit served DescribeGroups v0-5 only)",
        status="fixed in live/versions.py and live/apis.py: v0-6 served, GROUP_ID_NOT_FOUND "
               "'Group g is not a classic group.' at v6 (tests/test_consumer_group_describe.py)"),
    Difference(
        what="ConsumerGroupDescribe (API 69), how Kafka 4's admin tools describe a KIP-848 "
             "group",
        kafka="served: the group's epoch, assignor, members with their assignments and "
              "target assignments",
        kit="was not advertised (ApiVersions): `kafka-consumer-groups --describe` could not "
            "describe a KIP-848 group on the live server",
        status="fixed in GroupCoordinatorService.consumer_group_describe and live/apis.py: "
               "v0-1 served with Kafka's errors; librdkafka's describe_consumer_groups uses it "
               "(tests/test_consumer_group_describe.py, tests/test_live_clients.py)"),
    Difference(
        what="durations of steps that start a Java consumer (second-joins, long-pause, "
             "static-restart, kip848-one-joins, kip848-second-joins: one or another per run)",
        kafka="e.g. kip848-second-joins b 8.9 s, second-joins b 5.9 s, static-restart b2 2.1 s",
        kit="3.9 s, 2.6 s, 6.9 s: longer on either side, by run",
        status="left: a JVM's start-up on the 2-core machine shared with other sessions (load "
               "10-21); every other fact of those runs the same"),
)

COLUMNS = ("what", "kafka", "kit", "status")
README_START = "<!-- fidelity table: generated by coordinator_kit.realkafka.fidelity -->"
README_END = "<!-- end of fidelity table -->"


def differences_frame() -> "pandas.DataFrame":
    """KNOWN_DIFFERENCES as a pandas DataFrame with columns what, kafka, kit, status."""
    import pandas
    return pandas.DataFrame([[getattr(d, c) for c in COLUMNS] for d in KNOWN_DIFFERENCES],
                            columns=list(COLUMNS))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table() -> str:
    """The table README.md shows: one row per known difference."""
    lines = ["| what | Kafka 4.0.2 | the kit | status |", "|---|---|---|---|"]
    for d in KNOWN_DIFFERENCES:
        lines.append("| " + " | ".join(_cell(getattr(d, c)) for c in COLUMNS) + " |")
    return "\n".join(lines)


def readme_with_table(readme: str) -> str:
    """`readme` with the text between README_START and README_END replaced by the table."""
    pattern = re.compile(re.escape(README_START) + r".*?" + re.escape(README_END), re.S)
    if not pattern.search(readme):
        raise ValueError(f"README has no fidelity block: add the lines {README_START!r} and "
                         f"{README_END!r} where the table goes")
    return pattern.sub(lambda _: f"{README_START}\n{markdown_table()}\n{README_END}", readme,
                       count=1)


def write_readme(path: str | Path) -> bool:
    """Rewrite the table in README.md at `path`; True when it changed."""
    p = Path(path)
    old = p.read_text()
    new = readme_with_table(old)
    if new != old:
        p.write_text(new)
    return new != old
