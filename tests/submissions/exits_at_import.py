"""Expect: error: called sys.exit(0) while importing"""

import sys

sys.exit(0)
