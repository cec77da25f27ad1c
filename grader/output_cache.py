"""Outputs of the course's own files kept on disk between runs, for practice cases only.

An entry is keyed by everything that could change the numbers: the file's content, the case's seed and a
digest of its inputs, and the platform (Python, numpy, jax and jaxlib versions, every installed JAX plugin,
and the variables that choose the device: JAX_PLATFORMS, CUDA_VISIBLE_DEVICES, XLA_FLAGS). Change any of
them and the entry is simply not found. Hidden-case outputs are never written: they would sit on disk
where a later submission could read them.
"""

from __future__ import annotations

import hashlib
import os
import platform
import tempfile
from pathlib import Path

import numpy as np

from grader.cases import Case, inputs_digest
from grader.packages import installed_packages
from grader.settings import PASSED_ENV, cache_root

DEVICE_ENV = ("JAX_PLATFORMS", "CUDA_VISIBLE_DEVICES", "XLA_FLAGS")
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
    parts += [f"{name}={os.environ.get(name, '')}" for name in DEVICE_ENV]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _folder() -> Path | None:
    root = cache_root()
    return None if root is None else root / "outputs"


def entry_key(file_digest: str, case: Case) -> str:
    text = f"{file_digest}|{case.seed}|{inputs_digest(case)}|{platform_fingerprint()}"
    return hashlib.sha256(text.encode()).hexdigest()


def load(key: str) -> np.ndarray | None:
    """Returns the stored output, or None when there is none (or it cannot be read)."""
    folder = _folder()
    if folder is None:
        return None
    try:
        return np.load(folder / key[:2] / f"{key}.npy", allow_pickle=False)
    except (OSError, ValueError, EOFError):
        return None


def save(key: str, values: np.ndarray) -> None:
    """Stores an output; a cache that cannot be written only costs time."""
    folder = _folder()
    if folder is None:
        return
    target = folder / key[:2] / f"{key}.npy"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=target.parent, suffix=".tmp", delete=False) as handle:
            np.save(handle, np.asarray(values), allow_pickle=False)
        os.replace(handle.name, target)  # whole or not at all, also with graders running side by side
    except OSError:
        pass
