"""`grade check` (is a problem sound?) and `grade new` (the skeleton of a problem), for problem authors.

The sound problem here is the harness toy problem (tests/harness_problem/); each mutant breaks one thing
the check must catch."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from grader.authoring.rules import secret_dependent_sentences
from grader.command.main import main
from grader.course.problems import Course

HARNESS_PROBLEM = Path(__file__).resolve().parent / "harness_problem"


@pytest.fixture
def course(toy_course: Course) -> Course:
    shutil.copytree(HARNESS_PROBLEM, toy_course.root, dirs_exist_ok=True)
    return toy_course


def _rows(out: str) -> dict[str, str]:
    """The check table's rows, by `kind name`, as printed."""
    rows = {}
    for line in out.splitlines():
        words = line.split()
        if len(words) >= 3 and words[0] in (
            "files",
            "stub",
            "reference",
            "pitfall",
            "variant",
            "mistake",
            "rule",
        ):
            rows[f"{words[0]} {words[1]}"] = line
    return rows


def test_a_sound_problem_checks_ok_with_its_ratios(course, capsys):
    assert main(["check", "toy_resume"]) == 0
    out = capsys.readouterr().out
    rows = _rows(out)
    assert "[sound]" in out and "1 of 1 problems sound" in out
    assert " ok " in rows["stub stub.py"] and " ok " in rows["reference reference"]
    assert "inf" in rows["pitfall never_saved"] and "named 'never_saved'" in rows["pitfall never_saved"]
    assert all(" ok " in rows[f"variant {name}"] for name in ("cumsum", "python_floats", "text_file"))
    mistakes = [row for key, row in rows.items() if key.startswith("mistake ")]
    assert len(mistakes) == 8 and all(" ok " in row and "never named" in row for row in mistakes)
    rules = [row for key, row in rows.items() if key.startswith("rule ")]
    assert len(rules) == 4 and all(" ok " in row and "on every secret" in row for row in rules)
    assert (
        "pitfall:restarts, mistake:state_added_twice fail on every secret"
        in rows["rule resumes_from_the_saved_total"]
    )


# Restarts from zero on the practice case's split (4) only, and adds each value twice elsewhere: named
# 'restarts' from the practice cases, which the hidden cases show to be wrong.
RESTARTS_ON_PRACTICE_ONLY = """\
import os

import numpy as np


def running_sum(x, start, stop, folder):
    path = os.path.join(folder, "state.npy")
    total = np.float32(np.load(path)) if start > 0 and start != 4 else np.float32(0)
    out = []
    for value in x[start:stop]:
        total = np.float32(total + (value if start in (0, 4) else 2 * value))
        out.append(total)
    np.save(path, np.array(total))
    return np.array(out, dtype=np.float32)
"""


def test_mistakes_that_pass_somewhere_or_are_named_wrongly_are_reported(course, capsys):
    """The precision of naming: a natural mistake must fail on every secret, and a pitfall the grader names
    for it must reproduce it on every case, not only on the practice cases the name is chosen from."""
    mistakes = course.solutions_dir / "mistakes" / "toy_resume"
    shutil.copy(course.solutions_dir / "toy_resume.py", mistakes / "not_a_mistake.py")
    (mistakes / "restarts_on_practice_only.py").write_text(RESTARTS_ON_PRACTICE_ONLY, encoding="utf-8")
    assert main(["check", "toy_resume"]) == 1
    rows = _rows(capsys.readouterr().out)
    assert (
        " FAIL " in rows["mistake not_a_mistake"]
        and "passes on the cases of practice" in rows["mistake not_a_mistake"]
    )
    wrong = rows["mistake restarts_on_practice_only"]
    assert " FAIL " in wrong and "named 'restarts', which does not reproduce it on 'check-1'" in wrong
    assert "practice" not in wrong.split("does not reproduce it on")[1]
    assert " ok " in rows["mistake doubles_each_value"]


def test_fewer_than_eight_mistakes_leave_a_problem_incomplete(course, capsys):
    (course.solutions_dir / "mistakes" / "toy_resume" / "subtracts.py").unlink()
    assert main(["check", "toy_resume"]) == 1
    out = capsys.readouterr().out
    assert "[incomplete" in out and "7 of 8 natural mistakes" in _rows(out)["files mistakes"]


