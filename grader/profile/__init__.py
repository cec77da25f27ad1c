"""Precision profiles: what ran in which dtype, traced in a child, and compared with the reference's."""
