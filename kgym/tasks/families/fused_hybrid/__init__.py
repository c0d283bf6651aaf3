"""fused_hybrid family (being written)."""

OPERATIONS = []
