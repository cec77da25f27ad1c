"""Expect: error: exited with status 0"""

import os


def scaled_sum(x, scale):
    os._exit(0)
