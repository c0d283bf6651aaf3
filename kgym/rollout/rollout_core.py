"""`Rollout`: one vLLM engine with its policy versions, serving groups of episodes; the plain class
that `ray_cluster.rollout.RolloutActor` wraps (usable without a Ray runtime in tests and scripts).

    core = Rollout(RolloutConfig(engine=EngineConfig(model=DIR)), evaluator)
    groups = await core.rollout(tasks)              # GroupRollout per task: G episodes, mode by the mix
    core.load_adapter(version, adapter_dir)         # after each learner step
    core.sleep(); ...learner steps...; core.wake()  # colocated mode, CUDA only

Order of events of an adapter sync (the driver of the loop calls them; nothing here calls back):
the learner's step returns adapter v+1's directory -> `load_adapter(v+1, dir)`: the registry gives
it a fresh LoRA id (a fresh path is required), the engine loads it, episode turns requested from
now on use it -> versions more than `adapter_window` behind are retired and their ids removed
from the engine -> turns already generating finish on the version they started with, and every
turn records its version (`TurnRecord.policy_version`, `TurnSample.policy_version`). A turn still
queued on a version retired meanwhile fails its episode with `error` (never served by another id);
keep the window >= the number of syncs that can happen during one generation call (1 when the
driver syncs between steps).

Colocated mode (the study's: one GPU for generation, training and scoring) calls `sleep()` before the
learner steps and `wake()` after; both are refused while generations are in flight, and on
anything but vLLM's CUDA build (`SleepOutcome.ok` is False with the reason). Spread mode (rollout,
learner and verifiers on separate GPUs) never sleeps. Does not score groups, compute advantages,
drop stale samples or write records: the RL job does, from the returned rollouts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from kgym.contract import Mode
from kgym.episodes.env import EpisodeConfig
from kgym.episodes.evaluator import Evaluator
from kgym.rollout.adapters import AdapterRegistry, PolicyAdapter
from kgym.rollout.batcher import GenerationBatcher
from kgym.rollout.context_budget import ContextBudget
from kgym.rollout.continuous import ContinuousBatcher
from kgym.rollout.driver import GroupRollout, RolloutDriver
from kgym.rollout.engine import BATCHING, Completion, EngineConfig, SleepOutcome, VLLMEngine
from kgym.rollout.sampling import RL_SAMPLING, SamplingConfig
from kgym.tasks.task import Task

BATCHERS = {"continuous": ContinuousBatcher, "rounds": GenerationBatcher}  # by EngineConfig.batching
assert tuple(BATCHERS) == BATCHING


@dataclass(frozen=True)
class RolloutConfig:
    """A rollout actor's settings: each part is its component's own config (the RL job's [engine],
    [sampling], [episodes]); the group size is the episodes' (`episode.group_size`), whatever
    `sampling.group_size` says."""

    engine: EngineConfig  # the engine, its batching and the room a turn needs
    sampling: SamplingConfig = RL_SAMPLING  # T=1.0, 6144 new tokens, thinking off
    episode: EpisodeConfig = field(default_factory=EpisodeConfig)  # G=8, 25% single-turn, repair limits, reward
    adapter_window: int = 1  # versions kept behind the newest (needs engine.max_loras >= window + 1)
    base_adapter: str | None = None  # an SFT adapter served as policy version 0 (None: the base model)

    def __post_init__(self) -> None:
        if self.engine.enable_lora and self.engine.max_loras < self.adapter_window + 1:
            raise ValueError(f"max_loras ({self.engine.max_loras}) must hold the window's "
                             f"{self.adapter_window + 1} versions")


class Rollout:
    def __init__(self, config: RolloutConfig, evaluator: Evaluator, engine: Any | None = None):
        """`engine`: a prebuilt engine (tests share one); default a VLLMEngine of `config.engine`."""
        self.config = config
        self.sampling = config.sampling.replace(group_size=config.episode.group_size)
        self.engine = engine if engine is not None else VLLMEngine(config.engine)
        self.registry = AdapterRegistry(config.adapter_window, config.base_adapter)
        if config.base_adapter is not None:
            self.engine.load(self.registry.latest)
        self.batcher = BATCHERS[config.engine.batching](self.engine)
        limit = getattr(self.engine, "max_model_len", None)
        context = ContextBudget(limit if isinstance(limit, int) else config.engine.max_model_len,
                                config.engine.min_generation_tokens)
        self.driver = RolloutDriver(self.batcher, evaluator, self.engine.tokenizer, self.registry,
                                    sampling=self.sampling, episode=config.episode, mix=config.episode.mix,
                                    context=context)
        self._in_flight = 0

    async def rollout(self, tasks: list[Task], *, group_ids: list[str] | None = None,
                      modes: list[Mode | str] | None = None, group_size: int | None = None) -> list[GroupRollout]:
        self._in_flight += 1
        try:
            return await self.driver.run_groups(tasks, group_ids=group_ids, modes=modes, group_size=group_size)
        finally:
            self._in_flight -= 1

    def generate(self, prompts: Sequence[Sequence[int]], sampling: SamplingConfig | None = None, *,
                 seeds: Sequence[int | None] | None = None) -> list[list[Completion]]:
        """`group_size` completions per token-id prompt under the latest version (no episode, no env)."""
        s = sampling or self.sampling
        return self.engine.generate(prompts, s, self.registry.latest, n=s.group_size, seeds=seeds)

    def load_adapter(self, version: int, path: str) -> dict[str, Any]:
        adapter = self.registry.publish(version, path)
        if not self.engine.load(adapter):
            raise RuntimeError(f"vLLM refused adapter {path} (version {version})")
        retired = self.registry.retire_stale()
        for old in retired:
            self.engine.unload(old)
        return {"version": adapter.version, "lora_id": adapter.lora_id, "path": adapter.path,
                "retired": [asdict(a) for a in retired]}

    @property
    def policy(self) -> PolicyAdapter:
        return self.registry.latest

    def sleep(self, level: int = 1) -> SleepOutcome:
        if self._in_flight or self.batcher.queued:
            return SleepOutcome(False, "generations are in flight: sleep between rollouts")
        return self.engine.sleep(level)

    def wake(self) -> SleepOutcome:
        return self.engine.wake()

    def stats(self) -> dict[str, Any]:
        """For the RL job's metrics: tokens/s, queue, batch sizes, engine start, live versions."""
        s = self.batcher.stats
        return {"generated_tokens": s.tokens, "generate_seconds": s.seconds, "tokens_per_second": s.tokens_per_second,
                "engine_calls": s.calls, "requests": s.requests, "largest_batch": s.largest_batch,
                "engine_steps": s.steps, "mean_running": s.mean_running,
                "split_calls": s.splits, "refused_requests": s.refused,
                "queued": self.batcher.queued, "in_flight_rollouts": self._in_flight,
                "engine_start_seconds": getattr(self.engine, "start_seconds", None),
                "policy_version": self.registry.latest.version,
                "live_versions": [a.version for a in self.registry.live]}
