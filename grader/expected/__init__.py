"""Where expected outputs come from: the course's own files (reference, pitfalls) run in a trusted child
(trusted.py), the stores that keep their outputs (output_cache.py on disk, stored.py in a learner copy),
`grade prepare` (prepare.py), and sources.py, which picks among them. May import the plain data, course and
running."""
