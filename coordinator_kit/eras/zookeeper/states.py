"""The phases of one ZooKeeper-era consumer (`ZookeeperConsumerConnector`, 0.8.2) as a table.

Kafka 0.8.2 has no state enum for the connector: its phase is spread over the watcher
executor thread, `syncedRebalance`'s retry loop and the session-expiry listener. The kit
names the phases so that the code can enforce them and a diagram can show them; each trigger
names the Kafka method or event that moves the consumer (docs/eras-zookeeper.md).
"""

from __future__ import annotations

from enum import Enum

from ...states import StateTable

__all__ = ["ConsumerState", "CONNECTOR_STATES"]


class ConsumerState(Enum):
    CREATED = "CREATED"
    REGISTERING = "REGISTERING"          # writing /consumers/<g>/ids/<id>
    REBALANCING = "REBALANCING"          # one attempt of syncedRebalance
    BACKING_OFF = "BACKING_OFF"          # sleeping rebalance.backoff.ms after a failed attempt
    CONSUMING = "CONSUMING"              # owns its share, fetchers running
    REBALANCE_FAILED = "REBALANCE_FAILED"  # ConsumerRebalanceFailedException: owns nothing
    SHUT_DOWN = "SHUT_DOWN"              # shutdown() finished: session closed

    def __str__(self) -> str:
        return self.value


_C, _G, _R, _B, _OK, _F, _S = ConsumerState

# A killed process (kill -9) has no next phase: the connector keeps its last one and is marked
# dead (`ZookeeperConsumerConnector.dead`); so the table has no DEAD state.
CONNECTOR_STATES: StateTable[ConsumerState] = StateTable(
    "ZookeeperConsumerConnector",
    ConsumerState,
    valid_previous={
        _G: (_C, _R, _B, _OK, _F),
        _R: (_G, _B, _OK, _F),
        _B: (_R,),
        _OK: (_R,),
        _F: (_B,),
        _S: (_G, _R, _B, _OK, _F),
    },
    triggers={
        (_C, _G): "createMessageStreams: registerConsumerInZK",
        (_R, _G): "session expired: handleNewSession",
        (_B, _G): "session expired: handleNewSession",
        (_OK, _G): "session expired: handleNewSession",
        (_F, _G): "session expired: handleNewSession",
        (_G, _R): "registered: syncedRebalance try #0",
        (_B, _R): "rebalance.backoff.ms elapsed: next try",
        (_OK, _R): "watch fired: syncedRebalance",
        (_F, _R): "next watch event",
        (_R, _B): "NodeExists on an owner znode",
        (_R, _OK): "every owner znode created",
        (_B, _F): "rebalance.max.retries tries failed",
        (_G, _S): "shutdown()", (_R, _S): "shutdown()", (_B, _S): "shutdown()",
        (_OK, _S): "shutdown()", (_F, _S): "shutdown()",
    },
    initial=_C,
)
