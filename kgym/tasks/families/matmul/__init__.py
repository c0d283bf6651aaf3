"""matmul family (being written)."""

OPERATIONS = []
