"""What one child may use: the limits, and how they are described in reports. The settings of the GRADE_*
environment (grader/settings.py) ride along, so that every child is started with them."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from grader.running.packages import may_use_gpu
from grader.settings import Settings

GIB = 1 << 30


@dataclass(frozen=True)
class Limits:
    """What one child may use.

    `timeout` is the wall-clock limit per case and `start_timeout` the allowance for starting Python and
    importing the submission. `memory_bytes` bounds the child's memory (None: no limit). `output_bytes`
    bounds what it may write to stdout, stderr and any file, `disk_bytes` what it may write to its folders
    together (its private folder and its compilation cache), counted by the grader. `cpu_time` bounds the
    CPU seconds of the whole child; by default it is the wall-clock total times the number of cores, a
    backstop that the kernel enforces even if the grader itself is killed.
    """

    timeout: float = 60.0
    start_timeout: float = 120.0
    memory_bytes: int | None = 4 * GIB
    output_bytes: int = 64 << 20
    disk_bytes: int = 512 << 20  # what a learner's child may write to its folder and its kernel cache
    cpu_time: float | None = None
    # The GRADE_* environment as the command read it: whether learner children restrict themselves with
    # Landlock (grader/child/landlock.py), whether a child in which no sandbox holds grades nothing, the
    # GRADE_SANDBOX command, and where the compiled kernels are kept.
    settings: Settings = field(default_factory=Settings)
    landlock_course: bool = False  # the course's own files too (grade check runs each as a learner's would)

    def cpu_seconds(self, cases: int) -> int:
        if self.cpu_time is not None:
            return max(1, int(self.cpu_time))
        return int((self.start_timeout + self.timeout * max(cases, 1)) * (os.cpu_count() or 1)) + 1


def children_that_fit(limits: Limits, least: int, most: int) -> int:
    """How many children to run side by side: one per core this process may run on, from `least` up to
    `most`, and above `least` only as many as the memory available holds at each child's memory limit
    (the most a child may take, and so what the machine must hold for each)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cores = os.cpu_count() or 1
    quota = cpu_quota()
    if quota is not None:  # a container's CPU limit: its cores are visible, most of their time is not
        cores = min(cores, quota)
    children = max(least, min(cores, most))
    available = _memory_available()
    if limits.memory_bytes and available is not None:
        children = min(children, max(least, available // limits.memory_bytes))
    return children


def cpu_quota(cgroups: Path = Path("/sys/fs/cgroup")) -> int | None:
    """The cores' worth of CPU time this process's control group may use (a container's `--cpus`, rounded
    up), or None where none is set or it cannot be read: cgroup v2's cpu.max, else v1's CFS quota."""
    try:
        quota, period = (cgroups / "cpu.max").read_text(encoding="ascii").split()[:2]
    except (OSError, ValueError):
        try:
            quota = (cgroups / "cpu" / "cpu.cfs_quota_us").read_text(encoding="ascii").strip()
            period = (cgroups / "cpu" / "cpu.cfs_period_us").read_text(encoding="ascii").strip()
        except OSError:
            return None
    try:
        quota_us, period_us = int(quota), int(period)
    except ValueError:  # "max": no limit
        return None
    if quota_us <= 0 or period_us <= 0:  # v1's -1: no limit
        return None
    return max(1, math.ceil(quota_us / period_us))


def _memory_available() -> int | None:
    """MemAvailable of /proc/meminfo in bytes, or None where it cannot be read."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def describe_size(size: int) -> str:
    """Returns a byte count the way people write it: 4 GiB, 512 MiB."""
    for unit, scale in (("GiB", GIB), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:g} {unit}"
    return f"{size} bytes"


def address_space_limit(limits: Limits) -> int | None:
    """Returns the address-space limit to set in the child: the memory limit on CPU-only installs.

    GPU runtimes reserve far more address space than they use, so there the limit is kept by watching
    the child's resident memory instead (the watch runs on every backend).
    """
    if limits.memory_bytes is None:
        return None
    return None if may_use_gpu() else limits.memory_bytes
