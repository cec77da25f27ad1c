"""What a child's events carry, decoded from untrusted JSON field by field: the value a case returned (an
array as base64 of float64, or another object's type and repr), the exception it raised, and a precision
profile. Anything out of shape is a ProtocolError (grader/protocol/events.py reads the events)."""

from __future__ import annotations

import base64
import binascii
import math
from dataclasses import dataclass, field

import numpy as np

from grader.child.describe import MAX_ENTRIES
from grader.profile.profiler import ROLES, compact, summarize

MAX_SECONDS = 1e7  # longer than any limit a run can be given


def is_seconds(value: object) -> bool:
    return type(value) in (int, float) and math.isfinite(value) and 0 <= value <= MAX_SECONDS


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


def text_field(message: dict, key: str, limit: int = 20000, default: str = "") -> str:
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


def only_fields(message: dict, allowed: set[str], what: str) -> None:
    unknown = set(message) - allowed
    if unknown:
        raise ProtocolError(f"{what} has fields the grader never asks for: {sorted(map(str, unknown))[:3]}")


MAX_DIMENSIONS, MAX_DIMENSION = 32, 1 << 40


def decode_returned(message: object) -> Returned:
    """Returns the checked value described by `message`, or raises ProtocolError: the child describes
    every value it can (grader/child/describe.py), so a malformed description was forged."""
    if not isinstance(message, dict):
        raise ProtocolError("a returned value that is not an object")
    type_name = text_field(message, "type", 200) or "value"
    if message.get("kind") == "other":
        only_fields(message, {"kind", "type", "repr"}, "a returned value")
        return Returned(kind="other", type_name=type_name, summary=text_field(message, "repr", 200))
    if message.get("kind") != "array":
        raise ProtocolError("a returned value of no known kind")
    only_fields(message, {"kind", "type", "dtype", "shape", "float", "values"}, "a returned array")
    shape = message.get("shape")
    if (
        not isinstance(shape, list)
        or len(shape) > MAX_DIMENSIONS
        or not all(type(n) is int and 0 <= n <= MAX_DIMENSION for n in shape)
    ):
        raise ProtocolError("a returned array whose shape is not a short list of sizes")
    dtype, is_float = text_field(message, "dtype", 50), _flag(message, "float")
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
    only_fields(message, fields, "an error report")
    limit = text_field(message, "limit", 20)
    if limit not in ("", "memory", "output"):
        raise ProtocolError("an error report names no known limit")
    return Raised(
        type_name=text_field(message, "type", 200) or "Exception",
        message=text_field(message, "message"),
        not_implemented=_flag(message, "not_implemented"),
        traceback=text_field(message, "traceback"),
        limit=limit,
        rejected=_flag(message, "rejected"),
        pitfall=text_field(message, "pitfall", 100),
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
    seconds = float(seconds) if is_seconds(seconds) else 0.0
    if "error" in message or not isinstance(message.get("entries"), list):
        error = message.get("error")
        return {
            "error": error[:300] if isinstance(error, str) and error else "the profile could not be read",
            "seconds": seconds,
        }
    entries = compact([e for e in map(_profile_entry, message["entries"][: 50 * MAX_PROFILE_ENTRIES]) if e])
    return {"entries": entries[:MAX_PROFILE_ENTRIES], "summary": summarize(entries), "seconds": seconds}
