"""conv1d family (being written)."""

OPERATIONS = []
