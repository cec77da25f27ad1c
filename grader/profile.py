"""A precision profile: the operations of a traced function that matter for mixed precision, with their
dtypes and, for the submission's own lines, where they were written. Standard library and jax only: the
child loads this file by path (grader/child.py), since it cannot import the grader package.

Traced once with `jax.make_jaxpr` (arrays traced, the rest static, as a Python loop over `num_steps`
needs), sub-jaxprs included (jit, scan, while, cond, custom derivatives). Operations that matter get a role:

- `matmul`: dot_general with a free dimension on some side; `convolution`;
- `reduction`: reduce_sum/max/min/prod, cumulative sums and products, and dot products (dot_general
  with no free dimension, as `jnp.vdot` or `einsum("nd,nd->n")` give);
- `exp/log`: exp, exp2, log, log1p, expm1, logistic;
- `scaling`: an array multiplied or divided by a scalar (a loss scale, a step size), in either pass;
- `cast`: every conversion between floats the code asks for (astype, asarray, a library's casts), and
  integers turned into a 16-bit or narrower float however that arises (a counter in float32 is not listed);
- `mixed`: a float converted only because an operation of the forward pass mixed two float dtypes
  (`p16 + u32`), as an fp16 master copy updated by fp32 updates does.

A jnp reduction of a 16-bit array accumulates in float32 between two casts of its own: those casts are not
the learner's, so the reduction shows as written (float16 -> float16); the same goes for a mean's division.
A reduction of the backward pass (jax's transpose of a broadcast) is a `backward reduction`; a cast that
undoes the cast before it is a round trip (float32 -> float16 -> float32): a value rounded on the way.
"""

from __future__ import annotations

import itertools
import os
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

# in the order differences are reported: a cast or a mixed operation is more often the cause, a 16-bit
# scaling the consequence
ROLES = ("matmul", "convolution", "reduction", "backward reduction", "exp/log", "cast", "mixed", "scaling")

