"""Where a check's time goes: every file of `grade check` run on its cases in one bare interpreter, with
JAX's own compile timers, and a table per problem of what each phase costs.

    python benchmarks/check_profile.py [ID...] [--secrets 3] [--files 3]

For each problem, every file `grade check` runs (the reference, the pitfall forms, the variants, the natural
mistakes) is imported and called on the cases the check measures (the practice cases and the hidden cases of
`--secrets` secrets), one file after another in this process, as a trusted child runs them, with no grader
and no compilation cache on disk. JAX's monitoring events split each file's time into tracing
(`jaxpr_trace_duration`), lowering to MLIR (`jaxpr_to_mlir_module_duration`), XLA compilation
(`backend_compile_duration`, with the count of compilations: JAX reports one for a program read from the
compilation cache too, which is not counted) and the rest: running the compiled code and
Python's own dispatch. The files that cost the most are listed with how many times they compiled: a file
that compiles once per case builds a new program for every case (a `jax.jit` made inside the function, with
the case's scalars baked in), which no cache shared between cases can save.

Two switches give this process the configuration of the check's children (docs/speed.md), two compare:

- `--cache`: a compilation cache on disk (a fresh folder, every program kept), as the check's children have;
- `--hoist`: JAX hoists every captured constant into an argument, as every child does
  (`jax_use_simplified_jaxpr_constants`, `jax_embedded_constants_max_bytes=0`: grader/settings.py);
- `--compare`: every output compared bit for bit with what the check stored for that file and case (the
  output store under the cache folder, filled by `grade check` on this platform); the files that differ
  are listed. A change of JAX's configuration may be taken only where nothing differs.
- `--as-of REV` (with `--compare`): each file's output compared with what the check stored for the file as
  it is in the git revision REV, so that a course file rewritten to compile less (its scalars passed to its
  jitted step, say) is shown to compute bit for bit what it computed before. A file that REV does not
  have counts as not stored; a REV that git does not know stops the run.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.settings import HOISTED_CONSTANTS_ENV  # noqa: E402

if "--hoist" in sys.argv:  # read when JAX is imported, as in a child (jax.config.update does not do the same)
    os.environ.update(HOISTED_CONSTANTS_ENV)

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax._src import monitoring  # noqa: E402

from grader.authoring.check import DEFAULT_SECRETS  # noqa: E402
from grader.authoring.discrimination import hidden_cases, table_files  # noqa: E402
from grader.course.problems import Course  # noqa: E402
from grader.expected import output_cache  # noqa: E402
from grader.expected.trusted import file_digest  # noqa: E402
from grader.settings import Settings  # noqa: E402

EVENTS = {
    "/jax/core/compile/backend_compile_duration": "compile",
    "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower",
    "/jax/core/compile/jaxpr_trace_duration": "trace",
}
_spent: dict[str, float] = defaultdict(float)
_differing: list[str] = []  # the files whose outputs are not bitwise the stored ones (--compare)


CACHE_HIT = "/jax/compilation_cache/cache_hits"


def _listen(event: str, seconds: float, **_: object) -> None:
    phase = EVENTS.get(event)
    if phase:
        _spent[phase] += seconds
        if phase == "compile":
            _spent["compiles"] += 1


def _listen_hits(event: str, **_: object) -> None:
    """A program read from the compilation cache (--cache) also reports a (short) backend compile: it is
    not counted as a compilation."""
    if event == CACHE_HIT:
        _spent["compiles"] -= 1


def _load_harness(path: Path | None):
    if path is None:
        return None
    spec = importlib.util.spec_from_file_location("harness", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _call(function, harness, inputs: dict) -> np.ndarray | None:
    """The file's output on the case as the check stores it (float64), or None where it raised."""
    try:
        if harness is None:
            value = function(**inputs)
        else:
            with tempfile.TemporaryDirectory() as folder:
                value = harness.run_case(function, dict(inputs), Path(folder))
        return np.asarray(value).astype(np.float64)
    except Exception:  # a natural mistake may raise: its time still counts
        return None


def _same_as_stored(store, digest: str, case, output: np.ndarray | None) -> bool | None:
    """Whether the output is bitwise what the store holds for the file (by its digest; "" for none) on the
    case (None: not stored)."""
    stored = store.load(output_cache.entry_key(digest, case)) if digest else None
    if stored is None:
        return None
    if output is None or output.size != stored.size:
        return False
    return bool(np.array_equal(output.reshape(stored.shape), stored, equal_nan=True))


def _git(*words: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *words], cwd=ROOT, capture_output=True)


def _text_as_of(path: Path, revision: str | None) -> bytes | None:
    """The file's bytes in the git revision (as it is now where no revision is given; None where the
    revision does not have it, so that it is never compared with its own outputs)."""
    if revision is None:
        return path.read_bytes()
    shown = _git("show", f"{revision}:{path.relative_to(ROOT).as_posix()}")
    return shown.stdout if shown.returncode == 0 else None


