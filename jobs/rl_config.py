"""The RL job's configuration: `RLJobConfig`, one typed nested config read from TOML (`kgym.settings`:
unknown keys refused, types and bounds checked, `--set a.b=value`, `--help-config`).

    model = "/models/qwen2.5-1.5b"        # required: a local Hugging Face model directory
    sft_adapter = "out/sft/adapter"      # optional: RL starts from the SFT adapter (its reference policy)
    steps = 300                          # the study's run
    tasks_per_step = 1                   # the study: one task (one group of 8) per step
    [curriculum] [episodes] [sampling] [engine] [resample] [offpolicy] [learner] [eval] [placement]
    [recovery] [checkpoint]
    [records] [farm] [verify] [metrics] [ray]

Most sections are their component's own config, each setting declared once there: `[curriculum]`
`kgym.tasks.curriculum.CurriculumConfig`, `[episodes]` `kgym.episodes.env.EpisodeConfig` (its reward's
baseline included), `[sampling]` `kgym.rollout.sampling.SamplingConfig`, `[engine]`
`kgym.rollout.engine.EngineConfig`, `[learner]` `kgym.training.learner_config.LearnerConfig`, `[farm]`
`kgym.farm.farm_config.PoolConfig`, `[ray]` `kgym.farm.farm_config.RaySettings`. The sections defined here are
the loop's own (resampling, the off-policy bound, the held-out evaluation, placement, recovery,
checkpoints, the RL exporter). What the job hands its components from its other settings (the model,
the steps, the sampler's temperature, the placement, the reward's baseline for the farm) is
`rollout_config`, `learner_config` and `farm_verify`, by the components' own typed rules.

Every default is the study's (`../shared/seeds/`, RL recipe table and section 8) or says why not;
docs/rl.md lists them with their sources. `rl.py` runs the job. Imports neither torch, vLLM nor Ray
at import time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jobs.sections import (
    ConfigError,
    load_job_config,
    option,
    partial,
    section,
)
from kgym.contract.names import FAMILIES
from kgym.episodes.env import EpisodeConfig
from kgym.farm.farm_config import PoolConfig, RaySettings, check_verify_table, farm_verify
from kgym.rollout.engine import EngineConfig
from kgym.rollout.sampling import SamplingConfig
from kgym.sink_config import MetricsConfig, RecordsConfig
from kgym.tasks.curriculum import HYBRID_FAMILIES, CurriculumConfig
from kgym.training.learner_config import LearnerConfig
from kgym.verify.config import VerifyConfig

if TYPE_CHECKING:
    from jobs.rl_placement import Placement
    from kgym.rollout.rollout_core import RolloutConfig


@dataclass(frozen=True)
class ResampleSection:
    """[resample]: groups whose answers all scored the same (zero advantage: no policy gradient)."""

    max_rounds: int = option(2, "resampling rounds per step (bounded: a hopeless curriculum cannot stall a step)",
                             ge=0, le=16)
    new_task: bool = option(True, "resample with a fresh draw from the curriculum (True) or the same task again")


@dataclass(frozen=True)
class OffPolicySection:
    """[offpolicy]: how old a sample may be, and whether generation overlaps learning."""

    max_staleness: int = option(1, "samples more than this many policy versions behind the learner are dropped "
                                "and counted", ge=0)
    adapter_window: int = option(1, "versions the rollout engine keeps behind the newest", ge=1)
    overlap: bool = option(False, "one step off-policy (async RL, max async level 1): step s+1's first rollout is "
                           "sent to the engines before step s's learner step and collected after it, so a step "
                           "costs about max(generation, learning) instead of their sum where the two do not "
                           "contend for one GPU; its samples are one policy version behind the learner (corrected "
                           "as [learner] correction says). Needs max_staleness >= 1 and the engine awake while "
                           "the learner steps (docs/rl.md)")

    def __post_init__(self) -> None:
        if self.overlap and self.max_staleness < 1:
            raise ConfigError(f"[offpolicy] overlap = true trains every step on samples one policy version behind "
                              f"the learner, so max_staleness must be >= 1 (now {self.max_staleness}): the bound "
                              f"would drop them all")


@dataclass(frozen=True)
class EvalSection:
    """[eval]: the held-out evaluation (lesson 8.4)."""

    every: int = option(10, "evaluate every this many steps (0: never); the study checkpointed every 10", ge=0)
    tasks: int = option(16, "held-out tasks: unassisted, full stage, seeds the curriculum never draws", ge=1)
    samples: int = option(3, "samples per task (lesson 8.4: three seeded passes)", ge=1, le=64)
    families: tuple[str, ...] = option((), "families of the held-out set; empty: those the curriculum draws")
    seed: int = option(2024, "seed of the held-out set", ge=0)
    at_start: bool = option(False, "also evaluate the starting policy, before step 1 (the baseline of the first "
                            "comparison)")
    resamples: int = option(10000, "paired bootstrap resamples", ge=100)

    def __post_init__(self) -> None:
        bad = sorted(set(self.families) - set(FAMILIES))
        if bad:
            raise ConfigError(f"[eval]: unknown families {bad}")


@dataclass(frozen=True)
class PlacementSection:
    """[placement]: where the engines, the learner and the farm go (jobs/rl_placement.py)."""

    mode: str = option("auto", "colocated (everything on one GPU, the study's), split (engine, learner and farm "
                       "on GPUs of their own), cpu, or auto (split when the cluster has the GPUs, else colocated; "
                       "cpu when engine and learner ask for none)", choices=("auto", "colocated", "split", "cpu"))
    gpu_memory_gib: float | None = option(None, "colocated: GiB of the shared GPU's memory, for deciding whether the "
                                          "engine must sleep while the learner steps; omit: asked of the GPU "
                                          "before anything starts", gt=0)
    farm_memory_gib: float = option(8.0, "colocated: GiB the verifier worker (its process and warm spares) may hold "
                                    "on the shared GPU, counted when deciding whether the engine must sleep", ge=0)


@dataclass(frozen=True)
class RecoverySection:
    """[recovery]: timeouts of every remote call and how often a failed step is retried."""

    max_retries: int = option(3, "a step that failed (an actor died, timed out or raised) is retried from the last "
                              "checkpoint with fresh actors this many times; then the job ends with the reason "
                              "in its attempt record", ge=0, le=100)
    start_timeout_s: float = option(1800.0, "an engine or the learner not ready within this is wedged", gt=0)
    rollout_timeout_s: float = option(7200.0, "one rollout call (a step's groups, verification included)", gt=0)
    learner_timeout_s: float = option(3600.0, "one learner step", gt=0)
    call_timeout_s: float = option(900.0, "every other call: adapter save/load, sleep/wake, checkpoints, the "
                                   "task actor", gt=0)


@dataclass(frozen=True)
class CheckpointSection:
    """[checkpoint]: where and how often the run's state is made durable."""

    dir: str | None = option(None, "a path every actor can read and write (a shared filesystem on a cluster); "
                             "omit: OUT/RUN_ID.checkpoints beside the records when they are local")
    every: int = option(1, "steps between checkpoints; a resume redoes the steps after the last one", ge=1)
    keep_every: int = option(10, "checkpoints at multiples of this are kept for good (the study: every 10)", ge=1)
    keep_last: int = option(2, "the newest checkpoints kept besides those", ge=1)


