"""`LearnerConfig`: the learner's settings, the RL job's `[learner]` (`kgym.settings` loads it).

Each setting is a field here, once: the optimiser's (lr), the model's (quantize_4bit, compute_dtype,
lora_r, lora_alpha), the policy loss chosen by name with its bounds (loss, beta, epsilon_low,
epsilon_high, dr_grpo_tokens), the sampler/learner gap's correction (correction, correction_cap) and
the step's memory (token_budget, logits_chunk). The math's own configs are made from them when a
learner is built: `loss_config()` (`kgym.rl.losses`), `correction_config()` (`kgym.rl.correction`),
`lora` (`LoraSettings`). What the job hands its learner from its other settings (the model, the SFT
adapter, the number of steps, the sampler's temperature) is `for_run`'s. Internal fields are set by
code, never by a TOML key (tests and benchmarks set them).

Imports neither torch nor the model stack (the loss and correction configs are imported when asked
for), so a job's config and `--help-config` need neither. Does not train (`learner_core.Learner`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING

from kgym.contract.names import Correction
from kgym.settings import internal, option

if TYPE_CHECKING:
    from kgym.rl import AdvantageConfig, CorrectionConfig, EntropyBonusConfig, LogProbShapingConfig, LossConfig

# Every linear layer of a Qwen2/Llama-style block: attention and MLP (the study's targets).
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
COMPUTE_DTYPES = ("bfloat16", "float32", "float16")


@dataclass(frozen=True)
class LoraSettings:
    """No dropout setting: RL runs with every dropout off (`learner_model.disable_dropout`), whatever
    an SFT adapter's config says; dropout would make the learner a noisier policy than the sampler."""
    r: int = 8
    alpha: int = 16
    targets: tuple[str, ...] = LORA_TARGETS

    def __post_init__(self) -> None:
        if not 1 <= self.r <= 1024 or self.alpha <= 0:
            raise ValueError(f"need 1 <= r <= 1024 and alpha > 0, not r={self.r}, alpha={self.alpha}")
        if not self.targets:
            raise ValueError("LoRA needs at least one target module")


def _loss_names() -> tuple[str, ...]:
    from kgym.rl.losses import loss_names  # imports torch: only when a config is checked

    return loss_names()


