"""Expect: fail: returned a float"""


def scaled_sum(x, scale):
    return float(x.sum() * scale)
