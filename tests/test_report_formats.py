"""The junit, gradescope and github report formats, each checked by a real parser or schema, on results
of real grading runs of the toy course and on hand-built results for the edge cases."""

from __future__ import annotations

import io
import json
import re
import shutil
import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace
from pathlib import Path

import jsonschema
import junitparser
import pytest
from conftest import TEST_SECRET, TOY_ROOT

from grader.course.problems import Course
from grader.grading.grader import Grader
from grader.report import FORMATS, render, write_reports
from grader.report.github import append_step_summary, render_github, render_step_summary
from grader.report.gradescope import render_gradescope
from grader.report.junit import render_junit
from grader.report.plain_text import render_problem, render_text
from grader.results import CaseResult, GradeReport, PrecisionProfile, ProblemResult, Status

SUBMISSIONS = Path(__file__).parent / "submissions"
SCHEMA = Path(__file__).parent / "schemas" / "gradescope_results.schema.json"
# The four kinds of real result: where each submission lies in the course copy, relative to its root.
KINDS = {
    "pass": "solutions/toy.py",
    "pitfall": "solutions/pitfalls/toy/forgot_scale.py",
    "raises": "work/raises_in_a_helper.py",
    "syntax": "work/syntax_error.py",
}
# A syntax error below the function, so that its line differs from the `def` line.
UNCLOSED = "work/unclosed.py", "def scaled_sum(x, scale):\n    return x\n\n\nBROKEN = [1, 2\n"


# --- real grading results --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def course_root(tmp_path_factory) -> Path:
    """A copy of the toy course, with two broken submissions from tests/submissions in its work/ folder."""
    root = tmp_path_factory.mktemp("formats") / "course"
    shutil.copytree(TOY_ROOT, root)
    (root / "work").mkdir()
    for name in ("raises_in_a_helper.py", "syntax_error.py"):
        shutil.copy(SUBMISSIONS / name, root / "work" / name)
    path, source = UNCLOSED
    (root / path).write_text(source, encoding="utf-8")
    return root


@pytest.fixture
def in_course(course_root, monkeypatch) -> Path:
    """Works in the course copy, where the reports' relative submission paths lead."""
    monkeypatch.chdir(course_root)
    return course_root


@pytest.fixture(scope="module")
def graded(course_root) -> dict[str, ProblemResult]:
    """Real results, graded from the course root as `grade` is run: KINDS in practice mode, plus
    "toy_max" (a pass on the second problem), "hidden" (the pitfall in hidden mode) and "unclosed"."""
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(course_root)
        patch.delenv("GRADE_SECRET", raising=False)
        course = Course(course_root)
        practice, hidden = Grader(course, secret=None), Grader(course, secret=TEST_SECRET)
        toy, toy_max = course.problem("toy"), course.problem("toy_max")
        results = {kind: practice.grade_file(toy, course_root / path) for kind, path in KINDS.items()}
        results["toy_max"] = practice.grade_file(toy_max, course_root / "solutions/toy_max.py")
        results["hidden"] = hidden.grade_file(toy, course_root / KINDS["pitfall"])
        results["unclosed"] = practice.grade_file(toy, course_root / UNCLOSED[0])
    return results


def test_the_real_results_are_the_four_kinds_the_format_tests_rely_on(graded):
    assert [graded[kind].status for kind in KINDS] == [Status.PASS, Status.FAIL, Status.ERROR, Status.ERROR]
    assert graded["pitfall"].pitfall and graded["pitfall"].pitfall.name == "forgot_scale"
    assert all(case.traceback for case in graded["raises"].cases)
    assert all(case.status is Status.NOT_RUN for case in graded["syntax"].cases)
    assert all(len(graded[kind].cases) == 2 for kind in KINDS)


def report_of(*results: ProblemResult, mode: str = "practice") -> GradeReport:
    return GradeReport(mode=mode, problems=results)


def problem(status: Status = Status.FAIL, cases: tuple[CaseResult, ...] = (), **fields) -> ProblemResult:
    """A hand-built result for edge cases that grading the toy course does not produce."""
    defaults = dict(problem="toy", title="Toy", status=status, submission="stub.py", message="why")
    return ProblemResult(**(defaults | fields), cases=cases, function="scaled_sum")


def test_every_new_format_is_registered():
    assert FORMATS == ("text", "json", "junit", "gradescope", "github")


