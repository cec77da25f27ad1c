"""Case generator for loss_scaling (numpy only: the grader's process must not need jax).

Every case is a least-squares problem y ~ x @ w with a known optimum and N = 4096 rows. In the
first four families the residuals are tiny (root mean square about 2^-16; 2^-9 in `clipped`), so the
per-row cotangent of the mean squared error, 2 * r_i / N, is about 2^-27, below half of fp16's
smallest subnormal (2^-24): without loss scaling every fp16 gradient is exactly zero. All loss
scales are powers of two from 2^16 to 2^18: large enough that the scale itself overflows fp16 (its
largest finite value is 65504), small enough that the scaled fp16 gradients stay finite.

Families:
- underflow: unit-scale features; clipping never triggers for the correct recipe.
- tiny_gradients: features of size 2^-10, so even the unscaled gradient (not only the per-row
  cotangent) lies below fp16's smallest subnormal; the learning rate is large to match.
- clipped: max_norm is a fraction of the first gradient norm, so the correct run clips its
  first steps and then stops clipping.
- small_updates: weights far from zero and a small learning rate, so each step's update is
  below half an fp16 ulp of the weight: only an fp32 master copy accumulates it.
- rounded_predictions: predictions of size about 1 and optimum weights exactly representable in
  fp16, fitted to within noise of 2^-15. The run converges to those weights, and from then on the
  fp16 rounding of pred16 (spacing 2^-11 to 2^-10 near 1) is most of the residual: anything that
  rounds the prediction differently (not at all, twice, or against a rounded y) moves the late
  losses by a large factor.
"""

from __future__ import annotations

import numpy as np

N_ROWS = 4096
N_FEATURES = 8


def _features(rng: np.random.Generator, scale: float) -> np.ndarray:
    """(N, D) float32 features whose values are exactly representable in fp16."""
    x = rng.standard_normal((N_ROWS, N_FEATURES)) * scale
    return x.astype(np.float16).astype(np.float32)


def _scaled_to_rms(x: np.ndarray, direction: np.ndarray, rms: float) -> np.ndarray:
    """direction rescaled so that x @ direction has the given root mean square."""
    xd = x.astype(np.float64) @ direction
    return direction * (rms / np.sqrt(np.mean(xd**2)))


def _round_sig(v: float, digits: int = 4) -> float:
    return float(f"{v:.{digits - 1}e}")


def _case(
    rng: np.random.Generator,
    *,
    x_scale: float,
    eta: tuple[float, float],
    steps: tuple[int, int],
    max_norm_log10: tuple[float, float] | None = None,
    clip_frac: tuple[float, float] | None = None,
    r_log2: float = -16.0,
    big_weights: bool = False,
) -> dict[str, object]:
    x = _features(rng, x_scale)
    x64 = x.astype(np.float64)
    r_rms = 2.0**r_log2 * rng.uniform(0.8, 1.25)
    if big_weights:
        # Optimum weights of magnitude 1.25..1.75 times a power of two (away from binade
        # edges), with an initial offset about 0.3% of that: the residuals stay small while
        # the weights are about 180 times larger than their distance to the optimum.
        magnitude = rng.uniform(1.25, 1.75, N_FEATURES) * rng.choice([-1.0, 1.0], N_FEATURES)
        target = 180.0 * r_rms
        xm = np.sqrt(np.mean((x64 @ magnitude) ** 2))
        w_star = magnitude * 2.0 ** np.round(np.log2(target / xm))
        offset = rng.uniform(0.5, 1.0, N_FEATURES) * rng.choice([-1.0, 1.0], N_FEATURES)
        offset = _scaled_to_rms(x, offset, r_rms)
        noise_rms = 0.02 * r_rms
    else:
        w_star = _scaled_to_rms(x, rng.standard_normal(N_FEATURES), r_rms)
        offset = _scaled_to_rms(x, rng.standard_normal(N_FEATURES), r_rms)
        noise_rms = 0.1 * r_rms
    y = (x64 @ w_star + noise_rms * rng.standard_normal(N_ROWS)).astype(np.float32)
    w = (w_star + offset).astype(np.float32)

    # Curvature of the mean squared error along a feature: 2 * mean(x^2).
    curvature = 2.0 * float(np.mean(x64**2))
    lr = _round_sig(rng.uniform(*eta) / curvature)
    grad0 = 2.0 * x64.T @ (x64 @ w.astype(np.float64) - y) / N_ROWS
    if clip_frac is not None:
        # A fraction of the first gradient norm: the correct run clips its first steps.
        max_norm = _round_sig(rng.uniform(*clip_frac) * float(np.linalg.norm(grad0)))
    else:
        # Far above every gradient norm of the correct run, far below the scaled norms.
        max_norm = _round_sig(10.0 ** rng.uniform(*max_norm_log10), 2)
    return {
        "x": x,
        "y": y,
        "w": w,
        "lr": lr,
        "loss_scale": float(2 ** int(rng.integers(16, 19))),
        "max_norm": max_norm,
        "num_steps": int(rng.integers(steps[0], steps[1] + 1)),
    }


