"""The centralised consumer coordinator drafted for Kafka 0.9 (Apache wiki "Central Consumer
Coordination", 2012), which never shipped in that form: one broker, elected in ZooKeeper,
coordinates every consumer group; it pings each consumer and pushes stop-fetcher /
start-fetcher commands, retrying a failed rebalance a bounded number of times.

Modules: `settings` (the keys and the kit's switches), `states` (group phases and consumer
states as tables), `zk` (a minimal ZooKeeper), `network` (messages, sockets, brokers),
`coordinator` (rules C1-C18), `consumer` (connector, fetchers, application), `design`
(`CentralDesign`, the `eras.api.Design`). The page docs/eras-central.md explains them.
"""

from .consumer import CentralConsumer
from .coordinator import Coordinator, Group, Member, range_assignment
from .design import CentralDesign, build
from .settings import SETTINGS, CentralConfig
from .states import CONSUMER_STATES, GROUP_PHASES, ConsumerState, GroupPhase

__all__ = ["CentralDesign", "build", "CentralConfig", "SETTINGS", "Coordinator", "Group",
           "Member", "CentralConsumer", "range_assignment", "GROUP_PHASES", "CONSUMER_STATES",
           "GroupPhase", "ConsumerState"]
