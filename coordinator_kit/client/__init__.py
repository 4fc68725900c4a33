"""The consumer side of the group protocols: the classic one (the Java client's
`ConsumerCoordinator` and `AbstractCoordinator`) and KIP-848's consumer group protocol
(`group.protocol=consumer`: `AsyncKafkaConsumer`, `ConsumerMembershipManager`); see
docs/kafka-classes.md."""

from .async_consumer import AsyncConsumer
from .config import ConsumerConfig
from .consumer import Consumer, ListenerCall
from .member import MEMBER_STATES, NO_GENERATION, Generation, MemberState
from .membership import ConsumerMembershipManager

__all__ = ["ConsumerConfig", "Consumer", "AsyncConsumer", "ConsumerMembershipManager",
           "ListenerCall", "MEMBER_STATES", "NO_GENERATION", "Generation", "MemberState"]
