"""Correct variant: the whole run in one jitted lax.scan over the steps, jnp.var for the batch variance,
the running statistics updated as running + (1 - momentum) * (batch - running), jax.nn.log_softmax."""

from __future__ import annotations

import jax
import jax.numpy as jnp

F16, F32 = jnp.float16, jnp.float32


def block(params, x, mean, var, eps):
    y = params["gamma"] * ((x - mean) * jax.lax.rsqrt(var + eps)) + params["beta"]
    h = jax.nn.relu(y.astype(F16)).mean(axis=(1, 2))
    return (h @ params["w"].astype(F16) + params["b"].astype(F16)).astype(F32)


def conv(params, x16):
    out = jax.lax.conv(
        jnp.transpose(x16, (0, 3, 1, 2)),
        jnp.transpose(params["k"].astype(F16), (3, 2, 0, 1)),
        (1, 1),
        "VALID",
    )
    return jnp.transpose(out, (0, 2, 3, 1)).astype(F32)


def xent(logits, labels):
    """Each example's cross-entropy."""
    return -jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], axis=1)[:, 0]


@jax.jit
def run(params, rm, rv, xs, ys, ex, ey, lr, m, eps, scale):
    def loss_fn(params, x16, y):
        z = conv(params, x16)
        mean, var = jnp.mean(z, axis=(0, 1, 2)), jnp.var(z, axis=(0, 1, 2))
        loss = xent(block(params, z, mean, var, eps), y).mean()
        return loss * scale, (loss, mean, var)

    def step(carry, batch):
        params, rm, rv = carry
        g, (loss, mean, var) = jax.grad(loss_fn, has_aux=True)(params, *batch)
        params = jax.tree.map(lambda p, gi: p - lr * (gi / scale), params, g)
        rm = rm + (1 - m) * (mean - rm)
        rv = rv + (1 - m) * (var - rv)
        return (params, rm, rv), loss

    (params, rm, rv), losses = jax.lax.scan(step, (params, rm, rv), (xs, ys))
    eval_losses = xent(block(params, conv(params, ex), rm, rv, eps), ey)
    return jnp.concatenate([losses, rm, rv, eval_losses])


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
    params = {"k": kernel, "gamma": gamma, "beta": beta, "w": dense_w, "b": dense_b}
    params = jax.tree.map(lambda a: jnp.asarray(a, F32), params)
    return run(
        params,
        jnp.asarray(running_mean, F32),
        jnp.asarray(running_var, F32),
        jnp.asarray(images, F32).astype(F16),
        jnp.asarray(labels, jnp.int32),
        jnp.asarray(eval_images, F32).astype(F16),
        jnp.asarray(eval_labels, jnp.int32),
        F32(lr),
        F32(momentum),
        F32(epsilon),
        F32(loss_scale),
    )
