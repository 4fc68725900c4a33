"""Records a program or a tool spread over several physical lines, joined back into one.

Some shapes put one record on two or more lines: a line the container runtime cut (CRI's
partial `P` entries), a long line a k9s pane wrapped at its width, java.util.logging's default
two-line format, .NET's console logger with the message on an indented second line, a Kibana
copy with the display time on a line of its own. One table, `JOINS`: each row a head (a line
that expects a next piece) and a tail (what the next piece looks like), both linear-time
regexes in the common subset of Java's and Python's syntax, a separator, and where the shape
is documented.

The rule, the same in both engines (the Python parser in `logs.parse.parse_lines`, Spark in
`spark.load`):

* line *i* is **linked** to line *i-1* of the same file when line *i-1* matches a row's head
  and line *i* that row's tail, with the same key (group 1 of both: the CRI stream, stdout or
  stderr; empty for the other rows). Heads are tried in table order; the first that matches
  is the line's head. A line may be a tail and a head at once (a CRI `P` line after a `P`
  line), so links chain;
* a chain of linked lines is cut into records of at most `MAX_JOIN_LINES` lines (lines 0 to
  7 of the chain, 8 to 15, ...): that bounds how far a join reaches, whatever the input;
* a record of one line is classified as before; a record of several lines is classified as
  one text: the pieces' texts (each without its tool's prefix, `logs.wrappers`) joined with
  the row's separator; its `raw` is the physical lines joined with `\\n`, its `line` the first
  one's. The other lines count as other (and as continuation: attached to the record above).

Heads and tails are tested on the line as read (`on="line"`, for the CRI tag, which the
prefix holds, and the k9s border) or on its text once the tool's prefix is stripped
(`on="text"`): a java.util.logging record inside a CRI log joins like one outside.

What a join cannot know: a k9s row whose text happens to end just at the pane's border is
joined with the next row when that row does not start like a record; a JUL or .NET head whose
next line is not its message line stays alone (and is quarantined, as before).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from .patterns import END
from .wrappers import K9S_BORDER

__all__ = ["Join", "JOINS", "MAX_JOIN_LINES", "HEADS_RE", "ALONE_OTHER_RE", "MONTHS", "JUL_LEVELS",
           "DOTNET_LEVELS"]

# A record spans at most this many physical lines. CRI runtimes cut lines at 16 KiB
# (containerd's and CRI-O's default), so 8 pieces hold a 128 KiB line; a pane wraps a
# 2,000-character line into fewer than 8 rows of 250.
MAX_JOIN_LINES = 8

MONTHS = "JanFebMarAprMayJunJulAugSepOctNovDec"
_MON = "(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_RFC3339 = ("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\\.[0-9]{1,9})?"
            "(?:Z|[+-][0-9]{2}:[0-9]{2})")
# java.util.logging's Level names (English) and .NET's console abbreviations
JUL_LEVELS = "(?:SEVERE|WARNING|INFO|CONFIG|FINE|FINER|FINEST)"
DOTNET_LEVELS = "(?:trce|dbug|info|warn|fail|crit)"
# what starts a record of a dated layout, or a level (patterns.HEAD_RE's first alternatives):
# a k9s row or a Kibana message line that starts so is a record of its own, not a tail
_RECORD_START = ("(?:\\[?[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}|%?[0-7]\\||\\{"
                 "|(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL|CRITICAL|SEVERE)[: ]"
                 "|[ \\t]|" + END + ")")


@dataclass(frozen=True)
class Join:
    name: str
    on: str             # "line" (as read) or "text" (its tool's prefix stripped)
    head: str           # regex at the start; group 1 is the key the tail must repeat
    tail: str           # regex at the start of the next line; group 1 the key
    sep: str            # between the pieces' texts
    doc: str
    alone_other: bool = False   # the head alone (no tail after it) is an other line

    @cached_property
    def head_re(self) -> re.Pattern[str]:
        return re.compile(self.head)

    @cached_property
    def tail_re(self) -> re.Pattern[str]:
        return re.compile(self.tail)


JOINS: tuple[Join, ...] = (
    Join("CRI-PARTIAL", "line", "^" + _RFC3339 + " (stdout|stderr) P ",
         "^" + _RFC3339 + " (stdout|stderr) [FP] ", "",
         "CRI's partial entries: a line the runtime cut (tag P) continues in the next entry "
         "of the same stream, up to the one tagged F (Kubernetes' design proposal "
         "node/kubelet-cri-logging.md; the kubelet's reader pkg/kubelet/kuberuntime/logs/"
         "logs.go joins them the same way)"),
    Join("K9S-WRAP", "line", "^" + K9S_BORDER + "()[^\\x00]*[^ " + K9S_BORDER + "]"
         + K9S_BORDER + END,
         "^" + K9S_BORDER + " ?()(?!" + _RECORD_START + ")", "",
         "a k9s log pane with wrapping on: a row whose text runs up to the right border "
         "continues on the next row (tview's TextView wraps at the pane's width)"),
    Join("JUL", "text", "^" + _MON + " [0-9]{2}, [0-9]{4} [0-9]{1,2}:[0-9]{2}:[0-9]{2} [AP]M "
         "()[A-Za-z_$][A-Za-z0-9_$.]*(?: [^ \\x00]+)?" + END,
         "^()" + JUL_LEVELS + ": ", "\n",
         "java.util.logging's SimpleFormatter default, `%1$tb %1$td, %1$tY %1$tl:%1$tM:%1$tS "
         "%1$Tp %2$s%n%4$s: %5$s%6$s%n`: the time and the source (class and method, or the "
         "logger) on one line, the level and the message on the next (java.util.logging."
         "SimpleFormatter's documentation; what slf4j-jdk14 logs go through)"),
    Join("DOTNET-CONSOLE", "text",
         "^(?:[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]{1,7})? )?"
         + DOTNET_LEVELS + ": ()[^ \\[\\x00]+\\[-?[0-9]+\\]" + END,
         "^()      ", "\n",
         ".NET's Microsoft.Extensions.Logging console (SimpleConsoleFormatter, SingleLine off): "
         "`<level>: <category>[<event id>]`, then the message indented by 6 spaces (with "
         "TimestampFormat set, the time before the level)"),
    Join("KIBANA", "text", "^" + _MON + " [0-9]{1,2}, [0-9]{4} @ [0-9]{2}:[0-9]{2}:[0-9]{2}"
         "\\.[0-9]{3}()" + END,
         "^()(?!" + _RECORD_START + ")", "\n",
         "a copy of Kibana Discover's table: the @timestamp column as Kibana shows it (its "
         "default dateFormat `MMM D, YYYY @ HH:mm:ss.SSS`) on a line of its own, the message "
         "on the next; when the next line is a record with its own time stamp, the display "
         "time is left alone (other)", alone_other=True),
)

# one anchored alternation of every head: the cheap test every line takes
HEADS_RE = "(?:" + "|".join(j.head for j in JOINS) + ")"
# heads that are other lines when nothing follows them (tested on the text, after the layout)
ALONE_OTHER_RE = "(?:" + "|".join(j.head for j in JOINS if j.alone_other) + ")"


def _check() -> None:
    for j in JOINS:
        for rx in (j.head, j.tail):
            if re.compile(rx).groups != 1:
                raise ValueError(f"join {j.name}: {rx!r} needs exactly one group (the key)")
        if j.on not in ("line", "text"):
            raise ValueError(f"join {j.name}: on={j.on!r}")


_check()
