"""Expect: fail: returned an array of dtype bfloat16"""

import jax.numpy as jnp
import numpy as np


def scaled_sum(x, scale):
    # Values the tolerance accepts, in bfloat16: only the dtype is wrong.
    return jnp.asarray(np.array([x.sum() * scale, x.max()], np.float32), jnp.bfloat16)
