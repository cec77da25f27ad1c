"""The grader's settings: the GRADE_* environment, read once into a frozen `Settings` by each command (or by
the library's entry points) and passed down; and the environment a child gets.

GRADE_SECRET is not among them: grader/course/secret.py reads it and takes it out of the process at once, so
that it never travels in a value handed to every part of the grader."""

from __future__ import annotations

import hashlib
import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from grader.errors import CourseError

CACHE_ENV = "GRADE_CACHE_DIR"
SANDBOX_ENV = "GRADE_SANDBOX"  # a command that runs learner code in an OS sandbox (docs/security.md)
LANDLOCK_ENV = "GRADE_LANDLOCK"  # "off": learner children do not restrict themselves with Landlock
REQUIRE_SANDBOX_ENV = "GRADE_REQUIRE_SANDBOX"  # "1": grade nothing where no sandbox held
COURSE_ROOT_ENV = "GRADE_COURSE_ROOT"  # the course to use, wherever the command runs
BACKEND_ENV = "GRADE_BACKEND"  # "cpu" (default): children run JAX on the CPU; "native": where JAX chooses
UNPROTECTED_ENV = "GRADE_TEST_UNPROTECTED"  # tests only: protections switched off, to show what each holds
HIDDEN_OUTPUT_ENV = "GRADE_HIDDEN_SHOWS_OUTPUT"  # "1": hidden-mode reports show what learner code said
# What keeps a hostile submission from passing or touching another learner's result, each switchable off
# (GRADE_TEST_UNPROTECTED=name,name) only so that the tests can show the old behaviour it prevents. Every
# report of a run with any of them off says so.
PROTECTIONS = {
    "positive-pass": "a problem passes only when every one of its cases came back and matched",
    "strict-protocol": "every line on the result channel is checked; any other line ends the run",
    "submission-copy": "the submission is read once, links refused, and a copy of its bytes is graded",
    "private-cache": "each learner's compiled kernels live in a cache folder only that learner can reach",
    "process-namespace": "the learner's processes live in a PID namespace that dies with the run",
    "socket-filter": "a seccomp filter refuses every new socket to learner code",
    "kernel-objects": "the learner's child has IPC of its own (a new IPC namespace) and a seccomp filter "
    "refuses SysV IPC, POSIX message queues and keyrings",
    "no-privileges": "the learner's child gives up every capability and sets no_new_privs; a seccomp "
    "filter refuses what root could still do to its own files (mode, owner, times, attributes), other "
    "processes and the kernel",
    "disk-limit": "what learner code writes to its folders is counted against a limit",
    "hidden-text": "hidden-mode reports leave out what learner code said (messages, prints, its own "
    "exception types), unless the course sets GRADE_HIDDEN_SHOWS_OUTPUT=1",
    "own-folders": "what a learner's earlier runs left in their folders is not a later run's: entries "
    "counted from what was there, the kernel cache pruned by entries too, and a limit hit there the "
    "learner's error",
}
# Variables that choose the backend or locale: passed through so learner and reference see the same device.
PASSED_ENV = (
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "JAX_PLATFORMS",
    "CUDA_VISIBLE_DEVICES",
    "XLA_FLAGS",
    "JAX_DEFAULT_MATMUL_PRECISION",
)
BACKENDS = ("cpu", "native")


def jax_platforms(environ: Mapping[str, str] = os.environ) -> str | None:
    """The JAX_PLATFORMS every child runs with (None: unset, JAX chooses). By default the CPU, whatever
    JAX_PLATFORMS says: the margins of every family were measured there (docs/platforms.md), and on a GPU
    correct variants of several problems fail. GRADE_BACKEND=native leaves the choice to JAX_PLATFORMS."""
    backend = environ.get(BACKEND_ENV, "").strip().lower() or "cpu"
    if backend not in BACKENDS:
        raise CourseError(f"{BACKEND_ENV} is {environ[BACKEND_ENV]!r}: it is cpu (the default) or native")
    return "cpu" if backend == "cpu" else environ.get("JAX_PLATFORMS") or None


# How a GPU's memory is taken: by default a child asks for what it uses, not 75% of the card up front (a
# preallocating child holds 4 GiB of host memory, over the default limit, and leaves nothing to the next).
ALLOCATOR_ENV = {"XLA_PYTHON_CLIENT_PREALLOCATE": "false", "XLA_PYTHON_CLIENT_MEM_FRACTION": None}
# Every child, the course's and the learners' alike: arrays a jitted function closes over become arguments
# of its program instead of constants baked into it, so a step jitted inside the function compiles once per
# shape and the compilation cache serves the next case (docs/speed.md; outputs bitwise the same on every
# course file, both platforms). A JAX without these flags ignores them.
HOISTED_CONSTANTS_ENV = {
    "JAX_USE_SIMPLIFIED_JAXPR_CONSTANTS": "true",
    "JAX_EMBEDDED_CONSTANTS_MAX_BYTES": "0",
}


def _cache_root(environ: Mapping[str, str]) -> Path | None:
    """$GRADE_CACHE_DIR ("off": None), by default ~/.cache/mp-grader (under $XDG_CACHE_HOME if set)."""
    setting = environ.get(CACHE_ENV, "")
    if setting.lower() == "off":
        return None
    if setting:
        return Path(setting)
    home = Path(environ["HOME"]) if environ.get("HOME") else Path.home()
    return Path(environ.get("XDG_CACHE_HOME") or home / ".cache") / "mp-grader"


# Where compiled kernels are kept beneath the cache root (grader/running/kernel_cache.py bounds them).
COURSE = "jax-course"
LEARNERS = "jax-learners"


