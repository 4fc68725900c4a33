"""Each 0.8.2 consumer computes *its own* share of every topic (`RangeAssignor`,
`RoundRobinAssignor` in kafka.consumer.PartitionAssignor), from its own reads of ZooKeeper.

Threads are consumer ids plus `-<n>` and are sorted as strings, so `c-10-0` comes before
`c-2-0`. The result is only right if every member read the same snapshot.
"""

from __future__ import annotations

__all__ = ["range_share", "roundrobin_share", "java_string_hash"]


def range_share(partitions: list[int], threads: list[str], mine: list[str]
                ) -> dict[str, list[int]]:
    """`RangeAssignor.assign` for one topic: thread -> partitions, for `mine` only.

    Partitions sorted as numbers, all threads sorted as strings; with n = P // T and
    extra = P % T, the thread at index i takes n partitions from n*i + min(i, extra), plus
    one more when i < extra."""
    parts = sorted(partitions)
    everyone = sorted(threads)
    n, extra = divmod(len(parts), len(everyone))
    out: dict[str, list[int]] = {}
    for tid in sorted(mine):
        i = everyone.index(tid)
        start = n * i + min(i, extra)
        count = n + (1 if i < extra else 0)
        out[tid] = parts[start:start + count]
    return out


def java_string_hash(s: str) -> int:
    """Java's `String.hashCode` (signed 32 bits)."""
    h = 0
    for ch in s:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def roundrobin_share(topic_partitions: dict[str, list[int]], threads: list[str],
                     mine: list[str]) -> dict[str, list[tuple[str, int]]]:
    """`RoundRobinAssignor.assign` (0.8.2): every (topic, partition), ordered by the hash of
    its `TopicAndPartition` string `[t,p]`, dealt in turn to the threads sorted as strings.
    Requires identical subscriptions (Kafka refuses otherwise; so does the design)."""
    tps = sorted(((t, p) for t, ps in topic_partitions.items() for p in ps),
                 key=lambda tp: (java_string_hash(f"[{tp[0]},{tp[1]}]"), tp))
    everyone = sorted(threads)
    out: dict[str, list[tuple[str, int]]] = {tid: [] for tid in mine}
    for k, tp in enumerate(tps):
        tid = everyone[k % len(everyone)]
        if tid in out:
            out[tid].append(tp)
    return out
