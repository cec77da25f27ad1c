"""A precision profile: the operations of a function run on one case that matter for mixed precision, with
their dtypes and, for the submission's own lines, where they were written. Standard library, numpy and jax
only: the child loads this file by path (grader/child/main.py), since it cannot import the grader package; it
loads its two siblings, walk.py (the walk) and trace.py (the recorder), by path too.

Traced with `jax.make_jaxpr` (arrays traced, the rest static, as a Python loop over `num_steps` needs), or,
where tracing cannot follow the code (a Python `if` on a computed value, NumPy on computed arrays) and for a
problem with a harness (checkpoints written and read back between two calls), run concretely under a
recording trace (trace.py). Sub-jaxprs are walked too (jit, scan, while, cond, custom derivatives).
Operations that matter get a role:

- `matmul`: dot_general with a free dimension on some side; `convolution`;
- `reduction`: reduce_sum/max/min/prod, cumulative sums and products, and dot products (dot_general
  with no free dimension, as `jnp.vdot` or `einsum("nd,nd->n")` give);
- `accumulation`: an addition to a running sum kept in 16 bits or fewer (the same line adding to what it
  added before, in a Python loop, or to a scan's carried value); other additions (biases, residuals, a
  float32 sum) are everywhere and say nothing about precision;
- `exp/log`: exp, exp2, log, log1p, expm1, logistic, but not of one float32 number (a scale's exponent);
- `scaling`: an array multiplied or divided by a scalar (a loss scale, a step size), in either pass;
- `cast`: every conversion between floats the code asks for (astype, asarray, a library's casts), and
  integers turned into a 16-bit or narrower float however that arises (a counter in float32 is not listed);
- `mixed`: a float converted only because an operation of the forward pass mixed two float dtypes
  (`p16 + u32`), as an fp16 master copy updated by fp32 updates does.

A jnp reduction of a 16-bit array accumulates in float32 between two casts of its own: those casts are not
the learner's, so the reduction shows as written (float16 -> float16); the same goes for a mean's division.
float8 values widened to float32 (to emulate an fp8 matmul where the hardware has none) are not a cast: a
matmul or reduction of them shows float8 operands, as one on the float8 arrays themselves does.
A reduction of the backward pass (jax's transpose of a broadcast) is a `backward reduction`; a cast that
undoes the cast before it is a round trip (float32 -> float16 -> float32): a value rounded on the way.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any


def _sibling(name: str) -> Any:
    """The module `name`.py next to this file, loaded by path once per process."""
    key = f"_precision_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, Path(__file__).with_name(f"{name}.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[key] = module
    return sys.modules[key]


def preload() -> None:
    """Loads the siblings now: a child does so before its sandbox closes the grader's folder to it. (Not at
    import: the grader's own process reads ROLES and `signature` here, and never needs jax.)"""
    _sibling("walk")
    _sibling("trace")


# in the order differences are reported: a cast or a mixed operation is more often the cause, a 16-bit
# scaling the consequence
ROLES = (
    "matmul",
    "convolution",
    "reduction",
    "backward reduction",
    "accumulation",
    "exp/log",
    "cast",
    "mixed",
    "scaling",
)


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
    """For each role present, how many operations ran with each dtype signature (an entry `compact` made
    stands for `count` of them)."""
    summary: dict[str, Counter[str]] = {}
    for entry in entries:
        summary.setdefault(entry["role"], Counter())[signature(entry)] += entry.get("count", 1)
    return {role: dict(sorted(summary[role].items())) for role in ROLES if role in summary}


