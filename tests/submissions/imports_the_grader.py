"""Expect: error: may not import 'grader'"""

import grader.trusted  # noqa: F401
