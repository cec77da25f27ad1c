"""Pitfall conv_inputs_fp32: the images and the kernel left in fp32, so the convolution runs in fp32.

Everything after the conv follows the recipe (its output is fp32 already, the statistics are fp32, the
normalized output is cast to fp16).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import optax

F16, F32 = jnp.float16, jnp.float32


def conv16(x, kernel):
    return jax.lax.conv_general_dilated(
        x, kernel, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC")
    )


def head(p, y16, labels, reduce=True):
    pooled = jax.nn.relu(y16).mean(axis=(1, 2))
    logits = (pooled @ p["dense_w"].astype(F16) + p["dense_b"].astype(F16)).astype(F32)
    per_image = optax.softmax_cross_entropy_with_integer_labels(logits, labels)
    return per_image.mean() if reduce else per_image


def batch_norm(p, z, mean, var, eps):
    return ((z - mean) * (jax.lax.rsqrt(var + eps) * p["gamma"]) + p["beta"]).astype(F16)


def batch_stats(z16):
    z = z16.astype(F32)
    mean = z.mean(axis=(0, 1, 2))
    var = jnp.square(z - mean).mean(axis=(0, 1, 2))
    return z, mean, var


def scaled_loss(p, x16, y, loss_scale, epsilon):
    z, mean, var = batch_stats(conv16(x16, p["kernel"]))
    loss = head(p, batch_norm(p, z, mean, var, epsilon), y)
    return loss * loss_scale, (loss, mean, var)


@functools.partial(jax.jit, static_argnames="epsilon")
def step(p, rm, rv, x16, y, lr, momentum, loss_scale, epsilon):
    g, (loss, mean, var) = jax.grad(scaled_loss, has_aux=True)(p, x16, y, loss_scale, epsilon)
    p = jax.tree.map(lambda a, b: a - lr * (b / loss_scale), p, g)
    rm = momentum * rm + (1 - momentum) * mean
    rv = momentum * rv + (1 - momentum) * var
    return p, rm, rv, loss


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
    p = {"kernel": kernel, "gamma": gamma, "beta": beta, "dense_w": dense_w, "dense_b": dense_b}
    p = {k: jnp.asarray(v, F32) for k, v in p.items()}
    rm, rv = jnp.asarray(running_mean, F32), jnp.asarray(running_var, F32)

    losses = []
    for k in range(images.shape[0]):
        x16 = jnp.asarray(images[k])
        p, rm, rv, loss = step(p, rm, rv, x16, jnp.asarray(labels[k]), lr, momentum, loss_scale, epsilon)
        losses.append(loss)
    z = conv16(jnp.asarray(eval_images), p["kernel"]).astype(F32)
    eval_losses = head(p, batch_norm(p, z, rm, rv, epsilon), jnp.asarray(eval_labels), reduce=False)
    return jnp.concatenate([jnp.stack(losses), rm, rv, eval_losses])
