"""Public case generator for mixed_precision_mlp (numpy only: the secret is the seed, not this code).

Every case is a batch of 64 synthetic 8x8 digit images (a 4x6 glyph of each digit, placed in the inner
6x6 square with a horizontal shift of 0..2 pixels, an ink intensity of 0.6..1.0 and Gaussian noise of
standard deviation 0.1 on the inner square, clipped to [0, 1]; the one-pixel border is blank), the
initial fp32 master weights of a 64-32-10 ReLU MLP, a power-of-two learning rate and loss scale, and a
step count. Pre-trained weights come from full-batch gradient descent in float64 on the same batch.

The four families force the mistakes of the statement:

- fine_tuning: a well-trained model (loss 0.006, the largest logit at least 12.5) and lr = 0.5, with
  four pruned hidden units (weights and bias exactly 0, output weights large): their pre-activations are
  exactly 0, so a ReLU with a nonzero derivative at 0 revives them. 70% to 80% of the first step's updates
  are below half the fp16 spacing of their weight, so an fp16 master copy nearly stalls while the fp32 one
  lowers the loss by 6% to 9%; exp of a logit above 11.09 overflows fp16; and the per-example losses
  (about 0.003) are below the resolution of an fp16 log-sum-exp.
- offset_logits: a trained model whose logits are scaled into [-1.5, 1.5] and shifted by C, a multiple
  of 8 between 8800 and 15992, the same for every class. fp16 spaces numbers in [8192, 16384) by 8, and
  with lr = 2^-6 every logit stays within 4 of C for the whole run (at most 2.8 away in 100 cases), so
  every fp16 logit is exactly C and the fp16 model predicts a uniform distribution: its loss is log(10)
  at every step. fp32 logits keep their differences.
- blank_border: white paper with dark ink. The border pixels are blank paper, 1 - d with d below 2^-12,
  which fp16 rounds to exactly 1. Each hidden unit has weights of +3072 on 14 border pixels and -3072 on
  the other 14, so the border adds exactly 0 to every fp16 pre-activation, but 3072 times a sum of
  +-d (about 1 in size) to an fp32 one.
- white_frame: fp32 masters just short of an fp16 rounding midpoint. Dark ink on white paper with a frame
  of exactly 1 (a frame weight acts as a bias); units with a large first update u get weights +c and -c
  on two frame pixels (they cancel in fp16), c such that the fp16 spacing s at c is 128 to 512 times u,
  and the +c master sits between u/4 and u/2 short of the midpoint c + s/2 on the side u moves it to.
  The recipe's fp16 copy moves by s at step 1 and shifts the unit's pre-activation by s; masters rounded
  to fp16 once start at c and stay short of the midpoint for the whole run. The family emulates the run
  in numpy (fp16 roundings included) to keep only pairs whose masters stay u/4 or more from every other
  midpoint, and checks that rounding the masters once moves the losses by 4% or more.
"""

from __future__ import annotations

import numpy as np

N, SIDE, HIDDEN, CLASSES = 64, 8, 32, 10

_GLYPHS = (
    (".##.", "#..#", "#..#", "#..#", "#..#", ".##."),
    ("..#.", ".##.", "..#.", "..#.", "..#.", ".###"),
    (".##.", "#..#", "...#", "..#.", ".#..", "####"),
    ("###.", "...#", ".##.", "...#", "...#", "###."),
    ("#..#", "#..#", "####", "...#", "...#", "...#"),
    ("####", "#...", "###.", "...#", "...#", "###."),
    (".##.", "#...", "###.", "#..#", "#..#", ".##."),
    ("####", "...#", "..#.", ".#..", ".#..", ".#.."),
    (".##.", "#..#", ".##.", "#..#", "#..#", ".##."),
    (".##.", "#..#", "#..#", ".###", "...#", ".##."),
)
_TEMPLATES = np.array([[[c == "#" for c in row] for row in glyph] for glyph in _GLYPHS], dtype=np.float64)

_BORDER = np.ones((SIDE, SIDE), dtype=bool)
_BORDER[1:-1, 1:-1] = False
BORDER = _BORDER.reshape(-1)  # the 28 border pixels of a flattened image

