"""Cases of the toy problem: numpy only."""

from __future__ import annotations

import numpy as np


def small(rng: np.random.Generator) -> dict[str, object]:
    return {"x": rng.normal(size=4).astype(np.float32), "scale": float(rng.integers(2, 5))}


def large(rng: np.random.Generator) -> dict[str, object]:
    return {"x": rng.normal(size=64).astype(np.float32) * 100, "scale": float(rng.integers(5, 9))}


FAMILIES = {"small": small, "large": large}
