from pathlib import Path

import numpy as np


def running_sum(x, start, stop, folder):
    total = np.float32(float(Path(folder, "total.txt").read_text())) if start else np.float32(0)
    out = []
    for value in x[start:stop]:
        total = np.float32(total + value)
        out.append(total)
    Path(folder, "total.txt").write_text(repr(float(total)))
    np.save(Path(folder, "state.npy"), np.array(total))
    return np.array(out, dtype=np.float32)
