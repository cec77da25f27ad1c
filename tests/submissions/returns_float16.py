"""Expect: fail: returned an array of dtype float16"""

import numpy as np


def scaled_sum(x, scale):
    # The right values in a 16-bit dtype: rounding may keep some cases within a tolerance, the dtype none.
    return np.array([x.sum() * scale, x.max()], np.float32).astype(np.float16)
