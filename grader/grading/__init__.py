"""Grading: grader.py runs a learner's submission beside the reference's outputs; compare.py compares,
verdicts.py decides (the one place a pass is decided, on positive evidence only), naming.py and diagnose.py
name a mistake, in_process.py grades a function object for notebooks. May import the plain data, course,
child, profile, running and expected."""
