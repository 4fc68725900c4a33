"""Hostile inputs for the parser's regular expressions: does any of them backtrack?

Java's and Python's regex engines both backtrack: a pattern with two ways to cut the same text
(`.*?` before a separator that the text holds many times, `" +"` before a message that may
start with spaces) can take time growing as a power of the line's length on a line that almost
matches. One such line in a log stalls a whole parse, in either engine.

This module finds such patterns without guessing which: it reads a pattern's syntax tree
(Python's own regex parser) and, for every repetition in it, builds inputs of the classic
three-part form `prefix + pump * n + suffix`:

* prefix: the shortest text leading the engine to the repetition (the pattern's own literals,
  one sample character per class);
* pump: what the repetition eats, the separator that follows it in the pattern, both, or all
  the rest of the pattern (the shapes that let an engine cut the text many ways);
* suffix: nothing, or a character that makes the whole match fail at the very end.

`growth(run, case)` times `run` on the case at two lengths (4x apart) and returns the ratio:
about 4 for work linear in the line, 16 for quadratic, more for worse. A ratio compares two
runs in the same process a moment apart, so it means the same on a quiet machine and on a
busy one, where a time limit would not.

Used by the tests (tests/test_log_inputs.py) and by `benchmarks/spark_logs.py --hostile`.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

try:                                     # Python 3.11+
    import re._constants as _c
    import re._parser as _parser
except ImportError:                      # pragma: no cover - older Pythons
    import sre_constants as _c           # type: ignore[no-redef]
    import sre_parse as _parser          # type: ignore[no-redef]

__all__ = ["PumpCase", "pump_cases", "growth", "worst_growth", "parser_patterns",
           "BREAKER"]

BREAKER = "!"            # ends a pumped text where no pattern of the parser expects it
_PREFERRED = "aA0 _.-:,=x"   # sample characters, tried in this order for a class


@dataclass(frozen=True)
class PumpCase:
    """One hostile input: `prefix + pump * n + suffix`; `where` says which repetition."""

    prefix: str
    pump: str
    suffix: str
    where: str = ""

    def text(self, length: int) -> str:
        """The input with the pump repeated until it is about `length` characters long."""
        n = max(1, (length - len(self.prefix) - len(self.suffix)) // max(1, len(self.pump)))
        return self.prefix + self.pump * n + self.suffix


# -- witnesses: the shortest text a node matches ---------------------------------------------

def _in_class(items: list, ch: str) -> bool:
    negate = False
    hit = False
    for op, av in items:
        if op is _c.NEGATE:
            negate = True
        elif op is _c.LITERAL:
            hit |= ord(ch) == av
        elif op is _c.RANGE:
            hit |= av[0] <= ord(ch) <= av[1]
        elif op is _c.CATEGORY:
            probe = {_c.CATEGORY_DIGIT: r"\d", _c.CATEGORY_NOT_DIGIT: r"\D",
                     _c.CATEGORY_SPACE: r"\s", _c.CATEGORY_NOT_SPACE: r"\S",
                     _c.CATEGORY_WORD: r"\w", _c.CATEGORY_NOT_WORD: r"\W"}.get(av)
            hit |= bool(probe and re.fullmatch(probe, ch))
    return hit != negate


def _char(op: object, av: object) -> str:
    """A printable character that one-character node (op, av) matches."""
    if op is _c.LITERAL:
        return chr(av)  # type: ignore[arg-type]
    for ch in _PREFERRED + "".join(map(chr, range(33, 127))):
        if op is _c.ANY or (op is _c.NOT_LITERAL and ord(ch) != av) or \
                (op is _c.IN and _in_class(av, ch)):  # type: ignore[arg-type]
            return ch
    return "a"


_REPEATS = (_c.MAX_REPEAT, _c.MIN_REPEAT) + \
    ((_c.POSSESSIVE_REPEAT,) if hasattr(_c, "POSSESSIVE_REPEAT") else ())
_GROUPS = (_c.SUBPATTERN,) + ((_c.ATOMIC_GROUP,) if hasattr(_c, "ATOMIC_GROUP") else ())


def _content(op: object, av: object) -> list:
    if op is _c.SUBPATTERN:
        return list(av[-1])  # type: ignore[index]
    return list(av)  # type: ignore[arg-type]


def _witness(nodes: Iterable, at_least: int = 0) -> str:
    """The shortest text `nodes` match (every repetition taken at least `at_least` times)."""
    out = []
    for op, av in nodes:
        if op in (_c.LITERAL, _c.NOT_LITERAL, _c.IN, _c.ANY):
            out.append(_char(op, av))
        elif op in _REPEATS:
            low, _, item = av
            out.append(_witness(item, at_least) * max(low, at_least))
        elif op in _GROUPS:
            out.append(_witness(_content(op, av), at_least))
        elif op is _c.BRANCH:
            out.append(_witness(av[1][0], at_least))
        # anchors (AT) and look-arounds match no text
    return "".join(out)


def _fixed_run(nodes: list) -> list:
    """The leading nodes that match exactly one fixed-width text (the separator after a
    repetition)."""
    run = []
    for node in nodes:
        op, av = node
        if op in (_c.LITERAL, _c.NOT_LITERAL, _c.IN, _c.ANY) or \
                (op in _REPEATS and av[0] == av[1]):
            run.append(node)
        else:
            break
    return run


def _walk(nodes: list, before: str, after: list, where: str) -> Iterator[PumpCase]:
    for i, (op, av) in enumerate(nodes):
        prefix = before + _witness(nodes[:i])
        following = nodes[i + 1:] + after
        if op in _REPEATS:
            low, high, item = av
            if high != low:
                item_w = _witness(item, 1)
                sep = _witness(_fixed_run(following))
                rest = _witness(following)
                for pump in dict.fromkeys([item_w, sep, item_w + sep, item_w + rest, rest]):
                    if pump:
                        for suffix in ("", BREAKER):
                            yield PumpCase(prefix, pump, suffix, f"{where}@{len(prefix)}")
            yield from _walk(list(item), prefix, following, where)
        elif op in _GROUPS:
            yield from _walk(_content(op, av), prefix, following, where)
        elif op is _c.BRANCH:
            for alt in av[1]:
                yield from _walk(list(alt), prefix, following, where)


def pump_cases(pattern: str, where: str = "") -> list[PumpCase]:
    """Every hostile input for `pattern` (see the module docstring), without duplicates."""
    tree = _parser.parse(pattern)
    return list(dict.fromkeys(_walk(list(tree), "", [], where)))


# -- measuring --------------------------------------------------------------------------------

def _best(run: Callable[[str], object], text: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        run(text)
        best = min(best, time.perf_counter() - t0)
    return best


def growth(run: Callable[[str], object], case: PumpCase, length: int = 2000,
           factor: int = 4, repeat: int = 3) -> float:
    """time(run on the case at factor * length) / time(at length), best of `repeat` each.

    About `factor` when the work is linear in the input; factor**2 when quadratic. Measured
    at length, 2 * length, then factor * length; when the double length already grows
    superlinearly (more than 4x: quadratic or worse) the answer is extrapolated from it
    instead, so that a catastrophic case shows in a moment rather than after minutes."""
    t1 = max(_best(run, case.text(length), repeat), 1e-7)
    t2 = _best(run, case.text(2 * length), repeat)
    if t2 / t1 > 4:
        return (t2 / t1) ** math.log2(factor)
    return _best(run, case.text(length * factor), repeat) / t1


def worst_growth(run: Callable[[str], object], cases: Iterable[PumpCase], *,
                 length: int = 2000, factor: int = 4, top: int = 12, repeat: int = 3
                 ) -> list[tuple[float, PumpCase]]:
    """The growth of the `top` cases slowest at `length` (one timing each first: a
    superlinear case is the slowest there by far), worst first."""
    timed = []
    for case in cases:
        t0 = time.perf_counter()
        run(case.text(length))
        timed.append((time.perf_counter() - t0, case))
    timed.sort(key=lambda tc: -tc[0])
    out = [(growth(run, case, length, factor, repeat), case) for _, case in timed[:top]]
    return sorted(out, key=lambda gc: -gc[0])


def parser_patterns() -> dict[str, tuple[str, str]]:
    """name -> (pattern, "match" or "search"): every regex the two engines run on line text,
    as Python compiles it (the Spark forms of the classifiers are the same alternatives)."""
    from . import parse as _parse
    from . import patterns as P
    from . import quarantine as Q
    from . import joins as J
    from . import wrappers as W

    out = {
        "layouts": (P.LAYOUT_CLASSIFIER.python, "match"),
        "messages": (P.MESSAGE_CLASSIFIER.python, "match"),
        "CONTROL_RE": (P.CONTROL_RE, "search"),
        "BLANK_RE": (P.BLANK_RE, "search"),
        "CONTINUATION_RE": (P.CONTINUATION_RE, "search"),
        "HEAD_RE": (P.HEAD_RE, "search"),
        "COORDINATION_LOGGER_RE": (P.COORDINATION_LOGGER_RE, "search"),
        "CLIENT_LOGGER_RE": (P.CLIENT_LOGGER_RE, "search"),
        "LOG4J_HEAD_RE": (P.LOG4J_HEAD_RE.replace("\\z", "\\Z"), "search"),
        "LOG4J_TAIL_RE": (P.LOG4J_TAIL_RE.replace("\\z", "\\Z"), "search"),
        "JSON_TS_RE": (_parse.JSON_TS_RE, "search"),
        "COORDINATION_RE": (Q.COORDINATION_RE, "search"),
        "WRAPPER_RE": (W.WRAPPER_RE, "search"),
        "K9S_TRIM_RE": (W.K9S_TRIM_RE, "search"),
        **{f"SHAPE_RULES.{r.name}": (r.regex, "search") for r in Q.SHAPE_RULES},
        "HEADS_RE": (J.HEADS_RE, "search"),
        **{f"JOINS.{j.name}.tail": (j.tail, "search") for j in J.JOINS},
    }
    for name, (rx, how) in list(out.items()):
        re.compile(rx)
        out[name] = (rx, how)
    return out
