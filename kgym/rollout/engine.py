"""The vLLM engine wrapper: token-id prompts in, completions with the sampler's per-token log-probs
out, under a policy version's LoRA adapter. vLLM is imported when an engine is built, never at
import time, so this module loads where vLLM is absent (CI without the `rollout` extra).

    engine = VLLMEngine(EngineConfig(model="path/to/model"))
    engine.load(adapter)                                  # a PolicyAdapter from adapters.AdapterRegistry
    outs = engine.generate([prompt_ids, ...], [SamplingConfig(...), ...], [adapter, ...])
    outs[i][k].token_ids, .logprobs, .text, .finish_reason, .policy_version

What it fixes and why:
- `logprobs_mode="processed_logprobs"`: the log-probs are of the distribution actually sampled
  (after temperature), which is what CISPO's importance ratio compares with the learner's.
  `logprobs=0` asks for the sampled token's log-prob only.
- `enable_lora` with `max_loras >= 2`: two versions are in flight during a sync. Base-model and
  LoRA requests are sent as two engine calls, never one: on vLLM CPU 0.32 a batch mixing them gave
  the base request wrong (LoRA-altered) tokens with max_loras=2 as well as 1 (tests/rollout checks
  a mixed call against the base alone).
- Adapters are added under the registry's fresh ids and removed by id when retired; a request for
  an id this engine has removed is refused (`StaleAdapter`), never served.
- Sleep/wake (`sleep()`, `wake()`): vLLM's sleep mode frees the GPU's weights/KV memory while the
  learner steps on the same GPU (colocated mode) and takes it back for the next rollout. It exists
  on CUDA builds only and needs `EngineConfig(sleep_level=1)` (or 2); elsewhere both return a
  `SleepOutcome` with `ok=False` and the reason, and nothing is called. Level 1 (weights offloaded
  to host memory) is the default: level 2 with LoRA has crashed vLLM. Not run here (no CUDA vLLM).
- Two ways to generate, never both on one engine: `generate()` (one blocking call for a batch of
  prompts; `batcher.py` sends rounds through it) and the request stream `add()` / `step()` (requests
  join and leave the running batch at every engine iteration, vLLM's continuous batching;
  `continuous.py` drives it). Every call into vLLM holds the engine's lock, so an adapter load from
  another thread waits for the iteration in progress instead of racing it.
- Failures: vLLM refuses a whole call when one of its requests is invalid (it aborts the requests
  it had added and raises, e.g. `VLLMValidationError` for a prompt of `max_model_len` tokens or an
  empty one); that error is raised as it is, and the batcher isolates the request. An error that
  no request caused (asleep, vLLM's `EngineDeadError`) is raised as `EngineUnavailable`.
  `max_model_len` is the context vLLM resolved, for the batcher's and the driver's bounds.
Does not build prompts, parse tool calls or run episodes.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from kgym.rollout.adapters import PolicyAdapter
from kgym.rollout.sampling import SamplingConfig
from kgym.settings import internal, option


class FinishReason(StrEnum):
    STOP = "stop"  # the end-of-turn token or a stop string
    LENGTH = "length"  # max_tokens reached: the turn was cut off
    ABORT = "abort"

    @classmethod
    def of(cls, value: str | None) -> FinishReason:
        try:
            return cls(value or "abort")
        except ValueError:
            return cls.ABORT


# vLLM's share of a GPU's memory while awake, when `gpu_memory_utilization` is omitted: on a GPU of its
# own, or colocated (the learner and a verifier worker share the rest; `EngineConfig.placed`).
OWN_GPU_MEMORY = 0.85
COLOCATED_MEMORY = 0.45
# How turns reach vLLM: continuous (`kgym.rollout.continuous`) or rounds (`kgym.rollout.batcher`).
BATCHING = ("continuous", "rounds")


@dataclass(frozen=True)
class EngineConfig:
    """[engine] of the RL job: the rollout actors and each one's vLLM engine."""

    model: str = internal("", "a Hugging Face model directory (or a name in the local cache); the RL job sets "
                          "its `model`")
    gpus: float = option(1, "Ray GPU share of each rollout actor (0: vLLM's CPU build; [placement] colocated sets "
                         "its own share)", ge=0)
    actors: int = option(1, "rollout actors; a step's groups are spread over them", ge=1)
    tensor_parallel_size: int = option(1, "GPUs one engine spans (vLLM tensor parallelism; split mode only; the "
                                       "Ray actor gets a placement group)", ge=1, le=64)
    gpu_memory_utilization: float | None = option(None, "share of the GPU's memory vLLM takes while awake (CUDA "
                                                  "only); omit: 0.85 on a GPU of its own, 0.45 colocated (the "
                                                  "learner and a verifier worker share the rest)", gt=0, le=1)
    sleep_level: int | None = option(None, "vLLM sleep mode while the learner steps: 0 never, 1 weights to host "
                                     "memory (CUDA only); omit: colocated, 0 when the learner fits beside the "
                                     "awake engine and 1 when not (the RL job's placement decides and says why), "
                                     "0 on a GPU of its own", ge=0, le=2)
    max_model_len: int = option(16384, "prompt + completion of a turn (repair prompts grow with turns)", ge=256)
    min_generation_tokens: int = option(1024, "a repair turn with less room than this left under max_model_len "
                                        "ends its episode as truncated (context_limit, scored), never an error",
                                        ge=1)
    max_loras: int = option(2, "adapters resident at once (>= [offpolicy] adapter_window + 1, >= 2: see the module "
                            "docstring)", ge=2)
    max_num_seqs: int | None = option(None, "vLLM's max_num_seqs; omit: vLLM's default", ge=1)
    enforce_eager: bool = option(False, "no compiled graphs (faster start, slower decode; CPU tests)")
    batching: str = option("continuous", "continuous: a turn joins the running batch at the next engine iteration "
                           "(kgym.rollout.continuous); rounds: each engine call takes every turn queued while the "
                           "last one ran (kgym.rollout.batcher)", choices=BATCHING)
    dtype: str = option("auto", "vLLM dtype")
    cpu_kv_cache_gib: float | None = option(None, "CPU build only: KV cache GiB (VLLM_CPU_KVCACHE_SPACE, when not "
                                            "set already)", gt=0)
    seed: int = option(0, "engine seed", ge=0)
    tokenizer: str | None = internal(None, "default: the model's")
    enable_lora: bool = internal(True, "serve LoRA adapters (the policy versions)")
    max_lora_rank: int = internal(16, "the learner's rank is 8")
    # The engine core and its worker in this process (vLLM's in-process client and "uni" executor)
    # instead of two spawned processes, each importing torch and vLLM again: a tiny model's start went
    # from ~41 s to ~7 s on 2 loaded cores. Off by default: vLLM's CPU worker then sets this process's
    # threads and memory binding (a suite that ran it in process saw later timing tests noisier), and
    # on CUDA vLLM's own processes let the scheduler overlap the GPU. One tensor-parallel rank only.
    in_process: bool = option(False, "vLLM's engine core and worker inside this process instead of two spawned "
                              "ones (one tensor-parallel rank only; see the comment above): a faster start on the "
                              "CPU, where the rollout actor's process holds nothing but the engine")
    extra: dict[str, Any] = internal(doc="further vllm.LLM keyword arguments", factory=dict)

    def __post_init__(self) -> None:
        if self.enable_lora and self.max_loras < 2:
            raise ValueError("max_loras must be >= 2 (a LoRA/base mixed batch with one slot gave wrong outputs)")
        if self.batching not in BATCHING:
            raise ValueError(f"batching must be one of {', '.join(BATCHING)}, got {self.batching!r}")

    @property
    def sleep_mode(self) -> bool:
        """Built for vLLM's sleep mode (colocated with the learner on one GPU; CUDA only)."""
        return bool(self.sleep_level)

    def memory_utilization(self, colocated: bool = False) -> float:
        return self.gpu_memory_utilization or (COLOCATED_MEMORY if colocated else OWN_GPU_MEMORY)

    def sleep_level_for(self, colocated: bool) -> int:
        """The sleep level on a placement when nothing more is known: the setting, else 1 colocated (the
        engine sleeps while the learner steps on the same GPU) and 0 on a GPU of its own. The RL job's
        colocated placement decides from the memory instead (`jobs.rl_placement.decide_sleep`), and
        falls back to this rule when a memory is unknown."""
        if self.sleep_level is not None:
            return self.sleep_level
        return 1 if colocated else 0

    def placed(self, colocated: bool, sleep_level: int) -> EngineConfig:
        """This engine as placed: its memory share and sleep level decided (`sleep_level`: the
        placement's, `sleep_level_for` or 0 where nothing shares the GPU)."""
        return replace(self, gpu_memory_utilization=self.memory_utilization(colocated), sleep_level=sleep_level)