def underflow(rng: np.random.Generator) -> dict[str, object]:
    """Unit features, tiny residuals: unscaled fp16 row gradients are all zero."""
    return _case(rng, x_scale=1.0, eta=(0.08, 0.12), steps=(16, 24), max_norm_log10=(-3.3, -2.7))


def tiny_gradients(rng: np.random.Generator) -> dict[str, object]:
    """Features of size 2^-10: the true (unscaled) gradient itself underflows fp16."""
    return _case(
        rng,
        x_scale=2.0**-10,
        eta=(0.08, 0.12),
        steps=(16, 24),
        max_norm_log10=(-5.0, -4.3),
    )


def clipped(rng: np.random.Generator) -> dict[str, object]:
    """max_norm below the first gradient norm: the correct run clips, then stops clipping."""
    return _case(
        rng,
        x_scale=1.0,
        eta=(0.2, 0.25),
        steps=(16, 24),
        clip_frac=(0.4, 0.6),
        r_log2=-9.0,
    )


def small_updates(rng: np.random.Generator) -> dict[str, object]:
    """Each update is below half an fp16 ulp of the weight it changes."""
    return _case(
        rng,
        x_scale=1.0,
        eta=(0.015, 0.02),
        steps=(30, 30),
        max_norm_log10=(-3.3, -2.7),
        big_weights=True,
    )


def rounded_predictions(rng: np.random.Generator) -> dict[str, object]:
    """Predictions of size 1 fitted to about 2^-15: at the optimum the fp16 rounding of pred16 dominates."""
    x = _features(rng, 1.0)
    x64 = x.astype(np.float64)
    # Optimum weights exactly representable in fp16, so that a run that converges reaches them.
    w_star = rng.uniform(0.25, 0.5, N_FEATURES) * rng.choice([-1.0, 1.0], N_FEATURES)
    w_star = w_star.astype(np.float16).astype(np.float64)
    y = (x64 @ w_star + 2.0**-15 * rng.standard_normal(N_ROWS)).astype(np.float32)
    offset = _scaled_to_rms(x, rng.standard_normal(N_FEATURES), 2.0**-6 * rng.uniform(0.8, 1.25))
    w = (w_star + offset).astype(np.float32)
    curvature = 2.0 * float(np.mean(x64**2))
    return {
        "x": x,
        "y": y,
        "w": w,
        "lr": _round_sig(rng.uniform(0.4, 0.6) / curvature),
        "loss_scale": float(2 ** int(rng.integers(16, 19))),
        # Far above the correct run's gradient norms (below 0.04), below the scaled ones (above 1).
        "max_norm": _round_sig(10.0 ** rng.uniform(-1.0, -0.5), 2),
        "num_steps": int(rng.integers(16, 25)),
    }


FAMILIES = {
    "underflow": underflow,
    "tiny_gradients": tiny_gradients,
    "clipped": clipped,
    "small_updates": small_updates,
    "rounded_predictions": rounded_predictions,
}
