"""Mistake: I compute moved from the change of the Dense kernel (w) alone and leave out the change of the bias."""

import functools

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax


def make_tx(lr, start, decay_steps):
    return optax.sgd(lambda count: lr / jnp.sqrt(1.0 + (start + count) / decay_steps))


@functools.partial(jax.jit, static_argnames=("model", "decay_steps"))
def train_step(params, opt_state, lr, start, loss_scale, model, x16, labels, decay_steps):
    def f(prm):
        logits = model.apply(prm, x16).astype(jnp.float32)
        loss = optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
        return loss * loss_scale, loss

    g, loss = jax.grad(f, has_aux=True)(params)
    g = jax.tree.map(lambda t: t.astype(jnp.float32) / loss_scale, g)
    updates, opt_state = make_tx(lr, start, decay_steps).update(g, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


def train_fp16(pixels, labels, w, b, step, lr, decay_steps, loss_scale, num_steps):
    p = jnp.asarray(pixels, jnp.float32)
    mean = jnp.mean(p, axis=1, keepdims=True)
    std = jnp.sqrt(jnp.mean(jnp.square(p - mean), axis=1, keepdims=True))
    x16 = ((p - mean) / std).astype(jnp.float16)
    labels = jnp.asarray(labels, jnp.int32)
    model = nn.Dense(np.shape(w)[1], dtype=jnp.float16, param_dtype=jnp.float32)
    w0 = jnp.asarray(w, jnp.float32)
    params = {"params": {"kernel": w0, "bias": jnp.asarray(b, jnp.float32)}}
    start = int(step)
    opt_state = make_tx(lr, start, decay_steps).init(params)

    losses = []
    for _ in range(num_steps):
        params, opt_state, loss = train_step(
            params, opt_state, lr, start, loss_scale, model, x16, labels, decay_steps
        )
        losses.append(loss)
    moved = jnp.linalg.norm(params["params"]["kernel"] - w0)
    return jnp.concatenate([jnp.stack(losses), moved[None]]).astype(jnp.float32)
