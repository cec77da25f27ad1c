"""`grade new ID`: the skeleton of a new problem, every file CONTRIBUTING.md lists, with TODOs.

The skeleton is a draft (`draft = true` in problem.toml): `grade list`, `grade --all`, export and the
project's tests leave it out until the author removes the flag, and `grade check ID` reports it as
incomplete (not broken) while a `TODO(grade new)` is left in any of its files.
"""

from __future__ import annotations

import keyword
import re
from pathlib import Path

from grader.authoring.check_files import MIN_MISTAKES, TODO_MARKER
from grader.authoring.docs import MARGINS, PITFALL_TABLE, RULES, TOLERANCE
from grader.course.problems import Course
from grader.errors import UsageError

_ID = re.compile(r"^[a-z][a-z0-9_]*$")

PROBLEM_TOML = '''\
# {todo}: describe the problem, then remove `draft = true`.
draft = true
title = "{todo}: a one-line title for `grade list`"
teaches = "{todo}: one line for the README's problem table (grade docs)"
function = "solve"                      # the function the learner writes
parameters = ["x", "lr"]                # its parameters, in order (the stub's signature)
returns = "float32 array of shape (num_steps,): {todo}"
order = {order}
hidden_cases_per_family = 2

[tolerance]                             # justify both in the statement's Tolerance section
rtol = 0.0009765625
atol = 0.0

# The rules the statement's Task section states, and the files that break them (grade check, grade docs).
[rules.example_rule]
step = "1"
rule = "{todo}: what step 1 requires, in a few words"
broken_by = ["pitfall:example_mistake"]  # files that fail on every secret; or not_graded = "why" + accepted

[pitfalls.example_mistake]
title = "{todo}: the mistake, in a few words"
explanation = """{todo}: one paragraph in the second person: what the mistake is and what it does to the \\
numbers. It must fit every learner whose outputs match the pitfall file's."""
families = ["example_family"]           # the families built to expose it; [] if the numbers cannot
'''

CASES = '''\
"""Public case generator for {id} (numpy only: the secret is the seed, not this code)."""

from __future__ import annotations

import numpy as np


def example_family(rng: np.random.Generator) -> dict[str, object]:
    """{todo}: design inputs that push each pitfall listed for this family far outside the tolerance."""
    return {{"x": rng.normal(size=(16, 4)).astype(np.float32), "lr": 0.5}}


FAMILIES = {{"example_family": example_family}}
'''

STATEMENT = """\
# {id}: {todo}: title

{todo}: why, in a paragraph of our own words: what the recipe is for and what goes wrong without it.

## Task

Write `solve(x, lr)` in `stub.py`: {todo}: what it computes, in a sentence.

1. {todo}: the exact recipe, numbered: every cast, and every operation whose order changes the numbers.
   Every rule the grader enforces is a step; nothing it does not enforce is called a rule.

## Accepted forms, and look-alikes that fail

| passes | fails (named) |
|---|---|
| {todo}: a correct form that differs from the steps | {todo}: its look-alike mistake (`example_mistake`) |

{todo}: what is not graded (forms the cases cannot tell apart), said as such.

## The rules, and what breaking each does

A file that breaks a rule fails on every secret (with the pitfall that describes it, where one does),
unless the rule is not graded: then the cases cannot tell it from the recipe, and it passes.

{rules_start}
{rules_end}

## Inputs and output

| name | dtype | shape | meaning |
|---|---|---|---|
| `x` | float32 | `(N, D)` | {todo}: what it is, and its range in the cases |

{todo}: the output's dtype, shape, and what each entry is.

## Tolerance

{todo}: rtol and atol in one sentence (their derivation goes in GRADING.md).

## Pitfalls

{pitfall_table_start}
{pitfall_table_end}

How the cases are built, why each mistake shows on its families, and the measured margins:
[GRADING.md](GRADING.md).
"""

GRADING = """\
# How {id} is graded

The statement ([README.md](README.md)) says what to write; this page says how the grader tells right from
wrong. Nothing here is a rule the statement does not state.

## Case families

- `example_family`: {todo}: how the cases are built and what they make visible.

## Tolerance

{tolerance_start}
{tolerance_end}

{todo}: where rtol and atol come from: the compute dtype, and why correct variants can differ. The numbers
above and below are written by `grade docs` from `grade check {id} --secrets 20 --families --record`, run
on every platform the project declares.

## Why each mistake shows

### `example_mistake`: {todo}: the mistake

{todo}: what it does to the numbers, on which families, or that the cases cannot show it.

## Measured margins

{margins_start}
{margins_end}

## Practice and hidden cases

`grade {id}` runs the practice cases (one per family); with `GRADE_SECRET` set, the hidden cases.
"""

STUB = '''\
"""{id}: the recipe is in README.md."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


def solve(x, lr):
    """{todo}: what the learner writes, with dtypes and shapes of arguments and result."""
    raise NotImplementedError("{id}: fill in solve")
'''

HINTS = """\
# Hints for {id}

## Hint 1

{todo}: the most general hint.

## Hint 2

{todo}: a more specific one.
"""

SUBMISSION = '''\
"""{what}"""

from __future__ import annotations

import jax.numpy as jnp


def solve(x, lr):
    raise NotImplementedError("{todo}: write this file")
'''


def _check_id(course: Course, problem_id: str) -> None:
    if not _ID.match(problem_id) or keyword.iskeyword(problem_id):
        raise UsageError(f"{problem_id!r} is not a problem id: use lower case letters, digits and _")
    if (course.problems_dir / problem_id).exists():
        raise UsageError(f"problems/{problem_id} already exists")


def new_problem(course: Course, problem_id: str) -> list[Path]:
    """Writes the skeleton of problem `problem_id` and returns the files written."""
    _check_id(course, problem_id)
    order = max([p.order for p in course.problems(drafts=True)] + [0]) + 1
    fields = {"id": problem_id, "todo": TODO_MARKER, "order": order}
    fields.update(pitfall_table_start=PITFALL_TABLE.start, pitfall_table_end=PITFALL_TABLE.end)
    fields.update(rules_start=RULES.start, rules_end=RULES.end)
    fields.update(tolerance_start=TOLERANCE.start, tolerance_end=TOLERANCE.end)
    fields.update(margins_start=MARGINS.start, margins_end=MARGINS.end)
    folder = course.problems_dir / problem_id
    solutions = course.solutions_dir
    files = {
        folder / "problem.toml": PROBLEM_TOML,
        folder / "cases.py": CASES,
        folder / "README.md": STATEMENT,
        folder / "GRADING.md": GRADING,
        folder / "stub.py": STUB,
        folder / "hints.md": HINTS,
        solutions / f"{problem_id}.py": SUBMISSION.replace("{what}", "Reference for {id}."),
        solutions / "pitfalls" / problem_id / "example_mistake.py": SUBMISSION.replace(
            "{what}", "Pitfall example_mistake: {todo}: the one mistake this file makes."
        ),
    }
    for number in range(1, 4):
        files[solutions / "variants" / problem_id / f"variant_{number}.py"] = SUBMISSION.replace(
            "{what}", "Variant: {todo}: how this correct solution is written differently from the others."
        )
    for number in range(1, MIN_MISTAKES + 1):
        files[solutions / "mistakes" / problem_id / f"mistake_{number}.py"] = SUBMISSION.replace(
            "{what}", "Mistake: {todo}: a natural mistake that no pitfall describes, in a learner's words."
        )
    for path, template in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(template.format(**fields), encoding="utf-8")
    return list(files)
