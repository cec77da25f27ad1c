"""What a grading child may say, and nothing else: its events, one JSON line each, checked field by field
(events.py, with the reader that waits for them), and what they carry, decoded (payloads.py: a returned
array, a raised exception, a precision profile). Untrusted input throughout, never unpickled. May import the
plain data, child (its constants) and profile (the roles a profile entry may have)."""
