"""Kafka's ``StickyAssignor`` and ``CooperativeStickyAssignor`` (on ``AbstractStickyAssignor``).

Both place partitions the same way; the goals, in priority order, are:

1. **Balance.** With identical subscriptions the counts differ by at most one. In general no
   member could take a partition from a member holding two or more partitions more than it,
   directly or through a chain of members that each pass one partition on. The kit reaches the
   most even spread the subscriptions allow (an optimal "semi-matching": every other valid
   assignment has a max at least as high and a min at least as low).
2. **Stickiness.** Keep as many previously owned partitions as balance permits.

Where the previous assignment comes from: each member's ``owned_partitions`` with its
``generation_id``, for both assignors. (Java's eager StickyAssignor carries the same two facts
in its own user-data encoding; the kit skips the encoding.) Conflicting claims are settled as in
Java's ``AbstractStickyAssignor``: the claim with the highest generation wins; two claims in
the same highest generation cancel out and the partition counts as unowned. Java reaches the
same outcome by scanning members in hash-map order; the kit decides per partition over all
claims, so the result does not depend on member order. Claims on topics the member no longer
subscribes to are dropped (the partition is revoked).

The cooperative variant then withholds, for this round, every partition that would go to a
member other than its settled owner while some other member still lists it as owned: that
member must revoke it first, and the follow-up rebalance (which the revoking member requests)
hands it over. This is Java's ``partitionsTransferringOwnership``. The kit applies one rule
where Java has two code paths, and is the stricter of the two: a partition whose claims
cancelled out is withheld from every member this round, and a stale lower-generation claim also
causes a handover to wait (Java's general path lets a stale claimant take it back at once).

How it is computed (``_Planner``):

* Identical subscriptions (Java's "constrained" case): quotas are known up front (P // N each,
  P % N members one more). The extra slots go first to members that owned more than P // N,
  everyone keeps up to its quota of owned partitions, and the rest is dealt round-robin to the
  members below quota. O(P + N log N), and no valid assignment keeps more.
* Otherwise: keep every valid owned partition; give each unowned partition to the least loaded
  subscriber (topics with the fewest subscribers first); then remove imbalance with moves, first
  only of partitions that were not owned (free for stickiness), then of owned ones, one at a
  time. Moves are direct (a heap per topic finds its most loaded holder and least loaded
  subscriber) and, when no direct move helps, along a chain found by breadth-first search from
  the least loaded members. The search stops when no improving chain is left, which is exactly
  the optimality condition above. Last, partitions are traded back to their owners along
  negative cycles of a small min-cost-flow graph, with the multiset of loads held fixed, so
  balance is untouched and stickiness only grows.

Because a round-one assignment is a subset of an optimal one, the follow-up round finds an
optimal completion without moving anything owned, so cooperative rebalancing settles in two
rounds.

Against kafka-python (``tests/test_assignors_properties.py``): with identical subscriptions the
kit is as balanced (spread <= 1) and keeps at least as many partitions. With different
subscriptions the kit is never less balanced; where kafka-python is less balanced it can keep
more partitions, since the kit puts balance first.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Mapping

from ..topic import TopicPartition
from ._api import (
    PartitionAssignor,
    RebalanceProtocol,
    Subscription,
    _checked_counts,
    _checked_subscriptions,
    java_order,
)

__all__ = ["StickyAssignor", "CooperativeStickyAssignor", "StickyPlan"]


class StickyPlan:
    """The outcome of one sticky computation, before any cooperative withholding.

    ``target`` maps member id to its partitions; ``owner`` maps a partition to the member whose
    claim on it survived (highest generation, no tie); ``claimants`` maps every validly claimed
    partition to all members that listed it as owned.
    """

    __slots__ = ("target", "owner", "claimants")

    def __init__(self, target: dict[str, list[TopicPartition]],
                 owner: dict[TopicPartition, str],
                 claimants: dict[TopicPartition, list[str]]) -> None:
        self.target = target
        self.owner = owner
        self.claimants = claimants

    def withheld(self) -> dict[str, list[TopicPartition]]:
        """Per member, the target partitions another member must revoke before it gets them."""
        out: dict[str, list[TopicPartition]] = {}
        for member, partitions in self.target.items():
            waiting = [tp for tp in partitions
                       if tp in self.claimants and self.owner.get(tp) != member]
            if waiting:
                out[member] = waiting
        return out


class _Planner:
    """Works on integer ids: members 0..N-1 in Java string order, topics 0..T-1 likewise."""

    def __init__(self, counts: dict[str, int], subscriptions: dict[str, Subscription]) -> None:
        self.member_ids = sorted(subscriptions, key=java_order)
        topic_names = sorted({t for s in subscriptions.values() for t in s.topics if t in counts},
                             key=java_order)
        self.topic_names = topic_names
        topic_index = {t: i for i, t in enumerate(topic_names)}
        self.sizes = [counts[t] for t in topic_names]
        self.subs: list[list[int]] = [
            sorted(topic_index[t] for t in subscriptions[m].topics if t in topic_index)
            for m in self.member_ids]
        self.eligible: list[list[int]] = [[] for _ in topic_names]
        for m, topics in enumerate(self.subs):
            for t in topics:
                self.eligible[t].append(m)

        # Settle claims: highest generation wins, a tie at the top cancels.
        best: dict[tuple[int, int], tuple[int, int]] = {}  # (t, p) -> (generation, member or -1)
        claimants: dict[tuple[int, int], list[int]] = {}
        # The caller's TopicPartition objects, reused in the answer (building one costs more
        # than the whole placement of it).
        self.objects: dict[tuple[int, int], TopicPartition] = {}
        for m, member in enumerate(self.member_ids):
            sub = subscriptions[member]
            generation = sub.generation_id
            for tp in dict.fromkeys(sub.owned_partitions):
                t = topic_index.get(tp.topic)
                if t is None or tp.partition >= self.sizes[t]:
                    continue  # not in the metadata: ignored (module docstring of _api)
                key = (t, tp.partition)
                self.objects.setdefault(key, tp)
                claimants.setdefault(key, []).append(m)
                current = best.get(key)
                if current is None or generation > current[0]:
                    best[key] = (generation, m)
                elif generation == current[0]:
                    best[key] = (generation, -1)
        self.owner: dict[tuple[int, int], int] = {k: m for k, (_, m) in best.items() if m >= 0}
        self.claimants = claimants

    # -- result ---------------------------------------------------------------------------

    def plan(self) -> StickyPlan:
        n = len(self.member_ids)
        if n == 0:
            return StickyPlan({}, {}, {})
        first = self.subs[0]
        if all(s == first for s in self.subs):
            per_member = self._identical()
        else:
            per_member = self._general()
        names, ids, objects = self.topic_names, self.member_ids, self.objects
        target = {ids[m]: [objects.get(key) or TopicPartition(names[key[0]], key[1])
                           for key in sorted(parts)]
                  for m, parts in enumerate(per_member)}
        owner = {objects[key]: ids[m] for key, m in self.owner.items()}
        claimants = {objects[key]: [ids[m] for m in ms] for key, ms in self.claimants.items()}
        return StickyPlan(target, owner, claimants)

    def _kept_claims(self) -> list[list[tuple[int, int]]]:
        """Per member, the settled claims it may keep (still subscribed), sorted."""
        kept: list[list[tuple[int, int]]] = [[] for _ in self.member_ids]
        for key, m in self.owner.items():
            kept[m].append(key)
        for m, keys in enumerate(kept):
            subscribed = set(self.subs[m])
            kept[m] = sorted(k for k in keys if k[0] in subscribed)
        return kept

    # -- identical subscriptions: quotas ---------------------------------------------------

    def _identical(self) -> list[list[tuple[int, int]]]:
        n = len(self.member_ids)
        total = sum(self.sizes[t] for t in self.subs[0])
        base, extra = divmod(total, n)
        kept = self._kept_claims()
        # Extra slots first to members that can fill them with their own partitions.
        by_need = sorted(range(n), key=lambda m: (-min(len(kept[m]), base + 1), m))
        quota = [base] * n
        for m in by_need[:extra]:
            quota[m] = base + 1
        result: list[list[tuple[int, int]]] = []
        taken: set[tuple[int, int]] = set()
        for m in range(n):
            keep = kept[m][:quota[m]]
            result.append(keep)
            taken.update(keep)
        queue = deque(m for m in range(n) if len(result[m]) < quota[m])
        for t in self.subs[0]:
            for p in range(self.sizes[t]):
                if (t, p) in taken:
                    continue
                m = queue.popleft()
                result[m].append((t, p))
                if len(result[m]) < quota[m]:
                    queue.append(m)
        return result

    # -- general case: keep, fill, then move towards balance -------------------------------

    def _general(self) -> list[list[tuple[int, int]]]:
        n, t_count = len(self.member_ids), len(self.topic_names)
        self.load = [0] * n
        # Per member and topic: partitions that were not owned (free to move) and owned ones.
        self.fresh: list[dict[int, list[int]]] = [{} for _ in range(n)]
        self.kept: list[dict[int, list[int]]] = [{} for _ in range(n)]
        # Per topic: ordered sets of members holding any / a not-owned partition of it.
        self.holders: list[dict[int, None]] = [{} for _ in range(t_count)]
        self.fresh_holders: list[dict[int, None]] = [{} for _ in range(t_count)]
        self.where: dict[tuple[int, int], int] = {}

        kept_claims = self._kept_claims()
        assigned: set[tuple[int, int]] = set()
        for m, keys in enumerate(kept_claims):
            for t, p in keys:
                self._give(m, t, p)
                assigned.add((t, p))
        for t in sorted(range(t_count), key=lambda t: (len(self.eligible[t]), t)):
            free = [p for p in range(self.sizes[t]) if (t, p) not in assigned]
            if not free:
                continue
            heap = [(self.load[m], m) for m in self.eligible[t]]
            heapq.heapify(heap)
            for p in free:
                load, m = heapq.heappop(heap)
                self._give(m, t, p)
                heapq.heappush(heap, (load + 1, m))

        self._balance(fresh_only=True)
        while self._direct(fresh_only=False) or self._one_chain(fresh_only=False):
            self._balance(fresh_only=True)
        self._return_owned(kept_claims)

        result: list[list[tuple[int, int]]] = []
        for m in range(n):
            parts = [(t, p) for t, ps in self.fresh[m].items() for p in ps]
            parts += [(t, p) for t, ps in self.kept[m].items() for p in ps]
            result.append(parts)
        return result

    def _give(self, m: int, t: int, p: int) -> None:
        self.where[(t, p)] = m
        if self.owner.get((t, p)) == m:
            self.kept[m].setdefault(t, []).append(p)
        else:
            self.fresh[m].setdefault(t, []).append(p)
            self.fresh_holders[t][m] = None
        self.holders[t][m] = None
        self.load[m] += 1

    def _take(self, m: int, t: int, fresh_only: bool) -> int:
        """Remove one partition of topic t from member m, a not-owned one if there is one."""
        fresh = self.fresh[m].get(t)
        if fresh:
            p = fresh.pop()
            if not fresh:
                del self.fresh[m][t]
                del self.fresh_holders[t][m]
        else:
            assert not fresh_only, "asked to move an owned partition in the fresh-only pass"
            kept = self.kept[m][t]
            p = kept.pop()
            if not kept:
                del self.kept[m][t]
        if t not in self.fresh[m] and t not in self.kept[m]:
            del self.holders[t][m]
        self.load[m] -= 1
        return p

    def _move(self, giver: int, receiver: int, t: int, fresh_only: bool) -> None:
        self._give(receiver, t, self._take(giver, t, fresh_only))

    def _balance(self, fresh_only: bool) -> None:
        self._direct(fresh_only)
        while self._one_chain(fresh_only):
            self._direct(fresh_only)

    def _direct(self, fresh_only: bool) -> int:
        """Move partitions straight from a topic's most to its least loaded member; count moves."""
        load, subs = self.load, self.subs
        holders = self.fresh_holders if fresh_only else self.holders
        t_count = len(self.topic_names)
        low = [[(load[m], m) for m in self.eligible[t]] for t in range(t_count)]
        high = [[(-load[m], m) for m in holders[t]] for t in range(t_count)]
        for heap in low + high:
            heapq.heapify(heap)
        queue = deque(range(t_count))
        queued = [True] * t_count
        moves = 0
        while queue:
            t = queue.popleft()
            queued[t] = False
            lo, hi, hold = low[t], high[t], holders[t]
            while True:
                while lo[0][0] != load[lo[0][1]]:
                    heapq.heappop(lo)
                while hi and (-hi[0][0] != load[hi[0][1]] or hi[0][1] not in hold):
                    heapq.heappop(hi)
                if not hi or -hi[0][0] - lo[0][0] < 2:
                    break
                giver, receiver = hi[0][1], lo[0][1]
                self._move(giver, receiver, t, fresh_only)
                moves += 1
                for m in (giver, receiver):
                    for t2 in subs[m]:
                        heapq.heappush(low[t2], (load[m], m))
                        if m in holders[t2]:
                            heapq.heappush(high[t2], (-load[m], m))
                        if not queued[t2] and t2 != t:
                            queued[t2] = True
                            queue.append(t2)
        return moves

    def _return_owned(self, kept_claims: list[list[tuple[int, int]]]) -> None:
        """Trade partitions back to their owners without changing the sorted load vector.

        Balancing decides how many partitions each member holds; this step then improves
        stickiness by cancelling negative cycles (min-cost flow) in a graph whose nodes are
        members, topics and load levels. member -> topic: the member hands over a partition of
        the topic (cost 0 if it has one it did not own, else 1). topic -> member: the member
        takes one (cost -1 if one of its own partitions of that topic sits elsewhere). member ->
        level x -> member: the first goes from x-1 to x partitions and the second from x to x-1,
        so the multiset of loads (and with it the balance) never changes. Each cycle returns at
        least one more partition to its owner.
        """
        n, t_count = len(self.load), len(self.topic_names)
        owned: list[dict[int, list[int]]] = [{} for _ in range(n)]
        for m, keys in enumerate(kept_claims):
            for t, p in keys:
                owned[m].setdefault(t, []).append(p)
        owners_of_topic: list[list[int]] = [[] for _ in range(t_count)]
        for m in range(n):
            for t in owned[m]:
                owners_of_topic[t].append(m)
        present = set(self.load)
        level_node = {x: n + t_count + i
                      for i, x in enumerate(sorted(x for x in present if x - 1 in present))}
        node_level = {v: x for x, v in level_node.items()}
        size = n + t_count + len(level_node)
        # Every cycle returns at least one partition to its owner, so this bound is never hit.
        for _ in range(len(self.owner) + 1):
            displaced = [{m for m in owners_of_topic[t]
                          if any(self.where[(t, p)] != m for p in owned[m][t])}
                         for t in range(t_count)]
            at_level: dict[int, list[int]] = {}
            for m in range(n):
                at_level.setdefault(self.load[m], []).append(m)
            cycle = self._negative_cycle(size, displaced, level_node, node_level, at_level)
            if cycle is None:
                return
            for i, node in enumerate(cycle):
                if n <= node < n + t_count:
                    t = node - n
                    giver, receiver = cycle[i - 1], cycle[(i + 1) % len(cycle)]
                    self._hand_over(giver, receiver, t, owned[receiver].get(t, ()),
                                    receiver in displaced[t])
        raise AssertionError("stickiness pass did not converge")  # pragma: no cover

    def _hand_over(self, giver: int, receiver: int, t: int, own: list[int] | tuple,
                   return_own: bool) -> None:
        """One topic step of a cycle: a t-partition goes from giver to receiver."""
        if not return_own:
            self._move(giver, receiver, t, fresh_only=False)
            return
        q = min(p for p in own if self.where[(t, p)] != receiver)
        holder = self.where[(t, q)]
        if holder != giver:  # the giver's partition replaces q at its holder
            self._move(giver, holder, t, fresh_only=False)
        fresh = self.fresh[holder][t]
        fresh.remove(q)
        if not fresh:
            del self.fresh[holder][t]
            del self.fresh_holders[t][holder]
            if t not in self.kept[holder]:
                del self.holders[t][holder]
        self.load[holder] -= 1
        self._give(receiver, t, q)

    def _negative_cycle(self, size: int, displaced: list[set[int]], level_node: dict[int, int],
                        node_level: dict[int, int], at_level: dict[int, list[int]]
                        ) -> list[int] | None:
        """Bellman-Ford (queue-based) from a virtual source; a cycle of negative cost, or None.

        Only topic -> member edges can be negative, so the search starts at topics with a
        displaced owner and stays small when few partitions are away from their owners.
        """
        n, t_count = len(self.load), len(self.topic_names)
        dist = [0] * size
        pred = [-1] * size
        queue = deque(n + t for t in range(t_count) if displaced[t])
        queued = bytearray(size)
        for v in queue:
            queued[v] = 1
        relaxed = 0
        while queue:
            u = queue.popleft()
            queued[u] = 0
            if u < n:
                fresh, kept = self.fresh[u], self.kept[u]
                edges = [(n + t, 0) for t in fresh]
                edges += [(n + t, 1) for t in kept if t not in fresh]
                up = level_node.get(self.load[u] + 1)
                if up is not None:
                    edges.append((up, 0))
            elif u < n + t_count:
                t = u - n
                edges = [(m, -1 if m in displaced[t] else 0) for m in self.eligible[t]]
            else:
                edges = [(m, 0) for m in at_level.get(node_level[u], ())]
            du = dist[u]
            for v, cost in edges:
                if du + cost < dist[v]:
                    dist[v] = du + cost
                    pred[v] = u
                    relaxed += 1
                    if relaxed % size == 0:
                        cycle = self._cycle_in(pred, v)
                        if cycle is not None:
                            return cycle
                    if not queued[v]:
                        queued[v] = 1
                        queue.append(v)
        return None  # converged: no negative cycle (one would keep the queue busy)

    @staticmethod
    def _cycle_in(pred: list[int], start: int) -> list[int] | None:
        """The cycle reached by following predecessors from start, in forward order."""
        seen: dict[int, int] = {}
        v, step = start, 0
        while v >= 0 and v not in seen:
            seen[v] = step
            v, step = pred[v], step + 1
        if v < 0:
            return None
        cycle = [v]
        u = pred[v]
        while u != v:
            cycle.append(u)
            u = pred[u]
        cycle.reverse()
        return cycle

    def _one_chain(self, fresh_only: bool) -> bool:
        """Find and apply one improving chain of moves; False when none is left.

        Searches backwards from each member in increasing load order: who could hand it a
        partition, who could hand those a partition, ... until a member with at least two more
        partitions is reached. A search that fails proves that everything it reached is within
        one partition of its start, so later (not less loaded) starts may skip those members
        and topics; one pass over all starts therefore costs one sweep of the graph.
        """
        load, subs = self.load, self.subs
        holders = self.fresh_holders if fresh_only else self.holders
        n = len(load)
        top = max(load)
        seen_member = bytearray(n)
        seen_topic = bytearray(len(self.topic_names))
        for start in sorted(range(n), key=lambda m: (load[m], m)):
            if load[start] + 2 > top:
                return False
            if seen_member[start]:
                continue
            seen_member[start] = 1
            parent: dict[int, tuple[int, int]] = {}
            queue = deque([start])
            wanted = load[start] + 2
            while queue:
                z = queue.popleft()
                for t in subs[z]:
                    if seen_topic[t]:
                        continue
                    seen_topic[t] = 1
                    for w in holders[t]:
                        if seen_member[w]:
                            continue
                        seen_member[w] = 1
                        parent[w] = (z, t)
                        if load[w] >= wanted:
                            while w != start:
                                z2, t2 = parent[w]
                                self._move(w, z2, t2, fresh_only)
                                w = z2
                            return True
                        queue.append(w)
        return False


