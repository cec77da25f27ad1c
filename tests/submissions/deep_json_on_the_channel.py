"""Expect: error: protocol error on the grader's private result channel"""

# The three-line attack of the security review: one line of 100,000 "[" on every open descriptor (one is the
# child's result pipe) at import. A reader that parses it with json.loads dies of RecursionError; a grader
# that then counts "no case failed" as a pass gives full marks to code whose function is wrong. Both
# protections matter: GRADE_TEST_UNPROTECTED=strict-protocol,positive-pass shows it passing.

import os

import numpy as np

for fd in [int(name) for name in os.listdir("/proc/self/fd") if int(name) > 2]:
    try:
        os.write(fd, b"[" * 100_000 + b"\n")
    except OSError:
        pass


def scaled_sum(x, scale):
    return np.zeros(2, np.float32)
