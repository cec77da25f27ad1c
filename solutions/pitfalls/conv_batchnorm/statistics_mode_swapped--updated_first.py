"""Pitfall statistics_mode_swapped, running statistics updated first: each step updates the running mean and
variance with the batch's statistics, then normalizes the training batch with those updated running ones."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import optax


def conv(p, x):
    return jax.lax.conv_general_dilated(
        x.astype(jnp.float16),
        p["kernel"].astype(jnp.float16),
        (1, 1),
        "VALID",
        dimension_numbers=("NHWC", "HWIO", "NHWC"),
    ).astype(jnp.float32)


def head(p, z, mean, var, epsilon):
    y16 = ((z - mean) * (jax.lax.rsqrt(var + epsilon) * p["gamma"]) + p["beta"]).astype(jnp.float16)
    pooled = jax.nn.relu(y16).mean(axis=(1, 2))
    return (pooled @ p["w"].astype(jnp.float16) + p["b"].astype(jnp.float16)).astype(jnp.float32)


def loss_fn(p, rm, rv, x, y, momentum, S, epsilon):
    z = conv(p, x)
    mean = z.mean(axis=(0, 1, 2))
    var = jnp.square(z - mean).mean(axis=(0, 1, 2))
    new_rm = momentum * rm + (1 - momentum) * jax.lax.stop_gradient(mean)
    new_rv = momentum * rv + (1 - momentum) * jax.lax.stop_gradient(var)
    loss = optax.softmax_cross_entropy_with_integer_labels(head(p, z, new_rm, new_rv, epsilon), y).mean()
    return loss * S, (loss, new_rm, new_rv)


@functools.partial(jax.jit, static_argnames="epsilon")
def step(p, rm, rv, x, y, lr, momentum, S, epsilon):
    (_, (loss, rm, rv)), g = jax.value_and_grad(loss_fn, has_aux=True)(p, rm, rv, x, y, momentum, S, epsilon)
    return jax.tree_util.tree_map(lambda a, b: a - lr * (b / S), p, g), rm, rv, loss


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
    p = {
        "kernel": jnp.asarray(kernel, jnp.float32),
        "gamma": jnp.asarray(gamma, jnp.float32),
        "beta": jnp.asarray(beta, jnp.float32),
        "w": jnp.asarray(dense_w, jnp.float32),
        "b": jnp.asarray(dense_b, jnp.float32),
    }
    rm = jnp.asarray(running_mean, jnp.float32)
    rv = jnp.asarray(running_var, jnp.float32)
    S = jnp.float32(loss_scale)

    losses = []
    for k in range(images.shape[0]):
        p, rm, rv, loss = step(p, rm, rv, images[k], labels[k], lr, momentum, S, epsilon)
        losses.append(loss)
    ev = optax.softmax_cross_entropy_with_integer_labels(
        head(p, conv(p, jnp.asarray(eval_images)), rm, rv, epsilon), eval_labels
    )
    return jnp.concatenate([jnp.stack(losses), rm, rv, ev]).astype(jnp.float32)
