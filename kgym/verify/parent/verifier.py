"""The five gates in order, around one candidate process: `Verifier.verify(reference, candidate)`.

A `Verifier` is long-lived (a Ray worker holds one per GPU): it owns the sandbox with its warm
spares, the baseline cache and the secret the hidden cases are drawn from. `verify()` never raises
for anything the candidate does: a hostile candidate gets a verdict; only a failure of kgym itself
sets `Verdict.error`. The gates fill a `VerdictDraft` (verdict_draft.py) and `verify()` returns it
frozen: the contract's `Verdict` is never changed once made.

Baselines (gate 5's eager and torch.compile figures) are read from the cache and validated beside
the candidate; one that is missing is measured on the candidate's path, unless `prefetch` measured
it ahead (the farm's workers do, for tasks about to be handed out) or it is the torch.compile
figure of a verdict whose reward does not need it (`VerifyConfig.defer_compile`: the verdict is
given without it, and the worker measures it later, off the candidate's path).
"""

from __future__ import annotations

import contextlib
import copy
import math
import secrets
import statistics
import time
import traceback
from dataclasses import dataclass, replace
from typing import Any

import torch

from kgym.contract import CaseResult, Gate, Timing, Verdict
from kgym.contract.verdict import unstable_baseline_note
from kgym.verify import timing
from kgym.verify.candidate.guard import ConstructionRecorder
from kgym.verify.candidate.launches import confirmed_on_device
from kgym.verify.candidate.library import record_library_calls
from kgym.verify.config import VerifyConfig
from kgym.verify.parent import cases as cases_mod
from kgym.verify.parent.baselines import (
    KINDS,
    BaselineCache,
    Measured,
    agrees,
    check_runs,
    device_name,
    measure_baseline,
    measure_model,
    stale,
    usable,
)
from kgym.verify.parent.reference import Reference, load_reference
from kgym.verify.parent.rounding import WideOpsSeen, float32_order_forward
from kgym.verify.parent.sandbox import CandidateProcess, ChildFailure, Sandbox
from kgym.verify.parent.verdict_draft import VerdictDraft
from kgym.verify.policy.policy import check_source
from kgym.verify.precision import exact_fp32
from kgym.verify.shared import SharedArena

_same = cases_mod.unchanged  # inputs bit for bit (bitwise.same; a fused first pass on a GPU)
FLAG_SPEEDUP = 10.0
# Tasks whose eager time is below this are timed with no spare starting on the GPU (Sandbox.quiet):
# on an H200 a spare's CUDA start stretched 7-100 us kernels by tens of microseconds, while a 3 ms
# kernel timed the same with and without (3.13-3.18 ms).
QUIET_BELOW_MS = 2.0
# The child's split of its share of the timed batch (`stages_s["timing_child_<part>"]`, figures only,
# never judged): waiting for the parent's `run`, the kept state's walk and put-back, the GPU's wake-up
# and calibration run (CUDA), the checks, copy out and reply after each run, the runs themselves (L2
# flush, hold, call, synchronize: the rest of the batch), and the GPU spin its holds queued (CUDA;
# seconds at the top clock: `timing.Hold` grows up to 10 ms a run).
CHILD_TIMING_PARTS = ("wait", "prepare", "calibration", "finish", "runs", "hold")
DEFERRED_NOTE = ("torch.compile baseline deferred: none is cached for this task, shape and GPU, and the reward's "
                 "baseline is eager, so the verdict does not wait for it (a farm worker measures it after the "
                 "verdict and its figure joins the records; a one-shot `kgym verify` leaves it out: "
                 "--baseline joint measures it)")


