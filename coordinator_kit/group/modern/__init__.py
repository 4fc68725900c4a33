"""KIP-848 consumer groups (`group.protocol=consumer`), the server side: Kafka's
`org.apache.kafka.coordinator.group.modern` package and the `consumerGroup*` paths of
`GroupMetadataManager` (docs/kafka-classes.md maps each module to its Kafka class)."""

from .consumer_group import CONSUMER_GROUP_STATES, ConsumerGroup, ConsumerGroupState
from .current_assignment import CurrentAssignmentBuilder
from .manager import ConsumerGroupManager
from .member import MEMBER_STATES, ConsumerGroupMember, MemberState
from .target_assignment import TargetAssignmentBuilder
from .topics import topic_id

__all__ = ["CONSUMER_GROUP_STATES", "ConsumerGroup", "ConsumerGroupState",
           "CurrentAssignmentBuilder", "ConsumerGroupManager", "MEMBER_STATES",
           "ConsumerGroupMember", "MemberState", "TargetAssignmentBuilder", "topic_id"]
