"""Reading what the child sends back: untrusted JSON lines, checked field by field, never unpickled.

The events grader/child.py writes, one JSON object per line:

    {"event": "sandbox", "abi": ..., "filesystem": ..., "network": ..., "signals": ..., "reason": ...}
    {"event": "ask", "label": ..., "what": "run" | "profile"}  (answered with one byte on the control pipe:
        b"1" run the job, or profile it after its cases; b"0" not)
    {"event": "load", "label": ..., "ok": true, "seconds": ...}
    {"event": "load", "label": ..., "ok": false, "kind": ..., "message": ..., "detail": ...}
    {"event": "case", "label": ..., "index": ..., "seconds": ..., "returned": {...}}
    {"event": "case", "label": ..., "index": ..., "seconds": ..., "raised": {...}}
    {"event": "profile", "label": ..., "profile": {"entries": [...], "seconds": ...} or {"error": ...}}
    {"event": "done"}

A returned value is {"kind": "array", "type", "dtype", "shape", "float", "values" (base64 of float64)}
or {"kind": "other", "type", "repr"} (grader/describe.py).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import os
import select
import time
from dataclasses import dataclass, field

import numpy as np

from grader.profile import ROLES, compact, summarize

WATCH_INTERVAL = 0.1  # seconds between checks of the child's memory while waiting for an event
MAX_LINE = 64 << 20


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


def _text(message: dict, key: str, limit: int = 20000) -> str:
    value = message.get(key, "")
    return value[:limit] if isinstance(value, str) else ""


def decode_returned(message: object) -> Returned:
    """Returns the checked value described by `message`; anything malformed becomes an unreadable value."""
    if not isinstance(message, dict):
        return Returned(kind="other", type_name="unreadable result")
    type_name = _text(message, "type", 200) or "value"
    if message.get("kind") != "array":
        return Returned(kind="other", type_name=type_name, summary=_text(message, "repr", 200))
    shape = message.get("shape")
    if (
        not isinstance(shape, list)
        or not all(isinstance(n, int) and n >= 0 for n in shape)
        or len(shape) > 32
    ):
        return Returned(kind="other", type_name="unreadable array")
    encoded = message.get("values")
    if not isinstance(encoded, str):
        return Returned(kind="other", type_name=type_name, summary=f"an array of shape {tuple(shape)}")
    try:
        raw = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return Returned(kind="other", type_name="unreadable array")
    if len(raw) != 8 * math.prod(shape):
        return Returned(kind="other", type_name="unreadable array")
    values = np.frombuffer(raw, dtype="<f8").reshape(shape).astype(np.float64)
    return Returned(
        kind="array",
        type_name=type_name,
        dtype=_text(message, "dtype", 50),
        is_float=message.get("float") is True,
        values=values,
    )


def decode_raised(message: object) -> Raised:
    """Returns the checked description of a learner exception."""
    if not isinstance(message, dict):
        return Raised(
            type_name="Exception", message="unreadable error report", not_implemented=False, traceback=""
        )
    return Raised(
        type_name=_text(message, "type", 200) or "Exception",
        message=_text(message, "message"),
        not_implemented=message.get("not_implemented") is True,
        traceback=_text(message, "traceback"),
        limit=message.get("limit") if message.get("limit") in ("memory", "output") else "",
        rejected=message.get("rejected") is True,
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
    """The checked precision profile a child sent (grader/profile.py): its entries (at most
    MAX_PROFILE_ENTRIES, each occurring once, counted), their summary recomputed here, or an error."""
    if not isinstance(message, dict):
        return {"error": "the profile could not be read"}
    seconds = message.get("seconds")
    seconds = float(seconds) if isinstance(seconds, int | float) else 0.0
    if "error" in message or not isinstance(message.get("entries"), list):
        return {"error": _text(message, "error", 300) or "the profile could not be read", "seconds": seconds}
    entries = compact([e for e in map(_profile_entry, message["entries"][: 50 * MAX_PROFILE_ENTRIES]) if e])
    return {"entries": entries[:MAX_PROFILE_ENTRIES], "summary": summarize(entries), "seconds": seconds}


class EventReader:
    """Reads JSON lines from the result pipe with a deadline per read."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = b""
        self.closed = False

    def next_event(self, deadline: float, over_memory) -> dict | str | None:
        """Returns the next event, None at end of stream, "timeout", or "memory" when `over_memory()`."""
        while b"\n" not in self.buffer:
            if self.closed:
                return None
            if over_memory():
                return "memory"
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
                return None
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            event = json.loads(line)
        except ValueError:
            return {"event": "garbage"}
        return event if isinstance(event, dict) else {"event": "garbage"}