class Verifier:
    def __init__(self, config: VerifyConfig = VerifyConfig(), *, spares: int = 1,
                 cache_dir: str | None = None, case_secret: bytes | None = None,
                 quiet_mode: str = Sandbox.DEFAULT_QUIET_MODE, zygote: bool = Sandbox.DEFAULT_ZYGOTE):
        self.config = config
        self.device = config.resolved_device()
        exact_fp32()  # references and baselines in true FP32 (see precision.py)
        if self.device.type == "cuda" and self.device.index is None:
            self.device = torch.device("cuda", torch.cuda.current_device())
        self.sandbox = Sandbox(self._child_device(), spares=spares, quiet_mode=quiet_mode, zygote=zygote)
        self.cache = BaselineCache(cache_dir)
        self.secret = case_secret if case_secret is not None else secrets.token_bytes(32)
        self._plans: dict[tuple, tuple[list, list[str], dict[str, float]]] = {}  # hidden cases per task (_case_plan)
        self._model64: tuple[torch.nn.Module, torch.nn.Module] | None = None  # (model, its float64 copy): _judge
        self._allowances: dict[tuple[str, int], dict] = {}  # hybrid allowances by (reference, seed)
        self._judgeable: set[tuple[str, int]] = set()  # (reference, seed) that passed `_require_judgeable`
        self._arena: SharedArena | None = None  # the current candidate's lent buffers (`_lent_whole`)
        self._budget_left = 0.0  # seconds of the current candidate's `candidate_budget_s` not yet waited
        self._budget_s = 0.0

    def _child_device(self) -> str:
        # The child inherits CUDA_VISIBLE_DEVICES (Ray sets it per actor), so the same index names
        # the same GPU there.
        return f"cuda:{self.device.index}" if self.device.type == "cuda" else "cpu"

    def close(self) -> None:
        self.sandbox.close()

    def __enter__(self) -> Verifier:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------------------------------
    def verify(self, reference: str | Reference, candidate: str, **overrides: Any) -> Verdict:
        cfg = replace(self.config, **overrides) if overrides else self.config
        v = VerdictDraft(device=str(self.device), hybrid=cfg.hybrid)  # decided gate by gate, frozen once done
        t_start = time.perf_counter()
        try:
            ref = reference if isinstance(reference, Reference) else load_reference(reference)
            self._run(ref, candidate, cfg, v)
        except Exception:  # noqa: BLE001 - a failure of kgym itself, never the kernel's fault
            v.error = traceback.format_exc(limit=8)
            v.passed = False
        v.stages_s["total"] = time.perf_counter() - t_start
        return v.done()

    def _run(self, ref: Reference, candidate: str, cfg: VerifyConfig, v: VerdictDraft) -> None:
        # Gate 1: static policy.
        if cfg.static_policy:
            pol = check_source(candidate)
            if not pol.ok:
                v.fail("policy", pol.reason)
                return
            source = pol.source
        else:
            source = candidate
        device = self.device
        _, _, mem_gb = self._protocol(cfg)  # the timed runs are set at gate 5, from the inputs' size
        t = time.perf_counter()
        init_inputs, model, construction = self._build_model(ref, cfg)
        self._require_judgeable(ref, model, cfg)
        v.stages_s["reference_build"] = time.perf_counter() - t
        # The case plan is decided before a process is taken (and handed to the gates): a zygote (the CLI's)
        # imports torch and Triton meanwhile, and its first fork waits for that in `acquire`.
        t = time.perf_counter()
        case_plan = self._case_plan(ref, model, cfg)
        v.stages_s["case_plan"] = time.perf_counter() - t

        t = time.perf_counter()
        proc = self.sandbox.acquire()
        arena = self._arena = SharedArena(device)
        try:
            try:
                ready = proc.wait_ready(self.sandbox.start_timeout_s)
            except ChildFailure as e:
                raise RuntimeError(f"the candidate process did not start: {e.reason}") from None
            if not ready.get("confined"):
                why = "no Landlock in this kernel" if self.device.type == "cpu" else "not yet on CUDA: confine.py"
                v.notes.append(f"the candidate's process ran without filesystem confinement ({why}): native code "
                               f"could write outside its private dir")
            v.stages_s["spawn"] = time.perf_counter() - t
            self._budget_left = self._budget_s = cfg.candidate_budget_s  # from here every wait is the candidate's
            self._gates(proc, arena, ref, model, source, init_inputs, construction, cfg, v, mem_gb, case_plan)
        except ChildFailure as e:
            v.fail(e.kind, e.reason)
        finally:
            proc.kill()
            self._judge_strangers(proc, v)
            arena.close()
            self._arena = None
            self._model64 = None
            del model
            if device.type == "cuda":
                torch.cuda.empty_cache()

    def _judge_strangers(self, proc: CandidateProcess, v: VerdictDraft) -> None:
        """Processes the candidate's process started outside Triton's toolchain, found when it was killed
        (`CandidateProcess.kill`: the zygote's sweep, which ended them). On the CPU no process may start
        at all once the candidate is loaded (the interpreter runs no toolchain), so any is isolation,
        whatever gate failed softly before (a process computing beside the cases earns no partial
        credit). On a GPU a spare that died in its warm-up may leave a compiler behind: a note only
        (they were ended before any baseline was timed either way)."""
        found, proc.strangers = proc.strangers, 0  # judged once (kill() is called again in `verify`'s finally)
        if not found:
            return
        what = (f"{found} process(es) the candidate's process started outside Triton's toolchain outlived its "
                f"calls or its kill (ended before anything else was timed)")
        v.notes.append(what)
        if self.device.type == "cpu":
            v.supersede(Gate.ISOLATION, f"sandbox: {what}")

    def _protocol(self, cfg: VerifyConfig, nominal: list[Any] | None = None) -> tuple[int, int, float]:
        """(timed runs, warm-up runs, memory limit in GB) of a verification under `cfg` on this device;
        on CUDA the default runs depend on the size of the `nominal` inputs (`timing.cuda_timed_runs`)."""
        cuda = self.device.type == "cuda"
        size = sum(x.numel() * x.element_size() for x in _tensors(nominal or []))
        runs = cfg.timed_runs or (timing.cuda_timed_runs(size) if cuda else 10)
        warmup = cfg.warmup_runs if cfg.warmup_runs is not None else (5 if cuda else 1)
        return runs, warmup, cfg.memory_limit_gb or (32.0 if cuda else 8.0)

    def _build_model(self, ref: Reference, cfg: VerifyConfig) -> tuple[list[Any], torch.nn.Module, dict]:
        """The reference's init inputs and model, built as KernelBench does (and the child too): seed,
        build on the CPU, then move to the device. Also the arithmetic its construction did and the
        Python data it handed torch (`ConstructionRecorder`): the candidate's construction may do the
        same, and nothing more."""
        torch.manual_seed(cfg.seed)
        init_inputs = ref.get_init_inputs()
        torch.manual_seed(cfg.seed)
        with ConstructionRecorder() as recorder:
            model = ref.Model(*init_inputs)
        return init_inputs, model.to(self.device), recorder.as_message()

    def _case_inputs(self, ref: Reference, cfg: VerifyConfig, name: str, transform: Any = None, *,
                     salted: bool = True) -> list[Any]:
        """The inputs of hidden case `name`, drawn from the secret on the device (nominal: the inputs
        the baselines are timed on), under the request's `case_salt` unless not `salted` (the case plan's
        probes: decided once per task, applied to every salt's draws as to the timed runs' fresh ones)."""
        transform = transform or dict(cases_mod.CASES)[name]
        salt = cfg.case_salt if salted else ""
        return cases_mod.make_inputs(ref.get_inputs, cases_mod.case_seed(self.secret, cfg.seed, name, salt),
                                     transform, self.device)

    def _require_judgeable(self, ref: Reference, model: torch.nn.Module, cfg: VerifyConfig) -> None:
        """Refuse a task no candidate can be judged on (`_require_seeded`, `_require_deterministic`):
        checked once per (task, seed) and verifier, before any candidate process is used. A task's
        fault: a kgym error, never a verdict."""
        key = (ref.sha256, cfg.seed)
        if key in self._judgeable:
            return
        self._require_seeded(ref, cfg)
        self._require_deterministic(ref, model, cfg)
        if len(self._judgeable) >= 4096:
            self._judgeable.clear()
        self._judgeable.add(key)

    def _require_seeded(self, ref: Reference, cfg: VerifyConfig) -> None:
        """Refuse a task whose get_inputs ignores its seed (a linspace, a fixed table): its hidden cases
        would be transforms of one tensor and its timed runs copies of the nominal case, all derivable
        from the first input a candidate sees (a cache of the first case answered x3, x0.01, negated and
        every timed run). Two draws under secret seeds must differ in some tensor."""
        a, b = (cases_mod.make_inputs(ref.get_inputs, cases_mod.case_seed(self.secret, cfg.seed, name),
                                      lambda x: x, self.device) for name in ("nominal", "seed-check"))
        pairs = [(x, y) for x, y in zip(a, b) if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor)]
        if pairs and all(x.shape == y.shape and torch.equal(x, y) for x, y in pairs):
            raise RuntimeError("the task's get_inputs() ignores its seed (two draws under different seeds gave the "
                               "same tensors): its hidden cases and timed runs would be derivable from its first "
                               "case; draw the inputs with torch's random functions")

    def _require_deterministic(self, ref: Reference, model: torch.nn.Module, cfg: VerifyConfig) -> None:
        """Refuse a task whose reference gives another answer each time on the same inputs (dropout or a
        random op in training mode: KernelBench level 2's Matmul_Dropout_Softmax): no candidate can be
        judged against it (its float64 re-check differs from its float32 run by ~0.7), so every honest
        answer would score 0. Two forwards on the nominal draw, under different torch seeds, must agree
        within the strict tolerance (not bitwise: a GPU reduction with atomics may differ in the last
        bits)."""
        inputs = self._case_inputs(ref, cfg, "nominal", salted=False)
        outs = []
        for seed in (1, 2):
            torch.manual_seed(seed)
            outs.append(_reference_forward(model, inputs))
        same = cases_mod.compare(outs[1], outs[0], cases_mod.case_tolerance("nominal", cfg.tolerance))
        del inputs, outs
        if not same.passed:
            raise RuntimeError("the task's reference is not deterministic: two forwards on the same inputs differ "
                               f"beyond the strict tolerance ({same.note}); a random op in training mode (dropout?) "
                               "leaves nothing to judge a candidate against: make the reference deterministic "
                               "(put the model in eval mode, or leave the random op out)")

    def _case_plan(self, ref: Reference, model: torch.nn.Module, cfg: VerifyConfig
                   ) -> tuple[list[tuple[str, Any]], list[str], dict[str, float]]:
        """The hidden cases of this task as (name, transform), with notes and each case's cap on the
        comparison's absolute term (`cases.case_cap`, by name): a case whose inputs leave the
        operation trivial (the reference's output a constant, or a copy or multiple of an input, where
        the nominal output is neither: `cases.trivial_kind`) is replaced by its mixed-sign variant, else
        by a plain draw under its seed; a copy kernel earned the abs and shifted cases of ReLU. A case of
        `cases.OVERFLOW_CASES` (wide: x 2^17; spike: one value x 2^12) whose reference output is not
        finite where the nominal one is (exp overflows) is replaced by a plain draw:
        no kernel can be judged against an overflow.
        Decided once per (task, seed, tolerance) and verifier (the inputs depend on those and the secret
        only), from reference forwards on the case inputs; a task trivial on its nominal inputs is left
        as is (its overflow rule and caps still apply)."""
        key = (ref.sha256, cfg.seed, cfg.tolerance)
        if key in self._plans:
            return self._plans[key]
        seen: dict[tuple[str, int], tuple[bool, float | None, str | None]] = {}
        nominal_mean: list[float | None] = []
        numels: dict[str, int] = {}

        def probe(name: str, transform: Any) -> tuple[bool, float | None, str | None]:
            """Is the reference's output on this case finite, its mean|ref|, its trivial kind."""
            if (name, id(transform)) not in seen:
                inputs = self._case_inputs(ref, cfg, name, transform, salted=False)
                out = _reference_forward(model, inputs)
                numels[name] = out.numel()
                mean = cases_mod.mean_abs(out)
                cap = cases_mod.case_cap(mean, nominal_mean[0]) if nominal_mean else 1.0
                tolerance = cases_mod.case_tolerance(name, cfg.tolerance)
                seen[(name, id(transform))] = (cases_mod.all_finite(out), mean,
                                               cases_mod.trivial_kind(out, inputs, tolerance, cap))
                del inputs, out
            return seen[(name, id(transform))]

        plan, notes = list(cases_mod.CASES), []
        nominal_finite, mean, nominal_kind = probe(*plan[0])
        nominal_mean.append(mean)
        if nominal_finite:
            for k, (name, transform) in enumerate(plan):
                if name in cases_mod.OVERFLOW_CASES and not probe(name, transform)[0]:
                    plan[k] = (name, lambda x: x)
                    notes.append(f"hidden case {name}: the reference's output overflows there (NaN or Inf where "
                                 f"its nominal output is finite), so it was replaced by a plain draw")
            k = next((i for i, (_, transform) in enumerate(plan) if transform is cases_mod.spike_case), None)
            if k is not None and numels["nominal"] <= cases_mod.SPIKE_PROBE_NUMEL:
                factor = self._spike_factor(ref, model, cfg, nominal_mean[0])
                if factor != cases_mod.SPIKE:
                    plan[k] = ("spike", cases_mod.spike_by(factor))
                    notes.append(f"hidden case spike: the reference's output barely moves with one value x 2^12 (a "
                                 f"mean of many terms, each linear in its value), so its spike is x 2^"
                                 f"{round(math.log2(factor))}")
        if nominal_kind is None:
            for k, (name, transform) in enumerate(plan[1:], 1):
                why = probe(name, transform)[2]
                if why is None:
                    continue
                for label, variant in (("its mixed-sign variant", cases_mod.mixed_sign(transform)),
                                       ("a plain draw", lambda x: x)):
                    plan[k] = (name, variant)
                    note = (f"hidden case {name}: the reference's output is {why} of its inputs there (the "
                            f"operation is trivial on them), so it was replaced by {label}")
                    if probe(name, variant)[2] is None:
                        break
                notes.append(note)
        caps = {name: cases_mod.case_cap(probe(name, transform)[1], nominal_mean[0]) for name, transform in plan}
        if len(self._plans) >= 4096:
            self._plans.clear()
        self._plans[key] = (plan, notes, caps)
        return plan, notes, caps

    def _spike_factor(self, ref: Reference, model: torch.nn.Module, cfg: VerifyConfig,
                      nominal_mean: float | None) -> float:
        """The spike case's factor for this task (`cases.spike_by`): SPIKE, raised by SPIKE_STEP up to SPIKE_MAX
        while the reference's output on the spike's draw moves by less than SPIKE_FELT of the case's bound
        with a spike of either sign (`cases.spike_felt`, against the same draw without the spike; a ReLU
        or a row max ignores a spike on a negative value, whatever its factor) and stays finite with both.
        Why: a spike must move what a kernel that did not read it answers (`cases.spike_by`); a mean of
        ~1e9 terms each linear in its value moved by ~2^12 / 1e9 of a term, inside 1e-4. Reference forwards only, on the
        probes' unsalted draws; decided with the plan, for outputs of at most SPIKE_PROBE_NUMEL values."""
        tolerance = cases_mod.case_tolerance("spike", cfg.tolerance)
        plain = _reference_forward(model, self._case_inputs(ref, cfg, "spike", lambda x: x, salted=False))
        factor = chosen = cases_mod.SPIKE
        while True:
            felt = 0.0
            for sign in (1.0, -1.0):  # both signs: a clamp or a max may ignore a spike of one sign on this draw
                spiked = _reference_forward(model, self._case_inputs(
                    ref, cfg, "spike", cases_mod.spike_by(sign * factor), salted=False))
                cap = cases_mod.case_cap(cases_mod.mean_abs(spiked), nominal_mean)
                f = cases_mod.spike_felt(spiked, plain, tolerance, cap)
                if f is None:  # not comparable (an overflow at a larger factor): the last factor that was
                    return chosen
                felt = max(felt, f)
            chosen = factor
            if felt >= cases_mod.SPIKE_FELT or factor >= cases_mod.SPIKE_MAX:
                return chosen
            factor *= cases_mod.SPIKE_STEP

    def _ask(self, proc: CandidateProcess, msg: dict[str, Any], timeout: float, v: VerdictDraft
             ) -> dict[str, Any] | None:
        """One request to the child. None when a tripwire fired (the verdict then says which)."""
        try:
            with self._budgeted(timeout) as limit:
                reply = proc.request(msg, limit)
        except ChildFailure:
            if proc.reports:  # a violation recorded before the hang or the death comes first
                v.fail(*proc.reports[0])
                return None
            raise
        if proc.reports:
            v.fail(*proc.reports[0])
            return None
        return self._lent_whole(reply, v)

    @contextlib.contextmanager
    def _budgeted(self, timeout: float):
        """A wait on the child, as long as `timeout` and what is left of the candidate's whole budget
        (`VerifyConfig.candidate_budget_s`) allow; the time it took is charged to the budget. A wait the
        budget cut short, or one with no budget left, is the candidate's timeout: the sum of its requests
        is bounded, so no candidate can outlast the farm's call deadline and turn its verdict into a
        farm error (a worker replaced as wedged). Only waits on the child count: the parent's own work
        (reference forwards, comparisons, the start of a spare) is not the candidate's."""
        limit = min(timeout, self._budget_left)
        spent = f"the candidate's process used its whole budget of {self._budget_s:g} s (all its requests summed)"
        if not limit > 0:
            raise ChildFailure("timeout", spent)
        t0 = time.perf_counter()
        try:
            yield limit
        except ChildFailure as e:
            if e.kind == "timeout" and limit < timeout:
                raise ChildFailure("timeout", spent) from None
            raise
        finally:
            self._budget_left -= time.perf_counter() - t0

    def _lent_whole(self, reply: dict[str, Any], v: VerdictDraft) -> dict[str, Any] | None:
        """The reply, once every buffer lent to the child is still whole (the parent reads and writes
        them next: a page of a truncated file is a SIGBUS in the parent, the farm's worker); None, with
        an isolation failure, if one was cut (`SharedArena.shrunk`)."""
        shrunk = self._arena.shrunk() if self._arena is not None else None
        if shrunk is not None:
            v.fail("isolation", shrunk)
            return None
        return reply

    def _gates(self, proc: CandidateProcess, arena: SharedArena, ref: Reference, model: torch.nn.Module,
               source: str, init_inputs: list[Any], construction: dict, cfg: VerifyConfig, v: VerdictDraft,
               mem_gb: float, case_plan: tuple[list[tuple[str, Any]], list[str], dict[str, float]]) -> None:
        device = self.device
        self._last_signature = ""  # launches of the last verified forward; timed runs must match it
        self._last_device_counts: dict[str, int] | None = None  # its device kernels (GPU), likewise
        # Gate 2 (compile): import the candidate and build ModelNew with the reference's seed.
        t = time.perf_counter()
        hybrid = self._library_allowance(ref, model, cfg)
        reply = self._ask(proc, {"op": "load", "source": source, "init_inputs": init_inputs, "seed": cfg.seed,
                                 "construction": construction, "hybrid": hybrid,
                                 "reference_values": self._lend_reference_values(arena, model) if hybrid else [],
                                 "memory_limit_bytes": int(mem_gb * 2**30), "lent_dir": arena.dir}, cfg.timeout_s, v)
        v.stages_s["load"] = time.perf_counter() - t
        if reply is None:
            return
        if reply.get("op") == "internal" and reply.get("phase") == "before_candidate":
            # The harness broke before any candidate code ran: kgym's failure, not the kernel's.
            raise RuntimeError(f"the candidate process failed before loading the candidate: {reply.get('reason')}")
        if reply.get("op") != "loaded":
            v.fail(_gate(reply, "compile"), str(reply.get("reason", reply))[:8000])
            return
        v.add_stage("kept_state", _float(reply, "state_s"))

        # Gates 2-4 on the hidden cases; the first forward compiles the kernels.
        t = time.perf_counter()
        nominal: list[Any] | None = None
        plan, plan_notes, caps = case_plan  # decided in _run, before the process was taken
        v.notes.extend(plan_notes)
        for k, (name, transform) in enumerate(plan):
            t_part = time.perf_counter()
            inputs = self._case_inputs(ref, cfg, name, transform)
            v.add_stage("correctness_draws", time.perf_counter() - t_part)
            if name == "nominal":
                nominal = inputs
            reference_first = k % 2 == 1  # both orders: nominal, x0.01, abs candidate first
            t_part = time.perf_counter()
            ref_out = _reference_forward(model, inputs) if reference_first else None
            v.add_stage("correctness_reference", time.perf_counter() - t_part)
            result = self._candidate_case(proc, arena, inputs, ref_out, model, name, reference_first,
                                          cfg, v, profile=cfg.profile_forwards or k == 0, cap=caps[name])
            if result is None:  # a gate failed: the verdict holds why
                v.stages_s["correctness"] = time.perf_counter() - t
                return
            v.cases.append(result)
            del inputs, ref_out
            _release_cached(self.device, nominal, int(mem_gb * 2**30))
        v.stages_s["correctness"] = time.perf_counter() - t
        if v.cases_passed < len(v.cases):
            first = next(c for c in v.cases if not c.passed)
            v.fail("correctness", f"{len(v.cases) - v.cases_passed} of {len(v.cases)} hidden cases failed; "
                   f"{first.name}: {first.note}")
            return

        # Gate 5: timing of the candidate in its process, baselines here.
        runs, warmup, _ = self._protocol(cfg, nominal)
        # No spare starts its CUDA context while a microsecond-scale kernel is timed on this GPU (see
        # Sandbox.quiet); kernels of milliseconds do not notice, so they do not wait for spares.
        t = time.perf_counter()
        # The parent's own measure of the task's scale: its cached eager time (read once, reused below).
        cached = {"eager": self.cache.get(self._baseline_key(ref, nominal, "eager", runs, warmup))}
        quiet = cached["eager"] is None or cached["eager"].median_ms < QUIET_BELOW_MS
        with self.sandbox.quiet() if quiet else contextlib.nullcontext():
            v.stages_s["quiet_wait"] = time.perf_counter() - t
            t = time.perf_counter()
            cand = self._time_candidate(proc, arena, ref, model, nominal, cfg, v, runs, warmup)
            v.stages_s["timing"] = time.perf_counter() - t
            if cand is None:
                return
            # Nothing is timed for a baseline while the candidate's process can run: it is killed and
            # reaped first (its GPU work ends with its context). Alive, it could keep the device or the
            # host busy while the baseline is timed (a slower baseline inflates every speedup).
            t = time.perf_counter()
            dead = proc.kill()
            self._judge_strangers(proc, v)
            v.stages_s["candidate_exit"] = time.perf_counter() - t
            t = time.perf_counter()
            if dead:
                self._baselines(ref, model, nominal, cfg, v, runs, warmup, cached)
            else:
                v.timings["eager"] = v.timings["compile"] = None
                v.notes.append("the candidate's process did not exit when killed: no baseline was timed (no speed "
                               "credit)")
            v.stages_s["baselines"] = time.perf_counter() - t
        eager, comp = v.timings.get("eager"), v.timings.get("compile")
        v.speedup_eager = eager.median_ms / cand.median_ms if eager else None
        v.speedup_compile = comp.median_ms / cand.median_ms if comp else None
        for kind, b in (("eager", eager), ("compile", comp)):
            if b is not None and not usable(b):  # the reward pays speed only against stable baselines
                v.notes.append(unstable_baseline_note(kind, b))
        v.flagged = any(s is not None and s > FLAG_SPEEDUP for s in (v.speedup_eager, v.speedup_compile))
        if device.type == "cpu":
            v.notes.append("timed on the CPU with host clocks (Triton interpreter): CPU speed is not "
                           "a verdict on GPU speed")
        if v.gate is None:
            v.passed = True

    def _library_allowance(self, ref: Reference, model: torch.nn.Module, cfg: VerifyConfig) -> dict | bool:
        """Hybrid tasks: the kinds and sizes of the reference's own library calls (library.py), from one
        reference forward on inputs drawn with the public seed (only their shapes matter)."""
        if not cfg.hybrid:
            return False
        key = (ref.sha256, cfg.seed)  # the reference's calls depend on its shapes only: once per task
        cache = self._allowances
        if key not in cache:
            inputs = cases_mod.make_inputs(ref.get_inputs, cfg.seed, lambda x: x, self.device)
            cache[key] = record_library_calls(model, inputs).to_wire()
        return cache[key]

    @staticmethod
    def _lend_reference_values(arena: SharedArena, model: torch.nn.Module) -> list[Any]:
        """A hybrid's library call may take parameters only with the reference's values (library.py,
        `holds_reference_values`): the reference's parameters and buffers, each 2-D one also transposed
        (a candidate may keep W^T), lent to the child to compare with. Public data: the candidate builds
        the same values from the same seed."""
        handles = []
        with torch.no_grad():
            for t in [*model.parameters(), *model.buffers()]:
                t = t.detach()
                for form in (t, t.t()) if t.dim() == 2 else (t,):
                    _, h = arena.share_copy(form.contiguous())
                    handles.append(h)
        return handles

    def _candidate_case(self, proc, arena, inputs, ref_out, model, name, reference_first, cfg, v, profile,
                        cap: float = 1.0) -> CaseResult | None:
        t_part = time.perf_counter()
        shared_inputs, handles, pristine = [], [], []
        for x in inputs:
            if isinstance(x, torch.Tensor):
                buf, h = arena.share_copy(x)
                shared_inputs.append(buf)
                handles.append(h)
                pristine.append(x)
            else:
                handles.append(x)
        if ref_out is None:
            expect_shape, expect_dtype = _output_spec(model, inputs)
        else:
            expect_shape, expect_dtype = tuple(ref_out.shape), ref_out.dtype
        out_buf, out_handle = arena.empty(expect_shape, expect_dtype)
        _poison_buffer(out_buf)
        arena.poison_tails()  # past every lent buffer: nothing an earlier forward left there (shared.py)
        v.add_stage("correctness_lend", time.perf_counter() - t_part)
        try:
            return self._run_case(proc, inputs, handles, shared_inputs, pristine, out_buf, out_handle, ref_out,
                                  model, name, reference_first, cfg, v, profile, cap)
        finally:
            arena.free(out_buf, *shared_inputs)

    def _run_case(self, proc, inputs, handles, shared_inputs, pristine, out_buf, out_handle, ref_out, model,
                  name, reference_first, cfg, v, profile, cap) -> CaseResult | None:
        t_part = time.perf_counter()
        reply = self._ask(proc, {"op": "forward", "inputs": handles, "output": out_handle, "profile": profile},
                          cfg.timeout_s, v)
        v.add_stage("correctness_child", time.perf_counter() - t_part)
        if reply is None:
            return None
        if reply.get("op") != "forward_done":
            v.fail(_gate(reply, "crash"), str(reply.get("reason", reply))[:8000])
            return None
        launches = _int(reply, "launches")
        v.launches = v.launches or launches
        v.add_stage("kept_state", _float(reply, "state_s"))
        scratch = _strs(reply, "scratch")
        if scratch:
            note = (f"forward() wrote kept state ({', '.join(s[:80] for s in scratch[:8])}): from then on it is "
                    "poisoned (NaN) before every forward, since no forward may read what an earlier one wrote "
                    "(recompute it in every forward, or build it in __init__ as the reference does)")
            if note not in v.notes:
                v.notes.append(note)
        v.library_calls = max(v.library_calls, _int(reply, "library_calls"))
        self._last_signature = _str(reply, "signature")
        # the last verified forward's device kernels, if it was profiled (the first may be autotuning)
        self._last_device_counts = (_counts(reply, "device_kernel_counts") if "device_kernel_counts" in reply
                                    else None)
        if launches == 0:
            v.fail("launch", "forward() launched no Triton kernel (a kernel that is defined but never "
                   "launched does not count)")
            return None
        if "device_kernels" in reply:
            on_device = confirmed_on_device(_strs(reply, "kernels"), _strs(reply, "device_kernels"))
            v.device_launches = on_device if v.device_launches is None else min(v.device_launches, on_device)
            if on_device == 0:
                v.fail("launch", "no Triton kernel ran on the device (profiler saw: "
                       f"{', '.join(_strs(reply, 'device_kernels')[:5]) or 'nothing'})")
                return None
        problem = reply.get("problem")
        if problem:
            problem = str(problem)[:2000]
            if reply.get("problem_gate") == "isolation":
                v.fail("isolation", problem)
                return None
            return CaseResult(name, False, None, None, False, _order(reference_first), problem)
        if ref_out is None:
            t_part = time.perf_counter()
            ref_out = _reference_forward(model, inputs)
            v.add_stage("correctness_reference", time.perf_counter() - t_part)
        t_part = time.perf_counter()
        try:
            mutated = [i for i, (a, b) in enumerate(zip(shared_inputs, pristine)) if not _same(a, b)]
            if mutated:
                return CaseResult(name, False, None, None, False, _order(reference_first),
                                  f"the candidate modified its input(s) {mutated}")
            cmp = self._judge(out_buf, ref_out, model, inputs, cfg, cap=cap, case=name)
        finally:
            v.add_stage("correctness_checks", time.perf_counter() - t_part)
        return CaseResult(name, cmp.passed, cmp.max_abs_err, cmp.max_rel_err, cmp.passed_loose,
                          _order(reference_first), cmp.note)

    def _judge(self, out: torch.Tensor, ref_out: torch.Tensor, model: torch.nn.Module, inputs: list[Any],
               cfg: VerifyConfig, *, detail: bool = True, cap: float = 1.0, case: str = "nominal"
               ) -> cases_mod.Comparison:
        """Gate 4's comparison, also of every timed run: against the reference's float32 output; a
        float32 output that fails it is re-checked against a float64 reference at a tolerance scaled
        to torch's own float32 error on these inputs (`cases.compare_rounded`): the tolerance follows
        the reference's own rounding. The float64 model is a copy of the reference's, made once per
        verification and only when a re-check is needed; a reference that cannot run in float64 keeps
        the float32 verdict. Without `detail` (timed runs: only the pass counts) an output that
        `cases.within` passes is passed without the errors a hidden case reports; any other output
        gets the full comparison, so the verdict is the same either way. `cap`: the case's (or the timed
        run's kind's) cap on the absolute term (`cases.case_cap`); `case`: its name, for its strict
        tolerance (`cases.case_tolerance`: the wide case's is looser)."""
        tolerance = cases_mod.case_tolerance(case, cfg.tolerance)
        if not detail and cases_mod.within(out, ref_out, tolerance, cap):
            return cases_mod.Comparison(True, True, None, None)
        cmp = cases_mod.compare(out, ref_out, tolerance, cap)
        if cmp.passed or ref_out.dtype != torch.float32:
            return cmp
        try:
            if self._model64 is None or self._model64[0] is not model:
                self._model64 = (model, copy.deepcopy(model).double())
            seen = WideOpsSeen()
            with seen:
                ref64 = _reference_forward(self._model64[1], _floating(inputs, torch.Tensor.double))
        except Exception:  # noqa: BLE001 - an op without float64 support: the float32 verdict stands
            return cmp
        if ref64.shape != ref_out.shape or not ref64.is_floating_point():
            return cmp
        ref64 = ref64.to(torch.float64)
        try:  # torch's float32 rounding as a float32 evaluation order rounds (`rounding`, verifier 24)
            ordered32 = float32_order_forward(copy.deepcopy(model), inputs) if seen.used else None  # a copy
        except Exception:  # noqa: BLE001 - the mode cannot run this forward: torch's own result alone
            ordered32 = None
        try:  # an output of few values: torch's rounding on more draws (`cases.rounding_draws`, verifier 24)
            drawn = _drawn_rounding(model, self._model64[1], inputs, ref_out, cap)
        except Exception:  # noqa: BLE001 - the draws cannot run: the measure of the case's own inputs stands
            drawn = 0.0
        return cases_mod.compare_rounded(out, ref_out, ref64, tolerance, cap, ordered32, drawn) or cmp

    def _time_candidate(self, proc, arena, ref, model, nominal, cfg, v, runs, warmup) -> Timing | None:
        held: list[torch.Tensor] = []  # shared buffers of the current attempt
        try:
            return self._time_attempts(proc, arena, ref, model, nominal, cfg, v, runs, warmup, held)
        finally:
            arena.free(*held)

    def _fresh_draw(self, ref, nominal, rng, transform) -> list[Any]:
        """One timed run's inputs: the reference's get_inputs under a fresh secret seed, so no input
        is derivable from another (a rescaling of the nominal case was: a cached result answered it),
        then `transform`, the run's hidden-case kind (`_timed_kinds`)."""
        draw = cases_mod.make_inputs(ref.get_inputs, rng.getrandbits(63), transform, self.device)
        if len(draw) != len(nominal) or any(
                isinstance(a, torch.Tensor) != isinstance(b, torch.Tensor)
                or (isinstance(a, torch.Tensor) and (a.shape != b.shape or a.dtype != b.dtype))
                or (not isinstance(a, torch.Tensor) and a != b) for a, b in zip(draw, nominal)):
            raise RuntimeError("get_inputs() gave inputs of another shape, dtype or value under a new seed: "
                               "kgym times on fresh draws of the same shapes")
        return draw

    def _timing_attempt(self, proc, arena, ref, model, nominal, cfg, v, runs, warmup, held, rng
                        ) -> timing.Measurement | HiddenWork | None:
        """One timed batch in the child, in lockstep (child.py's `time`): before each run the inputs
        get a fresh draw of a hidden-case kind (`_timed_kinds`); after it, every run's output (warm-up
        included) is judged against the reference on its own draw (`_check_timed_output`). None if a
        gate failed (a wrong timed output is a hard failure: isolation). Adds its setup, input draws
        and output checks to `v.stages_s` (timing_setup, timing_draws, timing_input_checks,
        timing_checks), the child's turns as the parent waits for them (timing_runs: from `run` to
        `ran`) and the child's own split of its share (timing_child_*: `CHILD_TIMING_PARTS`)."""
        t_setup = time.perf_counter()
        arena.free(*held)
        held.clear()
        _release_cached(self.device, nominal, int(self._protocol(cfg)[2] * 2**30))
        work, handles = [], []
        for x in nominal:
            if isinstance(x, torch.Tensor):
                buf, h = arena.empty(tuple(x.shape), x.dtype)
                work.append(buf)
                handles.append(h)
            else:
                work.append(x)
                handles.append(x)
        shape, dtype = _output_spec(model, nominal)
        check_buf, check_handle = arena.empty(shape, dtype)
        held.extend([check_buf, *_tensors(work)])
        order = [-1 - j for j in range(warmup)] + list(range(runs))
        plan, _, caps = self._case_plan(ref, model, cfg)
        kinds = _timed_kinds([(name, (transform, caps[name], name)) for name, transform in plan], len(order), rng)
        per_forward = v.stages_s.get("correctness", 1.0) / len(cases_mod.CASES)
        per_run_s = cfg.timeout_s + 3 * per_forward
        t_sent = time.perf_counter()
        v.add_stage("timing_setup", time.perf_counter() - t_setup)
        time_nonce = proc.send({"op": "time", "inputs": handles, "check": check_handle, "runs": runs,
                                "warmup": warmup})
        sent: list[list[float]] = []  # each timed run's (clock, wall, span) ms, as its `ran` gave them
        for i, (transform, cap, kind) in zip(order, kinds):
            t_draw = time.perf_counter()
            draw = self._fresh_draw(ref, nominal, rng, transform)
            for buf, x in zip(work, draw):
                if isinstance(x, torch.Tensor):
                    buf.copy_(x)
            # Before every run: the check buffer is lent for the whole batch and a kernel can read it
            # out of bounds; it holds no answer a run could pass on (when only some runs were checked,
            # it was poisoned before those alone, and a candidate read the last checked output there
            # and skipped its work in the ~92% of runs nobody checked, 2026-12-04), and a run whose
            # output never reaches it is judged on NaN.
            _poison_buffer(check_buf)
            # And past every lent buffer (the same inputs and check buffer serve the whole batch): bytes
            # a run wrote out of bounds of a lent tensor carried work to the next (`SharedArena.poison_tails`).
            arena.poison_tails()
            if self.device.type == "cuda":
                torch.cuda.synchronize(self.device)
            v.add_stage("timing_draws", time.perf_counter() - t_draw)
            # The child is told nothing about the check: it copies out every output, and every one is
            # judged once the run is over.
            t_run = time.perf_counter()
            nonce = proc.send({"op": "run", "i": i})
            reply = self._receive(proc, (nonce, time_nonce), per_run_s, v)
            v.add_stage("timing_runs", time.perf_counter() - t_run)
            if reply is None:
                return None
            if reply.get("op") != "ran":
                v.fail(_gate(reply, "crash"), str(reply.get("reason", reply))[:8000])
                return None
            if reply.get("i") != i:
                raise ChildFailure("crash", "the candidate's process answered for another timed run")
            if reply.get("problem"):
                v.fail("isolation", f"timed run {i}: {str(reply['problem'])[:2000]}")
                return None
            if i >= 0:
                figures = _floats(reply, "figures")
                if len(figures) != 3:
                    raise _malformed("figures")
                sent.append(figures)
            # Every run (warm-up too): the inputs are the candidate's to read, never to write (a
            # mutation seen only in the runs a coin checked went unseen in the ~92% left).
            t_check = time.perf_counter()
            mutated = [k for k, (b, x) in enumerate(zip(_tensors(work), _tensors(draw))) if not _same(b, x)]
            v.add_stage("timing_input_checks", time.perf_counter() - t_check)
            if mutated:
                v.fail("isolation", f"the candidate modified its input(s) {mutated} in timed run {i}")
                return None
            t_check = time.perf_counter()
            wrong = self._check_timed_output(check_buf, draw, model, cfg, cap, kind)
            v.add_stage("timing_checks", time.perf_counter() - t_check)
            if wrong is not None:
                v.fail("isolation", f"the output of timed run {i} is wrong for its inputs (the forwards "
                       f"behave differently when timed: a cached, stale or skipped result?): {wrong}")
                return None
            del draw
        finish = proc.send({"op": "finish"})
        reply = self._receive(proc, (finish, time_nonce), cfg.timeout_s + 3 * (runs + warmup) * per_forward, v)
        elapsed_ms = (time.perf_counter() - t_sent) * 1e3
        if reply is None:
            return None
        if reply.get("op") != "timed":
            v.fail(_gate(reply, "crash"), str(reply.get("reason", reply))[:8000])
            return None
        v.add_stage("timing_profile", _float(reply, "profile_s"))
        split = reply.get("split_s", {})
        if not isinstance(split, dict):
            raise _malformed("split_s")
        for part in CHILD_TIMING_PARTS:  # the child's own split of its turn (a claim: figures only)
            v.add_stage(f"timing_child_{part}", _float(split, part))
        v.add_stage("kept_state", _float(reply, "state_s"))
        signatures = _strs(reply, "signatures")
        if signatures != [self._last_signature]:
            v.fail("isolation", "the timed runs launched other Triton kernels (or grids, or arguments: shapes, "
                   "scalars, which input, output or allocation each tensor is) than the verified runs")
            return None
        if self._last_device_counts is not None:
            problem = _device_kernels_differ(self._last_device_counts, reply.get("device_kernel_counts"),
                                             _int(reply, "forwards"))
            if problem:
                v.fail("isolation", f"the device ran other kernels in the timed runs than in the verified "
                       f"runs: {problem}")
                return None
        m = timing.Measurement(_floats(reply, "times_ms"), _floats(reply, "wall_ms"), _str(reply, "clock"),
                               _floats(reply, "span_ms"))
        if (len(m.times_ms) != runs or len(m.wall_ms) != runs or len(m.span_ms) != runs
                or any(not (x >= 0) for x in m.times_ms + m.wall_ms + m.span_ms)):
            raise ChildFailure("crash", "the candidate's process returned malformed timings")
        if [list(f) for f in zip(m.times_ms, m.wall_ms, m.span_ms)] != sent:
            # Each run's figures left the child with its `ran`, before any later run's code ran: a
            # summary that differs was rewritten afterwards (2026-12-07: forward() reached
            # timing.run_timed's frame and rewrote the earlier runs' times in its lists).
            v.fail("isolation", "timing tripwire: the batch's timings differ from those each run reported as "
                   "it ended: they were rewritten after the run")
            return None
        if sum(m.wall_ms) > elapsed_ms:
            # timer tampering and hidden work are tripwires: hard (isolation), not the soft timing gate
            v.fail("isolation", f"timing tripwire: the reported runs ({sum(m.wall_ms):.1f} ms) outlast the request "
                   "as the parent clocked it "
                   f"({elapsed_ms:.1f} ms): the timer was tampered with")
            return None
        if any(t > s * 1.05 + 0.01 or s > w * 1.05 + 0.01 for t, s, w in zip(m.times_ms, m.span_ms, m.wall_ms)):
            v.fail("isolation", "timing tripwire: event times exceed the host wall clock: the timer was tampered with")
            return None
        calib = timing.Measurement(_floats(reply, "calib_times_ms"), _floats(reply, "calib_wall_ms"), m.clock,
                                   _floats(reply, "calib_span_ms"))
        if not calib.times_ms or not (len(calib.times_ms) == len(calib.wall_ms) == len(calib.span_ms)):
            raise ChildFailure("crash", "the candidate's process returned a malformed calibration")
        hidden = m.hidden_ms - calib.hidden_ms
        if self.device.type == "cuda" and hidden > max(timing.STABLE_FLOOR_MS, timing.STABLE_RELATIVE * m.median_ms):
            return HiddenWork(hidden)  # judged over the attempts (`_time_attempts`)
        return m

    def _check_timed_output(self, out: torch.Tensor, draw: list[Any], model: torch.nn.Module,
                            cfg: VerifyConfig, cap: float = 1.0, kind: str = "nominal") -> str | None:
        """Every output is judged (verifier 15): a timed run's output (copied into the check buffer by
        the child after every run, warm-up included) against the reference on the run's own draw, in
        the parent, after the run. None if it passes, else why not. There is no unchecked run, so
        nothing a candidate can tell about a run (its place in the call sequence, its input objects,
        the stack it is called from, the timing around it) says that it may be wrong there.

        Why: when a secret coin picked ~8 of a GPU's 105 timed runs, a candidate that told the timed
        batch from the hidden cases (its first six forwards; one input object for the whole batch; a
        deeper stack) and was right only when watched escaped with the coins: a timed path wrong on one
        kind of input in six (softmax without its max subtraction, wrong on the shifted kind) passed a
        GPU verdict about one time in four, with speed credit. Cost: one reference forward and the fast
        pass of the comparison (`cases.within`) per run; a failing output gets the full comparison."""
        cmp = self._judge(out, _reference_forward(model, draw), model, draw, cfg, detail=False, cap=cap, case=kind)
        return None if cmp.passed else cmp.note

    def _receive(self, proc, nonces, timeout, v) -> dict[str, Any] | None:
        """One reply of the timing lockstep; None when a tripwire fired (the verdict says which)."""
        try:
            with self._budgeted(timeout) as limit:
                reply = proc.receive(nonces, limit)
        except ChildFailure:
            if proc.reports:
                v.fail(*proc.reports[0])
                return None
            raise
        if proc.reports:
            v.fail(*proc.reports[0])
            return None
        return self._lent_whole(reply, v)

    def _time_attempts(self, proc, arena, ref, model, nominal, cfg, v, runs, warmup, held) -> Timing | None:
        device = self.device
        rng = secrets.SystemRandom()
        best: timing.Measurement | None = None
        hidden: list[float] = []  # ms per run outside the timed stream, of each batch discarded for it
        for _ in range(1 + cfg.max_remeasure):
            m = self._timing_attempt(proc, arena, ref, model, nominal, cfg, v, runs, warmup, held, rng)
            if m is None:
                return None
            if isinstance(m, HiddenWork):
                # Discarded, never used for the figure: another process loading the GPU or the CPUs
                # (a colocated RL job's vLLM beside an honest multi-op forward, 2026-12-06) shows as
                # host time the stream did not see, as a side stream does. Work the candidate hides
                # in every batch fails below; a batch without it is the only one that can count.
                hidden.append(m.ms)
                continue
            if best is None or m.spread_ms / m.median_ms < best.spread_ms / best.median_ms:
                best = m
            if m.stable:
                break
        if best is None:
            v.fail("isolation", "timing tripwire: work outside the timed stream: the host wall clock exceeds the "
                   "timed stream's span (L2 flush, hold and CUDA events) by "
                   f"{', '.join(f'{h:.3f}' for h in hidden)} ms per run in each of {len(hidden)} timed batches "
                   "(side stream or thread?)")
            return None
        if hidden:
            v.notes.append(f"{len(hidden)} timed batch(es) discarded for work outside the timed stream "
                           f"({', '.join(f'{h:.3f}' for h in hidden)} ms per run: a loaded GPU or CPU?); "
                           f"a later batch showed none")
        cand = Timing(best.median_ms, best.spread_ms, runs, best.stable, best.clock)
        v.timings["candidate"] = cand
        if not cand.stable:
            q = statistics.quantiles(best.times_ms, n=10, method="inclusive")
            why = (f"run-to-run variation {best.spread_ms:.4f} ms (p90-p10) exceeds 10% of the median "
                   f"{best.median_ms:.4f} ms after {1 + cfg.max_remeasure} attempts (runs: min "
                   f"{min(best.times_ms):.4f}, p10 {q[0]:.4f}, p50 {best.median_ms:.4f}, p90 {q[-1]:.4f}, "
                   f"max {max(best.times_ms):.4f} ms; host wall median {statistics.median(best.wall_ms):.4f} ms)")
            if device.type == "cuda":
                v.fail("timing", why)
            else:  # host clocks on a shared CPU judge nothing: no speed credit, no failed gate
                v.notes.append(f"timing unstable on the CPU ({why}); no speed credit")
        return cand

    def _baseline_key(self, ref, nominal, kind: str, runs: int, warmup: int) -> str:
        protocol = {"runs": runs, "warmup": warmup, "l2": timing.L2_FLUSH_BYTES, "v": 1}
        return self.cache.key(ref.sha256, nominal, self.device, kind, protocol)

    def baseline_kinds(self, **overrides: Any) -> list[str]:
        """The baselines a verification under `overrides` uses on this device: eager, and compile
        where `measure_compile` (default: on CUDA) says so."""
        return self._wanted_kinds(replace(self.config, **overrides) if overrides else self.config)

    def _wanted_kinds(self, cfg: VerifyConfig) -> list[str]:
        want_compile = cfg.measure_compile
        if want_compile is None:
            want_compile = self.device.type == "cuda"
        return ["eager"] + (["compile"] if want_compile else [])

    def _keep(self, key: str, old: Timing | None, fresh: Timing) -> Timing:
        """The figure a full measurement leaves in the cache: only ever a faster one (load can slow a
        measurement, not speed it up), and only a stable one (an unstable figure, spread over the
        variation gate, "agrees" with any re-measure within its spread and would never be replaced:
        it is used for this verdict only, and the reward pays no speed against it)."""
        if old is not None and old.median_ms <= fresh.median_ms:
            return old
        if usable(fresh):
            self.cache.put(key, fresh)
        return fresh

    def _baselines(self, ref, model, nominal, cfg, v, runs, warmup, cached: dict[str, Timing | None]) -> None:
        device = self.device
        eager_stale = False  # the cached eager baseline was slower than a re-measure beside the candidate
        measured_s = 0.0  # seconds of full baseline measurements on this candidate's path
        for kind in self._wanted_kinds(cfg):
            key = self._baseline_key(ref, nominal, kind, runs, warmup)
            t = cached.get(kind) or self.cache.get(key)
            old = t
            if t is not None and kind == "eager":
                check = measure_model(model, nominal, device, runs=check_runs(runs), warmup=1, scale_seed=0,
                                      max_remeasure=0)
                # Too slow by medians, whatever the spreads (`stale`): a spread near the median made
                # `agrees` excuse a cached figure many times the task's true time.
                if stale(t, check):
                    v.notes.append(f"the cached eager baseline ({t.median_ms:.4g} ms) was slower than a re-measure "
                                   f"beside the candidate ({check.median_ms:.4g} ms): re-measured")
                    t, eager_stale = None, True
                elif not agrees(t, check):
                    # Slower now: a loaded machine, or the candidate's process slowing the parent (it
                    # is still alive). Neither may move the cache; the faster cached figure stands.
                    v.notes.append(f"a re-measure beside the candidate ({check.median_ms:.4g} ms) was slower than "
                                   f"the cached eager baseline ({t.median_ms:.4g} ms): the cached one is used")
            elif t is not None and eager_stale:
                t = None  # measured under the same conditions as the stale eager entry
            if t is None and kind == "compile" and cfg.defer_compile:
                v.notes.append(DEFERRED_NOTE)  # the worker measures it after the verdict (`prefetch`)
                continue
            if t is None:
                fresh, seconds = measure_baseline(kind, model, nominal, device, runs=runs, warmup=warmup,
                                                  max_remeasure=cfg.max_remeasure)
                measured_s += seconds
                t = self._keep(key, old, fresh)
            v.timings[kind] = t
        v.stages_s["baselines_measured"] = measured_s
        if "compile" not in v.timings:
            v.timings["compile"] = None

    # ------------------------------------------------------------------------------------------
    def prefetch(self, reference: str | Reference, *, kinds: tuple[str, ...] = KINDS, remeasure: bool = False,
                 **overrides: Any) -> list[Measured]:
        """Measure now the baselines that verifying a candidate of `reference` under `overrides`
        (`seed` among them: the public seed, which fixes the shapes) would use, so that its
        verification finds them cached. The same inputs (the nominal case, drawn from this
        verifier's secret), model, device, protocol and cache key as the candidate's path, through
        the same `measure_baseline`; a prefetched entry is validated beside each candidate like any
        other. Kinds the verification would not use (compile on the CPU by default) are skipped, and
        so are cached ones unless `remeasure` (a deferred torch.compile figure: the verdict may have
        distrusted the cached one); a re-measure replaces an entry only when it is faster.
        Returns the full measurements made. Raises for a reference that cannot be loaded or built,
        or an unknown override (a bad request, not a candidate's verdict)."""
        unknown = [k for k in kinds if k not in KINDS]
        if unknown:
            raise ValueError(f"unknown baseline kind(s) {unknown}: use {', '.join(KINDS)}")
        cfg = replace(self.config, **overrides) if overrides else self.config
        ref = reference if isinstance(reference, Reference) else load_reference(reference)
        want = [k for k in self._wanted_kinds(cfg) if k in kinds]
        if not want:
            return []
        _, model, _ = self._build_model(ref, cfg)
        nominal = self._case_inputs(ref, cfg, "nominal")
        runs, warmup, _ = self._protocol(cfg, nominal)
        out: list[Measured] = []
        try:
            todo = []
            for kind in want:
                key = self._baseline_key(ref, nominal, kind, runs, warmup)
                old = self.cache.get(key)
                if old is None or remeasure:
                    todo.append((kind, key, old))
            eager = self.cache.get(self._baseline_key(ref, nominal, "eager", runs, warmup))
            # Timed as the candidate's path times baselines: no spare starting on the GPU meanwhile
            # for microsecond tasks (Sandbox.quiet), for the same reason.
            quiet = bool(todo) and (eager is None or eager.median_ms < QUIET_BELOW_MS)
            with self.sandbox.quiet() if quiet else contextlib.nullcontext():
                for kind, key, old in todo:
                    fresh, seconds = measure_baseline(kind, model, nominal, self.device, runs=runs, warmup=warmup,
                                                      max_remeasure=cfg.max_remeasure)
                    self._keep(key, old, fresh)
                    out.append(Measured(kind, fresh, key, device_name(self.device), seconds, time.time()))
        finally:
            del model, nominal
            if self.device.type == "cuda":
                torch.cuda.empty_cache()
        return out