DEAD_UNITS = 4  # fine_tuning: hidden units pruned to exactly 0 (ReLU derivative at 0 keeps them dead)
DEAD_WEIGHT = 8.0  # fine_tuning: the pruned units' output weights, in units of the std of the trained ones
TUNED_LOSS = 0.006  # fine_tuning: the loss of the initial weights
MAX_PRE_LOGIT = 1.5  # offset_logits: largest |logit - C| at the start (fp16 keeps C for |.| < 4)
BORDER_WEIGHT = 3072.0  # blank_border: in [2048, 4096) fp16 spaces numbers by 2


def _digits(rng: np.random.Generator, paper: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Returns float32 (N, 64) images in [0, 1] and int32 (N,) labels, every class 6 or 7 times.

    With `paper`, the images are inverted: dark ink on white paper, the border exactly 1.
    """
    labels = rng.permutation(np.arange(N) % CLASSES)
    images = np.zeros((N, SIDE, SIDE))
    for image, label in zip(images, labels, strict=True):
        shift = int(rng.integers(0, 3))
        image[1:7, 1 + shift : 5 + shift] = rng.uniform(0.6, 1.0) * _TEMPLATES[label]
    images[:, 1:-1, 1:-1] += rng.normal(scale=0.1, size=(N, SIDE - 2, SIDE - 2))
    images = np.clip(images, 0.0, 1.0)
    if paper:
        images = 1.0 - images
    return images.reshape(N, -1).astype(np.float32), labels.astype(np.int32)


def _fresh(rng: np.random.Generator) -> list[np.ndarray]:
    """Returns float64 [w1, b1, w2, b2]: LeCun-normal weights, zero biases."""
    w1 = rng.normal(size=(SIDE * SIDE, HIDDEN)) / np.sqrt(SIDE * SIDE)
    w2 = rng.normal(size=(HIDDEN, CLASSES)) / np.sqrt(HIDDEN)
    return [w1, np.zeros(HIDDEN), w2, np.zeros(CLASSES)]


def _logits(x: np.ndarray, params: list[np.ndarray]) -> np.ndarray:
    w1, b1, w2, b2 = params
    return np.maximum(x @ w1 + b1, 0.0) @ w2 + b2


def _pretrain(x: np.ndarray, labels: np.ndarray, params: list[np.ndarray], lr: float, steps: int) -> list:
    """Full-batch gradient descent on the mean cross-entropy, in float64."""
    w1, b1, w2, b2 = (p.copy() for p in params)
    x = x.astype(np.float64)
    onehot = np.eye(CLASSES)[labels]
    for _ in range(steps):
        pre = x @ w1 + b1
        hidden = np.maximum(pre, 0.0)
        z = hidden @ w2 + b2
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        dz = (p - onehot) / len(labels)
        dh = dz @ w2.T * (pre > 0)
        w2 -= lr * hidden.T @ dz
        b2 -= lr * dz.sum(axis=0)
        w1 -= lr * x.T @ dh
        b1 -= lr * dh.sum(axis=0)
    return [w1, b1, w2, b2]


def _coarse(values: np.ndarray) -> np.ndarray:
    """Rounds to 20 significant bits (exactly, with frexp and ldexp), then to float32.

    The pre-training runs float64 matrix products and exponentials, whose last bits may differ between
    BLAS builds and CPUs; rounding that far makes the inputs the same bits on every machine (a difference
    of 1e-16 relative flips a rounding only within 1e-16 of a tie), so a learner copy's stored outputs match.
    """
    mantissa, exponent = np.frexp(np.asarray(values, dtype=np.float64))
    return np.ldexp(np.round(mantissa * 2.0**20) / 2.0**20, exponent).astype(np.float32)


def _case(x, labels, params, lr, loss_scale, num_steps) -> dict[str, object]:
    w1, b1, w2, b2 = (_coarse(p) for p in params)
    return {
        "pixels": x,
        "labels": labels,
        "w1": w1,
        "b1": b1,
        "w2": w2,
        "b2": b2,
        "lr": float(lr),
        "loss_scale": float(loss_scale),
        "num_steps": int(num_steps),
    }


def _cross_entropy(x: np.ndarray, labels: np.ndarray, params: list[np.ndarray]) -> float:
    """The mean softmax cross-entropy, in float64."""
    z = _logits(x, params)
    z = z - z.max(axis=1, keepdims=True)
    return float(np.mean(np.log(np.exp(z).sum(axis=1)) - z[np.arange(len(labels)), labels]))


def fine_tuning(rng: np.random.Generator) -> dict[str, object]:
    """A well-trained model (loss 0.006) fine-tuned with lr = 0.5: most updates are below fp16 resolution.

    DEAD_UNITS hidden units are pruned before the pre-training (their w1 columns and b1 entries stay 0, so
    their pre-activations are exactly 0 and a ReLU with derivative 0 at 0 never moves them); afterwards
    their w2 rows are set to random values DEAD_WEIGHT times the spread of the trained rows, which the
    recipe never uses. After 200 steps of pre-training, the output layer is scaled so that the loss is
    exactly TUNED_LOSS, and a constant is added to every output bias (which changes no probability) so
    that the largest logit of the batch is at least 12.5.
    """
    x, labels = _digits(rng)
    w1, b1, w2, b2 = _fresh(rng)
    dead = rng.choice(HIDDEN, DEAD_UNITS, replace=False)
    w1[:, dead] = 0.0  # pruned units: their pre-activations are exactly 0 and stay so (ReLU derivative 0)
    w1, b1, w2, b2 = _pretrain(x, labels, [w1, b1, w2, b2], lr=1.0, steps=200)
    w2[dead] = rng.normal(size=(DEAD_UNITS, CLASSES)) * DEAD_WEIGHT * float(np.std(w2))  # no effect: hidden 0
    low, high = 0.01, 100.0  # the loss falls as the output layer grows: bisect on its scale
    for _ in range(60):
        mid = float(np.sqrt(low * high))
        if _cross_entropy(x, labels, [w1, b1, w2 * mid, b2 * mid]) > TUNED_LOSS:
            low = mid
        else:
            high = mid
    params = [w1, b1, w2 * high, b2 * high]
    params[3] = params[3] + max(0.0, 12.5 - float(_logits(x, params).max()))
    return _case(x, labels, params, 0.5, 2.0 ** int(rng.integers(10, 13)), int(rng.integers(32, 41)))


def offset_logits(rng: np.random.Generator) -> dict[str, object]:
    """A trained model whose logits are scaled into [-1.5, 1.5], then shifted by C = 0 mod 8, 8800..15992.

    The shift goes into the output bias of every class (it changes no probability). fp16 spaces numbers in
    [8192, 16384) by 8, so every fp16 logit is C, and with lr = 2^-6 the fp32 master never moves a logit
    far enough (4 away from C) to change that within the run.
    """
    x, labels = _digits(rng)
    params = _pretrain(x, labels, _fresh(rng), lr=1.0, steps=100)
    scale = MAX_PRE_LOGIT / float(np.abs(_logits(x, params)).max())
    params[2] = params[2] * scale
    params[3] = params[3] * scale + 8.0 * float(rng.integers(1100, 2000))
    return _case(x, labels, params, 2.0**-6, 2.0 ** int(rng.integers(8, 11)), int(rng.integers(24, 33)))


def blank_border(rng: np.random.Generator) -> dict[str, object]:
    """White paper; border pixels 1 - d (d < 2^-12, fp16 rounds them to 1) with weights of +-3072.

    A model pre-trained for 100 steps on the same images with an exactly white border has its border
    weights folded into the hidden bias (the border acted as a constant); then each hidden unit gets
    +3072 on 14 border pixels and -3072 on the other 14, and the border pixels become 1 - d.
    """
    x, labels = _digits(rng, paper=True)
    w1, b1, w2, b2 = _pretrain(x, labels, _fresh(rng), lr=0.25, steps=100)
    b1 = b1 + w1[BORDER].sum(axis=0)
    signs = np.array([rng.permutation(np.repeat([1.0, -1.0], 14)) for _ in range(HIDDEN)]).T
    w1[BORDER] = BORDER_WEIGHT * signs
    x[:, BORDER] = 1.0 - rng.uniform(0.0, 2.0**-12, size=(N, int(BORDER.sum()))).astype(np.float32)
    loss_scale = 2.0 ** int(rng.integers(8, 11))
    return _case(x, labels, [w1, b1, w2, b2], 2.0**-4, loss_scale, int(rng.integers(24, 33)))


def _r16(values: np.ndarray) -> np.ndarray:
    """Rounds to float16 (to nearest, ties to even) and returns float64."""
    return np.asarray(values, dtype=np.float64).astype(np.float16).astype(np.float64)


def _fp16_step(x16, labels, params, loss_scale) -> tuple[float, list[np.ndarray]]:
    """The recipe's forward and backward pass, emulated: float64 arithmetic rounded to fp16 wherever the
    recipe holds an fp16 value (params, matmul results, bias adds, the cotangents). Returns the loss and
    the unscaled gradients; they match the JAX ones to within about 1% (the order of fp16 sums differs)."""
    w1, b1, w2, b2 = (_r16(p) for p in params)
    pre = _r16(_r16(x16 @ w1) + b1)
    hidden = np.maximum(pre, 0.0)
    z = _r16(_r16(hidden @ w2) + b2)
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    loss = float(np.mean(np.log(e.sum(axis=1)) - z[np.arange(len(labels)), labels]))
    dz = _r16(loss_scale * (e / e.sum(axis=1, keepdims=True) - np.eye(CLASSES)[labels]) / len(labels))
    dh = _r16(dz @ w2.T) * (pre > 0)
    grads = [_r16(x16.T @ dh), _r16(dh.sum(axis=0)), _r16(hidden.T @ dz), _r16(dz.sum(axis=0))]
    return loss, [g / loss_scale for g in grads]


def _fp16_run(x, labels, params, lr, loss_scale, num_steps) -> tuple[np.ndarray, list[np.ndarray]]:
    """Emulates the recipe from fp32 masters `params`; returns the losses and w1's master at every step."""
    x16 = _r16(x)
    masters = [np.asarray(p, dtype=np.float64) for p in params]
    losses, w1_path = [], []
    for _ in range(num_steps):
        w1_path.append(masters[0])
        loss, grads = _fp16_step(x16, labels, masters, loss_scale)
        updated = (p - lr * g for p, g in zip(masters, grads, strict=True))
        masters = [p.astype(np.float32).astype(np.float64) for p in updated]  # fp32 masters
        losses.append(loss)
    w1_path.append(masters[0])
    return np.array(losses), w1_path


FRAME_RATIOS = (128, 256)  # white_frame: least fp16 spacing of a pair weight / its first update, in turn
FRAME_LR = 2.0**-6  # white_frame: the learning rate
FRAME_MIN_GAP = 0.04  # white_frame: least relative loss gap between the rounded-once and recipe emulations


def _frame_sizes(u: float, ratio: int) -> tuple[float, float, float]:
    """Returns (c, s, d) for a unit whose first update is u: s is the power of two in [ratio * |u|,
    2 * ratio * |u|), c = 1536 * s = 1.5 * 2^e is where fp16 numbers are s apart (s = 2^(e-10)), and d is
    the power of two in (|u|/4, |u|/2]. Exponents come from frexp, exact on every machine (log2 of a
    power of two need not be)."""
    mantissa, exponent = np.frexp(ratio * abs(u))  # ratio * |u| = mantissa * 2^exponent, 0.5 <= mantissa < 1
    s = float(np.ldexp(1.0, int(exponent) - 1 if mantissa == 0.5 else int(exponent)))
    d = float(np.ldexp(1.0, int(np.frexp(abs(u))[1]) - 2))
    return 1536.0 * s, s, d


def _frame_pairs(w1, units, pixels, update, ratio) -> np.ndarray:
    """Returns w1 with a +c, -c pair on the two frame pixels of every unit j in `units`: c = 1.5 * 2^e, the
    fp16 spacing s = 2^(e-10) at c between `ratio` and 2 * `ratio` times the unit's first update u_j, and
    the +c master moved to just short of the midpoint c + s/2 on the side u_j points to, by d_j, the power
    of two in (|u_j|/4, |u_j|/2]: fp16 still rounds it to c, and u_j takes it past the midpoint."""
    w1 = w1.copy()
    for j in units:
        u = update[j]
        c, s, d = _frame_sizes(u, ratio)
        w1[pixels[j, 0], j] = c + np.sign(u) * (s / 2 - d)
        w1[pixels[j, 1], j] = -c
    return w1.astype(np.float32).astype(np.float64)


def _frame_drifts(w1_path, units, pixels, update, ratio) -> set[int]:
    """The units whose pair weights, in the emulated run, come within |u_j|/4 of a crossing not designed:
    the +c master falling back to its midpoint after step 1, or either master reaching a midpoint that
    rounded-once masters would cross (s/2 from where they start)."""
    bad = set()
    for j in units:
        u = update[j]
        _, s, d = _frame_sizes(u, ratio)
        moved = np.sign(u) * np.array([w[pixels[j, 0], j] - w1_path[0][pixels[j, 0], j] for w in w1_path])
        if np.any(moved[1:] < d + abs(u) / 4) or np.any(moved > s / 2 - abs(u) / 4):
            bad.add(j)
    return bad


def white_frame(rng: np.random.Generator) -> dict[str, object]:
    """Masters placed just short of fp16 rounding midpoints, so that rounding them once changes the run.

    The images are dark ink on white paper whose one-pixel frame is exactly 1 in every image (fp16 and
    fp32 alike), so a frame pixel's weight acts as a bias. A model pre-trained for 100 steps has its
    frame weights folded into b1; then the units whose first update u_j (of b1_j, the same as that of
    each of its frame weights) is at least 1/16 of the largest get a pair of weights +c and -c on two
    frame pixels (they cancel exactly in the fp16 matmul), with c a power of two times 1.5 chosen so that
    the fp16 spacing s at c is `ratio` to 2 * `ratio` times |u_j| (fp32 spacing at c is s / 8192, far
    below u_j). The +c master sits just short of the fp16 midpoint c + s/2 (or c - s/2), on the side its
    first update moves it to, by between |u_j|/4 and |u_j|/2: the recipe's fp16 copy of it moves by a
    whole s at step 1, shifting the unit's pre-activation by s, while a master rounded to fp16 once
    starts at c and needs `ratio` / 2 (64 or more) steps like the first to get there. The run is emulated
    in numpy (_fp16_run, fp16 roundings included): a unit whose pair comes within |u_j|/4 of a crossing
    the design does not intend (the gradient turning after the shift, or the masters drifting to the
    midpoint that rounded-once masters would cross) loses its pair and the run is emulated again. If the
    rounded-once run then differs from the recipe's by less than FRAME_MIN_GAP of the loss at every
    step, the next ratio in FRAME_RATIOS (larger shifts) is tried, and after the last one the whole case
    is drawn again (about 1 case in 100 is, in the emulation).
    """
    while True:
        case, gap = _white_frame_attempt(rng)
        if gap >= FRAME_MIN_GAP:
            return case


def _white_frame_attempt(rng: np.random.Generator) -> tuple[dict[str, object], float]:
    """One white_frame case, and the largest relative loss gap of the emulated rounded-once run."""
    x, labels = _digits(rng, paper=True)
    w1, b1, w2, b2 = _pretrain(x, labels, _fresh(rng), lr=0.25, steps=100)
    b1 = b1 + w1[BORDER].sum(axis=0)
    w1[BORDER] = 0.0
    params = [_coarse(p).astype(np.float64) for p in (w1, b1, w2, b2)]
    loss_scale, num_steps = 2.0 ** int(rng.integers(8, 11)), int(rng.integers(24, 33))
    pixels = np.array([rng.choice(np.flatnonzero(BORDER), 2, replace=False) for _ in range(HIDDEN)])
    update = -FRAME_LR * _fp16_step(_r16(x), labels, params, loss_scale)[1][1]
    for ratio in FRAME_RATIOS:
        units = set(np.flatnonzero(np.abs(update) >= np.abs(update).max() / 16).tolist())
        while True:
            w1 = _frame_pairs(params[0], units, pixels, update, ratio)
            losses, path = _fp16_run(x, labels, [w1, *params[1:]], FRAME_LR, loss_scale, num_steps)
            bad = _frame_drifts(path, units, pixels, update, ratio)
            if not bad:
                break
            units -= bad
        rounded = [_r16(p) for p in [w1, *params[1:]]]
        once = _fp16_run(x, labels, rounded, FRAME_LR, loss_scale, num_steps)[0]
        gap = float(np.max(np.abs(once - losses) / losses))
        if gap >= FRAME_MIN_GAP:
            break
    case = _case(x, labels, params, FRAME_LR, loss_scale, num_steps)
    case["w1"] = w1.astype(np.float32)  # not rounded to 20 bits again: the placed masters need all 24
    return case, gap


FAMILIES = {
    "fine_tuning": fine_tuning,
    "offset_logits": offset_logits,
    "blank_border": blank_border,
    "white_frame": white_frame,
}
