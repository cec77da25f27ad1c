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
or {"kind": "other", "type", "repr"} (grader/child/describe.py).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import math
import os
import select
import time
from dataclasses import dataclass, field

import numpy as np

from grader.child.describe import MAX_ENTRIES
from grader.profile.profiler import ROLES, compact, summarize

WATCH_INTERVAL = 0.1  # seconds between checks of the child's memory while waiting for an event
MAX_LINE = 8 << 20  # the longest line the child sends is a returned array of MAX_ENTRIES values


@dataclass(frozen=True)
class Returned:
    """What the learner's function returned, as the grader sees it."""

    kind: str  # "array" or "other"
    type_name: str
    dtype: str = ""
    is_float: bool = False
    values: np.ndarray = field(default_factory=lambda: np.zeros(0))
    summary: str = ""

    @classmethod
    def from_array(cls, values: np.ndarray) -> Returned:
        """Returns a trusted float array (a reference or pitfall output) in the form learners' values take."""
        return cls(kind="array", type_name="numpy.ndarray", dtype="float64", is_float=True, values=values)

    def describe(self) -> str:
        """Returns a short phrase for messages: 'a list', 'a jax Array of shape (2, 3)'."""
        if self.kind == "array":
            return f"a {self.type_name} of dtype {self.dtype} and shape {self.values.shape}"
        article = "an" if self.type_name[:1].lower() in "aeiou" else "a"
        return (
            f"{article} {self.type_name} ({self.summary})" if self.summary else f"{article} {self.type_name}"
        )


@dataclass(frozen=True)
class Raised:
    """An exception raised by learner code, with its traceback trimmed to the learner's frames."""

    type_name: str
    message: str
    not_implemented: bool
    traceback: str
    limit: str = ""  # "memory" or "output" when the exception means a limit was hit
    rejected: bool = False  # the problem's harness found what the learner wrote fails its check
    pitfall: str = ""  # the pitfall the harness's check names, if any


class ProtocolError(Exception):
    """A line on the result channel that the grader's protocol does not allow; the message says what."""


def _text(message: dict, key: str, limit: int = 20000, default: str = "") -> str:
    """The string field `key` of an event (cut to `limit`); a ProtocolError if it is there but no string."""
    value = message.get(key, default)
    if not isinstance(value, str):
        raise ProtocolError(f"{key!r} is not a string")
    return value[:limit]


def _flag(message: dict, key: str, default: bool = False) -> bool:
    value = message.get(key, default)
    if not isinstance(value, bool):
        raise ProtocolError(f"{key!r} is not true or false")
    return value


def _only(message: dict, allowed: set[str], what: str) -> None:
    unknown = set(message) - allowed
    if unknown:
        raise ProtocolError(f"{what} has fields the grader never asks for: {sorted(map(str, unknown))[:3]}")


MAX_DIMENSIONS, MAX_DIMENSION = 32, 1 << 40


def decode_returned(message: object) -> Returned:
    """Returns the checked value described by `message`, or raises ProtocolError: the child describes
    every value it can (grader/child/describe.py), so a malformed description was forged."""
    if not isinstance(message, dict):
        raise ProtocolError("a returned value that is not an object")
    type_name = _text(message, "type", 200) or "value"
    if message.get("kind") == "other":
        _only(message, {"kind", "type", "repr"}, "a returned value")
        return Returned(kind="other", type_name=type_name, summary=_text(message, "repr", 200))
    if message.get("kind") != "array":
        raise ProtocolError("a returned value of no known kind")
    _only(message, {"kind", "type", "dtype", "shape", "float", "values"}, "a returned array")
    shape = message.get("shape")
    if (
        not isinstance(shape, list)
        or len(shape) > MAX_DIMENSIONS
        or not all(type(n) is int and 0 <= n <= MAX_DIMENSION for n in shape)
    ):
        raise ProtocolError("a returned array whose shape is not a short list of sizes")
    dtype, is_float = _text(message, "dtype", 50), _flag(message, "float")
    encoded = message.get("values")
    if encoded is None:  # too large to send: its shape says enough
        return Returned(kind="other", type_name=type_name, summary=f"an array of shape {tuple(shape)}")
    if not isinstance(encoded, str) or math.prod(shape) > MAX_ENTRIES:
        raise ProtocolError("a returned array's values are not what the child sends")
    try:
        raw = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise ProtocolError("a returned array's values are not base64") from None
    if len(raw) != 8 * math.prod(shape):
        raise ProtocolError("a returned array's values do not fill its shape")
    values = np.frombuffer(raw, dtype="<f8").reshape(shape).astype(np.float64)
    return Returned(kind="array", type_name=type_name, dtype=dtype, is_float=is_float, values=values)


