"""The lifetime of a local Spark cluster: `python -m coordinator_kit.spark.watchdog`.

Started detached (its own session) by `spark.cluster`, it reads the PIDs of the daemons from
`<folder>/pids` and stops them (`cluster.stop_group`: SIGTERM to each daemon's process group,
SIGKILL after a grace period; only PIDs whose command line still names `folder`) when the
lifetime ends or when the Python that started them (`--parent`) is gone. It exits when every
daemon is gone. A cluster left behind by a crashed test or a closed notebook is thus stopped
within a second of its parent's end, and after its lifetime at the latest.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from .cluster import _group_alive, stop_group


def _pids(folder: Path) -> list[int]:
    try:
        return [int(x) for x in (folder / "pids").read_text().split()]
    except (OSError, ValueError):
        return []


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m coordinator_kit.spark.watchdog")
    p.add_argument("--folder", required=True, type=Path)
    p.add_argument("--lifetime", type=float, required=True, help="seconds")
    p.add_argument("--parent", type=int, help="stop the cluster when this PID is gone")
    args = p.parse_args(argv)
    deadline = time.monotonic() + args.lifetime
    seen = False
    while time.monotonic() < deadline:
        pids = _pids(args.folder)
        seen = seen or bool(pids)
        if seen and not any(_alive(pid) or _group_alive(pid) for pid in pids):
            return 0                     # stopped by their owner
        if args.parent and not _alive(args.parent):
            break
        time.sleep(0.5)
    for pid in reversed(_pids(args.folder)):   # workers before the master
        stop_group(pid, args.folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
