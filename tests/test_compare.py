"""The comparator: shape, non-finite pattern and tolerance, and that it never passes a wrong value."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from grader.course.problems import Tolerance
from grader.grading.compare import compare_outputs
from grader.protocol.payloads import Returned

TOL = Tolerance(rtol=1e-3, atol=1e-6)
RETURNS = "float32 array of shape (3,)"


def returned(values, dtype="float32") -> Returned:
    values = np.asarray(values, dtype=np.float64)
    return Returned(kind="array", type_name="numpy.ndarray", dtype=dtype, is_float=True, values=values)


def check(got, expected, tolerance=TOL):
    return compare_outputs(returned(got), np.asarray(expected, dtype=np.float64), tolerance, RETURNS)


def test_equal_values_pass_with_zero_error():
    result = check([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    assert result.passed and result.error_ratio == 0 and result.max_abs_err == 0


def test_error_just_inside_the_tolerance_passes_and_just_outside_fails():
    allowed = TOL.atol + TOL.rtol * 2.0
    assert check([1.0, 2.0 + 0.99 * allowed, 3.0], [1.0, 2.0, 3.0]).passed
    outside = check([1.0, 2.0 + 1.01 * allowed, 3.0], [1.0, 2.0, 3.0])
    assert not outside.passed and outside.error_ratio == pytest.approx(1.01)
    assert "1 of 3 entries" in outside.message


def test_wrong_shape_fails_with_both_shapes_named():
    result = check([[1.0, 2.0, 3.0]], [1.0, 2.0, 3.0])
    assert not result.passed and "(1, 3)" in result.message and "(3,)" in result.message
    assert math.isinf(result.error_ratio)


@pytest.mark.parametrize(
    ("got", "expected"),
    [
        ([np.nan, 1.0, 1.0], [1.0, 1.0, 1.0]),
        ([1.0, 1.0, 1.0], [np.nan, 1.0, 1.0]),
        ([np.inf, 1.0, 1.0], [-np.inf, 1.0, 1.0]),
        ([np.inf, 1.0, 1.0], [1e300, 1.0, 1.0]),
    ],
    ids=["nan-for-finite", "finite-for-nan", "inf-sign", "inf-for-finite"],
)
def test_non_finite_pattern_must_match(got, expected):
    result = check(got, expected)
    assert not result.passed and "entry 0" in result.message


def test_same_non_finite_pattern_passes():
    assert check([np.nan, -np.inf, 2.0], [np.nan, -np.inf, 2.0]).passed


def test_exact_zero_expected_with_zero_atol_demands_zero():
    tolerance = Tolerance(rtol=0.1, atol=0.0)
    assert check([0.0, 1.0, 1.0], [0.0, 1.0, 1.0], tolerance).passed
    assert not check([1e-30, 1.0, 1.0], [0.0, 1.0, 1.0], tolerance).passed


@pytest.mark.parametrize(
    ("value", "phrase"),
    [
        (Returned(kind="other", type_name="list", summary="[0.5]"), "list"),
        (Returned(kind="other", type_name="str", summary="'0.5'"), "str"),
        (Returned(kind="other", type_name="float", summary="0.5"), "float"),
        (Returned(kind="array", type_name="numpy.ndarray", dtype="int32", values=np.ones(3)), "int32"),
    ],
)
def test_values_that_are_not_float_arrays_fail_saying_what_came(value, phrase):
    result = compare_outputs(value, np.ones(3), TOL, RETURNS)
    assert not result.passed and phrase in result.message and RETURNS in result.message


finite = st.floats(allow_nan=False, allow_infinity=False, width=64, min_value=-1e30, max_value=1e30)
anything = st.floats(allow_nan=True, allow_infinity=True, width=64)


@settings(max_examples=400, deadline=None)
@given(
    expected=hnp.arrays(np.float64, st.integers(1, 6), elements=finite),
    got=hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3, max_side=6), elements=anything),
    rtol=st.floats(0, 0.5),
    atol=st.floats(0, 1.0),
)
def test_property_never_passes_a_value_outside_the_tolerance(expected, got, rtol, atol):
    tolerance = Tolerance(rtol=rtol, atol=atol)
    result = compare_outputs(returned(got), expected, tolerance, RETURNS)
    inside = (
        got.shape == expected.shape
        and bool(np.isfinite(got).all())
        and bool((np.abs(got - expected) <= atol + rtol * np.abs(expected)).all())
    )
    assert result.passed == inside


@settings(max_examples=200, deadline=None)
@given(
    kind=st.sampled_from(["array", "other"]),
    type_name=st.text(max_size=20),
    dtype=st.sampled_from(["float32", "bfloat16", "int8", "bool", "object", ""]),
    is_float=st.booleans(),
    values=hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=2, max_side=4), elements=anything),
)
def test_property_never_crashes_on_any_returned_value(kind, type_name, dtype, is_float, values):
    value = Returned(kind=kind, type_name=type_name, dtype=dtype, is_float=is_float, values=values)
    result = compare_outputs(value, np.array([1.0, np.nan]), TOL, RETURNS)
    assert isinstance(result.passed, bool) and result.message
    if kind != "array" or not is_float:
        assert not result.passed


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float8_e4m3fn"])
def test_a_float32_promise_is_not_kept_by_a_narrower_float_even_when_the_values_pass(dtype):
    # Rounded to 16 bits, a right answer stays within the tolerance on some cases and not on others: the
    # verdict would depend on the secret. The dtype decides it on every case.
    from grader.grading.verdicts import narrower_than_promised

    values = returned([1.0, 2.0, 3.0], dtype=dtype)
    assert compare_outputs(values, np.asarray([1.0, 2.0, 3.0]), TOL, RETURNS).passed  # the values pass
    assert narrower_than_promised(values, RETURNS)
    for wide in ("float32", "float64"):
        assert not narrower_than_promised(returned([1.0, 2.0, 3.0], dtype=wide), RETURNS)
    assert not narrower_than_promised(values, "float16 array of shape (3,)")