def decode_raised(message: object) -> Raised:
    """Returns the checked description of a learner exception, or raises ProtocolError."""
    if not isinstance(message, dict):
        raise ProtocolError("an error report that is not an object")
    fields = {"type", "message", "not_implemented", "limit", "traceback", "rejected", "pitfall"}
    _only(message, fields, "an error report")
    limit = _text(message, "limit", 20)
    if limit not in ("", "memory", "output"):
        raise ProtocolError("an error report names no known limit")
    return Raised(
        type_name=_text(message, "type", 200) or "Exception",
        message=_text(message, "message"),
        not_implemented=_flag(message, "not_implemented"),
        traceback=_text(message, "traceback"),
        limit=limit,
        rejected=_flag(message, "rejected"),
        pitfall=_text(message, "pitfall", 100),
    )


MAX_PROFILE_ENTRIES = 2000
_NUMBERS = {"line": lambda v: v is None or type(v) is int, "count": lambda v: type(v) is int and v > 0}


def _profile_entry(entry: object) -> dict | None:
    """One checked entry of a profile: short strings, lists of them, and an int line; None if malformed."""
    if not isinstance(entry, dict) or entry.get("role") not in ROLES:
        return None
    checked: dict = {}
    for key, value in list(entry.items())[:12]:
        if not isinstance(key, str):
            continue
        if isinstance(value, str):
            checked[key[:40]] = value[:80]
        elif isinstance(value, list) and all(isinstance(item, str) for item in value):
            checked[key[:40]] = [item[:80] for item in value[:8]]
        elif key in _NUMBERS and _NUMBERS[key](value):
            checked[key] = value
    well_formed = isinstance(checked.get("result"), str) and isinstance(checked.get("operands"), list)
    return checked if well_formed and checked["operands"] else None


def decode_profile(message: object) -> dict:
    """The checked precision profile a child sent (grader/profile/profiler.py): its entries (at most
    MAX_PROFILE_ENTRIES, each occurring once, counted), their summary recomputed here, or an error. Advice
    only, so a malformed part is dropped rather than refused."""
    if not isinstance(message, dict):
        return {"error": "the profile could not be read"}
    seconds = message.get("seconds")
    seconds = float(seconds) if _is_seconds(seconds) else 0.0
    if "error" in message or not isinstance(message.get("entries"), list):
        error = message.get("error")
        return {
            "error": error[:300] if isinstance(error, str) and error else "the profile could not be read",
            "seconds": seconds,
        }
    entries = compact([e for e in map(_profile_entry, message["entries"][: 50 * MAX_PROFILE_ENTRIES]) if e])
    return {"entries": entries[:MAX_PROFILE_ENTRIES], "summary": summarize(entries), "seconds": seconds}


MAX_SECONDS = 1e7  # longer than any limit a run can be given
MAX_INDEX = 1 << 20
LOAD_FAILURES = ("syntax", "import", "missing_function", "signature")  # what a child may say of a submission


def _is_seconds(value: object) -> bool:
    return type(value) in (int, float) and math.isfinite(value) and 0 <= value <= MAX_SECONDS


def _seconds(message: dict) -> float:
    value = message.get("seconds")
    if not _is_seconds(value):
        raise ProtocolError("a time that is not a number of seconds")
    return float(value)


def _label(message: dict) -> str:
    label = message.get("label")
    if not isinstance(label, str) or len(label) > 500:
        raise ProtocolError("an event without a job's label")
    return label


def _ready(event: dict) -> dict:
    _only(event, {"event", "sandbox", "harness_failures"}, "the ready event")
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
            str(problem): (value["message"][:4000], _text(value, "detail", 8000))
            for problem, value in failures.items()
        },
    }


def _ask(event: dict) -> dict:
    _only(event, {"event", "label", "what"}, "a question")
    if event.get("what") not in ("run", "profile"):
        raise ProtocolError("a question about nothing the grader answers")
    return {"event": "ask", "label": _label(event), "what": event["what"]}


def _load(event: dict, kinds: tuple[str, ...] = LOAD_FAILURES) -> dict:
    if event.get("ok") is True:
        _only(event, {"event", "label", "ok", "seconds"}, "a load event")
        return {"event": "load", "label": _label(event), "ok": True, "seconds": _seconds(event)}
    _only(event, {"event", "label", "ok", "kind", "message", "detail"}, "a load event")
    if event.get("ok") is not False or event.get("kind") not in kinds:
        raise ProtocolError("a load event that is neither a success nor a submission's failure")
    return {
        "event": "load",
        "label": _label(event),
        "ok": False,
        "kind": event["kind"],
        "message": _text(event, "message", 4000),
        "detail": _text(event, "detail", 8000),
    }


def _case(event: dict) -> dict:
    _only(event, {"event", "label", "index", "seconds", "returned", "raised"}, "a case event")
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
    _only(event, {"event", "label", "profile"}, "a profile event")
    profile = event.get("profile")
    if not isinstance(profile, dict) or not ("error" in profile or isinstance(profile.get("entries"), list)):
        raise ProtocolError("a profile that is neither entries nor an error")
    if "seconds" in profile and not _is_seconds(profile["seconds"]):
        raise ProtocolError("a profile's time that is not a number of seconds")
    return {"event": "profile", "label": _label(event), "profile": decode_profile(profile)}


def _done(event: dict) -> dict:
    _only(event, {"event"}, "the done event")
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
