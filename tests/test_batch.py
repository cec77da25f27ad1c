"""`grade batch`: a roster of learner checkouts graded into a CSV gradebook and a Markdown summary."""

from __future__ import annotations

import contextlib
import csv
import errno
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest
from conftest import TOY_ROOT

from grader.classroom import batch
from grader.command.main import main
from grader.course.checkout import LearnerCheckout
from grader.errors import CourseError, UsageError
from grader.grading.grader import Grader
from grader.report import write_file
from grader.results import Status

SUBMISSIONS = Path(__file__).parent / "submissions"
CORRECT_MAX = "import numpy as np\n\n\ndef largest(x):\n    return np.array([x.max()], np.float32)\n"


def _learner(roster: Path, name: str, toy: Path | None, toy_max: str | None) -> None:
    """A learner checkout: each stub from a file or source text, or missing (None)."""
    for problem, source in (("toy", toy), ("toy_max", toy_max)):
        folder = roster / name / "problems" / problem
        folder.mkdir(parents=True)
        if isinstance(source, Path):
            shutil.copy(source, folder / "stub.py")
        elif source is not None:
            (folder / "stub.py").write_text(source)


def _roster(course_root: Path, tmp_path: Path) -> Path:
    roster = tmp_path / "roster"
    solutions = course_root / "solutions"
    _learner(roster, "alice", solutions / "toy.py", CORRECT_MAX)
    _learner(roster, "bob", solutions / "pitfalls" / "toy" / "forgot_scale.py", None)
    _learner(roster, "carol", SUBMISSIONS / "segfaults.py", "def largest(x)\n")
    _learner(roster, "dave", SUBMISSIONS / "endless_loop.py", CORRECT_MAX)
    _learner(roster, "=HYPERLINK(1)", SUBMISSIONS / "returns_nan.py", CORRECT_MAX)
    (roster / ".git").mkdir()  # not a learner
    return roster


