"""Expect: fail: outside the tolerance"""

# Leaves the child's session with setsid() and builds a chain of 120 processes, each the parent of the next
# (small ones: a fresh `python -S`, forking), all with "grade-chain-marker" on their command line, the last
# writing a heartbeat in the temporary folder. Killing the top of the chain reparents the next to the grader,
# so a hunt of 50 rounds leaves the rest running; a PID namespace takes them all at once. The answer is wrong
# on purpose: the tests are about what is left behind (GRADE_TEST_UNPROTECTED=process-namespace shows the
# chain surviving the run).

import os
import sys
import time

import numpy as np

DEPTH = 120
CHAIN = """
import os, sys, time
folder = sys.argv[2]
for _ in range(int(sys.argv[3])):
    if os.fork() != 0:
        while True:
            time.sleep(1)
open(os.path.join(folder, "chain-built"), "w").close()
while True:
    try:
        with open(os.path.join(folder, "chain-heartbeat"), "a") as beat:
            beat.write(".")
    except OSError:
        pass
    time.sleep(0.2)
"""

folder = os.environ.get("TMPDIR", "/tmp")
if os.fork() == 0:
    os.setsid()
    os.execv(sys.executable, [sys.executable, "-S", "-c", CHAIN, "grade-chain-marker", folder, str(DEPTH)])
deadline = time.monotonic() + 30
while not os.path.exists(os.path.join(folder, "chain-built")) and time.monotonic() < deadline:
    time.sleep(0.05)


def scaled_sum(x, scale):
    return np.zeros(2, np.float32)
