"""Mistake: the running total is kept in float16."""

import os

import numpy as np


def running_sum(x, start, stop, folder):
    path = os.path.join(folder, "state.npy")
    total = np.float16(np.load(path)) if start > 0 else np.float16(0)
    out = []
    for value in x[start:stop]:
        total = np.float16(total + np.float16(value))
        out.append(total)
    np.save(path, np.array(total))
    return np.array(out, dtype=np.float32)
