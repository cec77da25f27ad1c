"""Pitfall variance_in_fp16, one pass on the fp16 output: mean(z16 * z16) - mean16^2 in fp16, then cast to
fp32 for the normalization; a lax.scan over the steps."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import optax


def net(p, x, epsilon, stats=None):
    z16 = jax.lax.conv_general_dilated(
        x.astype(jnp.float16),
        p[0].astype(jnp.float16),
        (1, 1),
        "VALID",
        dimension_numbers=("NHWC", "HWIO", "NHWC"),
    )
    if stats is None:
        m16 = z16.mean(axis=(0, 1, 2))
        sq16 = (z16 * z16).mean(axis=(0, 1, 2))
        mean, var = m16.astype(jnp.float32), (sq16 - m16 * m16).astype(jnp.float32)
    else:
        mean, var = stats
    y16 = ((z16.astype(jnp.float32) - mean) * (jax.lax.rsqrt(var + epsilon) * p[1]) + p[2]).astype(
        jnp.float16
    )
    pooled = jax.nn.relu(y16).mean(axis=(1, 2))
    return (pooled @ p[3].astype(jnp.float16) + p[4].astype(jnp.float16)).astype(jnp.float32), (mean, var)


def loss_fn(p, x, y, S, epsilon):
    logits, st = net(p, x, epsilon)
    loss = optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
    return loss * S, (loss, st)


def body(carry, xy, lr, momentum, S, epsilon):
    p, rm, rv = carry
    (_, (loss, (m, v))), g = jax.value_and_grad(loss_fn, has_aux=True)(p, *xy, S, epsilon)
    p = tuple(a - lr * (b / S) for a, b in zip(p, g, strict=False))
    return (p, momentum * rm + (1 - momentum) * m, momentum * rv + (1 - momentum) * v), loss


@functools.partial(jax.jit, static_argnames="epsilon")
def run(carry, xs, lr, momentum, S, epsilon):
    return jax.lax.scan(lambda c, xy: body(c, xy, lr, momentum, S, epsilon), carry, xs)


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

    p0 = tuple(jnp.asarray(a, jnp.float32) for a in (kernel, gamma, beta, dense_w, dense_b))
    (p, rm, rv), losses = run(
        (p0, jnp.float32(running_mean), jnp.float32(running_var)),
        (jnp.asarray(images), jnp.asarray(labels)),
        lr,
        momentum,
        S,
        epsilon,
    )
    logits, _ = net(p, jnp.asarray(eval_images), epsilon, (rm, rv))
    ev = optax.softmax_cross_entropy_with_integer_labels(logits, eval_labels)
    return jnp.concatenate([losses, rm, rv, ev]).astype(jnp.float32)
