"""Accepted form (not graded): PyTorch's clip, `g * min(1, max_norm / (n + 1e-6))`, with an epsilon the
recipe does not add to the norm. The epsilon changes a clipped step by a relative 1e-6 / n, which the losses
do not show within the tolerance in these cases; the rest is the reference."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


@jax.jit
def _micro_batch(w: jax.Array, x16: jax.Array, y: jax.Array, scale: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Returns (loss, grad of loss * scale w.r.t. the fp32 w): fp16 matvec, fp32 MSE over the B rows."""

    def scaled_loss(w):
        pred = (x16 @ w.astype(jnp.float16)).astype(jnp.float32)
        loss = jnp.mean((pred - y) ** 2)
        return loss * scale, loss

    (_, loss), grad = jax.value_and_grad(scaled_loss, has_aux=True)(w)
    return loss, grad


@jax.jit
def _optimizer_step(w, opt_state, acc, divisor, max_norm, lr, momentum):
    """Unscales and averages the accumulated gradient, clips it as PyTorch does, takes one SGD step."""
    grad = acc / divisor  # divisor = K * S: one exact division by a power of two
    norm = jnp.sqrt(jnp.sum(grad**2))
    grad = grad * jnp.minimum(1.0, max_norm / (norm + 1e-6))  # torch.nn.utils.clip_grad_norm_
    updates, opt_state = optax.sgd(lr, momentum=momentum).update(grad, opt_state, w)
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
    w = jnp.asarray(w, jnp.float32)
    scale = jnp.float32(loss_scale)
    # The only state is the momentum buffer; it starts at zero.
    opt_state = optax.sgd(lr, momentum=momentum).init(w)
    f32 = jnp.float32
    acc = jnp.zeros_like(w)
    losses = []
    for i in range(x16.shape[0]):
        loss, grad = _micro_batch(w, x16[i], y[i], scale)
        losses.append(loss)
        acc = acc + grad  # fp32 accumulator
        if (i + 1) % accum_steps == 0:
            w, opt_state = _optimizer_step(
                w, opt_state, acc, f32(accum_steps * loss_scale), f32(max_norm), f32(lr), f32(momentum)
            )
            acc = jnp.zeros_like(w)
    return jnp.stack(losses).astype(jnp.float32)
