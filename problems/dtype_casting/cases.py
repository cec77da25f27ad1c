"""Public case generator for dtype_casting (numpy only: the secret is the seed, not this code).

Every family returns the arguments of `train_fp16` in parameter order: raw 0-255 pixels (float32),
int32 labels, float32 master weights `w` (D, K) and bias `b` (K,), the integer step counter, the peak
learning rate, the decay length of the schedule, a power-of-two loss scale and the number of steps.
"""

from __future__ import annotations

import numpy as np


def _hadamard(n: int) -> np.ndarray:
    """Returns the n x n Sylvester Hadamard matrix (n a power of two) of +-1 as int64."""
    h = np.ones((1, 1), dtype=np.int64)
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return h


DECAYS = (1000.0, 2000.0, 5000.0, 10000.0, 50000.0)


def _schedule(
    rng: np.random.Generator, step: int, lr_eff: float, decays: tuple[float, ...] = DECAYS
) -> tuple[int, float, float]:
    """Picks decay_steps and the peak lr so that the lr at `step` is about `lr_eff`."""
    decay = float(rng.choice(decays))
    lr = lr_eff * float(np.sqrt(1.0 + step / decay))
    return step, lr, decay


def _prototype_pixels(
    rng: np.random.Generator, n: int, d: int, k: int, noise: float
) -> tuple[np.ndarray, np.ndarray]:
    """Noisy copies of k random 0-255 prototypes; every row keeps a standard deviation above 40."""
    protos = rng.integers(0, 256, size=(k, d)).astype(np.float64)
    labels = rng.integers(0, k, size=n)
    labels[:k] = np.arange(k)[: min(k, n)]  # every class appears at least once
    rng.shuffle(labels)
    pix = np.clip(np.rint(protos[labels] + rng.normal(scale=noise, size=(n, d))), 0, 255)
    low = pix.std(axis=1) < 40.0
    pix[low] = rng.choice([0.0, 255.0], size=(int(low.sum()), d))  # never happens in practice: a guard
    return pix.astype(np.float32), labels.astype(np.int32)


def _moderate(
    rng: np.random.Generator, step: int, lr_eff: float, decays: tuple[float, ...] = DECAYS, min_steps: int = 2
) -> dict[str, object]:
    n, d, k = 32, 64, 6
    pixels, labels = _prototype_pixels(rng, n, d, k, noise=float(rng.uniform(20.0, 60.0)))
    w = rng.normal(scale=0.2, size=(d, k)).astype(np.float32)
    b = rng.normal(scale=0.5, size=k).astype(np.float32)
    step, lr, decay = _schedule(rng, step, lr_eff, decays)
    return {
        "pixels": pixels,
        "labels": labels,
        "w": w,
        "b": b,
        "step": step,
        "lr": lr,
        "decay_steps": decay,
        "loss_scale": float(2.0 ** rng.integers(4, 13)),
        "num_steps": int(rng.integers(min_steps, 5)),
    }


def random_images(rng: np.random.Generator) -> dict[str, object]:
    """8x8 images of 0-255 pixels, small weights, a few ordinary SGD steps early in training.

    Each image's sum of squared deviations is far above 65504, so standardizing it in fp16 overflows.
    """
    return _moderate(rng, step=int(rng.integers(0, 5001)), lr_eff=float(rng.uniform(0.05, 0.5)))


def late_step(rng: np.random.Generator) -> dict[str, object]:
    """Like random_images, but the step counter is past 65504: cast to fp16 it becomes inf."""
    return _moderate(rng, step=int(rng.integers(100_000, 3_000_001)), lr_eff=float(rng.uniform(0.05, 0.5)))


def fast_decay(rng: np.random.Generator) -> dict[str, object]:
    """Like random_images, but the schedule decays within a few steps: decay_steps is 1..4 and the step
    counter starts at 0..3, so lr_t drops by 5% to 30% from one step to the next and reading the wrong
    step (one ahead, or never advanced) changes how far the weights move by 5% or more.
    """
    step = int(rng.integers(0, 4))
    return _moderate(
        rng, step=step, lr_eff=float(rng.uniform(0.05, 0.5)), decays=(1.0, 2.0, 3.0, 4.0), min_steps=3
    )