@dataclass(frozen=True)
class Completion:
    token_ids: tuple[int, ...]
    logprobs: tuple[float, ...]  # the sampler's log-prob of each token (temperature applied)
    text: str
    finish_reason: FinishReason
    policy_version: int
    lora_id: int | None


@dataclass(frozen=True)
class SleepOutcome:
    ok: bool
    reason: str = ""
    seconds: float = 0.0


class StaleAdapter(LookupError):
    """A generation asked for an adapter id this engine has removed."""


class PromptTooLong(ValueError):
    """A prompt leaves no room for one new token within the engine's `max_model_len` (vLLM refuses
    it, and with it every other request of its call): refused alone, before the call."""


class EngineUnavailable(RuntimeError):
    """The engine can serve no request at all (asleep, or vLLM's engine core died): a failure of the
    whole call, not of one of its requests, so retrying its requests one by one is pointless."""


def _engine_dead(e: BaseException) -> bool:
    try:
        from vllm.v1.engine.exceptions import EngineDeadError
    except Exception:  # noqa: BLE001 - without vLLM no error is vLLM's
        return False
    return isinstance(e, EngineDeadError)


def _sampled_logprobs(out: Any) -> tuple[float, ...]:
    if out.logprobs is None:
        raise RuntimeError("vLLM returned no logprobs although logprobs=0 was requested")
    return tuple(float(pos[tok].logprob) for tok, pos in zip(out.token_ids, out.logprobs))


