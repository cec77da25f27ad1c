"""Comparing a returned value with the reference output, entry by entry, within a tolerance."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from grader.course.problems import Tolerance
from grader.protocol.payloads import Returned


@dataclass(frozen=True)
class Comparison:
    """The verdict on one case's output; `error_ratio` is the worst |error| / allowed error."""

    passed: bool
    message: str
    error_ratio: float
    max_abs_err: float | None = None
    max_rel_err: float | None = None


def _reject(message: str) -> Comparison:
    return Comparison(passed=False, message=message, error_ratio=float("inf"))


def _nonfinite_mismatch(got: np.ndarray, expected: np.ndarray) -> str | None:
    same = np.isnan(got) & np.isnan(expected) | (np.isinf(got) & (got == expected))
    bad = ~(np.isfinite(got) & np.isfinite(expected)) & ~same
    if not bad.any():
        return None
    i = int(np.flatnonzero(bad)[0])
    more = int(bad.sum()) - 1
    tail = f" (and {more} more non-finite mismatches)" if more else ""
    return f"entry {i} is {got[i]:g} where the reference is {expected[i]:g}{tail}"


def compare_outputs(
    returned: Returned, expected: np.ndarray, tolerance: Tolerance, returns: str
) -> Comparison:
    """Returns whether `returned` matches `expected`: same shape, same non-finite pattern, finite entries
    within `tolerance`."""
    if returned.kind != "array":
        return _reject(f"returned {returned.describe()}; expected {returns}")
    if not returned.is_float:
        return _reject(f"returned an array of dtype {returned.dtype}; expected {returns}")
    got = returned.values
    if got.shape != expected.shape:
        return _reject(f"returned shape {got.shape}; expected shape {expected.shape} ({returns})")
    mismatch = _nonfinite_mismatch(got, expected)
    if mismatch:
        return _reject(mismatch)
    finite = np.isfinite(expected)
    if not finite.any():
        return Comparison(passed=True, message="matches", error_ratio=0.0, max_abs_err=0.0, max_rel_err=0.0)
    with np.errstate(all="ignore"):  # huge values overflow to inf, which is the right verdict
        err = np.abs(got[finite] - expected[finite])
        ref = np.abs(expected[finite])
        allowed = tolerance.atol + tolerance.rtol * ref
        ratio = np.where(err == 0, 0.0, err / allowed)
        rel = np.where(err == 0, 0.0, err / ref)
    outside = int((err > allowed).sum())
    total = int(finite.sum())
    return Comparison(
        passed=outside == 0,
        message="within tolerance" if outside == 0 else f"{outside} of {total} entries outside the tolerance",
        error_ratio=float(ratio.max()),
        max_abs_err=float(err.max()),
        max_rel_err=float(rel.max()),
    )


def compare_arrays(got: np.ndarray, expected: np.ndarray, tolerance: Tolerance) -> Comparison:
    """`compare_outputs` of a float array already in hand (a kept output): the grader's same answer."""
    return compare_outputs(Returned.from_array(got), expected, tolerance, "a float array")
