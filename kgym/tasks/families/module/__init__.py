"""module family (being written)."""

OPERATIONS = []
