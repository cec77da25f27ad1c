"""Public case generator for weight_ema (numpy only: the secret is the seed, not this code).

Every case trains pred = x[k] @ w on T = 32 mini-batches of B = 16 rows and D = 4 features, and keeps an
EMA of the weights, evaluated on E = 16 eval rows. Every matrix is built from the 16 x 16 Sylvester
Hadamard matrix H (entries +-1, orthogonal columns):

- a mini-batch is s * (4 columns of H), rows permuted and sign-flipped, so x[k]^T x[k] = 16 s^2 I and the
  gradient of the mean squared error is exactly 2 s^2 (w - w_star) plus the fp16 rounding of the forward
  pass; its targets are x[k] @ w_star plus a fifth column of H times a small amplitude, orthogonal to the
  features, so the noise raises the loss but never moves the weights;
- the eval rows are s_eval * (4 other columns of H) in the same way, and their targets are x_eval @ c plus
  a fifth column times r_eval, so the eval loss of weights v is exactly s_eval^2 |v - c|^2 + r_eval^2 (up to
  the fp32 rounding of y_eval): a distance from the centre c.

The centre c is the initial weights w in `frozen_average`, `slow_average` and `skipped_steps`: the eval
loss then measures how far the EMA has moved from its start, which is a small fraction of how far the
weights moved (the EMA's increments are (1 - decay) times the gap). In `one_step_fit` the centre is
w_star, which the weights reach exactly in one step.

The decays are 1 - 2^-10 (about 0.999) and 1 - 2^-13 (about 0.9999): exact in fp32 and in float64, so
1 - decay is exact whichever way it is computed.
"""

from __future__ import annotations

import numpy as np

T, B, D, E = 32, 16, 4, 16
DECAY_FAST = 1.0 - 2.0**-10  # about 0.999
DECAY_SLOW = 1.0 - 2.0**-13  # about 0.9999
FP16_OVERFLOW = 65520.0  # the smallest value the cast to fp16 turns into inf


def _hadamard() -> np.ndarray:
    h = np.ones((1, 1))
    while h.shape[0] < 16:
        h = np.block([[h, h], [h, -h]])
    return h


_H = _hadamard()


def _orthogonal_block(rng: np.random.Generator, columns: int) -> np.ndarray:
    """`columns` distinct non-constant columns of H (16 rows), rows permuted and sign-flipped: orthogonal."""
    cols = rng.choice(np.arange(1, 16), size=columns, replace=False)
    rows = rng.permutation(16)
    signs = rng.choice([-1.0, 1.0], size=(16, 1))
    return signs * _H[rows][:, cols]


def _off_grid(rng: np.random.Generator, low: float, high: float, toward: np.ndarray) -> np.ndarray:
    """Values of magnitude in [low, high) (inside one binade), each 0.3 to 0.45 of an fp16 spacing away from
    its nearest fp16 value, so every 16-bit rounding moves it by at least 0.3 fp16 spacings (bf16's values
    are fp16 values); the fp16 rounding moves each entry in the direction of the sign of `toward`. Neither
    fp16 neighbour of a value is a midpoint between two bf16 values (bf16 has 3 bits fewer, so its
    midpoints are the fp16 values 4 mod 8 spacings), so every value is at least 1.3 fp16 spacings from a
    bf16 rounding boundary: a first EMA increment smaller than that rounds it to the same bf16 value as the
    initial weights do."""
    size = toward.shape
    sign = rng.choice([-1.0, 1.0], size=size)
    magnitude = rng.uniform(low, high, size=size)
    spacing = 2.0 ** (np.floor(np.log2(magnitude)) - 10)
    grid = np.floor(magnitude / spacing) * spacing
    bad = np.isin(np.round(grid / spacing) % 8, (3, 4))
    while bad.any():
        magnitude = np.where(bad, rng.uniform(low, high, size=size), magnitude)
        grid = np.floor(magnitude / spacing) * spacing
        bad = np.isin(np.round(grid / spacing) % 8, (3, 4))
    # Rounding to nearest goes away from zero (by 1 - frac spacings) when frac > 0.5, towards it otherwise.
    away = sign == np.sign(toward)
    frac = np.where(away, rng.uniform(0.55, 0.7, size=size), rng.uniform(0.3, 0.45, size=size))
    return sign * (grid + frac * spacing)


