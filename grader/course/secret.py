"""Taking GRADE_SECRET out of reach of learner code.

Children get a scrubbed environment, but on Linux a child could still read the grader's own original
environment from /proc/<grader pid>/environ. Once the grader has read the secret it therefore wipes it
from that memory, drops it from os.environ, and marks itself non-dumpable, which makes its /proc files
(memory included) unreadable to other processes of the same user.

This module is the one place that reads GRADE_SECRET; the other GRADE_* variables are read by
grader/settings.py, into a value that is handed on freely, which the secret must never be.
"""

from __future__ import annotations

import ctypes
import os
import sys

from grader.course.cases import SECRET_ENV


def _wipe_from_process_environment(name: str) -> None:
    """Overwrites `name=value` in the C environment block, which /proc/<pid>/environ shows."""
    libc = ctypes.CDLL(None)
    environ = ctypes.POINTER(ctypes.c_void_p).in_dll(libc, "environ")
    prefix = f"{name}=".encode()
    index = 0
    while environ[index]:
        address = environ[index]
        entry = ctypes.string_at(address)
        if entry.startswith(prefix):
            ctypes.memset(address + len(prefix), 0, len(entry) - len(prefix))
        index += 1


def environment_secret() -> str | None:
    """Returns $GRADE_SECRET (None when unset or empty), leaving it where it is."""
    return os.environ.get(SECRET_ENV) or None


def take_secret() -> str | None:
    """Returns $GRADE_SECRET (None when unset or empty) and leaves no trace of it a child could read."""
    secret = environment_secret()
    if secret is None or not sys.platform.startswith("linux"):
        return secret
    try:
        _wipe_from_process_environment(SECRET_ENV)
        pr_set_dumpable = 4
        ctypes.CDLL(None).prctl(pr_set_dumpable, 0, 0, 0, 0)
    except (OSError, ValueError, AttributeError):
        pass  # no libc to talk to: the scrubbed child environment still holds
    os.environ.pop(SECRET_ENV, None)
    return secret
