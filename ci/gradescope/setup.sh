#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image. /autograder/source holds the
# zip made by ci/gradescope/make_zip.sh: the course (problems, grader, solutions, pyproject.toml), this
# script, run_autograder and grade_secret.
set -euo pipefail

apt-get install -y python3.11 python3.11-venv
python3.11 -m venv /autograder/venv
/autograder/venv/bin/pip install --upgrade pip
/autograder/venv/bin/pip install /autograder/source

# Only root may read the solutions and the secret; learner code runs as root too unless GRADE_SANDBOX
# is set (see the README), so keep the zip out of learners' hands and grade as documented there.
chmod -R go-rwx /autograder/source/solutions /autograder/source/grade_secret

# Warm JAX's compilation cache for the course's own code, and the outputs of the reference and the
# pitfall files on the practice cases (what a wrong submission's mistake is named from), so that no
# learner pays for them.
cd /autograder/source && /autograder/venv/bin/python -m grader.cli export /tmp/warm-up >/dev/null && rm -rf /tmp/warm-up