def test_mutants_of_a_sound_problem_are_each_reported(course, capsys):
    solutions = course.solutions_dir
    reference = solutions / "toy_resume.py"
    shutil.copy(reference, solutions / "pitfalls" / "toy_resume" / "restarts.py")  # a "pitfall" that is right
    shutil.copy(
        solutions / "pitfalls" / "toy_resume" / "never_saved.py",
        solutions / "variants" / "toy_resume" / "cumsum.py",
    )  # a "variant" that is wrong
    shutil.copy(reference, course.problem("toy_resume").stub_path)  # a stub that already passes
    assert main(["check", "toy_resume"]) == 1
    out = capsys.readouterr().out
    rows = _rows(out)
    assert "NOT SOUND: 5 shortfalls" in out
    assert (
        " FAIL " in rows["rule resumes_from_the_saved_total"]
        and "pitfall:restarts" in rows["rule resumes_from_the_saved_total"]
    )
    assert " FAIL " in rows["files stub.py"] and "toy_resume: fill in running_sum" in rows["files stub.py"]
    assert " FAIL " in rows["pitfall restarts"] and "only 0 tolerances" in rows["pitfall restarts"]
    assert " FAIL " in rows["variant cumsum"]
    assert " FAIL " in rows["stub stub.py"] and "not implemented" in rows["stub stub.py"]
    assert " ok " in rows["pitfall never_saved"] and " ok " in rows["variant text_file"]


def test_pitfalls_with_the_same_numbers_are_each_named_as_themselves(course, capsys):
    problem = course.problem("toy_resume")
    with (problem.directory / "problem.toml").open("a", encoding="utf-8") as toml:
        toml.write('\n[pitfalls.starts_over]\ntitle = "Starts over"\nexplanation = "As restarts."\n')
        toml.write('families = ["vector"]\n')
    pitfalls = course.solutions_dir / "pitfalls" / "toy_resume"
    shutil.copy(pitfalls / "restarts.py", pitfalls / "starts_over.py")
    with problem.statement_path.open("a", encoding="utf-8") as statement:
        statement.write("\nAlso `starts_over`.\n")
    assert main(["check", "toy_resume"]) == 0  # the grader names both; which to keep is the author's call
    rows = _rows(capsys.readouterr().out)
    assert (
        "named 'restarts'" in rows["pitfall restarts"]
        and "named 'starts_over'" in rows["pitfall starts_over"]
    )


def test_new_writes_a_draft_that_check_calls_incomplete_not_broken(course, capsys):
    assert main(["new", "fp16_sums"]) == 0
    written = capsys.readouterr().out
    for name in ("problem.toml", "cases.py", "README.md", "GRADING.md", "stub.py", "hints.md"):
        assert f"problems/fp16_sums/{name}" in written
    assert "solutions/fp16_sums.py" in written and "solutions/variants/fp16_sums/variant_3.py" in written
    assert "solutions/mistakes/fp16_sums/mistake_8.py" in written
    assert main(["check", "fp16_sums"]) == 1
    out = capsys.readouterr().out
    rows = _rows(out)
    assert "[incomplete" in out and " FAIL " not in out and "Traceback" not in out
    assert "TODO(grade new) left in solutions/fp16_sums.py" in rows["files reference"]
    assert " ok " in rows["stub stub.py"]  # what can run already runs


def test_a_draft_stays_out_of_the_list_and_of_grading_all(course, capsys):
    assert main(["new", "fp16_sums"]) == 0
    capsys.readouterr()
    assert main(["list"]) == 0
    assert "fp16_sums" not in capsys.readouterr().out
    assert main(["--all", "--format", "json"]) == 1
    assert "fp16_sums" not in capsys.readouterr().out
    assert main(["export", str(course.root.parent / "copy")]) == 0
    assert not (course.root.parent / "copy" / "problems" / "fp16_sums").exists()


@pytest.mark.parametrize("problem_id", ["toy", "Bad-Name", "import"])
def test_new_refuses_an_existing_or_invalid_id(course, problem_id, capsys):
    assert main(["new", problem_id]) == 2
    assert "grade: error:" in capsys.readouterr().err
    assert not (course.problems_dir / "Bad-Name").exists()


