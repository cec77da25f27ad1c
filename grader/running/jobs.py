"""What a child is asked to do: jobs (a file, its function, one problem's cases) and the request that
carries them to grader/child/main.py, pickled over a private pipe."""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path

from grader.course.cases import Case
from grader.course.problems import Problem
from grader.running.limits import Limits, address_space_limit
from grader.running.submission import Submission

BLOCKED_IMPORTS = ["grader", "solutions"]  # what learner code may not import in its child


@dataclass(frozen=True)
class Job:
    """One submission to call on one problem's cases."""

    label: str  # unique within a run
    submission: Submission  # its bytes: the child grades a copy in its private folder, never the original
    problem: Problem
    cases: list[Case]
    after: str = ""  # a job this one only serves: not run in a fresh child if that one stopped its child
    profile: Case | None = None  # a practice case to trace the function on, after the cases
    profile_if_failed: bool = False  # ask the grader first: only a failed answer is profiled


def cpu_seconds(limits: Limits, jobs: list[Job]) -> int:
    """The CPU-time limit of a child that runs `jobs` (a profile counts as one more case)."""
    return limits.cpu_seconds(sum(len(job.cases) + bool(job.profile) for job in jobs))


def encode_request(
    jobs: list[Job], paths: dict[str, Path], limits: Limits, trusted: bool, sandbox: dict | None, ask: bool
) -> bytes:
    """The request a child reads: each job's copy of its submission (`paths`, by label), and with `ask`,
    asking the grader before each job that serves another, and before profiling a job marked
    `profile_if_failed`. Learner code may not import the grader; the course's own code (`trusted`) may."""
    return pickle.dumps(
        {
            "jobs": [
                {
                    "label": job.label,
                    "problem": job.problem.id,
                    "path": str(paths[job.label]),
                    "shown": job.submission.shown,
                    "function": job.problem.function,
                    "parameters": list(job.problem.parameters),
                    "harness": str(job.problem.harness_path or ""),
                    "ask": bool(job.after) and ask,
                    "cases": [(case.index, case.inputs) for case in job.cases],
                    "profile": {"inputs": job.profile.inputs, "ask": job.profile_if_failed and ask}
                    if job.profile
                    else None,
                }
                for job in jobs
            ],
            "block_imports": [] if trusted else BLOCKED_IMPORTS,
            "sandbox": sandbox,
            "limits": {
                "address_space": address_space_limit(limits),
                "file_size": limits.output_bytes,
                "cpu_seconds": cpu_seconds(limits, jobs),
            },
        }
    )
