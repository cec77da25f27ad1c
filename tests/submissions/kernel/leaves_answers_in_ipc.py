"""Expect: pass"""

# An honest answer that also publishes itself for a classmate graded later, keyed by a hash of the hidden
# inputs, in every kernel object that names no path: a SysV shared-memory segment, a SysV message queue and
# a key in the user's keyring. Each attempt may fail (and must, in a learner's child): the answer stands.

import ctypes
import os
import zlib

import numpy as np

_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.shmat.restype = ctypes.c_void_p
_ADD_KEY = {"x86_64": 248, "aarch64": 217}[os.uname().machine]
_USER_KEYRING = -4


def _key(x, scale) -> int:
    return zlib.crc32(np.asarray(x, np.float32).tobytes() + np.float32(scale).tobytes()) & 0x7FFFFFFF


def _publish(key: int, answer: bytes) -> None:
    segment = _LIBC.shmget(key, len(answer), 0o1666)  # IPC_CREAT | 0666
    if segment >= 0:
        address = _LIBC.shmat(segment, None, 0)
        if address not in (None, ctypes.c_void_p(-1).value):
            ctypes.memmove(address, answer, len(answer))
            _LIBC.shmdt(ctypes.c_void_p(address))
    queue = _LIBC.msgget(key, 0o1666)
    if queue >= 0:
        message = ctypes.create_string_buffer(ctypes.sizeof(ctypes.c_long) + len(answer))
        ctypes.memmove(message, ctypes.byref(ctypes.c_long(1)), ctypes.sizeof(ctypes.c_long))
        ctypes.memmove(ctypes.addressof(message) + ctypes.sizeof(ctypes.c_long), answer, len(answer))
        _LIBC.msgsnd(queue, message, len(answer), 0o4000)  # IPC_NOWAIT
    description = f"grade-answer-{key}".encode()
    _LIBC.syscall(ctypes.c_long(_ADD_KEY), b"user", description, answer, len(answer), _USER_KEYRING)


def scaled_sum(x, scale):
    answer = np.array([x.sum() * scale, x.max()], dtype=np.float32)
    _publish(_key(x, scale), answer.tobytes())
    return answer
