"""Mistake: I cast the params to fp16 once per step and differentiate with respect to those fp16 copies
(upcasting gamma and beta inside the normalization), so the gradient comes back fp16; I unscale it in fp16
and only then apply it to the fp32 masters."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import optax

F16, F32 = jnp.float16, jnp.float32


def forward(p16, x16, labels, eps, stats=None):
    z16 = jax.lax.conv_general_dilated(
        x16, p16["kernel"], (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC")
    )
    z = z16.astype(F32)
    if stats is None:
        mean = z.mean(axis=(0, 1, 2))
        var = jnp.square(z - mean).mean(axis=(0, 1, 2))
    else:
        mean, var = stats
    scale = jax.lax.rsqrt(var + eps) * p16["gamma"].astype(F32)
    y16 = ((z - mean) * scale + p16["beta"].astype(F32)).astype(F16)
    pooled = jax.nn.relu(y16).mean(axis=(1, 2))
    logits = (pooled @ p16["dense_w"] + p16["dense_b"]).astype(F32)
    return optax.softmax_cross_entropy_with_integer_labels(logits, labels), mean, var


def scaled_loss(p16, x16, y, loss_scale, epsilon):
    per_image, mean, var = forward(p16, x16, y, epsilon)
    loss = per_image.mean()
    return loss * loss_scale, (loss, mean, var)


@functools.partial(jax.jit, static_argnames="epsilon")
def step(masters, rm, rv, x16, y, lr, loss_scale, scale16, momentum, one_minus_momentum, epsilon):
    p16 = {k: v.astype(F16) for k, v in masters.items()}
    g16, (loss, mean, var) = jax.grad(scaled_loss, has_aux=True)(p16, x16, y, loss_scale, epsilon)
    masters = {k: masters[k] - lr * (g16[k] / scale16).astype(F32) for k in masters}
    rm = momentum * rm + one_minus_momentum * mean
    rv = momentum * rv + one_minus_momentum * var
    return masters, rm, rv, loss


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
    masters = {"kernel": kernel, "gamma": gamma, "beta": beta, "dense_w": dense_w, "dense_b": dense_b}
    masters = {k: jnp.asarray(v, F32) for k, v in masters.items()}
    rm, rv = jnp.asarray(running_mean, F32), jnp.asarray(running_var, F32)
    scale16 = jnp.asarray(loss_scale, F16)

    losses = []
    for k in range(images.shape[0]):
        x16, y = jnp.asarray(images[k], F16), jnp.asarray(labels[k])
        masters, rm, rv, loss = step(
            masters, rm, rv, x16, y, lr, loss_scale, scale16, momentum, 1 - momentum, epsilon
        )
        losses.append(loss)
    p16 = {k: v.astype(F16) for k, v in masters.items()}
    eval_x16 = jnp.asarray(eval_images, F16)
    eval_losses, _, _ = forward(p16, eval_x16, jnp.asarray(eval_labels), epsilon, (rm, rv))
    return jnp.concatenate([jnp.stack(losses), rm, rv, eval_losses]).astype(F32)
