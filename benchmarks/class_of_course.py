"""A class made from the course's own files, for `grade insights`' measurements and tests.

Each natural mistake (solutions/mistakes/<id>/) and each pitfall file (solutions/pitfalls/<id>/, a pitfall
or one of its forms) is handed in by three learners who wrote it differently, generated mechanically:

- `as_is`: the file as it is;
- `wrapped`: the function renamed and wrapped, so that its float32 array inputs reach it as jax arrays and
  its outputs come back as numpy arrays (same signature);
- `reordered`: the top-level functions in reverse order (within each run of definitions) and every local
  variable of every function renamed.

The correct variants (solutions/variants/<id>/) are handed in as they are. Learner k hands in the k-th
submission of each problem's list (cycling through it for a class of a given size). `truth` says what
each learner's file of each problem is: `mistake:NAME`, `pitfall:LABEL` or `variant:NAME`, with the form.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.course.problems import Course, Problem  # noqa: E402

FORMS = ("as_is", "wrapped", "reordered")

_WRAPPER = """

def {function}({params}):
    import jax as _jax
    import jax.numpy as _jnp
    import numpy as _np

    def _in(a):
        return _jnp.asarray(a) if isinstance(a, _np.ndarray) and a.dtype == _np.float32 else a

    def _out(a):
        return _np.asarray(a) if isinstance(a, _jax.Array) else a

    result = {inner}({call})
    return _jax.tree_util.tree_map(_out, result)
"""


def wrapped(source: str, function: str) -> str:
    """The file with `function` renamed and wrapped in np/jnp conversions of its inputs and outputs."""
    tree = ast.parse(source)
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function)
    inner = f"_{function}_as_written"
    node.name = inner
    args = node.args
    call = [f"_jax.tree_util.tree_map(_in, {a.arg})" for a in [*args.posonlyargs, *args.args]]
    call += [f"*{args.vararg.arg}"] if args.vararg else []
    call += [f"{a.arg}={a.arg}" for a in args.kwonlyargs]
    call += [f"**{args.kwarg.arg}"] if args.kwarg else []
    params = ast.unparse(args)
    return ast.unparse(tree) + _WRAPPER.format(
        function=function, params=params, inner=inner, call=", ".join(call)
    )


class _Renamer(ast.NodeTransformer):
    def __init__(self, names: set[str]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id in self.names:
            node.id = f"my_{node.id}"
        return node


def _locals(function: ast.FunctionDef) -> set[str]:
    """The names a function assigns, less every parameter of it or of anything nested in it, and its
    global and nonlocal names: renaming these everywhere in it changes nothing it computes."""
    stored = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    params = {a.arg for n in ast.walk(function) if isinstance(n, ast.arguments) for a in _all_args(n)}
    declared = {
        name for n in ast.walk(function) if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names
    }
    return stored - params - declared


def _all_args(args: ast.arguments) -> list[ast.arg]:
    found = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    return found + [a for a in (args.vararg, args.kwarg) if a is not None]


def reordered(source: str) -> str:
    """The file with each run of top-level function definitions reversed and their locals renamed."""
    tree = ast.parse(source)
    body, run = [], []
    for node in [*tree.body, None]:
        if isinstance(node, ast.FunctionDef):
            _Renamer(_locals(node)).visit(node)
            run.append(node)
            continue
        body += run[::-1] + ([node] if node is not None else [])
        run = []
    tree.body = body
    return ast.unparse(tree) + "\n"


def written(source: str, function: str, form: str) -> str:
    if form == "as_is":
        return source
    return wrapped(source, function) if form == "wrapped" else reordered(source)


def submissions(course: Course, problem: Problem) -> list[tuple[str, str]]:
    """(truth, source) of every submission of the problem the class hands in: each mistake and pitfall
    file in every form, then each correct variant as it is."""
    files = [(f"mistake:{name}", path) for name, path in course.mistake_paths(problem).items()]
    files += [(f"pitfall:{label}", path) for label, path in course.pitfall_paths(problem).items()]
    handed = [
        (f"{truth}@{form}", written(path.read_text(encoding="utf-8"), problem.function, form))
        for truth, path in files
        for form in FORMS
    ]
    handed += [(f"variant:{name}", path.read_text()) for name, path in course.variant_paths(problem).items()]
    return handed


def build_class(
    course: Course, problems: list[Problem], roster: Path, learners: int | None = None
) -> dict[tuple[str, str], str]:
    """Writes the class's checkouts under `roster`; returns (learner, problem) -> truth. By default as many
    learners as the longest list of submissions, each submission handed in once (a learner past the end of a
    shorter list hands in nothing for that problem); with `learners`, the lists cycle."""
    handed = {problem.id: submissions(course, problem) for problem in problems}
    count = learners or max(len(items) for items in handed.values())
    truth = {}
    for k in range(count):
        learner = f"learner{k:04d}"
        for problem in problems:
            if learners is None and k >= len(handed[problem.id]):
                continue
            label, source = handed[problem.id][k % len(handed[problem.id])]
            stub = roster / learner / "problems" / problem.id / "stub.py"
            stub.parent.mkdir(parents=True, exist_ok=True)
            stub.write_text(source, encoding="utf-8")
            truth[(learner, problem.id)] = label
    return truth