# --- junit -----------------------------------------------------------------------------------------

# (tests, failures, errors, skipped) of each kind's suite: a load failure is two errors, not two skips.
JUNIT_COUNTS = {"pass": (2, 0, 0, 0), "pitfall": (2, 2, 0, 0), "raises": (2, 0, 2, 0), "syntax": (2, 0, 2, 0)}


def parse_junit(xml: str) -> tuple[junitparser.JUnitXml, ET.Element]:
    """Parses the report with junitparser and with ElementTree, from the UTF-8 bytes a file would hold."""
    assert xml.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    data = xml.encode("utf-8")
    return junitparser.JUnitXml.fromstring(data), ET.fromstring(data)


def suite_counts(suite: junitparser.TestSuite) -> tuple[int, int, int, int]:
    return suite.tests, suite.failures, suite.errors, suite.skipped


def outcomes(suite: junitparser.TestSuite) -> list[tuple[str, str, str]]:
    """(kind, message, text) of each test case's outcome element; ("pass", "", "") for a passed case."""
    found = []
    for case in suite:
        result = case.result[0] if case.result else None
        kind = type(result).__name__.lower() if result else "pass"
        found.append((kind, result.message or "", result.text or "") if result else (kind, "", ""))
    return found


@pytest.mark.parametrize("kind", KINDS)
def test_junit_counts_each_kind_of_real_result_as_its_suite_says(graded, kind):
    document, root = parse_junit(render_junit(report_of(graded[kind])))
    (suite,) = list(document)
    assert suite.name == "toy"
    assert suite_counts(suite) == JUNIT_COUNTS[kind]
    # junitparser reads the attributes; recount the elements themselves so the attributes cannot lie
    elements = root.find("testsuite")
    recount = [
        sum(case.find(tag) is not None for case in elements.iter("testcase"))
        for tag in ("failure", "error", "skipped")
    ]
    assert (len(elements.findall("testcase")), *recount) == JUNIT_COUNTS[kind]
    names = [(case.classname, case.name) for case in suite]
    assert names == [("grade.toy", "case 1 (small)"), ("grade.toy", "case 2 (large)")]


def test_junit_failures_carry_the_case_message_the_numbers_and_the_pitfall(graded):
    result = graded["pitfall"]
    document, _ = parse_junit(render_junit(report_of(result)))
    found = outcomes(next(iter(document)))
    assert [kind for kind, _, _ in found] == ["failure", "failure"]
    for (_, message, text), case in zip(found, result.cases, strict=True):
        assert message == case.message
        assert "expected" in text and "max abs error" in text
        assert "named pitfall 'forgot_scale'" in text
    properties = {p.name: p.value for p in next(iter(document)).properties()}
    assert properties["pitfall"] == "forgot_scale" and properties["status"] == "fail"
    assert properties["mode"] == "practice" and properties["message"] == result.message


def test_junit_errors_carry_the_learners_traceback(graded):
    document, _ = parse_junit(render_junit(report_of(graded["raises"])))
    for kind, message, text in outcomes(next(iter(document))):
        assert kind == "error" and message == "raised ZeroDivisionError: division by zero"
        assert "Traceback (your code" in text and "return x / 0" in text


def test_junit_a_load_failure_is_an_error_with_the_problems_message_never_a_skip(graded):
    result = graded["syntax"]
    document, root = parse_junit(render_junit(report_of(result)))
    found = outcomes(next(iter(document)))
    assert [kind for kind, _, _ in found] == ["error", "error"]
    for _, message, text in found:
        assert message == result.message and "SyntaxError" in message
        assert all(line.strip() in text for line in result.detail.splitlines())  # the offending source
    assert root.find(".//skipped") is None


def test_junit_cases_stopped_by_an_earlier_case_are_skipped():
    cases = (
        CaseResult(0, "small", Status.ERROR, message="the process crashed (SIGSEGV)"),
        CaseResult(1, "large", Status.NOT_RUN, message="not run: an earlier case stopped the run"),
    )
    result = problem(Status.ERROR, cases, message="case 1 (small): the process crashed (SIGSEGV)")
    document, _ = parse_junit(render_junit(report_of(result)))
    suite = next(iter(document))
    assert suite_counts(suite) == (2, 0, 1, 1)
    assert [(kind, message) for kind, message, _ in outcomes(suite)] == [
        ("error", "the process crashed (SIGSEGV)"),
        ("skipped", "not run: an earlier case stopped the run"),
    ]


