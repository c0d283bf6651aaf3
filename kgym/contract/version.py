"""The verifier's version: part of every evaluation id, so a verdict of one version is never reused
as a verdict of another. Bump it whenever a gate's meaning changes (a new rule, a new tolerance)."""

# 2: the verifier's second version (issue 15): runtime rules (guard from import to exit, exact-type
# reads, thread count from the OS, output provenance, timed-run checks) and static and scoring rules
# (names not evaluators, the hybrid allowance, value-preserving casts, tolerance by dtype, a hard
# gate for any difference between watched and unwatched behaviour), validated baselines.
# 3: the red team of 2026-12-03: on the CPU a kernel must pass Triton's GPU front end (no
# interpreter-only Python in @triton.jit), kernels may not tell the compiler from the interpreter
# (static), CPU candidate processes confined by Landlock.
VERIFIER_VERSION = "kgym-verify-3"
