"""A submission for bf16_train_step that finds the course checkout through the installed package's own
metadata (an editable install records where it points) and runs the reference solution from there.

Landlock keeps the checkout out of reach: reading the reference fails with PermissionError. With
GRADE_LANDLOCK=off and no GRADE_SANDBOX it passes, which is what tests/test_sandbox.py shows."""

import importlib.metadata
import json
from pathlib import Path


def _checkout() -> Path:
    distribution = importlib.metadata.distribution("mp-grader")
    recorded = distribution.read_text("direct_url.json")  # {"url": "file:///path/to/checkout", ...}
    if recorded:
        return Path(json.loads(recorded)["url"].removeprefix("file://"))
    return Path(distribution.locate_file("")).parent  # a plain install: next to site-packages


def mixed_precision_step(seed, x, y, lr, loss_scale):
    source = (_checkout() / "solutions" / "bf16_train_step.py").read_text()
    namespace = {"__name__": "stolen_reference"}
    exec(compile(source, "stolen_reference.py", "exec"), namespace)
    return namespace["mixed_precision_step"](seed, x, y, lr, loss_scale)