def course_cache(root: Path) -> Path:
    return root / COURSE


def learner_cache(root: Path, learner: str) -> Path:
    """The folder of one learner's kernels; `learner` names the learner (a checkout's path, say)."""
    return root / LEARNERS / hashlib.sha256(learner.encode("utf-8", "surrogateescape")).hexdigest()[:24]


def shared_learner_cache(root: Path) -> Path:
    """The one folder every learner once shared (GRADE_TEST_UNPROTECTED=private-cache shows why not)."""
    return root / "jax-submissions"


@dataclass(frozen=True)
class Settings:
    """What the GRADE_* environment asks of the grader. `Settings()` is an empty environment's, except that
    nothing is cached on disk; `Settings.from_environment()` reads the real one. A command-line option that
    overrides a variable (`--require-sandbox`) gives a copy (`dataclasses.replace`); options that are not
    environment settings travel beside it."""

    landlock: bool = True  # learner children restrict themselves with Landlock (GRADE_LANDLOCK=off: not)
    require_sandbox: bool = False  # grade nothing where neither Landlock nor GRADE_SANDBOX holds
    sandbox: str = ""  # GRADE_SANDBOX, the command line put before a learner's child ("": none)
    cache_root: Path | None = None  # GRADE_CACHE_DIR: the folder of the caches kept between runs (None: off)
    course_root: Path | None = None  # GRADE_COURSE_ROOT: the course, wherever the command runs
    unprotected: frozenset[str] = frozenset()  # GRADE_TEST_UNPROTECTED: protections off (tests only)
    hidden_output: bool = False  # GRADE_HIDDEN_SHOWS_OUTPUT=1: hidden reports show learner messages, prints

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ) -> Settings:
        """Reads every GRADE_* setting from `environ` (by default this process's environment)."""
        course_root = environ.get(COURSE_ROOT_ENV, "")
        unprotected = frozenset(filter(None, environ.get(UNPROTECTED_ENV, "").replace(" ", "").split(",")))
        unknown = sorted(unprotected - set(PROTECTIONS))
        if unknown:
            raise CourseError(
                f"{UNPROTECTED_ENV} names {', '.join(unknown)}: the protections are {', '.join(PROTECTIONS)}"
            )
        return cls(
            landlock=environ.get(LANDLOCK_ENV, "").lower() != "off",
            require_sandbox=environ.get(REQUIRE_SANDBOX_ENV, "") == "1",
            sandbox=environ.get(SANDBOX_ENV, ""),
            cache_root=_cache_root(environ),
            course_root=Path(course_root) if course_root else None,
            unprotected=unprotected,
            hidden_output=environ.get(HIDDEN_OUTPUT_ENV, "") == "1",
        )

    @property
    def withholds_text(self) -> bool:
        """Whether hidden-mode reports leave out what learner code said (grader/grading/withheld.py)."""
        return self.protects("hidden-text") and not self.hidden_output

    def protects(self, protection: str) -> bool:
        """Whether `protection` (one of PROTECTIONS) is on: always, but in the tests that show its worth."""
        assert protection in PROTECTIONS, protection
        return protection not in self.unprotected

    def sandbox_words(self) -> list[str]:
        """Returns GRADE_SANDBOX split like a shell line (empty when unset), or raises CourseError."""
        try:
            return shlex.split(self.sandbox)
        except ValueError as exc:
            raise CourseError(f"{SANDBOX_ENV} is not a valid command line: {exc}") from None

    def compilation_cache(self, learner: str | None) -> Path | None:
        """Returns the folder where a child keeps JAX's compiled kernels between runs, or None when off: the
        course's own (`learner` None), or one learner's own (grader/running/kernel_cache.py). A learner gets
        none where unnamed (""), or where Landlock is off, since nothing would keep their child out of other
        learners' folders. JAX keys each entry by the computation, the JAX version and the backend."""
        root = self.cache_root
        if root is None:
            return None
        if learner is None:
            return course_cache(root)
        if not learner:
            return None
        if not self.protects("private-cache"):
            return shared_learner_cache(root)
        return learner_cache(root, learner) if self.landlock else None

    def child_environment(self, workdir: Path, learner: str | None, sandboxed: bool) -> dict[str, str]:
        """The environment of a child (`learner` None: the course's own code): the backend and locale
        variables (as they are when the child starts), a private home, the compilation cache."""
        env = {name: os.environ[name] for name in PASSED_ENV if name in os.environ}
        env.pop("JAX_PLATFORMS", None)
        if jax_platforms():  # the CPU unless GRADE_BACKEND=native
            env["JAX_PLATFORMS"] = jax_platforms()
        for name, default in ALLOCATOR_ENV.items():
            value = os.environ.get(name, default)
            if value is not None:
                env[name] = value
        env.update(HOME=str(workdir), TMPDIR=str(workdir), PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1")
        env.update(HOISTED_CONSTANTS_ENV)
        # A sandbox may run the child as another user, who could not write to the grader's cache folder.
        cache = None if sandboxed else self.compilation_cache(learner)
        if cache is not None:
            # Made here: a child in the Landlock sandbox may write beneath it, but could not create it.
            cache.mkdir(parents=True, exist_ok=True)
            os.utime(cache)  # in use: the last folders pruned (grader/running/kernel_cache.py)
            env.update(
                JAX_COMPILATION_CACHE_DIR=str(cache),
                # Keep every kernel: op-by-op (eager) code compiles many small ones, each in milliseconds.
                JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
                JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="0",
            )
        return env
