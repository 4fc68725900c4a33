"""Rows from the two log engines in one comparable form: the Python parser's rows carry
UTC-aware time stamps, Spark's (in the kit's UTC session) naive ones; both sorted by file and
line. Shared by the Spark loader tests."""

from __future__ import annotations


def naive(rows: list[dict]) -> list[dict]:
    """Python rows with UTC-naive time stamps (what Spark returns in a UTC session)."""
    out = []
    for r in rows:
        d = dict(r)
        if d["ts"] is not None:
            d["ts"] = d["ts"].replace(tzinfo=None)
        out.append(d)
    return sorted(out, key=lambda d: (d["file"], d["line"]))


def collect(df) -> list[dict]:
    """A Spark frame's rows as dicts, sorted by file and line."""
    return sorted((r.asDict() for r in df.collect()), key=lambda d: (d["file"], d["line"]))
