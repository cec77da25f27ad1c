"""The JSON report: one document on stdout, schema in docs/json-report.md."""

from __future__ import annotations

import json

from grader.results import GradeReport


def render_json(report: GradeReport) -> str:
    return json.dumps(report.to_dict(), indent=2, allow_nan=False) + "\n"
