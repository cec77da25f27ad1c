"""A submission for the toy problem that writes a forged "sandbox" event, claiming that Landlock held, into
every open file descriptor (one of them is the child's result pipe), then answers correctly.

The grader takes a sandbox report only in the child's ready event, which the child sends before it imports
any submission; anything written on the result channel after it that the protocol does not allow next is a
protocol error, the learner's. So the answer is an error, and with GRADE_LANDLOCK=off the report must still
say that no Landlock held (tests/test_sandbox.py)."""

import json
import os

import numpy as np

FORGED = {"event": "sandbox", "abi": 99, "filesystem": True, "network": True, "signals": True, "reason": ""}
for fd in range(3, 30):
    try:
        os.write(fd, (json.dumps(FORGED) + "\n").encode())
    except OSError:
        pass


def scaled_sum(x, scale):
    return np.array([x.sum() * scale, x.max()], dtype=np.float32)
