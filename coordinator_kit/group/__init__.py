"""Kafka's group coordinator (`org.apache.kafka.coordinator.group`): its records in
`__consumer_offsets` and the consumer protocol bytes it stores, plus the classic-group machinery
in the submodules (docs/kafka-classes.md maps each one to its Kafka class)."""

from .classic import (CLASSIC_GROUP_STATES, ClassicGroup, ClassicGroupMember, ClassicGroupState,
                      Protocol)
from .config import GroupCoordinatorConfig
from .protocol import ConsumerProtocolAssignment, ConsumerProtocolSubscription
from .records import (GROUP_METADATA_RECORD_TYPE, OFFSET_COMMIT_RECORD_TYPE, RECORD_TYPE_NAMES,
                      GroupCoordinatorRecordSerde, new_empty_group_metadata_record,
                      new_group_metadata_record, new_group_metadata_tombstone,
                      new_offset_commit_record, new_offset_commit_tombstone)
from .service import GroupCoordinatorService, java_string_hashcode, partition_for
from .shard import GroupCoordinatorShard, GroupCoordinatorShardBuilder, group_shard_supplier

__all__ = [
    "CLASSIC_GROUP_STATES", "ClassicGroup", "ClassicGroupMember", "ClassicGroupState",
    "GroupCoordinatorConfig", "GroupCoordinatorService", "GroupCoordinatorShard",
    "GroupCoordinatorShardBuilder", "Protocol", "group_shard_supplier", "java_string_hashcode",
    "partition_for",
    "ConsumerProtocolAssignment", "ConsumerProtocolSubscription", "GROUP_METADATA_RECORD_TYPE",
    "GroupCoordinatorRecordSerde", "OFFSET_COMMIT_RECORD_TYPE", "RECORD_TYPE_NAMES",
    "new_empty_group_metadata_record", "new_group_metadata_record",
    "new_group_metadata_tombstone", "new_offset_commit_record", "new_offset_commit_tombstone",
]
