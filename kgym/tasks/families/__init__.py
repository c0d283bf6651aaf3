"""The task families, one package each. A family exposes `OPERATIONS` (a list of
`kgym.tasks.operation.Operation`) and keeps its reference, solution and wrong files beside it."""
