"""Harness of the toy problem: two calls, the second resuming from what the first saved."""

from __future__ import annotations

from pathlib import Path

import numpy as np


class Rejected(Exception):
    """What the learner's code wrote fails the check; `pitfall` names the mistake, if known."""

    def __init__(self, message: str, pitfall: str = "") -> None:
        super().__init__(message)
        self.pitfall = pitfall


def run_case(function, inputs: dict, folder: Path) -> np.ndarray:
    x, split = inputs["x"], inputs["split"]
    first = np.asarray(function(x, 0, split, str(folder)))
    if not (folder / "state.npy").is_file():
        found = sorted(path.name for path in folder.iterdir())
        raise Rejected(f"the first call wrote no state.npy in its folder (found: {found})", "never_saved")
    second = np.asarray(function(x, split, len(x), str(folder)))
    return np.concatenate([first, second]).astype(np.float32)
