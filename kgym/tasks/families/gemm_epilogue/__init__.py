"""gemm_epilogue family (being written)."""

OPERATIONS = []
