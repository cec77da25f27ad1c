"""Public case generator for bf16_train_step (numpy only: the secret is the seed, not this code).

Shapes are fixed per family, so that cases of one family reuse the operations JAX compiled for the first.
"""

from __future__ import annotations

import numpy as np


def _seed(rng: np.random.Generator) -> float:
    return float(rng.integers(0, 2**31 - 1))


def _loss_scale(rng: np.random.Generator) -> float:
    return float(2.0 ** rng.integers(6, 13))


def random_regression(rng: np.random.Generator) -> dict[str, object]:
    """Plain noisy linear data: shows an update that is loss_scale times too large."""
    n, d = 64, 8
    x = rng.normal(size=(n, d)).astype(np.float32)
    y = (x @ rng.normal(size=d) + rng.normal(scale=0.5, size=n)).astype(np.float32)
    lr = float(rng.uniform(0.01, 0.2))
    return {"seed": _seed(rng), "x": x, "y": y, "lr": lr, "loss_scale": _loss_scale(rng)}


def rounded_targets(rng: np.random.Generator) -> dict[str, object]:
    """Targets 256 + d with d in [0, 1), which bf16 rounds to exactly 256, and negligible inputs.

    With lr = 0.5 the step puts the bias on exactly 256, so the bf16 loss after the step is 0, while the
    same params scored in fp32 still see every d (a loss near 1/3).
    """
    n, d = 128, 4
    x = (rng.choice([-1.0, 1.0], size=(n, d)) * 2.0**-24).astype(np.float32)
    y = (256.0 + rng.uniform(0.0, 1.0, size=n)).astype(np.float32)
    return {"seed": _seed(rng), "x": x, "y": y, "lr": 0.5, "loss_scale": _loss_scale(rng)}


def master_probe(rng: np.random.Generator) -> dict[str, object]:
    """Two rows, one feature x = +-A(1 + 2^-8) with A a power of two, zero targets, lr = 1 / (2 A^2).

    In bf16, x is exactly +-A (a tie, rounded to even), every operation of the step is exact, and the step
    removes exactly the bf16 part of the weight. What is left is the part of the fp32 initial weight below
    bf16 resolution, which only an fp32 master copy keeps (a bf16 master copy ends at a loss of exactly 0);
    a step that saw x in fp32 overshoots by 2^-7 of the weight, more than that remainder.
    """
    a = 2.0 ** int(rng.integers(6, 11))
    sign = float(rng.choice([1.0, -1.0]))
    x = (np.array([[a], [-a]]) * sign * (1.0 + 2.0**-8)).astype(np.float32)
    y = np.zeros(2, dtype=np.float32)
    return {"seed": _seed(rng), "x": x, "y": y, "lr": 0.5 / a**2, "loss_scale": _loss_scale(rng)}


FAMILIES = {
    "random_regression": random_regression,
    "rounded_targets": rounded_targets,
    "master_probe": master_probe,
}
