"""Expect: error: ProbeReport"""

# Tries, from a learner's child, every way out of the process that names no path (docs/security.md, "Every
# way out that names no path") and raises ProbeReport with what each attempt gave: "ok" or the errno's name.
# tests/test_kernel_escapes.py grades it with the protections on and off. Each attempt undoes what it made.

import ctypes
import errno
import json
import os
import resource
import socket

TARGET = "/nonexistent/grade-target-file"  # tests/test_kernel_escapes.py writes a real path here
MACHINE = os.uname().machine
NUMBERS = {  # the calls the C library has no wrapper for, by machine
    "x86_64": {
        "add_key": 248,
        "keyctl": 250,
        "io_uring_setup": 425,
        "process_vm_readv": 310,
        "pidfd_open": 434,
        "pidfd_getfd": 438,
        "kcmp": 312,
        "perf_event_open": 298,
        "bpf": 321,
        "userfaultfd": 323,
        "syslog": 103,
        "prlimit64": 302,
    },
    "aarch64": {
        "add_key": 217,
        "keyctl": 219,
        "io_uring_setup": 425,
        "process_vm_readv": 270,
        "pidfd_open": 434,
        "pidfd_getfd": 438,
        "kcmp": 272,
        "perf_event_open": 241,
        "bpf": 280,
        "userfaultfd": 282,
        "syslog": 116,
        "prlimit64": 261,
    },
}[MACHINE]
LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.syscall.restype = ctypes.c_long


class ProbeReport(Exception):
    pass


def _call(result: int) -> int:
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return result


def _syscall(name: str, *args) -> int:
    return _call(LIBC.syscall(ctypes.c_long(NUMBERS[name]), *args))


def _sysv_shared_memory():
    segment = _call(LIBC.shmget(0x5EED, 4096, 0o1600))
    LIBC.shmctl(segment, 0, None)  # IPC_RMID


def _sysv_semaphores():
    LIBC.semctl(_call(LIBC.semget(0x5EED, 1, 0o1600)), 0, 0)


def _sysv_message_queues():
    LIBC.msgctl(_call(LIBC.msgget(0x5EED, 0o1600)), 0, None)


def _posix_message_queues():
    LIBC.mq_open.restype = ctypes.c_int
    _call(LIBC.mq_open(b"/grade-probe", os.O_CREAT | os.O_RDWR, 0o600, None))
    LIBC.mq_unlink(b"/grade-probe")


def _keyrings():
    _syscall("add_key", b"user", b"grade-probe", b"x", 1, -2)  # the process keyring: gone with the process


def _sockets():
    for family, kind in ((socket.AF_UNIX, socket.SOCK_STREAM), (socket.AF_INET, socket.SOCK_DGRAM)):
        socket.socket(family, kind).close()


def _io_uring():
    os.close(_syscall("io_uring_setup", 4, ctypes.create_string_buffer(120)))


def _ptrace():
    _call(LIBC.ptrace(2, os.getppid(), None, None))  # PTRACE_PEEKDATA: ESRCH, not traced, where it is allowed


def _process_vm():
    source, target = ctypes.create_string_buffer(8), ctypes.create_string_buffer(8)
    local = (ctypes.c_void_p * 2)(ctypes.addressof(target), 8)
    remote = (ctypes.c_void_p * 2)(ctypes.addressof(source), 8)
    _syscall("process_vm_readv", os.getpid(), local, 1, remote, 1, 0)


def _pidfd_getfd():
    pidfd = _syscall("pidfd_open", os.getpid(), 0)
    try:
        os.close(_syscall("pidfd_getfd", pidfd, 0, 0))
    finally:
        os.close(pidfd)


def _kcmp():
    _syscall("kcmp", os.getpid(), os.getpid(), 0, 0, 0)  # KCMP_FILE


def _perf_event_open():
    attr = (ctypes.c_uint32 * 32)()
    attr[0], attr[1] = 1, 128  # PERF_TYPE_SOFTWARE, the struct's size; config 0: cpu clock
    os.close(_syscall("perf_event_open", attr, 0, -1, -1, 0))


def _bpf():
    attr = (ctypes.c_uint32 * 16)(2, 4, 4, 1)  # BPF_MAP_TYPE_ARRAY, 4-byte keys and values, one entry
    os.close(_syscall("bpf", 0, attr, ctypes.sizeof(attr)))  # BPF_MAP_CREATE


def _userfaultfd():
    os.close(_syscall("userfaultfd", 0))


def _syslog():
    _syscall("syslog", 10, None, 0)  # SYSLOG_ACTION_SIZE_BUFFER


def _device_nodes():
    _call(LIBC.mknod(b"./disk", 0o60600, os.makedev(8, 0)))
    os.unlink("./disk")


def _file_owner_powers():
    _call(LIBC.chmod(TARGET.encode(), 0o4777))
    _call(LIBC.utime(TARGET.encode(), None))
    _call(LIBC.setxattr(TARGET.encode(), b"user.grade-probe", b"1", 1, 0))


def _scheduling():
    _call(LIBC.sched_setscheduler(0, 1, ctypes.byref(ctypes.c_int(1))))  # SCHED_FIFO
    LIBC.sched_setscheduler(0, 0, ctypes.byref(ctypes.c_int(0)))
    _call(LIBC.setpriority(0, os.getppid(), 10))  # another process's priority


def _rlimits():
    _syscall("prlimit64", os.getppid(), resource.RLIMIT_NOFILE, None, ctypes.create_string_buffer(16))
    soft, _ = resource.getrlimit(resource.RLIMIT_CPU)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, resource.RLIM_INFINITY))  # above its hard limit


def _new_namespaces():  # last: where it works, the rest of this process lives in them
    _call(LIBC.unshare(0x10000000 | 0x00020000))  # CLONE_NEWUSER | CLONE_NEWNS


PROBES = [
    name
    for name in dict(globals())
    if name.startswith("_") and name[1:2].isalpha() and name not in ("_call", "_syscall")
]


def scaled_sum(x, scale):
    found = {}
    for name in PROBES:
        try:
            globals()[name]()
            found[name[1:]] = "ok"
        except OSError as exc:
            found[name[1:]] = errno.errorcode.get(exc.errno, str(exc.errno))
        except Exception as exc:  # a probe that cannot be made here at all
            found[name[1:]] = f"{type(exc).__name__}"
    raise ProbeReport(json.dumps(found))
