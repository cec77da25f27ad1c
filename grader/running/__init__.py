"""Running a child, from the grader's side: the jobs it is asked to do (jobs.py), its limits and sandbox
(limits.py, sandbox.py, watchdog.py), the process and what it leaves behind (processes.py, folders.py,
kernel_cache.py), the submission's bytes (submission.py), its events read into outcomes (collect.py,
outcomes.py); isolation.py ties them together. May import the plain data, course and protocol."""
