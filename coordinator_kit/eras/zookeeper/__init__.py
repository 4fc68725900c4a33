"""The ZooKeeper-era high-level consumer of Kafka 0.8.2 (`ZookeeperConsumerConnector`).

No coordinator: every consumer registers in ZooKeeper, watches its group and its topics, and
when a watch fires computes its own share and races the others for ephemeral owner znodes.
docs/eras-zookeeper.md describes the design, its settings and its known problems.

- `ensemble`: a simulated ZooKeeper (sessions, znodes, one-shot watches, latency, faults);
- `client`: the consumer's ZooKeeper client (ZkClient over ClientCnxn);
- `connector`: one consumer (`ZookeeperConsumerConnector`); `states`: its phases as a table;
- `assign`: range and roundrobin, as each consumer computes them for itself;
- `config`: 0.8.2's settings with their defaults; `design`: the `eras.api.Design` adapter.
"""

from .config import ZookeeperConsumerConfig
from .connector import ZookeeperConsumerConnector
from .design import ZookeeperDesign, build
from .ensemble import ZooKeeperEnsemble
from .states import CONNECTOR_STATES, ConsumerState

__all__ = ["ZookeeperDesign", "build", "ZookeeperConsumerConnector", "ZookeeperConsumerConfig",
           "ZooKeeperEnsemble", "CONNECTOR_STATES", "ConsumerState"]