# Inputs this large (bytes, all tensors of a case) make the parent hand its allocator's cached blocks
# back to the driver between stages when the candidate could be short of memory: KernelBench's 6.4 GB
# ReLU on an 80 GB H100 left the candidate 5.5 GB free in timing (the parent's cache held 65 GB of
# freed case tensors and draws), and the honest kernel crashed on its 6 GB output. Smaller tasks keep
# the cache (no cudaFree/cudaMalloc churn).
RELEASE_CACHE_BYTES = 1 << 30


def _release_cached(device: torch.device, inputs: list[Any] | None, room_bytes: int) -> None:
    """Return the parent's unused cached CUDA blocks to the driver when the task's inputs are large
    and the device has less free memory than the candidate's whole memory limit (`room_bytes`) plus
    twice the inputs (its output and a poisoned copy of it): the candidate then finds at least what
    it found when the cache was emptied after every case. Where that much is free (an H200 with the
    cache of one 6.4 GB task), the cache is kept: emptying it after every hidden case freed 6.4 GB
    blocks (cudaFree waits for the device) that the next case's draw, lent copies and reference
    output then allocated again."""
    if device.type != "cuda" or inputs is None:
        return
    size = sum(x.numel() * x.element_size() for x in inputs if isinstance(x, torch.Tensor))
    if size < RELEASE_CACHE_BYTES:
        return
    free, _ = torch.cuda.mem_get_info(device)
    if free < room_bytes + 2 * size:
        torch.cuda.empty_cache()