def _build(
    rng: np.random.Generator,
    *,
    w: np.ndarray,
    w_star: np.ndarray,
    s: float,
    lr: float,
    decay: float,
    centre: np.ndarray,
    r_eval: float,
    loss_scale: float,
    skipped: tuple[int, ...] = (),
    partial: tuple[int, ...] = (),
    noise: float = 2.0**-5,
) -> dict[str, object]:
    x = np.zeros((T, B, D))
    y = np.zeros((T, B))
    for k in range(T):
        block = _orthogonal_block(rng, D + 1)
        x[k] = s * block[:, :D]
        y[k] = x[k] @ w_star + noise * block[:, D]
        if k in skipped:
            # One row of zeros with target +-A: its cotangent 2 * A * S / B is 1.5 * 2^16 = 98304, which
            # fp16 turns into inf, and inf * 0 makes every gradient entry NaN: the step is skipped.
            big = 1.5 * 2.0**16 * B / (2.0 * loss_scale)
            row = int(rng.integers(B))
            x[k, row] = 0.0
            y[k, row] = big * rng.choice([-1.0, 1.0])
        if k in partial:
            # A partial overflow: half the rows carry one feature j only (+-s), with targets A = 1.5 * 2^15 *
            # B / (2 S) (96 to 384) on the other side of their prediction (at most 2.2 in size). Each
            # cotangent, 2 * (pred - y) * S / B, is 49152 within 2.3%: finite in fp16. Feature j's
            # gradient sums 8 of them times s, 8 * 0.25 * 49152 * 0.977 = 96000 or more, which fp16 turns
            # into inf, and only it: the other entries get 0 from these rows and stay finite. The step is
            # skipped only by a test that every entry is finite.
            big = 1.5 * 2.0**15 * B / (2.0 * loss_scale)
            rows = rng.choice(B, size=B // 2, replace=False)
            signs = rng.choice([-1.0, 1.0], size=B // 2)
            x[k, rows] = 0.0
            x[k, rows, int(rng.integers(D))] = s * signs
            y[k, rows] = -signs * big
    s_eval = 1.0
    block = _orthogonal_block(rng, D + 1)
    x_eval = s_eval * block[:, :D]
    y_eval = x_eval @ centre + r_eval * block[:, D]
    return {
        "x": x.astype(np.float32),
        "y": y.astype(np.float32),
        "w": w.astype(np.float32),
        "x_eval": x_eval.astype(np.float32),
        "y_eval": y_eval.astype(np.float32),
        "lr": float(lr),
        "momentum": 0.5,
        "loss_scale": float(loss_scale),
        "decay": float(decay),
    }


def _drift(
    rng: np.random.Generator, decay: float, skipped: tuple[int, ...] = (), partial: tuple[int, ...] = ()
) -> dict[str, object]:
    """Initial weights off the 16-bit grids, 2.1 to 2.9 in size (decay 1 - 2^-10) or 0.2625 to 0.3625
    (decay 1 - 2^-13, where the EMA moves 8 times less: smaller weights keep its fp32 rounding as small
    next to that move); targets 1.5 to 2.5 away from them. The noise in the targets has an amplitude off
    fp16's grid (0.75 to 1.25 times 2^-5), so the targets are not fp16 values: once the weights have
    fitted, the residual is that noise (about 2^-5), and a target rounded to fp16, by up to half an fp16
    spacing of a target up to 10 in size (2^-8), moves the training loss by many tolerances."""
    gap = rng.uniform(1.5, 2.5, size=D) * rng.choice([-1.0, 1.0], size=D)
    size = 2.0 if decay == DECAY_FAST else 0.25
    w = _off_grid(rng, 1.05 * size, 1.45 * size, toward=gap).astype(np.float32).astype(np.float64)
    w_star = np.round((w + gap) * 64.0) / 64.0
    s = float(rng.choice([0.25, 0.5]))
    lr = 0.5 / (2.0 * s * s)  # half the one-step learning rate 1 / (2 s^2)
    steps = T - len(skipped) - len(partial)
    moved = (1.0 - decay**steps) * np.abs(w_star - w).min()
    return _build(
        rng,
        w=w,
        w_star=w_star,
        s=s,
        lr=lr,
        decay=decay,
        centre=w,
        r_eval=0.25 * moved,
        loss_scale=2.0 ** int(rng.integers(10, 13)),
        skipped=skipped,
        partial=partial,
        noise=2.0**-5 * rng.uniform(0.75, 1.25),
    )


def frozen_average(rng: np.random.Generator) -> dict[str, object]:
    """decay 1 - 2^-10: the fp32 EMA moves about 3% of the way to the weights; a 16-bit EMA cannot move."""
    return _drift(rng, DECAY_FAST)


def slow_average(rng: np.random.Generator) -> dict[str, object]:
    """decay 1 - 2^-13: the fp32 EMA moves about 0.4% of the way; still many 16-bit spacings."""
    return _drift(rng, DECAY_SLOW)


def skipped_steps(rng: np.random.Generator) -> dict[str, object]:
    """4 to 6 of the steps 2..31 overflow in fp16 and are skipped: the EMA must not move on them. On two of
    them the overflow is partial (one gradient entry inf, the others finite), on the rest every entry is
    NaN. Exactly two of them are consecutive, and no other two: `optax.apply_if_finite` with
    `max_consecutive_errors` of 2 or more skips every one of them in every case, and with 1 applies the
    second of the pair in every case (never a verdict that depends on the draw)."""
    count = int(rng.integers(4, 7))
    while True:
        steps = [int(k) for k in rng.choice(np.arange(2, T), size=count, replace=False)]
        if np.count_nonzero(np.diff(sorted(steps)) == 1) == 1:
            break
    skipped, partial = tuple(sorted(steps[2:])), tuple(sorted(steps[:2]))
    return _drift(rng, float(rng.choice([DECAY_FAST, DECAY_SLOW])), skipped, partial)


def one_step_fit(rng: np.random.Generator) -> dict[str, object]:
    """The weights reach w_star exactly in the first step (learning rate 1 / (2 s^2), everything on fp16's
    grid), and the eval centre is w_star: the eval loss of the weights is r_eval^2 after that step, while
    the EMA is still near its start. The initial weights (1.05 to 1.45 in size) are bf16 values and w_star
    is 1 to 1.5 further from zero, so the weights (overshooting by at most half that) stay below 3.7 in
    size: every bf16 increment of the average, 2^-10 of the weights or of their gap to it, is below 2^-8,
    half the bf16 spacing of an average between 1 and 2, and every bf16 form of the average stays at the
    initial weights."""
    gap = rng.uniform(1.0, 1.5, size=D)
    w = np.round(rng.uniform(1.05, 1.45, size=D) * rng.choice([-1.0, 1.0], size=D) * 64.0) / 64.0
    gap = gap * np.sign(w)  # away from zero: w_star (2 to 3 in size) stays far from a zero-started average
    w_star = np.round((w + gap) * 64.0) / 64.0
    s = 0.5
    return _build(
        rng,
        w=w,
        w_star=w_star,
        s=s,
        lr=1.0 / (2.0 * s * s),
        decay=DECAY_FAST,
        centre=w_star,
        r_eval=2.0**-12,
        loss_scale=2.0 ** int(rng.integers(10, 13)),
    )


FAMILIES = {
    "frozen_average": frozen_average,
    "slow_average": slow_average,
    "skipped_steps": skipped_steps,
    "one_step_fit": one_step_fit,
}
