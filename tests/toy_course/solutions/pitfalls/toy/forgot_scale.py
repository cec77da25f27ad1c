"""Pitfall: the scale is forgotten."""

import numpy as np


def scaled_sum(x, scale):
    return np.array([x.sum(), x.max()], dtype=np.float32)
