"""Public case generator for fp8_delayed_scaling (numpy only: the secret is the seed, not this code).

Every case trains the same shapes: T = 12 steps, batches of B = 16 rows, D_IN = 8 features, D_OUT = 4
outputs, so B * D_OUT = 64 is a power of two and 2 / 64 is exact. The features (but in `rounding_ties`)
are continuous random fp32 values whose standard deviation is 2**-4.5 to 2**-2.5, so the amaxes sit far
below the fp8 ranges and the scales after step 0 are far from 1 (s_x * s_w at least 2**5, s_x * s_g at
least 2**17, measured).

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
- `scale_boundaries`: step 0 (all scales 1) is designed so that its forward pass is exact in fp32 and
  its residuals, fixed by the targets, are zero but in three entries. The update takes the largest
  weight from 1.625 to 1.75 + 2**-13, just past 448 / 2**8 (fp16 or bf16 master weights, a bf16 dW
  and the amax of the e4m3 copy all give 1.75, and s_w of step 2 twice as large); the largest feature
  is 56 * (1 + 2**-8) and the largest gradient 1.75 * 2**jg * (1 + 2**-8), just past boundaries of s_x
  and s_g that the amax of an fp8 copy (56, 1.75 * 2**jg) lands on; and eight rows predict values with
  more than bf16's 8 significant bits, with targets equal to them (a bf16 forward product leaves a
  residual where the recipe has none).
- `subnormal_gradients`: targets so small that every gradient of step 0, whose s_g is 1, lies below
  2**-15.4, in e5m2's subnormal range (steps of 2**-16): e5m2 rounds most of them to 0 or +-2**-16, where
  float8_e5m2fnuz (steps of 2**-17) or no quantisation keeps more, and the first update differs.
- `rounding_ties`: s_x is 2**13 or 2**15 from step 1 on (every step's amax is the same) and every
  feature times s_x is exactly a midpoint between two e4m3 values, which the exact scale rounds to the
  even neighbour. XLA's float32 exp2 is off by about 4.8e-7 relative at these exponents, so a scale from
  jnp.exp2 sends about half the features to the other neighbour, a whole fp8 step away (its features are
  small, 84 * 2**-15 to 84 * 2**-13 at most, and its learning rate large, 2**14 to 2**20).

The margin is 0 in `steady`, 0 to 2 in `scale_boundaries`, 2 in `rounding_ties` and 1 or 2 elsewhere.
history_len is 2, 3 or 4. The learning rate is a power of two, so lr * dW is exact and fused multiply-adds
cannot change the weights.
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


def _signs(rng: np.random.Generator, size: int | None = None):
    """Random signs, +-1.0."""
    return rng.choice([-1.0, 1.0], size=size)


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


def scale_boundaries(rng: np.random.Generator) -> dict[str, object]:
    """A designed step 0 that leaves the amaxes of x and g (step 0) and of W (step 1) just above the
    boundaries where a scale halves, by less than fp8, fp16 or bf16 can resolve."""
    sigma = 2.0 ** rng.uniform(-4.5, -2.5)
    x = rng.normal(scale=sigma, size=(T, B, D_IN))
    i, i4, j1, j2 = (int(f) for f in rng.permutation(D_IN)[:4])
    o, o3 = (int(c) for c in rng.integers(D_OUT, size=2))
    sign = float(rng.choice([-1.0, 1.0]))
    # Weights on e4m3's grid (4 significant bits, exact in fp16 and bf16), all below 1.5 in magnitude but
    # w[i, o] = +-1.625; row j1 between 0.5 and 1.5, row j2 all +-1.
    w = rng.normal(scale=0.6, size=(D_IN, D_OUT))
    w[j1] = rng.uniform(0.5, 1.5, size=D_OUT) * _signs(rng, D_OUT)
    mag = np.clip(np.abs(w), 2.0**-4, 1.5)
    binade = 2.0 ** np.floor(np.log2(mag))
    w = np.sign(w) * np.minimum(np.round(mag / binade * 8.0) / 8.0 * binade, 1.5)
    w[j2] = _signs(rng, D_OUT)
    w[i, o] = sign * 1.625
    w_true = w.copy()  # w[i, o] is pushed past 1.75 at step 0, then trained back towards 1.625
    y = x @ w_true
    y += rng.normal(scale=0.02 * float(np.sqrt(np.mean(y[1:] ** 2))), size=y.shape)
    lr = _learning_rate(rng, x[1:])
    log_lr = int(np.log2(lr))

    # Step 0 (every scale 1): x0 and the weights are exact in e4m3 and every product of the forward pass is
    # exact in fp32, so y0 = pred0 - 32 * g0 gives the step-0 gradient g0 exactly; it is zero but in rows b1,
    # b2 (output o) and b3 (output o3).
    x0, g0 = np.zeros((B, D_IN)), np.zeros((B, D_OUT))
    b1, b2, b3, b4, *rest = (int(r) for r in rng.permutation(B))
    jg = int(rng.integers(-10, -8))
    # dW0[i, o] = -sign * (2**-3 + 2**-13) / lr: w[i, o] moves from 1.625 to 1.75 + 2**-13.
    x0[b1, i] = _signs(rng) * 2.0 ** (-3 - log_lr - jg)
    g0[b1, o] = -sign * 2.0**-3 / lr / x0[b1, i]  # +-2**jg
    x0[b2, i] = _signs(rng) * 2.0**-log_lr
    g0[b2, o] = -sign * 2.0**-13 / lr / x0[b2, i]  # +-2**-13
    # The largest |g0| is 1.75 * 2**jg * (1 + 2**-8), in a row of zero features (it does not reach dW0).
    g0[b3, o3] = _signs(rng) * 1.75 * 2.0**jg * (1.0 + 2.0**-8)
    # The largest |x0| is 56 * (1 + 2**-8); its row's targets are its product with w, so its g0 is zero.
    x0[b4, i4] = _signs(rng) * 56.0 * (1.0 + 2.0**-8)
    x8 = x0.copy()
    x8[b4, i4] = np.sign(x0[b4, i4]) * 56.0  # what e4m3 keeps of it
    # Eight rows whose predictions 32 * w[j1] +- 2**-7 * w[j2] need more than bf16's 8 significant bits.
    for b in rest[:8]:
        x0[b, j1] = _signs(rng) * 32.0
        x0[b, j2] = _signs(rng) * 2.0**-7
        x8[b] = x0[b]
    x[0], y[0] = x0, x8 @ w - 32.0 * g0
    return {
        "x": x.astype(np.float32),
        "y": y.astype(np.float32),
        "w": w.astype(np.float32),
        "lr": lr,
        "history_len": int(rng.integers(2, 5)),
        "margin": int(rng.integers(0, 3)),
    }


def subnormal_gradients(rng: np.random.Generator) -> dict[str, object]:
    """Targets so small that the step-0 gradients (s_g = 1) lie in e5m2's subnormal range."""
    data = _regression(rng)
    x = data["x"]
    w_true = rng.normal(size=(D_IN, D_OUT))
    w_true *= 2.0 ** rng.uniform(-11.0, -10.5) / np.abs(x[0] @ w_true).max()
    y = x @ w_true
    y += rng.normal(scale=0.02 * float(np.sqrt(np.mean(y**2))), size=y.shape)
    w = 0.3 * w_true + rng.normal(scale=0.05 * float(np.sqrt(np.mean(w_true**2))), size=w_true.shape)
    return {
        "x": x.astype(np.float32),
        "y": y.astype(np.float32),
        "w": w.astype(np.float32),
        "lr": _learning_rate(rng, x),
        "history_len": int(rng.integers(2, 5)),
        "margin": int(rng.integers(1, 3)),
    }


