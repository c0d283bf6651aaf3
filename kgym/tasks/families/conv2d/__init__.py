"""conv2d family (being written)."""

OPERATIONS = []
