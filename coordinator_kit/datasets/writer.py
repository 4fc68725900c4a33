"""Render the datasets to bytes, write them, and check committed files against a regeneration.

Rendering happens in memory (the small datasets are a few MB), so `check` compares fresh bytes
with the files on disk without writing anything, and `write_all` writes a file only when its
bytes changed. Files hold no wall-clock time and no absolute path, and end lines with `\\n`.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..cluster import Cluster
from ..logs.layout import level_number
from .catalog import DATASETS, RECORDED, DatasetSpec
from .offsets_table import offsets_csv, offsets_rows

__all__ = ["render_dataset", "render_all", "write_all", "check", "compare_dirs",
           "log_file_name", "OWNED_SUFFIXES"]

# What the generator writes inside a scenario folder; a stale file of these kinds is removed.
OWNED_SUFFIXES = (".log", ".jsonl", ".csv")


def log_file_name(source: str) -> str:
    """`broker-2` -> `server-broker-2.log` (a broker's server.log), `client-x` -> `client-x.log`."""
    if source.startswith("broker-"):
        return f"server-{source}.log"
    if source.startswith("client-"):
        return f"{source}.log"
    raise ValueError(f"trace source {source!r} is neither a broker nor a client; the datasets "
                     f"have no log file for it")


def _log_files(cluster: Cluster, spec: DatasetSpec) -> dict[str, bytes]:
    """One file per broker and per consumer, each at its level, in trace order."""
    thresholds = {"broker": level_number(spec.broker_level),
                  "client": level_number(spec.client_level)}
    start = cluster.trace.start
    files: dict[str, list[str]] = {f"server-broker-{b}.log": [] for b in sorted(cluster.brokers)}
    for name in cluster.consumers:
        files.setdefault(log_file_name(f"client-{name}"), [])
    for e in cluster.trace.events:
        if e.message is None:
            continue
        kind = "broker" if e.source.startswith("broker-") else "client"
        if level_number(e.level) < thresholds[kind]:
            continue
        line: str = e.line(start)  # type: ignore[assignment]  # has a message, so a line
        files.setdefault(log_file_name(e.source), []).append(line)
    return {name: "".join(line + "\n" for line in lines).encode("utf-8")
            for name, lines in sorted(files.items())}


def render_dataset(spec: DatasetSpec, cluster: Cluster | None = None) -> dict[str, bytes]:
    """File name -> bytes for one scenario folder (`cluster`: the scenario, already run)."""
    if cluster is None:
        cluster = spec.run()
    files = _log_files(cluster, spec)
    trace = io.StringIO(newline="\n")
    cluster.trace.write_jsonl(trace)
    files["trace.jsonl"] = trace.getvalue().encode("utf-8")
    files["consumer_offsets.csv"] = offsets_csv(offsets_rows(cluster)).encode("utf-8")
    return files


def render_all(names: Iterable[str] | None = None,
               clusters: Mapping[str, Cluster] | None = None) -> dict[str, bytes]:
    """Relative path (`<scenario>/<file>`, and `README.md` for a full set) -> bytes.

    `clusters` may hold scenarios already run (by name); the others are run here.
    """
    from .readme import render_readme

    selected = list(DATASETS) if names is None else list(names)
    for name in selected:
        if name not in DATASETS:
            raise KeyError(f"no dataset scenario {name!r}; known: {', '.join(DATASETS)}")
    out: dict[str, bytes] = {}
    for name in selected:
        cluster = None if clusters is None else clusters.get(name)
        for file, data in render_dataset(DATASETS[name], cluster).items():
            out[f"{name}/{file}"] = data
    if names is None:
        out["README.md"] = render_readme(out).encode("utf-8")
    return out


def write_all(out_dir: Path, names: Iterable[str] | None = None) -> list[Path]:
    """Write the datasets under `out_dir`; returns the files whose bytes changed.

    A stale generated file (a log of a consumer a scenario no longer has) in a scenario folder
    that is written is removed; nothing else in `out_dir` is touched.
    """
    files = render_all(names)
    changed: list[Path] = []
    folders = sorted({rel.split("/")[0] for rel in files if "/" in rel})
    for folder in folders:
        d = out_dir / folder
        d.mkdir(parents=True, exist_ok=True)
        for old in sorted(d.iterdir()):
            if old.is_file() and old.suffix in OWNED_SUFFIXES and f"{folder}/{old.name}" \
                    not in files:
                old.unlink()
                changed.append(old)
    for rel, data in sorted(files.items()):
        path = out_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_bytes() != data:
            path.write_bytes(data)
            changed.append(path)
    return changed


def compare_dirs(expected: dict[str, bytes], out_dir: Path,
                 folders: Iterable[str] | None = None) -> list[str]:
    """Differences between rendered files and `out_dir`: `differs: x`, `missing: x`,
    `unexpected: x` (a generated-looking file the generator would not write), sorted."""
    problems = []
    for rel, data in sorted(expected.items()):
        path = out_dir / rel
        if not path.is_file():
            problems.append(f"missing: {rel}")
        elif path.read_bytes() != data:
            problems.append(f"differs: {rel}")
    for folder in sorted(set(folders) if folders is not None
                         else {rel.split("/")[0] for rel in expected if "/" in rel}):
        d = out_dir / folder
        if d.is_dir():
            for path in sorted(d.iterdir()):
                rel = f"{folder}/{path.name}"
                if rel not in expected:
                    problems.append(f"unexpected: {rel}")
    return problems


def check(out_dir: Path, names: Iterable[str] | None = None,
          rendered: dict[str, bytes] | None = None) -> list[str]:
    """Regenerate (in memory, or take `rendered` from `render_all(names)`) and compare with
    `out_dir`; an empty list means identical.

    With every scenario (`names=None`), scenario folders the catalogue no longer has are
    reported as unexpected too.
    """
    expected = render_all(names) if rendered is None else rendered
    problems = compare_dirs(expected, out_dir)
    if names is None and out_dir.is_dir():
        for d in sorted(out_dir.iterdir()):
            if d.is_dir() and d.name not in DATASETS and d.name not in RECORDED \
                    and not d.name.startswith("."):
                problems.append(f"unexpected: {d.name}/")
    return sorted(problems)
