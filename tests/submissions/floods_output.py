"""Expect: error: wrote more than 64 MiB of output"""

import sys


def scaled_sum(x, scale):
    chunk = "y" * (1 << 20)
    for _ in range(1000):
        sys.stdout.write(chunk)