def test_record_keeps_what_the_check_measured_per_platform_for_the_grading_notes(course, capsys, monkeypatch):
    from grader.authoring import margins
    from grader.authoring.docs import MARGINS

    problem = course.problem("toy_resume")
    notes = problem.grading_path
    notes.write_text(f"# How toy_resume is graded\n\n{MARGINS.start}\n{MARGINS.end}\n", encoding="utf-8")
    monkeypatch.setattr(margins, "platform_label", lambda: "Python 9.9, jax 9.9")
    margins.write(problem, "Python 1.0, jax 1.0", 20, [("pitfall", "never_saved", 12.5)])  # another one's
    assert main(["check", "toy_resume", "--secrets", "1", "--record"]) == 0
    rows = _rows(capsys.readouterr().out)
    record = margins.read(problem)
    assert record["Python 1.0, jax 1.0"]["pitfall"] == {"never_saved": 12.5}  # kept
    mine = record["Python 9.9, jax 9.9"]
    assert mine["secrets"] == 1 and set(mine["variant"]) == {"cumsum", "python_floats", "text_file"}
    assert mine["pitfall"]["never_saved"] == float("inf") and "inf" in rows["pitfall never_saved"]
    assert all(r <= 0.5 for r in mine["variant"].values()) and len(mine["mistake"]) == 8
    table = MARGINS.replace(notes.read_text(encoding="utf-8"), margins.margins_table(problem), notes)
    assert "| pitfall `never_saved` | >= 10 | 12.5 | inf |" in table
    assert "Python 1.0, jax 1.0 (20 secrets," in table and "Python 9.9, jax 9.9 (1 secrets," in table


def _rules_of(course: Course, text: str) -> None:
    """Replaces the toy problem's [rules] with `text`."""
    manifest = course.problem("toy_resume").directory / "problem.toml"
    head, rest = manifest.read_text(encoding="utf-8").split("\n[rules.", 1)
    manifest.write_text(
        head + "\n" + text + "\n[pitfalls." + rest.split("\n[pitfalls.", 1)[1], encoding="utf-8"
    )


def test_a_rule_without_a_file_that_fails_everywhere_or_a_file_that_passes_everywhere_is_reported(
    course, capsys
):
    """Each mutant of the rules breaks one thing: a rule held by nothing, one held by a file of the wrong
    kind, one said to be not graded with no file to show it, one whose breaking file passes (a copy of the
    reference), one said to pass whose accepted file fails; a problem with no rules is incomplete."""
    solutions = course.solutions_dir
    shutil.copy(solutions / "toy_resume.py", solutions / "mistakes" / "toy_resume" / "not_a_mistake.py")
    shutil.copy(
        solutions / "mistakes" / "toy_resume" / "subtracts.py",
        solutions / "variants" / "toy_resume" / "wrong.py",
    )
    _rules_of(
        course,
        """[rules.held_by_nothing]
step = "1"
rule = "a rule"

[rules.wrong_kind]
step = "1"
rule = "a rule"
broken_by = ["variant:cumsum"]

[rules.said_without_a_file]
step = "1"
rule = "a rule"
not_graded = "the cases cannot tell"

[rules.broken_by_a_file_that_passes]
step = "1"
rule = "a rule"
broken_by = ["mistake:subtracts", "mistake:not_a_mistake"]

[rules.accepted_but_fails]
step = "1"
rule = "a rule"
not_graded = "the cases cannot tell"
accepted = ["variant:wrong"]

[rules.held]
step = "1"
rule = "a rule"
broken_by = ["mistake:subtracts"]
""",
    )
    assert main(["check", "toy_resume"]) == 1
    rows = _rows(capsys.readouterr().out)
    assert (
        " FAIL " in rows["rule held_by_nothing"] and "needs either broken_by" in rows["rule held_by_nothing"]
    )
    assert (
        " FAIL " in rows["rule wrong_kind"]
        and "must be pitfall:<name> or mistake:<name>" in rows["rule wrong_kind"]
    )
    assert (
        " FAIL " in rows["rule said_without_a_file"]
        and "no accepted file" in rows["rule said_without_a_file"]
    )
    passing = rows["rule broken_by_a_file_that_passes"]
    assert " FAIL " in passing and "mistake:not_a_mistake passes on the cases of practice" in passing
    assert " FAIL " in rows["rule accepted_but_fails"] and "variant:wrong" in rows["rule accepted_but_fails"]
    assert (
        " ok " in rows["rule held"] and "step 1: mistake:subtracts fails on every secret" in rows["rule held"]
    )

    (solutions / "mistakes" / "toy_resume" / "not_a_mistake.py").unlink()
    (solutions / "variants" / "toy_resume" / "wrong.py").unlink()
    _rules_of(course, "")
    assert main(["check", "toy_resume"]) == 1
    out = capsys.readouterr().out
    assert "[incomplete" in out and "lists no [rules.<name>]" in _rows(out)["rule problem.toml"]


