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
  on CUDA builds only and needs `EngineConfig(sleep_mode=True)`; elsewhere both return a
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
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from kgym.rollout.adapters import PolicyAdapter
from kgym.rollout.sampling import SamplingConfig


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


@dataclass(frozen=True)
class EngineConfig:
    model: str  # a Hugging Face model directory (or name already in the local cache)
    tokenizer: str | None = None  # default: the model's
    max_model_len: int = 16384  # prompt + completion of one turn; repair episodes grow with turns
    enable_lora: bool = True
    max_loras: int = 2  # adapters resident at once: >= staleness window + 1, and >= 2 (see docstring)
    max_lora_rank: int = 16  # the learner's rank is 8
    dtype: str = "auto"
    seed: int = 0
    tensor_parallel_size: int = 1  # > 1: one engine over several GPUs (the Ray actor gets a placement group)
    gpu_memory_utilization: float = 0.85  # CUDA only
    sleep_mode: bool = False  # colocated with the learner on one GPU (CUDA only)
    enforce_eager: bool = False
    max_num_seqs: int | None = None  # vLLM's default when None
    cpu_kv_cache_gib: float | None = None  # CPU build only: VLLM_CPU_KVCACHE_SPACE, when not set already
    # The engine core and its worker in this process (vLLM's in-process client and "uni" executor)
    # instead of two spawned processes, each importing torch and vLLM again: a tiny model's start went
    # from ~41 s to ~7 s on 2 loaded cores. Off by default: vLLM's CPU worker then sets this process's
    # threads and memory binding (a suite that ran it in process saw later timing tests noisier), and
    # on CUDA vLLM's own processes let the scheduler overlap the GPU. One tensor-parallel rank only.
    in_process: bool = False
    extra: dict[str, Any] = field(default_factory=dict)  # further vllm.LLM keyword arguments

    def __post_init__(self) -> None:
        if self.enable_lora and self.max_loras < 2:
            raise ValueError("max_loras must be >= 2 (a LoRA/base mixed batch with one slot gave wrong outputs)")


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
            kwargs.update(gpu_memory_utilization=config.gpu_memory_utilization, enable_sleep_mode=config.sleep_mode)
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
            return "the engine was built without sleep_mode=True"
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
