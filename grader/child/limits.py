"""What the child (grader/child/main.py) applies to itself before any learner code runs: resource limits,
death with the grader, and the grader's own packages kept out of reach. Standard library only, loaded by
path."""

from __future__ import annotations

import importlib.abc
import sys


def apply_limits(limits: dict[str, int | None]) -> None:
    """Caps this process's address space, file writes and CPU time (soft and hard, so learner code
    cannot raise them), and asks Linux to kill it if the grader dies first."""
    import resource

    for key, which in (
        ("address_space", resource.RLIMIT_AS),
        ("file_size", resource.RLIMIT_FSIZE),
        ("cpu_seconds", resource.RLIMIT_CPU),
    ):
        value = limits.get(key)
        if value:
            hard = value + 5 if which == resource.RLIMIT_CPU else value  # SIGXCPU first, SIGKILL 5 s later
            resource.setrlimit(which, (value, hard))
    resource.setrlimit(resource.RLIMIT_RTPRIO, (0, 0))  # no real-time scheduling class over classmates
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)


class BlockImports(importlib.abc.MetaPathFinder):
    """Refuses the grader's own packages to learner code, with a message that says why."""

    def __init__(self, names: list[str]) -> None:
        self.names = set(names)

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in self.names:
            raise ImportError(
                f"submissions may not import {fullname!r}: the grader and the reference solutions are "
                "out of bounds; use jax, flax, optax and numpy"
            )
        return None


def block_imports(names: list[str]) -> None:
    """From now on, importing any of `names` (or a submodule) raises ImportError."""
    if names:
        sys.meta_path.insert(0, BlockImports(names))