@pytest.mark.parametrize(
    "sentence",
    [
        "Caught only now and then: an fp16 accumulator.",
        "Not reliably caught (it passes on most cases and fails on a few): a second pass.",
        "Whether it fails depends on the secret.",
        "It is sometimes caught.",
    ],
)
def test_sentences_that_admit_a_verdict_depending_on_the_secret_are_found(sentence):
    text = f"It passes.\n{sentence}\nNot graded: no loss scale, which the cases cannot tell from the recipe."
    assert secret_dependent_sentences(text) == [sentence]


def test_a_statement_that_admits_a_verdict_depending_on_the_secret_is_not_sound(course, capsys):
    statement = course.problem("toy_resume").statement_path
    sentence = "Caught only now and then: a total kept in float16."
    statement.write_text(statement.read_text(encoding="utf-8") + f"\n{sentence}\n", encoding="utf-8")
    assert main(["check", "toy_resume"]) == 1
    row = _rows(capsys.readouterr().out)["rule README.md"]
    assert " FAIL " in row and "admits a verdict that depends on the secret" in row and sentence in row


NEAR_THE_EDGE = """\
import os

import numpy as np


def running_sum(x, start, stop, folder):
    path = os.path.join(folder, "state.npy")
    total = np.float64(np.load(path)) if start > 0 else np.float64(0)
    out = []
    for value in x[start:stop]:
        total = total + np.float64(value)
        out.append(total)
    np.save(path, np.array(total))
    return np.array(out, dtype=np.float64) * (1 + 0.7e-6)  # about 0.7 of the toy's rtol of 1e-6 off
"""


def test_a_rule_may_let_its_accepted_file_keep_less_than_half_the_tolerance_only_where_it_says_so(
    course, capsys
):
    """A correct form about 0.7 tolerances off fails the check as a variant (accepted forms keep half the
    tolerance), unless the rule it passes for states `accepted_within` above its ratio; a value outside
    (0.5, 1) is refused."""
    (course.solutions_dir / "variants" / "toy_resume" / "near_the_edge.py").write_text(NEAR_THE_EDGE)
    manifest = course.problem("toy_resume").directory / "problem.toml"
    original = manifest.read_text(encoding="utf-8")
    assert main(["check", "toy_resume"]) == 1
    row = _rows(capsys.readouterr().out)["variant near_the_edge"]
    assert " FAIL " in row and "tolerances from the reference" in row
    rule = '[rules.sums_in_fp64]\nstep = "1"\nrule = "a rule"\nnot_graded = "the cases cannot tell"\n'
    rule += 'accepted = ["variant:near_the_edge"]\naccepted_within = 0.95\n'
    manifest.write_text(original.replace("\n[rules.", "\n" + rule + "\n[rules.", 1), encoding="utf-8")
    assert main(["check", "toy_resume"]) == 0
    out = capsys.readouterr().out
    rows = _rows(out)
    assert " ok " in rows["variant near_the_edge"] and "within 0.95 of it" in rows["variant near_the_edge"]
    assert "<= 0.95" in rows["variant near_the_edge"], "the aim printed is the rule's"
    assert " ok " in rows["rule sums_in_fp64"]
    wider = rule.replace("0.95", "1.2")
    manifest.write_text(original.replace("\n[rules.", "\n" + wider + "\n[rules.", 1), encoding="utf-8")
    assert main(["check", "toy_resume"]) == 2
    assert "accepted_within must be a number above 0.5 and below 1" in capsys.readouterr().err


