"""What is installed beside the grader: distributions and their versions, read once."""

from __future__ import annotations

import functools
import importlib.metadata

from grader.settings import jax_platforms


@functools.cache
def installed_packages() -> dict[str, str]:
    """Returns the installed distributions, name (lower case, `-` for `_`) to version; read once."""
    return {
        (dist.metadata["Name"] or "").lower().replace("_", "-"): dist.version
        for dist in importlib.metadata.distributions()
    }


def gpu_plugin_installed() -> bool:
    """Whether a JAX GPU or TPU plugin is installed (its runtime reserves far more address space than it
    uses)."""
    plugins = ("jax-cuda", "jax-rocm", "jaxlib-cuda", "jax-tpu", "libtpu")
    return any(name.startswith(plugins) for name in installed_packages())


def may_use_gpu() -> bool:
    """Whether JAX may run on a GPU in a child: a GPU plugin is installed, and the children's JAX_PLATFORMS
    (grader/settings.py: the CPU unless GRADE_BACKEND=native) says not cpu only."""
    platforms = jax_platforms() or ""
    return gpu_plugin_installed() and not (platforms and set(platforms.split(",")) == {"cpu"})
