"""Expect: error: may not import 'solutions'"""

from solutions import toy  # noqa: F401
