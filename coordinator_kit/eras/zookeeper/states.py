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
    SHUT_DOWN = "SHUT_DOWN"              # shutdown(): session closed
    DEAD = "DEAD"                        # the process was killed

    def __str__(self) -> str:
        return self.value


_C, _G, _R, _B, _OK, _F, _S, _D = ConsumerState
_LIVE = (_C, _G, _R, _B, _OK, _F)

CONNECTOR_STATES: StateTable[ConsumerState] = StateTable(
    "ZookeeperConsumerConnector",
    ConsumerState,
    valid_previous={
        _G: (_C, _R, _B, _OK, _F),
        _R: (_G, _B, _OK, _F),
        _B: (_R,),
        _OK: (_R,),
        _F: (_B,),
        _S: _LIVE,
        _D: _LIVE,
    },
    triggers={
        (_C, _G): "createMessageStreams: registerConsumerInZK",
        (_R, _G): "session expired: handleNewSession re-registers",
        (_B, _G): "session expired: handleNewSession re-registers",
        (_OK, _G): "session expired: handleNewSession re-registers",
        (_F, _G): "session expired: handleNewSession re-registers",
        (_G, _R): "registered: syncedRebalance try #0",
        (_B, _R): "rebalance.backoff.ms elapsed: next try",
        (_OK, _R): "watch fired (ids children, topic data): syncedRebalance",
        (_F, _R): "next watch event: syncedRebalance",
        (_R, _B): "NodeExists on an owner znode (or a ZooKeeper error)",
        (_R, _OK): "every owner znode created: fetchers restarted",
        (_B, _F): "rebalance.max.retries tries failed: ConsumerRebalanceFailedException",
        (_C, _S): "shutdown()", (_G, _S): "shutdown()", (_R, _S): "shutdown()",
        (_B, _S): "shutdown()", (_OK, _S): "shutdown()", (_F, _S): "shutdown()",
        (_C, _D): "process killed", (_G, _D): "process killed", (_R, _D): "process killed",
        (_B, _D): "process killed", (_OK, _D): "process killed", (_F, _D): "process killed",
    },
    initial=_C,
)
