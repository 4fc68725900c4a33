"""Quarantined lines grouped by shape, in Spark, and the table both engines print.

`quarantine_shapes_spark(quarantine)` is `logs.quarantine.quarantine_shapes` on a DataFrame
(`parse_logs(...).quarantine`): the same `SHAPE_RULES` through `regexp_replace`, the same
`COORDINATION_RE` through `rlike`, one aggregation, the small result collected and ordered
like the Python engine's. `format_shapes` prints either engine's list as the `logs quarantine`
table (and the last section of `logs report`).
"""

from __future__ import annotations

import re
from typing import Any

from ..logs.quarantine import (COORDINATION_RE, SHAPE_RULES, SHAPE_WIDTH, QuarantineShape,
                               shape_order)

__all__ = ["shape_column", "quarantine_shapes_spark", "format_shapes"]


def _masked(raw: Any) -> Any:
    from pyspark.sql import functions as F

    text = F.substring_index(F.coalesce(raw, F.lit("")), "\n", 1)
    for rule in SHAPE_RULES:
        text = F.regexp_replace(text, rule.regex, rule.mask)
    return text


def shape_column(raw: Any) -> Any:
    """`logs.quarantine.line_shape` as a Column expression."""
    from pyspark.sql import functions as F

    return F.substring(_masked(raw), 1, SHAPE_WIDTH)


def quarantine_shapes_spark(quarantine: Any) -> list[QuarantineShape]:
    """The quarantine DataFrame grouped by (shape, problem), as `quarantine_shapes` does."""
    from pyspark.sql import functions as F

    grouped = (quarantine
               .select(_masked(F.col("raw")).alias("masked"),
                       F.coalesce(F.col("problem"), F.lit("")).alias("problem"),
                       F.col("file"),
                       F.struct(F.coalesce(F.col("file"), F.lit("")).alias("f"),
                                F.coalesce(F.col("line"), F.lit(0)).alias("l"),
                                F.substring_index(F.coalesce(F.col("raw"), F.lit("")), "\n", 1)
                                .alias("r")).alias("where"))
               .select(F.substring("masked", 1, SHAPE_WIDTH).alias("shape"), "problem", "file",
                       "where", F.col("masked").rlike(COORDINATION_RE).alias("coordination"))
               .groupBy("shape", "problem")
               .agg(F.count(F.lit(1)).alias("n"), F.countDistinct("file").alias("files"),
                    F.min("where").alias("first"), F.max("coordination").alias("coordination")))
    out = [QuarantineShape(r["shape"], r["problem"], int(r["n"]), bool(r["coordination"]),
                           int(r["files"]), r["first"]["f"] or None, r["first"]["l"] or None,
                           r["first"]["r"])
           for r in grouped.collect()]
    return sorted(out, key=shape_order)


_CONTROL = re.compile("[\\x00-\\x1f\\x7f]")


def _visible(text: str) -> str:
    """Control characters (a tab, bytes of a binary line) written as escapes."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def _tail(text: str, width: int) -> str:
    """A file:line cut from its start (the file's name and the line number are its end)."""
    return text if not width or len(text) <= width else "…" + text[-(width - 1):]


def format_shapes(shapes: list[QuarantineShape], *, limit: int = 20, width: int = 60) -> str:
    """The groups as a plain-text table, and a line on what to do with the flagged ones."""
    from .report import format_table

    if not shapes:
        return "(no quarantined lines)"
    total = sum(s.count for s in shapes)
    shown = shapes[:limit or None]
    header = ["count", "kafka", "problem", "shape", "example"]
    rows = [[str(s.count), "yes" if s.coordination else "", s.problem, _visible(s.shape),
             _tail(f"{s.example_file or '-'}:{s.example_line or '-'}", width)] for s in shown]
    lines = [f"{total} quarantined record(s) in {len(shapes)} shape(s)",
             format_table(header, rows, width=width)]
    if len(shown) < len(shapes):
        lines.append(f"(showing {len(shown)} of {len(shapes)} shapes; --limit 0 shows all)")
    flagged = sum(1 for s in shapes if s.coordination)
    if flagged:
        lines.append(f"{flagged} shape(s) marked kafka hold words of group coordination "
                     "(JoinGroup, generation, rebalance, coordinator, heartbeat, member, ...): "
                     "probably events the parser does not know yet. Send an example line of "
                     "each (its file:line is shown) so that its layout or wording can be added.")
    return "\n".join(lines)
