"""Expect: error: may not import 'grader'"""

import grader.expected.trusted  # noqa: F401
