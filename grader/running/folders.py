"""How much a child has written to a folder: bytes and entries, counted without following links, stopping
early once past a limit (a submission may make a million empty files to slow the count down)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def usage(folder: Path, max_entries: int = 1 << 62) -> tuple[int, int]:
    """Returns (bytes, entries) beneath `folder`, counting at most `max_entries` + 1 entries."""
    total, entries, stack = 0, 0, [str(folder)]
    while stack and entries <= max_entries:
        with contextlib.suppress(OSError), os.scandir(stack.pop()) as found:
            for entry in found:
                entries += 1
                with contextlib.suppress(OSError):
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    else:
                        total += entry.stat(follow_symlinks=False).st_size
                if entries > max_entries:
                    break
    return total, entries
