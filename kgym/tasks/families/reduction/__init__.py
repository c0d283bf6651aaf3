"""reduction family (being written)."""

OPERATIONS = []
