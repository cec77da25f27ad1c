"""What the `grade` subcommands share: the usage text, the parser that reports usage errors, option types,
the settings and course a command starts from, and the grader that the limit options ask for."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from grader.course.checkout import LearnerCheckout
from grader.course.problems import Course, find_course
from grader.course.secret import take_secret
from grader.errors import UsageError
from grader.grading.grader import Grader
from grader.report import FORMATS
from grader.running.limits import Limits, describe_size
from grader.running.sandbox import check_sandbox_required
from grader.settings import REQUIRE_SANDBOX_ENV, Settings

USAGE = """\
grade list [--root DIR]
       grade hint ID [--level N] [--root DIR]
       grade watch [ID] [--root DIR] [--timeout SECONDS]
       grade ID... | --all [--root DIR] [--submission FILE] [--format FORMAT[=FILE]]... [--timeout SECONDS]
                         [--memory-limit SIZE] [--low-memory] [--require-sandbox]
                         [--gradescope-visibility VISIBILITY] [--profile | --no-profile]
       grade export DEST [--notebook-install SPEC]
       grade notebooks [ID...] [--out DIR] [--install SPEC] [--force]
       grade prepare
       grade batch ROSTER_DIR --out GRADEBOOK.csv [--jobs N] [--timeout SECONDS] [--memory-limit SIZE]
                   [--low-memory] [--require-sandbox] [--shard K/N] [--insights] [--profiles]
       grade merge SHARD.csv... --out GRADEBOOK.csv [--insights]
       grade insights GRADEBOOK.csv | ROSTER_DIR --out GRADEBOOK.csv [--page PAGE.html]
       grade check ID... | --all [--secrets N] [--jobs N] [--families] [--record]
       grade new ID [--pitfall NAME --from-group N --gradebook GRADEBOOK.csv]
       grade docs [--check]
FORMAT is one of: """ + ", ".join(FORMATS)


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message}\nusage: {USAGE}")


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds: {text!r}")
    return value


_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def _size(text: str) -> int | None:
    """Parses a memory size: 4G, 4GiB, 512M, 1.5g, 1000000 (bytes); "none" for no limit."""
    cleaned = text.strip().lower().removesuffix("ib").removesuffix("b")
    if cleaned == "none":
        return None
    number, unit = cleaned.rstrip("kmgt"), cleaned[len(cleaned.rstrip("kmgt")) :]
    try:
        value = float(number) * _UNITS[unit]
    except (ValueError, KeyError):
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (try 4G, 512M or none)") from None
    if value < 256 << 20:
        raise argparse.ArgumentTypeError(f"{text!r} is too small to start JAX: give at least 256M")
    return int(value)


def format_spec(text: str) -> tuple[str, Path | None]:
    """Parses `--format FORMAT` or `--format FORMAT=FILE`."""
    fmt, _, path = text.partition("=")
    if fmt not in FORMATS:
        raise argparse.ArgumentTypeError(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})")
    if _ and not path:
        raise argparse.ArgumentTypeError(f"--format {text}: name a file after '='")
    return fmt, Path(path) if path else None


def destinations(specs: list[tuple[str, Path | None]] | None) -> tuple[str | None, dict[Path, str]]:
    """Returns the format for stdout (None: no report there) and the formats to write to files."""
    specs = specs or [("text", None)]
    to_stdout = [fmt for fmt, path in specs if path is None]
    if len(to_stdout) > 1:
        raise UsageError("only one --format can go to stdout; send the others to files: --format junit=FILE")
    files = {path: fmt for fmt, path in specs if path is not None}
    if len(files) < sum(path is not None for _, path in specs):
        raise UsageError("two --format options name the same file")
    return (to_stdout[0] if to_stdout else None), files


def root_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root", metavar="DIR", type=Path, help="a learner checkout to grade (default: this one)"
    )


def course_and_settings() -> tuple[Course, Settings]:
    """What every command starts from: the GRADE_* settings, read here once, and the course they (or the
    working folder) name."""
    settings = Settings.from_environment()
    return find_course(course_root=settings.course_root), settings


def learner_checkout(course: Course, root: Path | None) -> LearnerCheckout:
    """The checkout that --root names (by default the course's own)."""
    return LearnerCheckout(course.root) if root is None else LearnerCheckout.at(root)


def make_grader(
    course: Course,
    args: argparse.Namespace,
    settings: Settings,
    practice: bool = False,
    profile: str | None = None,
) -> Grader:
    """The grader that the limit options (`limit_options`), the GRADE_* `settings` and $GRADE_SECRET ask for;
    with `practice`, one for the practice cases whatever the environment holds (the secret is still taken
    out of reach). `profile` (grading.PROFILE_MODES) overrides what --profile and --no-profile ask for."""
    if args.require_sandbox:
        settings = dataclasses.replace(settings, require_sandbox=True)
    limits = Limits(timeout=args.timeout, memory_bytes=args.memory_limit, settings=settings)
    check_sandbox_required(limits)
    secret = take_secret()
    if profile is None:
        asked = getattr(args, "profile", False), getattr(args, "no_profile", False)
        profile = "always" if asked[0] else "off" if asked[1] else "failing"
    return Grader(
        course,
        secret=None if practice else secret,
        limits=limits,
        low_memory=args.low_memory,
        profile=profile,
    )


def limit_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--require-sandbox",
        action="store_true",
        help=f"grade nothing where neither Landlock nor $GRADE_SANDBOX protects the learner's code "
        f"(also ${REQUIRE_SANDBOX_ENV}=1)",
    )
    parser.add_argument(
        "--low-memory",
        action="store_true",
        help="run the reference before the learner's code, not beside it: one JAX process at a time",
    )
    parser.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=_positive,
        default=Limits.timeout,
        help=f"wall-clock limit per case (default: {Limits.timeout:g})",
    )
    parser.add_argument(
        "--memory-limit",
        metavar="SIZE",
        type=_size,
        default=Limits.memory_bytes,
        help=f"memory limit of each submission's process, e.g. 4G, 512M or none (default: "
        f"{describe_size(Limits.memory_bytes)})",
    )
