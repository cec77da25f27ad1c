"""Measures what grading costs next to the floor no grader can beat, in one run, and prints a table.

    python benchmarks/grading_speed.py [--learners 20] [--jobs 2] [--repeat 3] [--only-profile]
    python benchmarks/grading_speed.py --only-warm   # the learner's warm loop against the floor, paired

The floor is a fresh interpreter that imports jax, flax and optax and runs one tiny op. Every other row is
the real `grade` command in a fresh process, on correct submissions (each problem's first correct variant
from solutions/variants), with its own compilation and output caches in a temporary folder:

- the submissions alone: every correct submission on the practice cases in one bare interpreter, no grader
  and no compilation cache (their own compilation, which no grader can avoid on empty caches);
- `grade --all`, caches empty, then warm (practice cases, as a learner runs it);
- one problem, caches warm;
- `grade batch` of N learners over every problem on the hidden cases (as an instructor runs it), total
  and per learner-problem, once with every submission correct and once with a realistic mix (two learners
  in three hand in a named mistake, each problem's pitfall files in turn);
- one problem at a time in hidden mode, caches warm: each problem's first correct variant against its
  pitfall files in turn (a wrong answer must cost at most 1.3 times a right one);
- the sandbox's cost: one problem, caches warm, with Landlock (the default) and with GRADE_LANDLOCK=off,
  interleaved (at most 5% more);
- the precision profile's cost: each problem's first pitfall file graded warm in practice mode, traced (the
  default for a failed answer) and with --no-profile, interleaved (at most 10% more, over every problem);
- a fresh Gradescope container: every problem in hidden mode with the course's caches as setup.sh leaves
  them (`grade prepare` with the secret: practice outputs, and the reference's hidden-case outputs) and the
  submissions' compilation cache empty, against the submissions alone on the same hidden cases (at most
  1.2 times); and the same without the prepared hidden outputs, where the reference runs too.

Peak RSS is measured two ways: the largest single process (getrusage of the children), and every process
of the command together (sampled every 20 ms), which is what a container's memory limit sees.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.course.problems import Course  # noqa: E402
from grader.settings import PROTECTIONS  # noqa: E402

FLOOR = "import jax, flax, optax; jax.numpy.ones(3).sum().block_until_ready()"
# The correct submissions themselves, on the practice cases, in one bare interpreter with no grader and no
# compilation cache: what their own XLA compilation costs, which no grader can avoid on empty caches.
ALONE = """
import importlib.util, sys
from pathlib import Path
import jax, flax, optax, numpy as np
sys.path.insert(0, sys.argv[1])
from grader.course.cases import make_cases
from grader.course.problems import Course
course = Course(Path(sys.argv[1]))
from grader.child.main import load_harness
import tempfile
secret = sys.argv[3] if len(sys.argv) > 3 else None
for problem in course.problems():
    stub = Path(sys.argv[2]) / "problems" / problem.id / "stub.py"
    spec = importlib.util.spec_from_file_location(problem.id, stub)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    function = getattr(module, problem.function)
    harness = load_harness(str(problem.harness_path or ""))
    for case in make_cases(problem, secret):
        if harness:
            with tempfile.TemporaryDirectory() as folder:
                np.asarray(harness.run_case(function, dict(case.inputs), Path(folder)))
        else:
            np.asarray(function(*case.inputs.values()))
