"""The seccomp filter (grader/child/seccomp.py): after it, a process opens no socket of any kind, while
socketpair, numpy, JAX and subprocesses still work, and whatever it starts is filtered too.

Each check runs in a fresh interpreter that loads the module by path, as the grading child does. The same
script runs once with the filter and once without (the control), so that every assertion about the filtered
run is shown to depend on the filter, not on what this machine or container happens to allow.
"""

from __future__ import annotations

import errno
import importlib.util
import json
import os
import platform
import socket
import struct
import subprocess
import sys
from pathlib import Path

import pytest

MODULE = Path(__file__).resolve().parent.parent / "grader" / "child" / "seccomp.py"
SUPPORTED = platform.system() == "Linux" and platform.machine() in ("x86_64", "aarch64")

pytestmark = pytest.mark.skipif(
    not SUPPORTED, reason=f"the filter is written for Linux on x86_64 and aarch64, not {platform.platform()}"
)

# One script, run with FILTER True and False. It reports every outcome as "ok" or "ExceptionName:ERRNO".
SCRIPT = r"""
import ctypes, errno, importlib.util, json, mmap, os, socket, subprocess, sys, threading

FILTER, MODULE, UDP_PORT, UNIX_PATH = json.loads(sys.argv[1])
out = {}

def attempt(name, action):
    try:
        action()
        out[name] = "ok"
    except OSError as exc:
        out[name] = f"{type(exc).__name__}:{errno.errorcode.get(exc.errno, exc.errno)}"
    except Exception as exc:
        out[name] = f"{type(exc).__name__}: {exc}"

def make(family, kind):
    return lambda: socket.socket(family, kind).close()

# A thread that exists before the filter (as XLA's do in the grading child) must be filtered as well.
go, done = threading.Event(), threading.Event()
def early_thread():
    go.wait()
    attempt("early_thread_udp", make(socket.AF_INET, socket.SOCK_DGRAM))
    done.set()
threading.Thread(target=early_thread, daemon=True).start()

if FILTER:
    spec = importlib.util.spec_from_file_location("_grader_seccomp", MODULE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out["report"] = module.close_sockets()
go.set()
done.wait(10)

for name, family, kind in [
    ("unix_stream", socket.AF_UNIX, socket.SOCK_STREAM),
    ("unix_dgram", socket.AF_UNIX, socket.SOCK_DGRAM),
    ("inet_dgram", socket.AF_INET, socket.SOCK_DGRAM),
    ("inet6_dgram", socket.AF_INET6, socket.SOCK_DGRAM),
    ("inet_stream", socket.AF_INET, socket.SOCK_STREAM),
    ("netlink", socket.AF_NETLINK, socket.SOCK_RAW),
]:
    attempt(name, make(family, kind))

def send_udp():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.sendto(b"udp", ("127.0.0.1", UDP_PORT))

def send_unix():
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.sendto(b"unix", UNIX_PATH)

attempt("send_udp", send_udp)
attempt("send_unix", send_unix)

def pair():
    left, right = socket.socketpair()
    with left, right:
        left.sendall(b"x")
        assert right.recv(1) == b"x"

attempt("socketpair", pair)

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

def io_uring():
    params = ctypes.create_string_buffer(120)
    fd = libc.syscall(ctypes.c_long(425), ctypes.c_long(4), params)
    if fd < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    os.close(fd)

attempt("io_uring_setup", io_uring)

if os.uname().machine == "x86_64":
    def x32_socket():  # socket(AF_INET, SOCK_DGRAM) under the x32 ABI
        arguments = [ctypes.c_long(0x40000000 | 41), ctypes.c_long(2), ctypes.c_long(2), ctypes.c_long(0)]
        fd = libc.syscall(*arguments)
        if fd < 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code))
        os.close(fd)

    def i386_socket():  # socket(AF_INET, SOCK_DGRAM) through int 0x80: i386's number 359
        code = bytes.fromhex("53" "b867010000" "bb02000000" "b902000000" "31d2" "cd80" "5b" "4863c0" "c3")
        page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        page.write(code)
        address = ctypes.addressof(ctypes.c_char.from_buffer(page))
        fd = ctypes.CFUNCTYPE(ctypes.c_long)(address)()
        if fd < 0:
            raise OSError(-fd, os.strerror(-fd))
        os.close(fd)

    attempt("x32_socket", x32_socket)
    attempt("i386_socket", i386_socket)

def numpy_work():
    import numpy
    assert float(numpy.ones(3).sum()) == 3.0

attempt("numpy", numpy_work)

def jax_work():
    import jax
    import jax.numpy as jnp
    assert float(jnp.ones(3).sum().block_until_ready()) == 3.0
    def probe(x):  # runs on one of XLA's threads, as a learner's callback would
        attempt("jax_callback_udp", make(socket.AF_INET, socket.SOCK_DGRAM))
        return x
    shape = jax.ShapeDtypeStruct((3,), jnp.float32)
    jax.jit(lambda x: jax.pure_callback(probe, shape, x) * 2)(jnp.ones(3, jnp.float32)).block_until_ready()

if importlib.util.find_spec("jax") is not None:
    attempt("jax", jax_work)

def spawn():
    subprocess.run(["true"], check=True)

attempt("spawn", spawn)
grandchild = (
    "import socket, errno\n"
    "try:\n"
    "    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).close(); print('ok')\n"
    "except OSError as exc:\n"
    "    print(type(exc).__name__ + ':' + errno.errorcode[exc.errno])\n"
)
found = subprocess.run([sys.executable, "-c", grandchild], capture_output=True, text=True)
out["grandchild_udp"] = found.stdout.strip() or found.stderr.strip()[-300:]
print(json.dumps(out))
"""


