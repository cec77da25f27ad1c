"""The JUnit XML report: one test suite per problem and one test case per case, for CI dashboards."""

from __future__ import annotations

import dataclasses
import re
import xml.etree.ElementTree as ET

from grader.report.plain_text import render_problem
from grader.results import CaseResult, GradeReport, ProblemResult, Status

# Everything outside the XML 1.0 Char production: C0 controls other than tab, newline and CR,
# lone surrogates, U+FFFE and U+FFFF.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'
_COUNTED = {"failure": "failures", "error": "errors", "skipped": "skipped"}  # outcome element: its count
LOAD_CASE = "load submission"  # the one test case of a problem that has no cases at all


def _clean(text: object) -> str:
    return _NOT_XML.sub("", str(text))


def _element(parent: ET.Element, tag: str, text: str = "", **attributes: object) -> ET.Element:
    """Appends a child with XML-safe attributes and text, and returns it."""
    child = ET.SubElement(parent, tag, {key: _clean(value) for key, value in attributes.items()})
    if text:
        child.text = _clean(text)
    return child


def _seconds(value: float | None) -> str:
    return f"{value or 0.0:.3f}"


def _never_loaded(result: ProblemResult) -> bool:
    """Whether the submission failed before any case could run (a load failure, not a skip)."""
    return result.status is Status.ERROR and result.never_ran


def _body(result: ProblemResult, case: CaseResult, mode: str) -> str:
    """The text report of `result` narrowed to `case`: its details, traceback or load failure, and pitfall."""
    narrowed = dataclasses.replace(result, cases=(case,), stdout="", stderr="")
    return render_problem(narrowed, mode, color=False)


def _outcome(testcase: ET.Element, result: ProblemResult, case: CaseResult, mode: str) -> None:
    """Appends the failure, error or skipped element that `case` calls for; a passed case gets none."""
    if case.status is Status.FAIL:
        _element(testcase, "failure", _body(result, case, mode), message=case.message, type="fail")
    elif case.status is Status.ERROR:
        _element(testcase, "error", _body(result, case, mode), message=case.message, type="error")
    elif case.status is Status.NOT_RUN and _never_loaded(result):
        _element(testcase, "error", _body(result, case, mode), message=result.message, type="error")
    elif case.status is Status.NOT_RUN:
        _element(testcase, "skipped", message=case.message)


def _testcases(suite: ET.Element, result: ProblemResult, mode: str) -> None:
    classname = f"grade.{result.problem}"
    if not result.cases:
        testcase = _element(suite, "testcase", classname=classname, name=LOAD_CASE, time=_seconds(0.0))
        _element(testcase, "error", render_problem(result, mode), message=result.message, type="error")
    for case in result.cases:
        time = _seconds(case.seconds)
        testcase = _element(suite, "testcase", classname=classname, name=case.label, time=time)
        _outcome(testcase, result, case, mode)


def _properties(suite: ET.Element, result: ProblemResult, mode: str) -> None:
    values = dict(mode=mode, status=result.status, message=result.message, submission=result.submission)
    if result.pitfall:
        values["pitfall"] = result.pitfall.name
    if result.sandbox is not None:
        values["sandbox"] = result.sandbox.describe()
    properties = _element(suite, "properties")
    for name, value in values.items():
        _element(properties, "property", name=name, value=value)


def _count(suite: ET.Element) -> dict[str, int]:
    """Counts the test cases of `suite` and their outcomes, as the JUnit attributes name them."""
    testcases = suite.findall("testcase")
    counts = {"tests": len(testcases)}
    for tag, attribute in _COUNTED.items():
        counts[attribute] = sum(testcase.find(tag) is not None for testcase in testcases)
    return counts


def _suite(root: ET.Element, result: ProblemResult, mode: str) -> dict[str, int]:
    suite = _element(root, "testsuite", name=result.problem)
    _properties(suite, result, mode)
    _testcases(suite, result, mode)
    if result.stdout:
        _element(suite, "system-out", result.stdout)
    if result.stderr:
        _element(suite, "system-err", result.stderr)
    counts = _count(suite)
    suite.attrib.update({key: str(value) for key, value in counts.items()}, time=_seconds(result.seconds))
    return counts


def render_junit(report: GradeReport) -> str:
    root = ET.Element("testsuites", name="grade")
    totals = dict.fromkeys(("tests", *_COUNTED.values()), 0)
    for result in report.problems:
        for key, value in _suite(root, result, report.mode).items():
            totals[key] += value
    seconds = sum(result.seconds for result in report.problems)
    root.attrib.update({key: str(value) for key, value in totals.items()}, time=_seconds(seconds))
    ET.indent(root)
    return _DECLARATION + ET.tostring(root, encoding="unicode") + "\n"
