"""Correct variant: eager (no jit), the variance as E[z^2] - E[z]^2 in float32, jax.value_and_grad with
respect to the fp32 params, jax.tree_util, jax.nn.logsumexp, the normalization written as a division."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def conv16(x16, kernel):
    return jax.lax.conv_general_dilated(
        x16,
        kernel.astype(jnp.float16),
        window_strides=(1, 1),
        padding="VALID",
        dimension_numbers=("NHWC", "HWIO", "NHWC"),
    )


def forward(p, x16, labels, eps, stats=None):
    z = conv16(x16, p["kernel"]).astype(jnp.float32)
    if stats is None:
        mean = z.mean(axis=(0, 1, 2))
        var = jnp.maximum(jnp.mean(z * z, axis=(0, 1, 2)) - mean * mean, 0.0)
    else:
        mean, var = stats
    y16 = (p["gamma"] * (z - mean) / jnp.sqrt(var + eps) + p["beta"]).astype(jnp.float16)
    feats = jnp.mean(jax.nn.relu(y16), axis=(1, 2))
    logits = (feats @ p["dense_w"].astype(jnp.float16) + p["dense_b"].astype(jnp.float16)).astype(jnp.float32)
    nll = jax.nn.logsumexp(logits, axis=-1) - jnp.take_along_axis(logits, labels[:, None], axis=-1)[:, 0]
    return nll, (mean, var)


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
    p = jax.tree_util.tree_map(lambda a: jnp.asarray(a, jnp.float32), p)
    rm, rv = jnp.asarray(running_mean), jnp.asarray(running_var)

    def scaled(p, x16, y):
        nll, aux = forward(p, x16, y, epsilon)
        loss = nll.mean()
        return loss * loss_scale, (loss, aux)

    losses = []
    for k in range(images.shape[0]):
        x16 = jnp.asarray(images[k]).astype(jnp.float16)
        (_, (loss, (mean, var))), g = jax.value_and_grad(scaled, has_aux=True)(p, x16, jnp.asarray(labels[k]))
        p = jax.tree_util.tree_map(lambda a, b: a - lr * (b / loss_scale), p, g)
        rm = momentum * rm + (1.0 - momentum) * mean
        rv = momentum * rv + (1.0 - momentum) * var
        losses.append(loss)
    eval_losses, _ = forward(
        p, jnp.asarray(eval_images).astype(jnp.float16), jnp.asarray(eval_labels), epsilon, (rm, rv)
    )
    return jnp.concatenate([jnp.array(losses, jnp.float32), rm, rv, eval_losses])
