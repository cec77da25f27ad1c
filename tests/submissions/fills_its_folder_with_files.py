"""Expect: error: disk limit"""

# Makes 30,000 empty files in its private folder (each under the output limit, so RLIMIT_FSIZE never
# fires), then sleeps a little and answers correctly: the grader counts what a child writes to its folders
# and stops it. GRADE_TEST_UNPROTECTED=disk-limit shows it passing.

import os
import time

import numpy as np

os.makedirs("litter", exist_ok=True)
for number in range(30_000):
    with open(os.path.join("litter", str(number)), "wb"):
        pass
time.sleep(1.5)


def scaled_sum(x, scale):
    return np.array([x.sum() * scale, x.max()], dtype=np.float32)
