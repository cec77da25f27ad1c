"""The grader's own errors: each one is a message for the person at the terminal."""

from __future__ import annotations


class GraderError(Exception):
    """Base of every error the grader reports by message rather than traceback."""

    exit_code = 2


class UsageError(GraderError):
    """The command itself was wrong: an unknown id, a missing file, a bad flag."""


class CourseError(GraderError):
    """The course cannot grade: no reference, or a reference that fails. Never the learner's fault."""
