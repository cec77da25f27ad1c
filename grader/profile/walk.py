"""The walk of grader/profile/profiler.py: the operations of a jaxpr (traced, or recorded from a concrete run
by grader/profile/trace.py) that matter for mixed precision, as entries with a role, dtypes and a line of the
submission. Standard library only (it reads jax's objects, never imports jax): loaded by path, as profiler.py
is. The roles are described in profiler.py's docstring.

Beyond one equation at a time, the walk follows a few facts about values, across the boundaries of
sub-jaxprs (every jnp function is one in a concrete run):

- `seen_as`: a jnp reduction's own upcast of a 16-bit array, so that the reduction shows as written;
- `float8`: float8 numbers widened to a larger float (the only way to compute with them on most hardware,
  which code emulating an fp8 matmul does by hand), kept through layout changes, abs and scaling by one
  number, so that a matmul or a reduction of them shows float8 operands;
- `one_number`: a single number, possibly broadcast to an array's shape (flax's fp8 scales);
- `cast_from`: the dtype a cast converted from, to see round trips;
- `sum_at`: the line of the 16-bit addition that made a value (or `_CARRY`, a loop's carried value), to
  see running sums.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

_REDUCTIONS = {"reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "cumsum", "cumprod", "cumlogsumexp"}
_EXP_LOG = {"exp", "exp2", "log", "log1p", "expm1", "logistic"}
_LAYOUT = {"transpose", "reshape", "squeeze", "broadcast_in_dim", "slice", "dynamic_slice", "copy"}
_SAME_NUMBERS = _LAYOUT | {"abs", "neg"}  # operations that move numbers or their signs, never round them
_JAX_FOLDER = "/jax/"
_INTERNAL_FILES = ("/jax/_src/numpy/reductions.py", "/jax/_src/nn/functions.py")
_EXPLICIT_CAST = ("/jax/_src/lax/lax.py", "_convert_element_type")  # a direct call: astype, asarray
_PROMOTION = ("/jax/_src/numpy/util.py", "promote_dtypes")
_CUSTOM_RULE = ("/jax/_src/custom_derivatives.py", "")
_CARRY = "carry"  # `sum_at` of a loop's carried value: an addition to it is a running sum
_FACTS = ("seen_as", "float8", "one_number", "cast_from", "sum_at")


def _dtype(var: Any) -> str:
    return str(getattr(getattr(var, "aval", None), "dtype", ""))


def _shape(var: Any) -> tuple[int, ...] | None:
    return getattr(getattr(var, "aval", None), "shape", None)


def _is_float(dtype: str) -> bool:
    return dtype.startswith(("float", "bfloat"))


def dtype_width(dtype: str) -> int:
    """The bits of a dtype by its name: float16 -> 16, float8_e4m3fn -> 8 (0 for bool)."""
    digits = "".join(c for c in dtype.split("_")[0] if c.isdigit())
    return int(digits) if digits else 0


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


def _called(frames: list[Any], place: tuple[str, str]) -> bool:
    """Whether one of the frames runs a function (by its name's start) of the file (by its path's end)."""
    return any(f.file_name.endswith(place[0]) and f.function_name.startswith(place[1]) for f in frames)


def _cast_kind(eqn: Any, frames: list[Any]) -> str:
    """The kind of a conversion: `cast` (asked for, or written in a custom_vjp's backward rule), `internal`
    (a jnp reduction's own) or `mixed` (jnp's promotion of mixed operands, which calls lax's conversion as
    astype does, where jax traced it apart: a jnp function's jit, in a concrete run)."""
    jax_frames = _jax_frames(frames)
    if _in_jnp_internals(frames):
        return "internal"
    if _called(jax_frames, _EXPLICIT_CAST) and not _called(jax_frames, _PROMOTION):
        return "cast"
    if _called(jax_frames, _CUSTOM_RULE):
        return "cast"  # in the code's own derivative rule, which jax records with the frames of the call
    if not jax_frames or not _is_float(_dtype(eqn.invars[0])):
        return "cast"  # an integer promoted to float16 is as much a cast as one asked for
    return "mixed"


def _role(eqn: Any) -> str:
    name = eqn.primitive.name
    if name == "dot_general":
        (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = eqn.params["dimension_numbers"]
        lhs_rank, rhs_rank = (len(_shape(v) or ()) for v in eqn.invars[:2])
        if not lhs_contract:
            return ""  # an outer or elementwise product (a dot product's gradient): nothing is summed
        free = lhs_rank - len(lhs_contract) - len(lhs_batch) + rhs_rank - len(rhs_contract) - len(rhs_batch)
        return "matmul" if free else "reduction"
    if name == "conv_general_dilated":
        return "convolution"
    if name in _REDUCTIONS:
        return "reduction"
    if name in _EXP_LOG:
        # the exponent of one float32 number (a scale's power of two) is bookkeeping, not a tensor's precision
        one = _shape(eqn.invars[0]) == () and dtype_width(_dtype(eqn.invars[0])) >= 32
        return "" if one else "exp/log"
    if name == "convert_element_type":
        return "cast"
    if name in ("mul", "div") and any(_shape(v) == () for v in eqn.invars):
        return "scaling"
    return ""


def _sub_jaxprs(eqn: Any) -> list[Any]:
    """The jaxprs inside an equation's parameters (jit, scan, while, cond branches, custom calls)."""
    items = [i for v in eqn.params.values() for i in (v if isinstance(v, tuple | list) else (v,))]
    return [getattr(i, "jaxpr", i) for i in items if hasattr(getattr(i, "jaxpr", i), "eqns")]


def _carried(eqn: Any, inner: Any) -> list[Any]:
    """The loop-carried inputs of a scan's or while loop's body (none for other sub-jaxprs)."""
    params, name = eqn.params, eqn.primitive.name
    if name == "scan" and inner is getattr(params["jaxpr"], "jaxpr", None):
        start = params["num_consts"]
        return inner.invars[start : start + params["num_carry"]]
    if name == "while" and inner is getattr(params["body_jaxpr"], "jaxpr", None):
        return inner.invars[params["body_nconsts"] :]
    return []


class Walk:
    """Collects the entries of one trace (or recording) of a function defined in `submission`."""

    def __init__(self, submission: Path) -> None:
        self.submission = os.path.realpath(submission)
        self.name = submission.name
        self.entries: list[dict[str, Any]] = []
        # facts about values, keyed by id(var): the jaxprs (or the recording) hold the vars alive
        self.facts: dict[str, dict[int, Any]] = {fact: {} for fact in _FACTS}
        self.pending: dict[int, dict[str, Any]] = {}  # a reduction's f32 value -> its entry, until cast back
        self.files: dict[str, bool] = {}  # a frame's file -> whether it is the submission
        # a sub-jaxpr walked at a line with given facts about its inputs -> the facts about its outputs: a
        # jitted step called in a loop is walked once, not once per call
        self.walked: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}

    def _line(self, frames: list[Any]) -> int | None:
        """The line of the innermost frame in the submission file, None when no frame is there."""
        for frame in frames:
            if frame.file_name not in self.files:
                self.files[frame.file_name] = os.path.realpath(frame.file_name) == self.submission
            if self.files[frame.file_name]:
                return frame.line_num
        return None

    def _get(self, var: Any) -> tuple[Any, ...]:
        return tuple(self.facts[fact].get(id(var)) for fact in _FACTS)

    def _set(self, var: Any, facts: tuple[Any, ...]) -> None:
        for fact, value in zip(_FACTS, facts, strict=True):
            if value is None:
                self.facts[fact].pop(id(var), None)
            else:
                self.facts[fact][id(var)] = value

    def jaxpr(self, jaxpr: Any, backward: bool = False, line: int | None = None) -> None:
        """Walks the equations; those of a sub-jaxpr that jax traced apart (a library's jit, whose frames
        stop in the library) take the line of the equation that holds it."""
        for eqn in jaxpr.eqns:
            frames = _frames(eqn)
            here = self._line(frames) or line
            grad = backward or "transpose(" in str(eqn.source_info.name_stack)  # the backward pass
            for inner in _sub_jaxprs(eqn):
                self.sub_jaxpr(eqn, inner, grad, here)
            self.equation(eqn, frames, grad, here)

    def sub_jaxpr(self, eqn: Any, inner: Any, backward: bool, line: int | None) -> None:
        """Walks a sub-jaxpr with the facts about the equation's operands, and gives the facts about its
        results to the equation's (a jit's, a scan's; a cond's operands follow its index)."""
        operands = eqn.invars[1:] if eqn.primitive.name == "cond" else eqn.invars
        none = (None,) * len(_FACTS)
        if len(operands) == len(inner.invars):
            facts_in = tuple(self._get(v) for v in operands)
        else:
            facts_in = (none,) * len(inner.invars)
        key = (id(inner), backward, line, facts_in)
        if key not in self.walked:
            for var in [v for e in inner.eqns for v in e.outvars]:
                self._set(var, none)  # what an earlier walk of this jaxpr left
            for var, facts in zip(inner.invars, facts_in, strict=True):
                self._set(var, facts)
            for var in _carried(eqn, inner):  # a value the loop changes, whatever it started as
                self._set(var, (*none[:-1], _CARRY))
            self.jaxpr(inner, backward, line)
            self.walked[key] = [self._get(v) for v in inner.outvars]
        if len(inner.outvars) == len(eqn.outvars):
            for var, facts in zip(eqn.outvars, self.walked[key], strict=True):
                self._set(var, facts)

    def _add(self, role: str, eqn: Any, operands: list[str], result: str, line: int | None) -> dict[str, Any]:
        primitive = eqn.primitive.name
        entry = {"role": role, "primitive": primitive, "operands": operands, "result": result}
        self.entries.append({**entry, "file": self.name, "line": line})
        return self.entries[-1]

    def _one_number(self, var: Any) -> bool:
        return _shape(var) == () or id(var) in self.facts["one_number"]

    def _carry(self, eqn: Any) -> None:
        """Passes `one_number` and `float8` on through operations that keep the numbers they move."""
        name, out = eqn.primitive.name, eqn.outvars[0]
        if name == "broadcast_in_dim" and self._one_number(eqn.invars[0]):
            self.facts["one_number"][id(out)] = True
        arrays = [v for v in eqn.invars if not self._one_number(v)]
        float8 = [self.facts["float8"].get(id(v)) for v in arrays]
        if float8 and float8[0] and (name in _SAME_NUMBERS or (name in ("mul", "div") and len(arrays) == 1)):
            self.facts["float8"][id(out)] = float8[0]

    def _running_sum(self, eqn: Any, line: int | None) -> bool:
        """Whether the equation adds to a running sum in 16 bits or fewer (the same line adding to what it
        added before, or to a loop's carried value); records its own result as one."""
        result = _dtype(eqn.outvars[0])
        if eqn.primitive.name != "add" or not _is_float(result) or dtype_width(result) > 16:
            return False
        sums = self.facts["sum_at"]
        running = any(sums.get(id(v)) in (line, _CARRY) for v in eqn.invars)
        sums[id(eqn.outvars[0])] = line
        return running

    def equation(self, eqn: Any, frames: list[Any], backward: bool, line: int | None) -> None:
        role, internal = _role(eqn), _in_jnp_internals(frames)
        role = "" if role == "scaling" and internal else role  # a mean's division: jax's, not the learner's
        if role == "cast":
            self.cast(eqn, frames, backward, line)
            return
        self._carry(eqn)
        if self._running_sum(eqn, line):
            role = "accumulation"
        if not role:
            carried = [self.pending[id(v)] for v in eqn.invars if id(v) in self.pending] if internal else []
            for var in eqn.outvars if carried else ():
                self.pending[id(var)] = carried[0]  # the division of a mean, on its way to the cast back
            return
        seen_as, float8 = self.facts["seen_as"], self.facts["float8"]
        operands = [seen_as.get(id(v), _dtype(v)) for v in eqn.invars]
        if role in ("matmul", "convolution", "reduction"):
            operands = [float8.get(id(v), dtype) for v, dtype in zip(eqn.invars, operands, strict=True)]
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
        value, out = id(eqn.invars[0]), id(eqn.outvars[0])
        facts = self.facts
        if value in facts["one_number"]:
            facts["one_number"][out] = True
        if _is_float(target) and dtype_width(target) >= dtype_width(source):
            if source.startswith("float8"):
                facts["float8"][out] = source  # float8 numbers widened to compute with: still float8
                return
            if value in facts["float8"]:
                facts["float8"][out] = facts["float8"][value]
        if (
            source in (target, "bool")
            or not _is_float(target)
            or (not _is_float(source) and dtype_width(target) >= 32)
        ):
            return  # a weak-type change, a mask made numbers, a counter in float32, a conversion to integers
        if getattr(eqn.invars[0].aval, "weak_type", False):
            return  # a Python number taking the dtype of the array it meets: no dtype the code chose
        kind = _cast_kind(eqn, frames)
        if kind == "mixed" and backward:
            return  # a gradient flowing back through a promotion of the forward pass, reported there
        if kind == "internal":
            entry = self.pending.get(value)
            if entry is not None and dtype_width(target) < dtype_width(source):
                entry["result"] = target  # the reduction's value, back in the learner's dtype
            elif dtype_width(target) > dtype_width(source):
                facts["seen_as"][out] = facts["seen_as"].get(value, source)
            return
        before = facts["cast_from"].get(value)
        if kind == "cast" and before == target:
            entry = self._add("cast", eqn, [target], target, line)
            entry["via"] = source  # a round trip: the value rounded to `source` and back
        else:
            entry = self._add(kind, eqn, [source], target, line)
        facts["cast_from"][out] = entry["operands"][0]
