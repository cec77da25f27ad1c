"""Mistake: I write the model with flax.nnx: nnx.Conv, nnx.BatchNorm and nnx.Linear with dtype=float16 and
param_dtype=float32, trained with nnx.Optimizer(optax.sgd(lr)) and a static loss scale, evaluated after
model.eval(). nnx.BatchNorm(dtype=float16) casts its fp32 running mean and variance to fp16 before it
normalizes at evaluation: running variances above 65504 become inf."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
from flax import nnx

F16, F32 = jnp.float16, jnp.float32


class ConvBN(nnx.Module):
    def __init__(self, momentum, epsilon, *, rngs: nnx.Rngs):
        self.conv = nnx.Conv(
            2, 4, (3, 3), padding="VALID", use_bias=False, dtype=F16, param_dtype=F32, rngs=rngs
        )
        self.bn = nnx.BatchNorm(4, momentum=momentum, epsilon=epsilon, dtype=F16, param_dtype=F32, rngs=rngs)
        self.dense = nnx.Linear(4, 3, dtype=F16, param_dtype=F32, rngs=rngs)

    def __call__(self, x):
        x = nnx.relu(self.bn(self.conv(x)))
        return self.dense(jnp.mean(x, axis=(1, 2)))


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
    model = ConvBN(momentum, epsilon, rngs=nnx.Rngs(0))
    model.conv.kernel.value = jnp.asarray(kernel, F32)
    model.bn.scale.value = jnp.asarray(gamma, F32)
    model.bn.bias.value = jnp.asarray(beta, F32)
    model.bn.mean.value = jnp.asarray(running_mean, F32)
    model.bn.var.value = jnp.asarray(running_var, F32)
    model.dense.kernel.value = jnp.asarray(dense_w, F32)
    model.dense.bias.value = jnp.asarray(dense_b, F32)
    optimizer = nnx.Optimizer(model, optax.sgd(lr), wrt=nnx.Param)
    scale = F32(loss_scale)

    @nnx.jit
    def train_step(model, optimizer, x16, y):
        def loss_fn(model):
            logits = model(x16).astype(F32)
            loss = optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
            return loss * scale, loss

        grads, loss = nnx.grad(loss_fn, has_aux=True)(model)
        grads = jax.tree.map(lambda g: g / scale, grads)
        optimizer.update(model, grads)
        return loss

    model.train()
    losses = []
    for k in range(images.shape[0]):
        x16 = jnp.asarray(images[k], F32).astype(F16)
        losses.append(train_step(model, optimizer, x16, jnp.asarray(labels[k])))
    model.eval()
    logits = model(jnp.asarray(eval_images, F32).astype(F16)).astype(F32)
    eval_losses = optax.softmax_cross_entropy_with_integer_labels(logits, jnp.asarray(eval_labels))
    return jnp.concatenate([jnp.stack(losses), model.bn.mean.value, model.bn.var.value, eval_losses]).astype(
        F32
    )
