"""The trusted parent's room: code that runs only in the verifier's own process (the worker actor).

- `verifier.py`: the order of the gates, the comparison and the score (`Verifier`, `VerifyConfig`,
  `verify`); `verdict_draft.py`: the verdict while the gates decide it (frozen when done);
- `sandbox.py`: starting, talking to and killing candidate processes (spares, zygote clients);
- `reference.py`: loading the trusted reference; `cases.py`: the hidden cases and their inputs;
- `baselines.py`: timing eager and torch.compile once the candidate's process is dead.

Imports may flow from here to every other room: the shared ground (`kgym.verify.*` top level), the
static policy (`kgym.verify.policy`) and the candidate's room (`kgym.verify.candidate`: the zygote's
client, and the pieces of a rule the parent records on the trusted reference, such as
`guard.ConstructionRecorder` and `library.record_library_calls`). No other room of kgym.verify
imports it (`tests/test_imports.py`); the package's public API (`kgym/verify/__init__.py`) and the
verifier's callers (the CLI, tasks, jobs, the farm) do.
"""