def test_junit_a_problem_without_cases_gets_one_errored_load_test():
    result = problem(Status.ERROR, message="no submission file at problems/toy/stub.py")
    document, _ = parse_junit(render_junit(report_of(result)))
    suite = next(iter(document))
    assert suite_counts(suite) == (1, 0, 1, 0)
    (case,) = list(suite)
    assert case.name == "load submission"
    assert outcomes(suite)[0][:2] == ("error", "no submission file at problems/toy/stub.py")


def test_junit_totals_and_times_add_up_over_problems(graded):
    results = [graded["pitfall"], graded["toy_max"], graded["syntax"]]
    document, root = parse_junit(render_junit(report_of(*results)))
    assert [suite.name for suite in document] == ["toy", "toy_max", "toy"]
    assert root.get("name") == "grade"
    assert [int(root.get(key)) for key in ("tests", "failures", "errors", "skipped")] == [5, 2, 2, 0]
    assert float(root.get("time")) == pytest.approx(sum(r.seconds for r in results), abs=0.01)
    for suite, result in zip(document, results, strict=True):
        assert suite.time == pytest.approx(result.seconds, abs=0.001)
        assert {p.name: p.value for p in suite.properties()}["status"] == str(result.status)


def test_junit_learner_output_with_control_characters_stays_well_formed_xml():
    cases = (
        CaseResult(0, "small", Status.ERROR, message="raised \x1b[31mValueError\x00", traceback="T\x08b"),
    )
    result = problem(
        Status.ERROR,
        cases,
        message='bad \x0c<&>" µ',
        stdout="\x00\x1b[31mred\tand\nnext\x7f\n",
        stderr="warn\x07\ud800 ok\r\n",
    )
    xml = render_junit(report_of(result))
    document, root = parse_junit(xml)
    suite = root.find("testsuite")
    assert suite.find("system-out").text == "[31mred\tand\nnext\x7f\n"
    assert suite.find("system-err").text == "warn ok\n"  # an XML parser normalises \r\n to \n
    assert outcomes(next(iter(document)))[0][:2] == ("error", "raised [31mValueError")
    message = {p.name: p.value for p in next(iter(document)).properties()}["message"]
    assert message == 'bad <&>" µ'


# --- gradescope ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _no_constants(name: str):
    raise AssertionError(f"non-standard JSON constant {name}")


def gradescope(report: GradeReport, validator, **options) -> dict:
    """Renders results.json, parses it as strict JSON and validates it against the schema."""
    document = json.loads(render_gradescope(report, **options), parse_constant=_no_constants)
    validator.validate(document)
    return document


def test_the_schema_rejects_what_gradescope_would_not_accept(validator):
    good = {"score": 1, "execution_time": 2, "output": "", "output_format": "text", "tests": []}
    good |= {"stdout_visibility": "hidden"}
    validator.validate(good)
    test = {"name": "t", "number": "1", "score": 0, "max_score": 1, "status": "passed", "output": ""}
    test |= {"output_format": "text", "visibility": "visible", "tags": []}
    validator.validate(good | {"tests": [test]})
    for bad in (
        good | {"tests": [test | {"status": "pass"}]},
        good | {"tests": [test | {"visibility": "after_due"}]},
        good | {"tests": [test | {"number": 1}]},
        good | {"stdout_visibility": "shown"},
        good | {"execution_time": 1.5},
        {key: value for key, value in good.items() if key != "tests"},
    ):
        with pytest.raises(jsonschema.ValidationError):
            validator.validate(bad)


@pytest.mark.parametrize("kind", KINDS)
def test_gradescope_describes_each_kind_of_real_result(graded, validator, kind):
    result = graded[kind]
    document = gradescope(report_of(result), validator)
    (test,) = document["tests"]
    assert test["name"] == f"toy: {result.title}" and test["number"] == "1"
    assert test["status"] == ("passed" if kind == "pass" else "failed")
    assert test["score"] == (1.0 if kind == "pass" else 0.0) and test["max_score"] == 1.0
    assert test["output"] == render_problem(result, "practice", color=False)
    assert "\x1b[" not in test["output"]
    assert test["tags"] == ["toy", str(result.status)] and test["visibility"] == "visible"
    assert document["score"] == test["score"]
    assert f"toy: {result.status} - {result.message}" in document["output"]
    assert document["output_format"] == "text" and document["stdout_visibility"] == "hidden"


