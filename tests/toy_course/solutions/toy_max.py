import numpy as np


def largest(x):
    return np.array([x.max()], dtype=np.float32)
