"""Public case generator for dynamic_loss_scaling (numpy only: the secret is the seed, not this code).

Every case is built so that overflow depends on the loss scale alone, with a wide margin:

- one row of x is all zeros and its target is +-A with A = 1.5 * 2**a, so its prediction is exactly 0,
  its residual is exactly -+A at every step, and its fp32 cotangent at the fp16 cast is exactly
  2 * A * S / N = 1.5 * 2**k for a power-of-two scale S and a power-of-two N;
- fp16 holds 1.5 * 2**15 = 49152 but turns 1.5 * 2**16 = 98304 into inf, so a power-of-two scale S is
  safe when S <= S_safe = 2**(14 + log2(N) - a) and overflows when S >= 2 * S_safe;
- the other rows have |residual| well below A and small features (|x| <= 1/32), so their cotangents and
  the fp16 gradient dot products stay far below 65504 at S_safe.

The scale trajectory is therefore fixed by (init_scale, period, factor, min_scale, S_safe), whatever the
weights do, and every scale is an exact power of two.

The inf_gradients family gives the big row features +-2**-12 instead of zeros, so an overflow puts +-inf
(never inf * 0 = NaN) into every gradient entry; its prediction stays below 0.01 A, so the margin above still
holds. Its S_safe is 2**16 or 2**17, a scale that only an fp32 loss can carry.
"""

from __future__ import annotations

import numpy as np

_FEATURE_RANGE = 1.0 / 32.0


def _regression(
    rng: np.random.Generator, *, sizes: tuple[tuple[int, int], ...] = (), tiny_row: bool = False
) -> tuple[dict[str, object], float]:
    """Draws x, y, w, lr, momentum; returns them with S_safe, the largest scale that does not overflow.

    `sizes`, when given, lists the allowed (N, a) pairs. With `tiny_row` the big row's features are
    +-2**-12 instead of zeros, the other targets are clipped to 0.4 A instead of 0.7 A and the initial
    weights are three times smaller, so that no other row overflows with it.
    """
    if sizes:
        n, a = sizes[int(rng.integers(len(sizes)))]
        d = int(rng.integers(3, 9))
    else:
        n = int(rng.choice([32, 64]))
        d = int(rng.integers(3, 9))
        a = int(rng.integers(3, 6))
    big = 1.5 * 2.0**a  # |target| of the zero row

    # Features on a 2**-12 grid so they are exact in fp16.
    x = np.round(rng.uniform(-_FEATURE_RANGE, _FEATURE_RANGE, size=(n, d)) * 4096.0) / 4096.0
    zero_row = int(rng.integers(n))
    x[zero_row] = 0.0
    if tiny_row:
        x[zero_row] = rng.choice([-1.0, 1.0], size=d) / 4096.0

    w_true = rng.normal(size=d)
    w_true *= 0.35 * big / np.sqrt(np.mean((x @ w_true) ** 2))
    y = x @ w_true + rng.normal(scale=0.05 * big, size=n)
    clip = 0.4 if tiny_row else 0.7
    y = np.clip(y, -clip * big, clip * big)
    y[zero_row] = big * rng.choice([-1.0, 1.0])

    w0 = rng.normal(scale=(0.05 if tiny_row else 0.15) * np.linalg.norm(w_true) / np.sqrt(d), size=d)

    # Step size from the curvature of the MSE, rounded to a power of two: with momentum 0.5 both
    # momentum * m and lr * m are exact in fp32, so fused multiply-adds (jit) and separate ops (eager)
    # give the same weights.
    curvature = float(np.linalg.eigvalsh(2.0 / n * x.T @ x).max())
    lr = float(2.0 ** np.round(np.log2(rng.uniform(0.04, 0.1) / curvature)))
    momentum = 0.5

    s_safe = 2.0 ** (14 + int(np.log2(n)) - a)
    case = {
        "x": x.astype(np.float32),
        "y": y.astype(np.float32),
        "w": w0.astype(np.float32),
        "lr": lr,
        "momentum": momentum,
    }
    return case, s_safe


def overflow_burst(rng: np.random.Generator) -> dict[str, object]:
    """init_scale 8 or 16 times too large: 3 or 4 skipped steps and back-offs, then grow/overflow cycles."""
    case, s_safe = _regression(rng)
    case.update(
        init_scale=s_safe * 2.0 ** int(rng.integers(3, 5)),
        period=int(rng.integers(2, 4)),
        factor=2.0,
        min_scale=1.0,
        num_steps=int(rng.integers(28, 37)),
    )
    return case


def growth(rng: np.random.Generator) -> dict[str, object]:
    """init_scale 2 or 4 times below the limit, short period: growth events, then overflow on every growth."""
    case, s_safe = _regression(rng)
    below, period = [(1, 2), (1, 3), (2, 2)][int(rng.integers(3))]
    case.update(
        init_scale=s_safe / 2.0**below,
        period=period,
        factor=2.0,
        min_scale=1.0,
        num_steps=int(rng.integers(24, 33)),
    )
    return case


def min_scale_floor(rng: np.random.Generator) -> dict[str, object]:
    """factor 4 and min_scale = S_safe: backing off from 2 * S_safe lands on the floor, not S_safe / 2."""
    case, s_safe = _regression(rng)
    case.update(
        init_scale=s_safe * 2.0 ** int(rng.choice([3, 5])),
        period=int(rng.integers(2, 4)),
        factor=4.0,
        min_scale=s_safe,
        num_steps=int(rng.integers(24, 33)),
    )
    return case


def inf_gradients(rng: np.random.Generator) -> dict[str, object]:
    """The big row has features +-2**-12, not zeros: its overflow gives +-inf gradients and no NaN.

    S_safe is 2**16 or 2**17, beyond fp16 range, so a loss kept in fp16 overflows where fp32 does not.
    """
    case, s_safe = _regression(rng, sizes=((32, 3), (64, 3), (64, 4)), tiny_row=True)
    case.update(
        init_scale=s_safe * 2.0 ** int(rng.integers(-1, 2)),
        period=int(rng.integers(2, 4)),
        factor=2.0,
        min_scale=1.0,
        num_steps=int(rng.integers(24, 33)),
    )
    return case


FAMILIES = {
    "overflow_burst": overflow_burst,
    "growth": growth,
    "min_scale_floor": min_scale_floor,
    "inf_gradients": inf_gradients,
}
