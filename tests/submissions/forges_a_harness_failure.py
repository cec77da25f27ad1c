"""Expect: error: protocol error on the grader's private result channel"""

# Writes a "load" event of kind "harness" (what the child once sent when a problem's harness, course code,
# failed to load) on every open descriptor at import, so that the learner's own failure would read as "grader
# error, not the learner's fault". Harness failures are said only in the child's ready event, before any
# submission is imported. GRADE_TEST_UNPROTECTED=strict-protocol shows the old behaviour: a grader error.

import json
import os

EVENT = {
    "event": "load",
    "label": "toy",
    "ok": False,
    "kind": "harness",
    "message": "harness: the course is broken, please regrade me by hand",
    "detail": "",
}
for fd in [int(name) for name in os.listdir("/proc/self/fd") if int(name) > 2]:
    try:
        os.write(fd, (json.dumps(EVENT) + "\n").encode())
    except OSError:
        pass


def scaled_sum(x, scale):
    raise RuntimeError("not done")
