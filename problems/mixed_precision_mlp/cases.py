"""Public case generator for mixed_precision_mlp (numpy only: the secret is the seed, not this code).

Every case is a batch of 64 synthetic 8x8 digit images (a 4x6 glyph of each digit, placed in the inner
6x6 square with a horizontal shift of 0..2 pixels, an ink intensity of 0.6..1.0 and Gaussian noise of
standard deviation 0.1 on the inner square, clipped to [0, 1]; the one-pixel border is blank), the
initial fp32 master weights of a 64-32-10 ReLU MLP, a power-of-two learning rate and loss scale, and a
step count. Pre-trained weights come from full-batch gradient descent in float64 on the same batch.

The three families force the mistakes of the statement:

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


FAMILIES = {
    "fine_tuning": fine_tuning,
    "offset_logits": offset_logits,
    "blank_border": blank_border,
}
