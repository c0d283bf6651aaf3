"""fusion family (being written)."""

OPERATIONS = []
