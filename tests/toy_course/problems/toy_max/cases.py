"""Cases of the second toy problem: numpy only."""

from __future__ import annotations

import numpy as np


def vector(rng: np.random.Generator) -> dict[str, object]:
    return {"x": rng.normal(size=8).astype(np.float32)}


FAMILIES = {"vector": vector}