_REDUCTIONS = {"reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "cumsum", "cumprod", "cumlogsumexp"}
_EXP_LOG = {"exp", "exp2", "log", "log1p", "expm1", "logistic"}
_JAX_FOLDER = "/jax/"
_INTERNAL_FILES = ("/jax/_src/numpy/reductions.py", "/jax/_src/nn/functions.py")
_EXPLICIT_CAST = ("/jax/_src/lax/lax.py", "_convert_element_type")  # a direct call: astype, asarray


def _dtype(var: Any) -> str:
    return str(getattr(getattr(var, "aval", None), "dtype", ""))


def _is_float(dtype: str) -> bool:
    return dtype.startswith(("float", "bfloat"))


def _frames(eqn: Any) -> list[Any]:
    """The equation's Python frames, innermost first ([] when jax kept none)."""
    traceback = getattr(eqn.source_info, "traceback", None)
    return list(traceback.frames) if traceback is not None else []


def _jax_frames(frames: list[Any]) -> list[Any]:
    """The frames inside jax below the first frame outside it: how jax got from the code to the primitive."""
    return list(itertools.takewhile(lambda frame: _JAX_FOLDER in frame.file_name, frames))


def _in_jnp_internals(frames: list[Any]) -> bool:
    """Whether the equation is part of a jnp reduction or jax.nn function (their own upcasts to float32)."""
    return any(f.file_name.endswith(_INTERNAL_FILES) for f in _jax_frames(frames))


def _cast_kind(eqn: Any, frames: list[Any]) -> str:
    """The kind of a conversion: `cast` (asked for), `internal` (a jnp reduction's own) or `mixed`."""
    jax_frames = _jax_frames(frames)
    if any(
        f.file_name.endswith(_EXPLICIT_CAST[0]) and f.function_name == _EXPLICIT_CAST[1] for f in jax_frames
    ):
        return "cast"
    if _in_jnp_internals(frames):
        return "internal"
    if not jax_frames or not _is_float(_dtype(eqn.invars[0])):
        return "cast"  # an integer promoted to float16 is as much a cast as one asked for
    return "mixed"


def _role(eqn: Any) -> str:
    name = eqn.primitive.name
    if name == "dot_general":
        (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = eqn.params["dimension_numbers"]
        lhs_rank, rhs_rank = (len(getattr(v.aval, "shape", ())) for v in eqn.invars[:2])
        free = lhs_rank - len(lhs_contract) - len(lhs_batch) + rhs_rank - len(rhs_contract) - len(rhs_batch)
        return "matmul" if free else "reduction"
    if name == "conv_general_dilated":
        return "convolution"
    if name in _REDUCTIONS:
        return "reduction"
    if name in _EXP_LOG:
        return "exp/log"
    if name == "convert_element_type":
        return "cast"
    if name in ("mul", "div") and any(getattr(v.aval, "shape", None) == () for v in eqn.invars):
        return "scaling"
    return ""


def _sub_jaxprs(eqn: Any) -> list[Any]:
    """The jaxprs inside an equation's parameters (jit, scan, while, cond branches, custom calls)."""
    items = [i for v in eqn.params.values() for i in (v if isinstance(v, tuple | list) else (v,))]
    return [getattr(i, "jaxpr", i) for i in items if hasattr(getattr(i, "jaxpr", i), "eqns")]


def _width(dtype: str) -> int:
    digits = "".join(c for c in dtype.split("_")[0] if c.isdigit())
    return int(digits) if digits else 0


class _Walk:
    """Collects the entries of one trace of a function defined in `submission`."""

    def __init__(self, submission: Path) -> None:
        self.submission = os.path.realpath(submission)
        self.name = submission.name
        self.entries: list[dict[str, Any]] = []
        # keyed by id(var), the jaxpr holding its vars alive (literals are unhashable):
        self.seen_as: dict[int, str] = {}  # a jnp reduction's upcast -> the dtype the learner's array had
        self.pending: dict[int, dict[str, Any]] = {}  # a reduction's f32 value -> its entry, until cast back
        self.cast_of: dict[int, dict[str, Any]] = {}  # a cast's value -> its entry, to see round trips
        self.files: dict[str, bool] = {}  # a frame's file -> whether it is the submission

    def _line(self, frames: list[Any]) -> int | None:
        """The line of the innermost frame in the submission file, None when no frame is there."""
        for frame in frames:
            if frame.file_name not in self.files:
                self.files[frame.file_name] = os.path.realpath(frame.file_name) == self.submission
            if self.files[frame.file_name]:
                return frame.line_num
        return None

    def jaxpr(self, jaxpr: Any, backward: bool = False, line: int | None = None) -> None:
        """Walks the equations; those of a sub-jaxpr that jax traced apart (a library's jit, whose frames
        stop in the library) take the line of the equation that holds it."""
        for eqn in jaxpr.eqns:
            frames = _frames(eqn)
            here = self._line(frames) or line
            grad = backward or "transpose(" in str(eqn.source_info.name_stack)  # the backward pass
            for inner in _sub_jaxprs(eqn):
                self.jaxpr(inner, grad, here)
            self.equation(eqn, frames, grad, here)

    def _add(self, role: str, eqn: Any, operands: list[str], result: str, line: int | None) -> dict[str, Any]:
        primitive = eqn.primitive.name
        entry = {"role": role, "primitive": primitive, "operands": operands, "result": result}
        self.entries.append({**entry, "file": self.name, "line": line})
        return self.entries[-1]

    def equation(self, eqn: Any, frames: list[Any], backward: bool, line: int | None) -> None:
        role, internal = _role(eqn), _in_jnp_internals(frames)
        role = "" if role == "scaling" and internal else role  # a mean's division: jax's, not the learner's
        if role == "cast":
            self.cast(eqn, frames, backward, line)
            return
        if not role:
            carried = [self.pending[id(v)] for v in eqn.invars if id(v) in self.pending] if internal else []
            for var in eqn.outvars if carried else ():
                self.pending[id(var)] = carried[0]  # the division of a mean, on its way to the cast back
            return
        operands = [self.seen_as.get(id(v), _dtype(v)) for v in eqn.invars]
        result = _dtype(eqn.outvars[0])
        if not any(map(_is_float, [*operands, result])):
            return
        if role == "reduction" and backward:
            role = "backward reduction"  # a gradient's sum over a broadcast: jax's, not the learner's choice
        entry = self._add(role, eqn, operands, result, line)
        if internal and role.endswith("reduction"):
            self.pending[id(eqn.outvars[0])] = entry

    def cast(self, eqn: Any, frames: list[Any], backward: bool, line: int | None) -> None:
        source, target = _dtype(eqn.invars[0]), _dtype(eqn.outvars[0])
        if (
            source in (target, "bool")
            or not _is_float(target)
            or (not _is_float(source) and _width(target) >= 32)
        ):
            return  # a weak-type change, a mask made numbers, a counter in float32, a conversion to integers
        if getattr(eqn.invars[0].aval, "weak_type", False):
            return  # a Python number taking the dtype of the array it meets: no dtype the code chose
        kind = _cast_kind(eqn, frames)
        if kind == "mixed" and backward:
            return  # a gradient flowing back through a promotion of the forward pass, reported there
        if kind == "internal":
            entry = self.pending.get(id(eqn.invars[0]))
            if entry is not None and _width(target) < _width(source):
                entry["result"] = target  # the reduction's value, back in the learner's dtype
            elif _width(target) > _width(source):
                self.seen_as[id(eqn.outvars[0])] = self.seen_as.get(id(eqn.invars[0]), source)
            return
        before = self.cast_of.get(id(eqn.invars[0]))
        if kind == "cast" and before is not None and before["operands"][0] == target:
            entry = self._add("cast", eqn, [target], target, line)
            entry["via"] = source  # a round trip: the value rounded to `source` and back
        else:
            entry = self._add(kind, eqn, [source], target, line)
        self.cast_of[id(eqn.outvars[0])] = entry


def signature(entry: dict[str, Any]) -> str:
    """The entry's dtypes as a learner reads them: "bfloat16 x bfloat16 -> float32", "float16 -> float32",
    "float32 -> float16 -> float32" for a round trip."""
    if "via" in entry:
        return f"{entry['operands'][0]} -> {entry['via']} -> {entry['result']}"
    operands = entry["operands"]
    if entry["role"] not in ("matmul", "convolution"):
        operands = list(dict.fromkeys(operands))
    return f"{' x '.join(operands)} -> {entry['result']}"


def summarize(entries: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """For each role present, how many operations ran with each dtype signature."""
    summary: dict[str, Counter[str]] = {}
    for entry in entries:
        summary.setdefault(entry["role"], Counter())[signature(entry)] += 1
    return {role: dict(sorted(summary[role].items())) for role in ROLES if role in summary}


def _live(jaxpr: Any) -> Any:
    """The jaxpr without the equations whose values never reach the output (the forward pass a flax
    `init` runs to learn the shapes, say); the whole jaxpr if jax's dead-code pass fails."""
    try:
        from jax._src.interpreters import partial_eval

        return partial_eval.dce_jaxpr(jaxpr, [True] * len(jaxpr.outvars))[0]
    except Exception:
        return jaxpr


def _reason(exc: BaseException) -> str:
    """Why the function could not be traced, in a learner's terms where jax says what went wrong."""
    import jax

    name = type(exc).__name__
    if isinstance(exc, jax.errors.ConcretizationTypeError):  # if/while/int()/float() on an array
        return f"your code uses a computed array's value in Python (an if, int(), float()) ({name})"
    if isinstance(exc, jax.errors.TracerArrayConversionError):
        return f"your code turns a computed array into a NumPy array ({name})"
    lines = str(exc).strip().splitlines()
    return f"{name}: {lines[0] if lines else ''}"[:300]


def _trace(fn: Any, values: list[Any]) -> Any:
    """`jax.make_jaxpr` of `fn` with the array inputs traced and the rest as they are. Code that turns an
    input into NumPy (`np.asarray(x)`) is traced again with the arrays as constants; what NumPy computes
    is then not seen, what jax computes is."""
    import jax
    import numpy as np

    arrays = [i for i, v in enumerate(values) if isinstance(v, np.ndarray | jax.Array)]

    def call(*traced: Any) -> Any:
        args = [v.copy() if isinstance(v, np.ndarray) else v for v in values]  # the case stays as it was
        for i, array in zip(arrays, traced, strict=True):
            args[i] = array
        return fn(*args)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy's overflow in casting a constant, say: not the learner's
        try:
            return jax.make_jaxpr(call)(*(values[i] for i in arrays))
        except jax.errors.TracerArrayConversionError:
            arrays = []  # `call` now passes every input as it is
            return jax.make_jaxpr(call)()


def profile(
    fn: Any,
    inputs: dict[str, Any] | list[Any],
    submission_path: str | Path,
    harness: Any = None,
    folder: Path | None = None,
) -> dict[str, Any]:
    """Traces `fn` on one case and returns its precision profile, JSON-able.

    Array inputs (numpy or jax) are traced; the rest (ints, floats, strings) are passed as they are, so
    Python loops and `int(seed)` trace. Returns {"entries": [...], "summary": {...}, "seconds": float},
    or {"error": reason, "seconds": float} when the function cannot be traced.
    """
    start = time.perf_counter()
    if harness is not None:
        return {"error": "a problem with a harness is not profiled yet", "seconds": 0.0}
    try:
        closed = _trace(fn, list(inputs.values()) if isinstance(inputs, dict) else list(inputs))
    except Exception as exc:  # learner code that cannot be traced: no profile, never an error
        return {"error": _reason(exc), "seconds": time.perf_counter() - start}
    walk = _Walk(Path(submission_path))
    walk.jaxpr(_live(closed.jaxpr))
    return {
        "entries": walk.entries,
        "summary": summarize(walk.entries),
        "seconds": time.perf_counter() - start,
    }
