"""Expect: error: SyntaxError: expected ':' (syntax_error.py, line 4)"""


def scaled_sum(x, scale)
    return x
