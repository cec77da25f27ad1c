"""A submission as the grader takes it: the bytes of one regular file, read once, never a path to follow.

A learner controls what lies in their checkout, links included: a stub that is a symbolic link to the
reference solution, to a classmate's stub or to a file of the grader's user (a CI token) would otherwise be
graded, read or sent out as the learner's own. So the grader opens the file without following any link
below the checkout's root, refuses anything that is not a regular file of a sane size, keeps the bytes, and
the child grades a copy of them written into its private folder (grader/running/isolation.py): the learner's
process never sees the original path.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from grader.running.limits import describe_size

MAX_SUBMISSION_BYTES = 1 << 20  # a stub is a few KB; a MiB leaves room for any honest file


class SubmissionRefused(Exception):
    """The file cannot be graded as a submission; the message says why, for the learner."""


@dataclass(frozen=True)
class Submission:
    """The bytes of one file to grade. `name` is the file's own name (what tracebacks and profiles show),
    `shown` where it was read from, as reports show it."""

    name: str
    source: bytes
    shown: str

    @classmethod
    def of_course_file(cls, path: Path) -> Submission:
        """One of the course's own files (a reference, a pitfall, a variant): trusted, read as it is."""
        return cls(name=path.name, source=path.read_bytes(), shown=str(path.absolute()))


_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # a FIFO must not block the grader


def _open_below(path: Path, below: Path | None) -> int:
    """Opens `path` without following a link in it below `below` (the folder the caller chose), or in its
    last part when `below` is None; returns the file descriptor."""
    parts = [path.name]
    start = path.parent
    if below is not None:
        try:
            parts = list(path.relative_to(below).parts)
        except ValueError:
            raise SubmissionRefused(f"{path} is not inside {below}") from None
        start = below
    folder = os.open(start, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            if stat.S_ISLNK(os.stat(part, dir_fd=folder, follow_symlinks=False).st_mode):
                raise OSError(errno.ELOOP, "a linked folder")  # O_DIRECTORY would answer ENOTDIR
            inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder)
            os.close(folder)
            folder = inner
        return os.open(parts[-1], _OPEN_FLAGS, dir_fd=folder)
    finally:
        os.close(folder)


def _refusal(path: Path, exc: OSError) -> str:
    if exc.errno == errno.ELOOP:  # what O_NOFOLLOW answers for a link
        return (
            f"{path.name} is a symbolic link, or lies in a linked folder: the grader grades a file's own "
            "bytes, never what a link points to (commit the file itself)"
        )
    if exc.errno == errno.ENOENT:
        return f"no submission file at {path}"
    return f"{path} cannot be read: {exc.strerror or exc}"


def read_submission(path: Path, below: Path | None = None) -> Submission:
    """Reads the file at `path` once: a regular file of at most MAX_SUBMISSION_BYTES, reached without
    following a symbolic link anywhere below `below` (a learner's checkout), or, without `below`, in the
    file's own name. Raises SubmissionRefused with a message that says why not."""
    try:
        fd = _open_below(path, below)
    except OSError as exc:
        raise SubmissionRefused(_refusal(path, exc)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SubmissionRefused(f"{path.name} is not a regular file (a device, a pipe or a folder)")
        if info.st_size > MAX_SUBMISSION_BYTES:
            raise SubmissionRefused(
                f"{path.name} is {describe_size(info.st_size)}: a submission may be at most "
                f"{describe_size(MAX_SUBMISSION_BYTES)}"
            )
        with os.fdopen(os.dup(fd), "rb") as handle:
            source = handle.read(MAX_SUBMISSION_BYTES + 1)
    except OSError as exc:
        raise SubmissionRefused(f"{path} cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(source) > MAX_SUBMISSION_BYTES:  # it grew while being read
        raise SubmissionRefused(f"{path.name} is larger than {describe_size(MAX_SUBMISSION_BYTES)}")
    return Submission(name=path.name, source=source, shown=str(path))