"""
GOALS = {"all_cold": 10.0, "one_warm": 2.0, "batch_per_item": 1.0}
WRONG_OVER_RIGHT = 1.3  # a wrong submission graded in hidden mode, against a right one
CONTAINER_OVER_ALONE = 1.2  # a fresh Gradescope container's grade, against the submissions alone
SANDBOX_COST = 1.05  # one problem graded warm with Landlock (the default), against GRADE_LANDLOCK=off
PROFILE_COST = 1.10  # a wrong answer graded warm with its precision profile, against --no-profile
PROTECTIONS_COST = 1.05  # warm grading with every fail-closed protection, against none (issue 20)
ALL_OFF = ",".join(PROTECTIONS)  # GRADE_TEST_UNPROTECTED for the old behaviour
RSS_GOAL_MB = 700


@dataclass
class Measured:
    seconds: float
    largest_mb: float  # the largest single process
    together_mb: float  # all the command's processes at once
    returncode: int


def _tree_rss(root_pid: int) -> int:
    """Resident bytes of a process and all its descendants, now."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    page = os.sysconf("SC_PAGE_SIZE")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            parent = int(stat[stat.rindex(")") + 2 :].split()[1])
            rss[int(entry.name)] = int((entry / "statm").read_text().split()[1]) * page
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(entry.name))
    total, stack = 0, [root_pid]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(children.get(pid, []))
    return total


