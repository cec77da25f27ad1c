"""The relative links of the course's Markdown documents, and which of them lead nowhere."""

from __future__ import annotations

import re
from pathlib import Path

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
DOCUMENTS = (
    "README.md",
    "CONTRIBUTING.md",
    "docs/*.md",
    "problems/*/README.md",
    "problems/*/GRADING.md",
    "problems/*/hints.md",
)


def documents(root: Path) -> list[Path]:
    """The Markdown documents a reader follows links in: the front page, docs/, the statements, hints."""
    return sorted(path for pattern in DOCUMENTS for path in root.glob(pattern))


def anchor(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return {anchor(line.lstrip("#")) for line in text.splitlines() if re.match(r"#{1,6} ", line)}


def broken_links(root: Path) -> list[str]:
    """Every relative link (file, or file#anchor, or #anchor) in the documents under `root` whose file
    does not exist there or whose anchor is no heading of it, as "document: link"."""
    broken = []
    for document in documents(root):
        text = FENCE.sub("", document.read_text(encoding="utf-8"))
        for target in LINK.findall(text):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: and other schemes
                continue
            file, _, fragment = target.partition("#")
            path = (document.parent / file).resolve() if file else document.resolve()
            if not path.exists() or (root.resolve() not in path.parents and path != root.resolve()):
                broken.append(f"{document.relative_to(root)}: {target} (no such file)")
            elif fragment and (path.suffix != ".md" or fragment not in anchors(path)):
                broken.append(f"{document.relative_to(root)}: {target} (no such heading)")
    return broken
