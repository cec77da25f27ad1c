"""Reading what the child sends back: untrusted JSON lines, checked field by field, never unpickled.

The events grader/child/main.py writes, one JSON object per line, and nothing else: every line is checked
against this list, field by field, and anything else (a line that is not JSON, too long, too deeply
nested, a field of the wrong type, a number out of range, an event the grader did not expect next) is a
protocol error, which ends the run as the learner's error once learner code may have written it:

    {"event": "ready", "sandbox": {...} or null, "harness_failures": {problem id: {"message", "detail"}}}
        (first, before any submission is imported: what only the trusted side may say is said here)
    {"event": "ask", "label": ..., "what": "run" | "profile"}  (answered with one byte on the control pipe:
        b"1" run the job, or profile it after its cases; b"0" not)
    {"event": "load", "label": ..., "ok": true, "seconds": ...}
    {"event": "load", "label": ..., "ok": false, "kind": ..., "message": ..., "detail": ...}
    {"event": "case", "label": ..., "index": ..., "seconds": ..., "returned": {...}}
    {"event": "case", "label": ..., "index": ..., "seconds": ..., "raised": {...}}
    {"event": "profile", "label": ..., "profile": {"entries": [...], "seconds": ...} or {"error": ...}}
    {"event": "done"}

A returned value is {"kind": "array", "type", "dtype", "shape", "float", "values" (base64 of float64)}
or {"kind": "other", "type", "repr"} (grader/child/describe.py); grader/protocol/payloads.py decodes them.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import time

from grader.protocol.payloads import (
    ProtocolError,
    decode_profile,
    decode_raised,
    decode_returned,
    is_seconds,
    only_fields,
    text_field,
)

WATCH_INTERVAL = 0.1  # seconds between checks of the child's memory while waiting for an event
MAX_LINE = 8 << 20  # the longest line the child sends is a returned array of MAX_ENTRIES values


MAX_INDEX = 1 << 20
LOAD_FAILURES = ("syntax", "import", "missing_function", "signature")  # what a child may say of a submission


def _seconds(message: dict) -> float:
    value = message.get("seconds")
    if not is_seconds(value):
        raise ProtocolError("a time that is not a number of seconds")
    return float(value)


def _label(message: dict) -> str:
    label = message.get("label")
    if not isinstance(label, str) or len(label) > 500:
        raise ProtocolError("an event without a job's label")
    return label


def _ready(event: dict) -> dict:
    only_fields(event, {"event", "sandbox", "harness_failures"}, "the ready event")
    sandbox, failures = event.get("sandbox"), event.get("harness_failures")
    if sandbox is not None and not isinstance(sandbox, dict):
        raise ProtocolError("a sandbox report that is not an object")
    if not isinstance(failures, dict) or not all(
        isinstance(value, dict) and isinstance(value.get("message"), str) for value in failures.values()
    ):
        raise ProtocolError("harness failures that are not objects with a message")
    return {
        "event": "ready",
        "sandbox": sandbox,
        "harness_failures": {
            str(problem): (value["message"][:4000], text_field(value, "detail", 8000))
            for problem, value in failures.items()
        },
    }


def _ask(event: dict) -> dict:
    only_fields(event, {"event", "label", "what"}, "a question")
    if event.get("what") not in ("run", "profile"):
        raise ProtocolError("a question about nothing the grader answers")
    return {"event": "ask", "label": _label(event), "what": event["what"]}


def _load(event: dict, kinds: tuple[str, ...] = LOAD_FAILURES) -> dict:
    if event.get("ok") is True:
        only_fields(event, {"event", "label", "ok", "seconds"}, "a load event")
        return {"event": "load", "label": _label(event), "ok": True, "seconds": _seconds(event)}
    only_fields(event, {"event", "label", "ok", "kind", "message", "detail"}, "a load event")
    if event.get("ok") is not False or event.get("kind") not in kinds:
        raise ProtocolError("a load event that is neither a success nor a submission's failure")
    return {
        "event": "load",
        "label": _label(event),
        "ok": False,
        "kind": event["kind"],
        "message": text_field(event, "message", 4000),
        "detail": text_field(event, "detail", 8000),
    }


def _case(event: dict) -> dict:
    only_fields(event, {"event", "label", "index", "seconds", "returned", "raised"}, "a case event")
    index = event.get("index")
    if type(index) is not int or not 0 <= index <= MAX_INDEX:
        raise ProtocolError("a case event whose index is not a case number")
    if ("returned" in event) == ("raised" in event):
        raise ProtocolError("a case event that neither returned nor raised, or did both")
    return {
        "event": "case",
        "label": _label(event),
        "index": index,
        "seconds": _seconds(event),
        "returned": decode_returned(event["returned"]) if "returned" in event else None,
        "raised": decode_raised(event["raised"]) if "raised" in event else None,
    }


def _profile(event: dict) -> dict:
    only_fields(event, {"event", "label", "profile"}, "a profile event")
    profile = event.get("profile")
    if not isinstance(profile, dict) or not ("error" in profile or isinstance(profile.get("entries"), list)):
        raise ProtocolError("a profile that is neither entries nor an error")
    if "seconds" in profile and not is_seconds(profile["seconds"]):
        raise ProtocolError("a profile's time that is not a number of seconds")
    return {"event": "profile", "label": _label(event), "profile": decode_profile(profile)}


def _done(event: dict) -> dict:
    only_fields(event, {"event"}, "the done event")
    return {"event": "done"}


_EVENTS = {"ready": _ready, "ask": _ask, "load": _load, "case": _case, "profile": _profile, "done": _done}


def _no_constant(name: str) -> None:
    raise ProtocolError(f"{name} in a JSON line (the child never sends it)")


def parse_event(line: bytes, strict: bool = True) -> dict:
    """Returns one line of the result channel as a checked event (its values decoded), or raises
    ProtocolError: the line may have been written by learner code, so nothing in it is trusted."""
    if len(line) > MAX_LINE:
        raise ProtocolError(f"a line of {len(line):,} bytes")
    try:
        event = json.loads(line, parse_constant=_no_constant)
    except ProtocolError:
        raise
    except Exception as exc:  # RecursionError from deep nesting, MemoryError, UnicodeDecodeError...
        raise ProtocolError(f"a line that is not JSON ({type(exc).__name__})") from None
    if not isinstance(event, dict):
        raise ProtocolError("a line that is not a JSON object")
    check = _EVENTS.get(event.get("event")) if isinstance(event.get("event"), str) else None
    if check is None:
        raise ProtocolError("an event of no kind the child sends")
    try:
        if check is _load and not strict:  # the old protocol: a load event could say anything
            return _load(event, (*LOAD_FAILURES, "harness", "sandbox", "crash"))
        return check(event)
    except ProtocolError:
        raise
    except Exception as exc:  # a check that met something it did not expect: still the line's fault
        raise ProtocolError(f"an event that cannot be read ({type(exc).__name__})") from None


class EventReader:
    """Reads the child's events from the result pipe, one checked line at a time, with a deadline per read.

    With `strict` false (only for tests that show what the checks protect, `GRADE_TEST_UNPROTECTED`), a
    line that is not valid JSON or not a valid event is skipped, as the grader once did."""

    def __init__(self, fd: int, strict: bool = True) -> None:
        self.fd = fd
        self.buffer = b""
        self.closed = False
        self.strict = strict

    def next_event(self, deadline: float, over_limit) -> dict | str | None:
        """Returns the next event, None at end of stream, "timeout", or what `over_limit()` returns when it
        is not "" (a limit the child ran over). Raises ProtocolError on a line that is no event."""
        while True:
            line = self._next_line(deadline, over_limit)
            if not isinstance(line, bytes) or self.strict:
                return line if not isinstance(line, bytes) else parse_event(line)
            # The old reader: JSON errors skipped, anything else (RecursionError, OverflowError) raised.
            try:
                old = json.loads(line)
            except ValueError:
                continue
            if isinstance(old, dict) and type(old.get("seconds")) in (int, float):
                float(old["seconds"])
            with contextlib.suppress(ProtocolError):
                return parse_event(line, strict=False)

    def _next_line(self, deadline: float, over_limit) -> bytes | str | None:
        while b"\n" not in self.buffer:
            if self.closed:
                return None
            over = over_limit()
            if over:
                return over
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "timeout"
            ready, _, _ = select.select([self.fd], [], [], min(remaining, WATCH_INTERVAL))
            if not ready:
                continue
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                self.closed = True
                continue
            self.buffer += chunk
            if len(self.buffer) > MAX_LINE and b"\n" not in self.buffer:
                raise ProtocolError(f"a line longer than {MAX_LINE:,} bytes")
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line