def test_the_check_finds_the_same_on_one_child_and_on_three(course, capsys, monkeypatch, tmp_path):
    from grader.authoring import discrimination

    started = []
    start = discrimination.PendingTables.start

    def counted(self):
        started.append(len(self.runs))
        return start(self)

    monkeypatch.setattr(discrimination.PendingTables, "start", counted)
    printed = {}
    for jobs in (1, 3):
        monkeypatch.setenv("GRADE_CACHE_DIR", str(tmp_path / f"cache-{jobs}"))  # nothing read from the other
        assert main(["check", "toy_resume", "--jobs", str(jobs)]) == 0
        printed[jobs] = capsys.readouterr().out
    assert started == [1, 3]
    assert "[sound]" in printed[1] and printed[1] == printed[3]


def test_each_child_of_the_check_runs_every_file_on_its_own_share_of_the_cases(course):
    from grader.authoring.discrimination import _shares, hidden_cases, table_files

    problem = course.problem("toy_resume")
    files = {problem.id: table_files(course, problem)}
    cases = {problem.id: hidden_cases(problem, [None, "check-1"])}
    for children in (1, 2, 3, 5):
        shares = _shares([problem], files, cases, children)
        assert len(shares) == children
        seen = [
            (label, case.index)
            for share in shares
            for request in share
            for label in request.paths
            for case in request.cases
        ]
        everything = {(label, case.index) for label in files[problem.id] for case in cases[problem.id]}
        assert sorted(seen) == sorted(everything)  # every file on every case, once


def test_the_check_starts_a_child_per_core_within_its_bounds_and_the_memory(monkeypatch):
    from grader.authoring.discrimination import MAX_CHILDREN, MIN_CHILDREN
    from grader.running import limits as limits_module
    from grader.running.limits import GIB, Limits, children_that_fit

    limits = Limits(memory_bytes=4 * GIB)
    for cores, quota, memory, children in (
        (1, None, 64 * GIB, 2),  # at least two, as on any machine
        (4, None, 64 * GIB, 4),
        (64, None, 512 * GIB, MAX_CHILDREN),
        (64, 3, 512 * GIB, 3),  # a container limited to 3 cores' worth of time sees all 64
        (16, None, 14 * GIB, 3),  # what the memory holds at 4 GiB a child
        (16, None, 3 * GIB, 2),
        (16, None, None, 8),  # no /proc/meminfo: the cores decide
    ):
        monkeypatch.setattr(limits_module.os, "sched_getaffinity", lambda _, n=cores: set(range(n)))
        monkeypatch.setattr(limits_module, "cpu_quota", lambda q=quota: q)
        monkeypatch.setattr(limits_module, "_memory_available", lambda m=memory: m)
        assert children_that_fit(limits, MIN_CHILDREN, MAX_CHILDREN) == children, (cores, quota, memory)
    monkeypatch.setattr(limits_module, "_memory_available", lambda: 3 * GIB)  # 2 at a 4 GiB limit
    unlimited = Limits(memory_bytes=None)
    assert children_that_fit(unlimited, MIN_CHILDREN, MAX_CHILDREN) == 8  # no memory limit: the cores decide


@pytest.mark.parametrize(
    "files, cores",
    [
        ({"cpu.max": "150000 100000\n"}, 2),  # cgroup v2, --cpus=1.5
        ({"cpu.max": "max 100000\n"}, None),
        ({"cpu/cpu.cfs_quota_us": "300000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 3),  # cgroup v1
        ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
        ({"cpu.max": "garbled\n"}, None),
        ({}, None),
    ],
)
def test_a_containers_cpu_limit_is_read_from_its_control_group(tmp_path, files, cores):
    from grader.running.limits import cpu_quota

    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert cpu_quota(tmp_path) == cores


@pytest.mark.parametrize("jobs", ["0", "-2"])
def test_check_refuses_fewer_than_one_job(course, jobs, capsys):
    assert main(["check", "toy_resume", "--jobs", jobs]) == 2
    assert "--jobs must be at least 1" in capsys.readouterr().err
