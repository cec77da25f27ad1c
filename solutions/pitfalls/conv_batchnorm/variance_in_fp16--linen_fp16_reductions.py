"""Pitfall variance_in_fp16, in flax.linen: BatchNorm(dtype=float16, param_dtype=float32,
force_float32_reductions=False) takes the batch mean and variance of its fp16 input in fp16 (the mean of the
squares minus the square of the mean), and a variance above 65504 is inf; otherwise the flax variant of the
recipe (Conv, BatchNorm and Dense modules, optax.sgd, a jitted step)."""

from __future__ import annotations

import functools

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class ConvBN(nn.Module):
    momentum: float
    epsilon: float

    @nn.compact
    def __call__(self, x, train: bool):
        x = nn.Conv(4, (3, 3), padding="VALID", use_bias=False, dtype=jnp.float16, param_dtype=jnp.float32)(x)
        x = nn.BatchNorm(
            use_running_average=not train,
            momentum=self.momentum,
            epsilon=self.epsilon,
            dtype=jnp.float16,
            param_dtype=jnp.float32,
            force_float32_reductions=False,
        )(x)
        x = jnp.mean(nn.relu(x), axis=(1, 2))
        return nn.Dense(3, dtype=jnp.float16, param_dtype=jnp.float32)(x)


def loss_fn(params, batch_stats, x, y, momentum, loss_scale, epsilon):
    logits, updates = ConvBN(momentum=momentum, epsilon=epsilon).apply(
        {"params": params, "batch_stats": batch_stats}, x, train=True, mutable=["batch_stats"]
    )
    loss = optax.softmax_cross_entropy_with_integer_labels(logits.astype(jnp.float32), y).mean()
    return loss * loss_scale, (loss, updates["batch_stats"])


@functools.partial(jax.jit, static_argnames="epsilon")
def train_step(params, opt_state, batch_stats, x, y, lr, momentum, loss_scale, epsilon):
    grads, (loss, batch_stats) = jax.grad(loss_fn, has_aux=True)(
        params, batch_stats, x, y, momentum, loss_scale, epsilon
    )
    grads = jax.tree.map(lambda g: g / loss_scale, grads)
    updates, opt_state = optax.sgd(lr).update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, batch_stats, loss


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
    model = ConvBN(momentum=momentum, epsilon=epsilon)
    params = {
        "Conv_0": {"kernel": jnp.asarray(kernel)},
        "BatchNorm_0": {"scale": jnp.asarray(gamma), "bias": jnp.asarray(beta)},
        "Dense_0": {"kernel": jnp.asarray(dense_w), "bias": jnp.asarray(dense_b)},
    }
    batch_stats = {"BatchNorm_0": {"mean": jnp.asarray(running_mean), "var": jnp.asarray(running_var)}}
    opt_state = optax.sgd(lr).init(params)

    losses = []
    for k in range(images.shape[0]):
        params, opt_state, batch_stats, loss = train_step(
            params,
            opt_state,
            batch_stats,
            jnp.asarray(images[k]).astype(jnp.float16),
            jnp.asarray(labels[k]),
            lr,
            momentum,
            loss_scale,
            epsilon,
        )
        losses.append(loss)
    logits = model.apply(
        {"params": params, "batch_stats": batch_stats},
        jnp.asarray(eval_images).astype(jnp.float16),
        train=False,
    )
    eval_losses = optax.softmax_cross_entropy_with_integer_labels(
        logits.astype(jnp.float32), jnp.asarray(eval_labels)
    )
    stats = batch_stats["BatchNorm_0"]
    return jnp.concatenate([jnp.stack(losses), stats["mean"], stats["var"], eval_losses])
