"""Public case generator for dynamic_loss_scaling (numpy only: the secret is the seed, not this code).

Every case trains pred = x @ w on N = 64 rows and D = 4 features. Overflow is built to depend on the loss
scale alone, with a wide margin:

- one row of x, the big row, is all zeros and its target is +-A with A = 1.5 * 2**a, so its prediction is
  exactly 0, its residual is exactly -+A at every step, and its fp32 cotangent at the fp16 cast is exactly
  2 * A * S / N = 1.5 * 2**k for a power-of-two scale S;
- fp16 holds 1.5 * 2**15 = 49152 but turns 1.5 * 2**16 = 98304 into inf, so a power-of-two scale S is
  safe when S <= S_safe = 2**(14 + log2(N) - a) = 2**(20 - a) and overflows when S >= 2 * S_safe;
- the other rows have residuals below A and small features (|x| <= 1/32), so their cotangents and
  the fp16 gradient dot products stay far below 65504 at S_safe.

The scale trajectory is then fixed by (init_scale, period, factor, min_scale, S_safe), whatever the
weights do, and every scale is an exact power of two. `replay` runs the recipe in float64 with the fp16
roundings emulated and reports, for every step, how far the largest fp16 value of the backward pass is
from the overflow threshold; every family redraws until every step is at least 5% away from it.

- inf_gradients gives the big row features +-2**-12 instead of zeros, so an overflow puts +-inf (never
  inf * 0 = NaN) into every gradient entry. Its S_safe is 2**16 or 2**17, a scale only an fp32 loss
  carries.
- all_steps_overflow puts min_scale above S_safe: every step overflows and is skipped, for the whole run.
- overflow_mid_count is the one family where overflow also depends on the weights: a second row, the
  drift row, overflows at S_safe once the first update has pushed its residual past 4/3 A, at step 1,
  when the growth counter is 1 (see the function).
- small_updates has weights of about 2**11 (fp16 spacing 2) and a learning rate small enough that every
  update is below 0.4 of that spacing: an fp32 master copy accumulates them, an fp16 one never moves.
"""

from __future__ import annotations

import functools

import numpy as np

N, D = 64, 4
_FEATURE_RANGE = 1.0 / 32.0
_FP16_OVERFLOW = 65520.0  # the smallest value that the cast to fp16 turns into inf
_MARGIN = 1.05  # every step of the reference at least 5% away from the overflow threshold


def _s_safe(a: int) -> float:
    return 2.0 ** (14 + int(np.log2(N)) - a)


def _fp16(values: np.ndarray) -> np.ndarray:
    """Rounds float64 values to fp16 (inf from 65520 up) and returns them as float64."""
    with np.errstate(over="ignore"):
        return np.asarray(values, np.float64).astype(np.float16).astype(np.float64)


def replay(case: dict[str, object], fp16_master: bool = False) -> list[tuple[float, int, float, float]]:
    """Runs the recipe in float64 with its fp16 roundings (the fp16 weights, the prediction, the cotangent
    of the prediction, the fp16 gradient) and returns, for each step, (scale, counter, ratio, loss): ratio
    is the largest |value| cast to fp16 in the backward pass over the overflow threshold, so the step
    overflows when ratio >= 1. With `fp16_master` the weights are rounded to fp16 after every update."""
    x16 = np.asarray(case["x"], np.float32).astype(np.float64)
    y = np.asarray(case["y"], np.float32).astype(np.float64)
    w = np.asarray(case["w"], np.float32).astype(np.float64)
    if fp16_master:
        w = _fp16(w)
    lr, momentum = float(case["lr"]), float(case["momentum"])
    factor, min_scale, period = float(case["factor"]), float(case["min_scale"]), int(case["period"])
    m = np.zeros_like(w)
    scale, counter, out = float(case["init_scale"]), 0, []
    for _ in range(int(case["num_steps"])):
        pred = _fp16(x16 @ _fp16(w))
        residual = pred - y
        cotangent = 2.0 * residual * scale / N
        with np.errstate(invalid="ignore"):  # inf * 0 = NaN, as in fp16
            grad16 = x16.T @ _fp16(cotangent)
        ratio = max(float(np.max(np.abs(cotangent))), float(np.max(np.abs(grad16)))) / _FP16_OVERFLOW
        out.append((scale, counter, ratio, float(np.mean(residual**2))))
        if ratio < 1.0:
            m = _fp16(grad16) / scale + momentum * m
            w = w - lr * m
            if fp16_master:
                w = _fp16(w)
            counter += 1
            if counter == period:
                scale, counter = scale * factor, 0
        else:
            scale, counter = max(min_scale, scale / factor), 0
    return out


