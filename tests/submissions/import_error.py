"""Expect: error: No module named 'torch_but_not_installed'"""

import torch_but_not_installed  # noqa: F401