@dataclass(frozen=True)
class LearnerConfig:
    """[learner]: the learner, its policy loss and the correction of the sampler/learner gap."""

    gpus: float = option(1, "Ray GPU share of the learner actor (0: CPU; a fraction shares a GPU; [placement] "
                         "colocated sets its own share)", ge=0)
    lr: float = option(1e-5, "AdamW learning rate, linear to 0 over the run's steps (the study's)", ge=0, le=1e-2)
    loss: str = option("cispo", "policy loss by name (kgym.rl.losses): cispo (the study's), grpo, dapo, dr_grpo",
                       choices=_loss_names)
    beta: float = option(0.08, "k3 KL weight (the study's; DAPO's paper used 0)", ge=0)
    epsilon_low: float | None = option(None, "grpo/dapo/dr_grpo: the ratio's clip below, 1 - epsilon_low; omit: the "
                                       "loss's default (0.2); cispo takes none", gt=0)
    epsilon_high: float | None = option(None, "cispo: the absolute cap on the ratio (omit: 5.0, ScaleRL's); "
                                        "grpo/dr_grpo/dapo: the clip above, 1 + epsilon_high (omit: 0.2, 0.2, 0.28)",
                                        gt=0)
    dr_grpo_tokens: int = option(6144, "dr_grpo: the constant token count per sequence it divides by (the study's "
                                 "tokens per turn)", ge=1)
    quantize_4bit: bool = option(True, "NF4 base (QLoRA, the study's); false keeps the base in compute_dtype "
                                 "(CPU tests)")
    compute_dtype: str = option("bfloat16", "matmul dtype", choices=COMPUTE_DTYPES)
    token_budget: int = option(16384, "padded tokens per micro-batch", ge=16)
    logits_chunk: int = option(1024, "completion tokens per lm_head + log-softmax chunk (no tokens x vocab "
                               "tensor of a long episode; kgym.rl.chunked); 0: the model's full logits", ge=0)
    correction: Correction = option(Correction.TIS, "the sampler/learner gap's correction: tis (the learner's old "
                                    "log-probs, policy term weighted by min(exp(learner - sampler), correction_cap)), "
                                    "recompute (the learner's old log-probs, no weight) or none (the sampler's as "
                                    "old)")
    correction_cap: float = option(2.0, "TIS truncation cap (verl's 2.0, TRL's 3.0); also the threshold of the "
                                   "is_truncated_fraction metric", ge=1)
    gradient_checkpointing: bool = option(True, "recompute activations in backward")
    lora_r: int = option(8, "LoRA rank without an SFT adapter (the study: 8; with one, the SFT adapter's)", ge=1,
                         le=1024)
    lora_alpha: int = option(16, "LoRA alpha without an SFT adapter", ge=1)
    device: str = option("auto", "auto: cuda if the learner's process has a GPU, else cpu")
    seed: int = option(0, "learner seed", ge=0)
    model_path: str = internal("", "a local Hugging Face model directory (nothing is downloaded); the RL job's "
                               "`model`")
    sft_adapter: str | None = internal(None, "a peft adapter directory: RL continues from it, it is the reference "
                                       "(the RL job's `sft_adapter`)")
    temperature: float = internal(1.0, "the sampler's: log-probs are of softmax(logits / T), as vLLM's processed "
                                  "ones (the RL job's [sampling] temperature)")
    total_steps: int = internal(300, "the linear schedule reaches 0 here (the RL job's `steps`; the study: 300)")
    lora_targets: tuple[str, ...] = internal(LORA_TARGETS, "the linear layers that get an adapter")
    weight_decay: float = internal(0.0, "AdamW weight decay")
    adam_betas: tuple[float, float] = internal((0.9, 0.999), "AdamW betas")
    adam_eps: float = internal(1e-8, "AdamW eps")
    warmup_steps: int = internal(0, "steps of linear warm-up")
    max_grad_norm: float = internal(1.0, "gradient-norm clip")
    checkpoint_dir: str | None = internal(None, "automatic checkpoints here (None: none; the RL job checkpoints "
                                          "through its controller)")
    checkpoint_every: int = internal(10, "steps between automatic checkpoints")
    advantages: AdvantageConfig | None = internal(None, "None: kgym.rl.AdvantageConfig()")
    entropy: EntropyBonusConfig | None = internal(None, "None: kgym.rl.EntropyBonusConfig()")
    shaping: LogProbShapingConfig | None = internal(None, "None: kgym.rl.LogProbShapingConfig()")

    def __post_init__(self) -> None:
        if self.correction not in tuple(Correction):
            raise ValueError(f"correction must be one of {', '.join(Correction)}, not {self.correction!r}")
        object.__setattr__(self, "correction", Correction(self.correction))
        if self.compute_dtype not in COMPUTE_DTYPES:
            raise ValueError(f"compute_dtype must be one of {', '.join(COMPUTE_DTYPES)}, not {self.compute_dtype!r}")
        if self.logits_chunk < 0:
            raise ValueError(f"logits_chunk must be >= 0 (0: unchunked), not {self.logits_chunk}")
        if not 0.0 <= self.lr <= 1e-2:
            raise ValueError(f"lr must be in [0, 1e-2], not {self.lr}")
        if not 0 < self.temperature <= 10:
            raise ValueError(f"temperature must be in (0, 10], not {self.temperature}")
        if self.total_steps < 1 or not 0 <= self.warmup_steps < self.total_steps:
            raise ValueError("need total_steps >= 1 and 0 <= warmup_steps < total_steps")
        if self.max_grad_norm <= 0:
            raise ValueError(f"max_grad_norm must be > 0, not {self.max_grad_norm}")
        if self.token_budget < 1 or self.checkpoint_every < 1:
            raise ValueError("token_budget and checkpoint_every must be >= 1")
        if self.sft_adapter is not None and self.lora != LoraSettings():
            raise ValueError("with sft_adapter the RL adapter continues the SFT adapter and takes its r, alpha "
                             "and targets from the SFT adapter's config: leave the LoRA settings at their defaults")
        self.lora  # noqa: B018 - LoraSettings checks r and alpha
        # The bounds' meaning depends on the loss; say so before anything starts (the loss's config
        # checks the rest when the learner builds it).
        if self.loss == "cispo":
            if self.epsilon_low is not None:
                raise ValueError("loss 'cispo' caps the ratio above only (epsilon_high, absolute); remove "
                                 "epsilon_low or pick grpo, dapo or dr_grpo")
            if self.epsilon_high is not None and not self.epsilon_high > 1:
                raise ValueError(f"loss 'cispo' takes epsilon_high as an absolute cap on the ratio, > 1 (ScaleRL "
                                 f"~5), not {self.epsilon_high}")
        elif self.epsilon_low is not None and not self.epsilon_low < 1:
            raise ValueError(f"epsilon_low must be < 1 (the ratio is clipped at 1 - epsilon_low), not "
                             f"{self.epsilon_low}")

    @property
    def lora(self) -> LoraSettings:
        """The trainable adapter without an SFT adapter (with one, the SFT adapter's config rules)."""
        return LoraSettings(r=self.lora_r, alpha=self.lora_alpha, targets=self.lora_targets)

    def loss_config(self) -> LossConfig:
        """The policy loss `loss` names, with the bounds set here (unset: the loss's own defaults)."""
        from kgym.rl.losses import make_loss_config

        return make_loss_config(self.loss, beta=self.beta, epsilon_low=self.epsilon_low,
                                epsilon_high=self.epsilon_high, constant_tokens=self.dr_grpo_tokens)

    def correction_config(self) -> CorrectionConfig:
        from kgym.rl.correction import CorrectionConfig

        return CorrectionConfig(method=self.correction, cap=self.correction_cap)

    def for_run(self, model_path: str, sft_adapter: str | None, total_steps: int, temperature: float) -> LearnerConfig:
        """This learner in a run: the model, the SFT adapter (whose LoRA shape then rules: the LoRA
        settings go back to their defaults), the schedule's length and the sampler's temperature."""
        lora = {f.name: f.default for f in fields(self) if f.name in ("lora_r", "lora_alpha", "lora_targets")}
        return replace(self, model_path=model_path, sft_adapter=sft_adapter, total_steps=total_steps,
                       temperature=temperature, **(lora if sft_adapter else {}))
