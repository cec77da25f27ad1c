"""Every relative link in the README, docs/, CONTRIBUTING and the statements leads somewhere (a file of the
checkout, and a heading of it where the link names one). The learner copy's are checked where it is made
(tests/test_export.py)."""

from __future__ import annotations

from pathlib import Path

from markdown_links import anchor, broken_links, documents

ROOT = Path(__file__).resolve().parents[1]


def test_every_relative_link_of_the_course_documents_resolves():
    assert len(documents(ROOT)) > 20  # the front page, the docs pages, every statement and hints file
    assert broken_links(ROOT) == []


def test_the_front_page_links_every_docs_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert f"(docs/{page.name})" in readme, f"README.md does not link docs/{page.name}"


def test_a_broken_link_or_anchor_is_found(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A page\n\n## Learner copies: `grade export`\n")
    (tmp_path / "README.md").write_text(
        "[ok](docs/a.md) [ok](docs/a.md#learner-copies-grade-export) [web](https://example.org/x)\n"
        "[gone](docs/b.md) [bad anchor](docs/a.md#nowhere) [outside](../elsewhere.md)\n"
        "```\n[in code](not/checked.md)\n```\n"
    )
    assert broken_links(tmp_path) == [
        "README.md: docs/b.md (no such file)",
        "README.md: docs/a.md#nowhere (no such heading)",
        "README.md: ../elsewhere.md (no such file)",
    ]
    assert anchor("What holds by default") == "what-holds-by-default"
