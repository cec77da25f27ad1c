"""What a child is asked to do: jobs (a file, its function, one problem's cases) and the request that
carries them to grader/child.py, pickled over a private pipe."""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path

from grader.cases import Case
from grader.problems import Problem

BLOCKED_IMPORTS = ["grader", "solutions"]  # what learner code may not import in its child


@dataclass(frozen=True)
class Job:
    """One submission to call on one problem's cases."""

    label: str  # unique within a run
    path: Path
    problem: Problem
    cases: list[Case]
    after: str = ""  # a job this one only serves: not run in a fresh child if that one stopped its child


def encode_request(
    jobs: list[Job], blocked_imports: list[str], sandbox: dict | None, limits: dict, ask: bool
) -> bytes:
    """The request a child reads: with `ask`, it asks the grader before each job that serves another."""
    return pickle.dumps(
        {
            "jobs": [
                {
                    "label": job.label,
                    "problem": job.problem.id,
                    "path": str(job.path),
                    "function": job.problem.function,
                    "parameters": list(job.problem.parameters),
                    "harness": str(job.problem.harness_path or ""),
                    "ask": bool(job.after) and ask,
                    "cases": [(case.index, case.inputs) for case in job.cases],
                }
                for job in jobs
            ],
            "block_imports": blocked_imports,
            "sandbox": sandbox,
            "limits": limits,
        }
    )
