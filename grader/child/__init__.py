"""Where learner code runs: the grading child (main.py: its loop and sandbox; calls.py: import a submission,
call a case; describe.py: what came of it; limits.py, landlock.py, seccomp.py, process_namespace.py: what it
closes before learner code). Loaded by path in a fresh interpreter: it may import nothing of the grader
(standard library, numpy and jax only), and loads its siblings by path."""
