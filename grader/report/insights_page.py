"""What a class got wrong, as one self-contained HTML page for the instructor and the problem author: the
pass rate per problem, the named and unnamed mistakes per problem, and each problem's failing submissions
in groups of the same behaviour, each with its outputs drawn against the reference's on one case.

The page loads nothing (no script, font or image from anywhere; its Content-Security-Policy forbids it) and
every text on it, learners' names and paths above all, is escaped: only this module's tags reach it."""

from __future__ import annotations

import math
from html import escape

import numpy as np

from grader.behaviours import BehaviourGroup, FailingCase, ProblemInsights
from grader.report.svg_charts import AMBER, BLUE, GREY, RED, rate_bars, series_chart, stacked_bars

POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
SHOWN_LEARNERS = 8  # a group's learners listed in its row; all of them in the row's details
_STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #24292f; }
table { border-collapse: collapse; margin: 0.5em 0 1em 0; }
th, td { border: 1px solid #d0d7de; padding: 0.3em 0.5em; vertical-align: top; text-align: left; }
th { background: #f6f8fa; } td.size { text-align: right; font-weight: bold; }
td { min-width: 4em; } td:nth-child(4) { min-width: 14em; } td:nth-child(5) { min-width: 12em; }
ul { margin: 0; padding-left: 1.1em; }
code { font-size: 0.9em; } .muted { color: #57606a; } .named { color: #cf222e; }
section.problem { border-top: 2px solid #d0d7de; margin-top: 1.5em; }
"""
MISTAKE_PARTS = [("named", RED), ("unnamed groups", AMBER), ("alone", GREY), ("no output", BLUE)]


def _path(text: str) -> str:
    """A path for the page: escaped, a byte of a name that is not UTF-8 shown as a backslash escape."""
    return escape(text.encode("utf-8", "backslashreplace").decode("utf-8"))


def _ratio(value: float) -> str:
    if math.isinf(value):
        return "another shape or NaN/inf pattern"
    return f"{value:,.1f}x the tolerance" if value < 1e4 else f"{value:.2g}x the tolerance"


def _failing(failing: tuple[FailingCase, ...]) -> str:
    items = [
        f"<li>case {case.case + 1} (<code>{escape(case.family)}</code>): "
        f"{escape(case.note) if case.note else _ratio(case.ratio)}</li>"
        for case in failing
    ]
    return f"<ul>{''.join(items)}</ul>" if items else '<span class="muted">none on the practice cases</span>'


def _name(group: BehaviourGroup) -> str:
    """The group's pitfall, or its nearest miss and why it was not named."""
    if group.pitfall:
        others = [f"{escape(name)} ({count})" for name, count in group.names[1:]]
        also = f' <span class="muted">also named: {", ".join(others)}</span>' if others else ""
        return f'<span class="named">named <code>{escape(group.pitfall)}</code></span>{also}'
    closest = group.representative.closest
    if closest is None:
        return "no name: no pitfall gives these numbers on most of the failing practice cases"
    agrees = ", ".join(str(c) for c in closest.agrees)
    differs = ", ".join(str(c) for c in closest.differs)
    return (
        f"no name; nearest <code>{escape(closest.name)}</code> ({escape(closest.title)}) gives these numbers "
        f"on practice case(s) {agrees} but not on {differs}"
    )


def _dtypes(group: BehaviourGroup) -> str:
    representative = group.representative
    if not representative.profiled:
        return '<span class="muted">not profiled</span>'
    if not representative.profile_lines:
        return '<span class="muted">the same dtypes as the reference</span>'
    return f"<ul>{''.join(f'<li>{escape(line)}</li>' for line in representative.profile_lines)}</ul>"


def _learners(group: BehaviourGroup) -> str:
    names = [escape(member.learner) for member in group.members]
    shown = ", ".join(names[:SHOWN_LEARNERS])
    if len(names) <= SHOWN_LEARNERS:
        return shown
    more = f"<summary>and {len(names) - SHOWN_LEARNERS} more</summary>{', '.join(names)}"
    return f"{shown} <details>{more}</details>"


def _plot(insights: ProblemInsights, group: BehaviourGroup) -> str:
    case = group.plotted_case
    if case is None:
        return '<span class="muted">no output of the reference\'s shape to draw</span>'
    got = group.representative.outputs[case]
    label = f"{insights.facts.problem} group {group.number}: case {case + 1} against the reference"
    chart = series_chart(label, insights.facts.reference[case], np.asarray(got))
    return f'{chart}<div class="muted">case {case + 1} ({escape(insights.facts.families[case])})</div>'


def _group_row(insights: ProblemInsights, group: BehaviourGroup, gradebook: str) -> str:
    representative = group.representative
    scaffold = ""
    if not group.pitfall:
        command = (
            f"grade new {insights.facts.problem} --pitfall NAME --from-group {group.number} "
            f"--gradebook {gradebook}"
        )
        scaffold = f'<div class="muted">to name it: <code>{_path(command)}</code></div>'
    return (
        f'<tr class="group" id="{escape(insights.facts.problem)}-group-{group.number}">'
        f'<td>{group.number}</td><td class="size">{group.size}</td><td>{_learners(group)}</td>'
        f"<td>{_name(group)}</td><td>{_failing(group.failing)}</td><td>{_dtypes(group)}</td>"
        f"<td><code>{_path(representative.file)}</code>{scaffold}</td><td>{_plot(insights, group)}</td></tr>"
    )


_HEADER = (
    "<tr><th>group</th><th>size</th><th>learners</th><th>name, or the nearest pitfall and why not</th>"
    "<th>fails on (practice cases)</th><th>where the dtypes depart (representative)</th>"
    "<th>representative file</th><th>its outputs against the reference's</th></tr>"
)


def _problem(insights: ProblemInsights, gradebook: str) -> str:
    facts, statuses = insights.facts, insights.statuses
    shared, alone = insights.shared, insights.singletons
    unnamed = [group for group in shared if not group.pitfall]
    parts = [
        f'<section class="problem" id="{escape(facts.problem)}"><h2>{escape(facts.problem)}'
        f"{': ' + escape(facts.title) if facts.title else ''}</h2>",
        f"<p>{statuses.get('pass', 0)} of {insights.rows} passed ({insights.pass_rate:.0%}); "
        f"{statuses.get('fail', 0)} failed: {len(shared)} groups of two or more ({len(unnamed)} without a "
        f"name), {len(alone)} alone in their behaviour, {insights.ungrouped} with no output to compare; "
        f"{statuses.get('error', 0) + statuses.get('grader_error', 0)} errors, {statuses.get('missing', 0)} "
        "missing (errors and passes are not grouped).</p>",
    ]
    if shared:
        rows = "".join(_group_row(insights, group, gradebook) for group in shared)
        parts.append(f'<table class="groups"><thead>{_HEADER}</thead><tbody>{rows}</tbody></table>')
    if alone:
        rows = "".join(_group_row(insights, group, gradebook) for group in alone)
        parts.append(
            f'<details class="singletons"><summary>{len(alone)} submissions alone in their behaviour'
            f'</summary><table class="groups singletons"><thead>{_HEADER}</thead><tbody>{rows}</tbody>'
            "</table></details>"
        )
    parts.append("</section>")
    return "".join(parts)


def _counts(insights: ProblemInsights) -> list[int]:
    """Failing submissions: in named groups, in unnamed groups of two or more, alone, with no output."""
    named = sum(group.size for group in insights.groups if group.pitfall and group.size > 1)
    unnamed = sum(group.size for group in insights.shared if not group.pitfall)
    alone = sum(group.size for group in insights.singletons)
    return [named, unnamed, alone, insights.ungrouped]


def render_insights_page(insights: list[ProblemInsights], mode: str, gradebook: str) -> str:
    """Returns the page: the two overview charts, then a section per problem with its groups (a problem
    nobody handed in is left out)."""
    insights = [found for found in insights if found.statuses.get("missing", 0) < found.rows]
    rates = rate_bars(
        "pass-rates", "pass rate per problem", [(i.facts.problem, i.pass_rate) for i in insights]
    )
    mistakes = stacked_bars(
        "mistakes",
        "failing submissions per problem: named, in unnamed groups, alone, with no output",
        [(i.facts.problem, _counts(i)) for i in insights],
        MISTAKE_PARTS,
    )
    body = "".join(_problem(problem, gradebook) for problem in insights)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
        f"<title>What the class got wrong</title><style>{_STYLE}</style></head><body>"
        f"<h1>What the class got wrong ({escape(mode)} grading, {_path(gradebook)})</h1>"
        "<p>Failing submissions in groups of the same behaviour: the same answer within the tolerance on "
        "every practice case, and where profiled, the same departures from the reference's dtypes. "
        "Groups largest first; submissions alone in their behaviour are folded under each problem.</p>"
        f'<section id="overview"><h2>Pass rate per problem</h2>{rates}'
        f"<h2>Failing submissions per problem</h2>{mistakes}</section>{body}</body></html>\n"
    )
