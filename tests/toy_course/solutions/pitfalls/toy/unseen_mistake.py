"""Pitfall the cases cannot show: adds zero."""

import numpy as np


def scaled_sum(x, scale):
    return np.array([x.sum() * scale + 0.0, x.max()], dtype=np.float32)
