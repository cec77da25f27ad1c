"""Expect: error: no answer left by a classmate"""

# No implementation: it looks for the answer a classmate graded earlier left in a kernel object that names
# no path (leaves_answers_in_ipc.py), keyed by a hash of the hidden inputs: a SysV shared-memory segment, a
# SysV message queue, a key in the user's keyring. In a learner's child each is refused (an IPC namespace
# of its own, and the seccomp filter), so it finds nothing and fails; GRADE_TEST_UNPROTECTED=kernel-objects
# shows it passing on what the classmate left.

import ctypes
import os
import time
import zlib

import numpy as np

_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.shmat.restype = ctypes.c_void_p
_CALLS = {"x86_64": (249, 250), "aarch64": (218, 219)}[os.uname().machine]  # request_key, keyctl
_KEYCTL_READ = 11


def _key(x, scale) -> int:
    return zlib.crc32(np.asarray(x, np.float32).tobytes() + np.float32(scale).tobytes()) & 0x7FFFFFFF


def _from_shared_memory(key: int) -> bytes | None:
    segment = _LIBC.shmget(key, 8, 0)
    if segment < 0:
        return None
    address = _LIBC.shmat(segment, None, 0o10000)  # SHM_RDONLY
    if address in (None, ctypes.c_void_p(-1).value):
        return None
    answer = ctypes.string_at(address, 8)
    _LIBC.shmdt(ctypes.c_void_p(address))
    return answer


def _from_message_queue(key: int) -> bytes | None:
    queue = _LIBC.msgget(key, 0)
    if queue < 0:
        return None
    message = ctypes.create_string_buffer(ctypes.sizeof(ctypes.c_long) + 8)
    if _LIBC.msgrcv(queue, message, 8, 0, 0o4000 | 0o20000) != 8:  # IPC_NOWAIT | MSG_COPY-free peek
        return None
    return message.raw[ctypes.sizeof(ctypes.c_long) :]


def _from_keyring(key: int) -> bytes | None:
    request_key, keyctl = _CALLS
    serial = _LIBC.syscall(ctypes.c_long(request_key), b"user", f"grade-answer-{key}".encode(), None, 0)
    if serial < 0:
        return None
    buffer = ctypes.create_string_buffer(8)
    return buffer.raw if _LIBC.syscall(ctypes.c_long(keyctl), _KEYCTL_READ, serial, buffer, 8) == 8 else None


def scaled_sum(x, scale):
    key = _key(x, scale)
    deadline = time.monotonic() + 3  # the classmate may still be in its child
    while time.monotonic() < deadline:
        for look in (_from_shared_memory, _from_keyring, _from_message_queue):
            found = look(key)
            if found:
                return np.frombuffer(found, dtype=np.float32).copy()
        time.sleep(0.1)
    raise LookupError("no answer left by a classmate")
