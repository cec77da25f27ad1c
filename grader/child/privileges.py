"""No privilege in a learner's child, whoever runs the grader: every capability given up for good.

CI containers and Gradescope run the grader as root, and a child started by root holds every capability:
it could change the mode, owner, times and extended attributes of any file, make device nodes, take a
real-time scheduling class that starves its classmates' children, read the kernel log. Landlock restricts
paths, not these. So the child gives them up first thing, before it has a second thread (capabilities
belong to each thread; the threads made later inherit the empty sets):

- the bounding set emptied (nothing it executes can gain a capability back),
- the ambient set cleared,
- the effective, permitted and inheritable sets emptied,
- `no_new_privs` set (a setuid or file-capability program runs without its privilege).

As an ordinary user all of it is already so, and what needs a capability to drop (the bounding set) is
skipped. What a root child without capabilities can still do as the owner of root's files (change their
mode, times or attributes) the seccomp filter refuses (grader/child/seccomp.py). Standard library only:
the child loads this file by path.

    dropped = drop_all()

returns {"privileges": True, "reason": ""} when the process holds no capability, else the reason.
"""

from __future__ import annotations

import ctypes
import os
import struct

_PR_CAPBSET_DROP, _PR_SET_NO_NEW_PRIVS, _PR_CAP_AMBIENT = 24, 38, 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAPABILITY_VERSION_3 = 0x20080522
_LAST_CAP_FILE = "/proc/sys/kernel/cap_last_cap"


def _last_capability() -> int:
    try:
        with open(_LAST_CAP_FILE, encoding="ascii") as handle:
            return int(handle.read())
    except (OSError, ValueError):
        return 63  # beyond the last one, PR_CAPBSET_DROP says EINVAL, which ends the loop


def held_capabilities() -> dict[str, int]:
    """The capability sets of this thread as /proc/self/status shows them (CapEff, CapPrm, ...), as ints."""
    sets = {}
    try:
        with open(f"/proc/self/task/{os.getpid()}/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith(("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")):
                    name, value = line.split(":", 1)
                    sets[name] = int(value.strip(), 16)
    except OSError:
        pass
    return sets


def drop_all() -> dict[str, object]:
    """Gives up every capability of this process for good and sets no_new_privs; never raises. Call it
    while the process has one thread."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        ulong = ctypes.c_ulong
        for capability in range(_last_capability() + 1):
            if libc.prctl(_PR_CAPBSET_DROP, ulong(capability), ulong(0), ulong(0), ulong(0)) != 0:
                break  # EPERM: no CAP_SETPCAP, so nothing to drop (an ordinary user); EINVAL: past the last
        libc.prctl(_PR_CAP_AMBIENT, ulong(_PR_CAP_AMBIENT_CLEAR_ALL), ulong(0), ulong(0), ulong(0))
        header = struct.pack("Ii", _CAPABILITY_VERSION_3, 0)  # this process
        if libc.capset(header, bytes(24)) != 0:  # two {effective, permitted, inheritable} sets, all empty
            return {"privileges": False, "reason": f"capset failed: {os.strerror(ctypes.get_errno())}"}
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, ulong(1), ulong(0), ulong(0), ulong(0)) != 0:
            reason = f"prctl(PR_SET_NO_NEW_PRIVS) failed: {os.strerror(ctypes.get_errno())}"
            return {"privileges": False, "reason": reason}
    except Exception as exc:  # never a reason not to grade: the report says what did not hold
        return {"privileges": False, "reason": f"the capabilities could not be dropped: {exc}"}
    left = {name: value for name, value in held_capabilities().items() if value and name != "CapBnd"}
    if left:
        return {"privileges": False, "reason": f"capabilities left: {left}"}
    return {"privileges": True, "reason": ""}
