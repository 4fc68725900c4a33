"""What tools put in front of a log line: prefixes stripped before the layout is matched.

A log rarely reaches a user as the program wrote it. `docker compose logs` puts the service's
name in front of every line, `kubectl logs` on a node's files (containerd, CRI-O) shows the
CRI log format with its own time stamp and stream, k9s draws its pane's border around it. What
follows such a prefix is the program's line, in any of the parser's layouts (`LAYOUTS`, JSON),
so the prefixes are stripped first and compose with every layout: one table, `WRAPPERS`, each
row a name, a linear-time regex matching the prefix at the start of the line (nothing else),
and where its format is documented. At most one prefix is stripped per line (the first row
that matches); the `raw` column keeps the line as it was read.

Both engines strip the same way: the Python parser with `WRAPPER_RE` (one `re.sub` anchored
at the start), Spark with one `regexp_replace` of the same pattern. A k9s line also ends with
the pane's right border: after a `K9S_BORDER` prefix, trailing spaces and `│` are trimmed
(`str.rstrip(K9S_TRIM)`, Spark's `rtrim(text, K9S_TRIM)`: the same characters; `K9S_TRIM_RE` is that trim as a regex, for engines without such a
function: it starts only where a run of them starts, so it stays linear).

Compose's colours (`--no-color` is off on a terminal) are control characters: such lines stay
quarantined as undecodable. Lines that are not whole records (CRI partial lines, `P`; k9s rows
wrapped at the pane's width; a Kibana copy's display time on a line of its own) are joined
with the rest of their record by `logs.joins`, before the prefix is stripped from each piece.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Wrapper", "WRAPPERS", "WRAPPER_RE", "K9S_BORDER", "K9S_TRIM", "K9S_TRIM_RE",
           "strip_wrapper"]


@dataclass(frozen=True)
class Wrapper:
    name: str
    regex: str          # the prefix, matched at the start of the line only
    doc: str            # the format and where it is documented


K9S_BORDER = "│"       # U+2502 BOX DRAWINGS LIGHT VERTICAL
K9S_TRIM = " │"
K9S_TRIM_RE = "(?<![ │])[ │]+(?!(?s:.))"

_RFC3339 = ("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\\.[0-9]{1,9})?"
            "(?:Z|[+-][0-9]{2}:[0-9]{2})")
_NANO_FIXED = ("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{9}"
               "(?:Z|[+-][0-9]{2}:[0-9]{2})")

WRAPPERS: tuple[Wrapper, ...] = (
    Wrapper("CRI", _RFC3339 + " (?:stdout|stderr) [FP] ",
            "the CRI container log format (kubelet, containerd, CRI-O; the files under "
            "/var/log/pods that `kubectl logs` serves): `<RFC3339Nano time> <stream> <tag> "
            "<line>`, tag F a full line, P a partial one (Kubernetes' design proposal "
            "node/kubelet-cri-logging.md; kubelet's reader pkg/kubelet/kuberuntime/logs/logs.go)"),
    Wrapper("COMPOSE", "[A-Za-z0-9][A-Za-z0-9_.-]*[-_][0-9]+ +\\| (?:" + _NANO_FIXED + " )?",
            "docker compose's `logs`/`up` output: the container's name (`service-1` in "
            "Compose v2, `project_service_1` in v1) left-aligned in a field one wider than the "
            "longest name, then `| `, and with `--timestamps` a time in Go's RFC3339NanoFixed "
            "(always 9 digits of fraction: a program's own time stamp, with 3, is left to "
            "its layout) and a space (docker/compose cmd/formatter/logs.go: `%-<width>s | `)"),
    Wrapper("K9S", K9S_BORDER + " ?",
            "a line copied from a k9s log pane: its left border `│` (the right one is "
            "trimmed too)"),
)

WRAPPER_RE = "^(?:" + "|".join(w.regex for w in WRAPPERS) + ")"

_WRAPPER = None


def strip_wrapper(text: str) -> str:
    """`text` without the first matching prefix of WRAPPERS (and a k9s right border)."""
    global _WRAPPER
    if _WRAPPER is None:
        import re
        _WRAPPER = re.compile(WRAPPER_RE)
    m = _WRAPPER.match(text)
    if m is None:
        return text
    rest = text[m.end():]
    if text.startswith(K9S_BORDER):
        rest = rest.rstrip(K9S_TRIM)
    return rest
