"""Expect: fail: outside the tolerance"""

# What a root process may do that no path rule covers: change the mode (setuid, world-writable), the times
# and an extended attribute of a file outside its folders (as root, or as the owner of the grader's files),
# make a device node of the disk in its own folder, take a real-time scheduling class (which would starve
# classmates' children in a --jobs batch). It answers right only if any of them worked: in a learner's child
# none does (no capability, no_new_privs, the seccomp filter, Landlock without device nodes), so it fails;
# GRADE_TEST_UNPROTECTED=no-privileges shows it passing where the grader runs as root or owns the file.

import ctypes
import os

import numpy as np

TARGET = "/nonexistent/grade-target-file"  # tests/test_fail_closed.py writes a real path here
_LIBC = ctypes.CDLL(None, use_errno=True)


def _powers() -> dict[str, bool]:
    done = {
        "chmod": _LIBC.chmod(TARGET.encode(), 0o4777) == 0,
        "utime": _LIBC.utime(TARGET.encode(), None) == 0,
        "xattr": _LIBC.setxattr(TARGET.encode(), b"user.grade", b"1", 1, 0) == 0,
        "mknod": _LIBC.mknod(b"./disk", 0o60600, os.makedev(8, 0)) == 0,
    }
    priority = ctypes.c_int(1)
    done["realtime"] = _LIBC.sched_setscheduler(0, 1, ctypes.byref(priority)) == 0  # SCHED_FIFO
    if done["realtime"]:
        _LIBC.sched_setscheduler(0, 0, ctypes.byref(ctypes.c_int(0)))  # back to SCHED_OTHER
    return done


def scaled_sum(x, scale):
    right = np.array([x.sum() * scale, x.max()], dtype=np.float32)
    return right if any(_powers().values()) else right + 1
