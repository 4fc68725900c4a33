"""`EventAccumulator`: per-key FIFO queues, one in-flight event per key, seeded random fairness.

These tests follow Kafka's `EventAccumulator` (`org.apache.kafka.coordinator.common.runtime`).
Most run on one thread and need no real time; the few that block in `poll`/`wait_idle` use other
threads with generous timeouts and only ever *wait for* something to happen, so a slow machine
makes them slower, never flaky.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

import pytest

from coordinator_kit.runtime.events import EventAccumulator, RejectedExecutionError

_ids = iter(range(1_000_000))


@dataclass(eq=False)
class Ev:
    """A minimal coordinator event: a key and a label (the accumulator needs only `.key`)."""

    key: str
    label: str = ""
    id: int = field(default_factory=lambda: next(_ids))

    def __repr__(self) -> str:
        return f"Ev({self.key}{self.label})"


def drain(acc: EventAccumulator) -> list[Ev]:
    """Poll and immediately finish events until none is left (single consumer)."""
    out = []
    while (e := acc.poll()) is not None:
        out.append(e)
        acc.done(e)
    return out


def run_in_thread(fn, *args):
    """Start `fn(*args)` on a daemon thread; returns (thread, result list, finished event)."""
    result: list = []
    finished = threading.Event()

    def target():
        try:
            result.append(fn(*args))
        finally:
            finished.set()

    t = threading.Thread(target=target, daemon=True)
    t.start()
    return t, result, finished


# -- basic operations --------------------------------------------------------------------------


def test_empty_accumulator():
    acc = EventAccumulator()
    assert acc.size() == 0
    assert acc.poll() is None
    assert acc.in_flight() == set()
    assert acc.queued("k") == []
    assert not acc.closed


def test_every_added_event_is_polled_exactly_once():
    acc = EventAccumulator(random.Random(3))
    events = [Ev(f"k{i % 3}", str(i)) for i in range(9)]
    for e in events:
        acc.add_last(e)
    assert acc.size() == 9
    polled = []
    for remaining in range(8, -1, -1):
        e = acc.poll()
        assert e is not None
        polled.append(e)
        assert acc.size() == remaining
        acc.done(e)
    assert acc.poll() is None
    assert sorted(e.id for e in polled) == sorted(e.id for e in events)


def test_per_key_fifo():
    """Events of one key come out in the order they were added."""
    acc = EventAccumulator(random.Random(1))
    per_key = {k: [Ev(k, str(i)) for i in range(6)] for k in "abc"}
    for i in range(6):  # interleave the keys
        for k in "abc":
            acc.add_last(per_key[k][i])
    seen: dict[str, list[Ev]] = {k: [] for k in "abc"}
    for e in drain(acc):
        seen[e.key].append(e)
    assert seen == per_key


def test_add_first_jumps_the_queue_of_its_key():
    """`addFirst` puts the event at the head of its key's queue (HWM updates, flushes)."""
    acc = EventAccumulator()
    a1, a2, hwm = Ev("a", "1"), Ev("a", "2"), Ev("a", "-hwm")
    acc.add_last(a1)
    acc.add_last(a2)
    acc.add_first(hwm)
    assert acc.queued("a") == [hwm, a1, a2]
    assert drain(acc) == [hwm, a1, a2]


def test_add_first_while_the_key_is_in_flight_runs_next():
    acc = EventAccumulator()
    a1, a2, flush = Ev("a", "1"), Ev("a", "2"), Ev("a", "-flush")
    acc.add_last(a1)
    acc.add_last(a2)
    running = acc.poll()
    assert running is a1
    acc.add_first(flush)  # e.g. a linger timer fires while a1 runs
    assert acc.poll() is None  # key a is still in flight
    acc.done(a1)
    assert drain(acc) == [flush, a2]


def test_add_first_on_a_new_key_makes_it_available():
    acc = EventAccumulator()
    e = Ev("fresh")
    acc.add_first(e)
    assert acc.poll() is e


# -- one in-flight event per key -----------------------------------------------------------------


def test_at_most_one_in_flight_event_per_key():
    """A key's next event is not handed out until `done` is called for the current one."""
    acc = EventAccumulator()
    e0, e1, e2 = Ev("a", "0"), Ev("a", "1"), Ev("a", "2")
    for e in (e0, e1, e2):
        acc.add_last(e)

    assert acc.poll() is e0
    assert acc.in_flight() == {"a"}
    assert acc.poll() is None  # e1 waits: key a is in flight
    assert acc.poll() is None
    assert acc.size() == 2

    acc.done(e0)
    assert acc.poll() is e1
    assert acc.poll() is None
    acc.done(e1)
    assert acc.poll() is e2
    acc.done(e2)
    assert acc.in_flight() == set() and acc.size() == 0


