"""The course's Markdown pages (the README, docs/, CONTRIBUTING, each problem's statement, GRADING.md and
hints) rendered with a real CommonMark parser: no code fence is left open (markdown-it runs an open fence to
the end of its container, swallowing the prose after it), and no shell command line (`$ grade ...`) is
rendered as prose, which is what a walkthrough that lost its fence looks like."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from markdown_links import documents

ROOT = Path(__file__).resolve().parents[1]
PAGES = documents(ROOT)


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table")


def _is_closing_fence(line: str, markup: str) -> bool:
    """Whether `line` (inside a list or quote or not) closes a fence opened with `markup`: the same
    character repeated at least as many times, and nothing after it but spaces."""
    found = re.fullmatch(r"[ \t>]*(`+|~+)[ \t]*", line)
    return bool(found) and found.group(1)[0] == markup[0] and len(found.group(1)) >= len(markup)


def markdown_problems(text: str) -> list[str]:
    """Every open code fence and every `$ ` command line outside code in the Markdown `text`, as
    "line N: what" (N counted from 1)."""
    lines = text.replace("\r\n", "\n").split("\n")
    found = []
    for token in _parser().parse(text):
        if token.type == "fence" and token.map:
            start, end = token.map
            if end - 1 <= start or not _is_closing_fence(lines[end - 1], token.markup):
                found.append(f"line {start + 1}: the code fence {token.markup!r} opened here is never closed")
        elif token.type == "inline" and token.map:
            for offset, line in enumerate(token.content.split("\n")):
                if line.lstrip(" ").startswith("$ "):
                    found.append(
                        f"line {token.map[0] + offset + 1}: a command line outside code: {line.strip()}"
                    )
    return found


@pytest.mark.parametrize("page", PAGES, ids=[str(page.relative_to(ROOT)) for page in PAGES])
def test_the_page_renders_with_every_fence_closed_and_no_command_in_prose(page):
    problems = markdown_problems(page.read_text(encoding="utf-8"))
    assert problems == [], f"{page.relative_to(ROOT)}:\n" + "\n".join(problems)


def test_the_pages_are_found():
    assert len(PAGES) > 20  # the front page, the docs pages, CONTRIBUTING, every statement, GRADING and hints


def test_an_open_fence_or_a_command_in_prose_is_found():
    unclosed = "# Run it\n\n```bash\ngrade list\n\nThe prose after it.\n"
    assert markdown_problems(unclosed) == ["line 3: the code fence '```' opened here is never closed"]
    assert markdown_problems("Text.\n\n```") == ["line 3: the code fence '```' opened here is never closed"]
    # a shorter closing fence closes nothing
    assert len(markdown_problems("- a list\n\n  ~~~~\n  code\n  ~~~\n")) == 1
    in_prose = "List the problems:\n\n$ grade list\n\n- then\n  $ grade run loss_scaling\n"
    assert markdown_problems(in_prose) == [
        "line 3: a command line outside code: $ grade list",
        "line 6: a command line outside code: $ grade run loss_scaling",
    ]
    good = (
        "# Run it\n\n```bash\n$ grade list\n```\n\n- in a list:\n\n  ~~~~\n  $ grade run x\n  ~~~~~\n\n"
        "> ```\n> $ grade\n> ```\n\n    $ indented code\n\nIt costs $ 5, `$ grade` inline.\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n"
    )
    assert markdown_problems(good) == []
