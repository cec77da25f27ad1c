"""Mistake: I gave the linear model a bias, as linear layers usually have: pred = x @ w + b, with b an fp32
scalar that starts at zero and is trained along with w (clipped with it, with its own momentum)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


@jax.jit
def _micro_batch(params, x16: jax.Array, y: jax.Array, scale: jax.Array):
    """Returns (loss, grad of loss * scale w.r.t. the fp32 (w, b)): fp16 matvec plus bias, fp32 MSE."""

    def scaled_loss(params):
        w, b = params
        pred = (x16 @ w.astype(jnp.float16) + b.astype(jnp.float16)).astype(jnp.float32)
        loss = jnp.mean((pred - y) ** 2)
        return loss * scale, loss

    (_, loss), grad = jax.value_and_grad(scaled_loss, has_aux=True)(params)
    return loss, grad


@jax.jit
def _optimizer_step(w, opt_state, acc, divisor, max_norm, lr, momentum):
    """Unscales and averages the accumulated gradient, clips it, and takes one SGD-momentum step."""
    grad = jax.tree.map(lambda a: a / divisor, acc)  # divisor = K * S
    tx = optax.chain(optax.clip_by_global_norm(max_norm), optax.sgd(lr, momentum=momentum))
    updates, opt_state = tx.update(grad, opt_state, w)
    return optax.apply_updates(w, updates), opt_state


def train_with_grad_accumulation(
    x: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    lr: float,
    momentum: float,
    loss_scale: float,
    max_norm: float,
    accum_steps: int,
) -> jax.Array:
    """Trains pred = x @ w over the micro-batches of x with one optimizer step per accum_steps of them.

    Args: x float32 (M, B, D) micro-batches; y float32 (M, B); w float32 (D,) initial master weights; lr,
    momentum, loss_scale, max_norm Python floats; accum_steps Python int K (M is a multiple of K).
    Returns: float32 (M,): the unscaled fp32 loss of every micro-batch, in order.
    """
    x16 = jnp.asarray(x, jnp.float32).astype(jnp.float16)
    y = jnp.asarray(y, jnp.float32)
    params = (jnp.asarray(w, jnp.float32), jnp.zeros((), jnp.float32))  # (w, b)
    scale = jnp.float32(loss_scale)
    # The chain's only state is the momentum buffer (clipping is stateless); it starts at zero.
    tx = optax.chain(optax.clip_by_global_norm(max_norm), optax.sgd(lr, momentum=momentum))
    opt_state = tx.init(params)
    f32 = jnp.float32
    acc = jax.tree.map(jnp.zeros_like, params)
    losses = []
    for i in range(x16.shape[0]):
        loss, grad = _micro_batch(params, x16[i], y[i], scale)
        losses.append(loss)
        acc = jax.tree.map(jnp.add, acc, grad)  # fp32 accumulator
        if (i + 1) % accum_steps == 0:
            params, opt_state = _optimizer_step(
                params, opt_state, acc, f32(accum_steps * loss_scale), f32(max_norm), f32(lr), f32(momentum)
            )
            acc = jax.tree.map(jnp.zeros_like, params)
    return jnp.stack(losses).astype(jnp.float32)
