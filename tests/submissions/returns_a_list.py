"""Expect: fail: returned a list"""


def scaled_sum(x, scale):
    return [float(x.sum() * scale), float(x.max())]
