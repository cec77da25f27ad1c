"""Public case generator for checkpoint_resume (numpy only: the secret is the seed, not this code).

Every case trains pred = x @ w on N = 64 rows and D = 4 features, in two calls split at step `split`.
As in dynamic_loss_scaling, overflow depends on the loss scale alone: one row of x is all zeros and its
target is +-A with A = 1.5 * 2**a, so its residual is exactly -+A at every step and the fp32 cotangent of
its prediction is exactly 2 * A * S / N = 1.5 * 2**k for a power-of-two scale S. fp16 holds
1.5 * 2**15 but turns 1.5 * 2**16 into inf, so a power-of-two scale S is safe when
S <= S_safe = 2**(14 + log2(N) - a) and overflows when S >= 2 * S_safe; the other rows' residuals stay
below 0.7 A, far inside the range at S_safe. The scale trajectory is therefore fixed by
(init_scale, period, S_safe) whatever the weights do, and `scale_trajectory` below computes it, so the
split can be put where the resumed state matters.

- mid_period: small weights, a loss still falling at the split, the split one to four steps after the
  first learning-rate decay, at a step where the growth counter is not zero and the scale is no longer
  init_scale.
- overflow_start: init_scale 2**j times too large, so the first j steps all overflow and are skipped; the
  split is at step j, when the scale has just come down to S_safe and the weights are still exactly w.
  The weights are large (|w| in [1024, 4096], predictions about 150 times the residuals) and each entry
  of w lies 7/16 of an fp16 spacing away from the nearest fp16 value, so a resumed run whose master
  weights went through fp16 starts from different fp32 weights, and the fp16 copies that the forward
  pass sees soon differ too.
"""

from __future__ import annotations

import numpy as np

N, D = 64, 4
_FEATURE_RANGE = 1.0 / 32.0


def scale_trajectory(
    init_scale: float, s_safe: float, period: int, num_steps: int
) -> list[tuple[float, int]]:
    """Returns (scale, counter) before each step: skip and halve above s_safe, double after `period` finite
    steps in a row."""
    scale, counter, out = init_scale, 0, []
    for _ in range(num_steps):
        out.append((scale, counter))
        if scale <= s_safe:
            counter += 1
            if counter == period:
                scale, counter = scale * 2.0, 0
        else:
            scale, counter = max(1.0, scale / 2.0), 0
    return out


def _features(rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """Features on a 2**-12 grid in [-1/32, 1/32] (exact in fp16), with one all-zero row."""
    x = np.round(rng.uniform(-_FEATURE_RANGE, _FEATURE_RANGE, size=(N, D)) * 4096.0) / 4096.0
    zero_row = int(rng.integers(N))
    x[zero_row] = 0.0
    return x, zero_row


def _learning_rate(rng: np.random.Generator, x: np.ndarray, low: float, high: float) -> float:
    """A power of two between low and high over the largest curvature of the MSE (exact fp32 updates)."""
    curvature = float(np.linalg.eigvalsh(2.0 / N * x.T @ x).max())
    return float(2.0 ** np.round(np.log2(rng.uniform(low, high) / curvature)))


def _fp16_spacing(values: np.ndarray) -> np.ndarray:
    """The distance between consecutive fp16 numbers at each (normal, nonzero) value."""
    return 2.0 ** (np.floor(np.log2(np.abs(values))) - 10.0)


def mid_period(rng: np.random.Generator) -> dict[str, object]:
    """Resume mid-run: counter not zero, scale moved from init_scale, learning rate decayed once."""
    a = int(rng.integers(2, 4))
    big = 1.5 * 2.0**a
    s_safe = 2.0 ** (14 + int(np.log2(N)) - a)
    x, zero_row = _features(rng)
    w_true = rng.normal(size=D)
    w_true *= 0.35 * big / np.sqrt(np.mean((x @ w_true) ** 2))
    y = np.clip(x @ w_true + rng.normal(scale=0.02 * big, size=N), -0.7 * big, 0.7 * big)
    y[zero_row] = big * rng.choice([-1.0, 1.0])
    w = rng.normal(scale=0.15 * np.linalg.norm(w_true) / np.sqrt(D), size=D)

    period = int(rng.integers(2, 5))
    init_scale = s_safe / 2.0 ** int(rng.integers(1, 3))
    decay_every = int(rng.integers(5, 8))
    num_steps = 24
    trajectory = scale_trajectory(init_scale, s_safe, period, num_steps)
    splits = [
        k
        for k in range(decay_every, decay_every + 4)
        if trajectory[k][1] != 0 and trajectory[k][0] != init_scale
    ]
    return {
        "x": x.astype(np.float32),
        "y": y.astype(np.float32),
        "w": w.astype(np.float32),
        "lr": _learning_rate(rng, x, 0.06, 0.12),
        "momentum": 0.5,
        "decay_every": decay_every,
        "init_scale": init_scale,
        "period": period,
        "num_steps": num_steps,
        "split": int(rng.choice(splits)),
    }


def overflow_start(rng: np.random.Generator) -> dict[str, object]:
    """The first `split` steps all overflow; large weights 7/16 of an fp16 spacing off the fp16 grid."""
    big = 1.5  # a = 0
    s_safe = 2.0 ** (14 + int(np.log2(N)))
    x, zero_row = _features(rng)
    w_true = rng.choice([-1.0, 1.0], size=D) * rng.uniform(1024.0, 4096.0, size=D)
    offset = rng.normal(size=D)
    offset *= 0.6 * big / np.max(np.abs(x @ offset))  # initial residuals of the other rows below 0.7 A
    w = np.float16(w_true + offset).astype(np.float64)
    w += rng.choice([-1.0, 1.0], size=D) * (7.0 / 16.0) * _fp16_spacing(w)
    y = x @ w_true + np.clip(rng.normal(scale=0.02 * big, size=N), -0.1 * big, 0.1 * big)
    y[zero_row] = big * rng.choice([-1.0, 1.0])

    skipped = int(rng.integers(5, 8))
    return {
        "x": x.astype(np.float32),
        "y": y.astype(np.float32),
        "w": w.astype(np.float32),  # exact: 7/16 of a spacing needs 4 bits beyond fp16's 11
        "lr": _learning_rate(rng, x, 0.12, 0.24),
        "momentum": 0.5,
        "decay_every": int(rng.integers(3, skipped + 1)),
        "init_scale": s_safe * 2.0**skipped,
        "period": int(rng.integers(2, 5)),
        "num_steps": skipped + int(rng.integers(16, 19)),
        "split": skipped,
    }


FAMILIES = {"mid_period": mid_period, "overflow_start": overflow_start}
