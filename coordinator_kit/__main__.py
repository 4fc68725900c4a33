"""Command line: `python -m coordinator_kit <command>`.

Each command lives in the module that owns its work and registers itself with
`add_parser(subparsers)`, setting `func` to a callable `(args) -> exit code`:
`diagrams` (coordinator_kit.viz.cli), `datasets` (coordinator_kit.datasets.cli),
`logs parse|report` (coordinator_kit.spark.cli), `notebooks` and `grade`
(coordinator_kit.teaching.cli), `serve` (coordinator_kit.live.cli), `kafka fetch|start|stop|status|compare`
(coordinator_kit.realkafka.cli).
"""

from __future__ import annotations

import argparse
import importlib
import sys

# Modules that contribute a command; imported lazily so `diagrams` never needs Spark.
_COMMAND_MODULES = (
    "coordinator_kit.viz.cli",
    "coordinator_kit.datasets.cli",
    "coordinator_kit.spark.cli",
    "coordinator_kit.teaching.cli",
    "coordinator_kit.live.cli",
    "coordinator_kit.realkafka.cli",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m coordinator_kit")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            missing = exc.name or ""
            if not (name == missing or name.startswith(missing + ".")):
                raise   # a real missing dependency, not a command module not written yet
            continue
        module.add_parser(sub)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
