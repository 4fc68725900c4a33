"""The three rebalance protocols of today's Kafka, run on the same scenario and measured alike.

- classic eager (`partition.assignment.strategy=range`): every member stops consuming every
  partition when a rebalance starts (`ConsumerCoordinator.onJoinPrepare` revokes all);
- classic cooperative (`cooperative-sticky`, KIP-429): members keep what they keep, give up
  only what moves, and a second rebalance hands the moved partitions over;
- the consumer group protocol (`group.protocol=consumer`, KIP-848, server assignor `uniform`):
  the coordinator computes the target assignment and each member reconciles towards it on its
  own heartbeats; there is no group-wide barrier.

`designs` wraps each as an `eras.api.Design`; `compare` runs a scenario under the three and
tabulates what each did; `picture` draws who consumed which partition.
"""

from .compare import (PROTOCOL_SCENARIOS, PROTOCOLS, ProtocolComparison, ProtocolMeasures,
                      compare_protocols, protocol_scenario)
from .designs import ConsumerProtocolDesign, CooperativeDesign, EagerDesign

__all__ = ["PROTOCOLS", "PROTOCOL_SCENARIOS", "ProtocolComparison", "ProtocolMeasures",
           "compare_protocols", "protocol_scenario", "EagerDesign", "CooperativeDesign",
           "ConsumerProtocolDesign"]
