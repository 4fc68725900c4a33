"""The replicated partition log: high watermark, ISR, faults (what makes a write commit)."""

from __future__ import annotations

import pytest

from coordinator_kit.errors import Errors, KafkaError
from coordinator_kit.runtime.sandbox import RuntimeSandbox


def loaded(**kw) -> RuntimeSandbox:
    sb = RuntimeSandbox(**kw)
    sb.start()
    sb.run_for(10)
    return sb


def test_hwm_is_the_least_log_end_offset_of_the_isr_and_moves_after_a_fetch_round_trip():
    sb = loaded(replication_latency_ms=1)
    p = sb.partition()
    w = sb.put("a", "1")
    sb.scheduler.run_pending()
    assert (p.log_end_offset, p.high_watermark) == (1, 0)
    sb.run_for(1)  # the parked fetches are answered; the data reaches the followers
    assert [p.replicas[b].log_end_offset for b in (1, 2)] == [1, 1]
    assert p.high_watermark == 0 and not w.done()  # the leader hasn't heard back yet
    sb.run_for(1)  # the followers' next fetches tell the leader their new position
    assert p.high_watermark == 1 and w.done()


def test_a_stopped_follower_stalls_the_hwm_until_it_leaves_the_isr():
    sb = loaded(write_timeout_ms=60_000)
    p = sb.partition()
    p.stall_replica(2)
    w = sb.put("a", "1")
    sb.run_for(1000)
    assert not w.done() and p.high_watermark == 0
    why = p.why_not_committed()
    assert "broker 2 has confirmed 0 and is not fetching (stalled)" in why
    # replica.lag.time.max.ms (30 s) passes; the ISR check, every 15 s, then drops broker 2.
    sb.run_for(29_000)
    assert p.isr == [0, 1, 2] and not w.done()
    sb.run_for(15_000)
    assert p.isr == [0, 1] and w.result() == "a=1"
    shrink = [ln for ln in sb.log_lines() if "Shrinking ISR" in ln]
    assert shrink and ("Shrinking ISR from 0,1,2 to 0,1. Leader: (highWatermark: 0, endOffset: 1). "
                       "Out of sync replicas: (brokerId: 2, endOffset: 0, lastCaughtUpTimeMs: ") \
        in shrink[0]
    p.resume_replica(2)
    sb.run_for(10)
    assert p.isr == [0, 1, 2]
    assert any("ISR updated to 0,1,2" in ln for ln in sb.log_lines())


def test_a_lagging_follower_delays_commits_by_its_fetch_delay():
    sb = loaded()
    p = sb.partition()
    p.lag_replica(1, 200)
    sb.run_for(500)  # let the slow fetch loop settle
    w = sb.put("a", "1")
    start = sb.scheduler.now
    sb.run_until(w.done)
    assert 200 <= sb.scheduler.now - start <= 410


def test_followers_copy_whole_batches_so_the_hwm_lands_on_batch_boundaries():
    sb = loaded(append_linger_ms=10)
    p = sb.partition()
    seen = set()
    sb.trace.subscribe(lambda e: seen.add(e.fields["new"]) if e.kind == "hwm_advanced" else None)
    for i in range(30):
        sb.put(f"k{i}", "v")
        sb.run_for(1)
    sb.run_for(50)
    boundaries = {b.next_offset for b in p.leader.batches}
    assert seen and seen <= boundaries


def test_only_the_leader_appends():
    sb = loaded()
    with pytest.raises(KafkaError) as info:
        sb.partition().append(1, [(b"\x00\x00{}", None)])
    assert info.value.error is Errors.NOT_LEADER_OR_FOLLOWER


def test_fault_knobs_refuse_misuse_clearly():
    sb = loaded()
    p = sb.partition()
    with pytest.raises(ValueError, match="broker 0 is the leader"):
        p.stall_replica(0)
    with pytest.raises(ValueError, match="broker 7 has no replica"):
        p.lag_replica(7, 10)
    with pytest.raises(ValueError, match="fetch_delay_ms must be >= 0"):
        p.lag_replica(1, -5)
    p.stall_replica(2)
    sb.run_for(40_000)
    assert p.isr == [0, 1, 2]  # at the log end offset a follower is never out of sync
    sb.put("a", "1")
    sb.run_for(50_000)
    with pytest.raises(ValueError, match="not in the ISR"):
        p.elect_leader(2)


def test_election_truncates_uncommitted_records_on_followers_and_keeps_committed_ones():
    sb = loaded()
    p = sb.partition()
    sb.put("committed", "1")
    sb.run_for(10)
    # Broker 1 stops fetching; broker 2 copies the next write but the HWM can't move past it.
    p.stall_replica(1)
    sb.put("uncommitted", "2")
    sb.run_for(5)
    assert p.high_watermark == 1 and p.replicas[2].log_end_offset == 2
    epoch = sb.move_leader(0, 1)
    sb.run_for(10)
    assert epoch == 1 and p.leader_id == 1
    assert [r.log_end_offset for r in p.replicas.values()] == [1, 1, 1]
    snap = sb.committed()
    sb.scheduler.run_pending()
    assert snap.result() == {"committed": "1"}
    assert any("Leader __consumer_offsets-0 with topic id" in ln and
               "starts at leader epoch 1 from offset 1" in ln and
               "Previous leader Some(0) and previous leader epoch was 0." in ln
               for ln in sb.log_lines())


def test_a_record_measured_once_has_its_v2_size_at_every_offset_delta():
    """The runtime measures a record once (`record_body_size`) and sizes it at its offset delta
    in the batch (`record_size_from_body`); both must agree with the v2 record layout."""
    from coordinator_kit.runtime.partition import (first_record_size, record_body_size,
                                                   record_size_from_body, record_size_in_bytes)
    lengths = [0, 1, 62, 63, 64, 65, 127, 128, 8190, 8191, 8192, 8193, 20_000, 1_100_000]
    deltas = [0, 1, 63, 64, 65, 8191, 8192, 8193, 70_000, 2**31 - 1]
    for n in lengths:
        key = b"k" * n
        for value in (None, b"", b"v" * n, b"v" * (n // 2 + 70)):
            body = record_body_size(key, value)
            for delta in deltas:
                assert record_size_from_body(body, delta) == \
                    record_size_in_bytes(delta, key, value), (n, value and len(value), delta)
            # a batch's first record (a linger-0 write's only one), measured in one call
            assert first_record_size(key, value) == record_size_in_bytes(0, key, value)