def test_different_keys_are_available_while_one_is_in_flight():
    acc = EventAccumulator(random.Random(7))
    events = {k: [Ev(k, "1"), Ev(k, "2")] for k in "abc"}
    for k in "abc":
        for e in events[k]:
            acc.add_last(e)
    first_round = [acc.poll() for _ in range(3)]
    assert all(e is not None for e in first_round)
    # One event of each key is in flight at the same time, and it is the head of its key.
    assert {e.key for e in first_round} == {"a", "b", "c"}
    assert all(e is events[e.key][0] for e in first_round)
    assert acc.in_flight() == {"a", "b", "c"}
    assert acc.poll() is None
    # Finishing one key releases exactly that key's next event.
    acc.done(events["b"][0])
    assert acc.poll() is events["b"][1]
    assert acc.poll() is None


def test_adding_to_an_in_flight_key_does_not_make_it_available():
    acc = EventAccumulator()
    a1, a2 = Ev("a", "1"), Ev("a", "2")
    acc.add_last(a1)
    assert acc.poll() is a1
    acc.add_last(a2)  # the key's queue is recreated while the key is in flight
    assert acc.poll() is None
    acc.done(a1)
    assert acc.poll() is a2


# -- seeded random choice among keys ---------------------------------------------------------------


def _order(seed: int | None, keys: str = "abcdefgh") -> list[str]:
    acc = EventAccumulator(None if seed is None else random.Random(seed))
    for k in keys:
        for i in range(3):
            acc.add_last(Ev(k, str(i)))
    return [f"{e.key}{e.label}" for e in drain(acc)]


def test_random_key_choice_is_deterministic_for_a_seed():
    """Kafka's `poll` picks a uniformly random available key; here the generator is seeded, so a
    run is reproducible."""
    assert _order(42) == _order(42)
    assert _order(None) == _order(None) == _order(0)  # default: random.Random(0)


def test_different_seeds_can_give_different_orders():
    orders = {tuple(_order(seed)) for seed in range(10)}
    assert len(orders) > 1
    # Whatever the seed, each key's own events stay in FIFO order.
    for order in orders:
        for k in "abcdefgh":
            assert [x for x in order if x[0] == k] == [f"{k}0", f"{k}1", f"{k}2"]


def test_key_choice_is_spread_over_all_available_keys():
    """Fairness: every available key gets picked first about equally often.

    Deterministic (seeded), so the loose bound below never flakes."""
    rng = random.Random(2024)
    firsts: Counter[str] = Counter()
    for _ in range(400):
        acc = EventAccumulator(rng)
        for k in "abcd":
            acc.add_last(Ev(k))
        firsts[acc.poll().key] += 1
    assert set(firsts) == set("abcd")
    assert min(firsts.values()) >= 60, firsts


# -- close -------------------------------------------------------------------------------------


def test_close_rejects_new_events():
    """Once closed, `addLast`/`addFirst` reject with RejectedExecutionException."""
    acc = EventAccumulator()
    acc.close()
    assert acc.closed
    with pytest.raises(RejectedExecutionError, match="closed"):
        acc.add_last(Ev("a"))
    with pytest.raises(RejectedExecutionError, match="closed"):
        acc.add_first(Ev("a"))
    assert acc.size() == 0


def test_queued_events_can_still_be_drained_after_close():
    """The processor drains what is left after closing (and completes it as rejected)."""
    acc = EventAccumulator()
    events = [Ev("a", "1"), Ev("a", "2"), Ev("b", "1")]
    for e in events:
        acc.add_last(e)
    acc.close()
    assert sorted(e.id for e in drain(acc)) == sorted(e.id for e in events)


def test_poll_on_a_closed_empty_accumulator_returns_at_once():
    acc = EventAccumulator()
    acc.close()
    start = time.monotonic()
    assert acc.poll(timeout_s=30.0) is None
    assert acc.poll(timeout_s=None) is None
    assert time.monotonic() - start < 5.0


def test_close_unblocks_waiting_pollers():
    acc = EventAccumulator()
    pollers = [run_in_thread(acc.poll, 30.0) for _ in range(3)]
    acc.close()
    for thread, result, finished in pollers:
        assert finished.wait(5.0), "close() did not wake a blocked poll()"
        assert result == [None]


# -- timeouts, blocking, wait_idle ---------------------------------------------------------------


def test_poll_with_a_timeout_returns_none_when_empty():
    acc = EventAccumulator()
    start = time.monotonic()
    assert acc.poll(timeout_s=0.05) is None
    assert time.monotonic() - start >= 0.04  # it did wait
    assert acc.poll(timeout_s=0) is None  # and 0 does not wait


