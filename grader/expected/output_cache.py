"""Outputs of the course's own files kept on disk between runs.

An entry is keyed by everything that could change the numbers: the file's content, the case's seed and a
digest of its inputs, and the platform (Python, numpy, jax and jaxlib versions, every installed JAX plugin,
and the variables that choose the device or its arithmetic: JAX_PLATFORMS, CUDA_VISIBLE_DEVICES, XLA_FLAGS,
JAX_DEFAULT_MATMUL_PRECISION, and the configuration every child gets: constants hoisted into arguments).
Change any of them and the entry is simply not found.

Two stores: the practice cases' outputs (public by design), kept whenever they are computed; and the
reference's outputs on the hidden cases, written only by `grade prepare` (an autograder image's set-up) in
a folder only its owner may open, and read by hidden-mode grading, so that a fresh container never runs the
reference. Grading itself never writes hidden-case outputs.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import tempfile
from pathlib import Path

import numpy as np

from grader.course.cases import Case
from grader.running.packages import installed_packages
from grader.settings import HOISTED_CONSTANTS_ENV, PASSED_ENV, Settings, jax_platforms

DEVICE_ENV = ("JAX_PLATFORMS", "CUDA_VISIBLE_DEVICES", "XLA_FLAGS", "JAX_DEFAULT_MATMUL_PRECISION")
assert set(DEVICE_ENV) <= set(PASSED_ENV), "the children see the variables the key is made of"


def _installed() -> tuple[str, ...]:
    """Versions of the packages that compute the numbers, and every JAX plugin (a backend)."""
    return tuple(
        f"{name}=={version}"
        for name, version in sorted(installed_packages().items())
        if name in ("numpy", "jax", "jaxlib", "ml-dtypes") or name.startswith(("jax-", "jaxlib-", "libtpu"))
    )


def platform_fingerprint() -> str:
    """Returns a digest of what decides the numbers besides the code and the inputs."""
    parts = [platform.python_version(), platform.machine(), *_installed()]
    device = {name: os.environ.get(name, "") for name in DEVICE_ENV}
    device["JAX_PLATFORMS"] = jax_platforms() or ""  # what the children run with, not this process's
    parts += [f"{name}={device[name]}" for name in DEVICE_ENV]
    parts += [f"{name}={value}" for name, value in sorted(HOISTED_CONSTANTS_ENV.items())]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


class OutputStore:
    """Outputs in one folder, one file per entry key; `private` folders are made readable by their owner
    only (they hold hidden-case outputs, as secret as the secret they come from)."""

    def __init__(self, folder: Path, private: bool = False) -> None:
        self.folder, self.private = folder, private

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.npy"

    def has(self, key: str) -> bool:
        return self._path(key).is_file()

    def load(self, key: str) -> np.ndarray | None:
        """Returns the stored output, or None when there is none (or it cannot be read)."""
        try:
            return np.load(self._path(key), allow_pickle=False)
        except (OSError, ValueError, EOFError):
            return None

    def save(self, key: str, values: np.ndarray) -> None:
        """Stores an output; a store that cannot be written only costs time."""
        self._write(self._path(key), lambda handle: np.save(handle, np.asarray(values), allow_pickle=False))

    def load_document(self, key: str) -> dict | None:
        """Returns a stored JSON document (a reference's precision profile), or None."""
        try:
            document = json.loads(self._path(key).with_suffix(".json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return document if isinstance(document, dict) else None

    def save_document(self, key: str, document: dict) -> None:
        self._write(
            self._path(key).with_suffix(".json"), lambda handle: handle.write(json.dumps(document).encode())
        )

    def _write(self, target: Path, write) -> None:
        try:
            if self.private:
                self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
                self.folder.chmod(0o700)  # also when it existed: nobody else may list or read it
            target.parent.mkdir(mode=0o700 if self.private else 0o777, parents=True, exist_ok=True)
            # NamedTemporaryFile makes the file readable and writable by its owner only.
            with tempfile.NamedTemporaryFile(dir=target.parent, suffix=".tmp", delete=False) as handle:
                write(handle)
            os.replace(handle.name, target)  # whole or not at all, also with graders running side by side
        except OSError:
            pass


def practice_store(settings: Settings) -> OutputStore | None:
    """The practice cases' outputs, under the cache folder (None when the cache is off)."""
    root = settings.cache_root
    return None if root is None else OutputStore(root / "outputs")


def hidden_store(settings: Settings) -> OutputStore | None:
    """The reference's hidden-case outputs that `grade prepare` keeps (None when the cache is off)."""
    root = settings.cache_root
    return None if root is None else OutputStore(root / "hidden-outputs", private=True)


def entry_key(file_digest: str, case: Case) -> str:
    text = f"{file_digest}|{case.seed}|{case.digest}|{platform_fingerprint()}"
    return hashlib.sha256(text.encode()).hexdigest()


@functools.cache
def _profiler_digest() -> str:
    """A digest of the profiler's code (grader/profile*.py), read once per process."""
    profiler = b"".join(
        path.read_bytes() for path in sorted((Path(__file__).parent.parent / "profile").glob("*.py"))
    )
    return hashlib.sha256(profiler).hexdigest()


def profile_key(file_digest: str, case: Case) -> str:
    """The key of a file's precision profile on a case: also keyed by the profiler's own code, whose
    changes change the profile."""
    text = f"profile|{entry_key(file_digest, case)}|{_profiler_digest()}"
    return hashlib.sha256(text.encode()).hexdigest()
