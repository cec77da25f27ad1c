"""Every way out of a learner's child that names no path (docs/security.md, "Every way out that names no
path"): tests/submissions/kernel/probes_every_way_out.py tries each from a real grading child, once with the
default protections and once with them all off (Landlock too: the control). Each row of the table in
docs/security.md is a test here: refused with the protections, reaching the kernel without them (where this
machine allows it at all, which the control shows)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path

import pytest

from grader.course.problems import Course
from grader.grading.grader import Grader
from grader.running.limits import Limits
from grader.settings import Settings

PROBE = Path(__file__).parent / "submissions" / "kernel" / "probes_every_way_out.py"
ROOT = Path(__file__).resolve().parent.parent
# row of docs/security.md's table -> what the protections answer
ROWS = {
    "sysv_shared_memory": "EPERM",
    "sysv_semaphores": "EPERM",
    "sysv_message_queues": "EPERM",
    "posix_message_queues": ("EACCES", "EPERM"),  # Landlock (the queue's path) or the filter
    "keyrings": "EPERM",
    "sockets": "EACCES",
    "io_uring": "EPERM",
    "ptrace": "EPERM",
    "process_vm": "EPERM",
    "pidfd_getfd": "EPERM",
    "kcmp": "EPERM",
    "perf_event_open": "EPERM",
    "bpf": "EPERM",
    "userfaultfd": "EPERM",
    "syslog": "EPERM",
    "device_nodes": ("EACCES", "EPERM"),  # Landlock without device-node rights, and no CAP_MKNOD
    "file_owner_powers": "EPERM",
    "scheduling": "EPERM",
    "rlimits": "EPERM",
    "new_namespaces": "EPERM",
}
REFUSALS = ("EPERM", "EACCES")


def _report(toy_course: Course, folder: Path, name: str, settings: Settings) -> dict[str, str]:
    """Grades the probe in practice mode under `settings`; returns what each way out gave."""
    target = folder / f"outside-{name}"  # a file of the grader's, outside the child's folders
    target.write_text("the grader's")
    probe = folder / f"probe-{name}.py"
    probe.write_text(PROBE.read_text().replace("/nonexistent/grade-target-file", str(target)))
    result = Grader(toy_course, limits=Limits(timeout=60, settings=settings)).grade_file(
        toy_course.problem("toy"), probe
    )
    message = result.cases[0].message
    assert "ProbeReport: " in message, message
    return json.loads(message.split("ProbeReport: ", 1)[1])


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, dict[str, str]]:
    """The probe's report in practice mode: protected (the defaults), and the control (everything off)."""
    folder = tmp_path_factory.mktemp("escapes")
    course = Course(Path(shutil.copytree(ROOT / "tests" / "toy_course", folder / "course")))
    everything_off = frozenset({"socket-filter", "kernel-objects", "no-privileges", "process-namespace"})
    priority = os.getpriority(os.PRIO_PROCESS, 0)
    found = {
        "protected": _report(course, folder, "protected", Settings()),
        "control": _report(course, folder, "control", Settings(landlock=False, unprotected=everything_off)),
    }
    # Unprotected, the probe's "scheduling" way out renices its parent: this process. Every later test
    # would run (and start its graders) at that nice value; root can take it back, others cannot.
    with contextlib.suppress(PermissionError):
        os.setpriority(os.PRIO_PROCESS, 0, priority)
    return found


def test_every_row_of_the_table_is_probed():
    table = (ROOT / "docs" / "security.md").read_text()
    probed = [line.split("`")[1] for line in table.splitlines() if line.startswith("| `")]
    assert sorted(probed) == sorted(ROWS)


@pytest.mark.parametrize("row", ROWS)
def test_the_way_out_is_refused_and_reaches_the_kernel_without_the_protections(reports, row):
    expected = ROWS[row] if isinstance(ROWS[row], tuple) else (ROWS[row],)
    assert reports["protected"][row] in expected, reports["protected"]
    control = reports["control"][row]
    if control in REFUSALS:
        pytest.skip(f"{row}: this machine refuses it without the protections too ({control})")
    assert control not in REFUSALS
