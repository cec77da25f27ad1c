"""Harness toy stub."""

import numpy as np


def running_sum(x, start, stop, folder):
    """Returns the running sum of x[start:stop], resuming from folder/state.npy when start > 0."""
    raise NotImplementedError("toy_resume: fill in running_sum")
