"""In hidden mode the report shows nothing learner code said (DESIGN section 5): a submission could read the
hidden inputs and put them in an exception's message, a print or the name of an exception class of its own,
and Gradescope and the GitHub annotations would show them to every learner. What is left: each case's
status, the exception's type where it is Python's or a library's (not a class the submission made), and the
learner's file and line of each frame. A course that wants the rest says so with GRADE_HIDDEN_SHOWS_OUTPUT=1
(docs/security.md). Practice mode is unchanged: its inputs are public.
"""

from __future__ import annotations

import builtins
import dataclasses
import re

from grader.protocol.payloads import Raised
from grader.running.outcomes import LoadFailure, RunOutcome

NOT_SHOWN = "its message is not shown in hidden mode"
_OUTPUT_NOT_SHOWN = "(hidden mode: what the submission printed is not shown)"
# Exception types a report names as they are: Python's own, and those JAX, Flax and NumPy raise.
_LIBRARY_TYPES = frozenset(
    {
        "ConcretizationTypeError",
        "TracerArrayConversionError",
        "TracerBoolConversionError",
        "TracerIntegerConversionError",
        "UnexpectedTracerError",
        "KeyReuseError",
        "JaxRuntimeError",
        "XlaRuntimeError",
        "FlaxError",
        "ScopeParamShapeError",
        "ScopeParamNotFoundError",
        "ApplyScopeInvalidVariablesTypeError",
        "AxisError",
        "LinAlgError",
    }
)
_FRAME = re.compile(r'^\s*File "[^"\n]*", line \d+(, in [A-Za-z_<][\w<>.]*)?\s*$')


def shown_type(name: str) -> str:
    """The exception type's name where Python or a library defines it; else what it is, not its name."""
    known = isinstance(getattr(builtins, name, None), type) or name in _LIBRARY_TYPES
    return name if known else "an exception of the submission's own type"


def frames_only(traceback: str) -> str:
    """The traceback's `File "...", line N, in f` lines: where it was raised, not what it said."""
    return "\n".join(line for line in traceback.splitlines() if _FRAME.match(line))


def _raised(raised: Raised) -> Raised:
    if raised.limit:  # the grader's words
        return raised
    if raised.rejected:  # the course harness's words, which may quote what the submission wrote (file names,
        # keys, shapes): the pitfall it names stays
        message = "what it wrote fails the problem's check (the details are not shown in hidden mode)"
        return dataclasses.replace(raised, message=message, traceback="")
    message = "" if raised.not_implemented else NOT_SHOWN
    name, frames = shown_type(raised.type_name), frames_only(raised.traceback)
    return dataclasses.replace(raised, type_name=name, message=message, traceback=frames)


def _load_failure(failure: LoadFailure) -> LoadFailure:
    """What the submission did while it was imported: its code can name functions and parameters after the
    hidden inputs (which its process holds), so only the grader's own words about it stay."""
    if failure.kind == "missing_function":  # without the "did you mean" of the names the submission made
        return LoadFailure(failure.kind, failure.message.split("; did you mean", 1)[0], "")
    if failure.kind == "signature":  # without the submission's own parameter names
        expected = failure.message.rsplit(" cannot be called as ", 1)[-1]
        return LoadFailure(failure.kind, f"its function cannot be called as {expected} ({NOT_SHOWN})", "")
    if failure.kind != "import":  # the grader's words about the file (a syntax error is in its source)
        return failure
    name = failure.message.split(":", 1)[0].split(" while ", 1)[0]
    where = failure.message.rsplit(" while importing ", 1)[-1]
    message = f"{shown_type(name)} while importing {where} ({NOT_SHOWN})"
    return LoadFailure(failure.kind, message, frames_only(failure.detail))


def withhold(outcome: RunOutcome) -> RunOutcome:
    """A copy of `outcome` without anything learner code said: messages, prints, its own type names."""
    cases = {
        index: dataclasses.replace(case, raised=_raised(case.raised)) if case.raised else case
        for index, case in outcome.cases.items()
    }
    printed = outcome.stdout.strip() or outcome.stderr.strip()
    broke = (
        f"protocol error: what it wrote to the result channel ({NOT_SHOWN})" if outcome.protocol_error else ""
    )
    said = outcome.protocol_error and outcome.stopped == outcome.protocol_error  # stopped for what it wrote
    stopped = broke if said else outcome.stopped
    return dataclasses.replace(
        outcome,
        cases=cases,
        load_failure=_load_failure(outcome.load_failure) if outcome.load_failure else None,
        protocol_error=broke,
        stopped=stopped,
        stdout=_OUTPUT_NOT_SHOWN if printed else "",
        stderr="",
    )
