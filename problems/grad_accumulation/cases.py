"""Public case generator for grad_accumulation (numpy only: the secret is the seed, not this code).

Every case is a linear least-squares task cut into M = 24 micro-batches of B = 64 rows and D = 8 features,
`y = x @ w_target + noise`, trained from `w = w_target + offset`. The features lie on the fp16 grid (the cast
to fp16 is exact; `near_fit`: on a grid of 1/8), the learning rate is a power of two near a quarter of
1 / curvature (`near_fit`: an eighth), the momentum is 0.5, and the loss scale and K are powers of two, so
every division by K, by S and by K * S is exact.

Families:
- unclipped: features of size 1, weights of size 2**-8, S = 2**16..2**18; max_norm = 1 is never reached.
- overflowing_sum: feature 0 is a constant 1 and the initial weights are off in that coordinate, so that
  every micro-batch of the first accumulation window puts about 1.4 * 65536 / K into coordinate 0 of its
  scaled gradient, with the same sign: each fits fp16, their sum (about 92000) does not.
- opposing_micro_batches: K = 2, and the two micro-batches of a window share their features while their
  targets sit on opposite sides of a common fit (y = x @ (w_target +- d) + noise): each micro-batch's
  gradient, about 2 |d|, is usually several times max_norm = 3 |offset| (1.8 to 7 times on 90% of the
  micro-batches of the first window, median 3.6), while their mean, about 2 |offset|, usually stays below it
  (0.4 to 1.1 times max_norm, median 0.7).
- clipped: the initial weights are far from the fit and max_norm is 0.3 times the first gradient norm, so
  the first steps are clipped; S is small (2**8..2**10).
- tiny_gradients: features of size 2**-10, so the unscaled gradients (about 2**-23) lie in fp16's subnormal
  range; a learning rate of 2**16 or 2**17 makes them count.
- near_fit: weights of size 1/8 to 1/2 started about 2**-11 from the fit (a few fp16 steps of the weights),
  noise 2**-13, K = 2, lr = 1/16: the residuals are as small as the fp16 rounding of pred, so that rounding
  shows in every loss, and every update is a fraction of the fp16 spacing of the weights. The features, the
  weights and the targets sit on grids coarse enough that every sum inside an fp16 product is exact in fp32,
  so the order in which a platform adds (which moved these losses by up to 8 tolerances with features on the
  fp16 grid) cannot change a rounding.
- cancelling_outliers: K = 2, ordinary data of size 2**-10, S = 2**7 or 2**8, but row 0 of both micro-batches
  of the first window is an outlier: the same features (+-1) and opposite targets +-T. Each of those two
  micro-batch gradients, scaled, is exactly -+24576 in every coordinate plus the other rows' gradient (at most
  2, a quarter of half the fp16 spacing at 24576), so fp16 rounds each to the outlier's part alone and the two
  cancel: the recipe's first step is exactly zero. One fp16 product over the whole window adds the outliers'
  parts first and keeps the rest, so it takes a real first step and its later losses are far lower.
- absorbed_between_outliers: K = 4, S = 2**7 or 2**8; the same pair of outliers, but in the first and the
  last micro-batch of the first window, with two ordinary micro-batches between them whose scaled gradients
  are at most 7 per coordinate (median 3.8). The recipe's fp32 sum keeps them (the outliers cancel, a real
  first step); an fp16 running sum sits at -+24576 (or -+6144 with the loss divided by K) when they arrive,
  where they are below half the fp16 spacing, and rounds them away: its first step is exactly zero."""

from __future__ import annotations

import numpy as np

NUM_MICRO_BATCHES = 24
ROWS = 64
FEATURES = 8


def _fp16_grid(values: np.ndarray) -> np.ndarray:
    """Rounds to the nearest fp16 value and returns float32."""
    return np.asarray(values, np.float64).astype(np.float16).astype(np.float32)


def _power_of_two(value: float) -> float:
    return float(2.0 ** np.round(np.log2(value)))


