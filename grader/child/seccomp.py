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
_ALLOW, _EACCES, _EPERM, _ENOSYS = (
    _RET_ALLOW,
    _RET_ERRNO | errno.EACCES,
    _RET_ERRNO | errno.EPERM,
    _RET_ERRNO | errno.ENOSYS,
)

# Classic BPF: load a 32-bit word of struct seccomp_data {int nr; u32 arch; u64 ip; u64 args[6]}, compare the
# accumulator with a constant (jump if equal, or if any bit is set), return a constant.
_LD_W_ABS, _JEQ_K, _JSET_K, _RET_K = 0x20, 0x15, 0x45, 0x06
_NR_OFFSET, _ARCH_OFFSET, _ARG0_OFFSET = 0, 4, 16  # args[0]'s low word (both machines are little-endian)
_X32_SYSCALL_BIT = 0x40000000
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET: a clone(2) that makes a namespace
_CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000

# The groups of calls a child can be asked to refuse, by name, and each call's number per machine.
# "sockets": no socket of any kind (socket(2) says EACCES), no io_uring (IORING_OP_SOCKET makes sockets).
# "ipc": no kernel object that outlives the process or is shared by name: SysV shared memory, semaphores and
# message queues, POSIX message queues, keyrings.
# "powers": what a root process without capabilities may still do to root's files as their owner (mode,
# owner, times, extended attributes), and every way into another process or the kernel that names no
# path: ptrace, process_vm_*, pidfd_getfd, kcmp, perf_event_open, bpf, userfaultfd, syslog, new
# namespaces (unshare, setns, and clone with a CLONE_NEW* flag; clone3, whose flags it cannot read, says
# ENOSYS so that the C library falls back to clone), real-time scheduling, another process's rlimits
# (prlimit64 with a pid) or priority (setpriority but of the caller itself).
_CALLS = {
    "x86_64": {
        "socket": 41,
        "io_uring": (425, 426, 427),
        "ipc": (29, 30, 31, 67, 64, 65, 66, 220, 68, 69, 70, 71, 240, 241, 242, 243, 244, 245, 248, 249, 250),
        "powers": (
            *(90, 91, 268, 452, 92, 93, 94, 260, 132, 235, 261, 280),  # chmod, chown, utime
            *(188, 189, 190, 197, 198, 199, 463, 466),  # extended attributes
            *(
                101,
                310,
                311,
                438,
                312,
                298,
                321,
                323,
                103,
                272,
                308,
            ),  # other processes, the kernel, namespaces
            *(142, 144, 314),  # sched_setparam, sched_setscheduler, sched_setattr
        ),
        "clone": 56,
        "clone3": 435,
        "prlimit64": 302,
        "setpriority": 141,
    },
    "aarch64": {
        "socket": 198,
        "io_uring": (425, 426, 427),
        "ipc": (
            194,
            195,
            196,
            197,
            190,
            191,
            192,
            193,
            186,
            187,
            188,
            189,
            180,
            181,
            182,
            183,
            184,
            185,
            217,
            218,
            219,
        ),
        "powers": (
            *(52, 53, 452, 54, 55, 88),  # chmod, chown, utime
            *(5, 6, 7, 14, 15, 16, 463, 466),  # extended attributes
            *(
                117,
                270,
                271,
                438,
                272,
                241,
                280,
                282,
                116,
                97,
                268,
            ),  # other processes, the kernel, namespaces
            *(118, 119, 274),  # sched_setparam, sched_setscheduler, sched_setattr
        ),
        "clone": 220,
        "clone3": 435,
        "prlimit64": 261,
        "setpriority": 140,
    },
}
GROUPS = ("sockets", "ipc", "powers")

# machine: (its AUDIT_ARCH, seccomp's number)
_ARCHES = {"x86_64": (0xC000003E, 317), "aarch64": (0xC00000B7, 277)}


