"""A submission is the bytes of one regular file, read once, never what a link points to
(grader/running/submission.py)."""

from __future__ import annotations

import os

import pytest

from grader.running.submission import MAX_SUBMISSION_BYTES, SubmissionRefused, read_submission


@pytest.fixture
def checkout(tmp_path):
    """A learner's checkout with one real stub, beside a classmate's and the course's solution."""
    root = tmp_path / "roster" / "bob"
    (root / "problems" / "toy").mkdir(parents=True)
    (root / "problems" / "toy" / "stub.py").write_text("def scaled_sum(x, scale):\n    return x\n")
    alice = tmp_path / "roster" / "alice" / "problems" / "toy"
    alice.mkdir(parents=True)
    (alice / "stub.py").write_text("ALICE = 1\n")
    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / "toy.py").write_text("SOLUTION = 1\n")
    return root


def _stub(root, problem="toy"):
    return root / "problems" / problem / "stub.py"


def test_a_regular_file_is_read_with_its_name_and_where_it_came_from(checkout):
    read = read_submission(_stub(checkout), checkout)
    assert read.name == "stub.py" and read.source.startswith(b"def scaled_sum")
    assert read.shown == str(_stub(checkout))


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        ("link to the solution", "symbolic link"),
        ("link to a classmate", "symbolic link"),
        ("linked folder", "symbolic link"),
        ("link to a name too long", "symbolic link"),
        ("pipe", "not a regular file"),
        ("folder", "not a regular file"),
        ("too large", "at most 1 MiB"),
        ("nothing", "no submission file"),
    ],
)
def test_what_is_not_a_regular_file_of_the_learners_own_is_refused_with_the_reason(checkout, make, reason):
    stub = _stub(checkout)
    folder = stub.parent
    if make != "linked folder":
        stub.unlink()
    if make == "link to the solution":
        stub.symlink_to("../../../../solutions/toy.py")
    elif make == "link to a classmate":
        stub.symlink_to(checkout.parent / "alice" / "problems" / "toy" / "stub.py")
    elif make == "linked folder":
        os.rename(folder, checkout / "elsewhere")
        folder.symlink_to(checkout.parent / "alice" / "problems" / "toy")
    elif make == "link to a name too long":
        stub.symlink_to("x" * 300)
    elif make == "pipe":
        os.mkfifo(stub)  # opening it for reading would block a grader that waited for a writer
    elif make == "folder":
        stub.mkdir()
    elif make == "too large":
        stub.write_bytes(b"#" * (MAX_SUBMISSION_BYTES + 1))
    with pytest.raises(SubmissionRefused, match=reason):
        read_submission(stub, checkout)


def test_only_the_part_below_the_checkout_must_be_free_of_links(checkout, tmp_path):
    """The caller chose the folder (a roster that is itself a link, say); the learner chose what is in it."""
    linked = tmp_path / "linked-roster"
    linked.symlink_to(checkout.parent)
    read = read_submission(_stub(linked / "bob"), linked / "bob")
    assert read.source.startswith(b"def scaled_sum")


def test_a_file_named_by_itself_may_lie_in_a_linked_folder_but_may_not_be_a_link(checkout, tmp_path):
    (tmp_path / "mine").symlink_to(_stub(checkout).parent)
    assert read_submission(tmp_path / "mine" / "stub.py").source.startswith(b"def scaled_sum")
    (tmp_path / "link.py").symlink_to(_stub(checkout))
    with pytest.raises(SubmissionRefused, match="symbolic link"):
        read_submission(tmp_path / "link.py")