def _margins_ok(case: dict[str, object]) -> bool:
    """True when every step of the reference is at least 5% away from the fp16 overflow threshold."""
    return all(abs(np.log(ratio)) >= np.log(_MARGIN) for _, _, ratio, _ in replay(case))


def _redrawn_until_margins_ok(family):
    """Draws the family's case again until `_margins_ok` holds (over 2000 generated cases per family the
    first draw always did, every step a factor of at least 1.32 away from the threshold)."""

    @functools.wraps(family)
    def draw(rng: np.random.Generator) -> dict[str, object]:
        while True:
            case = family(rng)
            if _margins_ok(case):
                return case

    return draw


def _features(rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """Features on a 2**-12 grid in [-1/32, 1/32] (exact in fp16), with one all-zero row (the big row)."""
    x = np.round(rng.uniform(-_FEATURE_RANGE, _FEATURE_RANGE, size=(N, D)) * 4096.0) / 4096.0
    zero_row = int(rng.integers(N))
    x[zero_row] = 0.0
    return x, zero_row


def _power_of_two_lr(x: np.ndarray, low: float, high: float, rng: np.random.Generator) -> float:
    """A power of two near uniform(low, high) over the largest curvature of the MSE. With momentum 0.5,
    momentum * m and lr * m are then exact in fp32, so fused multiply-adds (jit) and separate operations
    (eager) give the same weights."""
    curvature = float(np.linalg.eigvalsh(2.0 / N * x.T @ x).max())
    return float(2.0 ** np.round(np.log2(rng.uniform(low, high) / curvature)))


def _regression(
    rng: np.random.Generator, *, a_choices: tuple[int, ...] = (3, 4, 5), tiny_row: bool = False
) -> tuple[dict[str, object], float]:
    """Draws x, y, w, lr, momentum; returns them with S_safe, the largest scale that does not overflow.

    With `tiny_row` the big row's features are +-2**-12 instead of zeros, the other targets are clipped to
    0.4 A instead of 0.7 A and the initial weights are three times smaller, so that no other row overflows
    with it.
    """
    a = int(a_choices[int(rng.integers(len(a_choices)))])
    big = 1.5 * 2.0**a  # |target| of the big row
    x, zero_row = _features(rng)
    if tiny_row:
        x[zero_row] = rng.choice([-1.0, 1.0], size=D) / 4096.0

    w_true = rng.normal(size=D)
    w_true *= 0.35 * big / np.sqrt(np.mean((x @ w_true) ** 2))
    y = x @ w_true + rng.normal(scale=0.05 * big, size=N)
    clip = 0.4 if tiny_row else 0.7
    y = np.clip(y, -clip * big, clip * big)
    y[zero_row] = big * rng.choice([-1.0, 1.0])
    w0 = rng.normal(scale=(0.05 if tiny_row else 0.15) * np.linalg.norm(w_true) / np.sqrt(D), size=D)
    case = {
        "x": x.astype(np.float32),
        "y": y.astype(np.float32),
        "w": w0.astype(np.float32),
        "lr": _power_of_two_lr(x, 0.04, 0.1, rng),
        "momentum": 0.5,
    }
    return case, _s_safe(a)


@_redrawn_until_margins_ok
def overflow_burst(rng: np.random.Generator) -> dict[str, object]:
    """init_scale 8 or 16 times too large: 3 or 4 skipped steps and back-offs, then grow/overflow cycles."""
    case, s_safe = _regression(rng)
    case.update(
        init_scale=s_safe * 2.0 ** int(rng.integers(3, 5)),
        period=int(rng.integers(2, 4)),
        factor=2.0,
        min_scale=1.0,
        num_steps=24,
    )
    return case


@_redrawn_until_margins_ok
def growth(rng: np.random.Generator) -> dict[str, object]:
    """init_scale 2 or 4 times below the limit, short period: growth events, then overflow on every growth."""
    case, s_safe = _regression(rng)
    below, period = [(1, 2), (1, 3), (2, 2)][int(rng.integers(3))]
    case.update(init_scale=s_safe / 2.0**below, period=period, factor=2.0, min_scale=1.0, num_steps=24)
    return case


@_redrawn_until_margins_ok
def min_scale_floor(rng: np.random.Generator) -> dict[str, object]:
    """factor 4 and min_scale = S_safe: backing off from 2 * S_safe lands on the floor, not S_safe / 2."""
    case, s_safe = _regression(rng)
    case.update(
        init_scale=s_safe * 2.0 ** int(rng.choice([3, 5])),
        period=int(rng.integers(2, 4)),
        factor=4.0,
        min_scale=s_safe,
        num_steps=24,
    )
    return case


@_redrawn_until_margins_ok
def inf_gradients(rng: np.random.Generator) -> dict[str, object]:
    """The big row has features +-2**-12, not zeros: its overflow gives +-inf gradients and no NaN.

    S_safe is 2**16 or 2**17, beyond fp16 range, so a loss kept in fp16 overflows where fp32 does not.
    """
    case, s_safe = _regression(rng, a_choices=(3, 4), tiny_row=True)
    case.update(
        init_scale=s_safe * 2.0 ** int(rng.integers(-1, 2)),
        period=int(rng.integers(2, 4)),
        factor=2.0,
        min_scale=1.0,
        num_steps=24,
    )
    return case


@_redrawn_until_margins_ok
def all_steps_overflow(rng: np.random.Generator) -> dict[str, object]:
    """min_scale is 2 or 4 times S_safe, so every scale overflows: all 24 steps are skipped, the scale
    backs off from init_scale (2 or 4 times min_scale) to the floor and stays there."""
    case, s_safe = _regression(rng)
    min_scale = s_safe * 2.0 ** int(rng.integers(1, 3))
    case.update(
        init_scale=min_scale * 2.0 ** int(rng.integers(1, 3)),
        period=int(rng.integers(2, 4)),
        factor=2.0,
        min_scale=min_scale,
        num_steps=24,
    )
    return case


def overflow_mid_count(rng: np.random.Generator) -> dict[str, object]:
    """Step 0 is finite at init_scale = S_safe; step 1 overflows through the drift row with the counter at 1.

    The drift row has features +-1/32 along the top eigenvector of the other rows' curvature and a residual
    of 1.2 A at step 0 (cotangent 0.9 of the threshold at S_safe), on the side that the first update pushes
    further out: the initial weights sit off the fit along that eigenvector, and the learning rate (the
    largest power of two below 1 / curvature) moves them most of the way in one step, so at step 1 the
    residual is past 4/3 A and the step overflows. Afterwards the drift row's residual stays between 4/3 A
    and 8/3 A: every step at S_safe / 2 is finite, every growth to S_safe overflows. The family redraws
    until `replay` shows this pattern for the first period + 2 steps and every step at least 5% away from
    the threshold.
    """
    while True:
        a = int(rng.integers(3, 5))
        big = 1.5 * 2.0**a
        x, zero_row = _features(rng)
        drift_row = int((zero_row + rng.integers(1, N)) % N)
        others = [i for i in range(N) if i not in (zero_row, drift_row)]
        top = np.linalg.eigh(x[others].T @ x[others])[1][:, -1]
        x[drift_row] = np.where(top >= 0.0, _FEATURE_RANGE, -_FEATURE_RANGE)
        w_true = rng.normal(size=D)
        w_true *= 0.3 * big / np.sqrt(np.mean((x[others] @ w_true) ** 2))
        y = x @ w_true + rng.normal(scale=0.02 * big, size=N)
        side = rng.choice([-1.0, 1.0])
        w = w_true + side * rng.uniform(0.75, 1.0) * big / (x[drift_row] @ top) * top
        y[drift_row] = x[drift_row] @ w + side * 1.2 * big
        y[zero_row] = big * rng.choice([-1.0, 1.0])
        curvature = float(np.linalg.eigvalsh(2.0 / N * x.T @ x).max())
        period = int(rng.integers(2, 4))
        case = {
            "x": x.astype(np.float32),
            "y": y.astype(np.float32),
            "w": w.astype(np.float32),
            "lr": float(2.0 ** np.floor(np.log2(1.0 / curvature))),
            "momentum": 0.5,
            "init_scale": _s_safe(a),
            "period": period,
            "factor": 2.0,
            "min_scale": 1.0,
            "num_steps": 24,
        }
        steps = replay(case)
        pattern = [ratio >= 1.0 for _, _, ratio, _ in steps[: period + 2]]
        if (
            pattern == [False, True] + [False] * period
            and steps[1][1] == 1
            and all(abs(np.log(ratio)) >= np.log(_MARGIN) for _, _, ratio, _ in steps)
        ):
            return case


@_redrawn_until_margins_ok
def small_updates(rng: np.random.Generator) -> dict[str, object]:
    """Weights of 1.25 to 1.75 times 2**11 (fp16 spacing 2) and a learning rate that keeps every update
    below 0.4 of that spacing: an fp32 master copy moves the fp16 weights by many spacings, an fp16
    master copy rounds every update away."""
    a = int(rng.integers(3, 5))
    big = 1.5 * 2.0**a
    s_safe = _s_safe(a)
    x, zero_row = _features(rng)
    w_true = rng.uniform(1.25, 1.75, size=D) * rng.choice([-1.0, 1.0], size=D) * 2.0**11
    offset = rng.normal(size=D)
    offset *= 0.4 * big / np.max(np.abs(x @ offset))  # initial residuals of the other rows below 0.4 A
    w = w_true + offset
    y = x @ w_true + np.clip(rng.normal(scale=0.02 * big, size=N), -0.05 * big, 0.05 * big)
    y[zero_row] = big * rng.choice([-1.0, 1.0])
    case = {
        "x": x.astype(np.float32),
        "y": y.astype(np.float32),
        "w": w.astype(np.float32),
        "lr": 1.0,
        "momentum": 0.5,
        "init_scale": s_safe / 2.0 ** int(rng.integers(0, 2)),
        "period": int(rng.integers(2, 4)),
        "factor": 2.0,
        "min_scale": 1.0,
        "num_steps": 24,
    }
    # The largest power-of-two learning rate whose steady-state update 2 * lr * |g| at the initial fp16
    # weights (where an fp16 master copy stays) is below 0.4 of the fp16 spacing 2.
    x64 = case["x"].astype(np.float64)
    pred = _fp16(x64 @ _fp16(case["w"].astype(np.float64)))
    grad = 2.0 / N * x64.T @ (pred - case["y"].astype(np.float64))
    case["lr"] = float(2.0 ** np.floor(np.log2(0.4 * 2.0 / (2.0 * np.max(np.abs(grad))))))
    return case


FAMILIES = {
    "overflow_burst": overflow_burst,
    "growth": growth,
    "min_scale_floor": min_scale_floor,
    "inf_gradients": inf_gradients,
    "all_steps_overflow": all_steps_overflow,
    "overflow_mid_count": overflow_mid_count,
    "small_updates": small_updates,
}