def compact(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries with each (role, dtypes, file, line) once, in order, counted: Python loops repeat them.
    The child sends its profile compacted; the grader compacts what it receives again (it may be forged)."""
    kept: dict[tuple, dict[str, Any]] = {}
    for entry in entries:
        key = (entry["role"], signature(entry), entry.get("file"), entry.get("line"))
        if key in kept:
            kept[key]["count"] += entry.get("count", 1)
        else:
            kept[key] = {**entry, "count": entry.get("count", 1)}
    return list(kept.values())


def _live(jaxpr: Any) -> Any:
    """The jaxpr without the equations whose values never reach the output (the forward pass a flax
    `init` runs to learn the shapes, say); the whole jaxpr if jax's dead-code pass fails."""
    try:
        from jax._src.interpreters import partial_eval

        return partial_eval.dce_jaxpr(jaxpr, [True] * len(jaxpr.outvars))[0]
    except Exception:
        return jaxpr


def _reason(exc: BaseException) -> str:
    """Why the function could not be profiled, in a learner's terms: what their code raised."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"[:300]


def _copies(values: list[Any]) -> list[Any]:
    """The inputs, numpy arrays copied: the case stays as it was, whatever the code does to them."""
    import numpy as np

    return [v.copy() if isinstance(v, np.ndarray) else v for v in values]


def _trace(fn: Any, values: list[Any]) -> Any:
    """The live equations of `jax.make_jaxpr` of `fn`, with the array inputs traced and the rest as they
    are."""
    import jax
    import numpy as np

    arrays = [i for i, v in enumerate(values) if isinstance(v, np.ndarray | jax.Array)]

    def call(*traced: Any) -> Any:
        args = _copies(values)
        for i, array in zip(arrays, traced, strict=True):
            args[i] = array
        return fn(*args)

    return _live(jax.make_jaxpr(call)(*(values[i] for i in arrays)).jaxpr)


def _record(fn: Any, inputs: dict[str, Any] | list[Any], harness: Any, folder: Any, as_jax: bool) -> Any:
    """The recording of a concrete run: of `fn` on copies of the inputs, or of the harness's calls of `fn`
    on the case in `folder` (a temporary folder if None). With `as_jax`, numpy arrays reach `fn` as jax
    arrays, as tracing gives them: `x.astype(jnp.float16)` on an input is then jax's cast, which the
    profile sees, not NumPy's. A harness that rejects what the calls wrote or returned still leaves the
    recording of the calls; what the code itself raises is raised."""
    import jax.numpy as jnp
    import numpy as np

    recording = _sibling("trace").Recording()
    recorded = recording.wrap(fn)

    def jax_array(value: Any) -> Any:
        return jnp.asarray(value) if as_jax and isinstance(value, np.ndarray) else value

    def call(*args: Any, **kwargs: Any) -> Any:
        return recorded(*map(jax_array, args), **{name: jax_array(v) for name, v in kwargs.items()})

    if harness is None:
        call(*_copies(list(inputs.values()) if isinstance(inputs, dict) else list(inputs)))
        return recording
    with contextlib.ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory())) if folder is None else folder
        try:
            harness.run_case(call, dict(inputs), folder)
        except Exception:
            if recording.failure is not None or not recording.eqns:
                raise
    return recording


def _equations(
    fn: Any, inputs: dict[str, Any] | list[Any], submission: Path, harness: Any, folder: Any
) -> Any:
    """What the walk reads: the traced jaxpr's live equations where tracing can follow the code (cheaper,
    and its dead code is exactly known), else those of a concrete run with jax arrays, else, for code that
    needs its inputs as NumPy arrays (written to in place, say), of a run as graded."""
    if harness is None:
        try:
            return _trace(fn, list(inputs.values()) if isinstance(inputs, dict) else list(inputs))
        except Exception:
            pass  # code that tracing cannot follow: run it
    try:
        recording = _record(fn, inputs, harness, folder, as_jax=True)
    except Exception:
        again = Path(tempfile.mkdtemp(dir=folder)) if folder is not None else None  # fresh and empty
        recording = _record(fn, inputs, harness, again, as_jax=False)
    return recording.live(str(submission))


def profile(
    fn: Any,
    inputs: dict[str, Any] | list[Any],
    submission_path: str | Path,
    harness: Any = None,
    folder: Path | None = None,
) -> dict[str, Any]:
    """Profiles `fn` on one case and returns its precision profile, JSON-able; never raises.

    Array inputs (numpy or jax) are traced; the rest (ints, floats, strings) are passed as they are, so
    Python loops and `int(seed)` trace. Code that tracing cannot follow runs concretely, recorded, on
    copies of the inputs (jax arrays, as tracing has them, unless the code needs NumPy's). With `harness`
    (the problem's harness module), its `run_case(fn, inputs, folder)` makes the calls, recorded, in
    `folder` (fresh and empty; the caller creates and removes it).
    Returns {"entries": [...], "summary": {...}, "seconds": float}, or {"error": reason, "seconds": float}
    when the function cannot be profiled.
    """
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numpy's overflow in casting a constant, say: not the learner's
            equations = _equations(fn, inputs, Path(submission_path), harness, folder)
        walk = _sibling("walk").Walk(Path(submission_path))
        walk.jaxpr(equations)
    except Exception as exc:  # learner code that cannot run, or a jax the recorder does not know
        return {"error": _reason(exc), "seconds": time.perf_counter() - start}
    return {
        "entries": walk.entries,
        "summary": summarize(walk.entries),
        "seconds": time.perf_counter() - start,
    }