def test_gradescope_names_the_pitfall_in_extra_data(graded, validator):
    (test,) = gradescope(report_of(graded["pitfall"]), validator)["tests"]
    assert test["extra_data"]["pitfall"]["name"] == "forgot_scale"
    assert "without multiplying by scale" in test["extra_data"]["pitfall"]["explanation"]


def test_gradescope_score_is_the_sum_of_the_weighted_problem_scores(validator):
    results = (
        problem(Status.PASS, problem="a", points=2.5),
        problem(Status.FAIL, problem="b", points=4.0),
        problem(Status.PASS, problem="c", points=1.0, seconds=2.6),
    )
    document = gradescope(report_of(*results), validator)
    assert [test["max_score"] for test in document["tests"]] == [2.5, 4.0, 1.0]
    assert [test["score"] for test in document["tests"]] == [2.5, 0.0, 1.0]
    assert document["score"] == sum(test["score"] for test in document["tests"]) == 3.5
    assert [test["number"] for test in document["tests"]] == ["1", "2", "3"]
    assert document["execution_time"] == 3
    assert "3.5 of 7.5 points" in document["output"]


def test_gradescope_real_report_over_two_problems(graded, validator):
    document = gradescope(report_of(graded["pitfall"], graded["toy_max"]), validator)
    assert [test["tags"][0] for test in document["tests"]] == ["toy", "toy_max"]
    assert document["score"] == 1.0
    assert document["output"].count("\n") == 4  # the headline, the sandbox and a line per problem
    assert "Sandbox: Landlock" in document["output"] or "Sandbox: no Landlock" in document["output"]


def test_gradescope_hidden_results_are_shown_after_the_due_date_by_default(graded, validator):
    result = graded["hidden"]
    document = gradescope(report_of(result, mode="hidden"), validator)
    assert [test["visibility"] for test in document["tests"]] == ["after_due_date"]
    assert document["visibility"] == "after_due_date", "the score too is held back"
    assert "after the due date" in document["output"]
    assert result.message not in document["output"]  # the summary must not show what the tests hide
    assert document["tests"][0]["output"] == render_problem(result, "hidden", color=False)


@pytest.mark.parametrize(
    ("visibility", "said"), [("after_published", "published"), ("hidden", "hidden"), ("visible", "toy: fail")]
)
def test_gradescope_hidden_visibility_is_configurable(graded, validator, visibility, said):
    document = gradescope(report_of(graded["hidden"], mode="hidden"), validator, hidden_visibility=visibility)
    assert [test["visibility"] for test in document["tests"]] == [visibility]
    assert said in document["output"]


def test_gradescope_practice_results_are_always_visible(graded, validator):
    document = gradescope(report_of(graded["pitfall"]), validator, hidden_visibility="hidden")
    assert document["tests"][0]["visibility"] == "visible"
    assert "visibility" not in document


@pytest.mark.parametrize("visibility", ["shown", "", "Visible", "after_due"])
def test_gradescope_rejects_an_unknown_visibility(graded, visibility):
    with pytest.raises(ValueError, match="hidden_visibility"):
        render_gradescope(report_of(graded["pass"]), hidden_visibility=visibility)


def test_gradescope_is_strict_json_so_non_finite_points_are_refused():
    with pytest.raises(ValueError):
        render_gradescope(report_of(problem(Status.PASS, points=float("inf"))))


def test_render_passes_the_visibility_to_gradescope(graded):
    text = render(
        report_of(graded["hidden"], mode="hidden"), "gradescope", hidden_visibility="after_published"
    )
    assert json.loads(text)["tests"][0]["visibility"] == "after_published"


# --- github ----------------------------------------------------------------------------------------

ANNOTATIONS = {"error", "warning", "notice"}
ANNOTATION_KEYS = {"file", "line", "endLine", "col", "endColumn", "title"}
_COMMAND = re.compile(r"::(?P<name>[a-z][a-z-]*)(?: (?P<properties>[^:\r\n]+))?::(?P<data>[^\r\n]*)")
_DATA = re.compile(r"(?:[^%\r\n]|%25|%0D|%0A)*")
_VALUE = re.compile(r"(?:[^%:,\r\n]|%25|%0D|%0A|%3A|%2C)*")
_ESCAPES = {"%25": "%", "%0D": "\r", "%0A": "\n", "%3A": ":", "%2C": ","}


