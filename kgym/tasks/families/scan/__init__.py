"""scan family (being written)."""

OPERATIONS = []
