"""Precision profiles in grading (grader/profile/profiler.py through the child, the trusted child and the
reports): a failed answer is traced on a practice case and compared with the reference, a passing one is not
traced at all; the profile never changes a verdict; hidden mode traces only practice cases; a trace that fails
or hangs costs the profile, nothing else. The profile's own rules, per problem, are in
tests/test_profile.py."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from grader.command.main import main
from grader.course.cases import PROFILE_CASE, make_cases
from grader.errors import UsageError
from grader.expected import trusted
from grader.expected.output_cache import practice_store, profile_key
from grader.expected.trusted import file_digest
from grader.grading.grader import Grader
from grader.profile.profiler import ROLES
from grader.protocol.payloads import decode_profile
from grader.report.html import render_problem_html
from grader.report.plain_text import render_problem
from grader.report.profile_table import side_by_side
from grader.results import GradeReport, Status
from grader.running import isolation
from grader.running.limits import Limits

# Each call prints a line, so that the report's stdout counts the calls: the cases', and the trace's.
COUNTED = "import jax.numpy as jnp\n\n\ndef scaled_sum(x, scale):\n    print('called')\n"
RIGHT = COUNTED + "    return jnp.stack([jnp.sum(x) * scale, jnp.max(x)]).astype(jnp.float32)\n"
# Wrong twice over: the scale is forgotten, and the sum runs in float16 (line 6 of the file).
WRONG = COUNTED + (
    "    total = jnp.sum(x.astype(jnp.float16))\n"
    "    return jnp.stack([total.astype(jnp.float32), jnp.max(x)])\n"
)


def _calls(result) -> int:
    return result.stdout.count("called")


@pytest.fixture
def graded(toy_course, write_submission, settings):
    """Grades a file of source text on the toy problem: practice mode unless a secret is given."""

    def grade(source: str, secret: str | None = None, **options):
        limits = options.pop("limits", Limits(settings=settings))
        grader = Grader(toy_course, secret=secret, limits=limits, **options)
        return grader.grade_file(toy_course.problem("toy"), write_submission(source))

    return grade


def test_a_failed_answer_is_traced_and_compared_a_passing_one_is_not_traced(graded, toy_course):
    cases = len(make_cases(toy_course.problem("toy")))
    # The reference's outputs first: while they are not in, a child that asks is told to trace (on a busy
    # machine the learner's child can finish before the reference's, and a right answer was traced).
    graded(RIGHT)
    right, wrong = graded(RIGHT), graded(WRONG)
    assert right.status is Status.PASS and right.profile is None
    assert _calls(right) == cases, "a passing answer was traced: the child did not ask, or was told yes"
    assert wrong.status is Status.FAIL and _calls(wrong) > cases
    profile = wrong.profile
    assert profile is not None and profile.case == PROFILE_CASE and not profile.error
    assert any("sum at submission.py:6" in line and "float16" in line for line in profile.differences), (
        profile
    )
    sums = [e for e in profile.learner["entries"] if e["role"] == "reduction" and e["line"] == 6]
    assert sums and sums[0]["operands"] == ["float16"], profile.learner
    text = render_problem(wrong, "practice")
    assert "Where your dtypes differ from the reference's (practice case 1):" in text
    assert "submission.py:6" in text
    document = GradeReport(mode="practice", problems=(wrong,)).to_dict()
    assert document["problems"][0]["profile"]["differences"] == list(profile.differences)
    json.dumps(document, allow_nan=False)


def test_the_profile_never_changes_a_verdict(graded):
    def verdict(result) -> dict:
        document = result.to_dict()
        cases = [{k: v for k, v in case.items() if k != "seconds"} for case in document["cases"]]
        return {"cases": cases, **{key: document[key] for key in ("status", "message", "pitfall")}}

    off, on = graded(WRONG, profile="off"), graded(WRONG)
    assert off.profile is None and on.profile is not None
    assert verdict(off) == verdict(on)


def test_asked_for_every_answer_is_traced_even_a_passing_one(graded):
    right = graded(RIGHT, profile="always")
    assert right.status is Status.PASS and right.profile is not None and not right.profile.error
    table = side_by_side(right)
    assert "reduction" in table and "float32 -> float32" in table and "line of submission.py" in table
    with pytest.raises(UsageError, match="practice mode only"):
        graded(RIGHT, secret="a-secret", profile="always")


def test_hidden_mode_traces_a_practice_case_and_only_for_a_failed_answer(graded, toy_course, monkeypatch):
    started = []
    original = isolation.IsolatedRun.start

    def record(run):
        started.append(run)
        return original(run)

    monkeypatch.setattr(isolation.IsolatedRun, "start", record)
    right, wrong = graded(RIGHT, secret="a-secret"), graded(WRONG, secret="a-secret")
    assert right.status is Status.PASS and right.profile is None
    assert wrong.status is Status.FAIL and wrong.profile is not None
    assert any("at submission.py:6" in line for line in wrong.profile.differences)
    practice = {case.seed for case in make_cases(toy_course.problem("toy"))}
    profiled = [job for run in started for job in run.jobs if job.profile is not None]
    assert profiled, "nothing was traced"
    for job in profiled:
        assert job.profile.seed in practice, f"{job.label} traced a case that is not a practice case"
        assert all(case.seed in practice for case in job.cases), f"{job.label} runs hidden cases too"


def test_a_trace_that_hangs_costs_the_profile_only(graded, toy_course, settings, write_submission):
    """The child is stopped when the trace runs past the time limit; the verdict stands, and the problem
    graded after it in the same child is graded."""
    cases = len(make_cases(toy_course.problem("toy")))
    hangs = WRONG.replace(
        "    print('called')\n",
        f"    print('called')\n    _calls.append(1)\n    if len(_calls) > {cases}:\n"
        "        import time\n\n        time.sleep(60)\n",
    ).replace("import jax.numpy as jnp\n", "import jax.numpy as jnp\n\n_calls = []\n")
    grader = Grader(toy_course, limits=Limits(timeout=3, settings=settings))
    second = toy_course.solutions_dir / "toy_max.py"
    results = grader.grade_files(
        [(toy_course.problem("toy"), write_submission(hangs)), (toy_course.problem("toy_max"), second)]
    )
    assert results[0].status is Status.FAIL and "outside the tolerance" in results[0].message
    assert results[0].profile is not None
    assert results[0].profile.error.startswith("no profile: the trace stopped the process: timed out")
    assert results[1].status is Status.PASS


def test_the_reference_profile_is_kept_and_read_back(graded, toy_course, settings, monkeypatch):
    graded(WRONG)
    problem = toy_course.problem("toy")
    digest = file_digest(toy_course.reference_path(problem).read_bytes(), problem)
    kept = practice_store(settings).load_document(profile_key(digest, make_cases(problem)[PROFILE_CASE]))
    assert kept is not None and "summary" in kept
    monkeypatch.setattr(trusted, "_memo", {})  # as a fresh process finds it: only the store remembers
    monkeypatch.setattr(trusted, "_profiles", {})
    started, original = [], isolation.IsolatedRun.start
    monkeypatch.setattr(
        isolation.IsolatedRun, "start", lambda run: started.append(run.trusted) or original(run)
    )
    again = graded(WRONG)
    assert again.profile is not None and again.profile.differences
    assert started == [False], "the reference ran again although its outputs and profile were kept"


def test_a_forged_profile_event_is_checked_entry_by_entry():
    good = {"role": "matmul", "primitive": "dot_general", "operands": ["float32"], "result": "float32"}
    forged = {
        "entries": [
            good | {"line": 3, "file": "stub.py"},
            good | {"line": 3, "file": "stub.py"},  # the same again: counted, not repeated
            {"role": "not a role", "operands": ["x"], "result": "x"},
            {"role": "cast", "operands": [], "result": "float16"},
            good | {"line": "3", "operands": [1, 2]},
            "garbage",
        ],
        "summary": {"matmul": {"forged": 99}},  # recomputed from the entries, never taken
        "seconds": "soon",
    }
    decoded = decode_profile(forged)
    assert decoded["entries"] == [good | {"line": 3, "file": "stub.py", "count": 2}]
    assert decoded["summary"] == {"matmul": {"float32 -> float32": 2}}
    assert decoded["seconds"] == 0.0
    assert decode_profile("garbage") == {"error": "the profile could not be read"}
    assert decode_profile({"error": "x" * 1000})["error"] == "x" * 300


def test_a_function_graded_in_this_process_is_traced_here_and_shown_in_the_notebook_report(
    toy_course, write_submission, settings
):
    path = write_submission(WRONG, name="notebook_cell.py")
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    result = Grader(toy_course, limits=Limits(settings=settings)).grade_function(
        toy_course.problem("toy"), namespace["scaled_sum"]
    )
    assert result.status is Status.FAIL
    assert any("sum at notebook_cell.py:6" in line for line in result.profile.differences)
    html = render_problem_html(result, "practice")
    assert "Where your dtypes differ from the reference&#x27;s" in html and "notebook_cell.py:6" in html


def test_the_json_report_of_a_profiled_answer_follows_its_schema(graded):
    schema = json.loads((Path(__file__).parent.parent / "schemas" / "grade_report.schema.json").read_text())
    assert schema["$defs"]["profile_entry"]["properties"]["role"]["enum"] == list(ROLES)
    validator = jsonschema.Draft202012Validator(schema)
    for result in (graded(WRONG), graded(RIGHT, profile="always")):
        validator.validate(json.loads(json.dumps(GradeReport(mode="practice", problems=(result,)).to_dict())))


def test_the_cli_prints_both_profiles_side_by_side_on_request_in_practice_mode_only(
    toy_course, write_submission, capsys, monkeypatch
):
    wrong = str(write_submission(WRONG))
    assert main(["toy", "--submission", wrong, "--profile"]) == 1
    out = capsys.readouterr().out
    assert "toy: precision profile on practice case 1, your code beside the reference" in out
    assert "!float16 -> float16" in out and "sum at submission.py:6" in out
    assert main(["toy", "--submission", wrong, "--no-profile"]) == 1
    assert "Where your dtypes differ" not in capsys.readouterr().out
    assert main(["toy", "--submission", wrong, "--profile", "--no-profile"]) == 2
    monkeypatch.setenv("GRADE_SECRET", "a-secret")
    assert main(["toy", "--submission", wrong, "--profile"]) == 2
    assert "practice mode only" in capsys.readouterr().err


def test_a_batch_never_traces_its_gradebook_has_no_room_for_profiles(toy_course, tmp_path, monkeypatch):
    modes = []
    original = Grader.__init__

    def record(self, *args, **kwargs):
        original(self, *args, **kwargs)
        modes.append(self.profile)

    monkeypatch.setattr(Grader, "__init__", record)
    learner = tmp_path / "roster" / "bob" / "problems" / "toy"
    learner.mkdir(parents=True)
    (learner / "stub.py").write_text(WRONG)
    assert main(["batch", str(tmp_path / "roster"), "--out", str(tmp_path / "g.csv"), "--jobs", "1"]) == 0
    assert modes == ["off"]


def test_an_answer_that_raises_is_not_traced(graded, toy_course):
    raises = COUNTED + "    raise ValueError('not yet')\n"
    result = graded(raises)
    assert result.status is Status.ERROR and result.profile is None
    assert _calls(result) == len(make_cases(toy_course.problem("toy"))), "traced although it raised"


def test_code_that_needs_writable_numpy_inputs_is_profiled_in_the_child(graded):
    """Tracing cannot follow it and a run with jax arrays fails (NumPy's view of one is read-only): the
    profile runs it once more as graded, in a fresh folder of its own."""
    numpy_first = COUNTED.replace("import jax.numpy", "import numpy as np\nimport jax.numpy") + (
        "    x = np.asarray(x)\n"
        "    x *= 1.0\n"
        "    total = jnp.sum(jnp.asarray(x).astype(jnp.float16))\n"
        "    return jnp.stack([total.astype(jnp.float32), jnp.max(x)])\n"
    )
    result = graded(numpy_first)
    assert result.status is Status.FAIL and not result.profile.error, result.profile
    assert any("sum at submission.py:9" in line for line in result.profile.differences)


def test_a_compacted_profile_keeps_its_counts_and_a_bad_count_is_dropped():
    entry = {
        "role": "cast",
        "primitive": "convert_element_type",
        "operands": ["float32"],
        "result": "float16",
    }
    sent = {"entries": [entry | {"count": 3}, entry, entry | {"count": 0}, entry | {"count": -5}]}
    decoded = decode_profile(sent)
    assert decoded["entries"] == [entry | {"count": 6}]  # 3 + 1, and the bad counts count once each
    assert decoded["summary"] == {"cast": {"float32 -> float16": 6}}