@dataclass
class Command:
    name: str
    properties: dict[str, str]
    data: str


def _unescape(text: str, allowed: re.Pattern) -> str:
    if not allowed.fullmatch(text):
        raise ValueError(f"badly escaped: {text!r}")
    return re.sub(r"%(?:25|0D|0A|3A|2C)", lambda m: _ESCAPES[m.group()], text)


def parse_command(line: str) -> Command:
    """Parses one `::name key=value,...::data` line strictly: raises ValueError on anything malformed."""
    match = _COMMAND.fullmatch(line)
    if not match:
        raise ValueError(f"not a workflow command: {line!r}")
    properties: dict[str, str] = {}
    for pair in (match["properties"] or "").split(",") if match["properties"] else []:
        key, equals, value = pair.partition("=")
        if not equals or not re.fullmatch(r"[A-Za-z]+", key) or key in properties:
            raise ValueError(f"bad property {pair!r} in {line!r}")
        properties[key] = _unescape(value, _VALUE)
    command = Command(match["name"], properties, _unescape(match["data"], _DATA))
    _check_properties(command)
    return command


def _check_properties(command: Command) -> None:
    """Annotations take only their own properties, with a positive line; other commands take none."""
    allowed = ANNOTATION_KEYS if command.name in ANNOTATIONS else set()
    if not set(command.properties) <= allowed:
        raise ValueError(f"{command.name} does not take {sorted(command.properties)}")
    if not re.fullmatch(r"[1-9]\d*", command.properties.get("line", "1")):
        raise ValueError(f"bad line {command.properties['line']!r}")


def parse_workflow(output: str) -> tuple[list[Command], list[str]]:
    """Parses stdout that must be all workflow commands, apart from text between `::stop-commands::TOKEN`
    and `::TOKEN::`; returns the commands and the text lines (which the runner would not process)."""
    commands, text, token = [], [], None
    for line in output.splitlines():
        if token is not None:
            if line == f"::{token}::":
                token = None
            else:
                text.append(line)
            continue
        command = parse_command(line)
        commands.append(command)
        if command.name == "stop-commands":
            token = command.data
            if len(token) < 16:
                raise ValueError("a guessable stop-commands token")
    if token is not None:
        raise ValueError("commands were never resumed")
    return commands, text


@pytest.mark.parametrize(
    "line",
    [
        "plain text",
        ":error::one colon",
        "::error file=a:b.py::raw colon in a property",
        "::error file=a.py,line::property without a value",
        "::error file=a.py,line=0::line zero",
        "::error file=a.py,file=b.py::twice",
        "::error color=red::not an annotation property",
        "::error::50% unescaped",
        "::error::%3A is escaped only in properties",
        "::endgroup title=x::",
        "::Error::capitalised",
    ],
)
def test_the_workflow_command_parser_rejects_malformed_lines(line):
    with pytest.raises(ValueError):
        parse_command(line)


def test_the_workflow_command_parser_unescapes():
    command = parse_command("::error file=a%2Cb%3Ac.py,line=3,title=t::x%0Ay%25%0D")
    assert command == Command("error", {"file": "a,b:c.py", "line": "3", "title": "t"}, "x\ny%\r")


