"""What a running child is held to while the grader reads its events: the memory of all its processes, what
it writes to its folders, its orphans where no PID namespace holds them; and, once it stops, why it did."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from grader.running.folders import usage
from grader.running.jobs import Job, cpu_seconds
from grader.running.limits import Limits, describe_size
from grader.running.outcomes import describe_exit
from grader.running.processes import exit_status_unreaped, kill_orphans, resident_bytes

DISK_CHECK_SECONDS = 0.5  # how often what a learner's child wrote is counted
MAX_FOLDER_ENTRIES = 20_000  # files and folders a learner's child may make in its folders


class Watchdog:
    """The limits of one child: `over_limit()` is asked between its events, `halt()` when it stops."""

    def __init__(
        self,
        process: subprocess.Popen,
        limits: Limits,
        trusted: bool,
        watched: list[Path],
        kill: Callable[[subprocess.Popen], None],
    ) -> None:
        """`watched`: the child's private folder, then the folders it may also write to (its compiled
        kernels), whose size before the run is not the child's. `kill` stops the child and what it started."""
        settings = limits.settings
        self.process, self.limits, self.trusted, self._kill = process, limits, trusted, kill
        self.hunt_orphans = False  # set once the child reported that no PID namespace holds its processes
        self._disk = None if trusted or not settings.protects("disk-limit") else limits.disk_bytes
        self._watched = watched
        # What the folders held before the run is not the child's: its bytes and its entries (the private
        # folder holds the copies of the submissions; the kernel cache what earlier runs compiled).
        before = [usage(folder) for folder in watched]
        self._written_before = sum(size for size, _ in before[1:])
        own = settings.protects("own-folders")
        self._entries_before = [entries if own else 0 for _, entries in before]
        # Without that baseline (own-folders off, the old behaviour the tests show), what earlier runs left
        # is counted at once, before the child is ready, however fast it starts.
        self._disk_checked = time.monotonic() if own else float("-inf")

    def over_limit(self) -> str:
        """ "memory" or "disk" when the child's processes use more memory, or have written more to their
        folders, than the limits allow; else "". Where no PID namespace holds a learner's processes, what
        escaped the child's session is killed here as soon as it is found."""
        settings = self.limits.settings
        limit = self.limits.memory_bytes
        if (
            limit is not None
            and resident_bytes(self.process.pid, settings.protects("process-namespace")) > limit
        ):
            return "memory"
        if self.trusted:
            return ""
        if self.hunt_orphans and settings.protects("process-namespace"):
            kill_orphans()  # no PID namespace held: what escaped the session goes as soon as it is found
        if self._disk is not None and time.monotonic() - self._disk_checked > DISK_CHECK_SECONDS:
            self._disk_checked = time.monotonic()
            pairs = list(zip(self._watched, self._entries_before, strict=True))
            counted = [(usage(folder, MAX_FOLDER_ENTRIES + before), before) for folder, before in pairs]
            written = sum(size for (size, _), _ in counted) - self._written_before
            if written > self._disk or any(
                entries - before > MAX_FOLDER_ENTRIES for (_, entries), before in counted
            ):
                return "disk"
        return ""

    def halt(self, why: str | None, limit: float, jobs: list[Job]) -> str:
        """Stops the child and says why it stopped: a time, memory or disk limit it ran over, or how it
        ended."""
        if why in ("timeout", "memory", "disk"):
            self._kill(self.process)
            if why == "timeout":
                return f"timed out after {limit:g} s"
            if why == "disk":
                size = describe_size(self._disk or 0)
                return f"wrote more than {size} or {MAX_FOLDER_ENTRIES:,} files to its folders (disk limit)"
            return f"out of memory: used more than {describe_size(self.limits.memory_bytes)} (--memory-limit)"
        returncode = exit_status_unreaped(self.process, timeout=10)
        self._kill(self.process)  # also what it left behind
        status = self.process.returncode if returncode is None else returncode
        return describe_exit(status, cpu_seconds(self.limits, jobs))
