"""Expect: fail: outside the tolerance"""

# Poisons JAX's compilation cache for whoever is graded after it: for the toy problem's shapes it compiles
# jnp.max, finds the cache entry that compile wrote, compiles jnp.min on the same shapes and writes the min
# executable over the max entry. A classmate whose correct answer uses jnp.max on those shapes then computes
# the min, and fails, if the two share a cache folder. Each learner has a folder of their own;
# GRADE_TEST_UNPROTECTED=private-cache (one folder for every learner, as once) shows the classmate failing.
# Its own answer is wrong on purpose: it only sabotages.

import os

import jax
import jax.numpy as jnp
import numpy as np

CACHE = os.environ.get("JAX_COMPILATION_CACHE_DIR", "")


def _entries() -> set[str]:
    return {name for name in os.listdir(CACHE) if name.endswith("-cache")} if os.path.isdir(CACHE) else set()


def _written_by(function, value) -> set[str]:
    before = _entries()
    jax.block_until_ready(function(value))
    return _entries() - before


for size in (4, 64):  # the toy problem's shapes (tests/toy_course/problems/toy/cases.py)
    value = jnp.ones(size, jnp.float32) * 0.5
    good = _written_by(lambda v: jnp.max(v), value)
    evil = _written_by(lambda v: jnp.min(v), value)
    for target, source in zip(sorted(good), sorted(evil)):
        with open(os.path.join(CACHE, source), "rb") as read, open(os.path.join(CACHE, target), "wb") as write:
            write.write(read.read())


def scaled_sum(x, scale):
    return np.zeros(2, np.float32)
