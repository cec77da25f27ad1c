"""The course on disk: the problems and their manifests (problems.py), the cases and their seeds (cases.py,
secret.py), hints, a learner's checkout and progress. May import only the plain data at grader/'s top
(errors, results, sandbox_report, settings): nothing here runs anything."""
