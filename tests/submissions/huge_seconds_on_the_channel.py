"""Expect: error: protocol error on the grader's private result channel"""

# A case event whose "seconds" is 10**400, written on every open descriptor at import: float() of it raises
# OverflowError, which once killed the grader's reader thread, so that no case came back and the problem
# passed. GRADE_TEST_UNPROTECTED=strict-protocol,positive-pass shows it passing.

import json
import os

import numpy as np

EVENT = {"event": "case", "label": "toy", "index": 0, "seconds": 10**400, "returned": {"kind": "other"}}
for fd in [int(name) for name in os.listdir("/proc/self/fd") if int(name) > 2]:
    try:
        os.write(fd, (json.dumps(EVENT) + "\n").encode())
    except OSError:
        pass


def scaled_sum(x, scale):
    return np.zeros(2, np.float32)
