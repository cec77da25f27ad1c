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
- overflow_mid_count: the one family where overflow also depends on the weights. A second row, the
  "drift row", has features +-1/32 along the top eigenvector of the other rows' curvature and a residual
  of 1.2 A at step 0, on the side that the first update pushes further out: the initial weights sit off
  the fit along that eigenvector, and the learning rate (the largest power of two below 1 / curvature)
  moves them most of the way in one step. With init_scale = S_safe, step 0 is finite (the counter goes
  to 1) and step 1 overflows through the drift row (residual above 1.4 A), with the counter at 1: a run
  that keeps the counter on an overflow grows the scale one step early. The drift row's residual stays
  between 1.4 A and 2.4 A afterwards, so the run cycles at S_safe / 2. `_overflow_margins` replays the
  run in numpy (fp16 roundings emulated) and the family redraws until every step is at least 5% away from
  the fp16 overflow threshold and steps 0 to `period` behave as described.
"""

from __future__ import annotations

import numpy as np

N, D = 64, 4
_FEATURE_RANGE = 1.0 / 32.0
_FP16_OVERFLOW = 65520.0  # the smallest fp32 value that the cast to fp16 turns into inf


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


def _overflow_margins(case: dict[str, object]) -> list[tuple[float, int, float]]:
    """Replays the run in float64 with the fp16 roundings of the recipe (the predictions, the cotangent of
    the predictions, the fp16 gradient) and returns, for each step, (scale, counter, ratio): ratio is the
    largest |fp32 cotangent| over the fp16 overflow threshold, so the step overflows when ratio >= 1."""
    x16 = np.asarray(case["x"]).astype(np.float16).astype(np.float64)
    y = np.asarray(case["y"], np.float64)
    w = np.asarray(case["w"], np.float64)
    m = np.zeros_like(w)
    scale, counter, out = float(case["init_scale"]), 0, []
    for k in range(int(case["num_steps"])):
        lr_k = float(case["lr"]) * 0.5 ** (k // int(case["decay_every"]))
        pred = (x16 @ w.astype(np.float16).astype(np.float64)).astype(np.float16).astype(np.float64)
        cotangent = 2.0 * (pred - y) * scale / N
        ratio = float(np.max(np.abs(cotangent))) / _FP16_OVERFLOW
        out.append((scale, counter, ratio))
        if ratio < 1.0:
            grad = (x16.T @ cotangent.astype(np.float16).astype(np.float64)).astype(np.float16)
            m = grad.astype(np.float64) / scale + float(case["momentum"]) * m
            w = w - lr_k * m
            counter += 1
            if counter == int(case["period"]):
                scale, counter = scale * 2.0, 0
        else:
            scale, counter = max(1.0, scale / 2.0), 0
    return out


def overflow_mid_count(rng: np.random.Generator) -> dict[str, object]:
    """Step 0 finite at init_scale = S_safe; step 1 overflows through the drift row with the counter at 1."""
    while True:
        a = int(rng.integers(2, 4))
        big = 1.5 * 2.0**a
        s_safe = 2.0 ** (14 + int(np.log2(N)) - a)
        x, zero_row = _features(rng)
        drift_row = int((zero_row + rng.integers(1, N)) % N)
        others = [i for i in range(N) if i not in (zero_row, drift_row)]
        top = np.linalg.eigh(x[others].T @ x[others])[1][:, -1]
        x[drift_row] = np.where(top >= 0.0, _FEATURE_RANGE, -_FEATURE_RANGE)
        w_true = rng.normal(size=D)
        w_true *= 0.3 * big / np.sqrt(np.mean((x[others] @ w_true) ** 2))
        y = x @ w_true + rng.normal(scale=0.02 * big, size=N)
        side = rng.choice([-1.0, 1.0])
        # The initial weights sit off the fit along `top`, so that the first update moves the drift row's
        # prediction away from its target (by a quarter to three quarters of A): its residual, side * 1.2 A
        # at step 0, grows in size.
        w = w_true + side * rng.uniform(0.75, 1.0) * big / (x[drift_row] @ top) * top
        y[drift_row] = x[drift_row] @ w + side * 1.2 * big
        y[zero_row] = big * rng.choice([-1.0, 1.0])
        curvature = float(np.linalg.eigvalsh(2.0 / N * x.T @ x).max())
        period = int(rng.integers(2, 5))
        case = {
            "x": x.astype(np.float32),
            "y": y.astype(np.float32),
            "w": w.astype(np.float32),
            "lr": float(2.0 ** np.floor(np.log2(1.0 / curvature))),
            "momentum": 0.5,
            "decay_every": int(rng.integers(4, 7)),
            "init_scale": s_safe,
            "period": period,
            "num_steps": int(rng.integers(12, 15)),
            "split": int(rng.integers(3, period + 2)),  # after the overflow, the counter not zero
        }
        steps = _overflow_margins(case)
        pattern = [ratio >= 1.0 for _, _, ratio in steps[: period + 2]]
        if (
            pattern == [False, True] + [False] * period
            and steps[1][1] == 1
            and all(abs(np.log(ratio)) >= np.log(1.05) for _, _, ratio in steps)
        ):
            return case


FAMILIES = {
    "mid_period": mid_period,
    "overflow_start": overflow_start,
    "overflow_mid_count": overflow_mid_count,
}
