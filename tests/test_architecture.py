"""The package's architecture, checked from its imports (CONTRIBUTING.md, "The engine: a folder per part"):
which part of grader/ may import which, no cycle between parts, the learner's child importing nothing of the
grader, and folders and modules small enough to read."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "grader"

# Plain data: the values every part passes around. They import only each other.
PLAIN = {"errors", "results", "sandbox_report", "settings", "behaviours"}
# What each part may import besides itself. A part is a subpackage of grader/ or a module at its top.
ALLOWED = {
    "errors": set(),
    "sandbox_report": set(),
    "results": {"sandbox_report"},
    "behaviours": {"results"},  # what a class computed, and its groups (grade insights)
    "settings": {"errors"},
    "course": PLAIN,
    "child": set(),  # runs beside learner code, loaded by path: nothing of the grader at all
    "profile": {"results"},  # and its three modules loaded in the child nothing (below)
    "report": PLAIN | {"profile"},  # renders results; the profile's roles and signatures are its vocabulary
    "protocol": PLAIN | {"child", "profile"},  # what a child may say, decoded
    "running": PLAIN | {"course", "protocol"},
    "expected": PLAIN | {"course", "running"},
    "grading": PLAIN | {"course", "child", "profile", "protocol", "running", "expected"},
    "authoring": PLAIN | {"course", "protocol", "running", "expected", "grading"},
    # a class at once; the profile's vocabulary says where a class's dtypes depart (grade insights)
    "classroom": PLAIN | {"course", "running", "expected", "grading", "report", "profile"},
    "command": PLAIN | {"course", "running", "expected", "grading", "authoring", "classroom", "report"},
}
ENTRY_POINTS = {"__init__", "__main__", "cli", "notebook"}  # the public surface: may import any part
LOADED_IN_THE_CHILD = {"child/" + name for name in ("main", "calls", "describe", "limits", "landlock")}
LOADED_IN_THE_CHILD |= {"child/seccomp", "child/process_namespace", "child/privileges"}
LOADED_IN_THE_CHILD |= {"profile/" + name for name in ("profiler", "walk", "trace")}
MAX_MODULES = 12
MAX_LINES = 300


def part_of(dotted: str, package: Path = PACKAGE) -> str:
    """The part `grader.x.y` belongs to: the subpackage x, or the top-level module x; `grader.name` where
    name is no module is the package's own attribute (its __init__)."""
    bits = dotted.split(".")
    if len(bits) > 1 and ((package / bits[1]).is_dir() or (package / f"{bits[1]}.py").is_file()):
        return bits[1]
    return "__init__"


def grader_imports(path: Path) -> set[str]:
    """Every module of the grader that `path` imports, at its top or inside a function, as dotted names
    (`from grader import x` counts as grader.x, which is the package's own attribute when x is no module)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.split(".")[0] == "grader"}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "grader":
            if node.module == "grader":
                found |= {f"grader.{alias.name}" for alias in node.names}
            else:
                found.add(node.module)
    return found


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package by its path below grader/, without .py ("running/isolation")."""
    return {str(path.relative_to(package).with_suffix("")): path for path in sorted(package.rglob("*.py"))}


def part_graph(package: Path = PACKAGE) -> dict[tuple[str, str], list[str]]:
    """(importing part, imported part) -> the modules that import across that edge."""
    edges: dict[tuple[str, str], list[str]] = {}
    for name, path in modules(package).items():
        mine = name.split("/")[0]
        for imported in grader_imports(path):
            other = part_of(imported, package)
            if other != mine:
                edges.setdefault((mine, other), []).append(name)
    return edges


def forbidden_edges(package: Path = PACKAGE) -> list[str]:
    found = []
    for (mine, other), where in sorted(part_graph(package).items()):
        if mine in ENTRY_POINTS:
            continue
        if mine not in ALLOWED:
            found.append(f"{mine} is a part the architecture does not know (add it to ALLOWED)")
        elif other not in ALLOWED[mine]:
            found.append(f"{mine} imports {other} ({', '.join(where)})")
    return found


def cycles(package: Path = PACKAGE) -> list[list[str]]:
    """The cycles between parts, each as a path that comes back to its start."""
    graph: dict[str, set[str]] = {}
    for mine, other in part_graph(package):
        graph.setdefault(mine, set()).add(other)
    found, state = [], {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                found.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


def test_each_part_imports_only_what_it_may():
    assert forbidden_edges() == []


def test_no_cycle_between_parts():
    assert cycles() == []


def test_what_runs_in_the_learners_child_imports_nothing_of_the_grader():
    everything = modules()
    assert set(everything) >= LOADED_IN_THE_CHILD, "a module loaded in the child is gone or moved"
    for name in sorted(LOADED_IN_THE_CHILD):
        assert grader_imports(everything[name]) == set(), f"{name} imports the grader: the child cannot"


def test_folders_and_modules_stay_small():
    for folder in [PACKAGE, *sorted(p for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__")]:
        count = len([p for p in folder.glob("*.py") if p.name != "__init__.py"])
        assert count <= MAX_MODULES, f"{folder.name}/ has {count} modules"
        assert (folder / "__init__.py").is_file()
        doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8")))
        assert doc and (folder == PACKAGE or "import" in doc), f"{folder.name}/ says not what it may import"
    for name, path in modules().items():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        assert lines < MAX_LINES, f"{name}.py has {lines} lines"


@pytest.mark.parametrize(
    "module, line, broken",
    [
        ("child/describe.py", "from grader.settings import Settings", "child/describe imports the grader"),
        ("report/markdown.py", "from grader.running import limits", "report imports running"),
        ("course/hints.py", "from grader.grading import compare", "course imports grading"),
        ("running/jobs.py", "from grader.grading import naming", "a cycle: running -> grading -> running"),
    ],
)
def test_a_broken_rule_is_found(tmp_path, module, line, broken):
    """Mutants: each line, added to a copy of the package, breaks one rule, and the checks above see it."""
    import shutil

    copy = tmp_path / "grader"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    target = copy / module
    target.write_text(target.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
    name = module.removesuffix(".py")
    found = forbidden_edges(copy) + [" -> ".join(c) for c in cycles(copy)]
    if name in LOADED_IN_THE_CHILD:
        found += [name] if grader_imports(target) else []
    assert found, f"not found: {broken}"
    assert forbidden_edges(PACKAGE) == [] and cycles(PACKAGE) == []
