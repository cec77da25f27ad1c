import os

import numpy as np


def running_sum(x, start, stop, folder):
    path = os.path.join(folder, "state.npy")
    total = float(np.load(path)) if start > 0 else 0.0
    out = []
    for value in x[start:stop].tolist():
        total = float(np.float32(total + value))
        out.append(total)
    np.save(path, np.float32(total))
    return np.asarray(out, dtype=np.float32)
