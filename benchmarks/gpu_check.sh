#!/usr/bin/env bash
# The course's verdicts on a GPU, on a machine whose Python already has jax with CUDA, flax, optax and orbax
# (the checkout is imported from where it is, nothing installed). Writes what it measured to $OUT (default
# ./gpu-check).
#   bash benchmarks/gpu_check.sh [SECRETS] [COPY]
# - `grade check --all --secrets SECRETS --families` with jax on its default backend (GRADE_BACKEND=native:
#   the grader's children otherwise run on the CPU), after every reference solution graded in hidden mode as
#   a learner's file (it must pass, and run on the GPU).
# - With COPY, a learner copy made by `grade export` (on another machine, as for a Colab learner): the notebook
#   check (benchmarks/notebook_backend_check.py), every variant and pitfall file graded by grade_function in a
#   process whose default backend is the GPU, once as the grader does it (the function on the CPU) and once
#   with GRADE_BACKEND=native (on the GPU). It runs beside the check, four processes per mode.
set -u
out="${OUT:-gpu-check}"; mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
python3 - <<'PY' 2>&1 | tee "$out/platform.txt"
import platform, jax, flax, optax, numpy
print("python", platform.python_version(), "jax", jax.__version__, "flax", flax.__version__,
      "optax", optax.__version__, "numpy", numpy.__version__)
print("devices", jax.devices())
PY
command -v nvidia-smi >/dev/null && nvidia-smi -L | tee -a "$out/platform.txt"
if [ -n "${2:-}" ]; then
    copy=$(cd "$2" && pwd)
    for mode in cpu native; do
        # every problem of the copy, dealt round-robin to four processes
        problems=$(ls "$copy/problems")
        for n in 0 1 2 3; do
            ids=$(echo "$problems" | awk -v n=$n 'NR % 4 == n')
            # shellcheck disable=SC2086
            GRADE_BACKEND=$mode PYTHONPATH="$copy" python3 benchmarks/notebook_backend_check.py "$copy" $ids \
                >>"$out/notebook-$mode.txt" 2>>"$out/notebook-stderr.txt" &
        done
    done
fi
export GRADE_BACKEND=native
# every reference solution graded in hidden mode as a learner's file: it must pass, and run on the GPU
for f in solutions/*.py; do
    id=$(basename "$f" .py)
    GRADE_SECRET=gpu-check python3 -m grader "$id" --submission "$f" --format json="$out/$id.json" >/dev/null 2>&1
    python3 - "$out/$id.json" <<'PY' 2>&1 | tee -a "$out/solutions.txt"
import json, sys
for p in json.load(open(sys.argv[1]))["problems"]:
    fell_back = "Falling back to cpu" in p.get("stderr", "")
    print(f"{p['problem']:22} {p['status']:6} {'CPU (fell back)' if fell_back else 'GPU'}  {p['message']}")
PY
    rm -f "$out/$id.json"
done
start=$(date +%s)
python3 -m grader check --all --secrets "${1:-2}" --families 2>&1 | tee "$out/check.txt"
echo "grade check: exit ${PIPESTATUS[0]} after $(( $(date +%s) - start )) s" | tee -a "$out/check.txt"
wait
