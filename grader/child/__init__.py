"""What runs inside a grading child, where learner code runs: loaded by path, it imports nothing of the
grader."""
