"""The candidate's room: code that runs in the candidate's process (and in the zygote it is forked from).

- `child.py`: the process's command loop (load, run, time) and the harness-state check;
- `zygote.py`: the fork server that pre-imports torch, Triton and `child` (its `ZygoteClient` is the
  parent's end of the socket);
- the runtime tripwires, which may only reject: `guard.py` (compute isolation, construction budget),
  `launches.py` (Triton launch counting), `frontend.py` (the GPU front end on the CPU),
  `library.py` (the hybrid allowance), `python_data.py`, `kept_state.py`, `audit.py` (audit hooks),
  `outside.py` (code only inside the harness's calls), `provenance.py` (outputs from the candidate's
  own kernels), `confine.py` (Landlock on the CPU);
- `warmup_kernel.py`: the warm-up kernel, imported by path from this folder (data, not a module).

Imports may flow from here only to the shared ground (`kgym.verify.*` top level) and within this
room: never to `kgym.verify.parent` (the reference outputs, the comparison and the score) nor to the
static policy. `tests/test_imports.py` fails if one does. The parent may import from here.
"""
