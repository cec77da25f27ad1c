"""Correct variant: the whole run is one jitted lax.scan over the mini-batches; the params are a dict, the
EMA is written as ema + (1 - decay) * (w - ema) with jax.tree.map, and the skip is jnp.where."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax


@jax.jit
def _run(x, y, w, x_eval, y_eval, lr, momentum, loss_scale, decay):
    params = {"w": w}
    opt = optax.sgd(lr, momentum=momentum)

    def loss_fn(p, xb, yb):
        pred = (xb.astype(jnp.float16) @ p["w"].astype(jnp.float16)).astype(jnp.float32)
        loss = jnp.mean((pred - yb) ** 2)
        return loss * loss_scale, loss

    def body(carry, batch):
        p, opt_state, ema = carry
        (_, loss), g = jax.value_and_grad(loss_fn, has_aux=True)(p, *batch)
        g = jax.tree.map(lambda t: t / loss_scale, g)
        ok = jnp.all(jnp.array([jnp.all(jnp.isfinite(t)) for t in jax.tree.leaves(g)]))
        updates, new_opt_state = opt.update(g, opt_state, p)
        new_p = optax.apply_updates(p, updates)
        new_ema = jax.tree.map(lambda e, q: e + (1 - decay) * (q - e), ema, new_p)

        def keep(new, old):
            return jnp.where(ok, new, old)

        p = jax.tree.map(keep, new_p, p)
        opt_state = jax.tree.map(keep, new_opt_state, opt_state)
        ema = jax.tree.map(keep, new_ema, ema)
        eval_loss = jnp.mean((x_eval @ ema["w"] - y_eval) ** 2)
        return (p, opt_state, ema), (loss, eval_loss)

    carry = (params, opt.init(params), jax.tree.map(jnp.copy, params))
    _, (losses, evals) = jax.lax.scan(body, carry, (x, y))
    return jnp.concatenate([losses, evals])


def train_with_weight_ema(x, y, w, x_eval, y_eval, lr, momentum, loss_scale, decay):
    """Same signature as the reference; returns float32 (2 * T,)."""
    f32 = jnp.float32
    arrays = [jnp.asarray(a, f32) for a in (x, y, w, x_eval, y_eval)]
    return _run(*arrays, f32(lr), f32(momentum), f32(loss_scale), f32(decay))
