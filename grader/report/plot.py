"""A picture of a failed multi-step output: the learner's series against the reference's (losses, scales)
on the first failing case, one panel per output segment. matplotlib is optional (the `notebook` extra):
without it there is no picture, and the report is complete without one."""

from __future__ import annotations

import io

import numpy as np

from grader.results import CaseResult, ProblemResult, Status

PANEL_INCHES = (7.0, 2.4)  # width, and height of one panel
DPI = 80


def plotted_case(result: ProblemResult) -> CaseResult | None:
    """Returns the case worth a plot: the first that failed with an output of the reference's shape and
    more than one entry (a single number reads better in the table than in a plot)."""
    for case in result.cases:
        if case.status is Status.FAIL and case.expected is not None and case.got is not None:
            expected, got = np.asarray(case.expected), np.asarray(case.got)
            if expected.shape == got.shape and expected.size > 1:
                return case
    return None


def _series(values: np.ndarray, segments: tuple[str, ...]) -> list[tuple[str, np.ndarray]]:
    """Splits a flat output into its named segments (all of it as one series when it has none)."""
    flat = np.asarray(values, dtype=np.float64).reshape(-1)
    if segments and flat.size % len(segments) == 0:
        return list(zip(segments, np.split(flat, len(segments)), strict=True))
    return [("output", flat)]


def _drawn(values: np.ndarray) -> np.ndarray:
    """The values with NaN in place of inf, so that matplotlib leaves a gap for every non-finite entry."""
    return np.where(np.isfinite(values), values, np.nan)


def series_png(result: ProblemResult) -> bytes | None:
    """Returns a PNG of the learner's series against the reference's on `plotted_case(result)`, or None
    when no case is worth a plot or matplotlib is not installed."""
    case = plotted_case(result)
    if case is None:
        return None
    try:
        from matplotlib.figure import Figure  # no pyplot: no global figure state, no GUI backend
        from matplotlib.ticker import MaxNLocator
    except ImportError:
        return None
    reference = _series(case.expected, result.segments)
    learner = _series(case.got, result.segments)
    width, height = PANEL_INCHES
    figure = Figure(figsize=(width, height * len(reference)), dpi=DPI, layout="constrained")
    axes = figure.subplots(len(reference), 1, squeeze=False)[:, 0]
    for ax, (name, expected), (_, got) in zip(axes, reference, learner, strict=True):
        steps = np.arange(expected.size)
        ax.plot(steps, _drawn(expected), "o-", color="#1a7f37", markersize=3, label="reference")
        ax.plot(steps, _drawn(got), "x--", color="#cf222e", markersize=4, label="yours")
        drawn = np.concatenate([expected[np.isfinite(expected)], got[np.isfinite(got)]])
        if drawn.size and drawn.min() > 0 and drawn.max() > 10 * drawn.min():  # spans a decade or more
            ax.set_yscale("log")
        missing = int(np.count_nonzero(~np.isfinite(got)))
        note = f" ({missing} of yours NaN or inf, not drawn)" if missing else ""
        ax.set_title(f"{case.label}: {name}[k]{note}", fontsize=9, loc="left")
        ax.set_xlabel("k", fontsize=8)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=7)
    png = io.BytesIO()
    figure.savefig(png, format="png")
    return png.getvalue()