def _regression(
    rng: np.random.Generator,
    *,
    feature_size: float,
    weight_size: float,
    offset: np.ndarray,
    noise: float = 1.0,
    opposite: np.ndarray | None = None,
    constant_feature: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Returns x (M, B, D), y (M, B) and the initial w (D,), all float32.

    y = x @ (w_target + opposite[m]) + noise, w = w_target + offset. With `opposite`, micro-batch 2j + 1
    repeats the features of micro-batch 2j. With `constant_feature`, feature 0 is 1 in every row.
    """
    shape = (NUM_MICRO_BATCHES, ROWS, FEATURES)
    x = rng.standard_normal(shape) * feature_size
    if opposite is not None:
        x[1::2] = x[0::2]
    if constant_feature:
        x[:, :, 0] = 1.0
    x = _fp16_grid(x)
    w_target = weight_size * rng.standard_normal(FEATURES)
    fits = np.broadcast_to(w_target, (NUM_MICRO_BATCHES, FEATURES))
    if opposite is not None:
        fits = fits + opposite
    y = np.einsum("mbd,md->mb", x.astype(np.float64), fits)
    y = y + noise * weight_size * feature_size * rng.standard_normal((NUM_MICRO_BATCHES, ROWS))
    return x, y.astype(np.float32), (w_target + offset).astype(np.float32)


def _learning_rate(rng: np.random.Generator, feature_size: float) -> float:
    """A power of two near 0.15..0.3 / curvature, the curvature of the mean squared error being 2 |x|^2."""
    return _power_of_two(rng.uniform(0.15, 0.3) / (2.0 * feature_size**2))


def _scale(rng: np.random.Generator, low: int, high: int) -> float:
    return float(2 ** int(rng.integers(low, high + 1)))


# The scaled gradient of an outlier row (features +-1, target +-T) is -+OUTLIER_GRADIENT in every coordinate:
# 1.5 * 2**14 lies on the fp16 grid away from a power of two (the spacing is 16 on both sides, 4 at a quarter
# of it), so fp16 rounds away anything added to it below half that spacing.
OUTLIER_GRADIENT = 1.5 * 2.0**14


def _outlier_target(loss_scale: float) -> float:
    """T such that an outlier row's cotangent, 2 S (pred - T) / B, rounds in fp16 to -OUTLIER_GRADIENT (pred,
    at most a few hundredths, is far below half the fp16 spacing there): T = OUTLIER_GRADIENT * B / (2 S)."""
    return OUTLIER_GRADIENT * ROWS / (2.0 * loss_scale)


def _place_outliers(rng: np.random.Generator, x, y, pair: tuple[int, int], signs, target: float) -> None:
    """Makes row 0 of the two micro-batches `pair` an outlier, in place: the features `signs` (+-1) in both,
    and opposite targets +-target, so their scaled gradients are -+OUTLIER_GRADIENT and cancel exactly."""
    x[list(pair), 0, :] = signs
    sign = rng.choice([-1.0, 1.0])
    y[pair[0], 0], y[pair[1], 0] = sign * target, -sign * target


def _scaled_gradients(x: np.ndarray, y: np.ndarray, w: np.ndarray, loss_scale: float) -> np.ndarray:
    """The scaled gradient S * d loss / d w of each micro-batch of x (m, rows, D) and y (m, rows), float64, as
    the recipe's backward product sees it before its one rounding to fp16: pred and the cotangents
    2 S (pred - y) / B rounded to fp16, their products with the features summed exactly (B = ROWS, also
    when `x` holds only some rows of its micro-batches)."""
    pred16 = _fp16_grid(x.astype(np.float64) @ _fp16_grid(w).astype(np.float64))
    cotangent = _fp16_grid(2.0 * loss_scale * (pred16 - y) / ROWS)
    return np.einsum("mbd,mb->md", x.astype(np.float64), cotangent)


def _case(x, y, w, lr, loss_scale, max_norm, accum_steps) -> dict[str, object]:
    return {
        "x": x,
        "y": y,
        "w": w,
        "lr": lr,
        "momentum": 0.5,
        "loss_scale": loss_scale,
        "max_norm": max_norm,
        "accum_steps": accum_steps,
    }


def unclipped(rng: np.random.Generator) -> dict[str, object]:
    """Ordinary data, clipping never active: the plain recipe, K = 2 or 4."""
    size = 2.0**-8
    x, y, w = _regression(
        rng, feature_size=1.0, weight_size=size, offset=size * rng.standard_normal(FEATURES)
    )
    k = int(rng.choice([2, 4]))
    return _case(x, y, w, _learning_rate(rng, 1.0), _scale(rng, 16, 18), 1.0, k)


def overflowing_sum(rng: np.random.Generator) -> dict[str, object]:
    """The first window's scaled gradients each fit fp16 in coordinate 0, their sum overflows it."""
    k = int(rng.choice([2, 4]))
    loss_scale = _scale(rng, 16, 18)
    # Coordinate 0 of a micro-batch's scaled gradient is 2 * S * mean(residual), about 2 * S * offset[0].
    per_micro_batch = 1.4 * 65536.0 / k * rng.uniform(0.93, 1.07)
    offset0 = per_micro_batch / (2.0 * loss_scale)
    offset = 0.25 * offset0 / np.sqrt(FEATURES) * rng.standard_normal(FEATURES)
    offset[0] = offset0 * rng.choice([-1.0, 1.0])
    x, y, w = _regression(rng, feature_size=1.0, weight_size=2.0**-8, offset=offset, constant_feature=True)
    return _case(x, y, w, _learning_rate(rng, 1.0), loss_scale, 4.0, k)


