"""Each learner's compiled kernels in a folder of their own, bounded and cleaned
(grader/running/kernel_cache.py)."""

from __future__ import annotations

import os
import time

from grader.running import kernel_cache
from grader.settings import LEARNERS, course_cache, learner_cache


def _file(path, size: int, age_seconds: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"k" * size)
    moment = time.time() - age_seconds
    os.utime(path, (moment, moment))


def test_a_learners_folder_is_pruned_oldest_first_to_its_limit(tmp_path):
    folder = learner_cache(tmp_path, "/roster/alice")
    for number, age in enumerate((50, 40, 30, 20, 10)):
        _file(folder / f"kernel-{number}-cache", 100, age)
    kernel_cache.prune(folder, limit=250)
    assert sorted(path.name for path in folder.iterdir()) == ["kernel-3-cache", "kernel-4-cache"]


def test_learner_folders_unused_for_long_or_beyond_the_budget_go_least_recent_first(tmp_path):
    ages = {"old": 40 * 24 * 3600, "a": 300, "b": 200, "c": 100}
    for name, age in ages.items():
        folder = learner_cache(tmp_path, name)
        _file(folder / "kernel-cache", 100, age)
        os.utime(folder, (time.time() - age, time.time() - age))
    kernel_cache.prune_learners(tmp_path, limit=250)
    left = {name for name in ages if learner_cache(tmp_path, name).exists()}
    assert left == {"b", "c"}, "the 30-day-old folder, then the least recently used, went"


def test_no_two_learners_share_a_folder_and_the_course_has_its_own(tmp_path):
    names = ["/roster/alice", "/roster/bob", "/roster/alice/", "bob", "b\udcffob"]
    folders = {learner_cache(tmp_path, name) for name in names}
    assert len(folders) == len(names)
    assert course_cache(tmp_path) not in folders
    assert all(folder.parent == tmp_path / LEARNERS for folder in folders)
