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
    """Two rows, one feature x = +-A with A a power of two from 2^16 to 2^20, zero targets, lr = 1 / (2 A^2).

    Every operation of the step is exact, and the step removes exactly the bf16 part of the kernel. What is
    left is the part of the fp32 initial kernel below bf16 resolution, which only an fp32 master copy keeps
    (a bf16 master copy, or an fp32 step on fp32 params, ends at a loss of exactly 0). A is large so that
    even a small remainder gives a loss far above the absolute tolerance.
    """
    a = 2.0 ** int(rng.integers(16, 21))
    sign = float(rng.choice([1.0, -1.0]))
    x = (np.array([[a], [-a]]) * sign).astype(np.float32)
    y = np.zeros(2, dtype=np.float32)
    return {"seed": _seed(rng), "x": x, "y": y, "lr": 0.5 / a**2, "loss_scale": _loss_scale(rng)}


def input_probe(rng: np.random.Generator) -> dict[str, object]:
    """Two rows, one feature x = +-A(1 + 2^-8) with A a power of two from 2^-4 to 2^-2, targets that bf16
    rounds to exactly +-A K with K = 1.75 * 2^k (k from 12 to 14), lr = 1 / (2 A^2).

    x and y are ties that bf16 rounds to even: x to +-A, y to +-A K (both targets sit half a bf16 step
    above those values, so their fp32 sum is one bf16 step of A K, where the bf16 sum is 0). The flax
    kernel (|w| < 2.28) is negligible next to K, so with bf16 x and y the step moves the kernel to w + K
    (K plus the part of w below bf16 resolution in exact arithmetic), which bf16 rounds to K, and leaves
    the bias at 0: the bf16 loss after the step is exactly 0, whatever the initial kernel. fp32 x makes the
    kernel step 1 + 2^-8 times too large, K / 256 more, seven eighths of a bf16 step at K, so the kernel
    rounds to the next bf16 value above K; fp32 y moves the bias off 0 by 2^(k-8) / A. Either makes the
    loss after the step nonzero.
    """
    a = 2.0 ** int(rng.integers(-4, -1))
    k = 2.0 ** int(rng.integers(12, 15))
    sign = float(rng.choice([1.0, -1.0]))
    target = a * 1.75 * k  # A K, a bf16 value with an even last bit
    half_step = a * k * 2.0**-8  # half the bf16 spacing at A K (which lies in [A 2^k, A 2^(k+1)))
    x = (np.array([[a], [-a]]) * sign * (1.0 + 2.0**-8)).astype(np.float32)
    y = (np.array([target, -target]) * sign + half_step).astype(np.float32)
    return {"seed": _seed(rng), "x": x, "y": y, "lr": 0.5 / a**2, "loss_scale": _loss_scale(rng)}


FAMILIES = {
    "random_regression": random_regression,
    "rounded_targets": rounded_targets,
    "master_probe": master_probe,
    "input_probe": input_probe,
}
