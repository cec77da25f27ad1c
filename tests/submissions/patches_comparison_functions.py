"""Expect: fail: outside the tolerance"""

import math

import jax.numpy as jnp
import numpy as np


def _always(*args, **kwargs):
    return True


np.allclose = np.isclose = np.array_equal = _always
np.testing.assert_allclose = lambda *args, **kwargs: None
math.isclose = _always
jnp.allclose = _always


def scaled_sum(x, scale):
    return np.array([123.0, 456.0], np.float32)
