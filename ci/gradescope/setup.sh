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

# Compute now what grading reads from the caches, so that no learner pays for it: the outputs of the
# reference and the pitfall files on the practice cases (what a wrong submission's mistake is named from),
# and the reference's outputs on the hidden cases, kept in root's cache in a folder only root may open.
# It also fills JAX's compilation cache for the course's own code. With these, grading a submission runs
# the learner's code and never the reference.
cd /autograder/source
if [ -f grade_secret ]; then
    GRADE_SECRET="$(cat grade_secret)" /autograder/venv/bin/python -m grader prepare
else
    /autograder/venv/bin/python -m grader prepare
fi
