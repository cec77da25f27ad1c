"""Pitfall relu_derivative_at_zero: the ReLU as jnp.maximum(a16, 0), whose derivative at exactly 0 is 1/2.

Everything else follows the recipe. The recipe's ReLU (jax.nn.relu) has derivative 0 at 0; jnp.maximum splits
the gradient of a tie evenly between its two arguments, so a pre-activation that is exactly 0 passes half of
its gradient back. The fine_tuning cases have pruned hidden units (weights and bias exactly 0): they stay dead
under the recipe, and come alive here.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax

F16 = jnp.float16
F32 = jnp.float32


def _scaled_loss(master, x16, labels, loss_scale):
    """Returns (loss * loss_scale, loss): fp16 forward pass, fp32 cross-entropy, scaled in fp32."""
    p16 = jax.tree.map(lambda a: a.astype(F16), master)
    hidden = jnp.maximum(x16 @ p16["w1"] + p16["b1"], 0)  # derivative 1/2 at exactly 0
    logits16 = hidden @ p16["w2"] + p16["b2"]
    logits = logits16.astype(F32)
    loss = optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
    return loss * loss_scale, loss


@jax.jit
def _step(master, x16, labels, lr, loss_scale):
    """One SGD step; returns (new fp32 master params, fp32 loss before the update)."""
    grads, loss = jax.grad(_scaled_loss, has_aux=True)(master, x16, labels, loss_scale)
    grads = jax.tree.map(lambda g: g / loss_scale, grads)  # fp32 gradients of the fp32 master, unscaled
    master = jax.tree.map(lambda p, g: p - lr * g, master, grads)
    return master, loss


def train_mlp(
    pixels: np.ndarray,
    labels: np.ndarray,
    w1: np.ndarray,
    b1: np.ndarray,
    w2: np.ndarray,
    b2: np.ndarray,
    lr: float,
    loss_scale: float,
    num_steps: int,
) -> jax.Array:
    """Trains the MLP for `num_steps` SGD steps; returns float32 (num_steps,), the loss of every step.

    Args: pixels float32 (N, 64) in [0, 1]; labels int32 (N,); w1 (64, H), b1 (H,), w2 (H, 10), b2 (10,)
    float32 initial master params; lr and loss_scale Python floats (powers of two); num_steps an int.
    """
    x16 = jnp.asarray(pixels, F32).astype(F16)
    labels = jnp.asarray(labels, jnp.int32)
    master = {name: jnp.asarray(p, F32) for name, p in {"w1": w1, "b1": b1, "w2": w2, "b2": b2}.items()}
    lr, loss_scale = F32(lr), F32(loss_scale)
    losses = []
    for _ in range(int(num_steps)):
        master, loss = _step(master, x16, labels, lr, loss_scale)
        losses.append(loss)
    return jnp.stack(losses).astype(F32)
