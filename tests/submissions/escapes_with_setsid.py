"""Expect: pass: all 4 cases within the tolerance"""

import ctypes
import os
import time

import numpy as np

# Leaves the child's session with setsid() and forks again, so that the process left behind belongs to no
# session, process group or parent of the grader's: only a subreaper (the grader) still finds it. It names
# itself (what /proc/<pid>/comm shows) before that last fork, so that the tests can look for it from its
# first instant. The import waits until the escape is done: on a busy machine the forked process may not
# have run before the cases end, and a run that ended first would kill it inside the session and prove
# nothing about escapes.
first = os.fork()
if first == 0:
    escaped = 1  # what this process exits with: 0 once the escapee is started
    try:
        os.setsid()
        ctypes.CDLL(None).prctl(15, b"escaped-setsid", 0, 0, 0)  # PR_SET_NAME, inherited by the fork below
        if os.fork() == 0:
            time.sleep(1234.5)
            os._exit(0)
        escaped = 0
    finally:
        os._exit(escaped)  # never back into the child's code, whatever failed
if os.waitpid(first, 0)[1] != 0:
    raise RuntimeError("the process meant to escape the session did not start")


def scaled_sum(x, scale):
    return np.array([x.sum() * scale, x.max()], dtype=np.float32)
