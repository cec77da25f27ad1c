"""How the child describes what learner code did: a returned value as JSON-safe data, an exception with the
learner's own traceback frames, a harness's rejection. Standard library, numpy and jax only: the child loads
this file by path (grader/child/main.py), since it cannot import the grader package."""

from __future__ import annotations

import base64
import errno
import reprlib
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

MAX_ENTRIES = 1 << 16

MAX_TEXT = 4000


def _type_name(value: Any) -> str:
    kind = type(value)
    module = kind.__module__
    return kind.__qualname__ if module == "builtins" else f"{module}.{kind.__qualname__}"


def encode_returned(value: Any) -> dict[str, Any]:
    """Returns a JSON-safe description of what the learner's function returned."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    if not isinstance(value, np.ndarray | jax.Array):
        return {"kind": "other", "type": _type_name(value), "repr": reprlib.repr(value)[:200]}
    try:
        array = np.asarray(value)
        described = {
            "kind": "array",
            "type": _type_name(value),
            "dtype": str(array.dtype),
            "shape": [int(n) for n in array.shape],
            "float": bool(jnp.issubdtype(array.dtype, jnp.floating)),
        }
        if array.size <= MAX_ENTRIES and array.dtype.kind in "fiubV":
            values = np.ascontiguousarray(array.astype(np.float64)).reshape(-1)
            described["values"] = base64.b64encode(values.astype("<f8").tobytes()).decode("ascii")
        return described
    except Exception as exc:  # a value that converts badly is still an answer to report
        return {"kind": "other", "type": _type_name(value), "repr": f"unreadable array ({exc})"[:200]}


def cap(text: str) -> str:
    return (
        text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 40] + f"\n... ({len(text) - MAX_TEXT} chars cut)"
    )


def _learner_traceback(exc: BaseException, submission: Path, course_files: tuple[str, ...] = ()) -> str:
    """Returns the traceback of `exc` keeping only the frames in the learner's own folder (not the
    course's own files that may sit beside the stub, such as a harness)."""
    folder = str(submission.parent)
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if f.filename.startswith(folder) and f.filename not in course_files
    ]
    lines = ["Traceback (your code, most recent call last):\n", *traceback.format_list(frames)]
    lines += traceback.format_exception_only(type(exc), exc)
    return cap("".join(lines))


def _limit_hit(exc: BaseException) -> str:
    """Returns "memory" or "output" when `exc` means the child ran into one of its limits."""
    if isinstance(exc, MemoryError) or "RESOURCE_EXHAUSTED" in str(exc)[:200]:
        return "memory"
    if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
        return "output"
    return ""


def describe_exception(
    exc: BaseException, submission: Path, course_files: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Returns the JSON-safe description of an exception raised by learner code."""
    if isinstance(exc, SystemExit):
        message = f"called sys.exit({exc.code!r})"
    else:
        message = cap(str(exc).strip().splitlines()[0] if str(exc).strip() else "")
    return {
        "type": type(exc).__name__,
        "message": message,
        "not_implemented": isinstance(exc, NotImplementedError),
        "limit": _limit_hit(exc),
        "traceback": _learner_traceback(exc, submission, course_files),
    }


def rejection(exc: BaseException, harness: ModuleType | None) -> dict[str, Any] | None:
    """Describes a harness's verdict that what the learner wrote fails the problem's check, else None."""
    rejected = getattr(harness, "Rejected", None)
    if not (isinstance(rejected, type) and isinstance(exc, rejected)):
        return None
    pitfall = getattr(exc, "pitfall", None)
    return {
        "type": "Rejected",
        "message": cap(str(exc).strip()),
        "not_implemented": False,
        "limit": "",
        "traceback": "",
        "rejected": True,
        "pitfall": pitfall if isinstance(pitfall, str) else "",
    }
