"""Three generations of consumer coordination on one clock, network and fault vocabulary.

- `eras.zookeeper`: the ZooKeeper-era high-level consumer (Kafka 0.8.2's
  `ZookeeperConsumerConnector`): every consumer coordinates itself through a simulated ZooKeeper.
- `eras.central`: the centralised coordinator drafted for Kafka 0.9 (one elected broker pings
  every consumer and pushes stop-fetcher / start-fetcher), which never shipped in that form.
- `eras.classic`: today's group coordinator (the kit's `Cluster`), seen through the same lens.

`eras.api` is what the three have in common (a scenario, the faults, what is measured);
`eras.compare` runs one scenario under each and tabulates the differences; `eras.checks` runs
the checker hooks I1-I4 over the same runs (docs/eras-compare.md).
"""