def _malformed(key: str) -> ChildFailure:
    return ChildFailure("crash", f"the candidate's process sent a malformed reply ({key!r})")


def _int(reply: dict[str, Any], key: str) -> int:
    x = reply.get(key, 0)
    if type(x) is not int:  # noqa: E721 - bool and other look-alikes are malformed too
        raise _malformed(key)
    return x


def _float(reply: dict[str, Any], key: str) -> float:
    x = reply.get(key, 0.0)
    if type(x) not in (int, float):
        raise _malformed(key)
    return float(x)


def _floats(reply: dict[str, Any], key: str) -> list[float]:
    xs = reply.get(key)
    if not isinstance(xs, list) or any(type(x) not in (int, float) for x in xs):
        raise _malformed(key)
    return [float(x) for x in xs]


def _str(reply: dict[str, Any], key: str) -> str:
    x = reply.get(key, "")
    if not isinstance(x, str):
        raise _malformed(key)
    return x


def _strs(reply: dict[str, Any], key: str) -> list[str]:
    xs = reply.get(key, [])
    if not isinstance(xs, list) or any(not isinstance(x, str) for x in xs):
        raise _malformed(key)
    return xs


def _counts(reply: dict[str, Any], key: str) -> dict[str, int]:
    x = reply.get(key)
    if not isinstance(x, dict) or any(not isinstance(k, str) or type(n) is not int for k, n in x.items()):
        raise _malformed(key)
    return x


