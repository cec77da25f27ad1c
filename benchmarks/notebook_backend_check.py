"""Practice grading as a notebook does it, on an accelerator runtime: every correct variant and every pitfall
file of every problem is loaded into this process and graded by `grader.grade_function` against a learner
copy's stored outputs (made by `grade export`, usually on another machine), with JAX's default backend
whatever this runtime has (the GPU on a GPU runtime).

    PYTHONPATH=COPY python3 benchmarks/notebook_backend_check.py COPY [ID...]
    GRADE_BACKEND=native PYTHONPATH=COPY python3 benchmarks/notebook_backend_check.py COPY [ID...]

By default grade_function calls the function under `jax.default_device` of the CPU; with
GRADE_BACKEND=native it runs where JAX puts it. Prints, per problem, the device the reference's outputs
landed on, how many variants passed and how many pitfall files failed with their own name, and every file
graded otherwise. Exit 0 when every variant passed and every pitfall was named.
"""

from __future__ import annotations

import importlib.util
import json
import platform
import sys
import time
from pathlib import Path

import jax

import grader
from grader.course.problems import Course, pitfall_name
from grader.grading.in_process import grading_device

CHECKOUT = Path(__file__).resolve().parents[1]


def load(path: Path, function: str):
    """The function `function` of the file at `path`, loaded as a module of its own."""
    spec = importlib.util.spec_from_file_location(f"graded_{path.parent.name}_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as an import would: flax's dataclasses look their module up there
    spec.loader.exec_module(module)
    return getattr(module, function)


def landed_on(problem, fn, copy: Path) -> str:
    """The platforms of the arrays the function returns on practice case 1, called as grading calls it."""
    if problem.harness_path:
        return "(harness)"
    inputs = grader.practice_case(problem.id, 1, course_root=copy)
    with grading_device():
        returned = fn(**inputs)
    return (
        ",".join(
            sorted(
                {
                    d.platform
                    for leaf in jax.tree.leaves(returned)
                    if hasattr(leaf, "devices")
                    for d in leaf.devices()
                }
            )
        )
        or "(no arrays)"
    )


def named(result, name: str) -> bool:
    """Whether the result names `name`: alone, or tied with pitfalls that explain the outputs equally."""
    if result.pitfall is None:
        return False
    tied = {m.name for m in result.also_matches} if result.pitfall_tied else set()
    return name in {result.pitfall.name} | tied


def main() -> int:
    copy = Path(sys.argv[1]).resolve()
    made_with = json.loads((copy / "problems" / "bf16_train_step" / "expected.json").read_text())["made_with"]
    print(f"copy made with {made_with}")
    print(
        f"graded here: Python {platform.python_version()}, jax {jax.__version__}, "
        f"default backend {jax.default_backend()}, devices {jax.devices()}"
    )
    wrong, start = [], time.time()
    for problem in Course(copy).problems():
        if sys.argv[2:] and problem.id not in sys.argv[2:]:
            continue
        reference_path = CHECKOUT / "solutions" / f"{problem.id}.py"
        reference = load(reference_path, problem.function)
        device = landed_on(problem, reference, copy)
        variants = sorted((CHECKOUT / "solutions" / "variants" / problem.id).glob("*.py"))
        pitfalls = sorted((CHECKOUT / "solutions" / "pitfalls" / problem.id).glob("*.py"))
        passed = failed_named = 0
        for path in [reference_path, *variants, *pitfalls]:
            fn = reference if path == reference_path else load(path, problem.function)
            result = grader.grade_function(problem.id, fn, course_root=copy)
            if path.parent.parent.name != "pitfalls":
                passed += result.passed
                if not result.passed:
                    wrong.append(
                        f"  {problem.id}/{path.name}: a correct variant {result.status}: {result.message}"
                    )
            else:
                ok = result.status == "fail" and named(result, pitfall_name(path.stem))
                failed_named += ok
                if not ok:
                    got = result.pitfall.name if result.pitfall else None
                    wrong.append(
                        f"  {problem.id}/{path.name}: {result.status}, named {got}: {result.message}"
                    )
        print(
            f"{problem.id:22} outputs on {device:10} variants passed {passed}/{len(variants) + 1}  "
            f"pitfalls failed and named {failed_named}/{len(pitfalls)}",
            flush=True,
        )
    print(*wrong, sep="\n")
    print(f"{len(wrong)} files graded otherwise; {time.time() - start:.0f} s")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
