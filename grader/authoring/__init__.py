"""For problem authors: `grade check` (check.py: is a problem sound; check_files.py: its files;
discrimination.py: the error ratios per case family), `grade new` (scaffold.py), `grade docs` (docs.py, with
the measured margins of margins.py). May import the plain data, course, running, expected and grading."""
