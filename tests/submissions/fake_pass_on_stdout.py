"""Expect: fail: outside the tolerance"""

import json

import numpy as np


def scaled_sum(x, scale):
    print("PASS  toy: all 4 cases within the tolerance")
    print(json.dumps({"event": "case", "label": "learner", "index": 0, "status": "pass"}))
    return np.zeros(2, np.float32)
