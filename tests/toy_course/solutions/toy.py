import numpy as np


def scaled_sum(x, scale):
    return np.array([x.sum() * scale, x.max()], dtype=np.float32)