def profile_problem(
    course: Course, problem, secrets: list[str], store=None, as_of: str | None = None
) -> tuple[dict, list[tuple]]:
    """Runs every file of the problem's check on its cases; returns the phase totals and per-file rows
    (with a `store`, also how many outputs are bitwise the stored ones, differ, or are not stored)."""
    cases = hidden_cases(problem, [None, *secrets])
    harness = _load_harness(problem.harness_path)
    totals: dict[str, float] = defaultdict(float)
    rows = []
    for label, path in table_files(course, problem).items():
        name = f"profiled_{problem.id}_{label.replace(':', '_')}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # as the child does: dataclasses (flax modules) look their module up
        start = time.perf_counter()
        spec.loader.exec_module(module)
        function = getattr(module, problem.function)
        before = dict(_spent)
        compared = []
        text = _text_as_of(path, as_of) if store is not None else None
        digest = file_digest(text, problem) if text is not None else ""
        for case in cases:
            output = _call(function, harness, case.inputs)
            if store is not None:
                compared.append(_same_as_stored(store, digest, case, output))
        for verdict, key in ((True, "same"), (False, "different"), (None, "not stored")):
            totals[key] += compared.count(verdict)
        if False in compared:
            _differing.append(f"{problem.id} {label}")
        wall = time.perf_counter() - start
        spent = {phase: _spent[phase] - before.get(phase, 0.0) for phase in ("compile", "lower", "trace")}
        compiles = int(_spent["compiles"] - before.get("compiles", 0))
        rows.append((label, wall, spent["compile"], compiles))
        totals["wall"] += wall
        totals["compiles"] += compiles
        for phase, seconds in spent.items():
            totals[phase] += seconds
    totals["calls"] = len(cases) * len(rows)
    totals["files"] = len(rows)
    jax.clear_caches()  # as a child does between problems
    return totals, rows


def main() -> int:
    # no abbreviations: --hoist is read from sys.argv as written, before JAX is imported (above)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("ids", nargs="*", help="problem ids (default: all)")
    parser.add_argument("--secrets", type=int, default=len(DEFAULT_SECRETS), help="secrets (default 3)")
    parser.add_argument("--files", type=int, default=3, help="costliest files listed per problem")
    parser.add_argument("--cache", action="store_true", help="a compilation cache on disk (fresh)")
    parser.add_argument("--hoist", action="store_true", help="captured constants hoisted into arguments")
    parser.add_argument("--compare", action="store_true", help="outputs compared with the check's store")
    parser.add_argument("--as-of", metavar="REV", help="--compare with the files as they are in REV (git)")
    args = parser.parse_args()
    if args.as_of and not args.compare:
        parser.error("--as-of compares: give --compare too")
    if args.as_of and _git("rev-parse", "--verify", "--quiet", f"{args.as_of}^{{commit}}").returncode:
        parser.error(f"--as-of {args.as_of}: git knows no such revision")
    monitoring.register_event_duration_secs_listener(_listen)
    monitoring.register_event_listener(_listen_hits)
    if args.cache:
        jax.config.update("jax_compilation_cache_dir", tempfile.mkdtemp(prefix="check-profile-cache-"))
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    store = output_cache.practice_store(Settings.from_environment()) if args.compare else None
    course = Course(ROOT)
    problems = [course.problem(i) for i in args.ids] if args.ids else course.problems()
    secrets = list(DEFAULT_SECRETS[: args.secrets]) + [
        f"check-{n + 1}" for n in range(len(DEFAULT_SECRETS), args.secrets)
    ]
    head = f"{'problem':<22} {'files':>5} {'calls':>6} {'seconds':>8} {'compile':>8} {'(count)':>8}"
    print(head + f" {'lower':>6} {'trace':>6} {'rest':>7}  costliest files (seconds, compilations)")
    grand: dict[str, float] = defaultdict(float)
    for problem in problems:
        totals, rows = profile_problem(course, problem, secrets, store, args.as_of)
        for key, value in totals.items():
            grand[key] += value
        rest = totals["wall"] - totals["compile"] - totals["lower"] - totals["trace"]
        costly = sorted(rows, key=lambda row: -row[1])[: args.files]
        named = ", ".join(f"{label} {wall:.0f} s/{compiles}" for label, wall, _, compiles in costly)
        print(
            f"{problem.id:<22} {totals['files']:>5.0f} {totals['calls']:>6.0f} {totals['wall']:>8.1f}"
            f" {totals['compile']:>8.1f} {totals['compiles']:>8.0f} {totals['lower']:>6.1f}"
            f" {totals['trace']:>6.1f} {rest:>7.1f}  {named}",
            flush=True,
        )
    rest = grand["wall"] - grand["compile"] - grand["lower"] - grand["trace"]
    print(
        f"{'all':<22} {grand['files']:>5.0f} {grand['calls']:>6.0f} {grand['wall']:>8.1f}"
        f" {grand['compile']:>8.1f} {grand['compiles']:>8.0f} {grand['lower']:>6.1f} {grand['trace']:>6.1f}"
        f" {rest:>7.1f}"
    )
    if store is not None:
        print(
            f"outputs bitwise as stored: {grand['same']:.0f}, different: {grand['different']:.0f}, "
            f"not stored: {grand['not stored']:.0f}"
        )
        for label in _differing:
            print(f"  differs: {label}")
    share = grand["compile"] / grand["wall"] if grand["wall"] else 0.0
    cache = "a compilation cache on disk" if args.cache else "no cache on disk"
    hoisted = ", captured constants hoisted" if args.hoist else ""
    print(f"XLA compilation: {share:.0%} of the files' time, one process, {cache}{hoisted}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
