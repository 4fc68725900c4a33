"""The consumer side of the classic group protocol (the Java client's `ConsumerCoordinator` and
`AbstractCoordinator`; see docs/kafka-classes.md)."""

from .config import ConsumerConfig
from .consumer import Consumer, ListenerCall
from .member import MEMBER_STATES, NO_GENERATION, Generation, MemberState

__all__ = ["ConsumerConfig", "Consumer", "ListenerCall", "MEMBER_STATES", "NO_GENERATION",
           "Generation", "MemberState"]