class StickyAssignor(PartitionAssignor):
    """Balanced first, sticky second; EAGER (members revoke everything before joining)."""

    name = "sticky"

    def plan(self, partitions_per_topic: Mapping[str, int],
             subscriptions: Mapping[str, Subscription]) -> StickyPlan:
        """The full sticky computation, for teaching and tests (no withholding applied)."""
        return _Planner(_checked_counts(partitions_per_topic),
                        _checked_subscriptions(subscriptions)).plan()

    def _assign(self, counts: dict[str, int],
                subscriptions: dict[str, Subscription]) -> dict[str, list[TopicPartition]]:
        return _Planner(counts, subscriptions).plan().target


class CooperativeStickyAssignor(StickyAssignor):
    """Sticky placement, but a partition changing owner is withheld for one round (KIP-429).

    Supports COOPERATIVE (preferred) and EAGER, like Java, so a group can roll from eager
    assignors to this one; kafka-python 3.x lists COOPERATIVE only.
    """

    name = "cooperative-sticky"
    supported_protocols = (RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER)

    def _assign(self, counts: dict[str, int],
                subscriptions: dict[str, Subscription]) -> dict[str, list[TopicPartition]]:
        plan = _Planner(counts, subscriptions).plan()
        withheld = {member: set(parts) for member, parts in plan.withheld().items()}
        return {member: [tp for tp in parts if tp not in withheld.get(member, ())]
                for member, parts in plan.target.items()}
