"""softmax family (being written)."""

OPERATIONS = []