class _SockFilter(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def filter_program(machine: str, groups: tuple[str, ...] = GROUPS) -> list[tuple[int, int, int, int]] | None:
    """The filter for `machine` (platform.machine()) refusing the calls of `groups`, as (code, jt, jf, k)
    instructions, or None where there is no table for it. A jump's jt and jf count the instructions it skips;
    every jump goes forward, to a return or to the check of a call's first argument."""
    if machine not in _ARCHES:
        return None
    calls, audit_arch = _CALLS[machine], _ARCHES[machine][0]
    # (code, k, where it jumps when true, where when false): labels are resolved below
    body: list[tuple[int, int, object, object]] = [(_LD_W_ABS, _ARCH_OFFSET, 0, 0)]
    body.append((_JEQ_K, audit_arch, 0, _EPERM))  # another ABI: its numbers mean other calls
    body.append((_LD_W_ABS, _NR_OFFSET, 0, 0))
    if machine == "x86_64":
        body.append((_JSET_K, _X32_SYSCALL_BIT, _EPERM, 0))  # x32 sets this bit
    if "sockets" in groups:
        body.append((_JEQ_K, calls["socket"], _EACCES, 0))
        body += [(_JEQ_K, nr, _EPERM, 0) for nr in calls["io_uring"]]
    if "ipc" in groups:
        body += [(_JEQ_K, nr, _EPERM, 0) for nr in calls["ipc"]]
    if "powers" in groups:
        body += [(_JEQ_K, nr, _EPERM, 0) for nr in calls["powers"]]
        body.append((_JEQ_K, calls["clone3"], _ENOSYS, 0))
        body += [(_JEQ_K, calls[name], name, 0) for name in ("clone", "prlimit64", "setpriority")]
    body.append((_RET_K, _ALLOW, 0, 0))
    blocks = {}
    if "powers" in groups:
        blocks["clone"] = [(_LD_W_ABS, _ARG0_OFFSET, 0, 0), (_JSET_K, _CLONE_NAMESPACES, _EPERM, _ALLOW)]
        # prlimit64(pid, ...) and setpriority(which, who, ...) of the caller only: pid 0; which PRIO_PROCESS
        # (0) with who 0 (setpriority's second argument is at offset 24)
        blocks["prlimit64"] = [(_LD_W_ABS, _ARG0_OFFSET, 0, 0), (_JEQ_K, 0, _ALLOW, _EPERM)]
        blocks["setpriority"] = [
            (_LD_W_ABS, _ARG0_OFFSET, 0, 0),
            (_JEQ_K, 0, 0, _EPERM),
            (_LD_W_ABS, _ARG0_OFFSET + 8, 0, 0),
            (_JEQ_K, 0, _ALLOW, _EPERM),
        ]
    returns = [_ALLOW, _EACCES, _EPERM, _ENOSYS]
    layout = list(body)
    where: dict[object, int] = {}
    for name, block in blocks.items():
        where[name] = len(layout)
        layout += block
    for verdict in returns:
        where[verdict] = len(layout)
        layout.append((_RET_K, verdict, 0, 0))
    program = []
    for index, (code, k, true, false) in enumerate(layout):
        if code in (_RET_K, _LD_W_ABS):
            program.append((code, 0, 0, k))
            continue
        offsets = [0 if target == 0 else where[target] - index - 1 for target in (true, false)]
        program.append((code, offsets[0], offsets[1], k))
    return program


def _refused(reason: str) -> dict[str, object]:
    return {"sockets": False, "reason": reason, "groups": []}


def close(groups: tuple[str, ...] = GROUPS) -> dict[str, object]:
    """Installs the filter refusing `groups` (of GROUPS) on this process (every thread) and everything it
    starts from now on. Returns {"sockets": True, "reason": "", "groups": [...]} when the filter is
    installed ("sockets" says whether sockets are closed), or {"sockets": False, "reason": "<why not, one
    line>", "groups": []}; never raises."""
    try:
        return _install(tuple(group for group in GROUPS if group in groups))
    except Exception as exc:  # never a reason not to grade: the report says the filter did not hold
        return _refused(f"the seccomp filter failed to install: {exc}")


def close_sockets() -> dict[str, object]:
    """The filter with its socket group only."""
    found = close(("sockets",))
    return {"sockets": found["sockets"], "reason": found["reason"]}


def _install(groups: tuple[str, ...]) -> dict[str, object]:
    if platform.system() != "Linux":
        return _refused(f"seccomp is a Linux feature; this is {platform.system()}")
    machine = platform.machine()
    program = filter_program(machine, groups)
    if program is None:
        return _refused(f"no seccomp filter for this architecture ({machine})")
    if struct.calcsize("P") != 8:  # a 32-bit interpreter on a 64-bit kernel makes the foreign-ABI calls
        return _refused(f"no seccomp filter for a 32-bit Python on {machine}")
    instructions = (_SockFilter * len(program))(*program)
    prog = _SockFprog(len(program), ctypes.cast(instructions, ctypes.POINTER(_SockFilter)))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    ulong = ctypes.c_ulong
    held = {"sockets": "sockets" in groups, "reason": "", "groups": list(groups)}
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, ulong(1), ulong(0), ulong(0), ulong(0)) != 0:
        return _refused(f"prctl(PR_SET_NO_NEW_PRIVS) failed: {os.strerror(ctypes.get_errno())}")
    seccomp_nr = _ARCHES[machine][1]
    flags = _SECCOMP_FILTER_FLAG_TSYNC
    done = libc.syscall(ulong(seccomp_nr), ulong(_SECCOMP_SET_MODE_FILTER), ulong(flags), ctypes.byref(prog))
    if done == 0:
        return held
    if done > 0:  # TSYNC names a thread it could not synchronise (it has a filter this one does not)
        return _refused(f"seccomp() could not filter thread {done}")
    code = ctypes.get_errno()
    if code != errno.ENOSYS or len(os.listdir("/proc/self/task")) > 1:  # prctl filters this thread only
        return _refused(f"seccomp(SECCOMP_SET_MODE_FILTER) failed: {os.strerror(code)}")
    if libc.prctl(_PR_SET_SECCOMP, ulong(_SECCOMP_MODE_FILTER), ctypes.byref(prog), ulong(0), ulong(0)) != 0:
        return _refused(f"prctl(PR_SET_SECCOMP) failed: {os.strerror(ctypes.get_errno())}")
    return held
