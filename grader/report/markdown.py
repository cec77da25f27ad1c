"""Text made safe for Markdown: the step summary of the github format and the batch gradebook summary."""

from __future__ import annotations

import html


def inline(text: str) -> str:
    """Markdown-safe inline text: HTML escaped, on one line."""
    return " ".join(html.escape(text, quote=False).split())


def cell(text: str) -> str:
    """Markdown-safe text for a table cell: inline, with `|` escaped."""
    return inline(text).replace("|", "\\|")
