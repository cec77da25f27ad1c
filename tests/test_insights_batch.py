"""`grade batch --insights`, `grade insights`, `grade merge` of shards, and `grade new ID --pitfall NAME
--from-group N` on a toy class; and the page opened by a real headless Chromium."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from conftest import TEST_SECRET, TOY_ROOT

from grader.classroom.behaviour_record import read_record
from grader.classroom.insights import class_insights
from grader.course.problems import Course

GRADE = str(Path(sys.executable).with_name("grade"))
HOSTILE = "<img src=x onerror=alert(1)>"
DOUBLED = """import numpy as np


def scaled_sum(x, scale):
    return np.array([x.sum() * scale * 2, x.max()], np.float32)
"""
DOUBLED_AGAIN = """import jax.numpy as jnp
import numpy as np


def scaled_sum(x, scale):  # the same numbers, written otherwise
    total = jnp.sum(jnp.asarray(x))
    return np.asarray(jnp.stack([2 * scale * total, jnp.max(x)]), np.float32)
"""
MEAN = """import numpy as np


def scaled_sum(x, scale):
    return np.array([x.mean() * scale, x.max()], np.float32)
"""
RAISES = "def scaled_sum(x, scale):\n    raise ValueError('no')\n"


def _class(root: Path) -> Path:
    """A toy class: two learners hand in the named pitfall, four (one hostile name) a doubled sum written
    two ways, one a mean, one a raising file, two a correct file."""
    solutions = root / "course" / "solutions"
    handed = {
        "alice": (solutions / "toy.py").read_text(),
        "bob": (solutions / "pitfalls" / "toy" / "forgot_scale.py").read_text(),
        "carl": (solutions / "pitfalls" / "toy" / "forgot_scale.py").read_text(),
        "dan": DOUBLED,
        "eve": DOUBLED_AGAIN,
        "fay": DOUBLED,
        HOSTILE: DOUBLED_AGAIN,
        "gus": MEAN,
        "hal": RAISES,
        "ida": (solutions / "toy.py").read_text(),
    }
    roster = root / "roster"
    for learner, source in handed.items():
        stub = roster / learner / "problems" / "toy" / "stub.py"
        stub.parent.mkdir(parents=True)
        stub.write_text(source)
    return roster


def _grade(root: Path, *argv: str, secret: bool = False) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in ("GRADE_SECRET", "GRADE_COURSE_ROOT")}
    if secret:
        environment["GRADE_SECRET"] = TEST_SECRET
    return subprocess.run(
        [GRADE, *argv], cwd=root / "course", env=environment, capture_output=True, text=True, timeout=600
    )


@pytest.fixture(scope="module")
def toy_class(tmp_path_factory) -> Path:
    """The toy class graded in practice mode with insights (`out/gradebook.*`), and in hidden mode in two
    shards merged with insights (`merged/gradebook.*`)."""
    root = tmp_path_factory.mktemp("insights")
    shutil.copytree(TOY_ROOT, root / "course", ignore=shutil.ignore_patterns(".grade", "__pycache__"))
    roster = _class(root)
    done = _grade(
        root, "batch", str(roster), "--out", str(root / "out" / "gradebook.csv"), "--jobs", "2", "--insights"
    )
    assert done.returncode == 0, done.stderr
    for k in (1, 2):
        shard = ["--out", str(root / f"shard{k}" / "gradebook.csv"), "--shard", f"{k}/2"]
        done = _grade(root, "batch", str(roster), *shard, secret=True)
        assert done.returncode == 0, done.stderr
    shards = [str(root / f"shard{k}" / "gradebook.csv") for k in (1, 2)]
    done = _grade(root, "merge", *shards, "--out", str(root / "merged" / "gradebook.csv"), "--insights")
    assert done.returncode == 0, done.stderr
    return root


def _groups(gradebook: Path) -> list[tuple[int, list[str], str]]:
    (toy,) = [found for found in class_insights(read_record(gradebook)) if found.facts.problem == "toy"]
    return [(g.size, [m.learner for m in g.members], g.pitfall) for g in toy.groups]


def test_batch_groups_the_failing_submissions_by_what_they_compute(toy_class):
    assert _groups(toy_class / "out" / "gradebook.csv") == [
        (4, [HOSTILE, "dan", "eve", "fay"], ""),
        (2, ["bob", "carl"], "forgot_scale"),
        (1, ["gus"], ""),
    ]  # alice and ida passed, hal raised: neither is grouped
    summary = (toy_class / "out" / "gradebook.md").read_text()
    assert "[gradebook.insights.html](gradebook.insights.html)" in summary
    assert "- **toy**: 7 failed: 2 groups of two or more (1 without a name), 1 alone" in summary
    assert "group 1: 4 learners, no name" in summary and "group 2: 2 learners, `forgot_scale`" in summary


def test_hidden_shards_merged_keep_the_practice_outputs_and_group_the_same(toy_class):
    """Hidden mode keeps the practice outputs it names mistakes from; merged shards group as one batch."""
    merged = read_record(toy_class / "merged" / "gradebook.csv")
    practice = read_record(toy_class / "out" / "gradebook.csv")
    assert merged.mode == "hidden" and merged.statuses == practice.statuses
    assert _groups(toy_class / "merged" / "gradebook.csv") == _groups(toy_class / "out" / "gradebook.csv")
    for one, other in zip(merged.behaviours, practice.behaviours, strict=True):
        assert one.learner == other.learner
        assert all(np.array_equal(one.outputs[i], other.outputs[i]) for i in other.outputs)
    assert (toy_class / "merged" / "gradebook.insights.html").is_file()


def test_grade_insights_of_a_gradebook_writes_the_page_and_prints_the_groups(toy_class):
    page = toy_class / "again.html"
    done = _grade(toy_class, "insights", str(toy_class / "out" / "gradebook.csv"), "--page", str(page))
    assert done.returncode == 0, done.stderr
    assert "group 2: 2 learners, `forgot_scale`" in done.stdout
    assert page.read_text() == (toy_class / "out" / "gradebook.insights.html").read_text()
    missing = _grade(toy_class, "insights", str(toy_class / "nothing.csv"))
    assert missing.returncode == 2 and "behaviour.json" in missing.stderr


def test_grade_new_begins_a_pitfall_from_a_group(toy_class, tmp_path):
    course = tmp_path / "course"
    shutil.copytree(toy_class / "course", course, ignore=shutil.ignore_patterns(".grade", "__pycache__"))
    gradebook = str(toy_class / "out" / "gradebook.csv")
    argv = ["new", "toy", "--pitfall", "doubled_sum", "--from-group", "1", "--gradebook", gradebook]
    done = _grade(tmp_path, *argv)
    assert done.returncode == 0, done.stderr
    written = course / "solutions" / "pitfalls" / "toy" / "doubled_sum.py"
    assert written.read_text().startswith('"""Pitfall doubled_sum: TODO(grade new)')
    assert "2 * scale * total" in written.read_text()  # the representative: the first learner's file
    entry = tomllib.loads((course / "problems" / "toy" / "problem.toml").read_text())["pitfalls"][
        "doubled_sum"
    ]
    assert entry["families"] == ["small", "large"] and "TODO(grade new)" in entry["title"]
    assert "doubled_sum" in [p.name for p in Course(course).problem("toy").pitfalls]
    again = _grade(tmp_path, *argv)
    assert again.returncode == 2 and "already" in again.stderr
    no_group = _grade(tmp_path, *argv[:-3], "9", "--gradebook", gradebook)
    assert no_group.returncode == 2 and "groups 1 to 3" in no_group.stderr


class _Dom(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


@pytest.mark.skipif(shutil.which("chromium") is None, reason="no chromium binary (apt-get install chromium)")
def test_the_page_opens_in_headless_chromium_without_network(toy_class, tmp_path):
    """Chromium, offline, renders the page: the DOM it built has the groups table, the three kinds of plot,
    and the hostile learner's name as text, never as an element."""
    page = toy_class / "out" / "gradebook.insights.html"
    argv = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
    argv += ["--no-proxy-server", "--proxy-server=127.0.0.1:9", f"--user-data-dir={tmp_path / 'profile'}"]
    done = subprocess.run([*argv, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    dom = _Dom()
    dom.feed(done.stdout)
    classes = [attrs.get("class", "") for _, attrs in dom.tags]
    assert classes.count("groups") == 1 and classes.count("group") == 3  # 2 shared + 1 folded
    assert {"chart pass-rates", "chart mistakes", "chart series"} <= set(classes)
    assert not [tag for tag, _ in dom.tags if tag in ("img", "script", "iframe")]
    assert HOSTILE in "".join(dom.text)