def test_batch_grades_every_learner_and_problem_into_csv_and_summary(toy_course, tmp_path):
    roster = _roster(toy_course.root, tmp_path)
    out = tmp_path / "out" / "gradebook.csv"
    argv = [str(Path(sys.executable).with_name("grade")), "batch", str(roster), "--out", str(out)]
    argv += ["--jobs", "2", "--timeout", "2"]
    done = subprocess.run(argv, cwd=toy_course.root, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    with out.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert set(batch.COLUMNS) <= set(rows[0])
    verdicts = {(row["learner"], row["problem"]): row["status"] for row in rows}
    assert verdicts == {
        ("'=HYPERLINK(1)", "toy"): "fail",
        ("'=HYPERLINK(1)", "toy_max"): "pass",
        ("alice", "toy"): "pass",
        ("alice", "toy_max"): "pass",
        ("bob", "toy"): "fail",
        ("bob", "toy_max"): "missing",
        ("carol", "toy"): "error",
        ("carol", "toy_max"): "error",
        ("dave", "toy"): "error",
        ("dave", "toy_max"): "pass",
    }
    scores = {
        (row["learner"], row["problem"]): (float(row["score"]), float(row["max_score"])) for row in rows
    }
    assert scores[("alice", "toy")] == (1.0, 1.0) and scores[("bob", "toy")] == (0.0, 1.0)
    bob = next(row for row in rows if row["learner"] == "bob" and row["problem"] == "toy")
    assert bob["pitfall"] == "forgot_scale"
    assert "[10/10]" in done.stderr, "progress is shown"
    summary = out.with_suffix(".md").read_text()
    assert "| toy | 1 | 2 | 2 | 0 | 20% | `forgot_scale` (1) |" in summary
    assert "| toy_max | 3 | 0 | 1 | 1 | 60% | none |" in summary
    assert "| alice | 2 | 2 |" in summary


def test_a_grader_failure_on_one_row_never_stops_the_batch(toy_course, tmp_path, monkeypatch, capsys):
    roster = _roster(toy_course.root, tmp_path)
    original = Grader.grade_files

    def flaky(self, items, on_result=None, root=None):
        if any("carol" in str(path) for _, path in items):
            raise RuntimeError("disk on fire")
        return original(self, items, on_result, root)

    monkeypatch.setattr(Grader, "grade_files", flaky)
    out = tmp_path / "gradebook.csv"
    assert main(["batch", str(roster), "--out", str(out), "--timeout", "2"]) == 2
    rows = list(csv.DictReader(out.open(newline="")))
    assert len(rows) == 10
    carol = [row for row in rows if row["learner"] == "carol"]
    assert {row["status"] for row in carol} == {"grader_error"}
    assert "disk on fire" in carol[0]["message"]
    assert {row["status"] for row in rows if row["learner"] == "alice"} == {"pass"}
    assert "could not be graded by the course" in capsys.readouterr().err


def test_a_roster_without_learners_is_a_usage_error(toy_course, tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["batch", str(tmp_path / "empty"), "--out", str(tmp_path / "g.csv")]) == 2
    assert "no learner folders" in capsys.readouterr().err
    assert not (tmp_path / "g.csv").exists()


def _gradebook(path: Path) -> list[dict[str, str]]:
    """A gradebook's rows without the timings, which differ from run to run."""
    with path.open(newline="") as handle:
        return [{k: v for k, v in row.items() if k != "seconds"} for row in csv.DictReader(handle)]


def test_sharding_then_merging_gives_the_gradebook_of_one_batch(toy_course, tmp_path, capsys):
    roster = tmp_path / "roster"
    solutions = toy_course.root / "solutions"
    for number, toy in enumerate(
        [solutions / "toy.py", solutions / "pitfalls" / "toy" / "forgot_scale.py"] * 3
    ):
        _learner(roster, f"learner{number}", toy, CORRECT_MAX if number % 2 else None)
    whole = tmp_path / "whole" / "gradebook.csv"
    assert main(["batch", str(roster), "--out", str(whole), "--timeout", "10"]) == 0
    shards = [tmp_path / f"shard{k}" / "gradebook.csv" for k in (1, 2, 3)]
    for k, out in enumerate(shards, 1):
        assert main(["batch", str(roster), "--out", str(out), "--shard", f"{k}/3", "--timeout", "10"]) == 0
    sizes = [len(_gradebook(out)) for out in shards]
    assert sizes == [4, 4, 4], "six learners, two problems, three shards of two learners each"
    merged = tmp_path / "merged.csv"
    assert main(["merge", *map(str, shards), "--out", str(merged)]) == 0
    assert _gradebook(merged) == _gradebook(whole)
    assert merged.with_suffix(".md").read_text() == whole.with_suffix(".md").read_text()


def test_merge_refuses_missing_overlapping_and_mismatched_shards(toy_course, tmp_path, capsys):
    roster = tmp_path / "roster"
    for number in range(3):
        _learner(roster, f"learner{number}", toy_course.root / "solutions" / "toy.py", CORRECT_MAX)
    outs = {}
    for shard in ("1/2", "2/2", "1/3"):
        outs[shard] = tmp_path / shard.replace("/", "of") / "gradebook.csv"
        assert (
            main(["batch", str(roster), "--out", str(outs[shard]), "--shard", shard, "--timeout", "10"]) == 0
        )
    capsys.readouterr()
    merged = str(tmp_path / "merged.csv")
    assert main(["merge", str(outs["1/2"]), "--out", merged]) == 2
    assert "missing shard(s) 2/2" in capsys.readouterr().err
    assert main(["merge", str(outs["1/2"]), str(outs["1/2"]), str(outs["2/2"]), "--out", merged]) == 2
    assert "shard 1/2 given twice" in capsys.readouterr().err
    assert main(["merge", str(outs["1/2"]), str(outs["1/3"]), "--out", merged]) == 2
    assert "is a shard of" in capsys.readouterr().err
    assert main(["batch", str(roster), "--out", merged, "--shard", "3/2"]) == 2
    assert "K must be between 1 and N" in capsys.readouterr().err
    assert not Path(merged).exists(), "a refused merge writes nothing"


# --- hostile learner folders -------------------------------------------------------------------------

NOT_UTF8 = os.fsdecode(b"learner\xff\xfe")  # the name Python gives a folder whose name is not UTF-8
NEWLINE = "new\nline|pipe"
TOO_LONG = "a" * 300  # longer than a file name may be (255 bytes)
# Every kind of learner, by folder name in roster order, with the name the gradebook shows.
SHOWN = {
    "honest": "honest",
    NOT_UTF8: "learner\\xff\\xfe",
    "linked": "linked",  # problems/toy/stub.py is a link to TOO_LONG, and no toy_max stub
    NEWLINE: "new\\nline|pipe",
    "zz_linked": "zz_linked",  # the learner's folder itself is a link to TOO_LONG
}


class HostileBatch(NamedTuple):
    status: int
    gradebook: Path
    progress: str
    statuses_of_shards_and_merge: list[int]
    merged: Path


@pytest.fixture(scope="module")
def hostile_batch(tmp_path_factory) -> HostileBatch:
    """One `grade batch` over a roster of hostile learner folders (SHOWN), run once for the tests below, and
    the same roster graded in two shards and merged."""
    tmp = tmp_path_factory.mktemp("hostile")
    course = tmp / "course"
    shutil.copytree(TOY_ROOT, course, ignore=shutil.ignore_patterns(".grade", "__pycache__"))
    roster = tmp / "roster"
    roster.mkdir()
    os.mkdir(os.fsencode(roster / NOT_UTF8))
    for name in ("honest", NOT_UTF8, NEWLINE):
        _learner(roster, name, course / "solutions" / "toy.py", CORRECT_MAX)
    _learner(roster, "linked", None, None)
    (roster / "linked" / "problems" / "toy" / "stub.py").symlink_to(TOO_LONG)
    (roster / "zz_linked").symlink_to(TOO_LONG)
    whole = tmp / "whole" / "gradebook.csv"
    shards = [tmp / f"shard{k}" / "gradebook.csv" for k in (1, 2)]
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stderr(io.StringIO()) as progress:
        patch.chdir(course)
        patch.delenv("GRADE_SECRET", raising=False)
        patch.delenv("GRADE_COURSE_ROOT", raising=False)
        status = main(["batch", str(roster), "--out", str(whole), "--jobs", "2", "--timeout", "10"])
        shown = progress.getvalue()
        statuses = [
            main(["batch", str(roster), "--out", str(out), "--shard", f"{k}/2", "--timeout", "10"])
            for k, out in enumerate(shards, 1)
        ]
        merged = tmp / "merged" / "gradebook.csv"
        statuses.append(main(["merge", *map(str, shards), "--out", str(merged)]))
    return HostileBatch(status, whole, shown, statuses, merged)


def test_a_hostile_learner_folder_is_that_learners_rows_and_the_gradebook_is_whole(hostile_batch):
    assert hostile_batch.status == 0, "no row is the grader's failure"
    with hostile_batch.gradebook.open(newline="", encoding="utf-8") as handle:
        header, *rows = list(csv.reader(handle))
    assert header == list(batch.COLUMNS)
    assert len(rows) == len(SHOWN) * 2 and all(len(row) == len(batch.COLUMNS) for row in rows)
    verdicts = {(row[0], row[1]): row[2] for row in rows}
    too_long = os.strerror(errno.ENAMETOOLONG)
    assert verdicts == {
        **{
            (SHOWN[name], problem): "pass"
            for name in ("honest", NOT_UTF8, NEWLINE)
            for problem in ("toy", "toy_max")
        },
        ("linked", "toy"): "error",
        ("linked", "toy_max"): "missing",
        ("zz_linked", "toy"): "error",
        ("zz_linked", "toy_max"): "error",
    }
    messages = {(row[0], row[1]): row[6] for row in rows}
    assert "stub.py" in messages[("linked", "toy")], "the grader refuses the link in its own words"
    assert messages[("zz_linked", "toy_max")] == f"problems/toy_max/stub.py cannot be read: {too_long}"


def test_learner_names_are_escaped_in_the_gradebook_its_summary_and_the_progress(hostile_batch):
    with hostile_batch.gradebook.open(newline="", encoding="utf-8") as handle:
        learners = [row["learner"] for row in csv.DictReader(handle)]
    assert list(dict.fromkeys(learners)) == list(SHOWN.values()), "in roster order, by the folders' names"
    summary = hostile_batch.gradebook.with_suffix(".md").read_text(encoding="utf-8")
    assert summary.splitlines()[-5:] == [
        "| honest | 2 | 2 |",
        "| learner\\xff\\xfe | 2 | 2 |",
        "| linked | 0 | 2 |",
        "| new\\nline\\|pipe | 2 | 2 |",
        "| zz_linked | 0 | 2 |",
    ]
    lines = hostile_batch.progress.splitlines()
    assert len(lines) == len(SHOWN) * 2 and all(line.startswith("[") for line in lines)
    assert any("] new\\nline|pipe/toy: pass" in line for line in lines)


def test_shards_of_escaped_names_merge_into_the_gradebook_of_one_batch(hostile_batch):
    assert hostile_batch.statuses_of_shards_and_merge == [0, 0, 0]
    assert _gradebook(hostile_batch.merged) == _gradebook(hostile_batch.gradebook)
    merged_summary = hostile_batch.merged.with_suffix(".md").read_text(encoding="utf-8")
    assert merged_summary == hostile_batch.gradebook.with_suffix(".md").read_text(encoding="utf-8")


def test_a_learners_unreadable_stub_is_their_error_and_the_others_are_graded(
    toy_course, tmp_path, monkeypatch
):
    roster = tmp_path / "roster"
    for name in ("alice", "carol"):
        _learner(roster, name, toy_course.root / "solutions" / "toy.py", CORRECT_MAX)
    looked_at = LearnerCheckout.missing

    def unreadable_for_carol(self, problem):
        if self.root.name == "carol":
            raise OSError(errno.EACCES, os.strerror(errno.EACCES), str(self.stub(problem)))
        return looked_at(self, problem)

    monkeypatch.setattr(LearnerCheckout, "missing", unreadable_for_carol)
    out = tmp_path / "gradebook.csv"
    assert main(["batch", str(roster), "--out", str(out), "--timeout", "10"]) == 0
    rows = list(csv.DictReader(out.open(newline="")))
    assert {(row["learner"], row["status"]) for row in rows} == {("alice", "pass"), ("carol", "error")}
    carol = next(row for row in rows if row["learner"] == "carol")
    assert carol["message"] == f"problems/toy/stub.py cannot be read: {os.strerror(errno.EACCES)}"


class _Raises:
    """A grader whose grading raises `error`."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def grade_files(self, items, on_result=None, root=None):
        raise self.error


@pytest.mark.parametrize(
    ("error", "status", "message"),
    [
        pytest.param(
            lambda learner: OSError(
                errno.ELOOP, os.strerror(errno.ELOOP), str(learner / "problems/toy/x.py")
            ),
            Status.ERROR,
            f"problems/toy/x.py cannot be read: {os.strerror(errno.ELOOP)}",
            id="a file of the learner's",
        ),
        pytest.param(
            lambda _: OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "/cache/x"),
            Status.GRADER_ERROR,
            f"internal error: OSError: [Errno {errno.ENOSPC}] {os.strerror(errno.ENOSPC)}: '/cache/x'",
            id="a file of the grader's",
        ),
        pytest.param(
            lambda _: OSError(errno.EMFILE, os.strerror(errno.EMFILE)),
            Status.GRADER_ERROR,
            f"internal error: OSError: [Errno {errno.EMFILE}] {os.strerror(errno.EMFILE)}",
            id="no file",
        ),
        pytest.param(
            lambda _: CourseError("the reference of toy fails\nTraceback ..."),
            Status.GRADER_ERROR,
            "the reference of toy fails",
            id="the course",
        ),
    ],
)
def test_an_os_error_is_the_learners_only_when_it_is_about_their_files(
    toy_course, tmp_path, error, status, message
):
    learner = tmp_path / "roster" / "erin"
    _learner(learner.parent, learner.name, toy_course.root / "solutions" / "toy.py", CORRECT_MAX)
    rows = batch.grade_learner(_Raises(error(learner)), toy_course.problems(), learner)
    assert [(row.status, row.message) for row in rows] == [(status, message)] * 2


def _linked_folder(folder: Path) -> None:
    """Makes `folder` a link to a name too long."""
    folder.rmdir()
    folder.symlink_to(TOO_LONG)


@pytest.mark.parametrize(
    ("make", "missing"),
    [
        pytest.param(lambda stub: stub.write_text("x = 1\n"), False, id="a file"),
        pytest.param(lambda stub: stub.symlink_to(TOO_LONG), False, id="a link to a name too long"),
        pytest.param(lambda stub: stub.symlink_to("nowhere.py"), False, id="a link to nothing"),
        pytest.param(lambda stub: _linked_folder(stub.parent), False, id="in a folder that is a link"),
        pytest.param(lambda stub: stub.mkdir(), True, id="a folder"),
        pytest.param(lambda stub: None, True, id="nothing"),
    ],
)
def test_a_stub_is_missing_only_when_nothing_is_there_and_asking_never_raises(
    toy_course, tmp_path, make, missing
):
    checkout = LearnerCheckout(tmp_path / "learner")
    stub = checkout.stub(toy_course.problem("toy"))
    stub.parent.mkdir(parents=True)
    make(stub)
    assert checkout.missing(toy_course.problem("toy")) is missing


@pytest.mark.parametrize(
    ("one", "other"),
    [
        (b"\xff", b"\\xff"),
        (b"a\xc2\x85", b"a\x85"),  # U+0085, a control character, and the byte 0x85 that is not UTF-8
        (b"tab\there", b"tab\\there"),
        (b"new\nline", b"new\\nline"),
    ],
)
def test_distinct_learner_folders_are_shown_by_distinct_printable_names(one, other):
    shown = [batch.learner_name(Path(os.fsdecode(name))) for name in (one, other)]
    assert shown[0] != shown[1]
    assert all(name.isprintable() for name in shown)


def test_the_gradebook_of_a_learner_whose_name_is_not_utf8_is_written_whole(toy_course, tmp_path):
    learner = tmp_path / "roster" / os.fsdecode(b"\xff\xfe")
    (learner / "problems").mkdir(parents=True)
    rows = batch.grade_learner(_Raises(AssertionError("nothing to grade")), toy_course.problems(), learner)
    out = tmp_path / "gradebook.csv"
    write_file(out, batch.gradebook_csv(rows))
    with out.open(newline="", encoding="utf-8") as handle:
        written = list(csv.DictReader(handle))
    assert [(row["learner"], row["status"]) for row in written] == [("\\xff\\xfe", "missing")] * 2
    assert "\\xff\\xfe" in written[0]["message"]


@pytest.mark.parametrize("failing", ["fsync", "replace"])
def test_write_file_keeps_the_old_file_when_writing_fails(tmp_path, monkeypatch, failing):
    out = tmp_path / "gradebook.csv"
    out.write_text("the old gradebook\n")

    def fail(*args, **kwargs):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, failing, fail)
    with pytest.raises(UsageError, match="cannot write the report"):
        write_file(out, "the new gradebook\n")
    assert out.read_text() == "the old gradebook\n"
    assert [path.name for path in tmp_path.iterdir()] == ["gradebook.csv"], "no temporary file is left"


def test_write_file_replaces_the_file_a_link_points_to(tmp_path):
    (tmp_path / "gradebook.csv").write_text("the old gradebook\n")
    link = tmp_path / "latest.csv"
    link.symlink_to("gradebook.csv")
    write_file(link, "the new gradebook\n")
    assert link.is_symlink() and (tmp_path / "gradebook.csv").read_text() == "the new gradebook\n"
