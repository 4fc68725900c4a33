"""The regular expressions of the log parser, built from the template catalogue.

Two stages, each ONE combined regular expression that says which alternative matched, followed
by one anchored regular expression for that alternative only, which pulls out its fields:

1. layout  - `LAYOUTS` (Kafka's log4j with and without thread, logback, Spring Boot, Python
             logging, librdkafka); the message is what the layout wraps. JSON lines are read
             with a JSON parser instead (`JSON_KEYS`).
2. message - every template of `catalogue.TEMPLATES` and every foreign wording of
             `wordings.WORDINGS`, behind an optional LogContext prefix (`PREFIXES`).

Both the Spark loader (`regexp_extract` / `regexp_replace`, no Python UDF) and the pure-Python
reference parser (`logs.parse`) use the very same pattern strings, so they agree line for line.
The strings are written in the common subset of Java's and Python's regex syntax: `(?s)`,
`(?:...)`, `[0-9]` rather than `\\d`, no named groups in the final patterns.

How one regex tells which alternative matched: the text is followed by `\\x00` and a code
table (a de Bruijn sequence, every 2-character window distinct); alternative *i* ends with
`\\x00.{i}` and the shared group `(..)` after the alternation captures window *i* of the table.
`regexp_extract(text + SUFFIX, COMBINED, 1)` is thus the code of the alternative that matched
(or `''`), found in one pass. Alternatives sharing a literal start are factored into a trie,
so a line is compared with a handful of alternatives, not with all of them.

Placeholders become regexes by name (`PLACEHOLDER_REGEX`), and fill the columns named in
`fields.PLACEHOLDER_COLUMNS`; a new catalogue template is picked up without any change here.

Every pattern runs in time linear in the line, in both engines (both backtrack): no two parts of
a pattern may cut the same text in many ways that the engine would all try on a line that does
not match (see `template_regex` and `_SPACES_MSG_PAREN`), and no group is repeated (Java's
engine recurses once per repetition of a group and overflows its stack on a long line; see
`_DOTTED_LOWER`). `logs.redos` finds a pattern that breaks this, from the pattern's own syntax
tree; tests/test_log_inputs.py and tests/test_spark_log_inputs.py run it on every pattern.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

from .catalogue import PREFIXES as CATALOGUE_PREFIXES
from .catalogue import TEMPLATES, LogTemplate
from .fields import EXTRA_EVENTS, PLACEHOLDER_COLUMNS, TEMPLATE_OVERRIDES
from .wordings import WORDINGS, Wording

__all__ = ["SEP", "Classifier", "Alternative", "LAYOUTS", "LAYOUT_IDS", "LAYOUT_CLASSIFIER",
           "MESSAGE_CLASSIFIER", "MESSAGE_ENTRIES", "BARE_LAYOUT", "BARE_MIN_FIXED", "BARE_OK", "MessageEntry", "PLACEHOLDER_REGEX",
           "LAYOUT_SLOTS", "MESSAGE_SLOTS", "LOG4J_HEAD_RE", "LOG4J_TAIL_RE", "message_entries", "message_classifier", "PREFIXES", "CONTROL_RE", "CONTINUATION_RE", "HEAD_RE",
           "BLANK_RE", "COORDINATION_LOGGER_RE", "CLIENT_LOGGER_RE", "CLIENT_LAYOUTS",
           "LEVEL_ALIASES", "LOGGER_LEVELS", "JSON_KEYS", "JSON_KEY_MAPS", "END", "EVENT_NAMES", "template_regex", "is_coordination_logger",
           "source_of", "normalise_level", "regex_escape"]

SEP = "\x01"          # separates the fields a per-alternative regexp_replace writes
_END = "\\x00"        # regex for the sentinel between the text and the code table
_ANY = "[^\\x00]"     # "any character" inside a field: never runs into the code table


def regex_escape(text: str) -> str:
    """Escape `text` for both Java and Python regexes (only the metacharacters)."""
    out = []
    for ch in text:
        if ch in "\\.^$*+?{}[]|()":
            out.append("\\" + ch)
        elif ord(ch) < 32 or ord(ch) == 127:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "".join(out)


# -- alternatives and the combined pattern ------------------------------------------------------

_MARKER = re.compile(r"\(\?P<([a-z_]+)>")


def _convert(rx: str, keep: set[str], name: str = "") -> tuple[str, list[str]]:
    """Turn `(?P<slot>` markers into plain groups (slot kept) or `(?:` (dropped).

    Returns the regex and the slot of each capturing group, in group-number order. Any other
    bare `(` would shift the numbering, so it is refused. With `name`, kept groups are named
    `{name}_{k}` instead (Python only: the single-match pattern of `Classifier.match`).
    """
    out, slots, i = [], [], 0
    in_class = False
    while i < len(rx):
        ch = rx[i]
        if ch == "\\":
            out.append(rx[i:i + 2])
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
            out.append(ch)
            i += 1
            continue
        if ch == "[":
            in_class = True
            out.append(ch)
            # a ']' right after '[' or '[^' is a literal
            if rx[i + 1:i + 2] == "^":
                out.append("^")
                i += 1
            if rx[i + 1:i + 2] == "]":
                out.append("]")
                i += 1
            i += 1
            continue
        if ch == "(":
            m = _MARKER.match(rx, i)
            if m:
                if m.group(1) in keep:
                    out.append(f"(?P<{name}_{len(slots)}>" if name else "(")
                    slots.append(m.group(1))
                else:
                    out.append("(?:")
                i = m.end()
                continue
            if rx[i + 1:i + 2] != "?":
                raise ValueError(f"bare capturing group at {i} in {rx!r}; use (?: or (?P<slot>")
        out.append(ch)
        i += 1
    return "".join(out), slots


def _literal_prefix(rx: str) -> list[str]:
    """The leading tokens of `rx` that match one fixed character each (for the trie)."""
    tokens, i = [], 0
    while i < len(rx):
        ch = rx[i]
        if ch == "\\":
            nxt = rx[i + 1:i + 2]
            if nxt == "x":
                tok = rx[i:i + 4]
            elif nxt and not nxt.isalnum():
                tok = rx[i:i + 2]
            else:
                break
        elif ch in ".^$*+?{}[]|()":
            break
        else:
            tok = ch
        after = rx[i + len(tok):i + len(tok) + 1]
        if after and after in "*+?{":
            break
        tokens.append(tok)
        i += len(tok)
    return tokens


def _trie(items: list[tuple[list[str], str]]) -> str:
    """Alternation of (literal tokens, rest) items, factored on common literal starts.

    Items keep their relative order. An item without a literal start may overlap any other,
    so it is a barrier: only runs of literal-led items are regrouped.
    """
    parts: list[str] = []
    run: list[tuple[list[str], str]] = []

    def flush() -> None:
        groups: dict[str, list[tuple[list[str], str]]] = {}
        for tokens, rest in run:
            groups.setdefault(tokens[0], []).append((tokens[1:], rest))
        for tok, members in groups.items():
            if len(members) == 1:
                parts.append(tok + "".join(members[0][0]) + members[0][1])
                continue
            common = 0                    # further literal tokens all members share
            while all(len(t) > common and t[common] == members[0][0][common]
                      for t, _ in members):
                common += 1
            shared = "".join(members[0][0][:common])
            parts.append(tok + shared + "(?:" + _trie([(t[common:], r) for t, r in members])
                         + ")")
        run.clear()

    for tokens, rest in items:
        if tokens:
            run.append((tokens, rest))
        else:
            flush()
            parts.append(rest)
    flush()
    return "|".join(parts)


def _code_table(n: int, alphabet: str = string.digits + string.ascii_letters) -> str:
    """A string of n+1 characters whose n 2-character windows are all different."""
    k = len(alphabet)
    if n > k * k:
        raise ValueError(f"{n} alternatives; the code table holds at most {k * k}")
    seq: list[int] = []
    a = [0] * 3

    def db(t: int, p: int) -> None:     # de Bruijn sequence B(k, 2), Frank Ruskey's algorithm
        if t > 2:
            if 2 % p == 0:
                seq.extend(a[1:p + 1])
        else:
            a[t] = a[t - p]
            db(t + 1, p)
            for j in range(a[t - p] + 1, k):
                a[t] = j
                db(t + 1, t)

    db(1, 1)
    cyclic = seq + seq[:1]
    return "".join(alphabet[j] for j in cyclic[:n + 1])


@dataclass(frozen=True)
class Alternative:
    """One alternative: an id and a regex over the whole text, with `(?P<slot>` markers."""

    key: str
    regex: str
    prefix: bool = False    # may follow the shared optional prefix (message stage)


@dataclass
class Classifier:
    """Many alternatives -> which one matched and its slots, in at most two regex passes.

    The alternatives are cut into buckets of `bucket_size` (in order). Spark runs:

    1. `combined` on `text + suffix` (skipped when there is one bucket): every alternative of
       bucket *b* ends with `\\x00.{b}`, and the shared group after the alternation captures
       code *b* (window *b* of `table`);
    2. `buckets[b]` = (regex, replacement) with `regexp_replace` on the same `text + suffix`:
       alternative *j* of the bucket ends with `\\x00.{j}(..)`, so the replacement writes
       code *j*, then one segment per alternative of the bucket, each with that alternative's
       slots in `slots` order, all separated by SEP (then one more SEP and what is left of the
       code table, ignored); the slots of the alternative that matched are segment *j*
       (`slot_index`). Why not one field per slot holding every alternative's group for it
       (only the matched alternative's being non-empty): Java keeps what a group captured
       inside an atomic group `(?>...)` after backtracking out of it (Python does not), so an
       alternative that failed after its atomic part would leave its captures in the field.

    One regex per alternative would make Spark generate and compile a CASE of hundreds of
    regexes; one regex for all would make the replacement hundreds of `$n` long, parsed again
    on every row; buckets keep both small. Inside a bucket the alternatives keep their order,
    so the same one matches as in `combined`.

    Python: `match(text)` runs one equivalent pattern (same alternatives, order and trie, `\\Z`
    for the sentinel, an empty marker group ending each alternative); `match_two_step` does
    what Spark does, for the tests to compare.
    """

    alternatives: list[Alternative]
    slots: tuple[str, ...]
    prefix_regex: str = ""   # optional shared prefix, with its own slot markers
    bucket_size: int = 16
    table: str = field(init=False)
    suffix: str = field(init=False)
    combined: str | None = field(init=False)
    buckets: list[tuple[str, str]] = field(init=False)
    python: str = field(init=False)

    def __post_init__(self) -> None:
        n, size = len(self.alternatives), self.bucket_size
        n_buckets = (n + size - 1) // size
        self.table = _code_table(max(n_buckets, min(n, size)))
        self.suffix = "\x00" + self.table
        keep = set(self.slots)
        if self.prefix_regex and not all(a.prefix for a in self.alternatives):
            raise ValueError("with a shared prefix, every alternative must take it")
        prefix_plain = _convert(self.prefix_regex, set())[0] if self.prefix_regex else ""
        prefix_named = _convert(self.prefix_regex, keep, "p")[0] if self.prefix_regex else ""
        prefix_slots = _convert(self.prefix_regex, keep)[1] if self.prefix_regex else []
        items, py_items, named_items = [], [], []
        self._py_slots: list[list[tuple[str, str]]] = []
        for i, alt in enumerate(self.alternatives):
            plain = _convert(alt.regex, set())[0]
            tokens = _literal_prefix(plain)
            lead = len("".join(tokens))
            b, j = divmod(i, size)
            items.append((tokens, plain[lead:] + _END + (f".{{{b}}}" if b else "")))
            named, named_slots = _convert(alt.regex, keep, f"a{i}")
            py_items.append((tokens, named[lead:] + f"\\Z(?P<m{i}>)"))
            named_items.append((tokens, named[lead:] + _END + (f".{{{j}}}" if j else "")
                                + f"(?P<c{i}>..)"))
            self._py_slots.append([(f"p_{k}", s) for k, s in enumerate(prefix_slots)]
                                  + [(f"a{i}_{k}", s) for k, s in enumerate(named_slots)])
        head = f"(?:{prefix_plain})?" if prefix_plain else ""
        self.combined = f"(?s)^{head}(?:{_trie(items)})(..)" if n_buckets > 1 else None
        named_head = f"(?:{prefix_named})?" if prefix_named else ""
        self.buckets = []
        self._bucket_groups: list[list[tuple[int, ...]]] = []   # per bucket: code group per j
        for start in range(0, n, size):
            members = range(start, min(start + size, n))
            named = f"(?s)^{named_head}(?:{_trie([named_items[i] for i in members])})"
            index = re.compile(named).groupindex
            refs = ["".join(f"${index[f'c{i}']}" for i in members)]
            for i in members:                    # segment j: alternative j's own groups
                for slot in self.slots:
                    numbers = [index[name] for name, s in self._py_slots[i] if s == slot]
                    refs.append("".join(f"${k}" for k in numbers))
            self.buckets.append((re.sub(r"\(\?P<[a-z0-9_]+>", "(", named), SEP.join(refs) + SEP))
        self.python = f"(?s){named_head}(?:{_trie(py_items)})"

    @property
    def n_buckets(self) -> int:
        return len(self.buckets)

    def slot_index(self, j: int, slot: str) -> int:
        """Where `slot` of the bucket's alternative `j` is in a bucket replacement's fields."""
        return 1 + j * len(self.slots) + self.slots.index(slot)

    def code_index(self, code: str) -> int | None:
        """The window number of a 2-character code (what Spark gets with `position`)."""
        at = self.table.find(code) if len(code) == 2 else -1
        return at if at >= 0 else None

    @cached_property
    def _python(self) -> tuple[re.Pattern[str], dict[int, tuple[int, tuple[tuple[int, ...], ...]]]]:
        pattern = re.compile(self.python)
        index = pattern.groupindex
        by_marker = {}
        for i, pairs in enumerate(self._py_slots):
            per_slot = tuple(tuple(index[name] for name, s in pairs if s == slot)
                             for slot in self.slots)
            by_marker[index[f"m{i}"]] = (i, per_slot)
        return pattern, by_marker

    def match_values(self, text: str) -> tuple[int, list[str | None]] | None:
        """(alternative index, values in `slots` order, '' read as None), one regex match."""
        pattern, by_marker = self._python
        m = pattern.match(text)
        if m is None:
            return None
        i, per_slot = by_marker[m.lastindex]
        group = m.group
        values: list[str | None] = []
        for numbers in per_slot:
            if not numbers:
                values.append(None)
            elif len(numbers) == 1:
                values.append(group(numbers[0]) or None)
            else:
                values.append("".join(group(k) or "" for k in numbers) or None)
        return i, values

    def match(self, text: str) -> tuple[int, dict[str, str | None]] | None:
        """(alternative index, slot -> value or None) for `text`, or None; one regex match."""
        found = self.match_values(text)
        if found is None:
            return None
        return found[0], dict(zip(self.slots, found[1]))

    @cached_property
    def _compiled_spark(self) -> tuple[re.Pattern[str] | None, list[re.Pattern[str]]]:
        return (re.compile(self.combined) if self.combined else None,
                [re.compile(rx) for rx, _ in self.buckets])

    def match_two_step(self, text: str) -> tuple[int, dict[str, str | None]] | None:
        """The same answer by Spark's route: `combined`, then the bucket's regexp_replace."""
        combined, buckets = self._compiled_spark
        full = text + self.suffix
        if combined is None:
            b = 0
        else:
            m = combined.match(full)
            if m is None:
                return None
            b = self.code_index(m.group(1))
        g = buckets[b].match(full)
        if g is None:
            if combined is None:
                return None
            raise AssertionError(f"bucket {b} matched in the combined regex but not alone")
        out = re.sub(r"\$(\d+)", lambda r: g.group(int(r.group(1))) or "",
                     self.buckets[b][1]).split(SEP)
        j = self.code_index(out[0])
        return b * self.bucket_size + j, {s: out[self.slot_index(j, s)] or None
                                          for s in self.slots}


# -- stage 1: layouts ------------------------------------------------------------------------------

_D = r"(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2})"
_T = r"(?P<time>[0-9]{2}:[0-9]{2}:[0-9]{2})"
_F = r"(?P<frac>[0-9]{1,9})"
_TZ = r"(?P<tz>Z|[+-][0-9]{2}:?[0-9]{2})"
_LEVEL = r"(?P<level>TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL|CRITICAL|SEVERE|NOTICE)"
_JLOGGER = r"(?P<logger>[A-Za-z_$][A-Za-z0-9_$.\-]*)"
_PYLOGGER = r"(?P<logger>[A-Za-z_][A-Za-z0-9_.\-]*)"
_THREAD = r"\[(?P<thread>[^\]\x00]*)\]"
_MSG = r"(?P<msg>" + _ANY + "*)"
# Python module names, `a.b_c.d`: dotted lower-case identifiers. Not `x(?:\.x)*`: Java's
# regex engine recurses once per repetition of a group, so a line holding thousands of dots
# overflows its stack (StackOverflowError, a failed Spark task). One possessive run of the
# characters instead, a look-ahead refusing an empty segment or one starting with a digit,
# and a look-behind refusing a final dot: the same names, no recursion.
_DOTTED_LOWER = r"(?![a-z0-9_.]*?\.[0-9.])[a-z_][a-z0-9_.]*+(?<!\.)"
_RDK_THREAD = r"(?:\[thrd:(?P<thread>[^\]\x00]*)\]: )?"

# LOG4J's two ends (the Spark loader matches them apart: LOG4J_HEAD_RE, LOG4J_TAIL_RE)
_LOG4J_STAMP_LEVEL = r"\[" + _D + " " + _T + "[,.]" + _F + r"\] " + _LEVEL
_LOG4J_HEAD = _LOG4J_STAMP_LEVEL + " +"
_LOG4J_TAIL = _JLOGGER + r"(?::[0-9]+)?\)"
# The spaces after the level, then the message up to the " (" before the logger. Written
# plainly, ` +(?P<msg>.*) \(`, the run of spaces and the message's start can be cut many ways:
# on a line whose spaces run long and which has no " (logger)" at its end, the engine tries
# each cut and rescans the rest of the line each time (time quadratic in the line). Here the
# spaces are taken whole at once (`(?> +)`): the message starts after them; the one match that
# needs one of them back, an empty message (`INFO  (logger)`: the last space is the one
# before "("), is its own branch. Same matches, same fields, linear time.
_SPACES_MSG_PAREN = r"(?> +)(?:" + _MSG + r" \(|(?<=  )(?P<msg>)\()"


@dataclass(frozen=True)
class Layout:
    id: str
    regex: str
    doc: str
    logger_prefix: str = ""    # prepended to the captured logger (librdkafka facility)


LAYOUTS: tuple[Layout, ...] = (
    Layout("LOG4J", _LOG4J_STAMP_LEVEL + _SPACES_MSG_PAREN + _LOG4J_TAIL,
           "Kafka's log4j/log4j2 default `[%d] %p %m (%c)%n` (also Connect's `(%c:%L)`)"),
    # The first line of AbstractConfig.logAll's multi-line block (`KafkaConfig values: `,
    # `ConsumerConfig values: `): the message runs on over tab-indented lines and the logger
    # comes after the last one, so this line alone has none (a record without a logger: other;
    # the lines under it are its continuation). Seen in Kafka 4.0.2's server.log.
    Layout("LOG4J-CONFIG", _LOG4J_STAMP_LEVEL + r" (?P<msg>[A-Z][A-Za-z0-9]*Config values: ?)",
           "the head of Kafka's `[%d] %p %m (%c)%n` config block `<Name>Config values: ` "
           "(AbstractConfig.logAll; its logger ends the block)"),
    Layout("PY-BRACKET", r"\[" + _D + " " + _T + "[,.]" + _F + r"\] \[" + _LEVEL + r"\] "
           + _THREAD + " " + _MSG, "Python `[%(asctime)s] [%(levelname)s] [%(threadName)s] "
           "%(message)s`"),
    Layout("LOG4J-THREAD", _D + " " + _T + "[,.]" + _F + " +" + _LEVEL + _SPACES_MSG_PAREN
           + _JLOGGER + r"(?::[0-9]+)?\) " + _THREAD,
           "Strimzi/Confluent `%d %p %m (%c) [%t]%n`"),
    Layout("SPRINGBOOT", _D + "[ T]" + _T + "[.,]" + _F + "(?:" + _TZ + ")? +" + _LEVEL
           + r" +[0-9]+ --- (?:\[[^\]\x00]*\] )?\[ *+(?P<thread>[^\]\x00]*?)\] +" + _JLOGGER
           + " +: " + _MSG, "Spring Boot console `%d %5p PID --- [app] [thread] logger : msg`"),
    Layout("LOGBACK", _D + " " + _T + "[.,]" + _F + " +" + _LEVEL + " +" + _THREAD + " +"
           + _JLOGGER + " +- (?:null - )?" + _MSG,
           "logback `%d %-5level [%thread] %logger{36} - %msg%n`"),
    Layout("LOGBACK-DEFAULT", "(?:" + _D + " )?" + _T + "[.,]" + _F + " " + _THREAD + " +"
           + _LEVEL + " +" + _JLOGGER + " +- " + _MSG,
           "logback's documented default `%d{HH:mm:ss.SSS} [%thread] %-5level %logger{36} - "
           "%msg%n` (no date: ts is NULL)"),
    Layout("PY-DASHED", _D + " " + _T + "," + _F + " - " + _PYLOGGER + " - " + _LEVEL + " - "
           + _MSG, "Python `%(asctime)s - %(name)s - %(levelname)s - %(message)s`"),
    Layout("PY-COLON", _D + " " + _T + "[.,]" + _F + ":" + _PYLOGGER + r":(?P<thread>[^:\x00]*):"
           + _LEVEL + ":[0-9]+:" + _MSG,
           "Python `%(asctime)s:%(name)s:%(threadName)s:%(levelname)s:%(process)d:%(message)s`"),
    Layout("PY-ASCTIME", _D + " " + _T + "," + _F + " +" + _LEVEL
           + r" +(?P<logger>" + _DOTTED_LOWER + r")(?::| -)? " + _MSG,
           "Python `%(asctime)s %(levelname)s %(name)s %(message)s` (lower-case module names)"),
    # -- more Python logging formats (logging.Formatter strings met in public programs) --
    Layout("PY-BRACKET-NAME", r"\[" + _D + " " + _T + "[,.]" + _F + r"\] " + _LEVEL + r" \["
           + _PYLOGGER + r"\] " + _MSG,
           "Python `[%(asctime)s] %(levelname)s [%(name)s] %(message)s`"),
    Layout("PY-LEVEL-BRACKET", _D + " " + _T + "[,.]" + _F + r" \[" + _LEVEL + r"\] "
           + _PYLOGGER + ": " + _MSG,
           "Python `%(asctime)s [%(levelname)s] %(name)s: %(message)s`"),
    Layout("PY-NAME-LEVEL", _D + " " + _T + "," + _F + " " + _PYLOGGER + " +" + _LEVEL
           + " +" + _MSG,
           "Python `%(asctime)s %(name)-12s %(levelname)-8s %(message)s` (the logging "
           "cookbook's file format, with the default date format)"),
    Layout("LOG4J-CLASSLINE", _D + " " + _T + " +" + _LEVEL + " +" + _JLOGGER + ":[0-9]+ - "
           + _MSG, "log4j `%d{yyyy-MM-dd HH:mm:ss} %-5p %c{1}:%L - %m%n`"),
    Layout("LOG4J-SHORT", _D + " " + _T + " +" + _LEVEL + " +" + _JLOGGER + " - " + _MSG,
           "log4j `%d{yyyy-MM-dd HH:mm:ss} %p %c - %m%n`"),
    Layout("SLF4J-SIMPLE", _THREAD + " " + _LEVEL + " " + _JLOGGER + " - " + _MSG,
           "slf4j-simple's default `[thread] LEVEL logger - msg` (SimpleLogger: no date, thread "
           "and log name shown; ts is NULL)"),
    Layout("PY-BASIC", _LEVEL + ":" + _PYLOGGER + ":" + _MSG,
           "Python `logging.basicConfig()` default `%(levelname)s:%(name)s:%(message)s` (no time)"),
    Layout("GO-STD", r"(?P<date>[0-9]{4}/[0-9]{2}/[0-9]{2}) " + _T + r"(?:\." + _F + ")? " + _MSG,
           "Go's standard `log` package, `log.LstdFlags` (`2009/11/10 23:00:00 msg`, with "
           "`Lmicroseconds` a `.123456` fraction): kafka-go's reader logs through a `log.Logger`"
           " (no level, no logger: its unknown lines are other)"),
    Layout("RDK-STDERR", r"%(?P<level>[0-7])\|(?P<epoch>[0-9]+(?:\.[0-9]+)?)\|"
           r"(?P<logger>[A-Z0-9_]+)\|[^|\x00]*\| " + _RDK_THREAD + _MSG,
           "librdkafka's default log_cb `%7|<sec.usec>|FAC|<handle>| [thrd:..]: msg`",
           "rdkafka."),
    Layout("RDK-PIPE", r"(?P<level>[0-7])\|" + _D + " " + _T + r"\." + _F
           + r"\|[^|\x00]*\|(?P<logger>[A-Z0-9_]+)\| +" + _RDK_THREAD + _MSG,
           "librdkafka `7|yyyy-mm-dd hh:mm:ss.mmm|<handle>|FAC| msg`", "rdkafka."),
    Layout("DOTNET-RDK", r"(?P<level>Emergency|Alert|Critical|Error|Warning|Notice|Info|Debug)"
           r"\|" + _D + " " + _T + r"\." + _F + r"\|[^|\x00]*\|(?P<logger>[A-Z0-9_]+)\| "
           + _RDK_THREAD + _MSG,
           "Confluent.Kafka's (.NET) `Loggers.ConsoleLogger`, librdkafka's log through "
           "`SetLogHandler`: `{Level}|{yyyy-MM-dd HH:mm:ss.fff}|{Name}|{Facility}| {Message}`, "
           "the level a `SyslogLevel` name (confluent-kafka-dotnet src/Confluent.Kafka/"
           "Loggers.cs)", "rdkafka."),
    Layout("RDK-SYSLOG", r"(?P<epoch>[0-9]+(?:\.[0-9]+)?) RDKAFKA-(?P<level>[0-7])-"
           r"(?P<logger>[A-Z0-9_]+): [^:\x00]*: " + _RDK_THREAD + _MSG,
           "librdkafka syslog `<sec.usec> RDKAFKA-<lvl>-<FAC>: <handle>: [thrd:..]: msg`",
           "rdkafka."),
    # -- records of two physical lines, joined by logs.joins (never a single line: the "\n") --
    Layout("JUL", r"(?P<date>(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [0-9]{2}, "
           r"[0-9]{4}) (?P<time>[0-9]{1,2}:[0-9]{2}:[0-9]{2} [AP]M) " + _JLOGGER
           + r"(?: [^ \n\x00]+)?\n(?P<level>SEVERE|WARNING|INFO|CONFIG|FINE|FINER|FINEST): "
           + _MSG, "java.util.logging's SimpleFormatter default, two lines: `Nov 25, 2026 "
           "10:00:00 AM <class> <method>` then `INFO: <message>` (logs.joins JUL)"),
    Layout("DOTNET-CONSOLE", "(?:" + _D + "[ T]" + _T + "(?:[.,]" + _F + ")? )?"
           r"(?P<level>trce|dbug|info|warn|fail|crit): (?P<logger>[^ \[\x00]+)\[-?[0-9]+\]"
           r"\n      " + _MSG, ".NET's Microsoft.Extensions.Logging console, two lines: "
           "`info: <category>[<event id>]` then the message indented by 6 spaces "
           "(logs.joins DOTNET-CONSOLE)"),
    Layout("KIBANA", r"(?P<date>(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [0-9]{1,2}, "
           r"[0-9]{4}) @ " + _T + r"\.(?P<frac>[0-9]{3})\n" + _MSG,
           "a Kibana Discover copy, two lines: the display time `Nov 25, 2026 @ "
           "10:00:00.123`, then the message (logs.joins KIBANA)"),
)
LAYOUT_IDS: tuple[str, ...] = tuple(lay.id for lay in LAYOUTS) + ("JSON", "MESSAGE", "CSV")
# LOG4J (the first layout, and the kit's own) cut in two for the Spark loader's fast path:
# the head up to the message (date, time, frac, level; the run of spaces after the level) and
# the tail after the message's last " (" (logger, optional `:line`, `)`). A line matches LOG4J
# exactly when its first 64 characters match the head (with at least one character left
# after it), the text after its last " (" matches the tail, and that " (" starts after the
# head: the message is what lies between (see spark.load). Built from LOG4J's own pieces.
LOG4J_HEAD_RE = "^" + _convert(_LOG4J_HEAD, {"date", "time", "frac", "level"})[0]
LOG4J_TAIL_RE = "^" + _convert(_LOG4J_TAIL, {"logger"})[0] + "\\z"
LAYOUT_SLOTS = ("date", "time", "frac", "tz", "epoch", "level", "logger", "thread", "msg")
# One bucket for every layout: the Spark loader's layout stage is one regexp_replace.
LAYOUT_CLASSIFIER = Classifier([Alternative(lay.id, lay.regex) for lay in LAYOUTS], LAYOUT_SLOTS,
                               bucket_size=32)
if LAYOUT_CLASSIFIER.n_buckets != 1:
    raise ValueError(f"{len(LAYOUTS)} layouts: the Spark loader's layout stage takes one bucket "
                     "(32 layouts); raise LAYOUT_CLASSIFIER's bucket_size")
# JSON lines: the first key present wins. The key maps of the encoders met in practice
# (`JSON_KEY_MAPS`: who writes which key for which field) merged in that order, so a line of
# any of them is read; a key two encoders use for different fields (none today) would be a
# conflict `_json_keys` refuses.
JSON_KEY_MAPS: dict[str, dict[str, tuple[str, ...]]] = {
    # logstash-logback-encoder's LogstashEncoder (its documented standard fields)
    "logstash-logback": {"ts": ("@timestamp",), "level": ("level",),
                         "logger": ("logger_name",), "thread": ("thread_name",),
                         "msg": ("message",)},
    # Elastic Common Schema (ecs-logging-java, ecs-logging-python), dotted keys as written
    "ecs": {"ts": ("@timestamp",), "level": ("log.level",), "logger": ("log.logger",),
            "thread": ("process.thread.name",), "msg": ("message",)},
    # kafkajs' default logCreator (src/loggers/console.js): JSON.stringify of {level: label,
    # timestamp, logger: 'kafkajs', message: '[Namespace] message', ...extra}; its extras name
    # the group and the member (groupId, memberId: src/consumer/consumerGroup.js, runner.js)
    "kafkajs": {"ts": ("timestamp",), "level": ("level",), "logger": ("logger",),
                "msg": ("message",), "group": ("groupId",), "member": ("memberId",)},
    # python-json-logger (its default fields are LogRecord attribute names)
    "python-json-logger": {"ts": ("asctime", "timestamp"), "level": ("levelname",),
                           "logger": ("name",), "thread": ("threadName",),
                           "msg": ("message",)},
    # pino (time in epoch milliseconds, numeric levels 10-60, msg)
    "pino": {"ts": ("time",), "level": ("level",), "logger": ("name",), "msg": ("msg",)},
    # node-rdkafka's `event.log` objects ({severity, fac, message}: Blizzard/node-rdkafka
    # src/callbacks.cc, EVENT_LOG) written with JSON.stringify: librdkafka's syslog level,
    # facility and message
    "node-rdkafka": {"level": ("severity",), "logger": ("fac",), "msg": ("message",)},
    # other common shapes: `ts` (zap, structlog), `severity` (Google Cloud Logging: the key
    # node-rdkafka's map names),
    # `thread`, `group_id`/`member_id` (snake-case clients)
    "other": {"ts": ("ts", "time"), "logger": ("logger",),
              "thread": ("thread",), "group": ("group_id",), "member": ("member_id",)},
}


def _json_keys(maps: dict[str, dict[str, tuple[str, ...]]]) -> dict[str, tuple[str, ...]]:
    """field -> keys, in the order the key maps name them; a key naming two fields is an
    error (the line could not say which it meant)."""
    out: dict[str, list[str]] = {}
    owner: dict[str, str] = {}
    for encoder, fields in maps.items():
        for name, keys in fields.items():
            for key in keys:
                if owner.setdefault(key, name) != name:
                    raise ValueError(f"JSON key {key!r} of {encoder} names {name}, another "
                                     f"encoder's {owner[key]}")
                out.setdefault(name, [])
                if key not in out[name]:
                    out[name].append(key)
    return {name: tuple(keys) for name, keys in out.items()}


JSON_KEYS: dict[str, tuple[str, ...]] = _json_keys(JSON_KEY_MAPS)

# -- stage 2: messages -----------------------------------------------------------------------------

_NUM = "-?[0-9]+"
_GENERATION = (
    r"(?:Generation\{generationId=(?P<generation>-?[0-9]+), memberId='(?P<member>[^'\x00]*)', "
    r"protocol='[^'\x00]*'\}"
    r"|<Generation (?P<generation>-?[0-9]+) \(member_id: (?P<member>[^,\x00]*), "
    r"protocol: [^)\x00]*\)>"
    r"|(?P<generation>-?[0-9]+))")
_EPOCH = (r"(?:OptionalInt\[(?P<epoch>-?[0-9]+)\]|Some\((?P<epoch>-?[0-9]+)\)"
          r"|(?P<epoch>-?[0-9]+)|OptionalInt\.empty|Optional\.empty|None)")
_GENERIC = "(?P<{slot}>" + _ANY + "*?)"
_REASON = "(?P<reason>" + _ANY + "*)"

# placeholder -> regex with (?P<slot> markers. Missing names get the lazy generic regex.
PLACEHOLDER_REGEX: dict[str, str] = {
    "group": "(?P<group>" + _ANY + "+?)",
    "member": r"(?P<member>[^ \x00]+)",
    "member_id": "(?P<member>" + _ANY + "*?)",
    "member_info": r"(?P<member><no ID>|[^ \x00]+)",
    "member_metadata": r"MemberMetadata\(memberId=(?P<member>[^, \x00]+),[^\x00]*?\)",
    "generation": _GENERATION,
    "state": r"(?P<state>[A-Za-z_\-]+)",
    "new_state": r"(?P<state>[A-Za-z_\-]+)",
    "to_state": r"(?P<state>[A-Za-z_\-]+)",
    "reason": _REASON,
    "cause": _REASON,
    "error": _REASON,
    "exception": _REASON,
    "message": _REASON,
    "partition": f"(?P<partition>{_NUM})",
    "tp": r"[^ \x00]*-(?P<partition>[0-9]+)",
    "epoch": _EPOCH,
    "duration_ms": f"(?P<duration_ms>{_NUM})",
    "ms": f"(?P<duration_ms>{_NUM})",
    "static": _NUM,
    "records": _NUM,
    "bytes": _NUM,
    "scheduler_ms": _NUM,
    "delay_ms": _NUM,
}
MESSAGE_SLOTS = ("group", "member", "generation", "state", "reason", "partition", "epoch",
                 "duration_ms", "p_group", "p_partition")
_COLUMN_RANK = {name: rank for rank, name in enumerate(PLACEHOLDER_COLUMNS)}


# A negated class that does not exclude the space: a placeholder holding one can hold any text.
_LOOSE = re.compile(r"\[\^(?:\\.|[^\] ])*\]")


def template_regex(tid: str, text: str) -> str:
    """A template's text as a regex with `(?P<column>` markers, one kept marker per column.

    For each column the placeholder named first in `PLACEHOLDER_COLUMNS` keeps its group
    (e.g. {reason} before {error}); a column a placeholder only carries inside (the member of
    `Generation{...}`) comes last. The other markers are renamed so they are not captured.
    """
    pieces = list(string.Formatter().parse(text))
    owner: dict[str, tuple[int, int]] = {}         # column -> (rank, occurrence)
    for occ, (_, name, _, _) in enumerate(pieces):
        if not name:
            continue
        column = TEMPLATE_OVERRIDES[(tid, name)] if (tid, name) in TEMPLATE_OVERRIDES \
            else PLACEHOLDER_COLUMNS.get(name)
        if column is None and (tid, name) in TEMPLATE_OVERRIDES:
            continue                                 # this placeholder fills no column
        rx = PLACEHOLDER_REGEX.get(name, _GENERIC.format(slot="x_" + name))
        for slot in set(_MARKER.findall(rx)):
            rank = _COLUMN_RANK.get(name, 500) if slot == column else 1000
            if slot not in owner or (rank, occ) < owner[slot]:
                owner[slot] = (rank, occ)
    # Cutting a message into placeholders must not backtrack without end. A placeholder that
    # can hold spaces and punctuation (a "loose" one: a group id, a reason, `{generation}`) can
    # end in many places; with two or more of them in a template, a message that holds the
    # template's separators many times but does not match makes a backtracking engine (Java's
    # and Python's both) try every way of cutting it: time grows as the length to the power of
    # the loose placeholders (an 11 KB line took minutes). So each loose placeholder but the
    # last is matched together with what follows it up to the next loose one (fixed text and
    # space-free placeholders: `{state}`, `{member}`, numbers) in one atomic group: the engine
    # takes the first end for which that stretch matches (the first for a lazy placeholder,
    # the last for a greedy one) and never comes back to try another. Each stretch is then
    # tried once: time linear in the message. What it gives up: a message whose loose value
    # holds the whole stretch after it ("group {group} in {state} state. Created a new member
    # id" with a group id containing " in Stable state. Created a new member id ") no longer
    # matches. The last loose placeholder runs to the end of the message and needs no group.
    named = [occ for occ, piece in enumerate(pieces) if piece[1] is not None]
    loose = [occ for occ in named if _LOOSE.search(
        PLACEHOLDER_REGEX.get(pieces[occ][1], _GENERIC))]
    opens, closes = set(), set()
    start = None
    for occ, nxt in zip(loose, loose[1:]):
        start = occ if start is None else start
        if any(pieces[k][0] for k in range(occ + 1, nxt + 1)):   # fixed text to end on
            opens.add(start)
            closes.add(nxt)
            start = None
    out = []
    for occ, (literal, name, spec, conv) in enumerate(pieces):
        out.append(regex_escape(literal))
        if occ in closes:
            out.append(")")
        if name is None:
            continue
        if not name or spec or conv:
            raise ValueError(f"template {tid}: placeholder {{{name}}} must be a plain name")
        rx = PLACEHOLDER_REGEX.get(name, _GENERIC.format(slot="x_" + name))
        if occ in opens:
            out.append("(?>")
        out.append(_MARKER.sub(lambda m: m.group(0) if owner.get(m.group(1), (0, -1))[1] == occ
                               else "(?P<x_>", rx))
    return "".join(out)


def _prefix_regex(text: str) -> str:
    names = {"broker": "[0-9]+", "topic": r"[^ \x00\]]+",
             "partition": "(?P<p_partition>[0-9]+)", "client": r"[^,\x00]*",
             "group": r"(?P<p_group>[^\]\x00]*)", "tp": r"[^ \x00]+",
             "thread": r"[^\]\x00]+", "instance": r"[^,\x00]*", "facility": "[A-Z0-9_]+",
             "handle": r"[^\]\x00]*", "dir": r"[^\]\x00]+", "id": "[0-9]+",
             "consumer": r"[^\]\x00]+", "rdbroker": r"[^ \x00/]+/[A-Za-z0-9_]+",
             "rdkname": r"[^ :\]\x00]+"}
    out = []
    for literal, name, _, _ in string.Formatter().parse(text):
        out.append(regex_escape(literal))
        if name:
            out.append(names[name])
    return "".join(out)


# LogContext prefixes: the catalogue's (new ones are picked up) and older/foreign ones.
FOREIGN_PREFIXES = (
    "[GroupCoordinator {broker}]: ",                           # classic, 0.9-3.9
    "[GroupMetadataManager brokerId={broker}] ",               # 0.11-3.9
    "[Group Metadata Manager on Broker {broker}]: ",           # <= 0.10
    "[Consumer instanceId={instance}, clientId={client}, groupId={group}] ",   # static member
    # confluent-kafka-python logger=, a line about one broker connection (librdkafka 2.x
    # rd_rkb_dbg: `<host:port>/<id or bootstrap>: ` or `GroupCoordinator/<id>: `)
    "{facility} [{handle}] [thrd:{thread}]: {rdbroker}: ",
    "{facility} [{handle}] [thrd:{thread}]: ",                 # confluent-kafka-python logger=
    "[thrd:{thread}]: ",                                       # librdkafka in another layout
    "[Worker clientId={client}, groupId={group}] ",            # Kafka Connect's workers
    # Confluent.Kafka's LogMessage forwarded to a .NET ILogger as `[{Facility}] {Name}:
    # {Message}` (a common LoggerMessage template in .NET hosts), librdkafka's message after it
    "[{facility}] {rdkname}: [thrd:{thread}]: ",
    "[{facility}] {rdkname}: ",
)
PREFIXES: tuple[str, ...] = tuple(dict.fromkeys(
    [p for p in CATALOGUE_PREFIXES.values() if p] + list(FOREIGN_PREFIXES)))


@dataclass(frozen=True)
class MessageEntry:
    """One message alternative: a catalogue template or a foreign wording."""

    id: str
    event: str | None       # None: a known wording that is not an event (counted as other)
    source: str
    text: str
    versions: str = ""
    origin: str = "kit"


def message_entries(templates: Iterable[LogTemplate] | None = None,
                    wordings: Iterable[Wording] = WORDINGS) -> list[MessageEntry]:
    """Catalogue templates, then foreign wordings, without duplicate wordings, in priority
    order. `templates` defaults to the catalogue as it is now (new entries included)."""
    entries: list[MessageEntry] = []
    for t in (TEMPLATES.values() if templates is None else templates):
        entries.append(MessageEntry(t.id, t.event, t.source, t.text))
    for w in wordings:
        entries.append(MessageEntry(w.id, w.event, w.source, w.text, w.versions, w.origin))
    seen: dict[str, str] = {}
    out = []
    for e in entries:
        plain = _convert(template_regex(e.id, e.text), set())[0]
        if plain in seen:        # the same wording twice (a foreign one equal to the kit's)
            continue
        seen[plain] = e.id
        out.append(e)

    # Priority when two wordings match one line: the one with more fixed text wins (it is the
    # more specific: "joined group {g} with generation {n}" before "joined group {g} {n}").
    # Alternatives that start with a placeholder go last (see _trie). Stable otherwise.
    def literal_chars(e: MessageEntry) -> int:
        return sum(len(lit) for lit, _, _, _ in string.Formatter().parse(e.text))

    out.sort(key=lambda e: (not _literal_prefix(_convert(template_regex(e.id, e.text),
                                                         set())[0]), -literal_chars(e)))
    return out


def message_classifier(entries: Iterable[MessageEntry]) -> Classifier:
    return Classifier([Alternative(e.id, template_regex(e.id, e.text), prefix=True)
                       for e in entries], MESSAGE_SLOTS,
                      prefix_regex="(?:" + "|".join(_prefix_regex(p) for p in PREFIXES) + ")")


MESSAGE_ENTRIES: tuple[MessageEntry, ...] = tuple(message_entries())
MESSAGE_CLASSIFIER = message_classifier(MESSAGE_ENTRIES)

# A line that is only a message, with no layout around it (a message copied out of a log
# viewer or a chat: `Member consumer-1-... in group g has failed, removing it from the group`)
# is read as an event of layout BARE_LAYOUT with no time (ts NULL, kept in file and line
# order), when the whole line is a wording of the catalogue or WORDINGS. Only wordings with
# at least BARE_MIN_FIXED characters of fixed text count: shorter ones ("Rebalance started",
# "Transition from {a} to {b}.") are common in other programs' output, and with no logger to
# say which program wrote the line they would turn other text into events.
BARE_LAYOUT = "MESSAGE"
BARE_MIN_FIXED = 24
BARE_OK: tuple[bool, ...] = tuple(
    sum(len(lit) for lit, _, _, _ in string.Formatter().parse(e.text)) >= BARE_MIN_FIXED
    for e in MESSAGE_ENTRIES)

EVENT_NAMES: tuple[str, ...] = tuple(sorted({t.event for t in TEMPLATES.values()}
                                            | set(EXTRA_EVENTS)))

# -- line classes, loggers, levels -----------------------------------------------------------------

# The end of the text, the same in both engines. Not `$`: Java's `$` also matches before a
# final U+0085, U+2028 or U+2029 (line terminators to Java), Python's only before a final
# "\n", so "  \u2028" was a blank line to Spark and a continuation line to Python.
END = "(?!(?s:.))"
# Undecodable: control characters other than TAB, or U+FFFD (already replaced bytes).
CONTROL_RE = "[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f\\ufffd]"
# Empty or blank: counted as other known lines.
BLANK_RE = "^[ \\t]*" + END
# Continues the record above: indented lines (stack frames, KIP-848 reconciliation blocks,
# librdkafka partition lists), `Caused by:`, `... N more`, a Java exception's first line, and
# the head of a Python traceback (`logger.exception`, e.g. kafka-python 3.0's coordinator).
# The exception's class name is dotted identifiers (`a.b.FooException`), written without a
# repeated group (see _DOTTED_LOWER): a look-ahead refuses a segment that starts with a digit
# or is empty, one run of the characters takes the rest.
CONTINUATION_RE = ("^(?:[ \\t]|Caused by: |Suppressed: |\\.\\.\\. [0-9]+ (?:more|common frames)"
                   "|Traceback \\(most recent call last\\):"
                   "|(?![A-Za-z0-9_$.]*?\\.[0-9.])[A-Za-z_$][A-Za-z0-9_$]*\\.[A-Za-z0-9_$.]*"
                   "[A-Za-z0-9_$](?:Exception|Error|Throwable)(?::|" + END + "))")
# Starts like a record (a time stamp, a librdkafka level, a Python level, a JSON object): a line
# that does so but matches no layout was cut short.
HEAD_RE = ("^(?:\\[?[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}|%?[0-7]\\||[0-9]{9,}(?:\\.[0-9]+)? "
           "RDKAFKA|(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL|CRITICAL):|\\{)")
# Loggers whose lines are all expected to be coordinator events: an unknown message from one
# of them is quarantined ("unknown message"), from any other logger it is "other".
COORDINATION_LOGGER_RE = (
    "(?:^|\\.)(?:GroupCoordinator|GroupCoordinatorShard|GroupCoordinatorService"
    "|GroupMetadataManager|OffsetMetadataManager|ClassicGroup|CoordinatorRuntime"
    "|CoordinatorLoaderImpl|AbstractCoordinator|ConsumerCoordinator"
    "|ConsumerRebalanceListenerInvoker|ConsumerMembershipManager|MembershipManagerImpl"
    "|AbstractMembershipManager|CoordinatorRequestManager)(?:\\$[A-Za-z0-9_$]+)?" + END +
    "|^kafka\\.coordinator(?:\\.base|\\.consumer|\\.heartbeat)?" + END +
    "|^rdkafka\\.(?:CGRP[A-Z]*|JOIN|JOINGROUP|SYNCGROUP|HEARTBEAT|MEMBERID|ASSIGN|ASSIGNMENT"
    "|GRPASSIGNMENT|REBALANCE|REJOIN)" + END)
# A client's logger (for lines that matched no template: source is otherwise "broker").
CLIENT_LOGGER_RE = ("^(?:org\\.apache\\.kafka\\.clients\\.|o\\.a\\.k\\.c(?:lients)?\\.c(?:onsumer)?\\."
                    "|o\\.a\\.k\\.clients\\.|kafka\\.(?:coordinator|consumer|conn|client|cluster"
                    "|producer)(?:\\.|" + END + ")|rdkafka\\.)")
CLIENT_LAYOUTS = ("PY-BRACKET", "PY-DASHED", "PY-COLON", "PY-ASCTIME", "PY-BASIC", "GO-STD",
                  "PY-BRACKET-NAME", "PY-LEVEL-BRACKET", "PY-NAME-LEVEL", "DOTNET-RDK",
                  "DOTNET-CONSOLE",
                  "SLF4J-SIMPLE",
                  "RDK-STDERR",
                  "RDK-PIPE", "RDK-SYSLOG", "LOGBACK", "LOGBACK-DEFAULT", "SPRINGBOOT")

LEVEL_ALIASES: dict[str, str] = {
    "WARNING": "WARN", "CRITICAL": "FATAL", "SEVERE": "ERROR", "NOTICE": "INFO",
    "FINE": "DEBUG", "FINER": "TRACE", "FINEST": "TRACE", "ERR": "ERROR", "CRIT": "FATAL",
    "0": "FATAL", "1": "FATAL", "2": "FATAL", "3": "ERROR", "4": "WARN", "5": "INFO",
    "6": "INFO", "7": "DEBUG",
    "10": "DEBUG", "20": "INFO", "30": "INFO", "40": "WARN", "50": "ERROR", "60": "FATAL",
    # syslog names (Confluent.Kafka's SyslogLevel), .NET's console abbreviations
    # (Microsoft.Extensions.Logging's SimpleConsoleFormatter: trce dbug info warn fail crit)
    "EMERGENCY": "FATAL", "ALERT": "FATAL", "TRCE": "TRACE", "DBUG": "DEBUG", "FAIL": "ERROR",
    "CONFIG": "DEBUG",      # java.util.logging's CONFIG lies between INFO and FINE
}
# Numeric levels that mean something else for one logger: kafkajs' `logLevel` numbers
# (tulios/kafkajs src/loggers/index.js: NOTHING 0, ERROR 1, WARN 2, INFO 4, DEBUG 5), which a
# custom logCreator writes as `level` next to kafkajs' own `logger: 'kafkajs'`; to syslog
# (LEVEL_ALIASES) 1 and 2 would be FATAL, 4 WARN, 5 INFO.
LOGGER_LEVELS: dict[str, dict[str, str]] = {
    "kafkajs": {"1": "ERROR", "2": "WARN", "4": "INFO", "5": "DEBUG"},
}

_COORD = re.compile(COORDINATION_LOGGER_RE)
_CLIENT = re.compile(CLIENT_LOGGER_RE)


def is_coordination_logger(logger: str | None) -> bool:
    return bool(logger) and _COORD.search(logger) is not None


def source_of(logger: str | None, layout: str | None) -> str:
    """broker/client for a line that matched no template (a template knows its own source)."""
    if layout in CLIENT_LAYOUTS or (logger and _CLIENT.search(logger)):
        return "client"
    return "broker"


def normalise_level(level: str | None, logger: str | None = None) -> str | None:
    if not level:
        return None
    if logger in LOGGER_LEVELS:
        own = LOGGER_LEVELS[logger].get(level)
        if own is not None:
            return own
    up = level.upper()
    return LEVEL_ALIASES.get(up, up)


def _check() -> None:
    known = set(EVENT_NAMES)
    for e in MESSAGE_ENTRIES:
        if e.event is not None and e.event not in known:
            raise ValueError(f"wording {e.id} names event {e.event!r}, which is neither in the "
                             "catalogue nor in fields.EXTRA_EVENTS")


_check()
_ = (LogTemplate, Wording)   # re-exported types for readers of this module
