"""The result channel is hostile input: any line is a checked event or a protocol error, and no stream of
events, however malformed, makes the grader crash or a problem pass unless every case came back whole.

Property tests (hypothesis) over random bytes, random JSON and mutations of valid events; then whole
streams written by a stand-in child through the real isolation and the verdict."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from grader.course.cases import make_cases
from grader.grading.verdicts import case_result, summarise
from grader.protocol.events import MAX_LINE, ProtocolError, parse_event
from grader.results import Status
from grader.running import isolation
from grader.running.isolation import IsolatedRun
from grader.running.jobs import Job
from grader.running.limits import Limits
from grader.running.submission import Submission

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)


def _array(values) -> dict:
    values = np.asarray(values, dtype="<f8")
    return {
        "kind": "array",
        "type": "numpy.ndarray",
        "dtype": "float32",
        "shape": list(values.shape),
        "float": True,
        "values": base64.b64encode(values.tobytes()).decode(),
    }


VALID = [
    {"event": "ready", "sandbox": None, "harness_failures": {}},
    {"event": "ask", "label": "toy", "what": "run"},
    {"event": "load", "label": "toy", "ok": True, "seconds": 0.5},
    {"event": "load", "label": "toy", "ok": False, "kind": "syntax", "message": "SyntaxError", "detail": ""},
    {"event": "case", "label": "toy", "index": 0, "seconds": 0.1, "returned": _array([1.0, 2.0])},
    {"event": "case", "label": "toy", "index": 1, "seconds": 0.1, "raised": {"type": "E", "message": "m"}},
    {"event": "profile", "label": "toy", "profile": {"error": "no trace"}},
    {"event": "done"},
]


def _checked(line: bytes) -> dict | None:
    """parse_event's answer, or None for a ProtocolError; any other exception fails the test."""
    try:
        return parse_event(line)
    except ProtocolError:
        return None


def test_every_event_the_child_sends_is_read():
    for event in VALID:
        assert _checked(json.dumps(event).encode()) is not None, event


@settings(max_examples=300)
@given(st.binary(max_size=3000))
@example(b"[" * 100_000)
@example(b'{"event": "case", "label": "toy", "index": 0, "seconds": ' + b"9" * 401 + b', "returned": {}}')
@example(b'{"event": "load", "label": "toy", "ok": true, "seconds": NaN}')
@example(b'{"event": "load", "label": "toy", "ok": true, "seconds": Infinity}')
@example(b"\xff\xfe")
def test_any_bytes_are_an_event_or_a_protocol_error(line):
    _checked(line)


@settings(max_examples=300)
@given(JSON)
def test_any_json_is_an_event_or_a_protocol_error(value):
    _checked(json.dumps(value).encode())


@settings(max_examples=400)
@given(st.sampled_from(VALID), st.text(max_size=12), JSON)
def test_a_valid_event_with_any_field_changed_is_an_event_or_a_protocol_error(event, key, value):
    mutated = dict(event)
    mutated[key if key else next(iter(event))] = value
    _checked(json.dumps(mutated).encode())


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("seconds", 10**400),
        ("seconds", -1),
        ("seconds", "0.1"),
        ("seconds", True),
        ("index", -1),
        ("index", 1.0),
        ("index", 10**30),
        ("label", 7),
        ("returned", {"kind": "array", "shape": [2], "values": "not base64!"}),
        ("returned", {"kind": "array", "shape": [3], "values": _array([1.0, 2.0])["values"]}),
        ("returned", {"kind": "array", "shape": [1 << 20, 1 << 20], "values": ""}),
        ("raised", {"type": "E", "limit": "all of it"}),
        ("extra", "a field the child never sends"),
    ],
)
def test_a_case_event_out_of_range_or_of_the_wrong_type_is_a_protocol_error(field, value):
    event = dict(VALID[4]) | {field: value}
    assert _checked(json.dumps(event).encode()) is None


def test_what_only_the_trusted_side_may_say_is_refused_in_a_load_event():
    for kind in ("harness", "sandbox", "crash", "protocol"):
        forged = {"event": "load", "label": "toy", "ok": False, "kind": kind, "message": "m", "detail": ""}
        assert _checked(json.dumps(forged).encode()) is None, kind


