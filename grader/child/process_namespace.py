"""A PID namespace for a learner's child, so that nothing it starts outlives its run.

A process that leaves the child's session (setsid) and forks again is no longer in any group the grader
can kill at once; a chain of them, each forking before its parent is killed, can outrun a hunt. In a PID
namespace of its own the child's whole process tree dies together: when the namespace's first process
(its init) ends, the kernel kills every other process in it, wherever in the tree it hid.

The child (grader/child/main.py) calls `enter()` first thing, before it imports numpy or jax (a fork is safe
only while the process has one thread). The process the grader started (the outer one) unshares the PID
namespace; its next child is that namespace's init, which forks the worker that goes on to grade and reaps
whatever is reparented to it. When the worker ends, init passes its exit status to the outer process and ends,
which kills what is left in the namespace; the outer process ends the way the worker did, so the grader reads
the worker's exit status, as before. The grader's side (grader/running/processes.py) counts memory over every
process descending from the child.

As root (or with CAP_SYS_ADMIN) the PID namespace alone is unshared; otherwise a user namespace with it,
mapping only the grader's own user, where the kernel allows unprivileged user namespaces. Where neither
works, `enter` returns the reason and the child goes on without, the grader killing escaped processes as
it finds them (grader/running/processes.py). Standard library only: the child loads this file by path.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import struct

_CLONE_NEWIPC, _CLONE_NEWUSER, _CLONE_NEWPID = 0x08000000, 0x10000000, 0x20000000
_PR_SET_PDEATHSIG = 1


def _unshare(flags: int) -> int:
    """unshare(2); returns 0 or the errno."""
    libc = ctypes.CDLL(None, use_errno=True)
    return 0 if libc.unshare(ctypes.c_int(flags)) == 0 else ctypes.get_errno()


def _die_with_parent() -> None:
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _map_own_user(uid: int, gid: int) -> None:
    """Maps the grader's user and group to themselves in the new user namespace (files the worker writes
    then belong to the grader's user, as without the namespace)."""
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w", encoding="ascii") as handle:
            handle.write(text)


def _unshare_pid(ipc: bool) -> tuple[str, bool]:
    """Unshares the PID namespace, and with `ipc` the IPC namespace too (with a user namespace when not
    privileged); returns ("" or why it failed, whether a user namespace was made)."""
    if not os.path.exists("/proc/self/ns/pid"):
        return "this system has no PID namespaces", False
    flags = _CLONE_NEWPID | (_CLONE_NEWIPC if ipc and os.path.exists("/proc/self/ns/ipc") else 0)
    if _unshare(flags) == 0:
        return "", False
    uid, gid = os.getuid(), os.getgid()
    code = _unshare(_CLONE_NEWUSER | flags)
    if code:
        return (
            f"unshare failed ({os.strerror(code)}): no privilege, and no unprivileged user namespaces",
            False,
        )
    try:
        _map_own_user(uid, gid)
    except OSError as exc:
        return f"the user namespace could not map the user ({exc.strerror})", False
    return "", True


def _close_inherited(keep: int) -> None:
    """Closes every descriptor above stderr but `keep`: the pipes to the grader belong to the worker, and
    the grader must see them close when the worker ends."""
    for fd in map(int, os.listdir("/proc/self/fd")):
        if fd > 2 and fd != keep:
            try:
                os.close(fd)
            except OSError:
                continue


def _init(worker: int, status_pipe: int) -> None:
    """The namespace's init: reaps every process reparented to it until the worker ends, then passes the
    worker's status on and ends, taking the namespace with it."""
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            status = 0
            break
        if pid == worker:
            break
    os.write(status_pipe, struct.pack("i", status))
    os._exit(0)


def _end_like(status: int) -> None:
    """Ends this process the way the worker ended: the same exit code, or killed by the same signal."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the worker's crash, not a second core file
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
        os._exit(128 + number)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def enter(ipc: bool = False) -> dict[str, object]:
    """Puts the rest of this process's life (as the worker) in a new PID namespace, and with `ipc` a new IPC
    namespace (SysV shared memory, semaphores, message queues and POSIX message queues of its own, gone with
    it); returns, in the worker, {"processes": True, "reason": ""}, or, where no namespace could be made,
    {"processes": False, "reason": why} in this same process. Call it while the process has a single
    thread. The worker gives up its capabilities afterwards (grader/child/privileges.py)."""
    _die_with_parent()
    reason, user_namespace = _unshare_pid(ipc)
    if reason:
        return {"processes": False, "reason": reason}
    read_status, write_status = os.pipe()
    init = os.fork()
    if init == 0:  # init of the new namespace
        _die_with_parent()
        os.close(read_status)
        worker = os.fork()
        if worker == 0:
            os.close(write_status)
            _die_with_parent()
            return {"processes": True, "reason": "", "user_namespace": user_namespace}
        _close_inherited(keep=write_status)
        _init(worker, write_status)
    os.close(write_status)
    _close_inherited(keep=read_status)
    os.waitpid(init, 0)
    received = os.read(read_status, 4)
    _end_like(struct.unpack("i", received)[0] if len(received) == 4 else signal.SIGKILL)
    raise AssertionError("unreachable")  # _end_like never returns
