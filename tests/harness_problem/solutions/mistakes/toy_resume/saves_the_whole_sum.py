"""Mistake: the saved state is the sum of all of x, not the running total."""

import os

import numpy as np


def running_sum(x, start, stop, folder):
    path = os.path.join(folder, "state.npy")
    total = np.float32(np.load(path)) if start > 0 else np.float32(0)
    out = []
    for value in x[start:stop]:
        total = np.float32(total + value)
        out.append(total)
    np.save(path, np.array(x.sum(), dtype=np.float32))
    return np.array(out, dtype=np.float32)
