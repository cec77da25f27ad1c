"""Expect: error: out of memory: used more than 4 GiB"""

import os
import time

import numpy as np

# Three processes of 2 GiB each: every one stays under a per-process limit, together they do not.
for _ in range(3):
    if os.fork() == 0:
        hoard = np.ones(1 << 28)
        time.sleep(600)
        os._exit(0)


def scaled_sum(x, scale):
    time.sleep(600)
