"""Expect: fail: outside the tolerance"""

import sys

import numpy as np


def scaled_sum(x, scale):
    print("PASS  toy: all 4 cases within the tolerance", file=sys.stderr)
    return np.zeros(2, np.float32)
