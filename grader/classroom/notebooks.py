"""The problem notebooks (`grade notebooks`, and `grade export`): each made from a problem's statement, stub
and hints, never edited by hand.

A notebook holds the statement in Markdown cells, a set-up cell that installs the learner copy (from a path
or a git URL the instructor sets), the stub in a code cell, the hints folded away, and a last cell that
grades the function the notebook defines (grader/notebook.py). The same problem and set-up give the same
bytes: cell ids are fixed names, not random.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from pathlib import Path
from typing import TYPE_CHECKING

from grader.course.hints import load_hints
from grader.course.problems import Problem
from grader.errors import UsageError

if TYPE_CHECKING:
    import nbformat

NOTEBOOKS_DIR = "notebooks"  # in a course or learner copy: notebooks/<id>.ipynb
EXTRA = "notebook"  # the package extra the set-up cell installs with the course (matplotlib, for the plots)
CLONE_DIR = "course"  # where the set-up cell clones a git URL, beside the notebook's working folder
_GRADE_CELL = "from grader.notebook import grade_here\n\ngrade_here({problem}, {function})"
_METADATA = {
    "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
    "language_info": {"name": "python"},
}


def _statement_cells(problem: Problem) -> tuple[str, list[str]]:
    """Splits the statement into its opening (the title and what precedes the first `## ` section) and one
    Markdown text per section; a `## ` line inside a code block does not start a section."""
    parts: list[list[str]] = [[]]
    fenced = False
    for line in problem.statement_path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif line.startswith("## ") and not fenced:
            parts.append([])
        parts[-1].append(line)
    texts = [_links_from_notebooks("\n".join(lines).strip(), problem) for lines in parts]
    return texts[0], [text for text in texts[1:] if text]


def _links_from_notebooks(text: str, problem: Problem) -> str:
    """The statement's relative links (to GRADING.md, say) as they lead from the notebooks' folder."""
    return re.sub(
        r"\]\((?![a-z][a-z0-9+.-]*:|#|/)([^)\s]+)\)",
        lambda link: f"](../problems/{problem.id}/{link.group(1)})",
        text,
    )


def _git_source(spec: str) -> tuple[str, str]:
    """Splits `git+URL[@REF]` into the URL to clone and the branch or tag (empty: the default)."""
    url = spec.removeprefix("git+").split("#", 1)[0]
    parts = urllib.parse.urlsplit(url)
    path, _, ref = parts.path.rpartition("@") if "@" in parts.path else (parts.path, "", "")
    return urllib.parse.urlunsplit(parts._replace(path=path)), ref


def _quoted(text: str) -> str:
    """A Python string literal in double quotes (JSON's string syntax is Python's, for these texts)."""
    return json.dumps(text)


def _run(*argv: str) -> str:
    """A subprocess.run line of the set-up cell; "sys.executable" stands for the kernel's own Python."""
    words = ["sys.executable" if word == "sys.executable" else _quoted(word) for word in argv]
    return f"subprocess.run([{', '.join(words)}], check=True)"


def check_install(install: str) -> None:
    """Raises UsageError unless `install` is what a set-up cell can install: a folder or a git+URL."""
    if not install.startswith("git+") and ("://" in install or install.startswith("-") or not install):
        raise UsageError(
            f"the set-up cell installs a folder or a git+URL of the learner copy, not {install!r}"
        )


# JAX on the CPU for the whole kernel, set before jax is first imported. Grading calls the function on the CPU
# anyway, but on a GPU runtime code that looks devices up (an Orbax restore without a target) found the GPU
# and failed, and three mistakes lost their names (docs/platforms.md; measured on an H200).
JAX_ON_THE_CPU = (
    "# JAX runs on the CPU in this notebook, whatever the runtime has: the grader compares your function",
    "# with outputs made on the CPU (these problems take seconds there). Delete the line to use a GPU; the",
    "# grade is then less exact (see the course's docs/platforms.md).",
    'os.environ["JAX_PLATFORMS"] = "cpu"',
    "",
)


