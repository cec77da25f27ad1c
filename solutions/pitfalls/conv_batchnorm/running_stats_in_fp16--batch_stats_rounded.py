"""Pitfall running_stats_in_fp16, fed rounded batch statistics: the running mean and variance stay fp32, but
the batch statistics that update them come out of the loss rounded to fp16 (a batch variance above 65504
is inf); the normalization uses the fp32 ones."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax


def logits_fn(t, x, epsilon, mean=None, var=None):
    z = jax.lax.conv_general_dilated(
        x.astype(jnp.float16),
        t["k"].astype(jnp.float16),
        (1, 1),
        "VALID",
        dimension_numbers=("NHWC", "HWIO", "NHWC"),
    ).astype(jnp.float32)
    if mean is None:
        mean = z.mean((0, 1, 2))
        var = ((z - mean) ** 2).mean((0, 1, 2))
    y16 = ((z - mean) * (jax.lax.rsqrt(var + epsilon) * t["g"]) + t["b"]).astype(jnp.float16)
    pooled = jax.nn.relu(y16).mean((1, 2))
    return (
        (pooled @ t["w"].astype(jnp.float16) + t["c"].astype(jnp.float16)).astype(jnp.float32),
        mean,
        var,
    )


def loss_fn(t, x, y, S, epsilon):
    logits, mean, var = logits_fn(t, x, epsilon)
    loss = optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
    return loss * S, (loss, mean.astype(jnp.float16), var.astype(jnp.float16))


vg = jax.jit(jax.value_and_grad(loss_fn, has_aux=True), static_argnames="epsilon")


def train_conv_bn(
    images,
    labels,
    eval_images,
    eval_labels,
    kernel,
    gamma,
    beta,
    dense_w,
    dense_b,
    running_mean,
    running_var,
    lr,
    momentum,
    epsilon,
    loss_scale,
):
    S = jnp.float32(loss_scale)
    theta = dict(
        k=jnp.asarray(kernel, jnp.float32),
        g=jnp.asarray(gamma, jnp.float32),
        b=jnp.asarray(beta, jnp.float32),
        w=jnp.asarray(dense_w, jnp.float32),
        c=jnp.asarray(dense_b, jnp.float32),
    )
    rm, rv = jnp.asarray(running_mean, jnp.float32), jnp.asarray(running_var, jnp.float32)

    losses = []
    for x, y in zip(images, labels, strict=False):
        (_, (loss, m16, v16)), g = vg(theta, x, y, S, epsilon)
        theta = {n: theta[n] - lr * (g[n] / S) for n in theta}
        rm = momentum * rm + (1 - momentum) * m16.astype(jnp.float32)
        rv = momentum * rv + (1 - momentum) * v16.astype(jnp.float32)
        losses.append(loss)
    logits, _, _ = logits_fn(theta, jnp.asarray(eval_images), epsilon, rm, rv)
    ev = optax.softmax_cross_entropy_with_integer_labels(logits, eval_labels)
    return jnp.concatenate([jnp.array(losses), rm, rv, ev]).astype(jnp.float32)
