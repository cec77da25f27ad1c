"""Grading: run a learner's submission, compare with the expected outputs, decide verdicts, name a mistake."""