def test_a_line_longer_than_any_the_child_sends_is_a_protocol_error():
    assert _checked(b" " * (MAX_LINE + 1)) is None


# Whole streams: a stand-in for grader/child/main.py that drains its request and writes a given stream of
# bytes on the result pipe, through the real IsolatedRun and the real verdict.
STAND_IN = """
import base64, os, sys
with os.fdopen(int(sys.argv[1]), "rb") as request:
    request.read()
os.write(int(sys.argv[2]), base64.b64decode({stream!r}))
"""


@pytest.fixture(scope="module")
def toy_problem(tmp_path_factory):
    from grader.course.problems import Course

    course = Course(Path(__file__).parent / "toy_course")
    problem = course.problem("toy")
    cases = make_cases(problem)
    expected = {
        c.index: np.array([c.inputs["x"].sum() * c.inputs["scale"], c.inputs["x"].max()]) for c in cases
    }
    return problem, cases, expected, tmp_path_factory.mktemp("stand-in")


def _events(cases, expected) -> list[dict]:
    report = {"abi": 0, "filesystem": False, "network": False, "signals": False, "reason": "not asked"}
    report |= {"sockets": False, "sockets_reason": "", "processes": False, "processes_reason": ""}
    events = [{"event": "ready", "sandbox": report, "harness_failures": {}}]
    events.append({"event": "load", "label": "toy", "ok": True, "seconds": 0.2})
    for case in cases:
        events.append(
            {
                "event": "case",
                "label": "toy",
                "index": case.index,
                "seconds": 0.1,
                "returned": _array(expected[case.index]),
            }
        )
    return [*events, {"event": "done"}]


def _verdict(toy_problem, lines: list[bytes], monkeypatch) -> Status:
    problem, cases, expected, folder = toy_problem
    script = folder / f"child-{abs(hash(tuple(lines)))}.py"
    stream = base64.b64encode(b"".join(lines)).decode()
    script.write_text(STAND_IN.format(stream=stream))
    monkeypatch.setattr(isolation, "CHILD_SCRIPT", script)
    job = Job("toy", Submission("stub.py", b"", "stub.py"), problem, cases)
    limits = Limits(timeout=5, start_timeout=10)
    outcome = IsolatedRun([job], limits).start().wait_for("toy")
    results = [case_result(c, outcome, expected[c.index], problem, True, limits) for c in cases]
    return summarise(cases, results, outcome, limits)[0]


def _lines(events: list[dict]) -> list[bytes]:
    return [json.dumps(event).encode() + b"\n" for event in events]


def test_the_stand_in_child_can_pass(toy_problem, monkeypatch):
    _, cases, expected, _ = toy_problem
    assert _verdict(toy_problem, _lines(_events(cases, expected)), monkeypatch) is Status.PASS


BAD_VALUES = st.sampled_from([float("nan"), float("inf"), -1, 10**400, "1", None, True, [], {}, 10**30])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_no_corrupted_stream_passes_or_crashes_the_grader(toy_problem, monkeypatch, data):
    _, cases, expected, _ = toy_problem
    events = _events(cases, expected)
    lines = _lines(events)
    last_case = len(events) - 2  # events: ready, load, cases..., done
    how = data.draw(st.sampled_from(["drop", "insert", "truncate", "field"]))
    if how == "drop":
        del lines[data.draw(st.integers(0, last_case))]
    elif how == "insert":
        at = data.draw(st.integers(0, last_case))
        garbage = data.draw(
            st.binary(max_size=200).map(lambda b: b.replace(b"\n", b""))
            | JSON.map(json.dumps).map(str.encode)
        )
        if garbage + b"\n" == lines[at]:
            garbage = b"{}"
        lines.insert(at, garbage + b"\n")
    elif how == "truncate":
        stream = b"".join(lines[: last_case + 1])
        lines = [stream[: data.draw(st.integers(0, len(stream) - 1))]]
    else:
        at = data.draw(st.integers(1, last_case))
        field = data.draw(st.sampled_from(sorted(set(events[at]) - {"event"})))
        value, original = data.draw(BAD_VALUES), events[at][field]
        assume(not (type(value) is type(original) and value == original))  # a change, not the same event
        lines[at] = json.dumps(events[at] | {field: value}).encode() + b"\n"
    assert _verdict(toy_problem, lines, monkeypatch) is not Status.PASS, (how, lines)
