"""Expect: pass: all 4 cases within the tolerance"""

import ctypes
import os
import time

import numpy as np

# A process in its own process group, meant to outlive the grading; the grader ends it with the run. It
# names itself (what /proc/<pid>/comm shows) so that the tests can look for it. The import waits until it
# has: on a busy machine a run that ended before the process had started would prove nothing.
ready, told = os.pipe()
if os.fork() == 0:
    try:
        os.setpgid(0, 0)
        ctypes.CDLL(None).prctl(15, b"left-behind", 0, 0, 0)  # PR_SET_NAME
        os.write(told, b".")
        time.sleep(1234.5)
    finally:
        os._exit(0)  # never back into the child's code, whatever failed
os.close(told)  # so that the read below ends if the process dies before it writes
if os.read(ready, 1) != b".":
    raise RuntimeError("the process meant to be left behind did not start")
os.close(ready)


def scaled_sum(x, scale):
    return np.array([x.sum() * scale, x.max()], dtype=np.float32)
