"""Where children keep JAX's compiled kernels between runs: one folder for the course's own code, and one
folder per learner, bounded in size and cleaned.

An entry of JAX's compilation cache is an executable stored under a key that names the computation, so
whoever can write a cache folder decides what another process reading it runs: a submission that stores a
different executable under the key of a common kernel (a float32 reshape) would make every classmate graded
after it fail, and could read their compiled code. So no learner ever reads a folder another learner or the
course wrote to: each learner (a checkout, a roster folder, a submitted file) has a folder of their own,
which Landlock lets only that learner's child write (grader/child/landlock.py), and the course's folder is
written and read by the course's own runs alone. Where Landlock does not hold, learner children get no
cache on disk at all.
"""

from __future__ import annotations

import contextlib
import shutil
import stat
import time
from pathlib import Path

from grader.running.folders import usage
from grader.settings import LEARNERS

LEARNER_BYTES = 256 << 20  # one learner's kernels: a whole course compiles to about 20 MB
LEARNER_ENTRIES = 5_000  # and its entries: a whole course compiles to about 1,500 (JAX's cache is flat)
ALL_LEARNERS_BYTES = 2 << 30  # every learner's together, on one machine
UNUSED_SECONDS = 30 * 24 * 3600  # a learner folder untouched this long goes


def _files(folder: Path) -> list[tuple[float, int, Path]]:
    """(modified, size, path) of every file beneath `folder`, oldest first; links are not followed."""
    found = []
    for path in folder.rglob("*"):
        with contextlib.suppress(OSError):
            info = path.lstat()
            if not stat.S_ISDIR(info.st_mode):
                found.append((info.st_mtime, info.st_size, path))
    return sorted(found)


def prune(folder: Path, limit: int = LEARNER_BYTES, entries: int | None = LEARNER_ENTRIES) -> None:
    """Removes the oldest files of one learner's folder until what is left fits in `limit` bytes and, unless
    `entries` is None, in `entries` files, after every folder beneath it (JAX keeps its kernels as files
    side by side: a folder there is not JAX's)."""
    if entries is not None:
        with contextlib.suppress(OSError):
            for path in folder.iterdir():
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path, ignore_errors=True)
    files = _files(folder)
    total, count = sum(size for _, size, _ in files), len(files)
    for _, size, path in files:
        if total <= limit and (entries is None or count <= entries):
            break
        with contextlib.suppress(OSError):
            path.unlink()
            total -= size
            count -= 1


def prune_learners(root: Path, limit: int = ALL_LEARNERS_BYTES, unused: float = UNUSED_SECONDS) -> None:
    """Removes the learner folders untouched for `unused` seconds, then the least recently used ones until
    the rest fit in `limit` bytes."""
    parent = root / LEARNERS
    if not parent.is_dir():
        return
    folders = []
    for folder in parent.iterdir():
        with contextlib.suppress(OSError):
            folders.append((folder.stat().st_mtime, usage(folder)[0], folder))
    folders.sort()
    total = sum(size for _, size, _ in folders)
    for modified, size, folder in folders:
        if total <= limit and time.time() - modified < unused:
            continue
        shutil.rmtree(folder, ignore_errors=True)
        total -= size
