"""Quarantined lines grouped by shape: what the parser did not know, in a few rows.

A quarantine of thousands of lines is mostly a handful of line *shapes* repeated with other
numbers, ids and times. `line_shape(raw)` masks those (the rules in `SHAPE_RULES`, applied in
order to the record's first line), and `quarantine_shapes(rows)` counts the quarantined
records per (shape, problem), keeping the first record of each as an example. A shape that
holds words of Kafka's group coordination (`COORDINATION_WORDS`: JoinGroup, generation,
rebalance, coordinator, heartbeat, member, ...) is flagged: such a line is probably an event
the kit does not know yet, worth sending as a sample.

The Spark engine (`spark.quarantine`) applies the very same patterns with `regexp_replace`
and `rlike`, so both engines give the same table; every pattern is linear in the line
(`logs.redos.parser_patterns` includes them). The patterns use the common subset of Java's
and Python's regex syntax (no `\\b`, no `\\d`, no case-insensitive flag: the coordination
words are spelled with both cases in each character class, so Java and Python agree on
every character).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["ShapeRule", "SHAPE_RULES", "SHAPE_WIDTH", "COORDINATION_WORDS", "COORDINATION_RE",
           "line_shape", "looks_like_coordination", "QuarantineShape", "quarantine_shapes",
           "shape_order"]


@dataclass(frozen=True)
class ShapeRule:
    """One masking step: every match of `regex` becomes `mask` (a plain text: no `$`/`\\`)."""

    name: str
    regex: str
    mask: str


_HEXD = "[0-9a-fA-F]"
_WORD = "A-Za-z0-9_"
SHAPE_RULES: tuple[ShapeRule, ...] = (
    # a UUID (librdkafka's and kafka-python's member ids end in one)
    ShapeRule("uuid", f"{_HEXD}{{8}}-{_HEXD}{{4}}-{_HEXD}{{4}}-{_HEXD}{{4}}-{_HEXD}{{12}}",
              "<uuid>"),
    # 0x-prefixed hex (object hashes, addresses)
    ShapeRule("hex", f"0[xX]{_HEXD}+", "<hex>"),
    # a long token with a digit in it: KIP-848 member ids (22 base64 characters), Java
    # consumer member ids' tails, hashes. The look-ahead is bounded by the token (it starts
    # only where a token starts), so each character is looked at a fixed number of times.
    ShapeRule("id", f"(?<![{_WORD}-])(?=[{_WORD}-]*[0-9])[{_WORD}-]{{16,}}(?![{_WORD}-])",
              "<id>"),
    # every other run of digits: times, dates, generations, partitions, ports
    ShapeRule("number", "[0-9]+", "0"),
)
# Shapes are cut to this many characters (the rest of a long line rarely changes its shape).
SHAPE_WIDTH = 160

# Words of the group protocol and its coordinator, as they appear in Kafka's, the clients' and
# librdkafka's log lines (JoinGroup, SyncGroup, "generation", "rebalancing", ...).
COORDINATION_WORDS: tuple[str, ...] = (
    "joingroup", "syncgroup", "leavegroup", "heartbeat", "rebalanc", "coordinator",
    "generation", "member", "assignment", "assignor", "revok", "consumer group", "group epoch",
    "cgrp", "offsetcommit",
)


def _any_case(word: str) -> str:
    out = []
    for ch in word:
        if ch.isalpha():
            out.append(f"[{ch.lower()}{ch.upper()}]")
        else:
            out.append(re.escape(ch) if ch != " " else " ")
    return "".join(out)


COORDINATION_RE = "(?:" + "|".join(_any_case(w) for w in COORDINATION_WORDS) + ")"
_RULES = [(re.compile(r.regex), r.mask) for r in SHAPE_RULES]
_COORDINATION = re.compile(COORDINATION_RE)


def _masked(raw: str | None) -> str:
    text = (raw or "").split("\n", 1)[0]
    for rx, mask in _RULES:
        text = rx.sub(mask, text)
    return text


def line_shape(raw: str | None) -> str:
    """The first line of `raw` with ids, hex and numbers masked, cut to SHAPE_WIDTH."""
    return _masked(raw)[:SHAPE_WIDTH]


def looks_like_coordination(raw: str | None) -> bool:
    """Whether the first line of `raw` (masked: a word inside an id does not count) holds a
    word of `COORDINATION_WORDS`, anywhere in it (not only in its first SHAPE_WIDTH)."""
    return _COORDINATION.search(_masked(raw)) is not None


@dataclass(frozen=True)
class QuarantineShape:
    """One group of quarantined records: same shape, same problem."""

    shape: str
    problem: str
    count: int
    coordination: bool
    files: int
    example_file: str | None
    example_line: int | None
    example: str

    def as_row(self) -> dict[str, Any]:
        return {"count": self.count, "kafka": "yes" if self.coordination else "",
                "problem": self.problem, "shape": self.shape,
                "example": f"{self.example_file}:{self.example_line}"}


def shape_order(s: QuarantineShape) -> tuple[Any, ...]:
    return (not s.coordination, -s.count, s.shape, s.problem)


def quarantine_shapes(rows: Iterable[dict[str, Any]]) -> list[QuarantineShape]:
    """Quarantined records (rows of `ParseResult.quarantine`) grouped by (shape, problem):
    the groups that look like coordination (any of their lines does) first, then by count (most first), shape."""
    groups: dict[tuple[str, str], list[Any]] = {}
    for row in rows:
        masked = _masked(row.get("raw"))
        key = (masked[:SHAPE_WIDTH], row.get("problem") or "")
        where = (row.get("file") or "", row.get("line") or 0)
        g = groups.get(key)
        if g is None:
            groups[key] = g = [0, set(), where, row.get("raw") or "", False]
        if not g[4] and _COORDINATION.search(masked):
            g[4] = True
        g[0] += 1
        if row.get("file"):
            g[1].add(row["file"])
        if where < g[2]:                 # the first record (file, line) is the example
            g[2], g[3] = where, row.get("raw") or ""
    out = [QuarantineShape(shape, problem, n, coordination, len(files),
                           where[0] or None, where[1] or None, example.split("\n", 1)[0])
           for (shape, problem), (n, files, where, example, coordination) in groups.items()]
    return sorted(out, key=shape_order)
