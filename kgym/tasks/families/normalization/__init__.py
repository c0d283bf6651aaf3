"""normalization family (being written)."""

OPERATIONS = []