def opposing_micro_batches(rng: np.random.Generator) -> dict[str, object]:
    """Paired micro-batches pull in opposite directions: each is clipped alone, their mean is not."""
    size = 2.0**-8
    half = size * rng.standard_normal((NUM_MICRO_BATCHES // 2, FEATURES))
    opposite = np.repeat(half, 2, axis=0)
    opposite[1::2] *= -1.0
    offset = size / 5.0 * rng.standard_normal(FEATURES)
    x, y, w = _regression(
        rng, feature_size=1.0, weight_size=size, offset=offset, noise=0.1, opposite=opposite
    )
    max_norm = float(f"{1.5 * 2.0 * np.linalg.norm(offset):.2g}")
    return _case(x, y, w, _learning_rate(rng, 1.0), _scale(rng, 16, 18), max_norm, 2)


def clipped(rng: np.random.Generator) -> dict[str, object]:
    """Far from the fit with a small max_norm: the first steps are clipped. Small loss scale."""
    size = 2.0**-8
    offset = 4.0 * size * rng.standard_normal(FEATURES)
    x, y, w = _regression(rng, feature_size=1.0, weight_size=size, offset=offset)
    max_norm = float(f"{0.3 * 2.0 * np.linalg.norm(offset):.2g}")
    k = int(rng.choice([2, 4]))
    return _case(x, y, w, _learning_rate(rng, 1.0), _scale(rng, 8, 10), max_norm, k)


def tiny_gradients(rng: np.random.Generator) -> dict[str, object]:
    """Features of size 2**-10: the unscaled gradients are fp16 subnormals (about 2**-23)."""
    feature_size, size = 2.0**-10, 2.0**-6
    x, y, w = _regression(
        rng, feature_size=feature_size, weight_size=size, offset=size * rng.standard_normal(FEATURES)
    )
    k = int(rng.choice([2, 4]))
    return _case(x, y, w, _learning_rate(rng, feature_size), _scale(rng, 18, 20), 1e-3, k)


def near_fit(rng: np.random.Generator) -> dict[str, object]:
    """Weights of size 1/8 to 1/2 within a few fp16 steps of the fit, tiny noise: fp16 rounding is the
    signal. Built so that every fp16 product is exact in fp32 before its one rounding to fp16, whatever the
    order of its sum: the features are multiples of 1/8 (|x| <= 4.5), the weights' fp16 copies multiples of
    2**-14, every row's prediction at least 1/8 in size (an fp16 value that is a multiple of 2**-16), and
    the targets multiples of 2**-16; so the residuals, the cotangents 2 S r / B and every product of the
    backward pass are exact too. Platforms may add the terms of a product in different orders: here that
    cannot move a rounding (with features on the fp16 grid, the order alone moved losses by up to 8
    tolerances)."""
    shape = (NUM_MICRO_BATCHES, ROWS, FEATURES)
    magnitude = 2.0 ** rng.uniform(-3.0, -1.0, FEATURES)
    w_target = magnitude * rng.choice([-1.0, 1.0], FEATURES)
    x = np.clip(np.round(8.0 * rng.standard_normal(shape)) / 8.0, -4.5, 4.5)
    small = np.abs(x @ w_target) < 0.125
    while np.any(small):  # draw those rows again until every prediction is at least 1/8 in size
        x[small] = np.clip(np.round(8.0 * rng.standard_normal((int(small.sum()), FEATURES))) / 8.0, -4.5, 4.5)
        small = np.abs(x @ w_target) < 0.125
    noise = 2.0**-13 * rng.standard_normal(shape[:2])
    y = np.round((x @ w_target + noise) * 2.0**16) / 2.0**16
    w = w_target + 2.0**-11 * rng.standard_normal(FEATURES)
    x, y, w = x.astype(np.float32), y.astype(np.float32), w.astype(np.float32)
    return _case(x, y, w, 2.0**-4, _scale(rng, 16, 18), 1.0, 2)


def cancelling_outliers(rng: np.random.Generator) -> dict[str, object]:
    """The first window's two micro-batches each hold one outlier row, with the same features and opposite
    targets: each micro-batch's fp16 gradient rounds to the outlier's part alone, and the two cancel exactly,
    so the recipe's first step is zero. One fp16 product over the window (a single rounding) keeps the other
    rows' gradient and takes a real first step: every later loss shows it."""
    size = 2.0**-10
    loss_scale = _scale(rng, 7, 8)
    # Row 0 of micro-batches 0 and 1: features +-1, targets +-T, scaled gradients exactly -+OUTLIER_GRADIENT
    # (BIG) in every coordinate. With the loss divided by K first, everything below is halved, exactly.
    target = _outlier_target(loss_scale)
    signs = rng.choice([-1.0, 1.0], FEATURES)
    while True:
        offset = size * rng.standard_normal(FEATURES)
        x, y, w = _regression(rng, feature_size=1.0, weight_size=size, offset=offset)
        _place_outliers(rng, x, y, (0, 1), signs, target)
        # The other 63 rows of each micro-batch add their scaled gradient a to -+BIG; it must stay far below
        # half the fp16 spacing at BIG (8) for fp16 to round it away, whatever order the product adds in: at
        # most 1/4 of it (a is computed as the fp16 product computes it; 13 of 2000 cases are drawn again).
        inner = _scaled_gradients(x[0:2, 1:], y[0:2, 1:], w, loss_scale)
        if np.max(np.abs(inner)) <= 2.0**3 / 4:
            break
    return _case(x, y, w, _learning_rate(rng, 1.0), loss_scale, 1.0, 2)


def absorbed_between_outliers(rng: np.random.Generator) -> dict[str, object]:
    """K = 4: the outliers of cancelling_outliers in the first and the last micro-batch of the first window,
    and two ordinary micro-batches between them whose gradients an fp16 running sum rounds away.

    Row 0 of micro-batches 0 and 3 is an outlier (features +-1, targets +-T): each of those two micro-batches'
    scaled gradients rounds in its fp16 product to exactly -+BIG = -+24576 in every coordinate (the other 63
    rows, their features and targets a quarter of the ordinary ones, add at most 2, a quarter of half the fp16
    spacing of 16 at BIG). Micro-batches 1 and 2 are ordinary: started 1.25 / S to 3.25 / S per coordinate
    from the fit, their scaled gradients s1, s2 are about 2 S offset: 1.6 to 6 per coordinate (10th to 90th
    percentile over 500 generated cases), at most 7 (drawn again otherwise), so below half that spacing.

    - The recipe (an fp32 sum, or an fp32 running mean): -BIG + s1 + s2 + BIG = s1 + s2, exactly or within a
      few fp32 units of BIG: the outliers cancel and the first step is that of the two ordinary micro-batches.
    - An fp16 accumulator (accumulated_in_fp16): fl16(fl16(-BIG + s1) + s2) = -BIG, since s1 and s2 are below
      half its spacing; the outlier of micro-batch 3 then cancels it, and the first step is exactly zero. So
      it fails by every later loss, whether it holds the sum of the scaled gradients (which never overflows
      here), the sum of those of loss / K (everything a quarter as large: -+6144, spacing 4, s / 4 at most
      1.75), or MultiSteps' fp16 running mean of the unscaled gradients (about -BIG / (j S) after j
      micro-batches, where the share s / (j S) of a middle one is again below half its spacing, or nearly).

    The noise, of standard deviation 2 / S, about the size of the offset, keeps each loss far from the
    noiseless fit, where one fp16 step of one weight's copy moves the loss by little: so the reference's
    fp32 rounding (the order of its sum, or MultiSteps' running mean) cannot move a loss by much."""
    k = 4
    loss_scale = _scale(rng, 7, 8)
    target = _outlier_target(loss_scale)
    signs = rng.choice([-1.0, 1.0], FEATURES)
    pair, size = [0, k - 1], 2.0**-10
    while True:
        # A micro-batch's scaled gradient is about 2 S offset: a few units per coordinate, at most 7 below.
        offset = rng.uniform(1.25, 3.25, FEATURES) * rng.choice([-1.0, 1.0], FEATURES) / loss_scale
        noise = 2.0 / loss_scale / size  # a standard deviation of 2 / S
        x, y, w = _regression(rng, feature_size=1.0, weight_size=size, offset=offset, noise=noise)
        # The other rows of the outliers' micro-batches: features and targets a quarter as large (the same
        # fit, a quarter of the noise), so their gradient is 16 times smaller and rounds away against BIG.
        x[pair, 1:] = _fp16_grid(x[pair, 1:] / 4.0)
        y[pair, 1:] = y[pair, 1:] / 4.0
        _place_outliers(rng, x, y, (0, k - 1), signs, target)
        inner = _scaled_gradients(x[pair, 1:], y[pair, 1:], w, loss_scale)
        between = _fp16_grid(_scaled_gradients(x[1 : k - 1], y[1 : k - 1], w, loss_scale))
        if np.max(np.abs(inner)) <= 2.0 and np.max(np.abs(between)) <= 7.0:
            break
    return _case(x, y, w, _learning_rate(rng, 1.0), loss_scale, 1.0, k)


FAMILIES = {
    "unclipped": unclipped,
    "overflowing_sum": overflowing_sum,
    "opposing_micro_batches": opposing_micro_batches,
    "clipped": clipped,
    "tiny_gradients": tiny_gradients,
    "near_fit": near_fit,
    "cancelling_outliers": cancelling_outliers,
    "absorbed_between_outliers": absorbed_between_outliers,
}