def _e4m3_midpoints() -> np.ndarray:
    """The midpoints between neighbouring float8_e4m3fn values from 0 to 448 (2**-10 the first), ascending."""
    subnormals = np.arange(8) * 2.0**-9
    normals = np.array([(1.0 + j / 8.0) * 2.0**e for e in range(-6, 9) for j in range(8)])
    grid = np.concatenate([subnormals, normals[normals <= 448.0]])
    return (grid[:-1] + grid[1:]) / 2.0


def rounding_ties(rng: np.random.Generator) -> dict[str, object]:
    """Every feature times s_x is an e4m3 rounding midpoint, and s_x is 2**13 or 2**15 from step 1 on.

    margin = 2 and n in {13, 15}; every step has one feature +-84 * 2**-n, the largest, so from step 1 on
    max(hist_x) is that, k = floor(log2(448 / (84 * 2**-n))) = n + 2 and s_x = 2**n (84 = 0.75 * 448 / 4
    keeps log2 of the ratio 0.415 away from an integer). The other features are normal (standard deviation
    2**-2.5 to 2**-1.5 of 84, times 2**-n, clipped to 0.85 of it) moved to the nearest e4m3 midpoint times
    2**-n, so x * s_x is exactly a midpoint and the cast rounds it to the even neighbour. XLA's float32 exp2
    is off by about 4.8e-7 relative at 13, 15, 17 and -13, -15 (the same on both declared platforms): a
    scale from jnp.exp2 (of k - margin, of k, or of the inverse scale's exponent) is not a power of two,
    x * s_x lands just off the midpoint, and about half the features round to the other neighbour, a whole
    fp8 step away; every loss from step 1 on moves (ratio 100 or more over 300 cases, measured). The
    margin is 2 so that k itself (15 or 17) is inexact too (exp2 is exact at 14 and 16), and so that
    jnp.exp2(k) / 2**margin is caught as well.
    """
    n, margin = int(rng.choice([13, 15])), 2
    top = 84.0  # largest |x| * s_x: 0.75 * 448 / 2**margin, a midpoint (between 80 and 88)
    sigma = top * 2.0 ** rng.uniform(-2.5, -1.5)
    scaled = np.clip(rng.normal(scale=sigma, size=(T, B, D_IN)), -0.85 * top, 0.85 * top)
    midpoints = _e4m3_midpoints()
    scaled = np.sign(scaled) * midpoints[np.abs(np.abs(scaled)[..., None] - midpoints).argmin(axis=-1)]
    for t in range(T):
        scaled[t, rng.integers(B), rng.integers(D_IN)] = _signs(rng) * top
    x = scaled * 2.0**-n
    w_true = rng.normal(scale=rng.uniform(0.5, 1.0), size=(D_IN, D_OUT))
    y = x @ w_true
    y += rng.normal(scale=0.02 * float(np.sqrt(np.mean(y**2))), size=y.shape)
    w0 = rng.normal(scale=0.1 * float(np.sqrt(np.mean(w_true**2))), size=(D_IN, D_OUT))
    return _case(rng, {"x": x, "y": y, "w": w0}, x, margin=margin)


FAMILIES = {
    "steady": steady,
    "activation_spike": activation_spike,
    "gradient_spike": gradient_spike,
    "activation_drop": activation_drop,
    "scale_boundaries": scale_boundaries,
    "subnormal_gradients": subnormal_gradients,
    "rounding_ties": rounding_ties,
}
