"""Pitfall conv_inputs_fp32, the output rounded after: the conv runs on the fp32 images and kernel, and only
its output is cast to fp16; the rest is the recipe."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import optax


def forward(p, x, epsilon, stats=None):
    z16 = jax.lax.conv_general_dilated(
        x, p["kernel"], (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC")
    ).astype(jnp.float16)
    z = z16.astype(jnp.float32)
    if stats is None:
        mean = z.mean(axis=(0, 1, 2))
        var = jnp.square(z - mean).mean(axis=(0, 1, 2))
    else:
        mean, var = stats
    y16 = ((z - mean) * (jax.lax.rsqrt(var + epsilon) * p["gamma"]) + p["beta"]).astype(jnp.float16)
    pooled16 = jnp.mean(jax.nn.relu(y16), axis=(1, 2))
    return (
        (pooled16 @ p["dense_w"].astype(jnp.float16) + p["dense_b"].astype(jnp.float16)).astype(jnp.float32),
        mean,
        var,
    )


def loss_fn(p, x, y, S, epsilon):
    logits, mean, var = forward(p, x, epsilon)
    loss = optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
    return loss * S, (loss, mean, var)


@functools.partial(jax.jit, static_argnames="epsilon")
def step(p, rm, rv, x, y, lr, momentum, S, epsilon):
    (_, (loss, mean, var)), g = jax.value_and_grad(loss_fn, has_aux=True)(p, x, y, S, epsilon)
    p = jax.tree_util.tree_map(lambda a, b: a - lr * (b / S), p, g)
    return p, momentum * rm + (1 - momentum) * mean, momentum * rv + (1 - momentum) * var, loss


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
    params = {
        "kernel": jnp.asarray(kernel, jnp.float32),
        "gamma": jnp.asarray(gamma, jnp.float32),
        "beta": jnp.asarray(beta, jnp.float32),
        "dense_w": jnp.asarray(dense_w, jnp.float32),
        "dense_b": jnp.asarray(dense_b, jnp.float32),
    }
    rm, rv = jnp.asarray(running_mean, jnp.float32), jnp.asarray(running_var, jnp.float32)
    S = jnp.float32(loss_scale)

    losses = []
    for k in range(images.shape[0]):
        params, rm, rv, loss = step(
            params, rm, rv, jnp.asarray(images[k], jnp.float32), labels[k], lr, momentum, S, epsilon
        )
        losses.append(loss)
    logits, _, _ = forward(params, jnp.asarray(eval_images, jnp.float32), epsilon, (rm, rv))
    ev = optax.softmax_cross_entropy_with_integer_labels(logits, eval_labels)
    return jnp.concatenate([jnp.stack(losses), rm, rv, ev]).astype(jnp.float32)
