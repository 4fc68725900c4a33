"""Transaction markers: how a transaction ends in a `__consumer_offsets` partition.

A transactional producer's offsets (TxnOffsetCommit) are written in batches that carry its
producer id and epoch; they count only once the transaction coordinator has the partition leader
write an end-transaction marker: a control batch of one control record, COMMIT or ABORT, from
the same producer (Kafka's `EndTransactionMarker`, `ControlRecordType`,
`MemoryRecords.withEndTransactionMarker`). The log keeps the result in `LogBatch.control`; the
record's bytes are Kafka's: key = int16 version 0 + int16 type (ABORT 0, COMMIT 1), value =
int16 version 0 + int32 coordinator epoch.
"""

from __future__ import annotations

import struct
from enum import Enum

__all__ = ["TransactionResult", "end_transaction_marker", "read_end_transaction_marker"]

_KEY = struct.Struct(">hh")
_VALUE = struct.Struct(">hi")


class TransactionResult(str, Enum):
    """How a transaction ended (Kafka's `TransactionResult`); equal to the string the log
    stores in `LogBatch.control`."""

    COMMIT = "COMMIT"
    ABORT = "ABORT"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def of(cls, result: TransactionResult | str) -> TransactionResult:
        """The member for `result` (a member or its name); a clear error for anything else."""
        try:
            return cls(result)
        except ValueError:
            raise ValueError(f"a transaction result is COMMIT or ABORT, got {result!r}") from None


_TYPES = {TransactionResult.ABORT: 0, TransactionResult.COMMIT: 1}
_RESULTS = {code: result for result, code in _TYPES.items()}


def end_transaction_marker(result: TransactionResult | str, coordinator_epoch: int
                           ) -> tuple[bytes, bytes]:
    """(key, value) of the control record that ends a transaction."""
    if isinstance(coordinator_epoch, bool) or not isinstance(coordinator_epoch, int) or \
            not -2**31 <= coordinator_epoch < 2**31:
        raise ValueError(f"the coordinator epoch is an int32, got {coordinator_epoch!r}")
    return _KEY.pack(0, _TYPES[TransactionResult.of(result)]), _VALUE.pack(0, coordinator_epoch)


def read_end_transaction_marker(key: bytes, value: bytes) -> tuple[TransactionResult, int]:
    """(result, coordinator epoch) of a control record's bytes."""
    if len(key) < _KEY.size or len(value) < _VALUE.size:
        raise ValueError(f"a control record has a {_KEY.size}-byte key and a {_VALUE.size}-byte "
                         f"value, got {len(key)} and {len(value)} bytes")
    _, kind = _KEY.unpack_from(key)
    if kind not in _RESULTS:
        raise ValueError(f"control record type {kind} is not an end-transaction marker "
                         f"(ABORT 0, COMMIT 1)")
    return _RESULTS[kind], _VALUE.unpack_from(value)[1]
