"""Charts as inline SVG text, for pages that load nothing from anywhere: horizontal bars (one value or a
stack of counts per row) and one output series against the reference's. Every label is escaped."""

from __future__ import annotations

from html import escape

import numpy as np

GREEN, RED, AMBER, GREY, BLUE = "#1a7f37", "#cf222e", "#bf8700", "#8c959f", "#0969da"
_FONT = 'font-family="sans-serif" font-size="11"'


def _svg(css_class: str, width: int, height: int, label: str, body: list[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart {css_class}" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(label)}">'
        f"<title>{escape(label)}</title>{''.join(body)}</svg>"
    )


def _text(x: float, y: float, text: str, anchor: str = "start", fill: str = "#24292f") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" fill="{fill}" {_FONT}>{escape(text)}</text>'


def _rect(x: float, y: float, width: float, height: float, fill: str, tip: str = "") -> str:
    title = f"<title>{escape(tip)}</title>" if tip else ""
    box = f'x="{x:.1f}" y="{y:.1f}" width="{max(width, 0):.1f}" height="{height:.1f}"'
    return f'<rect {box} fill="{fill}">{title}</rect>'


def rate_bars(css_class: str, label: str, rows: list[tuple[str, float]], width: int = 520) -> str:
    """One bar per row for a fraction from 0 to 1, written as a percentage beside it."""
    name_width, bar_width, step = 170, width - 230, 20
    body = []
    for i, (name, rate) in enumerate(rows):
        y = 8 + i * step
        body.append(_text(name_width - 6, y + 11, name, "end"))
        body.append(_rect(name_width, y, bar_width, 14, "#eaeef2"))
        body.append(
            _rect(name_width, y, bar_width * min(max(rate, 0.0), 1.0), 14, GREEN, f"{name}: {rate:.0%}")
        )
        body.append(_text(name_width + bar_width + 6, y + 11, f"{rate:.0%}"))
    return _svg(css_class, width, 16 + step * len(rows), label, body)


def stacked_bars(
    css_class: str,
    label: str,
    rows: list[tuple[str, list[int]]],
    parts: list[tuple[str, str]],
    width: int = 600,
) -> str:
    """One bar per row made of counts, one per part (name, colour), on one scale, with a legend."""
    name_width, bar_width, step = 170, width - 290, 20
    largest = max([sum(counts) for _, counts in rows] + [1])
    body = []
    for i, (name, counts) in enumerate(rows):
        y = 8 + i * step
        body.append(_text(name_width - 6, y + 11, name, "end"))
        x = float(name_width)
        for (part, colour), count in zip(parts, counts, strict=True):
            length = bar_width * count / largest
            body.append(_rect(x, y, length, 14, colour, f"{name}: {count} {part}"))
            x += length
        body.append(_text(x + 6, y + 11, " + ".join(str(c) for c in counts)))
    legend_y = 16 + step * len(rows)
    x = float(name_width)
    for part, colour in parts:
        body.append(_rect(x, legend_y, 10, 10, colour))
        body.append(_text(x + 14, legend_y + 9, part))
        x += 24 + 6.5 * len(part)
    return _svg(css_class, width, legend_y + 20, label, body)


def _scaled(values: np.ndarray, low: float, high: float, log: bool) -> np.ndarray:
    if log:
        values, low, high = np.log10(values), np.log10(low), np.log10(high)
    span = high - low if high > low else 1.0
    return (values - low) / span


def _polyline(xs: np.ndarray, ys: np.ndarray, colour: str, dashed: bool) -> list[str]:
    """A line through the finite points, broken at every non-finite one, with a mark at each point."""
    drawn: list[str] = []
    run: list[tuple[float, float]] = []
    for x, y in [*zip(xs, ys, strict=True), (np.nan, np.nan)]:
        if np.isfinite(y):
            run.append((x, y))
            continue
        if run:
            dash = ' stroke-dasharray="4 3"' if dashed else ""
            points = " ".join(f"{px:.1f},{py:.1f}" for px, py in run)
            drawn.append(f'<polyline points="{points}" fill="none" stroke="{colour}"{dash}/>')
            drawn += [f'<circle cx="{px:.1f}" cy="{py:.1f}" r="2" fill="{colour}"/>' for px, py in run]
        run = []
    return drawn


def series_chart(
    label: str, reference: np.ndarray, got: np.ndarray, width: int = 300, height: int = 130
) -> str:
    """The reference's output (green) and a submission's (red, dashed) entry by entry; a log scale when
    every finite value is positive and they span a decade or more; non-finite entries leave gaps and are
    counted in the caption."""
    reference = np.asarray(reference, dtype=np.float64).reshape(-1)
    got = np.asarray(got, dtype=np.float64).reshape(-1)
    finite = np.concatenate([reference[np.isfinite(reference)], got[np.isfinite(got)]])
    low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    log = finite.size > 0 and low > 0 and high > 10 * low
    left, top, plot_w, plot_h = 8, 8, width - 16, height - 34
    count = max(reference.size, got.size, 2)
    body = [f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#d0d7de"/>']
    for values, colour, dashed in ((reference, GREEN, False), (got, RED, True)):
        with np.errstate(all="ignore"):
            scaled = _scaled(np.where(np.isfinite(values), values, np.nan), low, high, log)
        xs = left + plot_w * np.arange(values.size) / (count - 1)
        ys = top + plot_h * (1 - scaled)
        body += _polyline(xs, ys, colour, dashed)
    missing = int(np.count_nonzero(~np.isfinite(got)))
    caption = f"{'log ' if log else ''}{low:.3g} .. {high:.3g}" + (
        f"; {missing} NaN/inf not drawn" if missing else ""
    )
    body.append(_text(left, height - 12, "reference", fill=GREEN))
    body.append(_text(left + 64, height - 12, "this group", fill=RED))
    body.append(_text(width - 8, height - 12, caption, "end", GREY))
    return _svg("series", width, height, label, body)