class VLLMEngine:
    def __init__(self, config: EngineConfig):
        if config.cpu_kv_cache_gib is not None:
            os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", str(config.cpu_kv_cache_gib))
        from vllm import LLM  # lazily: kgym.rollout imports without vLLM

        if not config.model:
            raise ValueError("EngineConfig.model is not set: a model directory (the RL job sets its `model`)")
        self.config = config
        kwargs: dict[str, Any] = dict(model=config.model, tokenizer=config.tokenizer,
                                      max_model_len=config.max_model_len, dtype=config.dtype, seed=config.seed,
                                      logprobs_mode="processed_logprobs",
                                      tensor_parallel_size=config.tensor_parallel_size,
                                      enforce_eager=config.enforce_eager)
        if config.enable_lora:
            kwargs.update(enable_lora=True, max_loras=config.max_loras, max_lora_rank=config.max_lora_rank)
        if config.max_num_seqs is not None:
            kwargs["max_num_seqs"] = config.max_num_seqs
        if self.on_cuda:
            kwargs.update(gpu_memory_utilization=config.memory_utilization(), enable_sleep_mode=config.sleep_mode)
        in_process = config.in_process and config.tensor_parallel_size == 1
        # vLLM reads it when the engine is built: whether the engine core gets a process of its own.
        os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0" if in_process else "1"
        if in_process:
            kwargs["distributed_executor_backend"] = "uni"
        kwargs.update(config.extra)
        t0 = time.perf_counter()
        self.llm = LLM(**kwargs)
        self.start_seconds = time.perf_counter() - t0
        self._loaded: dict[int, PolicyAdapter] = {}
        self._removed: set[int] = set()
        self._lock = threading.RLock()  # one call into vLLM at a time (see the module docstring)
        self._ids = itertools.count()
        self._streamed: dict[str, PolicyAdapter | None] = {}  # request key -> its adapter, until finished
        self.asleep = False
        self.generated_tokens = 0
        self.generate_seconds = 0.0

    @property
    def on_cuda(self) -> bool:
        """Whether this vLLM build runs on CUDA (sleep mode exists there only)."""
        try:
            from vllm.platforms import current_platform

            return bool(current_platform.is_cuda())
        except Exception:  # noqa: BLE001 - a platform probe that fails means "not CUDA"
            return False

    @property
    def max_model_len(self) -> int:
        """The context vLLM resolved (prompt + completion of one request)."""
        model_config = getattr(self.llm, "model_config", None) or self.llm.llm_engine.model_config
        return int(model_config.max_model_len)

    @property
    def tokenizer(self) -> Any:
        return self.llm.get_tokenizer()

    # -- adapters ------------------------------------------------------------------------------
    def _request(self, adapter: PolicyAdapter | None):
        if adapter is None or adapter.lora_id is None:
            return None
        if adapter.lora_id in self._removed:
            raise StaleAdapter(f"adapter id {adapter.lora_id} (version {adapter.version}) was removed")
        from vllm.lora.request import LoRARequest

        return LoRARequest(adapter.name, adapter.lora_id, adapter.path)

    def load(self, adapter: PolicyAdapter) -> bool:
        """Load an adapter ahead of its first request (else vLLM loads it on first use)."""
        request = self._request(adapter)
        if request is None:
            return True
        with self._lock:
            ok = bool(self.llm.llm_engine.add_lora(request))
        if ok:
            self._loaded[adapter.lora_id] = adapter
        return ok

    def unload(self, adapter: PolicyAdapter) -> bool:
        if adapter.lora_id is None:
            return False
        self._removed.add(adapter.lora_id)
        self._loaded.pop(adapter.lora_id, None)
        with self._lock:
            return bool(self.llm.llm_engine.remove_lora(adapter.lora_id))

    def serves(self, adapter: PolicyAdapter | None) -> bool:
        """False for an adapter whose id this engine removed (a request for it would be refused)."""
        return adapter is None or adapter.lora_id is None or adapter.lora_id not in self._removed

    def loaded_ids(self) -> set[int]:
        with self._lock:
            return set(self.llm.llm_engine.list_loras())

    # -- generation ----------------------------------------------------------------------------
    def sampling_params(self, s: SamplingConfig, n: int = 1, seed: int | None = None):
        from vllm import SamplingParams

        structured = None
        if s.choice is not None:
            from vllm.sampling_params import StructuredOutputsParams

            structured = StructuredOutputsParams(choice=list(s.choice))
        return SamplingParams(n=n, temperature=s.temperature, top_p=s.top_p, max_tokens=s.max_tokens,
                              seed=seed if seed is not None else s.seed, logprobs=0, stop=list(s.stop) or None,
                              structured_outputs=structured)

    def generate(self, prompts: Sequence[Sequence[int]], sampling: Sequence[SamplingConfig] | SamplingConfig,
                 adapters: Sequence[PolicyAdapter | None] | PolicyAdapter | None = None, *, n: int = 1,
                 seeds: Sequence[int | None] | None = None) -> list[list[Completion]]:
        """`n` completions for each token-id prompt, in order; one call batches them all."""
        if self.asleep:
            raise EngineUnavailable("the engine is asleep: wake() it first")
        k = len(prompts)
        samplings = [sampling] * k if isinstance(sampling, SamplingConfig) else list(sampling)
        ads = list(adapters) if isinstance(adapters, (list, tuple)) else [adapters] * k
        seeds = list(seeds) if seeds is not None else [None] * k
        if not len(samplings) == len(ads) == len(seeds) == k:
            raise ValueError("one sampling config, adapter and seed per prompt")
        if k == 0:
            return []
        params = [self.sampling_params(s, n, sd) for s, sd in zip(samplings, seeds)]
        requests = [self._request(a) for a in ads]
        # Base and LoRA requests never share an engine call: on vLLM CPU 0.32 a mixed batch gave the
        # base request LoRA-altered tokens even with max_loras=2 (two LoRAs in one batch were right).
        parts = [[i for i, r in enumerate(requests) if r is None], [i for i, r in enumerate(requests) if r is not None]]
        outs: list[Any] = [None] * k
        t0 = time.perf_counter()
        for part in parts:
            if part:
                try:
                    with self._lock:
                        got = self.llm.generate([{"prompt_token_ids": list(prompts[i])} for i in part],
                                                [params[i] for i in part], use_tqdm=False,
                                                lora_request=[requests[i] for i in part])
                except Exception as e:
                    if _engine_dead(e):
                        raise EngineUnavailable(f"vLLM's engine core died: {e}") from e
                    raise  # a request's fault (vLLM refuses the call): the batcher isolates it
                for i, o in zip(part, got):
                    outs[i] = o
        self.generate_seconds += time.perf_counter() - t0
        result = []
        for out, a in zip(outs, ads):
            row = [self._completion(o, a) for o in out.outputs]
            self.generated_tokens += sum(len(c.token_ids) for c in row)
            result.append(row)
        return result

    @staticmethod
    def _completion(o: Any, adapter: PolicyAdapter | None) -> Completion:
        return Completion(tuple(o.token_ids), _sampled_logprobs(o), o.text, FinishReason.of(o.finish_reason),
                          adapter.version if adapter is not None else 0,
                          adapter.lora_id if adapter is not None else None)

    # -- the request stream (continuous batching) ---------------------------------------------
    def add(self, prompt_ids: Sequence[int], sampling: SamplingConfig, adapter: PolicyAdapter | None = None,
            seed: int | None = None) -> str:
        """Queue one request (one completion) in the running batch; returns its key, which `step()`
        names when it finishes. Raises the request's own fault (`StaleAdapter`, vLLM's validation
        error for a prompt it refuses) with nothing queued, and `EngineUnavailable` when asleep or dead."""
        if self.asleep:
            raise EngineUnavailable("the engine is asleep: wake() it first")
        lora = self._request(adapter)
        params = self.sampling_params(sampling, 1, seed)
        key = f"kgym-{next(self._ids)}"
        with self._lock:
            try:
                self.llm.llm_engine.add_request(key, {"prompt_token_ids": list(prompt_ids)}, params,
                                                lora_request=lora)
            except Exception as e:
                if _engine_dead(e):
                    raise EngineUnavailable(f"vLLM's engine core died: {e}") from e
                raise
        self._streamed[key] = adapter
        return key

    def step(self) -> list[tuple[str, Completion]]:
        """One engine iteration over every queued request; returns the (key, completion) of those that
        finished in it. Call it only while `streaming` is non-zero: vLLM waits for work otherwise."""
        if self.asleep:
            raise EngineUnavailable("the engine is asleep: wake() it first")
        t0 = time.perf_counter()
        with self._lock:
            try:
                outs = self.llm.llm_engine.step()
            except Exception as e:
                if _engine_dead(e):
                    raise EngineUnavailable(f"vLLM's engine core died: {e}") from e
                raise
        self.generate_seconds += time.perf_counter() - t0
        done = []
        for out in outs:
            if not out.finished or out.request_id not in self._streamed:
                continue
            c = self._completion(out.outputs[0], self._streamed.pop(out.request_id))
            self.generated_tokens += len(c.token_ids)
            done.append((out.request_id, c))
        return done

    @property
    def streaming(self) -> int:
        """Requests added with `add()` that have not finished."""
        return len(self._streamed)

    def abort_streamed(self) -> list[str]:
        """Drop every unfinished streamed request (after a failed iteration); returns their keys."""
        keys = list(self._streamed)
        self._streamed.clear()
        if keys:
            with self._lock:
                try:
                    self.llm.llm_engine.abort_request(keys)
                except Exception:  # noqa: BLE001 - a dead engine has nothing left to abort
                    pass
        return keys

    # -- colocated mode (CUDA only) ------------------------------------------------------------
    def _no_sleep(self) -> str:
        if not self.on_cuda:
            return "sleep mode needs vLLM's CUDA build (this engine is not on CUDA)"
        if not self.config.sleep_mode:
            return "the engine was built without sleep mode (sleep_level 0)"
        return ""

    def sleep(self, level: int = 1) -> SleepOutcome:
        """Free the GPU memory for the learner (level 1: weights to host memory, KV cache dropped)."""
        why = self._no_sleep()
        if why:
            return SleepOutcome(False, why)
        t0 = time.perf_counter()
        with self._lock:
            self.llm.sleep(level=level)
        self.asleep = True
        return SleepOutcome(True, f"level {level}", time.perf_counter() - t0)

    def wake(self) -> SleepOutcome:
        why = self._no_sleep()
        if why:
            return SleepOutcome(False, why)
        t0 = time.perf_counter()
        with self._lock:
            self.llm.wake_up()
        self.asleep = False
        return SleepOutcome(True, "awake", time.perf_counter() - t0)
