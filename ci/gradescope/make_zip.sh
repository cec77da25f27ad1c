#!/usr/bin/env bash
# Builds the Gradescope autograder zip from the instructor's copy of the course:
#   ci/gradescope/make_zip.sh SECRET_FILE OUT.zip
# SECRET_FILE holds GRADE_SECRET (keep it out of every repository). The zip holds, at its root, setup.sh,
# run_autograder, grade_secret and the course: problems/, solutions/, grader/, pyproject.toml, README.md.
set -euo pipefail
if [ $# -ne 2 ] || [ ! -s "$1" ]; then
    echo "usage: $0 SECRET_FILE OUT.zip   (SECRET_FILE: a non-empty file holding GRADE_SECRET)" >&2
    exit 2
fi
here="$(cd "$(dirname "$0")" && pwd)"
course="$(cd "$here/../.." && pwd)"
out="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
cp -r "$course/problems" "$course/solutions" "$course/grader" "$course/pyproject.toml" "$course/README.md" "$stage/"
cp "$here/setup.sh" "$here/run_autograder" "$stage/"
cp "$1" "$stage/grade_secret"
find "$stage" -name __pycache__ -prune -exec rm -rf {} +
rm -f "$out"
(cd "$stage" && python3 -m zipfile -c "$out" ./*)
echo "wrote $out: upload it as the autograder of the assignment"
