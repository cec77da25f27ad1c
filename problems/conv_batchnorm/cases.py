"""Public case generator for conv_batchnorm (numpy only: the secret is the seed, not this code).

Every case is a few steps of small NHWC images (4x4 pixels, 2 channels, 4 images a step), the fp32 params
of a 3x3 VALID conv to 4 channels, batch normalization, a global average pool and a 4-to-3 dense head,
the fp32 running statistics to start from, and images to evaluate on after the run.
"""

from __future__ import annotations

import numpy as np

H = W = 4
C_IN = 2
C = 4
K = 3  # classes
B = 4  # images per step
B_EVAL = 8


def _f16(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, np.float32).astype(np.float16).astype(np.float32)


def _conv(x: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """3x3 VALID convolution in float64: x (..., H, W, C_IN), kernel (3, 3, C_IN, C)."""
    x = np.asarray(x, np.float64)
    out = np.zeros((*x.shape[:-3], H - 2, W - 2, kernel.shape[-1]))
    for i in range(3):
        for j in range(3):
            out += x[..., i : i + H - 2, j : j + W - 2, :] @ kernel[i, j].astype(np.float64)
    return out


def _labels(rng: np.random.Generator, steps: int, batch: int) -> np.ndarray:
    """Every class at least once in every batch."""
    rows = []
    for _ in range(steps):
        row = np.concatenate([np.arange(K), rng.integers(0, K, batch - K)])
        rows.append(rng.permutation(row))
    return np.array(rows, np.int32)


def _patterns(rng: np.random.Generator, labels: np.ndarray) -> np.ndarray:
    """Class templates (smooth blobs, one per class) plus noise: values roughly in [-1, 1]."""
    templates = rng.normal(size=(K, H, W, C_IN))
    templates = (templates + np.roll(templates, 1, 1) + np.roll(templates, 1, 2)) / 3
    return templates[labels] + 0.5 * rng.normal(size=(*labels.shape, H, W, C_IN))


def _head(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        "gamma": rng.uniform(0.5, 2.0, C).astype(np.float32),
        "beta": rng.uniform(-0.25, 0.75, C).astype(np.float32),
        "dense_w": rng.normal(0.0, 0.3, (C, K)).astype(np.float32),
        "dense_b": rng.normal(0.0, 0.1, K).astype(np.float32),
    }


def _pretrained(rng: np.random.Generator, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Running statistics far from the batches': the mean 1 to 2 standard deviations further from 0, the
    variance a quarter to a half of the batches'."""
    mean, std = z.mean(axis=(0, 1, 2, 3)), z.std(axis=(0, 1, 2, 3))
    shift = rng.uniform(1.0, 2.0, C) * np.sign(mean) * std
    factor = rng.uniform(0.25, 0.5, C)
    return (mean + shift).astype(np.float32), (std**2 * factor).astype(np.float32)


def _offset_means(rng: np.random.Generator, images: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """Adds a constant to each output channel's kernel so that its batch means are 0.5 to 1.5 standard
    deviations away from 0 (running means near 0 would make a relative tolerance meaningless)."""
    patch = _conv(_f16(images), np.ones((3, 3, C_IN, 1)))[..., 0]  # (steps, B, H-2, W-2)
    z = _conv(_f16(images), kernel)
    mean, std = z.mean(axis=(0, 1, 2, 3)), z.std(axis=(0, 1, 2, 3))
    target = rng.uniform(0.5, 1.5, C) * rng.choice([-1.0, 1.0], C) * std
    return kernel + ((target - mean) / patch.mean())[None, None, None, :]


def _case(rng, images, labels, eval_images, eval_labels, kernel, z, lr, momentum, epsilon, running=None):
    running_mean, running_var = _pretrained(rng, z) if running is None else running
    return {
        "images": np.asarray(images, np.float32),
        "labels": labels,
        "eval_images": np.asarray(eval_images, np.float32),
        "eval_labels": eval_labels,
        "kernel": np.asarray(kernel, np.float32),
        **_head(rng),
        "running_mean": running_mean,
        "running_var": running_var,
        "lr": lr,
        "momentum": momentum,
        "epsilon": epsilon,
        "loss_scale": float(2.0 ** rng.integers(8, 13)),
    }


def wide_channels(rng: np.random.Generator) -> dict[str, object]:
    """Conv outputs with a standard deviation of 600 to 1500 per channel: every variance is above fp16's
    largest number, 65504."""
    steps = int(rng.integers(6, 9))
    labels = _labels(rng, steps, B)
    eval_labels = _labels(rng, 1, B_EVAL)[0]
    images = np.clip(0.5 + 0.3 * _patterns(rng, labels), 0.0, 1.0)
    eval_images = np.clip(0.35 + 0.15 * _patterns(rng, eval_labels[None])[0], 0.0, 1.0)
    kernel = _offset_means(rng, images, rng.normal(size=(3, 3, C_IN, C)))
    std = _conv(_f16(images), kernel).std(axis=(1, 2, 3))  # (steps, C)
    kernel *= rng.uniform(600.0, 1500.0, C) / std.min(axis=0)
    z = _conv(_f16(images), _f16(kernel))
    return _case(
        rng,
        images,
        labels,
        eval_images,
        eval_labels,
        kernel,
        z,
        2.0**-4,
        float(rng.choice([0.75, 0.875])),
        1e-5,
    )


def faint_images(rng: np.random.Generator) -> dict[str, object]:
    """Pixels within 2^-13 of 1, which fp16 rounds to exactly 1, and a kernel of integers whose sum is 0
    per output channel: the fp16 conv output is exactly 0, the fp32 one holds the faint pattern."""
    steps = int(rng.integers(6, 9))
    labels = _labels(rng, steps, B)
    eval_labels = _labels(rng, 1, B_EVAL)[0]

    def faint(pattern: np.ndarray) -> np.ndarray:
        return (1.0 + np.clip(pattern / 3.0, -1.0, 1.0) * 2.0**-13).astype(np.float32)

    images = faint(_patterns(rng, labels))
    eval_images = faint(_patterns(rng, eval_labels[None])[0])
    half = 16 * rng.integers(4, 33, (3, 3, 1, C)) * rng.choice([-1, 1], (3, 3, 1, C))
    other = -np.stack([rng.permutation(half[..., 0, c].ravel()).reshape(3, 3) for c in range(C)], -1)[
        :, :, None
    ]
    kernel = np.concatenate([half, other], axis=2).astype(np.float32)
    z = _conv(images, kernel)  # what fp32 would see
    running = (
        (rng.uniform(0.5, 1.0, C) * rng.choice([-1.0, 1.0], C) * 2.0**-8).astype(np.float32),
        rng.uniform(0.5, 2.0, C).astype(np.float32) * 2.0**-12,
    )
    case = _case(
        rng,
        images,
        labels,
        eval_images,
        eval_labels,
        kernel,
        z,
        2.0**-7,
        float(rng.choice([0.75, 0.875])),
        2.0**-14,
        running,
    )
    case["loss_scale"] = 256.0
    return case


def _ordinary(rng: np.random.Generator, labels: np.ndarray, size: float = 0.5):
    """Evaluation labels, images of class patterns (values in [0, 1], the evaluation ones darker and of lower
    contrast) and a kernel of normal entries of standard deviation `size`, its batch means offset from 0."""
    eval_labels = _labels(rng, 1, B_EVAL)[0]
    images = np.clip(0.5 + 0.3 * _patterns(rng, labels), 0.0, 1.0)
    eval_images = np.clip(0.35 + 0.15 * _patterns(rng, eval_labels[None])[0], 0.0, 1.0)
    kernel = _offset_means(rng, images, rng.normal(0.0, size, (3, 3, C_IN, C)))
    return eval_labels, images, eval_images, kernel


def pretrained_stats(rng: np.random.Generator) -> dict[str, object]:
    """Ordinary activations (standard deviation about 1) and running statistics far from the batches'."""
    labels = _labels(rng, int(rng.integers(6, 9)), B)
    eval_labels, images, eval_images, kernel = _ordinary(rng, labels)
    z = _conv(_f16(images), _f16(kernel))
    momentum = float(rng.choice([0.75, 0.875]))
    return _case(rng, images, labels, eval_images, eval_labels, kernel, z, 2.0**-9, momentum, 1e-5)


def one_big_step(rng: np.random.Generator) -> dict[str, object]:
    """One step (T = 1) that changes the kernel by a large fraction of itself, momentum 0.75.

    The kernel is pretrained_stats' divided by 64 (entries about 0.008 in size, conv outputs about 0.016)
    and lr is 2^-5. Batch normalization makes the loss blind to the kernel's scale, so its gradient grows
    as the kernel shrinks (64 times here) and one step of lr 2^-5 moves the kernel by a large part of its
    size, where pretrained_stats' eight steps of 2^-9 move it by a few thousandths. The running statistics
    take a quarter of this step's batch statistics, of the kernel before the step: taken from a second
    forward pass after the update instead, they are the batch statistics of the moved kernel, 17 to 900
    tolerances off (30 seeds, and 20 secrets). dense_w is divided by 64 too, so the logits stay within a
    few hundredths of dense_b: the large step does not make the evaluation losses sensitive to the last bits
    of the gradient (correct forms stay within 0.1 of the tolerance), and with one step nothing can build
    up."""
    labels = _labels(rng, 1, B)
    eval_labels, images, eval_images, kernel = _ordinary(rng, labels, 0.5 / 64)
    z = _conv(_f16(images), _f16(kernel))
    case = _case(rng, images, labels, eval_images, eval_labels, kernel, z, 2.0**-5, 0.75, 1e-5)
    case["dense_w"] = (case["dense_w"] / 64).astype(np.float32)
    return case


def _spacing16(value: np.ndarray) -> np.ndarray:
    """fp16's spacing at each value (normal numbers)."""
    return 2.0 ** (np.floor(np.log2(np.abs(value))) - 10)


def settled_stats(rng: np.random.Generator) -> dict[str, object]:
    """A long run (128 steps, momentum 1 - 2^-7) of batches that all have the same statistics, conv outputs
    28 to 45 standard deviations from 0 (fp16's E[z^2] - E[z]^2 cancels, fp32's does not), and running
    statistics starting 48 to 54 fp16 spacings (means) and 22 to 32 (variances) from the batches': each
    step's update is below half the fp16 spacing, so fp16 running statistics never move while fp32 ones
    cover most of the gap (GRADING.md has the derivation)."""
    steps, momentum = 128, 1.0 - 2.0**-7
    labels = _labels(rng, steps, B)
    eval_labels = _labels(rng, 1, B_EVAL)[0]
    ones = np.ones((3, 3, C_IN, 1))

    def same_statistics(noise: np.ndarray) -> np.ndarray:  # (..., B, H, W, C_IN): patch sums of mean 0, std 1
        sums = _conv(noise, ones)[..., 0]
        mean = sums.mean(axis=(-3, -2, -1))[..., None, None, None, None]
        std = sums.std(axis=(-3, -2, -1))[..., None, None, None, None]
        return (noise - mean / (3 * 3 * C_IN)) / std

    noise = same_statistics(_patterns(rng, labels))
    amplitude = min(0.5 * 3 * 3 * C_IN / rng.uniform(28.0, 36.0), 0.49 / np.abs(noise).max())
    images = 0.5 + amplitude * noise  # within [0, 1]
    eval_images = 0.5 + 0.5 * amplitude * same_statistics(_patterns(rng, eval_labels[None])[0])
    size = rng.uniform(66.0, 96.0, C) * rng.choice([-1.0, 1.0], C)
    kernel = rng.normal(0.0, 0.02, (3, 3, C_IN, C)) + (size / (0.5 * 3 * 3 * C_IN))[None, None, None, :]
    z = _f16(_conv(_f16(images), _f16(kernel)))
    mean, var = z.mean(axis=(1, 2, 3)).mean(axis=0), z.var(axis=(1, 2, 3)).mean(axis=0)  # (C,) each

    def settled(centre: np.ndarray, low: float, high: float) -> np.ndarray:
        gap = (
            rng.uniform(low, high, C) * 64 * _spacing16(centre) * np.sign(centre)
        )  # away from 0: no smaller spacing
        return (centre + gap).astype(np.float32)

    case = _case(
        rng,
        images,
        labels,
        eval_images,
        eval_labels,
        kernel,
        z,
        2.0**-16,
        momentum,
        1e-5,
        (settled(mean, 0.75, 0.85), settled(var, 0.35, 0.5)),
    )
    case["dense_w"] = (case["dense_w"] / 64).astype(np.float32)  # the losses barely depend on the features
    return case


COARSE = 2.0**-6  # fp16's spacing in [16, 32)


def _bias_run(bias: np.ndarray, labels: np.ndarray, lr: float) -> np.ndarray:
    """The fp32 dense bias after each SGD step, (T, K), when the logits are its fp16 rounding (the features
    too faint to move them): the gradient of the mean cross-entropy is softmax(logits) minus the batch's
    share of each class."""
    b, run = np.asarray(bias, np.float32), []
    for row in labels:
        logits = _f16(b).astype(np.float64)
        p = np.exp(logits - logits.max())
        b = (b - np.float32(lr) * (p / p.sum() - np.bincount(row, minlength=K) / len(row))).astype(np.float32)
        run.append(b)
    return np.array(run)


def _class0_loss(bias: np.ndarray) -> float:
    return float(np.log1p(np.exp(bias[1:] - bias[0]).sum()))


def coarse_bias(rng: np.random.Generator) -> dict[str, object]:
    """A dense bias between 16 and 32, where fp16's spacing is 2^-6, with class 0 ahead by 5.5 to 6.75, and
    features too faint to move the fp16 logits off it: 6 steps of an lr (0.52 to 0.6 of a spacing) for
    which each update of the bias is 0.13 to 0.45 of a spacing, below half of it.

    gamma and beta are pretrained_stats' divided by 64 and dense_w by 512, so pooled16 @ dense_w16 stays
    below a hundredth of a spacing and the fp16 logits are exactly the fp16 rounding of dense_b (softmax
    ignores the common offset): every correct form computes the same logits. The bias gradient,
    softmax minus each class's share of the batch, has one sign for all 6 steps (class 0 holds 99.6% of
    the probability and a quarter or half of every batch), so the fp32 master bias of class 0 moves down by
    1.6 to 2.7 spacings and the fp16 bias the forward pass uses by 2; an fp16 master never moves, since
    each update rounds back to where it was (23 to 35 tolerances on the class-0 evaluation
    losses). Those losses are 0.0025 to 0.0084, log(1 + s) with s = 2.5 to 8.6 times 2^-10: a cross-entropy
    taken in fp16 rounds 1 + s to fp16's spacing of 2^-10 there, or the loss to the logits' spacing of
    2^-6, and is 20 to 500 tolerances off; a head computed in fp32 uses the unrounded bias (the generator
    keeps it 4 tolerances or more from the fp16 one). The draw is
    repeated until every fp32 bias stays 0.02 spacings or more from the rounding midpoints (no last-bit
    difference between correct forms can round it the other way), the class-0 bias has crossed two of
    them, and s lies a quarter of a spacing or more from fp16's grid."""
    steps = 6
    while True:
        labels = _labels(rng, steps, B)
        lr = COARSE * 4 * rng.uniform(0.13, 0.15)
        centre = COARSE * rng.integers(17 * 64, 25 * 64)
        bias = np.array([centre + COARSE * rng.integers(352, 432), centre, centre], np.float32)
        run = _bias_run(bias, labels, lr)
        moved = (run - bias) / COARSE  # spacings from the start
        margin = np.abs(np.abs(moved) % 1.0 - 0.5).min()  # from the rounding midpoints
        final = _f16(run[-1]).astype(np.float64)
        share = np.exp(final[1:] - final[0]).sum() / 2.0**-10
        head32 = abs(_class0_loss(run[-1].astype(np.float64)) / _class0_loss(final) - 1) / 2.0**-9
        if margin > 0.02 and moved[-1, 0] < -1.6 and 0.25 < share % 1.0 < 0.75 and head32 > 4:
            break
    eval_labels, images, eval_images, kernel = _ordinary(rng, labels)
    z = _conv(_f16(images), _f16(kernel))
    momentum = float(rng.choice([0.75, 0.875]))
    case = _case(rng, images, labels, eval_images, eval_labels, kernel, z, lr, momentum, 1e-5)
    for name, by in (("gamma", 64), ("beta", 64), ("dense_w", 512)):
        case[name] = (case[name] / by).astype(np.float32)
    case["dense_b"] = bias
    return case


# Conv outputs with standard deviations of 2^-7 to 2^-6 keep the batch variance (2^-14 to 2^-12) in fp16's
# normal range, so batch statistics taken in fp16 are nearly as good there as in the other families, while
# `rsqrt(var + epsilon) * gamma`, about `gamma`, stays above fp16's largest number.
LARGE_GAMMA_STD = (2.0**-7, 2.0**-6)
LARGE_GAMMA_EPSILON = 1.0


def large_gamma(rng: np.random.Generator) -> dict[str, object]:
    """`gamma` from 70000 to 75000, above fp16's largest number (65504), on channels whose conv output has a
    standard deviation of 2^-7 to 2^-6, with `epsilon = 1`: `var + epsilon` is 1 within 2^-12, so the
    normalized values are a few hundredths, and the fp32 `rsqrt(var + epsilon) * gamma` of the recipe gives
    outputs of a few thousand, while `gamma` cast to fp16 is inf, and so is that product. The draw is
    repeated until every output, training or evaluation, is below 2^13 in size (so that even an fp16 sum of
    the 4 positions is finite), bounded with `rsqrt(var + epsilon) <= epsilon^-1/2` and the running mean
    anywhere between its start and the batches' means. `dense_w` is 1024 times smaller (small logits),
    `S = 1` and `lr = 2^-26`, so the params barely move: the family holds the forward pass and the running
    statistics."""
    epsilon = LARGE_GAMMA_EPSILON
    while True:
        labels = _labels(rng, int(rng.integers(6, 9)), B)
        eval_labels, images, eval_images, kernel = _ordinary(rng, labels)
        std = _conv(_f16(images), kernel).std(axis=(1, 2, 3))  # (steps, C)
        kernel = kernel * rng.uniform(*LARGE_GAMMA_STD, C) / std.mean(axis=0)
        z = _conv(_f16(images), _f16(kernel))
        momentum = float(rng.choice([0.75, 0.875]))
        case = _case(rng, images, labels, eval_images, eval_labels, kernel, z, 2.0**-26, momentum, epsilon)
        case["gamma"] = rng.uniform(7e4, 7.5e4, C).astype(np.float32)
        z_eval = _conv(_f16(eval_images), _f16(kernel))
        centres = np.concatenate([case["running_mean"][None], z.mean(axis=(1, 2, 3))])  # (1 + T, C)
        spread = max(np.abs(z[..., None, :] - centres).max(), np.abs(z_eval[..., None, :] - centres).max())
        if spread * epsilon**-0.5 * case["gamma"].max() + np.abs(case["beta"]).max() < 2.0**13:
            break
    case["dense_w"] = (case["dense_w"] / 1024).astype(np.float32)
    case["loss_scale"] = 1.0
    return case


FAMILIES = {
    "wide_channels": wide_channels,
    "faint_images": faint_images,
    "pretrained_stats": pretrained_stats,
    "settled_stats": settled_stats,
    "one_big_step": one_big_step,
    "coarse_bias": coarse_bias,
    "large_gamma": large_gamma,
}
