"""What a run of a submission produced, as the grader keeps it: load failures, case outcomes, prints."""

from __future__ import annotations

import signal
from dataclasses import dataclass, field
from pathlib import Path

from grader.protocol.payloads import Raised, Returned
from grader.results import output_cut_marker
from grader.sandbox_report import Sandbox

OUTPUT_HEAD, OUTPUT_TAIL = 4_000, 12_000  # what a report keeps of a child's stdout or stderr


@dataclass(frozen=True)
class LoadFailure:
    """Why a submission could not be imported or its function not called: one line, plus detail."""

    kind: str  # syntax | import | missing_function | signature | crash | protocol (the learner's);
    # harness | sandbox (not the learner's: the course's code failed, or the required sandbox did not hold)
    message: str
    detail: str = ""


@dataclass(frozen=True)
class CaseOutcome:
    index: int
    seconds: float
    returned: Returned | None = None
    raised: Raised | None = None


@dataclass
class RunOutcome:
    """Everything one submission's run produced: load result, per-case outcomes, and how the run ended."""

    label: str
    load_failure: LoadFailure | None = None
    cases: dict[int, CaseOutcome] = field(default_factory=dict)
    stopped: str = ""  # why the run ended before its last case ("timed out after 60 s in case 3", ...)
    stopped_in_case: int | None = None
    grader_failure: str = ""  # why the grader itself could not finish the run (never the learner's fault)
    protocol_error: str = ""  # what learner code wrote on the result channel that the protocol forbids
    stdout: str = ""
    stderr: str = ""
    sandbox: Sandbox | None = None  # what protected the child that ran it
    profile: dict | None = (
        None  # its precision profile on a practice case, when asked (grader/profile/profiler.py)
    )


def read_capped(path: Path) -> str:
    """Returns a child's output, its middle cut (and the cut counted) when it is long."""
    if not path.is_file():
        return ""
    size = path.stat().st_size
    with path.open("rb") as handle:
        if size <= OUTPUT_HEAD + OUTPUT_TAIL:
            return handle.read().decode("utf-8", "replace")
        head = handle.read(OUTPUT_HEAD).decode("utf-8", "replace")
        handle.seek(size - OUTPUT_TAIL)
        tail = handle.read().decode("utf-8", "replace")
    cut = size - OUTPUT_HEAD - OUTPUT_TAIL
    return f"{head}\n{output_cut_marker(cut)}\n{tail}"


def describe_exit(returncode: int, cpu_seconds: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        if name == "SIGXCPU":
            return f"the process used up its CPU-time limit of {cpu_seconds} s"
        return f"the process crashed ({name})"
    return f"the process exited with status {returncode}"
