"""A concrete run of a function under a recording JAX trace, for grader/profile/profiler.py: what
`jax.make_jaxpr` cannot follow (a Python `if` on a computed value, NumPy on computed arrays, Orbax checkpoints
written and read back, a harness calling the function twice) runs as it does when graded, and every primitive
it binds is recorded as an equation a jaxpr walk can read. Standard library and jax only (jax's internals,
pinned to 0.10.x): loaded by path, as profiler.py is.

jax's core is stackless: the current trace receives every primitive bound while it is set. The recorder
notes the primitive, its operands' and results' types and the Python stack, and has jax's evaluation trace
compute it, so values stay concrete. A jitted call is one `jit` primitive whose jaxpr (from jax's cache, as
the child's run left it warm) the walk goes through; a custom_jvp or custom_vjp function runs under the
recorder itself; under `jax.grad` or `jax.vmap`, jax's own traces sit above the recorder and hand it their
primal, batched and transposed primitives, the transposed ones under jax's `transpose(...)` name stack.
"""

from __future__ import annotations

import os
import types
import weakref
from collections.abc import Callable
from typing import Any

import jax
from jax._src import core, source_info_util

_HERE = __file__  # this file's frames are the recorder's, not the code's
_JAX_FOLDER = "/jax/"


class _Var:
    """A recorded value's type, in the place of a jaxpr variable."""

    __slots__ = ("aval",)

    def __init__(self, aval: Any) -> None:
        self.aval = aval


class _Traceback:
    """A recorded Python stack without the recorder's own frames, read only if the walk needs it."""

    __slots__ = ("_traceback",)

    def __init__(self, traceback: Any) -> None:
        self._traceback = traceback

    @property
    def frames(self) -> list[Any]:
        frames = list(self._traceback.frames)
        mine = [i for i, frame in enumerate(frames[:8]) if frame.file_name == _HERE]
        return frames[mine[0] + 1 :] if mine else frames


class _SourceInfo:
    __slots__ = ("name_stack", "traceback")

    def __init__(self, info: Any) -> None:
        self.traceback = _Traceback(info.traceback) if info.traceback is not None else None
        self.name_stack = info.name_stack


class _Eqn:
    """One primitive as it ran: what the walk reads of a jaxpr equation."""

    __slots__ = ("invars", "outvars", "params", "primitive", "source_info")

    def __init__(self, primitive: Any, invars: list[_Var], outvars: list[_Var], params: dict, info: Any):
        self.primitive, self.invars, self.outvars, self.params = primitive, invars, outvars, params
        self.source_info = _SourceInfo(info)


def _first_outside_jax(eqn: _Eqn) -> str:
    """The real path of the innermost file of the equation's stack that is not jax's ("" for none)."""
    traceback = eqn.source_info.traceback
    frames = traceback.frames if traceback is not None else []
    first = next((f.file_name for f in frames if _JAX_FOLDER not in f.file_name), "")
    return os.path.realpath(first) if first else ""


def _forget(recording: weakref.ref, value: int) -> None:
    """A recorded value died: its id may now be another's."""
    alive = recording()
    if alive is not None:
        alive._vars.pop(value, None)


class Recording(core.Trace):
    """The trace that records the primitives, in the order they ran."""

    def __init__(self) -> None:
        super().__init__()
        self.eqns: list[_Eqn] = []
        self.failure: Exception | None = None  # what the recorded function raised, if it did
        self.returned: list[Any] = []  # the arrays the recorded calls returned
        self._vars: dict[int, _Var] = {}  # id(value) -> its var, while the value lives (ids are reused)

    def _var(self, value: Any) -> _Var:
        var = self._vars.get(id(value))
        if var is None:
            var = _Var(core.typeof(value))
            try:  # forgotten when the value dies: a run holds no more arrays than it would unrecorded
                weakref.finalize(value, _forget, self._weakref, id(value))
            except TypeError:
                return var  # a Python number: no identity to follow
            self._vars[id(value)] = var
        return var

    def process_primitive(self, primitive: Any, values: Any, params: dict, /) -> Any:
        info = source_info_util.current()
        with core.set_current_trace(core.eval_trace):  # jax's trace above may have left this one current
            out = core.eval_trace.process_primitive(primitive, values, params)
        outs = out if primitive.multiple_results else [out]
        invars, outvars = [self._var(v) for v in values], [self._var(v) for v in outs]
        self.eqns.append(_Eqn(primitive, invars, outvars, params, info))
        return out

    def stage_value(self, value: Any) -> Any:
        return core.eval_trace.stage_value(value)

    def _run(self, fun: Any, values: Any) -> Any:
        """A custom derivative's function or a call's body: its primitives are recorded one by one."""
        with core.set_current_trace(self):
            return fun.call_wrapped(*values)

    def process_call(self, primitive: Any, fun: Any, values: Any, params: dict, /) -> Any:
        return self._run(fun, values)

    def process_custom_jvp_call(self, primitive: Any, fun: Any, jvp: Any, values: Any, /, **_: Any) -> Any:
        return self._run(fun, values)

    def process_custom_vjp_call(self, primitive: Any, fun: Any, fwd: Any, bwd: Any, values: Any, /, **_: Any):
        return self._run(fun, values)

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """`fn`, recorded while it runs (a harness's own operations, between its calls, are not)."""

        def recorded(*args: Any, **kwargs: Any) -> Any:
            try:
                with core.set_current_trace(self):
                    out = fn(*args, **kwargs)
            except Exception as exc:
                self.failure = exc
                raise
            self.returned += jax.tree.leaves(out)
            return out

        return recorded

    def live(self, submission: str) -> Any:
        """The recorded equations, as a jaxpr's `eqns`, without the work a library threw away: an operation
        that ran inside a library (its first frame outside jax is not the submission's) and whose results
        no later operation used and no call returned, as the forward pass flax's `init` runs to learn the
        shapes (what `jax.make_jaxpr`'s dead-code pass leaves out). An operation of the submission's own
        lines stays, its result possibly read by Python (an `if`, `float()`, NumPy)."""
        submission = os.path.realpath(submission)
        used = {id(self._vars[id(v)]) for v in self.returned if id(v) in self._vars}
        kept = []
        for eqn in reversed(self.eqns):
            if any(id(v) in used for v in eqn.outvars) or _first_outside_jax(eqn) == submission:
                kept.append(eqn)
                used.update(id(v) for v in eqn.invars)
        return types.SimpleNamespace(eqns=kept[::-1])
