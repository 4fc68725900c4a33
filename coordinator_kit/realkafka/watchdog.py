"""The lifetime of a started broker: `python -m coordinator_kit.realkafka.watchdog`.

Started detached (its own session) by `RealKafka.start`, it sleeps until the lifetime ends or
the broker is gone, then stops the broker by its PID (SIGTERM, SIGKILL after 20 s), checking
first that the PID still names that broker's JVM. A broker left behind by a crashed test or a
forgotten notebook is thus gone after its lifetime at the latest.
"""

from __future__ import annotations

import argparse
import sys
import time

from .broker import _is_our_kafka, stop_pid


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m coordinator_kit.realkafka.watchdog")
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--folder", required=True)
    p.add_argument("--lifetime", type=float, required=True, help="seconds")
    args = p.parse_args(argv)
    deadline = time.monotonic() + args.lifetime
    while time.monotonic() < deadline:
        if not _is_our_kafka(args.pid, args.folder):
            return 0
        time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
    stop_pid(args.pid, args.folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