def _device_kernels_differ(verified: dict[str, int], timed: Any, forwards: int) -> str:
    """The timed batch's device kernels (copy and fill kernels left out) must be exactly `forwards`
    times the verified forward's: the same Triton kernels and library calls, nothing else."""
    if not isinstance(timed, dict) or any(not isinstance(k, str) or type(n) is not int for k, n in timed.items()):
        raise _malformed("device_kernel_counts")
    diffs = []
    for name in sorted(set(verified) | set(timed)):
        want, got = verified.get(name, 0) * forwards, timed.get(name, 0)
        if want != got:
            diffs.append(f"{name[:120]}: {got} launches, {want} expected")
    return "; ".join(diffs[:5])


@dataclass(frozen=True)
class HiddenWork:
    """A timed batch whose host wall clock exceeded the timed stream's span by `ms` per run (beyond
    the calibration and the floor): work the events did not see, or a loaded machine."""

    ms: float


def _timed_kinds(plan: list[tuple[str, Any]], n: int, rng: Any) -> list[Any]:
    """The transforms of `n` timed runs: the hidden cases' plan (its replacements included) repeated
    over the batch (the remainder a random subset) and shuffled on the secret `rng`, so every kind is
    timed as often as the others, to one.

    Why: the candidate can tell the timed batch from the hidden cases (its first six forwards; the
    timed runs get one input tensor object), so a timed path right only on nominal draws (softmax
    without its max subtraction, one-pass variance) passed when every timed run was a nominal draw.
    Now it meets the kinds it is wrong on in the timed runs, where every output is judged
    (`Verifier._check_timed_output`) and a wrong one fails as isolation."""
    kinds = [t for _, t in plan]
    transforms = kinds * (n // len(kinds)) + rng.sample(kinds, n % len(kinds))  # each n // len(plan) times or one more
    rng.shuffle(transforms)
    return transforms


def _tensors(items: list[Any]) -> list[torch.Tensor]:
    return [x for x in items if isinstance(x, torch.Tensor)]


def _gate(reply: dict[str, Any], default: str) -> str:
    gate = reply.get("gate", default)
    return gate if gate in ("policy", "compile", "launch", "isolation", "correctness", "timing",
                            "timeout", "crash") else default


def _order(reference_first: bool) -> str:
    return "reference_first" if reference_first else "candidate_first"


def _reference_forward(model: torch.nn.Module, inputs: list[Any]) -> torch.Tensor:
    """The reference's output on `inputs`, which it must leave as they were (`_versions`): the parent
    lends them to the candidate, checks the candidate's copies against them and re-checks in float64
    on them. Why: a reference that wrote its input in place (`x.add_(1)`) was judged against inputs it
    had changed: a reference-first case lent the candidate x + 1, the candidate-first cases blamed the
    candidate for the reference's write, and the float64 re-check of a failing output ran on the
    written inputs, so a wrong answer (relu(x + 2) for relu(x + 1)) passed a case against them
    (red team by class, 2026-12-07; tests/exploits/test_reference_writes_inputs.py)."""
    before = _versions(inputs)
    with torch.no_grad():
        out = model(*inputs)
    written = [k for k, (a, b) in enumerate(zip(before, _versions(inputs))) if a != b]
    if written:
        raise RuntimeError(f"the task's reference forward writes its input(s) {written} in place: kgym lends a "
                           "case's inputs to the candidate and judges both on them, so a reference must leave "
                           "them as they were (write x = x + 1, not x.add_(1) or x += 1)")
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"the reference's forward returned {type(out).__name__}; kgym compares one tensor")
    return out