def test_poll_with_a_timeout_returns_none_while_the_only_key_is_in_flight():
    acc = EventAccumulator()
    acc.add_last(Ev("a", "1"))
    acc.add_last(Ev("a", "2"))
    acc.poll()
    assert acc.poll(timeout_s=0.02) is None
    assert acc.size() == 1


def test_blocked_pollers_are_woken_by_add_and_by_done():
    acc = EventAccumulator()
    e0, e1 = Ev("a", "0"), Ev("a", "1")
    first = run_in_thread(acc.poll, 10.0)
    acc.add_last(e0)
    assert first[2].wait(5.0) and first[1] == [e0]

    acc.add_last(e1)  # key a is in flight: nobody can take e1 yet
    second = run_in_thread(acc.poll, 10.0)
    assert not second[2].wait(0.05)
    acc.done(e0)
    assert second[2].wait(5.0) and second[1] == [e1]


def test_wait_idle():
    acc = EventAccumulator()
    assert acc.wait_idle(0) is True  # nothing queued, nothing in flight
    e = Ev("a")
    acc.add_last(e)
    assert acc.wait_idle(0.02) is False  # queued
    assert acc.poll() is e
    assert acc.wait_idle(0.02) is False  # in flight: not idle until done
    waiter = run_in_thread(acc.wait_idle, 10.0)
    assert not waiter[2].wait(0.05)
    acc.done(e)
    assert waiter[2].wait(5.0) and waiter[1] == [True]


@pytest.mark.parametrize("made_available_by", ["add_last", "done"])
def test_wait_idle_does_not_steal_the_wakeup_of_a_blocked_poller(made_available_by):
    """A thread in `wait_idle` must not swallow the signal meant for a thread blocked in `poll`.

    Kafka signals a single waiter when a key becomes available, which is right when only pollers
    wait. If `wait_idle` waited on the same condition, that one signal could wake the idle waiter
    (whose condition is still false) and leave the poller asleep until its timeout.
    """
    acc = EventAccumulator()
    a0, a1 = Ev("a", "0"), Ev("a", "1")
    acc.add_last(a0)
    assert acc.poll() is a0  # key a in flight: the accumulator is not idle
    if made_available_by == "done":
        acc.add_last(a1)  # queued behind the in-flight a0

    idle = run_in_thread(acc.wait_idle, 10.0)
    time.sleep(0.05)  # let the idle waiter block first (if it does not, the test only gets easier)
    poller = run_in_thread(acc.poll, 10.0)
    time.sleep(0.05)

    if made_available_by == "add_last":
        b = Ev("b")
        acc.add_last(b)
        expected = b
    else:
        acc.done(a0)
        expected = a1
    assert poller[2].wait(2.0), "the poller was not woken: its wake-up went to wait_idle"
    assert poller[1] == [expected]

    acc.done(expected)
    if made_available_by == "add_last":
        acc.done(a0)
    assert idle[2].wait(5.0) and idle[1] == [True]


def test_concurrent_producers_and_consumers_keep_the_per_key_contract():
    """Several producer and consumer threads: every event is handed out once, per-key FIFO holds,
    and no key ever has two events out at once."""
    acc = EventAccumulator(random.Random(5))
    keys = [f"k{i}" for i in range(5)]
    per_producer = 200
    lock = threading.Lock()
    out: dict[str, list[tuple[int, int]]] = {k: [] for k in keys}
    out_now: Counter[str] = Counter()
    violations: list[str] = []

    def produce(p: int) -> None:
        for i in range(per_producer):
            acc.add_last(Ev(keys[(p + i) % len(keys)], f"{p}:{i}"))

    def consume() -> None:
        while True:
            e = acc.poll(0.5)
            if e is None:
                if acc.closed:
                    return
                continue
            with lock:
                out_now[e.key] += 1
                if out_now[e.key] > 1:
                    violations.append(f"two events of {e.key} out at once")
                p, i = map(int, e.label.split(":"))
                out[e.key].append((p, i))
            with lock:
                out_now[e.key] -= 1
            acc.done(e)

    consumers = [threading.Thread(target=consume, daemon=True) for _ in range(3)]
    producers = [threading.Thread(target=produce, args=(p,), daemon=True) for p in range(3)]
    for t in consumers + producers:
        t.start()
    for t in producers:
        t.join(10.0)
    assert acc.wait_idle(10.0)
    acc.close()
    for t in consumers:
        t.join(10.0)
        assert not t.is_alive()

    assert not violations
    assert sum(len(v) for v in out.values()) == 3 * per_producer
    for k, got in out.items():
        for p in range(3):  # each producer's events of a key keep their order
            mine = [i for (q, i) in got if q == p]
            assert mine == sorted(mine), (k, p)
