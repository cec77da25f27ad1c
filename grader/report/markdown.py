"""Text made safe for Markdown, for the step summary of the github format and the batch gradebook summary,
and the summary's part on what the class got wrong (`grade insights`)."""

from __future__ import annotations

import html
from urllib.parse import quote

from grader.behaviours import ProblemInsights


def inline(text: str) -> str:
    """Markdown-safe inline text: HTML escaped, on one line."""
    return " ".join(html.escape(text, quote=False).split())


def cell(text: str) -> str:
    """Markdown-safe text for a table cell: inline, with `|` escaped."""
    return inline(text).replace("|", "\\|")


def insights_markdown(insights: list[ProblemInsights], page: str | None) -> str:
    """The groups of each problem's failing submissions in short (the page `page`, a relative link, has
    them in full): each group of two or more with its name or nearest miss and the families it fails."""
    lines = ["", "## What the class got wrong", ""]
    if page:
        lines += [
            f"Failing submissions grouped by what they compute, with plots: [{inline(page)}]({quote(page)})",
            "",
        ]
    for problem in insights:
        if problem.statuses.get("missing", 0) == problem.rows:
            continue  # nobody handed it in
        unnamed = [group for group in problem.shared if not group.pitfall]
        lines.append(
            f"- **{problem.facts.problem}**: {problem.statuses.get('fail', 0)} failed: {len(problem.shared)} "
            f"groups of two or more ({len(unnamed)} without a name), {len(problem.singletons)} alone"
        )
        for group in problem.shared:
            closest = group.representative.closest
            name = (
                f"`{group.pitfall}`"
                if group.pitfall
                else f"no name (nearest `{closest.name}`)"
                if closest
                else "no name, no pitfall near"
            )
            families = ", ".join(dict.fromkeys(case.family for case in group.failing)) or "none"
            lines.append(f"  - group {group.number}: {group.size} learners, {name}; fails on {families}")
    return "\n".join(lines) + "\n"
