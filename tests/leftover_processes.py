"""Finding the processes that a file of tests/submissions/ leaves behind, by the name it gives itself
(`prctl(PR_SET_NAME)`, what /proc/PID/comm shows), machine-wide: tests/conftest.py's WORKER_UNITS keeps the
modules that look on one pytest-xdist worker with test_hostile.py, which grades every such file."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from pathlib import Path


def live_processes_named(name: bytes) -> list[int]:
    """The live processes whose name is `name` (a killed one not yet reaped does not count)."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError, IndexError):
            state = entry.joinpath("stat").read_text().rpartition(")")[2].split()[0]
            if entry.joinpath("comm").read_bytes() == name + b"\n" and state != "Z":
                found.append(int(entry.name))
    return found


def within(seconds: float, condition: Callable[[], object]) -> bool:
    """Whether `condition()` holds at some point within `seconds` (polled): no fixed sleep to race."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
