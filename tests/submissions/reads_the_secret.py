"""Expect: pass: within the tolerance"""

import os

import numpy as np

SECRET = "hostile-tests-secret"


def _seen() -> bool:
    if any(SECRET in value for value in os.environ.values()):
        return True
    for pid in (os.getpid(), os.getppid()):
        try:
            with open(f"/proc/{pid}/environ", "rb") as environ:
                if SECRET.encode() in environ.read():
                    return True
        except OSError:
            pass
    return False


def scaled_sum(x, scale):
    value = np.nan if _seen() else x.sum() * scale
    return np.array([value, x.max()], dtype=np.float32)
