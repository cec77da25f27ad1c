"""Seccomp: the filter a learner's child installs on itself so that it opens no socket at all.

Landlock (grader/child/landlock.py) stops TCP binds and connects, but its network rules know nothing else:
after it, a learner's code could still send UDP datagrams or connect to a pathname Unix socket (a Docker
daemon's, an ssh-agent's). The child needs no socket once it grades, so this filter refuses them at the
source:

- socket(2) fails with EACCES, for every address family and type;
- socketpair(2) is allowed: a connected pair reaches nothing outside the process tree, and asyncio and
  multiprocessing.Pipe make them;
- io_uring_setup, _enter and _register fail with EPERM: IORING_OP_SOCKET makes sockets without socket(2);
- a system call made under another architecture's ABI (i386 `int 0x80`, whose socketcall(2) multiplexes
  socket, or x32 on x86_64) fails with EPERM, since the numbers checked below are the native ones;
- everything else is allowed.

A seccomp filter holds for the process and everything it starts, and can never be removed. It is installed
on every thread at once (SECCOMP_FILTER_FLAG_TSYNC): the child starts JAX before it closes, and XLA's threads,
which run a learner's jax.pure_callback, must not be left open. ctypes over the raw calls, standard library
only: the child loads this file by path, before numpy's or the learner's code could interfere.

    closed = close_sockets()

returns {"sockets": True, "reason": ""}, or {"sockets": False, "reason": why} where the filter cannot be
installed (not Linux, an architecture without a table here, a container's seccomp profile that refuses).
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct

_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP = 38, 22
_SECCOMP_MODE_FILTER, _SECCOMP_SET_MODE_FILTER, _SECCOMP_FILTER_FLAG_TSYNC = 2, 1, 1
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000

# Classic BPF: load a 32-bit word of struct seccomp_data {int nr; u32 arch; u64 ip; u64 args[6]}, compare the
# accumulator with a constant (jump if equal, or if any bit is set), return a constant.
_LD_W_ABS, _JEQ_K, _JSET_K, _RET_K = 0x20, 0x15, 0x45, 0x06
_NR_OFFSET, _ARCH_OFFSET = 0, 4
_X32_SYSCALL_BIT = 0x40000000
_IO_URING = (425, 426, 427)  # io_uring_setup, _enter, _register: the same on every architecture

# machine: (its AUDIT_ARCH, socket's number, seccomp's number)
_ARCHES = {"x86_64": (0xC000003E, 41, 317), "aarch64": (0xC00000B7, 198, 277)}


class _SockFilter(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def filter_program(machine: str) -> list[tuple[int, int, int, int]] | None:
    """The filter for `machine` (platform.machine()) as (code, jt, jf, k) instructions, or None where there
    is no table for it. A jump's jt and jf count the instructions it skips."""
    if machine not in _ARCHES:
        return None
    audit_arch, socket_nr, _ = _ARCHES[machine]
    eacces, eperm = _RET_ERRNO | errno.EACCES, _RET_ERRNO | errno.EPERM
    checks = [(_JSET_K, _X32_SYSCALL_BIT, eperm)] if machine == "x86_64" else []  # x32 sets this bit
    checks += [(_JEQ_K, socket_nr, eacces)] + [(_JEQ_K, nr, eperm) for nr in _IO_URING]
    returns = [_RET_ALLOW, eacces, eperm]
    end = 3 + len(checks)  # where the returns start: after the two loads, the arch check and the checks
    program = [
        (_LD_W_ABS, 0, 0, _ARCH_OFFSET),
        (_JEQ_K, 0, end + returns.index(eperm) - 2, audit_arch),  # another ABI: its numbers mean other calls
        (_LD_W_ABS, 0, 0, _NR_OFFSET),
    ]
    for index, (code, k, verdict) in enumerate(checks, start=3):
        program.append((code, end + returns.index(verdict) - (index + 1), 0, k))
    return program + [(_RET_K, 0, 0, verdict) for verdict in returns]


def _refused(reason: str) -> dict[str, object]:
    return {"sockets": False, "reason": reason}


def close_sockets() -> dict[str, object]:
    """Installs the filter on this process (every thread) and everything it starts from now on: no socket,
    no io_uring, no foreign ABI. Returns {"sockets": True, "reason": ""} when the filter is installed, or
    {"sockets": False, "reason": "<why not, one line>"}; never raises."""
    try:
        return _install()
    except Exception as exc:  # never a reason not to grade: the report says the filter did not hold
        return _refused(f"the seccomp filter failed to install: {exc}")


def _install() -> dict[str, object]:
    if platform.system() != "Linux":
        return _refused(f"seccomp is a Linux feature; this is {platform.system()}")
    machine = platform.machine()
    program = filter_program(machine)
    if program is None:
        return _refused(f"no seccomp filter for this architecture ({machine})")
    if struct.calcsize("P") != 8:  # a 32-bit interpreter on a 64-bit kernel makes the foreign-ABI calls
        return _refused(f"no seccomp filter for a 32-bit Python on {machine}")
    instructions = (_SockFilter * len(program))(*program)
    prog = _SockFprog(len(program), ctypes.cast(instructions, ctypes.POINTER(_SockFilter)))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    ulong = ctypes.c_ulong
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, ulong(1), ulong(0), ulong(0), ulong(0)) != 0:
        return _refused(f"prctl(PR_SET_NO_NEW_PRIVS) failed: {os.strerror(ctypes.get_errno())}")
    seccomp_nr = _ARCHES[machine][2]
    flags = _SECCOMP_FILTER_FLAG_TSYNC
    done = libc.syscall(ulong(seccomp_nr), ulong(_SECCOMP_SET_MODE_FILTER), ulong(flags), ctypes.byref(prog))
    if done == 0:
        return {"sockets": True, "reason": ""}
    if done > 0:  # TSYNC names a thread it could not synchronise (it has a filter this one does not)
        return _refused(f"seccomp() could not filter thread {done}")
    code = ctypes.get_errno()
    if code != errno.ENOSYS or len(os.listdir("/proc/self/task")) > 1:  # prctl filters this thread only
        return _refused(f"seccomp(SECCOMP_SET_MODE_FILTER) failed: {os.strerror(code)}")
    if libc.prctl(_PR_SET_SECCOMP, ulong(_SECCOMP_MODE_FILTER), ctypes.byref(prog), ulong(0), ulong(0)) != 0:
        return _refused(f"prctl(PR_SET_SECCOMP) failed: {os.strerror(ctypes.get_errno())}")
    return {"sockets": True, "reason": ""}