def _drain(sock: socket.socket) -> list[bytes]:
    received = []
    sock.setblocking(False)
    while True:
        try:
            received.append(sock.recv(64))
        except BlockingIOError:
            return received


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, dict]:
    """Runs the script filtered and unfiltered, side by side, each with its own listening sockets; returns
    {"filtered": outcomes, "control": outcomes}, each with "received": what its listeners got."""
    started = {}
    for name, filtered in (("filtered", True), ("control", False)):
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.bind(("127.0.0.1", 0))
        unix = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        path = str(tmp_path_factory.mktemp(name) / "listener.sock")
        unix.bind(path)
        arguments = json.dumps([filtered, str(MODULE), udp.getsockname()[1], path])
        child = subprocess.Popen(
            [sys.executable, "-c", SCRIPT, arguments],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        started[name] = (child, udp, unix)
    results = {}
    for name, (child, udp, unix) in started.items():
        stdout, stderr = child.communicate(timeout=120)
        assert child.returncode == 0, f"the {name} script failed:\n{stderr[-3000:]}"
        results[name] = json.loads(stdout.strip().splitlines()[-1])
        with udp, unix:  # the child has exited: whatever it sent is queued
            results[name]["received"] = sorted(item.decode() for item in _drain(udp) + _drain(unix))
    return results


def test_the_filter_is_installed(runs):
    assert runs["filtered"]["report"] == {"sockets": True, "reason": ""}


SOCKETS = ["unix_stream", "unix_dgram", "inet_dgram", "inet6_dgram", "inet_stream"]


@pytest.mark.parametrize("kind", SOCKETS)
def test_no_socket_can_be_made_but_the_control_makes_it(runs, kind):
    assert runs["control"][kind] == "ok", "the control must make the socket, or the test shows nothing"
    assert runs["filtered"][kind] == "PermissionError:EACCES"


def test_netlink_is_refused_too(runs):
    assert runs["filtered"]["netlink"] == "PermissionError:EACCES"


def test_nothing_reaches_a_listener_but_the_control_does(runs):
    assert runs["control"]["received"] == ["udp", "unix"]
    assert runs["filtered"]["received"] == []
    assert runs["filtered"]["send_udp"] == runs["filtered"]["send_unix"] == "PermissionError:EACCES"


def test_threads_started_before_the_filter_are_filtered(runs):
    assert runs["control"]["early_thread_udp"] == "ok"
    assert runs["filtered"]["early_thread_udp"] == "PermissionError:EACCES"


@pytest.mark.parametrize("work", ["socketpair", "numpy", "spawn"])
def test_ordinary_work_still_works(runs, work):
    assert runs["filtered"][work] == "ok"


def test_jax_still_works_and_its_callbacks_are_filtered(runs):
    if "jax" not in runs["control"]:
        pytest.skip("jax is not installed in this interpreter")
    assert runs["filtered"]["jax"] == runs["control"]["jax"] == "ok"
    assert runs["control"]["jax_callback_udp"] == "ok"
    assert runs["filtered"]["jax_callback_udp"] == "PermissionError:EACCES"


def test_what_the_filtered_process_starts_is_filtered(runs):
    assert runs["control"]["grandchild_udp"] == "ok"
    assert runs["filtered"]["grandchild_udp"] == "PermissionError:EACCES"


def test_io_uring_is_refused(runs):
    control = runs["control"]["io_uring_setup"]
    if control != "ok":
        pytest.skip(f"io_uring_setup fails here without the filter ({control}): nothing to show")
    assert runs["filtered"]["io_uring_setup"] == "PermissionError:EPERM"


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the foreign ABIs checked are x86_64's")
@pytest.mark.parametrize("abi", ["x32_socket", "i386_socket"])
def test_foreign_abis_are_refused(runs, abi):
    control = runs["control"][abi]
    if control.endswith(":EPERM"):
        pytest.skip(f"{abi} fails with EPERM here without the filter: nothing to show")
    assert runs["filtered"][abi] == "PermissionError:EPERM"


def _module():
    spec = importlib.util.spec_from_file_location("_grader_seccomp", MODULE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _verdict(program, number: int, arch: int, args=(0, 0, 0, 0, 0, 0)) -> str:
    """Runs the classic BPF program on one system call, as the kernel would: "allow" or the errno's name."""
    data = struct.pack("<iIQ6Q", number, arch, 0, *args)
    pc, accumulator = 0, 0
    for _ in range(len(program)):
        code, jt, jf, k = program[pc]
        if code == 0x20:
            accumulator, pc = struct.unpack_from("<I", data, k)[0], pc + 1
        elif code == 0x15:
            pc += 1 + (jt if accumulator == k else jf)
        elif code == 0x45:
            pc += 1 + (jt if accumulator & k else jf)
        else:
            assert code == 0x06
            return "allow" if k == 0x7FFF0000 else errno.errorcode[k & 0xFFFF]
    raise AssertionError("the program ran off its end")


def test_the_program_jumps_only_forward_and_ends_in_a_return():
    module = _module()
    assert module.filter_program("riscv64") is None
    for machine in ("x86_64", "aarch64"):
        program = module.filter_program(machine)
        for index, (code, jt, jf, _) in enumerate(program):
            if code & 0x07 == 0x05:  # a jump: forward, within the program
                assert index + 1 + max(jt, jf) < len(program)
        assert program[-1][0] == 0x06
        verdicts = {k for code, _, _, k in program if code == 0x06}
        assert verdicts == {0x7FFF0000} | {0x50000 | e for e in (errno.EACCES, errno.EPERM, errno.ENOSYS)}


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_each_group_refuses_its_calls_and_nothing_else(machine):
    """The program, run on calls by number: each group's calls refused only when the group is asked for;
    clone and prlimit64 judged by their first argument, clone3 sent back to clone."""
    module = _module()
    arch, calls = module._ARCHES[machine][0], module._CALLS[machine]
    read = 0 if machine == "x86_64" else 63
    full, sockets = module.filter_program(machine), module.filter_program(machine, ("sockets",))
    assert _verdict(full, read, arch) == _verdict(sockets, read, arch) == "allow"
    assert _verdict(full, calls["socket"], arch) == _verdict(sockets, calls["socket"], arch) == "EACCES"
    for number in calls["ipc"] + calls["powers"]:
        assert _verdict(full, number, arch) == "EPERM" and _verdict(sockets, number, arch) == "allow"
    assert _verdict(full, calls["clone3"], arch) == "ENOSYS"
    thread = 0x3D0F00  # CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | ...
    assert _verdict(full, calls["clone"], arch, (thread, 0, 0, 0, 0, 0)) == "allow"
    for namespace in (0x00020000, 0x08000000, 0x10000000, 0x20000000, 0x40000000):
        assert _verdict(full, calls["clone"], arch, (namespace | 17, 0, 0, 0, 0, 0)) == "EPERM"
    assert _verdict(full, calls["prlimit64"], arch) == "allow"
    assert _verdict(full, calls["prlimit64"], arch, (4242, 0, 0, 0, 0, 0)) == "EPERM"
    assert _verdict(full, calls["setpriority"], arch) == "allow"  # PRIO_PROCESS, who 0: itself
    assert _verdict(full, calls["setpriority"], arch, (2, 0, 0, 0, 0, 0)) == "EPERM"  # PRIO_USER
    assert _verdict(full, calls["setpriority"], arch, (0, 4242, 0, 0, 0, 0)) == "EPERM"  # another process
    assert _verdict(full, calls["socket"], 0x40000003) == "EPERM"  # i386's numbers: another ABI


# Stands in for a container's seccomp profile: seccomp(2) itself fails with the errno given; then the module
# is loaded and asked to close the sockets, with a second thread running if asked.
REFUSED = r"""
import ctypes, errno, importlib.util, json, os, socket, sys, threading

MODULE, code, threads = json.loads(sys.argv[1])
number = {"x86_64": 317, "aarch64": 277}[os.uname().machine]
Filter = ctypes.c_uint16, ctypes.c_uint8, ctypes.c_uint8, ctypes.c_uint32
class SockFilter(ctypes.Structure):
    _fields_ = list(zip(["code", "jt", "jf", "k"], Filter))
class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]
program = [(0x20, 0, 0, 0), (0x15, 0, 1, number), (0x06, 0, 0, 0x50000 | code), (0x06, 0, 0, 0x7FFF0000)]
instructions = (SockFilter * 4)(*program)
prog = SockFprog(4, ctypes.cast(instructions, ctypes.POINTER(SockFilter)))
libc = ctypes.CDLL(None, use_errno=True)
ulong = ctypes.c_ulong
assert libc.prctl(38, ulong(1), ulong(0), ulong(0), ulong(0)) == 0
assert libc.prctl(22, ulong(2), ctypes.byref(prog), ulong(0), ulong(0)) == 0
if threads > 1:
    threading.Thread(target=threading.Event().wait, daemon=True).start()
spec = importlib.util.spec_from_file_location("_grader_seccomp", MODULE)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
out = {"report": module.close_sockets()}
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).close()
    out["udp"] = "ok"
except OSError as exc:
    out["udp"] = errno.errorcode[exc.errno]
print(json.dumps(out))
"""


@pytest.mark.parametrize(
    ("code", "threads", "sockets", "reason", "udp"),
    [
        pytest.param(errno.EPERM, 1, False, "seccomp(SECCOMP_SET_MODE_FILTER) failed: ", "ok", id="refused"),
        pytest.param(errno.ENOSYS, 1, True, "", "EACCES", id="old-kernel-prctl-fallback"),
        pytest.param(
            errno.ENOSYS, 2, False, "seccomp(SECCOMP_SET_MODE_FILTER) failed: ", "ok", id="no-tsync"
        ),
    ],
)
def test_a_refusing_profile_is_reported_not_raised(code, threads, sockets, reason, udp):
    arguments = json.dumps([str(MODULE), code, threads])
    found = subprocess.run([sys.executable, "-c", REFUSED, arguments], capture_output=True, text=True)
    assert found.returncode == 0, found.stderr[-3000:]
    out = json.loads(found.stdout)
    assert out["report"]["sockets"] is sockets
    expected = reason + os.strerror(code) if reason else ""
    assert out["report"]["reason"] == expected
    assert out["udp"] == udp
