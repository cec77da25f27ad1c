"""Mistake: I cast the weight matrices and the pixels to float16 but add the biases straight from the fp32 master copy."""

import jax
import jax.numpy as jnp
import numpy as np
import optax


def scaled_loss(params, scale, x16, labels):
    hidden = jax.nn.relu(x16 @ params["w1"].astype(jnp.float16) + params["b1"])
    logits = hidden @ params["w2"].astype(jnp.float16) + params["b2"]
    logits = logits.astype(jnp.float32)
    loss = optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
    return loss * scale, loss


@jax.jit
def step(params, lr, scale, x16, labels):
    grads, loss = jax.grad(scaled_loss, has_aux=True)(params, scale, x16, labels)
    params = jax.tree.map(lambda p, g: p - lr * (g / scale), params, grads)
    return params, loss


def train_mlp(pixels, labels, w1, b1, w2, b2, lr, loss_scale, num_steps):
    master = {
        "w1": jnp.asarray(w1, jnp.float32),
        "b1": jnp.asarray(b1, jnp.float32),
        "w2": jnp.asarray(w2, jnp.float32),
        "b2": jnp.asarray(b2, jnp.float32),
    }
    x16 = jnp.asarray(pixels).astype(jnp.float16)
    labels = jnp.asarray(labels)
    scale = jnp.float32(loss_scale)

    losses = []
    for _ in range(num_steps):
        master, loss = step(master, lr, scale, x16, labels)
        losses.append(loss)
    return jnp.stack(losses).astype(jnp.float32)