def _low_contrast_rows(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """Integer rows with a standard deviation of 20..23 and a mean between 136 and 184 that is 3/64 above a
    multiple of 1/8 (the pixel sum is 3 mod 8 with d = 64): fp16 spaces numbers in [128, 256) by 1/8, so an
    fp16 mean (or pixel sum) of such a row is 3/64 below the true one, about 0.002 of a standard deviation.
    """
    rows = []
    while len(rows) < n:
        z = rng.normal(size=d)
        z = (z - z.mean()) / z.std()
        row = np.rint(float(rng.uniform(136.0, 184.0)) + float(rng.uniform(20.5, 22.5)) * z)
        extra = int(row.sum() - 3) % 8
        row[rng.choice(d, size=extra, replace=False)] -= 1.0  # pixel sum = 3 mod 8
        if 20.0 <= row.std() <= 23.0 and row.min() >= 0 and row.max() <= 255:
            rows.append(row)
    return np.asarray(rows, dtype=np.float32)


def low_contrast(rng: np.random.Generator) -> dict[str, object]:
    """8x8 images with a small standard deviation (20..23) around a mean that fp16 rounds down by 3/64.

    Standardized correctly, each row of x sums to zero, so a constant added to a weight column changes
    no logit. The classes split into three whose weight columns are shifted by -c and three shifted by +c
    (c in 0.8..1.2), and every label is one of the first three. Pixels standardized around an fp16 mean
    are all about 0.002 too large, which moves every logit by 0.002 times its column sum (about +-64 c):
    the true-class logits drop against the others and the loss grows by several percent.
    """
    n, d, k = 32, 64, 6
    pixels = _low_contrast_rows(rng, n, d)
    low = rng.permutation(k)[: k // 2]
    sign = np.ones(k)
    sign[low] = -1.0
    c = float(rng.uniform(0.8, 1.2))
    w = (rng.normal(scale=0.2, size=(d, k)) + c * sign).astype(np.float32)
    b = rng.normal(scale=0.5, size=k).astype(np.float32)
    labels = rng.choice(low, size=n).astype(np.int32)
    step, lr, decay = _schedule(rng, int(rng.integers(0, 5001)), float(rng.uniform(0.05, 0.5)))
    return {
        "pixels": pixels,
        "labels": labels,
        "w": w,
        "b": b,
        "step": step,
        "lr": lr,
        "decay_steps": decay,
        "loss_scale": float(2.0 ** rng.integers(4, 13)),
        "num_steps": int(rng.integers(2, 5)),
    }


def bright_28x28(rng: np.random.Generator) -> dict[str, object]:
    """28x28 images with a bright background and dark strokes: each image's pixel sum is above 65504."""
    n, d, k = 16, 784, 10
    pix = rng.uniform(170.0, 255.0, size=(n, 28, 28))
    for img in pix:
        for _ in range(int(rng.integers(2, 5))):  # a few dark straight strokes
            r0, c0, r1, c1 = rng.integers(2, 26, size=4)
            t = np.linspace(0.0, 1.0, 40)
            rr = np.rint(r0 + (r1 - r0) * t).astype(int)
            cc = np.rint(c0 + (c1 - c0) * t).astype(int)
            img[rr, cc] = rng.uniform(0.0, 60.0)
    pixels = np.rint(pix).reshape(n, d).astype(np.float32)
    labels = rng.integers(0, k, size=n).astype(np.int32)
    step, lr, decay = _schedule(rng, int(rng.integers(0, 5001)), float(rng.uniform(0.02, 0.1)))
    return {
        "pixels": pixels,
        "labels": labels,
        "w": rng.normal(scale=0.05, size=(d, k)).astype(np.float32),
        "b": rng.normal(scale=0.5, size=k).astype(np.float32),
        "step": step,
        "lr": lr,
        "decay_steps": decay,
        "loss_scale": float(2.0 ** rng.integers(4, 11)),
        "num_steps": int(rng.integers(2, 4)),
    }


def _off_grid(rng: np.random.Generator, a: np.ndarray) -> np.ndarray:
    """Moves fp16-exact values by up to 0.4 of half an fp16 spacing: the fp16 cast still gives back `a`,
    but the fp32 master copy carries bits that only fp32 keeps (a master copy rounded to fp16 loses them).
    """
    half = np.abs(np.spacing(a.astype(np.float16)).astype(np.float64)) / 2.0
    return (a.astype(np.float64) + rng.uniform(-0.4, 0.4, size=a.shape) * half).astype(np.float32)


def _exact_rows(rng: np.random.Generator, n: int, d: int, std: int) -> np.ndarray:
    """Integer pixel rows whose mean is an integer and whose population std is exactly `std`.

    Each row is an integer mean plus d/2 pairs (+u, -u) with sum(u^2) = d * std^2 / 2, so the
    standardized pixels (p - mean) / std are exact in fp32 and in fp16, whatever the order of the sums.
    """
    target = d * std * std // 2
    rows = []
    while len(rows) < n:
        free = rng.integers(std // 3, (3 * std) // 2 + 1, size=d // 2 - 4)
        rest = target - int(np.sum(free * free))
        if rest <= 0 or rest > 4 * 127 * 127:
            continue
        found = None
        for _ in range(4000):  # write the remainder as a sum of four squares, each at most 127^2
            abc = rng.integers(0, min(127, int(np.sqrt(rest))) + 1, size=3)
            last = rest - int(np.sum(abc * abc))
            if last < 0:
                continue
            r = int(np.rint(np.sqrt(last)))
            if r * r == last and r <= 127:
                found = np.concatenate([abc, [r]])
                break
        if found is None:
            continue
        u = np.concatenate([free, found])
        c = rng.permutation(np.concatenate([u, -u]))
        top = int(np.max(np.abs(c)))
        mean = int(rng.integers(top, 256 - top))
        rows.append(mean + c)
    return np.asarray(rows, dtype=np.float32)


def shifted_logits(rng: np.random.Generator) -> dict[str, object]:
    """Logits in [2048, 4096), where fp16 keeps only even numbers: a large shared bias plus a small dot.

    The standardized pixels are exact (multiples of 1/std, std a power of two) and the weights are
    multiples of 2^-10, so the fp16 matmul is exact before its one rounding and every correct
    implementation gets the same fp16 logits. The dot products stay inside (-1, 1), so the fp16 bias
    add rounds every logit to the (even) bias and the fp16 loss is exactly log(K). Logits kept in fp32
    keep the dot products; a log-sum-exp evaluated in fp16 rounds m + log(K) to m + 2. The learning
    rate is so small that the fp16 copy of the weights never changes, so only an fp32 master copy moves;
    w and b also carry offsets below half an fp16 spacing, which a master rounded to fp16 loses.
    """
    n, d, k = 16, 16, 4
    std = int(rng.choice([32, 64]))
    pixels = _exact_rows(rng, n, d, std)
    x = (pixels - pixels.mean(axis=1, keepdims=True)) / std  # exact
    while True:
        mag = rng.integers(33, 64, size=(d, k))  # |w| in (1/32, 1/16): no power of two, fp16 spacing 2^-15
        w = (mag * rng.choice([-1, 1], size=(d, k)) / 1024.0).astype(np.float32)
        dot = x.astype(np.float64) @ w.astype(np.float64)  # exact, and exact in fp32 too
        if np.max(np.abs(dot)) < 0.9:
            break
    base = 2.0 * float(rng.integers(1040, 2030))  # even, in [2080, 4058]
    b = np.full(k, base, dtype=np.float32)
    # fp16 rounds every logit to `base`; label each example with its largest exact logit, so logits
    # that skipped the fp16 rounding give a lower loss on every example.
    labels = np.argmax(dot, axis=1).astype(np.int32)
    w, b = _off_grid(rng, w), _off_grid(rng, b)
    step, lr, decay = _schedule(rng, int(rng.integers(0, 2001)), float(rng.uniform(1e-6, 2.5e-6)))
    return {
        "pixels": pixels,
        "labels": labels,
        "w": w,
        "b": b,
        "step": step,
        "lr": lr,
        "decay_steps": decay,
        "loss_scale": float(2.0 ** rng.integers(4, 13)),
        "num_steps": int(rng.integers(2, 4)),
    }


def confident(rng: np.random.Generator) -> dict[str, object]:
    """A model that is already right by a logit margin of about 18 on every example.

    In fp32 every softmax probability of a wrong class is about 1.2e-8 (their sum stays below half an
    fp32 ulp of 1, so the true-class probability is exactly 1 and its gradient exactly 0). With
    loss_scale 2^16 the scaled fp16 gradients are about 1e-4, but the unscaled gradients are about 1e-8:
    divided in fp16 they flush to zero, and an fp16 softmax loses them too. The true-class logit is above
    11.09, so exp in fp16 overflows. The updates stay far below half an fp16 ulp of the weights, and
    w and b carry offsets below half an fp16 spacing, as in shifted_logits.
    """
    n = 8
    d, k = 16, 4
    h = _hadamard(d)[1 : k + 1] * rng.choice([-1, 1], size=(k, 1))  # orthogonal zero-sum +-1 prototypes
    perm = rng.permutation(d)
    h = h[:, perm]
    labels = rng.permutation(np.arange(n) % k).astype(np.int32)
    means = rng.integers(64, 192, size=(n, 1))
    pixels = (means + 64 * h[labels]).astype(np.float32)  # per-row mean `means`, std exactly 64
    margin = float(rng.uniform(17.9, 18.5))
    alpha = np.round(margin / d * 1024.0) / 1024.0  # true-class margin d * alpha, exact in fp16
    w = (alpha * h.T).astype(np.float32)
    # A shared bias (softmax-invariant) in (0.5, 1), a multiple of 1/64 so the fp16 bias add stays exact.
    b = np.full(k, float(rng.integers(33, 64)) / 64.0, dtype=np.float32)
    w, b = _off_grid(rng, w), _off_grid(rng, b)
    step, lr, decay = _schedule(rng, int(rng.integers(0, 2001)), float(rng.uniform(500.0, 2000.0)))
    return {
        "pixels": pixels,
        "labels": labels,
        "w": w,
        "b": b,
        "step": step,
        "lr": lr,
        "decay_steps": decay,
        "loss_scale": 65536.0,
        "num_steps": int(rng.integers(2, 4)),
    }


def nearly_certain(rng: np.random.Generator) -> dict[str, object]:
    """A model right by a margin of 7.72..7.81 on every example: true-class logit exactly 0, the others
    exactly -margin, so the per-example loss is log(1 + eps) with eps = 3 exp(-margin) between 1.24 and
    1.37 times 2^-10. fp16 spaces numbers just above 1 by 2^-10, so a softmax normalizer 1 + eps rounded to
    fp16 is 1 + 2^-10, and a loss computed from it is 15% to 27% off. Everything else is ordinary: the
    loss scale is 2^4..2^12 and the gradients, about 1e-4, stay inside fp16's normal range once scaled.
    """
    n, d, k = 8, 16, 4
    h = _hadamard(d)[1 : k + 1] * rng.choice([-1, 1], size=(k, 1))  # orthogonal zero-sum +-1 prototypes
    h = h[:, rng.permutation(d)]
    labels = rng.permutation(np.arange(n) % k).astype(np.int32)
    means = rng.integers(64, 192, size=(n, 1))
    pixels = (means + 64 * h[labels]).astype(np.float32)  # x is exactly h[labels]
    margin = float(rng.integers(494, 501)) / 64.0  # a multiple of 1/64: exact in fp16
    w = (margin / d * h.T).astype(np.float32)  # true-class logit d * margin / d, others 0, all exact
    b = np.full(k, -margin, dtype=np.float32)
    step, lr, decay = _schedule(rng, int(rng.integers(0, 5001)), float(rng.uniform(1.0, 10.0)))
    return {
        "pixels": pixels,
        "labels": labels,
        "w": w,
        "b": b,
        "step": step,
        "lr": lr,
        "decay_steps": decay,
        "loss_scale": float(2.0 ** rng.integers(4, 13)),
        "num_steps": int(rng.integers(2, 5)),
    }


FAMILIES = {
    "random_images": random_images,
    "bright_28x28": bright_28x28,
    "shifted_logits": shifted_logits,
    "confident": confident,
    "late_step": late_step,
    "fast_decay": fast_decay,
    "low_contrast": low_contrast,
    "nearly_certain": nearly_certain,
}
