"""The processes of a child and what it leaves behind: starting a child, finding its processes, counting
their memory, killing them.

A learner's child puts itself in a PID namespace where the machine allows it
(grader/child/process_namespace.py): everything it starts then dies with it. Here, without relying on that, a
child runs in its own session; its processes are the session's and every process descending from it, whatever
session it moved to; at the end of its run all of them are killed. A process whose parent dies is reparented
to the nearest subreaper: this process, once it has started a child, so it is found among this process's
children and killed too, round after round until none is left."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path


def _read_proc(path: str) -> str:
    """The text of a small /proc file, read with three system calls (open, read, close) and no file object:
    a watched child's processes are looked up ten times a second (grader/protocol/events.py's
    WATCH_INTERVAL), each time in every /proc/PID/stat of the machine, where `Path.read_text` costs three
    times as much CPU. Raises OSError where the process is gone or not ours to read."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.read(fd, 1 << 16).decode("ascii", errors="replace")
    finally:
        os.close(fd)


def _processes() -> list[tuple[int, int, int]]:
    """Returns (pid, parent pid, session) of every process this user can see."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = _read_proc(f"/proc/{name}/stat")
            fields = stat[stat.rindex(")") + 2 :].split()  # state ppid pgrp session ...
            found.append((int(name), int(fields[1]), int(fields[3])))
        except (OSError, ValueError, IndexError):
            continue  # gone, or not ours to read
    return found


def session_members(session: int) -> list[int]:
    """Returns the processes of a session: the child, and whatever it started that did not leave."""
    return [pid for pid, _, sid in _processes() if sid == session]


def members(child: int) -> list[int]:
    """Returns the child's processes: those of its session, and every process descending from it (one that
    moved to a session of its own with setsid() is still a descendant while its parent lives)."""
    found = _processes()
    children: dict[int, list[int]] = {}
    for pid, parent, _ in found:
        children.setdefault(parent, []).append(pid)
    tree, stack = set(), [child]
    while stack:
        pid = stack.pop()
        if pid not in tree:
            tree.add(pid)
            stack.extend(children.get(pid, ()))
    return sorted(tree | {pid for pid, _, session in found if session == child})


_OWN_CHILDREN: set[int] = set()
_CHILDREN_LOCK = threading.Lock()
_PR_SET_CHILD_SUBREAPER = 36


@functools.cache
def become_subreaper() -> None:
    """Makes this process the subreaper of everything it starts (Linux 3.4 and later): a process that leaves
    its child's session with setsid() and loses its parent is then reparented here, not to init, where
    `kill_orphans` finds it."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


ORPHAN_HUNT_SECONDS = 60.0  # a hunt that finds new orphans for this long is a fork bomb: it is stopped


def kill_orphans(rounds: int | None = None) -> None:
    """Kills and reaps the processes reparented to this process (see `become_subreaper`): whatever learner
    code left behind outside its child's session. Repeats until none is left, so that one that forks while
    it is being killed is found too, and so is each link of a chain of processes (a parent's children are
    reparented here only once it is dead). A process in this process's own session (what its caller
    started itself, a test runner's subprocess say) is never touched. `rounds` caps the hunt (the old
    behaviour, shown by the tests with GRADE_TEST_UNPROTECTED=process-namespace)."""
    if not sys.platform.startswith("linux"):
        return
    me, my_session = os.getpid(), os.getsid(0)
    deadline = time.monotonic() + ORPHAN_HUNT_SECONDS
    round_number = 0
    while time.monotonic() < deadline and (rounds is None or round_number < rounds):
        round_number += 1
        with _CHILDREN_LOCK:
            orphans = [
                pid
                for pid, parent, session in _processes()
                if parent == me and session != my_session and pid not in _OWN_CHILDREN
            ]
            for pid in orphans:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
        if not orphans:
            return
        for pid in orphans:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, 0)


def resident_bytes(child: int, whole_tree: bool = True) -> int:
    """Returns the resident memory of the child's processes together (`members`; with `whole_tree` false,
    its session's only, as once), so that forking or leaving the session does not evade the limit."""
    page = os.sysconf("SC_PAGE_SIZE")
    total = 0
    for pid in members(child) if whole_tree else session_members(child):
        with contextlib.suppress(OSError, ValueError, IndexError):
            total += int(_read_proc(f"/proc/{pid}/statm").split()[1]) * page
    return total


def exit_status_unreaped(process: subprocess.Popen, timeout: float) -> int | None:
    """Waits up to `timeout` for the child to exit and returns its status as Popen would, without reaping
    it: while it is a zombie its pid (which names its process group and session) cannot be reused."""
    deadline = time.monotonic() + timeout
    while process.returncode is None:
        try:
            info = os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return None
        if info is not None:
            killed = info.si_code in (os.CLD_KILLED, os.CLD_DUMPED)
            return -info.si_status if killed else info.si_status
        if time.monotonic() > deadline:
            return None
        time.sleep(0.01)
    return process.returncode


def kill_group(process: subprocess.Popen, as_once: bool = False) -> None:
    """Kills the child and all its processes (`members`: its session and its descendants, also after the
    child has exited, since it is reaped only afterwards, so its ids stay ours), then what was left
    behind (`kill_orphans`). With `as_once`, only its session and 50 rounds of orphans, as the grader once
    did (GRADE_TEST_UNPROTECTED=process-namespace: the tests that show why not)."""
    if process.returncode is not None:
        return  # killed and reaped before, its orphans with it
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    if sys.platform.startswith("linux"):
        for pid in session_members(process.pid) if as_once else members(process.pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
    process.wait()
    with _CHILDREN_LOCK:
        _OWN_CHILDREN.discard(process.pid)
    kill_orphans(50 if as_once else None)


def start_child(argv: list[str], **options) -> subprocess.Popen:
    """Starts a child in a session of its own, this process being its subreaper, and records it as ours
    (so that `kill_orphans` never takes it for something a learner left behind). The child keeps this
    process's priority (`keep_priority`)."""
    become_subreaper()
    with _CHILDREN_LOCK:
        process = subprocess.Popen(argv, start_new_session=True, **options)
        _OWN_CHILDREN.add(process.pid)
    keep_priority(process.pid)
    return process


def keep_priority(pid: int) -> None:
    """Gives the session that `pid` leads this process's nice value, where the kernel schedules sessions
    as groups (Linux's autogroup, on in many distributions' kernels): there a process's nice value only
    ranks it within its session, and each session, a child's included, gets an equal share of the CPU.
    Without this, `nice grade batch ...` (or a CI job that runs one check niced beside another) would
    take as much CPU as anything else on the machine. Only a lower priority is passed on, which needs no
    privilege; where there is no autogroup (no such file, or it cannot be written) nice values already
    work and nothing is done."""
    nice = os.getpriority(os.PRIO_PROCESS, 0)
    if nice <= 0 or not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError):
        Path(f"/proc/{pid}/autogroup").write_text(f"{nice}\n", encoding="ascii")
