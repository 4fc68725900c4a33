"""Where the kit is known to differ from Apache Kafka 4.0.2, as data.

Each `Difference` was found by running the same clients or the same raw requests on real Kafka
and on the kit's live server (`realkafka.compare`, `realkafka.wire`) and says what Kafka does,
what the kit does, and what became of it: fixed (where) or left (why). The rows are the
"Differences found" table of docs/real-kafka.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas is only needed by differences_frame()
    import pandas

__all__ = ["Difference", "KNOWN_DIFFERENCES", "differences_frame"]


@dataclass(frozen=True)
class Difference:
    """One behaviour where the kit and Kafka 4.0.2 were seen to differ."""

    what: str
    kafka: str
    kit: str
    status: str


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
              "answers COORDINATOR_LOAD_IN_PROGRESS while it loads the new partition, and "
              "clients retry",
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
        what="generations around a first join (seen once each, not reproducible)",
        kafka="kafka-python's leader sometimes joins one generation more when fresh metadata "
              "lands during its first join",
        kit="the same effect, on other runs",
        status="left: client timing, not a broker difference; the tests print it, not "
               "compare it"),
)


def differences_frame() -> "pandas.DataFrame":
    """KNOWN_DIFFERENCES as a pandas DataFrame with columns what, kafka, kit, status."""
    import pandas
    columns = ("what", "kafka", "kit", "status")
    return pandas.DataFrame([[getattr(d, c) for c in columns] for d in KNOWN_DIFFERENCES],
                            columns=list(columns))