def measure(argv: list[str], env: dict[str, str], cwd: Path) -> Measured:
    """Runs a command and returns its wall time and peak memory."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, _tree_rss(process.pid))
            stop.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    # wait4 reports the largest resident size among the process and the descendants it waited for.
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    stop.set()
    sampler.join()
    return Measured(seconds, usage.ru_maxrss / 1024, peak / (1 << 20), process.returncode)


def learner_checkout(course: Course, folder: Path, wrong: int | None = None) -> Path:
    """A checkout whose every stub is the problem's first correct variant, or with `wrong` its pitfall file
    number `wrong` (modulo how many it has)."""
    for problem in course.problems():
        if wrong is None:
            source = sorted(course.variant_paths(problem).values())[0]
        else:
            pitfalls = [p for label, p in course.pitfall_paths(problem).items() if problem.families_of(label)]
            source = pitfalls[wrong % len(pitfalls)]
        stub = folder / "problems" / problem.id / "stub.py"
        stub.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, stub)
    return folder


def profile_cost(
    course: Course, grade: str, env: dict[str, str], repeat: int
) -> list[tuple[str, float, float]]:
    """Each problem's first pitfall file graded warm, with its precision profile and with --no-profile,
    interleaved: (problem, median seconds traced, median seconds not traced)."""
    costs = []
    for problem in course.problems():
        wrong = next(p for label, p in course.pitfall_paths(problem).items() if problem.families_of(label))
        argv = [grade, problem.id, "--submission", str(wrong)]
        measure(argv, env, ROOT)  # warm: compiled kernels, the pitfalls' outputs, the reference's profile
        pairs = [
            (measure(argv, env, ROOT), measure([*argv, "--no-profile"], env, ROOT)) for _ in range(repeat)
        ]
        on, off = (sorted(m.seconds for m in side)[len(pairs) // 2] for side in zip(*pairs, strict=True))
        costs.append((problem.id, on, off))
    return costs


def protections_cost(
    course: Course,
    grade: str,
    env: dict[str, str],
    scratch: Path,
    learners: int,
    jobs: int,
    repeat: int,
    no_identical: bool = False,
) -> list[tuple[str, float, float, float | None]]:
    """What failing closed costs: the same commands with every protection on (the default) and with
    GRADE_TEST_UNPROTECTED naming them all (the old behaviour: one compilation cache shared by every learner,
    no PID namespace, no seccomp filter, no copy of the submission, no disk count), interleaved. Rows
    (name, seconds protected, seconds not, goal):

    - one problem graded warm (median of `repeat` pairs);
    - a hidden `grade batch` of a class: `learners` checkouts of the same correct files, learner N's with
      N + 1 comment lines on top (a class writes its own code; JAX leaves source locations out of its
      cache key, so the lines alone change no kernel), with every learner's compilation cache empty, then
      again warm (median of three pairs);
    - the same batch of `learners` identical checkouts, caches empty: what sharing one cache saved, and what
      giving it up costs.
    """
    checkout = learner_checkout(course, scratch / "protections-learner")
    off = env | {"GRADE_TEST_UNPROTECTED": ALL_OFF}
    one = [grade, course.problems()[0].id, "--root", str(checkout)]
    measure(one, env, ROOT), measure(one, off, ROOT)  # warm both
    pairs = [(measure(one, env, ROOT).seconds, measure(one, off, ROOT).seconds) for _ in range(repeat)]
    on_one, off_one = (sorted(side)[len(pairs) // 2] for side in zip(*pairs, strict=True))
    class_roster, identical = scratch / "protections-class", scratch / "protections-identical"
    for number in range(learners):
        shutil.copytree(checkout, identical / f"learner{number:02d}")
        mine = shutil.copytree(checkout, class_roster / f"learner{number:02d}")
        for stub in mine.glob("problems/*/stub.py"):
            stub.write_text(f"# learner {number:02d}\n" * (number + 1) + stub.read_text())
    hidden = {"GRADE_SECRET": "benchmark-secret"}
    out = scratch / "protections.csv"

    def batch(roster: Path, environ: dict[str, str], empty: bool) -> float:
        if empty:  # the learners' kernels (the folders this side uses), never the course's
            folder = "jax-submissions" if "GRADE_TEST_UNPROTECTED" in environ else "jax-learners"
            shutil.rmtree(Path(env["GRADE_CACHE_DIR"]) / folder, ignore_errors=True)
        argv = [grade, "batch", str(roster), "--out", str(out), "--jobs", str(jobs)]
        return measure(argv, environ | hidden, ROOT).seconds / (learners * len(course.problems()))

    batch(class_roster, env, True)  # the course's own kernels for the hidden cases, compiled once for all
    cold = (batch(class_roster, env, True), batch(class_roster, off, True))
    pairs = [(batch(class_roster, env, False), batch(class_roster, off, False)) for _ in range(3)]
    warm = tuple(sorted(side)[1] for side in zip(*pairs, strict=True))
    rows = [
        (f"{course.problems()[0].id}, warm (median of {repeat})", on_one, off_one, PROTECTIONS_COST),
        (f"class of {learners}, hidden batch, per learner-problem, warm", *warm, PROTECTIONS_COST),
        (f"class of {learners}, the same, learners' caches empty", *cold, PROTECTIONS_COST),
    ]
    if not no_identical:
        same = (batch(identical, env, True), batch(identical, off, True))
        rows.append((f"{learners} identical checkouts, learners' caches empty", *same, None))
    return rows


def warm_loop(
    problem_id: str, grade: str, checkout: Path, env: dict[str, str], base: dict[str, str], repeat: int
) -> tuple[str, float, float, list[float]]:
    """A learner's warm loop: `grade ID` on a correct answer with its caches warm, against the floor, in
    pairs (floor, grade), `repeat` times; returns (problem, median floor, median grade, each pair's ratio)."""
    argv = [grade, problem_id, "--root", str(checkout)]
    for _ in range(2):  # warm: compiled kernels, the reference's outputs and its precision profile kept
        measure(argv, env, ROOT)
    floor = [sys.executable, "-c", FLOOR]
    pairs = [(measure(floor, base, ROOT), measure(argv, env, ROOT)) for _ in range(repeat)]
    floors, grades = (sorted(m.seconds for m in side) for side in zip(*pairs, strict=True))
    ratios = sorted(graded.seconds / floor.seconds for floor, graded in pairs)
    return problem_id, floors[len(pairs) // 2], grades[len(pairs) // 2], ratios


def print_warm_loop(found: tuple[str, float, float, list[float]]) -> None:
    problem_id, floor, graded, ratios = found
    median = ratios[len(ratios) // 2]
    mark = "ok" if median <= GOALS["one_warm"] else "MISS"
    print(f"floor: python, import jax+flax+optax, one op (median of {len(ratios)})  {floor:6.2f} s")
    print(f"grade {problem_id}, warm caches, a correct answer (median)       {graded:6.2f} s")
    spread = f"{ratios[0]:.2f}..{ratios[-1]:.2f}"
    goal = f"goal <={GOALS['one_warm']:g}x {mark}"
    print(f"grade / floor, pair by pair: median {median:.2f} ({spread})  {goal}")


def print_protections_cost(costs: list[tuple[str, float, float, float | None]]) -> None:
    print("fail-closed protections on / off (GRADE_TEST_UNPROTECTED, the old behaviour):")
    for name, on, off, goal in costs:
        mark = ("ok" if on / off <= goal else "MISS") if goal else ""
        aim = f"<={goal:g}" if goal else ""
        print(f"  {name:<50} on {on:7.2f} s  off {off:7.2f} s  ratio {on / off:5.2f} {aim:>7} {mark}")


def print_profile_cost(costs: list[tuple[str, float, float]]) -> None:
    for problem_id, on, off in costs:
        print(f"  {problem_id:<24} traced {on:6.2f} s   --no-profile {off:6.2f} s   ratio {on / off:5.2f}")
    total = sum(on for _, on, _ in costs) / sum(off for _, _, off in costs)
    mark = "ok" if total <= PROFILE_COST else "MISS"
    print(
        f"{'profile cost: a wrong answer traced / --no-profile':<52} {total:>8.2f} {PROFILE_COST:>8} {mark}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3, help="runs of the floor and the warm rows (median)")
    parser.add_argument(
        "--only-profile", action="store_true", help="measure the precision profile's cost only"
    )
    parser.add_argument(
        "--only-protections", action="store_true", help="measure the fail-closed protections' cost only"
    )
    parser.add_argument(
        "--only-warm", action="store_true", help="the floor and one problem graded warm, paired (a minute)"
    )
    parser.add_argument(
        "--no-identical", action="store_true", help="--only-protections without the identical checkouts"
    )
    args = parser.parse_args()
    course = Course(ROOT)
    problems = course.problems()
    grade = str(Path(sys.executable).with_name("grade"))
    with tempfile.TemporaryDirectory(prefix="grade-bench-") as scratch:
        scratch = Path(scratch)
        checkout = learner_checkout(course, scratch / "learner")
        base = {k: v for k, v in os.environ.items() if not k.startswith("GRADE")}
        env = base | {"GRADE_CACHE_DIR": str(scratch / "cache")}
        rows: list[tuple[str, Measured, float | None]] = []
        ratios: list[tuple[str, float, float | None]] = []
        if args.only_profile:
            print_profile_cost(profile_cost(course, grade, env, max(args.repeat, 5)))
            return 0
        if args.only_warm:
            print_warm_loop(warm_loop(problems[0].id, grade, checkout, env, base, max(args.repeat, 7)))
            return 0
        if args.only_protections:
            costs = protections_cost(
                course, grade, env, scratch, args.learners, args.jobs, max(args.repeat, 7), args.no_identical
            )
            print_protections_cost(costs)
            return 0

        def median(argv: list[str], environ: dict[str, str]) -> Measured:
            runs = [measure(argv, environ, ROOT) for _ in range(args.repeat)]
            middle = sorted(runs, key=lambda m: m.seconds)[len(runs) // 2]
            middle.largest_mb = max(m.largest_mb for m in runs)
            middle.together_mb = max(m.together_mb for m in runs)
            return middle

        floor = median([sys.executable, "-c", FLOOR], base)
        rows.append(("floor: python, import jax+flax+optax, one op", floor, None))
        alone = measure([sys.executable, "-c", ALONE, str(ROOT), str(checkout)], base, ROOT)
        rows.append(("the submissions alone, no grader, no caches", alone, None))
        every = [grade, "--all", "--root", str(checkout)]
        cold = measure(every, env, ROOT)
        rows.append((f"grade --all ({len(problems)} problems), empty caches", cold, GOALS["all_cold"]))
        warm = median(every, env)
        rows.append((f"grade --all ({len(problems)} problems), warm caches", warm, None))
        one = median([grade, problems[0].id, "--root", str(checkout)], env)
        rows.append((f"grade {problems[0].id}, warm caches", one, GOALS["one_warm"]))
        # The sandbox's cost: the same command with Landlock and without, interleaved, median of 7 each.
        single = [grade, problems[0].id, "--root", str(checkout)]
        paired = [
            (measure(single, env, ROOT), measure(single, env | {"GRADE_LANDLOCK": "off"}, ROOT))
            for _ in range(max(7, args.repeat))
        ]
        landlock_on = sorted((on for on, _ in paired), key=lambda m: m.seconds)[len(paired) // 2]
        landlock_off = sorted((off for _, off in paired), key=lambda m: m.seconds)[len(paired) // 2]
        rows.append((f"grade {problems[0].id}, warm, Landlock (median of {len(paired)})", landlock_on, None))
        rows.append((f"grade {problems[0].id}, warm, GRADE_LANDLOCK=off", landlock_off, None))
        ratios.append(
            (
                "sandbox cost: Landlock on / off, one problem warm",
                landlock_on.seconds / landlock_off.seconds,
                SANDBOX_COST,
            )
        )
        roster = scratch / "roster"
        for number in range(args.learners):
            shutil.copytree(checkout, roster / f"learner{number:02d}")
        batch_env = env | {"GRADE_SECRET": "benchmark-secret"}
        out = scratch / "gradebook.csv"
        batch_argv = [grade, "batch", str(roster), "--out", str(out), "--jobs", str(args.jobs)]
        batch = measure(batch_argv, batch_env, ROOT)
        items = args.learners * len(problems)
        name = f"grade batch, {args.learners} learners x {len(problems)} problems, hidden"
        rows.append((name, batch, None))
        per_item = Measured(batch.seconds / items, batch.largest_mb, batch.together_mb, batch.returncode)
        rows.append(("  per learner-problem", per_item, GOALS["batch_per_item"]))
        statuses = out.read_text().count(",pass,") if out.exists() else 0

        # What setup.sh does in a course's image: the practice outputs of every pitfall file, which naming
        # a wrong answer reads, computed once (by `grade export`, untimed) before the mixed batch.
        subprocess.run([grade, "export", str(scratch / "export")], env=env, cwd=ROOT, capture_output=True)
        mixed = scratch / "mixed"
        for number in range(args.learners):
            wrong = None if number % 3 == 0 else number
            learner_checkout(course, mixed / f"learner{number:02d}", wrong)
        mixed_out = scratch / "mixed.csv"
        mixed_batch = measure(
            [grade, "batch", str(mixed), "--out", str(mixed_out), "--jobs", str(args.jobs)], batch_env, ROOT
        )
        rows.append((f"grade batch, 2 in 3 wrong, {args.learners} learners, hidden", mixed_batch, None))
        per_mixed = Measured(mixed_batch.seconds / items, mixed_batch.largest_mb, mixed_batch.together_mb, 0)
        mixed_passed = mixed_out.read_text().count(",pass,") if mixed_out.exists() else 0
        rows.append(("  per learner-problem", per_mixed, GOALS["batch_per_item"]))

        right_total = wrong_total = 0.0
        for problem in problems:
            right = sorted(course.variant_paths(problem).values())[0]
            pitfalls = [p for label, p in course.pitfall_paths(problem).items() if problem.families_of(label)]
            hidden = [grade, problem.id, "--submission"]
            measure([*hidden, str(right)], batch_env, ROOT)  # warm this problem's caches
            # ... and its pitfalls' practice outputs, which naming reads (setup.sh and grade export warm them)
            measure([*hidden, str(pitfalls[-1])], batch_env, ROOT)
            right_total += median([*hidden, str(right)], batch_env).seconds
            for number in range(args.repeat):
                wrong = pitfalls[number % len(pitfalls)]
                wrong_total += measure([*hidden, str(wrong)], batch_env, ROOT).seconds
        right_each = right_total / len(problems)
        wrong_each = wrong_total / (len(problems) * args.repeat)
        rows.append(("one problem, hidden, right answer, warm (mean)", Measured(right_each, 0, 0, 0), None))
        rows.append(("one problem, hidden, wrong answer, warm (mean)", Measured(wrong_each, 0, 0, 0), None))
        ratios.append(("wrong / right, hidden, warm", wrong_each / right_each, WRONG_OVER_RIGHT))
        profiled = profile_cost(course, grade, env, max(args.repeat, 5))
        protected = protections_cost(
            course, grade, env, scratch, args.learners, args.jobs, max(args.repeat, 7)
        )

        # A fresh container: the course's caches as the image's set-up left them, the submissions' empty.
        container = scratch / "container-cache"
        shutil.copytree(scratch / "cache", container)
        shutil.rmtree(container / "jax-learners", ignore_errors=True)
        in_container = batch_env | {"GRADE_CACHE_DIR": str(container)}
        fresh_argv = [grade, "--all", "--root", str(checkout), "--low-memory"]
        unprepared = measure(fresh_argv, in_container, ROOT)
        shutil.rmtree(container / "jax-learners", ignore_errors=True)
        subprocess.run([grade, "prepare"], env=in_container, cwd=ROOT, capture_output=True)  # setup.sh
        shutil.rmtree(container / "jax-learners", ignore_errors=True)
        fresh = measure(fresh_argv, in_container, ROOT)
        rows.append(("fresh container: grade --all hidden --low-memory", fresh, None))
        rows.append(("  the same without grade prepare's hidden outputs", unprepared, None))
        alone_hidden = measure(
            [sys.executable, "-c", ALONE, str(ROOT), str(checkout), "benchmark-secret"], base, ROOT
        )
        rows.append(("the submissions alone, hidden cases, no caches", alone_hidden, None))
        container_ratio = fresh.seconds / alone_hidden.seconds
        ratios.append(("fresh container / submissions alone", container_ratio, CONTAINER_OVER_ALONE))
        unprepared_ratio = unprepared.seconds / alone_hidden.seconds
        ratios.append(("  without grade prepare / submissions alone", unprepared_ratio, None))
        cold_ratio = cold.seconds / alone.seconds
        ratios.append(("grade --all cold / submissions alone (practice)", cold_ratio, None))

    print(f"{'':<52} {'seconds':>8} {'x floor':>8} {'goal':>6} {'peak RSS MB':>12} {'all procs MB':>13} exit")
    for name, measured, goal in rows:
        ratio = measured.seconds / floor.seconds
        aim = f"<={goal:g}x" if goal else ""
        mark = ("ok" if ratio <= goal else "MISS") if goal else ""
        print(
            f"{name:<52} {measured.seconds:>8.2f} {ratio:>8.2f} {aim:>6} {measured.largest_mb:>12.0f} "
            f"{measured.together_mb:>13.0f} {measured.returncode:>3} {mark}"
        )
    print()
    for name, value, goal in ratios:
        mark = ("ok" if value <= goal else "MISS") if goal else ""
        aim = f"<={goal:g}" if goal else ""
        print(f"{name:<52} {value:>8.2f} {aim:>8} {mark}")
    print_profile_cost(profiled)
    print_protections_cost(protected)
    worst = max(m.largest_mb for name, m, _ in rows if name.startswith("grade"))
    verdict = "ok" if worst <= RSS_GOAL_MB else "MISS"
    print(f"\nlargest process of any grade command: {worst:.0f} MB (goal <= {RSS_GOAL_MB} MB: {verdict})")
    print(f"batch rows that passed: {statuses} of {items} (every submission is correct)")
    print(f"mixed batch rows that passed: {mixed_passed} of {items}")
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}, jobs={args.jobs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
