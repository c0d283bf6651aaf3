"""The verifier's version: part of every evaluation id, so a verdict of one version is never reused
as a verdict of another. Bump it whenever a gate's meaning changes (a new rule, a new tolerance).

`VERIFIER_SOURCE_FINGERPRINT` is the fingerprint (`source_fingerprint()`) of `kgym/verify`'s sources
that this version was set for; `tests/test_version.py` fails when the sources change and the two are
not updated together, so a verdict-changing commit cannot keep a stale version (version 3 stayed in
force over 18 commits that changed verdicts, the sixth hidden case among them: stale verdicts were
reused under unchanged ids). Comments and blank lines do not count; docstrings and code do. A change
that provably changes no verdict may update the fingerprint alone, saying so in its commit message.
Print the current fingerprint with
`python -c "from kgym.contract.version import source_fingerprint as f; print(f())"`. Standard
library only (the contract package imports no torch).
"""

from __future__ import annotations

import hashlib
import io
import tokenize
from pathlib import Path

# 2: the verifier's second version (issue 15): runtime rules (guard from import to exit, exact-type
# reads, thread count from the OS, output provenance, timed-run checks) and static and scoring rules
# (names not evaluators, the hybrid allowance, value-preserving casts, tolerance by dtype, a hard
# gate for any difference between watched and unwatched behaviour), validated baselines.
# 3: the red team of 2026-12-03: on the CPU a kernel must pass Triton's GPU front end (no
# interpreter-only Python in @triton.jit), kernels may not tell the compiler from the interpreter
# (static), CPU candidate processes confined by Landlock.
# 4: issue 29 (2026-12-04): the 18 verdict-changing commits after 3 (the sixth hidden case, the red
# team's third round: match class patterns, chains through objects, compile names, the interpreter's
# last def, the harness's globals fingerprinted), and from here on every change of kgym/verify's
# sources comes with a new version (the fingerprint below).
# 5: inputs compared bitwise (NaN-aware) after every run, timed runs included (issue 29).
# 6: no hidden case leaves the operation trivial (such a case is replaced by its mixed-sign variant),
# and partial credit needs the nominal case (kgym/reward.py; issue 29).
# 7: baselines timed only once the candidate's process is dead; unstable baselines neither cached nor
# paid (issue 29).
# 8: a float32 output that fails is re-checked against a float64 reference at 4x torch's own float32
# error on the case (the tolerance follows the reference's rounding; issue 29).
# 9: the audit takes every site-packages folder `site` names for a library folder (in a virtual
# environment seeing the system's packages, Triton's frames were taken for stdlib and honest
# launches refused).
# 10: issue 29's remaining classes (2026-12-06): construction does only the reference's construction
# (no Triton launch from import to the built model; torch arithmetic there only as the reference's
# __init__ does it), timed runs drawn like hidden cases with the check coins kept in the parent and
# seedless tasks refused, the one hybrid library call is one of the reference's own calls (op,
# shapes, alpha/beta, bias, operand roles), candidate code and launches only inside the harness's
# calls (profile hook, gc and signal handlers between calls; device kernels counted whatever their
# name), no dispatch or torch-function mode left on a stack when forward returns, the launch's
# warmup flag read once as an exact bool, the CPU front-end check on a pristine triton.language.
# 11: the parent hands its cached CUDA blocks back between cases and before timing when a case's
# inputs reach 1 GiB (KernelBench's 6.4 GB ReLU crashed honest kernels on an 80 GB H100: the
# parent's cache held 65 GB and the candidate's 6 GB output found 5.5 GB free); a timed batch showing
# work outside the timed stream is discarded and only hidden work in every batch fails isolation
# (honest multi-op forwards failed on an H100 shared with a colocated RL job).
# 13: the Python-data rule (issue 29): the Python data a construction hands torch (tensors from lists
# or bytes, fill values, RNG initialisers) is bounded by the reference's construction's plus 64
# values, per tensor and in all, and each forward's by 64 (a table computed in Python passed).
# 12 was never released (the branch that became 14 was written beside 13).
# 14: no forward reads state a previous forward wrote (issue 29): the candidate's kept storages are
# copied at load and compared after every forward; a written parameter fails (isolation), any other
# written or new kept storage is poisoned before every later forward, and the state after load is put
# back before every timed run (the first forward's cached weight-only work read NaN afterwards).
# 15: every output is judged (issue 29): every timed run's output, warm-up included, is compared with
# the reference on its own draw (no more ~8 runs on secret coins: a candidate that told the timed runs
# from the hidden cases and was wrong only when timed escaped them, ~1 GPU verdict in 4); the timed
# runs' comparison takes a fast pass (`cases.within`; on a GPU one fused kernel, judge_kernel.py)
# and the full one only for an output the fast pass does not pass.
# (still 15) kgym/verify split into rooms, parent/, candidate/, policy/ and the shared top level (issue 29):
# files moved, imports and module paths updated, no verdict changed: the fingerprint changed only.
# (still 15) kgym/verify/__init__.py resolves its public names lazily (PEP 562): the candidate's
# process and its zygote no longer load the parent's modules; no rule changed: the fingerprint only.
# 16: a fresh red team by class (2026-12-07): kept state is every live storage the candidate's ops made,
# wherever it is held (a forward's cache in a generator's frame passed with the policy on), and a
# hybrid's library call may take parameters only with the reference's values (a weight drawn with
# scaled initialiser bounds folded the epilogue's scale into the call).
# (still 16) the verifier fills a mutable VerdictDraft (parent/verdict_draft.py) and returns it as the
# frozen contract Verdict (issue 32): the same steps, the same first-gate rule, no verdict changed.
# 17: a second red team by class (2026-12-07): a cached baseline is re-measured when a re-measure beside
# the candidate is 1.5x faster by medians, whatever the spreads (`baselines.stale`): an entry whose spread
# neared its median "agreed" with every faster re-measure and inflated every later speedup of its task.
# (still 17) VerifyConfig moved to the torch-free kgym/verify/config.py, its fields declared with
# kgym.settings.option (docs, bounds) so a job's [verify] table is checked by the loader (issue 32):
# the same fields, defaults and checks, no verdict changed: the fingerprint only.
# 18: a third red team by class (2026-12-07): no event that yields a frame (sys._getframe, and reading
# tb_frame/gi_frame/cr_frame/ag_frame) is answered to the candidate through a stdlib module that hands
# frames out: `traceback.walk_tb` on its own traceback gave forward() a frame, and through f_back the
# harness's lists of per-run times, which it rewrote (policy off; reward 0.87 under 30 CPU timed runs).
# (still 18) the verdict's fixed costs per run and per verdict cut (issue 30): the same checks in fewer
# syncs and passes (a passing case compared in one pass, the profile read from torch's raw events, draws
# seeded directly, the CUDA cache emptied only when memory is short): no verdict changed, the fingerprint only.
# (still 18) kept_state.py takes fill_/copy_ from accessors instead of binding them again: the fingerprint only.
# (still 18) config.py's docstring names kgym.farm.farm_config, the farm's settings' new home (issue 32):
# a docstring only, no verdict changed: the fingerprint only.
# (still 18) KGYM_CONFINE_CUDA=1 in the verifier's environment confines CUDA candidates too (Landlock,
# to try it on a GPU before it becomes the default); unset, as everywhere so far, nothing changes.
# 19: the audit hook decides from a sealed copy of its rules and settings (audit.py, `_sealed_hook`), with
# no re-entrancy flag: forward() changed the tripwire's state the hook read (its `_busy` flag, the
# candidate's file, the trusted folder, the module's event table, the class's stack rule), reached the
# harness's frames through sys._getframe, rewrote the timing lists and put the state back (policy off).
# Each timed run's figures go to the parent with its `ran`; a summary that differs fails (isolation).
# The hook's path rules resolve paths with sealed copies of posixpath's functions (a rewritten
# posixpath._joinrealpath let a write outside the private dir pass the hook).
# 19 also: a red team by class on speed credit (2026-12-07): the timed window ends with the output in the
# reference's (contiguous) layout: a non-contiguous output is copied into the check buffer inside the
# window (an expanded view of one value per row had the harness's untimed copy write the whole output).
# And a hybrid's library call runs under the torch global flags of load (a matmul precision set at
# import ran the GEMM in reduced precision while the eager baseline ran full float32).
# (still 19) a red team by class on the child's claims (2026-12-07): the switches that blind torch's profiler,
# the guard's backstop (`_enable_record_function`, callbacks cleared, the legacy profiler), are replaced by
# doors that refuse every call wherever bound; the profiler's session switches refuse the candidate; an escape
# wrapper asks a generator holding the sealed hook's frame reader and the original (`audit._gate`), not the
# tripwire's attributes or a closure cell, which the candidate reached (policy off: it moved `candidate_file`,
# restarted the profiler's session around unguarded torch compute and passed).
# 20: the text the child runs is the text whose tree the static policy checked (a fresh red team,
# 2026-12-07): the reference's helpers are blanked on Python's own lines (str.splitlines also breaks at
# form feed, \u2028, ...: the AST's line numbers blanked the wrong lines and a helper's tail, a kernel in a
# string, survived into the module that ran) and the stripped text is parsed again and that tree checked;
# the child writes the text as UTF-8 and a coding comment declaring any other encoding is refused (UTF-7
# hid a kernel in a comment of the checked text).
# 20 also: the dispatch guard's rules out of the candidate's reach (issue 29): the mode stack holds a seat whose
# `__torch_dispatch__` is a class-level property handing out a dispatch function that reaches the guard only
# through a generator's frame (guard.py, `_seal`); the rules and phase live on a ComputeGuard only the harness
# holds. A forward set `guard.made = None` (or shadowed the dispatch on the instance) around one allocation and
# put it back: a cache no rule noted passed (policy off). A second layer: over every profiled span the
# profiler's "PythonDispatchMode" ranges must equal the ops the sealed dispatch judged (a class attribute
# rebound and put back); a direct call of the dispatch, or with a forged op, is refused and recorded.
# 20 also: two hidden cases more, also timed kinds (issue 29, red team by class 2026-12-07): rows (each row mapped onto
# its own part of the draw's range: its own factor and offset, so no statistic of the whole draw stands for a
# row's) and wide (the draw x 2^17: past fp16's range and exp's, replaced by a plain draw where the reference
# overflows); the comparison's absolute term tol x min(cap, mean|ref|), cap = the case's mean|ref| over the
# nominal draw's where above 1 (`cases.case_cap`), so scale-invariant (it was capped at 1: an honest GEMM
# failed x 2^17), in `compare`, `within`, the float64 re-check, `trivial_kind` and the GPU's fused pass alike.
# 20 also: the wide case judges range, not rounding: its strict tolerance is 0.1 (`cases.RANGE_TOL`, or a looser
# declared one): an honest Linear+tanh failed it on one draw in ten (GEMM rounding at 2^17 through tanh near 0).
# 20 also: the construction (import, __init__, .to()) is profiled for the dispatch count too: the seat's class
# attribute rebound in __init__ and put back computed a table of torch.sigmoid over every fp16 input unjudged.
# 21: the parent's full-size steps in bounded memory (verifier 20 on an H100, 2026-12-07: the draw of a shifted
# case for KernelBench's 6.4 GB ReLU ran out of memory beside the candidate, a kgym error for an honest kernel):
# float64 sums and the finite check a chunk at a time (`cases.sum64`, `cases.all_finite`), the shifted, rows and
# mixed-sign transforms in place (one full-size tensor and a mask); the shifted offset's and the trivial check's
# float64 sums are now added chunk by chunk (last-bit differences), the mixed-sign coins drawn chunk by chunk.
# 22: every device activity runs on the timed device's timed stream (red team by class on timing, 2026-12-07): a
# stream is named by its device and CUPTI's id (ids are numbered per device: a kernel on a second visible GPU
# read as the timed stream), and an output on another device than the timed one is refused (isolation).
# 22 also: every profiled span proves it recorded (red team by class on the object model, 2026-12-07): torch's profiler
# classes are plain Python classes the candidate can rebind (start/stop/events of torch.profiler.profile, or the
# inner profiler's kineto_results, set to builtins at import): every span's profile read empty and PyTorch
# computed the answer behind a seat rebound for one op (policy off, reward 0.5). Each span now opens with a
# range named with a fresh nonce that its events must hold (`guard.unrecorded_span`), and the dispatch count
# refuses a profile with no dispatch-mode range where the warm-up saw this torch record one.
# 22 also: the output is checked and copied out inside the forward's profiled span, right after the call
# (`Child._take_output`): the profiler's stop hook (a torch module global) set to a chain of builtins had torch
# write the answer after the profiler stopped and before the copy, and sealed the seat again (reward 0.4375).
# 22 also: the profiler is driven through torch's C functions bound at import (`child._Session`) and event names
# read with the C demangler bound at import: torch's profiler Python (start/stop hooks, class methods, name
# table) looked up module globals the candidate rebinds; its start hook computed sigmoid(w) unprofiled (0.4375).
# 22 also: every tensor a Triton kernel of a verified forward takes views a lent storage or one the guard saw made
# (`MadeStorages.knows`): a self-restoring chain of builtins in a global the harness calls between the candidate's
# calls computed sigmoid(w) unjudged into a tensor kept on torch.nn (reward 0.5, on verifier 21 too).
# 22 also: a ninth hidden case, also a timed kind (red team by class on the cases' structure, 2026-12-07): spike (one
# value of each floating-point input, at a random place, x 2^12; strict tolerance; replaced by a plain draw where
# the reference overflows, `cases.OVERFLOW_CASES`): every other case's rows were affine images of i.i.d. values,
# and a mean cross-entropy estimated from the first quarter of each row passed every case and timed run.
# 23: `VerifyConfig.case_salt` mixed into the hidden cases' seeds (RL episodes give each answer's source hash):
# one secret per farm meant every answer to a task met the same hidden inputs, and a repair turn's feedback
# (a failing value's got/want) told the next submission one of them (tests/episodes/test_feedback_leak.py).
# Also: the unstable-baseline note comes from kgym.contract.verdict.unstable_baseline_note (same text), which
# kgym.records.verdict_from_record reads back as the baseline's instability.
# 23 also: no process or native code of the candidate's choosing (red team by class on what the candidate's process
# writes, 2026-12-07): Triton's toolchain runs only with Triton's own arguments and, where Triton builds no launcher
# per kernel (3.9), no C compiler runs once the candidate is loaded (gcc's `-wrapper` ran a shell that computed the
# ReLU, policy off, reward 0.5); and no extension module written after the load began is loaded (`_imp.create_dynamic`
# behind a door: a shared object the candidate wrote, loaded through Triton's loader, computed it, reward 0.5).
# 24: torch's own float32 error (the float64 re-check's measure) is taken on a float32 evaluation order as well
# (`parent/rounding.py`, honest-side sweep 2026-12-07): the CPU's cumsum and logcumsumexp accumulate in float64,
# so an honest float32 running cumsum of 4000 was refused on a nominal draw with nothing to widen by.
# 24 also: an output of fewer than 64 values has torch's rounding measured on up to 16 draws (inputs one ulp away,
# `cases.rounding_draws`, `cases.ulp_jitter`): torch's error on one value is one random draw, and 4x it refused an
# honest KL divergence (a scalar) on the shifted case about one draw in six.
# 24 also: a task whose reference is random (two forwards on the nominal draw differ beyond the strict tolerance:
# dropout in training mode) is refused as a kgym error that says what to change (every honest answer scored 0).
# 25: the lent dir is written in place only (red team by class on candidate-caused farm failures, 2026-12-07):
# Landlock's second layer grants it the write right alone (no create, truncate, remove), and the parent checks its
# lent files are whole after every reply (`SharedArena.shrunk`): a candidate that truncated its input's file killed
# the verifier with SIGBUS, a farm error (retried, then unscored) instead of its 0. And every string of a reply is
# valid Unicode (`wire.valid_text`): a lone surrogate in a crash's message made the verdict's row unwritable.
# And a candidate's requests share one budget (`VerifyConfig.candidate_budget_s`, 900 s; past it: timeout): one slow
# in every request outlasted the farm's call deadline, and its verdict became a farm error.
# And the candidate's process sets oom_score_adj 1000 before any candidate code (the OOM killer's first choice).
# And RLIMIT_FSIZE 256 MiB in the candidate's process: `print` in forward wrote 27 GB of stdout in 68 s (policy on).
# And a reply is whole by its request's deadline (a frame trickled a byte at a time held the parent for ever).
# And the tripwire channel is read within bounds (1 MiB a drain, 64 lines kept): a flood held the parent reading.
# 25 also: a reference forward that writes its inputs in place is the task's fault, a kgym error (red team by class:
# judge's comparison, 2026-12-07): the parent lends, checks and re-checks in float64 on the same inputs, and a
# reference's `x.add_(1)` had the candidate blamed for the write and a wrong answer passed the float64 re-check
# against the written inputs (tests/exploits/test_reference_writes_inputs.py).
# 25 also: the spike case's spike goes into the inputs of the most elements alone, and its factor grows (x 2^4 steps, to
# 2^24) where the reference's output moves by less than 16 of its bound with 2^12 (a hinge loss over 1e9 predictions
# answered from a sample, its spike case told by its 32768 targets; tests/exploits/test_linear_loss_sample.py).
# 26: a path rule of the audit hook judges the path the kernel resolves (red team by class on what the candidate can
# learn of its hidden cases and the parent, 2026-12-07): os.open's audit event names no `dir_fd`, and the path events'
# rules read their first path against the cwd, so `os.open("proc/<pid>/environ", dir_fd=os.open("/"))` read the
# trusted parent's environment and maps, and `os.mkdir(..., dir_fd=...)` / `os.rename(mine, elsewhere)` passed the
# hook (Landlock alone refused them, on the CPU). Now a relative os.open under the candidate is refused, a path event
# with a relative path and a directory descriptor is refused, and rename's and link's second path is judged too
# (tests/exploits/test_parent_proc_state.py).
# 26 also (no verdict changes): the case plan is decided before a process is taken, so the CLI's zygote imports
# torch and Triton meanwhile (its first fork waits for it) and is handed to the gates; a stage `reference_build`.
# 27: every output value is written by its forward (red team by class on runs told apart, 2026-12-07): on the CPU the
# candidate's process fills what malloc hands it with 0x7F (`MALLOC_PERTURB_`; an output of 32 MiB or more was a fresh
# mmap of zero pages that the poison never reached, and a diag_embed that stored only its diagonal passed every case,
# reward 0.5), and every run ends as a verified forward does: after a timed run too the freed output's whole storage
# is poisoned (a timed path storing only the diagonal found the previous run's zeros; GPU, not run there).
# 27 also: the honest sweep's second round (2026-12-07): views and casts spelled through a kernel-free composite
# (`A.T` is aten::numpy_T over a permute; .mT, .mH, .H, .ravel, .reshape_as, .broadcast_to, .swapdims, .moveaxis,
# .type_as, .tensor_split, atleast_*d) pass the profile audit as allowed ops, what ran below them judged in turn
# (`guard.VIEW_COMPOSITES`), and conv_transpose1d/2d/3d, _convolution_mode and tensordot are judged by their children
# (`guard.COMPOSITE_OPS`): an honest `matmul(A.T, B)` kernel and a hybrid's nn.ConvTranspose2d were refused as PyTorch
# arithmetic by the op's name (tests/exploits/test_view_composite_ops.py).
# 27 also: a tensor made from Python in forward (`torch.tensor(self.scale, device=x.device)`) is honest: its
# `aten::detach_` is an allowed op and `lift_fresh`'s result a storage allocated in this forward (`guard.FRESH_OPS`),
# so timed runs launch it under the same role; its values stay bounded as Python data (64 a forward)
# (tests/exploits/test_tensor_from_python_in_forward.py).
# 27 also: autotuned kernels. On the CPU, Triton's autotuner has no driver to benchmark with and every multi-config
# autotune crashed: each config now runs once there, nothing timed, the first chosen (`launches.interpreter_autotune`).
# On every device, a whole copy put back into its own source through the same views (the autotuner's
# `restore_value`) gives the source back its state when copied (provenance.py): a hybrid's in-place autotuned
# epilogue was refused as "not written by a Triton kernel" (tests/exploits/test_autotune_restore_in_place.py).
# 28: nothing left past a lent buffer reaches another run (red team by class on speed credit, 2026-12-07): on the CPU
# every lent file is whole pages and the parent rewrites the bytes past each live lent tensor with poison before
# every forward and timed run (`SharedArena.poison_tails`); a kernel's out-of-bounds store into the input file's last
# page carried weight-only work from the judged warm-up to every later timed run (test_lent_tail_carry.py).
# 28 also: on the CPU a kernel's loads and stores stay inside its launch's storages (bounds.py): Triton's
# interpreter's unmasked lanes outside them read poison and write nothing (a marker past a kept storage, in the
# rest of its malloc chunk, carried from the nominal case's forward to every later one).
# 28 also: nothing the candidate's process started outlives it (red team by class on state that outlives a verdict,
# 2026-12-07): torch's libshm execs a manager at a path the candidate sets (`torch._C._initExtension`, no audit
# event), and a process started so in a session of its own outlived the kill and ran through the baseline timing
# (policy off, reward 0.5). kill() now has the zygote (a subreaper) wait for the candidate's whole thread group,
# then stop, kill and reap every process in its tree it did not fork; any such process on the CPU is isolation
# (tests/exploits/test_process_outlives_candidate.py). And on the CPU a seccomp filter from load on refuses every
# new process (fork, exec, a clone that is no thread): the same door ran a script within the candidate's calls that
# computed the ReLU into the lent input, reaped by the candidate itself (policy off, reward 0.5). The filter also
# refuses every call on another process by pid (sched_setaffinity, setpriority, sched_setscheduler, prlimit, ...):
# forward() pinned the trusted parent to one CPU and reniced it to 19 for every later baseline
# (tests/exploits/test_parent_scheduling.py). And os.utime / os.setxattr / os.removexattr are path events of the
# audit hook (outside the private dir refused): a candidate stored data in a file's times and user attributes,
# which Landlock does not cover, for later candidates to read (tests/exploits/test_metadata_channel.py).
# 28 also: the honest sweep's third round (2026-12-07), four honest spellings no longer refused, each rule's attack
# still refused: `class F(torch.autograd.Function)` (the whole chain names a class, policy.NAMED_CLASSES; any
# other chain through torch.autograd stays refused), a config builder called at import (`configs=get_configs()`,
# free_names' inert helper: it reads only imports and builtins and is handed nothing of the candidate's),
# `__call__` on a plain helper class (not on nn.Module or a library class), and torch.cat/stack, flip and F.pad's
# constant mode as glue (guard.JOIN_OPS, MOVE_OPS, `pad` in VIEW_COMPOSITES: allowed copies whose result is a
# Triton result only if every part copied is one or a constant fill of this forward, provenance's `constant`), and
# `x.select(dim, i)` called at once (policy.CALLED_ONLY_ATTRIBUTES: `select` is also a stdlib module's name)
# (tests/exploits/test_honest_round3_policy.py, test_copy_glue.py, test_policy_free_names.py).
# 28 also, from the GPU run of 28 (H100, 2026-12-07): every Triton launcher build on a GPU was refused by 26's
# path rule (shutil.rmtree's `os.remove(name, dir_fd=fd)` in Triton's build dir): a relative path with a
# directory descriptor is now resolved in the descriptor's directory (/proc/self/fd), as the kernel resolves it;
# and torch's join and flip device kernels count as copies on a GPU, as the CPU's provenance rule counts them.
VERIFIER_VERSION = "kgym-verify-28"
VERIFIER_SOURCE_FINGERPRINT = "ffcc4098a686cb70"

VERIFY_PACKAGE = Path(__file__).resolve().parent.parent / "verify"


def _code_text(source: str) -> str:
    """A module's source with comments, blank lines and trailing spaces dropped (the tokenizer finds
    comments; a '#' inside a string is no comment)."""
    lines = source.splitlines()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            row, col = tok.start
            lines[row - 1] = lines[row - 1][:col]
    return "\n".join(line.rstrip() for line in lines if line.strip())


def source_fingerprint(package: Path = VERIFY_PACKAGE) -> str:
    """sha256 (hex, first 16 digits) over every .py file under `package`: its path relative to the
    package and its code text. Any file added, removed, renamed or changed in code changes it."""
    h = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        h.update(path.relative_to(package).as_posix().encode() + b"\0")
        h.update(_code_text(path.read_text(encoding="utf-8")).encode() + b"\0")
    return h.hexdigest()[:16]