@dataclass(frozen=True)
class RLMetricsSection:
    """[metrics]: the farm sink's exporter (kgym_*: its keys, `sink`, are every farm job's [metrics]) and
    the driver's RL exporter (kgym_rl_*)."""

    sink: MetricsConfig = section(MetricsConfig, "the farm sink's exporter (kgym_*)", inline=True)
    rl_port: int | None = option(None, "the RL driver's exporter port; omit: none; 0: any free port", ge=0,
                                 le=65535)
    rl_targets_file: str | None = option(None, "file_sd target file for the RL exporter")


@dataclass(frozen=True)
class RLJobConfig:
    model: str = option(doc="base model: a local Hugging Face model directory (nothing is downloaded)")
    sft_adapter: str | None = option(None, "a peft adapter (jobs.sft's OUT/adapter): RL continues from it and it "
                                     "is the KL reference")
    steps: int = option(300, "RL steps (the study: 300)", ge=1)
    tasks_per_step: int = option(1, "tasks (groups) per step (the study: 1)", ge=1)
    curriculum: CurriculumConfig = section(CurriculumConfig, "tasks and the ladder",
                                           hybrid_families=HYBRID_FAMILIES)
    episodes: EpisodeConfig = section(EpisodeConfig, "groups, modes and reward")
    sampling: SamplingConfig = section(SamplingConfig, "generation")
    engine: EngineConfig = section(EngineConfig, "the rollout engines")
    resample: ResampleSection = section(ResampleSection, "all-equal groups")
    offpolicy: OffPolicySection = section(OffPolicySection, "the off-policy bound")
    learner: LearnerConfig = section(LearnerConfig, "the learner")
    eval: EvalSection = section(EvalSection, "the held-out evaluation")
    placement: PlacementSection = section(PlacementSection, "where actors go")
    recovery: RecoverySection = section(RecoverySection, "timeouts and retries")
    checkpoint: CheckpointSection = section(CheckpointSection, "checkpoints and resume")
    records: RecordsConfig = section(RecordsConfig, "where the rows go", run_id="rl", job_id="rl")
    farm: PoolConfig = section(PoolConfig, "the verifier workers")
    verify: dict[str, Any] = partial(VerifyConfig, "the verifier's settings for every verification; a key "
                                     "left out: the verifier's default")
    baselines_off_path: bool = option(False, "tell the farm each step's tasks ahead (prefetch) and, with the eager "
                                      "reward, defer torch.compile; off by default: on an H200 it gave failed "
                                      "verdicts to honest reference solutions (docs/farm.md)")
    metrics: RLMetricsSection = section(RLMetricsSection, "the Prometheus exporters")
    ray: RaySettings = section(RaySettings, "which Ray")

    def __post_init__(self) -> None:
        check_verify_table(self.verify)
        if self.offpolicy.overlap and self.engine.sleep_level:
            raise ConfigError(f"[offpolicy] overlap = true generates the next step while the learner steps, but "
                              f"[engine] sleep_level = {self.engine.sleep_level} puts the engine to sleep for the "
                              f"learner step: set engine.sleep_level=0 (or leave it unset: the placement keeps the "
                              f"engine awake where the learner fits beside it) or offpolicy.overlap=false")
        if self.engine.max_loras < self.offpolicy.adapter_window + 1:
            raise ConfigError(f"engine.max_loras ({self.engine.max_loras}) must hold offpolicy.adapter_window + 1 "
                              f"({self.offpolicy.adapter_window + 1}) versions")

    def rollout_config(self, placement: Placement | None = None) -> RolloutConfig:
        """The rollout actors' settings; `placement` (jobs.rl_placement.Placement) decides the engine's
        memory share and sleep level (`EngineConfig.placed`). A `ConfigError` when [sampling]
        choice_file is not a JSON list of strings."""
        from kgym.rollout.rollout_core import RolloutConfig

        colocated = placement is not None and placement.mode == "colocated"
        sleep_level = placement.sleep_level if placement is not None else (self.engine.sleep_level or 0)
        engine = replace(self.engine, model=self.model).placed(colocated, sleep_level)
        return RolloutConfig(engine=engine, sampling=self.sampling.with_choices(), episode=self.episodes,
                             adapter_window=self.offpolicy.adapter_window, base_adapter=self.sft_adapter)

    def learner_config(self) -> LearnerConfig:
        """The learner of this run: the model, the SFT adapter, `steps` and the sampler's temperature."""
        return self.learner.for_run(self.model, self.sft_adapter, self.steps, self.sampling.temperature)

    def farm_verify(self) -> dict[str, Any]:
        """The [verify] table the farm's workers get (`kgym.farm.farm_config.farm_verify`: with
        `baselines_off_path` and the eager reward, torch.compile is deferred)."""
        return farm_verify(self.verify, self.episodes.reward, self.baselines_off_path)


def load_config(path: str | Path | None, overrides: Iterable[str] = ()) -> RLJobConfig:
    """The config at `path` (None: only overrides), with `--set` overrides applied."""
    return load_job_config(RLJobConfig, path, overrides)


__all__ = ["ConfigError", "RLJobConfig", "load_config"]
