"""Expect: error: defines no function 'scaled_sum' (expected scaled_sum(x, scale)); did you mean 'scaled_summ'?"""


def scaled_summ(x, scale):
    return x
