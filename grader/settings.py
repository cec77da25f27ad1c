"""The grader's settings from the GRADE_* environment, read in one place, and the environment a child gets."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from grader.errors import CourseError

CACHE_ENV = "GRADE_CACHE_DIR"
SANDBOX_ENV = "GRADE_SANDBOX"  # a command that runs learner code in an OS sandbox (README: high stakes)
LANDLOCK_ENV = "GRADE_LANDLOCK"  # "off": learner children do not restrict themselves with Landlock
REQUIRE_SANDBOX_ENV = "GRADE_REQUIRE_SANDBOX"  # "1": grade nothing where no sandbox held
# Variables that choose the backend or locale: passed through so learner and reference see the same device.
PASSED_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "JAX_PLATFORMS", "CUDA_VISIBLE_DEVICES", "XLA_FLAGS")


def landlock_on() -> bool:
    """Whether learner children restrict themselves with Landlock (unless GRADE_LANDLOCK=off)."""
    return os.environ.get(LANDLOCK_ENV, "").lower() != "off"


def sandbox_required() -> bool:
    """Whether a run in which no sandbox holds must grade nothing (GRADE_REQUIRE_SANDBOX=1)."""
    return os.environ.get(REQUIRE_SANDBOX_ENV, "") == "1"


def cache_root() -> Path | None:
    """Returns the folder of the grader's caches: $GRADE_CACHE_DIR ("off": None), by default
    ~/.cache/mp-grader."""
    setting = os.environ.get(CACHE_ENV, "")
    if setting.lower() == "off":
        return None
    if setting:
        return Path(setting)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mp-grader"


def compilation_cache(trusted: bool) -> Path | None:
    """Returns the folder where children keep JAX's compiled kernels between runs, or None when off.

    The course's own code and submissions use separate folders, so a submission's compilations never feed
    the reference. JAX keys each entry by the computation, the JAX version and the backend, so an entry
    never changes a result, only the time to get it.
    """
    root = cache_root()
    return None if root is None else root / ("jax-course" if trusted else "jax-submissions")


def sandbox_words() -> list[str]:
    """Returns $GRADE_SANDBOX split like a shell line (empty when unset), or raises CourseError."""
    try:
        return shlex.split(os.environ.get(SANDBOX_ENV, ""))
    except ValueError as exc:
        raise CourseError(f"{SANDBOX_ENV} is not a valid command line: {exc}") from None


def child_environment(workdir: Path, trusted: bool, sandboxed: bool) -> dict[str, str]:
    """The environment of a child: the backend and locale variables, a private home, the compilation cache."""
    env = {name: os.environ[name] for name in PASSED_ENV if name in os.environ}
    env.update(HOME=str(workdir), TMPDIR=str(workdir), PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1")
    # A sandbox may run the child as another user, who could not write to the grader's cache folder.
    cache = None if sandboxed else compilation_cache(trusted)
    if cache is not None:
        # Made here: a child in the Landlock sandbox may write beneath it, but could not create it.
        cache.mkdir(parents=True, exist_ok=True)
        env.update(
            JAX_COMPILATION_CACHE_DIR=str(cache),
            # Keep every kernel: op-by-op (eager) code compiles many small ones, each in milliseconds.
            JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
            JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="0",
        )
    return env
