"""Public case generator for fp8_delayed_scaling (numpy only: the secret is the seed, not this code).

Every case trains the same shapes: T = 12 steps, batches of B = 16 rows, D_IN = 8 features, D_OUT = 4
outputs, so B * D_OUT = 64 is a power of two and 2 / 64 is exact. The features are continuous random
fp32 values whose standard deviation is 2**-4.5 to 2**-2.5, so the amaxes sit far below the fp8 ranges
and the scales after step 0 are far from 1 (s_x * s_w at least 2**5, s_x * s_g at least 2**18, measured).

- `steady`: batches of one size throughout, margin 0.
- `activation_spike`: at one step t0 (3 to 5) a single feature of a single row is 2**6 to 2**7 times
  the largest feature of every other step. The delayed s_x of that step fits the earlier amaxes within
  a factor 2**(margin + 1), so the outlier times s_x is at least 2**(5 - margin) * 448 (8.8 * 448 or
  more measured): the correct run saturates it to 448, and without the clip it is NaN. The outlier's
  feature has a true weight of zero, so its saturated value does not disturb the fit much.
- `gradient_spike`: at one step t0 (3 to 5) one row has all-zero features and one target entry 2**6 to
  2**7 times the largest target of any step. Its residual is that target exactly, and its gradient
  entry times the delayed s_g is 10.8 * 57344 or more (measured): the correct run saturates it, and
  without the clip it is inf (inf times the zero features is NaN in dW). The zero features keep it out
  of dW.
- `activation_drop`: from step t1 (4 to 6) on, every feature (and so every target) is 2**4 to 2**6
  times smaller. The history keeps the large amaxes for history_len more steps, so the delayed scale
  stays low for exactly that long, while a scale from the current amax jumps at once.

In every family but `steady` the margin is 1 or 2. history_len is 2, 3 or 4. The learning rate is a
power of two, so lr * dW is exact and fused multiply-adds cannot change the weights.
"""

from __future__ import annotations

import numpy as np

T, B, D_IN, D_OUT = 12, 16, 8, 4


def _regression(rng: np.random.Generator, *, dead_feature: int | None = None) -> dict[str, np.ndarray]:
    """Draws x (T, B, D_IN), w_true (D_IN, D_OUT), y = x @ w_true + noise, and small initial weights."""
    std = 2.0 ** rng.uniform(-4.5, -2.5)
    x = rng.normal(scale=std, size=(T, B, D_IN))
    w_true = rng.normal(scale=rng.uniform(0.5, 1.0), size=(D_IN, D_OUT))
    if dead_feature is not None:
        w_true[dead_feature] = 0.0
    y = x @ w_true
    y += rng.normal(scale=0.02 * float(np.sqrt(np.mean(y**2))), size=y.shape)
    w0 = rng.normal(scale=0.1 * float(np.sqrt(np.mean(w_true**2))), size=(D_IN, D_OUT))
    return {"x": x, "y": y, "w": w0}


def _learning_rate(rng: np.random.Generator, x: np.ndarray) -> float:
    """A power of two near 0.3..0.6 over the largest curvature of the per-step MSE (2/64 * x_t^T x_t)."""
    curvature = max(float(np.linalg.eigvalsh(2.0 / (B * D_OUT) * xt.T @ xt).max()) for xt in x)
    return float(2.0 ** np.round(np.log2(rng.uniform(0.3, 0.6) / curvature)))


def _case(
    rng: np.random.Generator, data: dict[str, np.ndarray], lr_x: np.ndarray, margin: int
) -> dict[str, object]:
    return {
        "x": data["x"].astype(np.float32),
        "y": data["y"].astype(np.float32),
        "w": data["w"].astype(np.float32),
        "lr": _learning_rate(rng, lr_x),
        "history_len": int(rng.integers(2, 5)),
        "margin": margin,
    }


def steady(rng: np.random.Generator) -> dict[str, object]:
    """Batches of one size all along; margin 0."""
    data = _regression(rng)
    return _case(rng, data, data["x"], margin=0)


def activation_spike(rng: np.random.Generator) -> dict[str, object]:
    """One feature of one row at step t0 is 2**6..2**7 times the largest feature of the other steps."""
    k = int(rng.integers(D_IN))
    data = _regression(rng, dead_feature=k)
    t0, row = int(rng.integers(3, 6)), int(rng.integers(B))
    lr_x = data["x"].copy()
    others = np.abs(np.delete(data["x"], t0, axis=0)).max()
    data["x"][t0, row, k] = rng.choice([-1.0, 1.0]) * others * 2.0 ** rng.uniform(6.0, 7.0)
    return _case(rng, data, lr_x, margin=int(rng.integers(1, 3)))


def gradient_spike(rng: np.random.Generator) -> dict[str, object]:
    """One row at step t0 has zero features and a target entry 2**6..2**7 times the largest target."""
    data = _regression(rng)
    t0, row, col = int(rng.integers(3, 6)), int(rng.integers(B)), int(rng.integers(D_OUT))
    big = np.abs(data["y"]).max() * 2.0 ** rng.uniform(6.0, 7.0)
    data["x"][t0, row] = 0.0
    data["y"][t0, row, col] = rng.choice([-1.0, 1.0]) * big
    return _case(rng, data, data["x"], margin=int(rng.integers(1, 3)))


def activation_drop(rng: np.random.Generator) -> dict[str, object]:
    """From step t1 on, the features and targets are 2**4..2**6 times smaller."""
    data = _regression(rng)
    t1 = int(rng.integers(4, 7))
    factor = 2.0 ** -rng.uniform(4.0, 6.0)
    data["x"][t1:] *= factor
    data["y"][t1:] *= factor
    return _case(rng, data, data["x"], margin=int(rng.integers(1, 3)))


FAMILIES = {
    "steady": steady,
    "activation_spike": activation_spike,
    "gradient_spike": gradient_spike,
    "activation_drop": activation_drop,
}