def line_of(path: Path, text: str) -> int:
    """The 1-based line of `path` on which `text` first appears."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


@pytest.mark.parametrize(
    ("kind", "marker", "name"),
    [
        ("raises", "return x / 0", "error"),  # the deepest frame in the learner's file, not the caller's
        ("syntax", "def scaled_sum(x, scale)", "error"),  # the line the SyntaxError names
        ("unclosed", "BROKEN = [", "error"),  # ... even when the file has a good `def` above it
        ("pitfall", "def scaled_sum", "error"),  # a wrong answer: the function's `def`
        ("pass", "def scaled_sum", "notice"),
    ],
)
def test_github_annotations_point_at_the_learners_file_and_line(graded, in_course, kind, marker, name):
    result = graded[kind]
    commands, _ = parse_workflow(render_github(report_of(result)))
    annotation = commands[0]
    path = KINDS.get(kind, UNCLOSED[0])
    assert annotation.name == name
    assert annotation.properties["file"] == path == result.submission
    assert int(annotation.properties["line"]) == line_of(in_course / path, marker)
    assert annotation.properties["title"] == f"toy: {result.status}"
    assert annotation.data == result.message


def test_github_the_line_is_1_when_the_file_cannot_be_read(graded, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the relative submission path now leads nowhere
    commands, _ = parse_workflow(render_github(report_of(graded["pitfall"])))
    assert commands[0].properties["line"] == "1"


def test_github_a_line_named_for_another_file_is_not_taken_for_the_learners(tmp_path):
    path = tmp_path / "stub.py"
    path.write_text("import helper\n\n\ndef scaled_sum(x, scale):\n    return x\n", encoding="utf-8")
    message = "SyntaxError: invalid syntax (helper.py, line 9) while importing stub.py"
    result = problem(Status.ERROR, submission=str(path), message=message)
    commands, _ = parse_workflow(render_github(report_of(result)))
    assert commands[0].properties["line"] == "4"  # the `def`, not line 9 of helper.py


def test_github_the_line_is_found_in_the_traceback_of_a_load_failure(tmp_path):
    path = tmp_path / "stub.py"
    path.write_text("import numpy\n\n\nraise ImportError('no')\n", encoding="utf-8")
    detail = f'Traceback (your code, most recent call last):\n  File "{path}", line 4, in <module>\n'
    message = "ImportError: no while importing stub.py"
    result = problem(Status.ERROR, submission=str(path), message=message, detail=detail)
    commands, _ = parse_workflow(render_github(report_of(result)))
    assert commands[0].properties["line"] == "4"


def test_github_a_warning_on_each_line_where_the_dtypes_differ(tmp_path):
    path = tmp_path / "stub.py"
    differences = (
        "your matmul at stub.py:27 ran in float32 (float32 x float32 -> float32); the reference's matmuls "
        "run in bfloat16 x bfloat16 -> bfloat16",
        "your sum at helper.py:3 ran in float32 (float32 -> float32)",  # another file: no annotation
        "the reference converts float32 to bfloat16; your code never does",  # no line: no annotation
    )
    profile = PrecisionProfile(case=0, differences=differences)
    result = problem(Status.FAIL, submission=str(path), message="1 of 2 cases outside", profile=profile)
    commands, _ = parse_workflow(render_github(report_of(result)))
    annotations = [command for command in commands if command.name in ANNOTATIONS]
    assert [command.name for command in annotations] == ["error", "warning"]
    assert annotations[0].data == "1 of 2 cases outside"  # the verdict's annotation is unchanged
    warning = annotations[1]
    assert warning.properties == {
        "file": str(path),
        "line": "27",
        "title": "toy: dtypes differ from the reference's",
    }
    assert warning.data == differences[0]


def test_github_messages_round_trip_through_the_escaping():
    message = "first line\nsecond, with: colons\r and 100% of %0A"
    result = problem(Status.FAIL, message=message, problem="odd,id:x", submission="dir, a:b/100%.py")
    output = render_github(report_of(result))
    commands, _ = parse_workflow(output)
    assert len(output.splitlines()[0]) > len(message)  # one line: the newlines went into escapes
    assert commands[0] == Command(
        "error", {"file": "dir, a:b/100%.py", "line": "1", "title": "odd,id:x: fail"}, message
    )


def test_github_the_text_report_is_grouped_and_cannot_issue_commands(graded):
    hostile = replace(graded["pitfall"], stdout="::error file=x.py::injected\n::endgroup::\n")
    report = report_of(hostile, graded["toy_max"])
    commands, text = parse_workflow(render_github(report))
    assert [command.name for command in commands] == [
        "error",
        "notice",
        "group",
        "stop-commands",
        "endgroup",
    ]
    assert commands[2].data == "grade report"
    assert "\n".join(text) + "\n" == render_text(report, color=False)
    assert "::error file=x.py::injected" in "\n".join(text)


@pytest.mark.parametrize("kind", KINDS)
def test_github_each_kind_of_real_result_parses_with_one_annotation(graded, kind):
    commands, text = parse_workflow(render_github(report_of(graded[kind])))
    assert [command.name for command in commands if command.name in ANNOTATIONS] == [
        "notice" if kind == "pass" else "error"
    ]
    assert any(graded[kind].message in line for line in text)


def table_rows(markdown: str) -> list[list[str]]:
    """The cells of each table row, split on the pipes that are not escaped."""
    rows = [line for line in markdown.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in re.split(r"(?<!\\)\|", row)[1:-1]] for row in rows]


def test_github_step_summary_is_a_markdown_table_with_the_pitfalls_below(graded):
    report = report_of(graded["pitfall"], graded["toy_max"], replace(graded["raises"], message="a | b\nc"))
    markdown = render_step_summary(report)
    assert markdown.startswith("## ")
    rows = table_rows(markdown)
    assert rows[0] == ["Problem", "Status", "Score", "Why"]
    assert all(len(row) == 4 for row in rows)
    assert [row[1:3] for row in rows[2:]] == [["fail", "0 / 1"], ["pass", "1 / 1"], ["error", "0 / 1"]]
    assert rows[4][3] == "a \\| b c"
    table_end = markdown.index(rows[-1][-1])
    assert markdown.index("`forgot_scale`") > table_end
    assert "without multiplying by scale" in markdown


def test_github_step_summary_is_appended_to_the_file_named_by_the_environment(graded, tmp_path, monkeypatch):
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    report = report_of(graded["pitfall"])
    append_step_summary(report)
    write_reports(report, "github", {}, stdout=io.StringIO())
    written = summary.read_text(encoding="utf-8")
    assert written.startswith("# earlier step\n")
    assert written.count(render_step_summary(report)) == 2


def test_github_step_summary_writes_nothing_without_the_variable(graded, tmp_path, monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.chdir(tmp_path)
    report = report_of(graded["pitfall"])
    append_step_summary(report)
    append_step_summary(report, environ={"GITHUB_STEP_SUMMARY": ""})
    render(report, "github")
    assert list(tmp_path.iterdir()) == []


def test_github_step_summary_takes_an_explicit_environment(graded, tmp_path):
    summary = tmp_path / "summary.md"
    append_step_summary(report_of(graded["toy_max"]), environ={"GITHUB_STEP_SUMMARY": str(summary)})
    assert "| toy_max: " in summary.read_text(encoding="utf-8")


def test_renderers_never_write_and_only_the_github_format_writes_the_step_summary(
    graded, tmp_path, monkeypatch
):
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    for fmt in FORMATS:
        render(report_of(graded["pass"]), fmt)
    assert not summary.exists(), "rendering wrote the step summary"
    for fmt in FORMATS:
        if fmt != "github":
            write_reports(report_of(graded["pass"]), fmt, {tmp_path / f"r.{fmt}": fmt}, stdout=io.StringIO())
    assert not summary.exists()
    write_reports(report_of(graded["pass"]), None, {tmp_path / "r.github": "github"})
    assert summary.exists(), "a github report written to a file still appends the step summary"


REPORT_SCHEMA = Path(__file__).parent.parent / "schemas" / "grade_report.schema.json"


@pytest.fixture(scope="module")
def report_validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(REPORT_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("mode", ["practice", "hidden"])
def test_the_json_report_of_every_kind_of_real_result_follows_its_schema(graded, report_validator, mode):
    missing = problem(Status.ERROR, message="no stub.py")  # a missing stub: no learner code, no sandbox
    results = (*graded.values(), missing)
    document = json.loads(render(report_of(*results, mode=mode), "json"))
    report_validator.validate(document)
    assert document["sandbox"] is not None and all(
        p["status"] in ("pass", "fail", "error") for p in document["problems"]
    )


def test_the_json_report_schema_rejects_what_the_documentation_rules_out(graded, report_validator):
    good = json.loads(render(report_of(graded["pitfall"]), "json"))
    report_validator.validate(good)
    (problem_doc,) = good["problems"]
    bad = [
        {key: value for key, value in good.items() if key != "sandbox"},
        good | {"schema_version": 2},
        good | {"problems": [problem_doc | {"status": "passed"}]},
        good | {"problems": [problem_doc | {"cases": [problem_doc["cases"][0] | {"got": "0.5"}]}]},
        good | {"unexpected": 1},
    ]
    for document in bad:
        with pytest.raises(jsonschema.ValidationError):
            report_validator.validate(document)
