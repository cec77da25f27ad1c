"""A class graded on several runners: each `grade batch --shard K/N` writes, beside its gradebook, a record
of the shard (which one, the whole roster, its rows), and `grade merge` joins the records of all N shards
into one gradebook and one summary, refusing shards that overlap, are missing, or were graded differently."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from grader.classroom.batch import Row, in_order
from grader.errors import UsageError
from grader.report import write_file
from grader.results import Status

VERSION = 1


def parse_shard(text: str) -> tuple[int, int]:
    """Parses `K/N` (1 <= K <= N)."""
    number, _, count = text.partition("/")
    try:
        k, n = int(number), int(count)
    except ValueError:
        raise UsageError(f"--shard {text}: give it as K/N, for example 2/4") from None
    if not 1 <= k <= n:
        raise UsageError(f"--shard {text}: K must be between 1 and N")
    return k, n


def record_path(gradebook: Path) -> Path:
    return gradebook.with_suffix(".shard.json")


def write_record(
    gradebook: Path,
    shard: tuple[int, int],
    roster: list[str],
    problems: list[str],
    mode: str,
    rows: list[Row],
) -> Path:
    """Writes the shard's record beside its gradebook; returns its path."""
    record = {
        "version": VERSION,
        "shard": list(shard),
        "mode": mode,
        "roster": roster,
        "problems": problems,
        "rows": [dataclasses.asdict(row) | {"status": str(row.status)} for row in rows],
    }
    path = record_path(gradebook)
    write_file(path, json.dumps(record, indent=1))
    return path


def _read(path: Path) -> dict:
    candidate = path if path.name.endswith(".shard.json") else record_path(path)
    try:
        record = json.loads(candidate.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(
            f"{candidate}: not a shard record written by `grade batch --shard` ({exc})"
        ) from None
    if not isinstance(record, dict) or record.get("version") != VERSION:
        raise UsageError(f"{candidate}: not a shard record of this grader's version")
    record["path"] = candidate
    return record


def merge(paths: list[Path]) -> tuple[list[Row], str]:
    """The rows of every shard, in roster and course order, and the grading mode; UsageError on shards that
    do not make exactly one whole roster."""
    records = [_read(path) for path in paths]
    first = records[0]
    for record in records[1:]:
        for key in ("mode", "roster", "problems"):
            if record[key] != first[key]:
                raise UsageError(
                    f"{record['path']} and {first['path']} were graded differently ({key} differs)"
                )
        if record["shard"][1] != first["shard"][1]:
            raise UsageError(
                f"{record['path']} is a shard of {record['shard'][1]}, {first['path']} of {first['shard'][1]}"
            )
    count = first["shard"][1]
    seen: dict[int, Path] = {}
    for record in records:
        number = record["shard"][0]
        if number in seen:
            raise UsageError(f"shard {number}/{count} given twice: {seen[number]} and {record['path']}")
        seen[number] = record["path"]
    missing = sorted(set(range(1, count + 1)) - set(seen))
    if missing:
        raise UsageError(
            f"missing shard(s) {', '.join(f'{k}/{count}' for k in missing)}: every shard is needed"
        )
    rows = [Row(**(row | {"status": Status(row["status"])})) for record in records for row in record["rows"]]
    graded = [row.learner for row in rows]
    if len(set(graded)) * len(first["problems"]) != len(rows):
        raise UsageError("the shards overlap: a learner was graded in more than one")
    if set(graded) != set(first["roster"]):
        absent = sorted(set(first["roster"]) - set(graded))
        raise UsageError(f"the shards leave out learners of the roster: {', '.join(absent[:5])}")
    return in_order(rows, first["roster"], first["problems"]), first["mode"]
