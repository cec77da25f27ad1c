"""Cases of the harness toy problem: numpy only."""

from __future__ import annotations

import numpy as np


def vector(rng: np.random.Generator) -> dict[str, object]:
    return {"x": rng.uniform(1.0, 2.0, size=6).astype(np.float32), "split": int(rng.integers(2, 5))}


FAMILIES = {"vector": vector}
