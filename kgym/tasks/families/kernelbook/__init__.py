"""kernelbook family (being written)."""

OPERATIONS = []
