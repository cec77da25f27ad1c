"""Expect: error: PermissionError"""

# Sends what it can read out of the child over UDP and a pathname Unix socket (Landlock's network rules
# cover TCP only): here a marker, to 127.0.0.1:PORT and to the Unix socket at SOCKET_PATH, which the tests
# replace with a listener's. The seccomp filter refuses every new socket; GRADE_TEST_UNPROTECTED=socket-filter
# shows both datagrams arriving and the answer passing.

import socket

import numpy as np

PORT = 9  # the discard port, unless the tests put a listener's here
SOCKET_PATH = "/nonexistent/grade-test.sock"


def scaled_sum(x, scale):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.sendto(b"sent out over udp", ("127.0.0.1", PORT))
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as unix:
        try:
            unix.sendto(b"sent out over a unix socket", SOCKET_PATH)
        except (FileNotFoundError, ConnectionRefusedError):
            pass  # no listener there: the socket itself was the point
    return np.array([x.sum() * scale, x.max()], dtype=np.float32)
