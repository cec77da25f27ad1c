"""A submission for the toy problem that opens a TCP connection (to send the hidden inputs out, say)
before it answers correctly. tests/test_sandbox.py writes the port of a listener it starts over PORT.

Landlock (ABI 4 and later) refuses the connect with PermissionError, and the listener sees no connection.
With GRADE_LANDLOCK=off the connection is made and the answer passes."""

import socket

import numpy as np

PORT = 9  # replaced by the test


def scaled_sum(x, scale):
    with socket.create_connection(("127.0.0.1", PORT), timeout=5) as connection:
        connection.sendall(np.asarray(x).tobytes()[:64])
    return np.array([x.sum() * scale, x.max()], dtype=np.float32)
