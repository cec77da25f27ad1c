"""Expect: error: SyntaxError: invalid syntax (syntax_error.py, line 5)"""


def scaled_sum(x, scale)
    return x
