"""Expect: fail: returned a str"""


def scaled_sum(x, scale):
    return "[1.0, 2.0]"
