"""Landlock: the unprivileged Linux sandbox a learner's child applies to itself before it runs learner code.

Landlock (Linux 5.13 and later) lets a process restrict itself and everything it starts, with no root, no
setuid helper and no namespaces: once restricted, it opens only the paths it named (for what it named), and,
where the kernel's Landlock ABI has them, binds and connects no TCP sockets (ABI 4) and signals no process
outside its own domain (ABI 6). A restriction can never be lifted, by the process or by anything it starts.

Three system calls and one prctl do it, through ctypes: the calls are stable kernel ABI, a binding would
add a dependency for about a hundred lines, and the child must stay importable with the standard library
alone (it loads this file by path, before numpy's or the learner's code could interfere).

    protections = restrict(read=[...], read_write=[...], files=[...])

returns a `dict` that says what held: {"abi": 7, "filesystem": True, "network": True, "signals": True,
"reason": ""}, or every protection False with the reason (no Landlock in this kernel, or a seccomp
profile that refuses the calls).
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import sys
from pathlib import Path

# System call numbers: the same on every architecture (they were added after the tables were unified).
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

# Filesystem access rights, by the ABI that introduced them.
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_ABI1_FS = (1 << 13) - 1  # execute .. make_sym
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # the rights a rule on a file may hold
BIND_TCP, CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6

MAKE_CHAR, MAKE_BLOCK = 1 << 6, 1 << 11
READ = EXECUTE | READ_FILE | READ_DIR


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi_version() -> tuple[int, str]:
    """Returns (the kernel's Landlock ABI, "") or (0, why there is none)."""
    if platform.system() != "Linux":
        return 0, f"Landlock is a Linux feature; this is {platform.system()}"
    libc = _libc()
    abi = libc.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    if abi >= 1:
        return int(abi), ""
    code = ctypes.get_errno()
    if code == errno.ENOSYS:
        return 0, "this kernel has no Landlock (Linux 5.13 or later, built with it, is needed)"
    if code == errno.EOPNOTSUPP:
        return 0, "Landlock is built into this kernel but switched off (boot parameter lsm=)"
    if code == errno.EPERM:
        return 0, "a seccomp profile (a container's, say) refuses the Landlock system calls"
    return 0, f"Landlock is not available: {os.strerror(code)}"


def _filesystem_rights(abi: int) -> int:
    rights = _ABI1_FS
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


def unavailable(reason: str, abi: int = 0) -> dict[str, object]:
    return {"abi": abi, "filesystem": False, "network": False, "signals": False, "reason": reason}


def restrict(read: list[str], read_write: list[str], files: list[str]) -> dict[str, object]:
    """Restricts this process, and everything it starts from now on, to reading (and executing) beneath
    `read` and the single files in `files`, reading and writing beneath `read_write`; no TCP bind or
    connect where the ABI has network rules, no signals outside the domain where it has scoping.

    Paths that do not exist are left out. Returns what held (see the module docstring); never raises."""
    abi, reason = abi_version()
    if abi < 1:
        return unavailable(reason)
    libc = _libc()
    all_fs = _filesystem_rights(abi)
    attr = _RulesetAttr(
        all_fs,
        (BIND_TCP | CONNECT_TCP) if abi >= 4 else 0,
        (SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL) if abi >= 6 else 0,
    )
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else (16 if abi >= 4 else 8)
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        return unavailable(f"landlock_create_ruleset failed: {os.strerror(ctypes.get_errno())}", abi)
    try:
        # no device nodes, even in the child's own folders (a root child could make one of the disk)
        writable = all_fs & ~(MAKE_CHAR | MAKE_BLOCK)
        rules = [(path, READ & all_fs) for path in read] + [(path, writable) for path in read_write]
        rules += [(path, (READ_FILE | EXECUTE) & _FILE_RIGHTS) for path in files]
        for path, rights in rules:
            problem = _add_rule(libc, ruleset, path, rights)
            if problem:
                return unavailable(problem, abi)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return unavailable(f"prctl(PR_SET_NO_NEW_PRIVS) failed: {os.strerror(ctypes.get_errno())}", abi)
        if libc.syscall(_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            return unavailable(f"landlock_restrict_self failed: {os.strerror(ctypes.get_errno())}", abi)
    finally:
        os.close(ruleset)
    return {"abi": abi, "filesystem": True, "network": abi >= 4, "signals": abi >= 6, "reason": ""}


def _add_rule(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> str:
    """Allows `rights` beneath `path` (a file gets only the rights a file can have); "" or what failed."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return ""  # nothing there: nothing to allow
    try:
        if not os.path.isdir(path):
            rights &= _FILE_RIGHTS
        rule = _PathBeneathAttr(rights, fd)
        if (
            libc.syscall(
                _ADD_RULE,
                ctypes.c_int(ruleset),
                ctypes.c_int(_RULE_PATH_BENEATH),
                ctypes.byref(rule),
                ctypes.c_uint32(0),
            )
            != 0
        ):
            return f"landlock_add_rule({path}) failed: {os.strerror(ctypes.get_errno())}"
        return ""
    finally:
        os.close(fd)


# What an interpreter running JAX on the CPU (or a GPU) reads at run time besides its own installation.
SYSTEM_READ = (
    "/usr/lib",
    "/usr/lib64",
    "/lib",
    "/lib64",
    "/usr/local/lib",
    "/usr/share/zoneinfo",
    "/proc/self",
    "/usr/local/cuda",  # ptxas and libdevice, where XLA's GPU backend looks for them
    "/sys/devices/system/cpu",
    "/sys/fs/cgroup",
)

SYSTEM_FILES = (
    "/etc/ld.so.cache",
    "/etc/localtime",
    "/dev/urandom",
    "/dev/random",
    "/proc/cpuinfo",
    "/proc/meminfo",
)


def restrict_child(forbidden: list[str]) -> dict[str, object]:
    """Restricts a grading child: it reads only the Python installation, its packages and the system
    libraries, writes only its working folder (which holds the copies of the submissions it grades) and its
    compilation cache, and opens no TCP connection. A path that would expose a `forbidden` folder (the
    course checkout, which holds the solutions) is never allowed. Returns what held; never raises."""
    closed = [os.path.realpath(path) for path in forbidden]

    def exposes(path: str) -> bool:
        real = os.path.realpath(path).rstrip(os.sep) + os.sep
        return any((folder + os.sep).startswith(real) for folder in closed)

    installed = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *filter(None, sys.path)}
    read = [path for path in sorted(installed | set(SYSTEM_READ)) if not exposes(path)]
    devices = [str(path) for path in Path("/dev").glob("nvidia*")] + ["/dev/null", "/dev/dri"]
    read_write = [os.getcwd(), *filter(None, [os.environ.get("JAX_COMPILATION_CACHE_DIR")]), *devices]
    try:
        return restrict(read, read_write, list(SYSTEM_FILES))
    except Exception as exc:  # never a reason not to grade: the report says the sandbox did not hold
        return unavailable(f"the sandbox failed to start: {exc}")
