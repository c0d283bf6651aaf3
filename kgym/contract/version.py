"""The verifier's version: part of every evaluation id, so a verdict of one version is never reused
as a verdict of another. Bump it whenever a gate's meaning changes (a new rule, a new tolerance)."""

VERIFIER_VERSION = "kgym-verify-1"
