import os

import numpy as np


def running_sum(x, start, stop, folder):
    path = os.path.join(folder, "state.npy")
    offset = np.load(path) if start else np.float32(0)
    out = np.cumsum(np.concatenate([[offset], x[start:stop]]).astype(np.float32), dtype=np.float32)[1:]
    np.save(path, out[-1])
    return out
