"""Expect: error: out of memory"""

# Starts two small processes (a fresh `python -S` each) that leave the child's session with setsid() and
# hold 800 MB each, while the submission waits for the memory watch, then answers correctly: memory counted
# over the child's session alone never sees them. Graded with --memory-limit 1500M (tests/test_hostile.py,
# tests/test_fail_closed.py), which the 1.6 GB outside the session exceeds; GRADE_TEST_UNPROTECTED=
# process-namespace shows it passing with the memory unseen.

import os
import sys
import time

import numpy as np

HOARD = """
import os, time
os.setsid()
hoard = bytearray(800 << 20)  # zeroed by the kernel as it is touched
for offset in range(0, len(hoard), 4096):
    hoard[offset] = 1
time.sleep(60)
"""

for _ in range(2):
    if os.fork() == 0:
        try:
            os.execv(sys.executable, [sys.executable, "-S", "-c", HOARD])
        finally:
            os._exit(0)
time.sleep(5)


def scaled_sum(x, scale):
    return np.array([x.sum() * scale, x.max()], dtype=np.float32)