def _drawn_rounding(model: torch.nn.Module, model64: torch.nn.Module, inputs: list[Any], ref_out: torch.Tensor,
                    cap: float) -> float:
    """The largest `cases.torch_rounding` of torch's float32 forward (on a copy of `model`: kept state
    stays) against the float64 one (`model64`), over `cases.rounding_draws` - 1 draws of `inputs` one ulp
    away (`cases.ulp_jitter`); 0.0 for an output of ROUNDING_VALUES values or more."""
    draws = cases_mod.rounding_draws(ref_out.numel())
    if draws <= 1:
        return 0.0
    model32 = copy.deepcopy(model)
    generator = torch.Generator(device=ref_out.device).manual_seed(0)
    drawn = 0.0
    for _ in range(draws - 1):
        near = _floating(inputs, lambda x: cases_mod.ulp_jitter(x, generator))
        near32 = _reference_forward(model32, near)
        near64 = _reference_forward(model64, _floating(near, torch.Tensor.double))
        drawn = max(drawn, cases_mod.torch_rounding(near32, near64.to(torch.float64), cap))
    return drawn


def _floating(inputs: list[Any], f: Any) -> list[Any]:
    """`inputs` with `f` applied to each floating-point tensor (others as they are)."""
    return [f(x) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]


def _versions(inputs: list[Any]) -> list[int | None]:
    """Each tensor input's version counter (torch bumps it on every in-place write to the tensor or a
    view of it, on any device); None for other inputs and tensors without one (inference tensors).
    Not seen: writes that bypass autograd's counter (through `.data` or numpy)."""
    out: list[int | None] = []
    for x in inputs:
        try:
            out.append(x._version if isinstance(x, torch.Tensor) else None)
        except RuntimeError:  # an inference tensor keeps no version counter
            out.append(None)
    return out


def _output_spec(model: torch.nn.Module, inputs: list[Any]) -> tuple[tuple[int, ...], torch.dtype]:
    """Shape and dtype of the reference output (one reference forward, its output dropped)."""
    out = _reference_forward(model, inputs)
    spec = (tuple(out.shape), out.dtype)
    del out
    return spec


def _poison_buffer(buf: torch.Tensor) -> None:
    if buf.is_floating_point():
        buf.fill_(float("nan"))
    elif buf.dtype == torch.bool:
        buf.fill_(True)
    else:
        buf.fill_(torch.iinfo(buf.dtype).max)


def verify(reference: str, candidate: str, config: VerifyConfig = VerifyConfig(), *,
           zygote: bool = Sandbox.DEFAULT_ZYGOTE) -> Verdict:
    """One-shot verification (no spare process kept: the CLI's path)."""
    with Verifier(config, spares=0, zygote=zygote) as verifier:
        return verifier.verify(reference, candidate)
