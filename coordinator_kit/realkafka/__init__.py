"""Real Apache Kafka as the kit's yardstick: fetch and run a broker, drive the same client
scenarios against it and against the kit's live server, and compare what clients see.

Nothing in the kit's core imports this package; it stands beside `coordinator_kit.live`.
"""

from .broker import RealKafka
from .fetch import KAFKA_VERSION, FetchError

__all__ = ["RealKafka", "KAFKA_VERSION", "FetchError"]
