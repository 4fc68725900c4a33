"""Real consumers as child processes, for notebooks and tests.

Each `ConsumerProcess` runs `coordinator_kit.live.consumer_main` (kafka-python or
confluent-kafka) against a live server, reads the JSON events it prints, and offers the faults
that act on a process: `crash()` (SIGKILL: no LeaveGroup, the coordinator finds out when the
session times out), `pause()`/`resume()` (SIGSTOP/SIGCONT, a GC pause) and `stop()` (SIGTERM:
a clean close with LeaveGroup), and `stall()` (out of poll() for a while, the heartbeat
thread running: `max.poll.interval.ms`). Every process has a time limit and is killed by its own PID
when it is reached or when the parent closes it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["ConsumerProcess", "CLIENTS"]

CLIENTS = ("kafka-python", "confluent-kafka")


class ConsumerProcess:
    def __init__(self, bootstrap: str, client_id: str, *, group: str = "group-1",
                 client: str = "kafka-python", topics: str = "orders", seconds: float = 120,
                 session_timeout_ms: int = 10_000, heartbeat_interval_ms: int = 1_000,
                 log_path: str | Path | None = None, instance_id: str | None = None,
                 extra_args: tuple[str, ...] = (), limit_s: float | None = None,
                 group_protocol: str = "classic", max_poll_interval_ms: int | None = None,
                 stall_ms: int = 0) -> None:
        if client not in CLIENTS:
            raise ValueError(f"client must be one of {', '.join(CLIENTS)}, got {client!r}")
        self.client_id = client_id
        self.client = client
        self.group = group
        self.events: list[dict[str, Any]] = []
        self.log_path = Path(log_path) if log_path is not None else None
        args = [sys.executable, "-m", "coordinator_kit.live.consumer_main", "--client", client,
                "--bootstrap", bootstrap, "--group", group, "--topics", topics,
                "--client-id", client_id, "--seconds", str(seconds),
                "--session-timeout-ms", str(session_timeout_ms),
                "--heartbeat-interval-ms", str(heartbeat_interval_ms), *extra_args]
        if instance_id:
            args += ["--instance-id", instance_id]
        if group_protocol != "classic":
            args += ["--group-protocol", group_protocol]
        if max_poll_interval_ms is not None:
            args += ["--max-poll-interval-ms", str(max_poll_interval_ms)]
        args += self._stall_args(stall_ms)
        if self.log_path is not None:
            args += ["--log", str(self.log_path)]
        env = dict(os.environ)
        package_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = package_root + os.pathsep + env.get("PYTHONPATH", "")
        self._spawn(args, limit_s if limit_s is not None else seconds + 30,
                    stderr=subprocess.DEVNULL if self.log_path is None else subprocess.STDOUT,
                    env=env)

    def _stall_args(self, stall_ms: int) -> list[str]:
        """The options of a scripted stall; `stall()` creates the file the child watches."""
        self.stall_ms = stall_ms
        self.stall_file: Path | None = None
        if not stall_ms:
            return []
        import tempfile
        fd, name = tempfile.mkstemp(prefix=f"stall-{self.client_id}-")
        os.close(fd)
        os.unlink(name)
        self.stall_file = Path(name)
        return ["--stall-file", name, "--stall-ms", str(stall_ms)]

    def stall(self) -> None:
        """Keep the consumer out of poll() for its `stall_ms` (from its next loop), while its
        heartbeat thread goes on: what a slow record handler does to `max.poll.interval.ms`."""
        if self.stall_file is None:
            raise ValueError(f"consumer {self.client_id} was started without stall_ms; give "
                             f"ConsumerProcess(..., stall_ms=N) to be able to stall it")
        self.stall_file.touch()

    def _spawn(self, args: list[str], limit_s: float, *, stderr: int,
               env: dict[str, str] | None = None) -> None:
        """Start the child, the thread reading its JSON events, and its time limit (the
        process closes itself after its `--seconds`; the limit kills it if it does not)."""
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=stderr, text=True,
                                     env=env)
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True,
                                        name=f"{self.client} consumer {self.client_id}")
        self._reader.start()
        self._limit = threading.Timer(limit_s, self.kill_quietly)
        self._limit.daemon = True
        self._limit.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                event = json.loads(line)
            except ValueError:
                continue
            with self._lock:
                self.events.append(event)

    # -- what it did -----------------------------------------------------------------------------

    def events_of(self, kind: str) -> list[dict[str, Any]]:
        with self._lock:
            return [e for e in self.events if e["event"] == kind]

    @property
    def assignment(self) -> list[tuple[str, int]]:
        """The partitions it owns now, as its rebalance listener last heard."""
        with self._lock:
            owned: set[tuple[str, int]] = set()
            for e in self.events:
                if e["event"] == "assigned":
                    # added to what it owns: an eager client revokes everything first and is
                    # then given its whole assignment; an incremental one (cooperative, KIP-848)
                    # is told only what it gains and what it loses
                    owned |= {tuple(p) for p in e["partitions"]}  # type: ignore[misc]
                elif e["event"] == "revoked":
                    owned -= {tuple(p) for p in e["partitions"]}  # type: ignore[misc]
            return sorted(owned)

    def records_read(self) -> int:
        return sum(e["count"] for e in self.events_of("records"))

    def last_offsets(self) -> dict[tuple[str, int], int]:
        out: dict[tuple[str, int], int] = {}
        for e in self.events_of("records"):
            out[(e["topic"], e["partition"])] = e["last"]
        return out

    def first_offsets(self) -> dict[tuple[str, int], int]:
        """The first offset it read in each partition (count back from the first batch)."""
        out: dict[tuple[str, int], int] = {}
        for e in self.events_of("records"):
            key = (e["topic"], e["partition"])
            out.setdefault(key, e["last"] - e["count"] + 1)
        return out

    def wait_until(self, condition: Callable[[ConsumerProcess], bool], timeout_s: float,
                   what: str = "the condition") -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if condition(self):
                return
            if self.proc.poll() is not None and not self._reader.is_alive() \
                    and not condition(self):
                raise RuntimeError(f"consumer {self.client_id} exited "
                                   f"(code {self.proc.returncode}) before {what}; its events: "
                                   f"{self.events[-5:]}")
            time.sleep(0.05)
        raise TimeoutError(f"consumer {self.client_id}: {what} did not happen in {timeout_s} s;"
                           f" its last events: {self.events[-5:]}")

    # -- faults ----------------------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def crash(self) -> None:
        """SIGKILL: the process dies at once, sending nothing (no LeaveGroup, no commit)."""
        self._signal(signal.SIGKILL)
        self.proc.wait(10)

    def pause(self) -> None:
        """SIGSTOP: the process stops dead (no heartbeats, no polls) until `resume()`."""
        self._signal(signal.SIGSTOP)

    def resume(self) -> None:
        self._signal(signal.SIGCONT)

    def stop(self, timeout_s: float = 20) -> int:
        """SIGTERM: the consumer closes cleanly (commits, LeaveGroup) and exits."""
        self._signal(signal.SIGCONT)
        self._signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.kill_quietly()
            return self.proc.wait(5)

    def _signal(self, sig: int) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, sig)

    def kill_quietly(self) -> None:
        if self.proc.poll() is None:
            with_pid = self.proc.pid
            try:
                os.kill(with_pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def close(self) -> None:
        self._limit.cancel()
        self.kill_quietly()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            pass
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def __repr__(self) -> str:
        state = "running" if self.alive else f"exited {self.proc.returncode}"
        return (f"ConsumerProcess({self.client_id!r}, {self.client}, {state}, "
                f"owns {self.assignment})")
