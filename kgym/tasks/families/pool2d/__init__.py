"""pool2d family (being written)."""

OPERATIONS = []
