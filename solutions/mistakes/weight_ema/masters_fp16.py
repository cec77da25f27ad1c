"""Mistake: the master weights stored as fp16 between steps: each update is computed in fp32 and the
result rounded back to fp16, so updates smaller than half an fp16 spacing are lost."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


def _scaled_loss(w: jax.Array, x16: jax.Array, y: jax.Array, scale: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Returns (scale * loss, loss): fp16 matvec, fp32 MSE, scaled in fp32."""
    pred = (x16 @ w.astype(jnp.float16)).astype(jnp.float32)
    loss = jnp.mean((pred - y) ** 2)
    return loss * scale, loss


@jax.jit
def _step(w, opt_state, ema, x, y, x_eval, y_eval, lr, momentum, scale, decay):
    """One training step; returns (w, opt_state, ema, loss, eval_loss) after it."""
    (_, loss), grads = jax.value_and_grad(_scaled_loss, has_aux=True)(w, x.astype(jnp.float16), y, scale)
    grads = grads / scale  # unscale in fp32
    finite = jnp.all(jnp.isfinite(grads))

    opt = optax.sgd(lr, momentum=momentum)
    updates, stepped_state = opt.update(grads, opt_state, w)
    stepped_w = optax.apply_updates(w, updates)
    # The EMA follows the weights after the optimizer step, in fp32.
    stepped_ema = decay * ema + (1.0 - decay) * stepped_w
    # A skipped step keeps the weights, the momentum buffer and the EMA exactly as they were.
    w = jnp.where(finite, stepped_w.astype(jnp.float16).astype(jnp.float32), w)
    opt_state = jax.tree.map(lambda new, old: jnp.where(finite, new, old), stepped_state, opt_state)
    ema = jnp.where(finite, stepped_ema, ema)

    eval_loss = jnp.mean((x_eval @ ema - y_eval) ** 2)  # fp32 evaluation of the EMA weights
    return w, opt_state, ema, loss, eval_loss


def train_with_weight_ema(
    x: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    x_eval: np.ndarray,
    y_eval: np.ndarray,
    lr: float,
    momentum: float,
    loss_scale: float,
    decay: float,
) -> jax.Array:
    """Trains pred = x[k] @ w (fp16 compute, fp32 master w, static loss scale) and keeps an fp32 EMA of w.

    Args: x float32 (T, B, D); y float32 (T, B); w float32 (D,) initial weights; x_eval float32 (E, D);
    y_eval float32 (E,); lr, momentum, loss_scale, decay Python floats.
    Returns: float32 (2 * T,): the training loss of every step, then the eval loss of the EMA after it.
    """
    f32 = jnp.float32
    w = jnp.asarray(w, f32)
    opt_state = optax.sgd(lr, momentum=momentum).init(w)
    ema = w  # the EMA starts as a copy of the initial fp32 weights
    losses, eval_losses = [], []
    for k in range(x.shape[0]):
        w, opt_state, ema, loss, eval_loss = _step(
            w,
            opt_state,
            ema,
            jnp.asarray(x[k], f32),
            jnp.asarray(y[k], f32),
            jnp.asarray(x_eval, f32),
            jnp.asarray(y_eval, f32),
            f32(lr),
            f32(momentum),
            f32(loss_scale),
            f32(decay),
        )
        losses.append(loss)
        eval_losses.append(eval_loss)
    return jnp.concatenate([jnp.stack(losses), jnp.stack(eval_losses)]).astype(f32)
