"""The course on disk: problems and their manifests, the cases and their seeds, hints, a learner's checkout
and progress."""
