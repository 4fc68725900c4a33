"""Kafka's CoordinatorRuntime (`org.apache.kafka.coordinator.common.runtime`), on virtual time.

docs/kafka-classes.md maps each module to its Kafka class and each behaviour to its method.
"""

from .cleaner import CleanerConfig, LogCleaner
from .deferred import DeferredEventQueue
from .events import EventAccumulator, RejectedExecutionError
from .future import CoordinatorFuture, FutureNotDone
from .loader import CoordinatorLoader, LoadSummary
from .markers import TransactionResult
from .metadata import MetadataDelta, MetadataImage
from .partition import LogBatch, LogSegment, PartitionWriter, ReplicatedPartition
from .processor import DeterministicEventProcessor, MultiThreadedEventProcessor
from .records import CoordinatorRecord, RecordSerde, UnknownRecordTypeError
from .runtime import (CONTEXT_STATES, CoordinatorContext, CoordinatorRuntime, CoordinatorState,
                      RuntimeConfig)
from .shard import (CoordinatorResult, CoordinatorShard, CoordinatorShardBuilder,
                    CoordinatorShardBuilderSupplier)
from .snapshottable import SnapshottableCoordinator
from .timer import EventBasedCoordinatorTimer

__all__ = [
    "CONTEXT_STATES", "CleanerConfig", "CoordinatorContext", "CoordinatorFuture", "CoordinatorLoader",
    "CoordinatorRecord", "CoordinatorResult", "CoordinatorRuntime", "CoordinatorShard",
    "CoordinatorShardBuilder", "CoordinatorShardBuilderSupplier", "CoordinatorState",
    "DeferredEventQueue", "DeterministicEventProcessor", "EventAccumulator",
    "EventBasedCoordinatorTimer", "FutureNotDone", "LoadSummary", "LogBatch", "LogCleaner",
    "LogSegment", "MetadataDelta",
    "MetadataImage", "MultiThreadedEventProcessor", "PartitionWriter", "RecordSerde",
    "RejectedExecutionError", "ReplicatedPartition", "RuntimeConfig",
    "SnapshottableCoordinator", "TransactionResult", "UnknownRecordTypeError",
]
