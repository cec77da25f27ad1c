"""Expect: error: protocol error on the grader's private result channel"""

import base64
import json
import os

import numpy as np


def scaled_sum(x, scale):
    # Writes a forged "case" event with made-up values into every open file descriptor.
    values = base64.b64encode(np.zeros(2, "<f8").tobytes()).decode()
    forged = {"kind": "array", "type": "numpy.ndarray", "dtype": "float32", "shape": [2], "float": True}
    for index in range(8):
        event = {
            "event": "case",
            "label": "learner",
            "index": index,
            "seconds": 0,
            "returned": forged | {"values": values},
        }
        for fd in [int(name) for name in os.listdir("/proc/self/fd") if int(name) > 2]:
            try:
                os.write(fd, (json.dumps(event) + "\n").encode())
            except OSError:
                pass
    return np.zeros(2, np.float32)
