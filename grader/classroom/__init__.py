"""A class at once: batch grading of a roster (batch.py) and its shards (shards.py), learner copies
(export.py), notebooks (notebooks.py), watch mode (watch.py). May import the plain data, course, running,
expected, grading and report."""
