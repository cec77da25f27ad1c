"""Expect: error: disk limit"""

# Fills its own compilation-cache folder with 20,100 empty files (the grader's entry limit is 20,000), so
# that every later run of this learner's code would stop at the disk limit before it is ready, and the
# grader would be blamed for a month ("not the learner's fault"), even for a correct file handed in later.
# Its own run stops at the disk limit: its error. Its cache is then pruned by entries, and a later run
# counts only what that run makes; GRADE_TEST_UNPROTECTED=own-folders shows the old blame.

import os
import time

import numpy as np


def scaled_sum(x, scale):
    folder = os.environ.get("JAX_COMPILATION_CACHE_DIR", ".")
    for number in range(20_100):
        with open(os.path.join(folder, f"litter-{number}"), "wb"):
            pass
    time.sleep(1.5)  # long enough for the grader's count
    return np.array([x.sum() * scale, x.max()], dtype=np.float32)