def setup_source(install: str) -> str:
    """The set-up cell: installs the learner copy, with the `notebook` extra, unless the grader is already
    importable. `install` is a folder (relative to the notebook's folder, as Jupyter starts the kernel
    there) or a `git+URL[@REF]`, which the cell clones beside the notebook, where the grader finds it."""
    check_install(install)
    modules = ["importlib", "os", "subprocess", "sys"]
    if install.startswith("git+"):
        url, ref = _git_source(install)
        branch = ("--branch", ref) if ref else ()
        steps = [
            f"    if not os.path.isdir({_quoted(CLONE_DIR)}):",
            "        " + _run("git", "clone", "-q", "--depth", "1", *branch, url, CLONE_DIR),
        ]
        install = f"./{CLONE_DIR}"
    else:
        steps = []
    steps.append("    " + _run("sys.executable", "-m", "pip", "install", "-q", f"{install}[{EXTRA}]"))
    return "\n".join(
        [
            "# Set-up: run once. Installs this course's grader (with jax, flax, optax and matplotlib)",
            "# where it is not installed yet.",
            *(f"import {module}" for module in modules),
            "",
            *JAX_ON_THE_CPU,
            "try:",
            "    import grader.notebook",
            "except ImportError:",
            *steps,
            "    importlib.invalidate_caches()",
        ]
    )


def _how_to(problem: Problem) -> str:
    return (
        "**How this notebook works.** Run the set-up cell below once. Read the statement, then write "
        f"`{problem.signature}` in the code cell after it, which holds the problem's `stub.py`. The last "
        "cell grades the function you defined on the practice cases and shows the report that "
        f"`grade {problem.id}` prints; run it after every change. The hints are folded away above it."
    )


def _hints_text(problem: Problem) -> str:
    hints = load_hints(problem)
    folded = [
        f"<details><summary>Hint {level} of {len(hints)}</summary>\n\n{hint}\n\n</details>"
        for level, hint in enumerate(hints, start=1)
    ]
    return "\n\n".join(["## Hints", "Open one at a time: each says more than the one before.", *folded])


def build_notebook(problem: Problem, install: str) -> nbformat.NotebookNode:
    """Returns the notebook of `problem`, whose set-up cell installs from `install` (see setup_source)."""
    import nbformat  # here, not above: every `grade` command imports this module, few write notebooks
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    opening, sections = _statement_cells(problem)
    cells = [
        new_markdown_cell(opening, id="statement-0"),
        new_markdown_cell(_how_to(problem), id="how-to"),
        new_code_cell(setup_source(install), id="setup"),
        *(new_markdown_cell(text, id=f"statement-{n}") for n, text in enumerate(sections, start=1)),
        new_markdown_cell(f"## Your code\n\n`{problem.signature}`, as in `stub.py`:", id="your-code"),
        new_code_cell(problem.stub_path.read_text(encoding="utf-8").strip(), id="stub"),
        new_markdown_cell(_hints_text(problem), id="hints"),
        new_code_cell(_GRADE_CELL.format(problem=_quoted(problem.id), function=problem.function), id="grade"),
    ]
    notebook = new_notebook(cells=cells, metadata=_METADATA)
    nbformat.validate(notebook)
    return notebook


def notebook_text(problem: Problem, install: str) -> str:
    """Returns the notebook file's content: the same bytes for the same problem files and `install`."""
    import nbformat

    return nbformat.writes(build_notebook(problem, install)) + "\n"


def write_notebooks(problems: list[Problem], out: Path, install: str, force: bool = False) -> list[str]:
    """Writes `out/<id>.ipynb` for each problem and returns a line per notebook for the user. A notebook
    that differs from what would be written (a learner's work, or made from older files) is kept unless
    `force`."""
    out.mkdir(parents=True, exist_ok=True)
    lines = []
    for problem in problems:
        path = out / f"{problem.id}.ipynb"
        text = notebook_text(problem, install)
        old = path.read_text(encoding="utf-8") if path.is_file() else None
        if old == text:
            lines.append(f"{path}: unchanged")
        elif old is not None and not force:
            lines.append(f"{path}: kept, it differs from the problem's files (--force overwrites it)")
        else:
            path.write_text(text, encoding="utf-8")
            lines.append(f"{path}: written")
    return lines
