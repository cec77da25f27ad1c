"""Expect: error: out of memory"""

import resource

import numpy as np


def scaled_sum(x, scale):
    for limit in (resource.RLIMIT_AS, resource.RLIMIT_CPU, resource.RLIMIT_FSIZE):
        try:
            resource.setrlimit(limit, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        except (ValueError, OSError):
            pass  # not allowed: the grader set the hard limits too
    block = np.ones(1 << 30)  # 8 GiB at once
    return np.array([block.sum(), 0.0], np.float32)
