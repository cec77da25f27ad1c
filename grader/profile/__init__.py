"""Precision profiles: which operations ran in which dtypes. profiler.py traces a function (in the child;
walk.py and trace.py are its parts, loaded by path, importing nothing of the grader); compare.py, on the
grader's side, compares a learner's profile with the reference's and may import the plain data's results."""
